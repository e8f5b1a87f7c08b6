//! The delivery worker: sends the queued deliveries, signed, each endpoint in a lane of
//! its own, so that a slow or dead endpoint never holds up another, mail, or requests.
//!
//! * A dispatcher looks for endpoints with deliveries due (and not resting) every second,
//!   or at once when a write queued some, and starts a lane for each that has none in
//!   this process; at most [`LANES`] run at once.
//! * A lane claims up to [`PER_ROUND`] due deliveries of its endpoint (a lease: another
//!   instance's lane skips them), sends them side by side, and records each outcome;
//!   while every one is answered 2xx it goes on, else the endpoint rests (its failures in a
//!   row set when it is tried again, from 2 s up to 5 minutes) and the lane ends. So a dead
//!   endpoint costs [`PER_ROUND`] attempts per rest, however many deliveries wait for it.
//! * Each delivery also backs off on its own (the queue's backoff) and is failed a day
//!   after it was queued.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::sign;
use super::store::{self, DELIVERIES};
use crate::Langcamp;
use crate::domain::error::Result;
use crate::domain::id::new_id;
use crate::platform::db::{Arg, Row as _, WriteConn};
use crate::platform::keyring::Purpose;
use crate::platform::outgoing::{Destinations, Outgoing, system_lookup};
use crate::platform::queue::{Attempt, Claimed, Retried, backoff_ms};

/// Lanes running at once in one process.
const LANES: usize = 16;
/// Deliveries one lane sends side by side, in one round.
const PER_ROUND: i64 = 16;
/// How often the dispatcher looks for due deliveries when no write wakes it.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest time between two looks, however often writes wake it: under a burst of
/// writes each look would otherwise be a query per write, while a lane already running
/// takes the new deliveries in its next round.
const LOOK_AT_MOST_EVERY: Duration = Duration::from_millis(50);
/// How often deliveries pending for a day are failed.
const STALE_EVERY_MS: i64 = 60 * 1000;

/// The endpoints with a lane in this process.
type Busy = Arc<Mutex<HashSet<String>>>;

/// Sends queued deliveries until `shutdown` resolves; then lets the lanes finish their
/// round (each call is bounded) before it returns.
pub(super) async fn run(app: Langcamp, shutdown: impl std::future::Future<Output = ()>) {
    let destinations = Destinations {
        allowed: app.config().webhook_allowed_networks.clone(),
    };
    let outgoing = match Outgoing::new(destinations, system_lookup()) {
        Ok(outgoing) => outgoing,
        Err(e) => {
            tracing::error!(error = %e, "the webhook client cannot be built; deliveries stay queued");
            return;
        }
    };
    let owner = new_id();
    let lanes = Arc::new(Semaphore::new(LANES));
    let busy: Busy = Arc::default();
    let mut running = tokio::task::JoinSet::new();
    let mut housekept: Option<i64> = None;
    tokio::pin!(shutdown);
    let mut looked: Option<tokio::time::Instant> = None;
    loop {
        if let Some(at) = looked {
            tokio::select! {
                () = &mut shutdown => break,
                () = tokio::time::sleep_until(at + LOOK_AT_MOST_EVERY) => {}
            }
        }
        looked = Some(tokio::time::Instant::now());
        let now = app.clock().now_ms();
        if housekept.is_none_or(|at| now.saturating_sub(at) >= STALE_EVERY_MS) {
            housekept = Some(now);
            if let Err(e) = housekeeping(&app, now).await {
                tracing::warn!(error = %e, "webhook housekeeping failed; will retry");
            }
        }
        match due_endpoints(&app, now).await {
            Ok(due) => {
                for endpoint in due {
                    if !busy
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(endpoint.clone())
                    {
                        continue;
                    }
                    let Ok(permit) = Arc::clone(&lanes).try_acquire_owned() else {
                        busy.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&endpoint);
                        break;
                    };
                    let lane = Lane {
                        app: app.clone(),
                        outgoing: outgoing.clone(),
                        owner: owner.clone(),
                        endpoint,
                        busy: Arc::clone(&busy),
                    };
                    running.spawn(async move {
                        lane.run().await;
                        drop(permit);
                    });
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot look for due webhook deliveries; will retry")
            }
        }
        while running.try_join_next().is_some() {}
        tokio::select! {
            () = &mut shutdown => break,
            () = app.webhook_wakeup().notified() => {}
            () = tokio::time::sleep(POLL_INTERVAL) => {}
        }
    }
    // Each call ends within its timeout; a lane ends after its round.
    while running.join_next().await.is_some() {}
}

