//! Placement tests and results (CONTRACT §6).

use chrono::{TimeDelta, TimeZone, Utc};
use serde_json::{Value, json};

use crate::helpers::{Case, Client, Session, TestApp, TestResponse, assert_role_matrix};

fn start() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0)
        .single()
        .expect("valid date")
}

/// Three questions worth 1, 2 and 3 points (every score 0..=6 reachable); the correct
/// options are 2, 0 and 0.
fn sample() -> Value {
    json!({
        "title": "German placement",
        "description": "Find your level",
        "locale": "en",
        "targetLanguage": "de",
        "timeLimitMinutes": 30,
        "questions": [
            {"text": "___ Haus", "points": 1,
             "options": [{"text": "der"}, {"text": "die"}, {"text": "das"}], "correctOptionIndex": 2},
            {"text": "Ich ___ müde", "points": 2,
             "options": [{"text": "bin"}, {"text": "bist"}, {"text": "ist"}], "correctOptionIndex": 0},
            {"text": "Perfekt von gehen", "points": 3,
             "options": [{"text": "bin gegangen"}, {"text": "habe gegangen"}], "correctOptionIndex": 0}
        ],
        "levelRanges": [
            {"level": "A1", "minScore": 0, "maxScore": 2, "message": "Start with A1"},
            {"level": "A2", "minScore": 3, "maxScore": 4, "message": "A2 suits you"},
            {"level": "B1", "minScore": 5, "maxScore": 6, "message": "Go for B1"}
        ]
    })
}

fn with(mut body: Value, field: &str, value: Value) -> Value {
    body[field] = value;
    body
}

async fn create(admin: &Session, body: &Value) -> Value {
    admin
        .post("/proficiency-tests", body)
        .expect(201)
        .await
        .data()
}

async fn submit(who: &Session, test_id: &str, answers: &[(i64, i64)]) -> TestResponse {
    let answers: Vec<Value> = answers
        .iter()
        .map(|(q, o)| json!({"questionIndex": q, "selectedOptionIndex": o}))
        .collect();
    who.post(
        &format!("/proficiency-tests/{test_id}/submit"),
        &json!({ "answers": answers }),
    )
    .send()
    .await
}

/// Answers as (question index, option index).
type Answers = &'static [(i64, i64)];

fn pick(ids: &[String], order: &[usize]) -> Vec<String> {
    order.iter().map(|&i| ids[i].clone()).collect()
}

fn id(value: &Value) -> String {
    value["id"].as_str().expect("an id").to_owned()
}

/// The `errors` of a 400 answer to a create body.
async fn create_errors(admin: &Session, body: &Value) -> Vec<String> {
    let response = admin.post("/proficiency-tests", body).expect(400).await;
    assert_eq!(response.code(), "VALIDATION_FAILED");
    errors(&response)
}

