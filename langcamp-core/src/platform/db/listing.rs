//! Building blocks of list queries shared by the resource stores: a list's filter is
//! written once for its count and its page, and the child rows of a page are loaded by the
//! page's ids (one query per child table), never per parent and never by running the
//! page's filter again.
//!
//! At ten million rows (issue #54) a list must be answered from an index whatever its
//! filters, so:
//! * its SQL is built for the filters actually given ([`Conditions`]): a condition
//!   `($1 IS NULL OR col = $1)` leaves a prepared statement's generic plan no index to use;
//! * a page is found by its keys first, from an index alone, then its rows are read by
//!   those keys ([`page_by_keys`]): page 500 skips 10,000 index entries, not 10,000 rows;
//! * its total comes from a count the database's triggers keep (the stores know which), or
//!   from an index, never from a scan of the table.

use sqlx::any::{AnyArguments, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyConnection, AssertSqlSafe, Row};

use crate::domain::page::PageRequest;
use crate::platform::db::search_index::SearchIndex;

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

/// A value bound to a list query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Text(String),
    Int(i64),
}

/// The `WHERE` conditions of a list query, built for the filters given: each condition
/// is SQL with one `?` for its value, numbered `$1`, `$2`, ... in order. Built once, used
/// for the total and the page alike.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conditions {
    sql: Vec<String>,
    values: Vec<Value>,
}

impl Conditions {
    /// `condition` (SQL with one `?`) with `value`, when there is a value.
    pub(crate) fn and(&mut self, condition: &str, value: Option<Value>) -> &mut Conditions {
        if let Some(value) = value {
            self.values.push(value);
            let n = self.values.len();
            // Every `?` of the condition is this value.
            self.sql.push(condition.replace('?', &format!("${n}")));
        }
        self
    }

    /// `condition` with the text `value`, when there is one.
    pub(crate) fn and_text(&mut self, condition: &str, value: Option<&str>) -> &mut Conditions {
        self.and(condition, value.map(|v| Value::Text(v.to_owned())))
    }

    /// `condition` with the number `value`, when there is one.
    pub(crate) fn and_int(&mut self, condition: &str, value: Option<i64>) -> &mut Conditions {
        self.and(condition, value.map(Value::Int))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sql.is_empty()
    }

    /// ` WHERE a AND b` (with a leading space), or nothing without conditions.
    pub(crate) fn where_clause(&self) -> String {
        if self.sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.sql.join(" AND "))
        }
    }

    /// The number of the next placeholder after the conditions' own.
    pub(crate) fn next(&self) -> usize {
        self.values.len() + 1
    }

    /// `query` with the conditions' values bound, in order.
    pub(crate) fn bind<'q>(&'q self, query: Bound<'q>) -> Bound<'q> {
        self.values.iter().fold(query, |query, value| match value {
            Value::Text(text) => query.bind(text.as_str()),
            Value::Int(n) => query.bind(*n),
        })
    }

    /// `SELECT COUNT(*) FROM {from}` under the conditions: a total counted in an index
    /// (the stores use it where the conditions name an indexed column that narrows).
    pub(crate) async fn count(
        &self,
        conn: &mut AnyConnection,
        from: &str,
    ) -> Result<i64, sqlx::Error> {
        // Made of the caller's constant SQL and numbered placeholders only.
        let sql = format!("SELECT COUNT(*) FROM {from}{}", self.where_clause());
        self.bind(sqlx::query(AssertSqlSafe(sql)))
            .fetch_one(conn)
            .await?
            .try_get(0)
    }
}

/// The counts the database's triggers keep in `stats_counts` (migrations 0060, 0080, 0150)
/// whose names start with `prefix`, by name: on PostgreSQL a count is kept in up to 8 rows
/// (shards), summed here.
pub(crate) async fn counts(
    conn: &mut AnyConnection,
    prefix: &str,
) -> Result<std::collections::HashMap<String, i64>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT name, CAST(SUM(n) AS BIGINT) AS n FROM stats_counts WHERE name LIKE $1
         GROUP BY name",
    )
    // The names are dotted words: no `%` or `_` of their own.
    .bind(format!("{prefix}%"))
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("name")?, row.try_get("n")?)))
        .collect()
}

