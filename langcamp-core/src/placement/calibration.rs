//! Calibration of adaptive questions from real answers (`langcamp placement calibrate`,
//! CONTRACT §14 and §19).
//!
//! For each adaptive test, the answers of its finished attempts' results (each result's
//! answered questions, right or wrong; questions asked but left unanswered when the time
//! ran out are not answers) go to the model's
//! [`calibrate_test`](super::adaptive::calibrate::calibrate_test), which scores the
//! attempts again and estimates each question's difficulty (a MAP estimate pulled towards
//! its level's default) and the test's common slope, the guessing floors fixed at
//! 1 / options. A question with at least
//! [`MIN_ANSWERS`](super::adaptive::calibrate::MIN_ANSWERS) answers gets its difficulty;
//! the test gets its slope once its calibrated questions have
//! [`MIN_SLOPE_ANSWERS`](super::adaptive::calibrate::MIN_SLOPE_ANSWERS) answers from at
//! least two levels. Every question gets its answer count stored, so admins see how far
//! each one is from being calibrated.
//!
//! Each test's updates are one piece of write work, recorded in the audit trail as
//! `test.calibrated` with the number of questions calibrated and the slope; running it
//! again after more answers refines them (attempts under way keep the difficulties, slope
//! and floors their questions were asked with).

use std::collections::HashMap;

use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::Row;
use utoipa::ToSchema;

use super::adaptive::calibrate::{QuestionAnswers, SlopeRule, calibrate_test};
use super::adaptive::levels::default_difficulty;
use super::results::Snapshot;
use super::store::StoredTest;
use super::{ProficiencyTest, TestMode};
use crate::Langcamp;
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::{CefrLevel, Id};
use crate::platform::changes::Change;
use crate::platform::db::{Arg, WriteConn};
use crate::platform::progress::Progress;

/// What a calibration did.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    /// The adaptive tests looked at.
    pub tests: usize,
    /// The fewest answers a question needs to be calibrated.
    pub min_answers: usize,
    /// Every question of those tests, with its answers and difficulty.
    pub questions: Vec<CalibratedQuestion>,
    /// The fewest answers, on calibrated questions of two levels or more, a test needs
    /// for its slope to be calibrated.
    pub min_slope_answers: usize,
    /// Each test's common slope.
    pub slopes: Vec<CalibratedSlope>,
}

/// One test's common slope after calibration.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalibratedSlope {
    pub test_id: String,
    /// Answers of its calibrated questions.
    pub answers: usize,
    /// The slope before.
    pub previous: f64,
    /// The slope now: calibrated with enough answers, else unchanged.
    pub slope: f64,
    /// Whether this run calibrated it.
    pub calibrated: bool,
    /// The calibrated slope's standard error, when calibrated.
    pub standard_error: Option<f64>,
}

/// One question after calibration.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalibratedQuestion {
    pub test_id: String,
    pub question_id: String,
    pub level: Option<String>,
    /// Answers of finished attempts.
    pub answers: usize,
    /// The difficulty before (logits).
    pub previous: f64,
    /// The difficulty now: calibrated with enough answers, else unchanged.
    pub difficulty: f64,
    /// Whether this run calibrated it.
    pub calibrated: bool,
    /// The calibrated difficulty's standard error (logits), when calibrated.
    pub standard_error: Option<f64>,
}

