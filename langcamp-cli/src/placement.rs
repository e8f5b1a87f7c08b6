//! `langcamp placement calibrate [--test ID]`: gives each adaptive question the difficulty
//! its answers show, and each adaptive test the common slope of its questions (CONTRACT
//! §19, issue #44; the model in `langcamp_core::placement::adaptive`). A question needs at
//! least `minAnswers` (50) answers of finished attempts; one with fewer keeps its
//! difficulty, and its answer count is stored either way. A test's slope needs
//! `minSlopeAnswers` (1,000) answers on calibrated questions of two levels or more. A bar
//! counts the tests on a terminal.

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::domain::Id;
use langcamp_core::placement::Calibration;

use crate::{Cli, CliError, progress};

#[derive(Debug, Subcommand)]
pub enum PlacementCommand {
    /// Estimate each adaptive question's difficulty (at least 50 answers per question) and
    /// each adaptive test's slope from the answers of finished attempts, and store them;
    /// run it again as answers accumulate.
    #[command(
        after_help = "Examples:\n  langcamp placement calibrate\n  langcamp placement calibrate --test 0193a6c2-7f1e-7c3a-9d4b-2f6e8a1b5c7d --json"
    )]
    Calibrate {
        /// Only this adaptive test (its id); default every adaptive test.
        #[arg(long)]
        test: Option<String>,
    },
}

pub async fn run(cli: &Cli, command: &PlacementCommand) -> Result<(), CliError> {
    let PlacementCommand::Calibrate { test } = command;
    let config = crate::config(cli)?;
    let app = crate::open(config).await?;
    let bar = progress::bar(cli, "calibrating", "tests");
    let test = test.as_deref().map(|id| Id::from(id.trim()));
    let outcome = app
        .calibrate_placement(&Actor::Operator, test.as_ref(), &bar)
        .await;
    app.db().close().await;
    bar.finish();
    let report = outcome?;
    if cli.json {
        crate::print_json(&report)?;
    } else {
        print_report(&report);
    }
    Ok(())
}

fn print_report(report: &Calibration) {
    let calibrated = report.questions.iter().filter(|q| q.calibrated).count();
    println!(
        "{} adaptive tests, {} questions: {calibrated} calibrated, {} with fewer than {} answers kept their difficulty.",
        report.tests,
        report.questions.len(),
        report.questions.len() - calibrated,
        report.min_answers
    );
    for s in &report.slopes {
        if s.calibrated {
            println!(
                "{} slope: {:.2} -> {:.2} (±{:.2}, {} answers)",
                s.test_id,
                s.previous,
                s.slope,
                s.standard_error.unwrap_or_default(),
                s.answers
            );
        } else {
            println!(
                "{} slope: {:.2} kept (needs {} answers on calibrated questions of two levels)",
                s.test_id, s.slope, report.min_slope_answers
            );
        }
    }
    for q in report.questions.iter().filter(|q| q.calibrated) {
        println!(
            "{} {} ({}): {:.2} -> {:.2} (±{:.2}, {} answers)",
            q.test_id,
            q.question_id,
            q.level.as_deref().unwrap_or("-"),
            q.previous,
            q.difficulty,
            q.standard_error.unwrap_or_default(),
            q.answers
        );
    }
}
