//! SQLite's substring search indexes, filled in the background (issue #54).
//!
//! The users' and the contact requests' lists find a row by a fragment of its text through
//! an FTS5 trigram table (migration 0150). Indexing a row there costs more than writing
//! the row, so an insert no longer does it (migration 0190): the indexer here adds the new
//! rows in batches soon after, and until then a search reads them one by one. Each table
//! has a mark in `search_marks`: every row up to its rowid is indexed. A search is the
//! index's matches and the matching rows after the mark, so it is exact whenever it runs.
//!
//! The indexer takes a batch every second while rows keep coming (at most [`BATCH`] rows
//! a second of the single writer's time, whatever the load), and catches up at once when
//! they stop. PostgreSQL's trigram indexes are kept by the server as rows are written:
//! nothing runs there.

use std::time::Duration;

use sqlx::{AssertSqlSafe, Row as _};

use crate::domain::error::Result;
use crate::platform::db::{Backend, Db};

/// Rows indexed in one transaction.
pub(crate) const BATCH: i64 = 1000;
/// How often the indexer looks for new rows.
const EVERY: Duration = Duration::from_secs(1);

/// A table whose rows an FTS5 trigram table indexes, with the integer key each row has
/// there (a table's own rowid may change in a `VACUUM`; a key stays).
pub(crate) struct SearchIndex {
    /// The table searched (`users`); also its mark's name in `search_marks`.
    pub(crate) table: &'static str,
    /// Its FTS5 table (`user_search`), whose `search` column holds a row's searched text.
    pub(crate) fts: &'static str,
    /// The table of keys (`user_search_keys`: `key`, and the row's id in `keyed`).
    pub(crate) keys: &'static str,
    pub(crate) keyed: &'static str,
    /// A row's searched text, lower case, from its columns (as the FTS table holds it).
    pub(crate) text: &'static str,
}

