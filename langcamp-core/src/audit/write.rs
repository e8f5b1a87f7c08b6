//! A staff write as one piece of write work: the area's own work (the change, and the
//! entry that records it), then the entry and the change notice, in the same piece. On
//! SQLite it joins the group commit in a savepoint of its own; on PostgreSQL it is a
//! transaction of its own. The area writes only [`StaffWrite`]: no staff piece can leave
//! out its entry or its notice.

use std::future::Future;

use super::{Entry, record};
use crate::Langcamp;
use crate::domain::actor::Actor;
use crate::domain::error::Result;
use crate::platform::changes::Change;
use crate::platform::db::{Write, WriteConn};

/// Who writes, through which handle, and when (the time the operation started, which its
/// rows carry).
pub(crate) struct Staff {
    pub app: Langcamp,
    pub actor: Actor,
    pub now: i64,
}

/// The entries that record a staff write: one, or more when one write changes several
/// records (an import of mail templates). Never none: a staff write without an entry does
/// not compile.
#[derive(Debug)]
pub(crate) struct Entries {
    first: Entry,
    more: Vec<Entry>,
}

impl Entries {
    /// These entries and `entry` after them.
    pub fn and(mut self, entry: Entry) -> Entries {
        self.more.push(entry);
        self
    }
}

impl From<Entry> for Entries {
    fn from(first: Entry) -> Entries {
        Entries {
            first,
            more: Vec::new(),
        }
    }
}

/// The work of a staff write: a few statements on `conn`, with the reading, checking and
/// composing that need nothing but the connection. It answers its output and the entries
/// that record it; [`Langcamp::staff_write`] writes them after it. Every write of staff to
/// the school's records is one: the only other ways to write an entry are an action that
/// writes nothing else ([`Langcamp::record_alone`]), a transaction committed with its
/// entry ([`Langcamp::commit_recorded`]) and a user's action on their own account
/// ([`super::record_own`]).
pub(crate) trait StaffWrite: Send + 'static {
    type Output: Send + 'static;

    fn run<C: WriteConn>(
        self,
        conn: &mut C,
        by: &Staff,
    ) -> impl Future<Output = Result<(Self::Output, Entries)>> + Send;
}

impl Langcamp {
    /// Runs `work` as `actor`'s staff write, through [`Langcamp::write_change`]: the work,
    /// its audit entry and, when the caches hold what it changed, `change` announced, in one
    /// piece; then `change` forgotten in this process.
    pub(crate) async fn staff_write<W: StaffWrite>(
        &self,
        actor: &Actor,
        work: W,
        change: Option<Change>,
    ) -> Result<W::Output> {
        let piece = Recorded {
            by: Staff {
                app: self.clone(),
                actor: actor.clone(),
                now: self.clock().now_ms(),
            },
            work,
            change: change.clone(),
        };
        self.write_change(piece, change).await
    }
}

/// The piece of [`Langcamp::staff_write`].
struct Recorded<W> {
    by: Staff,
    work: W,
    change: Option<Change>,
}

impl<W: StaffWrite> Write for Recorded<W> {
    type Output = W::Output;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<W::Output> {
        let (output, entries) = self.work.run(conn, &self.by).await?;
        for entry in std::iter::once(entries.first).chain(entries.more) {
            record(conn, &self.by.app, &self.by.actor, entry).await?;
        }
        if let Some(change) = &self.change {
            self.by.app.announce(conn, change).await?;
        }
        Ok(output)
    }
}
