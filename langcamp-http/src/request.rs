//! The request a handler sees, with small extractors: JSON body, query, path parameters,
//! the bearer token, the raw body stream.

use std::fmt;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use hyper::http::request::Parts;
use langcamp_core::domain::Id;
use langcamp_core::{Actor, Error, Langcamp, Origin, PageRequest, Result};
use serde::de::DeserializeOwned;

use crate::router::Access;

/// The global request body limit: 50 MB.
pub const BODY_LIMIT: usize = 50 * 1024 * 1024;
/// JSON bodies are small by nature; a larger one is refused before parsing.
pub const JSON_LIMIT: usize = 1024 * 1024;

/// A request body as handlers get it: at most [`BODY_LIMIT`] bytes, arriving in time.
pub type LimitedBody = Limited<TimedBody>;

/// The bytes under a [`LimitedBody`]: hyper's stream from the client, or chunks already in
/// memory (for tools and the fuzz targets, which run the real body parsers without a
/// connection).
pub enum RequestBody {
    Incoming(Incoming),
    Chunks(std::collections::VecDeque<Bytes>),
}

impl RequestBody {
    /// A body that yields `chunks` one by one, as a client sending them would.
    pub fn chunks(chunks: impl IntoIterator<Item = Bytes>) -> RequestBody {
        RequestBody::Chunks(chunks.into_iter().collect())
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            RequestBody::Incoming(body) => Pin::new(body).poll_frame(cx),
            RequestBody::Chunks(chunks) => {
                Poll::Ready(chunks.pop_front().map(|c| Ok(Frame::data(c))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RequestBody::Incoming(body) => body.is_end_stream(),
            RequestBody::Chunks(chunks) => chunks.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Incoming(body) => body.size_hint(),
            RequestBody::Chunks(chunks) => {
                SizeHint::with_exact(chunks.iter().map(|c| c.len() as u64).sum())
            }
        }
    }
}

/// A [`LimitedBody`] over chunks in memory, with the server's default limits. Must be
/// called inside a tokio runtime with timers (the body's timeouts are tokio sleeps).
pub fn body_from_chunks(chunks: impl IntoIterator<Item = Bytes>) -> LimitedBody {
    Limited::new(
        TimedBody::new(
            RequestBody::chunks(chunks),
            crate::BODY_IDLE_TIMEOUT,
            crate::BODY_READ_TIMEOUT,
            Arc::new(AtomicBool::new(false)),
        ),
        BODY_LIMIT,
    )
}

/// The error a [`TimedBody`] yields when the client is too slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimeout;

impl fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl std::error::Error for BodyTimeout {}

/// A request body that must keep arriving: it fails with [`BodyTimeout`] once it has waited
/// `idle` for the client's next bytes, or once `deadline` has passed (counted from the end
/// of the headers). The timers run only while a handler reads the body, so a handler
/// that is slow for other reasons never trips them, and bodies that nobody reads cost
/// nothing (the deadline's timer is made at the first wait, not per request).
/// `timed_out` tells the server afterwards, whatever the handler made of it.
pub struct TimedBody<B = RequestBody> {
    inner: B,
    idle: Duration,
    idle_timer: Option<Pin<Box<tokio::time::Sleep>>>,
    deadline: tokio::time::Instant,
    deadline_timer: Option<Pin<Box<tokio::time::Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

impl<B> TimedBody<B> {
    pub fn new(inner: B, idle: Duration, total: Duration, timed_out: Arc<AtomicBool>) -> Self {
        TimedBody {
            inner,
            idle,
            idle_timer: None,
            deadline: tokio::time::Instant::now() + total,
            deadline_timer: None,
            timed_out,
        }
    }

    fn fail(&self) -> Poll<Option<std::result::Result<Frame<B::Data>, BoxError>>>
    where
        B: Body,
    {
        self.timed_out.store(true, Ordering::Relaxed);
        Poll::Ready(Some(Err(Box::new(BodyTimeout))))
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<B> Body for TimedBody<B>
where
    B: Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        if this.timed_out.load(Ordering::Relaxed) || tokio::time::Instant::now() >= this.deadline {
            return this.fail();
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                // Bytes came: the idle wait starts again at the next wait.
                this.idle_timer = None;
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                let (idle, deadline) = (this.idle, this.deadline);
                let idle_timer = this
                    .idle_timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(idle)));
                let deadline_timer = this
                    .deadline_timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if idle_timer.as_mut().poll(cx).is_ready()
                    || deadline_timer.as_mut().poll(cx).is_ready()
                {
                    return this.fail();
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

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

/// Maps a failure while reading a body: over the limit is 413, anything else (a client
/// that went away or sent a broken chunk) is 400. (A body that timed out is answered 408
/// by the server whatever the handler returns.)
pub fn body_error(error: &(dyn std::error::Error + 'static)) -> Error {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if e.is::<http_body_util::LengthLimitError>() {
            return Error::PayloadTooLarge("request body is too large".into());
        }
        if e.is::<BodyTimeout>() {
            return Error::invalid(BodyTimeout.to_string());
        }
        current = e.source();
    }
    Error::invalid("the request body could not be read")
}

/// Parses a JSON object into `T`, turning serde's messages into client-facing ones.
///
/// Every body of this API is an object; serde would also read a struct from an array
/// (`["a@b.test"]` as `{email}`), so anything else is refused first. A well-formed object
/// with wrong fields gets one message per field (contract §1), not just serde's first.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    parse_command(bytes, Ok)
}

/// Parses a JSON object into the wire input `I` and converts it into the command `C`
/// (its `TryFrom`), answering every problem of the body at once: serde's (wrong types,
/// unknown and missing fields) and the conversion's (invalid values) together, one
/// message per field.
pub fn parse_command<I: DeserializeOwned, C>(
    bytes: &[u8],
    convert: impl FnOnce(I) -> Result<C>,
) -> Result<C> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Error::invalid("request body must be a JSON object"));
    }
    match serde_json::from_slice(bytes) {
        Ok(input) => convert(input),
        Err(e) if is_syntax(&e) => Err(Error::Validation(vec![format!("malformed JSON: {e}")])),
        // The slow paths run only for a refused body.
        Err(_) => {
            if let Some(value) = integral_floats_as_integers(bytes)
                && let Ok(input) = serde_json::from_value(value)
            {
                return convert(input);
            }
            let FieldProblems {
                mut problems,
                rest,
                set_aside,
            } = field_problems::<I>(bytes);
            // The fields serde accepted are checked too; what the conversion says of a
            // field set aside (now absent or a stand-in) is already said.
            if let Some(rest) = rest
                && let Err(Error::Validation(more)) = convert(rest)
            {
                problems.extend(
                    more.into_iter()
                        .filter(|m| !set_aside.iter().any(|f| names_field(m, f))),
                );
            }
            Err(Error::Validation(problems))
        }
    }
}

