//! Webhooks (CONTRACT §24): the school's own systems (its web site, CRM, chat, payment desk)
//! hear of what happens here as it happens, by signed HTTP callbacks in the Standard
//! Webhooks format, delivered at least once from a durable queue.
//!
//! * A superadmin manages the endpoints; creating or changing one, or its secret, needs
//!   step-up (it is a way for data to leave). The secret is shown once and stored sealed
//!   under the server's keyring (§22).
//! * A write that makes an event queues its deliveries in its own transaction
//!   ([`Announcement`]): a change that rolls back sends nothing, one that commits is never
//!   lost. Which endpoints hear what is cached and forgotten on every change of them, so
//!   a write with no endpoint hearing its event costs nothing more.
//! * [`Langcamp::run_webhook_worker`] sends them ([`deliver`]): signed ([`sign`]), through
//!   the client that checks where it goes ([`crate::platform::outgoing`]), retried with
//!   backoff for a day, one endpoint never holding up another.

mod deliver;
mod event;
mod input;
mod sign;
mod store;

use std::sync::Arc;

use serde::Serialize;
use utoipa::ToSchema;

pub use self::event::Event;
pub use self::input::{
    DeliveryFilter, DeliveryQuery, DeliveryStatus, Description, EndpointChange, EndpointInput,
    EndpointUpdate, NewEndpoint, URL_MAX,
};
use crate::Langcamp;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::{Deleted, Id};
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::platform::changes::Change;
use crate::platform::db::{Arg, WriteConn};
use crate::platform::keyring::{self, KeyCounts, Purpose};
use crate::platform::outgoing::Destinations;
use crate::platform::queue::Tally;

/// An endpoint as staff see it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub id: String,
    #[schema(example = "https://crm.school.example/hooks/langcamp")]
    pub url: String,
    /// The events it hears.
    pub events: Vec<Event>,
    pub description: Option<String>,
    /// Whether new events are queued for it and waiting ones sent.
    pub enabled: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Only in the answer that creates the endpoint, the one time it is shown: `whsec_` and
    /// the base64 of 32 random bytes, the key of the deliveries' signatures.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    pub secret: Option<String>,
}

/// An endpoint's new secret; for a day deliveries are signed with the one it replaces too.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct NewSecret {
    #[schema(example = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD")]
    pub secret: String,
}

/// One delivery of one event to one endpoint, as its log shows it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The `webhook-id` the receiver sees, the same on every attempt.
    pub id: String,
    #[schema(example = "result.created")]
    pub event: String,
    /// `pending` (waiting for an attempt), `delivered` (answered 2xx) or `failed` (not
    /// delivered within 24 hours).
    #[schema(example = "delivered")]
    pub status: String,
    pub attempts: i64,
    /// The last attempt's HTTP status, when one came.
    pub last_status_code: Option<i64>,
    /// Why the last attempt failed (the status, a timeout, a refused address).
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub delivered_at: Option<Timestamp>,
    /// When the next attempt is due (pending deliveries).
    pub next_attempt_at: Option<Timestamp>,
}

/// An endpoint with how its deliveries stand (`langcamp webhooks list`, the console).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointStanding {
    #[serde(flatten)]
    pub endpoint: Endpoint,
    /// Deliveries waiting for an attempt.
    pub pending: i64,
    /// Deliveries failed for good (in the log's 30 days).
    pub failed: i64,
    /// Deliveries answered 2xx (in the log's 30 days).
    pub delivered: i64,
    /// When the latest delivery was answered 2xx.
    pub last_delivered_at: Option<Timestamp>,
    /// Rounds failed in a row (0 while the endpoint answers).
    pub failing_rounds: i64,
    /// No attempt before this time, after failed ones.
    pub resting_until: Option<Timestamp>,
}

/// The deliveries a write queues for its event: the endpoints that hear it, as the cache
/// knew them when the write was prepared. An endpoint created on another instance is
/// heard of within its change notice (milliseconds).
#[derive(Clone, Debug)]
pub(crate) struct Announcement {
    event: Event,
    endpoints: Vec<String>,
}

/// What a delivery's body is: `{"type", "timestamp", "data"}`.
#[derive(Serialize)]
struct Body<'a, T: Serialize> {
    r#type: &'static str,
    timestamp: Timestamp,
    data: &'a T,
}

impl Announcement {
    /// Queues a delivery of `data` to each endpoint, inside the caller's write.
    pub(crate) async fn queue<C: WriteConn, T: Serialize>(
        &self,
        conn: &mut C,
        now: i64,
        data: &T,
    ) -> Result<()> {
        let body = self.body(now, data)?;
        store::queue(conn, &self.endpoints, self.event, &body, now).await
    }

