//! Langcamp core: every operation of the language-school backend as a typed async API.
//!
//! Front ends (HTTP, the `langcamp` command, the console) are thin: they turn their input
//! into these calls and the results into their output. Nothing here knows about HTTP,
//! command lines or terminals.

pub mod actor;
pub mod audit;
pub mod auth;
mod by_id;
pub mod cache;
pub mod changes;
pub mod clock;
pub mod config;
pub mod contacts;
pub mod courses;
pub mod crypto;
pub mod dashboard;
pub mod db;
pub mod domain;
pub mod error;
pub mod exports;
pub mod health;
pub mod id;
mod listing;
pub mod mail;
pub mod mail_templates;
pub mod materials;
pub mod money;
pub mod net;
pub mod operator;
pub mod page;
pub mod placement;
pub mod progress;
pub mod sessions;
pub mod settings;
mod startup;
pub use startup::StartupProblem;
pub mod storage;
pub mod time;
pub mod users;
pub mod validate;
pub mod verified;

use std::sync::Arc;

use tokio::sync::Notify;

pub use actor::{Actor, Caller, Origin, Role};
pub use clock::Clock;
pub use config::Config;
pub use error::{Error, Result};
pub use page::{Page, PageRequest, Pagination};
pub use time::Timestamp;

use crate::crypto::Keys;
use crate::db::Db;
use crate::storage::FileStore;

/// The handle every operation goes through. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Langcamp {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    db: Db,
    clock: Clock,
    keys: Keys,
    /// Where uploaded files' bytes live (local disk under `DATA_DIR/files` by default).
    files: Arc<dyn FileStore>,
    /// Wakes the mail worker when a transaction queued mail.
    mail_wakeup: Notify,
    /// Read caches of public data; every write of that data invalidates them.
    caches: cache::Caches,
    /// What this process's mail worker is doing (readiness report, metrics).
    mail_status: health::MailStatus,
    /// Live sign-ins, so token checks need no round trip (see [`sessions`]).
    sessions: sessions::Sessions,
    /// Access tokens already verified, so a request skips the signature check.
    verified_tokens: verified::VerifiedTokens,
    /// Names this handle in change notifications, so it skips its own (see [`changes`]).
    instance_id: String,
    /// Dropped with the handle, which ends its change listener (PostgreSQL).
    _stop_listener: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Langcamp {
    /// Connects to the configured database (without migrating).
    pub async fn connect(config: Config, clock: Clock) -> Result<Langcamp> {
        let db = Db::connect(&config).await?;
        let keys = Keys::derive(config.jwt_secret.expose());
        let files = storage::default_store(&config)?;
        let sessions = match db.backend() {
            db::Backend::Sqlite => sessions::Sessions::new(
                db::sqlite_file(config.database_url.expose())
                    .map(|file| std::path::PathBuf::from(format!("{file}-signal"))),
            ),
            // Off until every instance's writes are heard (see `sessions`).
            db::Backend::Postgres => sessions::Sessions::disabled(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let is_postgres = db.backend() == db::Backend::Postgres;
        let url = config.database_url.expose().to_owned();
        let app = Langcamp {
            inner: Arc::new(Inner {
                config,
                db,
                clock,
                keys,
                files,
                mail_wakeup: Notify::new(),
                caches: cache::Caches::default(),
                mail_status: health::MailStatus::default(),
                sessions,
                verified_tokens: verified::VerifiedTokens::default(),
                instance_id: id::new_id(),
                _stop_listener: is_postgres.then_some(stop),
            }),
        };
        if is_postgres {
            changes::spawn_listener(Arc::downgrade(&app.inner), url, stopped);
        }
        Ok(app)
    }

    /// The handle behind a listener's weak reference, while it exists.
    pub(crate) fn upgrade(inner: &std::sync::Weak<Inner>) -> Option<Langcamp> {
        inner.upgrade().map(|inner| Langcamp { inner })
    }

    pub(crate) fn instance_id(&self) -> &str {
        &self.inner.instance_id
    }

    /// Applies pending migrations; returns those applied now.
    pub async fn migrate(&self) -> Result<Vec<db::AppliedMigration>> {
        if self.migrations_current().await {
            return Ok(Vec::new());
        }
        self.inner.db.migrate().await
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    pub(crate) fn keys(&self) -> &Keys {
        &self.inner.keys
    }

    /// The read caches of public data (see [`cache`]).
    pub fn caches(&self) -> &cache::Caches {
        &self.inner.caches
    }

    /// The live sign-ins held in memory (see [`sessions`]).
    pub fn sessions(&self) -> &sessions::Sessions {
        &self.inner.sessions
    }

    /// The file store holding uploaded files' bytes.
    pub fn files(&self) -> &Arc<dyn FileStore> {
        &self.inner.files
    }

    /// What this process's mail worker is doing.
    pub fn mail_status(&self) -> &health::MailStatus {
        &self.inner.mail_status
    }

    pub(crate) fn mail_wakeup(&self) -> &Notify {
        &self.inner.mail_wakeup
    }

    /// Tells the mail worker that new mail was committed.
    pub(crate) fn wake_mail_worker(&self) {
        self.inner.mail_wakeup.notify_one();
    }

    /// Delivers queued mail until `shutdown` resolves (run it beside the server).
    pub async fn run_mail_worker(&self, shutdown: impl std::future::Future<Output = ()>) {
        mail::run_worker(self.clone(), shutdown).await;
    }

    /// Whether the database answers.
    pub async fn health(&self) -> Result<()> {
        self.inner.db.ping().await
    }
}
