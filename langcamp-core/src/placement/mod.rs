//! Placement (proficiency) tests and their results (CONTRACT §6).
//!
//! Admins author tests: questions with options and points, and level ranges that turn a
//! total score into a level and a message. Anyone reads active tests; a signed-in user
//! submits answers and gets a scored result.
//!
//! Two rules shape this module:
//! * the answer key (`correctOptionIndex`, which option is correct) is only ever put into
//!   a response for an admin: the public views are built without it, not filtered after;
//! * a result is a snapshot: the test's title, target language and the per-question detail
//!   are copied into `test_results` at submission, so editing or deleting the test later
//!   changes nothing about results already given.
//!
//! Questions and options keep their ids across edits when the update carries them, so a
//! result's `questionId` still names the same question after the test was edited.

pub mod adaptive;
mod attempts;
mod calibration;
mod draft;
mod item_view;
mod results;
mod store;

/// A test as submissions need it (questions, options, bands), held by
/// [`crate::Caches::active_tests`]; `None` remembers that the id names no test.
/// Opaque outside this module.
#[derive(Clone)]
pub struct HeldTest(Option<Arc<store::StoredTest>>);

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::Langcamp;
use crate::domain::Deleted;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::domain::validate::Patch;
use crate::domain::{Id, LanguageFilter, LanguageTag};
use crate::platform::changes::Change;

pub use attempts::{AnswerInput, Attempt, AttemptAnswer, AttemptQuestion, AttemptView};
pub use calibration::{CalibratedQuestion, CalibratedSlope, Calibration};
pub use results::{
    DetailedAnswer, DetailedResult, LastResult, ResultAnswer, ResultFilter, ResultList,
    ResultQuery, ResultTest, ResultUser, SubmitInput, SubmittedAnswer, TestResult, TestStatus,
};
pub(crate) use results::{detailed_results_of, export_chunk as results_export_chunk};

/// Bounds of authoring input; they also keep the coverage check of level ranges cheap
/// (at most `MAX_QUESTIONS * MAX_POINTS` possible scores).
pub const MAX_QUESTIONS: usize = 200;
pub const MAX_OPTIONS: usize = 20;
pub const MAX_POINTS: i64 = 1000;
pub const MAX_LEVEL_RANGES: usize = 50;
pub const TITLE_MAX: usize = 200;

/// How a test is taken (CONTRACT §19): `fixed`, every question answered and scored by
/// level ranges; `adaptive`, one question at a time through attempts, each answer choosing
/// the next, the level from the final ability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TestMode {
    #[default]
    Fixed,
    Adaptive,
}

impl TestMode {
    pub fn as_str(self) -> &'static str {
        match self {
            TestMode::Fixed => "fixed",
            TestMode::Adaptive => "adaptive",
        }
    }

    /// The stored value; anything unknown is `fixed`.
    pub(crate) fn from_stored(raw: &str) -> TestMode {
        if raw == "adaptive" {
            TestMode::Adaptive
        } else {
            TestMode::Fixed
        }
    }
}

