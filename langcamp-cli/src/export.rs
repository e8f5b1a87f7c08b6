//! `langcamp export users|results|contacts [--out FILE]`: an admin list as CSV (CONTRACT
//! §18), the same file as `GET /admin/exports/<name>.csv`, with the list's filters.
//!
//! The rows stream from the database chunk by chunk to stdout or to FILE, so memory stays
//! flat however many there are. With `--out` on a terminal a spinner shows the time
//! elapsed and the rows written; FILE is written as `FILE.partial` and renamed once
//! complete, so Ctrl-C (or a failed read) never leaves a truncated FILE.

use std::path::{Path, PathBuf};

use clap::{Subcommand, ValueEnum};
use futures_util::StreamExt;
use langcamp_core::Actor;
use langcamp_core::contacts::{ContactSearch, ContactStatus};
use langcamp_core::domain::validate;
use langcamp_core::domain::{Id, LanguageTag};
use langcamp_core::exports::{CsvExport, ExportQuery};
use langcamp_core::placement::ResultQuery;
use langcamp_core::platform::progress::Progress;
use langcamp_core::users::UserQuery;
use std::io::Write;

use crate::interrupt::unless_interrupted;
use crate::users::RoleArg;
use crate::{Cli, CliError, progress};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StatusArg {
    #[value(name = "PENDING")]
    Pending,
    #[value(name = "IN_PROGRESS")]
    InProgress,
    #[value(name = "REPLIED")]
    Replied,
    #[value(name = "CLOSED")]
    Closed,
}

