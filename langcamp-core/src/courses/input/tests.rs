//! The parse of course bodies into the commands, and the rules that span fields.

use super::*;

fn parse(json: &str) -> (CourseValues, Vec<String>) {
    let input: CourseInput = serde_json::from_str(json).expect("valid JSON");
    let mut problems = Problems::new();
    let mut values = CourseValues::default();
    input.parse(&mut problems).apply(&mut values, &mut problems);
    let messages = match problems.finish() {
        Ok(()) => Vec::new(),
        Err(Error::Validation(m)) => m,
        Err(other) => panic!("unexpected {other:?}"),
    };
    (values, messages)
}

#[test]
fn copy_titles_stay_within_200_characters() {
    assert_eq!(copy_title("German A1"), "German A1 (copy)");
    let long = "é".repeat(200);
    let copy = copy_title(&long);
    assert_eq!(copy.chars().count(), 200);
    assert!(copy.starts_with(&"é".repeat(193)));
    assert!(copy.ends_with(" (copy)"));
    let exact = "x".repeat(193);
    assert_eq!(copy_title(&exact), format!("{exact} (copy)"));
    let spaced = format!("{}  {}", "x".repeat(191), "y".repeat(7));
    assert_eq!(copy_title(&spaced), format!("{} (copy)", "x".repeat(191)));
}

#[test]
fn values_are_normalized() {
    let (v, problems) = parse(
        r#"{"title":"  German ","level":"b1","currency":"eur","price":10,
            "targetLanguage":"DE","locale":"pt-br","summary":"  ","startDate":"2026-09-01",
            "endDate":"2026-09-01"}"#,
    );
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(v.title, "German");
    assert_eq!(v.level.as_deref(), Some("B1"));
    assert_eq!(v.currency.as_deref(), Some("EUR"));
    assert_eq!(v.target_language.as_deref(), Some("de"));
    assert_eq!(v.locale.as_deref(), Some("pt-BR"));
    assert_eq!(v.summary, None);
}

#[test]
fn every_bad_field_has_one_message() {
    let (_, problems) = parse(
        r#"{"title":"","level":"D1","currency":"EURO","price":-1,"targetLanguage":"german",
            "locale":"x","imageUrl":"ftp://x","startDate":"2026-02-30","endDate":"01.09.2026",
            "capacity":-3,"isPublished":null,"sortOrder":null}"#,
    );
    assert_eq!(problems.len(), 12, "{problems:?}");
}

fn refused<T: std::fmt::Debug>(result: Result<T>) -> Vec<String> {
    match result {
        Err(Error::Validation(messages)) => messages,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

fn change(json: &str) -> Result<CourseChange> {
    CourseChange::try_from(serde_json::from_str::<CourseInput>(json).expect("valid JSON"))
}

#[test]
fn a_new_course_is_checked_whole_and_needs_a_title() {
    let new = |json: &str| {
        NewCourse::try_from(serde_json::from_str::<CourseInput>(json).expect("valid JSON"))
    };
    let course = new(r#"{"title":" German ","price":10,"currency":"eur"}"#).expect("valid");
    let values = course.into_values();
    assert_eq!(
        (values.title.as_str(), values.currency.as_deref()),
        ("German", Some("EUR"))
    );
    assert_eq!(refused(new("{}")), ["title is required"]);
    assert_eq!(
        refused(new(r#"{"title":"t","price":5}"#)),
        ["currency is required when price is set"]
    );
}

#[test]
fn a_too_precise_price_is_said_with_the_currency_the_course_will_have() {
    assert_eq!(
        refused(change(r#"{"price":1.23456,"currency":"usd"}"#)),
        ["price must have at most 2 decimal places in USD"]
    );
    assert_eq!(
        refused(change(r#"{"price":1.23456,"currency":"EURO"}"#)).len(),
        2,
        "the refused currency, and the price against no currency"
    );
    // Without a currency in the body, the stored one decides when the change is applied.
    let kept = change(r#"{"price":1.23456}"#).expect("fields are fine on their own");
    let mut values = CourseValues {
        currency: Some("JPY".into()),
        ..CourseValues::default()
    };
    let mut problems = Problems::new();
    kept.apply(&mut values, &mut problems);
    assert_eq!(
        refused(problems.finish()),
        ["price must be a whole number in JPY"]
    );
    let publish = CourseChange::publish(true);
    let mut values = CourseValues::default();
    let mut problems = Problems::new();
    publish.apply(&mut values, &mut problems);
    assert!(problems.finish().is_ok() && values.is_published);
}

#[test]
fn cross_field_rules_are_checked_once() {
    let (_, problems) = parse(r#"{"title":"t","price":5}"#);
    assert_eq!(problems, vec!["currency is required when price is set"]);
    let (_, problems) = parse(r#"{"title":"t","price":5,"currency":"12"}"#);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let (_, problems) = parse(r#"{"title":"t","startDate":"2026-09-02","endDate":"2026-09-01"}"#);
    assert_eq!(problems, vec!["endDate must not be before startDate"]);
    let (_, problems) = parse(r#"{"title":"t","currency":"usd"}"#);
    assert!(problems.is_empty(), "a currency without a price is fine");
}
