//! Building blocks of list queries shared by the resource stores: a list's filter is
//! written once for its count and its page, and the child rows of a page are loaded by the
//! page's ids (one query per child table), never per parent and never by running the
//! page's filter again.

use sqlx::any::{AnyArguments, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, Row};

use crate::domain::page::PageRequest;

/// The two statements of a paged list, written with the same filter: `count` is
/// `SELECT COUNT(*) ...`, `page` selects the columns and ends with
/// `ORDER BY ... LIMIT $n OFFSET $n+1`, `$n` following the filter's parameters.
pub(crate) struct ListSql {
    pub(crate) count: &'static str,
    pub(crate) page: &'static str,
}

/// A statement with some of its parameters bound.
pub(crate) type Bound<'q> = Query<'q, Any, AnyArguments>;

impl ListSql {
    /// The number of rows matching and the rows of `page`; `filter` binds the filter's
    /// parameters, to both statements. A page past the end is empty without asking for it.
    pub(crate) async fn fetch<'q>(
        &self,
        conn: &mut AnyConnection,
        page: PageRequest,
        filter: impl Fn(Bound<'q>) -> Bound<'q>,
    ) -> Result<(i64, Vec<AnyRow>), sqlx::Error> {
        let total: i64 = filter(sqlx::query(self.count))
            .fetch_one(&mut *conn)
            .await?
            .try_get(0)?;
        if page.offset() >= total {
            return Ok((total, Vec::new()));
        }
        let rows = filter(sqlx::query(self.page))
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(&mut *conn)
            .await?;
        Ok((total, rows))
    }
}

/// One chunk of an export, read by key rather than by offset so that each chunk costs the
/// same however far the export has gone: `query` has its filter's parameters bound and
/// ends with `(key, id) < ($n, $n+1) ORDER BY key DESC, id DESC LIMIT $n+2` (or the
/// ascending form), `$n` following them; the rows after `after`, `limit` of them.
pub(crate) async fn chunk_after<'q>(
    conn: &mut AnyConnection,
    query: Bound<'q>,
    after: (i64, &'q str),
    limit: i64,
) -> Result<Vec<AnyRow>, sqlx::Error> {
    query
        .bind(after.0)
        .bind(after.1)
        .bind(limit)
        .fetch_all(conn)
        .await
}

/// `$first, $first+1, ...`: `count` placeholders for an `IN (...)` list of ids.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `head` + `IN ($1, ...)` over `ids` + `tail`, with the ids bound: the child rows of the
/// parents named by `ids`.
pub(crate) async fn rows_of<S: AsRef<str>>(
    conn: &mut sqlx::AnyConnection,
    head: &'static str,
    ids: &[S],
    tail: &'static str,
) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // Made of the caller's constant SQL and numbered placeholders only; the ids are bound.
    let sql = format!("{head} IN ({}) {tail}", placeholders(1, ids.len()));
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for id in ids {
        query = query.bind(id.as_ref());
    }
    query.fetch_all(conn).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_count_from_the_first() {
        assert_eq!(placeholders(1, 3), "$1, $2, $3");
        assert_eq!(placeholders(4, 1), "$4");
        assert_eq!(placeholders(1, 0), "");
    }
}
