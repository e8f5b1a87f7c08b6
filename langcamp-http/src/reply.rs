//! Responses: the envelope every JSON answer wears, and the one mapping from core errors
//! to statuses and codes.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Response, StatusCode};
use langcamp_core::{Clock, Error, Timestamp};
use serde::Serialize;
use utoipa::ToSchema;

/// Response bodies: a buffer for JSON, a stream for files.
pub type Body = BoxBody<Bytes, std::io::Error>;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

pub fn empty() -> Body {
    full(Bytes::new())
}

/// The success envelope, as documented in the OpenAPI description.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Envelope<T> {
    pub is_success: bool,
    pub status_code: u16,
    pub data: T,
    pub errors: Vec<String>,
    pub timestamp: Timestamp,
}

/// The failure envelope.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEnvelope {
    pub is_success: bool,
    pub status_code: u16,
    /// Always null on failure.
    #[schema(value_type = Option<Object>)]
    pub data: Option<()>,
    pub errors: Vec<String>,
    /// Stable machine-readable code such as `VALIDATION_FAILED` or `NOT_FOUND`.
    pub code: &'static str,
    pub timestamp: Timestamp,
    /// The request's `X-Request-Id`, to quote when reporting a problem: the server's log
    /// line for this request carries the same id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// What a handler returns on success.
pub enum Reply {
    /// The success envelope with this status, written up to and including `data`:
    /// [`Reply::into_response`] closes it with the timestamp of the app's clock, so handlers
    /// need no clock and tests with a manual clock see their own time.
    Json(StatusCode, Vec<u8>),
    /// An answer that carries a token, a factor's secret or recovery codes: sent with
    /// `Cache-Control: no-store`, so no cache on the way or in the browser keeps it
    /// (CONTRACT §22).
    Secret(Box<Reply>),
    /// A response built by the handler (files, HTML, plain text).
    Raw(Response<Body>),
    /// `data` could not be serialized: answered as an internal error.
    Failed(Error),
}

/// The success envelope's bytes before `data`: the fields [`Envelope`] serializes, in its
/// order (a unit test holds them equal).
const ENVELOPE_HEAD: &[u8] = br#"{"isSuccess":true,"statusCode":"#;

impl Reply {
    pub fn ok(data: &impl Serialize) -> Reply {
        Reply::json(StatusCode::OK, data)
    }

    pub fn created(data: &impl Serialize) -> Reply {
        Reply::json(StatusCode::CREATED, data)
    }

