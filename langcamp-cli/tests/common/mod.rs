//! What the test files of the binary share: a test's folder and database, and the
//! `langcamp` binary set to run on them.

use std::process::{Command, Stdio};

use langcamp_testkit::TestDatabase;

/// A test's folder and database (removed when it ends), for the binary to run on.
pub struct Env {
    pub db: TestDatabase,
}

impl Env {
    /// A fresh database; `prefix` names the test file's PostgreSQL databases.
    pub async fn create(prefix: &str) -> Env {
        Env {
            db: TestDatabase::create(prefix).await,
        }
    }

    /// The binary with `args` on this folder and database, logging only warnings and
    /// reading nothing from stdin; each test file adds the rest of its environment.
    pub fn langcamp(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_langcamp"));
        command
            .args(args)
            .env("DATABASE_URL", self.db.url())
            .env("DATA_DIR", self.db.dir())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null());
        command
    }
}
