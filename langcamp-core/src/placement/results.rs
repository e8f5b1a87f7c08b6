//! Taking a test and reading results.
//!
//! A submission is scored against the test as it is at that moment and stored with a
//! snapshot (`test_results.answers`, JSON): the test's id, and per question its text,
//! points, the chosen option, the correct option and whether the answer was right. Every
//! later read of the result is built from that snapshot and the result's own columns, so
//! an edited or deleted test changes nothing. The correct option of a question is put into
//! a response for admins only.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use utoipa::{IntoParams, ToSchema};

use super::store::{self, StoredTest};
use super::{HeldTest, language_filter};
use crate::Langcamp;
use crate::actor::{Actor, Role};
use crate::db::{Arg, Undo, Write, WriteConn};
use crate::error::{Error, Result};
use crate::id::{looks_like_id, new_id};
use crate::page::{Page, PageRequest, UNPAGED_CAP};
use crate::time::Timestamp;
use crate::users::{self, Deleted};
use crate::validate::{Patch, Problems};

/// Body of a submission.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitInput {
    /// At least one answer, at most one per question; unanswered questions score 0.
    #[serde(default)]
    #[schema(value_type = Vec<SubmittedAnswer>, required = true, min_items = 1)]
    pub answers: Patch<Value>,
}

/// One answer of a submission.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmittedAnswer {
    /// Zero-based position of the question.
    #[schema(minimum = 0)]
    pub question_index: i64,
    /// Zero-based position of the chosen option.
    #[schema(minimum = 0)]
    pub selected_option_index: i64,
}

/// One question of a result. `selectedOptionId` is null for a question left unanswered.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultAnswer {
    pub question_id: String,
    pub selected_option_id: Option<String>,
    pub is_correct: bool,
}

/// One question of a detailed result; `correctOptionId` and `correctOptionText` only for admins.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailedAnswer {
    pub question_id: String,
    pub question_text: String,
    pub points: i64,
    pub selected_option_id: Option<String>,
    pub selected_option_text: Option<String>,
    pub is_correct: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct_option_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct_option_text: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ResultUser {
    pub id: String,
    pub name: Option<String>,
    pub email: String,
}

/// The test as it was when the result was given (it may have been edited or deleted since).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultTest {
    pub id: String,
    pub title: String,
    #[schema(example = "de")]
    pub target_language: Option<String>,
}

/// A scored submission. `answers` has one entry per question of the test, in order.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestResult {
    /// The same value as `id`.
    #[serde(rename = "_id")]
    pub legacy_id: String,
    pub id: String,
    /// The test taken; it keeps naming it after the test was deleted.
    pub test_id: String,
    pub user_id: String,
    pub total_score: i64,
    pub max_score: i64,
    #[schema(example = "B1")]
    pub level: String,
    pub message: String,
    pub completed_at: Timestamp,
    pub answers: Vec<ResultAnswer>,
    pub user: ResultUser,
    pub test: ResultTest,
}

/// A result with the text and points of each question and the chosen option; for admins
/// also the correct option.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailedResult {
    /// The same value as `id`.
    #[serde(rename = "_id")]
    pub legacy_id: String,
    pub id: String,
    pub test_id: String,
    pub user_id: String,
    pub total_score: i64,
    pub max_score: i64,
    #[schema(example = "B1")]
    pub level: String,
    pub message: String,
    pub completed_at: Timestamp,
    pub answers: Vec<DetailedAnswer>,
    pub user: ResultUser,
    pub test: ResultTest,
}

/// Whether the caller has taken a test, and their latest result.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestStatus {
    pub completed: bool,
    pub last_result: Option<LastResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastResult {
    pub id: String,
    pub total_score: i64,
    pub level: String,
    pub completed_at: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ResultList {
    pub list: Vec<TestResult>,
}

/// Query of the admin result list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ResultFilter {
    /// Results of this test (results of a deleted test no longer match).
    pub test_id: Option<String>,
    /// Results of this user.
    pub user_id: Option<String>,
    /// Results with exactly this level.
    pub level: Option<String>,
    /// Results of tests of this target language (language code); empty means no filter.
    #[param(pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    pub target_language: Option<String>,
}

/// What is stored in `test_results.answers`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    test_id: String,
    questions: Vec<SnapshotItem>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotItem {
    question_id: String,
    question_text: String,
    points: i64,
    selected_option_id: Option<String>,
    selected_option_text: Option<String>,
    correct_option_id: String,
    correct_option_text: String,
    is_correct: bool,
}

