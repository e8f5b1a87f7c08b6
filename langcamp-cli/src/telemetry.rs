//! Traces out of `langcamp serve` (CONTRACT §23): off unless `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; then the spans of
//! [`langcamp_core::platform::trace`] and the request spans of langcamp-http go over
//! OTLP/HTTP with protobuf, batched by a task of the server's runtime.
//!
//! * [`Exporting`] is the span processor: a bounded queue that never blocks the request
//!   that ends a span, and wakes the export task once a batch, not once a span; a full
//!   queue or a batch the collector did not take is counted in
//!   [`trace::DROPPED`] (`langcamp_trace_spans_dropped_total`), never retried.
//! * [`Statements`] turns sqlx's statement events (their text, their duration) into
//!   `CLIENT` spans under the span the statement ran in. Its filter
//!   ([`statements_filter`]) lets sqlx make those events only inside a recorded trace, so
//!   a request the sampler left out and the workers' polling cost nothing.
//! * [`trace_ids`] gives a JSON log line the `trace_id` and `span_id` it was written in.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use langcamp_core::platform::trace::{self, Sampling};
use opentelemetry::trace::{SpanKind, TraceContextExt as _, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    Sampler, SdkTracer, SdkTracerProvider, Span as SdkSpan, SpanData, SpanExporter as _,
    SpanProcessor,
};
use tokio::sync::Notify;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};

use tracing_subscriber::Layer;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::Context as LayerContext;
use tracing_subscriber::registry::LookupSpan;

use crate::CliError;

/// Spans waiting for export; past this a span is dropped (and counted).
const QUEUE: usize = 4096;
/// Spans per export request.
const BATCH: usize = 512;
/// How long spans wait for more to fill a batch.
const BATCH_DELAY: Duration = Duration::from_secs(1);
/// The longest one export may take; then its spans are dropped.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How traces are exported, from the standard `OTEL_*` variables.
#[derive(Debug, PartialEq)]
pub struct Settings {
    /// Where spans are POSTed (`…/v1/traces`).
    pub endpoint: String,
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, decoded.
    pub attributes: Vec<(String, String)>,
    pub sampler: Sampling,
}

impl Settings {
    /// The settings in `get`'s variables; `None` when no OTLP endpoint is set (tracing off).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Option<Settings>, CliError> {
        let set = |name: &str| {
            get(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let endpoint = match (
            set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            set("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(CliError::usage(format!(
                "OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL, got `{endpoint}`"
            )));
        }
        let attributes = match set("OTEL_RESOURCE_ATTRIBUTES") {
            Some(list) => key_values(&list).ok_or_else(|| {
                CliError::usage(
                    "OTEL_RESOURCE_ATTRIBUTES: expected key=value pairs, comma-separated",
                )
            })?,
            None => Vec::new(),
        };
        let service_name = set("OTEL_SERVICE_NAME")
            .or_else(|| {
                attributes
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| "langcamp".to_owned());
        let sampler = sampler(set("OTEL_TRACES_SAMPLER"), set("OTEL_TRACES_SAMPLER_ARG"))?;
        Ok(Some(Settings {
            endpoint,
            service_name,
            attributes,
            sampler,
        }))
    }
}

fn sampler(name: Option<String>, arg: Option<String>) -> Result<Sampling, CliError> {
    let ratio = || -> Result<f64, CliError> {
        match &arg {
            None => Ok(1.0),
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| {
                    CliError::usage(format!(
                        "OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1, got `{text}`"
                    ))
                }),
        }
    };
    Ok(match name.as_deref().unwrap_or("parentbased_always_on") {
        "always_on" => Sampling::AlwaysOn,
        "always_off" => Sampling::AlwaysOff,
        "traceidratio" => Sampling::Ratio(ratio()?),
        "parentbased_always_on" => Sampling::ParentBasedAlwaysOn,
        "parentbased_always_off" => Sampling::ParentBasedAlwaysOff,
        "parentbased_traceidratio" => Sampling::ParentBasedRatio(ratio()?),
        other => {
            return Err(CliError::usage(format!(
                "OTEL_TRACES_SAMPLER: expected always_on, always_off, traceidratio, \
                 parentbased_always_on, parentbased_always_off or parentbased_traceidratio, got `{other}`"
            )));
        }
    })
}

