//! `webhook-bench`: webhook deliveries in bulk (issue #55), on SQLite and PostgreSQL.
//!
//! In one process: the core on a fresh database, its webhook worker, and a receiver on
//! 127.0.0.1 (hyper, answering 204 at once). A burst of events (contact requests written
//! through core, each queuing one `contact.created` delivery per endpoint) goes to:
//!
//! * `live`: one endpoint at the receiver; reports how long until every delivery was
//!   answered 2xx (the issue asks for 10,000 within a minute);
//! * `dead`: one endpoint at a listener that accepts and never answers; after the burst the
//!   worker runs on for `--dead-seconds`, and the process's resident memory is sampled
//!   before the burst, after it, and at the end (the issue asks for no growth).
//!
//! See `docs/BENCHMARKS.md`, "Webhooks". Not a test: CI builds it and never runs it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use langcamp_core::contacts::{ContactInput, NewContact};
use langcamp_core::webhooks::{EndpointInput, NewEndpoint};
use langcamp_core::{Actor, Clock, Config, Langcamp};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Target {
    Live,
    Dead,
}

/// Delivers a burst of webhook events to a live or a dead endpoint.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    backend: Backend,
    #[arg(long, value_enum, default_value_t = Target::Live)]
    target: Target,
    /// Events in the burst.
    #[arg(long, default_value_t = 10_000)]
    events: u64,
    /// Writers queuing the events at once.
    #[arg(long, default_value_t = 32)]
    writers: u64,
    /// How long the worker runs on after a burst to a dead endpoint.
    #[arg(long, default_value_t = 60)]
    dead_seconds: u64,
    /// A PostgreSQL server; the bench creates (and replaces) `langcamp_webhook_bench`.
    #[arg(
        long,
        env = "BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5433/postgres"
    )]
    postgres_url: String,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args).await {
        eprintln!("webhook-bench: {e}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("langcamp-webhook-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let database_url = match args.backend {
        Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.join("langcamp.db").display()),
        Backend::Postgres => fresh_postgres(&args.postgres_url).await?,
    };
    let received = Arc::new(AtomicU64::new(0));
    let url = match args.target {
        Target::Live => format!("http://{}/hooks", receiver(Arc::clone(&received)).await?),
        Target::Dead => format!("http://{}/hooks", silent().await?),
    };
    let vars: Vec<(&str, String)> = vec![
        ("DATABASE_URL", database_url),
        ("DATA_DIR", dir.display().to_string()),
        ("JWT_SECRET", "webhook-bench-secret-0123456789abcdef".into()),
        ("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8".into()),
    ];
    let config = Config::from_lookup(|name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    })?;
    let core = Langcamp::connect(config, Clock::System).await?;
    core.migrate().await?;
    let endpoint = NewEndpoint::try_from(EndpointInput {
        url: Some(url.clone()),
        events: Some(vec!["contact.created".into()]),
        description: None,
    })?;
    core.create_webhook(&Actor::Operator, endpoint).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn({
        let core = core.clone();
        async move {
            core.run_webhook_worker(async {
                let _ = stopped.await;
            })
            .await;
        }
    });

    let rss_before = rss_mb();
    let began = Instant::now();
    burst(&core, args.events, args.writers).await?;
    let queued_in = began.elapsed();
    println!(
        "backend {:?}, target {:?}: {} events queued by {} writers in {:.2} s ({:.0} events/s)",
        args.backend,
        args.target,
        args.events,
        args.writers,
        queued_in.as_secs_f64(),
        args.events as f64 / queued_in.as_secs_f64()
    );
    match args.target {
        Target::Live => {
            while received.load(Ordering::Relaxed) < args.events
                || core.webhook_backlog().await?.0 > 0
            {
                if began.elapsed() > Duration::from_secs(600) {
                    return Err(format!(
                        "only {} of {} delivered after 10 minutes",
                        received.load(Ordering::Relaxed),
                        args.events
                    )
                    .into());
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let took = began.elapsed();
            let (delivered, retried, failed) = core.webhook_tally().snapshot();
            println!(
                "all {} delivered {:.2} s after the burst began ({:.0} deliveries/s); tally: {delivered} delivered, {retried} retried, {failed} failed; the receiver got {}",
                args.events,
                took.as_secs_f64(),
                args.events as f64 / took.as_secs_f64(),
                received.load(Ordering::Relaxed)
            );
        }
        Target::Dead => {
            let rss_after_burst = rss_mb();
            let mut peak = rss_after_burst;
            let until = Instant::now() + Duration::from_secs(args.dead_seconds);
            let watched = Instant::now();
            let mut second = 0u64;
            let mut rss = rss_after_burst;
            while Instant::now() < until {
                tokio::time::sleep(Duration::from_secs(1)).await;
                rss = rss_mb();
                peak = peak.max(rss);
                second += 1;
                // The curve, so that warming up (a plateau) and a leak (a slope) tell apart.
                if second.is_multiple_of(15) {
                    let (_, retried, _) = core.webhook_tally().snapshot();
                    eprintln!(
                        "webhook-bench: {:>4.0} s: RSS {rss:.1} MB, {retried} retries so far",
                        watched.elapsed().as_secs_f64()
                    );
                }
            }
            // The figure is the loop's last sample: a reading after this count would
            // include what the count allocated.
            let (pending, _) = core.webhook_backlog().await?;
            let (delivered, retried, failed) = core.webhook_tally().snapshot();
            println!(
                "RSS: {rss_before:.1} MB before the burst, {rss_after_burst:.1} MB after it, peak {peak:.1} MB and {rss:.1} MB after {} s of the worker against the dead endpoint; {pending} still pending; tally: {delivered} delivered, {retried} retried, {failed} failed",
                args.dead_seconds
            );
        }
    }
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(15), worker).await;
    core.db().close().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// `events` contact requests written through core by `writers` tasks at once.
async fn burst(
    core: &Langcamp,
    events: u64,
    writers: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..writers {
        let core = core.clone();
        let next = Arc::clone(&next);
        tasks.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= events {
                    return Ok::<(), String>(());
                }
                let contact = NewContact::try_from(ContactInput {
                    first_name: Some(format!("Visitor{n}")),
                    last_name: Some("Lind".into()),
                    email: Some(format!("visitor{n}@example.com")),
                    message: Some("Do you have evening classes?".into()),
                    ..ContactInput::default()
                })
                .map_err(|e| e.to_string())?;
                core.create_contact(&Actor::Anonymous, contact)
                    .await
                    .map_err(|e| e.to_string())?;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    Ok(())
}

/// A receiver answering 204 at once, counting what it got.
async fn receiver(received: Arc<AtomicU64>) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let received = Arc::clone(&received);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let received = Arc::clone(&received);
                        async move {
                            use http_body_util::BodyExt as _;
                            let _ = request.into_body().collect().await;
                            received.fetch_add(1, Ordering::Relaxed);
                            Ok::<_, Infallible>(
                                hyper::Response::builder()
                                    .status(204)
                                    .body(http_body_util::Empty::<bytes::Bytes>::new())
                                    .expect("a response"),
                            )
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

/// A listener that accepts connections and never answers: a dead endpoint.
async fn silent() -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    Ok(addr)
}

/// A new, empty `langcamp_webhook_bench` on the server at `url`; its URL.
async fn fresh_postgres(url: &str) -> Result<String, Box<dyn std::error::Error>> {
    use sqlx::{Connection, Executor};
    let mut admin = sqlx::PgConnection::connect(url).await?;
    admin
        .execute("DROP DATABASE IF EXISTS langcamp_webhook_bench WITH (FORCE)")
        .await?;
    admin
        .execute("CREATE DATABASE langcamp_webhook_bench")
        .await?;
    let base = url.rsplit_once('/').map_or(url, |(base, _)| base);
    Ok(format!("{base}/langcamp_webhook_bench"))
}

/// This process's resident memory, MB (Linux).
fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
