//! `langcamp storage migrate --to s3://bucket/prefix`: copies the files under
//! `DATA_DIR/files` into an object store, for switching `FILE_STORE` from the local disk to
//! S3 (docs/OPERATIONS.md). Idempotent; reports what it copied. A bar counts the files on a
//! terminal; Ctrl-C stops it between two commits, and the same command resumes.

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::platform::config::FileStoreConfig;
use langcamp_core::platform::file_store::{LocalDisk, store_for};
use langcamp_core::storage::migrate::MigrationReport;

use crate::interrupt::unless_interrupted;
use crate::{Cli, CliError, progress};

#[derive(Debug, Subcommand)]
pub enum StorageCommand {
    /// Copy every recorded file from DATA_DIR/files into an object store (S3_ENDPOINT,
    /// S3_REGION, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY as for FILE_STORE); files
    /// already there are skipped, so it can run again after an interruption.
    #[command(
        after_help = "Example:\n  S3_ENDPOINT=http://minio:9000 langcamp storage migrate --to s3://langcamp/files"
    )]
    Migrate {
        /// The target store: s3://bucket/prefix.
        #[arg(long)]
        to: String,
    },
}

pub async fn run(cli: &Cli, command: &StorageCommand) -> Result<(), CliError> {
    let StorageCommand::Migrate { to } = command;
    let config = crate::config(cli)?;
    let target = FileStoreConfig::parse(Some(to), |name| std::env::var(name).ok())
        .map_err(|e| CliError::usage(format!("--to: {e}")))?;
    let FileStoreConfig::S3(s3) = &target else {
        return Err(CliError::usage(
            "--to must name an object store (s3://bucket/prefix); the files are already local",
        ));
    };
    let target_url = s3.url();
    let source = LocalDisk::new(config.data_dir.join("files"));
    let target_store = store_for(&target, &config).map_err(|e| CliError::failed(e.to_string()))?;
    let app = crate::open(config).await?;
    let bar = progress::bar(cli, "copying files", "files");
    let outcome = unless_interrupted(app.migrate_files(
        &Actor::Operator,
        &source,
        target_store.as_ref(),
        &bar,
    ))
    .await;
    app.db().close().await;
    let report = match outcome {
        Ok(outcome) => {
            bar.finish();
            outcome?
        }
        Err(stop) => {
            bar.interrupted();
            // The file being copied was not committed, so no object stands half-written.
            return Err(stop.into_error(format!(
                "the files copied so far are in {target_url}; run the same command again to resume"
            )));
        }
    };
    if cli.json {
        crate::print_json(&serde_json::json!({ "to": target_url, "report": report }))?;
    } else {
        print_report(&report, &target_url, source.root());
    }
    if report.is_complete() {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "{} files missing and {} damaged in {}; they were not copied",
            report.missing.len(),
            report.damaged.len(),
            source.root().display()
        )))
    }
}

fn print_report(report: &MigrationReport, to: &str, from: &std::path::Path) {
    println!(
        "{} files recorded: {} copied ({} bytes), {} already in {to}.",
        report.files, report.copied, report.bytes_copied, report.already_present
    );
    for id in &report.missing {
        println!("missing in {}: {id}", from.display());
    }
    for id in &report.damaged {
        println!("damaged (size or SHA-256 differs from its record): {id}");
    }
}