    /// The deliveries of `data` at `now`, their body written now, before the write that
    /// queues them ([`Prepared::queue`]): on SQLite the single writer's time is what a
    /// write's rate is made of, so the JSON is not written there.
    pub(crate) fn prepare<T: Serialize>(self, now: i64, data: &T) -> Result<Prepared> {
        let body = self.body(now, data)?;
        Ok(Prepared {
            announcement: self,
            body,
            now,
        })
    }

    fn body<T: Serialize>(&self, now: i64, data: &T) -> Result<String> {
        let body = Body {
            r#type: self.event.as_str(),
            timestamp: Timestamp::from_millis(now),
            data,
        };
        serde_json::to_string(&body)
            .map_err(|e| Error::internal(format!("a webhook body cannot be written: {e}")))
    }
}

/// An event's deliveries with their body written ([`Announcement::prepare`]).
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    announcement: Announcement,
    body: String,
    now: i64,
}

impl Prepared {
    /// Runs `insert` (one row, or none when its own guard says no) with `args`, inside
    /// the caller's write, and queues these deliveries with it if it inserted; how many
    /// rows it inserted. On PostgreSQL one statement, not two
    /// ([`store::insert_then_queue`]).
    pub(crate) async fn insert_then_queue<C: WriteConn>(
        &self,
        conn: &mut C,
        insert: &'static str,
        args: &[Arg<'_>],
    ) -> Result<u64> {
        let Announcement { event, endpoints } = &self.announcement;
        let queued = store::Queued {
            endpoints,
            event: *event,
            body: &self.body,
            now: self.now,
        };
        store::insert_then_queue(conn, insert, args, queued).await
    }
}

/// The enabled endpoints and the events each hears (what [`Caches::webhooks`] holds).
///
/// [`Caches::webhooks`]: crate::Caches::webhooks
pub type Subscriptions = Arc<Vec<(String, Vec<Event>)>>;

fn not_found() -> Error {
    store::not_found()
}

impl Langcamp {
    /// `POST /admin/webhooks`: a new endpoint and its secret, shown this once (superadmin,
    /// step-up). Its URL must lead where calls may go now (400 naming `url`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_webhook(&self, actor: &Actor, new: NewEndpoint) -> Result<Endpoint> {
        actor.require(Role::Superadmin)?;
        self.require_step_up(actor)?;
        self.check_destination(&new.url).await?;
        let id = Id::<Endpoint>::new().as_str().to_owned();
        let secret = sign::new_secret();
        let create = store::Create {
            sealed_secret: self
                .keys()
                .seal(Purpose::WebhookSecret, &id, secret.as_bytes()),
            id,
            new,
        };
        let endpoint = self
            .staff_write(actor, create, Some(Change::Webhooks))
            .await?;
        Ok(Endpoint {
            secret: Some(secret),
            ..endpoint
        })
    }

