//! Submissions scored from the active-test cache (`placement/results/`, `submit_test`):
//! the writer only inserts, guarded by the test's version, and a test changed behind the
//! server's back (another process) is still scored exactly.

use serde_json::{Value, json};

use crate::helpers::{Session, TestApp, behind_the_back};

/// One question worth 1 point whose correct option is the first; bands cover 0..=1.
fn one_question() -> Value {
    json!({
        "title": "Quick check",
        "locale": "en",
        "targetLanguage": "de",
        "questions": [
            {"text": "Guten ___", "options": [{"text": "Tag"}, {"text": "Nacht"}], "correctOptionIndex": 0}
        ],
        "levelRanges": [
            {"level": "A1", "minScore": 0, "maxScore": 0, "message": "Start"},
            {"level": "A2", "minScore": 1, "maxScore": 1, "message": "Go on"}
        ]
    })
}

/// Where each test here starts: the app, its admin, a student and the id of the admin's
/// [`one_question`] test.
async fn quiz() -> (TestApp, Session, Session, String) {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("quick@example.com").await;
    let test = admin
        .post("/proficiency-tests", &one_question())
        .created()
        .await;
    let id = test["id"].as_str().expect("id").to_owned();
    (app, admin, student, id)
}

async fn submit_first_option(who: &Session, test_id: &str) -> crate::helpers::TestResponse {
    who.post(
        &format!("/proficiency-tests/{test_id}/submit"),
        &json!({ "answers": [{"questionIndex": 0, "selectedOptionIndex": 0}] }),
    )
    .send()
    .await
}

async fn result_count(app: &TestApp) -> i64 {
    app.rows("test_results").await
}

#[tokio::test]
async fn a_test_edited_through_the_service_scores_the_next_submission_by_its_new_key() {
    let (_app, admin, student, id) = quiz().await;
    let first = submit_first_option(&student, &id).await.expect(201).data();
    assert_eq!(first["totalScore"], 1);

    let mut edited = one_question();
    edited["questions"][0]["correctOptionIndex"] = json!(1);
    admin
        .patch(&format!("/proficiency-tests/{id}"), &edited)
        .await;
    let second = submit_first_option(&student, &id).await.expect(201).data();
    assert_eq!(second["totalScore"], 0, "scored by the edited key");
    assert_eq!(second["level"], "A1");
}

#[tokio::test]
async fn a_test_changed_by_another_process_is_still_scored_by_its_current_key() {
    let (app, _admin, student, id) = quiz().await;
    // The server now holds the test.
    assert_eq!(
        submit_first_option(&student, &id).await.expect(201).data()["totalScore"],
        1
    );

    // Another process makes the second option the correct one (and, as every edit does,
    // moves the test's version).
    behind_the_back(
        &app,
        "UPDATE test_questions SET correct_option_id =
             (SELECT o.id FROM test_options o WHERE o.question_id = test_questions.id AND o.position = 1)
         WHERE test_id = $1",
        &id,
    )
    .await;
    behind_the_back(
        &app,
        "UPDATE proficiency_tests SET updated_at = updated_at + 1 WHERE id = $1",
        &id,
    )
    .await;
    let scored = submit_first_option(&student, &id).await.expect(201).data();
    assert_eq!(scored["totalScore"], 0, "the held copy was not trusted");
    assert_eq!(result_count(&app).await, 2);
}

#[tokio::test]
async fn a_test_deactivated_by_another_process_refuses_submissions_and_stores_nothing() {
    let (app, _admin, student, id) = quiz().await;
    submit_first_option(&student, &id).await.expect(201);
    behind_the_back(
        &app,
        "UPDATE proficiency_tests SET is_active = 0, updated_at = updated_at + 1 WHERE id = $1",
        &id,
    )
    .await;
    let refused = submit_first_option(&student, &id).await.expect(404);
    assert_eq!(refused.code(), "NOT_FOUND");
    assert_eq!(result_count(&app).await, 1);
}
