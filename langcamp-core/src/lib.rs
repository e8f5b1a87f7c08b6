//! Langcamp core: every operation of the language-school backend as a typed async API.
//!
//! Front ends (HTTP, the `langcamp` command, the console) are thin: they turn their input
//! into these calls and the results into their output. Nothing here knows about HTTP,
//! command lines or terminals.

// The three floors (ARCHITECTURE.md, CONTRIBUTING.md "The three floors"): each imports
// only the floors below it, and `tests/floors.rs` fails when one does not.

/// The values every area shares: ids, text, money, language, CEFR, time, pages,
/// validation, the error type, the actor.
pub mod domain;
/// What the school runs on: the database and its group commit, the mail outbox, the file
/// store, configuration, keys, client addresses, the clock, caches and change notices as
/// mechanisms, health, start-up, progress. It never names an area's type.
pub mod platform;

// The areas of the school, one folder each (`mod.rs` operations, `input.rs` parsing,
// `store.rs` SQL). An area uses another area's operations, never its `store`.
pub mod audit;
pub mod auth;
pub mod contacts;
pub mod courses;
pub mod dashboard;
pub mod exports;
pub mod keys;
pub mod mail_templates;
pub mod materials;
pub mod placement;
pub mod settings;
pub mod storage;
pub mod users;
pub mod webhooks;

use std::sync::Arc;

use tokio::sync::Notify;

pub use domain::actor::{Actor, Assurance, Caller, Origin, Role};
pub use domain::error::{Error, Result};
pub use domain::page::{Page, PageRequest, Pagination};
pub use domain::time::Timestamp;
pub use platform::clock::Clock;
pub use platform::config::Config;
pub use platform::startup::StartupProblem;

use crate::platform::cache::{Cache, PUBLIC_TTL};
use crate::platform::changes::{Change, Heard};
use crate::platform::db::{AfterWrite, Db, Tx, Undo, Write, WriteConn};
use crate::platform::file_store::FileStore;
use crate::platform::keyring::{Keyring, SecretSource};
use crate::platform::mail::{MailKind, OutgoingMail};

