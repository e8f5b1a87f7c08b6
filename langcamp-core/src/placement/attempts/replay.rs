//! An attempt's sequence replayed into the model: the questions asked as they were asked
//! (their difficulty, slope and floor then), the next step, the outcome and the result it
//! becomes, and the views a student sees (never a level, a correct option or whether an
//! answer was right before the end).

use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};

use super::store::StoredAttempt;
use super::{AttemptQuestion, AttemptView};
use crate::domain::time::Timestamp;
use crate::placement::TestResult;
use crate::placement::adaptive::model::{Item, RASCH_SLOPE};
use crate::placement::adaptive::stop::{Stop, StopRule};
use crate::placement::adaptive::{Outcome, Session, Step};
use crate::placement::results::{ResultRecord, Scores, SnapshotItem};
use crate::placement::store::StoredTest;

/// One question of an attempt's sequence, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Asked {
    pub question_id: String,
    /// The difficulty the question had when asked (logits), the test's slope and the
    /// question's guessing floor: the replay of the answers uses them, so a later
    /// calibration or edit does not change an attempt under way. Slope and floor are
    /// absent in attempts started before issue #44, asked under the Rasch model.
    pub difficulty: f64,
    #[serde(default)]
    pub slope: Option<f64>,
    #[serde(default)]
    pub floor: Option<f64>,
    /// The question's level when asked.
    #[serde(default)]
    pub level: Option<String>,
    /// Once answered: the option chosen.
    #[serde(default)]
    pub selected_option_id: Option<String>,
    /// Once answered: whether it was right. `None` while this is the current question.
    #[serde(default)]
    pub correct: Option<bool>,
}

impl Asked {
    pub(super) fn of(test: &StoredTest, index: usize) -> Option<Asked> {
        let question = test.questions.get(index)?;
        let item = question.item(test.slope());
        Some(Asked {
            question_id: question.id.clone(),
            difficulty: item.difficulty,
            slope: Some(item.slope),
            floor: Some(item.floor),
            level: question.level.map(|l| l.as_str().to_owned()),
            selected_option_id: None,
            correct: None,
        })
    }

    /// The question as the model saw it when asked.
    pub(super) fn item(&self) -> Item {
        Item {
            difficulty: self.difficulty,
            slope: self.slope.unwrap_or(RASCH_SLOPE),
            floor: self.floor.unwrap_or(0.0),
        }
    }
}

/// The stop rule of a test: its `maxQuestions`.
pub(super) fn rule_of(test: &StoredTest) -> StopRule {
    StopRule::with_max(max_questions(test))
}

pub(super) fn max_questions(test: &StoredTest) -> usize {
    test.settings
        .max_questions
        .and_then(|m| usize::try_from(m).ok())
        .unwrap_or(crate::placement::adaptive::stop::DEFAULT_MAX_QUESTIONS)
}

/// The model's view of an attempt: the bank (the test's questions, then those asked that
/// the test no longer has), and a session replaying the answers given.
pub(super) struct Replay {
    items: Vec<Item>,
    answers: Vec<(usize, bool)>,
}

impl Replay {
    pub(super) fn of(test: &StoredTest, sequence: &[Asked]) -> Replay {
        let mut items: Vec<Item> = test
            .questions
            .iter()
            .map(|q| q.item(test.slope()))
            .collect();
        let mut answers = Vec::new();
        for asked in sequence {
            let Some(correct) = asked.correct else {
                continue;
            };
            let index = match test
                .questions
                .iter()
                .position(|q| q.id == asked.question_id)
            {
                Some(index) => {
                    // As it was asked, whatever calibration did since.
                    items[index] = asked.item();
                    index
                }
                None => {
                    items.push(asked.item());
                    items.len() - 1
                }
            };
            answers.push((index, correct));
        }
        Replay { items, answers }
    }

    pub(super) fn session(&self, test: &StoredTest) -> Session<'_> {
        Session::replay(&self.items, rule_of(test), &self.answers)
    }
}

