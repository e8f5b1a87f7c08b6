//! Authoring input parsed into a validated [`TestDraft`], with one message per problem.
//!
//! The level-range rule is the subtle one: ranges must not overlap, and every score a
//! taker can actually reach (a sum of the points of some set of questions) from 0 to the
//! maximum must fall in a range. Scores nobody can reach (3 when every question is worth
//! 2 points) may stay uncovered.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::store::{StoredOption, StoredQuestion, StoredRange, StoredTest, TestSettings};
use super::{
    LevelRangeInput, MAX_LEVEL_RANGES, MAX_OPTIONS, MAX_POINTS, MAX_QUESTIONS, OptionInput,
    QuestionInput, TITLE_MAX, TestInput, TestMode, TestPatch,
};
use crate::domain::CefrLevel;
use crate::domain::error::Result;
use crate::domain::id::new_id;
use crate::domain::validate::{self, Field, Patch, Problems, passed};
use crate::placement::adaptive::stop::DEFAULT_MAX_QUESTIONS;

const DESCRIPTION_MAX: usize = 5000;
const QUESTION_TEXT_MAX: usize = 2000;
const OPTION_TEXT_MAX: usize = 500;
const LEVEL_MAX: usize = 50;
const MESSAGE_MAX: usize = 2000;
const TIME_LIMIT_MAX: i64 = 1440;
/// The bounds of an adaptive test's `maxQuestions` (CONTRACT §19).
const MAX_QUESTIONS_RANGE: std::ops::RangeInclusive<i64> = 5..=100;

mod ranges;
use ranges::*;

/// A test as it will be stored: every field checked, every id decided.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct TestDraft {
    pub settings: TestSettings,
    pub questions: Vec<QuestionDraft>,
    pub level_ranges: Vec<StoredRange>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct QuestionDraft {
    /// Kept from the stored question, or new.
    pub id: String,
    pub text: String,
    pub points: i64,
    pub options: Vec<StoredOption>,
    pub correct_index: usize,
    /// Adaptive tests: the question's level.
    pub level: Option<CefrLevel>,
    /// Kept from the stored question: its calibrated difficulty.
    pub difficulty: Option<f64>,
    /// Kept from the stored question: the answers its calibration counted.
    pub answer_count: i64,
}

impl TestDraft {
    pub fn max_score(&self) -> i64 {
        self.questions.iter().map(|q| q.points).sum()
    }

    /// Gives every question and option a new id (for a copy).
    pub fn renew_ids(&mut self) {
        for question in &mut self.questions {
            question.id = new_id();
            for option in &mut question.options {
                option.id = new_id();
            }
        }
    }
}

/// A new test from a create body.
pub(super) fn from_input(input: TestInput) -> Result<TestDraft> {
    let mut problems = Problems::new();
    let title = problems.take(validate::text(
        "title",
        input.title.as_deref(),
        1,
        TITLE_MAX,
    ));
    let description = problems.take(validate::optional_multiline_text(
        "description",
        input.description.as_deref(),
        DESCRIPTION_MAX,
    ));
    let locale = optional_tag(&mut problems, "locale", input.locale.as_deref());
    let target_language = optional_tag(
        &mut problems,
        "targetLanguage",
        input.target_language.as_deref(),
    );
    let time_limit_minutes = match input.time_limit_minutes {
        None => Some(None),
        Some(minutes) => problems.take(time_limit(minutes)).map(Some),
    };
    let questions = match input.questions {
        None => {
            problems.add("questions is required");
            None
        }
        Some(list) => parse_questions(&mut problems, list, &[]),
    };
    let mode = input.mode.unwrap_or_default();
    let level_ranges = match (mode, input.level_ranges) {
        (TestMode::Fixed, None) => {
            problems.add("levelRanges is required");
            None
        }
        (TestMode::Fixed, Some(list)) => parse_ranges(&mut problems, list),
        (TestMode::Adaptive, None) => Some(Vec::new()),
        (TestMode::Adaptive, Some(_)) => {
            problems.add(ADAPTIVE_RANGES);
            None
        }
    };
    if mode == TestMode::Fixed
        && let Some(ranges) = &level_ranges
    {
        check_ranges(&mut problems, ranges, questions.as_deref());
    }
    if let Some(questions) = &questions {
        check_levels(&mut problems, mode, questions);
    }
    let max_questions = match (mode, input.max_questions) {
        (TestMode::Adaptive, None) => Some(Some(default_max_questions())),
        (TestMode::Adaptive, Some(max)) => problems.take(max_questions(max)).map(Some),
        (TestMode::Fixed, None) => Some(None),
        (TestMode::Fixed, Some(_)) => {
            problems.add("maxQuestions is only for adaptive tests");
            None
        }
    };
    let level_messages = match (mode, input.level_messages) {
        (_, None) => Some(None),
        (TestMode::Adaptive, Some(messages)) => problems.take(level_messages(messages)).map(Some),
        (TestMode::Fixed, Some(_)) => {
            problems.add("levelMessages is only for adaptive tests");
            None
        }
    };
    problems.finish()?;
    Ok(TestDraft {
        settings: TestSettings {
            title: passed(title)?,
            description: passed(description)?,
            locale: passed(locale)?,
            target_language: passed(target_language)?,
            time_limit_minutes: passed(time_limit_minutes)?,
            is_active: input.is_active.unwrap_or(true),
            mode,
            max_questions: passed(max_questions)?,
            level_messages: passed(level_messages)?,
        },
        questions: passed(questions)?,
        level_ranges: passed(level_ranges)?,
    })
}

