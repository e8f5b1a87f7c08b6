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

/// Drops a PostgreSQL test database made by [`fresh_database`] with `prefix`, so runs do
/// not fill the disk (from `Drop`, so on a thread of its own with its own runtime).
pub fn drop_database(database_url: &str, prefix: &str) {
    let (Ok(server), Some(name)) = (
        std::env::var("TEST_DATABASE_URL"),
        database_url
            .rsplit('/')
            .next()
            .filter(|n| n.starts_with(&format!("{prefix}_")))
            .map(str::to_owned),
    ) else {
        return;
    };
    let _ = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        runtime.block_on(async {
            let mut conn = sqlx::PgConnection::connect(&server).await.ok()?;
            let statement = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
            sqlx::Executor::execute(&mut conn, sqlx::AssertSqlSafe(statement))
                .await
                .ok()
        })
    })
    .join();
}