    /// `GET /admin/webhooks`: every endpoint, oldest first (superadmin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_webhooks(&self, actor: &Actor) -> Result<Vec<Endpoint>> {
        actor.require(Role::Superadmin)?;
        let mut conn = self.db().reader().acquire().await?;
        store::all(&mut conn).await
    }

    /// Every endpoint with how its deliveries stand, oldest first (superadmin, operator).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn webhook_standings(&self, actor: &Actor) -> Result<Vec<EndpointStanding>> {
        actor.require(Role::Superadmin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        store::standings(&mut snapshot, self.clock().now_ms()).await
    }

    /// `PATCH /admin/webhooks/{id}` (superadmin, step-up).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update_webhook(
        &self,
        actor: &Actor,
        id: &Id<Endpoint>,
        change: EndpointChange,
    ) -> Result<Endpoint> {
        actor.require(Role::Superadmin)?;
        self.require_step_up(actor)?;
        if !id.is_well_formed() {
            return Err(not_found());
        }
        if let Some(url) = &change.url {
            self.check_destination(url).await?;
        }
        let update = store::Update {
            id: id.as_str().to_owned(),
            change,
        };
        self.staff_write(actor, update, Some(Change::Webhooks))
            .await
    }

    /// `DELETE /admin/webhooks/{id}`: the endpoint and its deliveries; nothing more is
    /// sent to it (superadmin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_webhook(&self, actor: &Actor, id: &Id<Endpoint>) -> Result<Deleted> {
        actor.require(Role::Superadmin)?;
        if !id.is_well_formed() {
            return Err(not_found());
        }
        let delete = store::Delete {
            id: id.as_str().to_owned(),
        };
        self.staff_write(actor, delete, Some(Change::Webhooks))
            .await?;
        Ok(Deleted::from(id))
    }

    /// `POST /admin/webhooks/{id}/secret`: a new secret, shown this once; for a day the
    /// deliveries carry a signature under the one it replaces too (superadmin, step-up).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn rotate_webhook_secret(
        &self,
        actor: &Actor,
        id: &Id<Endpoint>,
    ) -> Result<NewSecret> {
        actor.require(Role::Superadmin)?;
        self.require_step_up(actor)?;
        if !id.is_well_formed() {
            return Err(not_found());
        }
        let secret = sign::new_secret();
        let rotate = store::Rotate {
            sealed_secret: self
                .keys()
                .seal(Purpose::WebhookSecret, id.as_str(), secret.as_bytes()),
            id: id.as_str().to_owned(),
        };
        self.staff_write(actor, rotate, None).await?;
        Ok(NewSecret { secret })
    }

    /// `GET /admin/webhooks/{id}/deliveries`: the endpoint's delivery log, newest first
    /// (superadmin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn webhook_deliveries(
        &self,
        actor: &Actor,
        id: &Id<Endpoint>,
        query: DeliveryQuery,
        page: PageRequest,
    ) -> Result<Page<Delivery>> {
        actor.require(Role::Superadmin)?;
        if !id.is_well_formed() {
            return Err(not_found());
        }
        let mut snapshot = self.db().read_snapshot().await?;
        store::require(&mut *snapshot, id.as_str()).await?;
        let (list, total) = store::deliveries(&mut snapshot, id.as_str(), query, page).await?;
        Ok(Page::new(list, page, total))
    }

    /// Sends queued deliveries until `shutdown` resolves (run it beside the server, as
    /// the mail worker); then lets the calls under way end (each within its timeout).
    pub async fn run_webhook_worker(&self, shutdown: impl std::future::Future<Output = ()>) {
        deliver::run(self.clone(), shutdown).await;
    }

    /// Deliveries waiting to be sent, and when the oldest was queued, epoch ms (metrics).
    pub async fn webhook_backlog(&self) -> Result<(i64, Option<i64>)> {
        store::DELIVERIES.backlog(self.db()).await
    }

    /// What this process's webhook worker did since it started (metrics).
    pub fn webhook_tally(&self) -> &Tally {
        &self.inner.webhook_tally
    }

    /// The endpoints' secrets (and the ones they replaced, for their day) under a
    /// previous server secret written again under the current one (with `write`; else
    /// only counted), for `langcamp keys reseal` (CONTRACT §22).
    pub(crate) async fn reseal_webhook_secrets(&self, write: bool) -> Result<KeyCounts> {
        let mut counts = KeyCounts::default();
        for column in store::SEALED_SECRETS {
            counts += keyring::reseal(self.db(), self.keys(), column, write).await?;
        }
        Ok(counts)
    }

    /// The deliveries a write of `event` queues, or `None` when no enabled endpoint hears
    /// it (the common case, which costs the write nothing).
    pub(crate) async fn announcement(&self, event: Event) -> Result<Option<Announcement>> {
        let now = self.clock().now_ms();
        let subscriptions: Subscriptions = self
            .caches()
            .webhooks
            .get_or_load((), now, || async {
                let mut conn = self.db().reader().acquire().await?;
                Ok(Arc::new(store::subscriptions(&mut conn).await?))
            })
            .await?;
        let endpoints: Vec<String> = subscriptions
            .iter()
            .filter(|(_, events)| events.contains(&event))
            .map(|(id, _)| id.clone())
            .collect();
        Ok((!endpoints.is_empty()).then_some(Announcement { event, endpoints }))
    }

    /// Tells the webhook worker that a write committed deliveries, if it `announced` any
    /// (else the worker finds them within its poll interval).
    pub(crate) fn wake_webhooks(&self, announced: bool) {
        if announced {
            self.inner.webhook_wakeup.notify_one();
        }
    }

    /// The worker's wake-up call.
    fn webhook_wakeup(&self) -> &tokio::sync::Notify {
        &self.inner.webhook_wakeup
    }

    /// 400 naming `url` when `url` leads where calls may not go (CONTRACT §24).
    async fn check_destination(&self, url: &url::Url) -> Result<()> {
        let destinations = Destinations {
            allowed: self.config().webhook_allowed_networks.clone(),
        };
        match destinations.refusal(url).await {
            Some(why) => Err(Error::invalid(why)),
            None => Ok(()),
        }
    }
}
