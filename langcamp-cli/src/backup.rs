//! `langcamp backup FILE`: a consistent copy of a live SQLite database.
//!
//! `VACUUM INTO` reads one snapshot while the service keeps serving and writes a compact,
//! self-contained SQLite file: `--database-url sqlite://FILE` opens it as it is, and
//! restoring is copying it back while the service is stopped. PostgreSQL has `pg_dump`
//! for this, so the command refuses there with a usage error that names it.

use std::path::PathBuf;

use crate::{Cli, CliError};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The new file to write (it must not exist yet).
    file: PathBuf,
}

pub async fn run(cli: &Cli, args: &Args) -> Result<(), CliError> {
    let config = crate::config(cli)?;
    if config.is_postgres() {
        return Err(CliError::usage(
            "backup copies SQLite databases; for PostgreSQL use pg_dump, e.g. \
             pg_dump --format=custom --file=langcamp.dump \"$DATABASE_URL\" (docs/OPERATIONS.md)",
        ));
    }
    if args.file.exists() {
        return Err(CliError::failed(format!(
            "{} already exists; choose a new file name (a backup never overwrites)",
            args.file.display()
        )));
    }
    if let Some(parent) = args.file.parent()
        && !parent.as_os_str().is_empty()
        && !parent.is_dir()
    {
        return Err(CliError::failed(format!(
            "{} is not a directory",
            parent.display()
        )));
    }
    let app = crate::open(config).await?;
    let outcome = app.db().backup_to(&args.file).await;
    app.db().close().await;
    outcome.map_err(|e| {
        let message = format!(
            "backup to {} failed: {}",
            args.file.display(),
            langcamp_core::health::describe_error(&e)
        );
        CliError::from(e).with_message(message)
    })?;
    let bytes = std::fs::metadata(&args.file).map(|m| m.len()).unwrap_or(0);
    if cli.json {
        crate::print_json(&serde_json::json!({
            "file": args.file.display().to_string(),
            "bytes": bytes,
        }))
    } else {
        println!(
            "backed up to {} ({bytes} bytes); open it with --database-url sqlite://{}",
            args.file.display(),
            args.file.display()
        );
        Ok(())
    }
}
