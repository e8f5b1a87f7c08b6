//! Taking a test and reading results.
//!
//! A submission is scored against the test as it is at that moment and stored with a
//! snapshot (`test_results.answers`, JSON): the test's id, and per question its text,
//! points, the chosen option, the correct option and whether the answer was right. Every
//! later read of the result is built from that snapshot and the result's own columns, so
//! an edited or deleted test changes nothing. The correct option of a question is put into
//! a response for admins only.
//!
//! Here: the operations and what they answer; [`input`] holds the submission body and the
//! check of its answers, `score` the scoring and the snapshot, `store` the SQL.

mod input;
mod score;
mod store;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, Row};
use utoipa::ToSchema;

use self::input::{check_against, parse_answers};
use self::score::scored;
pub(in crate::placement) use self::store::find_result;
pub(crate) use self::store::{chunk_after as export_chunk, detailed_results_of};
use self::store::{insert_result, results_of};
use super::store::StoredTest;
use super::{HeldTest, ProficiencyTest};
use crate::Langcamp;
use crate::domain::Deleted;
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::looks_like_id;
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::platform::db::{Locks, Undo};
use crate::users::{self, User};
use crate::webhooks::{Event, Prepared};

pub use self::input::{ResultFilter, ResultQuery, SubmitInput, SubmittedAnswer};

/// One question of a result. `selectedOptionId` is null for a question left unanswered.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultAnswer {
    pub question_id: String,
    pub selected_option_id: Option<String>,
    pub is_correct: bool,
    /// Adaptive results: the question's CEFR level (the path of levels asked, in order).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "B1")]
    pub level: Option<String>,
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
    /// Adaptive results: the question's CEFR level (the path of levels asked, in order).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "B1")]
    pub level: Option<String>,
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

/// A result's struct, whose `answers` are `$answer`: [`TestResult`] and [`DetailedResult`]
/// differ only there (and in the doc of `test_id`, which the API document shows).
macro_rules! result_struct {
    ($(#[$doc:meta])* $name:ident, answers: $answer:ty, test_id: $(#[$test_id:meta])*) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// The same value as `id`.
            #[serde(rename = "_id")]
            pub legacy_id: String,
            pub id: String,
            $(#[$test_id])*
            pub test_id: String,
            pub user_id: String,
            pub total_score: i64,
            pub max_score: i64,
            #[schema(example = "B1")]
            pub level: String,
            pub message: String,
            pub completed_at: Timestamp,
            /// Adaptive tests: the final ability estimate in logits (2 decimals); null on fixed tests.
            pub ability: Option<f64>,
            /// Adaptive tests: the ability's standard error in logits (2 decimals); null on fixed tests.
            pub standard_error: Option<f64>,
            /// In question order; on adaptive tests in the order asked.
            pub answers: Vec<$answer>,
            pub user: ResultUser,
            pub test: ResultTest,
        }
    };
}

result_struct!(
    /// A scored submission. `answers` has one entry per question of the test, in order.
    TestResult,
    answers: ResultAnswer,
    test_id: /// The test taken; it keeps naming it after the test was deleted.
);

impl TestResult {
    /// The result's id, typed.
    pub fn typed_id(&self) -> Id<TestResult> {
        Id::from(&self.id)
    }
}

result_struct!(
    /// A result with the text and points of each question and the chosen option; for admins
    /// also the correct option.
    DetailedResult,
    answers: DetailedAnswer,
    test_id:
);

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

/// What is stored in `test_results.answers`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::placement) struct Snapshot {
    pub(in crate::placement) test_id: String,
    pub(in crate::placement) questions: Vec<SnapshotItem>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::placement) struct SnapshotItem {
    pub(in crate::placement) question_id: String,
    pub(in crate::placement) question_text: String,
    pub(in crate::placement) points: i64,
    pub(in crate::placement) selected_option_id: Option<String>,
    pub(in crate::placement) selected_option_text: Option<String>,
    pub(in crate::placement) correct_option_id: String,
    pub(in crate::placement) correct_option_text: String,
    pub(in crate::placement) is_correct: bool,
    /// Adaptive tests: the question's level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(in crate::placement) level: Option<String>,
}

