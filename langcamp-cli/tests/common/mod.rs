//! What the command-line test binaries share: a fresh database for one test.

use std::path::Path;

use sqlx::Connection;

/// A new database URL: a file in `data_dir` on SQLite, or a new database named
/// `<prefix>_<uuid>` on the PostgreSQL server of `TEST_DATABASE_URL`.
pub async fn fresh_database(data_dir: &Path, prefix: &str) -> String {
    match std::env::var("TEST_DATABASE_URL") {
        Ok(server) if server.starts_with("postgres") => {
            let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
            let mut conn = sqlx::PgConnection::connect(&server).await.expect("connect");
            sqlx::Executor::execute(
                &mut conn,
                sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")),
            )
            .await
            .expect("create database");
            let base = server.split('?').next().unwrap_or(&server);
            format!("{}/{name}", base.rsplit_once('/').map_or(base, |(b, _)| b))
        }
        _ => format!(
            "sqlite://{}?mode=rwc",
            data_dir.join("langcamp.db").display()
        ),
    }
}
