//! Settings (CONTRACT §9): key/value pairs the frontend reads, such as
//! `landing_video_url` (the landing page's video address).
//!
//! A value is any JSON value but `null`, stored as JSON text. Public reads by key come
//! from [`crate::platform::cache`]; every write here invalidates it after its transaction commits.

mod input;
mod store;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub use self::input::{KEY_MAX, NewSetting, SettingInput, SettingKey};
use crate::Langcamp;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::time::Timestamp;
use crate::platform::changes::Change;

/// The key under which the landing page's video address is kept.
pub const LANDING_VIDEO_URL: &str = "landing_video_url";

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

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct DeletedSetting {
    pub key: String,
    pub deleted: bool,
}

/// The setting `key`'s value when it is a string that is not blank (settings other
/// modules read, such as the school's name in mail).
pub(crate) async fn text_setting(
    conn: &mut sqlx::AnyConnection,
    key: &str,
) -> Result<Option<String>> {
    let Ok(key) = SettingKey::parse(key) else {
        return Ok(None);
    };
    Ok(store::find(conn, &key)
        .await?
        .and_then(|setting| match setting.value {
            Value::String(text) if !text.trim().is_empty() => Some(text.trim().to_owned()),
            _ => None,
        }))
}

impl Langcamp {
    /// `GET /settings/{key}`: public; served from the cache.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_setting(&self, _actor: &Actor, key: &SettingKey) -> Result<Setting> {
        let now = self.clock().now_ms();
        self.caches()
            .settings
            .get_or_load(key.as_str().to_owned(), now, || async {
                let mut conn = self.db().reader().acquire().await?;
                store::find(&mut *conn, key).await
            })
            .await?
            .ok_or_else(|| Error::not_found("setting"))
    }

    /// `GET /settings`: every setting, by key (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_settings(&self, actor: &Actor) -> Result<Vec<Setting>> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        store::all(&mut conn).await
    }

    /// `PUT /settings`: creates or replaces a setting (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn put_setting(&self, actor: &Actor, setting: NewSetting) -> Result<Setting> {
        actor.require(Role::Admin)?;
        let NewSetting { key, value } = setting;
        let put = store::Put { key, value };
        self.staff_write(actor, put, Some(Change::Settings)).await
    }

    /// `DELETE /settings/{key}` (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_setting(&self, actor: &Actor, key: &SettingKey) -> Result<DeletedSetting> {
        actor.require(Role::Admin)?;
        let delete = store::Delete { key: key.clone() };
        self.staff_write(actor, delete, Some(Change::Settings))
            .await?;
        Ok(DeletedSetting {
            key: key.as_str().to_owned(),
            deleted: true,
        })
    }
}
