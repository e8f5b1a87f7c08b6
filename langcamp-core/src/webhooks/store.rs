//! The SQL of webhooks: the endpoints and their staff writes, the deliveries queued in the
//! transaction of the change they report, the delivery log, and the worker's reads.

use sqlx::AnyConnection;

use super::event::{self, Event};
use super::input::{DeliveryQuery, EndpointChange, NewEndpoint};
use super::{Delivery, Endpoint, EndpointStanding};
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::platform::db::listing::{Conditions, Paged};
use crate::platform::db::{Arg, Backend, Db, Row, WriteConn, by_id, flag};
use crate::platform::keyring::{Purpose, SealedColumn};
use crate::platform::queue::Queue;

/// The deliveries as a durable queue ([`crate::platform::queue`]); a delivery that ended
/// keeps no body.
pub(super) const DELIVERIES: Queue = Queue {
    table: "webhook_deliveries",
    columns: "endpoint_id, event, body",
    done: "delivered",
    ended: "body = NULL",
};

/// The sealed secrets (CONTRACT §22): each endpoint's, and the one it replaced while that
/// one still signs (the worker clears it after its day).
pub(super) const SEALED_SECRETS: [SealedColumn; 2] = [
    SealedColumn {
        table: "webhook_endpoints",
        column: "secret",
        purpose: Purpose::WebhookSecret,
        rows: "1 = 1",
    },
    SealedColumn {
        table: "webhook_endpoints",
        column: "previous_secret",
        purpose: Purpose::WebhookSecret,
        rows: "1 = 1",
    },
];

/// Forgets the secrets replaced more than a day ago (they sign nothing any more).
pub(super) async fn forget_replaced_secrets(db: &Db, now: i64) -> Result<()> {
    let mut tx = db.begin().await?;
    tx.exec(
        "UPDATE webhook_endpoints SET previous_secret = NULL, previous_until = NULL
         WHERE previous_until <= $1",
        &[Arg::Int(now)],
    )
    .await?;
    tx.commit().await
}

/// How long the delivery log keeps a delivery that ended.
pub(super) const LOG_KEPT_MS: i64 = 30 * 24 * 3600 * 1000;

/// Deletes up to 5,000 deliveries that ended more than [`LOG_KEPT_MS`] ago (queued before
/// then); how many. A bounded batch, so that a long-idle worker catching up holds no lock
/// for long. Found endpoint by endpoint, through the log's index.
pub(super) async fn forget_old_deliveries(db: &Db, now: i64) -> Result<u64> {
    let mut tx = db.begin().await?;
    let deleted = tx
        .exec(
            "DELETE FROM webhook_deliveries WHERE id IN (
                 SELECT d.id FROM webhook_endpoints e
                 JOIN webhook_deliveries d ON d.endpoint_id = e.id AND d.created_at <= $1
                 WHERE d.status <> 'pending' LIMIT 5000)",
            &[Arg::Int(now - LOG_KEPT_MS)],
        )
        .await?;
    tx.commit().await?;
    Ok(deleted)
}

/// Deletes the deliveries whose endpoint is gone: queued by a write that read the endpoint
/// just before another deleted it (PostgreSQL has no foreign key to do it: migration
/// 0180). Never sent, they are still pending, so the pending rows' index finds them.
pub(super) async fn forget_orphans(db: &Db) -> Result<u64> {
    let mut tx = db.begin().await?;
    let deleted = tx
        .exec(
            "DELETE FROM webhook_deliveries
             WHERE status = 'pending'
               AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e
                               WHERE e.id = webhook_deliveries.endpoint_id)",
            &[],
        )
        .await?;
    tx.commit().await?;
    Ok(deleted)
}

/// How long a secret replaced stays in use beside the new one.
pub(super) const SECRET_OVERLAP_MS: i64 = 24 * 3600 * 1000;

macro_rules! endpoint_columns {
    () => {
        "id, url, events, description, enabled, created_at, updated_at "
    };
}

fn endpoint_from_row(row: &impl Row) -> Result<Endpoint> {
    Ok(Endpoint {
        id: row.text("id")?,
        url: row.text("url")?,
        events: event::from_stored(&row.text("events")?),
        description: row.opt_text("description")?,
        enabled: flag(row.int("enabled")?),
        created_at: Timestamp::from_millis(row.int("created_at")?),
        updated_at: Timestamp::from_millis(row.int("updated_at")?),
        secret: None,
    })
}

pub(super) fn not_found() -> Error {
    Error::not_found("webhook endpoint")
}

