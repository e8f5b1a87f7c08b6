//! `langcamp console`: the terminal admin console, as the operator, on the configured
//! database. It applies pending migrations first, like `serve`, and logs to
//! `console.log` under the data directory (stderr would draw over the screen).

use std::io::IsTerminal;

use crate::{Cli, CliError};

pub async fn run(cli: &Cli) -> Result<(), CliError> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "the console needs a terminal (run it in a terminal, over SSH with -t, or in tmux)",
        ));
    }
    let config = crate::config(cli)?;
    init_file_tracing(&config.data_dir);
    let app = crate::open(config).await?;
    app.migrate()
        .await
        .map_err(|e| CliError::from(e).context("migration failed"))?;
    let result = langcamp_tui::run(app.clone()).await;
    app.db().close().await;
    result.map_err(|e| CliError::failed(format!("console: {e}")))
}

/// Logs to `<data dir>/console.log`; without a writable data directory, not at all.
fn init_file_tracing(data_dir: &std::path::Path) {
    let file = std::fs::create_dir_all(data_dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data_dir.join("console.log"))
    });
    let Ok(file) = file else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .init();
}
