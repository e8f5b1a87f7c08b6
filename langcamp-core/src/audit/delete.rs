//! A staff delete by id with its audit entry, as one piece of write work: shared by the
//! areas whose records are deleted by id (courses, contacts, results).

use crate::Langcamp;
use crate::audit::{self, Entry, Target};
use crate::domain::Deleted;
use crate::domain::actor::Actor;
use crate::domain::error::{Error, Result};
use crate::domain::id::looks_like_id;
use crate::platform::changes::Change;
use crate::platform::db::{Arg, Row as _, Write, WriteConn};

impl Langcamp {
    /// Deletes the row of `id` with `delete` (`DELETE FROM ... WHERE id = $1 RETURNING
    /// <a name of the row> AS label`) as one piece of write work with its audit entry:
    /// `action` on a `target` of that kind by `actor`; `not_found` when there is no such
    /// row. `change` names what the caches must forget, for rows that a cache holds.
    pub(crate) async fn delete_by_id(
        &self,
        actor: &Actor,
        (action, target): (&'static str, &'static str),
        id: &str,
        delete: &'static str,
        not_found: fn() -> Error,
        change: Option<Change>,
    ) -> Result<Deleted> {
        if !looks_like_id(id) {
            return Err(not_found());
        }
        let work = DeleteById {
            app: self.clone(),
            actor: actor.clone(),
            action,
            target,
            id: id.to_owned(),
            delete,
            not_found,
            change: change.clone(),
        };
        self.write_change(work, change).await?;
        Ok(Deleted {
            id: id.to_owned(),
            deleted: true,
        })
    }
}

/// The piece of work of [`Langcamp::delete_by_id`].
struct DeleteById {
    app: Langcamp,
    actor: Actor,
    action: &'static str,
    target: &'static str,
    id: String,
    delete: &'static str,
    not_found: fn() -> Error,
    change: Option<Change>,
}

impl Write for DeleteById {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
        let Some(row) = conn
            .fetch_first(self.delete, &[Arg::Text(&self.id)])
            .await?
        else {
            return Err((self.not_found)());
        };
        let target = Target::record(self.target, &self.id, row.text("label")?);
        let entry = Entry::new(self.action, target);
        audit::record(conn, &self.app, &self.actor, entry).await?;
        if let Some(change) = &self.change {
            self.app.announce(conn, change).await?;
        }
        Ok(())
    }
}
