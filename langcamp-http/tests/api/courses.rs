//! Courses (CONTRACT §5) and the public list cache.

use chrono::TimeDelta;
use langcamp_core::courses::{CourseInput, NewCourse};
use langcamp_core::{Actor, Langcamp};
use serde_json::{Value, json};

use crate::helpers::{Session, TestApp, TestResponse, utc};

const UNKNOWN_ID: &str = "0190a0c4-0000-7000-8000-000000000000";

async fn create(admin: &Session, body: Value) -> Value {
    admin.post("/courses", &body).created().await
}

async fn patch(admin: &Session, id: &str, body: Value) -> Value {
    admin.patch(&format!("/courses/{id}"), &body).await
}

/// The titles of `GET path` as the given caller sees them.
async fn titles(app: &TestApp, path: &str, token: Option<&str>) -> Vec<String> {
    let mut call = app.get(path);
    if let Some(token) = token {
        call = call.bearer(token);
    }
    call.send()
        .await
        .expect(200)
        .data()
        .as_array()
        .expect("an array")
        .iter()
        .map(|c| c["title"].as_str().expect("title").to_owned())
        .collect()
}

fn id_of(course: &Value) -> String {
    course["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn admins_create_read_update_and_delete_courses() {
    let start = utc(2026, 11, 22, 10, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;

    let input = json!({
        "title": "  German for beginners ",
        "summary": "Start speaking in week one",
        "description": "Twelve weeks, four evenings a week.",
        "targetLanguage": "DE",
        "level": "a1",
        "locale": "en",
        "imageUrl": "https://cdn.example.com/german.jpg",
        "location": "Berlin",
        "startDate": "2026-09-01",
        "endDate": "2026-12-18",
        "price": 490.5,
        "currency": "eur",
        "capacity": 12,
        "isPublished": true,
        "sortOrder": 3
    });
    let created = create(&admin, input.clone()).await;
    let id = id_of(&created);
    // The course as sent, trimmed and normalised, with its id and times.
    let mut expected = input;
    let normalised = json!({
        "id": id,
        "title": "German for beginners",
        "targetLanguage": "de",
        "level": "A1",
        "currency": "EUR",
        "createdAt": "2026-11-22T10:00:00.000Z",
        "updatedAt": "2026-11-22T10:00:00.000Z"
    });
    for (field, value) in normalised.as_object().expect("an object") {
        expected[field] = value.clone();
    }
    assert_eq!(created, expected);
    let read = app.get(&format!("/courses/{id}")).await;
    assert_eq!(read, created);

    app.clock.advance(TimeDelta::minutes(5));
    let updated = patch(&admin,
        &id,
        json!({ "title": "German A1", "summary": null, "location": "", "level": "A2", "capacity": 0 }),
    )
    .await;
    assert_eq!(updated["title"], "German A1");
    assert_eq!(updated["summary"], Value::Null, "null clears");
    assert_eq!(updated["location"], Value::Null, "an empty string clears");
    assert_eq!(updated["level"], "A2");
    assert_eq!(updated["capacity"], 0);
    assert_eq!(
        updated["description"], "Twelve weeks, four evenings a week.",
        "absent fields stay"
    );
    assert_eq!(updated["price"], 490.5);
    assert_eq!(updated["isPublished"], true);
    assert_eq!(updated["sortOrder"], 3);
    assert_eq!(updated["createdAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(updated["updatedAt"], "2026-11-22T10:05:00.000Z");

    let minimal = create(&admin, json!({ "title": "Italian" })).await;
    for field in [
        "summary",
        "description",
        "targetLanguage",
        "level",
        "locale",
        "imageUrl",
        "location",
        "startDate",
        "endDate",
        "price",
        "currency",
        "capacity",
    ] {
        assert_eq!(minimal[field], Value::Null, "{field}");
    }
    assert_eq!(minimal["isPublished"], false, "unpublished by default");
    assert_eq!(minimal["sortOrder"], 0);

    let deleted = admin.delete(&format!("/courses/{id}")).await;
    assert_eq!(deleted, json!({ "id": id, "deleted": true }));
    admin.assert_gone(&format!("/courses/{id}")).await;
    assert_eq!(
        titles(&app, "/courses", Some(&admin.access)).await,
        ["Italian"]
    );
}

#[tokio::test]
async fn a_duplicate_is_an_unpublished_copy_with_its_title_kept_within_200_characters() {
    let (app, admin) = TestApp::with_admin().await;
    let original = create(
        &admin,
        json!({
            "title": "Spanish B1", "targetLanguage": "es", "level": "B1", "locale": "en",
            "price": 300, "currency": "USD", "capacity": 8, "startDate": "2027-01-10",
            "endDate": "2027-03-10", "isPublished": true, "sortOrder": 7,
            "summary": "Intermediate", "imageUrl": "http://img.example.com/es.png"
        }),
    )
    .await;
    let copy = admin
        .post_empty(&format!("/courses/{}/duplicate", id_of(&original)))
        .created()
        .await;
    assert_ne!(copy["id"], original["id"]);
    assert_eq!(copy["title"], "Spanish B1 (copy)");
    assert_eq!(copy["isPublished"], false);
    for field in [
        "summary",
        "targetLanguage",
        "level",
        "locale",
        "imageUrl",
        "startDate",
        "endDate",
        "price",
        "currency",
        "capacity",
        "sortOrder",
    ] {
        assert_eq!(copy[field], original[field], "{field} is copied");
    }
    // The copy is a course of its own; the original is untouched.
    let read = admin.get(&format!("/courses/{}", id_of(&copy))).await;
    assert_eq!(read, copy);
    assert_eq!(
        titles(&app, "/courses", None).await,
        ["Spanish B1"],
        "the copy is not published"
    );

    let long_title = format!("{}{}", "Ä".repeat(190), "z".repeat(10));
    assert_eq!(long_title.chars().count(), 200);
    let long = create(&admin, json!({ "title": long_title })).await;
    let long_copy = admin
        .post_empty(&format!("/courses/{}/duplicate", id_of(&long)))
        .created()
        .await;
    let expected = format!("{}zzz (copy)", "Ä".repeat(190));
    assert_eq!(long_copy["title"], expected.as_str());
    assert_eq!(expected.chars().count(), 200);

    // A copy of a full-length copy is shortened again: never longer than 200.
    let copy_of_copy = admin
        .post_empty(&format!("/courses/{}/duplicate", id_of(&long_copy)))
        .created()
        .await;
    let title = copy_of_copy["title"].as_str().expect("title");
    assert_eq!(title.chars().count(), 200);
    assert_eq!(title, expected);
}

#[tokio::test]
async fn unpublished_courses_are_hidden_from_the_public_but_not_from_admins() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let student = app.student("student@example.com").await;
    let public = create(
        &admin,
        json!({ "title": "Public", "isPublished": true, "sortOrder": 1 }),
    )
    .await;
    let draft = create(&admin, json!({ "title": "Draft", "sortOrder": 2 })).await;

    assert_eq!(titles(&app, "/courses", None).await, ["Public"]);
    assert_eq!(
        titles(&app, "/courses", Some(&student.access)).await,
        ["Public"]
    );
    assert_eq!(
        titles(&app, "/courses", Some(&admin.access)).await,
        ["Public", "Draft"]
    );
    assert_eq!(
        titles(&app, "/courses", Some(&root.access)).await,
        ["Public", "Draft"]
    );

    let draft_path = format!("/courses/{}", id_of(&draft));
    app.get(&draft_path).expect(404).await;
    let hidden = student.get(&draft_path).fails(404, "NOT_FOUND").await;
    assert_eq!(hidden.errors(), ["course not found"]);
    admin.get(&draft_path).expect(200).await;
    root.get(&draft_path).expect(200).await;
    student.get(&format!("/courses/{}", id_of(&public))).await;

    // A token that is sent must be valid, on public routes too.
    app.get("/courses")
        .bearer("not-a-token")
        .fails(401, "TOKEN_INVALID")
        .await;
}

#[tokio::test]
async fn lists_filter_by_locale_and_target_language_ordered_by_sort_order_then_age() {
    let start = utc(2026, 1, 5, 8, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    for (title, locale, target, sort) in [
        ("de-en late", "en", "de", 1),
        ("fr-en", "en", "fr", 0),
        ("de-pt", "pt-BR", "de", 1),
        ("de-en early", "en", "de", -5),
        ("es-en", "en", "es", 1),
    ] {
        create(
            &admin,
            json!({
                "title": title, "locale": locale, "targetLanguage": target,
                "sortOrder": sort, "isPublished": true
            }),
        )
        .await;
        app.clock.advance(TimeDelta::seconds(1));
    }
    // Same sortOrder and creation time: the creation order (ids are time-ordered) decides.
    create(
        &admin,
        json!({ "title": "same time 1", "locale": "it", "isPublished": true }),
    )
    .await;
    create(
        &admin,
        json!({ "title": "same time 2", "locale": "it", "isPublished": true }),
    )
    .await;

    assert_eq!(
        titles(&app, "/courses", None).await,
        [
            "de-en early",
            "fr-en",
            "same time 1",
            "same time 2",
            "de-en late",
            "de-pt",
            "es-en"
        ]
    );
    assert_eq!(
        titles(&app, "/courses?targetLanguage=de", None).await,
        ["de-en early", "de-en late", "de-pt"]
    );
    assert_eq!(
        titles(&app, "/courses?locale=EN&targetLanguage=de", None).await,
        ["de-en early", "de-en late"],
        "filters are language codes, compared normalized"
    );
    assert_eq!(
        titles(&app, "/courses?locale=pt-br", Some(&admin.access)).await,
        ["de-pt"]
    );
    assert_eq!(
        titles(&app, "/courses?locale=ja", None).await,
        Vec::<String>::new()
    );
    assert_eq!(
        titles(&app, "/courses?locale=&targetLanguage=", None)
            .await
            .len(),
        7,
        "empty filters are no filters"
    );
    for bad in [
        "/courses?locale=english",
        "/courses?targetLanguage=1",
        "/courses?locale=x&targetLanguage=y",
    ] {
        let response = app.get(bad).expect(400).await;
        assert_eq!(response.code(), "VALIDATION_FAILED", "{bad}");
    }
    let both = app
        .get("/courses?locale=x&targetLanguage=y")
        .expect(400)
        .await;
    assert_eq!(both.errors().len(), 2, "one message per bad filter");
}

#[tokio::test]
async fn invalid_course_fields_get_one_message_each() {
    let (app, admin) = TestApp::with_admin().await;

    let response = admin
        .post(
            "/courses",
            &json!({
                "title": " ",
                "targetLanguage": "german",
                "locale": "e",
                "level": "D1",
                "price": -1,
                "currency": "EURO",
                "startDate": "2026-02-30",
                "endDate": "01.09.2026",
                "capacity": -3,
                "imageUrl": "ftp://cdn.example.com/x.jpg",
                "summary": "s".repeat(1001),
                "location": "l".repeat(201)
            }),
        )
        .fails(400, "VALIDATION_FAILED")
        .await;
    let messages = response.errors();
    assert_eq!(messages.len(), 12, "{messages:?}");
    for field in [
        "title",
        "targetLanguage",
        "locale",
        "level",
        "price",
        "currency",
        "startDate",
        "endDate",
        "capacity",
        "imageUrl",
        "summary",
        "location",
    ] {
        assert_eq!(
            messages.iter().filter(|m| m.starts_with(field)).count(),
            1,
            "one message for {field}: {messages:?}"
        );
    }

    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "title is required"),
        (json!({ "title": null }), "title cannot be null"),
        (
            json!({ "title": "t".repeat(201) }),
            "title must be 1 to 200 characters long",
        ),
        (
            json!({ "title": "t", "isPublished": null }),
            "isPublished cannot be null",
        ),
        (
            json!({ "title": "t", "sortOrder": null }),
            "sortOrder cannot be null",
        ),
        (
            json!({ "title": "t", "price": 10 }),
            "currency is required when price is set",
        ),
        (
            json!({ "title": "t", "startDate": "2026-09-02", "endDate": "2026-09-01" }),
            "endDate must not be before startDate",
        ),
        (
            json!({ "title": "t", "color": "red" }),
            "unknown field `color`",
        ),
    ];
    for (body, expected) in cases {
        let response = admin.post("/courses", &body).expect(400).await;
        let messages = response.errors();
        assert_eq!(messages.len(), 1, "{body}: {messages:?}");
        assert!(
            messages[0].starts_with(expected),
            "{body}: {messages:?} should start with {expected:?}"
        );
    }
    for body in [
        json!({ "title": 5 }),
        json!({ "title": "t", "price": "12.50" }),
        json!({ "title": "t", "capacity": 1.5 }),
        json!({ "title": "t", "isPublished": "yes" }),
        json!([]),
    ] {
        admin.post("/courses", &body).expect(400).await;
    }
    admin
        .call(hyper::Method::POST, "/courses")
        .body("text/plain", "title=x")
        .expect(415)
        .await;
    assert_eq!(
        titles(&app, "/courses", Some(&admin.access)).await.len(),
        0,
        "nothing was created"
    );

    // Updates: null for required or defaulted fields, and the rules across fields, which
    // are checked against the stored values.
    let course = create(
        &admin,
        json!({
            "title": "Kept", "price": 100, "currency": "GBP",
            "startDate": "2026-09-01", "endDate": "2026-09-30"
        }),
    )
    .await;
    let path = format!("/courses/{}", id_of(&course));
    let cases: Vec<(Value, &str)> = vec![
        (json!({ "title": null }), "title cannot be null"),
        (json!({ "isPublished": null }), "isPublished cannot be null"),
        (json!({ "sortOrder": null }), "sortOrder cannot be null"),
        (
            json!({ "currency": null }),
            "currency is required when price is set",
        ),
        (
            json!({ "endDate": "2026-08-31" }),
            "endDate must not be before startDate",
        ),
        (
            json!({ "startDate": "2026-10-01" }),
            "endDate must not be before startDate",
        ),
        (json!({ "id": "x" }), "unknown field `id`"),
        (json!({ "createdAt": "x" }), "unknown field `createdAt`"),
    ];
    for (body, expected) in cases {
        let response = admin.patch(&path, &body).expect(400).await;
        let messages = response.errors();
        assert_eq!(messages.len(), 1, "{body}: {messages:?}");
        assert!(
            messages[0].starts_with(expected),
            "{body}: {messages:?} should start with {expected:?}"
        );
    }
    let unchanged = admin.get(&path).await;
    assert_eq!(unchanged, course, "failed updates change nothing");

    // Clearing both sides of a rule together is fine.
    let cleared = patch(
        &admin,
        &id_of(&course),
        json!({ "price": null, "currency": null, "startDate": null }),
    )
    .await;
    assert_eq!(
        (
            &cleared["price"],
            &cleared["currency"],
            &cleared["startDate"]
        ),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    assert_eq!(cleared["endDate"], "2026-09-30");
}

#[tokio::test]
async fn unknown_or_malformed_course_ids_are_404() {
    let (app, admin) = TestApp::with_admin().await;
    for id in [UNKNOWN_ID, "not-an-id", "%27%20OR%201=1"] {
        let path = format!("/courses/{id}");
        app.get(&path).fails(404, "NOT_FOUND").await;
        admin.get(&path).expect(404).await;
        admin
            .patch(&path, &json!({ "title": "x" }))
            .expect(404)
            .await;
        admin.delete(&path).expect(404).await;
        admin
            .post_empty(&format!("{path}/duplicate"))
            .expect(404)
            .await;
    }
}

#[tokio::test]
async fn only_admins_change_courses() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("student@example.com").await;
    let course = create(&admin, json!({ "title": "Mine", "isPublished": true })).await;
    let path = format!("/courses/{}", id_of(&course));
    let duplicate = format!("{path}/duplicate");
    let operations: Vec<(&str, &str, Value)> = vec![
        ("POST", "/courses", json!({ "title": "New" })),
        // Even a bad body is refused for the caller first.
        ("POST", "/courses", json!({ "nonsense": true })),
        ("PATCH", &path, json!({ "title": "Changed" })),
        ("DELETE", &path, Value::Null),
        ("POST", &duplicate, Value::Null),
    ];
    for (method, path, body) in &operations {
        for (who, token, expected) in [
            ("anonymous", None, 401),
            ("user", Some(&student.access), 403),
        ] {
            let mut call = app.call(method.parse().expect("method"), path);
            if let Some(token) = token {
                call = call.bearer(token);
            }
            if !body.is_null() {
                call = call.json(body);
            }
            let response = call.send().await;
            assert_eq!(response.status, expected, "{method} {path} as {who}");
            let code = if expected == 401 {
                "UNAUTHORIZED"
            } else {
                "FORBIDDEN"
            };
            assert_eq!(response.code(), code, "{method} {path} as {who}");
        }
    }
    assert_eq!(
        titles(&app, "/courses", Some(&admin.access)).await,
        ["Mine"],
        "nothing changed"
    );
}

#[tokio::test]
async fn the_public_list_shows_every_change_on_the_next_read() {
    let (app, admin) = TestApp::with_admin().await;
    assert_eq!(titles(&app, "/courses", None).await, Vec::<String>::new());
    assert_eq!(
        titles(&app, "/courses?targetLanguage=de", None).await,
        Vec::<String>::new()
    );

    let course = create(
        &admin,
        json!({ "title": "German", "targetLanguage": "de", "isPublished": true }),
    )
    .await;
    let id = id_of(&course);
    assert_eq!(titles(&app, "/courses", None).await, ["German"], "create");
    assert_eq!(
        titles(&app, "/courses?targetLanguage=de", None).await,
        ["German"],
        "create, filtered list"
    );

    patch(&admin, &id, json!({ "title": "German A1" })).await;
    assert_eq!(
        titles(&app, "/courses", None).await,
        ["German A1"],
        "update"
    );

    patch(&admin, &id, json!({ "isPublished": false })).await;
    assert_eq!(
        titles(&app, "/courses", None).await,
        Vec::<String>::new(),
        "unpublish"
    );
    app.get(&format!("/courses/{id}")).expect(404).await;

    patch(&admin, &id, json!({ "isPublished": true })).await;
    assert_eq!(
        titles(&app, "/courses", None).await,
        ["German A1"],
        "publish"
    );
    app.get(&format!("/courses/{id}")).expect(200).await;

    let copy = admin
        .post_empty(&format!("/courses/{id}/duplicate"))
        .created()
        .await;
    patch(&admin, &id_of(&copy), json!({ "isPublished": true })).await;
    assert_eq!(
        titles(&app, "/courses", None).await,
        ["German A1", "German A1 (copy)"],
        "duplicate, then publish"
    );

    admin.delete(&format!("/courses/{id}")).expect(200).await;
    assert_eq!(
        titles(&app, "/courses", None).await,
        ["German A1 (copy)"],
        "delete"
    );
    assert_eq!(
        titles(&app, "/courses?targetLanguage=de", None).await,
        ["German A1 (copy)"],
        "delete, filtered list"
    );
}

#[tokio::test]
async fn changes_made_by_another_server_show_within_five_seconds() {
    let start = utc(2026, 3, 1, 9, 0, 0);
    let app = TestApp::at(start).await;
    // A second server on the same database: its writes cannot clear this server's cache.
    let other = Langcamp::connect(app.core.config().clone(), app.clock.clone())
        .await
        .expect("a second instance");
    assert_eq!(titles(&app, "/courses", None).await, Vec::<String>::new());

    let input: CourseInput = serde_json::from_value(json!({
        "title": "Written elsewhere", "isPublished": true
    }))
    .expect("input");
    other
        .create_course(&Actor::Operator, NewCourse::try_from(input).expect("valid"))
        .await
        .expect("create on the other server");

    if app.core.db().backend() == langcamp_core::platform::db::Backend::Postgres {
        // PostgreSQL: the other instance's NOTIFY reaches this one in milliseconds
        // (`langcamp-core/src/changes.rs`), long before the time to live.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while titles(&app, "/courses", None).await != ["Written elsewhere"] {
            assert!(std::time::Instant::now() < deadline, "heard within 1 s");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        return;
    }
    app.clock.advance(TimeDelta::milliseconds(4_999));
    assert_eq!(
        titles(&app, "/courses", None).await,
        Vec::<String>::new(),
        "still the cached list"
    );
    app.clock.advance(TimeDelta::milliseconds(1));
    assert_eq!(
        titles(&app, "/courses", None).await,
        ["Written elsewhere"],
        "reloaded after five seconds"
    );
    other.db().close().await;
}

/// Creates a course with `price` in `currency` and returns the response.
async fn priced(admin: &Session, price: Value, currency: &str) -> TestResponse {
    admin
        .post(
            "/courses",
            &json!({ "title": "Priced", "price": price, "currency": currency }),
        )
        .send()
        .await
}

#[tokio::test]
async fn prices_are_exact_with_the_decimal_places_of_their_currency() {
    let (app, admin) = TestApp::with_admin().await;

    // Stored exactly, given back as the same JSON number.
    for (price, currency) in [
        (json!(1299.5), "EUR"),
        (json!(0.1), "EUR"),
        (json!(0.2), "USD"),
        (json!(0.3), "EUR"),
        (json!(19.99), "USD"),
        (json!(0.07), "GBP"),
        (json!(12000), "JPY"),
        (json!(12.345), "KWD"),
        (json!(0.001), "BHD"),
        (json!(0), "EUR"),
        (json!(99_999_999_999.99_f64), "EUR"),
        (json!(100_000_000_000_u64), "JPY"),
    ] {
        let course = priced(&admin, price.clone(), currency)
            .await
            .expect(201)
            .data();
        let expected = price.as_f64().expect("a number");
        assert_eq!(course["price"], expected, "{price} {currency}");
        let read = admin
            .get(&format!("/courses/{}", id_of(&course)))
            .expect(200)
            .await;
        // The exact text: no float noise like 0.30000000000000004.
        let text = read.text();
        let shown = text
            .split("\"price\":")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .expect("a price in the body");
        assert_eq!(
            shown.trim_end_matches(".0"),
            price.to_string().trim_end_matches(".0"),
            "{text}"
        );
    }

    // Summed on the client, the listed prices add up to exactly what they say.
    let list = admin.get("/courses").await;
    let prices: Vec<Value> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| c["price"].clone())
        .collect();
    assert!(
        prices.contains(&json!(0.3)) && prices.contains(&json!(1299.5)),
        "{prices:?}"
    );

    // More decimal places than the currency has: 400, nothing stored.
    for (price, currency, message) in [
        (
            json!(12.345),
            "EUR",
            "price must have at most 2 decimal places in EUR",
        ),
        (json!(10.5), "JPY", "price must be a whole number in JPY"),
        (
            json!(1.0001),
            "KWD",
            "price must have at most 3 decimal places in KWD",
        ),
        (
            json!(0.1 + 0.2),
            "EUR",
            "price must have at most 2 decimal places in EUR",
        ),
        (
            json!(0.00001),
            "CLF",
            "price must have at most 4 decimal places in CLF",
        ),
        (
            json!(100_000_000_000.01_f64),
            "EUR",
            "price must be at most 100000000000",
        ),
        (json!(1e15), "JPY", "price must be at most 100000000000"),
        (json!(-0.01), "EUR", "price must be a number of at least 0"),
        (
            json!("12.50"),
            "EUR",
            "price must be a number of at least 0",
        ),
        (json!(true), "EUR", "price must be a number of at least 0"),
    ] {
        let refused = priced(&admin, price.clone(), currency).await.expect(400);
        assert_eq!(refused.code(), "VALIDATION_FAILED");
        assert_eq!(refused.errors(), [message], "{price} {currency}");
    }
    // The raw text decides, even past what a float can tell apart from 1299.5.
    let raw = |text: &'static str| {
        admin
            .call(hyper::Method::POST, "/courses")
            .body("application/json", text)
    };
    let response = raw(r#"{"title":"t","price":1299.50000000000000000001,"currency":"EUR"}"#)
        .expect(400)
        .await;
    assert_eq!(
        response.errors(),
        ["price must have at most 2 decimal places in EUR"]
    );
    let response = raw(r#"{"title":"t","price":1.2995E3,"currency":"EUR"}"#)
        .expect(201)
        .await;
    assert_eq!(response.data()["price"], 1299.5);
    assert_eq!(
        titles(&app, "/courses", Some(&admin.access)).await.len(),
        13,
        "only the valid prices were stored"
    );
}

#[tokio::test]
async fn a_new_currency_is_checked_against_the_stored_price_and_the_other_way_round() {
    let (_app, admin) = TestApp::with_admin().await;
    let course = priced(&admin, json!(10.5), "EUR").await.expect(201).data();
    let path = format!("/courses/{}", id_of(&course));

    let refused = admin
        .patch(&path, &json!({ "currency": "JPY" }))
        .expect(400)
        .await;
    assert_eq!(refused.errors(), ["price must be a whole number in JPY"]);

    // Into a currency with more decimals the amount stays the amount.
    let kwd = patch(&admin, &id_of(&course), json!({ "currency": "kwd" })).await;
    assert_eq!(
        (kwd["price"].clone(), kwd["currency"].clone()),
        (json!(10.5), json!("KWD"))
    );
    let fils = patch(&admin, &id_of(&course), json!({ "price": 10.125 })).await;
    assert_eq!(fils["price"], 10.125);
    let refused = admin
        .patch(&path, &json!({ "currency": "USD" }))
        .expect(400)
        .await;
    assert_eq!(
        refused.errors(),
        ["price must have at most 2 decimal places in USD"]
    );
    // Both at once are checked together.
    let yen = patch(
        &admin,
        &id_of(&course),
        json!({ "price": 1500, "currency": "JPY" }),
    )
    .await;
    assert_eq!(
        (yen["price"].clone(), yen["currency"].clone()),
        (json!(1500.0), json!("JPY"))
    );
    let refused = admin
        .patch(&path, &json!({ "price": 1500.5 }))
        .expect(400)
        .await;
    assert_eq!(refused.errors(), ["price must be a whole number in JPY"]);

    // The duplicate keeps the exact price.
    let copy = admin
        .post_empty(&format!("{path}/duplicate"))
        .created()
        .await;
    assert_eq!(
        (copy["price"].clone(), copy["currency"].clone()),
        (json!(1500.0), json!("JPY"))
    );
}

#[tokio::test]
async fn the_migration_turns_float_prices_into_exact_minor_units() {
    use sqlx::migrate::Migrator;

    // A database as it was before migration 0070, with prices stored as floats.
    let dir = std::env::temp_dir().join(format!("langcamp-0070-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let url = crate::helpers::test_database_url(&dir).await;
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.expect("connect");
    let backend = if url.starts_with("postgres") {
        "postgres"
    } else {
        "sqlite"
    };
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../migrations")
        .join(backend);
    let mut before = Migrator::new(folder).await.expect("the migrations");
    before.migrations = before
        .migrations
        .iter()
        .filter(|m| m.version < 70)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    before.run(&pool).await.expect("migrate to 0061");
    let legacy: [(&str, Option<f64>, Option<&str>); 9] = [
        (
            "0190a0c4-0000-7000-8000-000000000001",
            Some(1299.5),
            Some("EUR"),
        ),
        (
            "0190a0c4-0000-7000-8000-000000000002",
            Some(0.1),
            Some("EUR"),
        ),
        (
            "0190a0c4-0000-7000-8000-000000000003",
            Some(0.29),
            Some("USD"),
        ),
        (
            "0190a0c4-0000-7000-8000-000000000004",
            Some(12000.0),
            Some("JPY"),
        ),
        (
            "0190a0c4-0000-7000-8000-000000000005",
            Some(12.345),
            Some("KWD"),
        ),
        // More decimals than the currency has: rounded to its minor unit.
        (
            "0190a0c4-0000-7000-8000-000000000006",
            Some(10.5),
            Some("JPY"),
        ),
        (
            "0190a0c4-0000-7000-8000-000000000007",
            Some(4.999),
            Some("EUR"),
        ),
        ("0190a0c4-0000-7000-8000-000000000008", None, None),
        ("0190a0c4-0000-7000-8000-000000000009", Some(5.0), None),
    ];
    for (i, (id, price, currency)) in legacy.iter().enumerate() {
        sqlx::query(
            "INSERT INTO courses (id, title, price, currency, is_published, sort_order, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 1, $5, 0, 0)",
        )
        .bind(*id)
        .bind(format!("Legacy {i}"))
        // Never NULL here: the old float NULL bind is the bug this migration removes.
        .bind(price.unwrap_or(0.0))
        .bind(*currency)
        .bind(i as i64)
        .execute(&pool)
        .await
        .expect("a legacy course");
    }
    sqlx::query("UPDATE courses SET price = NULL WHERE id = $1")
        .bind(legacy[7].0)
        .execute(&pool)
        .await
        .expect("a course without a price");
    pool.close().await;

    // The app applies 0070 on start.
    let app = TestApp::builder().var("DATABASE_URL", &url).spawn().await;
    let list = app.get("/courses").await;
    let prices: Vec<(Value, Value)> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| (c["price"].clone(), c["currency"].clone()))
        .collect();
    assert_eq!(
        prices,
        [
            (json!(1299.5), json!("EUR")),
            (json!(0.1), json!("EUR")),
            (json!(0.29), json!("USD")),
            (json!(12000.0), json!("JPY")),
            (json!(12.345), json!("KWD")),
            (json!(11.0), json!("JPY")),
            (json!(5.0), json!("EUR")),
            (Value::Null, Value::Null),
            (json!(5.0), Value::Null),
        ]
    );
    let stored: Vec<Option<i64>> =
        sqlx::query_scalar("SELECT price_minor FROM courses ORDER BY sort_order")
            .fetch_all(app.core.db().reader())
            .await
            .expect("minor units");
    assert_eq!(
        stored,
        [
            Some(129_950),
            Some(10),
            Some(29),
            Some(12_000),
            Some(12_345),
            Some(11),
            Some(500),
            None,
            Some(500)
        ]
    );
    drop(app);
    let _ = std::fs::remove_dir_all(&dir);
}
