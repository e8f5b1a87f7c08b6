//! The SQL of tests: a test with its questions, options and level ranges, pages of tests,
//! and writes. Children are loaded for a whole page in three queries (one per table), not
//! per test; a page is read in one snapshot so a concurrent edit is seen whole or not at all.

use std::collections::{BTreeMap, HashMap};

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::draft::TestDraft;
use super::{AnswerOption, LevelRange, ProficiencyTest, Question, TestMode};
use crate::by_id;
use crate::db::{bit, flag};
use crate::domain::CefrLevel;
use crate::error::{Error, Result};
use crate::id::{looks_like_id, new_id};
use crate::listing::{Bound, ListSql};
use crate::page::{PageRequest, UNPAGED_CAP};
use crate::time::Timestamp;

/// An option as stored; a draft's options are these too, ids decided.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StoredOption {
    pub id: String,
    pub text: String,
}

#[derive(Clone, Debug)]
pub(super) struct StoredQuestion {
    pub id: String,
    pub text: String,
    pub points: i64,
    pub correct_option_id: String,
    pub options: Vec<StoredOption>,
    /// Adaptive tests: the question's level.
    pub level: Option<CefrLevel>,
    /// The calibrated difficulty, if calibration gave it one.
    pub difficulty: Option<f64>,
    /// The answers the last calibration counted.
    pub answer_count: i64,
}

impl StoredQuestion {
    /// The options as anyone may see them: without the answer key.
    pub fn public_options(&self) -> Vec<AnswerOption> {
        self.options
            .iter()
            .map(|o| AnswerOption {
                id: o.id.clone(),
                text: o.text.clone(),
            })
            .collect()
    }
}

impl StoredQuestion {
    pub fn correct_index(&self) -> Option<usize> {
        self.options
            .iter()
            .position(|o| o.id == self.correct_option_id)
    }
}

/// A level range as stored; a draft's ranges are these too.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StoredRange {
    pub level: String,
    pub min_score: i64,
    pub max_score: i64,
    pub message: String,
}

#[derive(Clone, Debug)]
pub(super) struct StoredTest {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub locale: Option<String>,
    pub target_language: Option<String>,
    pub time_limit_minutes: Option<i64>,
    pub is_active: bool,
    pub question_count: i64,
    pub max_score: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub questions: Vec<StoredQuestion>,
    pub level_ranges: Vec<StoredRange>,
    pub mode: TestMode,
    pub max_questions: Option<i64>,
    pub level_messages: Option<BTreeMap<String, String>>,
    /// Adaptive tests: the common slope calibration estimated (NULL until then).
    pub slope: Option<f64>,
}

impl StoredTest {
    /// The wire form; the answer key only when `admin`.
    pub fn view(&self, admin: bool) -> ProficiencyTest {
        let adaptive = self.mode == TestMode::Adaptive;
        ProficiencyTest {
            id: self.id.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            locale: self.locale.clone(),
            target_language: self.target_language.clone(),
            time_limit_minutes: self.time_limit_minutes,
            is_active: self.is_active,
            questions: self
                .questions
                .iter()
                .map(|q| Question {
                    id: q.id.clone(),
                    text: q.text.clone(),
                    points: q.points,
                    options: q.public_options(),
                    correct_option_index: if admin {
                        q.correct_index().and_then(|i| i64::try_from(i).ok())
                    } else {
                        None
                    },
                    level: (admin && adaptive)
                        .then(|| q.level.map(|l| l.as_str().to_owned()))
                        .flatten(),
                    difficulty: (admin && adaptive).then(|| q.effective_difficulty()),
                    calibrated: (admin && adaptive).then_some(q.difficulty.is_some()),
                    answer_count: (admin && adaptive).then_some(q.answer_count),
                })
                .collect(),
            level_ranges: self
                .level_ranges
                .iter()
                .map(|r| LevelRange {
                    level: r.level.clone(),
                    min_score: r.min_score,
                    max_score: r.max_score,
                    message: r.message.clone(),
                })
                .collect(),
            mode: self.mode,
            max_questions: self.max_questions,
            level_messages: self.level_messages.clone(),
            question_count: self.question_count,
            max_score: self.max_score,
            created_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
        }
    }

    /// The level range holding `score`.
    pub fn range_for(&self, score: i64) -> Option<&StoredRange> {
        self.level_ranges
            .iter()
            .find(|r| r.min_score <= score && score <= r.max_score)
    }
}

macro_rules! test_columns {
    () => {
        "id, title, description, locale, target_language, time_limit_minutes, is_active, \
         question_count, max_score, created_at, updated_at, mode, max_questions, level_messages, \
         slope"
    };
}

