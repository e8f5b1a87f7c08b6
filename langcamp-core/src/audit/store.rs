//! The SQL of the trail: an insert, the filtered list, chunks for export, the purge.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::{AuditActor, AuditEntry, AuditQuery, AuditTarget, DELETED_USER, Entry, Who};
use crate::domain::actor::Role;
use crate::domain::error::Result;
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::platform::db::listing::ListSql;
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

/// The filter: `$1` actor id, `$2` actor e-mail, `$3` target type, `$4` target id, `$5`
/// action, `$6` from, `$7` to; each NULL for none.
macro_rules! filtered {
    () => {
        "WHERE ($1 IS NULL OR a.actor_id = $1) AND ($2 IS NULL OR a.actor_email = $2)
           AND ($3 IS NULL OR a.target_type = $3) AND ($4 IS NULL OR a.target_id = $4)
           AND ($5 IS NULL OR a.action = $5) AND ($6 IS NULL OR a.at >= $6)
           AND ($7 IS NULL OR a.at < $7)"
    };
}

const LIST: ListSql = ListSql {
    count: concat!("SELECT COUNT(*) FROM audit_events a ", filtered!()),
    page: select_entries!(
        filtered!(),
        " ORDER BY a.at DESC, a.id DESC LIMIT $8 OFFSET $9"
    ),
};

fn bind_filter<'q>(
    query: crate::platform::db::listing::Bound<'q>,
    q: &'q AuditQuery,
) -> crate::platform::db::listing::Bound<'q> {
    query
        .bind(q.actor_id.as_deref())
        .bind(q.actor_email.as_deref())
        .bind(q.target_type.as_deref())
        .bind(q.target_id.as_deref())
        .bind(q.action.as_deref())
        .bind(q.from)
        .bind(q.to)
}

pub(super) async fn list(
    conn: &mut AnyConnection,
    query: &AuditQuery,
    page: PageRequest,
) -> Result<(Vec<AuditEntry>, i64)> {
    let (total, rows) = LIST
        .fetch(conn, page, |sql| bind_filter(sql, query))
        .await?;
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
    let (at, id) = match after {
        Some((at, id)) => (Some(*at), Some(id.as_str())),
        None => (None, None),
    };
    let rows = bind_filter(
        sqlx::query(select_entries!(
            filtered!(),
            " AND ($8 IS NULL OR a.at > $8 OR (a.at = $8 AND a.id > $9))
             ORDER BY a.at, a.id LIMIT $10"
        )),
        query,
    )
    .bind(at)
    .bind(id)
    .bind(limit)
    .fetch_all(conn)
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
