//! `dashboard-bench`: the admin dashboard's latency at scale, on SQLite and PostgreSQL.
//!
//! For each backend and scale it builds a database of generated data (100k users,
//! 1M results, 100k contacts, 200k assignments at full scale, a tenth of that at `tenth`),
//! then calls the core operation directly, sequentially, and reports p50 and p99.
//! See `docs/BENCHMARKS.md`. Not a test: CI builds it and never runs it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use clap::{Parser, ValueEnum};
use langcamp_bench::{Latency, Scale, generate};
use langcamp_core::dashboard::TrendMonths;
use langcamp_core::{Actor, Clock, Config, Langcamp};
use sqlx::{AssertSqlSafe, Connection, Executor};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    Sqlite,
    Postgres,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Size {
    Full,
    Tenth,
    Both,
}

/// Measures `GET /admin/dashboard` (the core operation) on generated data.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Which database(s) to measure.
    #[arg(long, value_enum, default_value_t = Backend::Both)]
    backend: Backend,
    /// Data size: full (1M results), tenth (100k results) or both.
    #[arg(long, value_enum, default_value_t = Size::Both)]
    scale: Size,
    /// Measured calls per run (at least 50), after 3 warm-up calls.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(50..))]
    calls: u32,
    /// The dashboard's `months`.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=24))]
    months: u32,
    /// A PostgreSQL server; the bench creates (and replaces) its own databases on it,
    /// `langcamp_bench_full` and `langcamp_bench_tenth`.
    #[arg(
        long,
        env = "BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5433/postgres"
    )]
    postgres_url: String,
    /// Where the SQLite databases go (`<dir>/<scale>/langcamp.db`).
    #[arg(long, default_value_os_t = std::env::temp_dir().join("langcamp-bench"))]
    dir: PathBuf,
    /// Keep a database that already holds the data of its scale instead of rebuilding it.
    #[arg(long)]
    reuse: bool,
}

/// "Now" of the generated data and of the dashboard: a fixed clock, so runs compare.
const NOW: &str = "2026-11-22T12:00:00Z";

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args).await {
        eprintln!("dashboard-bench: {e}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let now: DateTime<Utc> = DateTime::parse_from_rfc3339(NOW)?.with_timezone(&Utc);
    let backends: &[&str] = match args.backend {
        Backend::Sqlite => &["sqlite"],
        Backend::Postgres => &["postgres"],
        Backend::Both => &["sqlite", "postgres"],
    };
    let scales: &[Scale] = match args.scale {
        Size::Full => &[Scale::FULL],
        Size::Tenth => &[Scale::TENTH],
        Size::Both => &[Scale::TENTH, Scale::FULL],
    };
    let mut rows = Vec::new();
    for backend in backends {
        for scale in scales {
            let row = measure(args, backend, *scale, now).await?;
            eprintln!("{row}");
            rows.push(row);
        }
    }
    println!(
        "| backend | scale | users | results | contacts | assignments | months | calls | p50 ms | p99 ms | mean ms | min ms | max ms | bench CPU ms/call | load before / after |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for row in rows {
        println!("{row}");
    }
    Ok(())
}

async fn measure(
    args: &Args,
    backend: &str,
    scale: Scale,
    now: DateTime<Utc>,
) -> Result<String, Box<dyn std::error::Error>> {
    let data_dir = args.dir.join(scale.name);
    let url = match backend {
        "postgres" => postgres_database(&args.postgres_url, scale, args.reuse).await?,
        _ => sqlite_database(&data_dir, args.reuse)?,
    };
    std::fs::create_dir_all(&data_dir)?;
    let dir = data_dir.to_string_lossy().into_owned();
    let config = Config::from_lookup(|name| match name {
        "DATABASE_URL" => Some(url.clone()),
        "DATA_DIR" => Some(dir.clone()),
        "JWT_SECRET" => Some("dashboard-bench-secret-0123456789".into()),
        _ => None,
    })?;
    let app = Langcamp::connect(config, Clock::manual(now)).await?;
    app.migrate().await?;

    let have: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM test_results")
        .fetch_one(app.db().reader())
        .await?;
    if have == 0 {
        eprintln!("{backend}/{}: generating data...", scale.name);
        let started = Instant::now();
        generate(app.db(), scale, now, |_| {}).await?;
        if backend == "postgres" {
            vacuum(&app).await?;
        }
        eprintln!(
            "{backend}/{}: generated in {:.1} s",
            scale.name,
            started.elapsed().as_secs_f64()
        );
    } else {
        eprintln!("{backend}/{}: reusing {have} results", scale.name);
    }

    // The rollups the triggers kept while the data went in, against a full recount.
    let started = Instant::now();
    let drift = app.check_dashboard_rollups(&Actor::Operator).await?;
    if !drift.is_empty() {
        return Err(format!("the rollups differ from a recount: {drift:?}").into());
    }
    eprintln!(
        "{backend}/{}: rollups match a recount (checked in {:.1} s)",
        scale.name,
        started.elapsed().as_secs_f64()
    );

    let months = TrendMonths::new(args.months)?;
    let check = app.dashboard(&Actor::Operator, months).await?;
    let expected = (
        i64::try_from(scale.users)?,
        i64::try_from(scale.results)?,
        i64::try_from(scale.contacts)?,
        i64::try_from(scale.assignments)?,
    );
    let got = (
        check.overview.users.total,
        check.overview.tests.total_submissions,
        check.overview.contacts.total,
        check.overview.materials.assignments,
    );
    if got != expected {
        return Err(format!("the dashboard counts {got:?}, the data set has {expected:?}").into());
    }
    for _ in 0..3 {
        app.dashboard(&Actor::Operator, months).await?;
    }
    let load_before = load_average();
    let cpu_before = process_cpu();
    let mut samples = Vec::with_capacity(args.calls as usize);
    for _ in 0..args.calls {
        let started = Instant::now();
        app.dashboard(&Actor::Operator, months).await?;
        samples.push(started.elapsed());
    }
    let cpu = match (cpu_before, process_cpu()) {
        (Some(before), Some(after)) => {
            format!("{:.1}", (after - before) * 1000.0 / f64::from(args.calls))
        }
        _ => "?".to_owned(),
    };
    let load = format!("{} / {}", load_before, load_average());
    app.db().close().await;
    let l = Latency::of(samples).ok_or("no samples")?;
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    Ok(format!(
        "| {backend} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {cpu} | {load} |",
        scale.name,
        scale.users,
        scale.results,
        scale.contacts,
        scale.assignments,
        args.months,
        l.calls,
        ms(l.p50),
        ms(l.p99),
        ms(l.mean),
        ms(l.min),
        ms(l.max),
    ))
}

/// CPU seconds (user + system) used by this process so far, from `/proc/self/stat`
/// (Linux; clock ticks of 1/100 s). With SQLite that is the database's work too; with
/// PostgreSQL only the client's.
fn process_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (_, fields) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = fields.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / 100.0)
}

