//! Storage: one query layer (sqlx `Any`) over SQLite or PostgreSQL.
//!
//! SQLite is the embedded default; PostgreSQL lets many stateless instances share one
//! database. The SQL is the same for both (`$1` placeholders, epoch-millisecond times,
//! 0/1 booleans), so each query exists once.
//!
//! SQLite write rules, each learnt from a crash or stall with sqlx:
//! * writes go through a single-connection writer pool, reads through a reader pool, so
//!   writers never fight over the lock ("database is locked" under sustained inserts);
//! * a write transaction starts with `BEGIN IMMEDIATE`, or a read-then-write transaction
//!   fails at once with SQLITE_BUSY whatever the busy timeout;
//! * `UPDATE ... RETURNING` is read with `fetch_all`/`fetch_optional`, which drain the
//!   statement and release the lock.
//!
//! Fault rules (issue 15):
//! * a connection released while sqlx still counts it inside a transaction is closed,
//!   not pooled: SQLite rolls back by itself after SQLITE_FULL, SQLITE_IOERR or an
//!   interrupt, sqlx's own `ROLLBACK` then fails, and the single writer would otherwise
//!   answer "begin_with at non-zero transaction depth" until a restart;
//! * after a storage fault (read-only, I/O error, full, cannot open) the SQLite writer is
//!   replaced too, since a connection opened while the file was read-only stays
//!   read-only; a fresh one writes as soon as the file is writable again;
//! * `langcamp serve` refuses to start on a database it cannot write ([`Db::check_writable`]);
//! * PostgreSQL sits behind a circuit ([`circuit`]) that answers 503 at once while the
//!   server is known to be down.

pub(crate) mod by_id;
mod checkpoint;
mod circuit;
mod group;
pub(crate) mod listing;
mod locks;
pub(crate) mod search_index;
mod sqlite_conn;
mod tx;
mod write;

pub use circuit::DatabaseState;
pub use group::{AfterWrite, Undo};
pub use locks::Locks;
pub use tx::Tx;
pub(crate) use tx::run_to_end;
pub use write::{Arg, Row, Write, WriteConn};

use std::path::Path;
use std::sync::Arc;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor};

use crate::domain::error::{Error, Result};
use crate::platform::config::Config;
use crate::platform::faults::storage_faults;
use crate::platform::trace;
use tracing::Instrument as _;

use self::circuit::Circuit;
use self::group::GroupCommit;

static SQLITE_MIGRATIONS: LazyLock<Migrator> =
    LazyLock::new(|| beside_newer(sqlx::migrate!("../migrations/sqlite")));
static POSTGRES_MIGRATIONS: LazyLock<Migrator> =
    LazyLock::new(|| beside_newer(sqlx::migrate!("../migrations/postgres")));

/// The migrations this build knows, for `backend`.
pub(crate) fn migrations(backend: Backend) -> &'static Migrator {
    match backend {
        Backend::Sqlite => &SQLITE_MIGRATIONS,
        Backend::Postgres => &POSTGRES_MIGRATIONS,
    }
}

/// A migrator that accepts a database a newer release has migrated further: during a
/// rolling upgrade an instance of the previous release may restart (a crash, its
/// supervisor) after the new release applied its migrations, which are expand-only
/// beside it (docs/OPERATIONS.md, "Migrations during a rolling upgrade"). Without this,
/// sqlx refuses to run with an applied migration it does not know. Whether such a
/// database is current for this build is `Langcamp::migrations_current`'s rule.
fn beside_newer(mut migrator: Migrator) -> Migrator {
    migrator.set_ignore_missing(true);
    migrator
}

/// How long a request waits for a pooled connection before answering 503.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The connection pools. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    reader: AnyPool,
    writer: AnyPool,
    backend: Backend,
    /// PostgreSQL only; on SQLite it stays closed (a local file answers at once).
    circuit: Circuit,
    /// SQLite only: the loop that commits waiting [`Db::write`]s together.
    group: Option<GroupCommit>,
}

/// One applied migration, as reported by `langcamp migrate`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AppliedMigration {
    pub version: i64,
    pub description: String,
}

