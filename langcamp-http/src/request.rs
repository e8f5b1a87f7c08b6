//! The request a handler sees, with small extractors: JSON body, query, path parameters,
//! the bearer token, the raw body stream. The body's limits and timeouts are in
//! [`crate::body`], the JSON parsing in [`crate::json_body`].

use std::net::IpAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use hyper::http::request::Parts;
use langcamp_core::domain::Id;
use langcamp_core::{Actor, Error, Langcamp, Origin, PageRequest, Result};
use serde::de::DeserializeOwned;

pub use crate::body::{
    BODY_LIMIT, BodyTimeout, JSON_LIMIT, LimitedBody, RequestBody, TimedBody, body_error,
    body_from_chunks,
};
pub use crate::json_body::{parse_command, parse_json};
use crate::router::Access;

/// The `page` and `limit` query parameters of a listing, as [`Ctx::page`] reads them: here
/// for the document only.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PageParams {
    /// 1-based page, default 1
    #[param(minimum = 1, maximum = 1000000)]
    page: Option<u32>,
    /// 1..=100, default 10
    #[param(minimum = 1, maximum = 100)]
    limit: Option<u32>,
}

pub struct Ctx {
    pub app: Langcamp,
    pub parts: Parts,
    body: Option<LimitedBody>,
    params: Vec<(String, String)>,
    query: Vec<(String, String)>,
    pub client: IpAddr,
    /// The caller the router authenticated for an endpoint that needs one
    /// ([`Ctx::authorize`]); the handler's [`Ctx::actor`] takes it instead of
    /// authenticating again.
    authorized: std::sync::Mutex<Option<Actor>>,
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
            authorized: std::sync::Mutex::new(None),
        }
    }

    /// The router's check of an endpoint's [`Access`] before the body is read: 401 without
    /// a valid token, 403 for a role too low, as core's own check would answer.
    pub(crate) async fn authorize(&self, access: Access) -> Result<()> {
        let Some(role) = access.role() else {
            return Ok(());
        };
        let actor = self.authenticate().await?;
        if access == Access::OwnAccount {
            actor.caller_before_second_factor()?;
        } else {
            actor.require(role)?;
        }
        if let Ok(mut authorized) = self.authorized.lock() {
            *authorized = Some(actor);
        }
        Ok(())
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

    /// A path parameter as the id of a `T`; whether it names one is core's to say.
    pub fn id<T>(&self, name: &str) -> Id<T> {
        Id::from(self.param(name))
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
        if let Some(actor) = self.authorized.lock().ok().and_then(|mut a| a.take()) {
            return Ok(actor);
        }
        self.authenticate().await
    }

    async fn authenticate(&self) -> Result<Actor> {
        match self.bearer()? {
            None => Ok(Actor::Anonymous),
            Some(token) => {
                let caller = self.app.authenticate(token).await?;
                Ok(Actor::User(match self.origin() {
                    Some(origin) => caller.with_origin(origin),
                    None => caller,
                }))
            }
        }
    }

    /// This request's id and client, as the audit trail records them.
    pub fn origin(&self) -> Option<Origin> {
        Some(Origin {
            request_id: crate::observe::current_request_id_shared()?,
            client_address: self.client,
        })
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
        parse_json(&bytes)
    }

    /// The body as JSON of the wire input `I`, converted into the command `C`: every
    /// problem of the body, from serde and from the conversion, in one 400 (contract §1).
    pub async fn command<I: DeserializeOwned, C: TryFrom<I, Error = Error>>(
        &mut self,
    ) -> Result<C> {
        self.command_with(C::try_from).await
    }

    /// Like [`Ctx::command`], with a conversion that needs more than the body (the
    /// path's parameters).
    pub async fn command_with<I: DeserializeOwned, C>(
        &mut self,
        convert: impl FnOnce(I) -> Result<C>,
    ) -> Result<C> {
        self.require_content_type("application/json")?;
        let bytes = self.bytes(JSON_LIMIT).await?;
        parse_command(&bytes, convert)
    }

    /// Like [`Ctx::json`], but an empty body (with any or no content type) or `null` is
    /// `None`.
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
        // `null` is no body too, as the document's optional body allows.
        if bytes.iter().all(u8::is_ascii_whitespace) || bytes.trim_ascii() == b"null" {
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
