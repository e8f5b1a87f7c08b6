//! `list-bench`: every admin list over HTTP at scale (issue #54), on PostgreSQL or SQLite.
//!
//! It fills a database the way the service writes it: the generator's lists shape
//! (`langcamp_bench::Shape::Lists`: 1M users, 10M placement results, 1M contact requests,
//! 1M audit entries at `full`; a tenth at `tenth`, a hundredth at `hundredth`) in the
//! service's own tables and columns, through SQL with the database's triggers on (the
//! dashboard's rollups stay exact as the rows go in), 5,000 rows a transaction, and says
//! how many rows per second each table took. It then serves the data with a real
//! `langcamp serve`, signs the superadmin in the way a client does (a one-time code stored
//! for its address, then `POST /auth/otp/verify`), and times each admin list over HTTP:
//! 3 warm-up and 15 measured calls of each request, one after the other on one keep-alive
//! connection. It prints a markdown table of the median and p90 and the answer's
//! `pagination.totalItems`; `--verify-totals` checks each total against a `COUNT(*)` of
//! the database and fails when one differs.
//!
//! ```text
//! cargo build --release -p langcamp-cli
//! cargo build --release -p langcamp-bench --bin list-bench
//! target/release/list-bench --backend postgres --scale tenth --verify-totals
//! target/release/list-bench --backend sqlite --scale hundredth --keep
//! ```
//!
//! The PostgreSQL database is `langcamp_list_<scale>` on the server of `--postgres-url`,
//! dropped and filled again unless `--keep` finds it holding the data of its scale. See
//! `docs/BENCHMARKS.md`. Not a test: CI builds it and never runs it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{DateTime, TimeDelta, Utc};
use clap::{Parser, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use langcamp_bench::catalogue::{OTP_CODE, test_id};
use langcamp_bench::{
    AUDIT_DAYS, LEVELS, LIST_LANGUAGES, LIST_TESTS, Latency, Scale, audit_action, contact_email,
    generate, is_registered, name_tag, student_email, user_id,
};
use langcamp_core::platform::keyring::Keyring;
use langcamp_core::{Actor, Clock, Config, Langcamp};
use sqlx::{AssertSqlSafe, Connection, Executor};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    Postgres,
    Sqlite,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Size {
    Full,
    Tenth,
    Hundredth,
}

/// Times every admin list over HTTP on a generated database.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[arg(long, value_enum)]
    backend: Backend,
    /// full: 1M users, 10M results, 1M contacts, 1M audit entries (for PostgreSQL);
    /// tenth (for SQLite) and hundredth (quick runs): that divided by 10 and 100.
    #[arg(long, value_enum)]
    scale: Size,
    /// A PostgreSQL server; the bench creates (and replaces) `langcamp_list_<scale>` on it.
    #[arg(
        long,
        env = "BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5433/postgres"
    )]
    postgres_url: String,
    /// Where the SQLite database (`<dir>/sqlite-<scale>/langcamp.db`) and the server's
    /// DATA_DIR go.
    #[arg(long, default_value_os_t = std::env::temp_dir().join("langcamp-list-bench"))]
    dir: PathBuf,
    /// The `langcamp` binary to serve with.
    #[arg(long, default_value = "target/release/langcamp")]
    langcamp: PathBuf,
    /// Reuse a database that already holds the data of its scale instead of filling it.
    #[arg(long)]
    keep: bool,
    /// Check every `totalItems` against a `COUNT(*)` in the database (and the dashboard's
    /// rollups against a recount); fail if one differs.
    #[arg(long)]
    verify_totals: bool,
    /// After the latencies, load each request for this many seconds from `--connections`
    /// connections at once and report requests a second and the CPU each request cost the
    /// server and the database (0: skip).
    #[arg(long, default_value_t = 0)]
    throughput: u64,
    /// Connections at once for `--throughput`.
    #[arg(long, default_value_t = 32)]
    connections: usize,
}

