//! A database for one test: a file in the test's folder on SQLite, or a new database on the
//! PostgreSQL server that `TEST_DATABASE_URL` names. The same tests run on both; the
//! PostgreSQL databases are dropped afterwards so runs do not fill the shared server's disk.

use std::path::{Path, PathBuf};

use sqlx::{Connection, Executor};

/// The PostgreSQL server of this run, if any.
fn server() -> Option<String> {
    std::env::var("TEST_DATABASE_URL")
        .ok()
        .filter(|url| url.starts_with("postgres"))
}

/// A new database URL: `langcamp.db` in `data_dir` on SQLite, or a new database named
/// `<prefix>_<uuid>` on the PostgreSQL server of `TEST_DATABASE_URL` (its query string,
/// such as `sslmode`, carried over). Whoever creates one drops it with [`drop_database`].
pub async fn create_database(data_dir: &Path, prefix: &str) -> String {
    let Some(server) = server() else {
        return format!(
            "sqlite://{}?mode=rwc",
            data_dir.join("langcamp.db").display()
        );
    };
    new_database(&server, prefix, None).await
}

/// A new database URL as [`create_database`] makes, with the schema already in place on
/// PostgreSQL: a copy of a template database migrated once per set of migration files
/// (`lc_template_<hash>`), in less than half the time of migrating an empty one (about
/// 0.19 s against 0.12 s to create plus 0.3 s to migrate). A test that migrates it again
/// finds nothing to apply. On SQLite the file is made by whoever opens it, as before.
pub async fn create_migrated_database(data_dir: &Path, prefix: &str) -> String {
    let Some(server) = server() else {
        return create_database(data_dir, prefix).await;
    };
    let template = postgres_template(&server).await;
    new_database(&server, prefix, Some(&template)).await
}

/// Creates `<prefix>_<uuid>` on `server`, empty or a copy of `template`, and returns its URL.
async fn new_database(server: &str, prefix: &str, template: Option<&str>) -> String {
    let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
    let statement = match template {
        Some(template) => format!("CREATE DATABASE {name} TEMPLATE {template}"),
        None => format!("CREATE DATABASE {name}"),
    };
    let mut conn = sqlx::PgConnection::connect(server)
        .await
        .expect("connect to TEST_DATABASE_URL");
    sqlx::Executor::execute(&mut conn, sqlx::AssertSqlSafe(statement))
        .await
        .expect("create a test database");
    conn.close().await.expect("close");
    database_url(server, &name)
}

/// The name of the migrated template database for this build's PostgreSQL migrations,
/// made on first use. Made under a name of its own and renamed only once migrated, so a
/// copy never sees half a schema; when two runs make one at once, the first rename wins
/// and the other drops its own. A test process looks it up once.
async fn postgres_template(server: &str) -> String {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let name = format!("lc_template_{}", migrations_hash());
            let mut conn = sqlx::PgConnection::connect(server)
                .await
                .expect("connect to TEST_DATABASE_URL");
            if !database_exists(&mut conn, &name).await {
                let building = format!("{name}_{}", uuid::Uuid::new_v4().simple());
                let execute = |statement: String| sqlx::AssertSqlSafe(statement);
                sqlx::Executor::execute(&mut conn, execute(format!("CREATE DATABASE {building}")))
                    .await
                    .expect("create the template database");
                let mut template = sqlx::PgConnection::connect(&database_url(server, &building))
                    .await
                    .expect("connect to the template database");
                // Read when the tests run, as the hash is, so both see the same files.
                sqlx::migrate::Migrator::new(migrations_dir())
                    .await
                    .expect("the migrations")
                    .run(&mut template)
                    .await
                    .expect("migrate the template database");
                template.close().await.expect("close");
                // A closed connection's server process may still be leaving the database
                // for a moment, and the rename waits for it; if another run made the
                // template meanwhile, that one is used and this one dropped.
                for _ in 0..250 {
                    let renamed = sqlx::Executor::execute(
                        &mut conn,
                        execute(format!("ALTER DATABASE {building} RENAME TO {name}")),
                    )
                    .await;
                    if renamed.is_ok() {
                        break;
                    }
                    if database_exists(&mut conn, &name).await {
                        let _ = sqlx::Executor::execute(
                            &mut conn,
                            execute(format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)")),
                        )
                        .await;
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            }
            conn.close().await.expect("close");
            name
        })
        .await
        .clone()
}

