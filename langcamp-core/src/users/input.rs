//! What clients send about users (the wire inputs, with their OpenAPI schemas), the parse
//! of a profile body into the change it makes, and the validated values the other
//! operations take: a [`UserQuery`], a [`Role`], an [`Email`].

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::domain::actor::Role;
use crate::domain::error::{Error, Result};
use crate::domain::validate::{self, Email, Patch, Problems, passed, required};

pub const GENDERS: [&str; 4] = ["male", "female", "other", "prefer_not_to_say"];

/// The values of a profile's `gender`.
// For the API document only: the field is read as text and checked against `GENDERS`.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum Gender {
    Male,
    Female,
    Other,
    PreferNotToSay,
}

/// Profile fields, for completing registration and for `PATCH /me/profile`.
/// `email` and `role` are not accepted here.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileInput {
    /// 1 to 100 characters.
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Ana Silva")]
    pub name: Patch<String>,
    /// Whole years, 5 to 120.
    #[serde(default)]
    #[schema(value_type = i64, minimum = 5, maximum = 120, example = 27)]
    pub age: Patch<i64>,
    /// `male`, `female`, `other` or `prefer_not_to_say`.
    #[serde(default)]
    #[schema(value_type = Gender, example = "female")]
    pub gender: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Lisbon")]
    pub city: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "Portugal")]
    pub country: Patch<String>,
    /// Dialling prefix: `+` and 1 to 4 digits.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^\+[0-9]{1,4}$", example = "+351")]
    pub country_code: Patch<String>,
    /// 4 to 15 digits.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[0-9]{4,15}$", example = "912345678")]
    pub phone_number: Patch<String>,
    /// BCP 47 language tag.
    #[serde(default)]
    #[schema(value_type = String, max_length = 35, pattern = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", example = "pt-PT")]
    pub locale: Patch<String>,
}

/// The body of `POST /auth/complete-registration`, for the API document: [`ProfileInput`]
/// with the fields a complete profile needs marked required (the server reads a
/// [`ProfileInput`] and names each missing one).
#[derive(ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
pub struct RegistrationInput {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$",
        example = "Ana Silva"
    )]
    name: String,
    #[schema(minimum = 5, maximum = 120, example = 27)]
    age: i64,
    #[schema(example = "female")]
    gender: Gender,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$",
        example = "Lisbon"
    )]
    city: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$",
        example = "Portugal"
    )]
    country: String,
    #[schema(pattern = r"^\+[0-9]{1,4}$", example = "+351")]
    country_code: String,
    #[schema(pattern = r"^[0-9]{4,15}$", example = "912345678")]
    phone_number: String,
    #[schema(
        max_length = 35,
        pattern = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$",
        example = "pt-PT"
    )]
    #[serde(default)]
    locale: String,
}

/// The admin's profile edit: `phone` (not `phoneNumber`), and `email`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdminProfileInput {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = i64, minimum = 5, maximum = 120)]
    pub age: Patch<i64>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[0-9]{4,15}$")]
    pub phone: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Gender)]
    pub gender: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub city: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub country: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, format = Email, max_length = 254)]
    pub email: Patch<String>,
}

/// A validated profile change: `None` leaves a column as it is, `Some(None)` clears it.
/// A [`ProfileInput`] or an [`AdminProfileInput`] becomes one with `TryFrom`.
#[derive(Debug, Default)]
pub struct ProfileChange {
    pub(super) name: Option<String>,
    pub(super) age: Option<Option<i64>>,
    pub(super) gender: Option<Option<String>>,
    pub(super) city: Option<Option<String>>,
    pub(super) country: Option<Option<String>>,
    pub(super) country_code: Option<Option<String>>,
    pub(super) phone_number: Option<Option<String>>,
    pub(super) locale: Option<String>,
    pub(super) email: Option<Email>,
}

fn check_age(age: i64) -> std::result::Result<i64, String> {
    if (5..=120).contains(&age) {
        Ok(age)
    } else {
        Err("age must be a whole number from 5 to 120".into())
    }
}

fn check_gender(gender: &str) -> std::result::Result<String, String> {
    let g = gender.trim();
    if GENDERS.contains(&g) {
        Ok(g.to_owned())
    } else {
        Err(format!("gender must be one of {}", GENDERS.join(", ")))
    }
}

