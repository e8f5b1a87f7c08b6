//! Webhooks (CONTRACT §24): the endpoints that hear the school's events, their secrets,
//! and their delivery logs (superadmin).

use langcamp_core::domain::Deleted;
use langcamp_core::webhooks::{
    Delivery, DeliveryFilter, DeliveryQuery, Endpoint, EndpointChange, EndpointInput,
    EndpointUpdate, NewEndpoint, NewSecret,
};
use langcamp_core::{Page, Result};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::{Ctx, PageParams};
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_create>(RateRule::Default, Access::Superadmin, create);
    r.add::<__path_list>(RateRule::Default, Access::Superadmin, list);
    r.add::<__path_update>(RateRule::Default, Access::Superadmin, update);
    r.add::<__path_delete>(RateRule::Default, Access::Superadmin, delete);
    r.add::<__path_rotate_secret>(RateRule::Default, Access::Superadmin, rotate_secret);
    r.add::<__path_deliveries>(RateRule::Default, Access::Superadmin, deliveries);
}

/// Add an endpoint (step-up).
///
/// It hears the events named from now on. The answer carries its signing `secret`, shown
/// this once (the answer is not stored by caches: `Cache-Control: no-store`). The URL is
/// `https://`, or `http://` only into `WEBHOOK_ALLOWED_NETWORKS`; a host that resolves to
/// a loopback, private, link-local or unique-local address is refused unless it lies
/// inside them.
#[utoipa::path(post, operation_id = "createWebhook", path = "/admin/webhooks", tag = "webhooks",
    request_body = EndpointInput,
    responses(
        (status = 201, description = "The endpoint and its secret", body = Envelope<Endpoint>),
        (status = 400, description = "A bad or refused `url`, no or an unknown event, a long description", body = ErrorEnvelope),
        (status = 403, description = "Not a superadmin; STEP_UP_REQUIRED without a recent second-factor check", body = ErrorEnvelope),
    ))]
pub async fn create(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let new = ctx.command::<EndpointInput, NewEndpoint>().await?;
    let created = ctx.app.create_webhook(&actor, new).await?;
    Ok(Reply::created(&created).secret())
}

/// List the endpoints, oldest first (without their secrets).
#[utoipa::path(get, operation_id = "listWebhooks", path = "/admin/webhooks", tag = "webhooks",
    responses(
        (status = 200, description = "Every endpoint", body = Envelope<Vec<Endpoint>>),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.list_webhooks(&actor).await?))
}

/// Change an endpoint (step-up).
///
/// Absent fields stay as they are; `description: null` clears it. `enabled: false` stops
/// queueing its events and pauses the deliveries waiting (they fail 24 hours after they
/// were queued); `true` resumes them.
#[utoipa::path(patch, operation_id = "updateWebhook", path = "/admin/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path, description = "Endpoint id")), request_body = EndpointUpdate,
    responses(
        (status = 200, description = "The endpoint", body = Envelope<Endpoint>),
        (status = 400, description = "A bad or refused `url`, an unknown event, a null where a value is needed", body = ErrorEnvelope),
        (status = 403, description = "Not a superadmin; STEP_UP_REQUIRED without a recent second-factor check", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint", body = ErrorEnvelope),
    ))]
pub async fn update(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let change = ctx.command::<EndpointUpdate, EndpointChange>().await?;
    Ok(Reply::ok(
        &ctx.app
            .update_webhook(&actor, &ctx.id("id"), change)
            .await?,
    ))
}

/// Delete an endpoint and its delivery log; nothing more is sent to it.
#[utoipa::path(delete, operation_id = "deleteWebhook", path = "/admin/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path, description = "Endpoint id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 404, description = "No such endpoint", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.delete_webhook(&actor, &ctx.id("id")).await?,
    ))
}

/// Give an endpoint a new secret (step-up).
///
/// Shown this once (`Cache-Control: no-store`). For 24 hours every delivery carries two
/// signatures, under the new secret and the one it replaces, so the receiver can change
/// its copy without missing one.
#[utoipa::path(post, operation_id = "rotateWebhookSecret", path = "/admin/webhooks/{id}/secret", tag = "webhooks",
    params(("id" = String, Path, description = "Endpoint id")),
    responses(
        (status = 200, description = "The new secret", body = Envelope<NewSecret>),
        (status = 403, description = "Not a superadmin; STEP_UP_REQUIRED without a recent second-factor check", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint", body = ErrorEnvelope),
    ))]
pub async fn rotate_secret(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let secret = ctx.app.rotate_webhook_secret(&actor, &ctx.id("id")).await?;
    Ok(Reply::ok(&secret).secret())
}

/// An endpoint's delivery log, newest first.
///
/// Each delivery is one event for this endpoint; its `id` is the `webhook-id` the
/// receiver saw. Kept 30 days after it was queued.
#[utoipa::path(get, operation_id = "listWebhookDeliveries", path = "/admin/webhooks/{id}/deliveries", tag = "webhooks",
    params(("id" = String, Path, description = "Endpoint id"), DeliveryFilter, PageParams),
    responses(
        (status = 200, description = "A page of deliveries", body = Envelope<Page<Delivery>>),
        (status = 400, description = "An unknown status, or bad pagination", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint", body = ErrorEnvelope),
    ))]
pub async fn deliveries(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let query = DeliveryQuery::try_from(&DeliveryFilter {
        status: ctx.query("status").map(str::to_owned),
    })?;
    Ok(Reply::ok(
        &ctx.app
            .webhook_deliveries(&actor, &ctx.id("id"), query, page)
            .await?,
    ))
}