/// The body with every number that is a whole number written with a fraction (`27.0`,
/// `1e3`) turned into an integer, or `None` when there is none. JSON Schema counts `27.0`
/// as an integer, and so do the clients generated from the API document; serde's integer
/// fields refuse it.
fn integral_floats_as_integers(bytes: &[u8]) -> Option<serde_json::Value> {
    fn walk(value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::Number(n) if !n.is_i64() && !n.is_u64() => {
                let Some(f) = n.as_f64() else {
                    return false;
                };
                // Within ±2^53 every whole f64 is exact, so nothing is rounded.
                if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
                    *value = serde_json::Value::from(f as i64);
                    true
                } else {
                    false
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().fold(false, |c, v| walk(v) | c),
            serde_json::Value::Object(map) => map.values_mut().fold(false, |c, v| walk(v) | c),
            _ => false,
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    walk(&mut value).then_some(value)
}

fn is_syntax(e: &serde_json::Error) -> bool {
    matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    )
}

/// What [`field_problems`] found: serde's messages, the input read once every field it
/// refused was set aside (absent, or a stand-in value for a required one), and those
/// fields' names.
struct FieldProblems<T> {
    problems: Vec<String>,
    rest: Option<T>,
    set_aside: Vec<String>,
}

/// Values tried in place of a required field that was refused or missing, so that the
/// rest of the body can still be read: the first one serde takes without naming the
/// field again is used.
const STAND_INS: [fn() -> serde_json::Value; 6] = [
    || serde_json::Value::String(String::new()),
    || serde_json::Value::from(0),
    || serde_json::Value::Bool(false),
    || serde_json::Value::Array(Vec::new()),
    || serde_json::Value::Object(serde_json::Map::new()),
    || serde_json::Value::Null,
];

/// Every field problem of a well-formed object. serde stops at the first one, so the field
/// it names is set aside (removed, or given a stand-in when it is required) and the rest is
/// read again; each round sets aside one more field, and a field is never set aside twice,
/// so this ends within the object's size plus its type's fields.
fn field_problems<T: DeserializeOwned>(bytes: &[u8]) -> FieldProblems<T> {
    let mut object: serde_json::Map<String, serde_json::Value> = match serde_json::from_slice(bytes)
    {
        Ok(object) => object,
        Err(e) => {
            return FieldProblems {
                problems: vec![serde_message(&e)],
                rest: None,
                set_aside: Vec::new(),
            };
        }
    };
    let mut problems = Vec::new();
    let mut set_aside: Vec<String> = Vec::new();
    let rest = loop {
        let error = match deserialize::<T>(&object) {
            Ok(rest) => break Some(rest),
            Err(error) => error,
        };
        let message = serde_message(error.inner());
        // A field already set aside named again: nothing more can be learnt.
        let Some(field) = named_field(&message, &error).filter(|f| !set_aside.contains(f)) else {
            break None;
        };
        problems.push(if backticked(&message, "missing field `").is_some() {
            format!("{field} is required")
        } else if message.contains(&format!("`{field}`")) {
            message
        } else {
            format!("{field}: {message}")
        });
        object.remove(&field);
        if refused_field::<T>(&object).as_ref() == Some(&field)
            && !stand_in::<T>(&mut object, &field)
        {
            break None;
        }
        set_aside.push(field);
    };
    if problems.is_empty() {
        problems.push("the request body could not be read".into());
    }
    FieldProblems {
        problems,
        rest,
        set_aside,
    }
}

fn deserialize<T: DeserializeOwned>(
    object: &serde_json::Map<String, serde_json::Value>,
) -> std::result::Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(serde_json::Value::Object(object.clone()))
}

