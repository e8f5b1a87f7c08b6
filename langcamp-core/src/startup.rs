//! A quick start: when the database already has every migration this build embeds, the
//! migrator (its lock, its bookkeeping-table DDL, one round trip each) is not run at all;
//! one query compares versions and checksums instead. On PostgreSQL each of the
//! migrator's statements is a network round trip, and start-up to the first answer was
//! 205 ms; the pool itself is opened lazily (`db.rs`), so a server serves as soon as its
//! listener is bound and this check has passed.

use std::collections::HashMap;

use sqlx::Row;

use crate::Langcamp;
use crate::db::{Backend, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};

impl Langcamp {
    /// Whether every embedded migration is applied, successfully and unchanged, and no
    /// other one is. Any doubt (no bookkeeping table yet, an error) answers `false`, and
    /// the migrator then runs and decides as it always did.
    pub(crate) async fn migrations_current(&self) -> bool {
        let migrator = match self.db().backend() {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        let Ok(rows) =
            sqlx::query("SELECT version, checksum FROM _sqlx_migrations WHERE success = TRUE")
                .fetch_all(self.db().reader())
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
        embedded.len() == applied.len()
            && embedded
                .iter()
                .all(|m| applied.get(&m.version).is_some_and(|c| *c == *m.checksum))
    }
}
