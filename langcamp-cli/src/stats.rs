//! `langcamp stats`: check the dashboard's rollup tables against a recount of the rows
//! they count, and rebuild them (migration 0060 keeps them exact with triggers; these
//! guard against a change made around them, such as a restore of some tables only).

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::dashboard::Drift;

use crate::interrupt::unless_interrupted;
use crate::{Cli, CliError, progress};

#[derive(Debug, Subcommand)]
pub enum StatsCommand {
    /// Compare every rollup row with a recount; exit 1 when any differs.
    #[command(after_help = "Example:\n  langcamp stats check --json")]
    Check,
    /// Recount every rollup row in one transaction and report what it repaired.
    #[command(after_help = "Example:\n  langcamp stats rebuild")]
    Rebuild,
}

pub async fn run(cli: &Cli, command: &StatsCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let outcome = match command {
        StatsCommand::Check => app.check_dashboard_rollups(&Actor::Operator).await,
        StatsCommand::Rebuild => {
            let bar = progress::bar(cli, "recounting the dashboard rollups", "steps");
            match unless_interrupted(app.rebuild_dashboard_rollups(&Actor::Operator, &bar)).await {
                Ok(outcome) => {
                    bar.finish();
                    outcome
                }
                Err(stop) => {
                    bar.interrupted();
                    // Closing the pool waits for the dropped transaction's rollback.
                    app.db().close().await;
                    return Err(stop.into_error(
                        "the rebuild is one transaction and was rolled back; nothing changed",
                    ));
                }
            }
        }
    };
    app.db().close().await;
    let drift = outcome?;
    let rebuilt = matches!(command, StatsCommand::Rebuild);
    if cli.json {
        crate::print_json(&serde_json::json!({ "drift": drift, "rebuilt": rebuilt }))?;
    } else {
        print_drift(&drift, rebuilt);
    }
    if drift.is_empty() || rebuilt {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "{} rollup rows differ from a recount; `langcamp stats rebuild` repairs them",
            drift.len()
        )))
    }
}

fn print_drift(drift: &[Drift], rebuilt: bool) {
    if drift.is_empty() {
        println!("The dashboard rollups match a recount of the data.");
        return;
    }
    for row in drift {
        println!(
            "{} {}: stored {:?}, recounted {:?}",
            row.table, row.key, row.stored, row.recounted
        );
    }
    if rebuilt {
        println!("Rebuilt: {} rows repaired.", drift.len());
    }
}
