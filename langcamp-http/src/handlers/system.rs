//! Reachability.

use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use langcamp_core::Result;

use crate::reply::{Reply, full};
use crate::request::Ctx;

/// Reachability check: a plain-text greeting.
#[utoipa::path(
    get, operation_id = "getRoot", path = "/", tag = "system",
    responses((status = 200, description = "The service is reachable", body = String, content_type = "text/plain"))
)]
pub async fn root(_ctx: Ctx) -> Result<Reply> {
    let mut response = Response::new(full("Langcamp API is running. Documentation: /api/docs\n"));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    Ok(Reply::Raw(response))
}
