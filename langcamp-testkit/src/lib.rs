//! What the workspace's test binaries share, so each rule of the test harness lives once:
//!
//! - [`database`]: a fresh database for one test on SQLite or, when `TEST_DATABASE_URL`
//!   names a server, PostgreSQL, dropped afterwards;
//! - [`client`]: an HTTP client bound to a caller (`admin.get(path).await`,
//!   `student.post(path, &body).fails(403, "FORBIDDEN").await`);
//! - [`latency`]: a TCP relay that delays what it forwards (a database across a slow network);
//! - [`passkey`]: a software passkey answering the server's WebAuthn options;
//! - [`roles`]: the role matrix, one table of operations × callers;
//! - [`s3`]: the S3 test server, for the tests of the object store;
//! - [`snapshot`]: a rendered text compared with its file in the repository.

pub mod client;
pub mod database;
pub mod latency;
pub mod passkey;
pub mod roles;
pub mod s3;
pub mod snapshot;

pub use client::{Call, Client, TestResponse};
pub use database::TestDatabase;
pub use roles::{Case, assert_role_matrix};
pub use snapshot::assert_snapshot;