/// "Now" of the generated data: a fixed time, so that runs on different days compare.
const NOW: &str = "2026-12-01T12:00:00Z";
const SECRET: &str = "list-bench-secret-0123456789abcdef";
/// Calls of each request before the measured ones, and measured ones.
const WARM_UP: usize = 3;
const MEASURED: usize = 15;

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args).await {
        eprintln!("list-bench: {e}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Fallible<()> {
    let now: DateTime<Utc> = DateTime::parse_from_rfc3339(NOW)?.with_timezone(&Utc);
    let scale = match args.scale {
        Size::Full => Scale::LISTS_FULL,
        Size::Tenth => Scale::LISTS_FULL.divided("tenth", 10),
        Size::Hundredth => Scale::LISTS_FULL.divided("hundredth", 100),
    };
    let backend = match args.backend {
        Backend::Postgres => "postgres",
        Backend::Sqlite => "sqlite",
    };
    let base = args.dir.join(format!("{backend}-{}", scale.name));
    let data_dir = base.join("data");
    let mut url = database(args, scale, &base, args.keep).await?;
    let mut app = open(&url, &data_dir, now).await?;
    if args.keep && holds(&app, scale).await? {
        eprintln!("list-bench: {backend}/{}: reusing the data", scale.name);
    } else {
        if args.keep {
            eprintln!(
                "list-bench: {backend}/{}: the database does not hold the data of its scale; filling it again",
                scale.name
            );
            app.db().close().await;
            url = database(args, scale, &base, false).await?;
            app = open(&url, &data_dir, now).await?;
        }
        fill(&app, backend, scale, now).await?;
    }
    // SQLite indexes rows for search in the background (the server's indexer): done here,
    // so that the lists are measured on a database whose indexer has caught up.
    let started = Instant::now();
    let indexed = app.index_searches().await?;
    if indexed > 0 {
        eprintln!(
            "list-bench: {backend}/{}: {indexed} rows indexed for search in {:.1} s",
            scale.name,
            started.elapsed().as_secs_f64()
        );
    }
    prepare_sign_in(&app).await?;
    app.db().close().await;

    let probes = probes(scale, now);
    let mut server = Server::start(&args.langcamp, &url, &data_dir)?;
    server.wait_ready().await?;
    let load = Load {
        duration: Duration::from_secs(args.throughput),
        connections: args.connections,
        server: server.child.id(),
        database_is_postgres: args.backend == Backend::Postgres,
    };
    let outcome = async {
        let mut client = signed_in(server.addr).await?;
        let measured = measure(&mut client, &probes).await?;
        let loaded = if args.throughput == 0 {
            Vec::new()
        } else {
            throughput(server.addr, client.token.as_deref(), &probes, &load).await?
        };
        Fallible::Ok((measured, loaded))
    }
    .await;
    drop(server);
    let (measured, loaded) = outcome?;

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\n{backend}, scale {} ({} users, {} results, {} contacts, {} audit entries), {WARM_UP} warm-up + {MEASURED} measured calls each, load average {}\n",
        scale.name,
        scale.users,
        scale.results,
        scale.contacts,
        scale.audit_events,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    );
    println!("| request | median ms | p90 ms | totalItems |");
    println!("|---|---:|---:|---:|");
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    for (probe, (latency, answer)) in probes.iter().zip(&measured) {
        let total = match answer {
            Answer::Total(n) => n.to_string(),
            Answer::Listed(n) => format!("({n} listed)"),
            Answer::Other => "—".to_owned(),
        };
        println!(
            "| `GET {}` | {} | {} | {total} |",
            probe.path,
            ms(latency.p50),
            ms(latency.p90)
        );
    }

    if !loaded.is_empty() {
        println!(
            "\n{} connections at once, {} s per request; CPU ms per request of the server process and of every `postgres` process (on SQLite the database works inside the server)\n",
            args.connections, args.throughput
        );
        println!("| request | requests/s | server CPU ms | database CPU ms |");
        println!("|---|---:|---:|---:|");
        for (probe, rate) in probes.iter().zip(&loaded) {
            println!(
                "| `GET {}` | {:.0} | {:.2} | {} |",
                probe.path,
                rate.per_second,
                rate.server_cpu_ms,
                match rate.database_cpu_ms {
                    Some(ms) => format!("{ms:.2}"),
                    None => "—".to_owned(),
                }
            );
        }
    }

    if args.verify_totals {
        let app = open(&url, &data_dir, now).await?;
        let verified = verify(&app, &probes, &measured).await;
        app.db().close().await;
        verified?;
    }
    Ok(())
}