fn check_country_code(code: &str) -> std::result::Result<String, String> {
    let c = code.trim();
    let digits = c.strip_prefix('+').unwrap_or("");
    if (1..=4).contains(&digits.len()) && digits.chars().all(|d| d.is_ascii_digit()) {
        Ok(c.to_owned())
    } else {
        Err("countryCode must be + followed by 1 to 4 digits".into())
    }
}

fn check_phone(field: &str, phone: &str) -> std::result::Result<String, String> {
    let p = phone.trim();
    if (4..=15).contains(&p.len()) && p.chars().all(|d| d.is_ascii_digit()) {
        Ok(p.to_owned())
    } else {
        Err(format!("{field} must be 4 to 15 digits"))
    }
}

/// Applies a parse to a PATCH field: absent stays, null clears (when allowed), a value is parsed.
fn patch_field<T, U>(
    problems: &mut Problems,
    field: &str,
    value: Patch<T>,
    nullable: bool,
    parse: impl FnOnce(T) -> std::result::Result<U, String>,
) -> Option<Option<U>> {
    if nullable {
        value.clearable(problems, |v| parse(v).map(Some))
    } else {
        value.non_null(problems, field, parse).map(Some)
    }
}

/// The fields both profile edits take, parsed (their messages come first).
fn common(
    problems: &mut Problems,
    name: Patch<String>,
    age: Patch<i64>,
    gender: Patch<String>,
    city: Patch<String>,
    country: Patch<String>,
) -> ProfileChange {
    let text100 = |field: &'static str| move |v: String| validate::bounded(field, &v, 1, 100);
    ProfileChange {
        name: patch_field(problems, "name", name, false, text100("name")).flatten(),
        age: patch_field(problems, "age", age, false, check_age),
        gender: patch_field(problems, "gender", gender, false, |g: String| {
            check_gender(&g)
        }),
        city: patch_field(problems, "city", city, true, text100("city")),
        country: patch_field(problems, "country", country, false, text100("country")),
        ..ProfileChange::default()
    }
}

/// A change parsed by `parse`, which records one message per problem.
fn parsed(parse: impl FnOnce(&mut Problems) -> ProfileChange) -> Result<ProfileChange> {
    let mut problems = Problems::new();
    let change = parse(&mut problems);
    problems.finish()?;
    Ok(change)
}

impl TryFrom<ProfileInput> for ProfileChange {
    type Error = Error;

    fn try_from(input: ProfileInput) -> Result<ProfileChange> {
        parsed(|problems| input.parse(problems))
    }
}

impl TryFrom<AdminProfileInput> for ProfileChange {
    type Error = Error;

    fn try_from(input: AdminProfileInput) -> Result<ProfileChange> {
        parsed(|problems| input.parse(problems))
    }
}

/// A validated first profile: a [`ProfileInput`] with every field a complete profile
/// needs (each missing one named before the fields' own messages).
#[derive(Debug)]
pub struct Registration(pub(super) ProfileChange);

impl TryFrom<ProfileInput> for Registration {
    type Error = Error;

    fn try_from(input: ProfileInput) -> Result<Registration> {
        parsed(|problems| {
            for (field, missing) in [
                ("name", input.name.is_absent()),
                ("age", input.age.is_absent()),
                ("gender", input.gender.is_absent()),
                ("country", input.country.is_absent()),
                ("countryCode", input.country_code.is_absent()),
                ("phoneNumber", input.phone_number.is_absent()),
            ] {
                if missing {
                    problems.add(format!("{field} is required"));
                }
            }
            input.parse(problems)
        })
        .map(Registration)
    }
}

impl ProfileInput {
    pub(super) fn parse(self, problems: &mut Problems) -> ProfileChange {
        let p = problems;
        let common = common(p, self.name, self.age, self.gender, self.city, self.country);
        ProfileChange {
            country_code: patch_field(p, "countryCode", self.country_code, false, |c: String| {
                check_country_code(&c)
            }),
            phone_number: patch_field(p, "phoneNumber", self.phone_number, false, |n: String| {
                check_phone("phoneNumber", &n)
            }),
            locale: patch_field(p, "locale", self.locale, false, |l: String| {
                validate::language_tag("locale", &l)
            })
            .flatten(),
            ..common
        }
    }
}

impl AdminProfileInput {
    pub(super) fn parse(self, problems: &mut Problems) -> ProfileChange {
        let p = problems;
        let common = common(p, self.name, self.age, self.gender, self.city, self.country);
        ProfileChange {
            phone_number: patch_field(p, "phone", self.phone, false, |n: String| {
                check_phone("phone", &n)
            }),
            email: patch_field(p, "email", self.email, false, |e: String| {
                Email::parse("email", &e)
            })
            .flatten(),
            ..common
        }
    }
}

