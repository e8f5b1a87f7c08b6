//! The console on a real temporary database (SQLite, or PostgreSQL with `TEST_DATABASE_URL`),
//! screen by screen, without a terminal: keys go through the keymap and `update`, core calls
//! run, and the screen is rendered to ratatui's `TestBackend` and compared with
//! `tests/snapshots/`.

mod audit;
mod factors;
mod harness;
mod mail;
mod views;
mod webhooks;
mod workflows;