fn errors(response: &TestResponse) -> Vec<String> {
    response.json()["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e.as_str().expect("a message").to_owned())
        .collect()
}

/// Every place in `value` that reveals the answer key: any field naming a correct option,
/// and `isCorrect` anywhere but on a result's answers.
fn answer_key_leaks(value: &Value) -> Vec<String> {
    fn walk(value: &Value, path: &mut Vec<String>, found: &mut Vec<String>) {
        match value {
            Value::Object(fields) => {
                for (key, child) in fields {
                    let on_result_answer = path.len() >= 2 && path[path.len() - 2] == "answers";
                    let lower = key.to_lowercase();
                    if (lower.contains("correct") && !(key == "isCorrect" && on_result_answer))
                        || lower.contains("answerkey")
                    {
                        found.push(format!("{}.{key}", path.join(".")));
                    }
                    path.push(key.clone());
                    walk(child, path, found);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    walk(item, path, found);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, &mut Vec::new(), &mut found);
    found
}

// ---------------------------------------------------------------------------------------
// Authoring and reading

#[tokio::test]
async fn admins_create_a_test_and_read_it_back_with_the_answer_key() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    assert_eq!(test["title"], "German placement");
    assert_eq!(test["description"], "Find your level");
    assert_eq!(test["locale"], "en");
    assert_eq!(test["targetLanguage"], "de");
    assert_eq!(test["timeLimitMinutes"], 30);
    assert_eq!(test["isActive"], true);
    assert_eq!(test["questionCount"], 3);
    assert_eq!(test["maxScore"], 6);
    assert_eq!(test["createdAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(test["updatedAt"], "2026-11-22T10:00:00.000Z");
    let questions = test["questions"].as_array().expect("questions");
    assert_eq!(questions.len(), 3);
    assert_eq!(questions[0]["text"], "___ Haus");
    assert_eq!(questions[0]["points"], 1);
    assert_eq!(questions[0]["correctOptionIndex"], 2);
    assert_eq!(questions[1]["correctOptionIndex"], 0);
    assert_eq!(questions[0]["options"][2]["text"], "das");
    assert!(questions[0]["options"][2]["id"].as_str().is_some());
    assert!(questions[0]["id"].as_str().is_some());
    assert_eq!(
        test["levelRanges"],
        json!([
            {"level": "A1", "minScore": 0, "maxScore": 2, "message": "Start with A1"},
            {"level": "A2", "minScore": 3, "maxScore": 4, "message": "A2 suits you"},
            {"level": "B1", "minScore": 5, "maxScore": 6, "message": "Go for B1"}
        ])
    );
    let read = admin
        .get(&format!("/proficiency-tests/{}", id(&test)))
        .await;
    assert_eq!(read, test);
}

#[tokio::test]
async fn points_default_to_one_and_the_optional_fields_to_null() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = create(&admin,
        &json!({
            "title": "  Minimal  ",
            "questions": [{"text": "Q", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 1}],
            "levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 1}]
        }),
    )
    .await;
    assert_eq!(test["title"], "Minimal");
    assert_eq!(test["questions"][0]["points"], 1);
    assert_eq!(test["maxScore"], 1);
    assert_eq!(test["description"], Value::Null);
    assert_eq!(test["locale"], Value::Null);
    assert_eq!(test["targetLanguage"], Value::Null);
    assert_eq!(test["timeLimitMinutes"], Value::Null);
    assert_eq!(test["levelRanges"][0]["message"], "");
}

#[tokio::test]
async fn the_public_reads_active_tests_without_the_answer_key() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let path = format!("/proficiency-tests/{}", id(&test));
    for token in [None, Some(&student.access)] {
        let mut call = app.get(&path);
        if let Some(token) = token {
            call = call.bearer(token);
        }
        let read = call.send().await.expect(200).data();
        assert_eq!(read["id"], test["id"]);
        assert_eq!(
            read["questions"][0]["options"][2]["id"],
            test["questions"][0]["options"][2]["id"]
        );
        assert_eq!(read["questions"][0].get("correctOptionIndex"), None);
        assert_eq!(answer_key_leaks(&read), Vec::<String>::new());
        let mut call = app.get("/proficiency-tests");
        if let Some(token) = token {
            call = call.bearer(token);
        }
        let list = call.send().await.expect(200).data();
        assert_eq!(list["list"][0]["id"], test["id"]);
        assert_eq!(
            list["list"][0]["questions"].as_array().map(Vec::len),
            Some(3)
        );
        assert_eq!(answer_key_leaks(&list), Vec::<String>::new());
    }
    let admin_list = admin.get("/proficiency-tests").await;
    assert_eq!(
        admin_list["list"][0]["questions"][0]["correctOptionIndex"],
        2
    );
}

#[tokio::test]
async fn inactive_tests_are_hidden_from_everyone_but_admins() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let hidden = create(&admin, &with(sample(), "isActive", json!(false))).await;
    let shown = create(
        &admin,
        &with(
            with(sample(), "title", json!("French")),
            "targetLanguage",
            json!("fr"),
        ),
    )
    .await;
    assert_eq!(hidden["isActive"], false);

    let public = app.get("/proficiency-tests").await;
    assert_eq!(public["pagination"]["totalItems"], 1);
    assert_eq!(public["list"][0]["id"], shown["id"]);
    let all = admin.get("/proficiency-tests").await;
    assert_eq!(all["pagination"]["totalItems"], 2);

    let path = format!("/proficiency-tests/{}", id(&hidden));
    assert_eq!(app.get(&path).expect(404).await.code(), "NOT_FOUND");
    student.get(&path).expect(404).await;
    admin.get(&path).expect(200).await;
    let languages = app.get("/proficiency-tests/languages").await;
    assert_eq!(languages, json!(["fr"]));
    submit(&student, &id(&hidden), &[(0, 0)]).await.expect(404);
    student.get(&format!("{path}/status")).expect(404).await;

    // Activating it shows it.
    admin
        .patch(&path, &json!({"isActive": true}))
        .expect(200)
        .await;
    app.get(&path).expect(200).await;
    submit(&student, &id(&hidden), &[(0, 0)]).await.expect(201);
}

#[tokio::test]
async fn test_lists_filter_by_locale_and_target_language_and_paginate_newest_first() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let mut ids = Vec::new();
    for (i, (locale, target)) in [
        ("en", "de"),
        ("en", "fr"),
        ("de", "fr"),
        ("en", "de"),
        ("EN", "DE"),
    ]
    .into_iter()
    .enumerate()
    {
        let body = with(
            with(
                with(sample(), "title", json!(format!("Test {i}"))),
                "locale",
                json!(locale),
            ),
            "targetLanguage",
            json!(target),
        );
        ids.push(id(&create(&admin, &body).await));
        app.clock.advance(TimeDelta::minutes(1));
    }
    let titles = |data: &Value| -> Vec<String> {
        data["list"]
            .as_array()
            .expect("list")
            .iter()
            .map(|t| t["title"].as_str().expect("title").to_owned())
            .collect()
    };
    let all = app.get("/proficiency-tests").await;
    assert_eq!(
        titles(&all),
        ["Test 4", "Test 3", "Test 2", "Test 1", "Test 0"]
    );
    assert_eq!(all["list"][0]["locale"], "en", "codes are normalised");
    assert_eq!(all["list"][0]["targetLanguage"], "de");

    let german = app.get("/proficiency-tests?targetLanguage=de").await;
    assert_eq!(titles(&german), ["Test 4", "Test 3", "Test 0"]);
    let from_english = app
        .get("/proficiency-tests?locale=en&targetLanguage=fr")
        .await;
    assert_eq!(titles(&from_english), ["Test 1"]);
    let upper = app.get("/proficiency-tests?locale=DE").await;
    assert_eq!(titles(&upper), ["Test 2"]);
    let none = app.get("/proficiency-tests?targetLanguage=it").await;
    assert_eq!(none["list"], json!([]));
    assert_eq!(none["pagination"]["totalPages"], 0);

    let page = app.get("/proficiency-tests?page=2&limit=2").await;
    assert_eq!(titles(&page), ["Test 2", "Test 1"]);
    assert_eq!(
        page["list"][0]["questions"].as_array().map(Vec::len),
        Some(3)
    );
    assert_eq!(
        page["pagination"],
        json!({"currentPage": 2, "totalPages": 3, "totalItems": 5, "itemsPerPage": 2,
               "hasNextPage": true, "hasPrevPage": true})
    );
    let past = app.get("/proficiency-tests?page=4&limit=2").await;
    assert_eq!(past["list"], json!([]));
    assert_eq!(past["pagination"]["totalItems"], 5);

    for bad in [
        "/proficiency-tests?locale=not_a_tag!",
        "/proficiency-tests?targetLanguage=1",
        "/proficiency-tests?page=0",
        "/proficiency-tests?limit=101",
    ] {
        assert_eq!(
            app.get(bad).expect(400).await.code(),
            "VALIDATION_FAILED",
            "{bad}"
        );
    }
}

#[tokio::test]
async fn languages_lists_each_target_language_of_active_tests_once_sorted() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    assert_eq!(app.get("/proficiency-tests/languages").await, json!([]));
    for target in ["fr", "de", "fr", "es"] {
        create(&admin, &with(sample(), "targetLanguage", json!(target))).await;
    }
    create(
        &admin,
        &with(
            with(sample(), "targetLanguage", json!("it")),
            "isActive",
            json!(false),
        ),
    )
    .await;
    create(&admin, &with(sample(), "targetLanguage", Value::Null)).await;
    assert_eq!(
        app.get("/proficiency-tests/languages").await,
        json!(["de", "es", "fr"])
    );
}

// ---------------------------------------------------------------------------------------
// Validation

#[tokio::test]
async fn a_test_needs_at_least_one_question_and_one_level_range() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let body = with(
        with(sample(), "questions", json!([])),
        "levelRanges",
        json!([]),
    );
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
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
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
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
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
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
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
    assert_eq!(errors(&response).len(), 1);
}

