//! `multipart/form-data` bodies through the server's own form reader,
//! `langcamp_http::multipart::Form`, driven the way the handlers drive it:
//! `POST /storage/upload` (exactly one `file` part) and the education-material forms
//! (text fields, JSON-array fields, `pdfs` file parts), the text fields through the
//! handler's own `langcamp_http::material_form` into `MaterialInput` / `MaterialUpdate`,
//! and each file part's first bytes through the type sniffer the file store uses.
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
use langcamp_core::materials::{MaterialChange, MaterialInput, MaterialUpdate, NewMaterial};
use langcamp_core::platform::file_store::{SNIFF_LEN, sniff};
use langcamp_http::material_form::{TEXT_PART_LIMIT, TextFields};
use langcamp_http::multipart::Form;
use langcamp_http::request::body_from_chunks;
use libfuzzer_sys::fuzz_target;

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

/// The material forms: text fields through the handler's own [`TextFields`] into
/// `MaterialInput` and `MaterialUpdate`; `pdfs` parts read as files.
async fn material(form: &mut Form) -> Result<u64, Error> {
    let mut fields = TextFields::update();
    let mut size = 0;
    while let Some(part) = form.next_part().await? {
        if part.name() == "pdfs" {
            size += read_file(part).await?;
            continue;
        }
        let len = fields.read(part).await?;
        assert!(len <= TEXT_PART_LIMIT);
        size += len as u64;
    }
    let _ = fields.parse::<MaterialInput, NewMaterial>();
    let _ = fields.parse::<MaterialUpdate, MaterialChange>();
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
