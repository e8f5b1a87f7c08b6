//! The core on a database of its own: SQLite in a temporary folder by default, or a new
//! database on the PostgreSQL server that `TEST_DATABASE_URL` names, dropped afterwards.
//! No server and no mail sink: these tests call core's operations as the HTTP handlers,
//! the console and the CLI do, with an [`Actor`] for each caller.

use chrono::{DateTime, Utc};
use langcamp_core::users::NewUser;
use langcamp_core::{Actor, Clock, Config, Langcamp, Role};
use langcamp_testkit::{TestDatabase, database};

pub struct TestCore {
    pub core: Langcamp,
    pub clock: Clock,
    // Dropped after `core` (fields drop in order): the folder and database go last.
    _database: TestDatabase,
}

impl TestCore {
    /// The core on the system clock.
    pub async fn start() -> TestCore {
        TestCore::on_clock(Clock::System, &[]).await
    }

    /// The core on a manual clock at `now` (move it with `clock.set`).
    pub async fn at(now: DateTime<Utc>) -> TestCore {
        TestCore::on_clock(Clock::manual(now), &[]).await
    }

    /// The core with a pool of one connection (on SQLite the writer is one anyway): while
    /// the test holds it, every write waits for it.
    pub async fn with_one_connection() -> TestCore {
        TestCore::on_clock(Clock::System, &[("DATABASE_MAX_CONNECTIONS", "1")]).await
    }

    async fn on_clock(clock: Clock, overrides: &[(&str, &str)]) -> TestCore {
        let database = TestDatabase::create_migrated("lc_core").await;
        let config = {
            let vars = database.vars();
            Config::from_lookup(|name: &str| {
                overrides
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
                    .or_else(|| vars(name))
            })
            .expect("test configuration")
        };
        let core = Langcamp::connect(config, clock.clone())
            .await
            .expect("connect to the test database");
        core.migrate().await.expect("migrate the test database");
        TestCore {
            core,
            clock,
            _database: database,
        }
    }

    /// A new user with `role` and a complete profile, and the operator acting as them:
    /// the caller of a signed-in request, without a sign-in.
    pub async fn user(&self, email: &str, role: Role) -> Actor {
        let user = self
            .core
            .create_user(
                &Actor::Operator,
                NewUser::new(email, role, Some("Test Person")).expect("a valid user"),
            )
            .await
            .expect("create the user");
        self.core
            .act_as(&Actor::Operator, &user.typed_id())
            .await
            .expect("act as the new user")
    }

    /// Runs one SQL statement in a transaction of its own.
    pub async fn sql(&self, statement: &'static str) {
        let mut tx = self.core.db().begin().await.expect("begin");
        sqlx::query(statement)
            .execute(&mut *tx)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
        tx.commit().await.expect("commit");
    }

    /// The number that a `SELECT COUNT(*)` statement reads.
    pub async fn count(&self, statement: &'static str) -> i64 {
        sqlx::query_scalar(statement)
            .fetch_one(self.core.db().reader())
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"))
    }

    /// Runs `statement` around the CHECK constraint `check` of `table`, on a connection of
    /// its own ([`database::write_around_check`]).
    pub async fn write_around_check(&self, table: &str, check: &str, statement: &'static str) {
        let url = self.core.config().database_url.expose();
        database::write_around_check(url, (table, check), statement, &[]).await;
    }
}