/// A stored result with its snapshot read back.
pub(in crate::placement) struct ResultRecord {
    pub(in crate::placement) id: String,
    pub(in crate::placement) user_id: String,
    pub(in crate::placement) test_title: String,
    pub(in crate::placement) target_language: Option<String>,
    pub(in crate::placement) total_score: i64,
    pub(in crate::placement) max_score: i64,
    pub(in crate::placement) level: String,
    pub(in crate::placement) message: String,
    pub(in crate::placement) snapshot: Snapshot,
    pub(in crate::placement) completed_at: i64,
    pub(in crate::placement) user_name: Option<String>,
    pub(in crate::placement) user_email: String,
    /// Adaptive tests: the final ability and its standard error, 2 decimals.
    pub(in crate::placement) ability: Option<f64>,
    pub(in crate::placement) standard_error: Option<f64>,
}

/// How an answered test came out: what a result records beyond who took which test.
pub(in crate::placement) struct Scores {
    pub(in crate::placement) total_score: i64,
    pub(in crate::placement) max_score: i64,
    pub(in crate::placement) level: String,
    pub(in crate::placement) message: String,
    pub(in crate::placement) ability: Option<f64>,
    pub(in crate::placement) standard_error: Option<f64>,
}

impl ResultRecord {
    /// A new result of `user` on `test`, finished `now`, with the test's title and language
    /// and the user's name and address as they are now (a result keeps them when the test
    /// or the user changes later).
    pub(in crate::placement) fn new(
        test: &StoredTest,
        user: &crate::users::User,
        questions: Vec<SnapshotItem>,
        scores: Scores,
        now: i64,
    ) -> ResultRecord {
        ResultRecord {
            id: crate::domain::id::new_id(),
            user_id: user.id.clone(),
            test_title: test.settings.title.clone(),
            target_language: test.settings.target_language.clone(),
            total_score: scores.total_score,
            max_score: scores.max_score,
            level: scores.level,
            message: scores.message,
            snapshot: Snapshot {
                test_id: test.id.clone(),
                questions,
            },
            completed_at: now,
            user_name: user.name.clone(),
            user_email: user.email.clone(),
            ability: scores.ability,
            standard_error: scores.standard_error,
        }
    }
}

/// The write of a submission whose test and user came from memory: the result, if the
/// test is still active at the version read and the user still exists.
struct Submission {
    record: Arc<ResultRecord>,
    snapshot: String,
    test_version: i64,
    /// The `result.created` deliveries, queued with the result.
    deliveries: Option<Prepared>,
}

/// `submit` on an adaptive test: 400, it is taken through attempts (CONTRACT §19).
fn refuse_adaptive(test: &StoredTest) -> Result<()> {
    if test.settings.mode == super::TestMode::Adaptive {
        return Err(Error::invalid(
            "this test is adaptive: take it through POST /proficiency-tests/{id}/attempts",
        ));
    }
    Ok(())
}

