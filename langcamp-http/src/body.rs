//! A request's body as handlers read it: the bytes from the client (or from memory, for
//! tools and the fuzz targets), under the body limit and the timeouts that keep a slow
//! client from holding a connection.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Limited;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use langcamp_core::Error;

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
