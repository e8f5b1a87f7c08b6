//! Group commit for the single SQLite writer.
//!
//! SQLite has one writer, so write transactions run one after another, and each pays for
//! itself: `BEGIN IMMEDIATE`, its statements, and a `COMMIT` that appends every page it
//! touched to the WAL (about 20 pages for a sign-in: the row, each index, the rollup rows).
//! Under load most of those pages are the same from one transaction to the next (the
//! newest leaf of each index, today's rollup row), so committing the waiting writes
//! together writes each shared page once, and the writer's queue becomes one task's loop
//! instead of 64 requests taking turns at a pool of one connection.
//!
//! [`GroupCommit::write`] hands a piece of work to that loop. The loop takes every piece
//! waiting (up to [`MAX_BATCH`]), opens one transaction, runs each piece inside its own
//! savepoint (a piece that fails is rolled back to its savepoint and answered with its own
//! error; the others go on), commits once, and only then answers each caller, so nobody
//! hears "done" before their work is durable. If the commit itself fails, every piece that
//! had succeeded is answered with that failure (nothing of the batch was written).
//!
//! A storage fault (full disk, I/O error, read-only file: a piece answering "unavailable")
//! can make SQLite roll back the whole transaction by itself; after one, the rest of the
//! batch is not run on a connection that is no longer inside the transaction it thinks it
//! is in: every piece is answered "unavailable" and the connection is replaced
//! (`release_check`).

use std::any::Any;
use std::future::Future;
use std::pin::Pin;

use sqlx::{AnyConnection, AnyPool, Connection};
use tokio::sync::{mpsc, oneshot};

use crate::error::{Error, Result};

/// At most this many pieces of work share one transaction (bounds how long the writer is
/// held by one batch, and so the wait of other writers).
pub const MAX_BATCH: usize = 128;

/// Pieces of work that may wait for the loop before `write` itself waits.
const QUEUE: usize = 1024;

/// A boxed future borrowing the connection it runs on.
pub type WorkFuture<'c, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'c>>;

type Erased = Box<dyn Any + Send>;

type ErasedWork = Box<dyn for<'c> FnOnce(&'c mut AnyConnection) -> WorkFuture<'c, Erased> + Send>;

struct Job {
    work: ErasedWork,
    /// Whether the work needs a savepoint to be undone on failure (see [`Undo`]).
    undo: Undo,
    reply: oneshot::Sender<Result<Erased>>,
}

/// How a failed piece of work is undone without undoing the others of its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undo {
    /// The work may change several rows before it fails: it runs inside a savepoint of
    /// its own, rolled back on failure (two more statements, each a hand-off to the
    /// SQLite worker thread).
    Savepoint,
    /// The work makes at most one change, its last statement, so a failure changed
    /// nothing (a statement is atomic): no savepoint is needed.
    SingleStatement,
}

/// The handle of the loop that owns SQLite's write transactions for grouped work.
#[derive(Clone, Debug)]
pub struct GroupCommit {
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

impl GroupCommit {
    /// Starts the loop on the current runtime; it ends when every handle is dropped.
    pub fn start(writer: AnyPool) -> GroupCommit {
        let (jobs, queue) = mpsc::channel(QUEUE);
        tokio::spawn(run(writer, queue));
        GroupCommit { jobs }
    }

    /// Runs `work` in a write transaction shared with other waiting work, and answers
    /// once that transaction has committed (or with the work's own error).
    pub async fn write<T, F>(&self, undo: Undo, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut AnyConnection) -> WorkFuture<'c, T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let work: ErasedWork = Box::new(move |conn| {
            Box::pin(async move { work(conn).await.map(|value| Box::new(value) as Erased) })
        });
        self.jobs
            .send(Job { work, undo, reply })
            .await
            .map_err(|_| stopped())?;
        let value = answer.await.map_err(|_| stopped())??;
        value
            .downcast::<T>()
            .map(|value| *value)
            .map_err(|_| Error::internal("group commit answered with another type"))
    }
}

fn stopped() -> Error {
    Error::Unavailable("the database writer has stopped".into())
}

async fn run(writer: AnyPool, mut queue: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        commit_batch(&writer, &mut batch).await;
    }
}

/// Runs and commits one batch, answering every job in it (the batch is left empty).
async fn commit_batch(writer: &AnyPool, batch: &mut Vec<Job>) {
    let mut tx = match writer.begin_with("BEGIN IMMEDIATE").await {
        Ok(tx) => tx,
        Err(err) => {
            let err = Error::from(err);
            for job in batch.drain(..) {
                let _ = job.reply.send(Err(same_failure(&err)));
            }
            return;
        }
    };
    let mut done: Vec<(oneshot::Sender<Result<Erased>>, Result<Erased>)> =
        Vec::with_capacity(batch.len());
    let mut jobs = batch.drain(..);
    let mut fault = false;
    for job in jobs.by_ref() {
        let outcome = match job.undo {
            Undo::Savepoint => run_in_savepoint(&mut tx, job.work).await,
            Undo::SingleStatement => (job.work)(&mut tx).await,
        };
        // A storage fault (full, I/O, read-only) or a lost connection is "unavailable".
        fault = matches!(outcome, Err(Error::Unavailable(_)));
        done.push((job.reply, outcome));
        if fault {
            break;
        }
    }
    if fault {
        // SQLite may have ended the transaction itself: nothing of the batch is kept.
        let fault = Error::Unavailable("database storage fault".into());
        for (reply, _) in done {
            let _ = reply.send(Err(same_failure(&fault)));
        }
        for job in jobs {
            let _ = job.reply.send(Err(same_failure(&fault)));
        }
        drop(tx);
        return;
    }
    drop(jobs);
    match tx.commit().await {
        Ok(()) => {
            for (reply, outcome) in done {
                let _ = reply.send(outcome);
            }
        }
        Err(err) => {
            let err = Error::from(err);
            for (reply, outcome) in done {
                let _ = reply.send(outcome.and_then(|_| Err(same_failure(&err))));
            }
        }
    }
}

