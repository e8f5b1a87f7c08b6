//! `api-bench`: the Rust half of `scripts/bench.sh` (the HTTP benchmark of issue 10).
//!
//! * `seed`: builds the data set (100k users, 1M results, 60 courses, 50 tests by
//!   default) in a database, stores one-time codes for `POST /auth/otp/verify`, signs in
//!   a student and an admin (with a TOTP factor, at assurance level 2), and writes `bench.env` (tokens, the test to submit to) and
//!   `submit.json` for the wrk scripts.
//! * `startup`: spawns `langcamp serve` on a migrated database and times the first
//!   `200` answer of `GET /`.
//!
//! See `docs/BENCHMARKS.md`. Not a test: CI builds it and never runs it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use clap::{Parser, Subcommand, ValueEnum};
use langcamp_bench::catalogue::{self, OTP_CODE};
use langcamp_bench::{COURSES, LANGUAGES_COUNT, Latency, MATERIALS, Scale, generate};
use langcamp_core::auth::{FactorName, TotpStartInput, totp};
use langcamp_core::auth::{OtpCode, OtpSignIn, OtpVerifyInput};
use langcamp_core::platform::keyring::Keyring;
use langcamp_core::webhooks::{EndpointInput, NewEndpoint};
use langcamp_core::{Actor, Clock, Config, Langcamp};
use sqlx::{AssertSqlSafe, Connection, Executor};

#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Size {
    Full,
    Tenth,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Builds the data set and the files the wrk scripts read.
    Seed {
        /// The database: `sqlite://...` (created), or a PostgreSQL database URL whose
        /// database is dropped and created again.
        #[arg(long)]
        database_url: String,
        /// The server's JWT_SECRET (tokens and code hashes depend on it).
        #[arg(long)]
        secret: String,
        #[arg(long, value_enum, default_value_t = Size::Full)]
        scale: Size,
        #[arg(long, default_value_t = 60)]
        courses: u64,
        #[arg(long, default_value_t = 50)]
        tests: u64,
        /// One-time codes to prepare (each verify consumes one).
        #[arg(long, default_value_t = 200_000)]
        otp_codes: u64,
        /// The codes' addresses belong to students who already exist (a returning
        /// student's sign-in) instead of new ones.
        #[arg(long)]
        otp_returning: bool,
        /// Where `bench.env` and `submit.json` go.
        #[arg(long)]
        out: PathBuf,
    },
    /// Adds a webhook endpoint at `url` hearing `result.created` (issue #55: a
    /// submission's cost with an endpoint configured). The server must be started with
    /// `WEBHOOK_ALLOWED_NETWORKS` letting it reach `url`.
    Webhook {
        #[arg(long)]
        database_url: String,
        #[arg(long)]
        secret: String,
        #[arg(long)]
        url: String,
    },
    /// Drops the PostgreSQL database named in the URL (the end of a `--postgres` run).
    Drop {
        #[arg(long)]
        database_url: String,
    },
    /// Times `langcamp serve` from spawn to the first `200` of `GET /`.
    Startup {
        /// The `langcamp` binary.
        #[arg(long)]
        bin: PathBuf,
        #[arg(long)]
        database_url: String,
        #[arg(long)]
        secret: String,
        #[arg(long)]
        data_dir: PathBuf,
        #[arg(long, default_value_t = 18_090)]
        port: u16,
        #[arg(long, default_value_t = 5)]
        runs: u32,
    },
}

fn main() {
    let args = Args::parse();
    let result = match args.command {
        Cmd::Seed {
            database_url,
            secret,
            scale,
            courses,
            tests,
            otp_codes,
            otp_returning,
            out,
        } => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(Into::into)
            .and_then(|rt| {
                rt.block_on(seed(Seed {
                    database_url,
                    secret,
                    scale: match scale {
                        Size::Full => Scale::FULL,
                        Size::Tenth => Scale::TENTH,
                    },
                    courses,
                    tests,
                    otp_codes,
                    otp_returning,
                    out,
                }))
            }),
        Cmd::Webhook {
            database_url,
            secret,
            url,
        } => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Into::into)
            .and_then(|rt| rt.block_on(webhook(&database_url, &secret, &url))),
        Cmd::Drop { database_url } => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Into::into)
            .and_then(|rt| rt.block_on(postgres_database(&database_url, false))),
        Cmd::Startup {
            bin,
            database_url,
            secret,
            data_dir,
            port,
            runs,
        } => startup(&bin, &database_url, &secret, &data_dir, port, runs),
    };
    if let Err(e) = result {
        eprintln!("api-bench: {e}");
        std::process::exit(1);
    }
}

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