/// The tests anyone may list; `is_active = 1` leads so the (is_active, created_at) index serves it.
macro_rules! public_tests {
    () => {
        "FROM proficiency_tests WHERE is_active = 1 \
         AND ($1 IS NULL OR locale = $1) AND ($2 IS NULL OR target_language = $2)"
    };
}

macro_rules! all_tests {
    () => {
        "FROM proficiency_tests WHERE ($1 IS NULL OR locale = $1) \
         AND ($2 IS NULL OR target_language = $2)"
    };
}

macro_rules! newest_page {
    () => {
        " ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    };
}

macro_rules! questions_where {
    ($($cond:tt)+) => {
        concat!(
            "SELECT q.id, q.test_id, q.text, q.points, q.correct_option_id, q.level, \
             q.difficulty, q.answer_count FROM test_questions q \
             WHERE q.test_id ", $($cond)+, " ORDER BY q.test_id, q.position"
        )
    };
}

macro_rules! options_where {
    ($($cond:tt)+) => {
        concat!(
            "SELECT o.id, o.question_id, o.text FROM test_options o \
             JOIN test_questions q ON q.id = o.question_id \
             WHERE q.test_id ", $($cond)+, " ORDER BY o.question_id, o.position"
        )
    };
}

macro_rules! ranges_where {
    ($($cond:tt)+) => {
        concat!(
            "SELECT q.test_id, q.level, q.min_score, q.max_score, q.message FROM test_level_ranges q \
             WHERE q.test_id ", $($cond)+, " ORDER BY q.test_id, q.position"
        )
    };
}

/// The statements of one kind of list (public or admin): the tests, and the children of
/// a page of them (the page's query as a subquery).
struct TestListSql {
    tests: ListSql,
    questions: &'static str,
    options: &'static str,
    ranges: &'static str,
}

/// The statements of a list of the tests that `$tests!()` selects.
macro_rules! test_list {
    ($tests:ident) => {
        TestListSql {
            tests: ListSql {
                count: concat!("SELECT COUNT(*) ", $tests!()),
                page: concat!("SELECT ", test_columns!(), " ", $tests!(), newest_page!()),
            },
            questions: questions_where!("IN (SELECT id ", $tests!(), newest_page!(), ")"),
            options: options_where!("IN (SELECT id ", $tests!(), newest_page!(), ")"),
            ranges: ranges_where!("IN (SELECT id ", $tests!(), newest_page!(), ")"),
        }
    };
}

const PUBLIC_LIST: TestListSql = test_list!(public_tests);
const ADMIN_LIST: TestListSql = test_list!(all_tests);

/// Takes the test's row lock before reading it, so two edits of one test run one after
/// the other, the second on the result of the first. Whether the test exists.
pub(super) async fn lock_test(conn: &mut AnyConnection, id: &str) -> Result<bool> {
    if !looks_like_id(id) {
        return Ok(false);
    }
    let locked = sqlx::query("UPDATE proficiency_tests SET updated_at = updated_at WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(locked.rows_affected() > 0)
}

fn test_from_row(row: &AnyRow) -> std::result::Result<StoredTest, sqlx::Error> {
    let mode: String = row.try_get("mode")?;
    let messages: Option<String> = row.try_get("level_messages")?;
    Ok(StoredTest {
        mode: TestMode::from_stored(&mode),
        max_questions: row.try_get("max_questions")?,
        level_messages: messages.and_then(|m| serde_json::from_str(&m).ok()),
        slope: row.try_get("slope")?,
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        locale: row.try_get("locale")?,
        target_language: row.try_get("target_language")?,
        time_limit_minutes: row.try_get("time_limit_minutes")?,
        is_active: flag(row.try_get("is_active")?),
        question_count: row.try_get("question_count")?,
        max_score: row.try_get("max_score")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        questions: Vec::new(),
        level_ranges: Vec::new(),
    })
}

/// Puts question, option and range rows (each ordered by position) under their tests.
fn assemble(
    tests: &mut [StoredTest],
    questions: &[AnyRow],
    options: &[AnyRow],
    ranges: &[AnyRow],
) -> std::result::Result<(), sqlx::Error> {
    let mut options_of: HashMap<String, Vec<StoredOption>> = HashMap::new();
    for row in options {
        let question_id: String = row.try_get("question_id")?;
        options_of
            .entry(question_id)
            .or_default()
            .push(StoredOption {
                id: row.try_get("id")?,
                text: row.try_get("text")?,
            });
    }
    let mut questions_of: HashMap<String, Vec<StoredQuestion>> = HashMap::new();
    for row in questions {
        let id: String = row.try_get("id")?;
        let test_id: String = row.try_get("test_id")?;
        let options = options_of.remove(&id).unwrap_or_default();
        questions_of
            .entry(test_id)
            .or_default()
            .push(StoredQuestion {
                id,
                text: row.try_get("text")?,
                points: row.try_get("points")?,
                correct_option_id: row.try_get("correct_option_id")?,
                options,
                level: row
                    .try_get::<Option<String>, _>("level")?
                    .and_then(|l| CefrLevel::parse("level", &l).ok()),
                difficulty: row.try_get("difficulty")?,
                answer_count: row.try_get("answer_count")?,
            });
    }
    let mut ranges_of: HashMap<String, Vec<StoredRange>> = HashMap::new();
    for row in ranges {
        let test_id: String = row.try_get("test_id")?;
        ranges_of.entry(test_id).or_default().push(StoredRange {
            level: row.try_get("level")?,
            min_score: row.try_get("min_score")?,
            max_score: row.try_get("max_score")?,
            message: row.try_get("message")?,
        });
    }
    for test in tests {
        test.questions = questions_of.remove(&test.id).unwrap_or_default();
        test.level_ranges = ranges_of.remove(&test.id).unwrap_or_default();
    }
    Ok(())
}

/// One test with everything in it; `None` for an unknown or malformed id.
pub(super) async fn find_test(conn: &mut AnyConnection, id: &str) -> Result<Option<StoredTest>> {
    let select = concat!(
        "SELECT ",
        test_columns!(),
        " FROM proficiency_tests WHERE id = $1"
    );
    let Some(row) = by_id::find(conn, select, id).await? else {
        return Ok(None);
    };
    let mut tests = [test_from_row(&row)?];
    let questions = sqlx::query(questions_where!("= $1"))
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
    let options = sqlx::query(options_where!("= $1"))
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
    let ranges = sqlx::query(ranges_where!("= $1"))
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
    assemble(&mut tests, &questions, &options, &ranges)?;
    let [test] = tests;
    Ok(Some(test))
}

pub(super) async fn require_test(conn: &mut AnyConnection, id: &str) -> Result<StoredTest> {
    find_test(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("test"))
}

/// A page of tests, newest first, and the number of tests matching.
pub(super) async fn page_of_tests<'a>(
    conn: &mut AnyConnection,
    admin: bool,
    locale: Option<&'a str>,
    target_language: Option<&'a str>,
    page: PageRequest,
) -> Result<(Vec<StoredTest>, i64)> {
    let sql = if admin { &ADMIN_LIST } else { &PUBLIC_LIST };
    let filter = |query: Bound<'a>| query.bind(locale).bind(target_language);
    let (total, rows) = sql.tests.fetch(conn, page, filter).await?;
    if rows.is_empty() {
        return Ok((Vec::new(), total));
    }
    let mut tests = rows
        .iter()
        .map(test_from_row)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut children = Vec::with_capacity(3);
    for statement in [sql.questions, sql.options, sql.ranges] {
        children.push(
            filter(sqlx::query(statement))
                .bind(page.limit())
                .bind(page.offset())
                .fetch_all(&mut *conn)
                .await?,
        );
    }
    assemble(&mut tests, &children[0], &children[1], &children[2])?;
    Ok((tests, total))
}

/// Target languages that have an active test, sorted.
pub(super) async fn active_languages(conn: &mut AnyConnection) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT target_language FROM proficiency_tests
         WHERE is_active = 1 AND target_language IS NOT NULL
         ORDER BY target_language LIMIT $1",
    )
    .bind(UNPAGED_CAP)
    .fetch_all(conn)
    .await?)
}

