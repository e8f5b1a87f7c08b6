//! `langcamp`: the operator's command. Each subcommand lives in its own module.

mod access_line;
mod audit;
mod backup;
mod completions;
mod console;
mod doctor;
mod error;
mod export;
mod interrupt;
mod keys;
mod logbuf;
mod mail_templates;
mod man;
mod migrate;
mod openapi;
mod placement;
mod progress;
mod seed;
mod serve;
mod settings;
mod stats;
mod storage;
mod telemetry;
mod users;
mod webhooks;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use langcamp_core::{Clock, Config, Langcamp};

use crate::error::CliError;

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
    /// Create what a fresh school needs; `--demo` adds a believable demo school. Idempotent.
    #[command(after_help = "Examples:\n  langcamp seed\n  langcamp seed --demo --json")]
    Seed(seed::Args),
    /// Manage users.
    #[command(subcommand)]
    Users(users::UsersCommand),
    /// Read and write settings.
    #[command(subcommand)]
    Settings(settings::SettingsCommand),
    /// The audit trail of staff and operator actions: list, or export as JSON Lines.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// The mail templates (every kind of mail, per locale) as files: list, export, import.
    #[command(subcommand)]
    MailTemplates(mail_templates::MailTemplatesCommand),
    /// Write an admin list (users, results, contacts) as CSV, with the list's filters,
    /// streamed to stdout or to a new file.
    #[command(subcommand)]
    Export(export::ExportCommand),
    /// Adaptive placement tests: calibrate the questions' difficulties from real answers.
    #[command(subcommand)]
    Placement(placement::PlacementCommand),
    /// The server's keys: reseal stored secrets under the current JWT_SECRET after a
    /// rotation (docs/OPERATIONS.md, "Rotating the server secret").
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// The webhook endpoints and how their deliveries stand.
    #[command(subcommand)]
    Webhooks(webhooks::WebhooksCommand),
    /// Check or rebuild the dashboard's rollup tables.
    #[command(subcommand)]
    Stats(stats::StatsCommand),
    /// Move uploaded files between stores.
    #[command(subcommand)]
    Storage(storage::StorageCommand),
    /// Open the terminal admin console (as the operator) on the configured database.
    #[command(
        after_help = "Keys: 1-9 or Tab switch views, ? shows every key, q quits.\nLogs go to console.log under DATA_DIR.\n\nExample:\n  DATABASE_URL=postgres://langcamp@db/langcamp langcamp console"
    )]
    Console,
    /// Print the OpenAPI document.
    #[command(after_help = "Example:\n  langcamp openapi > openapi.json")]
    Openapi,
    /// Check the configuration, database, migrations, mail server, file store, the server
    /// secret, the trace collector and the webhook endpoints; one line per check with the
    /// fix; exit 0 only when all pass (a warning, such as an unset FRONTEND_BASE_URL, passes).
    #[command(after_help = "Examples:\n  langcamp doctor\n  langcamp doctor --json")]
    Doctor,
    /// Copy the live SQLite database to a new file (VACUUM INTO); PostgreSQL: use pg_dump.
    #[command(
        after_help = "Example:\n  langcamp backup backups/langcamp-$(date +%F).db\n  langcamp --database-url sqlite://backups/langcamp-2026-11-25.db users list"
    )]
    Backup(backup::Args),
    /// Print the shell completion script for bash, zsh, fish or PowerShell.
    #[command(
        after_help = "Examples:\n  langcamp completions bash > /etc/bash_completion.d/langcamp\n  langcamp completions zsh > \"${fpath[1]}/_langcamp\"\n  langcamp completions fish > ~/.config/fish/completions/langcamp.fish"
    )]
    Completions(completions::Args),
    /// Print the manual page langcamp(1) in roff.
    #[command(
        after_help = "Examples:\n  langcamp man | man -l -\n  langcamp man > /usr/local/share/man/man1/langcamp.1"
    )]
    Man,
}

