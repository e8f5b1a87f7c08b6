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
//! waiting (up to [`MAX_BATCH`]), holds the sqlx writer connection (so no other write
//! runs meanwhile), and passes the batch to the writer thread, which owns a synchronous
//! connection of its own ([`super::sqlite_conn`]: a statement there is a function call,
//! not a hand-off to sqlx's worker thread and back). The thread opens one transaction,
//! runs each piece inside its own
//! savepoint (a piece that fails is rolled back to its savepoint and answered with its own
//! error; the others go on), commits once, and only then answers each caller, so nobody
//! hears "done" before their work is durable. If the commit itself fails, every piece that
//! had succeeded is answered with that failure (nothing of the batch was written).
//!
//! A storage fault (full disk, I/O error, read-only file: a piece answering "unavailable")
//! can make SQLite roll back the whole transaction by itself; after one, the rest of the
//! batch is not run on a connection that is no longer inside the transaction it thinks it
//! is in: every piece is answered "unavailable" and the thread opens a new connection for
//! the next batch (one opened while the file was read-only would stay read-only).

use std::any::Any;
use std::path::PathBuf;

use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot};

use super::checkpoint::{self, Checkpointer};
use super::sqlite_conn;
use super::write::{Write, run_ready};
use crate::domain::error::{Error, Result};
use crate::platform::faults::storage_faults;
use crate::platform::trace;

/// At most this many pieces of work share one transaction (bounds how long the writer is
/// held by one batch, and so the wait of other writers).
pub const MAX_BATCH: usize = 128;

/// Pieces of work that may wait for the loop before `write` itself waits.
const QUEUE: usize = 1024;

type Erased = Box<dyn Any + Send>;

type ErasedWork = Box<dyn FnOnce(&mut rusqlite::Connection) -> Result<Erased> + Send>;

/// A step to take once a write's transaction has ended (committed or not), whether or not
/// its caller still waits: whoever ends the write takes it (the writer thread, or the
/// write's own task). Forgetting what the write changed in this process's caches is one.
pub type AfterWrite = Box<dyn FnOnce() + Send + 'static>;

struct Job {
    work: ErasedWork,
    /// Whether the work needs a savepoint to be undone on failure (see [`Undo`]).
    undo: Undo,
    answer: Answer,
}

/// Where a job's outcome goes: its caller, after the step that must follow the write.
struct Answer {
    reply: oneshot::Sender<Result<Erased>>,
    after: Option<AfterWrite>,
}

impl Answer {
    /// Takes the step after the write, then tells the caller (if it still waits).
    fn send(self, outcome: Result<Erased>) {
        if let Some(after) = self.after {
            after();
        }
        let _ = self.reply.send(outcome);
    }
}

/// What the loop receives.
enum Message {
    Work(Job),
    /// Let go of the database file (answered once the thread's connection is closed).
    Close(oneshot::Sender<()>),
}

/// What the writer thread receives: a batch, or an order to close its connection (the
/// next batch opens a new one); `done` answers when it has finished with either.
struct ThreadOrder {
    jobs: Vec<Job>,
    close: bool,
    done: oneshot::Sender<()>,
}

/// How a failed piece of work is undone without undoing the others of its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undo {
    /// The work may change several rows before it fails: it runs inside a savepoint of
    /// its own, rolled back on failure.
    Savepoint,
    /// The work makes at most one change, its last statement, so a failure changed
    /// nothing (a statement is atomic): no savepoint is needed.
    SingleStatement,
}

/// The handle of the loop that owns SQLite's write transactions for grouped work.
#[derive(Clone, Debug)]
pub struct GroupCommit {
    jobs: mpsc::Sender<Message>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

impl GroupCommit {
    /// Starts the loop on the current runtime and the writer thread on the database
    /// `file`; both end when every handle is dropped. `writer` is the sqlx writer pool,
    /// held for each batch.
    pub fn start(file: PathBuf, writer: AnyPool) -> Result<GroupCommit> {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let (orders, thread_orders) = std::sync::mpsc::channel();
        let checkpointer = Checkpointer::start(file.clone())?;
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || writer_thread(&file, &thread_orders, &checkpointer))?;
        tokio::spawn(run(writer, queue, orders));
        Ok(GroupCommit { jobs })
    }

