//! Taking a test: submitting answers, scoring, status (CONTRACT §6).

use super::*;

#[tokio::test]
async fn scores_add_the_points_of_correct_answers_with_unequal_points() {
    let School { app, test, .. } = School::at_start().await;
    let student = app.student("ana@example.com").await;
    // Right on questions 0 (1 point) and 2 (3 points), wrong on 1 (2 points).
    let result = submitted(&student, &id(&test), &[(0, 2), (1, 1), (2, 0)]).await;
    assert_eq!(result["totalScore"], 4);
    assert_eq!(result["maxScore"], 6);
    assert_eq!(result["level"], "A2");
    assert_eq!(result["message"], "A2 suits you");
    assert_eq!(result["_id"], result["id"]);
    assert_eq!(result["testId"], test["id"]);
    assert_eq!(result["userId"], student.user_id.as_str());
    assert_eq!(result["completedAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(
        result["user"],
        json!({"id": student.user_id, "name": "Test Person", "email": "ana@example.com"})
    );
    assert_eq!(
        result["test"],
        json!({"id": test["id"], "title": "German placement", "targetLanguage": "de"})
    );
    let q = &test["questions"];
    assert_eq!(
        result["answers"],
        json!([
            {"questionId": q[0]["id"], "selectedOptionId": q[0]["options"][2]["id"], "isCorrect": true},
            {"questionId": q[1]["id"], "selectedOptionId": q[1]["options"][1]["id"], "isCorrect": false},
            {"questionId": q[2]["id"], "selectedOptionId": q[2]["options"][0]["id"], "isCorrect": true}
        ])
    );
}

#[tokio::test]
async fn unanswered_questions_score_zero() {
    let School { app, test, .. } = School::new().await;
    let student = app.student("ana@example.com").await;
    let result = submitted(&student, &id(&test), &[(2, 0)]).await;
    assert_eq!(result["totalScore"], 3);
    assert_eq!(result["level"], "A2");
    assert_eq!(result["answers"].as_array().map(Vec::len), Some(3));
    assert_eq!(result["answers"][0]["selectedOptionId"], Value::Null);
    assert_eq!(result["answers"][0]["isCorrect"], false);
    assert_eq!(result["answers"][1]["selectedOptionId"], Value::Null);
    let nothing_right = submitted(&student, &id(&test), &[(0, 0)]).await;
    assert_eq!(nothing_right["totalScore"], 0);
    assert_eq!(nothing_right["level"], "A1");
    assert_eq!(nothing_right["message"], "Start with A1");
}

#[tokio::test]
async fn scores_on_the_bounds_of_a_range_get_that_range() {
    let School { app, test, .. } = School::new().await;
    let student = app.student("ana@example.com").await;
    let test_id = id(&test);
    // Right answers: q0 -> 2 (1 point), q1 -> 0 (2 points), q2 -> 0 (3 points).
    let cases: [(Answers, i64, &str); 6] = [
        (&[(0, 0), (1, 1), (2, 1)], 0, "A1"), // minScore of A1
        (&[(1, 0)], 2, "A1"),                 // maxScore of A1
        (&[(0, 2), (1, 0)], 3, "A2"),         // minScore of A2
        (&[(0, 2), (2, 0)], 4, "A2"),         // maxScore of A2
        (&[(1, 0), (2, 0)], 5, "B1"),         // minScore of B1
        (&[(0, 2), (1, 0), (2, 0)], 6, "B1"), // maxScore of B1
    ];
    for (answers, total, level) in cases {
        let result = submitted(&student, &test_id, answers).await;
        assert_eq!(result["totalScore"], total, "{answers:?}");
        assert_eq!(result["level"], level, "{answers:?}");
    }
}

#[tokio::test]
async fn submissions_with_bad_answers_are_refused_with_400() {
    let School { app, test, .. } = School::new().await;
    let student = app.student("ana@example.com").await;
    let path = format!("/proficiency-tests/{}/submit", id(&test));
    let cases = [
        (json!({}), vec!["answers is required"]),
        (json!({"answers": null}), vec!["answers must be an array"]),
        (
            json!({"answers": {"questionIndex": 0}}),
            vec!["answers must be an array"],
        ),
        (json!({"answers": "0,1"}), vec!["answers must be an array"]),
        (json!({"answers": []}), vec!["answers must not be empty"]),
        (
            json!({"answers": [{"questionIndex": 3, "selectedOptionIndex": 0}]}),
            vec!["answers[0].questionIndex must be from 0 to 2"],
        ),
        (
            json!({"answers": [{"questionIndex": 2, "selectedOptionIndex": 2}]}),
            vec!["answers[0].selectedOptionIndex must be from 0 to 1 for question 2"],
        ),
        (
            json!({"answers": [{"questionIndex": -1, "selectedOptionIndex": 0},
                               {"questionIndex": 0, "selectedOptionIndex": -3}]}),
            vec![
                "answers[0].questionIndex must be 0 or more",
                "answers[1].selectedOptionIndex must be 0 or more",
            ],
        ),
        (
            json!({"answers": [{"questionIndex": 1, "selectedOptionIndex": 0},
                               {"questionIndex": 1, "selectedOptionIndex": 1}]}),
            vec!["answers[1].questionIndex repeats question 1, already answered in answers[0]"],
        ),
        (
            json!({"answers": [{"questionIndex": "0", "selectedOptionIndex": 0.5},
                               {"selectedOptionIndex": 0}, 7]}),
            vec![
                "answers[0].questionIndex must be a whole number",
                "answers[0].selectedOptionIndex must be a whole number",
                "answers[1].questionIndex is required",
                "answers[2] must be an object with questionIndex and selectedOptionIndex",
            ],
        ),
        (
            json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 0, "extra": 1}]}),
            vec!["answers[0].extra is not a known field"],
        ),
    ];
    for (body, expected) in cases {
        let response = student
            .post(&path, &body)
            .fails(400, "VALIDATION_FAILED")
            .await;
        assert_eq!(response.errors(), expected, "{body}");
    }
    let unknown = student
        .post(
            &path,
            &json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 0}], "final": true}),
        )
        .expect(400)
        .await;
    assert!(unknown.errors()[0].contains("final"));
    student
        .call(hyper::Method::POST, &path)
        .body("text/plain", "answers")
        .expect(415)
        .await;
    // None of these left a result behind.
    let mine = student.get("/proficiency-tests/results/me").await;
    assert_eq!(mine, json!([]));
}

