//! What clients send to the contact desk (the wire inputs, with their OpenAPI schemas) and
//! the validated commands the operations take, made with `TryFrom` (one message per
//! problem).

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::domain::error::{Error, Result};
use crate::domain::validate::{self, Problems, passed, required};
use crate::domain::{ContactStatus, Email, LanguageTag, LongText, Text};

pub const NAME_MAX: usize = 100;
pub const MESSAGE_MAX: usize = 5000;
pub const REPLY_MAX: usize = 10_000;
pub const SOURCE_MAX: usize = 200;
pub const PHONE_MIN: usize = 4;
pub const PHONE_MAX: usize = 30;
/// The longest `locale` sent, surrounding spaces included: the longest tag.
pub const LOCALE_MAX: usize = 35;

/// A first or last name.
pub type Name = Text<NAME_MAX>;
/// The visitor's text.
pub type Message = LongText<MESSAGE_MAX>;
/// An admin's reply, mailed to the visitor.
pub type ReplyText = LongText<REPLY_MAX>;
/// Where the form was sent from.
pub type Source = Text<SOURCE_MAX>;

/// The public contact form.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContactInput {
    /// 1 to 100 characters.
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Ana")]
    pub first_name: Option<String>,
    /// 1 to 100 characters.
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Silva")]
    pub last_name: Option<String>,
    /// Trimmed and lower-cased.
    #[schema(value_type = String, format = Email, max_length = 254, example = "ana.silva@example.com")]
    pub email: Option<String>,
    /// Optional: 4 to 30 characters of digits, spaces, `+`, `-` and parentheses.
    #[schema(
        pattern = r"^\s*$|^\s*[0-9+()-][0-9 +()-]{2,28}[0-9+()-]\s*$",
        example = "+351 (912) 345-678"
    )]
    pub phone: Option<String>,
    /// 1 to 5000 characters.
    #[schema(value_type = String, min_length = 1, max_length = 5000, pattern = r"^[^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Do you have evening classes in German?")]
    pub message: Option<String>,
    /// Optional: where the form was sent from, 1 to 200 characters.
    #[schema(
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$",
        example = "pricing-page"
    )]
    pub source: Option<String>,
    /// Optional: the language replies are written in (BCP 47), at most 35 characters as
    /// sent; blank counts as absent, as every optional field. Absent: the request's first
    /// `Accept-Language` tag, else the school's default.
    #[schema(
        max_length = 35,
        pattern = r"^\s*$|^\s*[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*\s*$",
        example = "pt-PT"
    )]
    pub locale: Option<String>,
}

/// Body of `POST /contact/admin/{id}/reply`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplyInput {
    /// 1 to 10000 characters; sent to the visitor by e-mail.
    #[schema(value_type = String, min_length = 1, max_length = 10000, pattern = r"^[^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Yes: Tuesdays and Thursdays at 18:30.")]
    pub reply_message: Option<String>,
}

/// Body of `PATCH /contact/admin/{id}/status`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactStatusInput {
    /// `PENDING`, `IN_PROGRESS`, `REPLIED` or `CLOSED`.
    // A string on the wire so that a wrong value gets the contract's message, not serde's.
    #[schema(value_type = ContactStatus)]
    pub status: Option<String>,
}

/// Query of the admin contact list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ContactFilter {
    /// `PENDING`, `IN_PROGRESS`, `REPLIED` or `CLOSED` (empty: every status); another
    /// value is 400.
    #[param(value_type = Option<String>, pattern = r"^\s*(PENDING|IN_PROGRESS|REPLIED|CLOSED)?\s*$")]
    pub status: Option<String>,
    /// Case-insensitive substring of the first name, last name or e-mail.
    pub q: Option<String>,
}

/// A phone number: 4 to 30 characters of digits, spaces, `+`, `-` and parentheses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phone(String);