#[tokio::test]
async fn level_ranges_must_not_overlap() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let body = with(
        sample(),
        "levelRanges",
        json!([
            {"level": "A1", "minScore": 0, "maxScore": 3},
            {"level": "A2", "minScore": 3, "maxScore": 4},
            {"level": "B1", "minScore": 4, "maxScore": 6}
        ]),
    );
    assert_eq!(
        create_errors(&admin, &body).await,
        [
            "levelRanges[0] and levelRanges[1] overlap (score 3)",
            "levelRanges[1] and levelRanges[2] overlap (score 4)"
        ]
    );
    let nested = with(
        sample(),
        "levelRanges",
        json!([
            {"level": "A1", "minScore": 0, "maxScore": 6},
            {"level": "A2", "minScore": 2, "maxScore": 3}
        ]),
    );
    assert_eq!(
        create_errors(&admin, &nested).await,
        ["levelRanges[0] and levelRanges[1] overlap (scores 2 to 3)"]
    );
}

#[tokio::test]
async fn level_ranges_must_cover_every_reachable_score_from_zero_to_the_maximum() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let gap = with(
        sample(),
        "levelRanges",
        json!([
            {"level": "A1", "minScore": 0, "maxScore": 2},
            {"level": "B1", "minScore": 5, "maxScore": 6}
        ]),
    );
    assert_eq!(
        create_errors(&admin, &gap).await,
        [
            "levelRanges must cover every reachable score, but no range covers the reachable scores 3 to 4"
        ]
    );
    let no_zero = with(
        sample(),
        "levelRanges",
        json!([{"level": "A1", "minScore": 1, "maxScore": 6}]),
    );
    assert_eq!(
        create_errors(&admin, &no_zero).await,
        ["levelRanges must cover every reachable score, but no range covers the reachable score 0"]
    );
    let short = with(
        sample(),
        "levelRanges",
        json!([{"level": "A1", "minScore": 0, "maxScore": 5}]),
    );
    assert_eq!(
        create_errors(&admin, &short).await,
        ["levelRanges must cover every reachable score, but no range covers the reachable score 6"]
    );
    let bad_bounds = with(
        sample(),
        "levelRanges",
        json!([
            {"level": "A1", "minScore": -1, "maxScore": 2},
            {"level": "A2", "minScore": 4, "maxScore": 3},
            {"level": "", "minScore": 5, "maxScore": 6}
        ]),
    );
    assert_eq!(
        create_errors(&admin, &bad_bounds).await,
        [
            "levelRanges[0].minScore must be 0 or more",
            "levelRanges[1].maxScore must not be less than minScore",
            "levelRanges[2].level must not be empty"
        ]
    );
}

#[tokio::test]
async fn scores_nobody_can_reach_need_no_level_range() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
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
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
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
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let unknown = admin
        .post(
            "/proficiency-tests",
            &with(sample(), "difficulty", json!("hard")),
        )
        .expect(400)
        .await;
    assert!(
        errors(&unknown)[0].contains("difficulty"),
        "{:?}",
        errors(&unknown)
    );
    let mut option_field = sample();
    option_field["questions"][0]["options"][0]["isCorrect"] = json!(true);
    let refused = admin
        .post("/proficiency-tests", &option_field)
        .expect(400)
        .await;
    assert!(errors(&refused)[0].contains("isCorrect"));
    admin
        .post(
            "/proficiency-tests",
            &with(sample(), "questions", json!("many")),
        )
        .expect(400)
        .await;
    app.post("/proficiency-tests")
        .bearer(&admin.access)
        .body("text/plain", sample().to_string())
        .send()
        .await
        .expect(415);
}

// ---------------------------------------------------------------------------------------
// Editing