#[tokio::test]
async fn submissions_to_unknown_inactive_or_malformed_tests_are_404() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("ana@example.com").await;
    let inactive = create(&admin, &with(sample(), json!({ "isActive": false }))).await;
    for test_id in [
        "0190a4b6-0000-7000-8000-000000000000".to_owned(),
        id(&inactive),
        "not-an-id".to_owned(),
        "%27%20OR%201=1".to_owned(),
    ] {
        let response = submit(&student, &test_id, &[(0, 0)]).await.expect(404);
        assert_eq!(response.code(), "NOT_FOUND");
        assert_eq!(response.errors(), ["test not found"]);
    }
    // Admins cannot submit to an inactive test either.
    submit(&admin, &id(&inactive), &[(0, 0)]).await.expect(404);
}

#[tokio::test]
async fn status_tells_whether_the_caller_took_the_test_and_shows_the_latest_result() {
    let School { app, test, .. } = School::at_start().await;
    let student = app.student("ana@example.com").await;
    let other = app.student("ben@example.com").await;
    let path = format!("/proficiency-tests/{}/status", id(&test));
    let before = student.get(&path).await;
    assert_eq!(before, json!({"completed": false, "lastResult": null}));

    let first = submitted(&student, &id(&test), &[(0, 2)]).await;
    let after = student.get(&path).await;
    assert_eq!(
        after,
        json!({"completed": true, "lastResult": {
            "id": first["id"], "totalScore": 1, "level": "A1", "completedAt": "2026-11-22T10:00:00.000Z"}})
    );
    app.clock.advance(TimeDelta::minutes(5));
    let retake = submitted(&student, &id(&test), &[(0, 2), (1, 0), (2, 0)]).await;
    assert_ne!(retake["id"], first["id"]);
    let latest = student.get(&path).await;
    assert_eq!(
        latest["lastResult"],
        json!({"id": retake["id"], "totalScore": 6, "level": "B1", "completedAt": "2026-11-22T10:05:00.000Z"})
    );
    // Someone else's results do not count.
    let theirs = other.get(&path).await;
    assert_eq!(theirs["completed"], false);
    student
        .get("/proficiency-tests/0190a4b6-0000-7000-8000-000000000000/status")
        .expect(404)
        .await;
}
