//! The text log's access lines, written straight into the line.
//!
//! Every request writes one access line. Through tracing-subscriber's own text format
//! (`Format<Full>`) a line took 7.5 % of the samples of a `GET /me` profile
//! (docs/BENCHMARKS.md, fifth round): colour wrappers that write nothing when stderr is not
//! a terminal, a timestamp formatted field by field with padding, and a formatting pass per
//! piece. [`TextLines`] writes the same text for access lines with plain string writes and
//! the timestamp's date part kept per second, and leaves everything else (other events,
//! coloured output, events inside spans) to the format it wraps. A test holds the two
//! outputs equal.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::logbuf::ACCESS_TARGET;

/// The text log's event format: access lines by hand, the rest by `Format<Full>`.
#[derive(Default)]
pub struct TextLines {
    full: Format<Full>,
}

impl<S, N> FormatEvent<S, N> for TextLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let plain = meta.target() == ACCESS_TARGET
            && !writer.has_ansi_escapes()
            && ctx.event_scope().is_none();
        if !plain || !write_timestamp(&mut writer)? {
            return self.full.format_event(ctx, writer, event);
        }
        writer.write_str(level_text(*meta.level()))?;
        writer.write_str(meta.target())?;
        writer.write_str(": ")?;
        let mut fields = Fields {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_char('\n')
    }
}

/// The level as `Format<Full>` pads it, and the space after it.
fn level_text(level: Level) -> &'static str {
    match level {
        Level::TRACE => "TRACE ",
        Level::DEBUG => "DEBUG ",
        Level::INFO => " INFO ",
        Level::WARN => " WARN ",
        Level::ERROR => "ERROR ",
    }
}

thread_local! {
    /// The second last written on this thread and its text up to the fraction
    /// (`2026-11-25T16:12:34.`): a request per few microseconds shares it.
    static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

/// Writes the time as `Format<Full>`'s clock does (`2026-11-25T16:12:34.123456Z `, UTC,
/// microseconds); `false` (nothing written) where that shape does not apply.
fn write_timestamp(writer: &mut Writer<'_>) -> Result<bool, fmt::Error> {
    let Ok(since_epoch) = SystemTime::now().duration_since(UNIX_EPOCH) else {
        return Ok(false);
    };
    let secs = since_epoch.as_secs();
    SECOND.with(|second| {
        let mut second = second.borrow_mut();
        if second.0 != secs {
            let Some(time) = i64::try_from(secs)
                .ok()
                .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                .filter(|t| chrono::Datelike::year(t) <= 9999)
            else {
                return Ok(false);
            };
            second.1.clear();
            write!(second.1, "{}", time.format("%Y-%m-%dT%H:%M:%S."))?;
            second.0 = secs;
        }
        writer.write_str(&second.1)?;
        let micros = since_epoch.subsec_micros();
        let mut digits = *b"000000Z ";
        let mut rest = micros;
        for digit in digits[..6].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        writer.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)?;
        Ok(true)
    })
}

/// The fields as `Format<Full>`'s default visitor writes them: `name=value` separated by
/// spaces, strings quoted the way `{:?}` quotes them, everything else by `{:?}`.
struct Fields<'a, 'w> {
    writer: &'a mut Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl Fields<'_, '_> {
    fn name(&mut self, field: &Field) -> fmt::Result {
        if !std::mem::take(&mut self.first) {
            self.writer.write_char(' ')?;
        }
        self.writer.write_str(field.name())?;
        self.writer.write_char('=')
    }
}

impl Visit for Fields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.result.is_err() {
            return;
        }
        // `{:?}` leaves printable ASCII but for `"` and `\` as it is.
        let as_is = value
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
        self.result = self.name(field).and_then(|()| {
            if as_is {
                self.writer.write_char('"')?;
                self.writer.write_str(value)?;
                self.writer.write_char('"')
            } else {
                write!(self.writer, "{value:?}")
            }
        });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.result.is_err() {
            return;
        }
        self.result = self
            .name(field)
            .and_then(|()| write!(self.writer, "{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_err() {
            return;
        }
        self.result = self
            .name(field)
            .and_then(|()| write!(self.writer, "{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .expect("not poisoned")
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl MakeWriter<'_> for Captured {
        type Writer = Captured;
        fn make_writer(&self) -> Captured {
            self.clone()
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().expect("not poisoned").clone()).expect("UTF-8")
        }
    }

    /// What the server logs, as `observe.rs` emits it: an access line at info and debug,
    /// a path with characters `{:?}` escapes, and a line of another target.
    fn emit() {
        let request_id: Arc<str> = Arc::from("0193a2b4-trace");
        let client = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7));
        for (path, status, latency_ms) in [
            ("/me", 200u16, 0.123_f64),
            ("/courses/\"x\"\\\u{7}é", 404, 12.5),
            ("/a b", 500, 1e-7),
        ] {
            tracing::info!(
                target: "langcamp_http::access",
                request_id = %request_id, method = %"GET", route = "/me", path,
                status, latency_ms, %client,
            );
        }
        tracing::debug!(
            target: "langcamp_http::access",
            request_id = %request_id, method = %"GET", route = "/health", path = "/health",
            status = 200u16, latency_ms = 0.5, %client,
        );
        tracing::warn!(target: "langcamp_core::platform::mail", attempt = 2, "the mail server did not answer");
    }

    fn logged(text_lines: bool, ansi: bool) -> String {
        let captured = Captured::default();
        let builder = tracing_subscriber::fmt()
            .with_max_level(Level::DEBUG)
            .with_writer(captured.clone())
            .with_ansi(ansi);
        if text_lines {
            tracing::subscriber::with_default(
                builder.event_format(TextLines::default()).finish(),
                emit,
            );
        } else {
            tracing::subscriber::with_default(builder.finish(), emit);
        }
        captured.text()
    }

    /// Each line after its timestamp (which ends in the first `Z`).
    fn untimed(text: &str) -> Vec<String> {
        text.lines()
            .map(|line| {
                line.split_once('Z')
                    .map_or(line, |(_, rest)| rest)
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn access_lines_are_the_full_format_to_the_letter() {
        let ours = logged(true, false);
        let theirs = logged(false, false);
        assert_eq!(untimed(&ours), untimed(&theirs));
        assert_eq!(ours.lines().count(), 5, "{ours}");
        for line in ours.lines() {
            let time = &line[..27];
            assert!(
                chrono::DateTime::parse_from_rfc3339(time).is_ok() && time.len() == 27,
                "{line}"
            );
            assert_eq!(&line[27..28], " ", "{line}");
        }
    }

    #[test]
    fn coloured_output_is_left_to_the_full_format() {
        assert_eq!(untimed(&logged(true, true)), untimed(&logged(false, true)));
    }
}
