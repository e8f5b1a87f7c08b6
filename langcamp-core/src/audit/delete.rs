//! A staff delete by id with its audit entry, as one piece of write work: shared by the
//! areas whose records are deleted by id (courses, contacts, results).

use crate::Langcamp;
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::Deleted;
use crate::domain::actor::Actor;
use crate::domain::error::{Error, Result};
use crate::domain::id::looks_like_id;
use crate::platform::changes::Change;
use crate::platform::db::{Arg, Row as _, WriteConn};

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
            action,
            target,
            id: id.to_owned(),
            delete,
            not_found,
        };
        self.staff_write(actor, work, change).await?;
        Ok(Deleted {
            id: id.to_owned(),
            deleted: true,
        })
    }
}

/// The work of [`Langcamp::delete_by_id`].
struct DeleteById {
    action: &'static str,
    target: &'static str,
    id: String,
    delete: &'static str,
    not_found: fn() -> Error,
}

impl StaffWrite for DeleteById {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        let Some(row) = conn
            .fetch_first(self.delete, &[Arg::Text(&self.id)])
            .await?
        else {
            return Err((self.not_found)());
        };
        let target = Target::record(self.target, &self.id, row.text("label")?);
        Ok(((), Entry::new(self.action, target).into()))
    }
}
