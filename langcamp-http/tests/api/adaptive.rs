//! Adaptive placement (CONTRACT §19): authoring adaptive tests, attempts one question at a
//! time, the statuses of bad input, the finished attempt as a result, and calibration.
//! Every test runs on SQLite, and on PostgreSQL with `TEST_DATABASE_URL`.

use std::collections::HashMap;

use langcamp_core::Actor;
use langcamp_core::platform::progress::Silent;
use serde_json::{Value, json};

use crate::helpers::{Session, TestApp, fresh_client};

const LEVELS: [&str; 6] = ["A1", "A2", "B1", "B2", "C1", "C2"];

/// An adaptive test of `per_level` questions at each level; question `i` has 3 options and
/// its right one at `i % 3`.
fn adaptive(per_level: usize, max_questions: i64) -> Value {
    let mut questions = Vec::new();
    for level in LEVELS {
        for k in 0..per_level {
            let i = questions.len();
            questions.push(json!({
                "text": format!("{level} question {k}"),
                "level": level,
                "options": [{"text": "one"}, {"text": "two"}, {"text": "three"}],
                "correctOptionIndex": i % 3,
            }));
        }
    }
    json!({
        "title": "Adaptive English",
        "targetLanguage": "en",
        "mode": "adaptive",
        "maxQuestions": max_questions,
        "levelMessages": {"A1": "Start at the beginning", "C2": "Mastery"},
        "questions": questions,
    })
}

/// A fixed test of one question.
fn fixed_test() -> Value {
    json!({
        "title": "Fixed",
        "questions": [{"text": "Q", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 0}],
        "levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 1}]
    })
}

/// A test and its answer key (question id to the right option's index), as the admin sees it.
struct Bank {
    id: String,
    key: HashMap<String, i64>,
}

impl Bank {
    /// Where attempts at this test start.
    fn attempts(&self) -> String {
        format!("/proficiency-tests/{}/attempts", self.id)
    }

    /// A new attempt of `student` at this test (201), as it is answered.
    async fn start(&self, student: &Session) -> Value {
        student
            .post_empty(&self.attempts())
            .expect(201)
            .await
            .data()
    }
}

async fn bank(admin: &Session, body: &Value) -> Bank {
    let test = admin.post("/proficiency-tests", body).created().await;
    let key = test["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| {
            (
                q["id"].as_str().expect("id").to_owned(),
                q["correctOptionIndex"].as_i64().expect("key for admins"),
            )
        })
        .collect();
    Bank {
        id: test["id"].as_str().expect("id").to_owned(),
        key,
    }
}