/// Once a minute: deliveries of an endpoint deleted as they were queued are deleted,
/// deliveries still pending a day after they were queued are failed, the secrets replaced
/// a day ago forgotten, and the log's deliveries older than 30 days deleted.
async fn housekeeping(app: &Langcamp, now: i64) -> Result<()> {
    store::forget_orphans(app.db()).await?;
    let failed = DELIVERIES
        .give_up_stale(app.db(), now, "not delivered within 24 hours")
        .await?;
    app.webhook_tally()
        .failed
        .fetch_add(failed, Ordering::Relaxed);
    store::forget_replaced_secrets(app.db(), now).await?;
    store::forget_old_deliveries(app.db(), now).await?;
    Ok(())
}

/// The enabled endpoints, not resting, with a delivery due at `now` that no worker holds.
async fn due_endpoints(app: &Langcamp, now: i64) -> Result<Vec<String>> {
    let mut conn = app.db().reader().acquire().await?;
    let rows = conn
        .fetch_all(
            "SELECT e.id FROM webhook_endpoints e
             WHERE e.enabled = 1 AND (e.resting_until IS NULL OR e.resting_until <= $1)
               AND EXISTS (SELECT 1 FROM webhook_deliveries d
                           WHERE d.endpoint_id = e.id AND d.status = 'pending'
                             AND d.next_attempt_at <= $1
                             AND (d.lease_until IS NULL OR d.lease_until < $1))",
            &[Arg::Int(now)],
        )
        .await?;
    rows.iter().map(|row| row.text("id")).collect()
}

/// Where one endpoint's deliveries go, and the keys they are signed with.
struct Target {
    url: String,
    /// The current secret's key, and the previous one's while it is still in use.
    keys: Vec<Vec<u8>>,
    /// Consecutive failed rounds before this one.
    failures: i64,
}

/// The deliveries of one endpoint, sent by one task.
struct Lane {
    app: Langcamp,
    outgoing: Outgoing,
    owner: String,
    endpoint: String,
    busy: Busy,
}

