//! The SQL of results: reads with their snapshot, and the insert of a submission.

use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::{
    DetailedAnswer, DetailedResult, ResultAnswer, ResultQuery, ResultRecord, ResultTest,
    ResultUser, Submission, TestResult,
};
use crate::domain::error::Result;
use crate::domain::page::{PageRequest, UNPAGED_CAP};
use crate::domain::time::Timestamp;
use crate::domain::{Id, LanguageTag};
use crate::platform::db::by_id;
use crate::platform::db::listing::{Conditions, Paged};
use crate::platform::db::{Arg, Locks, Write, WriteConn};
use crate::webhooks::Prepared;

/// Every query that returns results selects these columns.
macro_rules! result_columns {
    () => {
        "SELECT r.id, r.user_id, r.test_title, r.target_language, r.total_score, \
         r.max_score, r.level, r.message, r.answers, r.completed_at, r.ability, \
         r.standard_error, \
         u.name AS user_name, u.email AS user_email "
    };
}

macro_rules! select_results {
    ($($rest:expr),+) => {
        concat!(
            result_columns!(),
            "FROM test_results r JOIN users u ON u.id = r.user_id ",
            $($rest),+
        )
    };
}

/// The admin list: results newest first, their keys found in an index before their rows
/// (and their users') are read. `CROSS JOIN` keeps SQLite reading the results first, by
/// the key's index: with an inner join its planner (3.51, with the statistics of ANALYZE)
/// chose to scan the users and sort every result matched, 4.7 s an export's chunk of 1M
/// results instead of milliseconds. PostgreSQL plans a cross join with its condition as
/// the inner join it is.
const PAGED: Paged = Paged {
    select: concat!(result_columns!(), "FROM test_results r CROSS JOIN users u"),
    joined: Some("u.id = r.user_id"),
    from: "test_results r",
    key: "r.id",
    order: "r.completed_at DESC, r.id DESC",
};

/// The admin list's conditions on the results, for the filters given.
fn conditions(query: &ResultQuery) -> Conditions {
    let mut conditions = Conditions::default();
    conditions
        .and_text("r.test_id = ?", query.test_id.as_ref().map(Id::as_str))
        .and_text("r.user_id = ?", query.user_id.as_ref().map(Id::as_str))
        .and_text("r.level = ?", query.level.as_deref())
        .and_text(
            "r.target_language = ?",
            query.target_language.as_ref().map(LanguageTag::as_str),
        );
    conditions
}

/// How many results the admin list's `query` matches: one user's are counted in their
/// index; every other filter is answered by the counts the triggers keep by test, level
/// and target language (`stats_result_tests`, summed over what the filter leaves open).
async fn total(
    conn: &mut AnyConnection,
    query: &ResultQuery,
    conditions: &Conditions,
) -> Result<i64> {
    if query.user_id.is_some() {
        return Ok(conditions.count(conn, "test_results r").await?);
    }
    let mut counted = Conditions::default();
    counted
        .and_text("test_id = ?", query.test_id.as_ref().map(Id::as_str))
        .and_text("level = ?", query.level.as_deref())
        .and_text(
            "target_language = ?",
            query.target_language.as_ref().map(LanguageTag::as_str),
        );
    let sql = format!(
        "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM stats_result_tests{}",
        counted.where_clause()
    );
    let total: i64 = counted
        .bind(sqlx::query(sqlx::AssertSqlSafe(sql)))
        .fetch_one(conn)
        .await?
        .try_get(0)?;
    Ok(total)
}

/// A form of a result ([`TestResult`], [`DetailedResult`]): the columns every form copies
/// from the record, and the form's own answer to each question. A macro, as the forms are two types
/// with the same fields (one schema each in the API document).
macro_rules! result_form {
    ($record:expr, $form:ident, $answer:expr) => {
        $form {
            legacy_id: $record.id.clone(),
            id: $record.id.clone(),
            test_id: $record.snapshot.test_id.clone(),
            user_id: $record.user_id.clone(),
            total_score: $record.total_score,
            max_score: $record.max_score,
            level: $record.level.clone(),
            message: $record.message.clone(),
            completed_at: Timestamp::from_millis($record.completed_at),
            ability: $record.ability,
            standard_error: $record.standard_error,
            answers: $record.snapshot.questions.iter().map($answer).collect(),
            user: $record.user(),
            test: $record.test(),
        }
    };
}

