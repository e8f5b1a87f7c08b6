//! Responses: the envelope every JSON answer wears, and the one mapping from core errors
//! to statuses and codes.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Response, StatusCode};
use langcamp_core::{Error, Timestamp};
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
    /// `data` wrapped in the envelope with this status.
    Json(StatusCode, Bytes),
    /// A response built by the handler (files, HTML, plain text).
    Raw(Response<Body>),
}

impl Reply {
    pub fn ok(data: &impl Serialize) -> Reply {
        Reply::json(StatusCode::OK, data)
    }

    pub fn created(data: &impl Serialize) -> Reply {
        Reply::json(StatusCode::CREATED, data)
    }

    pub fn json(status: StatusCode, data: &impl Serialize) -> Reply {
        let envelope = Envelope {
            is_success: true,
            status_code: status.as_u16(),
            data,
            errors: Vec::new(),
            timestamp: Timestamp(chrono::Utc::now()),
        };
        match serde_json::to_vec(&envelope) {
            Ok(bytes) => Reply::Json(status, Bytes::from(bytes)),
            Err(e) => Reply::Raw(failure(&Error::internal(e))),
        }
    }

    pub fn into_response(self) -> Response<Body> {
        match self {
            Reply::Json(status, bytes) => json_response(status, bytes),
            Reply::Raw(response) => response,
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
    match error {
        Error::NotFound(m) => (StatusCode::NOT_FOUND, "NOT_FOUND", vec![m.clone()]),
        Error::Validation(ms) => (StatusCode::BAD_REQUEST, "VALIDATION_FAILED", ms.clone()),
        Error::Unauthorized => (
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            vec![error.to_string()],
        ),
        Error::TokenInvalid => (
            StatusCode::UNAUTHORIZED,
            "TOKEN_INVALID",
            vec![error.to_string()],
        ),
        Error::OtpInvalid => (
            StatusCode::UNAUTHORIZED,
            "OTP_INVALID",
            vec![error.to_string()],
        ),
        Error::Forbidden(m) => (StatusCode::FORBIDDEN, "FORBIDDEN", vec![m.clone()]),
        Error::Conflict(m) => (StatusCode::CONFLICT, "CONFLICT", vec![m.clone()]),
        Error::TooManyRequests { .. } => (
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMITED",
            vec![error.to_string()],
        ),
        Error::PayloadTooLarge(m) => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "PAYLOAD_TOO_LARGE",
            vec![m.clone()],
        ),
        Error::UnsupportedMediaType(m) => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            vec![m.clone()],
        ),
        Error::InsufficientStorage(m) => (
            StatusCode::INSUFFICIENT_STORAGE,
            "INSUFFICIENT_STORAGE",
            vec![m.clone()],
        ),
        Error::Unavailable(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "SERVICE_UNAVAILABLE",
            vec!["service temporarily unavailable, try again shortly".into()],
        ),
        // Internal and any future variant: never show the cause.
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            vec!["internal error".into()],
        ),
    }
}

/// The failure envelope for a core error; 5xx causes go to the log, never to the client.
pub fn failure(error: &Error) -> Response<Body> {
    let (status, code, messages) = classify(error);
    if status.is_server_error() {
        let cause = std::error::Error::source(error)
            .map(ToString::to_string)
            .unwrap_or_default();
        let request_id = crate::observe::current_request_id().unwrap_or_default();
        tracing::error!(%request_id, %code, error = %error, %cause, "request failed");
    }
    let mut response = failure_with(status, code, messages);
    if let Error::TooManyRequests { retry_after } = error {
        set_retry_after(&mut response, retry_after.as_secs().max(1));
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        set_retry_after(&mut response, 5);
    }
    response
}

pub fn http_failure(error: HttpError) -> Response<Body> {
    match error {
        HttpError::Core(e) => failure(&e),
        HttpError::RouteNotFound => failure_with(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            vec!["route not found".into()],
        ),
        HttpError::MethodNotAllowed { allow } => {
            let mut response = failure_with(
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
            let mut response = failure_with(
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

pub fn failure_with(status: StatusCode, code: &'static str, errors: Vec<String>) -> Response<Body> {
    let envelope = ErrorEnvelope {
        is_success: false,
        status_code: status.as_u16(),
        data: None,
        errors,
        code,
        timestamp: Timestamp(chrono::Utc::now()),
        request_id: crate::observe::current_request_id(),
    };
    let bytes = serde_json::to_vec(&envelope).unwrap_or_else(|_| b"{}".to_vec());
    json_response(status, Bytes::from(bytes))
}
