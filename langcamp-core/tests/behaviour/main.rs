//! Core's behaviour against a real database, without HTTP: the rules that a handler, the
//! console and the CLI all reach through the same operations. Every test runs on SQLite by
//! default and on PostgreSQL when `TEST_DATABASE_URL` names a server (CONTRIBUTING.md).

mod dashboard;
mod hangups;
mod harness;
mod lists;
mod mail_templates;
mod rollups;
mod story;
mod users;