fn target(endpoint: &Endpoint) -> Target {
    Target::record("webhook", endpoint.id.clone(), endpoint.url.clone())
}

/// One endpoint, or 404.
pub(super) async fn require<C: WriteConn>(conn: &mut C, id: &str) -> Result<Endpoint> {
    let select = concat!(
        "SELECT ",
        endpoint_columns!(),
        "FROM webhook_endpoints WHERE id = $1"
    );
    by_id::find(conn, select, id)
        .await?
        .as_ref()
        .map(endpoint_from_row)
        .transpose()?
        .ok_or_else(not_found)
}

/// Every endpoint, oldest first (a school has a handful).
pub(super) async fn all(conn: &mut AnyConnection) -> Result<Vec<Endpoint>> {
    let rows = conn
        .fetch_all(
            concat!(
                "SELECT ",
                endpoint_columns!(),
                "FROM webhook_endpoints ORDER BY created_at, id"
            ),
            &[],
        )
        .await?;
    rows.iter().map(endpoint_from_row).collect()
}

/// Every endpoint with its deliveries counted by status (one endpoint's in its index).
pub(super) async fn standings(conn: &mut AnyConnection, now: i64) -> Result<Vec<EndpointStanding>> {
    let endpoints = all(conn).await?;
    let mut standings = Vec::with_capacity(endpoints.len());
    for endpoint in endpoints {
        let row = conn
            .fetch_first(
                "SELECT e.failures,
                        CASE WHEN e.resting_until > $2 THEN e.resting_until END AS resting_until,
                        (SELECT COUNT(*) FROM webhook_deliveries d
                         WHERE d.endpoint_id = e.id AND d.status = 'pending') AS pending,
                        (SELECT COUNT(*) FROM webhook_deliveries d
                         WHERE d.endpoint_id = e.id AND d.status = 'failed') AS failed,
                        (SELECT COUNT(*) FROM webhook_deliveries d
                         WHERE d.endpoint_id = e.id AND d.status = 'delivered') AS delivered,
                        (SELECT MAX(d.delivered_at) FROM webhook_deliveries d
                         WHERE d.endpoint_id = e.id AND d.status = 'delivered') AS last_delivered_at
                 FROM webhook_endpoints e WHERE e.id = $1",
                &[Arg::Text(&endpoint.id), Arg::Int(now)],
            )
            .await?
            .ok_or_else(not_found)?;
        standings.push(EndpointStanding {
            pending: row.int("pending")?,
            failed: row.int("failed")?,
            delivered: row.int("delivered")?,
            last_delivered_at: row
                .opt_int("last_delivered_at")?
                .map(Timestamp::from_millis),
            failing_rounds: row.int("failures")?,
            resting_until: row.opt_int("resting_until")?.map(Timestamp::from_millis),
            endpoint,
        });
    }
    Ok(standings)
}

/// The enabled endpoints and the events each hears (what a write queues deliveries for).
pub(super) async fn subscriptions(conn: &mut AnyConnection) -> Result<Vec<(String, Vec<Event>)>> {
    let rows = conn
        .fetch_all(
            "SELECT id, events FROM webhook_endpoints WHERE enabled = 1",
            &[],
        )
        .await?;
    rows.iter()
        .map(|row| Ok((row.text("id")?, event::from_stored(&row.text("events")?))))
        .collect()
}

/// Queues a delivery of `body` (the JSON sent) for each of `endpoints`, inside the write
/// that makes the change it reports.
pub(super) async fn queue<C: WriteConn>(
    conn: &mut C,
    endpoints: &[String],
    event: Event,
    body: &str,
    now: i64,
) -> Result<()> {
    for endpoint in endpoints {
        conn.exec(
            // From the endpoint's row: an endpoint deleted since the subscriptions were
            // read gets nothing (PostgreSQL has no foreign key here: migration 0180).
            "INSERT INTO webhook_deliveries (id, endpoint_id, event, body, status, attempts, next_attempt_at, created_at)
             SELECT $1, id, $3, $4, 'pending', 0, $5, $5 FROM webhook_endpoints WHERE id = $2",
            &[
                Arg::Text(&new_id()),
                Arg::Text(endpoint),
                Arg::Text(event.as_str()),
                Arg::Text(body),
                Arg::Int(now),
            ],
        )
        .await?;
    }
    Ok(())
}

