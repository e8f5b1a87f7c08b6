//! A statement on one row named by its id, shared by the areas' stores. A malformed id
//! names no row: it is never sent to the database, and never opens a write transaction.

use sqlx::AnyConnection;
use sqlx::any::AnyRow;

use crate::domain::error::Result;
use crate::domain::id::looks_like_id;

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