/// The 1-minute load average, to show how busy the machine was.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

/// What autovacuum gives a steady state: statistics, and a visibility map that lets
/// index-only scans skip the table. A transaction open elsewhere on the server can keep
/// VACUUM from marking the new rows visible to all, so it is repeated until it has.
async fn vacuum(app: &Langcamp) -> Result<(), Box<dyn std::error::Error>> {
    for _ in 0..30 {
        app.db()
            .reader()
            .execute("VACUUM (ANALYZE) users, test_results, contacts, material_assignments, courses, proficiency_tests, education_materials, stats_counts, stats_results, stats_days, stats_holdings")
            .await?;
        let hidden: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(relpages - relallvisible), 0) AS BIGINT) FROM pg_class
             WHERE relname IN ('users', 'test_results', 'contacts', 'material_assignments')",
        )
        .fetch_one(app.db().reader())
        .await?;
        if hidden == 0 {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    Err("VACUUM could not mark the tables all-visible (a long transaction on the server?)".into())
}

/// The SQLite URL under `dir`, removing an old database unless it is to be reused.
fn sqlite_database(dir: &Path, reuse: bool) -> Result<String, Box<dyn std::error::Error>> {
    if !reuse && dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    Ok(format!(
        "sqlite://{}?mode=rwc",
        dir.join("langcamp.db").display()
    ))
}

/// Creates `langcamp_bench_<scale>` on the server (replacing it unless reused); its URL.
async fn postgres_database(
    server: &str,
    scale: Scale,
    reuse: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let name = format!("langcamp_bench_{}", scale.name);
    let mut conn = sqlx::PgConnection::connect(server).await?;
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_optional(&mut conn)
        .await?;
    if !(reuse && exists.is_some()) {
        conn.execute(AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        )))
        .await?;
        conn.execute(AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .await?;
    }
    conn.close().await?;
    let (base, query) = server
        .split_once('?')
        .map_or((server, None), |(b, q)| (b, Some(q)));
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    Ok(match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    })
}
