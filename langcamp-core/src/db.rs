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

use std::path::Path;
use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{Any, AnyPool, Executor, Transaction};

use crate::config::Config;
use crate::error::{Error, Result};

pub(crate) static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");
pub(crate) static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");

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
}

/// A write transaction (SQLite: `BEGIN IMMEDIATE` on the writer connection).
pub type Tx = Transaction<'static, Any>;

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
                // Opened on first use: start-up waits for no connection of its own.
                .connect_lazy(url)
                .map_err(Error::from)?;
            return Ok(Db {
                reader: pool.clone(),
                writer: pool,
                backend: Backend::Postgres,
            });
        }

        if let Some(parent) = sqlite_file(url).and_then(|f| Path::new(f).parent())
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)?;
        }
        let writer = sqlite_pool(1).connect(url).await.map_err(Error::from)?;
        // WAL lets readers run beside the writer; it is a property of the file, set once.
        writer.execute("PRAGMA journal_mode = WAL").await?;
        let readers = std::thread::available_parallelism()
            .map_or(4, |n| n.get() * 2)
            .max(4);
        let reader = sqlite_pool(config.pool_size(readers as u32))
            .connect(url)
            .await
            .map_err(Error::from)?;
        Ok(Db {
            reader,
            writer,
            backend: Backend::Sqlite,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The pool for reads; on PostgreSQL the same pool as writes.
    pub fn reader(&self) -> &AnyPool {
        &self.reader
    }

    /// Starts a write transaction.
    pub async fn begin(&self) -> Result<Tx> {
        let tx = match self.backend {
            Backend::Sqlite => self.writer.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.writer.begin().await?,
        };
        Ok(tx)
    }

    /// Starts a read-only transaction whose statements all see one snapshot of the
    /// database (SQLite: a deferred transaction on a reader; PostgreSQL: REPEATABLE READ).
    pub async fn begin_read(&self) -> Result<Tx> {
        let tx = match self.backend {
            Backend::Sqlite => self.reader.begin_with("BEGIN").await?,
            Backend::Postgres => {
                self.reader
                    .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await?
            }
        };
        Ok(tx)
    }

    /// Applies pending migrations and returns those applied now.
    pub async fn migrate(&self) -> Result<Vec<AppliedMigration>> {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
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
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
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
        self.reader.close().await;
        self.writer.close().await;
    }
}

fn sqlite_pool(max: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max)
        .min_connections(0)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                conn.execute(
                    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;",
                )
                .await?;
                Ok(())
            })
        })
}

/// The file path inside a `sqlite:` URL, if it names a file.
pub(crate) fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then_some(path)
}

/// Converts a stored 0/1 to a boolean.
pub fn flag(value: i64) -> bool {
    value != 0
}

/// Converts a boolean to its stored 0/1.
pub fn bit(value: bool) -> i64 {
    i64::from(value)
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
