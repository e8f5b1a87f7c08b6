//! A durable queue of things to send: rows written in the transaction of the change they
//! report (so a change that rolls back sends nothing, and one that commits is never lost),
//! claimed by a worker with a lease (so several instances never send one row twice),
//! retried with backoff, and given up on after a day. The mail outbox and the webhook
//! deliveries are its two users; each supplies its table and what sending means.
//!
//! A queue's table has the columns `id`, `status` (`pending` until it ends: `done`'s
//! value, `failed`, or one of its own), `attempts`, `next_attempt_at`, `lease_owner`,
//! `lease_until`, `created_at` and `last_error`, and an index that finds the pending rows
//! by `next_attempt_at` (the outbox's `(status, next_attempt_at)`; the deliveries' partial
//! index of pending rows, per endpoint). On PostgreSQL a claim skips the rows another worker holds
//! (`FOR UPDATE SKIP LOCKED`) instead of waiting for them; SQLite has one writer.

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::AssertSqlSafe;
use sqlx::any::AnyRow;

use crate::domain::error::Result;
use crate::platform::db::listing::Bound;
use crate::platform::db::{Arg, Backend, Db};

/// Retries stop, and the row is failed, this long after it was queued.
pub const GIVE_UP_AFTER_MS: i64 = 24 * 3600 * 1000;
/// A claimed row is the claimer's for this long; a crashed worker's claims then lapse.
pub const LEASE_MS: i64 = 2 * 60 * 1000;
/// Longest wait between two attempts.
pub const MAX_BACKOFF_MS: i64 = 5 * 60 * 1000;

/// Wait before attempt `attempts + 1`: 2 s, 4 s, 8 s, ... at most 5 minutes.
pub fn backoff_ms(attempts: i64) -> i64 {
    let exponent = u32::try_from(attempts.clamp(1, 20)).unwrap_or(20);
    (1000i64 << exponent).min(MAX_BACKOFF_MS)
}

/// One queue: its table and what its rows carry.
#[derive(Clone, Copy, Debug)]
pub struct Queue {
    pub table: &'static str,
    /// The columns a claim answers besides `id`, `attempts` and `created_at`.
    pub columns: &'static str,
    /// The status of a row sent (`sent`, `delivered`).
    pub done: &'static str,
    /// What a row no longer needs once it has ended (`sealed = NULL`): set then.
    pub ended: &'static str,
}

/// A row claimed: its own columns in `row`.
pub struct Claimed {
    pub id: String,
    pub attempts: i64,
    pub created_at: i64,
    pub row: AnyRow,
}

/// One attempt at a claimed row: the row, who claimed it, and when the attempt ended.
#[derive(Clone, Copy)]
pub struct Attempt<'a> {
    pub claimed: &'a Claimed,
    pub owner: &'a str,
    pub now: i64,
}

/// What became of an attempt that did not succeed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retried {
    /// It waits for another attempt at this time (epoch ms).
    At(i64),
    /// It is failed for good.
    Failed,
}

/// What a queue's worker did, since the process started (metrics).
#[derive(Debug, Default)]
pub struct Tally {
    pub done: AtomicU64,
    pub retried: AtomicU64,
    pub failed: AtomicU64,
}

impl Tally {
    pub fn snapshot(&self) -> (u64, u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.retried.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }
}

