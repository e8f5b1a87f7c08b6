//! The SQL of attempts: the open attempt of a user at a test, one attempt by id, its
//! insert, the conditional update that stores an answer, and the insert of the result a
//! finished attempt becomes.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::replay::Asked;
use crate::domain::error::Result;
use crate::placement::results::ResultRecord;
use crate::platform::db::by_id;
use crate::platform::db::{Arg, Write, WriteConn};

/// An attempt as stored.
#[derive(Clone, Debug)]
pub(super) struct StoredAttempt {
    pub id: String,
    pub test_id: String,
    pub user_id: String,
    /// The questions asked in order; the last one is the current question while open.
    pub sequence: Vec<Asked>,
    pub answered: i64,
    pub started_at: i64,
    pub expires_at: Option<i64>,
    pub finished: bool,
    pub result_id: Option<String>,
}

macro_rules! attempt_columns {
    () => {
        "SELECT id, test_id, user_id, sequence, answered, started_at, expires_at, finished, \
         result_id FROM placement_attempts "
    };
}

fn from_row(row: &AnyRow) -> Result<StoredAttempt> {
    let sequence: String = row.try_get("sequence")?;
    let finished: i64 = row.try_get("finished")?;
    Ok(StoredAttempt {
        id: row.try_get("id")?,
        test_id: row.try_get("test_id")?,
        user_id: row.try_get("user_id")?,
        sequence: serde_json::from_str(&sequence)?,
        answered: row.try_get("answered")?,
        started_at: row.try_get("started_at")?,
        expires_at: row.try_get("expires_at")?,
        finished: finished != 0,
        result_id: row.try_get("result_id")?,
    })
}

/// One attempt; `None` for an unknown or malformed id.
pub(super) async fn find(conn: &mut AnyConnection, id: &str) -> Result<Option<StoredAttempt>> {
    let row = by_id::find(conn, concat!(attempt_columns!(), "WHERE id = $1"), id).await?;
    row.as_ref().map(from_row).transpose()
}

/// The user's open attempt at the test, if any.
pub(super) async fn open_of(
    conn: &mut AnyConnection,
    user_id: &str,
    test_id: &str,
) -> Result<Option<StoredAttempt>> {
    let row = sqlx::query(concat!(
        attempt_columns!(),
        "WHERE user_id = $1 AND test_id = $2 AND finished = 0"
    ))
    .bind(user_id)
    .bind(test_id)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(from_row).transpose()
}

pub(super) async fn insert(conn: &mut AnyConnection, attempt: &StoredAttempt) -> Result<()> {
    sqlx::query(
        "INSERT INTO placement_attempts (id, test_id, user_id, sequence, answered, started_at,
             expires_at, finished)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 0)",
    )
    .bind(&attempt.id)
    .bind(&attempt.test_id)
    .bind(&attempt.user_id)
    .bind(serde_json::to_string(&attempt.sequence)?)
    .bind(attempt.answered)
    .bind(attempt.started_at)
    .bind(attempt.expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Stores the attempt's new sequence if nobody answered since it was read (its answered
/// count is still `answered_before` and it is still open): whether it was stored. Two
/// answers to the same question store one.
pub(super) async fn advance<C: WriteConn>(
    conn: &mut C,
    attempt: &StoredAttempt,
    answered_before: i64,
) -> Result<bool> {
    let sequence = serde_json::to_string(&attempt.sequence)?;
    let changed = conn
        .exec(
            "UPDATE placement_attempts SET sequence = $1, answered = $2, finished = $3,
                 result_id = $4
             WHERE id = $5 AND answered = $6 AND finished = 0",
            &[
                Arg::Text(&sequence),
                Arg::Int(attempt.answered),
                Arg::Int(i64::from(attempt.finished)),
                Arg::OptText(attempt.result_id.as_deref()),
                Arg::Text(&attempt.id),
                Arg::Int(answered_before),
            ],
        )
        .await?;
    Ok(changed == 1)
}

/// An answer that does not end the attempt: its one write, [`advance`], as a piece of the
/// group commit (on SQLite it shares the writer's transaction with the answers, sign-ins
/// and submissions waiting beside it).
pub(super) struct Advance {
    pub attempt: StoredAttempt,
    pub answered_before: i64,
}

impl Write for Advance {
    type Output = bool;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<bool> {
        advance(conn, &self.attempt, self.answered_before).await
    }
}

/// Inserts the result of a finished attempt (with its ability and standard error).
pub(super) async fn insert_result(
    conn: &mut AnyConnection,
    record: &ResultRecord,
    ability: f64,
    standard_error: f64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO test_results (id, test_id, user_id, test_title, target_language,
             total_score, max_score, level, message, answers, completed_at, ability,
             standard_error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(&record.id)
    .bind(&record.snapshot.test_id)
    .bind(&record.user_id)
    .bind(&record.test_title)
    .bind(record.target_language.as_deref())
    .bind(record.total_score)
    .bind(record.max_score)
    .bind(&record.level)
    .bind(&record.message)
    .bind(serde_json::to_string(&record.snapshot)?)
    .bind(record.completed_at)
    .bind(ability)
    .bind(standard_error)
    .execute(conn)
    .await?;
    Ok(())
}