impl Lane {
    async fn run(self) {
        loop {
            match self.round().await {
                Ok(true) => continue,
                Ok(false) => break,
                Err(e) => {
                    tracing::warn!(endpoint = %self.endpoint, error = %e, "a webhook delivery round failed; will retry");
                    break;
                }
            }
        }
        self.busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.endpoint);
    }

    /// One round: up to [`PER_ROUND`] deliveries sent and recorded; whether to go on.
    async fn round(&self) -> Result<bool> {
        let now = self.app.clock().now_ms();
        let Some(target) = self.target(now).await? else {
            return Ok(false);
        };
        let claimed = DELIVERIES
            .claim(
                self.app.db(),
                &self.owner,
                now,
                PER_ROUND,
                Some(("endpoint_id", &self.endpoint)),
            )
            .await?;
        if claimed.is_empty() {
            return Ok(false);
        }
        let attempts = claimed.iter().map(|delivery| self.send(&target, delivery));
        let answers = futures_util::future::join_all(attempts).await;
        let now = self.app.clock().now_ms();
        // The delivered ones recorded together (one write, not one each); the others
        // one by one, each with its own retry.
        let mut delivered = Vec::with_capacity(claimed.len());
        let mut all_delivered = true;
        for (delivery, answer) in claimed.iter().zip(answers) {
            match answer {
                Ok(status) if (200..300).contains(&status) => {
                    delivered.push((
                        delivery,
                        [
                            ("delivered_at", Arg::Int(now)),
                            ("last_status_code", Arg::Int(i64::from(status))),
                        ],
                    ));
                }
                answer => {
                    all_delivered = false;
                    self.record_failure(delivery, answer, now).await?;
                }
            }
        }
        let rows: Vec<_> = delivered
            .iter()
            .map(|(delivery, set)| (*delivery, &set[..]))
            .collect();
        DELIVERIES
            .done_all(self.app.db(), &self.owner, now, &rows)
            .await?;
        self.app
            .webhook_tally()
            .done
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        if all_delivered {
            if target.failures > 0 {
                self.rest(0, None).await?;
            }
            return Ok(true);
        }
        let failures = target.failures + 1;
        self.rest(failures, Some(now + backoff_ms(failures)))
            .await?;
        Ok(false)
    }

    /// The endpoint's URL and keys, unless it is gone, disabled or resting. A secret read
    /// under a previous server secret is sealed again under the current one (CONTRACT §22).
    async fn target(&self, now: i64) -> Result<Option<Target>> {
        let mut conn = self.app.db().reader().acquire().await?;
        let row = conn
            .fetch_first(
                "SELECT url, secret, previous_secret, previous_until, failures FROM webhook_endpoints
                 WHERE id = $1 AND enabled = 1 AND (resting_until IS NULL OR resting_until <= $2)",
                &[Arg::Text(&self.endpoint), Arg::Int(now)],
            )
            .await?;
        drop(conn);
        let Some(row) = row else {
            return Ok(None);
        };
        let keyring = self.app.keys();
        let mut keys = Vec::with_capacity(2);
        let sealed = row.bytes("secret")?;
        if let Some(opened) = keyring.open(Purpose::WebhookSecret, &self.endpoint, &sealed) {
            if !opened.current {
                self.reseal(&sealed, &opened.plain).await?;
            }
            keys.extend(key_of(&opened.plain));
        }
        let previous_until = row.opt_int("previous_until")?.unwrap_or(i64::MIN);
        if let Some(sealed) = row.opt_bytes("previous_secret")?
            && previous_until > now
            && let Some(opened) = keyring.open(Purpose::WebhookSecret, &self.endpoint, &sealed)
        {
            keys.extend(key_of(&opened.plain));
        }
        Ok(Some(Target {
            url: row.text("url")?,
            keys,
            failures: row.int("failures")?,
        }))
    }

    /// Seals the endpoint's secret, `read` under a previous server secret, again under the
    /// current one (unless it changed meanwhile). The one it replaced lives a day at most:
    /// `langcamp keys reseal` sees to it.
    async fn reseal(&self, read: &[u8], plain: &[u8]) -> Result<()> {
        let again = self
            .app
            .keys()
            .seal(Purpose::WebhookSecret, &self.endpoint, plain);
        let mut tx = self.app.db().begin().await?;
        tx.exec(
            "UPDATE webhook_endpoints SET secret = $1 WHERE id = $2 AND secret = $3",
            &[
                Arg::Bytes(&again),
                Arg::Text(&self.endpoint),
                Arg::Bytes(read),
            ],
        )
        .await?;
        tx.commit().await
    }

    /// Sends one delivery: its status, or why no answer came.
    async fn send(&self, target: &Target, delivery: &Claimed) -> std::result::Result<u16, String> {
        if target.keys.is_empty() {
            return Err(
                "the endpoint's secret opens under no configured server secret: make a new one (POST /admin/webhooks/{id}/secret)"
                    .into(),
            );
        }
        let body: Option<String> = delivery.row.opt_text("body").map_err(|e| e.to_string())?;
        let body = body.unwrap_or_default();
        let timestamp = self.app.clock().now_ms().div_euclid(1000);
        let headers = [
            ("webhook-id", delivery.id.clone()),
            ("webhook-timestamp", timestamp.to_string()),
            (
                "webhook-signature",
                sign::signatures(&target.keys, &delivery.id, timestamp, &body),
            ),
        ];
        self.outgoing.post_json(&target.url, &headers, body).await
    }

    /// Records an attempt that was not answered 2xx: tried again later, or failed.
    async fn record_failure(
        &self,
        delivery: &Claimed,
        answer: std::result::Result<u16, String>,
        now: i64,
    ) -> Result<()> {
        let attempt = Attempt {
            claimed: delivery,
            owner: &self.owner,
            now,
        };
        let tally = self.app.webhook_tally();
        let (error, status) = match answer {
            Ok(status) => (format!("answered {status}"), Some(i64::from(status))),
            Err(error) => (error, None),
        };
        let retried = DELIVERIES
            .retry(
                self.app.db(),
                attempt,
                (&error, false),
                &[("last_status_code", Arg::OptInt(status))],
            )
            .await?;
        match retried {
            Retried::At(_) => tally.retried.fetch_add(1, Ordering::Relaxed),
            Retried::Failed => {
                tracing::warn!(delivery = %delivery.id, endpoint = %self.endpoint, %error, "a webhook delivery failed for good");
                tally.failed.fetch_add(1, Ordering::Relaxed)
            }
        };
        Ok(())
    }

    /// The endpoint's failed rounds in a row, and until when it rests.
    async fn rest(&self, failures: i64, until: Option<i64>) -> Result<()> {
        let mut tx = self.app.db().begin().await?;
        tx.exec(
            "UPDATE webhook_endpoints SET failures = $1, resting_until = $2 WHERE id = $3",
            &[
                Arg::Int(failures),
                Arg::OptInt(until),
                Arg::Text(&self.endpoint),
            ],
        )
        .await?;
        tx.commit().await
    }
}

/// The signing key of a secret as it was sealed (its text).
fn key_of(plain: &[u8]) -> Option<Vec<u8>> {
    sign::key_of(std::str::from_utf8(plain).ok()?)
}
