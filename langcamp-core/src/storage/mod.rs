//! Uploaded files: records in `stored_files`, bytes in a [`FileStore`].
//!
//! An upload is *staged* first: its bytes are streamed into the store under a generated
//! key while the type is decided from the content, the size is counted against
//! `UPLOAD_MAX_BYTES` and the SHA-256 is computed, chunk by chunk, without ever holding
//! the file in memory. Only then does a transaction record it (a plain upload, or the
//! PDFs of an education material together with the material). A staged file that is
//! never recorded is removed again, so a refused or failed request leaves no bytes behind.
//!
//! The bytes' store is the platform's (`platform::file_store`, chosen by `FILE_STORE`).

pub mod migrate;
#[cfg(test)]
mod tests;

use std::io;
use std::ops::Range;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::stream::{Stream, StreamExt};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;
use utoipa::ToSchema;

use crate::Langcamp;
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::{looks_like_id, new_id};
use crate::domain::time::Timestamp;
use crate::platform::crypto::hex;
use crate::platform::db::{Arg, Row as _, WriteConn, run_to_end};
pub use crate::platform::file_store::{ByteStream, FileStore, FileType};
use crate::platform::file_store::{SNIFF_LEN, sniff};

/// The store key of a file id: spread over 256 folders by the id's last (random) digits.
fn storage_key(id: &str) -> String {
    let shard = id.get(id.len().saturating_sub(2)..).unwrap_or("00");
    format!("{shard}/{id}")
}

/// Which types an upload may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// Any type of the allow-list (`POST /storage/upload`).
    AnyAllowed,
    /// PDF documents only (education materials; admins only).
    Pdf,
}

impl Accept {
    fn allows(self, file_type: FileType) -> bool {
        match self {
            Accept::AnyAllowed => true,
            Accept::Pdf => file_type == FileType::Pdf,
        }
    }

    fn refusal(self, name: &str) -> Error {
        Error::UnsupportedMediaType(match self {
            Accept::AnyAllowed => format!(
                "{name:?} is not an accepted file type; accepted are {}",
                FileType::ALL.map(FileType::label).join(", ")
            ),
            Accept::Pdf => format!("{name:?} is not a PDF document"),
        })
    }
}

/// An uploaded file, as answered by `POST /storage/upload`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredFile {
    pub id: String,
    /// The name the client gave (its last path segment), kept only as information.
    #[schema(example = "timetable.pdf")]
    pub original_name: String,
    /// Decided from the content.
    #[schema(example = "application/pdf")]
    pub mime_type: String,
    /// Bytes.
    pub size: u64,
    /// Where the file is served: `{PUBLIC_BASE_URL}/storage/files/{id}`.
    pub url: String,
    pub created_at: Timestamp,
}

/// What is known about a stored file, for serving it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileMeta {
    pub id: String,
    pub original_name: String,
    pub mime_type: String,
    pub size: u64,
    /// Hex SHA-256 of the bytes (the `ETag`).
    pub sha256: String,
    pub created_at: Timestamp,
    storage_key: String,
}

impl FileMeta {
    /// The accepted type, if the stored type is one (it always is for files stored here).
    pub fn file_type(&self) -> Option<FileType> {
        FileType::from_mime(&self.mime_type)
    }
}

/// A file whose bytes are in the store but that no record refers to yet. Recording it
/// (`save_upload`, or creating or updating a material) keeps it; anything else removes
/// the bytes again: [`Langcamp::discard_staged`], or, if the request is abandoned
/// midway, dropping it.
#[derive(Debug)]
pub struct StagedFile {
    id: String,
    key: String,
    original_name: String,
    file_type: FileType,
    size: u64,
    sha256: String,
    created_at: i64,
    store: Arc<dyn FileStore>,
    settled: bool,
}

impl StagedFile {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn original_name(&self) -> &str {
        &self.original_name
    }

    pub fn file_type(&self) -> FileType {
        self.file_type
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes now belong to a committed record (or were removed): nothing to undo.
    pub(crate) fn settle(&mut self) {
        self.settled = true;
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // Abandoned (a request dropped midway): remove the bytes in the background.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let store = Arc::clone(&self.store);
            let key = std::mem::take(&mut self.key);
            runtime.spawn(async move {
                if let Err(e) = store.delete(&key).await {
                    tracing::warn!(%key, error = %e, "cannot remove an abandoned upload");
                }
            });
        }
    }
}

/// The name a client gave, made harmless: only its last path segment, without control
/// characters, at most 255 characters; `file` when nothing is left.
pub fn clean_file_name(raw: Option<&str>) -> String {
    let base = raw.unwrap_or("").rsplit(['/', '\\']).next().unwrap_or("");
    // Bidirectional overrides too: they make `cod.exe` display as something else.
    let cleaned: String = base
        .chars()
        .filter(|c| {
            !c.is_control()
                && !crate::domain::validate::is_forbidden_char(
                    *c,
                    crate::domain::validate::Lines::Single,
                )
        })
        .take(255)
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "file".to_owned()
    } else {
        cleaned.to_owned()
    }
}

