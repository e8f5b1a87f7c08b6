//! Checkpoints of SQLite's write-ahead log, off the writer thread.
//!
//! A commit appends the pages it changed to the log; a checkpoint copies them back into
//! the database file (and syncs both), so the log can start over. By default the
//! connection that commits does it, inside that commit, once the log holds 1,000 pages:
//! on the writer thread, every write of the process waited for it (its copying and its
//! two syncs), measured at a seventh of that thread's time on submissions and more in
//! waits. Here the writer thread only says when the log has grown past that size, and a
//! thread of its own checkpoints on a connection of its own, beside the writes (a
//! `PASSIVE` checkpoint takes no lock a writer or reader waits for).
//!
//! Should that thread fall far behind (a checkpoint that fails, a stalled disk), the writer
//! thread checkpoints itself once the log is [`WRITER_CHECKPOINTS_AT`] pages long, as it did
//! before, so the log never grows without bound.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use super::sqlite_conn;
use crate::domain::error::Result;

/// The log's length, in pages, from which a commit asks for a checkpoint (SQLite's own
/// `wal_autocheckpoint` default).
const CHECKPOINT_AT: i32 = 1000;

/// The log's length from which the writer thread checkpoints itself.
const WRITER_CHECKPOINTS_AT: i32 = 16 * CHECKPOINT_AT;

enum Order {
    Checkpoint,
    /// Let go of the database file (answered once the connection is closed).
    Close(SyncSender<()>),
}

/// The handle the writer thread holds.
pub(super) struct Checkpointer {
    orders: SyncSender<Order>,
}

thread_local! {
    /// The log's length after this thread's last commit, as SQLite reported it
    /// ([`watch`]); each writer thread has its own.
    static LOG_PAGES: Cell<i32> = const { Cell::new(0) };
}

/// Has `conn`'s commits report the log's length to [`Checkpointer::committed`] instead of
/// checkpointing themselves (a log hook replaces SQLite's automatic checkpoint).
pub(super) fn watch(conn: &rusqlite::Connection) {
    fn note(_wal: &rusqlite::hooks::Wal, pages: std::ffi::c_int) -> rusqlite::Result<()> {
        LOG_PAGES.set(pages);
        Ok(())
    }
    conn.wal_hook(Some(note));
}

impl Checkpointer {
    /// Starts the checkpoint thread on the database `file`; it ends when the handle is
    /// dropped.
    pub(super) fn start(file: PathBuf) -> std::io::Result<Checkpointer> {
        // One order waiting is enough: a checkpoint copies whatever the log holds then.
        let (orders, received) = sync_channel(1);
        std::thread::Builder::new()
            .name("sqlite-checkpoint".into())
            .spawn(move || checkpoint_thread(&file, &received))?;
        Ok(Checkpointer { orders })
    }

    /// After a commit on the writer thread's connection: asks for a checkpoint once the
    /// log is long enough, or checkpoints on `conn` itself when it is far too long.
    pub(super) fn committed(&self, conn: &rusqlite::Connection) {
        let pages = LOG_PAGES.get();
        if pages >= WRITER_CHECKPOINTS_AT {
            if let Err(e) = checkpoint(conn) {
                tracing::warn!(error = %e, pages, "the writer's own checkpoint failed");
            }
        } else if pages >= CHECKPOINT_AT {
            match self.orders.try_send(Order::Checkpoint) {
                // Full: one is asked for already.
                Ok(()) | Err(TrySendError::Full(_)) => {}
                Err(TrySendError::Disconnected(_)) => {
                    tracing::warn!("the checkpoint thread has stopped");
                }
            }
        }
    }

    /// Closes the thread's connection (the database is being let go of).
    pub(super) fn close(&self) {
        let (done, closed) = sync_channel(1);
        if self.orders.send(Order::Close(done)).is_ok() {
            let _ = closed.recv();
        }
    }
}

fn checkpoint_thread(file: &Path, orders: &Receiver<Order>) {
    let mut conn: Option<rusqlite::Connection> = None;
    while let Ok(order) = orders.recv() {
        match order {
            Order::Close(done) => {
                conn = None;
                let _ = done.send(());
            }
            Order::Checkpoint => {
                let done = match conn.take() {
                    Some(open) => Ok(open),
                    None => sqlite_conn::open(file),
                }
                .and_then(|open| checkpoint(&open).map(|()| open));
                match done {
                    Ok(open) => conn = Some(open),
                    // A fault: the next checkpoint opens a new connection.
                    Err(e) => tracing::warn!(error = %e, "a checkpoint failed; will retry"),
                }
            }
        }
    }
}

/// Copies what the log holds into the database file, as far as no reader still needs it.
fn checkpoint(conn: &rusqlite::Connection) -> Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
    Ok(())
}
