//! The request a handler sees, with small extractors: JSON body, query, path parameters,
//! the bearer token, the raw body stream.

use std::net::IpAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use hyper::http::request::Parts;
use langcamp_core::{Actor, Error, Langcamp, PageRequest, Result};
use serde::de::DeserializeOwned;

/// The global request body limit: 50 MB.
pub const BODY_LIMIT: usize = 50 * 1024 * 1024;
/// JSON bodies are small by nature; a larger one is refused before parsing.
pub const JSON_LIMIT: usize = 1024 * 1024;

pub type LimitedBody = Limited<Incoming>;

pub struct Ctx {
    pub app: Langcamp,
    pub parts: Parts,
    body: Option<LimitedBody>,
    params: Vec<(String, String)>,
    query: Vec<(String, String)>,
    pub client: IpAddr,
}

impl Ctx {
    pub fn new(
        app: Langcamp,
        parts: Parts,
        body: LimitedBody,
        params: Vec<(String, String)>,
        client: IpAddr,
    ) -> Ctx {
        let query = parts
            .uri
            .query()
            .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default();
        Ctx {
            app,
            parts,
            body: Some(body),
            params,
            query,
            client,
        }
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.parts.headers
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// A path parameter of the matched route.
    pub fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// A query parameter; the first one wins when repeated.
    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `page` and `limit`, validated.
    pub fn page(&self) -> Result<PageRequest> {
        PageRequest::parse(self.query("page"), self.query("limit"))
    }

    /// Who is calling: anonymous without a token; 401 for a token that is not valid now.
    pub async fn actor(&self) -> Result<Actor> {
        match self.bearer()? {
            None => Ok(Actor::Anonymous),
            Some(token) => Ok(Actor::User(self.app.authenticate(token).await?)),
        }
    }

    /// Like [`Ctx::actor`], but any invalid token counts as anonymous.
    pub async fn optional_actor(&self) -> Result<Actor> {
        match self.actor().await {
            Err(Error::TokenInvalid) => Ok(Actor::Anonymous),
            other => other,
        }
    }

    fn bearer(&self) -> Result<Option<&str>> {
        let Some(value) = self.parts.headers.get(AUTHORIZATION) else {
            return Ok(None);
        };
        let value = value.to_str().map_err(|_| Error::TokenInvalid)?;
        match value.split_once(' ') {
            Some((scheme, token))
                if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
            {
                Ok(Some(token.trim()))
            }
            _ => Err(Error::TokenInvalid),
        }
    }

    /// The body as JSON of type `T`: 415 for another content type, 400 for bad JSON.
    pub async fn json<T: DeserializeOwned>(&mut self) -> Result<T> {
        self.require_content_type("application/json")?;
        let bytes = self.bytes(JSON_LIMIT).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::invalid("request body must be a JSON object"));
        }
        parse_json(&bytes)
    }

    /// Like [`Ctx::json`], but an empty body (with any or no content type) is `None`.
    pub async fn optional_json<T: DeserializeOwned>(&mut self) -> Result<Option<T>> {
        let has_body = self
            .header("content-length")
            .is_some_and(|l| l.trim() != "0")
            || self.parts.headers.contains_key("transfer-encoding");
        if !has_body {
            return Ok(None);
        }
        self.require_content_type("application/json")?;
        let bytes = self.bytes(JSON_LIMIT).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        parse_json(&bytes).map(Some)
    }

    /// Whether the request's content type is `expected` (parameters such as charset aside).
    pub fn has_content_type(&self, expected: &str) -> bool {
        self.header(CONTENT_TYPE.as_str())
            .and_then(|ct| ct.split(';').next())
            .is_some_and(|ct| ct.trim().eq_ignore_ascii_case(expected))
    }

    pub fn require_content_type(&self, expected: &str) -> Result<()> {
        if self.has_content_type(expected) {
            Ok(())
        } else {
            Err(Error::UnsupportedMediaType(format!(
                "expected Content-Type: {expected}"
            )))
        }
    }

    /// Reads the whole body, refusing more than `limit` bytes with 413.
    pub async fn bytes(&mut self, limit: usize) -> Result<Bytes> {
        let body = self.take_body()?;
        let collected = Limited::new(body, limit)
            .collect()
            .await
            .map_err(|e| body_error(&*e))?;
        Ok(collected.to_bytes())
    }

    /// The body for streaming (multipart uploads); at most [`BODY_LIMIT`] bytes.
    pub fn take_body(&mut self) -> Result<LimitedBody> {
        self.body
            .take()
            .ok_or_else(|| Error::internal("request body already read"))
    }
}

/// Maps a failure while reading a body: over the limit is 413, anything else (a client
/// that went away or sent a broken chunk) is 400.
pub fn body_error(error: &(dyn std::error::Error + 'static)) -> Error {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if e.is::<http_body_util::LengthLimitError>() {
            return Error::PayloadTooLarge("request body is too large".into());
        }
        current = e.source();
    }
    Error::invalid("the request body could not be read")
}

/// Parses JSON into `T`, turning serde's message into a client-facing one.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| {
        let message = e.to_string();
        // serde appends " at line L column C"; keep it for syntax errors only.
        let message = match e.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                format!("malformed JSON: {message}")
            }
            _ => message
                .rsplit_once(" at line ")
                .map_or(message.clone(), |(m, _)| m.to_owned()),
        };
        Error::Validation(vec![message])
    })
}
