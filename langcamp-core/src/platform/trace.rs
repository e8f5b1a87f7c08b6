//! Traces (CONTRACT §23): the spans an operator follows one request by, across the proxy,
//! the instance, the database, the object store and the mail server.
//!
//! This module is the mechanism the rest of the code names: whether tracing is on, the
//! spans of calls that leave the process (`CLIENT` spans), the W3C `traceparent` read from
//! a request and written into the outbox so the mail worker's trace links to the request
//! that queued the mail. The exporter (OTLP over HTTP) is set up by the front end that
//! serves (`langcamp serve`), which calls [`enable`]. While tracing is off every function
//! here returns at once: no span is made and nothing is read.
//!
//! No span carries a token, code, secret or e-mail address: the spans made here name the
//! operation only, and the request's span (langcamp-http) the route template, the path and
//! the client address.
//!
//! Sampling is decided here, before any span exists ([`Sampling`], [`incoming`]): a
//! request the sampler leaves out makes no span at all, so it costs no more than with
//! tracing off, apart from the ids its log lines carry ([`untraced`]). The spans made here
//! for a sampled request are children of its span; outside one, none is made.

use std::cell::RefCell;
use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The target of every span meant for the trace exporter (and only for it: the log's
/// filter does not name it).
pub const TARGET: &str = "langcamp::trace";

/// Which traces are recorded, once tracing is on; unset while it is off.
static SAMPLING: OnceLock<Sampling> = OnceLock::new();

/// Spans the exporter dropped: its queue was full, or the collector did not take them
/// (`langcamp_trace_spans_dropped_total`).
pub static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Turns tracing on for this process (`langcamp serve` with an OTLP endpoint set, once
/// its exporter is installed), recording the traces `sampling` keeps. Once only: a later
/// call changes nothing.
pub fn enable(sampling: Sampling) {
    let _ = SAMPLING.set(sampling);
}

/// Whether spans go anywhere.
pub fn enabled() -> bool {
    SAMPLING.get().is_some()
}

/// `OTEL_TRACES_SAMPLER` (and its ratio): which traces are recorded. The rules are the
/// OpenTelemetry specification's; they are applied here, before a span is made, and the
/// exporter's own sampler keeps every span it is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    AlwaysOn,
    AlwaysOff,
    /// A share of traces, chosen by trace id (every service with the same ratio keeps the
    /// same traces), whatever the caller decided.
    Ratio(f64),
    /// The caller's decision when the request carries one; else always.
    ParentBasedAlwaysOn,
    /// The caller's decision when the request carries one; else never.
    ParentBasedAlwaysOff,
    /// The caller's decision when the request carries one; else a share by trace id.
    ParentBasedRatio(f64),
}

impl Sampling {
    /// Whether a trace is recorded: `parent` is the caller's span, if any; `trace_id` the
    /// trace's id (the caller's, or the new one).
    pub fn keeps(self, parent: Option<&SpanContext>, trace_id: TraceId) -> bool {
        match (self, parent) {
            (Sampling::AlwaysOn, _) => true,
            (Sampling::AlwaysOff, _) => false,
            (Sampling::Ratio(ratio), _) => ratio_keeps(ratio, trace_id),
            (
                Sampling::ParentBasedAlwaysOn
                | Sampling::ParentBasedAlwaysOff
                | Sampling::ParentBasedRatio(_),
                Some(parent),
            ) => parent.is_sampled(),
            (Sampling::ParentBasedAlwaysOn, None) => true,
            (Sampling::ParentBasedAlwaysOff, None) => false,
            (Sampling::ParentBasedRatio(ratio), None) => ratio_keeps(ratio, trace_id),
        }
    }
}

/// The trace id ratio rule as the OpenTelemetry SDKs apply it: the id's low 8 bytes,
/// shifted right once, below `ratio` of 2^63.
fn ratio_keeps(ratio: f64, trace_id: TraceId) -> bool {
    let bytes = trace_id.to_bytes();
    let mut low = [0u8; 8];
    low.copy_from_slice(&bytes[8..]);
    let bound = (ratio.clamp(0.0, 1.0) * (1u64 << 63) as f64) as u64;
    (u64::from_be_bytes(low) >> 1) < bound
}

/// What the sampler decided for an incoming request.
pub enum Incoming {
    /// Recorded: the request's span is made, a child of `parent` when there is one
    /// ([`continue_trace`]).
    Traced { parent: Option<SpanContext> },
    /// Left out: no span is made; the request runs [`untraced`] under this context (the
    /// caller's trace id, or a new one) so its log lines and the mail it queues still name
    /// the trace.
    Untraced(SpanContext),
}

/// The sampler's decision for a request carrying `traceparent` and `tracestate` (a
/// malformed `traceparent` is ignored: a new trace). Call only while tracing is on.
pub fn incoming(traceparent: Option<&str>, tracestate: Option<&str>) -> Incoming {
    let sampling = SAMPLING.get().copied().unwrap_or(Sampling::AlwaysOff);
    let parent = traceparent.and_then(parse_traceparent).map(|parsed| {
        let state = tracestate
            .and_then(|s| TraceState::from_str(s).ok())
            .unwrap_or_default();
        SpanContext::new(
            parsed.trace_id(),
            parsed.span_id(),
            parsed.trace_flags(),
            true,
            state,
        )
    });
    let trace_id = parent
        .as_ref()
        .map_or_else(new_trace_id, SpanContext::trace_id);
    if sampling.keeps(parent.as_ref(), trace_id) {
        return Incoming::Traced { parent };
    }
    let state = parent
        .map(|parent| parent.trace_state().clone())
        .unwrap_or_default();
    Incoming::Untraced(SpanContext::new(
        trace_id,
        SpanId::from_bytes(rand::random::<u64>().max(1).to_be_bytes()),
        TraceFlags::default(),
        false,
        state,
    ))
}

/// A random trace id (never the invalid all-zero one).
fn new_trace_id() -> TraceId {
    TraceId::from_bytes(rand::random::<u128>().max(1).to_be_bytes())
}

/// Whether a new trace of the process's own (a worker's) is recorded.
fn root_sampled() -> bool {
    SAMPLING
        .get()
        .is_some_and(|sampling| sampling.keeps(None, new_trace_id()))
}

tokio::task_local! {
    /// The context of the request this task answers when the sampler left it out.
    static UNTRACED: SpanContext;
}

/// Runs `future` as the untraced request of `context` ([`Incoming::Untraced`]).
pub async fn untraced<F: Future>(context: SpanContext, future: F) -> F::Output {
    UNTRACED.scope(context, future).await
}

/// The span context the current code runs in: the current span's while it is in a
/// recorded trace, else the untraced request's (see [`untraced`]); `None` outside both.
pub fn current_context() -> Option<SpanContext> {
    if !enabled() {
        return None;
    }
    if in_trace() {
        let context = Span::current().context();
        let current = context.span().span_context().clone();
        if current.is_valid() {
            return Some(current);
        }
    }
    UNTRACED.try_with(Clone::clone).ok()
}

/// Whether the current code runs inside a recorded trace: one of this module's spans is
/// current. Only a sampled trace has them.
pub fn in_trace() -> bool {
    enabled()
        && Span::current()
            .metadata()
            .is_some_and(|span| span.target() == TARGET)
}

/// The spans the exporter dropped since the process started.
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// The database as the semantic conventions name it (`db.system.name`).
pub fn db_system(backend: crate::platform::db::Backend) -> &'static str {
    match backend {
        crate::platform::db::Backend::Sqlite => "sqlite",
        crate::platform::db::Backend::Postgres => "postgresql",
    }
}