struct Seed {
    database_url: String,
    secret: String,
    scale: Scale,
    courses: u64,
    tests: u64,
    otp_codes: u64,
    otp_returning: bool,
    out: PathBuf,
}

fn config(url: &str, secret: &str, data_dir: &str) -> Fallible<Config> {
    let (url, secret, data_dir) = (url.to_owned(), secret.to_owned(), data_dir.to_owned());
    Ok(Config::from_lookup(|name| match name {
        "DATABASE_URL" => Some(url.clone()),
        "DATA_DIR" => Some(data_dir.clone()),
        "JWT_SECRET" => Some(secret.clone()),
        "JWT_EXPIRATION" => Some("6h".into()),
        _ => None,
    })?)
}

/// An endpoint at `url` hearing `result.created`, made as the operator.
async fn webhook(database_url: &str, secret: &str, url: &str) -> Fallible<()> {
    let data_dir = std::env::temp_dir().join("langcamp-bench-webhook");
    let data_dir = data_dir.to_string_lossy().into_owned();
    let config = Config::from_lookup(|name| match name {
        "DATABASE_URL" => Some(database_url.to_owned()),
        "DATA_DIR" => Some(data_dir.clone()),
        "JWT_SECRET" => Some(secret.to_owned()),
        "WEBHOOK_ALLOWED_NETWORKS" => Some("127.0.0.0/8".into()),
        _ => None,
    })?;
    let app = Langcamp::connect(config, Clock::System).await?;
    let endpoint = NewEndpoint::try_from(EndpointInput {
        url: Some(url.to_owned()),
        events: Some(vec!["result.created".into()]),
        description: Some("bench.sh --webhook".into()),
    })?;
    let made = app.create_webhook(&Actor::Operator, endpoint).await?;
    println!("webhook endpoint {} at {url} hears result.created", made.id);
    app.db().close().await;
    Ok(())
}