/// [`TestResult`] without its answers, as a `result.created` delivery carries it
/// (CONTRACT §24), written from the record as it is: on a submission's path, where a copy
/// of the answers and a JSON tree to take them out of again were a third of the work of
/// queuing the event. (The tests hold it to the summary's fields.)
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::placement) struct ResultNotice<'a> {
    #[serde(rename = "_id")]
    legacy_id: &'a str,
    id: &'a str,
    test_id: &'a str,
    user_id: &'a str,
    total_score: i64,
    max_score: i64,
    level: &'a str,
    message: &'a str,
    completed_at: Timestamp,
    ability: Option<f64>,
    standard_error: Option<f64>,
    user: ResultUser,
    test: ResultTest,
}

impl ResultRecord {
    fn from_row(row: &AnyRow) -> Result<ResultRecord> {
        let answers: String = row.try_get("answers")?;
        Ok(ResultRecord {
            id: row.try_get("id")?,
            user_id: row.try_get("user_id")?,
            test_title: row.try_get("test_title")?,
            target_language: row.try_get("target_language")?,
            total_score: row.try_get("total_score")?,
            max_score: row.try_get("max_score")?,
            level: row.try_get("level")?,
            message: row.try_get("message")?,
            snapshot: serde_json::from_str(&answers)?,
            completed_at: row.try_get("completed_at")?,
            user_name: row.try_get("user_name")?,
            user_email: row.try_get("user_email")?,
            ability: row.try_get("ability")?,
            standard_error: row.try_get("standard_error")?,
        })
    }

    fn user(&self) -> ResultUser {
        ResultUser {
            id: self.user_id.clone(),
            name: self.user_name.clone(),
            email: self.user_email.clone(),
        }
    }

    fn test(&self) -> ResultTest {
        ResultTest {
            id: self.snapshot.test_id.clone(),
            title: self.test_title.clone(),
            target_language: self.target_language.clone(),
        }
    }

    pub(in crate::placement) fn summary(&self) -> TestResult {
        result_form!(self, TestResult, |q| ResultAnswer {
            question_id: q.question_id.clone(),
            selected_option_id: q.selected_option_id.clone(),
            is_correct: q.is_correct,
            level: q.level.clone(),
        })
    }

    /// The result as a `result.created` delivery carries it (CONTRACT §24).
    pub(in crate::placement) fn notice(&self) -> ResultNotice<'_> {
        ResultNotice {
            legacy_id: &self.id,
            id: &self.id,
            test_id: &self.snapshot.test_id,
            user_id: &self.user_id,
            total_score: self.total_score,
            max_score: self.max_score,
            level: &self.level,
            message: &self.message,
            completed_at: Timestamp::from_millis(self.completed_at),
            ability: self.ability,
            standard_error: self.standard_error,
            user: self.user(),
            test: self.test(),
        }
    }

    /// The detailed form; the correct options only when `admin`.
    pub(in crate::placement) fn detailed(&self, admin: bool) -> DetailedResult {
        result_form!(self, DetailedResult, |q| DetailedAnswer {
            question_id: q.question_id.clone(),
            question_text: q.question_text.clone(),
            points: q.points,
            selected_option_id: q.selected_option_id.clone(),
            selected_option_text: q.selected_option_text.clone(),
            is_correct: q.is_correct,
            level: q.level.clone(),
            correct_option_id: admin.then(|| q.correct_option_id.clone()),
            correct_option_text: admin.then(|| q.correct_option_text.clone()),
        })
    }
}

pub(in crate::placement) async fn find_result(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<ResultRecord>> {
    let row = by_id::find(conn, select_results!("WHERE r.id = $1"), id).await?;
    row.as_ref().map(ResultRecord::from_row).transpose()
}

/// A user's results, newest first, capped.
pub(super) async fn results_of(conn: &mut AnyConnection, user_id: &str) -> Result<Vec<TestResult>> {
    let rows = sqlx::query(select_results!(
        "WHERE r.user_id = $1 ORDER BY r.completed_at DESC, r.id DESC LIMIT $2"
    ))
    .bind(user_id)
    .bind(UNPAGED_CAP)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| ResultRecord::from_row(row).map(|r| r.summary()))
        .collect()
}