/// `host:port` of an http(s) URL, the scheme's port when it names none (credentials
/// dropped).
fn host_and_port(url: &str) -> String {
    let (default_port, rest) = match url.split_once("://") {
        Some(("https", rest)) => (443, rest),
        Some((_, rest)) => (80, rest),
        None => (80, url),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    // A port follows the last colon, unless that colon is inside an IPv6 address.
    let has_port = authority.rsplit_once(':').is_some_and(|(host, port)| {
        !port.contains(']') && port.parse::<u16>().is_ok() && !host.is_empty()
    });
    if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:{default_port}")
    }
}

/// The sampler as `OTEL_TRACES_SAMPLER` (and its argument) name it.
pub fn sampler_name(sampling: Sampling) -> String {
    match sampling {
        Sampling::AlwaysOn => "always_on".into(),
        Sampling::AlwaysOff => "always_off".into(),
        Sampling::Ratio(ratio) => format!("traceidratio {ratio}"),
        Sampling::ParentBasedAlwaysOn => "parentbased_always_on".into(),
        Sampling::ParentBasedAlwaysOff => "parentbased_always_off".into(),
        Sampling::ParentBasedRatio(ratio) => format!("parentbased_traceidratio {ratio}"),
    }
}

/// `key=value` pairs, comma-separated, values percent-decoded (the W3C Baggage form the
/// OpenTelemetry variables use).
fn key_values(list: &str) -> Option<Vec<(String, String)>> {
    list.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim();
            (!key.is_empty()).then(|| (key.to_owned(), percent_decoded(value.trim())))
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The exporter, running: the tracer the layers make spans with, and the task sending
/// them, stopped by [`Tracing::shutdown`].
pub struct Tracing {
    pub tracer: SdkTracer,
    provider: SdkTracerProvider,
    stop: Arc<Notify>,
    exporting: tokio::task::JoinHandle<()>,
}

impl Tracing {
    /// Starts exporting as `settings` say (on the current runtime).
    pub fn start(settings: &Settings) -> Result<Tracing, CliError> {
        let mut exporter = exporter(settings, EXPORT_TIMEOUT)?;
        let mut attributes: Vec<KeyValue> = settings
            .attributes
            .iter()
            .filter(|(key, _)| key != "service.name")
            .map(|(key, value)| KeyValue::new(key.clone(), value.clone()))
            .collect();
        attributes.push(KeyValue::new("service.name", settings.service_name.clone()));
        attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
        if !settings
            .attributes
            .iter()
            .any(|(k, _)| k == "service.instance.id")
        {
            attributes.push(KeyValue::new(
                "service.instance.id",
                langcamp_core::domain::id::new_id(),
            ));
        }
        let resource = Resource::builder_empty()
            .with_attributes(attributes)
            .build();
        exporter.set_resource(&resource);
        let waiting = Arc::new(Waiting::default());
        let stop = Arc::new(Notify::new());
        let exporting = tokio::spawn(export_loop(
            exporter,
            Arc::clone(&waiting),
            Arc::clone(&stop),
        ));
        let provider = SdkTracerProvider::builder()
            .with_span_processor(Exporting { waiting })
            // The sampler has decided before a span is made (`trace::incoming`): every
            // span the tracer is given belongs to a recorded trace.
            .with_sampler(Sampler::AlwaysOn)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("langcamp");
        Ok(Tracing {
            tracer,
            provider,
            stop,
            exporting,
        })
    }

    /// Sends what is queued (for at most 5 s), then stops.
    pub async fn shutdown(self) {
        self.stop.notify_one();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.exporting).await;
        drop(self.provider);
    }
}

/// The OTLP/HTTP protobuf exporter to `settings`' endpoint (`OTEL_EXPORTER_OTLP_HEADERS`
/// are read by the exporter itself).
fn exporter(
    settings: &Settings,
    timeout: Duration,
) -> Result<opentelemetry_otlp::SpanExporter, CliError> {
    // reqwest's TLS has no crypto provider of its own (Cargo.toml): ring's, as the rest of
    // the process uses. Already installed is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(settings.endpoint.clone())
        .with_timeout(timeout)
        .build()
        .map_err(|e| CliError::failed(format!("the OTLP exporter cannot be built: {e}")))
}

