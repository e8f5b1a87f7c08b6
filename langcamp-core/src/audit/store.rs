//! The SQL of the trail: an insert, the filtered list, chunks for export, the purge.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::{AuditActor, AuditEntry, AuditQuery, AuditTarget, DELETED_USER, Entry, Who};
use crate::domain::actor::Role;
use crate::domain::error::Result;
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::platform::db::listing::{Conditions, Paged};
use crate::platform::db::{Arg, WriteConn};

pub(super) async fn insert<C: WriteConn>(
    conn: &mut C,
    id: &str,
    at: i64,
    who: &Who<'_>,
    entry: &Entry,
) -> Result<()> {
    let changes = entry
        .changes
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
    conn.exec(
        "INSERT INTO audit_events (id, at, action, actor_type, actor_id, actor_email, actor_role,
             target_type, target_id, target_label, changes, request_id, client_address)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        &[
            Arg::Text(id),
            Arg::Int(at),
            Arg::Text(entry.action),
            Arg::Text(who.kind),
            Arg::OptText(who.id),
            Arg::Text(who.email),
            Arg::OptText(who.role.map(Role::as_str)),
            Arg::Text(entry.target.kind),
            Arg::OptText(entry.target.id.as_deref()),
            Arg::OptText(entry.target.label.as_deref()),
            Arg::OptText(changes.as_deref()),
            Arg::OptText(who.request_id),
            Arg::OptText(who.client_address.as_deref()),
        ],
    )
    .await?;
    Ok(())
}

/// The columns of an entry; a user target's label is the user's e-mail now.
macro_rules! select_entries {
    ($($rest:expr),+) => {
        concat!(
            "SELECT a.id, a.at, a.action, a.actor_type, a.actor_id, a.actor_email, a.actor_role,
                    a.target_type, a.target_id, a.target_label, a.changes, a.request_id,
                    a.client_address, u.email AS target_user_email
             FROM audit_events a
             LEFT JOIN users u ON a.target_type = 'user' AND u.id = a.target_id ",
            $($rest),+
        )
    };
}

/// The trail newest first (the list), its entries' keys found in an index before the
/// entries are read.
const PAGED: Paged = Paged {
    select: select_entries!(""),
    joined: None,
    from: "audit_events a",
    key: "a.id",
    order: "a.at DESC, a.id DESC",
};

/// The trail oldest first (`langcamp audit export`), read in chunks by key.
const EXPORTED: Paged = Paged {
    order: "a.at, a.id",
    ..PAGED
};

/// Milliseconds in a UTC day, the width of a `stats_audit_days` bucket.
const DAY_MS: i64 = 86_400_000;

/// The list's conditions, for the filters given.
fn conditions(q: &AuditQuery) -> Conditions {
    let mut conditions = Conditions::default();
    conditions
        .and_text("a.actor_id = ?", q.actor_id.as_deref())
        .and_text("a.actor_email = ?", q.actor_email.as_deref())
        .and_text("a.target_type = ?", q.target_type.as_deref())
        .and_text("a.target_id = ?", q.target_id.as_deref())
        .and_text("a.action = ?", q.action.as_deref())
        .and_int("a.at >= ?", q.from)
        .and_int("a.at < ?", q.to);
    conditions
}

/// How many entries `q` matches. By an actor or a target: counted in their index. Else
/// (every entry, an action, a time range) from the counts the triggers keep per day and
/// action (`stats_audit_days`): whole days from there, and the part of a day at either
/// end of the range counted in the (at, id) or (action, at) index (a day's entries at most).
async fn total(conn: &mut AnyConnection, q: &AuditQuery, conditions: &Conditions) -> Result<i64> {
    if q.actor_id.is_some()
        || q.actor_email.is_some()
        || q.target_type.is_some()
        || q.target_id.is_some()
    {
        return Ok(conditions.count(conn, "audit_events a").await?);
    }
    let day_of = |ms: i64| ms - ms.rem_euclid(DAY_MS);
    // The whole days of the range: from the first day boundary at or after `from`, to the
    // last one at or before `to`.
    let first = q.from.map(|from| day_of(from + DAY_MS - 1));
    let last = q.to.map(day_of);
    if let (Some(first), Some(last)) = (first, last)
        && first >= last
    {
        // No whole day: the range is within one day (or two partial ones), counted.
        return Ok(conditions.count(conn, "audit_events a").await?);
    }
    let mut days = Conditions::default();
    days.and_text("action = ?", q.action.as_deref())
        .and_int("day >= ?", first)
        .and_int("day < ?", last);
    let sql = format!(
        "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM stats_audit_days{}",
        days.where_clause()
    );
    let mut total: i64 = days
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    let partial = |from: i64, to: i64| AuditQuery {
        from: Some(from),
        to: Some(to),
        ..q.clone()
    };
    if let (Some(from), Some(first)) = (q.from, first)
        && from < first
    {
        let before = partial(from, first);
        total += conditions_count(conn, &before).await?;
    }
    if let (Some(to), Some(last)) = (q.to, last)
        && last < to
    {
        let after = partial(last, to);
        total += conditions_count(conn, &after).await?;
    }
    Ok(total)
}

