//! Validation of test bodies: one message per problem, nothing stored (CONTRACT §6).

use super::*;

#[tokio::test]
async fn a_test_needs_at_least_one_question_and_one_level_range() {
    let (_app, admin) = TestApp::with_admin().await;
    let body = with(sample(), json!({ "questions": [], "levelRanges": [] }));
    assert_eq!(
        create_errors(&admin, &body).await,
        [
            "questions must have at least one question",
            "levelRanges must have at least one range"
        ]
    );
    assert_eq!(
        create_errors(&admin, &json!({})).await,
        [
            "title is required",
            "questions is required",
            "levelRanges is required"
        ]
    );
}

#[tokio::test]
async fn each_question_needs_at_least_two_options() {
    let (_app, admin) = TestApp::with_admin().await;
    let mut body = sample();
    body["questions"][1]["options"] = json!([{"text": "only"}]);
    body["questions"][1]["correctOptionIndex"] = json!(0);
    assert_eq!(
        create_errors(&admin, &body).await,
        ["questions[1].options must have at least 2 options"]
    );
    body["questions"][1]["options"] = json!([]);
    assert_eq!(
        create_errors(&admin, &body).await,
        ["questions[1].options must have at least 2 options"]
    );
    body["questions"][1]
        .as_object_mut()
        .expect("object")
        .remove("options");
    assert_eq!(
        create_errors(&admin, &body).await,
        ["questions[1].options is required"]
    );
    let mut blank = sample();
    blank["questions"][0]["options"][1]["text"] = json!("   ");
    assert_eq!(
        create_errors(&admin, &blank).await,
        ["questions[0].options[1].text must not be empty"]
    );
}

#[tokio::test]
async fn the_correct_option_index_must_name_one_of_the_options() {
    let (_app, admin) = TestApp::with_admin().await;
    for (index, expected) in [
        (
            json!(3),
            "questions[0].correctOptionIndex must be from 0 to 2",
        ),
        (
            json!(-1),
            "questions[0].correctOptionIndex must be from 0 to 2",
        ),
    ] {
        let mut body = sample();
        body["questions"][0]["correctOptionIndex"] = index;
        assert_eq!(create_errors(&admin, &body).await, [expected]);
    }
    let mut missing = sample();
    missing["questions"][2]
        .as_object_mut()
        .expect("object")
        .remove("correctOptionIndex");
    assert_eq!(
        create_errors(&admin, &missing).await,
        ["questions[2].correctOptionIndex is required"]
    );
    // The last option is a valid answer.
    let mut last = sample();
    last["questions"][0]["correctOptionIndex"] = json!(2);
    create(&admin, &last).await;
}

#[tokio::test]
async fn points_must_be_greater_than_zero() {
    let (_app, admin) = TestApp::with_admin().await;
    for points in [json!(0), json!(-2), json!(1001)] {
        let mut body = sample();
        body["questions"][1]["points"] = points.clone();
        assert_eq!(
            create_errors(&admin, &body).await,
            ["questions[1].points must be a whole number from 1 to 1000"],
            "{points}"
        );
    }
    let mut null = sample();
    null["questions"][1]["points"] = Value::Null;
    assert_eq!(
        create_errors(&admin, &null).await,
        ["questions[1].points cannot be null"]
    );
    let mut fraction = sample();
    fraction["questions"][1]["points"] = json!(1.5);
    let response = admin
        .post("/proficiency-tests", &fraction)
        .expect(400)
        .await;
    assert_eq!(response.errors().len(), 1);
}

