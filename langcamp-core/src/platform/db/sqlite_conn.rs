//! The SQLite writer thread's own connection: synchronous (`rusqlite`, linked against the
//! same bundled SQLite as sqlx), so a statement is a function call on the thread that
//! runs the batch, not a message to sqlx's worker thread and a wake-up back.

use std::path::Path;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};

use super::Backend;
use super::write::{Arg, Row, WriteConn};
use crate::domain::error::{Error, Result};

/// Settings every SQLite connection of the service has (the pools set the same ones).
pub(super) const CONNECTION_PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;";

/// Opens the writer thread's connection on the database file (and the checkpoint
/// thread's, [`super::checkpoint`]).
pub(super) fn open(file: &Path) -> Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(file)?;
    conn.execute_batch(CONNECTION_PRAGMAS)?;
    // Each piece of a batch is undone alone if it fails, so SQLite keeps, for each
    // statement (and each piece's savepoint), the pages it changes as they were before it:
    // a sub-journal, by default a temporary file once it outgrows 64 KiB. A batch's pages
    // are few; kept in memory they cost a copy instead of a write to a file each, measured
    // at a third of this thread's time on submissions. (Only this connection: its
    // statements are small writes, not sorts that could fill memory.)
    conn.execute_batch("PRAGMA temp_store = MEMORY;")?;
    // The query planner stability guarantee: plans do not depend on the values bound.
    // Without it, once ANALYZE has written `sqlite_stat4`, a cached statement whose
    // parameters the planner looked at is compiled again (triggers and all) every time
    // it is run with new values: measured at 47 % of this thread's time on submissions.
    // The writes here look rows up by their keys; their plans need no values.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

/// A row read by the writer thread, owned (a `rusqlite::Row` borrows its statement).
#[derive(Debug)]
pub struct OwnedRow {
    columns: Vec<(String, Value)>,
}

impl OwnedRow {
    fn value(&self, column: &str) -> Result<&Value> {
        self.columns
            .iter()
            .find(|(name, _)| name == column)
            .map(|(_, value)| value)
            .ok_or_else(|| Error::internal(format!("no column {column} in the row")))
    }
}

fn wrong_type(column: &str, value: &Value) -> Error {
    Error::internal(format!(
        "column {column} holds {:?}, not the type read",
        value.data_type()
    ))
}

impl Row for OwnedRow {
    fn text(&self, column: &str) -> Result<String> {
        match self.value(column)? {
            Value::Text(text) => Ok(text.clone()),
            other => Err(wrong_type(column, other)),
        }
    }

    fn opt_text(&self, column: &str) -> Result<Option<String>> {
        match self.value(column)? {
            Value::Null => Ok(None),
            _ => self.text(column).map(Some),
        }
    }

    fn int(&self, column: &str) -> Result<i64> {
        match self.value(column)? {
            Value::Integer(value) => Ok(*value),
            other => Err(wrong_type(column, other)),
        }
    }

    fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        match self.value(column)? {
            Value::Null => Ok(None),
            _ => self.int(column).map(Some),
        }
    }

    fn opt_float(&self, column: &str) -> Result<Option<f64>> {
        match self.value(column)? {
            Value::Null => Ok(None),
            Value::Real(value) => Ok(Some(*value)),
            // SQLite stores a whole REAL as an integer when it can.
            Value::Integer(value) => Ok(Some(*value as f64)),
            other => Err(wrong_type(column, other)),
        }
    }

    fn bytes(&self, column: &str) -> Result<Vec<u8>> {
        match self.value(column)? {
            Value::Blob(bytes) => Ok(bytes.clone()),
            other => Err(wrong_type(column, other)),
        }
    }

    fn opt_bytes(&self, column: &str) -> Result<Option<Vec<u8>>> {
        match self.value(column)? {
            Value::Null => Ok(None),
            _ => self.bytes(column).map(Some),
        }
    }
}