/// One answer as given: the position of the question and of the chosen option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Answer {
    item: usize,
    question: usize,
    option: usize,
}

/// Checks the shape of the answers (400 before looking at the test).
fn parse_answers(raw: Patch<Value>) -> Result<Vec<Answer>> {
    let items = match raw {
        Patch::Absent => return Err(Error::invalid("answers is required")),
        Patch::Value(Value::Array(items)) => items,
        Patch::Null | Patch::Value(_) => return Err(Error::invalid("answers must be an array")),
    };
    if items.is_empty() {
        return Err(Error::invalid("answers must not be empty"));
    }
    let mut problems = Problems::new();
    let mut answers = Vec::with_capacity(items.len());
    let mut first_of: HashMap<usize, usize> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(fields) = item else {
            problems.add(format!(
                "answers[{i}] must be an object with questionIndex and selectedOptionIndex"
            ));
            continue;
        };
        for key in fields.keys() {
            if key != "questionIndex" && key != "selectedOptionIndex" {
                problems.add(format!("answers[{i}].{key} is not a known field"));
            }
        }
        let question = index_field(
            &mut problems,
            i,
            "questionIndex",
            fields.get("questionIndex"),
        );
        let option = index_field(
            &mut problems,
            i,
            "selectedOptionIndex",
            fields.get("selectedOptionIndex"),
        );
        if let Some(q) = question
            && let Some(first) = first_of.insert(q, i)
        {
            problems.add(format!(
                "answers[{i}].questionIndex repeats question {q}, already answered in answers[{first}]"
            ));
        }
        if let (Some(question), Some(option)) = (question, option) {
            answers.push(Answer {
                item: i,
                question,
                option,
            });
        }
    }
    problems.finish()?;
    Ok(answers)
}

fn index_field(
    problems: &mut Problems,
    item: usize,
    name: &str,
    value: Option<&Value>,
) -> Option<usize> {
    match value {
        None | Some(Value::Null) => {
            problems.add(format!("answers[{item}].{name} is required"));
            None
        }
        Some(value) => match value.as_i64() {
            Some(n) if n < 0 => {
                problems.add(format!("answers[{item}].{name} must be 0 or more"));
                None
            }
            Some(n) => usize::try_from(n).ok(),
            None => {
                problems.add(format!("answers[{item}].{name} must be a whole number"));
                None
            }
        },
    }
}

/// Checks the answers against the test's questions and options.
fn check_against(test: &StoredTest, answers: &[Answer]) -> Result<()> {
    let mut problems = Problems::new();
    let count = test.questions.len();
    for answer in answers {
        let i = answer.item;
        match test.questions.get(answer.question) {
            None => problems.add(format!(
                "answers[{i}].questionIndex must be from 0 to {}",
                count.saturating_sub(1)
            )),
            Some(question) if answer.option >= question.options.len() => {
                problems.add(format!(
                    "answers[{i}].selectedOptionIndex must be from 0 to {} for question {}",
                    question.options.len().saturating_sub(1),
                    answer.question
                ));
            }
            Some(_) => {}
        }
    }
    problems.finish()
}

/// Scores the answers: every question of the test in order, the chosen option (if any),
/// whether it is the correct one; and the total of the points of the right answers.
fn score(test: &StoredTest, answers: &[Answer]) -> (i64, Vec<SnapshotItem>) {
    let chosen: HashMap<usize, usize> = answers.iter().map(|a| (a.question, a.option)).collect();
    let mut total = 0;
    let items = test
        .questions
        .iter()
        .enumerate()
        .map(|(index, question)| {
            let selected = chosen
                .get(&index)
                .and_then(|&option| question.options.get(option));
            let correct = question
                .options
                .iter()
                .find(|o| o.id == question.correct_option_id);
            let is_correct = selected.is_some_and(|s| s.id == question.correct_option_id);
            if is_correct {
                total += question.points;
            }
            SnapshotItem {
                question_id: question.id.clone(),
                question_text: question.text.clone(),
                points: question.points,
                selected_option_id: selected.map(|o| o.id.clone()),
                selected_option_text: selected.map(|o| o.text.clone()),
                correct_option_id: question.correct_option_id.clone(),
                correct_option_text: correct.map(|o| o.text.clone()).unwrap_or_default(),
                is_correct,
            }
        })
        .collect();
    (total, items)
}

