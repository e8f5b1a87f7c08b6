//! Authoring input parsed into a validated [`TestDraft`], with one message per problem.
//!
//! The level-range rule is the subtle one: ranges must not overlap, and every score a
//! taker can actually reach (a sum of the points of some set of questions) from 0 to the
//! maximum must fall in a range. Scores nobody can reach (3 when every question is worth
//! 2 points) may stay uncovered.

use std::collections::{HashMap, HashSet};

use super::store::{StoredQuestion, StoredTest};
use super::{
    LevelRangeInput, MAX_LEVEL_RANGES, MAX_OPTIONS, MAX_POINTS, MAX_QUESTIONS, OptionInput,
    QuestionInput, TITLE_MAX, TestInput, TestPatch,
};
use crate::error::Result;
use crate::id::new_id;
use crate::validate::{self, Patch, Problems};

const DESCRIPTION_MAX: usize = 5000;
const QUESTION_TEXT_MAX: usize = 2000;
const OPTION_TEXT_MAX: usize = 500;
const LEVEL_MAX: usize = 50;
const MESSAGE_MAX: usize = 2000;
const TIME_LIMIT_MAX: i64 = 1440;

/// A test as it will be stored: every field checked, every id decided.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct TestDraft {
    pub title: String,
    pub description: Option<String>,
    pub locale: Option<String>,
    pub target_language: Option<String>,
    pub time_limit_minutes: Option<i64>,
    pub is_active: bool,
    pub questions: Vec<QuestionDraft>,
    pub level_ranges: Vec<RangeDraft>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct QuestionDraft {
    /// Kept from the stored question, or new.
    pub id: String,
    pub text: String,
    pub points: i64,
    pub options: Vec<OptionDraft>,
    pub correct_index: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct OptionDraft {
    pub id: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct RangeDraft {
    pub level: String,
    pub min_score: i64,
    pub max_score: i64,
    pub message: String,
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
    let level_ranges = match input.level_ranges {
        None => {
            problems.add("levelRanges is required");
            None
        }
        Some(list) => parse_ranges(&mut problems, list),
    };
    if let Some(ranges) = &level_ranges {
        check_ranges(&mut problems, ranges, questions.as_deref());
    }
    problems.finish()?;
    match (
        title,
        description,
        locale,
        target_language,
        time_limit_minutes,
        questions,
        level_ranges,
    ) {
        (
            Some(title),
            Some(description),
            Some(locale),
            Some(target_language),
            Some(time_limit_minutes),
            Some(questions),
            Some(level_ranges),
        ) => Ok(TestDraft {
            title,
            description,
            locale,
            target_language,
            time_limit_minutes,
            is_active: input.is_active.unwrap_or(true),
            questions,
            level_ranges,
        }),
        _ => Err(crate::Error::invalid("invalid test")),
    }
}

/// The stored test as a draft, ids kept.
pub(super) fn from_stored(test: &StoredTest) -> TestDraft {
    TestDraft {
        title: test.title.clone(),
        description: test.description.clone(),
        locale: test.locale.clone(),
        target_language: test.target_language.clone(),
        time_limit_minutes: test.time_limit_minutes,
        is_active: test.is_active,
        questions: test
            .questions
            .iter()
            .map(|q| QuestionDraft {
                id: q.id.clone(),
                text: q.text.clone(),
                points: q.points,
                options: q
                    .options
                    .iter()
                    .map(|o| OptionDraft {
                        id: o.id.clone(),
                        text: o.text.clone(),
                    })
                    .collect(),
                correct_index: q.correct_index().unwrap_or(0),
            })
            .collect(),
        level_ranges: test
            .level_ranges
            .iter()
            .map(|r| RangeDraft {
                level: r.level.clone(),
                min_score: r.min_score,
                max_score: r.max_score,
                message: r.message.clone(),
            })
            .collect(),
    }
}

/// The stored test with a patch applied; also says whether questions or ranges changed.
pub(super) fn from_patch(existing: &StoredTest, patch: TestPatch) -> Result<(TestDraft, bool)> {
    let mut problems = Problems::new();
    let mut draft = from_stored(existing);
    match patch.title {
        Patch::Absent => {}
        Patch::Null => problems.add("title cannot be null"),
        Patch::Value(title) => {
            if let Some(title) = problems.take(validate::bounded("title", &title, 1, TITLE_MAX)) {
                draft.title = title;
            }
        }
    }
    if let Some(description) = patch_optional(&mut problems, patch.description, |d| {
        validate::optional_multiline_text("description", Some(&d), DESCRIPTION_MAX)
    }) {
        draft.description = description;
    }
    if let Some(locale) =
        patch_optional(&mut problems, patch.locale, |l| tag_or_empty("locale", &l))
    {
        draft.locale = locale;
    }
    if let Some(target) = patch_optional(&mut problems, patch.target_language, |t| {
        tag_or_empty("targetLanguage", &t)
    }) {
        draft.target_language = target;
    }
    if let Some(minutes) = patch_optional(&mut problems, patch.time_limit_minutes, |m| {
        time_limit(m).map(Some)
    }) {
        draft.time_limit_minutes = minutes;
    }
    match patch.is_active {
        Patch::Absent => {}
        Patch::Null => problems.add("isActive cannot be null"),
        Patch::Value(active) => draft.is_active = active,
    }
    let mut children_changed = false;
    let mut questions_ok = true;
    match patch.questions {
        Patch::Absent => {}
        Patch::Null => {
            problems.add("questions cannot be null");
            questions_ok = false;
        }
        Patch::Value(list) => match parse_questions(&mut problems, list, &existing.questions) {
            Some(questions) => {
                draft.questions = questions;
                children_changed = true;
            }
            None => questions_ok = false,
        },
    }
    let mut ranges_ok = true;
    match patch.level_ranges {
        Patch::Absent => {}
        Patch::Null => {
            problems.add("levelRanges cannot be null");
            ranges_ok = false;
        }
        Patch::Value(list) => match parse_ranges(&mut problems, list) {
            Some(ranges) => {
                draft.level_ranges = ranges;
                children_changed = true;
            }
            None => ranges_ok = false,
        },
    }
    if ranges_ok {
        let questions = questions_ok.then_some(draft.questions.as_slice());
        check_ranges(&mut problems, &draft.level_ranges, questions);
    }
    problems.finish()?;
    Ok((draft, children_changed))
}

/// A PATCH field that may be cleared: `None` leaves it, `Some(None)` clears it.
fn patch_optional<T, U>(
    problems: &mut Problems,
    value: Patch<T>,
    parse: impl FnOnce(T) -> std::result::Result<Option<U>, String>,
) -> Option<Option<U>> {
    match value {
        Patch::Absent => None,
        Patch::Null => Some(None),
        Patch::Value(v) => problems.take(parse(v)),
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

/// Questions of a create or update body. `existing` are the stored questions whose ids
/// (and their options' ids) an update may carry to keep them.
fn parse_questions(
    problems: &mut Problems,
    inputs: Vec<QuestionInput>,
    existing: &[StoredQuestion],
) -> Option<Vec<QuestionDraft>> {
    if inputs.is_empty() {
        problems.add("questions must have at least one question");
        return None;
    }
    if inputs.len() > MAX_QUESTIONS {
        problems.add(format!(
            "questions must have at most {MAX_QUESTIONS} questions"
        ));
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
        if let (Some(text), Some(points), Some(options), Some(index)) =
            (text, points, options, input.correct_option_index)
        {
            drafts.push(QuestionDraft {
                id: kept.map_or_else(new_id, |q| q.id.clone()),
                text,
                points,
                options,
                correct_index: usize::try_from(index).unwrap_or(0),
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
) -> Option<Vec<OptionDraft>> {
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
            drafts.push(OptionDraft { id, text });
        }
    }
    (problems.len() == before).then_some(drafts)
}

fn parse_ranges(problems: &mut Problems, inputs: Vec<LevelRangeInput>) -> Option<Vec<RangeDraft>> {
    if inputs.is_empty() {
        problems.add("levelRanges must have at least one range");
        return None;
    }
    if inputs.len() > MAX_LEVEL_RANGES {
        problems.add(format!(
            "levelRanges must have at most {MAX_LEVEL_RANGES} ranges"
        ));
        return None;
    }
    let before = problems.len();
    let mut drafts = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.into_iter().enumerate() {
        let path = format!("levelRanges[{i}]");
        let level = problems.take(validate::text(
            &format!("{path}.level"),
            input.level.as_deref(),
            1,
            LEVEL_MAX,
        ));
        let message = problems.take(
            validate::optional_multiline_text(
                &format!("{path}.message"),
                input.message.as_deref(),
                MESSAGE_MAX,
            )
            .map(Option::unwrap_or_default),
        );
        let min = match input.min_score {
            None => {
                problems.add(format!("{path}.minScore is required"));
                None
            }
            Some(min) if min < 0 => {
                problems.add(format!("{path}.minScore must be 0 or more"));
                None
            }
            Some(min) => Some(min),
        };
        let max = match (input.max_score, min) {
            (None, _) => {
                problems.add(format!("{path}.maxScore is required"));
                None
            }
            (Some(max), Some(min)) if max < min => {
                problems.add(format!("{path}.maxScore must not be less than minScore"));
                None
            }
            (Some(max), _) if max < 0 => {
                problems.add(format!("{path}.maxScore must be 0 or more"));
                None
            }
            (Some(max), _) => Some(max),
        };
        if let (Some(level), Some(message), Some(min_score), Some(max_score)) =
            (level, message, min, max)
        {
            drafts.push(RangeDraft {
                level,
                min_score,
                max_score,
                message,
            });
        }
    }
    (problems.len() == before).then_some(drafts)
}

/// No two ranges overlap, and (when the questions are valid) every reachable score has a range.
fn check_ranges(
    problems: &mut Problems,
    ranges: &[RangeDraft],
    questions: Option<&[QuestionDraft]>,
) {
    let mut overlapping = false;
    for (i, a) in ranges.iter().enumerate() {
        for (j, b) in ranges.iter().enumerate().skip(i + 1) {
            if a.min_score <= b.max_score && b.min_score <= a.max_score {
                overlapping = true;
                let from = a.min_score.max(b.min_score);
                let to = a.max_score.min(b.max_score);
                problems.add(format!(
                    "levelRanges[{i}] and levelRanges[{j}] overlap ({})",
                    describe_scores("score", from, to)
                ));
            }
        }
    }
    let Some(questions) = questions else {
        return;
    };
    if overlapping {
        // Coverage is judged once the ranges are disjoint; one problem at a time.
        return;
    }
    let points: Vec<i64> = questions.iter().map(|q| q.points).collect();
    for (from, to) in uncovered_reachable(ranges, &points) {
        problems.add(format!(
            "levelRanges must cover every reachable score, but no range covers {}",
            describe_scores("the reachable score", from, to)
        ));
    }
}

fn describe_scores(noun: &str, from: i64, to: i64) -> String {
    if from == to {
        format!("{noun} {from}")
    } else {
        format!("{noun}s {from} to {to}")
    }
}

/// The scores a taker can reach: bit `s` is set when some set of questions sums to `s`.
pub(super) struct Reachable {
    bits: Vec<u64>,
    max: i64,
}

impl Reachable {
    pub fn of(points: &[i64]) -> Reachable {
        let max: i64 = points.iter().sum::<i64>().max(0);
        let len = usize::try_from(max).unwrap_or(0) + 1;
        let mut bits = vec![0u64; len.div_ceil(64)];
        bits[0] = 1;
        for &p in points {
            let Ok(p) = usize::try_from(p) else { continue };
            if p == 0 {
                continue;
            }
            let (words, shift) = (p / 64, p % 64);
            // In place from the top: each word reads only words at or below itself.
            for i in (0..bits.len()).rev() {
                let mut add = 0u64;
                if i >= words {
                    add |= bits[i - words] << shift;
                    if shift != 0 && i > words {
                        add |= bits[i - words - 1] >> (64 - shift);
                    }
                }
                bits[i] |= add;
            }
        }
        Reachable { bits, max }
    }

    pub fn contains(&self, score: i64) -> bool {
        if !(0..=self.max).contains(&score) {
            return false;
        }
        let s = usize::try_from(score).unwrap_or(0);
        self.bits
            .get(s / 64)
            .is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    /// The lowest and highest reachable score within `from..=to`, if any.
    fn span(&self, from: i64, to: i64) -> Option<(i64, i64)> {
        let to = to.min(self.max);
        let low = (from.max(0)..=to).find(|&s| self.contains(s))?;
        let high = (low..=to).rev().find(|&s| self.contains(s))?;
        Some((low, high))
    }
}

/// Runs of reachable scores (lowest and highest of each gap between ranges) that no range covers.
fn uncovered_reachable(ranges: &[RangeDraft], points: &[i64]) -> Vec<(i64, i64)> {
    let reachable = Reachable::of(points);
    let mut sorted: Vec<(i64, i64)> = ranges.iter().map(|r| (r.min_score, r.max_score)).collect();
    sorted.sort_unstable();
    let mut gaps = Vec::new();
    let mut next = 0i64;
    for (min, max) in sorted {
        if next > reachable.max {
            break;
        }
        if min > next {
            gaps.push((next, min - 1));
        }
        next = next.max(max.saturating_add(1));
    }
    if next <= reachable.max {
        gaps.push((next, reachable.max));
    }
    gaps.into_iter()
        .filter_map(|(from, to)| reachable.span(from, to))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(min: i64, max: i64) -> RangeDraft {
        RangeDraft {
            level: "L".into(),
            min_score: min,
            max_score: max,
            message: String::new(),
        }
    }

    #[test]
    fn reachable_scores_are_the_subset_sums_of_the_points() {
        let r = Reachable::of(&[2, 2, 5]);
        let reachable: Vec<i64> = (0..=9).filter(|&s| r.contains(s)).collect();
        assert_eq!(reachable, vec![0, 2, 4, 5, 7, 9]);
        let big = Reachable::of(&[1000; 200]);
        assert!(big.contains(200_000));
        assert!(big.contains(64_000));
        assert!(!big.contains(64_001));
        let across_words = Reachable::of(&[63, 65, 1]);
        let got: Vec<i64> = (0..=129).filter(|&s| across_words.contains(s)).collect();
        assert_eq!(got, vec![0, 1, 63, 64, 65, 66, 128, 129]);
    }

    #[test]
    fn unreachable_scores_may_stay_uncovered() {
        // Points 2 and 2: reachable 0, 2, 4; 1 and 3 need no range.
        let ranges = [range(0, 0), range(2, 2), range(4, 4)];
        assert!(uncovered_reachable(&ranges, &[2, 2]).is_empty());
        let ranges = [range(0, 0), range(4, 4)];
        assert_eq!(uncovered_reachable(&ranges, &[2, 2]), vec![(2, 2)]);
    }

    #[test]
    fn gaps_report_their_lowest_and_highest_reachable_score() {
        let ranges = [range(0, 1), range(7, 10)];
        assert_eq!(uncovered_reachable(&ranges, &[1; 10]), vec![(2, 6)]);
        let ranges = [range(1, 10)];
        assert_eq!(uncovered_reachable(&ranges, &[1; 10]), vec![(0, 0)]);
        let ranges = [range(0, 8)];
        assert_eq!(uncovered_reachable(&ranges, &[1; 10]), vec![(9, 10)]);
        let ranges = [range(0, 3), range(20, 30)];
        assert_eq!(uncovered_reachable(&ranges, &[3, 3]), vec![(6, 6)]);
    }

    #[test]
    fn overlaps_are_reported_per_pair() {
        let mut problems = Problems::new();
        check_ranges(
            &mut problems,
            &[range(0, 5), range(5, 9), range(8, 10)],
            None,
        );
        match problems.finish() {
            Err(crate::Error::Validation(messages)) => assert_eq!(
                messages,
                vec![
                    "levelRanges[0] and levelRanges[1] overlap (score 5)",
                    "levelRanges[1] and levelRanges[2] overlap (scores 8 to 9)",
                ]
            ),
            other => panic!("expected two overlaps, got {other:?}"),
        }
    }
}