/// The database of `scale`: a PostgreSQL database `langcamp_list_<scale>` or a SQLite file
/// under `base`, made empty unless `keep`. Its URL.
async fn database(args: &Args, scale: Scale, base: &Path, keep: bool) -> Fallible<String> {
    match args.backend {
        Backend::Sqlite => {
            if !keep && base.exists() {
                std::fs::remove_dir_all(base)?;
            }
            std::fs::create_dir_all(base)?;
            Ok(format!(
                "sqlite://{}?mode=rwc",
                base.join("langcamp.db").display()
            ))
        }
        Backend::Postgres => {
            let name = format!("langcamp_list_{}", scale.name);
            let server = &args.postgres_url;
            let mut conn = sqlx::PgConnection::connect(server).await?;
            let exists: Option<i32> =
                sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
                    .bind(&name)
                    .fetch_optional(&mut conn)
                    .await?;
            if !(keep && exists.is_some()) {
                conn.execute(AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .await?;
                conn.execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .await?;
            }
            conn.close().await?;
            let (path, query) = server
                .split_once('?')
                .map_or((server.as_str(), None), |(p, q)| (p, Some(q)));
            let path = path.rsplit_once('/').map_or(path, |(p, _)| p);
            Ok(match query {
                Some(q) => format!("{path}/{name}?{q}"),
                None => format!("{path}/{name}"),
            })
        }
    }
}

/// The service's core on `url`, migrated.
async fn open(url: &str, data_dir: &Path, now: DateTime<Utc>) -> Fallible<Langcamp> {
    std::fs::create_dir_all(data_dir)?;
    let (url, dir) = (url.to_owned(), data_dir.to_string_lossy().into_owned());
    let config = Config::from_lookup(|name| match name {
        "DATABASE_URL" => Some(url.clone()),
        "DATA_DIR" => Some(dir.clone()),
        "JWT_SECRET" => Some(SECRET.into()),
        _ => None,
    })?;
    let app = Langcamp::connect(config, Clock::manual(now)).await?;
    app.migrate().await?;
    Ok(app)
}

/// The tables the generator fills, with the rows each holds at `scale`.
fn expected_rows(scale: Scale) -> [(&'static str, u64); 5] {
    [
        ("users", scale.users),
        ("test_results", scale.results),
        ("contacts", scale.contacts),
        ("material_assignments", scale.assignments),
        ("audit_events", scale.audit_events),
    ]
}

/// Whether the database holds the data of `scale`: each table its number of rows (the
/// audit trail at least: the server may add to it).
async fn holds(app: &Langcamp, scale: Scale) -> Fallible<bool> {
    for (table, rows) in expected_rows(scale) {
        let have: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(app.db().reader())
            .await?;
        let have = u64::try_from(have)?;
        if have < rows || (table != "audit_events" && have != rows) {
            eprintln!("list-bench: {table} holds {have} rows, the scale {rows}");
            return Ok(false);
        }
    }
    Ok(true)
}

/// Fills the empty database and gives it the statistics a steady state has; reports the
/// rows per second of each table on stderr.
async fn fill(app: &Langcamp, backend: &str, scale: Scale, now: DateTime<Utc>) -> Fallible<()> {
    eprintln!("list-bench: {backend}/{}: filling...", scale.name);
    let started = Instant::now();
    let mut rows = 0;
    generate(app.db(), scale, now, |table| {
        rows += table.rows;
        eprintln!(
            "list-bench: {backend}/{}: {:>22} {:>10} rows in {:>8.1} s = {:>8.0} rows/s",
            scale.name,
            table.table,
            table.rows,
            table.took.as_secs_f64(),
            table.rows_per_second()
        );
    })
    .await?;
    let took = started.elapsed();
    eprintln!(
        "list-bench: {backend}/{}: {rows} rows in {:.1} s = {:.0} rows/s",
        scale.name,
        took.as_secs_f64(),
        rows as f64 / took.as_secs_f64()
    );
    let started = Instant::now();
    settle(app).await?;
    eprintln!(
        "list-bench: {backend}/{}: statistics in {:.1} s",
        scale.name,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// What a database that has run for a while has: on PostgreSQL what autovacuum gives
/// (statistics, and a visibility map that lets index-only scans skip the table; repeated
/// until complete, as a transaction open elsewhere on the server can hold it back), on
/// SQLite the statistics of `ANALYZE`, as an operator runs it.
async fn settle(app: &Langcamp) -> Fallible<()> {
    let db = app.db().reader();
    if app.db().backend() != langcamp_core::platform::db::Backend::Postgres {
        db.execute("ANALYZE").await?;
        return Ok(());
    }
    for _ in 0..30 {
        db.execute("VACUUM (ANALYZE)").await?;
        let hidden: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(relpages - relallvisible), 0) AS BIGINT) FROM pg_class
             WHERE relname IN ('users', 'test_results', 'contacts', 'audit_events', 'material_assignments')",
        )
        .fetch_one(db)
        .await?;
        if hidden == 0 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    Err("VACUUM could not mark the tables all-visible (a long transaction on the server?)".into())
}

/// Stores a one-time code for the superadmin's address, as `POST /auth/otp/request`
/// would have (hashed with the server's key), valid for an hour of the real clock: the
/// server runs on it.
async fn prepare_sign_in(app: &Langcamp) -> Fallible<()> {
    let email = student_email(1);
    let now = Utc::now().timestamp_millis();
    sqlx::query(
        "INSERT INTO otp_codes (email, code_hash, attempts, created_at, expires_at)
         VALUES ($1, $2, 0, $3, $4)
         ON CONFLICT (email) DO UPDATE SET code_hash = excluded.code_hash, attempts = 0,
             created_at = excluded.created_at, expires_at = excluded.expires_at",
    )
    .bind(&email)
    .bind(Keyring::new(SECRET, &[]).otp_hash(&email, OTP_CODE))
    .bind(now)
    .bind(now + 3_600_000)
    .execute(app.db().reader())
    .await?;
    Ok(())
}

/// One request to time, and how to count in the database what its total should be.
struct Probe {
    path: String,
    /// A `SELECT COUNT(*)` of what the request lists; `None` for an answer without a total.
    count: Option<String>,
}

/// The requests, with search fragments and ids chosen from the generator's formulas so
/// that each filter matches a handful of rows (printed on stderr).
fn probes(scale: Scale, now: DateTime<Utc>) -> Vec<Probe> {
    // Row k of `count` whose number has one digit less than the last row's: the part of
    // its address before the `@`, less the first letter (`tudent424` of
    // `student424@school36.example`), matches rows k and k0 to k9, and no others.
    let number = |count: u64| {
        let digits = count.saturating_sub(1).max(10).to_string().len();
        "424242424242424242"[..digits - 1]
            .parse::<u64>()
            .unwrap_or(4)
    };
    let fragment = |address: String| {
        let local = address.split('@').next().unwrap_or_default();
        local[1..].to_owned()
    };
    let email_fragment = fragment(student_email(number(scale.users)));
    let contact_fragment = fragment(contact_email(number(scale.contacts)));
    // A registered user (so named) whose tag has a letter in its first six characters, so
    // that no address's digits match it.
    let named = (scale.users / 3..scale.users)
        .find(|&n| is_registered(n) && name_tag(n)[..6].chars().any(|c| c.is_ascii_alphabetic()))
        .unwrap_or(0);
    let name_fragment = name_tag(named)[..6].to_owned();
    let student = user_id(scale.users / 2);
    let test = test_id(LIST_TESTS / 3);
    let (level, language) = (LEVELS[2], LIST_LANGUAGES[1].0);
    let action = audit_action(3);
    // A week a month back, inside the trail's days.
    let week_to = now - TimeDelta::days(30);
    let week_from = week_to - TimeDelta::days(7);
    let at = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    eprintln!(
        "list-bench: e-mail fragment {email_fragment:?} (user {}), name fragment {name_fragment:?} \
         (6 of the 8 hex characters of user {named}'s name), contact fragment {contact_fragment:?} \
         (contact {}), user {student}, test {test}, level {level}, language {language}, action \
         {action}, week {} to {} (the trail covers {AUDIT_DAYS} days)",
        number(scale.users),
        number(scale.contacts),
        at(week_from),
        at(week_to),
    );
    let like = |fragment: &str| format!("'%{fragment}%'");
    let users_q = |f: &str| {
        format!(
            "SELECT COUNT(*) FROM users WHERE LOWER(email) LIKE {0} OR LOWER(COALESCE(name, '')) LIKE {0}",
            like(f)
        )
    };
    let (from_ms, to_ms) = (week_from.timestamp_millis(), week_to.timestamp_millis());
    let probe = |path: String, count: Option<String>| Probe { path, count };
    let counted = |path: String, count: String| probe(path, Some(count));
    vec![
        counted(
            "/users?page=1&limit=20".into(),
            "SELECT COUNT(*) FROM users".into(),
        ),
        counted(
            "/users?page=500&limit=20".into(),
            "SELECT COUNT(*) FROM users".into(),
        ),
        counted(
            format!("/users?q={email_fragment}"),
            users_q(&email_fragment),
        ),
        counted(format!("/users?q={name_fragment}"), users_q(&name_fragment)),
        counted(
            "/users?isRegistrationComplete=false".into(),
            "SELECT COUNT(*) FROM users WHERE is_registration_complete = 0".into(),
        ),
        counted(
            "/users?role=admin".into(),
            "SELECT COUNT(*) FROM users WHERE role = 'admin'".into(),
        ),
        counted(
            "/proficiency-tests/admin/results?limit=20".into(),
            "SELECT COUNT(*) FROM test_results".into(),
        ),
        counted(
            "/proficiency-tests/admin/results?page=500&limit=20".into(),
            "SELECT COUNT(*) FROM test_results".into(),
        ),
        counted(
            format!("/proficiency-tests/admin/results?level={level}&targetLanguage={language}"),
            format!(
                "SELECT COUNT(*) FROM test_results WHERE level = '{level}' AND target_language = '{language}'"
            ),
        ),
        counted(
            format!("/proficiency-tests/admin/results?testId={test}"),
            format!("SELECT COUNT(*) FROM test_results WHERE test_id = '{test}'"),
        ),
        counted(
            format!("/proficiency-tests/admin/results?userId={student}"),
            format!("SELECT COUNT(*) FROM test_results WHERE user_id = '{student}'"),
        ),
        // Not paged: the total to check is the length of the list.
        counted(
            format!("/proficiency-tests/admin/results/user/{student}"),
            format!("SELECT COUNT(*) FROM test_results WHERE user_id = '{student}'"),
        ),
        counted(
            "/contact/admin?limit=20".into(),
            "SELECT COUNT(*) FROM contacts".into(),
        ),
        counted(
            "/contact/admin?status=PENDING".into(),
            "SELECT COUNT(*) FROM contacts WHERE status = 'PENDING'".into(),
        ),
        counted(
            format!("/contact/admin?q={contact_fragment}"),
            format!(
                "SELECT COUNT(*) FROM contacts WHERE LOWER(first_name) LIKE {0} OR LOWER(last_name) LIKE {0} OR LOWER(email) LIKE {0}",
                like(&contact_fragment)
            ),
        ),
        counted(
            "/admin/audit?limit=20".into(),
            "SELECT COUNT(*) FROM audit_events".into(),
        ),
        counted(
            format!("/admin/audit?from={}&to={}", at(week_from), at(week_to)),
            format!("SELECT COUNT(*) FROM audit_events WHERE at >= {from_ms} AND at < {to_ms}"),
        ),
        counted(
            format!("/admin/audit?action={action}"),
            format!("SELECT COUNT(*) FROM audit_events WHERE action = '{action}'"),
        ),
        counted(
            "/education-materials?limit=20".into(),
            "SELECT COUNT(*) FROM education_materials".into(),
        ),
        probe("/admin/dashboard".into(), None),
    ]
}

/// What an answer says about its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// `pagination.totalItems` of a page.
    Total(i64),
    /// The length of an unpaged `list`.
    Listed(usize),
    Other,
}

impl Answer {
    fn of(body: &[u8]) -> Fallible<Answer> {
        let value: serde_json::Value = serde_json::from_slice(body)?;
        let data = &value["data"];
        Ok(
            if let Some(total) = data["pagination"]["totalItems"].as_i64() {
                Answer::Total(total)
            } else if let Some(list) = data["list"].as_array() {
                Answer::Listed(list.len())
            } else {
                Answer::Other
            },
        )
    }
}

/// `langcamp serve` on a free port of the loopback, ended when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(bin: &Path, url: &str, data_dir: &Path) -> Fallible<Server> {
        // A port the system just gave out is free: the server binds it a moment later.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let child = Command::new(bin)
            .arg("serve")
            .env("DATABASE_URL", url)
            .env("DATA_DIR", data_dir)
            .env("JWT_SECRET", SECRET)
            .env("HOST", "127.0.0.1")
            .env("PORT", addr.port().to_string())
            .env("STAFF_SECOND_FACTOR", "optional")
            .env("RUST_LOG", "warn")
            // The trail spans the default retention's 400 days back from the data's fixed
            // "now", which the real clock leaves behind: the server's daily purge would
            // start deleting it, and a kept database would no longer hold its scale.
            .env("AUDIT_RETENTION_DAYS", "36500")
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        Ok(Server { child, addr })
    }

    /// Waits for `GET /ready` to answer 200.
    async fn wait_ready(&mut self) -> Fallible<()> {
        let started = Instant::now();
        loop {
            if let Ok(mut client) = Client::connect(self.addr).await
                && let Ok((StatusCode::OK, _)) = client.call(Method::GET, "/ready", None).await
            {
                eprintln!(
                    "list-bench: the server is ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                return Err(format!("langcamp serve exited ({status}) before it was ready").into());
            }
            if started.elapsed() > Duration::from_secs(120) {
                return Err(
                    "langcamp serve did not answer GET /ready with 200 within 120 s".into(),
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTP/1.1 connection to the server, with the caller's bearer token.
struct Client {
    sender: SendRequest<Full<Bytes>>,
    host: String,
    token: Option<String>,
    /// Under load, each request's client address (`X-Forwarded-For`, believed from the
    /// loopback by default): the per-client rate limit measures one admin, not a load.
    forwarded_for: Option<String>,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Fallible<Client> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("list-bench: the connection failed: {e}");
            }
        });
        Ok(Client {
            sender,
            host: addr.to_string(),
            token: None,
            forwarded_for: None,
        })
    }

    /// The status and the whole body of `method path` (with `json` as the body).
    async fn call(
        &mut self,
        method: Method,
        path: &str,
        json: Option<String>,
    ) -> Fallible<(StatusCode, Bytes)> {
        self.sender
            .ready()
            .await
            .map_err(|e| format!("the server closed the connection: {e}"))?;
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, &self.host);
        if let Some(token) = &self.token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(address) = &self.forwarded_for {
            request = request.header("x-forwarded-for", address);
        }
        if json.is_some() {
            request = request.header(CONTENT_TYPE, "application/json");
        }
        let request = request.body(Full::new(Bytes::from(json.unwrap_or_default())))?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok((status, body))
    }
}

