//! The SQL of settings: one row per key, the value as JSON text.

use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::{Setting, SettingKey};
use crate::error::{Error, Result};
use crate::page::UNPAGED_CAP;
use crate::time::Timestamp;

fn from_row(row: &AnyRow) -> Result<Setting> {
    let text: String = row.try_get("value")?;
    Ok(Setting {
        key: row.try_get("key")?,
        value: serde_json::from_str(&text)?,
        updated_at: Timestamp::from_millis(row.try_get("updated_at")?),
    })
}

pub(super) async fn find(conn: &mut AnyConnection, key: &SettingKey) -> Result<Option<Setting>> {
    let row = sqlx::query("SELECT key, value, updated_at FROM settings WHERE key = $1")
        .bind(key.as_str())
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// Every setting by key, up to the cap of an unpaged list.
pub(super) async fn all(conn: &mut AnyConnection) -> Result<Vec<Setting>> {
    let rows = sqlx::query("SELECT key, value, updated_at FROM settings ORDER BY key LIMIT $1")
        .bind(UNPAGED_CAP)
        .fetch_all(conn)
        .await?;
    rows.iter().map(from_row).collect()
}

/// Creates or replaces the setting `key`; the row as stored.
pub(super) async fn upsert(
    conn: &mut AnyConnection,
    key: &SettingKey,
    value: &Value,
    now: i64,
) -> Result<Setting> {
    let text = serde_json::to_string(value)?;
    // Read with fetch_all: RETURNING read with fetch_one would leave the statement open and
    // hold SQLite's write lock (ARCHITECTURE, SQLite write rule b).
    let rows = sqlx::query(
        "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
         RETURNING key, value, updated_at",
    )
    .bind(key.as_str())
    .bind(&text)
    .bind(now)
    .fetch_all(conn)
    .await?;
    rows.first()
        .map(from_row)
        .transpose()?
        .ok_or_else(|| Error::internal("the upsert returned no row"))
}

/// Whether a setting `key` was there to delete.
pub(super) async fn delete(conn: &mut AnyConnection, key: &SettingKey) -> Result<bool> {
    let deleted = sqlx::query("DELETE FROM settings WHERE key = $1")
        .bind(key.as_str())
        .execute(conn)
        .await?
        .rows_affected();
    Ok(deleted > 0)
}
