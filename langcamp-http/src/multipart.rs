//! `multipart/form-data` bodies, streamed with `multer`: text fields are read with a size
//! cap, file parts are handed on as byte streams (never buffered whole).
//!
//! When a handler stops reading early (a refused type, a file over the limit, an unknown
//! field), [`Form::linger`] reads and discards the rest of the body in the background, so
//! the client still receives the error answer instead of a reset connection.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{Stream, StreamExt};
use http_body_util::BodyExt;
use hyper::body::Body as _;
use hyper::header::CONTENT_TYPE;
use langcamp_core::{Error, Result};

use crate::request::{Ctx, LimitedBody, body_error};

/// How long the rest of an abandoned body is read and discarded at most.
const LINGER_FOR: Duration = Duration::from_secs(30);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Whether the request says it carries a multipart form.
pub fn is_multipart(ctx: &Ctx) -> bool {
    ctx.has_content_type("multipart/form-data")
}

/// The request body, shared between the multipart parser and [`Form::linger`].
#[derive(Clone)]
struct SharedBody(Arc<Mutex<Option<LimitedBody>>>);

impl Stream for SharedBody {
    type Item = std::result::Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(body) = guard.as_mut() else {
            return Poll::Ready(None);
        };
        loop {
            match ready!(Pin::new(&mut *body).poll_frame(cx)) {
                None => return Poll::Ready(None),
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Poll::Ready(Some(Ok(data)));
                    }
                    // Trailers carry no form data.
                }
            }
        }
    }
}

/// A multipart form being read part by part.
pub struct Form {
    parts: multer::Multipart<'static>,
    body: SharedBody,
}

impl Form {
    /// Starts reading the body as a form: 415 when it is not `multipart/form-data`,
    /// 400 when the boundary is missing.
    pub fn from_ctx(ctx: &mut Ctx) -> Result<Form> {
        if !is_multipart(ctx) {
            return Err(Error::UnsupportedMediaType(
                "expected Content-Type: multipart/form-data".into(),
            ));
        }
        let content_type = ctx
            .header(CONTENT_TYPE.as_str())
            .unwrap_or_default()
            .to_owned();
        Form::from_body(&content_type, ctx.take_body()?)
    }

    /// Starts reading `body` as a form whose `Content-Type` value is `content_type`: what
    /// [`Form::from_ctx`] does once the media type is checked (the fuzz target calls it).
    pub fn from_body(content_type: &str, body: LimitedBody) -> Result<Form> {
        let boundary = multer::parse_boundary(content_type)
            .map_err(|_| Error::invalid("the multipart/form-data Content-Type has no boundary"))?;
        let body = SharedBody(Arc::new(Mutex::new(Some(body))));
        Ok(Form {
            parts: multer::Multipart::new(body.clone(), boundary),
            body,
        })
    }

    /// The next part; every part must have a name.
    pub async fn next_part(&mut self) -> Result<Option<Part>> {
        let Some(field) = self.parts.next_field().await.map_err(form_error)? else {
            return Ok(None);
        };
        let name = match field.name() {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => return Err(Error::invalid("every form part needs a name")),
        };
        Ok(Some(Part { field, name }))
    }

    /// Reads and discards what is left of the body in the background (bounded by the
    /// body limit and [`LINGER_FOR`]), so the answer reaches the client.
    pub fn linger(self) {
        let Form { parts, body } = self;
        drop(parts);
        let rest = body.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(mut rest) = rest {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(LINGER_FOR, async {
                    while let Some(Ok(_)) = rest.frame().await {}
                })
                .await;
            });
        }
    }
}

/// One part of a form.
pub struct Part {
    field: multer::Field<'static>,
    name: String,
}

impl Part {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file name the client gave, if any (information only, never a path).
    pub fn file_name(&self) -> Option<&str> {
        self.field.file_name()
    }

    /// The part as UTF-8 text of at most `max` bytes (400 otherwise).
    pub async fn text(mut self, max: usize) -> Result<String> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.field.chunk().await.map_err(form_error)? {
            if bytes.len() + chunk.len() > max {
                return Err(Error::invalid(format!(
                    "{} must be at most {max} bytes long",
                    self.name
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid(format!("{} must be UTF-8 text", self.name)))
    }

    /// The part's bytes as a stream, for the file store.
    pub fn into_stream(self) -> impl Stream<Item = Result<Bytes>> + Send + 'static {
        self.field.map(|chunk| chunk.map_err(form_error))
    }
}

/// Maps a parser failure: the body limit is 413, a broken body or form 400.
fn form_error(error: multer::Error) -> Error {
    match &error {
        multer::Error::StreamReadFailed(cause) => body_error(cause.as_ref()),
        multer::Error::FieldSizeExceeded { .. } | multer::Error::StreamSizeExceeded { .. } => {
            Error::PayloadTooLarge("request body is too large".into())
        }
        _ => Error::invalid(format!("malformed multipart/form-data body: {error}")),
    }
}
