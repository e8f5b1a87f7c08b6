//! Health and readiness: what `GET /ready` and `langcamp doctor` report.
//!
//! A load balancer routes by readiness, so the checks here are the ones whose failure
//! makes every request fail: the database answering in time, the schema being current,
//! the file store taking writes. Each check is a named entry in a list, so a new one (a
//! circuit breaker's state, another dependency) is one more `Check` pushed on the list.
//! The mail worker is reported beside the checks but never fails readiness: an SMTP
//! outage only delays mail (contract §12), and taking instances out of the load balancer
//! for it would turn a delay into an outage.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde::Serialize;

use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::platform::db::Db;
use crate::platform::file_store::FileStore;

/// A readiness check that takes longer than this has failed: a database that answers in
/// 5 s is, for a load balancer, a database that does not answer.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// One named check and its outcome.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Check {
    /// Stable name: `database`, `migrations`, `fileStore`.
    pub name: &'static str,
    pub ok: bool,
    /// What was found (`answered in 2 ms`), or what failed and why.
    pub detail: String,
}

impl Check {
    pub fn pass(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            ok: true,
            detail: detail.into(),
        }
    }

    pub fn fail(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            ok: false,
            detail: detail.into(),
        }
    }
}

/// The readiness report: ready when every check passed.
#[derive(Clone, Debug, Serialize)]
pub struct Readiness {
    pub checks: Vec<Check>,
    pub mail_worker: MailWorkerState,
}

impl Readiness {
    pub fn is_ready(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// The names of the failing checks.
    pub fn failing(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name)
            .collect()
    }
}

/// What the mail worker of this process is doing, for operators.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MailWorkerState {
    pub running: bool,
    /// Epoch milliseconds of the last delivered mail.
    pub last_delivery_at: Option<i64>,
    /// The last delivery error and when it happened (epoch milliseconds).
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
    /// Mails delivered and mails given up on by this process since it started.
    pub sent_total: u64,
    pub failed_total: u64,
}

/// Live counters the mail worker updates; cheap to touch from the delivery loop.
#[derive(Debug, Default)]
pub struct MailStatus {
    running: AtomicBool,
    sent: AtomicU64,
    failed: AtomicU64,
    last: Mutex<LastEvents>,
}

/// The last delivery (epoch ms) and the last error with its time.
#[derive(Clone, Debug, Default)]
struct LastEvents {
    delivery_at: Option<i64>,
    error: Option<(String, i64)>,
}

impl MailStatus {
    pub(crate) fn set_running(&self, running: bool) {
        self.running.store(running, Ordering::Relaxed);
    }

    pub(crate) fn delivered(&self, at: i64) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut last) = self.last.lock() {
            last.delivery_at = Some(at);
        }
    }

    /// A failed attempt; `for_good` when the mail was given up on.
    pub(crate) fn attempt_failed(&self, error: &str, at: i64, for_good: bool) {
        if for_good {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(mut last) = self.last.lock() {
            last.error = Some((error.to_owned(), at));
        }
    }

    pub fn snapshot(&self) -> MailWorkerState {
        let LastEvents {
            delivery_at: last_delivery_at,
            error: last_error,
        } = self
            .last
            .lock()
            .map(|last| last.clone())
            .unwrap_or_default();
        MailWorkerState {
            running: self.running.load(Ordering::Relaxed),
            last_delivery_at,
            last_error_at: last_error.as_ref().map(|(_, at)| *at),
            last_error: last_error.map(|(e, _)| e),
            sent_total: self.sent.load(Ordering::Relaxed),
            failed_total: self.failed.load(Ordering::Relaxed),
        }
    }
}

/// Mail waiting in the outbox: how many, and the age of the oldest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OutboxBacklog {
    pub queued: i64,
    /// Epoch milliseconds when the oldest pending mail was queued.
    pub oldest_created_at: Option<i64>,
}

/// Runs every readiness check, concurrently, each bounded by [`CHECK_TIMEOUT`].
pub async fn readiness(db: &Db, files: &dyn FileStore, mail: &MailStatus) -> Readiness {
    let (database, migrations, files) = tokio::join!(
        bounded("database", check_database(db)),
        bounded("migrations", check_migrations(db)),
        bounded("fileStore", file_store_check(files)),
    );
    Readiness {
        checks: vec![database, migrations, files],
        mail_worker: mail.snapshot(),
    }
}

async fn check_database(db: &Db) -> Check {
    // While the circuit is open every query fails at once; say since when.
    if let crate::platform::db::DatabaseState::Down { since } = db.state() {
        return Check::fail(
            "database",
            format!("unreachable since {since}; probed again every 250 ms"),
        );
    }
    let started = Instant::now();
    match db.ping().await {
        Ok(()) => Check::pass(
            "database",
            format!("answered in {} ms", started.elapsed().as_millis()),
        ),
        Err(e) => Check::fail("database", describe_error(&e)),
    }
}

async fn check_migrations(db: &Db) -> Check {
    match db.pending_migrations().await {
        Ok(pending) if pending.is_empty() => Check::pass("migrations", "current"),
        Ok(pending) => Check::fail(
            "migrations",
            format!(
                "{} pending (first: {}); run `langcamp migrate`",
                pending.len(),
                pending[0]
            ),
        ),
        Err(e) => Check::fail("migrations", describe_error(&e)),
    }
}

/// Pending mail in the outbox (for the queue-size and queue-age metrics).
pub async fn outbox_backlog(db: &Db) -> Result<OutboxBacklog> {
    let (queued, oldest) = crate::platform::mail::backlog(db).await?;
    Ok(OutboxBacklog {
        queued,
        oldest_created_at: oldest,
    })
}

