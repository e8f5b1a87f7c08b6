//! One module per view: its state, how it loads, how it answers actions, how it draws.

pub mod audit;
pub mod contacts;
pub mod courses;
pub mod dashboard;
pub mod mail;
pub mod materials;
pub mod placement;
pub mod settings;
pub mod users;
pub mod webhooks;
