//! Statements on one row named by its id, shared by the resource stores. A malformed id
//! names no row: it is never sent to the database, and never opens a write transaction.

use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::Langcamp;
use crate::actor::Actor;
use crate::audit::{self, Entry, Target};
use crate::changes::Change;
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
    /// <a label>`) in a write transaction of its own, recording `action` on a `target` of
    /// that kind by `actor` in the audit trail; `not_found` when there is no such row.
    /// `change` names what the caches must forget, for rows that a cache holds.
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
        let mut tx = self.db().begin().await?;
        // Read with fetch_optional: RETURNING read with fetch_one would leave the
        // statement open and hold SQLite's write lock (ARCHITECTURE, SQLite write rule b).
        let Some(row) = sqlx::query(delete)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Err(not_found());
        };
        let label: String = sqlx::Row::try_get(&row, 0)?;
        let entry = Entry::new(action, Target::record(target, id, label));
        audit::record(&mut tx, self, actor, entry).await?;
        match change {
            Some(change) => self.commit_change(tx, change).await?,
            None => tx.commit().await?,
        }
        Ok(Deleted {
            id: id.to_owned(),
            deleted: true,
        })
    }
}