impl From<StatusArg> for ContactStatus {
    fn from(s: StatusArg) -> ContactStatus {
        match s {
            StatusArg::Pending => ContactStatus::Pending,
            StatusArg::InProgress => ContactStatus::InProgress,
            StatusArg::Replied => ContactStatus::Replied,
            StatusArg::Closed => ContactStatus::Closed,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Users, newest first, with the filters of `users list` (`GET /users`).
    #[command(
        after_help = "Examples:\n  langcamp export users --role admin > admins.csv\n  langcamp export users --q example.com --registration-complete true --out users.csv"
    )]
    Users {
        /// Only users with this role.
        #[arg(long, value_enum)]
        role: Option<RoleArg>,
        /// Case-insensitive part of the e-mail or name.
        #[arg(long)]
        q: Option<String>,
        /// Only users whose registration is (true) or is not (false) complete.
        #[arg(long)]
        registration_complete: Option<bool>,
        /// Write to this new file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Test results, newest first, with the filters of the admin result list.
    #[command(
        after_help = "Example:\n  langcamp export results --target-language de --level B1 --out results-de-b1.csv"
    )]
    Results {
        /// Results of this test.
        #[arg(long)]
        test_id: Option<String>,
        /// Results of this user (an id).
        #[arg(long)]
        user_id: Option<String>,
        /// Results with exactly this level.
        #[arg(long)]
        level: Option<String>,
        /// Results of tests of this target language (a language code).
        #[arg(long)]
        target_language: Option<String>,
        /// Write to this new file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Contact requests, newest first, with the filters of the admin inbox.
    #[command(
        after_help = "Example:\n  langcamp export contacts --status PENDING --out pending.csv"
    )]
    Contacts {
        /// Only requests with this status.
        #[arg(long, value_enum)]
        status: Option<StatusArg>,
        /// Case-insensitive part of the first name, last name or e-mail.
        #[arg(long)]
        q: Option<String>,
        /// Write to this new file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

impl ExportCommand {
    fn query(&self) -> Result<ExportQuery, CliError> {
        Ok(match self {
            ExportCommand::Users {
                role,
                q,
                registration_complete,
                ..
            } => ExportQuery::Users(UserQuery {
                text: validate::search_text(q.as_deref()),
                is_registration_complete: *registration_complete,
                role: role.map(Into::into),
            }),
            ExportCommand::Results {
                test_id,
                user_id,
                level,
                target_language,
                ..
            } => {
                let text = |raw: &Option<String>| validate::search_text(raw.as_deref());
                let target_language = text(target_language)
                    .map(|tag| LanguageTag::parse("--target-language", &tag))
                    .transpose()
                    .map_err(CliError::usage)?;
                ExportQuery::Results(ResultQuery {
                    test_id: text(test_id).map(Id::from),
                    user_id: text(user_id).map(Id::from),
                    level: text(level),
                    target_language,
                })
            }
            ExportCommand::Contacts { status, q, .. } => ExportQuery::Contacts(ContactSearch {
                status: status.map(Into::into),
                text: validate::search_text(q.as_deref()),
            }),
        })
    }

    fn out(&self) -> Option<&Path> {
        match self {
            ExportCommand::Users { out, .. }
            | ExportCommand::Results { out, .. }
            | ExportCommand::Contacts { out, .. } => out.as_deref(),
        }
    }
}

pub async fn run(cli: &Cli, command: &ExportCommand) -> Result<(), CliError> {
    let query = command.query()?;
    let out = command.out();
    if let Some(file) = out
        && file.exists()
    {
        return Err(CliError::failed(format!(
            "{} already exists; choose a new file name",
            file.display()
        )));
    }
    let app = crate::open(crate::config(cli)?).await?;
    let export = app.export_csv(&Actor::Operator, query).await?;
    let name = export.name;
    let written = match out {
        None => {
            let mut stdout = std::io::stdout().lock();
            match unless_interrupted(copy(export, &mut stdout, None)).await {
                Ok(written) => written,
                Err(stop) => return Err(stop.into_error("the output stops where it was")),
            }
        }
        Some(file) => {
            let partial = crate::backup::with_suffix(file, ".partial");
            let mut target = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&partial)
                .map_err(|e| {
                    CliError::failed(format!("cannot create {}: {e}", partial.display()))
                })?;
            let bar = progress::bar(cli, &format!("exporting {name}"), "bytes");
            let written = match unless_interrupted(copy(export, &mut target, Some(&bar))).await {
                Ok(written) => written,
                Err(stop) => {
                    let _ = std::fs::remove_file(&partial);
                    bar.interrupted();
                    return Err(stop.into_error(format!(
                        "no file was written ({} removed)",
                        partial.display()
                    )));
                }
            };
            bar.finish();
            let written = written.and_then(|bytes| {
                std::fs::rename(&partial, file)
                    .map(|()| bytes)
                    .map_err(|e| {
                        CliError::failed(format!(
                            "cannot rename {} to {}: {e}",
                            partial.display(),
                            file.display()
                        ))
                    })
            });
            if written.is_err() {
                let _ = std::fs::remove_file(&partial);
            }
            written
        }
    };
    app.db().close().await;
    let bytes = written?;
    if let Some(file) = out {
        if cli.json {
            crate::print_json(&serde_json::json!({
                "export": name,
                "file": file.display().to_string(),
                "bytes": bytes,
            }))?;
        } else {
            println!("exported {name} to {} ({bytes} bytes)", file.display());
        }
    }
    Ok(())
}

/// Writes the export's chunks to `target` as they come; the bytes written.
async fn copy(
    export: CsvExport,
    target: &mut dyn Write,
    bar: Option<&progress::Bar>,
) -> Result<u64, CliError> {
    let mut body = export.body;
    let mut bytes = 0;
    let io_failed = |e: std::io::Error| CliError::failed(format!("writing the export: {e}"));
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        // A chunk is at most a few hundred kilobytes: written in place, as a command may.
        target.write_all(&chunk).map_err(io_failed)?;
        bytes += chunk.len() as u64;
        if let Some(bar) = bar {
            bar.advance(chunk.len() as u64);
        }
    }
    target.flush().map_err(io_failed)?;
    Ok(bytes)
}