async fn conditions_count(conn: &mut AnyConnection, q: &AuditQuery) -> Result<i64> {
    Ok(conditions(q).count(conn, "audit_events a").await?)
}

pub(super) async fn list(
    conn: &mut AnyConnection,
    query: &AuditQuery,
    page: PageRequest,
) -> Result<(Vec<AuditEntry>, i64)> {
    let conditions = conditions(query);
    let total = total(conn, query, &conditions).await?;
    let rows = PAGED.page_by_keys(conn, &conditions, page, total).await?;
    let list = rows.iter().map(entry_from_row).collect::<Result<_>>()?;
    Ok((list, total))
}

/// Up to `limit` entries of `query` after `after` (time and id), oldest first.
pub(super) async fn chunk_after(
    conn: &mut AnyConnection,
    query: &AuditQuery,
    after: Option<&(i64, String)>,
    limit: i64,
) -> Result<Vec<AuditEntry>> {
    let after = after.map_or((i64::MIN, ""), |(at, id)| (*at, id.as_str()));
    let rows = EXPORTED
        .chunk_after(conn, &conditions(query), "(a.at, a.id) >", after, limit)
        .await?;
    rows.iter().map(entry_from_row).collect()
}

/// Every entry where the user `user_id` is the actor or the target, oldest first (the
/// personal-data export; bounded like an unpaged list).
pub(crate) async fn about_user(conn: &mut AnyConnection, user_id: &str) -> Result<Vec<AuditEntry>> {
    let rows = sqlx::query(select_entries!(
        "WHERE a.actor_id = $1 OR (a.target_type = 'user' AND a.target_id = $1)
         ORDER BY a.at, a.id LIMIT $2"
    ))
    .bind(user_id)
    .bind(crate::domain::page::UNPAGED_CAP)
    .fetch_all(conn)
    .await?;
    rows.iter().map(entry_from_row).collect()
}

/// Deletes the entries before `before` (epoch ms): allowed by the append-only triggers
/// only while this transaction's permit row is there, which it removes again.
pub(super) async fn purge(conn: &mut AnyConnection, before: i64) -> Result<u64> {
    sqlx::query("INSERT INTO audit_purge (before) VALUES ($1)")
        .bind(before)
        .execute(&mut *conn)
        .await?;
    let deleted = sqlx::query("DELETE FROM audit_events WHERE at < $1")
        .bind(before)
        .execute(&mut *conn)
        .await?
        .rows_affected();
    sqlx::query("DELETE FROM audit_purge")
        .execute(&mut *conn)
        .await?;
    Ok(deleted)
}

fn entry_from_row(row: &AnyRow) -> Result<AuditEntry> {
    let target_type: String = row.try_get("target_type")?;
    let label = if target_type == "user" {
        let email: Option<String> = row.try_get("target_user_email")?;
        Some(email.unwrap_or_else(|| DELETED_USER.to_owned()))
    } else {
        row.try_get("target_label")?
    };
    let role: Option<String> = row.try_get("actor_role")?;
    let changes: Option<String> = row.try_get("changes")?;
    Ok(AuditEntry {
        id: row.try_get("id")?,
        at: Timestamp::from_millis(row.try_get("at")?),
        action: row.try_get("action")?,
        actor: AuditActor {
            kind: row.try_get("actor_type")?,
            id: row.try_get("actor_id")?,
            email: row.try_get("actor_email")?,
            role: role.and_then(|r| r.parse().ok()),
        },
        target: AuditTarget {
            kind: target_type,
            id: row.try_get("target_id")?,
            label,
        },
        changes: changes.map(|c| serde_json::from_str(&c)).transpose()?,
        request_id: row.try_get("request_id")?,
        client_address: row.try_get("client_address")?,
    })
}