/// Runs `insert` (a statement that inserts one row, or none when its own guard says no),
/// with `args`, and queues a delivery of `body` for each of `endpoints` if it inserted;
/// how many rows it inserted.
///
/// On PostgreSQL the two are one statement (a data-modifying `WITH`): each statement of a
/// write is a round trip and a share of the server's work, and a submission, four of them,
/// was a quarter slower with a fifth. SQLite runs them one after the other on the writer
/// thread, where a statement is a function call.
pub(super) async fn insert_then_queue<C: WriteConn>(
    conn: &mut C,
    insert: &'static str,
    args: &[Arg<'_>],
    queued: Queued<'_>,
) -> Result<u64> {
    match conn.backend() {
        Backend::Sqlite => {
            let inserted = conn.exec(insert, args).await?;
            if inserted > 0 {
                queue(
                    conn,
                    queued.endpoints,
                    queued.event,
                    queued.body,
                    queued.now,
                )
                .await?;
            }
            Ok(inserted)
        }
        Backend::Postgres => {
            let ids: Vec<String> = queued.endpoints.iter().map(|_| new_id()).collect();
            let ids = ids.join(",");
            let endpoints = queued.endpoints.join(",");
            let mut all = args.to_vec();
            all.extend([
                Arg::Text(&ids),
                Arg::Text(&endpoints),
                Arg::Text(queued.event.as_str()),
                Arg::Text(queued.body),
                Arg::Int(queued.now),
            ]);
            let row = conn
                .fetch_first(with_deliveries(insert, args.len()), &all)
                .await?
                .ok_or_else(|| Error::internal("an insert with its deliveries returned no row"))?;
            Ok(u64::try_from(row.int("inserted")?).unwrap_or(0))
        }
    }
}

/// What [`insert_then_queue`] queues.
pub(super) struct Queued<'a> {
    pub endpoints: &'a [String],
    pub event: Event,
    pub body: &'a str,
    pub now: i64,
}

/// `insert` (with `args` arguments before these) and the deliveries of what it inserted,
/// as one PostgreSQL statement: the deliveries' ids and endpoints come as two
/// comma-separated lists (ids and endpoint ids hold no comma), and only endpoints that
/// still exist get one (no foreign key: migration 0180). Made once per statement and kept.
fn with_deliveries(insert: &'static str, args: usize) -> &'static str {
    static MADE: std::sync::Mutex<Vec<(&'static str, &'static str)>> =
        std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, sql)) = made.iter().find(|(i, _)| std::ptr::eq(*i, insert)) {
        return sql;
    }
    let [ids, endpoints, event, body, now] = std::array::from_fn(|i| args + 1 + i);
    let sql = format!(
        "WITH inserted AS ({insert} RETURNING 1),
              queued AS (
                  INSERT INTO webhook_deliveries (id, endpoint_id, event, body, status, attempts, next_attempt_at, created_at)
                  SELECT d.id, e.id, ${event}, ${body}, 'pending', 0, ${now}, ${now}
                  FROM inserted,
                       unnest(string_to_array(${ids}, ','), string_to_array(${endpoints}, ','))
                           AS d (id, endpoint_id)
                       JOIN webhook_endpoints e ON e.id = d.endpoint_id)
         SELECT COUNT(*) AS inserted FROM inserted"
    );
    // A handful of statements, each made once for the life of the process.
    let sql: &'static str = Box::leak(sql.into_boxed_str());
    made.push((insert, sql));
    sql
}

/// `POST /admin/webhooks`: the endpoint with its sealed secret.
pub(super) struct Create {
    pub id: String,
    pub new: NewEndpoint,
    pub sealed_secret: Vec<u8>,
}

impl StaffWrite for Create {
    type Output = Endpoint;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Endpoint, Entries)> {
        let events = event::stored(&self.new.events);
        conn.exec(
            "INSERT INTO webhook_endpoints (id, url, events, description, enabled, secret, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 1, $5, $6, $6)",
            &[
                Arg::Text(&self.id),
                Arg::Text(self.new.url.as_str()),
                Arg::Text(&events),
                Arg::OptText(self.new.description.as_ref().map(|d| d.as_str())),
                Arg::Bytes(&self.sealed_secret),
                Arg::Int(by.now),
            ],
        )
        .await?;
        let endpoint = require(conn, &self.id).await?;
        let entry = Entry::new("webhook.created", target(&endpoint));
        Ok((endpoint, entry.into()))
    }
}

/// `PATCH /admin/webhooks/{id}`.
pub(super) struct Update {
    pub id: String,
    pub change: EndpointChange,
}

