//! A quick start: when the database already has every migration this build embeds, the
//! migrator (its lock, its bookkeeping-table DDL, one round trip each) is not run at all;
//! one query compares versions and checksums instead. On PostgreSQL each of the
//! migrator's statements is a network round trip, and start-up to the first answer was
//! 205 ms; the pool itself is opened lazily (`db.rs`), so a server serves as soon as its
//! listener is bound and this check has passed.

use std::collections::HashMap;

use sqlx::{AnyConnection, Row};

use crate::domain::error::Error;
use crate::platform::db::{Db, migrations};

/// Why `langcamp serve` may not start.
#[derive(Debug)]
pub enum StartupProblem {
    /// No connection to the database.
    Unreachable(Error),
    /// Connected, but a write cannot succeed (read-only file or mount, full disk, standby).
    NotWritable(Error),
}

impl Db {
    /// Whether every embedded migration is applied, successfully and unchanged, and no
    /// other one is. Any doubt (no bookkeeping table yet, an error) answers `false`, and
    /// the migrator then runs and decides as it always did.
    pub(crate) async fn migrations_current(&self) -> bool {
        match self.reader().acquire().await {
            Ok(mut conn) => self.migrations_current_on(&mut conn).await,
            Err(_) => false,
        }
    }

    /// `langcamp serve`'s checks before it listens, on one connection: that the database
    /// answers, that it can be written, and whether every migration is applied (`Ok(true)`;
    /// `Ok(false)`: run the migrations). One connection, because each new one to
    /// PostgreSQL is a TCP and usually a TLS handshake (45 to 50 ms each here), and a
    /// connection handed back to the pool is only available again after its asynchronous
    /// release check (`db.rs`): three checks one after another opened two connections.
    pub async fn check_before_serving(&self) -> Result<bool, StartupProblem> {
        let mut conn = self
            .writer_connection()
            .await
            .map_err(StartupProblem::Unreachable)?;
        self.check_writable_on(&mut conn)
            .await
            .map_err(StartupProblem::NotWritable)?;
        Ok(self.migrations_current_on(&mut conn).await)
    }

    async fn migrations_current_on(&self, conn: &mut AnyConnection) -> bool {
        let migrator = migrations(self.backend());
        let Ok(rows) =
            sqlx::query("SELECT version, checksum FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(&mut *conn)
                .await
        else {
            return false;
        };
        let mut applied = HashMap::new();
        for row in &rows {
            // A failed (dirty) migration is left out here, so it reads as not applied.
            let (Ok(version), Ok(checksum)) = (
                row.try_get::<i64, _>("version"),
                row.try_get::<Vec<u8>, _>("checksum"),
            ) else {
                return false;
            };
            applied.insert(version, checksum);
        }
        let embedded: Vec<_> = migrator
            .iter()
            .filter(|m| m.migration_type.is_up_migration())
            .collect();
        let newest = embedded.iter().map(|m| m.version).max().unwrap_or(0);
        // Every migration of this build applied as written; any other applied one is a
        // newer release's (a rolling upgrade: expand-only beside this build), never one
        // in between, which would be a schema this build was not made for.
        embedded
            .iter()
            .all(|m| applied.get(&m.version).is_some_and(|c| *c == *m.checksum))
            && applied
                .keys()
                .all(|version| *version > newest || embedded.iter().any(|m| m.version == *version))
    }
}
