//! The object-store [`FileStore`]: one object per key in an S3-compatible bucket
//! (`FILE_STORE=s3://bucket/prefix`), through the `object_store` crate's S3 client.
//!
//! Uploads stream: up to one part ([`PART_SIZE`]) is buffered; a file that stays smaller
//! is sent with one `PUT` on commit, a larger one becomes a multipart upload whose parts
//! are sent while the client is still sending (at most [`PARTS_IN_FLIGHT`] at a time, so
//! memory stays bounded by a few parts whatever the file's size). Either way the object
//! only appears under its key once complete (S3 shows a multipart upload only when it is
//! completed), and an upload that is aborted or dropped is abandoned on the server.
//! Downloads stream too, `Range` as an HTTP range request.

use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, Stream};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientOptions, GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutPayload,
    RetryConfig, WriteMultipart,
};
use tracing::Instrument as _;

use super::{ByteStream, FileStore, FileWriter, Io, StoreUnavailable, check_key};
use crate::platform::config::S3Config;
use crate::platform::trace;

/// Bytes per part of a multipart upload: S3's smallest allowed part (all but the last).
const PART_SIZE: usize = 5 * 1024 * 1024;
/// Parts of one upload sent at the same time; the client's stream waits beyond that.
const PARTS_IN_FLIGHT: usize = 2;

#[derive(Clone)]
pub struct ObjectStoreS3 {
    store: Arc<AmazonS3>,
    prefix: String,
    url: String,
}

impl std::fmt::Debug for ObjectStoreS3 {
    // The client holds the credentials: show only where the files go.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStoreS3")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ObjectStoreS3 {
    /// A client for the configured bucket. Nothing is contacted yet: an unreachable store
    /// shows in `/ready` and as 503 on uploads and downloads, not as a refusal to start.
    pub fn new(config: &S3Config) -> io::Result<ObjectStoreS3> {
        // reqwest's TLS is built without a crypto provider of its own (Cargo.toml): use
        // ring's, as the rest of the process does. Already installed is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = ClientOptions::new()
            .with_allow_http(
                config
                    .endpoint
                    .as_deref()
                    .is_some_and(|e| e.starts_with("http://")),
            )
            .with_connect_timeout(Duration::from_secs(5))
            // No bound on a whole request: a large download to a slow client takes as long
            // as it takes. A server that stops sending is caught by the read timeout.
            .with_timeout_disabled()
            .with_read_timeout(Duration::from_secs(60));
        // A request is retried a little (a dropped connection, a 503 from the store), then
        // the failure reaches the client as 503 rather than holding the request for minutes.
        let retry = RetryConfig {
            backoff: BackoffConfig::default(),
            max_retries: 3,
            retry_timeout: Duration::from_secs(15),
        };
        let mut builder = AmazonS3Builder::new()
            .with_bucket_name(&config.bucket)
            .with_region(&config.region)
            .with_client_options(client)
            .with_retry(retry)
            // Self-hosted stores (MinIO, Ceph, Garage, moto) want path-style requests at
            // their endpoint; AWS itself is addressed by bucket host name.
            .with_virtual_hosted_style_request(config.endpoint.is_none());
        if let Some(endpoint) = &config.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        if let Some((id, secret)) = &config.credentials {
            builder = builder
                .with_access_key_id(id)
                .with_secret_access_key(secret.expose());
        }
        let store = builder
            .build()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        Ok(ObjectStoreS3 {
            store: Arc::new(store),
            prefix: config.prefix.clone(),
            url: config.url(),
        })
    }

    /// Where the files go, as in `FILE_STORE` (no credentials).
    pub fn url(&self) -> &str {
        &self.url
    }

    fn path_of(&self, key: &str) -> io::Result<Path> {
        check_key(key)?;
        let full = if self.prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{}/{key}", self.prefix)
        };
        Path::parse(&full).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
    }
}

