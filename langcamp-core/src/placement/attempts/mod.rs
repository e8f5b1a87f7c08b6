//! Attempts at adaptive tests (CONTRACT §19): one question at a time, each answer choosing
//! the next, until the model ([`super::adaptive`]) says the level is known.
//!
//! An attempt is a row of `placement_attempts` holding the sequence of questions asked,
//! in order, each with the difficulty it had when asked and, once answered, the option
//! chosen and whether it was right. While the attempt is open, the last question of the
//! sequence is the current one: the only one that can be answered.
//!
//! * **Start** returns the caller's open attempt at the test when there is one (the same
//!   current question), else starts one with a first question chosen by the model.
//! * **Answer** reads the attempt and the test, replays the answers given into a
//!   [`Session`] in memory, adds this answer, and asks the model for the next question or
//!   the end. The one write is an `UPDATE` of the attempt conditional on its answered count
//!   being what was read: of two answers to the same question, one is stored and the
//!   other gets 409. Like a submission, it is a piece of the group commit on SQLite
//!   ([`store::Advance`]).
//! * **The end** (the model's stop rule, or the time limit counted from the start) turns
//!   the attempt into a normal result: `level` from the final ability, `totalScore` the
//!   right answers, `maxScore` the questions asked, `answers` in the order asked, with
//!   `ability` and `standardError`.
//!
//! Nothing before the end says whether an answer was right, a question's level or a
//! correct option: the views here are built without them.

mod replay;
mod store;

use self::replay::{
    Asked, finished_view, max_questions, next_step, open_view, outcome_now, result_of,
};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use self::store::StoredAttempt;
use super::adaptive::stop::Stop;
use super::adaptive::{Outcome, Step};
use super::results::find_result;
use super::store::StoredTest;
use super::{AnswerOption, ProficiencyTest, TestMode, TestResult};
use crate::Langcamp;
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::time::Timestamp;
use crate::platform::db::Undo;
use crate::users;
use crate::webhooks::{Announcement, Event};

/// The question to answer now: never its level, its correct option or whether an
/// earlier answer was right.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptQuestion {
    pub id: String,
    pub text: String,
    pub options: Vec<AnswerOption>,
    /// 1 for the first question asked, 2 for the second, ...
    pub number: i64,
}

/// An attempt as its taker sees it. Open: `finished` false, the current `question`,
/// `result` null. Finished: `finished` true, `question` null, and the `result`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptView {
    pub attempt_id: String,
    pub test_id: String,
    pub finished: bool,
    /// The current question; null once finished.
    pub question: Option<AttemptQuestion>,
    /// How many questions have been answered.
    pub answered: i64,
    /// The most questions this attempt asks.
    pub max_questions: i64,
    /// When the time limit ends the attempt (null without a limit).
    pub expires_at: Option<Timestamp>,
    /// The result, once finished (null while open, or when an admin deleted it).
    pub result: Option<TestResult>,
}

impl AttemptView {
    /// The attempt's id, typed.
    pub fn typed_id(&self) -> Id<AttemptView> {
        Id::from(&self.attempt_id)
    }
}

/// What starting an attempt gave: a new attempt (`created`, 201) or the open one (200).
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub view: AttemptView,
    pub created: bool,
}

/// Body of an answer.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerInput {
    /// The id of the current question.
    #[schema(value_type = String, required = true, min_length = 1)]
    pub question_id: Option<String>,
    /// Zero-based position of the chosen option.
    #[schema(value_type = i64, required = true, minimum = 0)]
    pub selected_option_index: Option<i64>,
}

/// A checked [`AnswerInput`]: what [`Langcamp::answer_attempt`] takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptAnswer {
    pub question_id: String,
    pub option: usize,
}

impl TryFrom<AnswerInput> for AttemptAnswer {
    type Error = Error;