impl Db {
    pub async fn connect(config: &Config) -> Result<Db> {
        install_default_drivers();
        let url = config.database_url.expose();
        if config.is_postgres() {
            let pool = AnyPoolOptions::new()
                .max_connections(config.pool_size(32))
                .min_connections(0)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .after_release(|conn, _meta| Box::pin(release_check(conn, None)))
                // Opened on first use: start-up waits for no connection of its own.
                .connect_lazy(url)
                .map_err(Error::from)?;
            let circuit = Circuit::default();
            circuit.watch(pool.clone());
            return Ok(Db {
                reader: pool.clone(),
                writer: pool,
                backend: Backend::Postgres,
                circuit,
                group: None,
            });
        }

        if let Some(parent) = sqlite_file(url).and_then(|f| Path::new(f).parent())
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)?;
        }
        let faults_seen = Arc::new(AtomicU64::new(storage_faults()));
        let writer = sqlite_pool(1)
            .after_release(move |conn, _meta| {
                Box::pin(release_check(conn, Some(Arc::clone(&faults_seen))))
            })
            .connect(url)
            .await
            .map_err(Error::from)?;
        // WAL lets readers run beside the writer; it is a property of the file, set once.
        writer.execute("PRAGMA journal_mode = WAL").await?;
        let readers = std::thread::available_parallelism()
            .map_or(4, |n| n.get() * 2)
            .max(4);
        let reader = sqlite_pool(config.pool_size(readers as u32))
            .after_release(|conn, _meta| Box::pin(release_check(conn, None)))
            .connect(url)
            .await
            .map_err(Error::from)?;
        // The writer thread needs a file to open; a database without one (in memory) has
        // one connection per pool anyway, and writes in ordinary transactions.
        let group = match sqlite_file(url) {
            Some(file) => Some(GroupCommit::start(file.into(), writer.clone())?),
            None => None,
        };
        Ok(Db {
            reader,
            group,
            writer,
            backend: Backend::Sqlite,
            circuit: Circuit::default(),
        })
    }

    /// Whether the database is reachable, as the circuit knows it (PostgreSQL; SQLite is
    /// always `Up`). For readiness reports and the console's status line.
    pub fn state(&self) -> DatabaseState {
        self.circuit.state()
    }

    /// Fails unless a write to the database can succeed now: SQLite writes its header
    /// (the same `user_version` back) in a write transaction, so a read-only file,
    /// folder or mount, or a full disk, is named before serving; PostgreSQL checks the
    /// session is not read-only (a standby).
    pub async fn check_writable(&self) -> Result<()> {
        let mut conn = self.writer_connection().await?;
        self.check_writable_on(&mut conn).await
    }

    /// [`Db::check_writable`] on a connection the caller holds (start-up runs all its
    /// checks on one connection: `startup.rs`).
    pub async fn check_writable_on(&self, conn: &mut AnyConnection) -> Result<()> {
        let mut tx = match self.backend {
            Backend::Sqlite => Connection::begin_with(conn, "BEGIN IMMEDIATE").await?,
            Backend::Postgres => Connection::begin(conn).await?,
        };
        match self.backend {
            Backend::Sqlite => {
                let version: i64 = sqlx::query_scalar("PRAGMA user_version")
                    .fetch_one(&mut *tx)
                    .await?;
                // A pragma takes no bind parameters; the number is our own.
                tx.execute(sqlx::AssertSqlSafe(format!(
                    "PRAGMA user_version = {version}"
                )))
                .await?;
            }
            Backend::Postgres => {
                let read_only: String = sqlx::query_scalar("SHOW transaction_read_only")
                    .fetch_one(&mut *tx)
                    .await?;
                if read_only == "on" {
                    return Err(Error::Unavailable(
                        "the PostgreSQL session is read-only (a standby?)".into(),
                    ));
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// A connection of the writer pool, held until dropped.
    pub async fn writer_connection(&self) -> Result<sqlx::pool::PoolConnection<Any>> {
        Ok(self.writer.acquire().await?)
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The pool for reads; on PostgreSQL the same pool as writes.
    pub fn reader(&self) -> &AnyPool {
        &self.reader
    }

    /// Starts a write transaction (SQLite: `BEGIN IMMEDIATE` on the writer connection).
    pub async fn begin(&self) -> Result<Tx> {
        let begin = match self.backend {
            Backend::Sqlite => Some("BEGIN IMMEDIATE"),
            Backend::Postgres => None,
        };
        Tx::start(&self.writer, begin).await
    }

    /// Runs `work` in a write transaction and commits it; the answer comes once the work
    /// is durable. On SQLite the transaction is shared with the other `write`s waiting
    /// for the single writer (group commit, [`group`]): `work` runs in a savepoint of its
    /// own (or needs none, [`Undo`]), so its failure undoes only its own changes; it must not commit or roll
    /// back. On PostgreSQL, where writers run side by side and the server groups WAL
    /// flushes itself, it is an ordinary transaction of its own.
    ///
    /// For the hot write paths (sign-in, submission): pieces of work that are a few
    /// statements and do their reading, hashing and signing outside. `undo` says whether
    /// a failure needs a savepoint to be undone ([`Undo`]).
    ///
    /// Either way the piece runs to its end once handed over, even if the caller stops
    /// waiting (a client that hangs up): on SQLite the writer thread runs it, elsewhere a
    /// task of its own ([`tx`]), so it commits whole or leaves nothing.
    pub async fn write<W: Write>(&self, undo: Undo, work: W) -> Result<W::Output> {
        self.write_then(undo, work, None).await
    }

    /// [`Db::write`], and `after` once the write's transaction has ended (committed or
    /// not), even if the caller has stopped waiting by then: the write runs on to its end
    /// without it (its own task, or the writer thread), and `after` with it. Not taken
    /// when the caller left before the write began (nothing was written).
    pub async fn write_then<W: Write>(
        &self,
        undo: Undo,
        work: W,
        after: Option<AfterWrite>,
    ) -> Result<W::Output> {
        if trace::in_trace() {
            let span = trace::db_write(trace::db_system(self.backend), &write_summary::<W>());
            return self.write_now(undo, work, after).instrument(span).await;
        }
        self.write_now(undo, work, after).await
    }

    async fn write_now<W: Write>(
        &self,
        undo: Undo,
        work: W,
        after: Option<AfterWrite>,
    ) -> Result<W::Output> {
        match &self.group {
            Some(group) => group.write(undo, work, after).await,
            None => {
                // The wait for a connection stops with the caller ([`tx`]); from the begin on,
                // the piece runs to its end.
                let conn = self.writer.acquire().await?;
                tx::run_to_end(async move {
                    let written = async {
                        let mut tx = Tx::begin_on(conn, None).await?;
                        let value = work.run(&mut *tx).await?;
                        tx.commit().await?;
                        Ok::<_, Error>(value)
                    }
                    .await;
                    if let Some(after) = after {
                        after();
                    }
                    written
                })
                .await
            }
        }
    }

    /// Starts a read-only transaction whose statements all see one snapshot of the
    /// database (SQLite: a deferred transaction on a reader; PostgreSQL: REPEATABLE READ).
    /// The way to run a read of more than one statement (a count and its page, rows and
    /// their children, a check and the read it guards): on a plain pooled connection each
    /// statement sees the database as it is when it runs, so a list could count one
    /// version of the data and page another, or show a material with half an edit's
    /// children. A read of one statement needs none ([`Db::reader`]).
    pub async fn read_snapshot(&self) -> Result<Tx> {
        let begin = match self.backend {
            Backend::Sqlite => "BEGIN",
            Backend::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        };
        Tx::start(&self.reader, Some(begin)).await
    }

    /// Applies pending migrations and returns those applied now.
    pub async fn migrate(&self) -> Result<Vec<AppliedMigration>> {
        let migrator = migrations(self.backend);
        let before = self.applied_versions().await;
        migrator.run(&self.writer).await.map_err(|e| match e {
            sqlx::migrate::MigrateError::Execute(inner) => Error::from(inner),
            other => Error::internal(other),
        })?;
        Ok(migrator
            .iter()
            .filter(|m| m.migration_type.is_up_migration() && !before.contains(&m.version))
            .map(|m| AppliedMigration {
                version: m.version,
                description: m.description.to_string(),
            })
            .collect())
    }

    async fn applied_versions(&self) -> Vec<i64> {
        // Before the first migration the bookkeeping table does not exist: nothing applied.
        sqlx::query_scalar::<_, i64>("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
            .fetch_all(&self.writer)
            .await
            .unwrap_or_default()
    }

    /// Versions of the migrations this build knows but the database has not applied
    /// (readiness: an instance must not serve a schema older than its code).
    pub async fn pending_migrations(&self) -> Result<Vec<i64>> {
        let migrator = migrations(self.backend);
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(&self.reader)
                .await
                .or_else(|e| match &e {
                    // No bookkeeping table yet: nothing is applied.
                    sqlx::Error::Database(_) => Ok(Vec::new()),
                    _ => Err(Error::from(e)),
                })?;
        Ok(migrator
            .iter()
            .filter(|m| m.migration_type.is_up_migration() && !applied.contains(&m.version))
            .map(|m| m.version)
            .collect())
    }

    /// Connections of the pools, `(in use, idle)`, for the pool-saturation metric; the
    /// SQLite writer and readers are added up.
    pub fn pool_connections(&self) -> (u64, u64) {
        let count = |pool: &AnyPool| {
            let size = u64::from(pool.size());
            let idle = pool.num_idle() as u64;
            (size.saturating_sub(idle), idle)
        };
        let (used, idle) = count(&self.reader);
        match self.backend {
            Backend::Postgres => (used, idle),
            Backend::Sqlite => {
                let (w_used, w_idle) = count(&self.writer);
                (used + w_used, idle + w_idle)
            }
        }
    }

    /// The most connections the pools may open (the saturation ceiling).
    pub fn pool_max_connections(&self) -> u64 {
        let max = |pool: &AnyPool| u64::from(pool.options().get_max_connections());
        match self.backend {
            Backend::Postgres => max(&self.reader),
            Backend::Sqlite => max(&self.reader) + max(&self.writer),
        }
    }

    /// An online copy of an SQLite database into `dest` (`VACUUM INTO`): consistent,
    /// taken while the service keeps serving, and itself an SQLite file the CLI opens.
    /// PostgreSQL has its own tools for this (`pg_dump`): a validation error names it.
    pub async fn backup_to(&self, dest: &Path) -> Result<()> {
        if self.backend == Backend::Postgres {
            return Err(Error::invalid(
                "backup copies SQLite databases only; for PostgreSQL use pg_dump (see docs/OPERATIONS.md)",
            ));
        }
        let dest = dest
            .to_str()
            .ok_or_else(|| Error::invalid("the backup path must be valid UTF-8"))?;
        sqlx::query("VACUUM INTO $1")
            .bind(dest)
            // A reader: in WAL mode the copy reads one snapshot and never blocks writers.
            .execute(&self.reader)
            .await?;
        Ok(())
    }

    /// Whether the database answers; used by health checks.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.circuit.stop();
        if let Some(group) = &self.group {
            group.close().await;
        }
        self.reader.close().await;
        self.writer.close().await;
    }
}

fn sqlite_pool(max: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max)
        .min_connections(0)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        // sqlx pings an idle connection before handing it out, by default: on SQLite that
        // is a round trip to the connection's worker thread on every acquire, and it can
        // find nothing wrong (there is no server to lose). What can go wrong with a file,
        // a storage fault, is handled on release (`release_check`).
        .test_before_acquire(false)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute(sqlite_conn::CONNECTION_PRAGMAS).await?;
                Ok(())
            })
        })
}