/// A page of the admin list, newest first, and the number of results matching.
pub(super) async fn list(
    conn: &mut AnyConnection,
    query: &ResultQuery,
    page: PageRequest,
) -> Result<(Vec<TestResult>, i64)> {
    let conditions = conditions(query);
    let total = total(conn, query, &conditions).await?;
    let rows = PAGED.page_by_keys(conn, &conditions, page, total).await?;
    let list = rows
        .iter()
        .map(|row| ResultRecord::from_row(row).map(|r| r.summary()))
        .collect::<Result<Vec<_>>>()?;
    Ok((list, total))
}

/// The admin list's results after the key `(completed_at, id)`, newest first, `limit` of
/// them: one chunk of an export (the `exports` area).
pub(crate) async fn chunk_after(
    conn: &mut AnyConnection,
    query: &ResultQuery,
    after: (i64, &str),
    limit: i64,
) -> Result<Vec<TestResult>> {
    let rows = PAGED
        .chunk_after(
            conn,
            &conditions(query),
            "(r.completed_at, r.id) <",
            after,
            limit,
        )
        .await?;
    rows.iter()
        .map(|row| ResultRecord::from_row(row).map(|r| r.summary()))
        .collect()
}

/// Every result of a user, newest first, in the detailed form without the correct options
/// (the personal-data export, the `exports` area): not capped, as a download of one's own
/// data holds all of it.
pub(crate) async fn detailed_results_of(
    conn: &mut AnyConnection,
    user_id: &str,
) -> Result<Vec<DetailedResult>> {
    let rows = sqlx::query(select_results!(
        "WHERE r.user_id = $1 ORDER BY r.completed_at DESC, r.id DESC"
    ))
    .bind(user_id)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| ResultRecord::from_row(row).map(|r| r.detailed(false)))
        .collect()
}

/// Inserts `record`, whose snapshot is `snapshot` as JSON text (serialized by the caller,
/// outside the write transaction), and queues `deliveries` (its `result.created`) with
/// it. With `test_version`, only if its test is still active at that `updated_at` and its
/// user still exists; whether it was inserted.
pub(super) async fn insert_result<C: WriteConn>(
    conn: &mut C,
    record: &ResultRecord,
    snapshot: &str,
    test_version: Option<i64>,
    deliveries: Option<&Prepared>,
) -> Result<bool> {
    let sql = match test_version {
        None => {
            "INSERT INTO test_results (id, test_id, user_id, test_title, target_language,
                 total_score, max_score, level, message, answers, completed_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        }
        Some(_) => {
            "INSERT INTO test_results (id, test_id, user_id, test_title, target_language,
                 total_score, max_score, level, message, answers, completed_at)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
             WHERE EXISTS (SELECT 1 FROM proficiency_tests t
                           WHERE t.id = $2 AND t.is_active = 1 AND t.updated_at = $12)
               AND EXISTS (SELECT 1 FROM users u WHERE u.id = $3)"
        }
    };
    let args = [
        Arg::Text(&record.id),
        Arg::Text(&record.snapshot.test_id),
        Arg::Text(&record.user_id),
        Arg::Text(&record.test_title),
        Arg::OptText(record.target_language.as_deref()),
        Arg::Int(record.total_score),
        Arg::Int(record.max_score),
        Arg::Text(&record.level),
        Arg::Text(&record.message),
        Arg::Text(snapshot),
        Arg::Int(record.completed_at),
        Arg::OptInt(test_version),
    ];
    let args = if test_version.is_some() {
        &args[..]
    } else {
        &args[..11]
    };
    let inserted = match deliveries {
        None => conn.exec(sql, args).await?,
        Some(deliveries) => deliveries.insert_then_queue(conn, sql, args).await?,
    };
    Ok(inserted == 1)
}

impl Write for Submission {
    type Output = bool;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<bool> {
        // The PostgreSQL share lock changes nothing; the insert is the one change (and the
        // deliveries of its event, with it).
        conn.share_test(&self.record.snapshot.test_id).await?;
        insert_result(
            conn,
            &self.record,
            &self.snapshot,
            Some(self.test_version),
            self.deliveries.as_ref(),
        )
        .await
    }
}
