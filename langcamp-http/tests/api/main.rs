//! One integration-test binary (one link, many modules): every test spawns the real server
//! on port 0 with a fresh database, on SQLite or, with `TEST_DATABASE_URL`, PostgreSQL.

mod helpers;
mod receiver;
mod smtp;

mod adaptive;
mod audit;
mod auth;
mod contacts;
mod courses;
mod dashboard;
mod diskfaults;
mod document;
mod encoded;
mod exports;
mod factors;
mod faults;
mod hangups;
mod instances;
mod keys;
mod mail_templates;
mod materials;
mod operations;
mod passkeys;
mod placement;
mod platform;
mod s3_store;
mod security;
mod sessions;
mod settings;
mod storage;
mod submissions;
mod users;
mod webhooks;
mod write_matrix;