/// Why an adaptive test refuses level ranges.
const ADAPTIVE_RANGES: &str = "levelRanges is not used by adaptive tests (the level comes from the ability): use levelMessages";

fn default_max_questions() -> i64 {
    i64::try_from(DEFAULT_MAX_QUESTIONS).unwrap_or(20)
}

fn max_questions(max: i64) -> std::result::Result<i64, String> {
    if MAX_QUESTIONS_RANGE.contains(&max) {
        Ok(max)
    } else {
        Err(format!(
            "maxQuestions must be a whole number from {} to {}",
            MAX_QUESTIONS_RANGE.start(),
            MAX_QUESTIONS_RANGE.end()
        ))
    }
}

/// An adaptive test's messages per level: keys are CEFR levels (stored as `A1`..`C2`),
/// values multi-line text.
fn level_messages(
    messages: BTreeMap<String, String>,
) -> std::result::Result<BTreeMap<String, String>, String> {
    let mut parsed = BTreeMap::new();
    for (key, message) in messages {
        let level = CefrLevel::parse(&format!("levelMessages key {key:?}"), &key)?;
        let field = format!("levelMessages.{}", level.as_str());
        let text = validate::optional_multiline_text(&field, Some(&message), MESSAGE_MAX)?;
        parsed.insert(level.as_str().to_owned(), text.unwrap_or_default());
    }
    Ok(parsed)
}

/// Every question of an adaptive test has a level; no question of a fixed test has one.
fn check_levels(problems: &mut Problems, mode: TestMode, questions: &[QuestionDraft]) {
    for (i, question) in questions.iter().enumerate() {
        match (mode, question.level) {
            (TestMode::Adaptive, None) => problems.add(format!(
                "questions[{i}].level is required in an adaptive test (one of {})",
                CefrLevel::list()
            )),
            (TestMode::Fixed, Some(_)) => {
                problems.add(format!("questions[{i}].level is only for adaptive tests"))
            }
            _ => {}
        }
    }
}

/// The stored test as a draft, ids kept.
pub(super) fn from_stored(test: &StoredTest) -> TestDraft {
    TestDraft {
        settings: test.settings.clone(),
        questions: test
            .questions
            .iter()
            .map(|q| QuestionDraft {
                id: q.id.clone(),
                text: q.text.clone(),
                points: q.points,
                options: q.options.clone(),
                correct_index: q.correct_index().unwrap_or(0),
                level: q.level,
                difficulty: q.difficulty,
                answer_count: q.answer_count,
            })
            .collect(),
        level_ranges: test.level_ranges.clone(),
    }
}