/// Every place in an answer given before the end that reveals too much: whether an
/// answer was right, a question's level, a correct option.
fn leaks(value: &Value) -> Vec<String> {
    fn walk(value: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(fields) => {
                for (key, child) in fields {
                    let lower = key.to_lowercase();
                    if lower.contains("correct") || key == "level" || key == "difficulty" {
                        found.push(format!("{path}.{key}"));
                    }
                    walk(child, &format!("{path}.{key}"), found);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}[{i}]"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, "", &mut found);
    found
}

fn answer_body(view: &Value, option: i64) -> Value {
    json!({"questionId": view["question"]["id"], "selectedOptionIndex": option})
}

fn answer_path(view: &Value) -> String {
    format!(
        "/proficiency-tests/attempts/{}/answer",
        view["attemptId"].as_str().expect("attemptId")
    )
}

/// Takes the test to its end, answering right when `right` says so for the question;
/// checks that no answer before the end leaks: the finished attempt.
/// Each attempt calls from an address of its own, so that many attempts in a row stay
/// within the per-client rate limit.
async fn take(who: &Session, bank: &Bank, right: impl Fn(&str) -> bool) -> Value {
    let client = fresh_client();
    let started = who
        .post_empty(&bank.attempts())
        .header("x-forwarded-for", &client)
        .send()
        .await;
    let mut view = started.expect(201).data();
    let mut asked = 0;
    loop {
        assert_eq!(view["finished"], false);
        assert_eq!(leaks(&view), Vec::<String>::new(), "{view}");
        asked += 1;
        let question = view["question"]["id"]
            .as_str()
            .expect("question")
            .to_owned();
        let key = bank.key[&question];
        let option = if right(&question) { key } else { (key + 1) % 3 };
        let next = who
            .post(&answer_path(&view), &answer_body(&view, option))
            .header("x-forwarded-for", &client)
            .await;
        if next["finished"] == true {
            assert_eq!(next["answered"], asked);
            assert_eq!(next["question"], Value::Null);
            return next;
        }
        assert_eq!(next["answered"], asked);
        assert_eq!(next["question"]["number"], asked + 1);
        view = next;
    }
}

#[tokio::test]
async fn always_right_ends_at_the_top_level_and_always_wrong_at_a1_within_max_questions() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(10, 20)).await;
    let strong = app.student("strong@langcamp.test").await;
    let top = take(&strong, &bank, |_| true).await;
    let result = &top["result"];
    assert_eq!(result["level"], "C2", "{top}");
    assert_eq!(result["message"], "Mastery");
    let asked = result["maxScore"].as_i64().expect("maxScore");
    assert!((5..=20).contains(&asked), "{top}");
    assert_eq!(result["totalScore"], asked);
    assert_eq!(
        result["answers"].as_array().map(Vec::len),
        Some(asked as usize)
    );
    assert!(result["ability"].as_f64().expect("ability") > 3.0, "{top}");
    assert!(result["standardError"].as_f64().expect("standardError") > 0.0);

    let weak = app.student("weak@langcamp.test").await;
    let bottom = take(&weak, &bank, |_| false).await;
    assert_eq!(bottom["result"]["level"], "A1", "{bottom}");
    assert_eq!(bottom["result"]["totalScore"], 0);
    let asked = bottom["result"]["maxScore"].as_i64().expect("maxScore");
    assert!((5..=20).contains(&asked), "{bottom}");
    assert!(bottom["result"]["ability"].as_f64().expect("ability") < -3.0);
}

#[tokio::test]
async fn starting_again_resumes_the_open_attempt_at_the_same_question() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(10, 20)).await;
    let student = app.student("student@langcamp.test").await;
    let path = bank.attempts();
    let first = student.post_empty(&path).expect(201).await.data();
    let answered = student
        .post(&answer_path(&first), &answer_body(&first, 0))
        .await;
    let again = student.post(&path, &json!({})).expect(200).await.data();
    assert_eq!(again["attemptId"], first["attemptId"]);
    assert_eq!(again["question"], answered["question"]);
    assert_eq!(again["answered"], 1);
    let read = student
        .get(&format!(
            "/proficiency-tests/attempts/{}",
            first["attemptId"].as_str().expect("id")
        ))
        .await;
    assert_eq!(read, again);
    assert_eq!(leaks(&read), Vec::<String>::new());
    assert_eq!(app.rows("placement_attempts").await, 1);
}