/// Decides on release whether a connection may go back to the pool (`false` closes it).
/// A connection still inside a transaction would make every later `begin` fail; the
/// writer is also replaced after any SQLite storage fault since its last release
/// (`faults_seen`), because one opened while the file was read-only never writes.
async fn release_check(
    conn: &mut AnyConnection,
    faults_seen: Option<Arc<AtomicU64>>,
) -> Result<bool, sqlx::Error> {
    if let Some(seen) = faults_seen {
        let now = storage_faults();
        if seen.swap(now, Ordering::Relaxed) != now {
            tracing::warn!("database storage fault: replacing the writer connection");
            return Ok(false);
        }
    }
    if conn.is_in_transaction() {
        // A dropped transaction's rollback is queued, not yet run (SQLite runs it on the
        // connection's worker): a ping waits for it, then the depth is final.
        conn.ping().await?;
        if conn.is_in_transaction() {
            tracing::warn!(
                "connection released inside a transaction the database already ended: replacing it"
            );
            return Ok(false);
        }
    }
    Ok(true)
}

/// Why the SQLite file of `url` cannot be opened for writing, if it exists and cannot:
/// a read-only mount, an immutable file, missing permissions. SQLite itself would quietly
/// open such a file read-only (or, on a read-only mount, not at all) and fail later.
pub fn sqlite_file_unwritable(url: &str) -> Option<String> {
    let file = sqlite_file(url)?;
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(file)
    {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Some(e.to_string()),
        _ => None,
    }
}

/// The file path inside a `sqlite:` URL, if it names a file.
pub fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then_some(path)
}

/// The backend a connection talks to.
pub fn backend_of(conn: &AnyConnection) -> Backend {
    if conn.backend_name().eq_ignore_ascii_case("sqlite") {
        Backend::Sqlite
    } else {
        Backend::Postgres
    }
}

/// Converts a stored 0/1 to a boolean.
pub fn flag(value: i64) -> bool {
    value != 0
}

/// Converts a boolean to its stored 0/1.
pub fn bit(value: bool) -> i64 {
    i64::from(value)
}

/// What a write's span says it writes: `write` and the work's type (`write Submission`).
fn write_summary<W>() -> String {
    let name = std::any::type_name::<W>();
    let short = name.split('<').next().unwrap_or(name);
    format!("write {}", short.rsplit("::").next().unwrap_or(short))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_file_is_found_in_urls() {
        assert_eq!(
            sqlite_file("sqlite://./data/x.db?mode=rwc"),
            Some("./data/x.db")
        );
        assert_eq!(sqlite_file("sqlite:/tmp/a.db"), Some("/tmp/a.db"));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
    }
}