    /// Runs `work` in a write transaction shared with other waiting work, and answers
    /// once that transaction has committed (or with the work's own error). `after` runs
    /// on the writer thread once the work's transaction has ended, before the answer,
    /// even if the caller has stopped waiting by then.
    pub async fn write<W: Write>(
        &self,
        undo: Undo,
        work: W,
        after: Option<AfterWrite>,
    ) -> Result<W::Output> {
        let (reply, answered) = oneshot::channel();
        // The caller's trace, for the mail the work may queue (None while tracing is off).
        let caller = trace::current_traceparent();
        let work: ErasedWork = Box::new(move |conn| {
            trace::on_behalf_of(caller, || run_ready(work.run(conn)))
                .map(|value| Box::new(value) as Erased)
        });
        let answer = Answer { reply, after };
        self.jobs
            .send(Message::Work(Job { work, undo, answer }))
            .await
            .map_err(|_| stopped())?;
        let value = answered.await.map_err(|_| stopped())??;
        value
            .downcast::<W::Output>()
            .map(|value| *value)
            .map_err(|_| Error::internal("group commit answered with another type"))
    }
}

impl GroupCommit {
    /// Closes the writer thread's connection, after the work sent before (the database is
    /// being let go of: `Db::close`).
    pub async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.jobs.send(Message::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
    }
}

fn stopped() -> Error {
    Error::Unavailable("the database writer has stopped".into())
}

async fn run(
    writer: AnyPool,
    mut queue: mpsc::Receiver<Message>,
    thread: std::sync::mpsc::Sender<ThreadOrder>,
) {
    let mut messages = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut messages, MAX_BATCH).await > 0 {
        let mut batch = Vec::with_capacity(messages.len());
        for message in messages.drain(..) {
            match message {
                Message::Work(job) => batch.push(job),
                Message::Close(closed) => {
                    let work_before = std::mem::take(&mut batch);
                    run_batch(&writer, &thread, work_before).await;
                    order(&thread, Vec::new(), true).await;
                    let _ = closed.send(());
                }
            }
        }
        run_batch(&writer, &thread, batch).await;
    }
}

/// Has the writer thread run `batch`, holding the sqlx writer meanwhile, so the two never
/// write at once (the other would wait for SQLite's lock, sleeping in its busy handler).
async fn run_batch(
    writer: &AnyPool,
    thread: &std::sync::mpsc::Sender<ThreadOrder>,
    batch: Vec<Job>,
) {
    if batch.is_empty() {
        return;
    }
    let held = match writer.acquire().await {
        Ok(held) => held,
        Err(err) => {
            let err = Error::from(err);
            for job in batch {
                job.answer.send(Err(same_failure(&err)));
            }
            return;
        }
    };
    // A caller that stopped waiting before its work reached the writer (a client that hung
    // up while queued) leaves nothing: its work is dropped unrun, so a crowd of such
    // callers does not hold the writer from those still waiting. Once handed to the
    // thread, work runs to its end whoever waits.
    let batch: Vec<Job> = batch
        .into_iter()
        .filter(|job| !job.answer.reply.is_closed())
        .collect();
    if !batch.is_empty() {
        order(thread, batch, false).await;
    }
    drop(held);
}

/// Sends the thread an order and waits until it is carried out. A thread that has
/// stopped drops the jobs, and their callers hear "stopped".
async fn order(thread: &std::sync::mpsc::Sender<ThreadOrder>, jobs: Vec<Job>, close: bool) {
    let (done, finished) = oneshot::channel();
    if thread.send(ThreadOrder { jobs, close, done }).is_ok() {
        let _ = finished.await;
    }
}

fn writer_thread(
    file: &std::path::Path,
    orders: &std::sync::mpsc::Receiver<ThreadOrder>,
    checkpointer: &Checkpointer,
) {
    let mut conn: Option<rusqlite::Connection> = None;
    let mut faults_seen = storage_faults();
    while let Ok(ThreadOrder { jobs, close, done }) = orders.recv() {
        if close {
            conn = None;
            checkpointer.close();
            let _ = done.send(());
            continue;
        }
        // A storage fault anywhere in the process since the last batch: start afresh, as
        // the pools do (`release_check`).
        let faults = storage_faults();
        if faults != faults_seen {
            conn = None;
            faults_seen = faults;
        }
        let conn_now = match conn.take() {
            Some(open) => Ok(open),
            None => sqlite_conn::open(file).inspect(checkpoint::watch),
        };
        match conn_now {
            Ok(mut open) => {
                if commit_batch(&mut open, jobs) {
                    faults_seen = storage_faults();
                } else {
                    checkpointer.committed(&open);
                    conn = Some(open);
                }
            }
            Err(err) => {
                for job in jobs {
                    job.answer.send(Err(same_failure(&err)));
                }
            }
        }
        let _ = done.send(());
    }
}

