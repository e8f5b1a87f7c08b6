//! `multipart/form-data` bodies through the server's own form reader,
//! `langcamp_http::multipart::Form`, driven the way the handlers drive it:
//! `POST /storage/upload` (exactly one `file` part) and the education-material forms
//! (text fields, JSON-array fields, `pdfs` file parts), then the material fields through
//! `parse_json` into `MaterialInput` / `MaterialUpdate` as `read_form` does, and each file
//! part's first bytes through the type sniffer the file store uses.
//!
//! The body arrives in fuzzed chunk sizes (the parser keeps state across chunks) as a
//! `LimitedBody`, with the server's body limit and timeouts. What the handlers do with
//! the database and the file store is left out.
//!
//! Input layout: byte 0 picks the chunk size, byte 1 the form, then the `Content-Type`
//! value up to the first `\n`, then the body.
#![no_main]

use std::sync::OnceLock;

use bytes::Bytes;
use futures_util::StreamExt;
use langcamp_core::Error;
use langcamp_core::materials::{MaterialInput, MaterialUpdate};
use langcamp_core::storage::{SNIFF_LEN, sniff};
use langcamp_http::multipart::Form;
use langcamp_http::request::{body_from_chunks, parse_json};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// As in `handlers/materials.rs`.
const TEXT_PART_LIMIT: usize = 256 * 1024;
const UPDATE_FIELDS: [&str; 7] = [
    "title",
    "description",
    "locale",
    "targetLanguage",
    "level",
    "videos",
    "removePdfIds",
];
const JSON_FIELDS: [&str; 2] = ["videos", "removePdfIds"];

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("a tokio runtime: {e}"))
    })
}

/// Reads a file part as the store would: sniffs its head, counts its bytes.
async fn read_file(part: langcamp_http::multipart::Part) -> Result<u64, Error> {
    let mut head = Vec::new();
    let mut size = 0u64;
    let stream = part.into_stream();
    futures_util::pin_mut!(stream);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if head.len() < SNIFF_LEN {
            let take = (SNIFF_LEN - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
        }
        size += chunk.len() as u64;
    }
    let _ = sniff(&head);
    Ok(size)
}

/// `POST /storage/upload`: exactly one part named `file`.
async fn upload(form: &mut Form) -> Result<u64, Error> {
    let mut size = None;
    while let Some(part) = form.next_part().await? {
        match part.name() {
            "file" if size.is_none() => size = Some(read_file(part).await?),
            "file" => return Err(Error::invalid("only one part named \"file\"")),
            other => return Err(Error::invalid(format!("unknown field: {other}"))),
        }
    }
    size.ok_or_else(|| Error::invalid("a file part named \"file\" is required"))
}

/// The material forms: text fields into a JSON object parsed as `MaterialInput` and
/// `MaterialUpdate`; `pdfs` parts read as files.
async fn material(form: &mut Form) -> Result<u64, Error> {
    let mut fields = serde_json::Map::new();
    let mut size = 0;
    while let Some(part) = form.next_part().await? {
        let name = part.name().to_owned();
        if name == "pdfs" {
            size += read_file(part).await?;
            continue;
        }
        if !UPDATE_FIELDS.contains(&name.as_str()) {
            return Err(Error::invalid(format!("unknown field: {name}")));
        }
        if fields.contains_key(&name) {
            return Err(Error::invalid(format!("{name} is given more than once")));
        }
        let text = part.text(TEXT_PART_LIMIT).await?;
        assert!(text.len() <= TEXT_PART_LIMIT);
        size += text.len() as u64;
        let value = if JSON_FIELDS.contains(&name.as_str()) {
            match serde_json::from_str::<Value>(&text) {
                Ok(value) if value.is_array() => value,
                _ => return Err(Error::invalid(format!("{name} must be a JSON array"))),
            }
        } else {
            Value::String(text)
        };
        fields.insert(name, value);
    }
    let object = serde_json::to_vec(&fields).unwrap_or_default();
    let _ = parse_json::<MaterialInput>(&object);
    let _ = parse_json::<MaterialUpdate>(&object);
    Ok(size)
}

fuzz_target!(|data: &[u8]| {
    let [chunk_selector, which, rest @ ..] = data else {
        return;
    };
    let Some(split) = rest.iter().position(|b| *b == b'\n') else {
        return;
    };
    let (content_type, body) = (&rest[..split], &rest[split + 1..]);
    let Ok(content_type) = std::str::from_utf8(content_type) else {
        return;
    };
    let chunk = 1 + usize::from(*chunk_selector % 64) * usize::from(1 + *chunk_selector / 64);
    let chunks: Vec<Bytes> = body.chunks(chunk).map(Bytes::copy_from_slice).collect();
    let total = body.len() as u64;
    runtime().block_on(async {
        let mut form = match Form::from_body(content_type, body_from_chunks(chunks)) {
            Ok(form) => form,
            Err(Error::Validation(_)) => return,
            Err(other) => panic!("a bad Content-Type gave {other:?}"),
        };
        let outcome = if which % 2 == 0 {
            upload(&mut form).await
        } else {
            material(&mut form).await
        };
        match outcome {
            // Parts never hold more than the body did.
            Ok(size) => assert!(size <= total, "{size} bytes from a {total}-byte body"),
            // A client's mistake is a 4xx, never a 500.
            Err(Error::Validation(_) | Error::PayloadTooLarge(_)) => {}
            Err(other) => panic!("a client's body gave {other:?}"),
        }
        // As the handlers do; the in-memory rest drains at once.
        form.linger();
        tokio::task::yield_now().await;
    });
});
