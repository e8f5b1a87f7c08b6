//! The SQL of users: reads by id and e-mail, the sign-in insert, locks, and profile writes.

use sqlx::AnyConnection;

use super::User;
use super::input::ProfileChange;
use crate::domain::actor::Role;
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::domain::validate::Email;
use crate::platform::db::by_id;
use crate::platform::db::listing::ListSql;
use crate::platform::db::{self, Arg, Locks, WriteConn, flag};

/// Every query that returns users reads these columns, in this order.
macro_rules! user_columns {
    () => {
        "id, email, name, role, is_registration_complete, age, gender, city, country, \
         country_code, phone_number, locale, created_at, updated_at "
    };
}

macro_rules! select_users {
    ($($rest:expr),+) => {
        concat!("SELECT ", user_columns!(), "FROM users ", $($rest),+)
    };
}

/// The role of the stored user `id`. The table's CHECK constraint allows only the three
/// roles, so another one was written around it or by a newer release. Reading it as
/// `user` would quietly take a staff member's rights away (or hide a tampered row);
/// refusing the read (500, the row and the value in the log, never in an answer) shows
/// the fault where it is.
fn stored_role(id: &str, text: &str) -> Result<Role> {
    text.parse().map_err(|_| {
        Error::internal(format!(
            "user {id} has the role {text:?}, which this build does not know"
        ))
    })
}

impl User {
    /// A user from a row of [`user_columns!`], on either backend's connection.
    pub(crate) fn from_row(row: &impl db::Row) -> Result<User> {
        let id = row.text("id")?;
        let role = stored_role(&id, &row.text("role")?)?;
        Ok(User {
            id,
            email: row.text("email")?,
            name: row.opt_text("name")?,
            role,
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

pub(crate) async fn find_user<C: WriteConn>(conn: &mut C, id: &str) -> Result<Option<User>> {
    let row = by_id::find(conn, select_users!("WHERE id = $1"), id).await?;
    row.as_ref().map(User::from_row).transpose()
}

/// The admin list's filter: `$1` a role, `$2` 0 or 1 for the registration, `$3` a LIKE
/// pattern of the e-mail or the name; each matches every user when null.
macro_rules! listed {
    () => {
        "WHERE ($1 IS NULL OR role = $1)
           AND ($2 IS NULL OR is_registration_complete = $2)
           AND ($3 IS NULL OR LOWER(email) LIKE $3 ESCAPE '\\' OR LOWER(COALESCE(name, '')) LIKE $3 ESCAPE '\\') "
    };
}

/// The admin list, newest first.
const LIST: ListSql = ListSql {
    count: concat!("SELECT COUNT(*) FROM users ", listed!()),
    page: select_users!(
        listed!(),
        "ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
    ),
};

/// A page of the admin list and the number of users matching.
pub(super) async fn list(
    conn: &mut AnyConnection,
    role: Option<&str>,
    complete: Option<i64>,
    pattern: Option<&str>,
    page: PageRequest,
) -> Result<(Vec<User>, i64)> {
    let (total, rows) = LIST
        .fetch(conn, page, |query| {
            query.bind(role).bind(complete).bind(pattern)
        })
        .await?;
    let list = rows.iter().map(User::from_row).collect::<Result<_>>()?;
    Ok((list, total))
}

/// The admin list's users after the key `(created_at, id)`, newest first, `limit` of them:
/// one chunk of an export (`crate::exports`), read by key rather than by offset so each
/// chunk costs the same however far the export has gone.
pub(crate) async fn chunk_after(
    conn: &mut AnyConnection,
    query: &super::UserQuery,
    after: (i64, &str),
    limit: i64,
) -> Result<Vec<User>> {
    let complete = query.is_registration_complete.map(i64::from);
    let pattern = query.text.as_deref().map(like_pattern);
    let rows = sqlx::query(select_users!(
        listed!(),
        "AND (created_at, id) < ($4, $5) ORDER BY created_at DESC, id DESC LIMIT $6"
    ))
    .bind(query.role.map(Role::as_str))
    .bind(complete)
    .bind(pattern.as_deref())
    .bind(after.0)
    .bind(after.1)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    rows.iter().map(User::from_row).collect()
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

pub(super) async fn require_user(conn: &mut AnyConnection, id: &str) -> Result<User> {
    find_user(conn, id).await?.ok_or_else(super::no_user)
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

/// How many superadmins there are, and still at the commit: their rows are held first
/// ([`Locks::hold_superadmins`]), so two superadmins demoted or deleted at once cannot
/// both see the other one still there.
pub(super) async fn count_superadmins(conn: &mut AnyConnection) -> Result<i64> {
    conn.hold_superadmins().await?;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE role = 'superadmin'")
        .fetch_one(conn)
        .await?;
    Ok(count)
}

pub(super) async fn apply_change(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(like_pattern("Ana"), "%ana%");
        assert_eq!(like_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }
}