/// Whether the collector takes an export now (`langcamp doctor`): an empty batch, sent as
/// the server sends its spans, so a wrong address, path or header shows before spans are
/// dropped for it.
pub async fn probe(settings: &Settings) -> Result<(), String> {
    const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
    let exporter = exporter(settings, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
    let Err(failed) = exporter.export(Vec::new()).await else {
        return Ok(());
    };
    // The exporter says "network error" for any failure to connect: the cause is worth
    // more to whoever mends it.
    match connect_error(&settings.endpoint, PROBE_TIMEOUT).await {
        Some(cause) => Err(cause),
        None => Err(failed.to_string()),
    }
}

/// Why a TCP connection to `url`'s host and port fails, if it does.
async fn connect_error(url: &str, timeout: Duration) -> Option<String> {
    let target = host_and_port(url);
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(target.as_str())).await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(format!("TCP connection to {target}: {e}")),
        Err(_) => Some(format!(
            "TCP connection to {target}: no answer within {} s",
            timeout.as_secs()
        )),
    }
}

/// Ended spans waiting for export, at most [`QUEUE`]. A request ending a span only pushes
/// it; the export task is woken when a batch is full (or by its timer), not for every span:
/// a wake-up per span cost more than the span itself.
#[derive(Debug, Default)]
struct Waiting {
    spans: std::sync::Mutex<Vec<SpanData>>,
    batch_full: Notify,
}

impl Waiting {
    /// Up to [`BATCH`] of the oldest spans waiting (none: an empty batch).
    fn take_batch(&self) -> Vec<SpanData> {
        let mut spans = self
            .spans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if spans.len() <= BATCH {
            return std::mem::take(&mut *spans);
        }
        spans.drain(..BATCH).collect()
    }
}

/// The span processor: ended, sampled spans into the bounded queue.
#[derive(Debug)]
struct Exporting {
    waiting: Arc<Waiting>,
}

impl SpanProcessor for Exporting {
    fn on_start(&self, _span: &mut SdkSpan, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let mut spans = self
            .waiting
            .spans
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if spans.len() >= QUEUE {
            trace::DROPPED.fetch_add(1, Ordering::Relaxed);
            return;
        }
        spans.push(span);
        let full = spans.len() == BATCH;
        drop(spans);
        if full {
            self.waiting.batch_full.notify_one();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    /// The queue is drained by [`Tracing::shutdown`], on the runtime.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// Sends the waiting spans in batches of up to [`BATCH`]: whenever a batch is full, and
/// every [`BATCH_DELAY`] what has come, until `stop`; then what is left.
async fn export_loop(
    exporter: opentelemetry_otlp::SpanExporter,
    waiting: Arc<Waiting>,
    stop: Arc<Notify>,
) {
    loop {
        let stopping = tokio::select! {
            () = stop.notified() => true,
            () = waiting.batch_full.notified() => false,
            () = tokio::time::sleep(BATCH_DELAY) => false,
        };
        loop {
            let batch = waiting.take_batch();
            let whole = batch.len() == BATCH;
            if !batch.is_empty() {
                export(&exporter, batch).await;
            }
            if !whole {
                break;
            }
        }
        if stopping {
            break;
        }
    }
}

async fn export(exporter: &opentelemetry_otlp::SpanExporter, batch: Vec<SpanData>) {
    let count = batch.len() as u64;
    match tokio::time::timeout(EXPORT_TIMEOUT, exporter.export(batch)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            trace::DROPPED.fetch_add(count, Ordering::Relaxed);
            tracing::debug!(error = %e, spans = count, "the collector did not take a batch of spans");
        }
        Err(_) => {
            trace::DROPPED.fetch_add(count, Ordering::Relaxed);
            tracing::debug!(spans = count, "a batch of spans timed out");
        }
    }
}

/// sqlx's statement events as `CLIENT` spans (`db.system.name`, `db.operation.name`,
/// `db.query.summary`, `db.query.text`: the statement as written, whose values are all
/// bound parameters, never literals).
pub struct Statements {
    pub tracer: SdkTracer,
    /// `sqlite` or `postgresql`.
    pub system: &'static str,
}

/// The filter of [`Statements`]: this module's spans, and sqlx's statement events only
/// while one of them is current (sqlx asks before it formats an event; outside a recorded
/// trace the answer is no).
pub fn statements_filter<S>() -> impl tracing_subscriber::layer::Filter<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_subscriber::filter::DynFilterFn::new(|metadata, context| {
        if metadata.target() == trace::TARGET {
            return metadata.level() <= &tracing::Level::INFO;
        }
        metadata.target() == "sqlx::query" && context.lookup_current().is_some()
    })
    .with_callsite_filter(|metadata| {
        if metadata.target() == "sqlx::query" || metadata.target() == trace::TARGET {
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::never()
        }
    })
    .with_max_level_hint(tracing::Level::DEBUG)
}

/// What a statement event says.
#[derive(Default)]
struct StatementFields {
    summary: String,
    text: String,
    elapsed_secs: f64,
}

impl Visit for StatementFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "summary" => value.clone_into(&mut self.summary),
            "db.statement" => value.trim().clone_into(&mut self.text),
            _ => {}
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "elapsed_secs" {
            self.elapsed_secs = value;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "summary" | "db.statement" => self.record_str(field, &format!("{value:?}")),
            _ => {}
        }
    }
}

