//! Placement tests and their results (CONTRACT §6).
//!
//! The static routes (`/proficiency-tests/languages`, `/results/me`, `/admin/results`)
//! sit beside `/proficiency-tests/{id}`; matchit prefers the static segment.

use langcamp_core::domain::Deleted;
use langcamp_core::domain::LanguageFilter;
use langcamp_core::placement::{
    AnswerInput, AttemptAnswer, AttemptView, DetailedResult, NewTest, ProficiencyTest,
    ResultFilter, ResultList, ResultQuery, SubmitInput, TestFilter, TestInput, TestPatch,
    TestResult, TestStatus,
};
use langcamp_core::{Page, Result};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::{Ctx, PageParams};
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_list_tests>(RateRule::Default, Access::Anyone, list_tests);
    r.add::<__path_create_test>(RateRule::Default, Access::Admin, create_test);
    r.add::<__path_test_languages>(RateRule::Default, Access::Anyone, test_languages);
    r.add::<__path_get_test>(RateRule::Default, Access::Anyone, get_test);
    r.add::<__path_update_test>(RateRule::Default, Access::Admin, update_test);
    r.add::<__path_delete_test>(RateRule::Default, Access::Admin, delete_test);
    r.add::<__path_duplicate_test>(RateRule::Default, Access::Admin, duplicate_test);
    r.add::<__path_submit_test>(RateRule::Default, Access::SignedIn, submit_test);
    r.add::<__path_start_attempt>(RateRule::Default, Access::SignedIn, start_attempt);
    r.add::<__path_get_attempt>(RateRule::Default, Access::SignedIn, get_attempt);
    r.add::<__path_answer_attempt>(RateRule::Default, Access::SignedIn, answer_attempt);
    r.add::<__path_test_status>(RateRule::Default, Access::SignedIn, test_status);
    r.add::<__path_my_results>(RateRule::Default, Access::SignedIn, my_results);
    r.add::<__path_my_result>(RateRule::Default, Access::SignedIn, my_result);
    r.add::<__path_list_results>(RateRule::Default, Access::Admin, list_results);
    r.add::<__path_get_result>(RateRule::Default, Access::Admin, get_result);
    r.add::<__path_delete_result>(RateRule::Default, Access::Admin, delete_result);
    r.add::<__path_user_results>(RateRule::Default, Access::Admin, user_results);
}

/// List placement tests, newest first. Anyone sees the active ones; admins see all, with
/// each question's `correctOptionIndex`.
#[utoipa::path(get, path = "/proficiency-tests", tag = "placement", operation_id = "listProficiencyTests",
    security((), ("bearer" = [])),
    params(TestFilter, PageParams),
    responses(
        (status = 200, description = "A page of tests. The public answer carries a weak `ETag` of its data, `Cache-Control: no-cache`, and is gzipped for `Accept-Encoding: gzip`; its `timestamp` is when the answer was encoded (at most a few seconds before).", body = Envelope<Page<ProficiencyTest>>),
        (status = 304, description = "`If-None-Match` holds the current `ETag` (public answer only): no body"),
        (status = 400, description = "Bad language code or pagination", body = ErrorEnvelope),
        (status = 401, description = "A token was sent but is not valid", body = ErrorEnvelope),
    ))]
pub async fn list_tests(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let filter = LanguageFilter::try_from(&TestFilter {
        locale: ctx.query("locale").map(str::to_owned),
        target_language: ctx.query("targetLanguage").map(str::to_owned),
    })?;
    let tests = ctx.app.list_tests_shared(&actor, &filter, page).await?;
    if actor.is_admin() {
        return Ok(Reply::ok(&*tests));
    }
    crate::encoded::reply(&crate::encoded::TESTS, &tests, &ctx.parts.headers)
}

/// Target-language codes that have an active test, sorted.
#[utoipa::path(get, path = "/proficiency-tests/languages", tag = "placement",
    operation_id = "listProficiencyTestLanguages",
    responses(
        (status = 200, description = "Language codes", body = Envelope<Vec<String>>),
    ))]
pub async fn test_languages(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.optional_actor().await?;
    Ok(Reply::ok(&ctx.app.test_languages(&actor).await?))
}

/// One placement test. An inactive test is not found unless the caller is an admin;
/// `correctOptionIndex` is present for admins only.
#[utoipa::path(get, path = "/proficiency-tests/{id}", tag = "placement", operation_id = "getProficiencyTest",
    security((), ("bearer" = [])),
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 200, description = "The test", body = Envelope<ProficiencyTest>),
        (status = 401, description = "A token was sent but is not valid", body = ErrorEnvelope),
        (status = 404, description = "No such test, or inactive", body = ErrorEnvelope),
    ))]