/// Every query that returns results selects these columns.
macro_rules! select_results {
    ($rest:literal) => {
        concat!(
            "SELECT r.id, r.user_id, r.test_title, r.target_language, r.total_score, \
             r.max_score, r.level, r.message, r.answers, r.completed_at, \
             u.name AS user_name, u.email AS user_email \
             FROM test_results r JOIN users u ON u.id = r.user_id ",
            $rest
        )
    };
}

/// A stored result with its snapshot read back.
struct ResultRecord {
    id: String,
    user_id: String,
    test_title: String,
    target_language: Option<String>,
    total_score: i64,
    max_score: i64,
    level: String,
    message: String,
    snapshot: Snapshot,
    completed_at: i64,
    user_name: Option<String>,
    user_email: String,
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

    fn summary(&self) -> TestResult {
        TestResult {
            legacy_id: self.id.clone(),
            id: self.id.clone(),
            test_id: self.snapshot.test_id.clone(),
            user_id: self.user_id.clone(),
            total_score: self.total_score,
            max_score: self.max_score,
            level: self.level.clone(),
            message: self.message.clone(),
            completed_at: Timestamp::from_millis(self.completed_at),
            answers: self
                .snapshot
                .questions
                .iter()
                .map(|q| ResultAnswer {
                    question_id: q.question_id.clone(),
                    selected_option_id: q.selected_option_id.clone(),
                    is_correct: q.is_correct,
                })
                .collect(),
            user: self.user(),
            test: self.test(),
        }
    }

    /// The detailed form; the correct options only when `admin`.
    fn detailed(&self, admin: bool) -> DetailedResult {
        DetailedResult {
            legacy_id: self.id.clone(),
            id: self.id.clone(),
            test_id: self.snapshot.test_id.clone(),
            user_id: self.user_id.clone(),
            total_score: self.total_score,
            max_score: self.max_score,
            level: self.level.clone(),
            message: self.message.clone(),
            completed_at: Timestamp::from_millis(self.completed_at),
            answers: self
                .snapshot
                .questions
                .iter()
                .map(|q| DetailedAnswer {
                    question_id: q.question_id.clone(),
                    question_text: q.question_text.clone(),
                    points: q.points,
                    selected_option_id: q.selected_option_id.clone(),
                    selected_option_text: q.selected_option_text.clone(),
                    is_correct: q.is_correct,
                    correct_option_id: admin.then(|| q.correct_option_id.clone()),
                    correct_option_text: admin.then(|| q.correct_option_text.clone()),
                })
                .collect(),
            user: self.user(),
            test: self.test(),
        }
    }
}

