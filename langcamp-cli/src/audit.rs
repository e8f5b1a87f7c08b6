//! `langcamp audit`: the audit trail of CONTRACT §17 for an operator or an auditor: a
//! filtered list, and an export as JSON Lines (one entry a line, oldest first), streamed
//! so a year of entries never sits in memory.

use std::io::Write;

use clap::{Args as ClapArgs, Subcommand};
use langcamp_core::audit::{AuditEntry, AuditQuery, time};
use langcamp_core::{Actor, PageRequest};

use crate::{Cli, CliError};

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// The newest entries (up to --limit), filtered.
    #[command(
        after_help = "Examples:\n  langcamp audit list --since 2026-11-01T00:00:00Z --action user.role_changed\n  langcamp audit list --actor admin@school.example --json"
    )]
    List {
        #[command(flatten)]
        filter: Filter,
        /// At most this many entries (1 to 100).
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Every entry of the period as JSON Lines on stdout, oldest first.
    #[command(
        after_help = "Example:\n  langcamp audit export --since 2026-01-01T00:00:00Z > audit-2026.jsonl"
    )]
    Export {
        #[command(flatten)]
        filter: Filter,
        /// Only entries before this time (RFC 3339).
        #[arg(long)]
        until: Option<String>,
    },
}

#[derive(Debug, ClapArgs)]
pub struct Filter {
    /// Only entries at or after this time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Only actions by this staff e-mail (or operator name).
    #[arg(long)]
    actor: Option<String>,
    /// Only this action, e.g. `user.role_changed`.
    #[arg(long)]
    action: Option<String>,
}

impl Filter {
    fn query(&self, until: Option<&str>) -> Result<AuditQuery, CliError> {
        let since = time("--since", self.since.as_deref()).map_err(CliError::usage)?;
        let until = time("--until", until).map_err(CliError::usage)?;
        Ok(AuditQuery {
            actor_email: self.actor.as_ref().map(|a| a.trim().to_lowercase()),
            action: self.action.as_ref().map(|a| a.trim().to_owned()),
            from: since,
            to: until,
            ..AuditQuery::default()
        })
    }
}

pub async fn run(cli: &Cli, command: &AuditCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let operator = Actor::Operator;
    match command {
        AuditCommand::List { filter, limit } => {
            let page = PageRequest::parse(None, Some(&limit.to_string()))?;
            let entries = app
                .list_audit(&operator, &filter.query(None)?, page)
                .await?;
            if cli.json {
                crate::print_json(&entries)?;
            } else {
                for entry in &entries.list {
                    println!("{}", line(entry));
                }
                println!(
                    "{} of {} entries",
                    entries.list.len(),
                    entries.pagination.total_items
                );
            }
        }
        AuditCommand::Export { filter, until } => {
            let query = filter.query(until.as_deref())?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let failed = |e: std::io::Error| langcamp_core::Error::internal(e);
            let written = app
                .each_audit_entry(&operator, &query, |entry| {
                    serde_json::to_writer(&mut out, &entry)?;
                    out.write_all(b"\n").map_err(failed)
                })
                .await?;
            out.flush().map_err(|e| CliError::failed(e.to_string()))?;
            drop(out);
            eprintln!("exported {written} entries");
        }
    }
    app.db().close().await;
    Ok(())
}

/// One entry on one line: when, who, what, on what.
fn line(entry: &AuditEntry) -> String {
    let target = entry
        .target
        .label
        .as_deref()
        .or(entry.target.id.as_deref())
        .unwrap_or("-");
    format!(
        "{}  {:<28} {:<24} {} {}",
        entry.at, entry.actor.email, entry.action, entry.target.kind, target
    )
}