impl SearchIndex {
    /// The rowid up to which every row is indexed: the mark, while the row it names is
    /// still there under that rowid; else 0 (the rows were renumbered: all are read).
    fn mark_sql(&self) -> String {
        format!(
            "(SELECT CASE WHEN (SELECT id FROM {table} WHERE rowid = m.upto) IS m.upto_id
                     THEN m.upto ELSE 0 END
              FROM search_marks m WHERE m.name = '{table}')",
            table = self.table
        )
    }

    /// The condition that a row's text is `LIKE` the `?` (a pattern with nothing to
    /// escape: the FTS table knows no `ESCAPE`): the index's matches, and the matching rows
    /// after the mark. The `?` appears twice and takes one value.
    pub(crate) fn condition(&self) -> String {
        format!(
            "id IN (SELECT {keyed} FROM {keys} WHERE key IN (SELECT rowid FROM {fts} WHERE search LIKE ?)
                    UNION ALL
                    SELECT id FROM {table} WHERE rowid > {mark} AND {text} LIKE ? ESCAPE '\\')",
            keyed = self.keyed,
            keys = self.keys,
            fts = self.fts,
            table = self.table,
            text = self.text,
            mark = self.mark_sql(),
        )
    }

    /// The newest rowid of the table (0 when empty).
    async fn top(&self, db: &Db) -> Result<i64> {
        let sql = format!("SELECT COALESCE(MAX(rowid), 0) FROM {}", self.table);
        Ok(sqlx::query_scalar(AssertSqlSafe(sql))
            .fetch_one(db.reader())
            .await?)
    }

    /// Indexes up to [`BATCH`] rows after the mark, and moves the mark past them; how many
    /// rows it passed.
    pub(crate) async fn index_batch(&self, db: &Db) -> Result<i64> {
        let Self {
            table,
            fts,
            keys,
            keyed,
            text,
        } = self;
        // Nothing after the mark (the common case): no write transaction.
        let (top, mark): (i64, i64) = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT COALESCE((SELECT MAX(rowid) FROM {table}), 0), COALESCE({mark}, 0)",
            mark = self.mark_sql()
        )))
        .fetch_one(db.reader())
        .await?;
        if top <= mark {
            return Ok(0);
        }
        let mut tx = db.begin().await?;
        let mark = sqlx::query(AssertSqlSafe(format!(
            "SELECT upto, upto_id, (SELECT id FROM {table} WHERE rowid = m.upto) AS there
             FROM search_marks m WHERE m.name = $1"
        )))
        .bind(*table)
        .fetch_one(&mut *tx)
        .await?;
        let (upto, upto_id, there): (i64, Option<String>, Option<String>) = (
            mark.try_get("upto")?,
            mark.try_get("upto_id")?,
            mark.try_get("there")?,
        );
        // Renumbered rows: walk the table again (rows already keyed are not indexed twice).
        let upto = if upto_id == there { upto } else { 0 };
        let (passed, to): (i64, Option<i64>) = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT COUNT(*), MAX(rowid)
             FROM (SELECT rowid FROM {table} WHERE rowid > $1 ORDER BY rowid LIMIT $2)"
        )))
        .bind(upto)
        .bind(BATCH)
        .fetch_one(&mut *tx)
        .await?;
        // None: rows deleted since the look above; nothing to index.
        if let Some(to) = to {
            let newest_key: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT COALESCE(MAX(key), 0) FROM {keys}"
            )))
            .fetch_one(&mut *tx)
            .await?;
            // A row keyed before (the table is walked again) keeps its key and entry.
            sqlx::query(AssertSqlSafe(format!(
                "INSERT OR IGNORE INTO {keys} ({keyed})
                 SELECT id FROM {table} WHERE rowid > $1 AND rowid <= $2 ORDER BY rowid"
            )))
            .bind(upto)
            .bind(to)
            .execute(&mut *tx)
            .await?;
            // The keys just made are above every earlier one.
            sqlx::query(AssertSqlSafe(format!(
                "INSERT INTO {fts} (rowid, search)
                 SELECT k.key, {text} FROM {keys} k JOIN {table} t ON t.id = k.{keyed}
                 WHERE k.key > $1"
            )))
            .bind(newest_key)
            .execute(&mut *tx)
            .await?;
            sqlx::query(AssertSqlSafe(format!(
                "UPDATE search_marks SET upto = $1,
                     upto_id = (SELECT id FROM {table} WHERE rowid = $1)
                 WHERE name = $2"
            )))
            .bind(to)
            .bind(*table)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(passed)
    }

    /// Indexes every row after the mark; how many.
    pub(crate) async fn catch_up(&self, db: &Db) -> Result<i64> {
        let mut total = 0;
        loop {
            let passed = self.index_batch(db).await?;
            total += passed;
            if passed < BATCH {
                return Ok(total);
            }
        }
    }
}

/// Keeps `indexes` filled until `shutdown` (SQLite; on PostgreSQL it returns at once).
/// Every second: a table that grew by more than a batch since the last look (writes keep
/// coming) gets one batch; one that did not is caught up.
pub(crate) async fn run(
    db: &Db,
    indexes: &[&SearchIndex],
    shutdown: impl std::future::Future<Output = ()>,
) {
    if db.backend() != Backend::Sqlite {
        return;
    }
    tokio::pin!(shutdown);
    let mut seen: Vec<Option<i64>> = vec![None; indexes.len()];
    loop {
        for (index, seen) in indexes.iter().zip(seen.iter_mut()) {
            let indexed = async {
                let top = index.top(db).await?;
                let busy = seen.is_some_and(|before| top - before > BATCH);
                *seen = Some(top);
                loop {
                    let passed = index.index_batch(db).await?;
                    if busy || passed < BATCH {
                        return Ok::<_, crate::domain::error::Error>(());
                    }
                    // A long catch-up (after an import) stops with the server.
                    tokio::select! {
                        biased;
                        () = &mut shutdown => return Ok(()),
                        () = std::future::ready(()) => {}
                    }
                }
            };
            if let Err(e) = indexed.await {
                tracing::warn!(table = index.table, error = %e, "indexing rows for search failed; will retry");
            }
        }
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(EVERY) => {}
        }
    }
}
