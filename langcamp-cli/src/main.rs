//! `langcamp`: the operator's command. Each subcommand lives in its own module.

mod migrate;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use langcamp_core::{Clock, Config, Langcamp};

/// Langcamp: the backend of a multilingual language school.
#[derive(Debug, Parser)]
#[command(name = "langcamp", version, about, long_about = None)]
struct Cli {
    /// Database URL: an SQLite file (default under DATA_DIR) or postgres://...
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    database_url: Option<String>,

    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply pending migrations, then serve HTTP and deliver mail until SIGINT/SIGTERM.
    #[command(after_help = "Example:\n  PORT=8080 langcamp serve")]
    Serve(serve::Args),
    /// Apply pending migrations and list what was applied.
    #[command(
        after_help = "Example:\n  DATABASE_URL=postgres://langcamp@db/langcamp langcamp migrate"
    )]
    Migrate,
}

/// Exit codes: 0 success, 1 the operation failed, 2 usage error (clap's own).
#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    let result = match &cli.command {
        Command::Serve(args) => serve::run(&cli, args).await,
        Command::Migrate => migrate::run(&cli).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("langcamp: {message}");
            ExitCode::from(1)
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Loads the configuration, with command-line flags overriding the environment.
fn config(cli: &Cli) -> Result<Config, String> {
    let mut config = Config::from_env().map_err(|e| e.to_string())?;
    if let Some(url) = &cli.database_url {
        let overridden = Config::from_lookup(|name| match name {
            "DATABASE_URL" => Some(url.clone()),
            _ => None,
        })
        .map_err(|e| e.to_string())?;
        config.database_url = overridden.database_url;
    }
    Ok(config)
}

/// Opens the core handle on the configured database.
async fn open(config: Config) -> Result<Langcamp, String> {
    Langcamp::connect(config, Clock::System)
        .await
        .map_err(|e| format!("cannot open the database: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
