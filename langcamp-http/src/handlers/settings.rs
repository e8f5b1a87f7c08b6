//! Settings (CONTRACT §9): public reading by key, admin editing.

use langcamp_core::settings::{DeletedSetting, NewSetting, Setting, SettingInput, SettingKey};
use langcamp_core::{Actor, Result};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_list>(RateRule::Default, Access::Admin, list);
    r.add::<__path_put>(RateRule::Default, Access::Admin, put);
    r.add::<__path_get>(RateRule::Default, Access::Anyone, get);
    r.add::<__path_delete>(RateRule::Default, Access::Admin, delete);
}

/// Read one setting (public).
///
/// The frontend reads `landing_video_url` (the landing page's video address, a string)
/// here; like any key it answers 404 until an admin sets it. Served from a cache that
/// every change clears at once on this server and, on PostgreSQL, within milliseconds on
/// the others sharing the database (a change made by the `langcamp settings set` command
/// on SQLite: within 5 seconds).
#[utoipa::path(get, path = "/settings/{key}", tag = "settings", operation_id = "getSetting",
    params(("key" = String, Path, description = "Setting key, e.g. `landing_video_url`")),
    responses(
        (status = 200, description = "The setting", body = Envelope<Setting>),
        (status = 404, description = "No such setting", body = ErrorEnvelope),
    ))]
pub async fn get(ctx: Ctx) -> Result<Reply> {
    Ok(Reply::ok(
        &ctx.app
            .get_setting(&Actor::Anonymous, &SettingKey::named(ctx.param("key"))?)
            .await?,
    ))
}

/// List every setting.
///
/// Ordered by key; at most 1000.
#[utoipa::path(get, path = "/settings", tag = "settings", operation_id = "listSettings",
    responses(
        (status = 200, description = "The settings", body = Envelope<Vec<Setting>>),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.list_settings(&actor).await?))
}

/// Create or replace a setting.
///
/// The key is `[a-z0-9_.-]{1,100}`; the value any JSON value but null. To remove a
/// setting, delete it.
#[utoipa::path(put, path = "/settings", tag = "settings", operation_id = "putSetting",
    request_body = SettingInput,
    responses(
        (status = 200, description = "The stored setting", body = Envelope<Setting>),
        (status = 400, description = "Bad key, missing or null value", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn put(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let setting = ctx.command::<SettingInput, NewSetting>().await?;
    Ok(Reply::ok(&ctx.app.put_setting(&actor, setting).await?))
}

/// Delete a setting.
#[utoipa::path(delete, path = "/settings/{key}", tag = "settings", operation_id = "deleteSetting",
    params(("key" = String, Path, description = "Setting key")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<DeletedSetting>),
        (status = 404, description = "No such setting", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let key = SettingKey::named(ctx.param("key"))?;
    Ok(Reply::ok(&ctx.app.delete_setting(&actor, &key).await?))
}