/// An `object_store` failure as I/O: a missing object is `NotFound` (404); anything else
/// is the store failing or unreachable (503), never the client's mistake.
fn fault(e: object_store::Error) -> io::Error {
    match e {
        object_store::Error::NotFound { .. } => io::Error::new(io::ErrorKind::NotFound, e),
        other => io::Error::other(StoreUnavailable(other.to_string())),
    }
}

impl FileStore for ObjectStoreS3 {
    fn create<'a>(&'a self, key: &'a str) -> Io<'a, Box<dyn FileWriter>> {
        Box::pin(async move {
            let path = self.path_of(key)?;
            Ok(Box::new(S3Writer {
                store: Arc::clone(&self.store),
                path,
                buffered: Vec::new(),
                buffered_len: 0,
                upload: None,
            }) as Box<dyn FileWriter>)
        })
    }

    fn open<'a>(&'a self, key: &'a str, range: Option<Range<u64>>) -> Io<'a, ByteStream> {
        Box::pin(async move {
            let path = self.path_of(key)?;
            let options = GetOptions {
                range: range.map(GetRange::Bounded),
                ..GetOptions::default()
            };
            let result = self
                .store
                .get_opts(&path, options)
                .instrument(trace::object_store("GetObject"))
                .await
                .map_err(fault)?;
            Ok(Box::pin(SyncStream(Mutex::new(result.into_stream()))) as ByteStream)
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> Io<'a, ()> {
        Box::pin(async move {
            let path = self.path_of(key)?;
            let deleted = self
                .store
                .delete(&path)
                .instrument(trace::object_store("DeleteObject"))
                .await;
            match deleted {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(fault(e)),
            }
        })
    }

    fn size<'a>(&'a self, key: &'a str) -> Io<'a, Option<u64>> {
        Box::pin(async move {
            let path = self.path_of(key)?;
            let head = self
                .store
                .head(&path)
                .instrument(trace::object_store("HeadObject"))
                .await;
            match head {
                Ok(meta) => Ok(Some(meta.size)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(fault(e)),
            }
        })
    }
}

/// The object store's byte stream, made `Sync` as HTTP bodies need. The lock is never
/// contended: polling takes `&mut self`, so `get_mut` reaches the stream without locking.
struct SyncStream(Mutex<BoxStream<'static, object_store::Result<Bytes>>>);

impl Stream for SyncStream {
    type Item = io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let inner = self
            .get_mut()
            .0
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        inner
            .as_mut()
            .poll_next(cx)
            .map(|item| item.map(|r| r.map_err(fault)))
    }
}

struct S3Writer {
    store: Arc<AmazonS3>,
    path: Path,
    /// The first part, until it is known whether the file needs a multipart upload.
    buffered: Vec<Bytes>,
    buffered_len: usize,
    upload: Option<WriteMultipart>,
}

impl FileWriter for S3Writer {
    fn write<'a>(&'a mut self, chunk: Bytes) -> Io<'a, ()> {
        Box::pin(async move {
            if self.upload.is_none() {
                self.buffered_len += chunk.len();
                self.buffered.push(chunk);
                if self.buffered_len <= PART_SIZE {
                    return Ok(());
                }
                // Past one part: from here on the file goes up part by part.
                let upload = self
                    .store
                    .put_multipart(&self.path)
                    .instrument(trace::object_store("CreateMultipartUpload"))
                    .await
                    .map_err(fault)?;
                let mut upload = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
                for part in self.buffered.drain(..) {
                    upload.put(part);
                }
                self.buffered_len = 0;
                self.upload = Some(upload);
            } else if let Some(upload) = self.upload.as_mut() {
                upload.put(chunk);
            }
            if let Some(upload) = self.upload.as_mut() {
                // Back pressure: the client's stream waits while parts are in flight.
                upload
                    .wait_for_capacity(PARTS_IN_FLIGHT)
                    .await
                    .map_err(fault)?;
            }
            Ok(())
        })
    }

    fn commit(mut self: Box<Self>) -> Io<'static, ()> {
        Box::pin(async move {
            match self.upload.take() {
                // `finish` aborts the upload itself when a part or the completion fails.
                Some(upload) => upload
                    .finish()
                    .instrument(trace::object_store("CompleteMultipartUpload"))
                    .await
                    .map(drop)
                    .map_err(fault),
                None => {
                    let payload: PutPayload =
                        std::mem::take(&mut self.buffered).into_iter().collect();
                    self.store
                        .put(&self.path, payload)
                        .instrument(trace::object_store("PutObject"))
                        .await
                        .map(drop)
                        .map_err(fault)
                }
            }
        })
    }

