//! Contact desk: the public contact form, and the admins' inbox with replies by e-mail.
//!
//! A reply and its mail commit together: the visitor gets exactly the text that is stored.
//! Everything the visitor typed is escaped in the HTML part, and nothing they typed can
//! reach a mail header (their name appears in the subject only as one sanitized line).

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use utoipa::{IntoParams, ToSchema};

use crate::Langcamp;
use crate::actor::{Actor, Role};
pub use crate::domain::ContactStatus;
use crate::error::{Error, Result};
use crate::id::{looks_like_id, new_id};
use crate::mail::{self, MailKind, OutgoingMail};
use crate::page::{Page, PageRequest};
use crate::time::Timestamp;
use crate::users::{Deleted, like_pattern};
use crate::validate::{self, Email, Problems};

/// Every query that returns contacts selects these columns, in this order.
macro_rules! select_contacts {
    ($rest:literal) => {
        concat!(
            "SELECT id, first_name, last_name, email, phone, message, status, reply_message, \
             source, replied_at, created_at, updated_at FROM contacts ",
            $rest
        )
    };
}

pub const NAME_MAX: usize = 100;
pub const MESSAGE_MAX: usize = 5000;
pub const REPLY_MAX: usize = 10_000;
pub const SOURCE_MAX: usize = 200;
pub const PHONE_MIN: usize = 4;
pub const PHONE_MAX: usize = 30;

/// A contact request. Unset optional fields are `null`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    pub id: String,
    #[schema(example = "Ana")]
    pub first_name: String,
    #[schema(example = "Silva")]
    pub last_name: String,
    #[schema(example = "ana.silva@example.com")]
    pub email: String,
    #[schema(example = "+351 912 345 678")]
    pub phone: Option<String>,
    /// The visitor's text.
    pub message: String,
    pub status: ContactStatus,
    /// The latest admin reply.
    pub reply_message: Option<String>,
    /// Where the visitor came from.
    #[schema(example = "pricing-page")]
    pub source: Option<String>,
    /// When the latest reply was sent.
    pub replied_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Contact {
    fn from_row(row: &AnyRow) -> std::result::Result<Contact, sqlx::Error> {
        let id: String = row.try_get("id")?;
        let status: String = row.try_get("status")?;
        // The table's CHECK constraint allows only the four values, so another one was
        // written around it or by a newer release (a status added while this build still
        // serves, mid-deploy). Reading it as PENDING would put a closed or answered request
        // back in the admins' queue, to be answered twice; refusing the read (500, the row
        // and the value in the log, never in the answer) shows the fault where it is.
        let status = ContactStatus::parse("status", &status).map_err(|_| {
            sqlx::Error::Decode(
                format!("contact {id} has the status {status:?}, which this build does not know")
                    .into(),
            )
        })?;
        let replied_at: Option<i64> = row.try_get("replied_at")?;
        Ok(Contact {
            id,
            first_name: row.try_get("first_name")?,
            last_name: row.try_get("last_name")?,
            email: row.try_get("email")?,
            phone: row.try_get("phone")?,
            message: row.try_get("message")?,
            status,
            reply_message: row.try_get("reply_message")?,
            source: row.try_get("source")?,
            replied_at: replied_at.map(Timestamp::from_millis),
            created_at: Timestamp::from_millis(row.try_get("created_at")?),
            updated_at: Timestamp::from_millis(row.try_get("updated_at")?),
        })
    }
}

/// The public contact form.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContactInput {
    /// 1 to 100 characters.
    #[schema(value_type = String, example = "Ana")]
    pub first_name: Option<String>,
    /// 1 to 100 characters.
    #[schema(value_type = String, example = "Silva")]
    pub last_name: Option<String>,
    /// Trimmed and lower-cased.
    #[schema(value_type = String, example = "ana.silva@example.com")]
    pub email: Option<String>,
    /// Optional: 4 to 30 characters of digits, spaces, `+`, `-` and parentheses.
    #[schema(example = "+351 (912) 345-678")]
    pub phone: Option<String>,
    /// 1 to 5000 characters.
    #[schema(value_type = String, example = "Do you have evening classes in German?")]
    pub message: Option<String>,
    /// Optional: where the form was sent from, 1 to 200 characters.
    #[schema(example = "pricing-page")]
    pub source: Option<String>,
}