/// A connection with the superadmin signed in.
async fn signed_in(addr: SocketAddr) -> Fallible<Client> {
    let mut client = Client::connect(addr).await?;
    let body = serde_json::json!({ "email": student_email(1), "code": OTP_CODE }).to_string();
    let (status, answer) = client
        .call(Method::POST, "/auth/otp/verify", Some(body))
        .await?;
    let signed_in: serde_json::Value = serde_json::from_slice(&answer)?;
    let token = signed_in["data"]["accessToken"]
        .as_str()
        .filter(|_| status == StatusCode::OK)
        .ok_or_else(|| format!("the superadmin's sign-in answered {status}: {signed_in}"))?;
    client.token = Some(token.to_owned());
    Ok(client)
}

/// Times `probes` on the superadmin's `client`: each one's latency and its last answer.
async fn measure(client: &mut Client, probes: &[Probe]) -> Fallible<Vec<(Latency, Answer)>> {
    let mut measured = Vec::with_capacity(probes.len());
    for probe in probes {
        let mut samples = Vec::with_capacity(MEASURED);
        let mut last = Bytes::new();
        for call in 0..WARM_UP + MEASURED {
            let started = Instant::now();
            let (status, body) = client.call(Method::GET, &probe.path, None).await?;
            let took = started.elapsed();
            if status != StatusCode::OK {
                return Err(format!(
                    "GET {} answered {status}: {}",
                    probe.path,
                    String::from_utf8_lossy(&body)
                )
                .into());
            }
            if call >= WARM_UP {
                samples.push(took);
            }
            last = body;
        }
        let latency = Latency::of(samples).ok_or("no samples")?;
        let answer = Answer::of(&last)?;
        eprintln!(
            "list-bench: GET {}: median {:.1} ms, {answer:?}",
            probe.path,
            latency.p50.as_secs_f64() * 1000.0
        );
        measured.push((latency, answer));
    }
    Ok(measured)
}

