//! Users: profiles, registration, and administration by admins and the operator.

use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::{IntoParams, ToSchema};

use crate::Langcamp;
use crate::actor::{Actor, Role};
use crate::changes::Change;
use crate::db::{self, Arg, Backend, WriteConn, bit, flag};
use crate::error::{Error, Result};
use crate::id::{looks_like_id, new_id};
use crate::page::{Page, PageRequest};
use crate::time::Timestamp;
use crate::validate::{self, Email, Patch, Problems};

/// Every query that returns users reads these columns, in this order.
macro_rules! user_columns {
    () => {
        "id, email, name, role, is_registration_complete, age, gender, city, country, \
         country_code, phone_number, locale, created_at, updated_at "
    };
}

macro_rules! select_users {
    ($rest:literal) => {
        concat!("SELECT ", user_columns!(), "FROM users ", $rest)
    };
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: Option<String>,
    pub role: Role,
    pub is_registration_complete: bool,
    pub age: Option<i64>,
    #[schema(example = "female")]
    pub gender: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    #[schema(example = "+49")]
    pub country_code: Option<String>,
    pub phone_number: Option<String>,
    #[schema(example = "en")]
    pub locale: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl User {
    /// A user from a row of [`user_columns!`], on either backend's connection.
    pub(crate) fn from_row(row: &impl db::Row) -> Result<User> {
        Ok(User {
            id: row.text("id")?,
            email: row.text("email")?,
            name: row.opt_text("name")?,
            role: row.text("role")?.parse().unwrap_or(Role::User),
            is_registration_complete: flag(row.int("is_registration_complete")?),
            age: row.opt_int("age")?,
            gender: row.opt_text("gender")?,
            city: row.opt_text("city")?,
            country: row.opt_text("country")?,
            country_code: row.opt_text("country_code")?,
            phone_number: row.opt_text("phone_number")?,
            locale: row.text("locale")?,
            created_at: Timestamp::from_millis(row.int("created_at")?),
            updated_at: Timestamp::from_millis(row.int("updated_at")?),
        })
    }
}

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
#[derive(Debug, Default)]
struct ProfileChange {
    name: Option<String>,
    age: Option<Option<i64>>,
    gender: Option<Option<String>>,
    city: Option<Option<String>>,
    country: Option<Option<String>>,
    country_code: Option<Option<String>>,
    phone_number: Option<Option<String>>,
    locale: Option<String>,
    email: Option<Email>,
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
    match value {
        Patch::Absent => None,
        Patch::Null if nullable => Some(None),
        Patch::Null => {
            problems.add(format!("{field} cannot be null"));
            None
        }
        Patch::Value(v) => problems.take(parse(v)).map(Some),
    }
}

impl ProfileInput {
    fn parse(self, problems: &mut Problems) -> ProfileChange {
        let text100 = |field: &'static str| move |v: String| validate::bounded(field, &v, 1, 100);
        ProfileChange {
            name: patch_field(problems, "name", self.name, false, text100("name")).flatten(),
            age: patch_field(problems, "age", self.age, false, check_age),
            gender: patch_field(problems, "gender", self.gender, false, |g: String| {
                check_gender(&g)
            }),
            city: patch_field(problems, "city", self.city, true, text100("city")),
            country: patch_field(problems, "country", self.country, false, text100("country")),
            country_code: patch_field(
                problems,
                "countryCode",
                self.country_code,
                false,
                |c: String| check_country_code(&c),
            ),
            phone_number: patch_field(
                problems,
                "phoneNumber",
                self.phone_number,
                false,
                |p: String| check_phone("phoneNumber", &p),
            ),
            locale: patch_field(problems, "locale", self.locale, false, |l: String| {
                validate::language_tag("locale", &l)
            })
            .flatten(),
            email: None,
        }
    }
}

impl AdminProfileInput {
    fn parse(self, problems: &mut Problems) -> ProfileChange {
        let text100 = |field: &'static str| move |v: String| validate::bounded(field, &v, 1, 100);
        ProfileChange {
            name: patch_field(problems, "name", self.name, false, text100("name")).flatten(),
            age: patch_field(problems, "age", self.age, false, check_age),
            gender: patch_field(problems, "gender", self.gender, false, |g: String| {
                check_gender(&g)
            }),
            city: patch_field(problems, "city", self.city, true, text100("city")),
            country: patch_field(problems, "country", self.country, false, text100("country")),
            country_code: None,
            phone_number: patch_field(problems, "phone", self.phone, false, |p: String| {
                check_phone("phone", &p)
            }),
            locale: None,
            email: patch_field(problems, "email", self.email, false, |e: String| {
                Email::parse("email", &e)
            })
            .flatten(),
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

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationStatus {
    pub is_registration_complete: bool,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletedRegistration {
    pub user: User,
    pub registration_complete: bool,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct UserEnvelope {
    pub user: User,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct Deleted {
    pub id: String,
    pub deleted: bool,
}

#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleInput {
    #[schema(value_type = Role)]
    pub role: Option<String>,
}

#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailInput {
    /// An e-mail address (at most 64 characters before the `@`, a dotted domain).
    #[schema(value_type = String, format = Email, max_length = 254)]
    pub email: Option<String>,
}

/// Escapes `%`, `_` and `\` for a `LIKE ... ESCAPE '\'` pattern and wraps it in `%`.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

pub(crate) async fn find_user(conn: &mut AnyConnection, id: &str) -> Result<Option<User>> {
    if !looks_like_id(id) {
        return Ok(None);
    }
    let row = sqlx::query(select_users!("WHERE id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(User::from_row).transpose()
}

/// Keeps these users from being deleted until the commit (PostgreSQL: `FOR KEY SHARE`,
/// the lock a foreign-key check takes, taken here in id order before the caller writes
/// anything). A transaction that writes rows referring to several users takes these
/// locks up front, not one by one between its writes: waiting for a user's deletion
/// while holding the rollup rows its first writes updated could deadlock with that
/// deletion's cascade. SQLite's writer is alone.
pub(crate) async fn hold_users(
    conn: &mut AnyConnection,
    backend: Backend,
    ids: &[String],
) -> Result<()> {
    if backend == Backend::Postgres {
        let mut sorted: Vec<&String> = ids.iter().collect();
        sorted.sort();
        for id in sorted {
            sqlx::query("SELECT id FROM users WHERE id = $1 FOR KEY SHARE")
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?;
        }
    }
    Ok(())
}

pub(crate) async fn find_user_by_email(
    conn: &mut AnyConnection,
    email: &str,
) -> Result<Option<User>> {
    let row = sqlx::query(select_users!("WHERE email = $1"))
        .bind(email)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(User::from_row).transpose()
}

async fn require_user(conn: &mut AnyConnection, id: &str) -> Result<User> {
    find_user(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("user"))
}

/// Creates a user with incomplete registration (or returns the existing one).
pub(crate) async fn find_or_create_user<C: WriteConn>(
    conn: &mut C,
    email: &Email,
    locale: &str,
    now: i64,
) -> Result<User> {
    // One statement for a new address (the insert returns the row), two for a known one
    // (the insert does nothing, then the row is read): sign-in is a hot write path.
    let id = new_id();
    let created = conn
        .fetch_first(
            concat!(
                "INSERT INTO users (id, email, role, is_registration_complete, locale, created_at, updated_at)
                 VALUES ($1, $2, 'user', 0, $3, $4, $4) ON CONFLICT (email) DO NOTHING
                 RETURNING ",
                user_columns!()
            ),
            &[
                Arg::Text(&id),
                Arg::Text(email.as_str()),
                Arg::Text(locale),
                Arg::Int(now),
            ],
        )
        .await?;
    let row = match created {
        Some(row) => row,
        None => conn
            .fetch_first(
                select_users!("WHERE email = $1"),
                &[Arg::Text(email.as_str())],
            )
            .await?
            .ok_or_else(|| Error::internal("user vanished right after creation"))?,
    };
    User::from_row(&row)
}

/// Superadmins now, and still at the commit: on PostgreSQL their rows stay locked until
/// then, so two superadmins demoted or deleted at once cannot both see the other one still
/// there (the second waits, then counts without the first). `NO KEY UPDATE`, not `UPDATE`:
/// it must not block the foreign-key checks of writes that merely refer to a superadmin.
/// SQLite's writer is alone.
async fn count_superadmins(conn: &mut AnyConnection, backend: Backend) -> Result<i64> {
    let sql = match backend {
        Backend::Sqlite => "SELECT id FROM users WHERE role = 'superadmin'",
        Backend::Postgres => {
            "SELECT id FROM users WHERE role = 'superadmin' ORDER BY id FOR NO KEY UPDATE"
        }
    };
    let ids = sqlx::query(sql).fetch_all(conn).await?;
    Ok(i64::try_from(ids.len()).unwrap_or(i64::MAX))
}

async fn apply_change(
    conn: &mut AnyConnection,
    user: &User,
    change: ProfileChange,
    now: i64,
) -> Result<User> {
    if let Some(email) = &change.email
        && email.as_str() != user.email
        && let Some(other) = find_user_by_email(conn, email.as_str()).await?
        && other.id != user.id
    {
        return Err(Error::Conflict(
            "that e-mail address is already in use".into(),
        ));
    }
    let keep =
        |new: Option<Option<String>>, old: &Option<String>| new.unwrap_or_else(|| old.clone());
    sqlx::query(
        "UPDATE users SET name = $1, age = $2, gender = $3, city = $4, country = $5, country_code = $6,
                phone_number = $7, locale = $8, email = $9, updated_at = $10
         WHERE id = $11",
    )
    .bind(change.name.or_else(|| user.name.clone()))
    .bind(change.age.unwrap_or(user.age))
    .bind(keep(change.gender, &user.gender))
    .bind(keep(change.city, &user.city))
    .bind(keep(change.country, &user.country))
    .bind(keep(change.country_code, &user.country_code))
    .bind(keep(change.phone_number, &user.phone_number))
    .bind(change.locale.unwrap_or_else(|| user.locale.clone()))
    .bind(change.email.map_or_else(|| user.email.clone(), Email::into_string))
    .bind(now)
    .bind(&user.id)
    .execute(&mut *conn)
    .await
    .map_err(|e| match Error::from(e) {
        Error::Conflict(_) => Error::Conflict("that e-mail address is already in use".into()),
        other => other,
    })?;
    require_user(conn, &user.id).await
}

/// May `actor` change or delete `target`? Admins manage users; only a superadmin manages
/// admins and superadmins (an admin who could change a superadmin's e-mail could sign in as them).
fn may_manage(actor: &Actor, target: &User) -> Result<()> {
    actor.require(Role::Admin)?;
    if target.role >= Role::Admin {
        actor.require(Role::Superadmin)?;
    }
    Ok(())
}

impl Langcamp {
    /// `GET /me`: the caller's own profile.
    #[tracing::instrument(skip_all)]
    pub async fn me(&self, actor: &Actor) -> Result<User> {
        let caller = actor.caller()?;
        // The token check just filled or confirmed this entry (see `crate::sessions`).
        let now = self.clock().now_ms();
        if let Some(user) = self
            .sessions()
            .get(&caller.session_id, &caller.user_id, now)
        {
            return Ok(User::clone(&user));
        }
        let mut conn = self.db().reader().acquire().await?;
        find_user(&mut conn, &caller.user_id)
            .await?
            .ok_or(Error::TokenInvalid)
    }

    #[tracing::instrument(skip_all)]
    pub async fn registration_status(&self, actor: &Actor) -> Result<RegistrationStatus> {
        let user = self.me(actor).await?;
        Ok(RegistrationStatus {
            is_registration_complete: user.is_registration_complete,
        })
    }

    /// Completes a first sign-in's profile; 409 when already complete.
    #[tracing::instrument(skip_all)]
    pub async fn complete_registration(
        &self,
        actor: &Actor,
        input: ProfileInput,
    ) -> Result<CompletedRegistration> {
        let caller = actor.caller()?;
        let mut problems = Problems::new();
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
        let change = input.parse(&mut problems);
        problems.finish()?;

        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let user = find_user(&mut tx, &caller.user_id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        if user.is_registration_complete {
            return Err(Error::Conflict("registration is already complete".into()));
        }
        apply_change(&mut tx, &user, change, now).await?;
        sqlx::query("UPDATE users SET is_registration_complete = $1 WHERE id = $2")
            .bind(bit(true))
            .bind(&user.id)
            .execute(&mut *tx)
            .await?;
        let user = require_user(&mut tx, &user.id).await?;
        self.commit_change(tx, Change::User(user.id.clone()))
            .await?;
        Ok(CompletedRegistration {
            user,
            registration_complete: true,
        })
    }

    /// `PATCH /me/profile`: any subset of the profile fields.
    #[tracing::instrument(skip_all)]
    pub async fn update_my_profile(&self, actor: &Actor, input: ProfileInput) -> Result<User> {
        let caller = actor.caller()?;
        let mut problems = Problems::new();
        let change = input.parse(&mut problems);
        problems.finish()?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let user = find_user(&mut tx, &caller.user_id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        let user = apply_change(&mut tx, &user, change, now).await?;
        self.commit_change(tx, Change::User(user.id.clone()))
            .await?;
        Ok(user)
    }

    /// `GET /users`: newest first, filtered.
    #[tracing::instrument(skip_all)]
    pub async fn list_users(
        &self,
        actor: &Actor,
        filter: &UserFilter,
        page: PageRequest,
    ) -> Result<Page<User>> {
        actor.require(Role::Admin)?;
        let mut problems = Problems::new();
        let complete = match filter.is_registration_complete.as_deref().map(str::trim) {
            None | Some("") => None,
            Some("true") => Some(1i64),
            Some("false") => Some(0i64),
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
        let q = filter
            .q
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(like_pattern);
        let role = role.map(Role::as_str);

        let mut conn = self.db().reader().acquire().await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM users
             WHERE ($1 IS NULL OR role = $1)
               AND ($2 IS NULL OR is_registration_complete = $2)
               AND ($3 IS NULL OR LOWER(email) LIKE $3 ESCAPE '\\' OR LOWER(COALESCE(name, '')) LIKE $3 ESCAPE '\\')",
        )
        .bind(role)
        .bind(complete)
        .bind(q.as_deref())
        .fetch_one(&mut *conn)
        .await?;
        let rows = sqlx::query(select_users!(
            "WHERE ($1 IS NULL OR role = $1)
               AND ($2 IS NULL OR is_registration_complete = $2)
               AND ($3 IS NULL OR LOWER(email) LIKE $3 ESCAPE '\\' OR LOWER(COALESCE(name, '')) LIKE $3 ESCAPE '\\')
             ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
        ))
        .bind(role)
        .bind(complete)
        .bind(q.as_deref())
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *conn)
        .await?;
        let list = rows
            .iter()
            .map(User::from_row)
            .collect::<std::result::Result<_, _>>()?;
        Ok(Page::new(list, page, total))
    }

    #[tracing::instrument(skip_all)]
    pub async fn get_user(&self, actor: &Actor, id: &str) -> Result<User> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        require_user(&mut conn, id).await
    }

    /// Looks a user up by e-mail (operator tools).
    pub async fn get_user_by_email(&self, actor: &Actor, email: &str) -> Result<User> {
        actor.require(Role::Admin)?;
        let email = Email::parse("email", email).map_err(Error::invalid)?;
        let mut conn = self.db().reader().acquire().await?;
        find_user_by_email(&mut conn, email.as_str())
            .await?
            .ok_or_else(|| Error::not_found("user"))
    }

    /// `PATCH /users/{id}/role`: superadmin only; the last superadmin stays.
    #[tracing::instrument(skip_all)]
    pub async fn set_role(&self, actor: &Actor, id: &str, input: RoleInput) -> Result<User> {
        actor.require(Role::Superadmin)?;
        let role: Role = input
            .role
            .as_deref()
            .ok_or_else(|| Error::invalid("role is required"))?
            .parse()?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let user = require_user(&mut tx, id).await?;
        if user.role == Role::Superadmin
            && role != Role::Superadmin
            && count_superadmins(&mut tx, self.db().backend()).await? <= 1
        {
            return Err(Error::Conflict(
                "the last superadmin cannot be demoted".into(),
            ));
        }
        sqlx::query("UPDATE users SET role = $1, updated_at = $2 WHERE id = $3")
            .bind(role.as_str())
            .bind(now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let user = require_user(&mut tx, id).await?;
        self.commit_change(tx, Change::User(user.id.clone()))
            .await?;
        Ok(user)
    }

    /// `PATCH /users/{id}/email`.
    #[tracing::instrument(skip_all)]
    pub async fn set_user_email(&self, actor: &Actor, id: &str, input: EmailInput) -> Result<User> {
        actor.require(Role::Admin)?;
        let email = Email::parse("email", input.email.as_deref().unwrap_or("")).map_err(|e| {
            Error::invalid(if input.email.is_none() {
                "email is required".into()
            } else {
                e
            })
        })?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let user = require_user(&mut tx, id).await?;
        may_manage(actor, &user)?;
        let change = ProfileChange {
            email: Some(email),
            ..ProfileChange::default()
        };
        let user = apply_change(&mut tx, &user, change, now).await?;
        self.commit_change(tx, Change::User(user.id.clone()))
            .await?;
        Ok(user)
    }

    /// `PATCH /admin/users/{id}/profile`.
    #[tracing::instrument(skip_all)]
    pub async fn admin_update_profile(
        &self,
        actor: &Actor,
        id: &str,
        input: AdminProfileInput,
    ) -> Result<UserEnvelope> {
        actor.require(Role::Admin)?;
        let mut problems = Problems::new();
        let change = input.parse(&mut problems);
        problems.finish()?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let user = require_user(&mut tx, id).await?;
        may_manage(actor, &user)?;
        let user = apply_change(&mut tx, &user, change, now).await?;
        self.commit_change(tx, Change::User(user.id.clone()))
            .await?;
        Ok(UserEnvelope { user })
    }

    /// `DELETE /users/{id}`: removes the user with their sessions, results and assignments.
    #[tracing::instrument(skip_all)]
    pub async fn delete_user(&self, actor: &Actor, id: &str) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        let mut tx = self.db().begin().await?;
        let user = require_user(&mut tx, id).await?;
        may_manage(actor, &user)?;
        if user.role == Role::Superadmin
            && count_superadmins(&mut tx, self.db().backend()).await? <= 1
        {
            return Err(Error::Conflict(
                "the last superadmin cannot be deleted".into(),
            ));
        }
        sqlx::query("DELETE FROM users WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        // Its sign-ins went with it (foreign keys).
        self.commit_change(tx, Change::User(id.to_owned())).await?;
        Ok(Deleted {
            id: id.to_owned(),
            deleted: true,
        })
    }

    /// Creates a user directly (operator tools); registration is complete when a name is given.
    #[tracing::instrument(skip_all)]
    pub async fn create_user(
        &self,
        actor: &Actor,
        email: &str,
        role: Role,
        name: Option<&str>,
    ) -> Result<User> {
        actor.require(Role::Superadmin)?;
        let mut problems = Problems::new();
        let email = problems.take(Email::parse("email", email));
        let name = problems.take(validate::optional_text("name", name, 100));
        problems.finish()?;
        let (Some(email), Some(name)) = (email, name) else {
            return Err(Error::invalid("invalid input"));
        };
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        if find_user_by_email(&mut tx, email.as_str()).await?.is_some() {
            return Err(Error::Conflict(
                "a user with that e-mail address already exists".into(),
            ));
        }
        let id = new_id();
        sqlx::query(
            "INSERT INTO users (id, email, name, role, is_registration_complete, locale, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'en', $6, $6)",
        )
        .bind(&id)
        .bind(email.as_str())
        .bind(name.as_deref())
        .bind(role.as_str())
        .bind(bit(name.is_some()))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let user = require_user(&mut tx, &id).await?;
        tx.commit().await?;
        Ok(user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(like_pattern("Ana"), "%ana%");
        assert_eq!(like_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }

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