/// A validated contact form.
struct NewContact {
    first_name: String,
    last_name: String,
    email: Email,
    phone: Option<String>,
    message: String,
    source: Option<String>,
}

impl ContactInput {
    fn parse(self) -> Result<NewContact> {
        let mut problems = Problems::new();
        let first_name = problems.take(validate::text(
            "firstName",
            self.first_name.as_deref(),
            1,
            NAME_MAX,
        ));
        let last_name = problems.take(validate::text(
            "lastName",
            self.last_name.as_deref(),
            1,
            NAME_MAX,
        ));
        let email = problems.take(match self.email.as_deref() {
            None => Err("email is required".to_owned()),
            Some(raw) => Email::parse("email", raw),
        });
        let phone = problems.take(check_phone(self.phone.as_deref()));
        let message = problems.take(validate::multiline_text(
            "message",
            self.message.as_deref(),
            1,
            MESSAGE_MAX,
        ));
        let source = problems.take(validate::optional_text(
            "source",
            self.source.as_deref(),
            SOURCE_MAX,
        ));
        problems.finish()?;
        match (first_name, last_name, email, phone, message, source) {
            (
                Some(first_name),
                Some(last_name),
                Some(email),
                Some(phone),
                Some(message),
                Some(source),
            ) => Ok(NewContact {
                first_name,
                last_name,
                email,
                phone,
                message,
                source,
            }),
            _ => Err(Error::internal("contact input passed validation half-way")),
        }
    }
}

/// An optional phone number: empty counts as absent.
fn check_phone(raw: Option<&str>) -> std::result::Result<Option<String>, String> {
    let Some(phone) = raw.map(str::trim).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let len = phone.chars().count();
    let allowed = phone
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, ' ' | '+' | '-' | '(' | ')'));
    if allowed && (PHONE_MIN..=PHONE_MAX).contains(&len) {
        Ok(Some(phone.to_owned()))
    } else {
        Err(format!(
            "phone must be {PHONE_MIN} to {PHONE_MAX} characters of digits, spaces, +, - and parentheses"
        ))
    }
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
    #[schema(value_type = ContactStatus)]
    pub status: Option<String>,
}

/// Query of the admin contact list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ContactFilter {
    /// `PENDING`, `IN_PROGRESS`, `REPLIED` or `CLOSED`; another value is 400.
    #[param(value_type = Option<ContactStatus>)]
    pub status: Option<String>,
    /// Case-insensitive substring of the first name, last name or e-mail.
    pub q: Option<String>,
}