/// The tables SQLite searches through an FTS5 index filled in the background.
const SEARCH_INDEXES: [&platform::db::search_index::SearchIndex; 2] =
    [&users::SEARCH_INDEX, &contacts::SEARCH_INDEX];

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
    /// The server's keys: the current secret's and the previous ones' (see [`platform::keyring`]).
    keys: Keyring,
    /// Where the current secret came from (`JWT_SECRET`, or the file of the embedded default).
    secret_source: SecretSource,
    /// Where uploaded files' bytes live (local disk under `DATA_DIR/files` by default).
    files: Arc<dyn FileStore>,
    /// Wakes the mail worker when a transaction queued mail.
    mail_wakeup: Notify,
    /// Wakes the webhook worker when a transaction queued deliveries.
    webhook_wakeup: Notify,
    /// What this process's webhook worker did (metrics).
    webhook_tally: platform::queue::Tally,
    /// Read caches of public data; every write of that data invalidates them.
    caches: Caches,
    /// What this process's mail worker is doing (readiness report, metrics).
    mail_status: platform::health::MailStatus,
    /// Live sign-ins, so token checks need no round trip (see [`auth::session::live`]).
    sessions: auth::session::live::Sessions,
    /// Access tokens already verified, so a request skips the signature check.
    verified_tokens: auth::session::verified::VerifiedTokens,
    /// Names this handle in change notifications, so it skips its own (see [`platform::changes`]).
    instance_id: String,
    /// Dropped with the handle, which ends its change listener (PostgreSQL).
    _stop_listener: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Langcamp {
    /// Connects to the configured database (without migrating).
    pub async fn connect(config: Config, clock: Clock) -> Result<Langcamp> {
        let db = Db::connect(&config).await?;
        let (keys, secret_source) = platform::keyring::from_config(&config)?;
        let files = platform::file_store::default_store(&config)?;
        let sessions = match db.backend() {
            platform::db::Backend::Sqlite => auth::session::live::Sessions::new(
                platform::db::sqlite_file(config.database_url.expose())
                    .map(|file| std::path::PathBuf::from(format!("{file}-signal"))),
            ),
            // Off until every instance's writes are heard (see `sessions`).
            platform::db::Backend::Postgres => auth::session::live::Sessions::disabled(),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let is_postgres = db.backend() == platform::db::Backend::Postgres;
        let url = config.database_url.expose().to_owned();
        let app = Langcamp {
            inner: Arc::new(Inner {
                config,
                db,
                clock,
                keys,
                secret_source,
                files,
                mail_wakeup: Notify::new(),
                webhook_wakeup: Notify::new(),
                webhook_tally: platform::queue::Tally::default(),
                caches: Caches::default(),
                mail_status: platform::health::MailStatus::default(),
                sessions,
                verified_tokens: auth::session::verified::VerifiedTokens::default(),
                instance_id: domain::id::new_id(),
                _stop_listener: is_postgres.then_some(stop),
            }),
        };
        if is_postgres {
            let handle = Arc::downgrade(&app.inner);
            let instance = app.instance_id().to_owned();
            // The listener holds the handle weakly: it ends when the last handle is dropped.
            tokio::spawn(platform::changes::listen(
                url,
                instance,
                stopped,
                move |heard| {
                    let Some(inner) = handle.upgrade() else {
                        return false;
                    };
                    let app = Langcamp { inner };
                    match heard {
                        Heard::Connected => app.hearing_changes(true),
                        Heard::Lost => app.hearing_changes(false),
                        Heard::Change(change) => app.forget_locally(&change),
                    }
                    true
                },
            ));
        }
        Ok(app)
    }

    pub(crate) fn instance_id(&self) -> &str {
        &self.inner.instance_id
    }

    /// Applies pending migrations; returns those applied now.
    pub async fn migrate(&self) -> Result<Vec<platform::db::AppliedMigration>> {
        if self.db().migrations_current().await {
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

    /// The server's keys (tools that store what the service would, such as the
    /// benchmarks' seed and the tests' sign-in, hash with them).
    pub fn keys(&self) -> &Keyring {
        &self.inner.keys
    }

    /// Where the current secret came from (`langcamp doctor`).
    pub fn secret_source(&self) -> &SecretSource {
        &self.inner.secret_source
    }

    /// The read caches of public data (see [`Caches`]).
    pub fn caches(&self) -> &Caches {
        &self.inner.caches
    }

    /// The live sign-ins held in memory (see [`auth::session::live`]).
    pub fn sessions(&self) -> &auth::session::live::Sessions {
        &self.inner.sessions
    }

    /// The file store holding uploaded files' bytes.
    pub fn files(&self) -> &Arc<dyn FileStore> {
        &self.inner.files
    }

    /// What this process's mail worker is doing.
    pub fn mail_status(&self) -> &platform::health::MailStatus {
        &self.inner.mail_status
    }

    /// Tells the mail worker that new mail was committed.
    pub(crate) fn wake_mail_worker(&self) {
        self.inner.mail_wakeup.notify_one();
    }

    /// Delivers queued mail until `shutdown` resolves (run it beside the server).
    pub async fn run_mail_worker(&self, shutdown: impl std::future::Future<Output = ()>) {
        let outbox = platform::mail::Outbox {
            db: self.db(),
            keys: self.keys(),
            clock: self.clock(),
            config: self.config(),
            status: self.mail_status(),
            wakeup: &self.inner.mail_wakeup,
        };
        platform::mail::run_worker(outbox, shutdown).await;
    }

    /// Keeps SQLite's search indexes filled until `shutdown` resolves (run it beside the
    /// server; [`platform::db::search_index`]). On PostgreSQL it returns at once.
    pub async fn run_search_indexer(&self, shutdown: impl std::future::Future<Output = ()>) {
        platform::db::search_index::run(self.db(), &SEARCH_INDEXES, shutdown).await;
    }

    /// Indexes for search every row written since the indexer last ran (SQLite: after a
    /// bulk load, or where no server runs the indexer); how many rows. A search is exact
    /// either way, only faster once its rows are indexed.
    pub async fn index_searches(&self) -> Result<i64> {
        if self.db().backend() != platform::db::Backend::Sqlite {
            return Ok(0);
        }
        let mut indexed = 0;
        for index in SEARCH_INDEXES {
            indexed += index.catch_up(self.db()).await?;
        }
        Ok(indexed)
    }

    /// Queues `mail` inside the caller's write (the outbox of [`platform::mail`]), sealed
    /// under this handle's keys; `expires_at` (epoch ms) drops it undelivered after that.
    pub(crate) async fn queue_mail<C: WriteConn>(
        &self,
        conn: &mut C,
        kind: MailKind,
        mail: &OutgoingMail,
        expires_at: Option<i64>,
    ) -> Result<()> {
        let now = self.clock().now_ms();
        platform::mail::enqueue(conn, self.keys(), now, kind, mail, expires_at).await
    }

    /// Whether the database answers.
    pub async fn health(&self) -> Result<()> {
        self.inner.db.ping().await
    }

    /// Every readiness check (`GET /ready`, `langcamp doctor`), see [`platform::health`].
    pub async fn readiness(&self) -> platform::health::Readiness {
        platform::health::readiness(self.db(), self.files().as_ref(), self.mail_status()).await
    }

    /// Pending mail in the outbox (the queue-size and queue-age metrics).
    pub async fn outbox_backlog(&self) -> Result<platform::health::OutboxBacklog> {
        platform::health::outbox_backlog(self.db()).await
    }

    /// `langcamp serve`'s checks before it listens (see [`Db::check_before_serving`]).
    pub async fn check_before_serving(&self) -> std::result::Result<bool, StartupProblem> {
        self.db().check_before_serving().await
    }
}

/// The read caches of the handle, one per kind of public data (the mechanism is
/// [`platform::cache`]); every write of that data invalidates them.
#[derive(Debug)]
pub struct Caches {
    /// Published courses by list filter.
    pub courses: Cache<courses::CourseFilter, Arc<Vec<courses::Course>>>,
    /// Settings by key; `None` remembers that a key is not set.
    pub settings: Cache<String, Option<settings::Setting>>,
    /// Pages of the public (active) placement-test list, by filter and page.
    pub tests: Cache<TestListKey, Arc<Page<placement::ProficiencyTest>>>,
    /// Whole tests by id, for scoring submissions outside the write transaction.
    pub active_tests: Cache<String, placement::HeldTest>,
    /// What mail is written from: stored templates and the school's mail settings.
    pub mail: Cache<(), Arc<mail_templates::MailBook>>,
    /// Which enabled webhook endpoints hear which events.
    pub webhooks: Cache<(), webhooks::Subscriptions>,
}

/// The key of a cached page of the public test list: locale, target language, page, limit.
pub type TestListKey = (Option<String>, Option<String>, u32, u32);

impl Default for Caches {
    fn default() -> Caches {
        Caches {
            courses: Cache::new(PUBLIC_TTL, 64),
            settings: Cache::new(PUBLIC_TTL, 256),
            tests: Cache::new(PUBLIC_TTL, 256),
            active_tests: Cache::new(PUBLIC_TTL, 256),
            mail: Cache::new(PUBLIC_TTL, 1),
            webhooks: Cache::new(PUBLIC_TTL, 1),
        }
    }
}

/// What each change notice ([`platform::changes`]) makes stale in this process: the
/// handle knows which area holds what.
impl Langcamp {
    /// Drops what `change` made stale in this process.
    pub(crate) fn forget_locally(&self, change: &Change) {
        match change {
            Change::Session(id) => self.sessions().forget_session(id),
            Change::User(id) => self.sessions().forget_user(id),
            Change::Courses => self.caches().courses.invalidate_all(),
            Change::Tests => {
                self.caches().tests.invalidate_all();
                self.caches().active_tests.invalidate_all();
            }
            Change::Settings => {
                self.caches().settings.invalidate_all();
                self.caches().mail.invalidate_all();
            }
            Change::MailTemplates => self.caches().mail.invalidate_all(),
            Change::Webhooks => self.caches().webhooks.invalidate_all(),
            Change::Everything => self.forget_everything(),
        }
    }

    /// Commits `tx`, which made `change`, and tells every cache that must forget it.
    ///
    /// The commit and the forgetting run in a task of their own, to their end even when
    /// the caller stops waiting (a client hanging up): a commit that a dropped caller
    /// left running must still be forgotten in this process, or it would keep serving
    /// what the write changed (this instance ignores its own notices).
    pub(crate) async fn commit_change(&self, mut tx: Tx, change: Change) -> Result<()> {
        self.announce(&mut tx, &change).await?;
        let app = self.clone();
        platform::db::run_to_end(async move {
            let committed = tx.commit().await;
            app.forget_locally(&change);
            committed
        })
        .await
    }

    /// Runs a staff write (a piece of work that records its audit entry, and calls
    /// [`Langcamp::announce`] for `change` itself) through [`Db::write`]: on SQLite inside
    /// the group commit, so it shares the writer's transaction and its pages with the
    /// writes waiting beside it. Then drops what `change` made stale in this process,
    /// whatever the outcome (a failed commit may still have been applied), as the write
    /// ends: by the write's own task or the writer thread, even when the caller has
    /// stopped waiting (see [`Langcamp::commit_change`]).
    pub(crate) async fn write_change<W: Write>(
        &self,
        work: W,
        change: Option<Change>,
    ) -> Result<W::Output> {
        let app = self.clone();
        let forget: Option<AfterWrite> =
            change.map(|change| Box::new(move || app.forget_locally(&change)) as AfterWrite);
        self.db().write_then(Undo::Savepoint, work, forget).await
    }

    /// Tells the other instances about `change` from inside the transaction that makes it
    /// ([`platform::changes::announce`]).
    pub(crate) async fn announce<C: WriteConn>(&self, conn: &mut C, change: &Change) -> Result<()> {
        platform::changes::announce(conn, self.instance_id(), change).await
    }

    fn forget_everything(&self) {
        self.sessions().forget_all();
        self.caches().courses.invalidate_all();
        self.caches().tests.invalidate_all();
        self.caches().active_tests.invalidate_all();
        self.caches().settings.invalidate_all();
        self.caches().mail.invalidate_all();
        self.caches().webhooks.invalidate_all();
    }

    /// Whether this process hears every other instance's changes (PostgreSQL's listener
    /// is connected). While it does not, the sign-in cache is off; when it starts hearing
    /// again, whatever changed meanwhile is forgotten first.
    pub(crate) fn hearing_changes(&self, hearing: bool) {
        if hearing {
            self.forget_everything();
            self.sessions().enable();
        } else {
            self.sessions().disable();
        }
    }
}