/// A placement test. `correctOptionIndex` of each question is present for admins only.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProficiencyTest {
    pub id: String,
    #[schema(example = "German placement test")]
    pub title: String,
    pub description: Option<String>,
    /// Language of the test's texts.
    #[schema(
        max_length = 35,
        pattern = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$",
        example = "en"
    )]
    pub locale: Option<String>,
    /// The language the test places people in.
    #[schema(
        max_length = 35,
        pattern = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$",
        example = "de"
    )]
    pub target_language: Option<String>,
    pub time_limit_minutes: Option<i64>,
    pub is_active: bool,
    pub questions: Vec<Question>,
    /// Empty on adaptive tests, which use `levelMessages`.
    pub level_ranges: Vec<LevelRange>,
    /// `fixed` (the default) or `adaptive` (taken through attempts, CONTRACT §19).
    pub mode: TestMode,
    /// Adaptive tests: the most questions an attempt asks (5 to 100); null on fixed tests.
    pub max_questions: Option<i64>,
    /// Adaptive tests: the message of each level (`{"A1": "..."}`); null on fixed tests.
    pub level_messages: Option<BTreeMap<String, String>>,
    pub question_count: i64,
    /// The sum of the points of all questions.
    pub max_score: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl ProficiencyTest {
    /// The test's id, typed.
    pub fn typed_id(&self) -> Id<ProficiencyTest> {
        Id::from(&self.id)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    pub id: String,
    pub text: String,
    pub points: i64,
    pub options: Vec<AnswerOption>,
    /// Zero-based index of the correct option; only in responses to admins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct_option_index: Option<i64>,
    /// Adaptive tests, admins only: the question's CEFR level.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "B1")]
    pub level: Option<String>,
    /// Adaptive tests, admins only: the difficulty in use (logits), calibrated or the
    /// level's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<f64>,
    /// Adaptive tests, admins only: whether `difficulty` was calibrated from answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<bool>,
    /// Adaptive tests, admins only: the answers of finished attempts counted by the last
    /// calibration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_count: Option<i64>,
}

/// One answer option of a question.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnswerOption {
    pub id: String,
    pub text: String,
}

/// A score band: a total score from `minScore` to `maxScore` (both inclusive) gets
/// `level` and `message`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LevelRange {
    #[schema(example = "B1")]
    pub level: String,
    pub min_score: i64,
    pub max_score: i64,
    pub message: String,
}

/// A new test. `questions` and `levelRanges` are required: at least one question, each
/// with 2 to 20 options and a `correctOptionIndex` in range; level ranges must not overlap
/// and must cover every score a taker can reach, from 0 to `maxScore`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestInput {
    /// 1 to 200 characters.
    #[schema(value_type = String, required = true, min_length = 1, max_length = 200, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "German placement test")]
    pub title: Option<String>,
    /// Up to 5000 characters.
    pub description: Option<String>,
    /// Language code of the test's texts.
    #[schema(example = "en")]
    pub locale: Option<String>,
    /// Language code of the language tested.
    #[schema(example = "de")]
    pub target_language: Option<String>,
    /// 1 to 1440, or null for no limit.
    #[schema(minimum = 1, maximum = 1440)]
    pub time_limit_minutes: Option<i64>,
    /// Default true.
    pub is_active: Option<bool>,
    /// 1 to 200 questions.
    #[schema(value_type = Vec<QuestionInput>, required = true, min_items = 1, max_items = 200)]
    pub questions: Option<Vec<QuestionInput>>,
    /// 1 to 50 ranges; required on fixed tests, refused on adaptive ones.
    #[schema(value_type = Vec<LevelRangeInput>, min_items = 1, max_items = 50)]
    pub level_ranges: Option<Vec<LevelRangeInput>>,
    /// `fixed` (default) or `adaptive`.
    pub mode: Option<TestMode>,
    /// Adaptive tests only: 5 to 100, default 20.
    #[schema(minimum = 5, maximum = 100)]
    pub max_questions: Option<i64>,
    /// Adaptive tests only: a message per CEFR level (keys `A1`..`C2`, up to 2000
    /// characters each).
    pub level_messages: Option<BTreeMap<String, String>>,
}

/// A change to a test: absent fields stay. `questions` and `levelRanges`, when present,
/// replace the whole list; a question or option that carries its `id` keeps it, any
/// other is new. The result must pass the same checks as a new test.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestPatch {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub locale: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub target_language: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub time_limit_minutes: Patch<i64>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub is_active: Patch<bool>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<QuestionInput>>)]
    pub questions: Patch<Vec<QuestionInput>>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<LevelRangeInput>>)]
    pub level_ranges: Patch<Vec<LevelRangeInput>>,
    #[serde(default)]
    #[schema(value_type = Option<TestMode>)]
    pub mode: Patch<TestMode>,
    /// Adaptive tests only: 5 to 100; null sets the default, 20.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 5, maximum = 100)]
    pub max_questions: Patch<i64>,
    /// Adaptive tests only; null clears them.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, String>>)]
    pub level_messages: Patch<BTreeMap<String, String>>,
}