/// Runs and commits one batch, answering every job in it; whether it met a storage fault
/// (the connection is then replaced).
fn commit_batch(conn: &mut rusqlite::Connection, jobs: Vec<Job>) -> bool {
    if let Err(err) = control(conn, "BEGIN IMMEDIATE") {
        let err = Error::from(err);
        for job in jobs {
            job.answer.send(Err(same_failure(&err)));
        }
        return matches!(err, Error::Unavailable(_));
    }
    let mut done: Vec<(Answer, Result<Erased>)> = Vec::with_capacity(jobs.len());
    let mut jobs = jobs.into_iter();
    let mut fault = false;
    for job in jobs.by_ref() {
        let outcome = match job.undo {
            Undo::Savepoint => run_in_savepoint(conn, job.work),
            Undo::SingleStatement => (job.work)(conn),
        };
        // A storage fault (full, I/O, read-only) is "unavailable".
        fault = matches!(outcome, Err(Error::Unavailable(_)));
        done.push((job.answer, outcome));
        if fault {
            break;
        }
    }
    if fault {
        // SQLite may have ended the transaction itself: nothing of the batch is kept.
        roll_back(conn);
        let fault = Error::Unavailable("database storage fault".into());
        for (answer, _) in done {
            answer.send(Err(same_failure(&fault)));
        }
        for job in jobs {
            job.answer.send(Err(same_failure(&fault)));
        }
        return true;
    }
    match control(conn, "COMMIT") {
        Ok(()) => {
            for (answer, outcome) in done {
                answer.send(outcome);
            }
            false
        }
        Err(err) => {
            // A failed commit (a deferred constraint, a full disk) leaves the transaction
            // open: nothing of the batch is kept.
            let err = Error::from(err);
            roll_back(conn);
            for (answer, outcome) in done {
                answer.send(outcome.and_then(|_| Err(same_failure(&err))));
            }
            matches!(err, Error::Unavailable(_))
        }
    }
}

fn roll_back(conn: &rusqlite::Connection) {
    if !conn.is_autocommit() {
        // A failed rollback leaves a connection that is replaced anyway (a fault).
        let _ = control(conn, "ROLLBACK");
    }
}

/// Runs one piece of work inside a savepoint, rolled back if it fails.
fn run_in_savepoint(conn: &mut rusqlite::Connection, work: ErasedWork) -> Result<Erased> {
    control(conn, "SAVEPOINT piece")?;
    match work(conn) {
        Ok(value) => {
            control(conn, "RELEASE piece")?;
            Ok(value)
        }
        Err(err) => {
            // A failed rollback leaves the savepoint for the transaction's own end.
            let _ =
                control(conn, "ROLLBACK TO piece").and_then(|()| control(conn, "RELEASE piece"));
            Err(err)
        }
    }
}