impl Phone {
    /// An optional phone number: empty counts as absent.
    pub fn parse_optional(raw: &str) -> std::result::Result<Option<Phone>, String> {
        let phone = raw.trim();
        if phone.is_empty() {
            return Ok(None);
        }
        let len = phone.chars().count();
        let allowed = phone
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ' ' | '+' | '-' | '(' | ')'));
        if allowed && (PHONE_MIN..=PHONE_MAX).contains(&len) {
            Ok(Some(Phone(phone.to_owned())))
        } else {
            Err(format!(
                "phone must be {PHONE_MIN} to {PHONE_MAX} characters of digits, spaces, +, - and parentheses"
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The form's locale: blank counts as absent, like every optional field; a value longer
/// than the longest tag is refused as sent, blank or padded, as the document's `maxLength`
/// says (a tag needs no padding, and 36 spaces are no tag).
fn contact_locale(raw: &str) -> std::result::Result<Option<LanguageTag>, String> {
    if raw.chars().count() > LOCALE_MAX {
        return Err(format!(
            "locale must be at most {LOCALE_MAX} characters long"
        ));
    }
    LanguageTag::parse_optional("locale", raw)
}

/// A validated contact form.
#[derive(Clone, Debug, PartialEq)]
pub struct NewContact {
    pub first_name: Name,
    pub last_name: Name,
    pub email: Email,
    pub phone: Option<Phone>,
    pub message: Message,
    pub source: Option<Source>,
    /// The language replies are written in; `None`: the school's default.
    pub locale: Option<LanguageTag>,
}

impl NewContact {
    /// The form's locale, or else the first tag of the request's `Accept-Language`.
    pub fn or_accept_language(mut self, accept_language: Option<&str>) -> NewContact {
        if self.locale.is_none() {
            self.locale = accept_language
                .and_then(validate::first_accept_language)
                .and_then(|tag| LanguageTag::parse("locale", &tag).ok());
        }
        self
    }
}

impl TryFrom<ContactInput> for NewContact {
    type Error = Error;

    fn try_from(input: ContactInput) -> Result<NewContact> {
        let mut problems = Problems::new();
        let first_name = problems.take(required(
            "firstName",
            input.first_name.as_deref(),
            Name::parse,
        ));
        let last_name = problems.take(required(
            "lastName",
            input.last_name.as_deref(),
            Name::parse,
        ));
        let email = problems.take(required("email", input.email.as_deref(), Email::parse));
        let phone = problems.take(
            input
                .phone
                .as_deref()
                .map_or(Ok(None), Phone::parse_optional),
        );
        let message = problems.take(required(
            "message",
            input.message.as_deref(),
            Message::parse,
        ));
        let source = problems.take(
            input
                .source
                .as_deref()
                .map_or(Ok(None), |r| Source::parse_optional("source", r)),
        );
        let locale = problems.take(input.locale.as_deref().map_or(Ok(None), contact_locale));
        problems.finish()?;
        Ok(NewContact {
            first_name: passed(first_name)?,
            last_name: passed(last_name)?,
            email: passed(email)?,
            phone: passed(phone)?,
            message: passed(message)?,
            source: passed(source)?,
            locale: passed(locale)?,
        })
    }
}

impl TryFrom<ReplyInput> for ReplyText {
    type Error = Error;

    fn try_from(input: ReplyInput) -> Result<ReplyText> {
        required(
            "replyMessage",
            input.reply_message.as_deref(),
            ReplyText::parse,
        )
        .map_err(Error::invalid)
    }
}

impl TryFrom<ContactStatusInput> for ContactStatus {
    type Error = Error;

    fn try_from(input: ContactStatusInput) -> Result<ContactStatus> {
        required("status", input.status.as_deref(), ContactStatus::parse).map_err(Error::invalid)
    }
}

/// A validated [`ContactFilter`]: empty values are no filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactSearch {
    pub status: Option<ContactStatus>,
    /// A case-insensitive substring of the first name, last name or e-mail.
    pub text: Option<String>,
}

impl TryFrom<&ContactFilter> for ContactSearch {
    type Error = Error;

    fn try_from(filter: &ContactFilter) -> Result<ContactSearch> {
        let status = match filter.status.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(s) => Some(ContactStatus::parse("status", s).map_err(Error::invalid)?),
        };
        let text = validate::search_text(filter.q.as_deref());
        Ok(ContactSearch { status, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: &str) -> ContactInput {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("valid JSON: {e}"))
    }

    #[test]
    fn every_invalid_field_gets_one_message() {
        let bad = input(
            r#"{"firstName":" ","lastName":null,"email":"nope","phone":"12ab","message":"","source":"   "}"#,
        );
        match NewContact::try_from(bad) {
            Err(Error::Validation(messages)) => {
                assert_eq!(
                    messages,
                    vec![
                        "firstName must not be empty".to_owned(),
                        "lastName is required".to_owned(),
                        "email must be a valid e-mail address".to_owned(),
                        "phone must be 4 to 30 characters of digits, spaces, +, - and parentheses"
                            .to_owned(),
                        "message must not be empty".to_owned(),
                    ]
                );
            }
            other => panic!("expected validation errors, got {:?}", other.err()),
        }
    }

    #[test]
    fn phones_allow_digits_spaces_plus_dashes_and_parentheses() {
        let phone = |raw: &str| Phone::parse_optional(raw).map(|p| p.map(|p| p.0));
        assert_eq!(
            phone(" +49 (30) 123-45 "),
            Ok(Some("+49 (30) 123-45".into()))
        );
        assert_eq!(phone("1234"), Ok(Some("1234".into())));
        assert_eq!(phone("  "), Ok(None));
        assert!(phone("123").is_err());
        assert!(phone(&"1".repeat(31)).is_err());
        assert!(phone("12345x").is_err());
        assert!(phone("123\r\n45").is_err());
    }

    #[test]
    fn statuses_and_searches_parse_empty_as_no_filter() {
        let search = |status: &str, q: &str| {
            ContactSearch::try_from(&ContactFilter {
                status: Some(status.into()),
                q: Some(q.into()),
            })
        };
        assert_eq!(search(" ", " ").ok(), Some(ContactSearch::default()));
        let found = search("CLOSED", " ana ").expect("valid");
        assert_eq!(found.status, Some(ContactStatus::Closed));
        assert_eq!(found.text.as_deref(), Some("ana"));
        assert!(search("closed", "").is_err());
        assert!(ContactStatus::try_from(ContactStatusInput { status: None }).is_err());
    }
}
