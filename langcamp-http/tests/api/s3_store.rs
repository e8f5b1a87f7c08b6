//! Files in an S3-compatible object store (`FILE_STORE=s3://...`), against a real one: the
//! moto server `scripts/s3-test-server.sh` installs and starts, named by
//! `TEST_S3_ENDPOINT`. With it set, every test app that does not choose `FILE_STORE` gets
//! a bucket of its own there, so the upload and download tests of `storage` and
//! `materials` run against the object store unchanged; the tests here add what only an
//! object store has (multipart uploads, an unreachable endpoint).
//!
//! The test server takes any credentials and is only spoken to unsigned here, to create a
//! bucket and to list what is in it (what the server itself stores is not under test).

use langcamp_testkit::s3;
pub use langcamp_testkit::s3::endpoint;

use crate::helpers::TestApp;
use crate::storage::{path_of, pdf_of_size, stored_files, upload};

/// A bucket of one test on the S3 test server.
#[derive(Clone, Debug)]
pub struct TestBucket {
    pub endpoint: String,
    pub name: String,
}

/// An app whose files go to its own bucket of the S3 test server, taking uploads of up to
/// `upload_max_bytes`; `None` (the test skipped, saying so) without that server.
async fn on_s3(upload_max_bytes: usize) -> Option<(TestApp, TestBucket)> {
    if endpoint().is_none() {
        s3::skip();
        return None;
    }
    let app = TestApp::with_var("UPLOAD_MAX_BYTES", &upload_max_bytes.to_string()).await;
    let bucket = app.s3.clone().expect("the harness gave the test a bucket");
    Some((app, bucket))
}

impl TestBucket {
    /// The key prefix the harness gives every test's files.
    pub const PREFIX: &'static str = "files";

    /// A new bucket on the S3 test server, if `TEST_S3_ENDPOINT` names one.
    pub async fn create() -> Option<TestBucket> {
        let endpoint = endpoint()?;
        Some(TestBucket {
            name: s3::create_bucket(&endpoint),
            endpoint: endpoint.trim_end_matches('/').to_owned(),
        })
    }

