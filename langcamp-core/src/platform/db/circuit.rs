//! The database circuit (PostgreSQL): while the server is known to be unreachable, every
//! request answers 503 at once instead of holding its caller for the pool's acquire
//! timeout, and a probe closes the circuit again as soon as the server answers.
//!
//! sqlx retries a refused connection until the acquire timeout, and every query of core
//! acquires from the pool itself (`db.reader()` is a plain pool), so the circuit acts
//! where all of them meet: the pool's connect options. Opening the circuit points the
//! pool at a Unix socket that cannot exist; connecting there fails at once with "not
//! found", which sqlx does not retry and core classifies as `Unavailable`. Closing it
//! puts the real options back. Live connections in the pool are untouched; dead ones
//! fail their ping on acquire and are dropped.
//!
//! The probe runs on its own task, once a second while the circuit is closed (an idle
//! pooled connection is pinged, or, when the pool holds none, a direct connection is
//! tried) and four times a second while it is open (direct connections only, so the
//! pool's options stay pointed away). When every connection is busy it does nothing:
//! queries are flowing.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use sqlx::any::AnyConnectOptions;
use sqlx::{AnyConnection, AnyPool, ConnectOptions, Connection};
use tokio::task::JoinHandle;
use utoipa::ToSchema;

use crate::domain::time::Timestamp;

/// How long a probe may take before the database counts as down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// Probe period while the database answers.
const CLOSED_PERIOD: Duration = Duration::from_secs(1);
/// Probe period while it does not: recovery is noticed within this.
const OPEN_PERIOD: Duration = Duration::from_millis(250);
/// A socket path that never exists: connecting fails at once and is not retried.
const UNREACHABLE_URL: &str =
    "postgres://langcamp@localhost/langcamp?host=/nonexistent/langcamp-database-circuit-open";

/// Whether the database is reachable, as the circuit knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum DatabaseState {
    /// Queries go to the database.
    Up,
    /// The last probe failed: queries answer 503 at once until a probe succeeds.
    Down { since: Timestamp },
}

/// The shared state of one circuit. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Circuit {
    state: Arc<Mutex<Option<Timestamp>>>,
    probe: Arc<ProbeTask>,
}

impl fmt::Debug for Circuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Circuit")
            .field("state", &self.state())
            .finish()
    }
}

/// Stops the probe when the last handle of the database goes away.
#[derive(Default)]
struct ProbeTask(Mutex<Option<JoinHandle<()>>>);

impl Drop for ProbeTask {
    fn drop(&mut self) {
        self.stop();
    }
}

impl ProbeTask {
    fn stop(&self) {
        if let Some(task) = self.0.lock().unwrap_or_else(PoisonError::into_inner).take() {
            task.abort();
        }
    }
}

impl Circuit {
    pub(crate) fn state(&self) -> DatabaseState {
        match *self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            None => DatabaseState::Up,
            Some(since) => DatabaseState::Down { since },
        }
    }

    /// Starts probing `pool` (must be called inside a Tokio runtime).
    pub(crate) fn watch(&self, pool: AnyPool) {
        let real = pool.connect_options();
        let Ok(unreachable) = UNREACHABLE_URL.parse::<AnyConnectOptions>() else {
            tracing::error!("the database circuit's unreachable address does not parse");
            return;
        };
        let state = Arc::clone(&self.state);
        let task = tokio::spawn(async move {
            loop {
                let open = state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_some();
                tokio::time::sleep(if open { OPEN_PERIOD } else { CLOSED_PERIOD }).await;
                if pool.is_closed() {
                    return;
                }
                if open {
                    if probe_direct(&real).await {
                        pool.set_connect_options((*real).clone());
                        *state.lock().unwrap_or_else(PoisonError::into_inner) = None;
                        tracing::warn!("database reachable again: circuit closed");
                    }
                } else if let Some(healthy) = probe_pool(&pool, &real).await
                    && !healthy
                {
                    pool.set_connect_options(unreachable.clone());
                    *state.lock().unwrap_or_else(PoisonError::into_inner) =
                        Some(Timestamp(chrono::Utc::now()));
                    tracing::error!(
                        "database unreachable: circuit open, requests answer 503 at once until a probe reaches it"
                    );
                }
            }
        });
        *self.probe.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
    }

    pub(crate) fn stop(&self) {
        self.probe.stop();
    }
}

/// Pings an idle pooled connection, or opens a direct one when the pool holds none;
/// `None` when every connection is busy (queries are getting through).
async fn probe_pool(pool: &AnyPool, real: &AnyConnectOptions) -> Option<bool> {
    if let Some(mut conn) = pool.try_acquire() {
        let pinged = tokio::time::timeout(PROBE_TIMEOUT, conn.ping()).await;
        if matches!(pinged, Ok(Ok(()))) {
            return Some(true);
        }
        // The connection is dead: do not return it to the pool.
        conn.close_on_drop();
        return Some(probe_direct(real).await);
    }
    if pool.size() == 0 {
        return Some(probe_direct(real).await);
    }
    None
}

async fn probe_direct(options: &AnyConnectOptions) -> bool {
    let attempt = async {
        let mut conn: AnyConnection = options.connect().await?;
        conn.ping().await?;
        conn.close().await
    };
    matches!(
        tokio::time::timeout(PROBE_TIMEOUT, attempt).await,
        Ok(Ok(()))
    )
}