/// Text for a header line: control characters (CR, LF, tab, ...) and runs of white space
/// become one space.
fn one_line(text: &str) -> String {
    let cleaned = mail::header_safe(text);
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Escaped HTML of a text with its line breaks kept.
fn html_paragraph(text: &str) -> String {
    let lines: Vec<String> = text
        .replace("\r\n", "\n")
        .split(['\n', '\r'])
        .map(mail::escape_html)
        .collect();
    format!("<p>{}</p>", lines.join("<br>"))
}

/// The mail that carries an admin's reply to the visitor.
fn reply_mail(contact: &Contact, reply: &str) -> OutgoingMail {
    let first_name = one_line(&contact.first_name);
    let full_name = one_line(&format!("{} {}", contact.first_name, contact.last_name));
    let subject = format!("Re: your message to Langcamp, {full_name}");
    let quoted: String = contact
        .message
        .lines()
        .map(|line| format!("> {line}\n"))
        .collect();
    let text = format!(
        "Hello {first_name},\n\n{reply}\n\nYou wrote on {}:\n{quoted}\nLangcamp\n",
        contact.created_at
    );
    let html = mail::html_document(
        &subject,
        &format!(
            "<p>Hello {},</p>{}<p style=\"color:#555\">You wrote on {}:</p>\
             <blockquote style=\"color:#555;border-left:3px solid #ccc;margin:0;padding-left:12px\">{}</blockquote>\
             <p>Langcamp</p>",
            mail::escape_html(&first_name),
            html_paragraph(reply),
            mail::escape_html(&contact.created_at.to_string()),
            html_paragraph(&contact.message),
        ),
    );
    OutgoingMail {
        to: contact.email.clone(),
        subject,
        text,
        html,
    }
}

async fn find_contact(conn: &mut AnyConnection, id: &str) -> Result<Option<Contact>> {
    if !looks_like_id(id) {
        return Ok(None);
    }
    let row = sqlx::query(select_contacts!("WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    Ok(row.as_ref().map(Contact::from_row).transpose()?)
}

async fn require_contact(conn: &mut AnyConnection, id: &str) -> Result<Contact> {
    find_contact(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("contact request"))
}

impl Langcamp {
    /// `POST /contact`: anyone may write to the school.
    #[tracing::instrument(skip_all)]
    pub async fn create_contact(&self, _actor: &Actor, input: ContactInput) -> Result<Contact> {
        let new = input.parse()?;
        let now = self.clock().now_ms();
        let id = new_id();
        let mut tx = self.db().begin().await?;
        sqlx::query(
            "INSERT INTO contacts (id, first_name, last_name, email, phone, message, status, source, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8, $8)",
        )
        .bind(&id)
        .bind(&new.first_name)
        .bind(&new.last_name)
        .bind(new.email.as_str())
        .bind(new.phone.as_deref())
        .bind(&new.message)
        .bind(new.source.as_deref())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let contact = require_contact(&mut tx, &id).await?;
        tx.commit().await?;
        Ok(contact)
    }

    /// `GET /contact/admin`: newest first, filtered by status and text.
    #[tracing::instrument(skip_all)]
    pub async fn list_contacts(
        &self,
        actor: &Actor,
        filter: &ContactFilter,
        page: PageRequest,
    ) -> Result<Page<Contact>> {
        actor.require(Role::Admin)?;
        let status = match filter.status.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(s) => Some(ContactStatus::parse("status", s).map_err(Error::invalid)?),
        };
        let status = status.map(ContactStatus::as_str);
        let q = filter
            .q
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(like_pattern);

        let mut conn = self.db().reader().acquire().await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM contacts
             WHERE ($1 IS NULL OR status = $1)
               AND ($2 IS NULL OR LOWER(first_name) LIKE $2 ESCAPE '\\'
                    OR LOWER(last_name) LIKE $2 ESCAPE '\\' OR LOWER(email) LIKE $2 ESCAPE '\\')",
        )
        .bind(status)
        .bind(q.as_deref())
        .fetch_one(&mut *conn)
        .await?;
        let rows = sqlx::query(select_contacts!(
            "WHERE ($1 IS NULL OR status = $1)
               AND ($2 IS NULL OR LOWER(first_name) LIKE $2 ESCAPE '\\'
                    OR LOWER(last_name) LIKE $2 ESCAPE '\\' OR LOWER(email) LIKE $2 ESCAPE '\\')
             ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
        ))
        .bind(status)
        .bind(q.as_deref())
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *conn)
        .await?;
        let list = rows
            .iter()
            .map(Contact::from_row)
            .collect::<std::result::Result<_, _>>()?;
        Ok(Page::new(list, page, total))
    }

    /// `GET /contact/admin/{id}`.
    #[tracing::instrument(skip_all)]
    pub async fn get_contact(&self, actor: &Actor, id: &str) -> Result<Contact> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        require_contact(&mut conn, id).await
    }

    /// `POST /contact/admin/{id}/reply`: stores the reply, marks the request `REPLIED` and
    /// mails the reply to the visitor, all in one transaction. A later reply replaces the
    /// stored text and sends another mail.
    #[tracing::instrument(skip_all)]
    pub async fn reply_to_contact(
        &self,
        actor: &Actor,
        id: &str,
        input: ReplyInput,
    ) -> Result<Contact> {
        actor.require(Role::Admin)?;
        let reply =
            validate::multiline_text("replyMessage", input.reply_message.as_deref(), 1, REPLY_MAX)
                .map_err(Error::invalid)?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        require_contact(&mut tx, id).await?;
        sqlx::query(
            "UPDATE contacts SET status = 'REPLIED', reply_message = $1, replied_at = $2, updated_at = $2
             WHERE id = $3",
        )
        .bind(&reply)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        let contact = require_contact(&mut tx, id).await?;
        let mail = reply_mail(&contact, &reply);
        mail::enqueue(&mut tx, self, MailKind::ContactReply, &mail, None).await?;
        tx.commit().await?;
        self.wake_mail_worker();
        Ok(contact)
    }

    /// `PATCH /contact/admin/{id}/status`: any of the four values, from any state.
    #[tracing::instrument(skip_all)]
    pub async fn set_contact_status(
        &self,
        actor: &Actor,
        id: &str,
        input: ContactStatusInput,
    ) -> Result<Contact> {
        actor.require(Role::Admin)?;
        let status = match input.status.as_deref() {
            None => Err("status is required".to_owned()),
            Some(raw) => ContactStatus::parse("status", raw),
        }
        .map_err(Error::invalid)?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        // The row is not read before the write: setting a status is also how an admin
        // repairs one this build cannot read (see `Contact::from_row`).
        let updated = if looks_like_id(id) {
            sqlx::query("UPDATE contacts SET status = $1, updated_at = $2 WHERE id = $3")
                .bind(status.as_str())
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected()
        } else {
            0
        };
        if updated == 0 {
            return Err(Error::not_found("contact request"));
        }
        let contact = require_contact(&mut tx, id).await?;
        tx.commit().await?;
        Ok(contact)
    }

    /// `DELETE /contact/admin/{id}`.
    #[tracing::instrument(skip_all)]
    pub async fn delete_contact(&self, actor: &Actor, id: &str) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        if !looks_like_id(id) {
            return Err(Error::not_found("contact request"));
        }
        let mut tx = self.db().begin().await?;
        let deleted = sqlx::query("DELETE FROM contacts WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if deleted == 0 {
            return Err(Error::not_found("contact request"));
        }
        tx.commit().await?;
        Ok(Deleted {
            id: id.to_owned(),
            deleted: true,
        })
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
        match bad.parse() {
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
        assert_eq!(
            check_phone(Some(" +49 (30) 123-45 ")),
            Ok(Some("+49 (30) 123-45".into()))
        );
        assert_eq!(check_phone(Some("1234")), Ok(Some("1234".into())));
        assert_eq!(check_phone(Some("  ")), Ok(None));
        assert_eq!(check_phone(None), Ok(None));
        assert!(check_phone(Some("123")).is_err());
        assert!(check_phone(Some(&"1".repeat(31))).is_err());
        assert!(check_phone(Some("12345x")).is_err());
        assert!(check_phone(Some("123\r\n45")).is_err());
    }

    #[test]
    fn reply_mails_keep_names_on_one_line_and_escape_html() {
        let contact = Contact {
            id: new_id(),
            first_name: "Eve\r\nBcc: victim@example.com".into(),
            last_name: "<b>Doe</b>".into(),
            email: "eve@example.com".into(),
            phone: None,
            message: "Line one\nLine <two>".into(),
            status: ContactStatus::Replied,
            reply_message: None,
            source: None,
            replied_at: None,
            created_at: Timestamp::from_millis(0),
            updated_at: Timestamp::from_millis(0),
        };
        let mail = reply_mail(&contact, "Fish & <chips>\nsee you");
        assert_eq!(
            mail.subject,
            "Re: your message to Langcamp, Eve Bcc: victim@example.com <b>Doe</b>"
        );
        assert!(!mail.subject.contains(['\r', '\n']));
        assert_eq!(mail.to, "eve@example.com");
        assert!(mail.text.contains("Fish & <chips>\nsee you"));
        assert!(
            mail.html
                .contains("<p>Fish &amp; &lt;chips&gt;<br>see you</p>")
        );
        assert!(mail.html.contains("&lt;b&gt;Doe&lt;/b&gt;"));
        assert!(mail.html.contains("Line one<br>Line &lt;two&gt;"));
        assert!(!mail.html.contains("<chips>"));
    }
}