#[tokio::test]
async fn updates_keep_the_ids_they_carry_and_give_new_ids_to_the_rest() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    let q = &test["questions"];
    let (q0, q1) = (q[0]["id"].clone(), q[1]["id"].clone());
    let q0_options: Vec<Value> = q[0]["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| o["id"].clone())
        .collect();
    app.clock.advance(TimeDelta::minutes(5));
    let updated = admin.patch(&format!("/proficiency-tests/{}", id(&test)), &json!({
            "title": "German placement, 2nd edition",
            "questions": [
                {"id": q1, "text": "Ich ___ sehr müde", "points": 2,
                 "options": [{"text": "bin"}, {"text": "bist"}], "correctOptionIndex": 0},
                {"id": q0, "text": "___ Haus", "points": 1,
                 "options": [{"id": q0_options[2], "text": "das"}, {"id": q0_options[0], "text": "der"},
                             {"text": "dem"}],
                 "correctOptionIndex": 0},
                {"text": "New question", "points": 3,
                 "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 1}
            ]
        })).await;
    let uq = &updated["questions"];
    assert_eq!(uq[0]["id"], q1, "the carried id stays");
    assert_eq!(uq[0]["text"], "Ich ___ sehr müde");
    assert_eq!(uq[1]["id"], q0);
    assert_eq!(uq[1]["options"][0]["id"], q0_options[2]);
    assert_eq!(uq[1]["options"][0]["text"], "das");
    assert_eq!(uq[1]["options"][1]["id"], q0_options[0]);
    assert_eq!(uq[1]["correctOptionIndex"], 0);
    for fresh in [
        &uq[1]["options"][2]["id"],
        &uq[2]["id"],
        &uq[0]["options"][0]["id"],
    ] {
        assert!(fresh.as_str().is_some());
        assert!(
            !q0_options.contains(fresh) && *fresh != q0 && *fresh != q1,
            "{fresh} is new"
        );
    }
    assert_ne!(
        uq[2]["id"], test["questions"][2]["id"],
        "an id not carried is new"
    );
    assert_eq!(updated["title"], "German placement, 2nd edition");
    assert_eq!(updated["questionCount"], 3);
    assert_eq!(updated["maxScore"], 6);
    assert_eq!(updated["createdAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(updated["updatedAt"], "2026-11-22T10:05:00.000Z");
    assert_eq!(
        updated["levelRanges"], test["levelRanges"],
        "absent fields stay"
    );
    assert_eq!(updated["description"], "Find your level");
    let read = app.get(&format!("/proficiency-tests/{}", id(&test))).await;
    assert_eq!(read["questions"][1]["options"][0]["id"], q0_options[2]);
}

#[tokio::test]
async fn updates_refuse_ids_that_are_not_this_tests_or_this_questions() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    let other = create(&admin, &sample()).await;
    let q = &test["questions"];
    let path = format!("/proficiency-tests/{}", id(&test));
    let response = admin.patch(&path, &json!({
            "questions": [
                {"id": other["questions"][0]["id"], "text": "a", "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"id": q[1]["id"], "text": "b",
                 "options": [{"id": q[2]["options"][0]["id"], "text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"id": q[1]["id"], "text": "c", "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"text": "d", "options": [{"id": q[0]["options"][0]["id"], "text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"id": "not-an-id", "text": "e", "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 0}
            ]
        })).expect(400).await;
    assert_eq!(
        errors(&response),
        [
            "questions[0].id does not name a question of this test",
            "questions[1].options[0].id does not name an option of this question",
            "questions[2].id repeats the id of questions[1]",
            "questions[3].options[0].id does not name an option of this question",
            "questions[4].id does not name a question of this test"
        ]
    );
    let unchanged = admin.get(&path).await;
    assert_eq!(unchanged, test, "nothing changed");
    // On create, no id can be carried.
    let mut carried = sample();
    carried["questions"][0]["id"] = q[0]["id"].clone();
    assert_eq!(
        create_errors(&admin, &carried).await,
        ["questions[0].id does not name a question of this test"]
    );
}

#[tokio::test]
async fn updates_keep_question_count_max_score_and_coverage_in_step() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    let path = format!("/proficiency-tests/{}", id(&test));
    let mut questions = sample()["questions"].clone();
    questions[2]["points"] = json!(10);
    // The ranges stop at 6; the new maximum is 13.
    let response = admin
        .patch(&path, &json!({ "questions": questions }))
        .expect(400)
        .await;
    assert_eq!(
        errors(&response),
        [
            "levelRanges must cover every reachable score, but no range covers the reachable scores 10 to 13"
        ]
    );
    let updated = admin
        .patch(
            &path,
            &json!({
                "questions": questions,
                "levelRanges": [
                    {"level": "A1", "minScore": 0, "maxScore": 6},
                    {"level": "B2", "minScore": 7, "maxScore": 13}
                ]
            }),
        )
        .await;
    assert_eq!(updated["maxScore"], 13);
    assert_eq!(updated["questionCount"], 3);
    let one = admin
        .patch(&path, &json!({ "questions": [questions[0].clone()] }))
        .await;
    assert_eq!(
        (one["questionCount"].clone(), one["maxScore"].clone()),
        (json!(1), json!(1))
    );
    let listed = app.get("/proficiency-tests").await;
    assert_eq!(listed["list"][0]["questionCount"], 1);
    assert_eq!(listed["list"][0]["maxScore"], 1);
}

#[tokio::test]
async fn concurrent_edits_of_one_test_both_apply_one_after_the_other() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    let path = format!("/proficiency-tests/{}", id(&test));
    let mut questions = sample()["questions"].clone();
    for (i, question) in questions
        .as_array_mut()
        .expect("questions")
        .iter_mut()
        .enumerate()
    {
        question["id"] = test["questions"][i]["id"].clone();
    }
    for round in 0..20 {
        // Each edit changes one field; neither may undo the other's.
        let edit = |body: Value| app.patch(&path).bearer(&admin.access).json(&body).send();
        let (a, b) = tokio::join!(
            edit(json!({"title": format!("Title {round}"), "questions": questions})),
            edit(json!({"description": format!("Description {round}"), "questions": questions}))
        );
        a.expect(200);
        b.expect(200);
        let read = app.get(&path).await;
        assert_eq!(read["title"], format!("Title {round}"));
        assert_eq!(read["description"], format!("Description {round}"));
        assert_eq!(read["questions"][2]["id"], test["questions"][2]["id"]);
    }
}

#[tokio::test]
async fn patch_nulls_clear_optional_fields_and_are_refused_for_required_ones() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    let path = format!("/proficiency-tests/{}", id(&test));
    let cleared = admin.patch(&path, &json!({"description": null, "locale": null, "targetLanguage": null, "timeLimitMinutes": null})).await;
    for field in [
        "description",
        "locale",
        "targetLanguage",
        "timeLimitMinutes",
    ] {
        assert_eq!(cleared[field], Value::Null, "{field}");
    }
    let response = admin
        .patch(
            &path,
            &json!({"title": null, "isActive": null, "questions": null, "levelRanges": null}),
        )
        .expect(400)
        .await;
    assert_eq!(
        errors(&response),
        [
            "title cannot be null",
            "isActive cannot be null",
            "questions cannot be null",
            "levelRanges cannot be null"
        ]
    );
    let empty = admin
        .patch(&path, &json!({"questions": []}))
        .expect(400)
        .await;
    assert_eq!(
        errors(&empty),
        ["questions must have at least one question"]
    );
    admin
        .patch(
            "/proficiency-tests/0190a4b6-0000-7000-8000-000000000000",
            &json!({"title": "x"}),
        )
        .expect(404)
        .await;
    admin
        .patch("/proficiency-tests/nope", &json!({"title": "x"}))
        .expect(404)
        .await;
}

#[tokio::test]
async fn duplicates_are_inactive_copies_with_new_ids() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = create(&admin, &sample()).await;
    let copy = admin
        .call(
            hyper::Method::POST,
            &format!("/proficiency-tests/{}/duplicate", id(&test)),
        )
        .expect(201)
        .await
        .data();
    assert_ne!(copy["id"], test["id"]);
    assert_eq!(copy["title"], "German placement (copy)");
    assert_eq!(copy["isActive"], false);
    assert_eq!(copy["levelRanges"], test["levelRanges"]);
    assert_eq!(
        (copy["questionCount"].clone(), copy["maxScore"].clone()),
        (json!(3), json!(6))
    );
    for (a, b) in copy["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .zip(test["questions"].as_array().expect("questions"))
    {
        assert_ne!(a["id"], b["id"]);
        assert_eq!(a["text"], b["text"]);
        assert_eq!(a["points"], b["points"]);
        assert_eq!(a["correctOptionIndex"], b["correctOptionIndex"]);
        assert_ne!(a["options"][0]["id"], b["options"][0]["id"]);
        assert_eq!(a["options"][0]["text"], b["options"][0]["text"]);
    }
    let long = create(&admin, &with(sample(), "title", json!("t".repeat(200)))).await;
    let long_copy = admin
        .call(
            hyper::Method::POST,
            &format!("/proficiency-tests/{}/duplicate", id(&long)),
        )
        .expect(201)
        .await
        .data();
    let title = long_copy["title"].as_str().expect("title");
    assert_eq!(title.chars().count(), 200);
    assert!(title.ends_with("t (copy)"));
    admin
        .call(
            hyper::Method::POST,
            "/proficiency-tests/0190a4b6-0000-7000-8000-000000000000/duplicate",
        )
        .expect(404)
        .await;
}

// ---------------------------------------------------------------------------------------
// Taking a test

#[tokio::test]
async fn scores_add_the_points_of_correct_answers_with_unequal_points() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    // Right on questions 0 (1 point) and 2 (3 points), wrong on 1 (2 points).
    let result = submit(&student, &id(&test), &[(0, 2), (1, 1), (2, 0)])
        .await
        .expect(201)
        .data();
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
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let result = submit(&student, &id(&test), &[(2, 0)])
        .await
        .expect(201)
        .data();
    assert_eq!(result["totalScore"], 3);
    assert_eq!(result["level"], "A2");
    assert_eq!(result["answers"].as_array().map(Vec::len), Some(3));
    assert_eq!(result["answers"][0]["selectedOptionId"], Value::Null);
    assert_eq!(result["answers"][0]["isCorrect"], false);
    assert_eq!(result["answers"][1]["selectedOptionId"], Value::Null);
    let nothing_right = submit(&student, &id(&test), &[(0, 0)])
        .await
        .expect(201)
        .data();
    assert_eq!(nothing_right["totalScore"], 0);
    assert_eq!(nothing_right["level"], "A1");
    assert_eq!(nothing_right["message"], "Start with A1");
}

#[tokio::test]
async fn scores_on_the_bounds_of_a_range_get_that_range() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
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
        let result = submit(&student, &test_id, answers).await.expect(201).data();
        assert_eq!(result["totalScore"], total, "{answers:?}");
        assert_eq!(result["level"], level, "{answers:?}");
    }
}

