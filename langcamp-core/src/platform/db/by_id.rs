//! A statement on one row named by its id, shared by the areas' stores. A malformed id
//! names no row: it is never sent to the database, and never opens a write transaction.

use super::WriteConn;
use crate::domain::error::Result;
use crate::domain::id::looks_like_id;

/// The row that `select` (`SELECT ... WHERE id = $1`) reads for `id`, if any, on any
/// connection (a pooled one, a transaction, a piece of write work's).
pub(crate) async fn find<C: WriteConn>(
    conn: &mut C,
    select: &'static str,
    id: &str,
) -> Result<Option<C::Row>> {
    if !looks_like_id(id) {
        return Ok(None);
    }
    conn.fetch_first(select, &[super::Arg::Text(id)]).await
}
