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

use std::cell::RefCell;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The target of every span meant for the trace exporter (and only for it: the log's
/// filter does not name it).
pub const TARGET: &str = "langcamp::trace";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Spans the exporter dropped: its queue was full, or the collector did not take them
/// (`langcamp_trace_spans_dropped_total`).
pub static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Turns tracing on for this process (`langcamp serve` with an OTLP endpoint set, once
/// its exporter is installed).
pub fn enable() {
    ENABLED.store(true, Ordering::Release);
}

/// Whether spans go anywhere.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
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
    if !enabled() {
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
    if !enabled() {
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
/// to the request that queued the mail (its `traceparent`, kept in the outbox).
pub fn smtp_delivery(queued_by: Option<&str>) -> Span {
    if !enabled() {
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

/// Makes `span` (just made, not yet entered) a child of the caller's trace when the
/// request carries a valid `traceparent` (and its `tracestate`); a malformed one is
/// ignored and the span starts a new trace.
pub fn continue_trace(span: &Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    let Some(parsed) = traceparent.and_then(parse_traceparent) else {
        return;
    };
    let state = tracestate
        .and_then(|s| TraceState::from_str(s).ok())
        .unwrap_or_default();
    let remote = SpanContext::new(
        parsed.trace_id(),
        parsed.span_id(),
        parsed.trace_flags(),
        true,
        state,
    );
    let context = opentelemetry::Context::new().with_remote_span_context(remote);
    // Fails only when the span is off (not sampled by the log's filter): nothing to join.
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
/// or outside a sampled span.
pub fn current_traceparent() -> Option<String> {
    if !enabled() {
        return None;
    }
    if let Some(caller) = CALLER.with_borrow(Clone::clone) {
        return Some(caller);
    }
    let context = Span::current().context();
    let span = context.span();
    let current = span.span_context();
    current.is_valid().then(|| {
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
    fn while_tracing_is_off_nothing_is_made() {
        assert!(!enabled());
        assert!(db_write("sqlite", "write X").is_none());
        assert!(object_store("GetObject").is_none());
        assert!(smtp_delivery(None).is_none());
        assert_eq!(current_traceparent(), None);
    }
}