#[tokio::test]
async fn bad_answers_get_their_statuses_and_change_nothing() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(2, 5)).await;
    let student = app.student("student@langcamp.test").await;
    let view = bank.start(&student).await;
    let path = answer_path(&view);
    let current = view["question"]["id"].as_str().expect("id").to_owned();
    let other = bank
        .key
        .keys()
        .find(|id| **id != current)
        .expect("another question")
        .clone();
    // Another question than the current one: 409.
    student
        .post(
            &path,
            &json!({"questionId": other, "selectedOptionIndex": 0}),
        )
        .fails(409, "CONFLICT")
        .await;
    // An option out of range, negative, or missing fields: 400.
    for body in [
        json!({"questionId": current, "selectedOptionIndex": 3}),
        json!({"questionId": current, "selectedOptionIndex": -1}),
        json!({"questionId": current}),
        json!({"selectedOptionIndex": 0}),
        json!({"questionId": current, "selectedOptionIndex": 0, "extra": 1}),
    ] {
        student.post(&path, &body).invalid().await;
    }
    // Someone else's attempt, or an unknown one: 404.
    let other_student = app.student("other@langcamp.test").await;
    other_student
        .post(
            &path,
            &json!({"questionId": current, "selectedOptionIndex": 0}),
        )
        .fails(404, "NOT_FOUND")
        .await;
    other_student
        .get(&format!(
            "/proficiency-tests/attempts/{}",
            view["attemptId"].as_str().expect("id")
        ))
        .fails(404, "NOT_FOUND")
        .await;
    student
        .get("/proficiency-tests/attempts/not-an-attempt")
        .fails(404, "NOT_FOUND")
        .await;
    // Nothing changed.
    let read = student
        .get(&format!(
            "/proficiency-tests/attempts/{}",
            view["attemptId"].as_str().expect("id")
        ))
        .await;
    assert_eq!(read, view);

    // `submit` on an adaptive test: 400.
    student
        .post(
            &format!("/proficiency-tests/{}/submit", bank.id),
            &json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 0}]}),
        )
        .invalid()
        .await;
    // An attempt at a fixed test: 400.
    let fixed = admin
        .post("/proficiency-tests", &fixed_test())
        .created()
        .await;
    assert_eq!(fixed["mode"], "fixed");
    student
        .post_empty(&format!(
            "/proficiency-tests/{}/attempts",
            fixed["id"].as_str().expect("id")
        ))
        .invalid()
        .await;
    assert_eq!(app.rows("test_results").await, 0);

    // Finish (at most 5 questions), then answering again: 409.
    let mut view = view;
    while view["finished"] == false {
        view = student
            .post(&answer_path(&view), &answer_body(&view, 0))
            .await;
    }
    student
        .post(
            &path,
            &json!({"questionId": current, "selectedOptionIndex": 0}),
        )
        .fails(409, "CONFLICT")
        .await;
    assert_eq!(app.rows("test_results").await, 1);
}

#[tokio::test]
async fn two_answers_to_the_same_question_at_once_store_one() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(10, 20)).await;
    let student = app.student("student@langcamp.test").await;
    for _ in 0..3 {
        let view = student.post_empty(&bank.attempts()).send().await.data();
        let before = view["answered"].as_i64().expect("answered");
        let path = answer_path(&view);
        let (a, b) = tokio::join!(
            student.post(&path, &answer_body(&view, 0)).send(),
            student.post(&path, &answer_body(&view, 1)).send(),
        );
        let mut statuses = [a.status, b.status];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{} / {}", a.text(), b.text());
        let read = student
            .get(&format!(
                "/proficiency-tests/attempts/{}",
                view["attemptId"].as_str().expect("id")
            ))
            .await;
        assert_eq!(read["answered"], before + 1);
    }
}

#[tokio::test]
async fn the_finished_attempt_is_a_result_in_own_results_admin_lists_status_and_dashboard() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(10, 20)).await;
    let student = app.student("student@langcamp.test").await;
    let finished = take(&student, &bank, |_| true).await;
    let result = &finished["result"];
    let id = result["id"].as_str().expect("result id");

    let own = student.get("/proficiency-tests/results/me").await;
    assert_eq!(own[0]["id"], id);
    assert_eq!(own[0]["ability"], result["ability"]);
    let detail = student
        .get(&format!("/proficiency-tests/results/me/{id}"))
        .await;
    assert_eq!(detail["standardError"], result["standardError"]);
    // After the end, the path of levels asked may be shown.
    assert!(detail["answers"][0]["level"].is_string(), "{detail}");

    let listed = admin
        .get(&format!(
            "/proficiency-tests/admin/results?testId={}",
            bank.id
        ))
        .await;
    assert_eq!(listed["list"][0]["id"], id);
    assert_eq!(listed["pagination"]["totalItems"], 1);
    let status = student
        .get(&format!("/proficiency-tests/{}/status", bank.id))
        .await;
    assert_eq!(status["lastResult"]["id"], id);
    assert_eq!(status["lastResult"]["level"], "C2");

    let dashboard = admin.get("/admin/dashboard").await;
    assert_eq!(dashboard["recentActivity"]["testResults"][0]["id"], id);
    let levels = dashboard["distributions"]["levels"]
        .as_array()
        .expect("levels");
    assert!(
        levels.iter().any(|l| l["key"] == "C2" && l["count"] == 1),
        "{levels:?}"
    );
    // Fixed tests' results carry null ability.
    let fixed = admin
        .post("/proficiency-tests", &fixed_test())
        .created()
        .await;
    let submitted = student
        .post(
            &format!(
                "/proficiency-tests/{}/submit",
                fixed["id"].as_str().expect("id")
            ),
            &json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 0}]}),
        )
        .created()
        .await;
    assert_eq!(submitted["ability"], Value::Null);
    assert_eq!(submitted["standardError"], Value::Null);
}

