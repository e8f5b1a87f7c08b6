//! The terminal admin console: school staff run the school from a terminal, over SSH too.
//!
//! It calls `langcamp-core` directly, as the operator, on the same database as the server.
//! The shape is the usual one for ratatui apps:
//! * [`app::App`] holds all state;
//! * [`keymap::map_key`] turns a key into an [`keymap::Action`] (pure, tested alone);
//! * [`app::App::update`] applies an action and returns [`task::Task`]s (core calls)
//!   instead of awaiting them; [`app::App::finish`] applies their answers;
//! * [`ui::render`] draws the state and changes nothing.
//!
//! A text too long for the console's own editor (a mail template) is edited in the user's
//! editor: `update` asks with an [`editor::EditRequest`], the runtime puts the console
//! aside while the editor runs and hands the text back to [`app::App::edited_outside`].
//!
//! [`run`] drives it on a real terminal: key presses (from a reader thread) and finished
//! core calls (from tokio tasks) arrive on one channel, so the screen never freezes while
//! the database works.

pub mod app;
pub mod editor;
pub mod input;
pub mod keymap;
pub mod listing;
pub mod overlay;
pub mod table;
pub mod task;
mod terminal;
pub mod ui;
pub mod view;
pub mod views;

pub use terminal::run;
