//! File storage (CONTRACT §10): uploads decided by content, limits, and serving with
//! ETag and ranges. Also home of the multipart and file builders the material tests use.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::helpers::{TestApp, TestResponse, fresh_client};

/// A `multipart/form-data` body under construction.
pub struct Multipart {
    boundary: String,
    body: Vec<u8>,
}

impl Multipart {
    pub fn new() -> Multipart {
        Multipart {
            boundary: "langcamp-test-boundary-7d9a".to_owned(),
            body: Vec::new(),
        }
    }

    pub fn text(mut self, name: &str, value: &str) -> Multipart {
        self.body.extend_from_slice(
            format!(
                "--{}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n",
                self.boundary
            )
            .as_bytes(),
        );
        self
    }

    pub fn file(
        mut self,
        name: &str,
        file_name: &str,
        content_type: &str,
        bytes: &[u8],
    ) -> Multipart {
        self.body.extend_from_slice(
            format!(
                "--{}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\n\
                 Content-Type: {content_type}\r\n\r\n",
                self.boundary
            )
            .as_bytes(),
        );
        self.body.extend_from_slice(bytes);
        self.body.extend_from_slice(b"\r\n");
        self
    }

    /// (Content-Type, body)
    pub fn finish(mut self) -> (String, Vec<u8>) {
        self.body
            .extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        (
            format!("multipart/form-data; boundary={}", self.boundary),
            self.body,
        )
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut crc_input = kind.to_vec();
    crc_input.extend_from_slice(data);
    out.extend_from_slice(&crc_input);
    out.extend_from_slice(&crc32(&crc_input).to_be_bytes());
}

/// A valid RGB PNG of `width` x `height` pixels (a gradient), zlib with stored blocks.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // filter: none
        for x in 0..width {
            raw.extend_from_slice(&[(x * 7) as u8, (y * 13) as u8, ((x + y) * 3) as u8]);
        }
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    zlib.extend_from_slice(&adler32(&raw).to_be_bytes());

    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IDAT", &zlib);
    png_chunk(&mut out, b"IEND", &[]);
    out
}

/// A valid one-page PDF drawing a line; `label` makes each one different.
pub fn pdf(label: &str) -> Vec<u8> {
    let content = format!("% {label}\n0 0 m 100 100 l S\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>".to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}endstream",
            content.len()
        ),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A PDF padded with a trailing comment to exactly `size` bytes.
pub fn pdf_of_size(size: usize) -> Vec<u8> {
    let mut out = pdf("padded");
    assert!(out.len() + 2 <= size, "the base PDF is small");
    out.extend_from_slice(b"%");
    out.resize(size - 1, b'x');
    out.push(b'\n');
    out
}

/// Every regular file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The files in the app's file store: the files under `DATA_DIR/files`, or the keys in
/// the test's bucket.
pub fn stored_files(app: &TestApp) -> Vec<PathBuf> {
    match &app.s3 {
        Some(bucket) => bucket.keys().into_iter().map(PathBuf::from).collect(),
        None => files_under(&app.data_dir.join("files")),
    }
}

async fn upload_from(app: &TestApp, client: &str, form: Multipart) -> TestResponse {
    let (content_type, body) = form.finish();
    app.post("/storage/upload")
        .header("x-forwarded-for", client)
        .body(&content_type, body)
        .send()
        .await
}

pub async fn upload(
    app: &TestApp,
    file_name: &str,
    content_type: &str,
    bytes: &[u8],
) -> TestResponse {
    upload_from(
        app,
        &fresh_client(),
        Multipart::new().file("file", file_name, content_type, bytes),
    )
    .await
}

/// The path part of a file's URL.
pub fn path_of(url: &str, app: &TestApp) -> String {
    url.strip_prefix(&format!("http://{}", app.addr))
        .unwrap_or_else(|| panic!("{url} is not on this server"))
        .to_owned()
}

