//! `multipart/form-data` bodies as the HTTP layer reads them.
//!
//! When this target was written, no handler on main parsed multipart yet (storage and
//! materials were in progress), so it drives `multer` the way those handlers will, with the
//! contract's field names: `POST /storage/upload` takes one part named `file`;
//! `POST/PATCH /education-materials` take text fields and `pdfs` file parts. The boundary
//! comes from the fuzzed `Content-Type`, the body arrives in fuzzed chunk sizes (multer's
//! parser keeps state across chunks), and limits are enforced by `multer::Constraints`.
//! When the real handlers land, point this target at their parsing function instead.
//!
//! Input layout: byte 0 picks the chunk size, byte 1 the form, then the `Content-Type`
//! value up to the first `\n`, then the body.
#![no_main]

use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use multer::{Constraints, Multipart, SizeLimit};

const UPLOAD_FIELDS: &[&str] = &["file"];
const MATERIAL_FIELDS: &[&str] = &[
    "title",
    "description",
    "locale",
    "targetLanguage",
    "level",
    "videos",
    "pdfs",
    "removePdfIds",
];
const WHOLE_LIMIT: u64 = 64 * 1024;
const FIELD_LIMIT: u64 = 16 * 1024;

/// Runs a future whose every input is already there: the body stream never waits, so the
/// parser must finish without ever being woken. `None` if it would have waited.
fn run_ready<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return Some(output);
        }
    }
    None
}

async fn parse(body: Vec<Bytes>, boundary: String, allowed: &'static [&'static str]) -> u64 {
    let stream = futures_util::stream::iter(body.into_iter().map(Ok::<Bytes, Infallible>));
    let constraints = Constraints::new()
        .allowed_fields(allowed.to_vec())
        .size_limit(
            SizeLimit::new()
                .whole_stream(WHOLE_LIMIT)
                .per_field(FIELD_LIMIT),
        );
    let mut multipart = Multipart::with_constraints(stream, boundary, constraints);
    let mut total = 0u64;
    // Errors end the request with a 4xx; only panics and limit breaches are bugs.
    while let Ok(Some(mut field)) = multipart.next_field().await {
        let name = field.name().unwrap_or_default().to_owned();
        assert!(
            allowed.contains(&name.as_str()),
            "unexpected field {name:?}"
        );
        let _ = field.file_name();
        let _ = field.content_type();
        let is_file = name == "file" || name == "pdfs";
        if is_file {
            let mut size = 0u64;
            while let Ok(Some(chunk)) = field.chunk().await {
                size += chunk.len() as u64;
            }
            assert!(
                size <= FIELD_LIMIT,
                "a file part of {size} bytes passed the limit"
            );
            total += size;
        } else if let Ok(text) = field.text().await {
            assert!(text.len() as u64 <= FIELD_LIMIT);
            total += text.len() as u64;
            if name == "videos" || name == "removePdfIds" {
                // Both are JSON arrays inside a text field.
                let _ = langcamp_http::request::parse_json::<serde_json::Value>(text.as_bytes());
            }
        }
    }
    total
}

fuzz_target!(|data: &[u8]| {
    let [chunk_selector, form, rest @ ..] = data else {
        return;
    };
    let Some(split) = rest.iter().position(|b| *b == b'\n') else {
        return;
    };
    let (content_type, body) = (&rest[..split], &rest[split + 1..]);
    let Ok(content_type) = std::str::from_utf8(content_type) else {
        return;
    };
    let Ok(boundary) = multer::parse_boundary(content_type) else {
        return;
    };
    let chunk = 1 + usize::from(*chunk_selector % 64) * usize::from(1 + *chunk_selector / 64);
    let body: Vec<Bytes> = body.chunks(chunk).map(Bytes::copy_from_slice).collect();
    let allowed = if form % 2 == 0 {
        UPLOAD_FIELDS
    } else {
        MATERIAL_FIELDS
    };
    if let Some(total) = run_ready(parse(body, boundary, allowed)) {
        assert!(
            total <= WHOLE_LIMIT,
            "{total} bytes passed the whole-body limit"
        );
    }
});