#[tokio::test]
async fn adaptive_tests_are_validated_on_create_and_update() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let mut no_level = adaptive(1, 20);
    no_level["questions"][0]
        .as_object_mut()
        .expect("question")
        .remove("level");
    let errors = admin.post("/proficiency-tests", &no_level).invalid().await;
    assert!(
        errors[0].contains("questions[0].level is required"),
        "{errors:?}"
    );

    let mut with_ranges = adaptive(1, 20);
    with_ranges["levelRanges"] = json!([{"level": "A1", "minScore": 0, "maxScore": 6}]);
    admin
        .post("/proficiency-tests", &with_ranges)
        .invalid()
        .await;
    for bad in [4, 101] {
        let errors = admin
            .post("/proficiency-tests", &adaptive(1, bad))
            .invalid()
            .await;
        assert_eq!(
            errors,
            ["maxQuestions must be a whole number from 5 to 100"]
        );
    }
    let mut bad_level = adaptive(1, 20);
    bad_level["questions"][1]["level"] = json!("D1");
    admin.post("/proficiency-tests", &bad_level).invalid().await;
    let mut bad_message = adaptive(1, 20);
    bad_message["levelMessages"] = json!({"Z9": "?"});
    admin
        .post("/proficiency-tests", &bad_message)
        .invalid()
        .await;
    let fixed_with_max = json!({
        "title": "Fixed",
        "maxQuestions": 10,
        "questions": [{"text": "Q", "level": "A1", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 0}],
        "levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 1}]
    });
    let errors = admin
        .post("/proficiency-tests", &fixed_with_max)
        .invalid()
        .await;
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(app.rows("proficiency_tests").await, 0);

    // Defaults, and what admins and the public see.
    let mut defaults = adaptive(1, 20);
    defaults
        .as_object_mut()
        .expect("body")
        .remove("maxQuestions");
    let created = admin.post("/proficiency-tests", &defaults).created().await;
    assert_eq!(created["mode"], "adaptive");
    assert_eq!(created["maxQuestions"], 20);
    assert_eq!(created["levelRanges"], json!([]));
    assert_eq!(created["questions"][5]["level"], "C2");
    assert_eq!(created["questions"][5]["difficulty"], 3.75);
    assert_eq!(created["questions"][5]["answerCount"], 0);
    assert_eq!(created["questions"][5]["calibrated"], false);
    let id = created["id"].as_str().expect("id");
    let public = app.anon().get(&format!("/proficiency-tests/{id}")).await;
    assert_eq!(leaks(&public["questions"]), Vec::<String>::new());

    // Update: bad maxQuestions refused, levelRanges refused, a good change kept.
    admin
        .patch(
            &format!("/proficiency-tests/{id}"),
            &json!({"maxQuestions": 2}),
        )
        .invalid()
        .await;
    admin
        .patch(
            &format!("/proficiency-tests/{id}"),
            &json!({"levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 6}]}),
        )
        .invalid()
        .await;
    admin
        .patch(&format!("/proficiency-tests/{id}"), &json!({"mode": null}))
        .invalid()
        .await;
    let updated = admin
        .patch(
            &format!("/proficiency-tests/{id}"),
            &json!({"maxQuestions": 30}),
        )
        .await;
    assert_eq!(updated["maxQuestions"], 30);
    assert_eq!(updated["questions"], created["questions"]);
    // Turning it fixed needs level ranges.
    admin
        .patch(
            &format!("/proficiency-tests/{id}"),
            &json!({"mode": "fixed"}),
        )
        .invalid()
        .await;
}

#[tokio::test]
async fn calibration_moves_a_question_everybody_gets_right_to_an_easier_difficulty() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    // One question per level, 5 asked per attempt: every attempt asks 5 of the 6.
    let mut body = adaptive(1, 5);
    body["title"] = json!("Calibrated");
    let bank = bank(&admin, &body).await;
    let test = admin.get(&format!("/proficiency-tests/{}", bank.id)).await;
    let easy = test["questions"][4]["id"]
        .as_str()
        .expect("C1 question")
        .to_owned();
    assert_eq!(test["questions"][4]["level"], "C1");
    let before = test["questions"][4]["difficulty"]
        .as_f64()
        .expect("difficulty");
    let student = app.student("student@langcamp.test").await;
    let mut answers_to_easy = 0;
    for _ in 0..90 {
        let finished = take(&student, &bank, |q| q == easy).await;
        let asked_easy = finished["result"]["answers"]
            .as_array()
            .expect("answers")
            .iter()
            .any(|a| a["questionId"] == easy.as_str());
        answers_to_easy += usize::from(asked_easy);
        if answers_to_easy >= 55 {
            break;
        }
    }
    assert!(answers_to_easy >= 50, "{answers_to_easy}");
    let report = app
        .core
        .calibrate_placement(&Actor::Operator, None, &Silent)
        .await
        .expect("calibration");
    assert_eq!(report.tests, 1);
    let question = report
        .questions
        .iter()
        .find(|q| q.question_id == easy)
        .expect("the easy question");
    assert!(question.calibrated, "{question:?}");
    assert_eq!(question.answers, answers_to_easy);
    assert!(question.difficulty < before - 1.0, "{question:?}");

    let test = admin.get(&format!("/proficiency-tests/{}", bank.id)).await;
    assert_eq!(test["questions"][4]["calibrated"], true);
    assert_eq!(test["questions"][4]["answerCount"], answers_to_easy);
    assert!(
        test["questions"][4]["difficulty"]
            .as_f64()
            .expect("difficulty")
            < before - 1.0
    );
}

