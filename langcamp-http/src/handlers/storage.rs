//! File storage (CONTRACT §10): upload (multipart, streamed to the file store) and
//! download (streamed, with `ETag`, conditional requests and single byte ranges).

use std::ops::Range;

use futures_util::TryStreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use langcamp_core::storage::{Accept, StagedFile, StoredFile};
use langcamp_core::{Actor, Error, Langcamp, Result};
use utoipa::ToSchema;

use crate::limits::RateRule;
use crate::multipart::Form;
use crate::reply::{Body, Envelope, ErrorEnvelope, Reply, empty, failure_at};
use crate::request::Ctx;
use crate::router::{Access, Routes};

/// Browsers and proxies may keep a file this long before revalidating it with its `ETag`.
const CACHE_CONTROL: &str = "public, max-age=3600";

pub fn routes(r: &mut Routes) {
    r.add::<__path_upload>(RateRule::Upload, Access::Anyone, upload);
    r.add::<__path_download>(RateRule::Default, Access::Anyone, download);
}

/// The upload form: one part named `file`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// JPEG, PNG, WebP, GIF, PDF, MP4 or WebM, decided from the content; at most
    /// `UPLOAD_MAX_BYTES` (default 20 MB).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// A file's bytes, served with the file's stored type (`image/png`, `application/pdf`, ...).
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct FileBytes(Vec<u8>);

/// Upload a file. The type is decided from the file's content (not its name or the
/// claimed type); the client's file name is kept only as information. Limited to 20
/// uploads per 10 minutes per client.
#[utoipa::path(post, operation_id = "uploadFile", path = "/storage/upload", tag = "storage",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 201, description = "Stored", body = Envelope<StoredFile>),
        (status = 400, description = "No `file` part, another field, an empty file or a malformed form", body = ErrorEnvelope),
        (status = 413, description = "The file is larger than UPLOAD_MAX_BYTES (or the body than 50 MB)", body = ErrorEnvelope),
        (status = 415, description = "Not multipart/form-data, or a file type that is not accepted", body = ErrorEnvelope),
        (status = 507, description = "The file store is full: storing the file would pass FILE_STORE_MAX_BYTES (INSUFFICIENT_STORAGE); nothing is stored", body = ErrorEnvelope),
        (status = 429, description = "Too many uploads from this client", body = ErrorEnvelope),
    ))]
pub async fn upload(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.optional_actor().await?;
    let mut form = Form::from_ctx(&mut ctx)?;
    let received = receive_file(&ctx.app, &actor, &mut form).await;
    form.linger();
    let staged = received?;
    Ok(Reply::created(&ctx.app.save_upload(&actor, staged).await?))
}

/// Reads the form: exactly one `file` part and nothing else.
async fn receive_file(app: &Langcamp, actor: &Actor, form: &mut Form) -> Result<StagedFile> {
    let mut staged: Option<StagedFile> = None;
    let read: Result<()> = async {
        while let Some(part) = form.next_part().await? {
            match part.name() {
                "file" if staged.is_none() => {
                    let name = part.file_name().map(str::to_owned);
                    staged = Some(
                        app.stage_file(
                            actor,
                            Accept::AnyAllowed,
                            name.as_deref(),
                            part.into_stream(),
                        )
                        .await?,
                    );
                }
                "file" => return Err(Error::invalid("only one part named \"file\" is accepted")),
                other => return Err(Error::invalid(format!("unknown field: {other}"))),
            }
        }
        Ok(())
    }
    .await;
    match (read, staged) {
        (Ok(()), Some(file)) => Ok(file),
        (Ok(()), None) => Err(Error::invalid("a file part named \"file\" is required")),
        (Err(e), staged) => {
            app.discard_staged(staged.into_iter().collect()).await;
            Err(e)
        }
    }
}