impl<S> Layer<S> for Statements
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_event(&self, event: &Event<'_>, ctx: LayerContext<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let Some(within) = ctx.event_span(event) else {
            return;
        };
        let id = within.id();
        let parent = tracing::dispatcher::get_default(|dispatch| {
            tracing_opentelemetry::get_otel_context(&id, dispatch)
        });
        let Some(parent) = parent.filter(|cx| cx.span().span_context().is_sampled()) else {
            return;
        };
        let mut fields = StatementFields::default();
        event.record(&mut fields);
        // A short statement is all in `summary`; a longer one's `summary` is its first
        // words, and its text is `db.statement`.
        let text = if fields.text.is_empty() {
            fields.summary
        } else {
            fields.text
        };
        let operation = text
            .split_whitespace()
            .next()
            .unwrap_or("QUERY")
            .to_ascii_uppercase();
        let summary = query_summary(&operation, &text);
        let end = SystemTime::now();
        let start = end
            .checked_sub(Duration::from_secs_f64(fields.elapsed_secs.max(0.0)))
            .unwrap_or(end);
        let mut span = self
            .tracer
            .span_builder(summary.clone())
            .with_kind(SpanKind::Client)
            .with_start_time(start)
            .with_attributes([
                KeyValue::new("db.system.name", self.system),
                KeyValue::new("db.operation.name", operation),
                KeyValue::new("db.query.summary", summary),
                KeyValue::new("db.query.text", text),
            ])
            .start_with_context(&self.tracer, &parent);
        opentelemetry::trace::Span::end_with_timestamp(&mut span, end);
    }
}

/// A statement's low-cardinality name: its operation and the table it names first
/// (`SELECT users`, `INSERT mail_outbox`, `BEGIN`).
fn query_summary(operation: &str, text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let after = |keyword: &str| {
        words
            .iter()
            .position(|w| w.eq_ignore_ascii_case(keyword))
            .and_then(|i| words.get(i + 1))
    };
    let table = match operation {
        "SELECT" | "DELETE" => after("FROM"),
        "INSERT" => after("INTO"),
        "UPDATE" => words.get(1),
        _ => None,
    };
    match table {
        Some(table) => {
            let table: String = table
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            if table.is_empty() {
                operation.to_owned()
            } else {
                format!("{operation} {table}")
            }
        }
        None => operation.to_owned(),
    }
}

/// The `trace_id` and `span_id` a log line is written in: its span's in a recorded trace,
/// else the untraced request's (`trace::current_context`).
pub fn trace_ids() -> Option<(String, String)> {
    trace::current_context().map(|current| {
        (
            current.trace_id().to_string(),
            current.span_id().to_string(),
        )
    })
}

/// A JSON log format with the line's `trace_id` and `span_id` first, when it is written
/// while a request is answered (the rest of the line as the format it wraps writes it).
pub struct WithTraceIds<E>(pub E);

impl<S, N, E> FormatEvent<S, N> for WithTraceIds<E>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    E: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let Some((trace_id, span_id)) = trace_ids() else {
            return self.0.format_event(ctx, writer, event);
        };
        let mut line = String::with_capacity(256);
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        match line.strip_prefix('{') {
            Some(rest) => write!(
                writer,
                "{{\"trace_id\":\"{trace_id}\",\"span_id\":\"{span_id}\",{rest}"
            ),
            None => writer.write_str(&line),
        }
    }
}

