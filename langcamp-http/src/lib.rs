//! Langcamp's HTTP front end: a small hyper server around `langcamp-core`.
//!
//! Routing, the envelope, CORS, the body limit and rate limits live here, around the
//! handlers; the handlers themselves only translate between HTTP and core calls.

pub mod docs;
mod handlers;
pub mod limits;
pub mod multipart;
pub mod reply;
pub mod request;
mod router;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
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

use crate::limits::{RateLimits, client_ip};
use crate::reply::{Body, HttpError, empty, http_failure};
use crate::request::{BODY_LIMIT, Ctx};
use crate::router::{Lookup, Routes};

/// A client has this long to send its request headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// After shutdown is asked for, in-flight requests get this long to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// How often idle rate-limit keys are forgotten.
const LIMITER_CLEANUP_EVERY: Duration = Duration::from_secs(60);

/// Everything a request needs, shared by all connections.
pub struct Server {
    app: Langcamp,
    routes: Routes,
    limits: RateLimits,
    trust_forwarded_for: bool,
}

impl Server {
    pub fn new(app: Langcamp) -> Server {
        let trust_forwarded_for = app.config().trust_forwarded_for;
        Server {
            app,
            routes: handlers::routes(),
            limits: RateLimits::new(),
            trust_forwarded_for,
        }
    }

    pub fn limits(&self) -> &RateLimits {
        &self.limits
    }

    /// Answers one request. Never fails: every error becomes an envelope.
    pub async fn handle(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        let started = Instant::now();
        let method = request.method().clone();
        let path = request.uri().path().to_owned();
        let mut response = self.dispatch(request, peer).await;
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        tracing::info!(
            target: "langcamp_http::access",
            %method,
            %path,
            status = response.status().as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
        );
        response
    }

    async fn dispatch(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        if request.method() == Method::OPTIONS {
            return preflight();
        }
        let (route, params) = match self.routes.find(request.method(), request.uri().path()) {
            Lookup::Route(route, params) => (route, params),
            Lookup::MethodNotAllowed(allow) => {
                return http_failure(HttpError::MethodNotAllowed { allow });
            }
            Lookup::NoRoute => return http_failure(HttpError::RouteNotFound),
        };
        let client = client_ip(request.headers(), peer, self.trust_forwarded_for);
        if let Err(wait) = self.limits.check(route.rule, route.id, client) {
            return http_failure(HttpError::RateLimited {
                retry_after_secs: wait.as_secs_f64().ceil() as u64,
            });
        }
        if declared_length(&request).is_some_and(|len| len > BODY_LIMIT as u64) {
            return http_failure(HttpError::Core(langcamp_core::Error::PayloadTooLarge(
                "request body is larger than 50 MB".into(),
            )));
        }
        let (parts, body) = request.into_parts();
        let ctx = Ctx::new(
            self.app.clone(),
            parts,
            Limited::new(body, BODY_LIMIT),
            params,
            client,
        );
        match (route.handler)(ctx).await {
            Ok(reply) => reply.into_response(),
            Err(error) => http_failure(HttpError::Core(error)),
        }
    }
}

fn declared_length(request: &Request<Incoming>) -> Option<u64> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
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
    let server = Arc::new(Server::new(app));
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
        .header_read_timeout(HEADER_READ_TIMEOUT);
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
        let service = service_fn(move |request| {
            let server = Arc::clone(&server);
            async move { Ok::<_, Infallible>(server.handle(request, peer).await) }
        });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
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