/// How `--throughput` loads the server.
struct Load {
    duration: Duration,
    connections: usize,
    /// The server's process id, whose CPU time is sampled.
    server: u32,
    /// Whether to sample the CPU time of the `postgres` processes.
    database_is_postgres: bool,
}

/// What one request sustained under load.
struct Rate {
    per_second: f64,
    server_cpu_ms: f64,
    database_cpu_ms: Option<f64>,
}

/// Loads each probe in turn from `load.connections` signed-in connections for
/// `load.duration`, counting the answers (every one must be 200) and the CPU time the
/// server and the database spent meanwhile.
async fn throughput(
    addr: SocketAddr,
    token: Option<&str>,
    probes: &[Probe],
    load: &Load,
) -> Fallible<Vec<Rate>> {
    let mut clients = Vec::with_capacity(load.connections);
    for _ in 0..load.connections {
        let mut client = Client::connect(addr).await?;
        client.token = token.map(str::to_owned);
        clients.push(client);
    }
    let ticks_per_second = clock_ticks_per_second()?;
    let mut rates = Vec::with_capacity(probes.len());
    for probe in probes {
        let server_before = cpu_ticks(&[load.server.to_string()])?;
        let database_before = load
            .database_is_postgres
            .then(|| cpu_ticks_of_command("postgres"))
            .transpose()?;
        let started = Instant::now();
        let deadline = started + load.duration;
        let mut tasks = tokio::task::JoinSet::new();
        for (n, mut client) in clients.drain(..).enumerate() {
            let path = probe.path.clone();
            tasks.spawn(async move {
                let mut answered = 0u64;
                while Instant::now() < deadline {
                    // 10.<connection>.x.y: an address of its own for every request.
                    client.forwarded_for = Some(format!(
                        "10.{}.{}.{}",
                        n % 256,
                        answered / 256 % 256,
                        answered % 256
                    ));
                    let (status, body) = client
                        .call(Method::GET, &path, None)
                        .await
                        .map_err(|e| format!("GET {path} under load: {e}"))?;
                    if status != StatusCode::OK {
                        return Err(format!(
                            "GET {path} answered {status} under load: {}",
                            String::from_utf8_lossy(&body)
                        ));
                    }
                    answered += 1;
                }
                Ok::<_, String>((client, answered))
            });
        }
        let mut answered = 0;
        while let Some(joined) = tasks.join_next().await {
            let (client, n) = joined??;
            answered += n;
            clients.push(client);
        }
        let elapsed = started.elapsed().as_secs_f64();
        let per_request_ms =
            |ticks: u64| ticks as f64 / ticks_per_second * 1000.0 / answered.max(1) as f64;
        let rate = Rate {
            per_second: answered as f64 / elapsed,
            server_cpu_ms: per_request_ms(cpu_ticks(&[load.server.to_string()])? - server_before),
            database_cpu_ms: match database_before {
                Some(before) => Some(per_request_ms(
                    cpu_ticks_of_command("postgres")?.saturating_sub(before),
                )),
                None => None,
            },
        };
        eprintln!(
            "list-bench: GET {} under load: {:.0} requests/s",
            probe.path, rate.per_second
        );
        rates.push(rate);
    }
    Ok(rates)
}