/// The test a user may see: an inactive one only for admins.
async fn visible_test(conn: &mut AnyConnection, actor: &Actor, id: &str) -> Result<StoredTest> {
    match super::store::find_test(conn, id).await? {
        Some(test) if test.settings.is_active || actor.is_admin() => Ok(test),
        _ => Err(Error::not_found("test")),
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
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn submit_test(
        &self,
        actor: &Actor,
        test_id: &Id<ProficiencyTest>,
        input: SubmitInput,
    ) -> Result<TestResult> {
        actor.require(Role::User)?;
        let test_id = test_id.as_str();
        let caller = actor.caller()?;
        let answers = parse_answers(input.answers)?;
        let now = self.clock().now_ms();
        let announce = self.announcement(Event::ResultCreated).await?;
        if let Some(test) = self.held_test(test_id, now).await?
            && test.settings.is_active
        {
            refuse_adaptive(&test)?;
            check_against(&test, &answers)?;
            let user = match self
                .sessions()
                .get(&caller.session_id, &caller.user_id, now)
            {
                Some(live) => live.user,
                None => {
                    let mut conn = self.db().reader().acquire().await?;
                    Arc::new(
                        users::find_user(&mut *conn, &caller.user_id)
                            .await?
                            .ok_or(Error::TokenInvalid)?,
                    )
                }
            };
            let record = Arc::new(scored(&test, &user, &answers, now));
            let snapshot = serde_json::to_string(&record.snapshot)?;
            // Cloned: the exact path below queues them if this one writes nothing.
            let deliveries = announce
                .clone()
                .map(|a| a.prepare(record.completed_at, &record.notice()))
                .transpose()?;
            // One statement, in a transaction shared with other waiting writes.
            let submission = Submission {
                record: Arc::clone(&record),
                snapshot,
                test_version: test.updated_at,
                deliveries,
            };
            // The insert is the one change, unless deliveries are queued after it: then a
            // failure must undo it.
            let undo = match announce {
                None => Undo::SingleStatement,
                Some(_) => Undo::Savepoint,
            };
            let inserted = self.db().write(undo, submission).await?;
            if inserted {
                self.wake_webhooks(announce.is_some());
                return Ok(record.summary());
            }
            // Nothing was written; the exact path below decides.
        }
        let mut tx = self.db().begin().await?;
        tx.share_test(test_id).await?;
        let test = match super::store::find_test(&mut tx, test_id).await? {
            Some(test) if test.settings.is_active => test,
            _ => return Err(Error::not_found("test")),
        };
        refuse_adaptive(&test)?;
        check_against(&test, &answers)?;
        let user = users::find_user(&mut tx, &caller.user_id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        let record = scored(&test, &user, &answers, now);
        let snapshot = serde_json::to_string(&record.snapshot)?;
        let announced = announce.is_some();
        let deliveries = announce
            .map(|a| a.prepare(now, &record.notice()))
            .transpose()?;
        insert_result(&mut *tx, &record, &snapshot, None, deliveries.as_ref()).await?;
        tx.commit().await?;
        self.wake_webhooks(announced);
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
                    super::store::find_test(&mut conn, id).await?.map(Arc::new),
                ))
            })
            .await?;
        Ok(held.0)
    }

    /// `GET /proficiency-tests/{id}/status`: the caller's latest result of this test.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn test_status(
        &self,
        actor: &Actor,
        test_id: &Id<ProficiencyTest>,
    ) -> Result<TestStatus> {
        actor.require(Role::User)?;
        let test_id = test_id.as_str();
        let caller = actor.caller()?;
        let mut snapshot = self.db().read_snapshot().await?;
        let test = visible_test(&mut snapshot, actor, test_id).await?;
        let row = sqlx::query(
            "SELECT id, total_score, level, completed_at FROM test_results
             WHERE user_id = $1 AND test_id = $2
             ORDER BY completed_at DESC, id DESC LIMIT 1",
        )
        .bind(&caller.user_id)
        .bind(&test.id)
        .fetch_optional(&mut *snapshot)
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
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn my_test_results(&self, actor: &Actor) -> Result<Vec<TestResult>> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let mut conn = self.db().reader().acquire().await?;
        results_of(&mut conn, &caller.user_id).await
    }

    /// `GET /proficiency-tests/results/me/{resultId}`: someone else's result is not found.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn my_test_result(
        &self,
        actor: &Actor,
        result_id: &Id<TestResult>,
    ) -> Result<DetailedResult> {
        actor.require(Role::User)?;
        let caller = actor.caller()?;
        let mut conn = self.db().reader().acquire().await?;
        match find_result(&mut conn, result_id.as_str()).await? {
            Some(record) if record.user_id == caller.user_id => {
                Ok(record.detailed(actor.is_admin()))
            }
            _ => Err(Error::not_found("test result")),
        }
    }

    /// `GET /proficiency-tests/admin/results`: newest first, filtered.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_test_results(
        &self,
        actor: &Actor,
        query: &ResultQuery,
        page: PageRequest,
    ) -> Result<Page<TestResult>> {
        actor.require(Role::Admin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        let (list, total) = store::list(&mut snapshot, query, page).await?;
        Ok(Page::new(list, page, total))
    }

    /// `GET /proficiency-tests/admin/results/{resultId}`: with the correct options.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_test_result(
        &self,
        actor: &Actor,
        result_id: &Id<TestResult>,
    ) -> Result<DetailedResult> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        find_result(&mut conn, result_id.as_str())
            .await?
            .map(|record| record.detailed(true))
            .ok_or_else(|| Error::not_found("test result"))
    }

    /// `DELETE /proficiency-tests/admin/results/{resultId}`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_test_result(
        &self,
        actor: &Actor,
        result_id: &Id<TestResult>,
    ) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        let delete = "DELETE FROM test_results WHERE id = $1 RETURNING test_title AS label";
        let not_found = || Error::not_found("test result");
        let audit = ("result.deleted", "result");
        self.delete_by_id(actor, audit, result_id.as_str(), delete, not_found, None)
            .await
    }

    /// `GET /proficiency-tests/admin/results/user/{userId}`: that user's results, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn user_test_results(&self, actor: &Actor, user_id: &Id<User>) -> Result<ResultList> {
        actor.require(Role::Admin)?;
        let user_id = user_id.as_str();
        let mut snapshot = self.db().read_snapshot().await?;
        if users::find_user(&mut snapshot, user_id).await?.is_none() {
            return Err(Error::not_found("user"));
        }
        Ok(ResultList {
            list: results_of(&mut snapshot, user_id).await?,
        })
    }
}