async fn find_result(conn: &mut AnyConnection, id: &str) -> Result<Option<ResultRecord>> {
    if !looks_like_id(id) {
        return Ok(None);
    }
    let row = sqlx::query(select_results!("WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(ResultRecord::from_row).transpose()
}

/// A user's results, newest first, capped.
async fn results_of(conn: &mut AnyConnection, user_id: &str) -> Result<Vec<TestResult>> {
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

/// The test a user may see: an inactive one only for admins.
async fn visible_test(conn: &mut AnyConnection, actor: &Actor, id: &str) -> Result<StoredTest> {
    match store::find_test(conn, id).await? {
        Some(test) if test.is_active || actor.is_admin() => Ok(test),
        _ => Err(Error::not_found("test")),
    }
}

/// The result of `answers` to `test` by `user` at `now`, before it is stored.
fn scored(test: &StoredTest, user: &users::User, answers: &[Answer], now: i64) -> ResultRecord {
    let (total, items) = score(test, answers);
    let max_score: i64 = items.iter().map(|i| i.points).sum();
    let (level, message) = test
        .range_for(total)
        .map(|r| (r.level.clone(), r.message.clone()))
        .unwrap_or_default();
    ResultRecord {
        id: new_id(),
        user_id: user.id.clone(),
        test_title: test.title.clone(),
        target_language: test.target_language.clone(),
        total_score: total,
        max_score,
        level,
        message,
        snapshot: Snapshot {
            test_id: test.id.clone(),
            questions: items,
        },
        completed_at: now,
        user_name: user.name.clone(),
        user_email: user.email.clone(),
    }
}

/// Inserts `record`, whose snapshot is `snapshot` as JSON text (serialized by the caller,
/// outside the write transaction). With `test_version`, only if its test is still active
/// at that `updated_at` and its user still exists; whether it was inserted.
async fn insert_result<C: WriteConn>(
    conn: &mut C,
    record: &ResultRecord,
    snapshot: &str,
    test_version: Option<i64>,
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
    Ok(conn.exec(sql, args).await? == 1)
}

/// The write of a submission whose test and user came from memory: the result, if the
/// test is still active at the version read and the user still exists.
struct Submission {
    record: Arc<ResultRecord>,
    snapshot: String,
    test_version: i64,
}

impl Write for Submission {
    type Output = bool;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<bool> {
        // The PostgreSQL share lock changes nothing; the insert is the one change.
        store::share_test(conn, &self.record.snapshot.test_id).await?;
        insert_result(conn, &self.record, &self.snapshot, Some(self.test_version)).await
    }
}

impl Langcamp {
    /// `POST /proficiency-tests/{id}/submit`: scores the answers and stores a new result.
    ///
    /// The test and the user come from memory (the active-test cache, the caller's live
    /// sign-in), so the single writer only inserts the result, with a guard that the test
    /// is still active and unchanged (`updated_at`) and the user still exists. When the
    /// guard fails (an edit or a deletion raced the submission, or the cache was stale
    /// because another process wrote) the submission is done again reading everything
    /// inside the write transaction, exactly as before the cache existed.
    #[tracing::instrument(skip_all)]
    pub async fn submit_test(
        &self,
        actor: &Actor,
        test_id: &str,
        input: SubmitInput,
    ) -> Result<TestResult> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let answers = parse_answers(input.answers)?;
        let now = self.clock().now_ms();
        if let Some(test) = self.held_test(test_id, now).await?
            && test.is_active
        {
            check_against(&test, &answers)?;
            let user = match self
                .sessions()
                .get(&caller.session_id, &caller.user_id, now)
            {
                Some(user) => user,
                None => {
                    let mut conn = self.db().reader().acquire().await?;
                    Arc::new(
                        users::find_user(&mut conn, &caller.user_id)
                            .await?
                            .ok_or(Error::TokenInvalid)?,
                    )
                }
            };
            let record = Arc::new(scored(&test, &user, &answers, now));
            let snapshot = serde_json::to_string(&record.snapshot)?;
            // One statement, in a transaction shared with other waiting writes.
            let submission = Submission {
                record: Arc::clone(&record),
                snapshot,
                test_version: test.updated_at,
            };
            let inserted = self.db().write(Undo::SingleStatement, submission).await?;
            if inserted {
                return Ok(record.summary());
            }
            // Nothing was written; the exact path below decides.
        }
        let mut tx = self.db().begin().await?;
        store::share_test(&mut *tx, test_id).await?;
        let test = match store::find_test(&mut tx, test_id).await? {
            Some(test) if test.is_active => test,
            _ => return Err(Error::not_found("test")),
        };
        check_against(&test, &answers)?;
        let user = users::find_user(&mut tx, &caller.user_id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        let record = scored(&test, &user, &answers, now);
        let snapshot = serde_json::to_string(&record.snapshot)?;
        insert_result(&mut *tx, &record, &snapshot, None).await?;
        tx.commit().await?;
        Ok(record.summary())
    }

    /// The test `id` as the active-test cache holds it (loaded through a reader on a miss).
    async fn held_test(&self, id: &str, now: i64) -> Result<Option<Arc<StoredTest>>> {
        if !looks_like_id(id) {
            return Ok(None);
        }
        let held = self
            .caches()
            .active_tests
            .get_or_load(id.to_owned(), now, || async {
                let mut conn = self.db().reader().acquire().await?;
                Ok(HeldTest(
                    store::find_test(&mut conn, id).await?.map(Arc::new),
                ))
            })
            .await?;
        Ok(held.0)
    }

    /// `GET /proficiency-tests/{id}/status`: the caller's latest result of this test.
    #[tracing::instrument(skip_all)]
    pub async fn test_status(&self, actor: &Actor, test_id: &str) -> Result<TestStatus> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let mut conn = self.db().reader().acquire().await?;
        let test = visible_test(&mut conn, actor, test_id).await?;
        let row = sqlx::query(
            "SELECT id, total_score, level, completed_at FROM test_results
             WHERE user_id = $1 AND test_id = $2
             ORDER BY completed_at DESC, id DESC LIMIT 1",
        )
        .bind(&caller.user_id)
        .bind(&test.id)
        .fetch_optional(&mut *conn)
        .await?;
        let last_result = row
            .map(|row| -> Result<LastResult> {
                Ok(LastResult {
                    id: row.try_get("id")?,
                    total_score: row.try_get("total_score")?,
                    level: row.try_get("level")?,
                    completed_at: Timestamp::from_millis(row.try_get("completed_at")?),
                })
            })
            .transpose()?;
        Ok(TestStatus {
            completed: last_result.is_some(),
            last_result,
        })
    }

    /// `GET /proficiency-tests/results/me`: the caller's results, newest first.
    #[tracing::instrument(skip_all)]
    pub async fn my_test_results(&self, actor: &Actor) -> Result<Vec<TestResult>> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let mut conn = self.db().reader().acquire().await?;
        results_of(&mut conn, &caller.user_id).await
    }

    /// `GET /proficiency-tests/results/me/{resultId}`: someone else's result is not found.
    #[tracing::instrument(skip_all)]
    pub async fn my_test_result(&self, actor: &Actor, result_id: &str) -> Result<DetailedResult> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let mut conn = self.db().reader().acquire().await?;
        match find_result(&mut conn, result_id).await? {
            Some(record) if record.user_id == caller.user_id => {
                Ok(record.detailed(actor.is_admin()))
            }
            _ => Err(Error::not_found("test result")),
        }
    }

    /// `GET /proficiency-tests/admin/results`: newest first, filtered.
    #[tracing::instrument(skip_all)]
    pub async fn list_test_results(
        &self,
        actor: &Actor,
        filter: &ResultFilter,
        page: PageRequest,
    ) -> Result<Page<TestResult>> {
        actor.require(Role::Admin)?;
        let mut problems = Problems::new();
        let target = language_filter(
            &mut problems,
            "targetLanguage",
            filter.target_language.as_deref(),
        );
        problems.finish()?;
        let text = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let (test_id, user_id, level) = (
            text(&filter.test_id),
            text(&filter.user_id),
            text(&filter.level),
        );
        let mut conn = self.db().reader().acquire().await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM test_results r
             WHERE ($1 IS NULL OR r.test_id = $1) AND ($2 IS NULL OR r.user_id = $2)
               AND ($3 IS NULL OR r.level = $3) AND ($4 IS NULL OR r.target_language = $4)",
        )
        .bind(test_id.as_deref())
        .bind(user_id.as_deref())
        .bind(level.as_deref())
        .bind(target.as_deref())
        .fetch_one(&mut *conn)
        .await?;
        let rows = sqlx::query(select_results!(
            "WHERE ($1 IS NULL OR r.test_id = $1) AND ($2 IS NULL OR r.user_id = $2)
               AND ($3 IS NULL OR r.level = $3) AND ($4 IS NULL OR r.target_language = $4)
             ORDER BY r.completed_at DESC, r.id DESC LIMIT $5 OFFSET $6"
        ))
        .bind(test_id.as_deref())
        .bind(user_id.as_deref())
        .bind(level.as_deref())
        .bind(target.as_deref())
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *conn)
        .await?;
        let list = rows
            .iter()
            .map(|row| ResultRecord::from_row(row).map(|r| r.summary()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Page::new(list, page, total))
    }

    /// `GET /proficiency-tests/admin/results/{resultId}`: with the correct options.
    #[tracing::instrument(skip_all)]
    pub async fn get_test_result(&self, actor: &Actor, result_id: &str) -> Result<DetailedResult> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        find_result(&mut conn, result_id)
            .await?
            .map(|record| record.detailed(true))
            .ok_or_else(|| Error::not_found("test result"))
    }

    /// `DELETE /proficiency-tests/admin/results/{resultId}`.
    #[tracing::instrument(skip_all)]
    pub async fn delete_test_result(&self, actor: &Actor, result_id: &str) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        if !looks_like_id(result_id) {
            return Err(Error::not_found("test result"));
        }
        let mut tx = self.db().begin().await?;
        let deleted = sqlx::query("DELETE FROM test_results WHERE id = $1")
            .bind(result_id)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(Error::not_found("test result"));
        }
        tx.commit().await?;
        Ok(Deleted {
            id: result_id.to_owned(),
            deleted: true,
        })
    }

    /// `GET /proficiency-tests/admin/results/user/{userId}`: that user's results, newest first.
    #[tracing::instrument(skip_all)]
    pub async fn user_test_results(&self, actor: &Actor, user_id: &str) -> Result<ResultList> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        if users::find_user(&mut conn, user_id).await?.is_none() {
            return Err(Error::not_found("user"));
        }
        Ok(ResultList {
            list: results_of(&mut conn, user_id).await?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::store::{StoredOption, StoredQuestion, StoredRange};

    fn test_with(points: &[i64]) -> StoredTest {
        StoredTest {
            id: "t".into(),
            title: "T".into(),
            description: None,
            locale: None,
            target_language: Some("de".into()),
            time_limit_minutes: None,
            is_active: true,
            question_count: i64::try_from(points.len()).unwrap_or(0),
            max_score: points.iter().sum(),
            created_at: 0,
            updated_at: 0,
            questions: points
                .iter()
                .enumerate()
                .map(|(i, &p)| StoredQuestion {
                    id: format!("q{i}"),
                    text: format!("Question {i}"),
                    points: p,
                    correct_option_id: format!("q{i}o1"),
                    options: (0..3)
                        .map(|j| StoredOption {
                            id: format!("q{i}o{j}"),
                            text: format!("Option {j}"),
                        })
                        .collect(),
                })
                .collect(),
            level_ranges: vec![StoredRange {
                level: "A1".into(),
                min_score: 0,
                max_score: 100,
                message: String::new(),
            }],
        }
    }

    fn answers(json: Value) -> Result<Vec<Answer>> {
        parse_answers(Patch::Value(json))
    }

    #[test]
    fn scores_add_the_points_of_right_answers_only() {
        let test = test_with(&[1, 3, 5]);
        let given = answers(serde_json::json!([
            {"questionIndex": 0, "selectedOptionIndex": 1},
            {"questionIndex": 2, "selectedOptionIndex": 1},
            {"questionIndex": 1, "selectedOptionIndex": 0},
        ]))
        .expect("valid answers");
        let (total, items) = score(&test, &given);
        assert_eq!(total, 6);
        let correct: Vec<bool> = items.iter().map(|i| i.is_correct).collect();
        assert_eq!(correct, vec![true, false, true]);
        assert_eq!(items[1].selected_option_id.as_deref(), Some("q1o0"));
    }

    #[test]
    fn unanswered_questions_score_nothing_and_have_no_selection() {
        let test = test_with(&[2, 2]);
        let given = answers(serde_json::json!([{"questionIndex": 1, "selectedOptionIndex": 1}]))
            .expect("valid answers");
        let (total, items) = score(&test, &given);
        assert_eq!(total, 2);
        assert_eq!(items[0].selected_option_id, None);
        assert!(!items[0].is_correct);
    }

    #[test]
    fn answer_shapes_are_refused_with_one_message_each() {
        let cases = [
            (serde_json::json!("x"), 1),
            (serde_json::json!([]), 1),
            (
                serde_json::json!([{"questionIndex": -1, "selectedOptionIndex": 0}]),
                1,
            ),
            (
                serde_json::json!([{"questionIndex": 0}, {"questionIndex": 0, "selectedOptionIndex": 1.5}]),
                3,
            ),
            (
                serde_json::json!([{"questionIndex": 0, "selectedOptionIndex": 0, "x": 1}]),
                1,
            ),
        ];
        for (value, count) in cases {
            match answers(value.clone()) {
                Err(Error::Validation(messages)) => {
                    assert_eq!(messages.len(), count, "{value}: {messages:?}");
                }
                other => panic!("{value}: expected a validation error, got {other:?}"),
            }
        }
        assert!(parse_answers(Patch::Absent).is_err());
        assert!(parse_answers(Patch::Null).is_err());
    }

    #[test]
    fn answers_out_of_the_test_are_refused() {
        let test = test_with(&[1, 1]);
        let given = answers(serde_json::json!([
            {"questionIndex": 2, "selectedOptionIndex": 0},
            {"questionIndex": 0, "selectedOptionIndex": 3},
        ]))
        .expect("well-formed");
        match check_against(&test, &given) {
            Err(Error::Validation(messages)) => assert_eq!(
                messages,
                vec![
                    "answers[0].questionIndex must be from 0 to 1",
                    "answers[1].selectedOptionIndex must be from 0 to 2 for question 0",
                ]
            ),
            other => panic!("expected validation errors, got {other:?}"),
        }
    }
}