pub async fn get_test(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.get_test(&actor, &ctx.id("id")).await?))
}

/// Create a placement test. Every problem of the body is reported, one message each.
#[utoipa::path(post, path = "/proficiency-tests", tag = "placement", operation_id = "createProficiencyTest",
    request_body = TestInput,
    responses(
        (status = 201, description = "Created", body = Envelope<ProficiencyTest>),
        (status = 400, description = "Invalid test: questions, options, points or level ranges", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn create_test(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let new = ctx.command::<TestInput, NewTest>().await?;
    Ok(Reply::created(&ctx.app.create_test(&actor, new).await?))
}

/// Copy a test: `<title> (copy)`, inactive, with new question and option ids.
#[utoipa::path(post, path = "/proficiency-tests/{id}/duplicate", tag = "placement",
    operation_id = "duplicateProficiencyTest",
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 201, description = "The copy", body = Envelope<ProficiencyTest>),
        (status = 404, description = "No such test", body = ErrorEnvelope),
    ))]
pub async fn duplicate_test(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::created(
        &ctx.app.duplicate_test(&actor, &ctx.id("id")).await?,
    ))
}

/// Change a test. Absent fields stay; `questions` and `levelRanges` replace the whole
/// list, and a question or option that carries its `id` keeps it.
#[utoipa::path(patch, path = "/proficiency-tests/{id}", tag = "placement", operation_id = "updateProficiencyTest",
    request_body = TestPatch,
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 200, description = "Updated test", body = Envelope<ProficiencyTest>),
        (status = 400, description = "Invalid change", body = ErrorEnvelope),
        (status = 404, description = "No such test", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn update_test(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let input = ctx.json().await?;
    Ok(Reply::ok(
        &ctx.app.update_test(&actor, &ctx.id("id"), input).await?,
    ))
}

/// Delete a test. Its results remain, with the title and details they were given with.
#[utoipa::path(delete, path = "/proficiency-tests/{id}", tag = "placement", operation_id = "deleteProficiencyTest",
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 404, description = "No such test", body = ErrorEnvelope),
    ))]
pub async fn delete_test(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.delete_test(&actor, &ctx.id("id")).await?,
    ))
}

/// Submit answers and get the scored result. Each submission is a new result (retakes
/// are allowed); unanswered questions score 0.
#[utoipa::path(post, path = "/proficiency-tests/{id}/submit", tag = "placement", operation_id = "submitProficiencyTest",
    request_body = SubmitInput,
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 201, description = "The result", body = Envelope<TestResult>),
        (status = 400, description = "answers missing, not an array or empty; an index out of range or negative; a question answered twice; the test is adaptive (use attempts)", body = ErrorEnvelope),
        (status = 404, description = "No such test, or inactive", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn submit_test(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let input = ctx.json().await?;
    Ok(Reply::created(
        &ctx.app.submit_test(&actor, &ctx.id("id"), input).await?,
    ))
}

/// The body of starting an attempt: nothing, or an empty object.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartAttemptInput {}

/// Start an attempt at an adaptive test (CONTRACT §19), or resume the caller's open one
/// (200, the same current question). The question carries no level and no answer key.
#[utoipa::path(post, path = "/proficiency-tests/{id}/attempts", tag = "placement",
    operation_id = "startProficiencyTestAttempt",
    request_body(content = Option<StartAttemptInput>, description = "No body, or an empty object"),
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 201, description = "A new attempt with its first question", body = Envelope<AttemptView>),
        (status = 200, description = "The caller's open attempt at this test", body = Envelope<AttemptView>),
        (status = 400, description = "The test is not adaptive, or the body is not empty", body = ErrorEnvelope),
        (status = 404, description = "No such test, or inactive", body = ErrorEnvelope),
    ))]
pub async fn start_attempt(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let _: Option<StartAttemptInput> = ctx.optional_json().await?;
    let attempt = ctx.app.start_attempt(&actor, &ctx.id("id")).await?;
    Ok(if attempt.created {
        Reply::created(&attempt.view)
    } else {
        Reply::ok(&attempt.view)
    })
}

/// One of the caller's attempts, to resume it: the current question, or once finished
/// the result. An attempt whose time limit passed is finished with the answers given.
#[utoipa::path(get, path = "/proficiency-tests/attempts/{attemptId}", tag = "placement",
    operation_id = "getProficiencyTestAttempt",
    params(("attemptId" = String, Path, description = "Attempt id")),
    responses(
        (status = 200, description = "The attempt", body = Envelope<AttemptView>),
        (status = 404, description = "No such attempt of the caller", body = ErrorEnvelope),
    ))]
pub async fn get_attempt(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.get_attempt(&actor, &ctx.id("attemptId")).await?,
    ))
}

