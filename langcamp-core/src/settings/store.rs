//! The SQL of settings: one row per key, the value as JSON text.
//!
//! The two writes ([`Put`], [`Delete`]) are pieces of work for [`Langcamp::write_change`]:
//! the change, its audit entry and its announcement to the other instances in one piece,
//! so on SQLite they share the group commit's transaction with the writes beside them.

use serde_json::Value;
use sqlx::AnyConnection;

use super::{Setting, SettingKey};
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::error::{Error, Result};
use crate::domain::page::UNPAGED_CAP;
use crate::domain::time::Timestamp;
use crate::platform::db::{Arg, Row, WriteConn};

/// A setting as the audit trail names it: by its key, as id and label (CONTRACT §17), so
/// `targetId=<key>` finds its whole history.
fn setting_target(key: &str) -> Target {
    Target::record("setting", key, key)
}

fn from_row(row: &impl Row) -> Result<Setting> {
    Ok(Setting {
        key: row.text("key")?,
        value: serde_json::from_str(&row.text("value")?)?,
        updated_at: Timestamp::from_millis(row.int("updated_at")?),
    })
}

pub(super) async fn find<C: WriteConn>(conn: &mut C, key: &SettingKey) -> Result<Option<Setting>> {
    let row = conn
        .fetch_first(
            "SELECT key, value, updated_at FROM settings WHERE key = $1",
            &[Arg::Text(key.as_str())],
        )
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

/// `PUT /settings/{key}`: creates or replaces the setting; the row as stored.
pub(super) struct Put {
    pub key: SettingKey,
    pub value: Value,
}

impl StaffWrite for Put {
    type Output = Setting;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Setting, Entries)> {
        let key = self.key.as_str();
        // The entry carries the value it replaces and the value being written.
        let before = find(conn, &self.key).await?.map(|s| s.value);
        let entry = Entry::new("setting.put", setting_target(key))
            .with_change_map(serde_json::json!({ "value": { "from": before, "to": &self.value } }));
        let text = serde_json::to_string(&self.value)?;
        let stored = conn
            .fetch_first(
                "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (key) DO UPDATE
                 SET value = excluded.value, updated_at = excluded.updated_at
             RETURNING key, value, updated_at",
                &[Arg::Text(key), Arg::Text(&text), Arg::Int(by.now)],
            )
            .await?
            .as_ref()
            .map(from_row)
            .transpose()?
            .ok_or_else(|| Error::internal("the upsert returned no row"))?;
        Ok((stored, entry.into()))
    }
}

/// `DELETE /settings/{key}`: 404 when there is no such setting (nothing recorded).
pub(super) struct Delete {
    pub key: SettingKey,
}

impl StaffWrite for Delete {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        let key = self.key.as_str();
        let deleted = conn
            .exec("DELETE FROM settings WHERE key = $1", &[Arg::Text(key)])
            .await?;
        if deleted == 0 {
            return Err(Error::not_found("setting"));
        }
        let entry = Entry::new("setting.deleted", setting_target(key));
        Ok(((), entry.into()))
    }
}
