//! Scoring and the checks of answers, on a test built in memory.

use serde_json::Value;

use super::input::{Answer, check_against, parse_answers};
use super::score::score;
use crate::domain::error::{Error, Result};
use crate::domain::validate::Patch;
use crate::placement::store::{
    StoredOption, StoredQuestion, StoredRange, StoredTest, TestSettings,
};

fn test_with(points: &[i64]) -> StoredTest {
    StoredTest {
        id: "t".into(),
        settings: TestSettings {
            title: "T".into(),
            description: None,
            locale: None,
            target_language: Some("de".into()),
            time_limit_minutes: None,
            is_active: true,
            mode: crate::placement::TestMode::Fixed,
            max_questions: None,
            level_messages: None,
        },
        question_count: i64::try_from(points.len()).unwrap_or(0),
        max_score: points.iter().sum(),
        created_at: 0,
        updated_at: 0,
        questions: points
            .iter()
            .enumerate()
            .map(|(i, &p)| StoredQuestion {
                id: format!("q{i}"),
                text: format!("Question {i}"),
                points: p,
                correct_option_id: format!("q{i}o1"),
                options: (0..3)
                    .map(|j| StoredOption {
                        id: format!("q{i}o{j}"),
                        text: format!("Option {j}"),
                    })
                    .collect(),
                level: None,
                difficulty: None,
                answer_count: 0,
            })
            .collect(),
        slope: None,
        level_ranges: vec![StoredRange {
            level: "A1".into(),
            min_score: 0,
            max_score: 100,
            message: String::new(),
        }],
    }
}

fn answers(json: Value) -> Result<Vec<Answer>> {
    parse_answers(Patch::Value(json))
}

#[test]
fn scores_add_the_points_of_right_answers_only() {
    let test = test_with(&[1, 3, 5]);
    let given = answers(serde_json::json!([
        {"questionIndex": 0, "selectedOptionIndex": 1},
        {"questionIndex": 2, "selectedOptionIndex": 1},
        {"questionIndex": 1, "selectedOptionIndex": 0},
    ]))
    .expect("valid answers");
    let (total, items) = score(&test, &given);
    assert_eq!(total, 6);
    let correct: Vec<bool> = items.iter().map(|i| i.is_correct).collect();
    assert_eq!(correct, vec![true, false, true]);
    assert_eq!(items[1].selected_option_id.as_deref(), Some("q1o0"));
}

#[test]
fn unanswered_questions_score_nothing_and_have_no_selection() {
    let test = test_with(&[2, 2]);
    let given = answers(serde_json::json!([{"questionIndex": 1, "selectedOptionIndex": 1}]))
        .expect("valid answers");
    let (total, items) = score(&test, &given);
    assert_eq!(total, 2);
    assert_eq!(items[0].selected_option_id, None);
    assert!(!items[0].is_correct);
}

#[test]
fn answer_shapes_are_refused_with_one_message_each() {
    let cases = [
        (serde_json::json!("x"), 1),
        (serde_json::json!([]), 1),
        (
            serde_json::json!([{"questionIndex": -1, "selectedOptionIndex": 0}]),
            1,
        ),
        (
            serde_json::json!([{"questionIndex": 0}, {"questionIndex": 0, "selectedOptionIndex": 1.5}]),
            3,
        ),
        (
            serde_json::json!([{"questionIndex": 0, "selectedOptionIndex": 0, "x": 1}]),
            1,
        ),
    ];
    for (value, count) in cases {
        match answers(value.clone()) {
            Err(Error::Validation(messages)) => {
                assert_eq!(messages.len(), count, "{value}: {messages:?}");
            }
            other => panic!("{value}: expected a validation error, got {other:?}"),
        }
    }
    assert!(parse_answers(Patch::Absent).is_err());
    assert!(parse_answers(Patch::Null).is_err());
}

#[test]
fn answers_out_of_the_test_are_refused() {
    let test = test_with(&[1, 1]);
    let given = answers(serde_json::json!([
        {"questionIndex": 2, "selectedOptionIndex": 0},
        {"questionIndex": 0, "selectedOptionIndex": 3},
    ]))
    .expect("well-formed");
    match check_against(&test, &given) {
        Err(Error::Validation(messages)) => assert_eq!(
            messages,
            vec![
                "answers[0].questionIndex must be from 0 to 1",
                "answers[1].selectedOptionIndex must be from 0 to 2 for question 0",
            ]
        ),
        other => panic!("expected validation errors, got {other:?}"),
    }
}

#[test]
fn a_result_notice_is_its_summary_without_the_answers() {
    let test = test_with(&[1, 2, 3]);
    let user = crate::users::User {
        id: "u".into(),
        email: "ana@example.com".into(),
        name: Some("Ana Silva".into()),
        role: crate::domain::actor::Role::User,
        is_registration_complete: true,
        age: None,
        gender: None,
        city: None,
        country: None,
        country_code: None,
        phone_number: None,
        locale: "en".into(),
        created_at: crate::domain::time::Timestamp::from_millis(0),
        updated_at: crate::domain::time::Timestamp::from_millis(0),
    };
    let given = answers(serde_json::json!([
        {"questionIndex": 0, "selectedOptionIndex": 1},
        {"questionIndex": 1, "selectedOptionIndex": 0},
        {"questionIndex": 2, "selectedOptionIndex": 1}
    ]))
    .expect("answers");
    let record = super::score::scored(&test, &user, &given, 1_796_000_000_000);
    let mut summary = serde_json::to_value(record.summary()).expect("a summary");
    let answers = summary
        .as_object_mut()
        .expect("an object")
        .remove("answers");
    assert_eq!(answers.map(|a| a.as_array().map(Vec::len)), Some(Some(3)));
    assert_eq!(
        serde_json::to_value(record.notice()).expect("a notice"),
        summary
    );
}