#[tokio::test]
async fn submissions_with_bad_answers_are_refused_with_400() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
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
        let response = student.post(&path, &body).expect(400).await;
        assert_eq!(response.code(), "VALIDATION_FAILED");
        assert_eq!(errors(&response), expected, "{body}");
    }
    let unknown = student
        .post(
            &path,
            &json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 0}], "final": true}),
        )
        .expect(400)
        .await;
    assert!(errors(&unknown)[0].contains("final"));
    app.post(&path)
        .bearer(&student.access)
        .body("text/plain", "answers")
        .send()
        .await
        .expect(415);
    // None of these left a result behind.
    let mine = student.get("/proficiency-tests/results/me").await;
    assert_eq!(mine, json!([]));
}

#[tokio::test]
async fn submissions_to_unknown_inactive_or_malformed_tests_are_404() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let inactive = create(&admin, &with(sample(), "isActive", json!(false))).await;
    for test_id in [
        "0190a4b6-0000-7000-8000-000000000000".to_owned(),
        id(&inactive),
        "not-an-id".to_owned(),
        "%27%20OR%201=1".to_owned(),
    ] {
        let response = submit(&student, &test_id, &[(0, 0)]).await.expect(404);
        assert_eq!(response.code(), "NOT_FOUND");
        assert_eq!(errors(&response), ["test not found"]);
    }
    // Admins cannot submit to an inactive test either.
    submit(&admin, &id(&inactive), &[(0, 0)]).await.expect(404);
}

#[tokio::test]
async fn status_tells_whether_the_caller_took_the_test_and_shows_the_latest_result() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let other = app.student("ben@example.com").await;
    let test = create(&admin, &sample()).await;
    let path = format!("/proficiency-tests/{}/status", id(&test));
    let before = student.get(&path).await;
    assert_eq!(before, json!({"completed": false, "lastResult": null}));

    let first = submit(&student, &id(&test), &[(0, 2)])
        .await
        .expect(201)
        .data();
    let after = student.get(&path).await;
    assert_eq!(
        after,
        json!({"completed": true, "lastResult": {
            "id": first["id"], "totalScore": 1, "level": "A1", "completedAt": "2026-11-22T10:00:00.000Z"}})
    );
    app.clock.advance(TimeDelta::minutes(5));
    let retake = submit(&student, &id(&test), &[(0, 2), (1, 0), (2, 0)])
        .await
        .expect(201)
        .data();
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

// ---------------------------------------------------------------------------------------
// Results

#[tokio::test]
async fn own_results_are_listed_newest_first_and_retakes_are_separate_results() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let other = app.student("ben@example.com").await;
    let german = create(&admin, &sample()).await;
    let french = create(
        &admin,
        &with(
            with(sample(), "title", json!("French placement")),
            "targetLanguage",
            json!("fr"),
        ),
    )
    .await;
    let mut ids = Vec::new();
    for (test, answers) in [
        (&german, vec![(0, 2)]),
        (&french, vec![(1, 0)]),
        (&german, vec![(2, 0)]),
    ] {
        ids.push(id(&submit(&student, &id(test), &answers)
            .await
            .expect(201)
            .data()));
        app.clock.advance(TimeDelta::minutes(3));
    }
    submit(&other, &id(&german), &[(0, 2)]).await.expect(201);
    let mine = student.get("/proficiency-tests/results/me").await;
    let listed: Vec<&str> = mine
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str(), ids[0].as_str()]);
    assert_eq!(mine[0]["totalScore"], 3);
    assert_eq!(mine[1]["test"]["title"], "French placement");
    assert_eq!(mine[1]["test"]["targetLanguage"], "fr");
    assert_eq!(mine[2]["completedAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(mine[0]["answers"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn own_result_detail_shows_texts_and_points_but_never_the_correct_option() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let result = submit(&student, &id(&test), &[(0, 2), (1, 1)])
        .await
        .expect(201)
        .data();
    let detail = student
        .get(&format!("/proficiency-tests/results/me/{}", id(&result)))
        .await;
    let q = &test["questions"];
    assert_eq!(
        detail["answers"],
        json!([
            {"questionId": q[0]["id"], "questionText": "___ Haus", "points": 1,
             "selectedOptionId": q[0]["options"][2]["id"], "selectedOptionText": "das", "isCorrect": true},
            {"questionId": q[1]["id"], "questionText": "Ich ___ müde", "points": 2,
             "selectedOptionId": q[1]["options"][1]["id"], "selectedOptionText": "bist", "isCorrect": false},
            {"questionId": q[2]["id"], "questionText": "Perfekt von gehen", "points": 3,
             "selectedOptionId": null, "selectedOptionText": null, "isCorrect": false}
        ])
    );
    for field in [
        "_id",
        "id",
        "testId",
        "userId",
        "totalScore",
        "maxScore",
        "level",
        "message",
        "completedAt",
        "user",
        "test",
    ] {
        assert_eq!(detail[field], result[field], "{field}");
    }
    let text = detail.to_string();
    for wrong in [&q[1]["options"][0], &q[2]["options"][0]] {
        let correct_id = wrong["id"].as_str().expect("id");
        assert!(
            !text.contains(correct_id),
            "the correct option of a wrong answer leaked"
        );
    }
    assert!(!text.contains("\"bin\"") && !text.contains("bin gegangen"));
}

#[tokio::test]
async fn someone_elses_result_is_not_found() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let ana = app.student("ana@example.com").await;
    let ben = app.student("ben@example.com").await;
    let test = create(&admin, &sample()).await;
    let result = submit(&ana, &id(&test), &[(0, 2)]).await.expect(201).data();
    let path = format!("/proficiency-tests/results/me/{}", id(&result));
    assert_eq!(ben.get(&path).expect(404).await.code(), "NOT_FOUND");
    assert_eq!(
        errors(&app.get(&path).bearer(&ben.access).send().await),
        ["test result not found"]
    );
    ana.get("/proficiency-tests/results/me/not-an-id")
        .expect(404)
        .await;
    ana.get(&path).expect(200).await;
}

