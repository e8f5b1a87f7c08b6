//! One piece of write work, written once, run on either backend's connection.
//!
//! The hot writes (a sign-in, a submission) are a few statements each. On PostgreSQL they
//! run through sqlx like every other query. On SQLite they run on the writer thread's own
//! synchronous connection ([`super::sqlite_writer`]), so a batch of them costs no
//! hand-off between threads per statement. [`Write`] is that piece of work, generic over
//! [`WriteConn`], the few operations it needs from a connection: the same SQL text, the
//! same arguments, on both.
//!
//! On SQLite the work's future is polled once on the writer thread: every
//! [`WriteConn`] method of the synchronous connection is ready at once, so a `Write` must
//! await nothing but its connection.

use std::future::Future;

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row as _};

use super::Backend;
use crate::domain::error::{Error, Result};

/// A bound argument of a statement (`$1`, `$2`, ... in the order given).
///
/// There is no optional float: sqlx's `Any` driver sends a NULL `Option<f64>` to
/// PostgreSQL as `float4`, and the statement cached on that connection then refuses every
/// real `f64` (ARCHITECTURE.md). A nullable float column is written by a statement of its
/// own when it has a value.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Int(i64),
    OptInt(Option<i64>),
    Float(f64),
    /// Bytes (`BLOB` on SQLite, `BYTEA` on PostgreSQL): sealed mail, for one.
    Bytes(&'a [u8]),
}

/// A row returned by a statement of a [`Write`], read by column name.
pub trait Row {
    fn text(&self, column: &str) -> Result<String>;
    fn opt_text(&self, column: &str) -> Result<Option<String>>;
    fn int(&self, column: &str) -> Result<i64>;
    fn opt_int(&self, column: &str) -> Result<Option<i64>>;
    fn opt_float(&self, column: &str) -> Result<Option<f64>>;
    fn bytes(&self, column: &str) -> Result<Vec<u8>>;
    fn opt_bytes(&self, column: &str) -> Result<Option<Vec<u8>>>;

    /// A 0/1 column as a boolean.
    fn flag(&self, column: &str) -> Result<bool> {
        Ok(self.int(column)? != 0)
    }
}

/// What a [`Write`] may do with its connection.
pub trait WriteConn: Send {
    type Row: Row + Send;

    fn backend(&self) -> Backend;

    /// Runs a statement; the number of rows it changed.
    fn exec(
        &mut self,
        sql: &'static str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<u64>> + Send;

    /// Runs a statement and returns its first row, if any (the rest are drained, so an
    /// `... RETURNING` statement is complete when this returns).
    fn fetch_first(
        &mut self,
        sql: &'static str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<Option<Self::Row>>> + Send;

    /// Runs a statement and returns every row (a statement bounded by its own `WHERE`, the
    /// children of one record).
    fn fetch_all(
        &mut self,
        sql: &'static str,
        args: &[Arg<'_>],
    ) -> impl Future<Output = Result<Vec<Self::Row>>> + Send;
}

/// A piece of write work for [`super::Db::write`]: a few statements, with the reading,
/// hashing and signing done before or after it.
pub trait Write: Send + 'static {
    type Output: Send + 'static;

    fn run<C: WriteConn>(self, conn: &mut C) -> impl Future<Output = Result<Self::Output>> + Send;
}

impl Row for AnyRow {
    fn text(&self, column: &str) -> Result<String> {
        Ok(self.try_get(column)?)
    }

    fn opt_text(&self, column: &str) -> Result<Option<String>> {
        Ok(self.try_get(column)?)
    }

    fn int(&self, column: &str) -> Result<i64> {
        Ok(self.try_get(column)?)
    }

    fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        Ok(self.try_get(column)?)
    }

    fn opt_float(&self, column: &str) -> Result<Option<f64>> {
        Ok(self.try_get(column)?)
    }

    fn bytes(&self, column: &str) -> Result<Vec<u8>> {
        Ok(self.try_get(column)?)
    }

    fn opt_bytes(&self, column: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.try_get(column)?)
    }
}

fn bind_all<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    args: &[Arg<'q>],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    for arg in args {
        query = match *arg {
            Arg::Text(value) => query.bind(value),
            Arg::OptText(value) => query.bind(value),
            Arg::Int(value) => query.bind(value),
            Arg::OptInt(value) => query.bind(value),
            Arg::Float(value) => query.bind(value),
            Arg::Bytes(value) => query.bind(value),
        };
    }
    query
}

impl WriteConn for AnyConnection {
    type Row = AnyRow;

    fn backend(&self) -> Backend {
        super::backend_of(self)
    }

    async fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<u64> {
        let done = bind_all(sqlx::query(sql), args).execute(&mut *self).await?;
        Ok(done.rows_affected())
    }

    async fn fetch_first(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<Option<AnyRow>> {
        // `fetch_all`, not `fetch_optional`: an `... RETURNING` statement must run to its
        // end (see the SQLite rules in `db.rs`).
        let rows = bind_all(sqlx::query(sql), args)
            .fetch_all(&mut *self)
            .await?;
        Ok(rows.into_iter().next())
    }

    async fn fetch_all(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<Vec<AnyRow>> {
        Ok(bind_all(sqlx::query(sql), args)
            .fetch_all(&mut *self)
            .await?)
    }
}

/// An open transaction and a pooled connection are each their connection: a [`Write`]'s
/// statements, an audit entry's, or a store's query written once for the pieces of write
/// work run through them as they would on the connection they deref to.
macro_rules! write_conn_through_deref {
    ($($ty:ty),+) => {$(
        impl WriteConn for $ty {
            type Row = AnyRow;

            fn backend(&self) -> Backend {
                super::backend_of(self)
            }

            async fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<u64> {
                (**self).exec(sql, args).await
            }

            async fn fetch_first(
                &mut self,
                sql: &'static str,
                args: &[Arg<'_>],
            ) -> Result<Option<AnyRow>> {
                (**self).fetch_first(sql, args).await
            }

            async fn fetch_all(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<Vec<AnyRow>> {
                (**self).fetch_all(sql, args).await
            }
        }
    )+};
}

write_conn_through_deref!(super::Tx, sqlx::pool::PoolConnection<sqlx::Any>);

/// Polls a future that must be ready at once (a [`Write`] on the synchronous SQLite
/// connection); one that is not is a bug, answered as such rather than blocking the
/// writer thread.
pub(super) fn run_ready<T>(work: impl Future<Output = Result<T>>) -> Result<T> {
    let mut work = std::pin::pin!(work);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match work.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(outcome) => outcome,
        std::task::Poll::Pending => Err(Error::internal(
            "a write on the SQLite writer thread awaited something other than its connection",
        )),
    }
}
