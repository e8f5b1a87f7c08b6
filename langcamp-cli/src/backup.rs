//! `langcamp backup FILE`: a consistent copy of a live SQLite database.
//!
//! `VACUUM INTO` reads one snapshot while the service keeps serving and writes a compact,
//! self-contained SQLite file: `--database-url sqlite://FILE` opens it as it is, and
//! restoring is copying it back while the service is stopped. PostgreSQL has `pg_dump`
//! for this, so the command refuses there with a usage error that names it.
//!
//! The copy is written as `FILE.partial` and renamed to `FILE` once complete, so `FILE`
//! is always a whole backup: Ctrl-C (or SIGTERM, or a failed write) removes the partial
//! file, and even a `kill -9` leaves only a `.partial` name behind, never a truncated
//! database under the name a restore would use. A spinner shows the time elapsed on a
//! terminal (SQLite does not tell how far `VACUUM INTO` has come).

use std::path::{Path, PathBuf};

use crate::interrupt::unless_interrupted;
use crate::{Cli, CliError, progress};

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
    let partial = partial_of(&args.file);
    if let Some(left) = leftovers(&partial).into_iter().find(|f| f.exists()) {
        return Err(CliError::failed(format!(
            "{} exists: an earlier backup was stopped before it finished; remove it and run \
             the command again",
            left.display()
        )));
    }
    let app = crate::open(config).await?;
    let bar = progress::bar(cli, "copying the database", "");
    let outcome = match unless_interrupted(app.db().backup_to(&partial)).await {
        Ok(outcome) => outcome,
        Err(stop) => {
            // Not closing the pool: that would wait for SQLite to finish the copy. The
            // process ends at once, and SQLite's copy with it.
            remove(&partial);
            bar.interrupted();
            return Err(stop.into_error(format!(
                "no backup was written ({} removed)",
                partial.display()
            )));
        }
    };
    bar.finish();
    app.db().close().await;
    let written = outcome
        .map_err(|e| {
            let message = format!(
                "backup to {} failed: {}",
                args.file.display(),
                langcamp_core::platform::health::describe_error(&e)
            );
            CliError::from(e).with_message(message)
        })
        .and_then(|()| {
            std::fs::rename(&partial, &args.file).map_err(|e| {
                CliError::failed(format!(
                    "cannot rename {} to {}: {e}",
                    partial.display(),
                    args.file.display()
                ))
            })
        });
    if written.is_err() {
        remove(&partial);
    }
    written?;
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

/// `FILE.partial`, beside `FILE` (the same file system, so the rename is atomic).
fn partial_of(file: &Path) -> PathBuf {
    with_suffix(file, ".partial")
}

/// The partial copy and the rollback journal SQLite keeps beside it while writing
/// (`FILE.partial-journal`, deleted by SQLite only when the copy completes).
fn leftovers(partial: &Path) -> [PathBuf; 2] {
    [partial.to_path_buf(), with_suffix(partial, "-journal")]
}

/// Removes what an unfinished copy left (each file may or may not exist).
fn remove(partial: &Path) {
    for file in leftovers(partial) {
        let _ = std::fs::remove_file(file);
    }
}

pub(crate) fn with_suffix(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