#[tokio::test]
async fn admins_see_the_correct_option_of_each_question_in_result_detail() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let result = submit(&student, &id(&test), &[(0, 2), (1, 1)])
        .await
        .expect(201)
        .data();
    let detail = admin
        .get(&format!("/proficiency-tests/admin/results/{}", id(&result)))
        .await;
    let q = &test["questions"];
    let correct: Vec<(Value, Value)> = detail["answers"]
        .as_array()
        .expect("answers")
        .iter()
        .map(|a| (a["correctOptionId"].clone(), a["correctOptionText"].clone()))
        .collect();
    assert_eq!(
        correct,
        [
            (q[0]["options"][2]["id"].clone(), json!("das")),
            (q[1]["options"][0]["id"].clone(), json!("bin")),
            (q[2]["options"][0]["id"].clone(), json!("bin gegangen")),
        ]
    );
    assert_eq!(detail["answers"][1]["selectedOptionText"], "bist");
    assert_eq!(detail["user"]["email"], "ana@example.com");
    admin
        .get("/proficiency-tests/admin/results/0190a4b6-0000-7000-8000-000000000000")
        .expect(404)
        .await;
    admin
        .get("/proficiency-tests/admin/results/nope")
        .expect(404)
        .await;
}

#[tokio::test]
async fn admins_list_results_with_filters_and_pages() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let ana = app.student("ana@example.com").await;
    let ben = app.student("ben@example.com").await;
    let german = create(&admin, &sample()).await;
    let french = create(&admin, &with(sample(), "targetLanguage", json!("fr"))).await;
    // (who, test, answers) -> levels A1, B1, A2, B1, A1
    let plan: [(&Session, &Value, Answers); 5] = [
        (&ana, &german, &[(0, 2)]),
        (&ana, &german, &[(1, 0), (2, 0)]),
        (&ana, &french, &[(2, 0)]),
        (&ben, &german, &[(0, 2), (1, 0), (2, 0)]),
        (&ben, &french, &[(1, 1)]),
    ];
    let mut ids = Vec::new();
    for (who, test, answers) in plan {
        ids.push(id(&submit(who, &id(test), answers)
            .await
            .expect(201)
            .data()));
        app.clock.advance(TimeDelta::minutes(1));
    }
    let listed = |data: &Value| -> Vec<String> {
        data["list"]
            .as_array()
            .expect("list")
            .iter()
            .map(id)
            .collect()
    };
    let get = |query: String| {
        let app = &app;
        let token = admin.access.clone();
        async move {
            app.get(&format!("/proficiency-tests/admin/results{query}"))
                .bearer(&token)
                .send()
                .await
                .expect(200)
                .data()
        }
    };
    let all = get(String::new()).await;
    assert_eq!(listed(&all), pick(&ids, &[4, 3, 2, 1, 0]));
    assert_eq!(all["pagination"]["totalItems"], 5);
    assert_eq!(all["list"][0]["user"]["email"], "ben@example.com");

    assert_eq!(
        listed(&get(format!("?testId={}", id(&german))).await),
        pick(&ids, &[3, 1, 0])
    );
    assert_eq!(
        listed(&get(format!("?userId={}", ana.user_id)).await),
        pick(&ids, &[2, 1, 0])
    );
    assert_eq!(listed(&get("?level=B1".into()).await), pick(&ids, &[3, 1]));
    assert_eq!(
        listed(&get("?targetLanguage=fr".into()).await),
        pick(&ids, &[4, 2])
    );
    assert_eq!(
        listed(
            &get(format!(
                "?userId={}&level=A1&targetLanguage=de",
                ben.user_id
            ))
            .await
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        listed(&get("?testId=not-an-id".into()).await),
        Vec::<String>::new()
    );

    let page = get("?page=2&limit=2".into()).await;
    assert_eq!(listed(&page), pick(&ids, &[2, 1]));
    assert_eq!(
        page["pagination"],
        json!({"currentPage": 2, "totalPages": 3, "totalItems": 5, "itemsPerPage": 2,
               "hasNextPage": true, "hasPrevPage": true})
    );
    for bad in ["?limit=0", "?page=x", "?targetLanguage=!!"] {
        admin
            .get(&format!("/proficiency-tests/admin/results{bad}"))
            .expect(400)
            .await;
    }
}