    /// The configuration that stores an app's files in this bucket.
    pub fn vars(&self) -> Vec<(String, String)> {
        [
            ("FILE_STORE", format!("s3://{}/{}", self.name, Self::PREFIX)),
            ("S3_ENDPOINT", self.endpoint.clone()),
            ("S3_REGION", "us-east-1".to_owned()),
            ("S3_ACCESS_KEY_ID", "langcamp-test".to_owned()),
            ("S3_SECRET_ACCESS_KEY", "langcamp-test-secret".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Every key in the bucket.
    pub fn keys(&self) -> Vec<String> {
        let (status, body) = s3::request(
            &self.endpoint,
            "GET",
            &format!("/{}?list-type=2", self.name),
        );
        assert_eq!(status, 200, "list {}: {body}", self.name);
        between(&body, "<Key>", "</Key>")
    }

    /// Multipart uploads begun and neither completed nor aborted.
    pub fn pending_uploads(&self) -> Vec<String> {
        let (status, body) = s3::request(&self.endpoint, "GET", &format!("/{}?uploads", self.name));
        assert_eq!(status, 200, "list uploads of {}: {body}", self.name);
        between(&body, "<UploadId>", "</UploadId>")
    }
}

/// Every text between `open` and `close` in `body`.
fn between(body: &str, open: &str, close: &str) -> Vec<String> {
    body.split(open)
        .skip(1)
        .filter_map(|rest| rest.split_once(close).map(|(value, _)| value.to_owned()))
        .collect()
}

#[tokio::test]
async fn a_file_of_several_parts_streams_up_and_comes_back_whole_and_in_ranges() {
    let Some((app, bucket)) = on_s3(32 << 20).await else {
        return;
    };
    // Two full 5 MiB parts and a short last one.
    let size = (11 << 20) + 12345;
    let mut bytes = pdf_of_size(size);
    // Content that differs per part, so a part stored twice or out of order shows.
    for (i, b) in bytes.iter_mut().enumerate().skip(100).take(size - 200) {
        *b = b'a' + (i % 23) as u8;
    }
    let data = upload(&app, "big.pdf", "application/pdf", &bytes)
        .await
        .expect(201)
        .data();
    assert_eq!(data["size"], size);
    assert_eq!(bucket.keys().len(), 1, "one object: {:?}", bucket.keys());
    assert_eq!(bucket.pending_uploads(), Vec::<String>::new());

    let path = path_of(data["url"].as_str().expect("url"), &app);
    let whole = app.get(&path).expect(200).await;
    // Not assert_eq!: a failure would print 11 MiB.
    assert!(
        whole.body.as_ref() == bytes.as_slice(),
        "the file comes back byte for byte ({} bytes of {size})",
        whole.body.len()
    );
    let etag = whole.header("etag").expect("an ETag").to_owned();
    app.get(&path)
        .header("if-none-match", &etag)
        .expect(304)
        .await;
    // A range across the boundary of the first two parts.
    let (start, end) = ((5 << 20) - 10, (5 << 20) + 9);
    let part = app
        .get(&path)
        .header("range", &format!("bytes={start}-{end}"))
        .expect(206)
        .await;
    assert_eq!(part.body.as_ref(), &bytes[start..=end]);
}

#[tokio::test]
async fn a_stream_refused_after_several_parts_leaves_no_object_and_no_pending_upload() {
    let Some((app, bucket)) = on_s3(8 << 20).await else {
        return;
    };
    // Past the limit after the first part went up: the multipart upload is aborted.
    upload(&app, "big.pdf", "application/pdf", &pdf_of_size(12 << 20))
        .await
        .expect(413);
    assert_eq!(stored_files(&app).len(), 0);
    assert_eq!(bucket.pending_uploads(), Vec::<String>::new());
    assert_eq!(app.rows("stored_files").await, 0);
}

/// Runs without the test server: the store is a port nobody listens on.
#[tokio::test]
async fn an_unreachable_object_store_answers_503_with_retry_after_and_fails_readiness() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address")
        // Dropped here: nothing listens on the port any more.
    };
    let app = TestApp::builder()
        .var("FILE_STORE", "s3://unreachable-bucket/files")
        .var("S3_ENDPOINT", &format!("http://{closed}"))
        .var("S3_ACCESS_KEY_ID", "langcamp-test")
        .var("S3_SECRET_ACCESS_KEY", "langcamp-test-secret")
        .spawn()
        .await;
    let refused = upload(&app, "a.pdf", "application/pdf", &pdf_of_size(4096))
        .await
        .expect(503);
    assert!(
        refused.header("retry-after").is_some(),
        "{:?}",
        refused.headers
    );
    assert_eq!(refused.code(), "SERVICE_UNAVAILABLE");
    assert!(
        !refused.text().contains("langcamp-test-secret"),
        "{}",
        refused.text()
    );
    assert_eq!(app.rows("stored_files").await, 0, "nothing is recorded");

    let ready = app.get("/ready").expect(503).await;
    assert!(ready.header("retry-after").is_some());
    let body = ready.json();
    assert_eq!(body["checks"]["fileStore"]["ok"], false, "{body}");
    assert_eq!(body["checks"]["database"]["ok"], true, "{body}");
}

#[tokio::test]
async fn an_upload_abandoned_by_its_client_midway_is_aborted_in_the_store() {
    use tokio::io::AsyncWriteExt;

    let Some((app, bucket)) = on_s3(32 << 20).await else {
        return;
    };
    let (content_type, body) = crate::storage::Multipart::new()
        .file("file", "big.pdf", "application/pdf", &pdf_of_size(12 << 20))
        .finish();
    let mut socket = tokio::net::TcpStream::connect(app.addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /storage/upload HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\nX-Forwarded-For: {}\r\n\r\n",
        app.addr,
        body.len(),
        crate::helpers::fresh_client()
    );
    socket.write_all(head.as_bytes()).await.expect("send head");
    // More than one part: the server has begun a multipart upload...
    socket
        .write_all(&body[..7 << 20])
        .await
        .expect("send part of the body");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while bucket.pending_uploads().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "a multipart upload began"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // ...and the client goes away: the upload is aborted, nothing is stored.
    drop(socket);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !bucket.pending_uploads().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the abandoned multipart upload is aborted: {:?}",
            bucket.pending_uploads()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(bucket.keys(), Vec::<String>::new());
    assert_eq!(app.rows("stored_files").await, 0);
}