fn too_large(limit: u64) -> Error {
    Error::PayloadTooLarge(format!(
        "the file is larger than the upload limit of {limit} bytes"
    ))
}

/// The `stored_files` row of a staged file: what a piece of write work records, while the
/// [`StagedFile`] itself stays with the operation, which settles it once the piece has
/// committed.
#[derive(Clone, Debug)]
pub(crate) struct FileRecord {
    id: String,
    key: String,
    original_name: String,
    mime_type: &'static str,
    size: u64,
    sha256: String,
    created_at: i64,
}

impl FileRecord {
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn original_name(&self) -> &str {
        &self.original_name
    }

    pub(crate) fn size(&self) -> u64 {
        self.size
    }
}

impl StagedFile {
    /// The row that records this file.
    pub(crate) fn record(&self) -> FileRecord {
        FileRecord {
            id: self.id.clone(),
            key: self.key.clone(),
            original_name: self.original_name.clone(),
            mime_type: self.file_type.mime(),
            size: self.size,
            sha256: self.sha256.clone(),
            created_at: self.created_at,
        }
    }
}

/// Records a staged file in `stored_files` (inside the caller's transaction, or its piece
/// of write work), refusing with 507 when the stored bytes would pass `max_bytes`
/// (`FILE_STORE_MAX_BYTES`).
///
/// The total is the `file_store_usage` row that a trigger updates with the insert, in this
/// transaction; on PostgreSQL that update holds the row's lock until commit, so concurrent
/// uploads (from any instance) are counted one after the other and the check is exact.
pub(crate) async fn insert_stored_file<C: WriteConn>(
    conn: &mut C,
    file: &FileRecord,
    max_bytes: Option<u64>,
) -> Result<()> {
    conn.exec(
        "INSERT INTO stored_files (id, original_name, mime_type, size, sha256, storage_key, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            Arg::Text(&file.id),
            Arg::Text(&file.original_name),
            Arg::Text(file.mime_type),
            Arg::Int(i64::try_from(file.size).unwrap_or(i64::MAX)),
            Arg::Text(&file.sha256),
            Arg::Text(&file.key),
            Arg::Int(file.created_at),
        ],
    )
    .await?;
    let Some(max) = max_bytes else {
        return Ok(());
    };
    let used = conn
        .fetch_first("SELECT bytes FROM file_store_usage WHERE id = 1", &[])
        .await?
        .ok_or_else(|| Error::internal("the file store's usage row is missing"))?
        .int("bytes")?;
    if u64::try_from(used).unwrap_or(0) > max {
        // The caller's transaction (or piece) is undone: the insert and the count with it.
        return Err(Error::InsufficientStorage(format!(
            "the file store is full: storing {:?} ({} bytes) would pass its quota of {max} bytes",
            file.original_name, file.size
        )));
    }
    Ok(())
}

/// Deletes the record of a file no material uses any more; returns its store key so the
/// bytes can be removed once the transaction has committed.
pub(crate) async fn delete_unused_file<C: WriteConn>(
    conn: &mut C,
    file_id: &str,
) -> Result<Option<String>> {
    let row = conn
        .fetch_first(
            "DELETE FROM stored_files
             WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM material_pdfs WHERE file_id = $1)
             RETURNING storage_key",
            &[Arg::Text(file_id)],
        )
        .await?;
    row.map(|r| r.text("storage_key")).transpose()
}

impl Langcamp {
    /// The public address of a stored file.
    pub fn file_url(&self, id: &str) -> String {
        format!("{}/storage/files/{id}", self.config().public_base_url)
    }