    fn abort(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if let Some(upload) = self.upload.take()
                && let Err(e) = upload.abort().await
            {
                tracing::warn!(path = %self.path, error = %e, "cannot abort a partial upload");
            }
        })
    }
}

impl Drop for S3Writer {
    /// An upload abandoned midway (the client went away) is aborted in the background, so
    /// the store drops its parts.
    fn drop(&mut self) {
        let Some(upload) = self.upload.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let path = self.path.clone();
            runtime.spawn(async move {
                if let Err(e) = upload.abort().await {
                    tracing::warn!(%path, error = %e, "cannot abort an abandoned upload");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::config::{FileStoreConfig, Secret};

    fn store(prefix: &str) -> ObjectStoreS3 {
        let FileStoreConfig::S3(mut config) =
            FileStoreConfig::parse(Some("s3://unit-test-bucket"), |_| None).expect("valid")
        else {
            unreachable!("an s3:// URL is an S3 store");
        };
        config.prefix = prefix.to_owned();
        config.endpoint = Some("http://127.0.0.1:9".to_owned());
        config.credentials = Some(("AKIDUNIT".to_owned(), Secret::new("unit-secret-value")));
        ObjectStoreS3::new(&config).expect("a client is built without contacting the store")
    }

    #[test]
    fn keys_stay_under_the_prefix() {
        let prefixed = store("school/files");
        assert_eq!(
            prefixed.path_of("ab/0190f1a2").expect("plain").as_ref(),
            "school/files/ab/0190f1a2"
        );
        assert_eq!(store("").path_of("ab/x").expect("plain").as_ref(), "ab/x");
        for key in ["../x", "/etc/passwd", "a/../../x", "", "a//b", "./a"] {
            assert!(prefixed.path_of(key).is_err(), "{key:?}");
        }
    }

    /// TLS (reqwest's rustls with ring installed by `new`) is set up without panicking, and
    /// a store nobody answers for is a dependency's fault (503), not a bug (500).
    #[tokio::test]
    async fn an_https_store_that_is_unreachable_is_unavailable() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port");
        let FileStoreConfig::S3(mut config) =
            FileStoreConfig::parse(Some("s3://unit-test-bucket/files"), |_| None).expect("valid")
        else {
            unreachable!("an s3:// URL is an S3 store");
        };
        config.endpoint = Some(format!("https://{closed}"));
        config.credentials = Some(("AKIDUNIT".to_owned(), Secret::new("unit-secret-value")));
        let store = ObjectStoreS3::new(&config).expect("built");
        let err = store.size("ab/x").await.expect_err("nobody listens");
        assert!(
            matches!(
                crate::domain::error::Error::from(err),
                crate::domain::error::Error::Unavailable(_)
            ),
            "an unreachable store is 503"
        );
    }

    #[test]
    fn debug_output_names_the_bucket_but_never_the_credentials() {
        let debug = format!("{:?}", store("files"));
        assert!(debug.contains("s3://unit-test-bucket/files"), "{debug}");
        assert!(!debug.contains("unit-secret-value"), "{debug}");
        assert!(!debug.contains("AKIDUNIT"), "{debug}");
    }
}