/// `getconf CLK_TCK`: the unit of the CPU times in `/proc/<pid>/stat`.
fn clock_ticks_per_second() -> Fallible<f64> {
    let out = Command::new("getconf").arg("CLK_TCK").output()?;
    Ok(String::from_utf8(out.stdout)?.trim().parse()?)
}

/// User and system CPU ticks of the processes `pids` (all their threads), from
/// `/proc/<pid>/stat`.
fn cpu_ticks(pids: &[String]) -> Fallible<u64> {
    let mut ticks = 0;
    for pid in pids {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue; // ended meanwhile
        };
        // The fields after the command's closing parenthesis: state is field 3, utime 14
        // and stime 15.
        let after = stat
            .rsplit_once(')')
            .ok_or("a /proc stat without a command")?
            .1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        ticks += fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    }
    Ok(ticks)
}

/// CPU ticks of every process whose command is `command` (PostgreSQL's backends, its
/// background workers and its checkpointer).
fn cpu_ticks_of_command(command: &str) -> Fallible<u64> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.bytes().all(|b| b.is_ascii_digit())
            && std::fs::read_to_string(format!("/proc/{name}/comm"))
                .is_ok_and(|comm| comm.trim() == command)
        {
            pids.push(name);
        }
    }
    cpu_ticks(&pids)
}

