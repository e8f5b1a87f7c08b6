//! The local-disk [`FileStore`]: one file per key under a root folder.
//!
//! A new file is written under `.tmp/` and renamed into place only when complete, so a
//! reader never sees half a file and a failed or abandoned upload leaves nothing behind
//! (the writer removes its temporary file when dropped without being committed).

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use futures_util::future::BoxFuture;
use tokio::fs::File;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use super::{ByteStream, FileStore, FileWriter, Io, check_key};
use crate::domain::id::new_id;

/// Bytes read from disk per chunk when serving a file.
const READ_CHUNK: usize = 64 * 1024;
/// Folder (inside the root) for files being written.
const TEMP_DIR: &str = ".tmp";

#[derive(Clone, Debug)]
pub struct LocalDisk {
    root: PathBuf,
}

impl LocalDisk {
    pub fn new(root: impl Into<PathBuf>) -> LocalDisk {
        LocalDisk { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `key` (a plain relative path, see [`check_key`]) under the root.
    fn path_of(&self, key: &str) -> io::Result<PathBuf> {
        check_key(key)?;
        Ok(self.root.join(key))
    }
}

impl FileStore for LocalDisk {
    fn create<'a>(&'a self, key: &'a str) -> Io<'a, Box<dyn FileWriter>> {
        Box::pin(async move {
            let dest = self.path_of(key)?;
            let temp_dir = self.root.join(TEMP_DIR);
            tokio::fs::create_dir_all(&temp_dir).await?;
            let temp = temp_dir.join(format!("{}.part", new_id()));
            let file = File::create_new(&temp).await?;
            Ok(Box::new(LocalWriter {
                file: Some(file),
                temp,
                dest,
                committed: false,
            }) as Box<dyn FileWriter>)
        })
    }

    fn open<'a>(&'a self, key: &'a str, range: Option<Range<u64>>) -> Io<'a, ByteStream> {
        Box::pin(async move {
            let mut file = File::open(self.path_of(key)?).await?;
            let reader = match range {
                Some(range) => {
                    file.seek(io::SeekFrom::Start(range.start)).await?;
                    file.take(range.end.saturating_sub(range.start))
                }
                None => file.take(u64::MAX),
            };
            Ok(read_stream(reader))
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> Io<'a, ()> {
        Box::pin(async move {
            match tokio::fs::remove_file(self.path_of(key)?).await {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        })
    }

    fn size<'a>(&'a self, key: &'a str) -> Io<'a, Option<u64>> {
        Box::pin(async move {
            match tokio::fs::metadata(self.path_of(key)?).await {
                Ok(meta) => Ok(Some(meta.len())),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        })
    }
}

/// Streams a file in chunks, never holding more than one chunk in memory.
fn read_stream(reader: tokio::io::Take<File>) -> ByteStream {
    Box::pin(futures_util::stream::unfold(
        Some(reader),
        |state| async move {
            let mut reader = state?;
            let mut buf = BytesMut::with_capacity(READ_CHUNK);
            match reader.read_buf(&mut buf).await {
                Ok(0) => None,
                Ok(_) => Some((Ok(buf.freeze()), Some(reader))),
                Err(e) => Some((Err(e), None)),
            }
        },
    ))
}

struct LocalWriter {
    file: Option<File>,
    temp: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl LocalWriter {
    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the file was already closed"))
    }
}

impl FileWriter for LocalWriter {
    fn write<'a>(&'a mut self, chunk: Bytes) -> Io<'a, ()> {
        Box::pin(async move { self.file()?.write_all(&chunk).await })
    }

    fn commit(mut self: Box<Self>) -> Io<'static, ()> {
        Box::pin(async move {
            let mut file = self
                .file
                .take()
                .ok_or_else(|| io::Error::other("the file was already closed"))?;
            file.flush().await?;
            file.sync_all().await?;
            drop(file);
            if let Some(parent) = self.dest.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            tokio::fs::rename(&self.temp, &self.dest).await?;
            self.committed = true;
            Ok(())
        })
    }

    fn abort(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            drop(self.file.take());
            if let Err(e) = tokio::fs::remove_file(&self.temp).await
                && e.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!(path = %self.temp.display(), error = %e, "cannot remove a partial upload");
            }
            // Nothing left for Drop to do.
            self.committed = true;
        })
    }
}

impl Drop for LocalWriter {
    /// An upload abandoned midway (the client went away and the request was dropped)
    /// leaves no partial file behind.
    fn drop(&mut self) {
        if !self.committed {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::TryStreamExt;

    fn temp_root() -> PathBuf {
        std::env::temp_dir().join(format!("langcamp-store-{}", new_id()))
    }

    async fn read_all(stream: ByteStream) -> Vec<u8> {
        let chunks: Vec<Bytes> = stream.try_collect().await.expect("readable");
        chunks.concat()
    }

    /// A writer of `key` that has been given `parts`, neither committed nor aborted.
    async fn written(store: &LocalDisk, key: &str, parts: &[&'static [u8]]) -> Box<dyn FileWriter> {
        let mut writer = store.create(key).await.expect("create");
        for part in parts {
            writer.write(Bytes::from_static(part)).await.expect("write");
        }
        writer
    }

    #[tokio::test]
    async fn a_committed_file_is_read_back_whole_or_in_part() {
        let store = LocalDisk::new(temp_root());
        let writer = written(&store, "ab/one", &[b"hello ", b"world"]).await;
        writer.commit().await.expect("commit");
        let whole = read_all(store.open("ab/one", None).await.expect("open")).await;
        assert_eq!(whole, b"hello world");
        let part = read_all(store.open("ab/one", Some(6..9)).await.expect("open")).await;
        assert_eq!(part, b"wor");
        assert_eq!(store.size("ab/one").await.expect("size"), Some(11));
        store.delete("ab/one").await.expect("delete");
        assert_eq!(store.size("ab/one").await.expect("size"), None);
        store
            .delete("ab/one")
            .await
            .expect("deleting twice is fine");
        assert!(store.open("ab/one", None).await.is_err());
        let _ = std::fs::remove_dir_all(store.root());
    }

    #[tokio::test]
    async fn an_uncommitted_file_leaves_nothing_behind() {
        let store = LocalDisk::new(temp_root());
        drop(written(&store, "cd/two", &[b"partial"]).await);
        written(&store, "cd/three", &[b"partial"])
            .await
            .abort()
            .await;
        let leftovers = std::fs::read_dir(store.root().join(TEMP_DIR))
            .expect("temp dir")
            .count();
        assert_eq!(leftovers, 0);
        assert!(!store.root().join("cd").exists());
        let _ = std::fs::remove_dir_all(store.root());
    }

    #[tokio::test]
    async fn keys_cannot_leave_the_root() {
        let store = LocalDisk::new(temp_root());
        for key in ["../x", "/etc/passwd", "a/../../x", "", "a//b", "./a"] {
            assert!(store.create(key).await.is_err(), "{key:?}");
            assert!(store.open(key, None).await.is_err(), "{key:?}");
        }
        let _ = std::fs::remove_dir_all(store.root());
    }
}