#[tokio::test]
async fn the_time_limit_counts_from_the_start_and_finishes_the_attempt_with_the_answers_given() {
    let start = crate::helpers::utc(2026, 11, 22, 10, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    let mut body = adaptive(10, 20);
    body["timeLimitMinutes"] = json!(10);
    let bank = bank(&admin, &body).await;
    let student = app.student("student@langcamp.test").await;
    let mut view = bank.start(&student).await;
    assert_eq!(view["expiresAt"], "2026-11-22T10:10:00.000Z");
    for _ in 0..2 {
        view = student
            .post(&answer_path(&view), &answer_body(&view, 0))
            .await;
    }
    app.clock.advance(chrono::TimeDelta::minutes(11));
    let path = format!(
        "/proficiency-tests/attempts/{}",
        view["attemptId"].as_str().expect("id")
    );
    let finished = student.get(&path).await;
    assert_eq!(finished["finished"], true, "{finished}");
    assert_eq!(finished["question"], Value::Null);
    // The two answers and the question left unanswered.
    assert_eq!(finished["result"]["maxScore"], 3);
    assert_eq!(
        finished["result"]["answers"][2]["selectedOptionId"],
        Value::Null
    );
    assert_eq!(student.get(&path).await, finished);
    student
        .post(&answer_path(&view), &answer_body(&view, 0))
        .fails(409, "CONFLICT")
        .await;
    assert_eq!(app.rows("test_results").await, 1);
    // Starting again starts a new attempt.
    let again = bank.start(&student).await;
    assert_ne!(again["attemptId"], view["attemptId"]);
}

#[tokio::test]
async fn two_starts_at_once_open_one_attempt() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(10, 20)).await;
    let student = app.student("student@langcamp.test").await;
    let path = bank.attempts();
    let (a, b) = tokio::join!(
        student.post_empty(&path).send(),
        student.post_empty(&path).send()
    );
    let mut statuses = [a.status, b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 201], "{} / {}", a.text(), b.text());
    assert_eq!(a.data()["attemptId"], b.data()["attemptId"]);
    assert_eq!(a.data()["question"], b.data()["question"]);
    assert_eq!(app.rows("placement_attempts").await, 1);
}