    pub fn json(status: StatusCode, data: &impl Serialize) -> Reply {
        let mut body = Vec::with_capacity(128);
        body.extend_from_slice(ENVELOPE_HEAD);
        body.extend_from_slice(status.as_str().as_bytes());
        body.extend_from_slice(br#","data":"#);
        match serde_json::to_writer(&mut body, data) {
            Ok(()) => Reply::Json(status, body),
            Err(e) => Reply::Failed(Error::internal(e)),
        }
    }

    /// This answer, marked as one that carries secrets ([`Reply::Secret`]).
    pub fn secret(self) -> Reply {
        Reply::Secret(Box::new(self))
    }

    /// The response, its envelope stamped with `clock` (the app's).
    pub fn into_response(self, clock: &Clock) -> Response<Body> {
        match self {
            Reply::Secret(reply) => {
                let mut response = reply.into_response(clock);
                response
                    .headers_mut()
                    .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                response
            }
            Reply::Json(status, mut body) => {
                body.extend_from_slice(br#","errors":[],"timestamp":"#);
                if let Err(e) = serde_json::to_writer(&mut body, &Timestamp(clock.now())) {
                    return failure(clock, &Error::internal(e));
                }
                body.push(b'}');
                json_response(status, Bytes::from(body))
            }
            Reply::Raw(response) => response,
            Reply::Failed(error) => failure(clock, &error),
        }
    }
}

fn json_response(status: StatusCode, bytes: Bytes) -> Response<Body> {
    let mut response = Response::new(full(bytes));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Errors that only exist at the HTTP layer.
#[derive(Debug)]
pub enum HttpError {
    Core(Error),
    RouteNotFound,
    MethodNotAllowed { allow: String },
    RateLimited { retry_after_secs: u64 },
}

impl From<Error> for HttpError {
    fn from(e: Error) -> Self {
        HttpError::Core(e)
    }
}

/// The status, code and messages of a core error: the one place this mapping lives.
pub fn classify(error: &Error) -> (StatusCode, &'static str, Vec<String>) {
    let (status, code) = match error {
        Error::NotFound(_) => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        Error::Validation(_) => (StatusCode::BAD_REQUEST, "VALIDATION_FAILED"),
        Error::Unauthorized => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
        Error::TokenInvalid => (StatusCode::UNAUTHORIZED, "TOKEN_INVALID"),
        Error::OtpInvalid => (StatusCode::UNAUTHORIZED, "OTP_INVALID"),
        Error::Forbidden(_) => (StatusCode::FORBIDDEN, "FORBIDDEN"),
        Error::SecondFactorRequired => (StatusCode::FORBIDDEN, "SECOND_FACTOR_REQUIRED"),
        Error::StepUpRequired => (StatusCode::FORBIDDEN, "STEP_UP_REQUIRED"),
        Error::Conflict(_) => (StatusCode::CONFLICT, "CONFLICT"),
        Error::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE"),
        Error::UnsupportedMediaType(_) => {
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE")
        }
        Error::InsufficientStorage(_) => (StatusCode::INSUFFICIENT_STORAGE, "INSUFFICIENT_STORAGE"),
        Error::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE"),
        Error::Locked { .. } => (StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED"),
        // Internal and any future variant.
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
    };
    let messages = match error {
        Error::Validation(messages) => messages.clone(),
        Error::Unavailable(_) => vec!["service temporarily unavailable, try again shortly".into()],
        // A failure of the server never shows its cause.
        _ if status.is_server_error() => vec!["internal error".into()],
        // A client's mistake is told as core words it.
        _ => vec![error.to_string()],
    };
    (status, code, messages)
}

/// The failure envelope for a core error, stamped with `clock`; 5xx causes go to the log,
/// never to the client.
pub fn failure(clock: &Clock, error: &Error) -> Response<Body> {
    let (status, code, messages) = classify(error);
    if status.is_server_error() {
        let cause = std::error::Error::source(error)
            .map(ToString::to_string)
            .unwrap_or_default();
        let request_id = crate::observe::current_request_id().unwrap_or_default();
        tracing::error!(%request_id, %code, error = %error, %cause, "request failed");
    }
    let mut response = failure_at(clock, status, code, messages);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        set_retry_after(&mut response, 5);
    }
    if let Error::Locked {
        retry_after_secs, ..
    } = error
    {
        set_retry_after(&mut response, (*retry_after_secs).max(1));
    }
    response
}

pub fn http_failure(clock: &Clock, error: HttpError) -> Response<Body> {
    match error {
        HttpError::Core(e) => failure(clock, &e),
        HttpError::RouteNotFound => failure_at(
            clock,
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            vec!["route not found".into()],
        ),
        HttpError::MethodNotAllowed { allow } => {
            let mut response = failure_at(
                clock,
                StatusCode::METHOD_NOT_ALLOWED,
                "METHOD_NOT_ALLOWED",
                vec![format!("method not allowed; allowed: {allow}")],
            );
            if let Ok(value) = HeaderValue::from_str(&allow) {
                response.headers_mut().insert(hyper::header::ALLOW, value);
            }
            response
        }
        HttpError::RateLimited { retry_after_secs } => {
            let mut response = failure_at(
                clock,
                StatusCode::TOO_MANY_REQUESTS,
                "RATE_LIMITED",
                vec!["too many requests, slow down".into()],
            );
            set_retry_after(&mut response, retry_after_secs.max(1));
            response
        }
    }
}

fn set_retry_after(response: &mut Response<Body>, secs: u64) {
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(secs));
}

/// A failure envelope stamped with the system clock, for answers made where no app clock
/// is at hand; prefer [`failure_at`].
pub fn failure_with(status: StatusCode, code: &'static str, errors: Vec<String>) -> Response<Body> {
    failure_at(&Clock::System, status, code, errors)
}

/// A failure envelope stamped with `clock` (the app's).
pub fn failure_at(
    clock: &Clock,
    status: StatusCode,
    code: &'static str,
    errors: Vec<String>,
) -> Response<Body> {
    let envelope = ErrorEnvelope {
        is_success: false,
        status_code: status.as_u16(),
        data: None,
        errors,
        code,
        timestamp: Timestamp(clock.now()),
        request_id: crate::observe::current_request_id(),
    };
    let bytes = serde_json::to_vec(&envelope).unwrap_or_else(|_| b"{}".to_vec());
    json_response(status, Bytes::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    async fn body_of(response: Response<Body>) -> Vec<u8> {
        match response.into_body().collect().await {
            Ok(collected) => collected.to_bytes().to_vec(),
            Err(e) => panic!("body: {e}"),
        }
    }

    #[tokio::test]
    async fn the_written_envelope_is_the_one_envelope_serializes() {
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 11, 25, 7, 30, 0)
            .single()
            .expect("a date");
        let data = serde_json::json!({ "a": [1, "two", null], "b": "\"quoted\"" });
        for status in [StatusCode::OK, StatusCode::CREATED] {
            let written =
                body_of(Reply::json(status, &data).into_response(&Clock::manual(now))).await;
            let expected = serde_json::to_vec(&Envelope {
                is_success: true,
                status_code: status.as_u16(),
                data: &data,
                errors: Vec::new(),
                timestamp: Timestamp(now),
            })
            .expect("serializes");
            assert_eq!(
                String::from_utf8_lossy(&written),
                String::from_utf8_lossy(&expected)
            );
        }
    }
}