/// Runs one piece of work inside a savepoint of `tx`, rolled back if it fails.
async fn run_in_savepoint(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    work: ErasedWork,
) -> Result<Erased> {
    let mut savepoint = Connection::begin(&mut **tx).await?;
    match work(&mut savepoint).await {
        Ok(value) => {
            savepoint.commit().await?;
            Ok(value)
        }
        Err(err) => {
            // A failed rollback leaves the savepoint for the transaction's own end.
            let _ = savepoint.rollback().await;
            Err(err)
        }
    }
}

/// The failure of a shared step (begin, commit, a storage fault) once for each caller:
/// the same kind, with the cause as text (an error source is not `Clone`).
fn same_failure(err: &Error) -> Error {
    match err {
        Error::Unavailable(cause) => Error::Unavailable(cause.to_string().into()),
        Error::Internal(cause) => Error::Internal(cause.to_string().into()),
        other => Error::Internal(other.to_string().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Executor;
    use sqlx::any::{AnyPoolOptions, install_default_drivers};

    async fn writer_pool(dir: &std::path::Path) -> AnyPool {
        install_default_drivers();
        let url = format!("sqlite://{}?mode=rwc", dir.join("group.db").display());
        let pool = AnyPoolOptions::new()
            .max_connections(1)
            .connect(&url)
            .await
            .expect("a SQLite file");
        pool.execute("PRAGMA journal_mode = WAL")
            .await
            .expect("WAL");
        pool.execute("CREATE TABLE t (id BIGINT PRIMARY KEY)")
            .await
            .expect("a table");
        pool
    }

    fn insert(
        id: i64,
        then_fail: bool,
    ) -> impl for<'c> FnOnce(&'c mut AnyConnection) -> WorkFuture<'c, i64> + Send + 'static {
        move |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO t (id) VALUES ($1)")
                    .bind(id)
                    .execute(&mut *conn)
                    .await?;
                if then_fail {
                    return Err(Error::invalid("refused after writing"));
                }
                Ok(id)
            })
        }
    }

    #[tokio::test]
    async fn waiting_writes_share_a_commit_and_a_failure_undoes_only_its_own() {
        let dir = std::env::temp_dir().join(format!("langcamp-group-{}", crate::id::new_id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let pool = writer_pool(&dir).await;
        let group = GroupCommit::start(pool.clone());

        // Hold the only writer connection so every write below queues up behind it and
        // they are committed together once it is free.
        let blocker = pool.begin().await.expect("the writer");
        let mut waiting = Vec::new();
        for id in 1..=40_i64 {
            let group = group.clone();
            // 13 writes its row and then fails (undone by its savepoint); 27 collides with
            // 26's row in its single statement (nothing to undo); the rest need no savepoint.
            let id_written = if id == 27 { 26 } else { id };
            let undo = if id == 13 {
                Undo::Savepoint
            } else {
                Undo::SingleStatement
            };
            waiting.push(tokio::spawn(async move {
                group.write(undo, insert(id_written, id == 13)).await
            }));
        }
        tokio::task::yield_now().await;
        drop(blocker);

        let mut answers = Vec::new();
        for handle in waiting {
            answers.push(handle.await.expect("no panic"));
        }
        let ok: Vec<i64> = answers
            .iter()
            .filter_map(|a| a.as_ref().ok().copied())
            .collect();
        assert_eq!(ok.len(), 38, "all but the two failures: {answers:?}");
        assert!(matches!(answers[12], Err(Error::Validation(_))));
        assert!(answers[26].is_err(), "the duplicate is refused");

        let rows: Vec<i64> = sqlx::query_scalar("SELECT id FROM t ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("rows");
        let expected: Vec<i64> = (1..=40).filter(|id| *id != 13 && *id != 27).collect();
        assert_eq!(rows, expected, "13's own insert was undone, nobody else's");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[tokio::test]
    async fn a_failed_commit_fails_every_write_of_the_batch() {
        let dir = std::env::temp_dir().join(format!("langcamp-group-{}", crate::id::new_id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let pool = writer_pool(&dir).await;
        // A deferred foreign key is checked at the commit: the batch cannot commit.
        pool.execute(
            "PRAGMA foreign_keys = ON;
             CREATE TABLE child (id BIGINT PRIMARY KEY,
                 parent BIGINT REFERENCES t(id) DEFERRABLE INITIALLY DEFERRED)",
        )
        .await
        .expect("a child table");
        let group = GroupCommit::start(pool.clone());
        let orphan = group.write(Undo::SingleStatement, |conn| {
            Box::pin(async move {
                sqlx::query("INSERT INTO child (id, parent) VALUES (1, 999)")
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            })
        });
        assert!(orphan.await.is_err(), "the commit failed, so the write did");
        let children: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM child")
            .fetch_one(&pool)
            .await
            .expect("a count");
        assert_eq!(children, 0);
        std::fs::remove_dir_all(&dir).ok();
    }
}