/// The file's bytes (not an envelope), with its stored type. Supports `If-None-Match`
/// (304) and one byte range (`Range: bytes=a-b`, 206; 416 when it lies outside the file).
#[utoipa::path(get, operation_id = "downloadFile", path = "/storage/files/{id}", tag = "storage",
    params(
        ("id" = String, Path, description = "File id"),
        ("Range" = Option<String>, Header, description = "One byte range, e.g. `bytes=0-1023`"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer"),
    ),
    responses(
        (status = 200, description = "The whole file, with `ETag`, `Content-Disposition`, `X-Content-Type-Options: nosniff`; the type is the one the upload was recognised as", content((FileBytes = "image/jpeg"), (FileBytes = "image/png"), (FileBytes = "image/webp"), (FileBytes = "image/gif"), (FileBytes = "application/pdf"), (FileBytes = "video/mp4"), (FileBytes = "video/webm"))),
        (status = 206, description = "The requested range, with `Content-Range`", content((FileBytes = "image/jpeg"), (FileBytes = "image/png"), (FileBytes = "image/webp"), (FileBytes = "image/gif"), (FileBytes = "application/pdf"), (FileBytes = "video/mp4"), (FileBytes = "video/webm"))),
        (status = 304, description = "Not modified (the `If-None-Match` ETag matches)"),
        (status = 404, description = "No such file", body = ErrorEnvelope),
        (status = 416, description = "The range lies outside the file: code `RANGE_NOT_SATISFIABLE`, `Content-Range: bytes */size`", body = ErrorEnvelope),
    ))]