    fn try_from(input: AnswerInput) -> Result<AttemptAnswer> {
        let mut problems = Vec::new();
        let question_id = match input.question_id.as_deref().map(str::trim) {
            None => {
                problems.push("questionId is required".to_owned());
                None
            }
            Some("") => {
                problems.push("questionId must not be empty".to_owned());
                None
            }
            Some(id) => Some(id.to_owned()),
        };
        let option = match input.selected_option_index {
            None => {
                problems.push("selectedOptionIndex is required".to_owned());
                None
            }
            Some(index) => match usize::try_from(index) {
                Ok(index) => Some(index),
                Err(_) => {
                    problems.push("selectedOptionIndex must be 0 or more".to_owned());
                    None
                }
            },
        };
        match (question_id, option) {
            (Some(question_id), Some(option)) if problems.is_empty() => Ok(AttemptAnswer {
                question_id,
                option,
            }),
            _ => Err(Error::Validation(problems)),
        }
    }
}

/// Whether the attempt is over though still open: its time is up, or its current question
/// is no longer in the test (an admin edited it away), so it cannot go on.
fn expired(attempt: &StoredAttempt, test: &StoredTest, now: i64) -> bool {
    let current_gone = attempt
        .sequence
        .last()
        .filter(|asked| asked.correct.is_none())
        .is_some_and(|asked| !test.questions.iter().any(|q| q.id == asked.question_id));
    current_gone || attempt.expires_at.is_some_and(|at| now >= at)
}

fn conflict_answered() -> Error {
    Error::Conflict("this question was answered already: read the attempt again".into())
}

fn attempt_not_found() -> Error {
    Error::not_found("attempt")
}