/// Exit codes (decided in `error::CliError`): 0 success, 1 the operation failed, 2 usage
/// error (clap's own, or a destructive command without `--yes` when there is no terminal
/// to ask on), 75 a dependency is unavailable and the command may succeed when run again.
#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // The console logs to a file: stderr would draw over its screen.
    let started = match &cli.command {
        Command::Console => Ok(None),
        // Only the server makes traces (CONTRACT §23).
        Command::Serve(_) => init_tracing(Some(&cli)),
        _ => init_tracing(None),
    };
    let (result, tracing) = match started {
        Err(error) => (Err(error), None),
        Ok(tracing) => (run(&cli).await, tracing),
    };
    if let Some(tracing) = tracing {
        tracing.shutdown().await;
    }
    logbuf::flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("langcamp: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

/// Runs the command.
async fn run(cli: &Cli) -> Result<(), CliError> {
    match &cli.command {
        Command::Serve(args) => serve::run(cli, args).await,
        Command::Migrate => migrate::run(cli).await,
        Command::Seed(args) => seed::run(cli, args).await,
        Command::Users(command) => users::run(cli, command).await,
        Command::Settings(command) => settings::run(cli, command).await,
        Command::MailTemplates(command) => mail_templates::run(cli, command).await,
        Command::Audit(command) => audit::run(cli, command).await,
        Command::Export(command) => export::run(cli, command).await,
        Command::Placement(command) => placement::run(cli, command).await,
        Command::Stats(command) => stats::run(cli, command).await,
        Command::Keys(command) => keys::run(cli, command).await,
        Command::Webhooks(command) => webhooks::run(cli, command).await,
        Command::Storage(command) => storage::run(cli, command).await,
        Command::Console => console::run(cli).await,
        Command::Openapi => openapi::run(),
        Command::Doctor => doctor::run(cli).await,
        Command::Backup(args) => backup::run(cli, args).await,
        Command::Completions(args) => completions::run(args),
        Command::Man => man::run(),
    }
}

fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| CliError::failed(e.to_string()))?;
    println!("{text}");
    Ok(())
}

/// Asks before a destructive change: on a terminal, the operator types `yes`; without a
/// terminal, `--yes` is required.
fn confirm(yes: bool, question: &str) -> Result<(), CliError> {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "{question} Refusing without --yes when not on a terminal"
        )));
    }
    print!("{question} Type yes to continue: ");
    let io_failed = |e: std::io::Error| CliError::failed(e.to_string());
    std::io::stdout().flush().map_err(io_failed)?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(io_failed)?;
    if answer.trim().eq_ignore_ascii_case("yes") {
        Ok(())
    } else {
        Err(CliError::failed("cancelled"))
    }
}

/// Logs to stderr: text (coloured only when stderr is a terminal, so a file never gets
/// escape codes) or, with `LOG_FORMAT=json`, one JSON object a line for log shippers.
/// For the server (`serve`) with an OTLP endpoint set, also exports traces (CONTRACT §23)
/// and puts each JSON line's `trace_id` and `span_id` in it: the exporter is returned, to
/// be shut down (its last spans sent) when the command ends.
fn init_tracing(serve: Option<&Cli>) -> Result<Option<telemetry::Tracing>, CliError> {
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{Layer as _, filter::Targets};
    // `.env` may set LOG_FORMAT and RUST_LOG too; the configuration reads it again later.
    let _ = dotenvy::dotenv();
    let json = match std::env::var("LOG_FORMAT").as_deref().map(str::trim) {
        Err(_) | Ok("" | "text") => false,
        Ok("json") => true,
        Ok(other) => {
            return Err(CliError::usage(format!(
                "LOG_FORMAT: expected `text` or `json`, got `{other}`"
            )));
        }
    };
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"))
    };
    let settings = match serve {
        Some(_) => telemetry::settings_from_env()?,
        None => None,
    };
    logbuf::start_flusher();
    let Some(settings) = settings else {
        // Tracing off: the subscriber as it always was, nothing more on any path.
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(logbuf::Stderr);
        if json {
            builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .init();
        } else {
            builder
                .with_ansi(std::io::stderr().is_terminal())
                .event_format(access_line::TextLines::default())
                .init();
        }
        return Ok(None);
    };
    let tracing = telemetry::Tracing::start(&settings)?;
    // The log never shows the trace's spans (their fields are the trace's business).
    let log_filter = filter().add_directive(
        format!("{}=off", langcamp_core::platform::trace::TARGET)
            .parse()
            .map_err(|e| CliError::failed(format!("log filter: {e}")))?,
    );
    let log = tracing_subscriber::fmt::layer().with_writer(logbuf::Stderr);
    let log = if json {
        log.json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .map_event_format(telemetry::WithTraceIds)
            .with_filter(log_filter)
            .boxed()
    } else {
        log.with_ansi(std::io::stderr().is_terminal())
            .event_format(access_line::TextLines::default())
            .with_filter(log_filter)
            .boxed()
    };
    let spans =
        Targets::new().with_target(langcamp_core::platform::trace::TARGET, tracing::Level::INFO);
    let bridge = tracing_opentelemetry::layer()
        .with_tracer(tracing.tracer.clone())
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        .with_tracked_inactivity(false)
        .with_filter(spans);
    let statements = telemetry::Statements {
        tracer: tracing.tracer.clone(),
        system: telemetry::database_system(
            serve
                .and_then(|cli| cli.database_url.clone())
                .or_else(|| std::env::var("DATABASE_URL").ok())
                .as_deref(),
        ),
    }
    .with_filter(telemetry::statements_filter());
    tracing_subscriber::registry()
        .with(log)
        .with(bridge)
        .with(statements)
        .init();
    langcamp_core::platform::trace::enable(settings.sampler);
    tracing::info!(endpoint = %settings.endpoint, service = %settings.service_name, "exporting traces over OTLP/HTTP");
    Ok(Some(tracing))
}

