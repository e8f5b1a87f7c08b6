//! Statements on one row named by its id, shared by the resource stores. A malformed id
//! names no row: it is never sent to the database, and never opens a write transaction.

use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::Langcamp;
use crate::actor::Actor;
use crate::audit::{self, Entry, Target};
use crate::changes::Change;
use crate::db::{Arg, Row as _, Write, WriteConn};
use crate::error::{Error, Result};
use crate::id::looks_like_id;
use crate::users::Deleted;

/// The row that `select` (`SELECT ... WHERE id = $1`) reads for `id`, if any.
pub(crate) async fn find(
    conn: &mut AnyConnection,
    select: &'static str,
    id: &str,
) -> Result<Option<AnyRow>> {
    if !looks_like_id(id) {
        return Ok(None);
    }
    Ok(sqlx::query(select).bind(id).fetch_optional(conn).await?)
}

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