    /// Streams an upload into the file store: the type is decided from the first bytes
    /// (415 when not accepted, before anything is written), the size is checked while
    /// streaming (413 past `UPLOAD_MAX_BYTES`), the SHA-256 computed on the way. Nothing
    /// is recorded yet; a failure leaves no bytes behind.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn stage_file<S>(
        &self,
        actor: &Actor,
        accept: Accept,
        original_name: Option<&str>,
        bytes: S,
    ) -> Result<StagedFile>
    where
        S: Stream<Item = Result<Bytes>> + Send,
    {
        if accept == Accept::Pdf {
            actor.require(Role::Admin)?;
        }
        let original_name = clean_file_name(original_name);
        let limit = self.config().upload_max_bytes;
        let mut bytes = std::pin::pin!(bytes);

        let mut head = BytesMut::new();
        while head.len() < SNIFF_LEN {
            let Some(chunk) = bytes.next().await else {
                break;
            };
            head.extend_from_slice(&chunk?);
            if head.len() as u64 > limit {
                return Err(too_large(limit));
            }
        }
        if head.is_empty() {
            return Err(Error::invalid(format!("{original_name:?} is empty")));
        }
        let file_type = sniff(&head)
            .filter(|t| accept.allows(*t))
            .ok_or_else(|| accept.refusal(&original_name))?;

        let id = new_id();
        let key = storage_key(&id);
        let mut writer = self.files().create(&key).await?;
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        let mut next = Some(head.freeze());
        let written: Result<()> = async {
            loop {
                let chunk = match next.take() {
                    Some(chunk) => chunk,
                    None => match bytes.next().await {
                        Some(chunk) => chunk?,
                        None => return Ok(()),
                    },
                };
                size += chunk.len() as u64;
                if size > limit {
                    return Err(too_large(limit));
                }
                hasher.update(&chunk);
                writer.write(chunk).await?;
            }
        }
        .await;
        if let Err(e) = written {
            writer.abort().await;
            return Err(e);
        }
        writer.commit().await?;
        Ok(StagedFile {
            id,
            key,
            original_name,
            file_type,
            size,
            sha256: hex(&hasher.finalize()),
            created_at: self.clock().now_ms(),
            store: Arc::clone(self.files()),
            settled: false,
        })
    }

    /// Removes the bytes of staged files that will not be recorded.
    pub async fn discard_staged(&self, files: Vec<StagedFile>) {
        for mut file in files {
            if let Err(e) = file.store.delete(&file.key).await {
                tracing::warn!(key = %file.key, error = %e, "cannot remove a discarded upload");
            }
            file.settle();
        }
    }

    /// Removes the bytes of files whose records were deleted (after the commit).
    pub(crate) async fn remove_stored_bytes(&self, keys: Vec<String>) {
        for key in keys {
            if let Err(e) = self.files().delete(&key).await {
                tracing::warn!(%key, error = %e, "cannot remove the bytes of a deleted file");
            }
        }
    }

    /// `POST /storage/upload` (public): records a staged upload. The record and the
    /// settling of the staged bytes run to their end in a task of their own: a caller
    /// that stops waiting after the commit (a client hanging up) must not drop the staged
    /// file unsettled, which would remove the bytes of a file now recorded (and counted
    /// against the quota).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn save_upload(&self, actor: &Actor, staged: StagedFile) -> Result<StoredFile> {
        // Anyone may upload; the actor is taken for symmetry with every other operation.
        let _ = actor;
        let app = self.clone();
        run_to_end(async move { app.record_upload(staged).await }).await
    }

    async fn record_upload(&self, mut staged: StagedFile) -> Result<StoredFile> {
        let recorded: Result<()> = async {
            let mut tx = self.db().begin().await?;
            insert_stored_file(
                &mut tx,
                &staged.record(),
                self.config().file_store_max_bytes,
            )
            .await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        if let Err(e) = recorded {
            self.discard_staged(vec![staged]).await;
            return Err(e);
        }
        staged.settle();
        Ok(StoredFile {
            url: self.file_url(&staged.id),
            id: staged.id.clone(),
            original_name: staged.original_name.clone(),
            mime_type: staged.file_type.mime().to_owned(),
            size: staged.size,
            created_at: Timestamp::from_millis(staged.created_at),
        })
    }

    /// The record of a stored file (public; an unknown or malformed id is 404).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn stored_file(&self, actor: &Actor, id: &Id<StoredFile>) -> Result<FileMeta> {
        let _ = actor;
        let id = id.as_str();
        let not_found = || Error::not_found("file");
        if !looks_like_id(id) {
            return Err(not_found());
        }
        let row = sqlx::query(
            "SELECT id, original_name, mime_type, size, sha256, storage_key, created_at
             FROM stored_files WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.db().reader())
        .await?
        .ok_or_else(not_found)?;
        let size: i64 = row.try_get("size")?;
        Ok(FileMeta {
            id: row.try_get("id")?,
            original_name: row.try_get("original_name")?,
            mime_type: row.try_get("mime_type")?,
            size: u64::try_from(size).unwrap_or(0),
            sha256: row.try_get("sha256")?,
            created_at: Timestamp::from_millis(row.try_get("created_at")?),
            storage_key: row.try_get("storage_key")?,
        })
    }

    /// Streams a stored file, or the bytes `range` of it (`start < end <= size`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn read_stored_file(
        &self,
        meta: &FileMeta,
        range: Option<Range<u64>>,
    ) -> Result<ByteStream> {
        if let Some(r) = &range
            && (r.start >= r.end || r.end > meta.size)
        {
            return Err(Error::invalid("the byte range is outside the file"));
        }
        self.files()
            .open(&meta.storage_key, range)
            .await
            .map_err(|e| {
                if e.kind() == io::ErrorKind::NotFound {
                    tracing::warn!(id = %meta.id, "a recorded file has no bytes in the store");
                    Error::not_found("file")
                } else {
                    Error::from(e)
                }
            })
    }
}
