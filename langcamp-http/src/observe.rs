//! What operators see of the server: request ids, the access log, Prometheus metrics and
//! the operations endpoints `/health`, `/ready` and `/metrics` (contract §1 and §15).
//!
//! Everything here sits on every request, so the common path is cheap: the request id is
//! the client's header or a fresh UUID, the access log is one event, and metrics are
//! recorded only when `METRICS_TOKEN` is set (no token, no `/metrics`, nothing to count).

use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use langcamp_core::Langcamp;
use langcamp_core::platform::config::Secret;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use serde_json::json;

use crate::limits::RateRule;
use crate::reply::{Body, failure_with, full};

/// The response header carrying the request id.
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// The longest client-supplied request id that is kept.
const MAX_CLIENT_ID_LEN: usize = 64;
/// Buckets of the latency histogram, in seconds: 1 ms to 10 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

tokio::task_local! {
    /// The id of the request being answered on this task, for failure envelopes and logs.
    static REQUEST_ID: Arc<str>;
}

/// The client's `X-Request-Id` when it is safe to echo and to log (1..=64 characters of
/// `A-Za-z0-9._-`), else a new one.
pub fn request_id(headers: &HeaderMap) -> Arc<str> {
    match headers.get(REQUEST_ID_HEADER).map(HeaderValue::as_bytes) {
        Some(id) if is_safe_id(id) => Arc::from(String::from_utf8_lossy(id).as_ref()),
        _ => Arc::from(langcamp_core::domain::id::new_unordered_id()),
    }
}

fn is_safe_id(id: &[u8]) -> bool {
    (1..=MAX_CLIENT_ID_LEN).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Runs `future` with `id` as the current request id.
pub async fn with_request_id<F: Future>(id: Arc<str>, future: F) -> F::Output {
    REQUEST_ID.scope(id, future).await
}

/// The id of the request this task is answering, if any.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(|id| id.to_string()).ok()
}

/// The same id, shared rather than copied (the audit trail's [`langcamp_core::Origin`]).
pub fn current_request_id_shared() -> Option<Arc<str>> {
    REQUEST_ID.try_with(Arc::clone).ok()
}

/// What the router learnt about a request, left on the response for the access log and
/// the metrics: the route template (never the concrete path) and the client address.
#[derive(Clone, Debug)]
pub struct RouteInfo {
    pub template: Arc<str>,
    pub client: IpAddr,
}

/// Route label of requests that matched no route (404, 405, preflight).
const UNMATCHED: &str = "unmatched";

/// The operations endpoints, answered before routing: never rate limited, never
/// enveloped, logged at debug level only.
pub fn is_operations_path(method: &Method, path: &str) -> bool {
    (method == Method::GET || method == Method::HEAD)
        && matches!(path, "/health" | "/ready" | "/metrics")
}

/// Prometheus metrics of this server; present only when `METRICS_TOKEN` is set.
pub struct Metrics {
    token: Secret,
    handle: &'static PrometheusHandle,
}

impl Metrics {
    /// Installs the process-wide recorder on first use. `None` when no token is set, or
    /// when another recorder already owns the process (then there is nothing to render).
    pub fn from_config(app: &Langcamp) -> Option<Metrics> {
        let token = app.config().metrics_token.clone()?;
        let handle = prometheus()?;
        Some(Metrics { token, handle })
    }
}

fn prometheus() -> Option<&'static PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full("langcamp_http_request_duration_seconds".into()),
                    LATENCY_BUCKETS,
                )
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            if metrics::set_global_recorder(recorder).is_err() {
                tracing::warn!("a metrics recorder is already installed; /metrics is off");
                return None;
            }
            describe();
            register_known_series();
            Some(handle)
        })
        .as_ref()
}

/// HELP lines: `promtool check metrics` wants one for every series.
fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        "langcamp_http_requests_total",
        "HTTP requests answered, by method, route template and status."
    );
    describe_histogram!(
        "langcamp_http_request_duration_seconds",
        Unit::Seconds,
        "Time from request head to response head, by method and route template."
    );
    describe_counter!(
        "langcamp_rate_limited_total",
        "Requests refused with 429 by a rate-limit rule."
    );
    describe_gauge!(
        "langcamp_mail_outbox_queued",
        "Mails waiting in the outbox for delivery."
    );
    describe_gauge!(
        "langcamp_mail_outbox_oldest_seconds",
        Unit::Seconds,
        "Age of the oldest mail waiting in the outbox (0 when none waits)."
    );
    describe_counter!(
        "langcamp_mail_sent_total",
        "Mails delivered by this process's worker."
    );
    describe_counter!(
        "langcamp_mail_failed_total",
        "Mails this process's worker gave up on after 24 hours of retries."
    );
    describe_counter!(
        "langcamp_webhook_deliveries_total",
        "Webhook delivery attempts by this process's worker, by outcome: delivered (2xx), retried, failed (given up after 24 hours)."
    );
    describe_gauge!(
        "langcamp_webhook_queue_oldest_seconds",
        Unit::Seconds,
        "Age of the oldest webhook delivery waiting (0 when none waits)."
    );
    describe_counter!(
        "langcamp_trace_spans_dropped_total",
        "Trace spans dropped by this process: the export queue was full or the collector did not take them (0 while tracing is off)."
    );
    describe_gauge!(
        "langcamp_db_pool_connections",
        "Database pool connections by state: in_use, idle, and max (the ceiling)."
    );
    describe_gauge!(
        "process_resident_memory_bytes",
        Unit::Bytes,
        "Resident memory size in bytes."
    );
}