#[tokio::test]
async fn an_attempt_whose_current_question_was_edited_away_ends_with_the_answers_given() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let bank = bank(&admin, &adaptive(2, 5)).await;
    let student = app.student("student@langcamp.test").await;
    let view = bank.start(&student).await;
    // New questions, none of them kept.
    let replacement = adaptive(2, 5)["questions"].clone();
    admin
        .patch(
            &format!("/proficiency-tests/{}", bank.id),
            &json!({"questions": replacement}),
        )
        .await;
    let path = format!(
        "/proficiency-tests/attempts/{}",
        view["attemptId"].as_str().expect("id")
    );
    let read = student.get(&path).await;
    assert_eq!(read["finished"], true, "{read}");
    assert_eq!(read["result"]["maxScore"], 1);
    assert_eq!(read["result"]["totalScore"], 0);
}

#[tokio::test]
async fn a_test_switches_between_fixed_and_adaptive_with_what_each_mode_needs() {
    let app = TestApp::spawn().await;
    let admin = app.admin().await;
    let fixed = admin
        .post(
            "/proficiency-tests",
            &json!({
                "title": "Switching",
                "questions": [
                    {"text": "Q1", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 0},
                    {"text": "Q2", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 1}
                ],
                "levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 2}]
            }),
        )
        .created()
        .await;
    let path = format!("/proficiency-tests/{}", fixed["id"].as_str().expect("id"));
    // Adaptive needs a level on every question.
    let errors = admin
        .patch(&path, &json!({"mode": "adaptive"}))
        .invalid()
        .await;
    assert_eq!(errors.len(), 2, "{errors:?}");
    let mut questions = fixed["questions"].clone();
    for (question, level) in questions
        .as_array_mut()
        .expect("questions")
        .iter_mut()
        .zip(["A2", "C1"])
    {
        question["level"] = json!(level);
    }
    let adaptive = admin
        .patch(&path, &json!({"mode": "adaptive", "questions": questions}))
        .await;
    assert_eq!(adaptive["mode"], "adaptive");
    assert_eq!(adaptive["levelRanges"], json!([]));
    assert_eq!(adaptive["maxQuestions"], 20);
    assert_eq!(adaptive["questions"][1]["level"], "C1");
    assert_eq!(adaptive["questions"][0]["id"], fixed["questions"][0]["id"]);
    let reset = admin.patch(&path, &json!({"maxQuestions": null})).await;
    assert_eq!(reset["maxQuestions"], 20);
    // Back to fixed: level ranges again, and the levels, maxQuestions and messages go.
    let back = admin
        .patch(
            &path,
            &json!({"mode": "fixed", "levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 2}]}),
        )
        .await;
    assert_eq!(back["mode"], "fixed");
    assert_eq!(back["maxQuestions"], Value::Null);
    assert_eq!(back["levelMessages"], Value::Null);
    assert!(back["questions"][1].get("level").is_none(), "{back}");
    assert_eq!(back["levelRanges"][0]["level"], "A1");
}