impl Queue {
    /// Claims up to `limit` rows due at `now` for `owner` (a lease of [`LEASE_MS`]), the
    /// longest waiting first; `only` narrows them to the rows whose column equals a value
    /// (one endpoint's deliveries).
    pub async fn claim(
        &self,
        db: &Db,
        owner: &str,
        now: i64,
        limit: i64,
        only: Option<(&'static str, &str)>,
    ) -> Result<Vec<Claimed>> {
        let narrowed = only
            .map(|(column, _)| format!(" AND {column} = $5"))
            .unwrap_or_default();
        // PostgreSQL: rows another worker is claiming are skipped, not waited for. The outer
        // conditions repeat the inner ones so that on SQLite, and on PostgreSQL under read
        // committed, a row claimed meanwhile is not taken twice.
        let skip = match db.backend() {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let sql = format!(
            "UPDATE {table} SET lease_owner = $1, lease_until = $2
             WHERE id IN (SELECT id FROM {table}
                          WHERE status = 'pending' AND next_attempt_at <= $3
                            AND (lease_until IS NULL OR lease_until < $3){narrowed}
                          ORDER BY next_attempt_at LIMIT $4{skip})
               AND status = 'pending' AND (lease_until IS NULL OR lease_until < $3)
             RETURNING id, attempts, created_at, {columns}",
            table = self.table,
            columns = self.columns,
        );
        let mut query = sqlx::query(AssertSqlSafe(sql))
            .bind(owner)
            .bind(now + LEASE_MS)
            .bind(now)
            .bind(limit);
        if let Some((_, value)) = only {
            query = query.bind(value);
        }
        let mut tx = db.begin().await?;
        let rows = query.fetch_all(&mut *tx).await?;
        tx.commit().await?;
        rows.into_iter()
            .map(|row| {
                use sqlx::Row;
                Ok(Claimed {
                    id: row.try_get("id")?,
                    attempts: row.try_get("attempts")?,
                    created_at: row.try_get("created_at")?,
                    row,
                })
            })
            .collect()
    }

    /// Records the attempt's row as sent, with `set` (a delivery's answer status).
    pub async fn done(
        &self,
        db: &Db,
        attempt: Attempt<'_>,
        set: &[(&'static str, Arg<'_>)],
    ) -> Result<()> {
        self.done_all(db, attempt.owner, attempt.now, &[(attempt.claimed, set)])
            .await
    }

    /// Records the claimed rows as sent at `now`, each with its `set`, in one
    /// transaction: a worker that sent a batch takes the writer once, not once a row.
    pub async fn done_all(
        &self,
        db: &Db,
        owner: &str,
        now: i64,
        rows: &[(&Claimed, &[(&'static str, Arg<'_>)])],
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut tx = db.begin().await?;
        for (claimed, set) in rows {
            let extra: String = set
                .iter()
                .enumerate()
                .map(|(n, (column, _))| format!(", {column} = ${}", n + 5))
                .collect();
            let sql = format!(
                "UPDATE {table} SET status = '{done}', {ended}, lease_until = NULL,
                        attempts = attempts + 1, last_error = NULL, next_attempt_at = $1{extra}
                 WHERE id = $2 AND lease_owner = $3 AND status = $4",
                table = self.table,
                done = self.done,
                ended = self.ended,
            );
            let query = sqlx::query(AssertSqlSafe(sql))
                .bind(now)
                .bind(&claimed.id)
                .bind(owner)
                .bind("pending");
            bind_set(query, set).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Records a failed attempt: another one after a backoff, or, a day after its row was
    /// queued (or when `for_good`), failed with `error`. `set` adds columns (a delivery's
    /// answer status; mail sealed again under the current key).
    pub async fn retry(
        &self,
        db: &Db,
        attempt: Attempt<'_>,
        (error, for_good): (&str, bool),
        set: &[(&'static str, Arg<'_>)],
    ) -> Result<Retried> {
        let Attempt {
            claimed,
            owner,
            now,
        } = attempt;
        let attempts = claimed.attempts + 1;
        let outcome = if for_good || now - claimed.created_at >= GIVE_UP_AFTER_MS {
            Retried::Failed
        } else {
            Retried::At(now + backoff_ms(attempts))
        };
        let extra: String = set
            .iter()
            .enumerate()
            .map(|(n, (column, _))| format!(", {column} = ${}", n + 6))
            .collect();
        let ended = match outcome {
            Retried::Failed => format!("status = 'failed', {}, ", self.ended),
            Retried::At(_) => String::new(),
        };
        let sql = format!(
            "UPDATE {table} SET {ended}attempts = $1, last_error = $2, next_attempt_at = $3,
                    lease_until = NULL{extra}
             WHERE id = $4 AND lease_owner = $5 AND status = 'pending'",
            table = self.table,
        );
        let next = match outcome {
            Retried::At(at) => at,
            Retried::Failed => now,
        };
        let query = sqlx::query(AssertSqlSafe(sql))
            .bind(attempts)
            .bind(error)
            .bind(next)
            .bind(&claimed.id)
            .bind(owner);
        let query = bind_set(query, set);
        let mut tx = db.begin().await?;
        query.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(outcome)
    }

    /// Gives `claimed` back unattempted: due again at `at` (its endpoint is resting).
    pub async fn release(&self, db: &Db, claimed: &Claimed, owner: &str, at: i64) -> Result<()> {
        let sql = format!(
            "UPDATE {} SET lease_until = NULL, next_attempt_at = $1
             WHERE id = $2 AND lease_owner = $3 AND status = 'pending'",
            self.table
        );
        let mut tx = db.begin().await?;
        sqlx::query(AssertSqlSafe(sql))
            .bind(at)
            .bind(&claimed.id)
            .bind(owner)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Fails every row still pending a day after it was queued (rows a worker never got
    /// to: their endpoint rested all day); the number failed.
    pub async fn give_up_stale(&self, db: &Db, now: i64, error: &str) -> Result<u64> {
        let sql = format!(
            "UPDATE {table} SET status = 'failed', {ended}, last_error = COALESCE(last_error, $1),
                    lease_until = NULL
             WHERE status = 'pending' AND created_at <= $2
               AND (lease_until IS NULL OR lease_until < $3)",
            table = self.table,
            ended = self.ended,
        );
        let mut tx = db.begin().await?;
        let failed = sqlx::query(AssertSqlSafe(sql))
            .bind(error)
            .bind(now - GIVE_UP_AFTER_MS)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(failed)
    }

    /// The queued rows waiting to be sent, and when the oldest was queued (metrics).
    pub async fn backlog(&self, db: &Db) -> Result<(i64, Option<i64>)> {
        let sql = format!(
            "SELECT COUNT(*), MIN(created_at) FROM {} WHERE status = 'pending'",
            self.table
        );
        Ok(sqlx::query_as(AssertSqlSafe(sql))
            .fetch_one(db.reader())
            .await?)
    }
}

/// `query` with the values of `set` bound after its own.
fn bind_set<'q>(mut query: Bound<'q>, set: &[(&'static str, Arg<'q>)]) -> Bound<'q> {
    for (_, value) in set {
        query = match *value {
            Arg::Text(v) => query.bind(v),
            Arg::OptText(v) => query.bind(v),
            Arg::Int(v) => query.bind(v),
            Arg::OptInt(v) => query.bind(v),
            Arg::Float(v) => query.bind(v),
            Arg::Bytes(v) => query.bind(v),
        };
    }
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_within_five_seconds_and_caps_at_five_minutes() {
        assert!(backoff_ms(1) <= 5000);
        assert!(backoff_ms(2) > backoff_ms(1));
        assert_eq!(backoff_ms(30), MAX_BACKOFF_MS);
    }
}