/// Runs a transaction-control statement, compiled once per connection (they run a few
/// times per batch).
fn control(conn: &rusqlite::Connection, sql: &'static str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.raw_execute()?;
    Ok(())
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
    use crate::platform::db::write::{Arg, WriteConn};
    use sqlx::Executor;
    use sqlx::any::{AnyPoolOptions, install_default_drivers};

    /// A fresh SQLite file with a table `t`, in a folder of its own (the test removes
    /// it), and the single-connection writer pool on it: (folder, file, pool).
    async fn writer_pool() -> (PathBuf, PathBuf, AnyPool) {
        let dir =
            std::env::temp_dir().join(format!("langcamp-group-{}", crate::domain::id::new_id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let file = dir.join("group.db");
        install_default_drivers();
        let url = format!("sqlite://{}?mode=rwc", file.display());
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
        (dir, file, pool)
    }

    /// Inserts `id` into `t`, then fails if told to.
    struct Insert {
        id: i64,
        then_fail: bool,
    }

    impl Write for Insert {
        type Output = i64;

        async fn run<C: WriteConn>(self, conn: &mut C) -> Result<i64> {
            conn.exec("INSERT INTO t (id) VALUES ($1)", &[Arg::Int(self.id)])
                .await?;
            if self.then_fail {
                return Err(Error::invalid("refused after writing"));
            }
            Ok(self.id)
        }
    }

    /// Inserts a child row whose parent does not exist (refused at the commit).
    struct Orphan;

    impl Write for Orphan {
        type Output = ();

        async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
            conn.exec("INSERT INTO child (id, parent) VALUES (1, 999)", &[])
                .await?;
            Ok(())
        }
    }

    #[tokio::test]
    async fn waiting_writes_share_a_commit_and_a_failure_undoes_only_its_own() {
        let (dir, file, pool) = writer_pool().await;
        let group = GroupCommit::start(file, pool.clone()).expect("the writer thread");

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
            let work = Insert {
                id: id_written,
                then_fail: id == 13,
            };
            waiting.push(tokio::spawn(
                async move { group.write(undo, work, None).await },
            ));
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
        assert!(
            matches!(answers[26], Err(Error::Conflict(_))),
            "the duplicate is refused: {:?}",
            answers[26]
        );

        let rows: Vec<i64> = sqlx::query_scalar("SELECT id FROM t ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("rows");
        let expected: Vec<i64> = (1..=40).filter(|id| *id != 13 && *id != 27).collect();
        assert_eq!(rows, expected, "13's own insert was undone, nobody else's");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[tokio::test]
    async fn work_whose_caller_left_before_the_writer_took_it_is_not_run() {
        let (dir, file, pool) = writer_pool().await;
        let group = GroupCommit::start(file, pool.clone()).expect("the writer thread");

        // Both writes queue behind the held writer; the first caller then stops waiting.
        let blocker = pool.begin().await.expect("the writer");
        let insert = |id| {
            let group = group.clone();
            let work = Insert {
                id,
                then_fail: false,
            };
            tokio::spawn(async move { group.write(Undo::SingleStatement, work, None).await })
        };
        let (left, stayed) = (insert(1), insert(2));
        tokio::task::yield_now().await;
        left.abort();
        assert!(left.await.expect_err("aborted").is_cancelled());
        drop(blocker);

        assert_eq!(stayed.await.expect("no panic").expect("written"), 2);
        let rows: Vec<i64> = sqlx::query_scalar("SELECT id FROM t ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("rows");
        assert_eq!(rows, vec![2], "the write nobody waited for left nothing");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Appends 100 kB to `big`.
    struct Big;

    impl Write for Big {
        type Output = ();

        async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
            conn.exec("INSERT INTO big (b) VALUES (zeroblob(100000))", &[])
                .await?;
            Ok(())
        }
    }

    #[tokio::test]
    async fn the_log_is_copied_into_the_database_beside_the_writes_not_by_them() {
        let (dir, file, pool) = writer_pool().await;
        pool.execute("CREATE TABLE big (b BLOB)")
            .await
            .expect("a table");
        let group = GroupCommit::start(file.clone(), pool.clone()).expect("the writer thread");
        let size = || std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        let before = size();
        // 8 MB through the writer: twice the log's length that asks for a checkpoint, an
        // eighth of the one at which the writer would checkpoint itself.
        for _ in 0..80 {
            group
                .write(Undo::SingleStatement, Big, None)
                .await
                .expect("written");
        }
        // Only a checkpoint writes the database file itself; the checkpoint thread does.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while size() < before + 4_000_000 {
            assert!(
                std::time::Instant::now() < deadline,
                "no checkpoint: the file is {} bytes",
                size()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let written: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM big")
            .fetch_one(&pool)
            .await
            .expect("a count");
        assert_eq!(written, 80);
        group.close().await;
        std::fs::remove_dir_all(&dir).ok();
    }

    #[tokio::test]
    async fn a_failed_commit_fails_every_write_of_the_batch() {
        let (dir, file, pool) = writer_pool().await;
        // A deferred foreign key is checked at the commit: the batch cannot commit.
        pool.execute(
            "CREATE TABLE child (id BIGINT PRIMARY KEY,
                 parent BIGINT REFERENCES t(id) DEFERRABLE INITIALLY DEFERRED)",
        )
        .await
        .expect("a child table");
        let group = GroupCommit::start(file, pool.clone()).expect("the writer thread");
        let orphan = group.write(Undo::SingleStatement, Orphan, None);
        assert!(orphan.await.is_err(), "the commit failed, so the write did");
        let children: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM child")
            .fetch_one(&pool)
            .await
            .expect("a count");
        assert_eq!(children, 0);
        // The thread rolled the failed batch back: the next write goes through.
        let next = group.write(
            Undo::SingleStatement,
            Insert {
                id: 7,
                then_fail: false,
            },
            None,
        );
        assert_eq!(next.await.expect("a later write"), 7);
        std::fs::remove_dir_all(&dir).ok();
    }
}