impl StaffWrite for Update {
    type Output = Endpoint;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Endpoint, Entries)> {
        let before = require(conn, &self.id).await?;
        let EndpointChange {
            url,
            events,
            description,
            enabled,
        } = self.change;
        let url = url.map_or(before.url.clone(), |u| u.to_string());
        let events = event::stored(events.as_deref().unwrap_or(&before.events));
        let description = match description {
            None => before.description.clone(),
            Some(d) => d.map(|d| d.as_str().to_owned()),
        };
        let enabled = enabled.unwrap_or(before.enabled);
        conn.exec(
            "UPDATE webhook_endpoints SET url = $1, events = $2, description = $3, enabled = $4,
                    updated_at = $5
             WHERE id = $6",
            &[
                Arg::Text(&url),
                Arg::Text(&events),
                Arg::OptText(description.as_deref()),
                Arg::Int(i64::from(enabled)),
                Arg::Int(by.now),
                Arg::Text(&self.id),
            ],
        )
        .await?;
        let after = require(conn, &self.id).await?;
        let entry = Entry::new("webhook.updated", target(&after)).with_changes(&before, &after);
        Ok((after, entry.into()))
    }
}

/// `DELETE /admin/webhooks/{id}`: the endpoint and its deliveries (nothing more is sent).
pub(super) struct Delete {
    pub id: String,
}

impl StaffWrite for Delete {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        let endpoint = require(conn, &self.id).await?;
        conn.exec(
            "DELETE FROM webhook_deliveries WHERE endpoint_id = $1",
            &[Arg::Text(&self.id)],
        )
        .await?;
        conn.exec(
            "DELETE FROM webhook_endpoints WHERE id = $1",
            &[Arg::Text(&self.id)],
        )
        .await?;
        Ok(((), Entry::new("webhook.deleted", target(&endpoint)).into()))
    }
}

/// `POST /admin/webhooks/{id}/secret`: the new secret signs from now on, and the one it
/// replaces beside it for [`SECRET_OVERLAP_MS`].
pub(super) struct Rotate {
    pub id: String,
    pub sealed_secret: Vec<u8>,
}

impl StaffWrite for Rotate {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<((), Entries)> {
        let endpoint = require(conn, &self.id).await?;
        conn.exec(
            // A sealed secret is bound to its purpose and its row, not its column: the one
            // replaced moves as it is.
            "UPDATE webhook_endpoints SET previous_secret = secret, secret = $1, previous_until = $2,
                    updated_at = $3
             WHERE id = $4",
            &[
                Arg::Bytes(&self.sealed_secret),
                Arg::Int(by.now + SECRET_OVERLAP_MS),
                Arg::Int(by.now),
                Arg::Text(&self.id),
            ],
        )
        .await?;
        Ok((
            (),
            Entry::new("webhook.secret_rotated", target(&endpoint)).into(),
        ))
    }
}

/// The delivery log of one endpoint, newest first.
const LOG: Paged = Paged {
    select: "SELECT id, event, status, attempts, last_status_code, last_error, created_at,
                    delivered_at, next_attempt_at FROM webhook_deliveries",
    joined: None,
    from: "webhook_deliveries",
    key: "id",
    order: "created_at DESC, id DESC",
};

fn delivery_from_row(row: &impl Row) -> Result<Delivery> {
    let status = row.text("status")?;
    Ok(Delivery {
        id: row.text("id")?,
        event: row.text("event")?,
        attempts: row.int("attempts")?,
        last_status_code: row.opt_int("last_status_code")?,
        last_error: row.opt_text("last_error")?,
        created_at: Timestamp::from_millis(row.int("created_at")?),
        delivered_at: row.opt_int("delivered_at")?.map(Timestamp::from_millis),
        next_attempt_at: (status == "pending")
            .then(|| row.int("next_attempt_at"))
            .transpose()?
            .map(Timestamp::from_millis),
        status,
    })
}

/// A page of one endpoint's deliveries (newest first) and how many match.
pub(super) async fn deliveries(
    conn: &mut AnyConnection,
    endpoint_id: &str,
    query: DeliveryQuery,
    page: PageRequest,
) -> Result<(Vec<Delivery>, i64)> {
    let mut conditions = Conditions::default();
    conditions
        .and_text("endpoint_id = ?", Some(endpoint_id))
        .and_text("status = ?", query.status.map(|s| s.as_str()));
    // One endpoint's deliveries, counted in its index.
    let total = conditions.count(conn, "webhook_deliveries").await?;
    let rows = LOG.page_by_keys(conn, &conditions, page, total).await?;
    let list = rows.iter().map(delivery_from_row).collect::<Result<_>>()?;
    Ok((list, total))
}