/// The file-store check: a probe object written, read back and deleted.
pub async fn file_store_check(store: &dyn FileStore) -> Check {
    match probe_file_store(store).await {
        Ok(()) => Check::pass("fileStore", "write, read and delete of a probe succeeded"),
        Err(e) => Check::fail("fileStore", e),
    }
}

async fn probe_file_store(store: &dyn FileStore) -> std::result::Result<(), String> {
    const PROBE: &[u8] = b"langcamp readiness probe";
    let key = format!("probe/{}", new_id());
    let mut writer = store
        .create(&key)
        .await
        .map_err(|e| format!("cannot create a probe: {e}"))?;
    if let Err(e) = writer.write(Bytes::from_static(PROBE)).await {
        writer.abort().await;
        return Err(format!("cannot write a probe: {e}"));
    }
    writer
        .commit()
        .await
        .map_err(|e| format!("cannot commit a probe: {e}"))?;
    let read = async {
        let mut stream = store.open(&key, None).await?;
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            bytes.extend_from_slice(&chunk?);
        }
        Ok::<_, std::io::Error>(bytes)
    }
    .await;
    let deleted = store.delete(&key).await;
    match read {
        Ok(bytes) if bytes == PROBE => {}
        Ok(_) => return Err("the probe read back differs from what was written".into()),
        Err(e) => return Err(format!("cannot read the probe back: {e}")),
    }
    deleted.map_err(|e| format!("cannot delete the probe: {e}"))
}

async fn bounded(name: &'static str, check: impl Future<Output = Check>) -> Check {
    match tokio::time::timeout(CHECK_TIMEOUT, check).await {
        Ok(check) => check,
        Err(_) => Check::fail(
            name,
            format!("no answer within {} ms", CHECK_TIMEOUT.as_millis()),
        ),
    }
}

/// An error with its causes, one after the other: "service temporarily unavailable"
/// alone does not tell an operator that the connection was refused (nor lettre's own text
/// the I/O reason of an SMTP failure).
pub fn describe_error(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Where a database URL points, without its credentials: `PostgreSQL at db:5432` or
/// `SQLite file ./data/langcamp.db`.
pub fn database_location(url: &str) -> String {
    if let Some((host, port)) = postgres_host_port(url) {
        return format!("PostgreSQL at {host}:{port}");
    }
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    format!("SQLite file {}", path.split('?').next().unwrap_or_default())
}

/// The host and port of a `postgres://` URL (default `localhost:5432`).
fn postgres_host_port(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))?;
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = split_host_port(host_port);
    let host = if host.is_empty() { "localhost" } else { host };
    Some((host.to_owned(), port.unwrap_or("5432").to_owned()))
}

fn split_host_port(host_port: &str) -> (&str, Option<&str>) {
    // `[::1]:5432`: the brackets hold colons of their own.
    if let Some(rest) = host_port.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        return (host, after.strip_prefix(':'));
    }
    match host_port.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    }
}

/// The message for a database that cannot be opened: where, and why. The pool retries a
/// refused connection until its timeout and then reports only the timeout, so for
/// PostgreSQL one plain TCP connection finds the cause (refused, unreachable, no answer,
/// unknown host); when TCP connects, the cause lies past it and the error says it.
pub async fn connect_error(url: &str, error: &Error) -> String {
    let mut message = format!(
        "cannot connect to the database ({}): {}",
        database_location(url),
        describe_error(error)
    );
    if let Some(probe) = tcp_probe(url).await {
        message.push_str("; ");
        message.push_str(&probe);
    }
    message
}

/// For a PostgreSQL URL, what one plain TCP connection to its host and port says when it
/// fails ("Connection refused", no answer): sqlx retries until its timeout and then only
/// reports "pool timed out", which names no cause.
pub async fn tcp_probe(url: &str) -> Option<String> {
    let (host, port) = postgres_host_port(url)?;
    let target = format!("{host}:{port}");
    let probe = tokio::time::timeout(
        Duration::from_secs(3),
        tokio::net::TcpStream::connect(target.as_str()),
    )
    .await;
    match probe {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(format!("TCP connection to {target}: {e}")),
        Err(_) => Some(format!("TCP connection to {target}: no answer within 3 s")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_locations_name_host_and_port_but_never_credentials() {
        assert_eq!(
            database_location("postgres://ana:secret@db.internal:6543/langcamp?sslmode=require"),
            "PostgreSQL at db.internal:6543"
        );
        assert_eq!(
            database_location("postgres://db/langcamp"),
            "PostgreSQL at db:5432"
        );
        assert_eq!(
            database_location("postgresql://u@[::1]:5433/x"),
            "PostgreSQL at ::1:5433"
        );
        assert_eq!(
            database_location("sqlite://./data/langcamp.db?mode=rwc"),
            "SQLite file ./data/langcamp.db"
        );
    }

    #[test]
    fn error_descriptions_carry_the_cause() {
        let error = Error::Unavailable(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        )));
        assert_eq!(
            describe_error(&error),
            "service temporarily unavailable: Connection refused (os error 111)"
        );
    }

    #[test]
    fn the_mail_status_reports_deliveries_and_errors() {
        let status = MailStatus::default();
        status.set_running(true);
        status.delivered(10);
        status.attempt_failed("connection refused", 20, false);
        status.attempt_failed("gave up", 30, true);
        let state = status.snapshot();
        assert!(state.running);
        assert_eq!(state.last_delivery_at, Some(10));
        assert_eq!(state.last_error.as_deref(), Some("gave up"));
        assert_eq!(state.last_error_at, Some(30));
        assert_eq!((state.sent_total, state.failed_total), (1, 1));
    }
}
