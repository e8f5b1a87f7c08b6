//! What a write changed, told to this process's caches and, on PostgreSQL, to every other
//! instance sharing the database.
//!
//! Why: the live sign-ins (`sessions`) and the public read caches (`cache`) live in each
//! process's memory. A logout, a role change or a course edit made through one instance
//! must be honoured by all of them at once, not after a time to live.
//!
//! * A write that changes cached data queues a `NOTIFY` on [`CHANNEL`] inside its
//!   transaction ([`announce`]; so it is delivered exactly when, and only if, the write
//!   commits), and the handle drops the entries of this process once the write has ended,
//!   whatever its outcome (a failed commit may still have been applied).
//! * Every handle on PostgreSQL runs a listener task ([`listen`]: `LISTEN` through sqlx's
//!   `PgListener`, its own connection) that applies other instances' changes as they
//!   arrive, a few milliseconds after their commit. While it is not listening (start-up,
//!   a lost connection) this process cannot hear other writers, so its sign-in cache is
//!   off; once `LISTEN` is in place again everything held is dropped and the cache is back
//!   on. The public caches keep their 5 s time to live as the bound for that gap.
//! * SQLite has one database file and its writers may be other processes (the `langcamp`
//!   command): they tell each other through the sign-in cache's signal file
//!   (`auth::session::live`).

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::oneshot;

use crate::domain::error::Result;
use crate::platform::db::{Arg, Backend, WriteConn};

/// The PostgreSQL notification channel of cache changes.
pub const CHANNEL: &str = "langcamp_changes";

/// How long the listener waits before connecting again after a failure.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// One change to cached data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A sign-in ended.
    Session(String),
    /// A user's row changed or went, or some of their sign-ins ended.
    User(String),
    /// Courses changed (the public course lists).
    Courses,
    /// Placement tests changed (the public test lists).
    Tests,
    /// Settings changed (they name the school and its mail locale too).
    Settings,
    /// Mail templates changed.
    MailTemplates,
    /// Webhook endpoints changed (which of them hear which events).
    Webhooks,
    /// Anything (a kind this instance does not know, from a newer one).
    Everything,
}

impl Change {
    fn payload(&self, instance: &str) -> String {
        match self {
            Change::Session(id) => format!("{instance}|s|{id}"),
            Change::User(id) => format!("{instance}|u|{id}"),
            Change::Courses => format!("{instance}|c|"),
            Change::Tests => format!("{instance}|t|"),
            Change::Settings => format!("{instance}|g|"),
            Change::MailTemplates => format!("{instance}|m|"),
            Change::Webhooks => format!("{instance}|w|"),
            Change::Everything => format!("{instance}|*|"),
        }
    }

    /// The change in a payload, unless it came from `instance` itself (already applied).
    fn parse(payload: &str, instance: &str) -> Option<Change> {
        let mut parts = payload.splitn(3, '|');
        let from = parts.next()?;
        let kind = parts.next()?;
        let id = parts.next()?.to_owned();
        if from == instance {
            return None;
        }
        Some(match kind {
            "s" => Change::Session(id),
            "u" => Change::User(id),
            "c" => Change::Courses,
            "t" => Change::Tests,
            "g" => Change::Settings,
            "m" => Change::MailTemplates,
            "w" => Change::Webhooks,
            // A newer instance's kind: dropping everything is always safe.
            _ => Change::Everything,
        })
    }
}

/// Tells the other instances about `change` from inside the transaction that makes it:
/// on PostgreSQL a notification on [`CHANNEL`] from `instance`, delivered when, and only
/// if, the transaction commits. SQLite's other writers hear through the signal file instead.
pub async fn announce<C: WriteConn>(conn: &mut C, instance: &str, change: &Change) -> Result<()> {
    if conn.backend() == Backend::Postgres {
        let payload = change.payload(instance);
        // `::text`: sqlx's Any driver reads no `void` column.
        conn.exec(
            "SELECT pg_notify($1, $2)::text",
            &[Arg::Text(CHANNEL), Arg::Text(&payload)],
        )
        .await?;
    }
    Ok(())
}

/// What the listener hears.
#[derive(Debug)]
pub enum Heard {
    /// Listening again: every change made meanwhile is unknown.
    Connected,
    /// The connection is lost: changes go unheard until [`Heard::Connected`].
    Lost,
    /// Another instance's change.
    Change(Change),
}

/// Listens on [`CHANNEL`] of the database at `url` until `stop` fires or `hear` answers
/// `false` (its handle is gone), telling `hear` what it hears; the changes of `instance`
/// itself are skipped (already applied).
pub async fn listen(
    url: String,
    instance: String,
    mut stop: oneshot::Receiver<()>,
    hear: impl Fn(Heard) -> bool,
) {
    loop {
        let connected = tokio::select! {
            _ = &mut stop => return,
            connected = connect(&url) => connected,
        };
        let mut listener = match connected {
            Ok(listener) => listener,
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for other instances' changes; sign-ins are checked in the database until then");
                tokio::select! {
                    _ = &mut stop => return,
                    () = tokio::time::sleep(RECONNECT_AFTER) => continue,
                }
            }
        };
        // Whatever changed while nobody listened is forgotten before serving again.
        if !hear(Heard::Connected) {
            return;
        }
        loop {
            let received = tokio::select! {
                _ = &mut stop => return,
                received = listener.try_recv() => received,
            };
            let heard = match received {
                Ok(Some(notification)) => match Change::parse(notification.payload(), &instance) {
                    Some(change) => Heard::Change(change),
                    None => continue,
                },
                Ok(None) | Err(_) => {
                    tracing::warn!(
                        "lost the connection that hears other instances' changes; reconnecting"
                    );
                    if !hear(Heard::Lost) {
                        return;
                    }
                    break;
                }
            };
            if !hear(heard) {
                return;
            }
        }
    }
}

async fn connect(url: &str) -> std::result::Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    // Report a lost connection at once (`Ok(None)`) instead of reconnecting inside
    // `try_recv`, which can wait for the pool's acquire timeout while the database is
    // away; the sign-in cache must be off for all of that time.
    listener.eager_reconnect(false);
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_own_changes_are_skipped() {
        for change in [
            Change::Session("0190-a".into()),
            Change::User("0190-b".into()),
            Change::Courses,
            Change::Tests,
            Change::Settings,
            Change::Everything,
        ] {
            let payload = change.payload("me");
            assert_eq!(Change::parse(&payload, "other"), Some(change.clone()));
            assert_eq!(Change::parse(&payload, "me"), None);
        }
        assert_eq!(
            Change::parse("x|z|", "me"),
            Some(Change::Everything),
            "an unknown kind drops everything"
        );
        assert_eq!(Change::parse("garbage", "me"), None);
    }
}