/// Prepares `sql` (from the connection's statement cache) and binds `args` to it. The SQL
/// is the text both backends run, with `$1`, `$2`, ... parameters: each is bound by its
/// number, wherever and however often it stands.
fn prepared<'c>(
    conn: &'c rusqlite::Connection,
    sql: &'static str,
    args: &[Arg<'_>],
) -> Result<rusqlite::CachedStatement<'c>> {
    let mut statement = conn.prepare_cached(sql)?;
    for index in 1..=statement.parameter_count() {
        let number = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$'))
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| Error::internal(format!("parameter {index} is not $N in: {sql}")))?;
        let arg = args
            .get(number - 1)
            .ok_or_else(|| Error::internal(format!("no argument for ${number} in: {sql}")))?;
        let value = match *arg {
            Arg::Text(text) | Arg::OptText(Some(text)) => ValueRef::Text(text.as_bytes()),
            Arg::Int(value) | Arg::OptInt(Some(value)) => ValueRef::Integer(value),
            Arg::Float(value) => ValueRef::Real(value),
            Arg::Bytes(bytes) => ValueRef::Blob(bytes),
            Arg::OptText(None) | Arg::OptInt(None) => ValueRef::Null,
        };
        statement.raw_bind_parameter(index, ToSqlOutput::Borrowed(value))?;
    }
    Ok(statement)
}

impl WriteConn for rusqlite::Connection {
    type Row = OwnedRow;

    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    async fn exec(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<u64> {
        let mut statement = prepared(self, sql, args)?;
        let changed = statement.raw_execute()?;
        Ok(changed as u64)
    }

    async fn fetch_first(
        &mut self,
        sql: &'static str,
        args: &[Arg<'_>],
    ) -> Result<Option<OwnedRow>> {
        // Every row is read: the statement runs to its end (an `... RETURNING` of several
        // rows, all applied).
        Ok(read_rows(self, sql, args)?.into_iter().next())
    }

    async fn fetch_all(&mut self, sql: &'static str, args: &[Arg<'_>]) -> Result<Vec<OwnedRow>> {
        read_rows(self, sql, args)
    }
}

/// Runs `sql` to its end and reads every row it returns.
fn read_rows(
    conn: &rusqlite::Connection,
    sql: &'static str,
    args: &[Arg<'_>],
) -> Result<Vec<OwnedRow>> {
    let mut statement = prepared(conn, sql, args)?;
    let names: Vec<String> = statement
        .column_names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut rows = statement.raw_query();
    let mut read = Vec::new();
    while let Some(row) = rows.next()? {
        let mut columns = Vec::with_capacity(names.len());
        for (index, name) in names.iter().enumerate() {
            columns.push((name.clone(), row.get::<_, Value>(index)?));
        }
        read.push(OwnedRow { columns });
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_connection_plans_without_looking_at_values() {
        let dir =
            std::env::temp_dir().join(format!("langcamp-conn-{}", crate::domain::id::new_id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let conn = open(&dir.join("conn.db")).expect("a connection");
        let qpsg = conn
            .db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG)
            .expect("the setting");
        assert!(
            qpsg,
            "a statement must not be compiled again for new values"
        );
        let foreign_keys: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |row| row.get(0))
            .expect("the pragma");
        assert_eq!(foreign_keys, 1);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn parameters_are_bound_by_their_number_wherever_they_stand() {
        let dir =
            std::env::temp_dir().join(format!("langcamp-conn-{}", crate::domain::id::new_id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let mut conn = open(&dir.join("conn.db")).expect("a connection");
        conn.execute_batch("CREATE TABLE t (a TEXT, b INTEGER, c TEXT)")
            .expect("a table");
        let row = crate::platform::db::write::run_ready(async {
            conn.exec(
                "INSERT INTO t (a, b, c) VALUES ($2, $1, $2)",
                &[Arg::Int(7), Arg::Text("x")],
            )
            .await?;
            conn.fetch_first("SELECT a, b, c FROM t WHERE b = $1", &[Arg::Int(7)])
                .await
        })
        .expect("a row")
        .expect("the row written");
        assert_eq!(row.text("a").expect("a"), "x");
        assert_eq!(row.int("b").expect("b"), 7);
        assert_eq!(row.opt_text("c").expect("c"), Some("x".to_owned()));
        std::fs::remove_dir_all(&dir).ok();
    }
}