/// The stored test with a patch applied; also says whether questions or ranges changed.
pub(super) fn from_patch(existing: &StoredTest, patch: TestPatch) -> Result<(TestDraft, bool)> {
    let mut problems = Problems::new();
    let mut draft = from_stored(existing);
    if let Some(title) = patch.title.non_null(&mut problems, "title", |t| {
        validate::bounded("title", &t, 1, TITLE_MAX)
    }) {
        draft.settings.title = title;
    }
    if let Some(description) = patch.description.clearable(&mut problems, |d| {
        validate::optional_multiline_text("description", Some(&d), DESCRIPTION_MAX)
    }) {
        draft.settings.description = description;
    }
    if let Some(locale) = patch
        .locale
        .clearable_field(&mut problems, "locale", tag_or_empty)
    {
        draft.settings.locale = locale;
    }
    if let Some(target) =
        patch
            .target_language
            .clearable_field(&mut problems, "targetLanguage", tag_or_empty)
    {
        draft.settings.target_language = target;
    }
    if let Some(minutes) = patch
        .time_limit_minutes
        .clearable(&mut problems, |m| time_limit(m).map(Some))
    {
        draft.settings.time_limit_minutes = minutes;
    }
    if let Some(active) = patch.is_active.non_null(&mut problems, "isActive", Ok) {
        draft.settings.is_active = active;
    }
    if let Some(mode) = patch.mode.non_null(&mut problems, "mode", Ok) {
        draft.settings.mode = mode;
    }
    let mode = draft.settings.mode;
    let questions = patch_list(&mut problems, "questions", patch.questions, |p, list| {
        parse_questions(p, list, &existing.questions)
    });
    let ranges = match (mode, patch.level_ranges) {
        (TestMode::Adaptive, Patch::Value(_)) => {
            problems.add(ADAPTIVE_RANGES);
            Field::Invalid
        }
        (_, ranges) => patch_list(&mut problems, "levelRanges", ranges, parse_ranges),
    };
    let questions_set = questions.is_set();
    let mut children_changed = questions_set || ranges.is_set();
    let questions_ok = questions.apply(&mut draft.questions);
    let ranges_ok = ranges.apply(&mut draft.level_ranges);
    match mode {
        TestMode::Fixed => {
            if !questions_set && draft.questions.iter().any(|q| q.level.is_some()) {
                // Turned fixed: the kept questions' levels no longer apply.
                for question in &mut draft.questions {
                    question.level = None;
                }
                children_changed = true;
            }
            if ranges_ok && draft.level_ranges.is_empty() {
                problems.add("levelRanges is required on a fixed test");
            } else if ranges_ok {
                let questions = questions_ok.then_some(draft.questions.as_slice());
                check_ranges(&mut problems, &draft.level_ranges, questions);
            }
            if matches!(patch.max_questions, Patch::Value(_)) {
                problems.add("maxQuestions is only for adaptive tests");
            }
            if matches!(patch.level_messages, Patch::Value(_)) {
                problems.add("levelMessages is only for adaptive tests");
            }
            draft.settings.max_questions = None;
            draft.settings.level_messages = None;
        }
        TestMode::Adaptive => {
            if !draft.level_ranges.is_empty() {
                // Turned adaptive: level ranges are not used.
                draft.level_ranges.clear();
                children_changed = true;
            }
            match patch.max_questions {
                Patch::Absent => {}
                Patch::Null => draft.settings.max_questions = None,
                Patch::Value(max) => {
                    if let Some(max) = problems.take(max_questions(max)) {
                        draft.settings.max_questions = Some(max);
                    }
                }
            }
            draft.settings.max_questions = draft
                .settings
                .max_questions
                .or(Some(default_max_questions()));
            match patch.level_messages {
                Patch::Absent => {}
                Patch::Null => draft.settings.level_messages = None,
                Patch::Value(messages) => {
                    if let Some(messages) = problems.take(level_messages(messages)) {
                        draft.settings.level_messages = Some(messages);
                    }
                }
            }
        }
    }
    if questions_ok {
        check_levels(&mut problems, mode, &draft.questions);
    }
    problems.finish()?;
    Ok((draft, children_changed))
}

/// A PATCH of a whole list, which `null` may not clear: a present list is parsed whole.
fn patch_list<T, U>(
    problems: &mut Problems,
    field: &str,
    value: Patch<Vec<T>>,
    parse: impl FnOnce(&mut Problems, Vec<T>) -> Option<Vec<U>>,
) -> Field<Vec<U>> {
    match value {
        Patch::Absent => Field::Keep,
        Patch::Null => {
            problems.add(format!("{field} cannot be null"));
            Field::Invalid
        }
        Patch::Value(list) => parse(problems, list).map_or(Field::Invalid, Field::Set),
    }
}

/// An optional language code: empty counts as absent.
fn optional_tag(problems: &mut Problems, field: &str, raw: Option<&str>) -> Option<Option<String>> {
    problems.take(tag_or_empty(field, raw.unwrap_or("")))
}

fn tag_or_empty(field: &str, raw: &str) -> std::result::Result<Option<String>, String> {
    if raw.trim().is_empty() {
        Ok(None)
    } else {
        validate::language_tag(field, raw).map(Some)
    }
}

fn time_limit(minutes: i64) -> std::result::Result<i64, String> {
    if (1..=TIME_LIMIT_MAX).contains(&minutes) {
        Ok(minutes)
    } else {
        Err(format!(
            "timeLimitMinutes must be a whole number from 1 to {TIME_LIMIT_MAX}"
        ))
    }
}

/// Whether a list of `len` items has 1 to `max`; else records why not, naming the list
/// `field` and each of its items an `item`.
fn list_length_ok(
    problems: &mut Problems,
    field: &str,
    item: &str,
    len: usize,
    max: usize,
) -> bool {
    if len == 0 {
        problems.add(format!("{field} must have at least one {item}"));
    } else if len > max {
        problems.add(format!("{field} must have at most {max} {item}s"));
    }
    (1..=max).contains(&len)
}