/// Counts one answered request.
pub fn record_request(
    method: &Method,
    route: Option<&RouteInfo>,
    status: StatusCode,
    took: Duration,
) {
    let route: metrics::SharedString = match route {
        Some(info) => metrics::SharedString::from(info.template.to_string()),
        None => metrics::SharedString::const_str(UNMATCHED),
    };
    let method = metrics::SharedString::from(method.as_str().to_owned());
    metrics::counter!(
        "langcamp_http_requests_total",
        "method" => method.clone(),
        "route" => route.clone(),
        "status" => status.as_str().to_owned(),
    )
    .increment(1);
    metrics::histogram!(
        "langcamp_http_request_duration_seconds",
        "method" => method,
        "route" => route,
    )
    .record(took.as_secs_f64());
}

/// Counts one request refused by `rule`.
pub fn record_rate_limited(rule: RateRule) {
    metrics::counter!("langcamp_rate_limited_total", "rule" => rule.label()).increment(1);
}

/// Registers every series whose labels are known in advance at 0, so that a fresh
/// instance's first scrape lists them and `rate()` or `increase()` sees the first event
/// (contract §15).
fn register_known_series() {
    for rule in RateRule::ALL {
        metrics::counter!("langcamp_rate_limited_total", "rule" => rule.label()).increment(0);
    }
    // The mail counters are set at every scrape (`scrape`), so they are there from the first.
}