#[tokio::test]
async fn admins_delete_results_and_read_a_users_results() {
    let app = TestApp::builder().manual_clock(start()).spawn().await;
    let admin = app.admin().await;
    let ana = app.student("ana@example.com").await;
    let ben = app.student("ben@example.com").await;
    let test = create(&admin, &sample()).await;
    let first = submit(&ana, &id(&test), &[(0, 2)]).await.expect(201).data();
    app.clock.advance(TimeDelta::minutes(1));
    let second = submit(&ana, &id(&test), &[(1, 0)]).await.expect(201).data();
    submit(&ben, &id(&test), &[(1, 0)]).await.expect(201);

    let theirs = admin
        .get(&format!(
            "/proficiency-tests/admin/results/user/{}",
            ana.user_id
        ))
        .await;
    let listed: Vec<&Value> = theirs["list"]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(listed, [&second["id"], &first["id"]]);
    assert_eq!(theirs["list"][0], second);

    let deleted = admin
        .delete(&format!("/proficiency-tests/admin/results/{}", id(&first)))
        .await;
    assert_eq!(deleted, json!({"id": first["id"], "deleted": true}));
    admin
        .delete(&format!("/proficiency-tests/admin/results/{}", id(&first)))
        .expect(404)
        .await;
    ana.get(&format!("/proficiency-tests/results/me/{}", id(&first)))
        .expect(404)
        .await;
    let after = admin
        .get(&format!(
            "/proficiency-tests/admin/results/user/{}",
            ana.user_id
        ))
        .await;
    assert_eq!(after["list"].as_array().map(Vec::len), Some(1));
    admin
        .get("/proficiency-tests/admin/results/user/0190a4b6-0000-7000-8000-000000000000")
        .expect(404)
        .await;
    admin
        .get("/proficiency-tests/admin/results/user/nope")
        .expect(404)
        .await;
    admin
        .delete("/proficiency-tests/admin/results/nope")
        .expect(404)
        .await;
    // A user without results has an empty list.
    let none = admin
        .get(&format!(
            "/proficiency-tests/admin/results/user/{}",
            admin.user_id
        ))
        .await;
    assert_eq!(none, json!({"list": []}));
}

#[tokio::test]
async fn results_keep_their_test_title_language_and_details_after_the_test_is_edited_and_deleted() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let test_path = format!("/proficiency-tests/{}", id(&test));
    let result = submit(&student, &id(&test), &[(0, 2), (1, 1), (2, 0)])
        .await
        .expect(201)
        .data();
    let own_path = format!("/proficiency-tests/results/me/{}", id(&result));
    let admin_path = format!("/proficiency-tests/admin/results/{}", id(&result));
    let own_before = student.get(&own_path).await;
    let admin_before = admin.get(&admin_path).await;

    admin
        .patch(
            &test_path,
            &json!({
                "title": "Renamed",
                "targetLanguage": "de-AT",
                "questions": [{"id": test["questions"][0]["id"], "text": "Changed", "points": 5,
                               "options": [{"text": "p"}, {"text": "q"}], "correctOptionIndex": 1}],
                "levelRanges": [{"level": "C2", "minScore": 0, "maxScore": 5}]
            }),
        )
        .expect(200)
        .await;
    assert_eq!(student.get(&own_path).await, own_before);
    assert_eq!(admin.get(&admin_path).await, admin_before);
    assert_eq!(own_before["test"]["title"], "German placement");
    assert_eq!(own_before["answers"][0]["questionText"], "___ Haus");
    assert_eq!(admin_before["answers"][1]["correctOptionText"], "bin");

    let deleted = admin.delete(&test_path).await;
    assert_eq!(deleted, json!({"id": test["id"], "deleted": true}));
    admin.get(&test_path).expect(404).await;
    admin.delete(&test_path).expect(404).await;

    assert_eq!(student.get(&own_path).await, own_before);
    assert_eq!(admin.get(&admin_path).await, admin_before);
    let mine = student.get("/proficiency-tests/results/me").await;
    assert_eq!(mine[0]["testId"], test["id"]);
    assert_eq!(
        mine[0]["test"],
        json!({"id": test["id"], "title": "German placement", "targetLanguage": "de"})
    );
    assert_eq!(mine[0]["totalScore"], 4);
    let listed = admin.get("/proficiency-tests/admin/results").await;
    assert_eq!(listed["pagination"]["totalItems"], 1);
    student
        .get(&format!("{test_path}/status"))
        .expect(404)
        .await;
}

#[tokio::test]
async fn deleting_a_user_removes_their_results() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    submit(&student, &id(&test), &[(0, 2)]).await.expect(201);
    admin
        .delete(&format!("/users/{}", student.user_id))
        .expect(200)
        .await;
    let listed = admin.get("/proficiency-tests/admin/results").await;
    assert_eq!(listed["pagination"]["totalItems"], 0);
}

// ---------------------------------------------------------------------------------------
// The answer key and roles

#[tokio::test]
async fn no_response_to_a_non_admin_carries_the_answer_key() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let test_id = id(&test);
    let q = &test["questions"];
    // Wrong on 1, unanswered 2: their correct options must not show up in results.
    let result = submit(&student, &test_id, &[(0, 2), (1, 2)]).await;
    let result_text = result.text();
    let result = result.expect(201).data();
    let hidden: Vec<String> = [&q[1]["options"][0], &q[2]["options"][0]]
        .iter()
        .map(|o| o["id"].as_str().expect("id").to_owned())
        .collect();

    let mut bodies: Vec<(String, String, bool)> = vec![("submit".into(), result_text, true)];
    let reads = [
        ("/proficiency-tests".to_owned(), false),
        ("/proficiency-tests?targetLanguage=de".to_owned(), false),
        ("/proficiency-tests/languages".to_owned(), false),
        (format!("/proficiency-tests/{test_id}"), false),
        (format!("/proficiency-tests/{test_id}/status"), true),
        ("/proficiency-tests/results/me".to_owned(), true),
        (
            format!("/proficiency-tests/results/me/{}", id(&result)),
            true,
        ),
        (
            format!("/proficiency-tests/admin/results/{}", id(&result)),
            true,
        ),
        ("/proficiency-tests/admin/results".to_owned(), true),
        (
            format!("/proficiency-tests/admin/results/user/{}", student.user_id),
            true,
        ),
    ];
    for (path, is_result) in reads {
        for token in [None, Some(student.access.as_str())] {
            let mut call = app.get(&path);
            if let Some(token) = token {
                call = call.bearer(token);
            }
            let response = call.send().await;
            assert!(response.status < 500, "{path}: {}", response.status);
            bodies.push((
                format!("{path} ({:?})", token.is_some()),
                response.text(),
                is_result,
            ));
        }
    }
    // A failed submission answers without the key too.
    let failed = submit(&student, &test_id, &[(0, 9)]).await;
    bodies.push(("bad submit".into(), failed.text(), true));

    for (what, body, is_result) in &bodies {
        let value: Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(
            answer_key_leaks(&value),
            Vec::<String>::new(),
            "{what}: {body}"
        );
        if *is_result {
            for correct in &hidden {
                assert!(
                    !body.contains(correct.as_str()),
                    "{what} leaks a correct option id: {body}"
                );
            }
        }
    }
    // The scan is able to find a key: the admin's views carry it.
    let admin_view = admin
        .get(&format!("/proficiency-tests/{test_id}"))
        .expect(200)
        .await
        .json();
    assert_eq!(answer_key_leaks(&admin_view).len(), 3);
    let admin_result = admin
        .get(&format!("/proficiency-tests/admin/results/{}", id(&result)))
        .expect(200)
        .await
        .json();
    assert_eq!(answer_key_leaks(&admin_result).len(), 6);
}