#[tokio::test]
async fn a_png_and_a_pdf_are_stored_and_served_byte_for_byte() {
    let app = TestApp::spawn().await;
    let image = png(40, 30);
    let document = pdf("timetable");
    for (name, claimed, bytes, mime) in [
        ("dot.png", "image/png", &image, "image/png"),
        (
            "timetable.pdf",
            "application/octet-stream",
            &document,
            "application/pdf",
        ),
    ] {
        let data = upload(&app, name, claimed, bytes).await.expect(201).data();
        let id = data["id"].as_str().expect("id");
        assert_eq!(data["originalName"], name);
        assert_eq!(data["mimeType"], mime);
        assert_eq!(data["size"], bytes.len());
        assert_eq!(
            data["url"],
            format!("http://{}/storage/files/{id}", app.addr)
        );
        assert!(data["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')));

        let served = app
            .get(&path_of(data["url"].as_str().expect("url"), &app))
            .expect(200)
            .await;
        assert_eq!(served.body.as_ref(), bytes.as_slice());
        assert_eq!(served.header("content-type"), Some(mime));
        assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
        // Opened as a page, a crafted file runs nothing with the API origin's rights.
        let policy = served.header("content-security-policy").unwrap_or("");
        assert!(policy.starts_with("sandbox;"), "{policy}");
        assert!(policy.contains("default-src 'none'"), "{policy}");
        assert_eq!(
            served.header("content-length"),
            Some(bytes.len().to_string().as_str())
        );
        assert_eq!(served.header("accept-ranges"), Some("bytes"));
        assert_eq!(
            served.header("content-disposition"),
            Some(format!("inline; filename=\"{name}\"; filename*=UTF-8''{name}").as_str())
        );
        let etag = served.header("etag").expect("an ETag");
        assert_eq!(etag.len(), 66, "a quoted SHA-256: {etag}");
        assert!(etag.starts_with('"') && etag.ends_with('"'));
    }
    assert_eq!(stored_files(&app).len(), 2);
}

#[tokio::test]
async fn html_renamed_to_png_is_refused_and_nothing_is_stored() {
    let app = TestApp::spawn().await;
    let html = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>";
    let refused = upload(&app, "cute-cat.png", "image/png", html)
        .await
        .expect(415);
    assert_eq!(refused.code(), "UNSUPPORTED_MEDIA_TYPE");
    assert_eq!(refused.json()["statusCode"], 415);
    assert_eq!(stored_files(&app), Vec::<PathBuf>::new());
    assert_eq!(app.rows("stored_files").await, 0);
}

#[tokio::test]
async fn a_path_in_the_file_name_never_leaves_the_storage_root() {
    let app = TestApp::spawn().await;
    // A name of its own, so that a file some other program left in /tmp cannot fail this.
    let name = format!("escape-{}", uuid::Uuid::new_v4().simple());
    let outside = [
        app.data_dir.join(&name),
        app.data_dir.parent().expect("parent").join(&name),
    ];
    let data = upload(&app, &format!("../../{name}"), "image/png", &png(2, 2))
        .await
        .expect(201)
        .data();
    let id = data["id"].as_str().expect("id");
    assert_eq!(
        data["originalName"],
        name.as_str(),
        "only the last segment is kept"
    );
    for path in &outside {
        assert!(!path.exists(), "{} was written", path.display());
    }
    // The only file anywhere in the data directory besides the database is the stored
    // one, inside the storage root, under a generated name.
    let stored = stored_files(&app);
    assert_eq!(stored.len(), 1);
    let root = match &app.s3 {
        Some(_) => PathBuf::from(crate::s3_store::TestBucket::PREFIX),
        None => app.data_dir.join("files"),
    };
    assert!(stored[0].starts_with(&root), "{stored:?}");
    assert_eq!(
        stored[0].file_name().and_then(|n| n.to_str()),
        Some(id),
        "the stored name is the generated id"
    );
    let elsewhere: Vec<PathBuf> = files_under(&app.data_dir)
        .into_iter()
        .filter(|p| !p.starts_with(app.data_dir.join("files")))
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("langcamp.db"))
        })
        .collect();
    assert_eq!(elsewhere, Vec::<PathBuf>::new());
}

#[tokio::test]
async fn a_file_over_the_limit_is_refused_while_streaming_and_leaves_nothing() {
    let app = TestApp::with_var("UPLOAD_MAX_BYTES", "1024").await;
    upload(&app, "exact.pdf", "application/pdf", &pdf_of_size(1024))
        .await
        .expect(201);
    assert_eq!(stored_files(&app).len(), 1);

    // A large body is refused early; the rest is read and discarded so the client
    // still gets the answer rather than a reset connection.
    for bytes in [pdf_of_size(1025), png(60, 60), pdf_of_size(8 << 20)] {
        let refused = upload(&app, "big", "application/pdf", &bytes)
            .await
            .expect(413);
        assert_eq!(refused.code(), "PAYLOAD_TOO_LARGE");
    }
    assert_eq!(
        stored_files(&app).len(),
        1,
        "no partial file is left behind"
    );
    assert_eq!(app.rows("stored_files").await, 1);
}

#[tokio::test]
async fn an_unchanged_file_answers_304_to_its_etag() {
    let app = TestApp::spawn().await;
    let data = upload(&app, "a.png", "image/png", &png(3, 3))
        .await
        .expect(201)
        .data();
    let path = path_of(data["url"].as_str().expect("url"), &app);
    let first = app.get(&path).expect(200).await;
    let etag = first.header("etag").expect("etag").to_owned();

    let again = app
        .get(&path)
        .header("if-none-match", &etag)
        .expect(304)
        .await;
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    app.get(&path)
        .header("if-none-match", &format!("\"other\", W/{etag}"))
        .expect(304)
        .await;
    let changed = app
        .get(&path)
        .header("if-none-match", "\"something-else\"")
        .expect(200)
        .await;
    assert_eq!(changed.body, first.body);
}