#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuestionInput {
    /// On update: the id of an existing question of this test, to keep it.
    pub id: Option<String>,
    /// 1 to 2000 characters.
    #[schema(value_type = String, required = true, min_length = 1, max_length = 2000, pattern = r"^[^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub text: Option<String>,
    /// A whole number from 1 to 1000; default 1.
    #[serde(default)]
    #[schema(value_type = i64, minimum = 1, maximum = 1000, example = 1)]
    pub points: Patch<i64>,
    /// 2 to 20 options.
    #[schema(value_type = Vec<OptionInput>, required = true, min_items = 2, max_items = 20)]
    pub options: Option<Vec<OptionInput>>,
    /// Zero-based index of the correct option.
    #[schema(value_type = i64, required = true, minimum = 0)]
    pub correct_option_index: Option<i64>,
    /// Adaptive tests (required there, refused on fixed tests): the CEFR level.
    #[schema(example = "B1")]
    pub level: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionInput {
    /// On update: the id of an existing option of this question, to keep it.
    pub id: Option<String>,
    /// 1 to 500 characters.
    #[schema(value_type = String, required = true, min_length = 1, max_length = 500, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub text: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LevelRangeInput {
    /// 1 to 50 characters, such as a CEFR level.
    #[schema(value_type = String, required = true, min_length = 1, max_length = 50, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "B1")]
    pub level: Option<String>,
    /// 0 or more.
    #[schema(value_type = i64, required = true, minimum = 0)]
    pub min_score: Option<i64>,
    /// `minScore` or more.
    #[schema(value_type = i64, required = true, minimum = 0)]
    pub max_score: Option<i64>,
    /// Up to 2000 characters; default empty.
    pub message: Option<String>,
}

/// Query of the test list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct TestFilter {
    /// Language code of the test's texts; empty means no filter.
    #[param(pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    pub locale: Option<String>,
    /// Language code of the language tested; empty means no filter.
    #[param(pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    pub target_language: Option<String>,
}

/// A test to create: a [`TestInput`] with every field checked (one message per problem)
/// and every id decided.
#[derive(Clone, Debug)]
pub struct NewTest(draft::TestDraft);

impl TryFrom<TestInput> for NewTest {
    type Error = Error;

    fn try_from(input: TestInput) -> Result<NewTest> {
        draft::from_input(input).map(NewTest)
    }
}

impl TryFrom<&TestFilter> for LanguageFilter {
    type Error = Error;

    fn try_from(filter: &TestFilter) -> Result<LanguageFilter> {
        LanguageFilter::parse(filter.locale.as_deref(), filter.target_language.as_deref())
    }
}

/// `<title> (copy)`, the original shortened when needed to stay within the title limit.
fn copy_title(title: &str) -> String {
    const SUFFIX: &str = " (copy)";
    let room = TITLE_MAX - SUFFIX.chars().count();
    let kept: String = title.chars().take(room).collect();
    format!("{}{SUFFIX}", kept.trim_end())
}