/// A `CLIENT` span for one write of the group commit (`summary`: what it writes, such as
/// `write Submission`): the time from handing the work to the writer to its answer.
pub fn db_write(system: &'static str, summary: &str) -> Span {
    if !in_trace() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "db write",
        otel.name = %summary,
        otel.kind = "client",
        db.system.name = system,
        db.operation.name = "WRITE",
        db.query.summary = %summary,
    )
}

/// A `CLIENT` span for one call to the object store (`operation`: `GetObject`,
/// `PutObject`, ...).
pub fn object_store(operation: &'static str) -> Span {
    if !in_trace() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "object store",
        otel.name = operation,
        otel.kind = "client",
        rpc.system = "aws-api",
        rpc.service = "S3",
        rpc.method = operation,
    )
}

/// A `CLIENT` span for one SMTP delivery, the root of the mail worker's own trace, linked
/// to the request that queued the mail (its `traceparent`, kept in the outbox); recorded
/// as the sampler decides for a new trace.
pub fn smtp_delivery(queued_by: Option<&str>) -> Span {
    if !root_sampled() {
        return Span::none();
    }
    let span = tracing::info_span!(
        target: TARGET,
        parent: None,
        "smtp send",
        otel.name = "smtp send",
        otel.kind = "client",
        network.protocol.name = "smtp",
        otel.status_code = tracing::field::Empty,
    );
    if let Some(context) = queued_by.and_then(parse_traceparent) {
        span.add_link(context);
    }
    span
}

/// Makes `span` (just made, not yet entered) a child of the caller's span `parent`
/// ([`Incoming::Traced`]); without one the span starts a new trace.
pub fn continue_trace(span: &Span, parent: Option<SpanContext>) {
    let Some(parent) = parent else {
        return;
    };
    let context = opentelemetry::Context::new().with_remote_span_context(parent);
    // Fails only when the span is off (not enabled by the subscriber): nothing to join.
    let _ = span.set_parent(context);
}