impl Langcamp {
    /// `POST /proficiency-tests/{id}/attempts`: the caller's open attempt at this test, or
    /// a new one with its first question. A fixed test: 400.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn start_attempt(
        &self,
        actor: &Actor,
        test_id: &Id<ProficiencyTest>,
    ) -> Result<Attempt> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let now = self.clock().now_ms();
        let test = {
            let mut conn = self.db().reader().acquire().await?;
            match super::store::find_test(&mut conn, test_id.as_str()).await? {
                Some(test) if test.settings.is_active => test,
                _ => return Err(Error::not_found("test")),
            }
        };
        if test.settings.mode != TestMode::Adaptive {
            return Err(Error::invalid(
                "this test is not adaptive: submit its answers with POST /proficiency-tests/{id}/submit",
            ));
        }
        let mut tx = self.db().begin().await?;
        let mut announce = None;
        if let Some(open) = store::open_of(&mut tx, &caller.user_id, &test.id).await? {
            if !expired(&open, &test, now) {
                tx.commit().await?;
                return Ok(Attempt {
                    view: open_view(&test, &open),
                    created: false,
                });
            }
            // It is over (its time is up, or its question was edited away): it becomes a
            // result, and a new attempt starts.
            announce = self.announcement(Event::ResultCreated).await?;
            self.finish(
                &mut tx,
                &test,
                open,
                Stop::TimeLimit,
                now,
                announce.as_ref(),
            )
            .await?;
        }
        let first = match next_step(&test, &[]) {
            Step::Ask(index) => Asked::of(&test, index),
            Step::Finished(_) => None,
        }
        .ok_or_else(|| Error::invalid("this test has no questions to ask"))?;
        let attempt = StoredAttempt {
            id: new_id(),
            test_id: test.id.clone(),
            user_id: caller.user_id.clone(),
            sequence: vec![first],
            answered: 0,
            started_at: now,
            expires_at: test
                .settings
                .time_limit_minutes
                .map(|minutes| now.saturating_add(minutes.saturating_mul(60_000))),
            finished: false,
            result_id: None,
        };
        match store::insert(&mut tx, &attempt).await {
            Ok(()) => {}
            // Another start by the same user won the race to the one open attempt
            // (PostgreSQL; SQLite's writer runs the two one after the other): that one.
            Err(Error::Conflict(_)) => {
                drop(tx);
                let mut conn = self.db().reader().acquire().await?;
                let open = store::open_of(&mut conn, &caller.user_id, &test.id)
                    .await?
                    .ok_or_else(conflict_answered)?;
                return Ok(Attempt {
                    view: open_view(&test, &open),
                    created: false,
                });
            }
            Err(e) => return Err(e),
        }
        tx.commit().await?;
        self.wake_webhooks(announce.is_some());
        Ok(Attempt {
            view: open_view(&test, &attempt),
            created: true,
        })
    }

    /// `GET /proficiency-tests/attempts/{attemptId}`: the caller's attempt, to resume it;
    /// finished (with its result) once its time is up.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_attempt(
        &self,
        actor: &Actor,
        attempt_id: &Id<AttemptView>,
    ) -> Result<AttemptView> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let now = self.clock().now_ms();
        let (attempt, test) = self.own_attempt(&caller.user_id, attempt_id).await?;
        if attempt.finished {
            return self.finished_attempt(&attempt, &test).await;
        }
        if expired(&attempt, &test, now) {
            return self.finish_expired(attempt, &test, now).await;
        }
        Ok(open_view(&test, &attempt))
    }

    /// `POST /proficiency-tests/attempts/{attemptId}/answer`: answers the current question;
    /// the next question, or the result when the test is over.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn answer_attempt(
        &self,
        actor: &Actor,
        attempt_id: &Id<AttemptView>,
        answer: AttemptAnswer,
    ) -> Result<AttemptView> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let now = self.clock().now_ms();
        let (mut attempt, test) = self.own_attempt(&caller.user_id, attempt_id).await?;
        if attempt.finished {
            return Err(Error::Conflict("this attempt is finished".into()));
        }
        if expired(&attempt, &test, now) {
            return self.finish_expired(attempt, &test, now).await;
        }
        let Some(current) = attempt.sequence.last().filter(|a| a.correct.is_none()) else {
            return Err(conflict_answered());
        };
        if current.question_id != answer.question_id {
            return Err(Error::Conflict(format!(
                "questionId is not the current question of this attempt (question {})",
                attempt.sequence.len()
            )));
        }
        let Some(question) = test.questions.iter().find(|q| q.id == answer.question_id) else {
            // The test was edited and the question is gone: the attempt ends with the
            // answers given.
            return self.finish_expired(attempt, &test, now).await;
        };
        let Some(option) = question.options.get(answer.option) else {
            return Err(Error::invalid(format!(
                "selectedOptionIndex must be from 0 to {}",
                question.options.len().saturating_sub(1)
            )));
        };
        let correct = option.id == question.correct_option_id;
        let before = attempt.answered;
        if let Some(current) = attempt.sequence.last_mut() {
            current.selected_option_id = Some(option.id.clone());
            current.correct = Some(correct);
        }
        attempt.answered += 1;
        match next_step(&test, &attempt.sequence) {
            Step::Ask(index) => {
                if let Some(next) = Asked::of(&test, index) {
                    attempt.sequence.push(next);
                }
                let view = open_view(&test, &attempt);
                let advance = store::Advance {
                    attempt,
                    answered_before: before,
                };
                // The update is the piece's one statement: a failure changed nothing.
                if !self.db().write(Undo::SingleStatement, advance).await? {
                    return Err(conflict_answered());
                }
                Ok(view)
            }
            Step::Finished(outcome) => {
                let announce = self.announcement(Event::ResultCreated).await?;
                let mut tx = self.db().begin().await?;
                let result = self
                    .finish_with(
                        &mut tx,
                        &test,
                        &mut attempt,
                        &outcome,
                        before,
                        now,
                        announce.as_ref(),
                    )
                    .await?;
                tx.commit().await?;
                self.wake_webhooks(announce.is_some());
                Ok(finished_view(
                    &attempt,
                    i64::try_from(max_questions(&test)).unwrap_or(i64::MAX),
                    Some(result),
                ))
            }
        }
    }

    /// The caller's attempt and its test; someone else's or an unknown one: 404.
    async fn own_attempt(
        &self,
        user_id: &str,
        attempt_id: &Id<AttemptView>,
    ) -> Result<(StoredAttempt, StoredTest)> {
        let mut snapshot = self.db().read_snapshot().await?;
        let attempt = match store::find(&mut snapshot, attempt_id.as_str()).await? {
            Some(attempt) if attempt.user_id == user_id => attempt,
            _ => return Err(attempt_not_found()),
        };
        let test = super::store::find_test(&mut snapshot, &attempt.test_id)
            .await?
            .ok_or_else(attempt_not_found)?;
        Ok((attempt, test))
    }

    async fn finished_attempt(
        &self,
        attempt: &StoredAttempt,
        test: &StoredTest,
    ) -> Result<AttemptView> {
        let result = match &attempt.result_id {
            Some(id) => {
                let mut conn = self.db().reader().acquire().await?;
                find_result(&mut conn, id).await?.map(|r| r.summary())
            }
            None => None,
        };
        Ok(finished_view(
            attempt,
            i64::try_from(max_questions(test)).unwrap_or(i64::MAX),
            result,
        ))
    }

    /// Ends an open attempt whose time is up (or whose current question was edited away)
    /// with the answers given.
    async fn finish_expired(
        &self,
        mut attempt: StoredAttempt,
        test: &StoredTest,
        now: i64,
    ) -> Result<AttemptView> {
        let announce = self.announcement(Event::ResultCreated).await?;
        let mut tx = self.db().begin().await?;
        let outcome = outcome_now(test, &attempt.sequence, Stop::TimeLimit);
        let before = attempt.answered;
        let finished = self
            .finish_with(
                &mut tx,
                test,
                &mut attempt,
                &outcome,
                before,
                now,
                announce.as_ref(),
            )
            .await;
        match finished {
            Ok(result) => {
                tx.commit().await?;
                self.wake_webhooks(announce.is_some());
                Ok(finished_view(
                    &attempt,
                    i64::try_from(max_questions(test)).unwrap_or(i64::MAX),
                    Some(result),
                ))
            }
            Err(Error::Conflict(_)) => {
                // Finished or answered meanwhile: show it as it is now.
                drop(tx);
                let (attempt, test) = self
                    .own_attempt(&attempt.user_id, &Id::from(&attempt.id))
                    .await?;
                if attempt.finished {
                    self.finished_attempt(&attempt, &test).await
                } else {
                    Err(conflict_answered())
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Ends `attempt` inside `tx` (an open one found there), for [`Langcamp::start_attempt`].
    async fn finish(
        &self,
        tx: &mut crate::platform::db::Tx,
        test: &StoredTest,
        mut attempt: StoredAttempt,
        stop: Stop,
        now: i64,
        announce: Option<&Announcement>,
    ) -> Result<TestResult> {
        let outcome = outcome_now(test, &attempt.sequence, stop);
        let before = attempt.answered;
        self.finish_with(tx, test, &mut attempt, &outcome, before, now, announce)
            .await
    }

    /// Stores the result of `attempt` (and `announce`'s deliveries of it) and marks it
    /// finished, if nobody changed it since it was read with `before` answers (else 409
    /// and nothing is kept: the caller drops the transaction).
    #[allow(clippy::too_many_arguments)]
    async fn finish_with(
        &self,
        tx: &mut crate::platform::db::Tx,
        test: &StoredTest,
        attempt: &mut StoredAttempt,
        outcome: &Outcome,
        before: i64,
        now: i64,
        announce: Option<&Announcement>,
    ) -> Result<TestResult> {
        let user = users::find_user(&mut *tx, &attempt.user_id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        let record = result_of(test, &user, &attempt.sequence, outcome, now);
        store::insert_result(
            &mut *tx,
            &record,
            record.ability.unwrap_or_default(),
            record.standard_error.unwrap_or_default(),
        )
        .await?;
        if let Some(announce) = announce {
            announce.queue(&mut **tx, now, &record.notice()).await?;
        }
        attempt.finished = true;
        attempt.result_id = Some(record.id.clone());
        if !store::advance(&mut *tx, attempt, before).await? {
            return Err(conflict_answered());
        }
        Ok(record.summary())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_checked_for_shape_before_the_attempt_is_read() {
        let ok = AttemptAnswer::try_from(AnswerInput {
            question_id: Some(" q1 ".into()),
            selected_option_index: Some(2),
        });
        assert_eq!(
            ok.ok(),
            Some(AttemptAnswer {
                question_id: "q1".into(),
                option: 2
            })
        );
        let bad = AttemptAnswer::try_from(AnswerInput {
            question_id: None,
            selected_option_index: Some(-1),
        });
        let Err(Error::Validation(messages)) = bad else {
            panic!("refused")
        };
        assert_eq!(
            messages,
            [
                "questionId is required",
                "selectedOptionIndex must be 0 or more"
            ]
        );
    }
}
