//! Log lines to stderr without a `write(2)` per request.
//!
//! The access log writes a line for every request. Written straight to stderr, each line
//! is a system call made under stderr's lock, and with a request per few microseconds on
//! each core the two runtime threads queue on that lock: a profile of `GET /me` showed the
//! lock's futex wake-ups and the writes as the largest cost left beside the socket itself
//! (docs/BENCHMARKS.md). So access-log lines (target `langcamp_http::access`, level INFO
//! or below) are appended to one in-memory buffer, a copy under a lock held for
//! nanoseconds, and written out in one `write` when it holds [`FLUSH_BYTES`], every
//! [`FLUSH_EVERY`] by a background thread, before any other log line (so the order in the
//! file is the order of events), and when the process ends normally.
//!
//! Every other line (start-up, warnings, errors) is written at once, as before. What a
//! `kill -9` or a crash can lose is at most the last [`FLUSH_EVERY`] of access lines.

use std::io::{self, Write};
use std::sync::Mutex;
use std::time::Duration;

use tracing::{Level, Metadata};
use tracing_subscriber::fmt::MakeWriter;

/// Buffered access lines are written out at least this often.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// ... or as soon as this many bytes wait.
pub const FLUSH_BYTES: usize = 32 * 1024;

/// The target of the access-log lines (`langcamp_http::observe`).
pub const ACCESS_TARGET: &str = "langcamp_http::access";

static BUFFER: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// The writer the subscriber asks for per event.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stderr;

/// Starts the thread that writes out what waits every [`FLUSH_EVERY`].
pub fn start_flusher() {
    let spawned = std::thread::Builder::new()
        .name("log-flush".into())
        .spawn(|| {
            loop {
                std::thread::sleep(FLUSH_EVERY);
                flush();
            }
        });
    if spawned.is_err() {
        // Without the thread, lines are still written when the buffer fills and at exit.
        eprintln!("langcamp: could not start the log flusher thread");
    }
}

/// Writes out every buffered line.
pub fn flush() {
    let pending = {
        let mut buffer = BUFFER
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if buffer.is_empty() {
            return;
        }
        std::mem::take(&mut *buffer)
    };
    write_stderr(&pending);
}

fn write_stderr(bytes: &[u8]) {
    // Above a long command's progress bar, not over it.
    crate::progress::suspend(|| {
        // Nowhere to report a failed log write to; the service goes on.
        let _ = io::stderr().lock().write_all(bytes);
    });
}

/// Access lines at INFO or more verbose (tracing orders levels by verbosity).
fn buffered(target: &str, level: Level) -> bool {
    target == ACCESS_TARGET && level >= Level::INFO
}

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = LineWriter;

    fn make_writer(&'a self) -> LineWriter {
        LineWriter { buffered: false }
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> LineWriter {
        LineWriter {
            buffered: buffered(meta.target(), *meta.level()),
        }
    }
}

/// One event's writer (the formatter writes each event's whole line in one `write_all`).
pub struct LineWriter {
    buffered: bool,
}

impl Write for LineWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buffered {
            let full = {
                let mut buffer = BUFFER
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                buffer.extend_from_slice(bytes);
                (buffer.len() >= FLUSH_BYTES).then(|| std::mem::take(&mut *buffer))
            };
            if let Some(full) = full {
                write_stderr(&full);
            }
        } else {
            // Earlier access lines first, so the file keeps the order of events.
            flush();
            write_stderr(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_access_lines_at_info_or_below_are_buffered() {
        assert!(buffered(ACCESS_TARGET, Level::INFO));
        assert!(buffered(ACCESS_TARGET, Level::DEBUG));
        assert!(!buffered(ACCESS_TARGET, Level::WARN));
        assert!(!buffered(ACCESS_TARGET, Level::ERROR));
        assert!(!buffered("langcamp_cli::serve", Level::INFO));
    }
}
