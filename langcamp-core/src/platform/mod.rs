//! The platform floor: what the school runs on. Nothing here names an area's type; where a
//! mechanism needs an area's data (a cache's values, a change notice's effect), the area
//! or the handle in `lib.rs` supplies it.

pub mod cache;
pub mod changes;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod db;
pub mod faults;
pub mod file_store;
pub mod health;
pub mod keyring;
pub mod mail;
pub mod net;
pub mod outgoing;
pub mod progress;
pub mod queue;
pub(crate) mod startup;
pub mod trace;
