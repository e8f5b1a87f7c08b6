//! `langcamp serve`: migrate, then serve HTTP and run the mail worker until a signal.

use std::net::SocketAddr;

use langcamp_core::{Clock, Langcamp, StartupProblem};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::{Cli, CliError};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port to listen on.
    #[arg(long, env = "PORT")]
    port: Option<u16>,
    /// Address to bind.
    #[arg(long, env = "HOST")]
    host: Option<std::net::IpAddr>,
}

pub async fn run(cli: &Cli, args: &Args) -> Result<(), CliError> {
    let mut config = crate::config(cli)?;
    if let Some(port) = args.port {
        config.port = port;
    }
    if let Some(host) = args.host {
        config.host = host;
    }
    if config.jwt_secret.is_none() {
        tracing::warn!(
            "JWT_SECRET is not set: using the secret kept in DATA_DIR/secret.key (made at the first start); \
             fine for one machine, set JWT_SECRET (the same on every instance) for several"
        );
    }
    let addr = SocketAddr::new(config.host, config.port);
    let url = config.database_url.expose();
    if let Some(reason) = langcamp_core::platform::db::sqlite_file_unwritable(url) {
        let file = langcamp_core::platform::db::sqlite_file(url).unwrap_or(url);
        return Err(CliError::failed(format!(
            "the database {file} cannot be written, refusing to start: {reason}"
        )));
    }
    // Not `crate::open`: its separate ping would cost PostgreSQL a second connection (and
    // TLS handshake) at start-up; `check_before_serving` names an unreachable server too.
    let url = url.to_owned();
    let app = match Langcamp::connect(config, Clock::System).await {
        Ok(app) => app,
        Err(e) => {
            let message = langcamp_core::platform::health::connect_error(&url, &e).await;
            return Err(CliError::from(e).with_message(message));
        }
    };
    // A read-only file, folder or mount would otherwise start, serve reads, and fail
    // every write: refuse now, naming the file and the reason.
    let current = match app.check_before_serving().await {
        Ok(current) => current,
        Err(StartupProblem::Unreachable(e)) => {
            let message = langcamp_core::platform::health::connect_error(&url, &e).await;
            return Err(CliError::from(e).with_message(message));
        }
        // Exit 1, not 75, even though core calls a read-only database unavailable: it
        // stays read-only until someone acts, so a supervisor retrying the start would
        // only loop.
        Err(StartupProblem::NotWritable(e)) => {
            let database = langcamp_core::platform::db::sqlite_file(&url)
                .map_or_else(|| "on the PostgreSQL server".to_owned(), |f| f.to_owned());
            return Err(CliError::failed(format!(
                "the database {database} cannot be written, refusing to start: {}",
                langcamp_core::platform::health::describe_error(&e)
            )));
        }
    };
    if !current {
        for m in app
            .migrate()
            .await
            .map_err(|e| CliError::from(e).context("migration failed"))?
        {
            tracing::info!(version = m.version, description = %m.description, "applied migration");
        }
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| CliError::failed(format!("cannot listen on {addr}: {e}")))?;
    tracing::info!(file_store = %app.config().file_store.describe(), "uploaded files are kept in the file store");
    tracing::info!(%addr, "Langcamp is serving; API docs at /api/docs");

    // The mail and webhook workers, the search indexer and the maintenance run on through
    // the drain (requests answered then may queue mail and deliveries) and stop once the
    // server has stopped.
    let (stop_tx, stop_rx) = watch::channel(false);
    let stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };
    let mail = tokio::spawn({
        let app = app.clone();
        let stop = stopped(stop_rx.clone());
        async move { app.run_mail_worker(stop).await }
    });
    let webhooks = tokio::spawn({
        let app = app.clone();
        let stop = stopped(stop_rx.clone());
        async move { app.run_webhook_worker(stop).await }
    });
    let search_indexer = tokio::spawn({
        let app = app.clone();
        let stop = stopped(stop_rx.clone());
        async move { app.run_search_indexer(stop).await }
    });
    let maintenance = tokio::spawn({
        let app = app.clone();
        let stop = stopped(stop_rx.clone());
        async move { app.run_maintenance(stop).await }
    });
    let signal = async move {
        crate::interrupt::signal().await;
        tracing::info!("shutting down: signal received");
    };
    let served = langcamp_http::serve(app.clone(), listener, signal).await;
    let _ = stop_tx.send(true);
    served.map_err(|e| CliError::failed(format!("server error: {e}")))?;
    let _ = tokio::join!(mail, webhooks, search_indexer, maintenance);
    app.db().close().await;
    tracing::info!("stopped");
    Ok(())
}
