//! The SQL of tests: a test with its questions, options and level ranges, and pages of
//! tests; the writes are in [`write`]. Children are loaded for a whole page in three
//! queries (one per table), not per test; a page is read in one snapshot so a concurrent
//! edit is seen whole or not at all.

mod write;

pub(super) use self::write::{Create, Delete, Duplicate, Update, set_answer_count, set_difficulty};

use std::collections::{BTreeMap, HashMap};

use sqlx::AnyConnection;

use super::{AnswerOption, LevelRange, ProficiencyTest, Question, TestMode};
use crate::domain::CefrLevel;
use crate::domain::error::{Error, Result};
use crate::domain::page::{PageRequest, UNPAGED_CAP};
use crate::domain::time::Timestamp;
use crate::platform::db::by_id;
use crate::platform::db::listing::{Bound, ListSql};
use crate::platform::db::{Arg, Row, WriteConn};

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

/// What an author sets of a test besides its questions and ranges: a draft's and a
/// stored test's alike.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct TestSettings {
    pub title: String,
    pub description: Option<String>,
    pub locale: Option<String>,
    pub target_language: Option<String>,
    pub time_limit_minutes: Option<i64>,
    pub is_active: bool,
    pub mode: TestMode,
    /// Adaptive tests only.
    pub max_questions: Option<i64>,
    /// Adaptive tests only.
    pub level_messages: Option<BTreeMap<String, String>>,
}

#[derive(Clone, Debug)]
pub(super) struct StoredTest {
    pub id: String,
    pub settings: TestSettings,
    pub question_count: i64,
    pub max_score: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub questions: Vec<StoredQuestion>,
    pub level_ranges: Vec<StoredRange>,
    /// Adaptive tests: the common slope calibration estimated (NULL until then).
    pub slope: Option<f64>,
}

impl StoredTest {
    /// The wire form; the answer key only when `admin`.
    pub fn view(&self, admin: bool) -> ProficiencyTest {
        let settings = &self.settings;
        let adaptive = settings.mode == TestMode::Adaptive;
        ProficiencyTest {
            id: self.id.clone(),
            title: settings.title.clone(),
            description: settings.description.clone(),
            locale: settings.locale.clone(),
            target_language: settings.target_language.clone(),
            time_limit_minutes: settings.time_limit_minutes,
            is_active: settings.is_active,
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
            mode: settings.mode,
            max_questions: settings.max_questions,
            level_messages: settings.level_messages.clone(),
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

fn test_from_row(row: &impl Row) -> Result<StoredTest> {
    let messages = row.opt_text("level_messages")?;
    Ok(StoredTest {
        settings: TestSettings {
            title: row.text("title")?,
            description: row.opt_text("description")?,
            locale: row.opt_text("locale")?,
            target_language: row.opt_text("target_language")?,
            time_limit_minutes: row.opt_int("time_limit_minutes")?,
            is_active: row.flag("is_active")?,
            mode: TestMode::from_stored(&row.text("mode")?),
            max_questions: row.opt_int("max_questions")?,
            level_messages: messages.and_then(|m| serde_json::from_str(&m).ok()),
        },
        slope: row.opt_float("slope")?,
        id: row.text("id")?,
        question_count: row.int("question_count")?,
        max_score: row.int("max_score")?,
        created_at: row.int("created_at")?,
        updated_at: row.int("updated_at")?,
        questions: Vec::new(),
        level_ranges: Vec::new(),
    })
}

/// Puts question, option and range rows (each ordered by position) under their tests.
fn assemble<R: Row>(
    tests: &mut [StoredTest],
    questions: &[R],
    options: &[R],
    ranges: &[R],
) -> Result<()> {
    let mut options_of: HashMap<String, Vec<StoredOption>> = HashMap::new();
    for row in options {
        options_of
            .entry(row.text("question_id")?)
            .or_default()
            .push(StoredOption {
                id: row.text("id")?,
                text: row.text("text")?,
            });
    }
    let mut questions_of: HashMap<String, Vec<StoredQuestion>> = HashMap::new();
    for row in questions {
        let id = row.text("id")?;
        let options = options_of.remove(&id).unwrap_or_default();
        questions_of
            .entry(row.text("test_id")?)
            .or_default()
            .push(StoredQuestion {
                id,
                text: row.text("text")?,
                points: row.int("points")?,
                correct_option_id: row.text("correct_option_id")?,
                options,
                level: row
                    .opt_text("level")?
                    .and_then(|l| CefrLevel::parse("level", &l).ok()),
                difficulty: row.opt_float("difficulty")?,
                answer_count: row.int("answer_count")?,
            });
    }
    let mut ranges_of: HashMap<String, Vec<StoredRange>> = HashMap::new();
    for row in ranges {
        ranges_of
            .entry(row.text("test_id")?)
            .or_default()
            .push(StoredRange {
                level: row.text("level")?,
                min_score: row.int("min_score")?,
                max_score: row.int("max_score")?,
                message: row.text("message")?,
            });
    }
    for test in tests {
        test.questions = questions_of.remove(&test.id).unwrap_or_default();
        test.level_ranges = ranges_of.remove(&test.id).unwrap_or_default();
    }
    Ok(())
}

/// One test with everything in it; `None` for an unknown or malformed id. On any
/// connection: a read's, or a piece of write work's.
pub(super) async fn find_test<C: WriteConn>(conn: &mut C, id: &str) -> Result<Option<StoredTest>> {
    let select = concat!(
        "SELECT ",
        test_columns!(),
        " FROM proficiency_tests WHERE id = $1"
    );
    let Some(row) = by_id::find(conn, select, id).await? else {
        return Ok(None);
    };
    let mut tests = [test_from_row(&row)?];
    let questions = conn
        .fetch_all(questions_where!("= $1"), &[Arg::Text(id)])
        .await?;
    let options = conn
        .fetch_all(options_where!("= $1"), &[Arg::Text(id)])
        .await?;
    let ranges = conn
        .fetch_all(ranges_where!("= $1"), &[Arg::Text(id)])
        .await?;
    assemble(&mut tests, &questions, &options, &ranges)?;
    let [test] = tests;
    Ok(Some(test))
}

pub(super) async fn require_test<C: WriteConn>(conn: &mut C, id: &str) -> Result<StoredTest> {
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
    let mut tests = rows.iter().map(test_from_row).collect::<Result<Vec<_>>>()?;
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
