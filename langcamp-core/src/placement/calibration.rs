//! Calibration of adaptive questions from real answers (`langcamp placement calibrate`,
//! CONTRACT §14 and §19).
//!
//! For each adaptive test, every answered question of its finished attempts' results is
//! an observation: the final ability of the student who answered it, and whether the
//! answer was right. A question with at least
//! [`MIN_ANSWERS`](super::adaptive::calibrate::MIN_ANSWERS) answers gets the difficulty the
//! model's [`calibrate`](super::adaptive::calibrate::calibrate) estimates (a MAP estimate
//! pulled towards its level's default); every question gets its answer count stored, so
//! admins see how far each one is from being calibrated. Questions asked but left
//! unanswered when the time ran out are not observations.
//!
//! Each test is one piece of write work, recorded in the audit trail as `test.calibrated` with the
//! number of questions calibrated; running it again after more answers refines the
//! difficulties (attempts under way keep the difficulties their questions were asked
//! with).

use std::collections::HashMap;

use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::Row;
use utoipa::ToSchema;

use super::adaptive::calibrate::{Observation, calibrate};
use super::adaptive::levels::default_difficulty;
use super::results::Snapshot;
use super::{ProficiencyTest, TestMode};
use crate::Langcamp;
use crate::audit::{Entry, Staff, StaffWrite, Target};
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::{CefrLevel, Id};
use crate::platform::changes::Change;
use crate::platform::db::WriteConn;
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
                    Some(t) if t.mode != TestMode::Adaptive => {
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
        for id in &ids {
            questions.extend(self.calibrate_test(actor, id).await?);
            progress.advance(1);
        }
        Ok(Calibration {
            tests: ids.len(),
            min_answers: super::adaptive::calibrate::MIN_ANSWERS,
            questions,
        })
    }

    /// One test, in one piece of write work, recorded in the audit trail
    /// (`test.calibrated`). The answers are read before it, from the reader pool, one
    /// result at a time: the writer (SQLite's single writer) is held only for the
    /// difficulties' updates, and memory holds the observations, not the results.
    async fn calibrate_test(
        &self,
        actor: &Actor,
        test_id: &str,
    ) -> Result<Vec<CalibratedQuestion>> {
        let observed = self.observations(test_id).await?;
        let calibrate = Calibrate {
            test_id: test_id.to_owned(),
            observed,
        };
        match self
            .staff_write(actor, calibrate, Some(Change::Tests))
            .await
        {
            // Deleted since it was listed: nothing to calibrate.
            Err(Error::NotFound(_)) => Ok(Vec::new()),
            outcome => outcome,
        }
    }

    /// Each answered question of the test's finished adaptive attempts, by question id:
    /// the student's final ability and whether the answer was right. Questions left
    /// unanswered when the time ran out are not observations.
    async fn observations(&self, test_id: &str) -> Result<HashMap<String, Vec<Observation>>> {
        let mut conn = self.db().reader().acquire().await?;
        let mut rows = sqlx::query(
            "SELECT answers, ability FROM test_results WHERE test_id = $1 AND ability IS NOT NULL",
        )
        .bind(test_id)
        .fetch(&mut *conn);
        let mut observed: HashMap<String, Vec<Observation>> = HashMap::new();
        while let Some(row) = rows.try_next().await? {
            let answers: String = row.try_get("answers")?;
            let ability: f64 = row.try_get("ability")?;
            let Ok(snapshot) = serde_json::from_str::<Snapshot>(&answers) else {
                continue;
            };
            for item in snapshot.questions {
                if item.selected_option_id.is_some() {
                    observed
                        .entry(item.question_id)
                        .or_default()
                        .push(Observation {
                            ability,
                            correct: item.is_correct,
                        });
                }
            }
        }
        Ok(observed)
    }
}

/// The work of [`Langcamp::calibrate_test`]: reads the test (404 when it was deleted
/// meanwhile), stores each question's difficulty or answer count, and names the entry.
struct Calibrate {
    test_id: String,
    observed: HashMap<String, Vec<Observation>>,
}

impl StaffWrite for Calibrate {
    type Output = Vec<CalibratedQuestion>;

    async fn run<C: WriteConn>(
        mut self,
        conn: &mut C,
        _by: &Staff,
    ) -> Result<(Vec<CalibratedQuestion>, Entry)> {
        let Some(test) = super::store::find_test(conn, &self.test_id).await? else {
            return Err(Error::not_found("test"));
        };
        let mut report = Vec::with_capacity(test.questions.len());
        for question in &test.questions {
            let observations = self.observed.remove(&question.id).unwrap_or_default();
            let level_default = default_difficulty(question.level.unwrap_or(CefrLevel::B1));
            let count = i64::try_from(observations.len()).unwrap_or(i64::MAX);
            let previous = question.effective_difficulty();
            let calibrated = calibrate(level_default, &observations);
            match calibrated {
                Some(c) => {
                    super::store::set_difficulty(conn, &question.id, c.difficulty, count).await?
                }
                None => super::store::set_answer_count(conn, &question.id, count).await?,
            }
            report.push(CalibratedQuestion {
                test_id: test.id.clone(),
                question_id: question.id.clone(),
                level: question.level.map(|l| l.as_str().to_owned()),
                answers: observations.len(),
                previous,
                difficulty: calibrated.map_or(previous, |c| c.difficulty),
                calibrated: calibrated.is_some(),
                standard_error: calibrated.map(|c| c.standard_error),
            });
        }
        let calibrated = report.iter().filter(|q| q.calibrated).count();
        let target = Target::record("test", &test.id, &test.title);
        let entry = Entry::new("test.calibrated", target).with_change_map(serde_json::json!({
            "calibratedQuestions": {"from": null, "to": calibrated}
        }));
        Ok((report, entry))
    }
}