/// Loads the configuration, with command-line flags overriding the environment.
fn config(cli: &Cli) -> Result<Config, CliError> {
    let mut config = Config::from_env().map_err(|e| CliError::failed(e.to_string()))?;
    if let Some(url) = &cli.database_url {
        let overridden = Config::from_lookup(|name| match name {
            "DATABASE_URL" => Some(url.clone()),
            _ => None,
        })
        .map_err(|e| CliError::failed(e.to_string()))?;
        config.database_url = overridden.database_url;
    }
    Ok(config)
}

/// Opens the core handle on the configured database; an unreachable database server is
/// `Unavailable` (exit 75), named with its host, port and cause.
async fn open(config: Config) -> Result<Langcamp, CliError> {
    open_with_clock(config, Clock::System).await
}

/// [`open`] with another clock (`seed` dates its demo data in the past).
async fn open_with_clock(config: Config, clock: Clock) -> Result<Langcamp, CliError> {
    let url = config.database_url.expose().to_owned();
    let connected = match Langcamp::connect(config, clock).await {
        // PostgreSQL pools open lazily: one query now names an unreachable server here,
        // with its host, port and cause, instead of a bare 503 at the command's first query.
        Ok(app) => app.db().ping().await.map(|()| app),
        Err(e) => Err(e),
    };
    match connected {
        Ok(app) => Ok(app),
        Err(e) => {
            let message = langcamp_core::platform::health::connect_error(&url, &e).await;
            Err(CliError::from(e).with_message(message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn valid_command_lines_parse() {
        for line in [
            "langcamp serve",
            "langcamp serve --port 8080 --host 127.0.0.1",
            "langcamp migrate --json",
            "langcamp storage migrate --to s3://bucket/prefix --json",
            "langcamp --database-url sqlite://x.db users list --role admin --q ana",
            "langcamp users create a@example.com --role superadmin --name Ana",
            "langcamp users set-role a@example.com admin --yes",
            "langcamp users delete a@example.com --yes --json",
            "langcamp openapi",
            "langcamp settings get landing_video_url",
            "langcamp settings set max_class_size 12",
            "langcamp settings list --json",
            "langcamp console",
            "langcamp --database-url sqlite://x.db console",
            "langcamp doctor",
            "langcamp doctor --json",
            "langcamp backup /tmp/copy.db",
            "langcamp completions bash",
            "langcamp completions powershell",
            "langcamp man",
        ] {
            let args = line.split_whitespace();
            assert!(Cli::try_parse_from(args).is_ok(), "{line}");
        }
    }

    #[test]
    fn invalid_command_lines_are_usage_errors() {
        for line in [
            "langcamp",
            "langcamp fly",
            "langcamp users set-role a@example.com emperor",
            "langcamp users create",
            "langcamp users list --role king",
            "langcamp serve --port eighty",
            "langcamp users delete",
            "langcamp settings set only_key",
            "langcamp backup",
            "langcamp completions",
            "langcamp completions tcsh",
        ] {
            let err = Cli::try_parse_from(line.split_whitespace()).expect_err(line);
            assert_eq!(err.exit_code(), 2, "{line}");
        }
    }
}