/// `db.system.name` of the database `url` names (`DATABASE_URL`; unset: the embedded
/// SQLite).
pub fn database_system(url: Option<&str>) -> &'static str {
    match url {
        Some(url) if url.trim_start().starts_with("postgres") => "postgresql",
        _ => "sqlite",
    }
}

/// Reads the process environment (the standard OTel variables live there).
pub fn settings_from_env() -> Result<Option<Settings>, CliError> {
    let env: HashMap<String, String> = std::env::vars().collect();
    Settings::from_lookup(|name| env.get(name).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collector_url_gives_the_host_and_port_to_connect_to() {
        for (url, target) in [
            ("http://collector:4318/v1/traces", "collector:4318"),
            ("https://api.honeycomb.io/v1/traces", "api.honeycomb.io:443"),
            ("http://otel/v1/traces", "otel:80"),
            ("http://user:pw@[::1]:4318/v1/traces", "[::1]:4318"),
            ("https://[2001:db8::1]/v1/traces", "[2001:db8::1]:443"),
        ] {
            assert_eq!(host_and_port(url), target, "{url}");
        }
    }

    fn settings(vars: &[(&str, &str)]) -> Result<Option<Settings>, CliError> {
        Settings::from_lookup(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn tracing_is_off_without_an_endpoint_and_reads_the_standard_variables() {
        assert_eq!(settings(&[]).expect("valid"), None);
        assert_eq!(
            settings(&[("OTEL_SERVICE_NAME", "x")]).expect("valid"),
            None
        );
        let on = settings(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")])
            .expect("valid")
            .expect("on");
        assert_eq!(on.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(on.service_name, "langcamp");
        assert_eq!(on.sampler, Sampling::ParentBasedAlwaysOn);
        let exact = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://collector.example/otlp/traces",
            ),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod,service.name=from-attrs,team=a%2Cb",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.01"),
        ])
        .expect("valid")
        .expect("on");
        assert_eq!(exact.endpoint, "https://collector.example/otlp/traces");
        assert_eq!(exact.service_name, "from-attrs");
        assert_eq!(exact.sampler, Sampling::ParentBasedRatio(0.01));
        assert!(exact.attributes.contains(&("team".into(), "a,b".into())));
        let named = settings(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_SERVICE_NAME", "school-api"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=other"),
        ])
        .expect("valid")
        .expect("on");
        assert_eq!(named.service_name, "school-api");
    }

    #[test]
    fn a_bad_variable_is_named() {
        for (vars, name) in [
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ),
            (
                vec![
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                    ("OTEL_TRACES_SAMPLER", "jaeger_remote"),
                ],
                "OTEL_TRACES_SAMPLER",
            ),
            (
                vec![
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                    ("OTEL_TRACES_SAMPLER", "traceidratio"),
                    ("OTEL_TRACES_SAMPLER_ARG", "2"),
                ],
                "OTEL_TRACES_SAMPLER_ARG",
            ),
            (
                vec![
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                    ("OTEL_RESOURCE_ATTRIBUTES", "novalue"),
                ],
                "OTEL_RESOURCE_ATTRIBUTES",
            ),
        ] {
            let error = settings(&vars).expect_err(name);
            assert!(error.to_string().contains(name), "{error}");
        }
    }

    #[test]
    fn a_statement_is_summarised_by_its_operation_and_first_table() {
        assert_eq!(
            query_summary("SELECT", "SELECT id FROM users WHERE id = $1"),
            "SELECT users"
        );
        assert_eq!(
            query_summary("INSERT", "INSERT INTO mail_outbox (id) VALUES ($1)"),
            "INSERT mail_outbox"
        );
        assert_eq!(
            query_summary("UPDATE", "UPDATE sessions SET x = $1"),
            "UPDATE sessions"
        );
        assert_eq!(
            query_summary("DELETE", "DELETE FROM otp_codes WHERE expires_at <= $1"),
            "DELETE otp_codes"
        );
        assert_eq!(query_summary("BEGIN", "BEGIN"), "BEGIN");
        assert_eq!(query_summary("SELECT", "SELECT 1"), "SELECT");
    }
}