/// Answers `/health`, `/ready` or `/metrics`; `draining`: the server is about to stop
/// (`SHUTDOWN_DRAIN`), so `/ready` answers 503 whatever the checks would say.
pub async fn operations(
    app: &Langcamp,
    metrics: Option<&Metrics>,
    draining: bool,
    request: &Request<hyper::body::Incoming>,
) -> Response<Body> {
    match request.uri().path() {
        "/health" => json_response(StatusCode::OK, &json!({"status": "ok"})),
        "/ready" if draining => not_ready_draining(),
        "/ready" => ready(app).await,
        _ => match metrics {
            None => failure_with(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                vec!["route not found".into()],
            ),
            Some(metrics) if !authorized(request.headers(), &metrics.token) => {
                let mut response = failure_with(
                    StatusCode::UNAUTHORIZED,
                    "UNAUTHORIZED",
                    vec!["GET /metrics needs Authorization: Bearer $METRICS_TOKEN".into()],
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                response
            }
            Some(metrics) => scrape(app, metrics).await,
        },
    }
}

async fn ready(app: &Langcamp) -> Response<Body> {
    let report = app.readiness().await;
    let ready = report.is_ready();
    let checks: serde_json::Map<String, serde_json::Value> = report
        .checks
        .iter()
        .map(|c| (c.name.to_owned(), json!({"ok": c.ok, "detail": c.detail})))
        .collect();
    let mut body = json!({
        "status": if ready { "ready" } else { "unavailable" },
        "checks": checks,
        "mailWorker": report.mail_worker,
    });
    if !ready {
        body["failing"] = json!(report.failing());
        // Debug like the rest of the operations endpoints: a probe polls every few seconds.
        tracing::debug!(failing = ?report.failing(), "readiness check failed");
    }
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut response = json_response(status, &body);
    // Readiness is a live answer: no proxy may serve a stale one.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if !ready {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    response
}

/// `/ready` while the server drains before it stops: 503 at once, without running the
/// checks, so a load balancer with active checks stops routing here while this instance
/// still answers what reaches it. `/health` stays 200: the process is alive.
fn not_ready_draining() -> Response<Body> {
    let body = json!({
        "status": "unavailable",
        "checks": {
            "shutdown": {
                "ok": false,
                "detail": "shutting down: draining connections before the listener closes",
            },
        },
        "failing": ["shutdown"],
    });
    let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, &body);
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

fn authorized(headers: &HeaderMap, token: &Secret) -> bool {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    // Without stopping at the first difference, so timing tells nothing of the token.
    langcamp_core::platform::crypto::constant_time_eq(
        presented.trim().as_bytes(),
        token.expose().as_bytes(),
    )
}

/// Sets the gauges read at scrape time, then renders every series.
async fn scrape(app: &Langcamp, metrics: &Metrics) -> Response<Body> {
    // The outbox and delivery queries are bounded like a readiness check: a slow database
    // must not make the scrape time out and lose every other series with it.
    let (backlog, deliveries) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(1), app.outbox_backlog()),
        tokio::time::timeout(Duration::from_secs(1), app.webhook_backlog()),
    );
    // The recorder is process-wide: two servers in one process (tests) scraped at once
    // must not render each other's gauges, so setting and rendering happen together.
    static SCRAPE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = SCRAPE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match backlog {
        Ok(Ok(backlog)) => {
            metrics::gauge!("langcamp_mail_outbox_queued").set(backlog.queued as f64);
            let age_ms = backlog
                .oldest_created_at
                .map_or(0, |oldest| (app.clock().now_ms() - oldest).max(0));
            metrics::gauge!("langcamp_mail_outbox_oldest_seconds").set(age_ms as f64 / 1000.0);
        }
        Ok(Err(e)) => tracing::debug!(error = %e, "outbox backlog unavailable for /metrics"),
        Err(_) => tracing::debug!("outbox backlog query timed out for /metrics"),
    }
    match deliveries {
        Ok(Ok((_, oldest))) => {
            let age_ms = oldest.map_or(0, |oldest| (app.clock().now_ms() - oldest).max(0));
            metrics::gauge!("langcamp_webhook_queue_oldest_seconds").set(age_ms as f64 / 1000.0);
        }
        Ok(Err(e)) => tracing::debug!(error = %e, "webhook backlog unavailable for /metrics"),
        Err(_) => tracing::debug!("webhook backlog query timed out for /metrics"),
    }
    let (delivered, retried, failed) = app.webhook_tally().snapshot();
    for (outcome, count) in [
        ("delivered", delivered),
        ("retried", retried),
        ("failed", failed),
    ] {
        metrics::counter!("langcamp_webhook_deliveries_total", "outcome" => outcome)
            .absolute(count);
    }
    metrics::counter!("langcamp_trace_spans_dropped_total")
        .absolute(langcamp_core::platform::trace::dropped());
    let mail = app.mail_status().snapshot();
    metrics::counter!("langcamp_mail_sent_total").absolute(mail.sent_total);
    metrics::counter!("langcamp_mail_failed_total").absolute(mail.failed_total);
    let (in_use, idle) = app.db().pool_connections();
    metrics::gauge!("langcamp_db_pool_connections", "state" => "in_use").set(in_use as f64);
    metrics::gauge!("langcamp_db_pool_connections", "state" => "idle").set(idle as f64);
    metrics::gauge!("langcamp_db_pool_connections", "state" => "max")
        .set(app.db().pool_max_connections() as f64);
    if let Some(rss) = resident_memory_bytes() {
        metrics::gauge!("process_resident_memory_bytes").set(rss as f64);
    }
    metrics.handle.run_upkeep();
    let mut response = Response::new(full(metrics.handle.render()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// Resident set size from `/proc/self/status` (Linux; elsewhere the series is absent).
fn resident_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response<Body> {
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Stamps the request id on an answer, counts it and writes its access-log line.
pub struct Finish<'a> {
    pub method: &'a Method,
    pub path: &'a str,
    pub request_id: &'a Arc<str>,
    pub started: Instant,
    pub peer: IpAddr,
    pub operations: bool,
    pub metrics: bool,
}

impl Finish<'_> {
    pub fn apply(self, response: &mut Response<Body>) {
        let took = self.started.elapsed();
        if let Ok(value) = HeaderValue::from_str(self.request_id) {
            response.headers_mut().insert(REQUEST_ID_HEADER, value);
        }
        let info = response.extensions_mut().remove::<RouteInfo>();
        let status = response.status();
        if self.metrics && !self.operations {
            record_request(self.method, info.as_ref(), status, took);
        }
        let route: &str = match (&info, self.operations) {
            (Some(info), _) => &info.template,
            (None, true) => self.path,
            (None, false) => UNMATCHED,
        };
        let client = info.as_ref().map_or(self.peer, |i| i.client);
        let latency_ms = took.as_secs_f64() * 1000.0;
        if self.operations {
            tracing::debug!(
                target: "langcamp_http::access",
                request_id = %self.request_id, method = %self.method, route, path = self.path,
                status = status.as_u16(), latency_ms, %client,
            );
        } else {
            tracing::info!(
                target: "langcamp_http::access",
                request_id = %self.request_id, method = %self.method, route, path = self.path,
                status = status.as_u16(), latency_ms, %client,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_plain_client_ids_are_kept() {
        let id = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                REQUEST_ID_HEADER,
                HeaderValue::from_str(value).expect("header"),
            );
            request_id(&headers).to_string()
        };
        assert_eq!(id("abc-123_x.y"), "abc-123_x.y");
        let long = "a".repeat(64);
        assert_eq!(id(&long), long);
        for bad in ["a".repeat(65), "a b".into(), "<script>".into(), "é".into()] {
            let got = id(&bad);
            assert_ne!(got, bad);
            assert!(langcamp_core::domain::id::looks_like_id(&got), "{got}");
        }
        assert!(langcamp_core::domain::id::looks_like_id(&request_id(
            &HeaderMap::new()
        )));
    }
}