/// Where a list finds a row by a fragment of its text (`q`): a case-insensitive substring
/// of the row's searched text, its fields apart (a fragment never spans two of them).
pub(crate) struct Search {
    /// The searched text of a row, lower case, as PostgreSQL's trigram index on it has it
    /// (migration 0150): `LIKE '%fragment%'` on it is answered from that index.
    pub(crate) postgres: &'static str,
    /// SQLite: the FTS5 trigram table (migration 0150) that answers `LIKE` from its index,
    /// filled in the background (migration 0190); its text, read row by row for a fragment
    /// with `%`, `_` or `\` (the FTS table knows no `ESCAPE`).
    pub(crate) sqlite: SearchIndex,
}

impl Conditions {
    /// That `fragment` (trimmed, never empty) is in the searched text of `search`.
    pub(crate) fn and_search(
        &mut self,
        backend: super::Backend,
        search: &Search,
        fragment: Option<&str>,
    ) -> &mut Conditions {
        let Some(fragment) = fragment else {
            return self;
        };
        let escaped = like_pattern(fragment);
        match backend {
            super::Backend::Postgres => {
                // Backslash is PostgreSQL's default LIKE escape, which pg_trgm honours.
                let condition = format!("{} LIKE ?", search.postgres);
                self.and_text(&condition, Some(&escaped))
            }
            super::Backend::Sqlite if !fragment.contains(['%', '_', '\\']) => {
                // Nothing to escape: the FTS table's index answers it (and the rows not
                // indexed yet are read).
                self.and_text(&search.sqlite.condition(), Some(&escaped))
            }
            super::Backend::Sqlite => {
                let condition = format!("{} LIKE ? ESCAPE '\\'", search.sqlite.text);
                self.and_text(&condition, Some(&escaped))
            }
        }
    }
}

/// Escapes `%`, `_` and `\` for a `LIKE` pattern (`\` the escape) and wraps the text, in
/// lower case, in `%`.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// The most matches of a search whose keys [`Paged::search_page`] reads at once: a search
/// narrow enough to be worth typing matches far fewer, and a broader one is counted.
pub(crate) const SEARCH_KEYS_AT_ONCE: i64 = 1000;

/// What a paged list reads: `select` (`SELECT <columns> FROM <table> [CROSS JOIN ...]`)
/// the rows of the keys `key` found in `from`, ordered by `order` (unique: it ends with
/// the key); `joined` is the condition of `select`'s join, if it has one.
pub(crate) struct Paged {
    pub(crate) select: &'static str,
    pub(crate) joined: Option<&'static str>,
    pub(crate) from: &'static str,
    pub(crate) key: &'static str,
    pub(crate) order: &'static str,
}

impl Paged {
    /// The rows of `page` under `conditions` (of `total`: a page past it is empty without
    /// asking). The page's keys are found first, by `order` and the conditions alone (an
    /// index holding the order's columns and the key answers it without reading a row),
    /// then the page's rows by those keys.
    pub(crate) async fn page_by_keys(
        &self,
        conn: &mut AnyConnection,
        conditions: &Conditions,
        page: PageRequest,
        total: i64,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        if page.offset() >= total {
            return Ok(Vec::new());
        }
        let (limit, offset) = (conditions.next(), conditions.next() + 1);
        let Paged {
            select,
            joined,
            from,
            key,
            order,
        } = self;
        let joined = joined.map(|on| format!("{on} AND ")).unwrap_or_default();
        // Made of the store's constant SQL and numbered placeholders only.
        let sql = format!(
            "{select} WHERE {joined}{key} IN (SELECT {key} FROM {from}{} ORDER BY {order} LIMIT ${limit} OFFSET ${offset}) ORDER BY {order}",
            conditions.where_clause()
        );
        conditions
            .bind(sqlx::query(AssertSqlSafe(sql)))
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(conn)
            .await
    }