/// Checks each answer's total against its `COUNT(*)`, and the dashboard's rollups against a
/// recount; an error naming every difference.
async fn verify(app: &Langcamp, probes: &[Probe], measured: &[(Latency, Answer)]) -> Fallible<()> {
    let mut wrong = Vec::new();
    for (probe, (_, answer)) in probes.iter().zip(measured) {
        let Some(sql) = &probe.count else { continue };
        let count: i64 = sqlx::query_scalar(AssertSqlSafe(sql.clone()))
            .fetch_one(app.db().reader())
            .await?;
        let matches = match *answer {
            Answer::Total(total) => total == count,
            Answer::Listed(listed) => i64::try_from(listed)? == count,
            Answer::Other => false,
        };
        eprintln!(
            "list-bench: GET {}: {answer:?}, COUNT(*) {count}{}",
            probe.path,
            if matches { "" } else { "  <-- DIFFERS" }
        );
        if !matches {
            wrong.push(format!(
                "GET {} answered {answer:?}, COUNT(*) is {count}",
                probe.path
            ));
        }
    }
    let drift = app.check_dashboard_rollups(&Actor::Operator).await?;
    if !drift.is_empty() {
        wrong.push(format!(
            "the dashboard's rollups differ from a recount: {drift:?}"
        ));
    }
    if wrong.is_empty() {
        eprintln!("list-bench: every total matches its COUNT(*), the rollups a recount");
        Ok(())
    } else {
        Err(format!("totals differ:\n  {}", wrong.join("\n  ")).into())
    }
}
