//! A transaction that a caller who stops waiting cannot split (issue #39).
//!
//! Why: a request's future is dropped at whatever `.await` it has reached when its client
//! hangs up (hyper stops polling it) or a timeout fires. sqlx makes most of those moments
//! safe: a [`Tx`] dropped between statements, or while one is on its way, queues a
//! `ROLLBACK` that runs before its connection's next statement, for whoever uses the
//! connection next. Two moments are not safe, and both were seen on PostgreSQL under
//! clients that hang up:
//!
//! * a `BEGIN` whose answer has not arrived: sqlx counts the transaction as open only once
//!   the answer is read, so its guard rolls back nothing, and the connection goes back to
//!   the pool inside a transaction; the next request's `BEGIN` then draws "there is already
//!   a transaction in progress", and its statements run in the abandoned transaction (a
//!   read-only snapshot's, for one);
//! * a `COMMIT` on its way: the caller cannot know whether its work was kept, and the
//!   rollback queued behind it meets no transaction ("there is no transaction in progress").
//!
//! So the begin and the commit each run in a task of their own, which the caller's
//! cancellation does not stop: a begin always ends with a transaction (dropped at once if
//! nobody waits for it, rolling back), a commit always finishes. A transaction is then
//! either committed whole, as its own unit, or rolled back before its connection serves
//! anyone else. The two tasks cost a few microseconds against a round trip to the server;
//! the hot writes ([`super::Db::write`]) run the whole piece in one task instead.
//!
//! The wait for a pooled connection stays with the caller, outside those tasks: a caller
//! that leaves while waiting holds nothing yet, and leaving the pool's queue is what keeps
//! a crowd of clients that hang up from filling it with work nobody waits for. Run to the
//! end, that work held the queue long enough for steady clients' acquires to time out
//! (503) on PostgreSQL; at most one task per pooled connection now outlives its caller.

use std::future::Future;
use std::ops::{Deref, DerefMut};

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, SqlSafeStr, Transaction};

use crate::domain::error::{Error, Result};

/// An open transaction on a pooled connection; its statements run on `&mut *tx`, it ends
/// with [`Tx::commit`], and dropping it rolls it back.
#[derive(Debug)]
pub struct Tx(Transaction<'static, Any>);

impl Tx {
    /// Starts a transaction on a connection of `pool` with `statement` (else the driver's
    /// `BEGIN`): the wait for the connection stops with the caller, the begin runs to its
    /// end whatever happens to the caller.
    pub(super) async fn start(pool: &AnyPool, statement: Option<&'static str>) -> Result<Tx> {
        let conn = pool.acquire().await?;
        run_to_end(Tx::begin_on(conn, statement)).await
    }

    /// Begins a transaction on `conn`, held by the caller; cancellation-safe only inside
    /// [`run_to_end`].
    pub(super) async fn begin_on(
        conn: PoolConnection<Any>,
        statement: Option<&'static str>,
    ) -> Result<Tx, sqlx::Error> {
        // What `Pool::begin_with` runs once it holds a connection; public in sqlx, hidden
        // from its documentation, and the one way to begin on a connection already held.
        Transaction::begin(conn, statement.map(SqlSafeStr::into_sql_str))
            .await
            .map(Tx)
    }

    /// Commits the transaction; once called, the commit finishes even if the caller stops
    /// waiting for it.
    pub async fn commit(self) -> Result<()> {
        run_to_end(self.0.commit()).await
    }
}

impl Deref for Tx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.0
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.0
    }
}

/// Runs `work` in a task of its own, in the caller's span, and waits for it: dropping the
/// wait does not stop the work. A panic in the work is answered as an internal error.
pub(crate) async fn run_to_end<T, E, F>(work: F) -> Result<T>
where
    T: Send + 'static,
    E: Send + 'static,
    Error: From<E>,
    F: Future<Output = Result<T, E>> + Send + 'static,
{
    match tokio::spawn(tracing::Instrument::in_current_span(work)).await {
        Ok(outcome) => Ok(outcome?),
        Err(failed) => Err(Error::internal(failed)),
    }
}