async fn seed(s: Seed) -> Fallible<()> {
    let postgres = s.database_url.starts_with("postgres");
    if postgres {
        postgres_database(&s.database_url, true).await?;
    }
    std::fs::create_dir_all(&s.out)?;
    let data_dir = s.out.join("data");
    let app = Langcamp::connect(
        config(&s.database_url, &s.secret, &data_dir.to_string_lossy())?,
        Clock::System,
    )
    .await?;
    app.migrate().await?;
    let now = Utc::now();
    let now_ms = now.timestamp_millis();

    let started = Instant::now();
    generate(app.db(), s.scale, now, |_| {}).await?;
    catalogue::extend(app.db(), s.courses, s.tests, now_ms).await?;
    sqlx::query("INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)")
        .bind("landing_video_url")
        .bind(r#""https://videos.langcamp.test/landing/summer-2027.mp4""#)
        .bind(now_ms)
        .execute(app.db().reader())
        .await?;
    let keys = Keyring::new(&s.secret, &[]);
    let day = 86_400_000;
    catalogue::otp_codes(app.db(), &keys, s.otp_codes, now_ms, now_ms + day).await?;
    if s.otp_returning {
        catalogue::otp_students(app.db(), s.otp_codes, now_ms).await?;
    }
    if postgres {
        app.db().reader().execute("VACUUM (ANALYZE)").await?;
    } else {
        app.db().reader().execute("ANALYZE").await?;
    }
    eprintln!(
        "api-bench: seeded {} users, {} results, {} courses, {} tests, {} one-time codes in {:.1} s",
        s.scale.users,
        s.scale.results,
        s.courses,
        s.tests,
        s.otp_codes,
        started.elapsed().as_secs_f64()
    );

    // Sign in a student (user 2) and an admin (user 0) the way a client does; the admin
    // then adds a second factor, as staff must (contract §20).
    let mut tokens = Vec::new();
    for n in [2, 0] {
        let email = format!("student{n}@bench.langcamp.test");
        sqlx::query(
            "INSERT INTO otp_codes (email, code_hash, attempts, created_at, expires_at)
             VALUES ($1, $2, 0, $3, $4)",
        )
        .bind(&email)
        .bind(keys.otp_hash(&email, OTP_CODE))
        .bind(now_ms)
        .bind(now_ms + day)
        .execute(app.db().reader())
        .await?;
        let signed_in = app
            .verify_otp(
                OtpSignIn::try_from(OtpVerifyInput {
                    email: Some(email),
                    code: Some(OTP_CODE.into()),
                })?,
                None,
            )
            .await?;
        let token = if n == 0 {
            with_second_factor(&app, &signed_in.access_token).await?
        } else {
            signed_in.access_token
        };
        tokens.push(token);
    }
    app.db().close().await;
    // The row counts the staff-write scripts spread their writes over (scripts/bench/
    // staff-*.lua; ids as `langcamp_bench::id` makes them): users 0.., courses 0..,
    // tests FIRST_TEST.. (the ones with questions), contacts 0.., materials 0...
    let env = format!(
        "USER_TOKEN={}\nADMIN_TOKEN={}\nTEST_ID={}\nOTP_CODES={}\n\
         USERS={}\nCOURSES={}\nFIRST_TEST={}\nTESTS={}\nCONTACTS={}\nMATERIALS={}\n",
        tokens[0],
        tokens[1],
        catalogue::test_id(LANGUAGES_COUNT),
        s.otp_codes,
        s.scale.users,
        s.courses.max(COURSES),
        LANGUAGES_COUNT,
        s.tests,
        s.scale.contacts,
        MATERIALS,
    );
    std::fs::write(s.out.join("bench.env"), env)?;
    std::fs::write(s.out.join("submit.json"), catalogue::submission())?;
    Ok(())
}

/// Under `STAFF_SECOND_FACTOR=required` (the default) an admin works only at assurance
/// level 2: adds a TOTP factor the way a new staff member does (`POST /me/factors/totp`,
/// then its confirm with the code the app shows), which raises the sign-in of
/// `access_token` to level 2. Answers that sign-in's new access token (claims `aal` 2 and
/// `fat`, the time of this check).
async fn with_second_factor(app: &Langcamp, access_token: &str) -> Fallible<String> {
    let actor = Actor::User(app.authenticate(access_token).await?);
    let name = FactorName::try_from(TotpStartInput {
        name: Some("Bench".into()),
    })?;
    let enrolment = app.start_totp(&actor, name).await?;
    let code = totp::code_from_base32(&enrolment.secret, Utc::now().timestamp_millis())?;
    let added = app
        .confirm_totp(&actor, &enrolment.id, OtpCode::parse(Some(&code))?)
        .await?;
    Ok(added.access_token)
}

/// Drops the database named in `url` and, if `create`, creates it again (connecting to
/// the `postgres` database to do it).
async fn postgres_database(url: &str, create: bool) -> Fallible<()> {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let (server, name) = base.rsplit_once('/').ok_or("no database name in the URL")?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("unexpected database name {name:?}").into());
    }
    let admin = match query {
        Some(q) => format!("{server}/postgres?{q}"),
        None => format!("{server}/postgres"),
    };
    let mut conn = sqlx::PgConnection::connect(&admin).await?;
    conn.execute(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .await?;
    if create {
        conn.execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .await?;
    }
    conn.close().await?;
    Ok(())
}

fn startup(
    bin: &PathBuf,
    url: &str,
    secret: &str,
    data_dir: &PathBuf,
    port: u16,
    runs: u32,
) -> Fallible<()> {
    let mut samples = Vec::new();
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let mut child = Command::new(bin)
            .arg("serve")
            .arg("--port")
            .arg(port.to_string())
            .arg("--host")
            .arg("127.0.0.1")
            .env("DATABASE_URL", url)
            .env("JWT_SECRET", secret)
            .env("DATA_DIR", data_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let answered = loop {
            if ok_root(port) {
                break Some(started.elapsed());
            }
            if started.elapsed() > Duration::from_secs(30) || child.try_wait()?.is_some() {
                break None;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        let _ = child.kill();
        let _ = child.wait();
        samples.push(answered.ok_or("langcamp serve did not answer GET / within 30 s")?);
        // Let the port and the database settle between runs.
        std::thread::sleep(Duration::from_millis(300));
    }
    let l = Latency::of(samples).ok_or("no samples")?;
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    println!(
        "startup runs={} p50_ms={} min_ms={} max_ms={}",
        l.calls,
        ms(l.p50),
        ms(l.min),
        ms(l.max)
    );
    Ok(())
}

/// Whether `GET /` on the port answers `200`.
fn ok_root(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}
