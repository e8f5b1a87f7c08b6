//! Statements on one row named by its id, shared by the resource stores. A malformed id
//! names no row: it is never sent to the database, and never opens a write transaction.

use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::Langcamp;
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
    /// Deletes the row of `id` with `delete` (`DELETE FROM ... WHERE id = $1`) in a write
    /// transaction of its own; `not_found` when there is no such row. `change` names what
    /// the caches must forget, for rows that a cache holds.
    pub(crate) async fn delete_by_id(
        &self,
        id: &str,
        delete: &'static str,
        not_found: fn() -> Error,
        change: Option<Change>,
    ) -> Result<Deleted> {
        if !looks_like_id(id) {
            return Err(not_found());
        }
        let mut tx = self.db().begin().await?;
        let deleted = sqlx::query(delete)
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if deleted == 0 {
            return Err(not_found());
        }
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
