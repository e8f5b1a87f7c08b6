//! Langcamp's HTTP front end: a small hyper server around `langcamp-core`.
//!
//! Routing, the envelope, CORS, the body limit and rate limits live here, around the
//! handlers; the handlers themselves only translate between HTTP and core calls.

pub mod docs;
pub mod encoded;
mod handlers;
pub mod headers;
pub mod limits;
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
use hyper_util::server::graceful::GracefulShutdown;
use langcamp_core::Langcamp;
use tokio::net::TcpListener;
use tokio::sync::Notify;

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
/// After shutdown is asked for, in-flight requests get this long to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
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
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_idle_timeout: BODY_IDLE_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
        }
    }
}

/// Everything a request needs, shared by all connections.
pub struct Server {
    app: Langcamp,
    routes: Routes,
    limits: RateLimits,
    /// `TRUSTED_PROXIES`: peers whose `X-Forwarded-For` is believed.
    trusted_proxies: Vec<langcamp_core::net::IpNet>,
    options: ServeOptions,
    /// Present when `METRICS_TOKEN` is set.
    metrics: Option<observe::Metrics>,
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
        }
    }

    pub fn limits(&self) -> &RateLimits {
        &self.limits
    }

    /// Answers one request. Never fails: every error becomes an envelope. Every answer
    /// carries `X-Request-Id`, is counted, and gets one access-log line.
    pub async fn handle(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        let started = Instant::now();
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let request_id = observe::request_id(request.headers());
        let operations = observe::is_operations_path(&method, &path);
        let mut response = observe::with_request_id(Arc::clone(&request_id), async {
            if operations {
                observe::operations(&self.app, self.metrics.as_ref(), &request).await
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

/// Serves HTTP on `listener` until `shutdown` resolves, then lets in-flight requests
/// finish (up to [`SHUTDOWN_GRACE`]) and returns.
pub async fn serve(
    app: Langcamp,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_with(app, listener, shutdown, ServeOptions::default()).await
}

/// [`serve`] with other timeouts against slow clients.
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

    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);

    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let server = Arc::clone(&server);
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
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        let header_read_timeout = options.header_read_timeout;
        tokio::spawn(async move {
            tokio::pin!(connection);
            // hyper times the headers of HTTP/1 requests once it knows the protocol, but
            // not the wait for the first bytes (nor an HTTP/2 preface): a client that
            // connects and stays silent would hold its connection forever.
            let first = tokio::select! {
                result = &mut connection => Some(result),
                () = first_request.notified() => None,
                () = tokio::time::sleep(header_read_timeout) => {
                    tracing::debug!(%peer, "no request head within the header timeout; closing");
                    return;
                }
            };
            let result = match first {
                Some(result) => result,
                None => connection.await,
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }

    drop(listener);
    cleanup.abort();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections were still open after the shutdown grace period");
    }
    Ok(())
}