pub async fn download(ctx: Ctx) -> Result<Reply> {
    let meta = ctx
        .app
        .stored_file(&Actor::Anonymous, &ctx.id("id"))
        .await?;
    let etag = format!("\"{}\"", meta.sha256);
    let headers = ctx.headers();

    if let Some(tags) = header_str(headers, header::IF_NONE_MATCH)
        && etag_matches(tags, &etag)
    {
        let mut response = Response::new(empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        set_file_headers(response.headers_mut(), &etag);
        return Ok(Reply::Raw(response));
    }

    // If-Range: the range holds only for the same version of the file.
    let range_applies = header_str(headers, header::IF_RANGE).is_none_or(|tag| tag.trim() == etag);
    let range = match header_str(headers, header::RANGE) {
        Some(value) if range_applies => parse_range(value, meta.size),
        _ => RangeRequest::Whole,
    };
    let (status, range) = match range {
        RangeRequest::Whole => (StatusCode::OK, None),
        RangeRequest::Part(r) => (StatusCode::PARTIAL_CONTENT, Some(r)),
        RangeRequest::Unsatisfiable => {
            let mut response = failure_at(
                ctx.app.clock(),
                StatusCode::RANGE_NOT_SATISFIABLE,
                "RANGE_NOT_SATISFIABLE",
                vec![format!(
                    "the requested range is outside the file ({} bytes)",
                    meta.size
                )],
            );
            insert(
                response.headers_mut(),
                header::CONTENT_RANGE,
                &format!("bytes */{}", meta.size),
            );
            return Ok(Reply::Raw(response));
        }
    };

    let stream = ctx.app.read_stored_file(&meta, range.clone()).await?;
    let body: Body = StreamBody::new(stream.map_ok(Frame::data)).boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let h = response.headers_mut();
    set_file_headers(h, &etag);
    insert(h, header::CONTENT_TYPE, &meta.mime_type);
    let inline = meta.file_type().is_some_and(|t| t.is_inline());
    insert(
        h,
        header::CONTENT_DISPOSITION,
        &content_disposition(&meta.original_name, inline),
    );
    match range {
        Some(r) => {
            insert(h, header::CONTENT_LENGTH, &(r.end - r.start).to_string());
            insert(
                h,
                header::CONTENT_RANGE,
                &format!("bytes {}-{}/{}", r.start, r.end - 1, meta.size),
            );
        }
        None => insert(h, header::CONTENT_LENGTH, &meta.size.to_string()),
    }
    Ok(Reply::Raw(response))
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn insert(headers: &mut HeaderMap, name: header::HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(name, value);
    }
}

/// Headers every answer about a file carries (200, 206 and 304).
fn set_file_headers(h: &mut HeaderMap, etag: &str) {
    insert(h, header::ETAG, etag);
    insert(h, header::CACHE_CONTROL, CACHE_CONTROL);
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// Whether an `If-None-Match` list names `etag` (weak comparison, `*` matches anything).
fn etag_matches(list: &str, etag: &str) -> bool {
    list.split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

#[derive(Debug, PartialEq, Eq)]
enum RangeRequest {
    /// No usable range: serve the whole file (also for several ranges or a malformed
    /// header, which RFC 9110 lets a server ignore).
    Whole,
    Part(Range<u64>),
    Unsatisfiable,
}

/// Parses one `bytes=` range against a file of `size` bytes.
fn parse_range(value: &str, size: u64) -> RangeRequest {
    let Some(spec) = value.trim().strip_prefix("bytes=") else {
        return RangeRequest::Whole;
    };
    if spec.contains(',') {
        return RangeRequest::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeRequest::Whole;
    };
    let number = |s: &str| -> Option<u64> {
        let s = s.trim();
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (first.trim().is_empty(), number(first), number(last)) {
        // bytes=-N: the last N bytes.
        (true, _, Some(suffix)) => {
            if suffix == 0 || size == 0 {
                RangeRequest::Unsatisfiable
            } else {
                RangeRequest::Part(size.saturating_sub(suffix)..size)
            }
        }
        // bytes=A- : from A to the end.
        (false, Some(start), None) if last.trim().is_empty() => {
            if start >= size {
                RangeRequest::Unsatisfiable
            } else {
                RangeRequest::Part(start..size)
            }
        }
        // bytes=A-B
        (false, Some(start), Some(end)) if start <= end => {
            if start >= size {
                RangeRequest::Unsatisfiable
            } else {
                RangeRequest::Part(start..end.saturating_add(1).min(size))
            }
        }
        _ => RangeRequest::Whole,
    }
}

/// `inline` (or `attachment`) with the name reduced to safe ASCII, plus the full name
/// in RFC 5987 `filename*` form.
fn content_disposition(original_name: &str, inline: bool) -> String {
    let disposition = if inline { "inline" } else { "attachment" };
    let ascii: String = original_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ' ' | '(' | ')') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let ascii = ascii.trim();
    let ascii = if ascii.is_empty() { "file" } else { ascii };
    let mut encoded = String::new();
    for b in original_name.bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("{disposition}; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_are_parsed_against_the_size() {
        use RangeRequest::*;
        assert_eq!(parse_range("bytes=0-9", 100), Part(0..10));
        assert_eq!(parse_range("bytes=90-200", 100), Part(90..100));
        assert_eq!(parse_range("bytes=95-", 100), Part(95..100));
        assert_eq!(parse_range("bytes=-10", 100), Part(90..100));
        assert_eq!(parse_range("bytes=-500", 100), Part(0..100));
        assert_eq!(parse_range("bytes=100-", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=100-120", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=5-1", 100), Whole, "malformed: ignored");
        assert_eq!(parse_range("bytes=0-1,5-9", 100), Whole, "several ranges");
        assert_eq!(parse_range("items=0-1", 100), Whole);
        assert_eq!(parse_range("bytes=x-1", 100), Whole);
    }

    #[test]
    fn etags_match_weakly_and_in_lists() {
        assert!(etag_matches("\"abc\"", "\"abc\""));
        assert!(etag_matches("W/\"abc\"", "\"abc\""));
        assert!(etag_matches("\"x\", \"abc\"", "\"abc\""));
        assert!(etag_matches("*", "\"abc\""));
        assert!(!etag_matches("\"abd\"", "\"abc\""));
    }

    #[test]
    fn content_disposition_names_are_safe_ascii_with_the_full_name_encoded() {
        assert_eq!(
            content_disposition("Übung \"1\";.pdf", true),
            "inline; filename=\"_bung _1__.pdf\"; filename*=UTF-8''%C3%9Cbung%20%221%22%3B.pdf"
        );
        assert_eq!(
            content_disposition("x.bin", false),
            "attachment; filename=\"x.bin\"; filename*=UTF-8''x.bin"
        );
    }
}