pub(super) async fn insert_test(
    conn: &mut AnyConnection,
    id: &str,
    draft: &TestDraft,
    now: i64,
) -> Result<()> {
    let query = sqlx::query(
        "INSERT INTO proficiency_tests (id, title, description, locale, target_language,
             time_limit_minutes, is_active, question_count, max_score, mode, max_questions,
             level_messages, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
    );
    bind_draft(query.bind(id), draft)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    insert_children(conn, id, draft).await
}

/// Binds the test's own columns, `title` to `level_messages`, in the order INSERT and
/// UPDATE list them.
fn bind_draft<'q>(query: Bound<'q>, draft: &'q TestDraft) -> Bound<'q> {
    let messages = draft
        .level_messages
        .as_ref()
        .and_then(|m| serde_json::to_string(m).ok());
    query
        .bind(&draft.title)
        .bind(draft.description.as_deref())
        .bind(draft.locale.as_deref())
        .bind(draft.target_language.as_deref())
        .bind(draft.time_limit_minutes)
        .bind(bit(draft.is_active))
        .bind(question_count(draft))
        .bind(draft.max_score())
        .bind(draft.mode.as_str())
        .bind(draft.max_questions)
        .bind(messages)
}

fn question_count(draft: &TestDraft) -> i64 {
    i64::try_from(draft.questions.len()).unwrap_or(i64::MAX)
}

