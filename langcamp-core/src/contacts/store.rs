//! The SQL of contact requests. The admin list's filter is written once, for its count
//! and its page.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::input::{NewContact, ReplyText};
use super::{Contact, ContactSearch};
use crate::domain::error::{Error, Result};
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::domain::{ContactStatus, Id};
use crate::platform::db::by_id;
use crate::platform::db::listing::ListSql;
use crate::users::like_pattern;

/// Every query that returns contacts selects these columns, in this order.
macro_rules! select_contacts {
    ($($rest:expr),+) => {
        concat!(
            "SELECT id, first_name, last_name, email, phone, message, status, reply_message, \
             source, locale, replied_at, created_at, updated_at FROM contacts ",
            $($rest),+
        )
    };
}

/// The admin list's filter: `$1` a status or NULL, `$2` a LIKE pattern or NULL.
macro_rules! searched {
    () => {
        "WHERE ($1 IS NULL OR status = $1)
           AND ($2 IS NULL OR LOWER(first_name) LIKE $2 ESCAPE '\\'
                OR LOWER(last_name) LIKE $2 ESCAPE '\\' OR LOWER(email) LIKE $2 ESCAPE '\\')"
    };
}

/// The admin list, newest first.
const LIST: ListSql = ListSql {
    count: concat!("SELECT COUNT(*) FROM contacts ", searched!()),
    page: select_contacts!(
        searched!(),
        " ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    ),
};

fn contact_from_row(row: &AnyRow) -> std::result::Result<Contact, sqlx::Error> {
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
        locale: row.try_get("locale")?,
        replied_at: replied_at.map(Timestamp::from_millis),
        created_at: Timestamp::from_millis(row.try_get("created_at")?),
        updated_at: Timestamp::from_millis(row.try_get("updated_at")?),
    })
}

pub(super) fn not_found() -> Error {
    Error::not_found("contact request")
}

/// The contact request, or 404.
pub(super) async fn require(conn: &mut AnyConnection, id: &Id<Contact>) -> Result<Contact> {
    let row = by_id::find(conn, select_contacts!("WHERE id = $1"), id.as_str()).await?;
    row.as_ref()
        .map(contact_from_row)
        .transpose()?
        .ok_or_else(not_found)
}

pub(super) async fn insert(
    conn: &mut AnyConnection,
    id: &Id<Contact>,
    new: &NewContact,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO contacts (id, first_name, last_name, email, phone, message, status, source, locale, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8, $9, $9)",
    )
    .bind(id.as_str())
    .bind(new.first_name.as_str())
    .bind(new.last_name.as_str())
    .bind(new.email.as_str())
    .bind(new.phone.as_ref().map(|p| p.as_str()))
    .bind(new.message.as_str())
    .bind(new.source.as_ref().map(|s| s.as_str()))
    .bind(new.locale.as_ref().map(|l| l.as_str()))
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// A page of the admin list (newest first) and the total.
pub(super) async fn list(
    conn: &mut AnyConnection,
    search: &ContactSearch,
    page: PageRequest,
) -> Result<(Vec<Contact>, i64)> {
    let status = search.status.map(ContactStatus::as_str);
    let pattern = search.text.as_deref().map(like_pattern);
    let (total, rows) = LIST
        .fetch(conn, page, |query| {
            query.bind(status).bind(pattern.as_deref())
        })
        .await?;
    let list = rows
        .iter()
        .map(contact_from_row)
        .collect::<std::result::Result<_, _>>()?;
    Ok((list, total))
}

/// The admin list's contact requests after the key `(created_at, id)`, newest first,
/// `limit` of them: one chunk of an export (`crate::exports`).
pub(crate) async fn chunk_after(
    conn: &mut AnyConnection,
    search: &ContactSearch,
    after: (i64, &str),
    limit: i64,
) -> Result<Vec<Contact>> {
    let status = search.status.map(ContactStatus::as_str);
    let pattern = search.text.as_deref().map(like_pattern);
    let rows = sqlx::query(select_contacts!(
        searched!(),
        " AND (created_at, id) < ($3, $4) ORDER BY created_at DESC, id DESC LIMIT $5"
    ))
    .bind(status)
    .bind(pattern.as_deref())
    .bind(after.0)
    .bind(after.1)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(contact_from_row)
        .collect::<std::result::Result<_, _>>()?)
}

/// The contact requests sent from `email` (stored lower-cased), newest first: the
/// personal-data export (`crate::exports`).
pub(crate) async fn sent_from(conn: &mut AnyConnection, email: &str) -> Result<Vec<Contact>> {
    let rows = sqlx::query(select_contacts!(
        "WHERE email = $1 ORDER BY created_at DESC, id DESC"
    ))
    .bind(email)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(contact_from_row)
        .collect::<std::result::Result<_, _>>()?)
}

/// Stores the reply and marks the request `REPLIED`.
pub(super) async fn record_reply(
    conn: &mut AnyConnection,
    id: &Id<Contact>,
    reply: &ReplyText,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE contacts SET status = 'REPLIED', reply_message = $1, replied_at = $2, updated_at = $2
         WHERE id = $3",
    )
    .bind(reply.as_str())
    .bind(now)
    .bind(id.as_str())
    .execute(conn)
    .await?;
    Ok(())
}

/// Sets the status; false when there is no such request.
pub(super) async fn set_status(
    conn: &mut AnyConnection,
    id: &Id<Contact>,
    status: ContactStatus,
    now: i64,
) -> Result<bool> {
    if !id.is_well_formed() {
        return Ok(false);
    }
    let updated = sqlx::query("UPDATE contacts SET status = $1, updated_at = $2 WHERE id = $3")
        .bind(status.as_str())
        .bind(now)
        .bind(id.as_str())
        .execute(conn)
        .await?
        .rows_affected();
    Ok(updated > 0)
}
