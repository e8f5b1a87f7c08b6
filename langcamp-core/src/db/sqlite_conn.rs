//! The SQLite writer thread's own connection: synchronous (`rusqlite`, linked against the
//! same bundled SQLite as sqlx), so a statement is a function call on the thread that
//! runs the batch, not a message to sqlx's worker thread and a wake-up back.

use std::path::Path;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};

use super::Backend;
use super::write::{Arg, Row, WriteConn};
use crate::error::{Error, Result};

/// Settings every SQLite connection of the service has (the pools set the same ones).
pub(super) const CONNECTION_PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;";

/// Opens the writer thread's connection on the database file.
pub(super) fn open(file: &Path) -> Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(file)?;
    conn.execute_batch(CONNECTION_PRAGMAS)?;
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
        let mut statement = prepared(self, sql, args)?;
        let names: Vec<String> = statement
            .column_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut rows = statement.raw_query();
        let first = match rows.next()? {
            Some(row) => {
                let mut columns = Vec::with_capacity(names.len());
                for (index, name) in names.into_iter().enumerate() {
                    columns.push((name, row.get::<_, Value>(index)?));
                }
                Some(OwnedRow { columns })
            }
            None => None,
        };
        // The statement runs to its end (an `... RETURNING` of several rows, all applied).
        while rows.next()?.is_some() {}
        Ok(first)
    }
}