async fn database_exists(conn: &mut sqlx::PgConnection, name: &str) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(name)
        .fetch_one(conn)
        .await
        .expect("look for a database")
}

fn migrations_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations/postgres")
}

/// A short hash of the PostgreSQL migration files (names and contents), so that a template
/// made by a run with other migrations is never copied.
fn migrations_hash() -> String {
    use sha2::{Digest, Sha256};
    let mut files: Vec<PathBuf> = std::fs::read_dir(migrations_dir())
        .expect("the migrations folder")
        .map(|entry| entry.expect("a migration file").path())
        .collect();
    files.sort();
    let mut hash = Sha256::new();
    for file in files {
        hash.update(file.file_name().unwrap_or_default().as_encoded_bytes());
        hash.update(std::fs::read(&file).expect("a migration file"));
    }
    hash.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The URL of database `name` on `server`, its query string (such as `sslmode`) carried over.
fn database_url(server: &str, name: &str) -> String {
    let (base, query) = server
        .split_once('?')
        .map_or((server, None), |(b, q)| (b, Some(q)));
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

/// Drops a PostgreSQL database made by [`create_database`] with `prefix`; any other URL
/// (SQLite, a database the test did not make) is left alone. Safe to call from `Drop`
/// inside a test's runtime: the async work runs on a thread and a runtime of its own.
pub fn drop_database(database_url: &str, prefix: &str) {
    let Some(server) = server() else {
        return;
    };
    let Some(name) = database_url
        .split('?')
        .next()
        .and_then(|u| u.rsplit('/').next())
        .filter(|name| name.starts_with(&format!("{prefix}_")))
        .map(str::to_owned)
    else {
        return;
    };
    let statement = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
    let _ = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        runtime.block_on(async {
            let mut conn = sqlx::PgConnection::connect(&server).await.ok()?;
            sqlx::Executor::execute(&mut conn, sqlx::AssertSqlSafe(statement))
                .await
                .ok()
        })
    })
    .join();
}

/// The signing secret of every test process, so that a second process on a test's
/// database accepts the tokens the first one issued.
pub const JWT_SECRET: &str = "test-secret-for-langcamp-0123456789";

/// What a test process is configured with besides the defaults: its database, its folder
/// and [`JWT_SECRET`]; a lookup for `langcamp_core::Config::from_lookup`.
pub fn process_vars(database_url: &str, data_dir: &Path) -> impl Fn(&str) -> Option<String> {
    let (url, dir) = (
        database_url.to_owned(),
        data_dir.to_string_lossy().into_owned(),
    );
    move |name| match name {
        "DATABASE_URL" => Some(url.clone()),
        "DATA_DIR" => Some(dir.clone()),
        "JWT_SECRET" => Some(JWT_SECRET.to_owned()),
        _ => None,
    }
}

/// A new temporary folder `langcamp-<prefix>-<uuid>` for one test's files.
pub fn temp_dir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "langcamp-{prefix}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// A test's folder and database, both removed when it is dropped.
pub struct TestDatabase {
    dir: PathBuf,
    url: String,
    prefix: String,
}

impl TestDatabase {
    /// A new folder and database; `prefix` names both (`lc_cli` makes `lc_cli_<uuid>`).
    pub async fn create(prefix: &str) -> TestDatabase {
        let dir = temp_dir(prefix);
        let url = create_database(&dir, prefix).await;
        TestDatabase::at(dir, url, prefix)
    }

    /// As [`TestDatabase::create`], with the schema in place on PostgreSQL
    /// ([`create_migrated_database`]): for a test that migrates before anything else.
    pub async fn create_migrated(prefix: &str) -> TestDatabase {
        let dir = temp_dir(prefix);
        let url = create_migrated_database(&dir, prefix).await;
        TestDatabase::at(dir, url, prefix)
    }

