//! Progress bars for long commands (`storage migrate`, `stats rebuild`, `backup`), in one
//! place so every long command shows the same thing.
//!
//! A bar is drawn on stderr, only when stderr is a terminal and `--json` is not given:
//! stdout keeps only the result, and a script, a pipe, a log file or cron never gets a
//! redrawn line or an escape code. Where the size of the work is known the bar shows
//! counts, the rate and the time left; until then (or for good, as for `VACUUM INTO`) a
//! spinner with the time elapsed. The core reports through
//! [`langcamp_core::platform::progress::Progress`], which [`Bar`] implements; it never sees a
//! terminal.
//!
//! Log lines written while a bar is shown go through [`suspend`] (`logbuf` calls it), so
//! they appear above the bar instead of being drawn over.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use langcamp_core::platform::progress::Progress;

use crate::Cli;

/// How often a spinner turns and the elapsed time is redrawn when nothing advances.
const TICK: Duration = Duration::from_millis(120);

/// Before the total is known: `⠋ copying files 0:00:03`.
const SPINNER: &str = "{spinner} {msg} {elapsed_precise}";

/// The bar shown once the total is known is this with `{units}` filled in:
/// `copying files [#######>      ] 120/300 files · 41.2/s · 4s left`.
const BAR: &str =
    "{spinner} {msg} [{bar:30}] {human_pos}/{human_len} {units} · {rate} · {eta} left";

/// The bar shown on a terminal, if any; [`suspend`] hides it around a log line.
static SHOWN: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// A bar for one long command: visible on a terminal without `--json`, hidden (drawing
/// nothing, costing next to nothing) otherwise. `doing` says what runs (`copying files`),
/// `units` what it counts once a total is known (`files`, `steps`).
pub fn bar(cli: &Cli, doing: &str, units: &'static str) -> Bar {
    let target = if shown(cli.json, std::io::stderr().is_terminal()) {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = Bar::on(target, doing, units);
    if bar.visible {
        // Redraws the spinner and the elapsed time while a step runs long.
        bar.bar.enable_steady_tick(TICK);
    }
    bar
}

/// Whether a bar is drawn: only for a person at a terminal, never into `--json` output.
fn shown(json: bool, stderr_is_terminal: bool) -> bool {
    stderr_is_terminal && !json
}

/// A progress bar (a spinner until [`Progress::start`] gives the total). Cleared when
/// finished or dropped; left on the screen, as it stood, by [`Bar::interrupted`].
pub struct Bar {
    bar: ProgressBar,
    units: &'static str,
    /// Drawn, and so in [`SHOWN`] (a command shows one bar at a time).
    visible: bool,
}

impl Bar {
    fn on(target: ProgressDrawTarget, doing: &str, units: &'static str) -> Bar {
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(style(SPINNER, units));
        bar.set_message(doing.to_owned());
        let visible = !bar.is_hidden();
        if visible {
            *shown_bar() = Some(bar.clone());
        }
        Bar {
            bar,
            units,
            visible,
        }
    }

    /// Clears the bar: the command prints its result next.
    pub fn finish(self) {
        // Drop clears it.
    }

    /// Leaves the bar where it stopped, so the operator sees how far it came; the
    /// command's message about the state left behind follows on stderr.
    pub fn interrupted(self) {
        self.bar.abandon();
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.bar.set_length(total);
        self.bar.set_style(style(BAR, self.units));
    }

    fn advance(&self, units: u64) {
        self.bar.inc(units);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if self.visible {
            *shown_bar() = None;
        }
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

/// Runs `write` (a log line to stderr) with the shown bar, if any, wiped off the screen,
/// and draws the bar again below the line.
pub fn suspend<R>(write: impl FnOnce() -> R) -> R {
    let bar = shown_bar().clone();
    match bar {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

fn shown_bar() -> std::sync::MutexGuard<'static, Option<ProgressBar>> {
    SHOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `template` with `{units}` filled in and `{rate}` as `41.2/s` (indicatif's `{per_sec}`
/// prints four decimals).
fn style(template: &str, units: &str) -> ProgressStyle {
    let template = template.replace("{units}", units);
    ProgressStyle::with_template(&template)
        // The templates are constants, parsed in a unit test: this is never taken.
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .progress_chars("#>-")
        .with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}/s", state.per_sec());
            },
        )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_bar_is_drawn_only_on_a_terminal_without_json() {
        assert!(shown(false, true));
        assert!(!shown(true, true));
        assert!(!shown(false, false));
        assert!(!shown(true, false));
    }

    #[test]
    fn the_templates_parse() {
        for template in [SPINNER, BAR] {
            let template = template.replace("{units}", "files");
            assert!(
                ProgressStyle::with_template(&template).is_ok(),
                "{template}"
            );
        }
    }

    /// What the bar would draw on a terminal: the lines written, for the test to read.
    #[derive(Clone, Debug, Default)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl Screen {
        fn lines(&self) -> Vec<String> {
            self.0.lock().map(|l| l.clone()).unwrap_or_default()
        }
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            100
        }
        fn move_cursor_up(&self, _n: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _n: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _n: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _n: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, line: &str) -> std::io::Result<()> {
            self.write_str(line)
        }
        fn write_str(&self, text: &str) -> std::io::Result<()> {
            if let Ok(mut lines) = self.0.lock()
                && !text.is_empty()
            {
                lines.push(text.to_owned());
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn on_a_terminal_the_bar_shows_a_spinner_then_counts_rate_and_time_left() {
        let screen = Screen::default();
        let bar = Bar::on(
            ProgressDrawTarget::term_like(Box::new(screen.clone())),
            "copying files",
            "files",
        );
        assert!(bar.visible);
        bar.bar.tick();
        let first = screen.lines().first().cloned().unwrap_or_default();
        assert!(first.contains("copying files 00:00:0"), "{first}");
        bar.start(300);
        bar.advance(120);
        bar.bar.tick();
        let drawn = screen.lines();
        let last = drawn.iter().rfind(|l| l.contains("copying files"));
        let last = last.cloned().unwrap_or_default();
        assert!(
            last.contains("copying files [")
                && last.contains("] 120/300 files · ")
                && last.contains("/s · ")
                && last.ends_with(" left"),
            "{last}"
        );
        bar.finish();
    }

    #[test]
    fn off_a_terminal_the_bar_draws_nothing() {
        let bar = Bar::on(ProgressDrawTarget::hidden(), "copying files", "files");
        assert!(bar.bar.is_hidden() && !bar.visible);
        bar.start(3);
        bar.advance(3);
    }
}