#[tokio::test]
async fn byte_ranges_answer_206_and_unsatisfiable_ones_416() {
    let app = TestApp::spawn().await;
    let bytes = pdf("ranges");
    let size = bytes.len();
    let data = upload(&app, "r.pdf", "application/pdf", &bytes)
        .await
        .expect(201)
        .data();
    let path = path_of(data["url"].as_str().expect("url"), &app);

    let head = app
        .get(&path)
        .header("range", "bytes=0-9")
        .expect(206)
        .await;
    assert_eq!(head.body.as_ref(), &bytes[..10]);
    assert_eq!(
        head.header("content-range"),
        Some(format!("bytes 0-9/{size}").as_str())
    );
    assert_eq!(head.header("content-length"), Some("10"));
    assert_eq!(head.header("content-type"), Some("application/pdf"));

    let tail = app.get(&path).header("range", "bytes=-6").expect(206).await;
    assert_eq!(tail.body.as_ref(), &bytes[size - 6..]);
    assert_eq!(
        tail.header("content-range"),
        Some(format!("bytes {}-{}/{size}", size - 6, size - 1).as_str())
    );

    let rest = app
        .get(&path)
        .header("range", &format!("bytes={}-", size - 3))
        .expect(206)
        .await;
    assert_eq!(rest.body.as_ref(), &bytes[size - 3..]);

    let outside = app
        .get(&path)
        .header("range", &format!("bytes={size}-"))
        .expect(416)
        .await;
    assert_eq!(
        outside.header("content-range"),
        Some(format!("bytes */{size}").as_str())
    );
    assert_eq!(outside.code(), "RANGE_NOT_SATISFIABLE");

    // A range for another version of the file (If-Range) gets the whole file.
    let whole = app
        .get(&path)
        .header("range", "bytes=0-9")
        .header("if-range", "\"an-old-etag\"")
        .expect(200)
        .await;
    assert_eq!(whole.body.len(), size);
}

#[tokio::test]
async fn unknown_and_malformed_file_ids_are_404_in_the_envelope() {
    let app = TestApp::spawn().await;
    for id in [
        "not-an-id",
        "0190f1a2-0000-7000-8000-0000000000ab",
        "..%2F..%2Fetc%2Fpasswd",
    ] {
        let missing = app
            .get(&format!("/storage/files/{id}"))
            .fails(404, "NOT_FOUND")
            .await;
        assert_eq!(missing.json()["isSuccess"], false);
        assert_eq!(missing.errors(), ["file not found"]);
    }
}

#[tokio::test]
async fn upload_form_mistakes_are_refused_and_store_nothing() {
    let app = TestApp::spawn().await;
    app.post("/storage/upload")
        .header("x-forwarded-for", &fresh_client())
        .json(&serde_json::json!({ "file": "aGVsbG8=" }))
        .fails(415, "UNSUPPORTED_MEDIA_TYPE")
        .await;

    let cases: Vec<(Multipart, &str)> = vec![
        (
            Multipart::new().text("title", "no file here"),
            "unknown field: title",
        ),
        (Multipart::new(), "a file part named \"file\" is required"),
        (
            Multipart::new()
                .file("file", "a.png", "image/png", &png(2, 2))
                .text("comment", "hi"),
            "unknown field: comment",
        ),
        (
            Multipart::new()
                .file("file", "a.png", "image/png", &png(2, 2))
                .file("file", "b.png", "image/png", &png(3, 3)),
            "only one part named \"file\" is accepted",
        ),
        (
            Multipart::new().file("file", "empty.png", "image/png", b""),
            "\"empty.png\" is empty",
        ),
    ];
    for (form, message) in cases {
        let refused = upload_from(&app, &fresh_client(), form).await.expect(400);
        assert_eq!(refused.code(), "VALIDATION_FAILED");
        assert_eq!(refused.errors(), [message]);
    }
    app.post("/storage/upload")
        .header("x-forwarded-for", &fresh_client())
        .body("multipart/form-data", b"garbage".to_vec())
        .fails(400, "VALIDATION_FAILED")
        .await;
    assert_eq!(stored_files(&app), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn the_21st_upload_within_ten_minutes_from_one_client_is_rate_limited() {
    let app = TestApp::spawn().await;
    let client = fresh_client();
    let image = png(1, 1);
    for n in 1..=20 {
        let response = upload_from(
            &app,
            &client,
            Multipart::new().file("file", "p.png", "image/png", &image),
        )
        .await;
        assert_eq!(response.status, 201, "upload {n}: {}", response.text());
    }
    let limited = upload_from(
        &app,
        &client,
        Multipart::new().file("file", "p.png", "image/png", &image),
    )
    .await
    .expect(429);
    assert_eq!(limited.code(), "RATE_LIMITED");
    let retry_after = limited.retry_after();
    assert!((1..=600).contains(&retry_after), "{retry_after}");
    // Another client is not affected.
    upload(&app, "p.png", "image/png", &image).await.expect(201);
    assert_eq!(stored_files(&app).len(), 21);
}

#[tokio::test]
async fn the_upload_accepts_any_token_state_because_it_is_public() {
    let app = TestApp::spawn().await;
    let (content_type, body) = Multipart::new()
        .file("file", "p.png", "image/png", &png(1, 1))
        .finish();
    let data: Value = app
        .post("/storage/upload")
        .header("x-forwarded-for", &fresh_client())
        .bearer("not-a-valid-token")
        .body(&content_type, body)
        .created()
        .await;
    assert_eq!(data["mimeType"], "image/png");
}
