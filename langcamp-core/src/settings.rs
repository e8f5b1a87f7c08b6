//! Settings (CONTRACT §9): key/value pairs the frontend reads, such as
//! `landing_video_url` (the landing page's video address).
//!
//! A value is any JSON value but `null`, stored as JSON text. Public reads by key come
//! from [`crate::cache`]; every write here invalidates it after its transaction commits.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use utoipa::ToSchema;

use crate::Langcamp;
use crate::actor::{Actor, Role};
use crate::error::{Error, Result};
use crate::page::UNPAGED_CAP;
use crate::time::Timestamp;
use crate::validate::{Patch, Problems, passed};

/// The key under which the landing page's video address is kept.
pub const LANDING_VIDEO_URL: &str = "landing_video_url";
pub const KEY_MAX: usize = 100;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Setting {
    #[schema(example = "landing_video_url")]
    pub key: String,
    /// Any JSON value but null.
    #[schema(example = "https://video.example.com/landing.mp4")]
    pub value: Value,
    pub updated_at: Timestamp,
}

impl Setting {
    fn from_row(row: &AnyRow) -> Result<Setting> {
        let text: String = row.try_get("value")?;
        Ok(Setting {
            key: row.try_get("key")?,
            value: serde_json::from_str(&text)?,
            updated_at: Timestamp::from_millis(row.try_get("updated_at")?),
        })
    }
}

/// The body of `PUT /settings`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingInput {
    /// `[a-z0-9_.-]`, 1 to 100 characters.
    #[schema(value_type = String, required = true, pattern = r"^[a-z0-9_.-]{1,100}$", example = "landing_video_url")]
    pub key: Option<String>,
    /// Any JSON value but null (a string, number, boolean, object or array).
    #[serde(default)]
    #[schema(schema_with = non_null_value, required = true)]
    pub value: Patch<Value>,
}

/// Any JSON value but null: the schema of a setting's value.
fn non_null_value() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![
            Type::String,
            Type::Number,
            Type::Boolean,
            Type::Object,
            Type::Array,
        ]))
        .description(Some(
            "Any JSON value but null (a string, number, boolean, object or array).",
        ))
        .examples(["https://video.example.com/landing.mp4"])
        .build()
}

impl SettingInput {
    pub fn new(key: impl Into<String>, value: Value) -> SettingInput {
        SettingInput {
            key: Some(key.into()),
            value: Patch::Value(value),
        }
    }
}

/// A validated [`SettingInput`]: what [`Langcamp::put_setting`] takes.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSetting {
    key: String,
    value: Value,
}

impl NewSetting {
    /// The setting `key` = `value` (tools that have a JSON value already), checked as a
    /// body is.
    pub fn new(key: impl Into<String>, value: Value) -> Result<NewSetting> {
        NewSetting::try_from(SettingInput::new(key, value))
    }
}

impl TryFrom<SettingInput> for NewSetting {
    type Error = Error;

    fn try_from(input: SettingInput) -> Result<NewSetting> {
        let mut problems = Problems::new();
        let key = match input.key.as_deref() {
            None => {
                problems.add("key is required");
                None
            }
            Some(raw) => problems.take(check_key(raw)),
        };
        let value = match input.value {
            Patch::Absent => {
                problems.add("value is required");
                None
            }
            Patch::Null => {
                problems.add("value cannot be null; delete the setting to remove it");
                None
            }
            Patch::Value(v) => Some(v),
        };
        problems.finish()?;
        Ok(NewSetting {
            key: passed(key)?,
            value: passed(value)?,
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct DeletedSetting {
    pub key: String,
    pub deleted: bool,
}

/// A setting key: `[a-z0-9_.-]{1,100}` after trimming.
pub fn check_key(raw: &str) -> std::result::Result<String, String> {
    let key = raw.trim();
    let ok = (1..=KEY_MAX).contains(&key.len())
        && key.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
        });
    if ok {
        Ok(key.to_owned())
    } else {
        Err(format!(
            "key must be 1 to {KEY_MAX} characters of a-z, 0-9, _, . and -"
        ))
    }
}

async fn find_setting(conn: &mut AnyConnection, key: &str) -> Result<Option<Setting>> {
    let row = sqlx::query("SELECT key, value, updated_at FROM settings WHERE key = $1")
        .bind(key)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(Setting::from_row).transpose()
}

impl Langcamp {
    /// Commits a settings change and drops the cached settings, whatever the outcome of
    /// the commit (a failed commit may still have been applied).
    async fn commit_settings(&self, tx: crate::db::Tx) -> Result<()> {
        self.commit_change(tx, crate::changes::Change::Settings)
            .await
    }

    /// `GET /settings/{key}`: public; served from the cache. A key that is not set (or
    /// could not be one) is not found.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_setting(&self, _actor: &Actor, key: &str) -> Result<Setting> {
        let Ok(key) = check_key(key) else {
            return Err(Error::not_found("setting"));
        };
        let now = self.clock().now_ms();
        self.caches()
            .settings
            .get_or_load(key.clone(), now, || async {
                let mut conn = self.db().reader().acquire().await?;
                find_setting(&mut conn, &key).await
            })
            .await?
            .ok_or_else(|| Error::not_found("setting"))
    }

    /// `GET /settings`: every setting, by key (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_settings(&self, actor: &Actor) -> Result<Vec<Setting>> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        let rows = sqlx::query("SELECT key, value, updated_at FROM settings ORDER BY key LIMIT $1")
            .bind(UNPAGED_CAP)
            .fetch_all(&mut *conn)
            .await?;
        rows.iter().map(Setting::from_row).collect()
    }

    /// `PUT /settings`: creates or replaces a setting (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn put_setting(&self, actor: &Actor, setting: NewSetting) -> Result<Setting> {
        actor.require(Role::Admin)?;
        let NewSetting { key, value } = setting;
        let text = serde_json::to_string(&value)?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let rows = sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
             RETURNING key, value, updated_at",
        )
        .bind(&key)
        .bind(&text)
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let setting = rows
            .first()
            .map(Setting::from_row)
            .transpose()?
            .ok_or_else(|| Error::internal("the upsert returned no row"))?;
        self.commit_settings(tx).await?;
        Ok(setting)
    }

    /// `DELETE /settings/{key}` (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_setting(&self, actor: &Actor, key: &str) -> Result<DeletedSetting> {
        actor.require(Role::Admin)?;
        let Ok(key) = check_key(key) else {
            return Err(Error::not_found("setting"));
        };
        let mut tx = self.db().begin().await?;
        let deleted = sqlx::query("DELETE FROM settings WHERE key = $1")
            .bind(&key)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if deleted == 0 {
            return Err(Error::not_found("setting"));
        }
        self.commit_settings(tx).await?;
        Ok(DeletedSetting { key, deleted: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_lowercase_words_up_to_100_characters() {
        assert_eq!(
            check_key(" landing_video_url "),
            Ok("landing_video_url".into())
        );
        assert!(check_key("site.theme-2").is_ok());
        assert!(check_key(&"k".repeat(100)).is_ok());
        for bad in ["", " ", "Landing", "a b", "a/b", "ключ", &"k".repeat(101)] {
            assert!(check_key(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn a_null_value_is_told_apart_from_a_missing_one() {
        let null: SettingInput = serde_json::from_str(r#"{"key":"k","value":null}"#).expect("json");
        assert_eq!(null.value, Patch::Null);
        let absent: SettingInput = serde_json::from_str(r#"{"key":"k"}"#).expect("json");
        assert_eq!(absent.value, Patch::Absent);
    }
}
