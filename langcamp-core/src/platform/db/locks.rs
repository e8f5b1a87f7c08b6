//! PostgreSQL's locks, each in one place with the reason it is needed, as methods on a
//! write transaction's connection (`tx.hold_users(&ids)`).
//!
//! On SQLite every one is a no-op, for one reason: a write transaction there is `BEGIN
//! IMMEDIATE` on the single writer, which holds every other writer off until its commit,
//! so nothing another transaction does can interleave with it. PostgreSQL runs writers
//! side by side under read committed, so where two of them could each see the other's
//! state half-done, the one that must wait says so with a lock.

use std::future::Future;

use super::{Arg, Backend, WriteConn};
use crate::domain::error::Result;
use crate::domain::id::looks_like_id;

/// The rollup tables that `stats rebuild` recounts.
const ROLLUP_TABLES_LOCK: &str = "LOCK TABLE stats_counts, stats_holdings, stats_results, stats_days, stats_result_tests, \
     stats_audit_days IN EXCLUSIVE MODE";

pub trait Locks: WriteConn {
    /// Keeps these users from being deleted until the commit (`FOR KEY SHARE`, the lock a
    /// foreign-key check takes), taken in id order before the caller writes anything. A
    /// transaction that writes rows referring to several users takes these up front, not
    /// one by one between its writes: waiting for a user's deletion while holding the
    /// rollup rows its first writes updated could deadlock with that deletion's cascade.
    fn hold_users(&mut self, ids: &[String]) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.backend() == Backend::Postgres {
                let mut sorted: Vec<&String> = ids.iter().collect();
                sorted.sort();
                for id in sorted {
                    self.fetch_first(
                        "SELECT id FROM users WHERE id = $1 FOR KEY SHARE",
                        &[Arg::Text(id)],
                    )
                    .await?;
                }
            }
            Ok(())
        }
    }

    /// Takes the user's row until the commit (`FOR NO KEY UPDATE`: foreign-key checks of
    /// rows that refer to the user still pass), so that the writes of one user's second
    /// factors run one at a time: each reads what it checks (is this the last factor, are
    /// there ten passkeys already, is this the first, does the user have one at all) after
    /// the one before it committed. Without it two removals at once could each leave the
    /// other's factor as "the last one" and take both.
    fn take_user(&mut self, id: &str) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.backend() == Backend::Postgres {
                self.fetch_first(
                    "SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE",
                    &[Arg::Text(id)],
                )
                .await?;
            }
            Ok(())
        }
    }

    /// Holds a test's row (shared) until the commit, so that the reads that follow see it
    /// whole: an edit takes the row exclusively first (`lock_test` in placement's store),
    /// so it either committed before or waits for this commit. For transactions that
    /// insert results: REPEATABLE READ would do the same, but there the upsert of a
    /// dashboard rollup row fails (40001) when another submission changed it after the
    /// snapshot.
    fn share_test(&mut self, id: &str) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.backend() == Backend::Postgres && looks_like_id(id) {
                self.fetch_first(
                    "SELECT id FROM proficiency_tests WHERE id = $1 FOR SHARE",
                    &[Arg::Text(id)],
                )
                .await?;
            }
            Ok(())
        }
    }

    /// Makes the reads of this write transaction see one snapshot; the first statement of
    /// the transaction. Read committed would let a test edited halfway through an edit's
    /// reads show old questions with new options.
    fn repeatable_reads(&mut self) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.backend() == Backend::Postgres {
                self.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", &[])
                    .await?;
            }
            Ok(())
        }
    }

    /// Holds the superadmins' rows until the commit, so that two superadmins demoted or
    /// deleted at once cannot both count the other one as still there: the second waits
    /// for the first's commit, and its count that follows sees it. `NO KEY UPDATE`, not
    /// `UPDATE`: it must not block the foreign-key checks of writes that merely refer to
    /// a superadmin.
    fn hold_superadmins(&mut self) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.backend() == Backend::Postgres {
                self.exec(
                    "SELECT id FROM users WHERE role = 'superadmin' ORDER BY id FOR NO KEY UPDATE",
                    &[],
                )
                .await?;
            }
            Ok(())
        }
    }

    /// Blocks every write to the dashboard's rollup tables until the commit (and waits
    /// for transactions that already made some), so no counted row changes between a
    /// recount and its commit. A writer holding one rollup table while waiting for
    /// another that this holds makes PostgreSQL abort one of the two; that only happens
    /// during a rebuild.
    fn lock_rollups(&mut self) -> impl Future<Output = Result<()>> + Send {
        async move {
            if self.backend() == Backend::Postgres {
                self.exec(ROLLUP_TABLES_LOCK, &[]).await?;
            }
            Ok(())
        }
    }
}

impl<C: WriteConn> Locks for C {}