thread_local! {
    /// The `traceparent` of the caller whose work this thread runs for it (SQLite's writer
    /// thread, running each caller's piece of the group commit).
    static CALLER: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `work` on this thread on behalf of the caller whose `traceparent` this is (taken
/// with [`current_traceparent`] where the caller handed the work over): what `work` queues
/// links to that caller's trace.
pub fn on_behalf_of<T>(traceparent: Option<String>, work: impl FnOnce() -> T) -> T {
    if traceparent.is_none() {
        return work();
    }
    let previous = CALLER.replace(traceparent);
    let done = work();
    CALLER.set(previous);
    done
}

/// The current span's `traceparent` (or that of the caller this thread works for), to be
/// continued later: the outbox keeps it for the mail worker. `None` while tracing is off
/// or outside a request (see [`current_context`]).
pub fn current_traceparent() -> Option<String> {
    if !enabled() {
        return None;
    }
    if let Some(caller) = CALLER.with_borrow(Clone::clone) {
        return Some(caller);
    }
    current_context().map(|current| {
        format!(
            "00-{}-{}-{:02x}",
            current.trace_id(),
            current.span_id(),
            current.trace_flags().to_u8()
        )
    })
}

/// The span context of a W3C `traceparent` (`version-traceid-parentid-flags`, lower-case
/// hex), as a remote parent; `None` when it is malformed. A version above `00` is read for
/// its first four fields, as the specification asks; `ff` is invalid.
pub fn parse_traceparent(value: &str) -> Option<SpanContext> {
    let value = value.trim();
    let mut parts = value.split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let rest = parts.next();
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(parent, 16) || !hex(flags, 2)
    {
        return None;
    }
    // Version 00 has exactly four fields; a later one may add more.
    if version == "00" && rest.is_some() {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(parent).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some(SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags & TraceFlags::SAMPLED.to_u8()),
        true,
        TraceState::default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_as_the_w3c_specification_writes_it() {
        let context = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .expect("valid");
        assert_eq!(
            context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(context.span_id().to_string(), "00f067aa0ba902b7");
        assert!(context.is_sampled());
        assert!(context.is_remote());
        let unsampled =
            parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
                .expect("valid");
        assert!(!unsampled.is_sampled());
        // A later version: its first four fields.
        assert!(
            parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")
                .is_some()
        );
    }

    #[test]
    fn a_malformed_traceparent_is_none() {
        for bad in [
            "",
            "garbage",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn the_sampler_follows_the_caller_or_the_trace_ids_share() {
        let low = TraceId::from_bytes([0; 16]);
        let high = TraceId::from_bytes([0xff; 16]);
        let caller = |sampled: bool| {
            parse_traceparent(&format!(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-{}",
                if sampled { "01" } else { "00" }
            ))
            .expect("valid")
        };
        for parent_based in [
            Sampling::ParentBasedAlwaysOn,
            Sampling::ParentBasedAlwaysOff,
            Sampling::ParentBasedRatio(0.5),
        ] {
            assert!(
                parent_based.keeps(Some(&caller(true)), high),
                "{parent_based:?}"
            );
            assert!(
                !parent_based.keeps(Some(&caller(false)), low),
                "{parent_based:?}"
            );
        }
        assert!(Sampling::ParentBasedAlwaysOn.keeps(None, high));
        assert!(!Sampling::ParentBasedAlwaysOff.keeps(None, low));
        // A share by the trace id's low half: the same id, the same answer everywhere.
        for ratio in [Sampling::Ratio(0.5), Sampling::ParentBasedRatio(0.5)] {
            assert!(ratio.keeps(None, low), "{ratio:?}");
            assert!(!ratio.keeps(None, high), "{ratio:?}");
        }
        // Not parent-based: the caller's decision does not count.
        assert!(!Sampling::Ratio(0.5).keeps(Some(&caller(true)), high));
        assert!(Sampling::Ratio(1.0).keeps(None, high));
        assert!(!Sampling::Ratio(0.0).keeps(None, low));
        assert!(Sampling::AlwaysOn.keeps(Some(&caller(false)), low));
        assert!(!Sampling::AlwaysOff.keeps(Some(&caller(true)), low));
    }

    #[test]
    fn while_tracing_is_off_nothing_is_made() {
        assert!(!enabled());
        assert!(db_write("sqlite", "write X").is_none());
        assert!(object_store("GetObject").is_none());
        assert!(smtp_delivery(None).is_none());
        assert_eq!(current_traceparent(), None);
    }
}
