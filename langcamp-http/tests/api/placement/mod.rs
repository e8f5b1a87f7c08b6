//! Placement tests and results (CONTRACT §6).
//!
//! Shared here: the sample test, and helpers to create, submit and read errors; each
//! section of the contract is a module of its own.

mod answer_key;
mod authoring;
mod editing;
mod results;
mod taking;
mod validation;

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use crate::helpers::{Case, Client, Session, TestApp, TestResponse, assert_role_matrix, utc};

fn start() -> chrono::DateTime<Utc> {
    utc(2026, 11, 22, 10, 0, 0)
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

/// `body` with the fields of the object `fields` set (added or replaced).
fn with(mut body: Value, fields: Value) -> Value {
    let Value::Object(fields) = fields else {
        panic!("fields to set are an object: {fields}")
    };
    for (field, value) in fields {
        body[field] = value;
    }
    body
}

async fn create(admin: &Session, body: &Value) -> Value {
    admin.post("/proficiency-tests", body).created().await
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

/// `submit`, expecting `201`: the result.
async fn submitted(who: &Session, test_id: &str, answers: &[(i64, i64)]) -> Value {
    submit(who, test_id, answers).await.expect(201).data()
}

/// What most tests here start from: an admin and the sample test they created. Keep the
/// `app` even where a test does not use it: dropping it stops the server (so such a test
/// binds the school and borrows the rest: `let School { admin, test, .. } = &school;`).
struct School {
    app: TestApp,
    admin: Session,
    test: Value,
}

impl School {
    async fn new() -> School {
        School::on(TestApp::spawn().await).await
    }

    /// On a manual clock at [`start`].
    async fn at_start() -> School {
        School::on(TestApp::at(start()).await).await
    }

    async fn on(app: TestApp) -> School {
        let admin = app.admin().await;
        let test = create(&admin, &sample()).await;
        School { app, admin, test }
    }
}

/// Answers as (question index, option index).
type Answers = &'static [(i64, i64)];

/// Submits each (who, test, answers) of `plan` in turn, the clock moving `step` after
/// each: the results' ids, oldest first.
async fn submit_in_turn(
    app: &TestApp,
    plan: &[(&Session, &Value, Answers)],
    step: TimeDelta,
) -> Vec<String> {
    let mut ids = Vec::new();
    for (who, test, answers) in plan {
        ids.push(id(&submitted(who, &id(test), answers).await));
        app.clock.advance(step);
    }
    ids
}

fn pick(ids: &[String], order: &[usize]) -> Vec<String> {
    order.iter().map(|&i| ids[i].clone()).collect()
}

/// `field` of each item of a page's `list`, in order.
fn listed(page: &Value, field: &str) -> Vec<String> {
    let items = page["list"].as_array().expect("list");
    items
        .iter()
        .map(|item| match item[field].as_str() {
            Some(value) => value.to_owned(),
            None => panic!("no {field}: {item}"),
        })
        .collect()
}

fn id(value: &Value) -> String {
    value["id"].as_str().expect("an id").to_owned()
}

/// The `errors` of a 400 answer to a create body.
async fn create_errors(admin: &Session, body: &Value) -> Vec<String> {
    admin.post("/proficiency-tests", body).invalid().await
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