/// Level ranges must neither overlap nor leave a reachable score (0 to the maximum, 6
/// for the sample) without a level; each case is the sample with other `levelRanges`.
#[tokio::test]
async fn level_ranges_must_not_overlap_and_must_cover_every_reachable_score() {
    let (_app, admin) = TestApp::with_admin().await;
    let cases: [(Value, &[&str]); 6] = [
        (
            json!([
                {"level": "A1", "minScore": 0, "maxScore": 3},
                {"level": "A2", "minScore": 3, "maxScore": 4},
                {"level": "B1", "minScore": 4, "maxScore": 6}
            ]),
            &[
                "levelRanges[0] and levelRanges[1] overlap (score 3)",
                "levelRanges[1] and levelRanges[2] overlap (score 4)",
            ],
        ),
        // Nested.
        (
            json!([
                {"level": "A1", "minScore": 0, "maxScore": 6},
                {"level": "A2", "minScore": 2, "maxScore": 3}
            ]),
            &["levelRanges[0] and levelRanges[1] overlap (scores 2 to 3)"],
        ),
        // A gap.
        (
            json!([
                {"level": "A1", "minScore": 0, "maxScore": 2},
                {"level": "B1", "minScore": 5, "maxScore": 6}
            ]),
            &[
                "levelRanges must cover every reachable score, but no range covers the reachable scores 3 to 4",
            ],
        ),
        // Zero left out.
        (
            json!([{"level": "A1", "minScore": 1, "maxScore": 6}]),
            &[
                "levelRanges must cover every reachable score, but no range covers the reachable score 0",
            ],
        ),
        // The maximum left out.
        (
            json!([{"level": "A1", "minScore": 0, "maxScore": 5}]),
            &[
                "levelRanges must cover every reachable score, but no range covers the reachable score 6",
            ],
        ),
        // Bounds and levels that are no range at all.
        (
            json!([
                {"level": "A1", "minScore": -1, "maxScore": 2},
                {"level": "A2", "minScore": 4, "maxScore": 3},
                {"level": "", "minScore": 5, "maxScore": 6}
            ]),
            &[
                "levelRanges[0].minScore must be 0 or more",
                "levelRanges[1].maxScore must not be less than minScore",
                "levelRanges[2].level must not be empty",
            ],
        ),
    ];
    for (ranges, expected) in cases {
        let body = with(sample(), json!({ "levelRanges": ranges.clone() }));
        assert_eq!(create_errors(&admin, &body).await, expected, "{ranges}");
    }
}

#[tokio::test]
async fn scores_nobody_can_reach_need_no_level_range() {
    let (_app, admin) = TestApp::with_admin().await;
    // Two questions of 2 points: only 0, 2 and 4 can be scored.
    let body = json!({
        "title": "Even",
        "questions": [
            {"text": "Q1", "points": 2, "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 0},
            {"text": "Q2", "points": 2, "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 0}
        ],
        "levelRanges": [
            {"level": "A1", "minScore": 0, "maxScore": 0},
            {"level": "A2", "minScore": 2, "maxScore": 2},
            {"level": "B1", "minScore": 4, "maxScore": 4}
        ]
    });
    let test = create(&admin, &body).await;
    assert_eq!(test["maxScore"], 4);
    let mut missing_two = body.clone();
    missing_two["levelRanges"] = json!([
        {"level": "A1", "minScore": 0, "maxScore": 1},
        {"level": "B1", "minScore": 3, "maxScore": 4}
    ]);
    assert_eq!(
        create_errors(&admin, &missing_two).await,
        ["levelRanges must cover every reachable score, but no range covers the reachable score 2"]
    );
}

#[tokio::test]
async fn every_problem_of_a_test_gets_its_own_message() {
    let (_app, admin) = TestApp::with_admin().await;
    let body = json!({
        "title": "",
        "locale": "english please",
        "timeLimitMinutes": 0,
        "questions": [
            {"text": "", "points": 0, "options": [{"text": "a"}], "correctOptionIndex": 0},
            {"text": "ok", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 5}
        ],
        "levelRanges": [
            {"level": "A1", "minScore": 0, "maxScore": 1},
            {"level": "A2", "minScore": 1, "maxScore": 2}
        ]
    });
    assert_eq!(
        create_errors(&admin, &body).await,
        [
            "title must not be empty",
            "locale must be a language code such as \"en\" or \"de-AT\"",
            "timeLimitMinutes must be a whole number from 1 to 1440",
            "questions[0].text must not be empty",
            "questions[0].points must be a whole number from 1 to 1000",
            "questions[0].options must have at least 2 options",
            "questions[1].correctOptionIndex must be from 0 to 1",
            "levelRanges[0] and levelRanges[1] overlap (score 1)"
        ]
    );
    assert_eq!(
        admin.get("/proficiency-tests").await["pagination"]["totalItems"],
        0
    );
}

#[tokio::test]
async fn unknown_fields_wrong_types_and_other_content_types_are_refused() {
    let (_app, admin) = TestApp::with_admin().await;
    let unknown = admin
        .post(
            "/proficiency-tests",
            &with(sample(), json!({ "difficulty": "hard" })),
        )
        .expect(400)
        .await;
    assert!(
        unknown.errors()[0].contains("difficulty"),
        "{:?}",
        unknown.errors()
    );
    let mut option_field = sample();
    option_field["questions"][0]["options"][0]["isCorrect"] = json!(true);
    let refused = admin
        .post("/proficiency-tests", &option_field)
        .expect(400)
        .await;
    assert!(refused.errors()[0].contains("isCorrect"));
    admin
        .post(
            "/proficiency-tests",
            &with(sample(), json!({ "questions": "many" })),
        )
        .expect(400)
        .await;
    admin
        .call(hyper::Method::POST, "/proficiency-tests")
        .body("text/plain", sample().to_string())
        .expect(415)
        .await;
}