impl Langcamp {
    /// Calibrates the questions of one adaptive test, or of all of them, from the answers
    /// of finished attempts; `progress` counts tests.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn calibrate_placement(
        &self,
        actor: &Actor,
        test: Option<&Id<ProficiencyTest>>,
        progress: &dyn Progress,
    ) -> Result<Calibration> {
        actor.require(Role::Admin)?;
        let ids: Vec<String> = match test {
            Some(id) => {
                let mut conn = self.db().reader().acquire().await?;
                match super::store::find_test(&mut conn, id.as_str()).await? {
                    None => return Err(Error::not_found("test")),
                    Some(t) if t.settings.mode != TestMode::Adaptive => {
                        return Err(Error::invalid(
                            "this test is not adaptive: only adaptive tests are calibrated",
                        ));
                    }
                    Some(t) => vec![t.id],
                }
            }
            None => {
                sqlx::query_scalar(
                    "SELECT id FROM proficiency_tests WHERE mode = 'adaptive' ORDER BY id",
                )
                .fetch_all(self.db().reader())
                .await?
            }
        };
        progress.start(ids.len() as u64);
        let mut questions = Vec::new();
        let mut slopes = Vec::new();
        for id in &ids {
            if let Some((report, slope)) = self.calibrate_test(actor, id).await? {
                questions.extend(report);
                slopes.push(slope);
            }
            progress.advance(1);
        }
        Ok(Calibration {
            tests: ids.len(),
            min_answers: super::adaptive::calibrate::MIN_ANSWERS,
            questions,
            min_slope_answers: super::adaptive::calibrate::MIN_SLOPE_ANSWERS,
            slopes,
        })
    }

    /// One test. Its finished attempts are read first, from the reader pool, one result
    /// at a time, and the model calibrates outside any transaction (scoring the attempts
    /// again takes a while on a large test); one piece of write work (SQLite's single
    /// writer) then holds only the updates, recorded in the audit trail
    /// (`test.calibrated`). Memory holds each attempt's answers as (question, right), not
    /// the results. `None` for a test deleted meanwhile.
    async fn calibrate_test(
        &self,
        actor: &Actor,
        test_id: &str,
    ) -> Result<Option<(Vec<CalibratedQuestion>, CalibratedSlope)>> {
        let test = {
            let mut conn = self.db().reader().acquire().await?;
            super::store::find_test(&mut conn, test_id).await?
        };
        let Some(test) = test else {
            return Ok(None);
        };
        let attempts = self.finished_attempts(&test).await?;
        let mut answer_counts = vec![0usize; test.questions.len()];
        for &(index, _) in attempts.iter().flatten() {
            answer_counts[index] += 1;
        }
        let questions: Vec<QuestionAnswers> = test
            .questions
            .iter()
            .map(|question| {
                let item = question.item(test.slope());
                QuestionAnswers {
                    level_default: default_difficulty(question.level.unwrap_or(CefrLevel::B1)),
                    difficulty: item.difficulty,
                    floor: item.floor,
                    observations: Vec::new(),
                }
            })
            .collect();
        let calibration = calibrate_test(&questions, &attempts, SlopeRule::Estimate(test.slope()));
        let mut report = Vec::with_capacity(test.questions.len());
        let mut updates = Vec::with_capacity(test.questions.len());
        for ((question, &answers), &calibrated) in test
            .questions
            .iter()
            .zip(&answer_counts)
            .zip(&calibration.questions)
        {
            let count = i64::try_from(answers).unwrap_or(i64::MAX);
            let previous = question.effective_difficulty();
            updates.push((question.id.clone(), calibrated.map(|c| c.difficulty), count));
            report.push(CalibratedQuestion {
                test_id: test.id.clone(),
                question_id: question.id.clone(),
                level: question.level.map(|l| l.as_str().to_owned()),
                answers,
                previous,
                difficulty: calibrated.map_or(previous, |c| c.difficulty),
                calibrated: calibrated.is_some(),
                standard_error: calibrated.map(|c| c.standard_error),
            });
        }
        let slope = CalibratedSlope {
            test_id: test.id.clone(),
            answers: calibration.slope.map_or(0, |s| s.answers),
            previous: test.slope(),
            slope: calibration.slope_used,
            calibrated: calibration.slope.is_some(),
            standard_error: calibration.slope.map(|s| s.standard_error),
        };
        let calibrated = report.iter().filter(|q| q.calibrated).count();
        let mut changes = serde_json::json!({
            "calibratedQuestions": {"from": null, "to": calibrated}
        });
        if let Some(new) = calibration.slope {
            changes["slope"] = serde_json::json!({"from": test.slope, "to": new.slope});
        }
        let storing = StoreCalibration {
            test_id: test.id.clone(),
            entry: Entry::new(
                "test.calibrated",
                Target::record("test", &test.id, &test.settings.title),
            )
            .with_change_map(changes),
            updates,
            slope: calibration.slope.map(|s| s.slope),
        };
        match self.staff_write(actor, storing, Some(Change::Tests)).await {
            // Deleted since it was read: nothing to store.
            Err(Error::NotFound(_)) => return Ok(None),
            outcome => outcome?,
        }
        Ok(Some((report, slope)))
    }

    /// The answers of the test's finished adaptive attempts, one list per attempt: (index
    /// of the question in `test`, right). Questions left unanswered when the time ran
    /// out, and questions the test no longer has, are not answers.
    async fn finished_attempts(&self, test: &StoredTest) -> Result<Vec<Vec<(usize, bool)>>> {
        let index_of: HashMap<&str, usize> = test
            .questions
            .iter()
            .enumerate()
            .map(|(index, q)| (q.id.as_str(), index))
            .collect();
        let mut conn = self.db().reader().acquire().await?;
        let mut rows = sqlx::query(
            "SELECT answers FROM test_results WHERE test_id = $1 AND ability IS NOT NULL",
        )
        .bind(&test.id)
        .fetch(&mut *conn);
        let mut attempts = Vec::new();
        while let Some(row) = rows.try_next().await? {
            let answers: String = row.try_get("answers")?;
            let Ok(snapshot) = serde_json::from_str::<Snapshot>(&answers) else {
                continue;
            };
            let answered: Vec<(usize, bool)> = snapshot
                .questions
                .iter()
                .filter(|item| item.selected_option_id.is_some())
                .filter_map(|item| {
                    Some((*index_of.get(item.question_id.as_str())?, item.is_correct))
                })
                .collect();
            attempts.push(answered);
        }
        Ok(attempts)
    }
}

/// The write of [`Langcamp::calibrate_test`]: each question's difficulty (when
/// calibrated) and answer count, and the test's slope (when calibrated); 404 when the test
/// was deleted meanwhile.
struct StoreCalibration {
    test_id: String,
    entry: Entry,
    /// (question id, calibrated difficulty, answers).
    updates: Vec<(String, Option<f64>, i64)>,
    slope: Option<f64>,
}

impl StaffWrite for StoreCalibration {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        // The test row first: it is gone if deleted meanwhile, and the slope (a value,
        // never NULL: sqlx's `Any` NULL-float trap) goes with it.
        let found = match self.slope {
            Some(slope) => {
                conn.exec(
                    "UPDATE proficiency_tests SET slope = $1 WHERE id = $2",
                    &[Arg::Float(slope), Arg::Text(&self.test_id)],
                )
                .await?
            }
            None => {
                conn.exec(
                    "UPDATE proficiency_tests SET updated_at = updated_at WHERE id = $1",
                    &[Arg::Text(&self.test_id)],
                )
                .await?
            }
        };
        if found == 0 {
            return Err(Error::not_found("test"));
        }
        for (question_id, difficulty, count) in &self.updates {
            match difficulty {
                Some(d) => super::store::set_difficulty(conn, question_id, *d, *count).await?,
                None => super::store::set_answer_count(conn, question_id, *count).await?,
            }
        }
        Ok(((), self.entry.into()))
    }
}
