//! `langcamp storage migrate --to s3://...`: copies the bytes of every recorded file from
//! one store (the local disk) into another (an object store), under the same keys, so an
//! instance switched to the new `FILE_STORE` serves every existing file.
//!
//! Idempotent: an object already in the target with the recorded size is left alone, so
//! an interrupted run is simply run again. Every copy is streamed (never a whole file in
//! memory) and its SHA-256 checked against the record before it is committed in the
//! target; a file whose bytes are missing or differ is reported, never copied.

use futures_util::StreamExt;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;

use super::FileStore;
use crate::Langcamp;
use crate::domain::actor::Actor;
use crate::domain::error::{Error, Result};
use crate::platform::crypto::hex;
use crate::platform::progress::Progress;

/// What a migration did, file by file counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationReport {
    /// Recorded files.
    pub files: u64,
    /// Copied by this run.
    pub copied: u64,
    /// Already in the target with the recorded size (an earlier run copied them).
    pub already_present: u64,
    /// Bytes copied by this run.
    pub bytes_copied: u64,
    /// Ids of files whose bytes are not in the source.
    pub missing: Vec<String>,
    /// Ids of files whose bytes in the source differ from their record (size or SHA-256).
    pub damaged: Vec<String>,
}

impl MigrationReport {
    /// Every recorded file is in the target.
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty() && self.damaged.is_empty()
    }
}

impl Langcamp {
    /// Copies every recorded file from `from` to `to` (operator only), telling
    /// `progress` the number of recorded files, then each one done (copied, already
    /// there, missing or damaged).
    ///
    /// Stopping it at any point (the future dropped, the process interrupted) leaves no
    /// object half-written under a key: each copy becomes visible in `to` only at its
    /// commit. Running it again goes on where it stopped.
    pub async fn migrate_files(
        &self,
        actor: &Actor,
        from: &dyn FileStore,
        to: &dyn FileStore,
        progress: &dyn Progress,
    ) -> Result<MigrationReport> {
        if !matches!(actor, Actor::Operator) {
            return Err(Error::forbidden());
        }
        let rows =
            sqlx::query("SELECT id, storage_key, size, sha256 FROM stored_files ORDER BY id")
                .fetch_all(self.db().reader())
                .await?;
        let mut report = MigrationReport::default();
        progress.start(rows.len() as u64);
        for row in rows {
            let id: String = row.try_get("id")?;
            let key: String = row.try_get("storage_key")?;
            let size = u64::try_from(row.try_get::<i64, _>("size")?).unwrap_or(0);
            let sha256: String = row.try_get("sha256")?;
            report.files += 1;
            if to.size(&key).await? == Some(size) {
                report.already_present += 1;
            } else {
                match copy(from, to, &key, size, &sha256).await? {
                    Copy::Done => {
                        report.copied += 1;
                        report.bytes_copied += size;
                    }
                    Copy::Missing => report.missing.push(id),
                    Copy::Damaged => report.damaged.push(id),
                }
            }
            progress.advance(1);
        }
        // The copy writes no row; its record in the trail is a transaction of its own.
        if report.copied > 0 {
            let target = crate::audit::Target::named("storage", "files copied to another store");
            let entry = crate::audit::Entry::new("storage.migrated", target).with_change_map(
                serde_json::json!({ "filesCopied": { "from": null, "to": report.copied } }),
            );
            self.record_alone(actor, entry).await?;
        }
        Ok(report)
    }
}

enum Copy {
    Done,
    Missing,
    Damaged,
}

async fn copy(
    from: &dyn FileStore,
    to: &dyn FileStore,
    key: &str,
    size: u64,
    sha256: &str,
) -> Result<Copy> {
    let mut source = match from.open(key, None).await {
        Ok(stream) => stream,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Copy::Missing),
        Err(e) => return Err(e.into()),
    };
    let mut writer = to.create(key).await?;
    let mut hasher = Sha256::new();
    let mut copied: u64 = 0;
    let streamed: std::io::Result<()> = async {
        while let Some(chunk) = source.next().await {
            let chunk = chunk?;
            copied += chunk.len() as u64;
            hasher.update(&chunk);
            writer.write(chunk).await?;
        }
        Ok(())
    }
    .await;
    if let Err(e) = streamed {
        writer.abort().await;
        return Err(e.into());
    }
    if copied != size || hex(&hasher.finalize()) != sha256 {
        writer.abort().await;
        return Ok(Copy::Damaged);
    }
    writer.commit().await?;
    Ok(Copy::Done)
}