#[tokio::test]
async fn every_operation_checks_the_callers_role() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let test = create(&admin, &sample()).await;
    let spare = create(&admin, &sample()).await;
    let result = submit(&student, &id(&test), &[(0, 2)])
        .await
        .expect(201)
        .data();
    let (t, s, r, u) = (id(&test), id(&spare), id(&result), student.user_id.clone());
    let answers = json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 2}]});
    let callers: [(&str, &Client); 3] = [
        ("anonymous", app.anon()),
        ("user", &student),
        ("admin", &admin),
    ];
    let cases = [
        Case::new("GET", "/proficiency-tests", &[200, 200, 200]),
        Case::new("GET", "/proficiency-tests/languages", &[200, 200, 200]),
        Case::new("GET", format!("/proficiency-tests/{t}"), &[200, 200, 200]),
        Case::new("POST", "/proficiency-tests", &[401, 403, 201]).body(sample()),
        Case::new(
            "POST",
            format!("/proficiency-tests/{t}/duplicate"),
            &[401, 403, 201],
        ),
        Case::new("PATCH", format!("/proficiency-tests/{t}"), &[401, 403, 200])
            .body(json!({"title": "Renamed"})),
        Case::new(
            "POST",
            format!("/proficiency-tests/{t}/submit"),
            &[401, 201, 201],
        )
        .body(answers),
        Case::new(
            "GET",
            format!("/proficiency-tests/{t}/status"),
            &[401, 200, 200],
        ),
        Case::new("GET", "/proficiency-tests/results/me", &[401, 200, 200]),
        // Own results only: the admin did not take this one.
        Case::new(
            "GET",
            format!("/proficiency-tests/results/me/{r}"),
            &[401, 200, 404],
        ),
        Case::new("GET", "/proficiency-tests/admin/results", &[401, 403, 200]),
        Case::new(
            "GET",
            format!("/proficiency-tests/admin/results/{r}"),
            &[401, 403, 200],
        ),
        Case::new(
            "GET",
            format!("/proficiency-tests/admin/results/user/{u}"),
            &[401, 403, 200],
        ),
        Case::new(
            "DELETE",
            format!("/proficiency-tests/admin/results/{r}"),
            &[401, 403, 200],
        ),
        Case::new(
            "DELETE",
            format!("/proficiency-tests/{s}"),
            &[401, 403, 200],
        ),
    ];
    assert_role_matrix(&callers, &cases).await;
    // A token that is not valid is refused even where anonymous callers are welcome.
    let bad = app
        .get("/proficiency-tests")
        .bearer("not-a-token")
        .send()
        .await
        .expect(401);
    assert_eq!(bad.code(), "TOKEN_INVALID");
}

#[tokio::test]
async fn the_cached_public_test_list_shows_every_change_on_the_next_read() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let titles = |page: Value| -> Vec<String> {
        page["list"]
            .as_array()
            .expect("list")
            .iter()
            .map(|t| t["title"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    assert!(titles(app.get("/proficiency-tests").await).is_empty());
    let test = create(&admin, &sample()).await;
    let test_id = id(&test);
    let listed = titles(app.get("/proficiency-tests").await);
    assert_eq!(listed.len(), 1, "a new test is listed at once");

    admin
        .patch(
            &format!("/proficiency-tests/{test_id}"),
            &json!({ "title": "Renamed test" }),
        )
        .expect(200)
        .await;
    assert_eq!(
        titles(app.get("/proficiency-tests").await),
        vec!["Renamed test"]
    );

    admin
        .patch(
            &format!("/proficiency-tests/{test_id}"),
            &json!({ "isActive": false }),
        )
        .expect(200)
        .await;
    assert!(
        titles(app.get("/proficiency-tests").await).is_empty(),
        "deactivated"
    );

    admin
        .patch(
            &format!("/proficiency-tests/{test_id}"),
            &json!({ "isActive": true }),
        )
        .expect(200)
        .await;
    app.get("/proficiency-tests").expect(200).await;
    admin
        .delete(&format!("/proficiency-tests/{test_id}"))
        .expect(200)
        .await;
    assert!(
        titles(app.get("/proficiency-tests").await).is_empty(),
        "deleted"
    );
}

/// On PostgreSQL each submission also updates the dashboard's rollup rows (migration
/// 0060); submissions at once must all succeed, and all be counted.
#[tokio::test]
async fn submissions_at_once_all_succeed_and_are_all_counted() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let test = id(&create(&admin, &sample()).await);
    let mut students = Vec::new();
    for i in 0..8 {
        students.push(app.student(&format!("eager{i}@example.com")).await);
    }
    let answers: Answers = &[(0, 2), (1, 0), (2, 1)];
    let outcomes = futures_util::future::join_all(
        students
            .iter()
            .map(|student| submit(student, &test, answers)),
    )
    .await;
    for outcome in outcomes {
        assert_eq!(outcome.status, 201, "{}", outcome.text());
    }
    let drift = app
        .core
        .check_dashboard_rollups(&langcamp_core::Actor::Operator)
        .await
        .expect("check");
    assert_eq!(drift, vec![]);
    let dashboard = admin.get("/admin/dashboard").await;
    assert_eq!(dashboard["overview"]["tests"]["totalSubmissions"], 8);
    assert_eq!(dashboard["distributions"]["levels"][0]["key"], "A2");
    assert_eq!(dashboard["distributions"]["levels"][0]["count"], 8);
}