/// Questions of a create or update body. `existing` are the stored questions whose ids
/// (and their options' ids) an update may carry to keep them.
fn parse_questions(
    problems: &mut Problems,
    inputs: Vec<QuestionInput>,
    existing: &[StoredQuestion],
) -> Option<Vec<QuestionDraft>> {
    if !list_length_ok(
        problems,
        "questions",
        "question",
        inputs.len(),
        MAX_QUESTIONS,
    ) {
        return None;
    }
    let stored: HashMap<&str, &StoredQuestion> =
        existing.iter().map(|q| (q.id.as_str(), q)).collect();
    let mut seen_questions: HashMap<String, usize> = HashMap::new();
    let mut ok = true;
    let mut drafts = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.into_iter().enumerate() {
        let before = problems.len();
        let path = format!("questions[{i}]");
        let kept = match input.id.as_deref().map(str::trim) {
            None => None,
            Some(id) => match stored.get(id) {
                None => {
                    problems.add(format!("{path}.id does not name a question of this test"));
                    None
                }
                Some(question) => {
                    if let Some(first) = seen_questions.insert(id.to_owned(), i) {
                        problems.add(format!("{path}.id repeats the id of questions[{first}]"));
                    }
                    Some(*question)
                }
            },
        };
        let text = problems.take(validate::multiline_text(
            &format!("{path}.text"),
            input.text.as_deref(),
            1,
            QUESTION_TEXT_MAX,
        ));
        let points = match input.points {
            Patch::Absent => Some(1),
            Patch::Null => {
                problems.add(format!("{path}.points cannot be null"));
                None
            }
            Patch::Value(p) if (1..=MAX_POINTS).contains(&p) => Some(p),
            Patch::Value(_) => {
                problems.add(format!(
                    "{path}.points must be a whole number from 1 to {MAX_POINTS}"
                ));
                None
            }
        };
        let options = match input.options {
            None => {
                problems.add(format!("{path}.options is required"));
                None
            }
            Some(options) => parse_options(problems, &path, options, kept),
        };
        let level = match input.level.as_deref() {
            None => Some(None),
            Some(raw) => problems
                .take(CefrLevel::parse(&format!("{path}.level"), raw))
                .map(Some),
        };
        match (input.correct_option_index, &options) {
            (None, _) => problems.add(format!("{path}.correctOptionIndex is required")),
            (Some(index), Some(options))
                if usize::try_from(index).is_ok_and(|i| i < options.len()) => {}
            (Some(_), Some(options)) => problems.add(format!(
                "{path}.correctOptionIndex must be from 0 to {}",
                options.len() - 1
            )),
            // Without valid options there is no range to check the index against.
            (Some(_), None) => {}
        }
        if problems.len() != before {
            ok = false;
            continue;
        }
        if let (Some(text), Some(points), Some(options), Some(index), Some(level)) =
            (text, points, options, input.correct_option_index, level)
        {
            drafts.push(QuestionDraft {
                id: kept.map_or_else(new_id, |q| q.id.clone()),
                text,
                points,
                options,
                correct_index: usize::try_from(index).unwrap_or(0),
                level,
                difficulty: kept.and_then(|q| q.difficulty),
                answer_count: kept.map_or(0, |q| q.answer_count),
            });
        }
    }
    ok.then_some(drafts)
}

fn parse_options(
    problems: &mut Problems,
    path: &str,
    inputs: Vec<OptionInput>,
    kept: Option<&StoredQuestion>,
) -> Option<Vec<StoredOption>> {
    if inputs.len() < 2 {
        problems.add(format!("{path}.options must have at least 2 options"));
        return None;
    }
    if inputs.len() > MAX_OPTIONS {
        problems.add(format!(
            "{path}.options must have at most {MAX_OPTIONS} options"
        ));
        return None;
    }
    let known: HashSet<&str> = kept
        .map(|q| q.options.iter().map(|o| o.id.as_str()).collect())
        .unwrap_or_default();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let before = problems.len();
    let mut drafts = Vec::with_capacity(inputs.len());
    for (j, input) in inputs.into_iter().enumerate() {
        let option_path = format!("{path}.options[{j}]");
        let id = match input.id.as_deref().map(str::trim) {
            None => Some(new_id()),
            Some(id) if !known.contains(id) => {
                problems.add(format!(
                    "{option_path}.id does not name an option of this question"
                ));
                None
            }
            Some(id) => {
                if let Some(first) = seen.insert(id.to_owned(), j) {
                    problems.add(format!(
                        "{option_path}.id repeats the id of {path}.options[{first}]"
                    ));
                }
                Some(id.to_owned())
            }
        };
        let text = problems.take(validate::text(
            &format!("{option_path}.text"),
            input.text.as_deref(),
            1,
            OPTION_TEXT_MAX,
        ));
        if let (Some(id), Some(text)) = (id, text) {
            drafts.push(StoredOption { id, text });
        }
    }
    (problems.len() == before).then_some(drafts)
}

#[cfg(test)]
mod tests;