/// Query of the admin user list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct UserFilter {
    /// Case-insensitive substring of the e-mail or the name.
    pub q: Option<String>,
    /// `true` or `false`.
    #[param(value_type = Option<bool>)]
    pub is_registration_complete: Option<String>,
    /// `user`, `admin` or `superadmin`.
    #[param(value_type = Option<String>, pattern = r"^\s*(user|admin|superadmin)?\s*$")]
    pub role: Option<String>,
}

/// A validated [`UserFilter`]: what [`crate::Langcamp::list_users`] takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserQuery {
    /// A case-insensitive substring of the e-mail or the name (trimmed, never empty).
    pub text: Option<String>,
    pub is_registration_complete: Option<bool>,
    pub role: Option<Role>,
}

impl TryFrom<&UserFilter> for UserQuery {
    type Error = Error;

    fn try_from(filter: &UserFilter) -> Result<UserQuery> {
        let mut problems = Problems::new();
        let is_registration_complete =
            match filter.is_registration_complete.as_deref().map(str::trim) {
                None | Some("") => None,
                Some("true") => Some(true),
                Some("false") => Some(false),
                Some(_) => {
                    problems.add("isRegistrationComplete must be true or false");
                    None
                }
            };
        let role = match filter.role.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(r) => problems.take(r.parse::<Role>().map_err(|e| e.to_string())),
        };
        problems.finish()?;
        Ok(UserQuery {
            text: validate::search_text(filter.q.as_deref()),
            is_registration_complete,
            role,
        })
    }
}

// The body of `PATCH /users/{id}/role`; it becomes a `Role`. (A plain comment: a doc
// comment would be the schema's description in the API document.)
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleInput {
    #[schema(value_type = Role)]
    pub role: Option<String>,
}

impl TryFrom<RoleInput> for Role {
    type Error = Error;

    fn try_from(input: RoleInput) -> Result<Role> {
        input
            .role
            .as_deref()
            .ok_or_else(|| Error::invalid("role is required"))?
            .parse()
    }
}

// The body of `PATCH /users/{id}/email`; it becomes an `Email`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailInput {
    /// An e-mail address (at most 64 characters before the `@`, a dotted domain).
    #[schema(value_type = String, format = Email, max_length = 254)]
    pub email: Option<String>,
}

impl TryFrom<EmailInput> for Email {
    type Error = Error;

    fn try_from(input: EmailInput) -> Result<Email> {
        required("email", input.email.as_deref(), Email::parse).map_err(Error::invalid)
    }
}

/// A user the operator creates (`langcamp users create`, the seed, the console's tests):
/// an address, a role, and a name that completes the registration when given.
#[derive(Clone, Debug, PartialEq)]
pub struct NewUser {
    pub(super) email: Email,
    pub(super) role: Role,
    pub(super) name: Option<String>,
}

impl NewUser {
    /// Checks `email` and `name` as a body's fields are checked, one message per problem.
    pub fn new(email: &str, role: Role, name: Option<&str>) -> Result<NewUser> {
        let mut problems = Problems::new();
        let email = problems.take(Email::parse("email", email));
        let name = problems.take(validate::optional_text("name", name, 100));
        problems.finish()?;
        Ok(NewUser {
            email: passed(email)?,
            role,
            name: passed(name)?,
        })
    }

    pub fn email(&self) -> &Email {
        &self.email
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::error::Error;

    #[test]
    fn profile_fields_are_checked_one_message_each() {
        let input: ProfileInput = serde_json::from_str(
            r#"{"name":"","age":4,"gender":"robot","countryCode":"49","phoneNumber":"12ab","locale":null}"#,
        )
        .expect("valid JSON");
        let mut problems = Problems::new();
        input.parse(&mut problems);
        match problems.finish() {
            Err(Error::Validation(messages)) => assert_eq!(messages.len(), 6, "{messages:?}"),
            other => panic!("expected validation errors, got {other:?}"),
        }
    }

    #[test]
    fn email_and_role_are_refused_in_the_own_profile() {
        assert!(serde_json::from_str::<ProfileInput>(r#"{"email":"x@example.com"}"#).is_err());
        assert!(serde_json::from_str::<ProfileInput>(r#"{"role":"admin"}"#).is_err());
    }
}