    /// A page of a search (`q`) under `conditions` and its total, from one reading of the
    /// search index: the keys of every match, in `order`, when there are at most
    /// [`SEARCH_KEYS_AT_ONCE`] of them (the total is their number, the page's rows are then
    /// read by key); otherwise the count and the page as under any filter. A trigram search
    /// spends its time in the index (a fragment's common trigrams are checked for every
    /// candidate row), so reading the index once rather than twice halves a search.
    pub(crate) async fn search_page(
        &self,
        conn: &mut AnyConnection,
        conditions: &Conditions,
        page: PageRequest,
    ) -> Result<(Vec<AnyRow>, i64), sqlx::Error> {
        let Paged {
            select,
            joined,
            from,
            key,
            order,
        } = self;
        // Made of the store's constant SQL and numbered placeholders only.
        let sql = format!(
            "SELECT {key} FROM {from}{} ORDER BY {order} LIMIT ${}",
            conditions.where_clause(),
            conditions.next()
        );
        let keys: Vec<String> = conditions
            .bind(sqlx::query(AssertSqlSafe(sql)))
            .bind(SEARCH_KEYS_AT_ONCE + 1)
            .fetch_all(&mut *conn)
            .await?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()?;
        let matched = i64::try_from(keys.len()).unwrap_or(i64::MAX);
        if matched > SEARCH_KEYS_AT_ONCE {
            let total = conditions.count(conn, from).await?;
            let rows = self.page_by_keys(conn, conditions, page, total).await?;
            return Ok((rows, total));
        }
        let start = usize::try_from(page.offset())
            .unwrap_or(usize::MAX)
            .min(keys.len());
        let end = start
            .saturating_add(usize::try_from(page.limit()).unwrap_or(usize::MAX))
            .min(keys.len());
        let keys = &keys[start..end];
        if keys.is_empty() {
            return Ok((Vec::new(), matched));
        }
        let joined = joined.map(|on| format!("{on} AND ")).unwrap_or_default();
        // Made of the store's constant SQL and numbered placeholders only; the keys are
        // bound.
        let sql = format!(
            "{select} WHERE {joined}{key} IN ({}) ORDER BY {order}",
            placeholders(1, keys.len())
        );
        let rows = keys
            .iter()
            .fold(sqlx::query(AssertSqlSafe(sql)), |query, key| {
                query.bind(key.as_str())
            })
            .fetch_all(conn)
            .await?;
        Ok((rows, matched))
    }

    /// One chunk of an export under `conditions`: the rows whose order comes after `after`
    /// (`position` compares them: `(created_at, id) <` for a list newest first), `limit` of
    /// them, in `order`. Read by key rather than by offset, so each chunk costs the same
    /// however far the export has gone.
    pub(crate) async fn chunk_after(
        &self,
        conn: &mut AnyConnection,
        conditions: &Conditions,
        position: &str,
        after: (i64, &str),
        limit: i64,
    ) -> Result<Vec<AnyRow>, sqlx::Error> {
        let n = conditions.next();
        let and = if conditions.is_empty() {
            "WHERE"
        } else {
            "AND"
        };
        let joined = self
            .joined
            .map(|on| format!("{on} AND "))
            .unwrap_or_default();
        // Made of the store's constant SQL and numbered placeholders only.
        let sql = format!(
            "{}{} {and} {joined}{position} (${n}, ${}) ORDER BY {} LIMIT ${}",
            self.select,
            conditions.where_clause(),
            n + 1,
            self.order,
            n + 2
        );
        conditions
            .bind(sqlx::query(AssertSqlSafe(sql)))
            .bind(after.0)
            .bind(after.1)
            .bind(limit)
            .fetch_all(conn)
            .await
    }
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
    fn conditions_number_only_the_filters_given() {
        let mut conditions = Conditions::default();
        conditions
            .and_text("role = ?", None)
            .and_text("role = ?", Some("admin"))
            .and_int("created_at < ?", None)
            .and_int("is_registration_complete = ?", Some(0));
        assert_eq!(
            conditions.where_clause(),
            " WHERE role = $1 AND is_registration_complete = $2"
        );
        assert_eq!(conditions.next(), 3);
        assert_eq!(Conditions::default().where_clause(), "");
        assert!(Conditions::default().is_empty());
    }

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(like_pattern("Ana"), "%ana%");
        assert_eq!(like_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }

    #[test]
    fn placeholders_count_from_the_first() {
        assert_eq!(placeholders(1, 3), "$1, $2, $3");
        assert_eq!(placeholders(4, 1), "$4");
        assert_eq!(placeholders(1, 0), "");
    }
}