impl Langcamp {
    /// `GET /proficiency-tests`: newest first; active tests only unless the caller is admin.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_tests(
        &self,
        actor: &Actor,
        filter: &LanguageFilter,
        page: PageRequest,
    ) -> Result<Page<ProficiencyTest>> {
        Ok((*self.list_tests_shared(actor, filter, page).await?).clone())
    }

    /// [`Langcamp::list_tests`] without copying the cached page: the public page is the
    /// read cache's own object (the HTTP layer keeps its encoding by that identity).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_tests_shared(
        &self,
        actor: &Actor,
        filter: &LanguageFilter,
        page: PageRequest,
    ) -> Result<Arc<Page<ProficiencyTest>>> {
        let admin = actor.is_admin();
        let tag = |tag: &Option<LanguageTag>| tag.as_ref().map(|t| t.as_str().to_owned());
        let (locale, target) = (tag(&filter.locale), tag(&filter.target_language));
        if admin {
            return Ok(Arc::new(
                self.load_tests(true, locale.as_deref(), target.as_deref(), page)
                    .await?,
            ));
        }
        // The public list is read far more than written: served from the read cache,
        // which every test change empties (`Change::Tests`).
        let key = (locale, target, page.page, page.limit);
        let now = self.clock().now_ms();
        let cached = self
            .caches()
            .tests
            .get_or_load(key.clone(), now, || async {
                let (locale, target, _, _) = &key;
                Ok(Arc::new(
                    self.load_tests(false, locale.as_deref(), target.as_deref(), page)
                        .await?,
                ))
            })
            .await?;
        Ok(cached)
    }

    async fn load_tests(
        &self,
        admin: bool,
        locale: Option<&str>,
        target: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<ProficiencyTest>> {
        let mut snapshot = self.db().read_snapshot().await?;
        let (tests, total) =
            store::page_of_tests(&mut snapshot, admin, locale, target, page).await?;
        let list = tests.iter().map(|t| t.view(admin)).collect();
        Ok(Page::new(list, page, total))
    }

    /// `GET /proficiency-tests/languages`: target languages having an active test, sorted.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn test_languages(&self, _actor: &Actor) -> Result<Vec<String>> {
        let mut conn = self.db().reader().acquire().await?;
        store::active_languages(&mut conn).await
    }

    /// `GET /proficiency-tests/{id}`: an inactive test is not found unless the caller is admin.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_test(
        &self,
        actor: &Actor,
        id: &Id<ProficiencyTest>,
    ) -> Result<ProficiencyTest> {
        let id = id.as_str();
        let admin = actor.is_admin();
        let mut snapshot = self.db().read_snapshot().await?;
        match store::find_test(&mut snapshot, id).await? {
            Some(test) if test.settings.is_active || admin => Ok(test.view(admin)),
            _ => Err(Error::not_found("test")),
        }
    }

    /// `POST /proficiency-tests`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_test(&self, actor: &Actor, new: NewTest) -> Result<ProficiencyTest> {
        actor.require(Role::Admin)?;
        let NewTest(draft) = new;
        let create = store::Create(draft);
        self.staff_write(actor, create, Some(Change::Tests)).await
    }

    /// `POST /proficiency-tests/{id}/duplicate`: an inactive copy with new ids.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn duplicate_test(
        &self,
        actor: &Actor,
        id: &Id<ProficiencyTest>,
    ) -> Result<ProficiencyTest> {
        actor.require(Role::Admin)?;
        if !id.is_well_formed() {
            return Err(Error::not_found("test"));
        }
        let duplicate = store::Duplicate(id.as_str().to_owned());
        self.staff_write(actor, duplicate, Some(Change::Tests))
            .await
    }

    /// `PATCH /proficiency-tests/{id}`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update_test(
        &self,
        actor: &Actor,
        id: &Id<ProficiencyTest>,
        input: TestPatch,
    ) -> Result<ProficiencyTest> {
        actor.require(Role::Admin)?;
        if !id.is_well_formed() {
            return Err(Error::not_found("test"));
        }
        let update = store::Update(id.as_str().to_owned(), input);
        self.staff_write(actor, update, Some(Change::Tests)).await
    }

    /// `DELETE /proficiency-tests/{id}`: its results remain, with their snapshots.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_test(&self, actor: &Actor, id: &Id<ProficiencyTest>) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        if !id.is_well_formed() {
            return Err(Error::not_found("test"));
        }
        let delete = store::Delete(id.as_str().to_owned());
        self.staff_write(actor, delete, Some(Change::Tests)).await?;
        Ok(Deleted::from(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_titles_stay_within_the_limit() {
        assert_eq!(copy_title("German"), "German (copy)");
        let long = "x".repeat(TITLE_MAX);
        let copy = copy_title(&long);
        assert_eq!(copy.chars().count(), TITLE_MAX);
        assert!(copy.ends_with(" (copy)"));
        let wide = "ü".repeat(TITLE_MAX);
        assert_eq!(copy_title(&wide).chars().count(), TITLE_MAX);
    }
}