/// The body's field that serde's message is about: a missing or unknown one, or the first
/// segment of the error's path.
fn named_field(
    message: &str,
    error: &serde_path_to_error::Error<serde_json::Error>,
) -> Option<String> {
    backticked(message, "missing field `")
        .or_else(|| backticked(message, "unknown field `"))
        .or_else(|| top_level_key(error))
}

/// The field serde refuses `object` for, if it names one.
fn refused_field<T: DeserializeOwned>(
    object: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    let error = deserialize::<T>(object).err()?;
    named_field(&serde_message(error.inner()), &error)
}

/// Puts the first of [`STAND_INS`] in the required `field` that serde takes without naming
/// the field again; false when none does.
fn stand_in<T: DeserializeOwned>(
    object: &mut serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> bool {
    for value in STAND_INS {
        object.insert(field.to_owned(), value());
        if refused_field::<T>(object).as_deref() != Some(field) {
            return true;
        }
    }
    object.remove(field);
    false
}

/// Whether `message` is about the body's field `field` (it starts with its name).
fn names_field(message: &str, field: &str) -> bool {
    message
        .strip_prefix(field)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':', '.', '[', ',']))
}

/// serde's message without its " at line L column C" suffix.
fn serde_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    message
        .rsplit_once(" at line ")
        .map_or(message.clone(), |(m, _)| m.to_owned())
}

/// The name in "unknown field `name`, expected ...".
fn backticked(message: &str, prefix: &str) -> Option<String> {
    let rest = message.strip_prefix(prefix)?;
    rest.split_once('`').map(|(name, _)| name.to_owned())
}

/// The body's own field that holds the error (the first segment of its path).
fn top_level_key(error: &serde_path_to_error::Error<serde_json::Error>) -> Option<String> {
    match error.path().iter().next()? {
        serde_path_to_error::Segment::Map { key } => Some(key.clone()),
        _ => None,
    }
}