/// Answer the current question of an attempt: the next question, or the result when the
/// test is over. Nothing says whether the answer was right until the end.
#[utoipa::path(post, path = "/proficiency-tests/attempts/{attemptId}/answer", tag = "placement",
    operation_id = "answerProficiencyTestAttempt",
    request_body = AnswerInput,
    params(("attemptId" = String, Path, description = "Attempt id")),
    responses(
        (status = 200, description = "The attempt after the answer", body = Envelope<AttemptView>),
        (status = 400, description = "questionId or selectedOptionIndex missing or invalid; the index out of range", body = ErrorEnvelope),
        (status = 404, description = "No such attempt of the caller", body = ErrorEnvelope),
        (status = 409, description = "Not the current question (or it was answered meanwhile), or the attempt is finished", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn answer_attempt(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let answer = ctx.command::<AnswerInput, AttemptAnswer>().await?;
    Ok(Reply::ok(
        &ctx.app
            .answer_attempt(&actor, &ctx.id("attemptId"), answer)
            .await?,
    ))
}

/// Whether the caller has taken this test, and their latest result of it.
#[utoipa::path(get, path = "/proficiency-tests/{id}/status", tag = "placement", operation_id = "getProficiencyTestStatus",
    params(("id" = String, Path, description = "Test id")),
    responses(
        (status = 200, description = "Status", body = Envelope<TestStatus>),
        (status = 404, description = "No such test, or inactive", body = ErrorEnvelope),
    ))]
pub async fn test_status(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.test_status(&actor, &ctx.id("id")).await?,
    ))
}

/// The caller's results, newest first (at most 1000).
#[utoipa::path(get, path = "/proficiency-tests/results/me", tag = "placement", operation_id = "listMyTestResults",
    responses(
        (status = 200, description = "Own results", body = Envelope<Vec<TestResult>>),
    ))]
pub async fn my_results(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.my_test_results(&actor).await?))
}

/// One of the caller's results, with each question's text, points and the chosen option
/// (the correct option only when the caller is an admin).
#[utoipa::path(get, path = "/proficiency-tests/results/me/{resultId}", tag = "placement",
    operation_id = "getMyTestResult",
    params(("resultId" = String, Path, description = "Result id")),
    responses(
        (status = 200, description = "The result", body = Envelope<DetailedResult>),
        (status = 404, description = "No such result of the caller", body = ErrorEnvelope),
    ))]
pub async fn my_result(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.my_test_result(&actor, &ctx.id("resultId")).await?,
    ))
}

/// All results, newest first.
#[utoipa::path(get, path = "/proficiency-tests/admin/results", tag = "placement", operation_id = "listTestResults",
    params(ResultFilter, PageParams),
    responses(
        (status = 200, description = "A page of results", body = Envelope<Page<TestResult>>),
        (status = 400, description = "Bad language code or pagination", body = ErrorEnvelope),
    ))]
pub async fn list_results(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let query = ResultQuery::try_from(&ResultFilter {
        test_id: ctx.query("testId").map(str::to_owned),
        user_id: ctx.query("userId").map(str::to_owned),
        level: ctx.query("level").map(str::to_owned),
        target_language: ctx.query("targetLanguage").map(str::to_owned),
    })?;
    Ok(Reply::ok(
        &ctx.app.list_test_results(&actor, &query, page).await?,
    ))
}

/// One result with the correct option of each question.
#[utoipa::path(get, path = "/proficiency-tests/admin/results/{resultId}", tag = "placement",
    operation_id = "getTestResult",
    params(("resultId" = String, Path, description = "Result id")),
    responses(
        (status = 200, description = "The result", body = Envelope<DetailedResult>),
        (status = 404, description = "No such result", body = ErrorEnvelope),
    ))]
pub async fn get_result(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.get_test_result(&actor, &ctx.id("resultId")).await?,
    ))
}

/// Delete a result.
#[utoipa::path(delete, path = "/proficiency-tests/admin/results/{resultId}", tag = "placement",
    operation_id = "deleteTestResult",
    params(("resultId" = String, Path, description = "Result id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 404, description = "No such result", body = ErrorEnvelope),
    ))]
pub async fn delete_result(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app
            .delete_test_result(&actor, &ctx.id("resultId"))
            .await?,
    ))
}

/// A user's results, newest first (at most 1000).
#[utoipa::path(get, path = "/proficiency-tests/admin/results/user/{userId}", tag = "placement",
    operation_id = "listUserTestResults",
    params(("userId" = String, Path, description = "User id")),
    responses(
        (status = 200, description = "The user's results", body = Envelope<ResultList>),
        (status = 404, description = "No such user", body = ErrorEnvelope),
    ))]
pub async fn user_results(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.user_test_results(&actor, &ctx.id("userId")).await?,
    ))
}
