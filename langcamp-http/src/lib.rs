//! Langcamp's HTTP front end: a small hyper server around `langcamp-core`.
//!
//! Routing, the envelope, CORS, the body limit and rate limits live here, around the
//! handlers; the handlers themselves only translate between HTTP and core calls.

pub mod body;
pub mod docs;
pub mod encoded;
mod handlers;
pub mod headers;
pub mod json_body;
pub mod limits;
mod listener;
pub mod material_form;
pub mod multipart;
pub mod observe;
pub mod reply;
pub mod request;
mod router;

pub use router::{Access, Operation};

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use http_body_util::Limited;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use langcamp_core::Langcamp;
use langcamp_core::platform::config::DEFAULT_SHUTDOWN_DRAIN;
use langcamp_core::platform::trace;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tracing::Instrument as _;

use crate::limits::{RateLimits, client_ip};
use crate::reply::{Body, HttpError, empty, failure_at, http_failure};
use crate::request::{BODY_LIMIT, Ctx, RequestBody, TimedBody};
use crate::router::{Lookup, Routes};

/// A client has this long to send its request headers (for the first request of a
/// connection: counted from the connection's opening).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// While a handler reads a request body, the client may pause this long at most.
pub const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// The whole request body must have arrived this long after the headers.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// Once the listener is closed, in-flight requests get this long to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Before the listener closes, the handshakes under way get this long to complete: many
/// round trips on a school's network or a cluster's, little beside the drain.
pub const HANDSHAKE_WAIT: Duration = Duration::from_millis(200);
/// After the listener is closed, a connection accepted just before that, whose first
/// request has not arrived yet, waits this long for it (a proxy sends its request right
/// after connecting) rather than being closed under it.
const FIRST_REQUEST_AT_SHUTDOWN: Duration = Duration::from_secs(1);
/// How often idle rate-limit keys are forgotten.
const LIMITER_CLEANUP_EVERY: Duration = Duration::from_secs(60);

/// The server's protections against slow clients; [`serve`] uses the defaults, tests
/// shorten them through [`serve_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    /// [`HEADER_READ_TIMEOUT`] by default. A connection whose (first) request head has not
    /// arrived in time is closed without an answer.
    pub header_read_timeout: Duration,
    /// [`BODY_IDLE_TIMEOUT`] by default.
    pub body_idle_timeout: Duration,
    /// [`BODY_READ_TIMEOUT`] by default. A body too slow for either limit gets 408
    /// `REQUEST_TIMEOUT` and the connection is closed.
    pub body_read_timeout: Duration,
    /// `SHUTDOWN_DRAIN` ([`DEFAULT_SHUTDOWN_DRAIN`] by default; [`serve`] takes the
    /// configured one): once shutdown is asked for, the server goes on accepting and
    /// answering this long, with `/ready` at 503 and `Connection: close` on every HTTP/1
    /// answer, before it closes its listener. Zero: no drain.
    pub shutdown_drain: Duration,
    /// [`SHUTDOWN_GRACE`] by default: how long requests still in flight when the
    /// listener closes may take to finish.
    pub shutdown_grace: Duration,
    /// [`HANDSHAKE_WAIT`] by default: at the close, how long the listener, no longer
    /// completing new connections, goes on accepting those whose handshake was under way.
    pub handshake_wait: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_idle_timeout: BODY_IDLE_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
            shutdown_drain: DEFAULT_SHUTDOWN_DRAIN,
            shutdown_grace: SHUTDOWN_GRACE,
            handshake_wait: HANDSHAKE_WAIT,
        }
    }
}

impl ServeOptions {
    /// The defaults, with the drain `app` is configured with (`SHUTDOWN_DRAIN`).
    pub fn for_app(app: &Langcamp) -> ServeOptions {
        ServeOptions {
            shutdown_drain: app.config().shutdown_drain,
            ..ServeOptions::default()
        }
    }
}

/// Everything a request needs, shared by all connections.
pub struct Server {
    app: Langcamp,
    routes: Routes,
    limits: RateLimits,
    /// `TRUSTED_PROXIES`: peers whose `X-Forwarded-For` is believed.
    trusted_proxies: Vec<langcamp_core::platform::net::IpNet>,
    options: ServeOptions,
    /// Present when `METRICS_TOKEN` is set.
    metrics: Option<observe::Metrics>,
    /// Set when shutdown is asked for: `/ready` answers 503 and HTTP/1 answers close
    /// their connection, while the listener still accepts (`SHUTDOWN_DRAIN`).
    draining: AtomicBool,
}

impl Server {
    pub fn new(app: Langcamp) -> Server {
        Server::with_options(app, ServeOptions::default())
    }

