//! Building blocks of list queries shared by the resource stores: a list's filter is
//! written once for its count and its page, and the child rows of a page are loaded by the
//! page's ids (one query per child table), never per parent and never by running the
//! page's filter again.

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