    fn at(dir: PathBuf, url: String, prefix: &str) -> TestDatabase {
        TestDatabase {
            dir,
            url,
            prefix: prefix.to_owned(),
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_postgres(&self) -> bool {
        self.url.starts_with("postgres")
    }

    /// The configuration of a process on this database and folder ([`process_vars`]).
    pub fn vars(&self) -> impl Fn(&str) -> Option<String> {
        process_vars(&self.url, &self.dir)
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        drop_database(&self.url, &self.prefix);
    }
}

/// Runs `statement` on a connection of its own to `database_url`, around the CHECK
/// constraint `check` of `table` (dropped on PostgreSQL, ignored by that connection on
/// SQLite): a value this build does not know, as a newer release or a hand edit would
/// write it. `binds` are bound as `$1`, `$2`, ...
pub async fn write_around_check(
    database_url: &str,
    (table, check): (&str, &str),
    statement: &'static str,
    binds: &[&str],
) {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(database_url)
        .await
        .expect("connect");
    let around = if database_url.starts_with("postgres") {
        format!("ALTER TABLE {table} DROP CONSTRAINT {check}")
    } else {
        "PRAGMA ignore_check_constraints = ON".to_owned()
    };
    conn.execute(sqlx::AssertSqlSafe(around))
        .await
        .expect("step around the check");
    let query = binds
        .iter()
        .fold(sqlx::query(statement), |query, value| query.bind(*value));
    query
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
    conn.close().await.expect("close");
}

/// Fails unless every connection `pool` holds is outside a transaction when it is handed
/// out (issue #39: a caller that stopped waiting must not leave one behind). All of them
/// are taken at once, so each is checked; `after` says when, for the failure message.
///
/// PostgreSQL: `now()` is the time its transaction began, so a statement alone (its own
/// transaction) sees `now() = statement_timestamp()`, and one run inside a transaction
/// left open does not. It is sent as a simple query: in the extended protocol the Execute
/// message gets a statement time of its own, after the Bind that began the transaction.
/// SQLite: the connection says whether it is in a transaction.
pub async fn assert_no_connection_inside_a_transaction(pool: &sqlx::AnyPool, after: &str) {
    // A cancelled transaction's connection goes back to the pool in the background.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let mut held = Vec::new();
    for _ in 0..pool.size().max(1) {
        held.push(pool.acquire().await.expect("a pooled connection"));
    }
    for conn in &mut held {
        let own_transaction = if conn.backend_name().eq_ignore_ascii_case("postgresql") {
            let row = sqlx::raw_sql(
                "SELECT CASE WHEN now() = statement_timestamp() THEN 1 ELSE 0 END::BIGINT AS own",
            )
            .fetch_one(&mut **conn)
            .await
            .expect("the check runs");
            sqlx::Row::get::<i64, _>(&row, "own") == 1
        } else {
            !conn.is_in_transaction()
        };
        assert!(
            own_transaction,
            "a connection was handed out inside a transaction {after}"
        );
    }
}

/// Issue #39's count after clients that hung up: no course without its `course.created`
/// audit entry, no entry without its course, and never two entries for one course (a
/// hang-up split no create). Returns how many courses there are.
pub async fn assert_every_course_has_its_own_entry(pool: &sqlx::AnyPool) -> i64 {
    let count = |sql: &'static str| async move {
        sqlx::query_scalar::<_, i64>(sql)
            .fetch_one(pool)
            .await
            .expect("a count")
    };
    let courses = count("SELECT COUNT(*) FROM courses").await;
    let entries = count("SELECT COUNT(*) FROM audit_events WHERE action = 'course.created'").await;
    let paired = count(
        "SELECT COUNT(*) FROM courses c
         WHERE (SELECT COUNT(*) FROM audit_events a
                WHERE a.action = 'course.created' AND a.target_id = c.id) = 1",
    )
    .await;
    assert_eq!(
        courses, entries,
        "no course without its entry, no entry without its course"
    );
    assert_eq!(paired, courses, "each course has exactly its own entry");
    courses
}

/// Stores a sign-in code for `email` as `POST /auth/otp/request` stores it, by its hash
/// (`Keyring::otp_hash` with the server's key), valid for a minute from `now` (ms) and in
/// place of any code the address had: a sign-in through core without reading a mail.
pub async fn store_sign_in_code(
    conn: &mut sqlx::AnyConnection,
    email: &str,
    code_hash: &str,
    now: i64,
) {
    sqlx::query(
        "INSERT INTO otp_codes (email, code_hash, attempts, created_at, expires_at)
         VALUES ($1, $2, 0, $3, $4)
         ON CONFLICT (email) DO UPDATE SET code_hash = excluded.code_hash, attempts = 0,
             created_at = excluded.created_at, expires_at = excluded.expires_at",
    )
    .bind(email)
    .bind(code_hash)
    .bind(now)
    .bind(now + 60_000)
    .execute(conn)
    .await
    .expect("store a sign-in code");
}