    pub fn with_options(app: Langcamp, options: ServeOptions) -> Server {
        let trusted_proxies = app.config().trusted_proxies.clone();
        Server {
            routes: handlers::routes(),
            limits: RateLimits::new(),
            trusted_proxies,
            options,
            metrics: observe::Metrics::from_config(&app),
            app,
            draining: AtomicBool::new(false),
        }
    }

    /// Whether the server is draining before it stops (see [`ServeOptions::shutdown_drain`]).
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Starts the drain: from now on `/ready` answers 503 and every HTTP/1 answer carries
    /// `Connection: close`.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    pub fn limits(&self) -> &RateLimits {
        &self.limits
    }

    /// Answers one request. Never fails: every error becomes an envelope. Every answer
    /// carries `X-Request-Id`, is counted, and gets one access-log line.
    pub async fn handle(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        // Probes and scrapes make no trace (one a second would bury the requests').
        if trace::enabled() && !observe::is_operations_path(request.method(), request.uri().path())
        {
            let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
            // Sampled before any span is made: a request left out costs no span.
            match trace::incoming(header("traceparent"), header("tracestate")) {
                trace::Incoming::Traced { parent } => {
                    let span = self.server_span(&request, peer);
                    trace::continue_trace(&span, parent);
                    let response = self.answer(request, peer).instrument(span.clone()).await;
                    let status = response.status();
                    span.record("http.response.status_code", status.as_u16());
                    if status.is_server_error() {
                        span.record("otel.status_code", "ERROR");
                    }
                    return response;
                }
                trace::Incoming::Untraced(context) => {
                    return trace::untraced(context, self.answer(request, peer)).await;
                }
            }
        }
        self.answer(request, peer).await
    }

    /// The request's `SERVER` span (CONTRACT §23), named `{method} {route}` (the route
    /// template; the method alone when no route matches). The query string is left out (a
    /// search names people).
    fn server_span(&self, request: &Request<Incoming>, peer: SocketAddr) -> tracing::Span {
        let method = request.method();
        let path = request.uri().path();
        let route = match self.routes.find(method, path) {
            Lookup::Route(route, _) => Some(Arc::clone(&route.template)),
            _ => None,
        };
        let name = match &route {
            Some(route) => format!("{method} {route}"),
            None => method.to_string(),
        };
        let headers = request.headers();
        let client = client_ip(headers, peer, &self.trusted_proxies);
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let span = tracing::info_span!(
            target: trace::TARGET,
            "HTTP request",
            otel.name = %name,
            otel.kind = "server",
            http.request.method = %method,
            http.route = tracing::field::Empty,
            url.path = path,
            client.address = %client,
            user_agent.original = header("user-agent").unwrap_or_default(),
            http.response.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        if let Some(route) = &route {
            span.record("http.route", &**route);
        }
        span
    }

    /// Answers one request (see [`Server::handle`]).
    async fn answer(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        let started = Instant::now();
        let method = request.method().clone();
        let http1 = request.version() < hyper::Version::HTTP_2;
        let path = request.uri().path().to_owned();
        let request_id = observe::request_id(request.headers());
        let operations = observe::is_operations_path(&method, &path);
        let mut response = observe::with_request_id(Arc::clone(&request_id), async {
            if operations {
                let draining = self.draining();
                observe::operations(&self.app, self.metrics.as_ref(), draining, &request).await
            } else {
                self.dispatch(request, peer).await
            }
        })
        .await;
        headers::add_security_headers(&path, response.headers_mut());
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        // Draining: the answer closes its connection, so a proxy's next request opens a
        // new one (refused once the listener is closed, which any proxy retries safely)
        // instead of meeting a keep-alive connection closed under it. Checked when the
        // answer is ready, so a request that began before the drain is covered too.
        // HTTP/2 has no such header; its connections get GOAWAY when the listener closes.
        if http1 && self.draining() {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        observe::Finish {
            method: &method,
            path: &path,
            request_id: &request_id,
            started,
            peer: peer.ip(),
            operations,
            metrics: self.metrics.is_some(),
        }
        .apply(&mut response);
        response
    }

    async fn dispatch(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        if request.method() == Method::OPTIONS {
            return preflight();
        }
        let (route, params) = match self.routes.find(request.method(), request.uri().path()) {
            Lookup::Route(route, params) => (route, params),
            Lookup::MethodNotAllowed(allow) => {
                return http_failure(self.app.clock(), HttpError::MethodNotAllowed { allow });
            }
            Lookup::NoRoute => return http_failure(self.app.clock(), HttpError::RouteNotFound),
        };
        let client = client_ip(request.headers(), peer, &self.trusted_proxies);
        let info = observe::RouteInfo {
            template: Arc::clone(&route.template),
            client,
        };
        let mut response = self.route(request, route, params, client).await;
        response.extensions_mut().insert(info);
        response
    }

    async fn route(
        &self,
        request: Request<Incoming>,
        route: &router::Route,
        params: Vec<(String, String)>,
        client: std::net::IpAddr,
    ) -> Response<Body> {
        if let Err(wait) = self.limits.check(route.rule, route.id, client) {
            if self.metrics.is_some() {
                observe::record_rate_limited(route.rule);
            }
            return http_failure(
                self.app.clock(),
                HttpError::RateLimited {
                    retry_after_secs: wait.as_secs_f64().ceil() as u64,
                },
            );
        }
        if declared_length(&request).is_some_and(|len| len > BODY_LIMIT as u64) {
            return http_failure(
                self.app.clock(),
                HttpError::Core(langcamp_core::Error::PayloadTooLarge(
                    "request body is larger than 50 MB".into(),
                )),
            );
        }
        let (parts, body) = request.into_parts();
        let body_timed_out = Arc::new(AtomicBool::new(false));
        let body = TimedBody::new(
            RequestBody::Incoming(body),
            self.options.body_idle_timeout,
            self.options.body_read_timeout,
            Arc::clone(&body_timed_out),
        );
        let ctx = Ctx::new(
            self.app.clone(),
            parts,
            Limited::new(body, BODY_LIMIT),
            params,
            client,
        );
        // Who may call the endpoint is settled before its body is read.
        if let Err(error) = ctx.authorize(route.access).await {
            return http_failure(self.app.clock(), HttpError::Core(error));
        }
        let response = match (route.handler)(ctx).await {
            Ok(reply) => reply.into_response(self.app.clock()),
            Err(error) => http_failure(self.app.clock(), HttpError::Core(error)),
        };
        if body_timed_out.load(Ordering::Relaxed) {
            return body_timeout(self.app.clock());
        }
        response
    }
}

fn declared_length(request: &Request<Incoming>) -> Option<u64> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// 408 for a body that did not arrive in time; the connection is closed after it, since
/// the rest of that body may still be on its way.
fn body_timeout(clock: &langcamp_core::Clock) -> Response<Body> {
    let mut response = failure_at(
        clock,
        StatusCode::REQUEST_TIMEOUT,
        "REQUEST_TIMEOUT",
        vec!["the request body did not arrive in time".into()],
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// CORS preflight: any origin, the methods we serve, the headers clients send.
fn preflight() -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Authorization, Content-Type, Accept-Language"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

/// Serves HTTP on `listener` until `shutdown` resolves, drains for the configured
/// `SHUTDOWN_DRAIN`, then lets in-flight requests finish (up to [`SHUTDOWN_GRACE`]) and
/// returns.
pub async fn serve(
    app: Langcamp,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let options = ServeOptions::for_app(&app);
    serve_with(app, listener, shutdown, options).await
}

/// [`serve`] with other timeouts against slow clients, and another drain and grace.
///
/// Shutdown, in three steps:
/// 1. `shutdown` resolves: the drain starts. `/ready` answers 503 at once (load balancers
///    with active checks stop routing here), the listener goes on accepting, and every
///    HTTP/1 answer carries `Connection: close`, so a proxy's keep-alive connections end
///    after their next answer, never under a request.
/// 2. After [`ServeOptions::shutdown_drain`] the listener closes without resetting a
///    connection its client believes open: it stops completing new handshakes (a new
///    connection's SYN is dropped, so its connect times out), accepts those under way for
///    [`ServeOptions::handshake_wait`] and everything left in its queue, then closes. From
///    then on new connections are refused. Either way nothing was sent, so a proxy retries
///    on another instance whatever the method.
/// 3. Connections are shut down gracefully: an idle one is closed, a request in flight
///    finishes and its connection closes after its answer, and a connection accepted
///    just before the close gets its first request answered. After
///    [`ServeOptions::shutdown_grace`] whatever still runs is dropped.
pub async fn serve_with(
    app: Langcamp,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()> {
    let server = Arc::new(Server::with_options(app, options));
    let cleanup = tokio::spawn({
        let server = Arc::clone(&server);
        async move {
            let mut tick = tokio::time::interval(LIMITER_CLEANUP_EVERY);
            loop {
                tick.tick().await;
                server.limits.cleanup();
            }
        }
    });
    let connections = Connections::new(&server, options);

    connections.accept_until(&listener, shutdown).await;
    if !options.shutdown_drain.is_zero() {
        server.start_draining();
        tracing::info!(
            drain_ms = options.shutdown_drain.as_millis() as u64,
            "draining: /ready answers 503 and answers close their connections; \
             the listener closes when the drain ends"
        );
        connections
            .accept_until(&listener, tokio::time::sleep(options.shutdown_drain))
            .await;
    }
    connections.close(listener).await;
    cleanup.abort();
    tracing::info!("listener closed: finishing in-flight requests");
    let Connections { stop, .. } = connections;
    let _ = stop.send(true);
    if tokio::time::timeout(options.shutdown_grace, stop.closed())
        .await
        .is_err()
    {
        tracing::warn!("some connections were still open after the shutdown grace period");
    }
    Ok(())
}

/// The accepted connections: each runs on a task of its own and holds a receiver of
/// `stop`, so `stop.closed()` resolves when the last one has ended.
struct Connections {
    server: Arc<Server>,
    builder: auto::Builder<TokioExecutor>,
    options: ServeOptions,
    stop: watch::Sender<bool>,
}

impl Connections {
    fn new(server: &Arc<Server>, options: ServeOptions) -> Connections {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(options.header_read_timeout);
        Connections {
            server: Arc::clone(server),
            builder,
            options,
            stop: watch::Sender::new(false),
        }
    }

    /// Accepts and serves connections until `until` resolves.
    async fn accept_until(&self, listener: &TcpListener, until: impl Future<Output = ()>) {
        tokio::pin!(until);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => self.serve(stream, peer),
                    Err(e) => {
                        // Out of file descriptors and the like: wait a moment, keep serving.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                () = &mut until => return,
            }
        }
    }

    /// Closes the listener so that every connection its kernel completed is served and
    /// every other one is refused or never completes (`listener.rs` says why).
    async fn close(&self, listener: TcpListener) {
        match listener::stop_completing_handshakes(&listener) {
            Ok(()) => {
                let wait = self.options.handshake_wait;
                self.accept_until(&listener, tokio::time::sleep(wait)).await;
            }
            Err(e) => tracing::warn!(
                error = %e,
                "the listener could not stop completing handshakes before its close: \
                 a connection completed at the close itself is reset"
            ),
        }
        for (stream, peer) in listener::take_queued(listener) {
            self.serve(stream, peer);
        }
    }

    fn serve(&self, stream: TcpStream, peer: SocketAddr) {
        let server = Arc::clone(&self.server);
        let first_request = Arc::new(Notify::new());
        let service = service_fn({
            // Told once, at the first request (the wait below ends there), not per request.
            let first_request = Arc::clone(&first_request);
            let told = AtomicBool::new(false);
            move |request| {
                if !told.load(Ordering::Relaxed) {
                    told.store(true, Ordering::Relaxed);
                    first_request.notify_one();
                }
                let server = Arc::clone(&server);
                async move { Ok::<_, Infallible>(server.handle(request, peer).await) }
            }
        });
        let connection = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let header_read_timeout = self.options.header_read_timeout;
        let mut stop = self.stop.subscribe();
        tokio::spawn(async move {
            tokio::pin!(connection);
            // hyper times the headers of HTTP/1 requests once it knows the protocol, but
            // not the wait for the first bytes (nor an HTTP/2 preface): a client that
            // connects and stays silent would hold its connection forever. Shutdown does
            // not close a connection that waits for its first request, since a proxy may
            // be sending it right now: it only shortens the wait.
            let deadline = tokio::time::sleep(header_read_timeout);
            tokio::pin!(deadline);
            let mut stopping = *stop.borrow();
            if stopping {
                shorten(deadline.as_mut(), FIRST_REQUEST_AT_SHUTDOWN);
            }
            let first = loop {
                tokio::select! {
                    result = &mut connection => break Some(result),
                    () = first_request.notified() => break None,
                    () = &mut deadline => {
                        tracing::debug!(%peer, "no request head within the header timeout; closing");
                        return;
                    }
                    _ = stop.changed(), if !stopping => {
                        stopping = true;
                        shorten(deadline.as_mut(), FIRST_REQUEST_AT_SHUTDOWN);
                    }
                }
            };
            let result = match first {
                Some(result) => result,
                None => {
                    // From the first request on, shutdown is hyper's graceful one: an idle
                    // connection is closed, a request in flight is answered (with
                    // `Connection: close`) and its connection closed after it.
                    if stopping {
                        connection.as_mut().graceful_shutdown();
                    }
                    loop {
                        tokio::select! {
                            result = &mut connection => break result,
                            _ = stop.changed(), if !stopping => {
                                stopping = true;
                                connection.as_mut().graceful_shutdown();
                            }
                        }
                    }
                }
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "connection closed with an error");
            }
            drop(stop);
        });
    }
}

/// Moves `deadline` to at most `by` from now.
fn shorten(deadline: std::pin::Pin<&mut tokio::time::Sleep>, by: Duration) {
    let sooner = tokio::time::Instant::now() + by;
    if sooner < deadline.deadline() {
        deadline.reset(sooner);
    }
}
