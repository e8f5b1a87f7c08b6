//! How far a long operation has come, told to whoever runs it.
//!
//! The core knows nothing of terminals: an operation that may run for minutes
//! (`migrate_files`, `rebuild_dashboard_rollups`) reports its units of work through
//! [`Progress`], and the front end decides what to show. The `langcamp` command draws a
//! bar on a terminal and nothing otherwise (`langcamp-cli/src/progress.rs`); tests and
//! other callers pass [`Silent`].

/// Receives the progress of one operation. Called from the operation's task, between
/// its steps, so an implementation must be quick (a counter, a redraw at most).
pub trait Progress: Sync {
    /// The operation has `total` units of work (files, steps). Called once, before the
    /// first [`Progress::advance`]; an operation that cannot know its size never calls it.
    fn start(&self, total: u64);

    /// `units` more are done.
    fn advance(&self, units: u64);
}

/// Tells no one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _total: u64) {}

    fn advance(&self, _units: u64) {}
}