async fn insert_children(conn: &mut AnyConnection, test_id: &str, draft: &TestDraft) -> Result<()> {
    for (position, question) in (0i64..).zip(&draft.questions) {
        let correct = question
            .options
            .get(question.correct_index)
            .ok_or_else(|| Error::internal("correct option index out of range after validation"))?;
        sqlx::query(
            "INSERT INTO test_questions (id, test_id, position, text, points, correct_option_id,
                 level, answer_count)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&question.id)
        .bind(test_id)
        .bind(position)
        .bind(&question.text)
        .bind(question.points)
        .bind(&correct.id)
        .bind(question.level.map(CefrLevel::as_str))
        .bind(question.answer_count)
        .execute(&mut *conn)
        .await?;
        // A separate statement: a NULL bound as `Option<f64>` would poison PostgreSQL's
        // cached statement for real values (ARCHITECTURE.md, sqlx's `Any` trap).
        if let Some(difficulty) = question.difficulty {
            set_difficulty(conn, &question.id, difficulty, question.answer_count).await?;
        }
        for (option_position, option) in (0i64..).zip(&question.options) {
            sqlx::query(
                "INSERT INTO test_options (id, question_id, position, text) VALUES ($1, $2, $3, $4)",
            )
            .bind(&option.id)
            .bind(&question.id)
            .bind(option_position)
            .bind(&option.text)
            .execute(&mut *conn)
            .await?;
        }
    }
    for (position, range) in (0i64..).zip(&draft.level_ranges) {
        sqlx::query(
            "INSERT INTO test_level_ranges (id, test_id, position, level, min_score, max_score, message)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(new_id())
        .bind(test_id)
        .bind(position)
        .bind(&range.level)
        .bind(range.min_score)
        .bind(range.max_score)
        .bind(&range.message)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn delete_children(conn: &mut AnyConnection, test_id: &str) -> Result<()> {
    sqlx::query(
        "DELETE FROM test_options WHERE question_id IN
             (SELECT id FROM test_questions WHERE test_id = $1)",
    )
    .bind(test_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM test_questions WHERE test_id = $1")
        .bind(test_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM test_level_ranges WHERE test_id = $1")
        .bind(test_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Writes the draft over the stored test; questions, options and ranges are rewritten
/// (kept ids and all) only when they changed.
pub(super) async fn update_test(
    conn: &mut AnyConnection,
    id: &str,
    draft: &TestDraft,
    children_changed: bool,
    now: i64,
) -> Result<()> {
    let query = sqlx::query(
        "UPDATE proficiency_tests SET title = $1, description = $2, locale = $3,
             target_language = $4, time_limit_minutes = $5, is_active = $6,
             question_count = $7, max_score = $8, mode = $9, max_questions = $10,
             level_messages = $11, updated_at = $12
         WHERE id = $13",
    );
    bind_draft(query, draft)
        .bind(now)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    if children_changed {
        delete_children(conn, id).await?;
        insert_children(conn, id, draft).await?;
    }
    Ok(())
}

/// Deletes a test and its questions; its results stay (their `test_id` becomes NULL, the
/// snapshot keeps the rest). Whether the test existed.
pub(super) async fn delete_test(conn: &mut AnyConnection, id: &str) -> Result<bool> {
    if !looks_like_id(id) {
        return Ok(false);
    }
    sqlx::query("UPDATE test_results SET test_id = NULL WHERE test_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    delete_children(conn, id).await?;
    let deleted = sqlx::query("DELETE FROM proficiency_tests WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(deleted.rows_affected() > 0)
}

/// Stores a question's calibrated difficulty and the answers it rests on.
pub(super) async fn set_difficulty(
    conn: &mut AnyConnection,
    question_id: &str,
    difficulty: f64,
    answer_count: i64,
) -> Result<()> {
    sqlx::query("UPDATE test_questions SET difficulty = $1, answer_count = $2 WHERE id = $3")
        .bind(difficulty)
        .bind(answer_count)
        .bind(question_id)
        .execute(conn)
        .await?;
    Ok(())
}