/// The next step after the answers of `sequence`: ask a question of the test (its index)
/// or finish. The random draw among the best questions happens here, in memory.
pub(super) fn next_step(test: &StoredTest, sequence: &[Asked]) -> Step {
    let replay = Replay::of(test, sequence);
    let session = replay.session(test);
    let mut rng = StdRng::seed_from_u64(rand::random());
    match session.next(&mut rng) {
        Step::Ask(index) if index < test.questions.len() => Step::Ask(index),
        Step::Ask(_) => Step::Finished(session.outcome(Stop::BankExhausted)),
        finished => finished,
    }
}

/// The outcome if the attempt ended now, with the answers given.
pub(super) fn outcome_now(test: &StoredTest, sequence: &[Asked], stop: Stop) -> Outcome {
    let replay = Replay::of(test, sequence);
    replay.session(test).outcome(stop)
}

pub(super) fn two_decimals(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The result a finished attempt becomes.
pub(super) fn result_of(
    test: &StoredTest,
    user: &crate::users::User,
    sequence: &[Asked],
    outcome: &Outcome,
    now: i64,
) -> ResultRecord {
    let items: Vec<SnapshotItem> = sequence
        .iter()
        .map(|asked| {
            let question = test.questions.iter().find(|q| q.id == asked.question_id);
            let option_text = |id: &str| {
                question
                    .and_then(|q| q.options.iter().find(|o| o.id == id))
                    .map(|o| o.text.clone())
            };
            let correct_id = question
                .map(|q| q.correct_option_id.clone())
                .unwrap_or_default();
            SnapshotItem {
                question_id: asked.question_id.clone(),
                question_text: question.map(|q| q.text.clone()).unwrap_or_default(),
                points: 1,
                selected_option_id: asked.selected_option_id.clone(),
                selected_option_text: asked.selected_option_id.as_deref().and_then(option_text),
                correct_option_text: option_text(&correct_id).unwrap_or_default(),
                correct_option_id: correct_id,
                is_correct: asked.correct.unwrap_or(false),
                level: asked.level.clone(),
            }
        })
        .collect();
    let right = items.iter().filter(|i| i.is_correct).count();
    let level = outcome.level.as_str().to_owned();
    let message = test
        .settings
        .level_messages
        .as_ref()
        .and_then(|m| m.get(&level).cloned())
        .unwrap_or_default();
    let scores = Scores {
        total_score: i64::try_from(right).unwrap_or(i64::MAX),
        max_score: i64::try_from(items.len()).unwrap_or(i64::MAX),
        level,
        message,
        ability: Some(two_decimals(outcome.estimate.ability)),
        standard_error: Some(two_decimals(outcome.estimate.standard_error)),
    };
    ResultRecord::new(test, user, items, scores, now)
}

/// The open view of an attempt: its current question, without level or answer key.
pub(super) fn open_view(test: &StoredTest, attempt: &StoredAttempt) -> AttemptView {
    let question = attempt
        .sequence
        .last()
        .filter(|asked| asked.correct.is_none())
        .and_then(|asked| test.questions.iter().find(|q| q.id == asked.question_id))
        .map(|q| AttemptQuestion {
            id: q.id.clone(),
            text: q.text.clone(),
            options: q.public_options(),
            number: i64::try_from(attempt.sequence.len()).unwrap_or(i64::MAX),
        });
    AttemptView {
        attempt_id: attempt.id.clone(),
        test_id: attempt.test_id.clone(),
        finished: false,
        question,
        answered: attempt.answered,
        max_questions: i64::try_from(max_questions(test)).unwrap_or(i64::MAX),
        expires_at: attempt.expires_at.map(Timestamp::from_millis),
        result: None,
    }
}

pub(super) fn finished_view(
    attempt: &StoredAttempt,
    max_questions: i64,
    result: Option<TestResult>,
) -> AttemptView {
    AttemptView {
        attempt_id: attempt.id.clone(),
        test_id: attempt.test_id.clone(),
        finished: true,
        question: None,
        answered: attempt.answered,
        max_questions,
        expires_at: attempt.expires_at.map(Timestamp::from_millis),
        result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_asked_before_the_floor_replays_under_the_rasch_model() {
        let old: Asked = serde_json::from_str(r#"{"questionId": "q", "difficulty": 0.75}"#)
            .expect("an attempt stored by issue #34's release");
        assert_eq!(old.item(), Item::rasch(0.75));
    }
}
