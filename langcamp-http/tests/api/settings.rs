//! Settings (CONTRACT §9) and their read cache.

use chrono::TimeDelta;
use langcamp_core::settings::NewSetting;
use langcamp_core::{Actor, Langcamp};
use serde_json::{Value, json};

use crate::helpers::{Case, Client, Session, TestApp, assert_role_matrix, utc};

/// The well-known key the frontend reads its landing page's video address from.
const VIDEO: &str = "landing_video_url";

async fn put(admin: &Session, key: &str, value: Value) -> Value {
    admin
        .put("/settings", &json!({ "key": key, "value": value }))
        .await
}

/// The value of a setting as the public reads it, or `None` for 404.
async fn public_value(app: &TestApp, key: &str) -> Option<Value> {
    let response = app.get(&format!("/settings/{key}")).send().await;
    match response.status {
        200 => Some(response.data()["value"].clone()),
        404 => {
            assert_eq!(response.code(), "NOT_FOUND");
            None
        }
        other => panic!("unexpected status {other}: {}", response.text()),
    }
}

#[tokio::test]
async fn settings_round_trip_any_json_value_but_null() {
    let start = utc(2026, 11, 22, 10, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    let values = [
        ("a.string", json!("hello")),
        ("b.integer", json!(42)),
        ("c.decimal", json!(-3.25)),
        (
            "d.object",
            json!({ "nested": { "list": [1, "two", null] }, "on": true }),
        ),
        ("e.array", json!(["x", 2, { "y": false }])),
        ("f.true", json!(true)),
        ("g.false", json!(false)),
        ("h.empty-string", json!("")),
        ("i.zero", json!(0)),
    ];
    for (key, value) in &values {
        let stored = put(&admin, key, value.clone()).await;
        assert_eq!(
            stored,
            json!({ "key": key, "value": value, "updatedAt": "2026-11-22T10:00:00.000Z" })
        );
        let read = app.get(&format!("/settings/{key}")).await;
        assert_eq!(read, stored, "{key}");
    }

    app.clock.advance(TimeDelta::minutes(1));
    let replaced = put(&admin, "a.string", json!({ "now": "an object" })).await;
    assert_eq!(
        replaced,
        json!({ "key": "a.string", "value": { "now": "an object" }, "updatedAt": "2026-11-22T10:01:00.000Z" })
    );

    let all = admin.get("/settings").await;
    let all = all.as_array().expect("an array");
    assert_eq!(all.len(), values.len(), "replacing did not add a setting");
    let keys: Vec<&str> = all
        .iter()
        .map(|s| s["key"].as_str().expect("key"))
        .collect();
    assert_eq!(
        keys,
        [
            "a.string",
            "b.integer",
            "c.decimal",
            "d.object",
            "e.array",
            "f.true",
            "g.false",
            "h.empty-string",
            "i.zero"
        ],
        "sorted by key"
    );
    assert_eq!(all[0], replaced);
    assert_eq!(all[3]["value"], values[3].1);
}

#[tokio::test]
async fn the_landing_video_url_is_readable_by_anyone_once_set() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("student@example.com").await;
    assert_eq!(public_value(&app, VIDEO).await, None);

    put(
        &admin,
        VIDEO,
        json!("https://video.example.com/landing.mp4"),
    )
    .await;
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://video.example.com/landing.mp4"))
    );
    let as_student = student.get("/settings/landing_video_url").await;
    assert_eq!(as_student["value"], "https://video.example.com/landing.mp4");
}

#[tokio::test]
async fn bad_keys_missing_or_null_values_and_unknown_fields_are_refused() {
    let (app, admin) = TestApp::with_admin().await;
    let long_key = "k".repeat(101);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({ "key": "Landing", "value": 1 }), vec!["key must be"]),
        (json!({ "key": "a b", "value": 1 }), vec!["key must be"]),
        (json!({ "key": "a/b", "value": 1 }), vec!["key must be"]),
        (json!({ "key": "", "value": 1 }), vec!["key must be"]),
        (json!({ "key": long_key, "value": 1 }), vec!["key must be"]),
        (json!({ "value": 1 }), vec!["key is required"]),
        (
            json!({ "key": "ok", "value": null }),
            vec!["value cannot be null"],
        ),
        (json!({ "key": "ok" }), vec!["value is required"]),
        (
            json!({ "key": "BAD", "value": null }),
            vec!["key must be", "value cannot be null"],
        ),
        (
            json!({ "key": "ok", "value": 1, "updatedAt": "x" }),
            vec!["unknown field `updatedAt`"],
        ),
        (json!({ "key": 5, "value": 1 }), vec!["key: invalid type"]),
    ];
    for (body, expected) in cases {
        let messages = admin.put("/settings", &body).invalid().await;
        assert_eq!(messages.len(), expected.len(), "{body}: {messages:?}");
        for (message, prefix) in messages.iter().zip(&expected) {
            assert!(message.starts_with(prefix), "{body}: {messages:?}");
        }
    }
    admin
        .call(hyper::Method::PUT, "/settings")
        .body("text/plain", "key=value")
        .expect(415)
        .await;
    // A key with surrounding spaces is trimmed.
    let trimmed = put(&admin, "  spaced.key ", json!(1)).await;
    assert_eq!(trimmed["key"], "spaced.key");
    assert_eq!(
        admin.get("/settings").await.as_array().map(Vec::len),
        Some(1),
        "only the valid setting was stored"
    );

    assert_eq!(public_value(&app, "never.set").await, None);
    assert_eq!(public_value(&app, "Not%20A%20Key").await, None);
    admin.delete("/settings/never.set").expect(404).await;
}

#[tokio::test]
async fn only_admins_write_or_list_settings() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let student = app.student("student@example.com").await;
    put(&admin, "site.name", json!("Langcamp")).await;
    let callers: [(&str, &Client); 2] = [("anonymous", app.anon()), ("user", &student)];
    const REFUSED: &[u16] = &[401, 403];
    let cases = [
        Case::new("PUT", "/settings", REFUSED)
            .body(json!({ "key": "site.name", "value": "Hacked" })),
        // A bad body too: the caller is checked first.
        Case::new("PUT", "/settings", REFUSED).body(json!({ "key": "BAD", "value": null })),
        Case::new("GET", "/settings", REFUSED),
        Case::new("DELETE", "/settings/site.name", REFUSED),
    ];
    assert_role_matrix(&callers, &cases).await;
    assert_eq!(
        public_value(&app, "site.name").await,
        Some(json!("Langcamp"))
    );
    put(&root, "site.name", json!("Langcamp Berlin")).await;
    assert_eq!(
        public_value(&app, "site.name").await,
        Some(json!("Langcamp Berlin")),
        "a superadmin passes admin checks"
    );
}

#[tokio::test]
async fn a_deleted_setting_is_gone_on_the_next_read() {
    let (app, admin) = TestApp::with_admin().await;
    put(&admin, "promo.banner", json!({ "text": "Spring sale" })).await;
    assert_eq!(
        public_value(&app, "promo.banner").await,
        Some(json!({ "text": "Spring sale" }))
    );
    let deleted = admin.delete("/settings/promo.banner").await;
    assert_eq!(deleted, json!({ "key": "promo.banner", "deleted": true }));
    assert_eq!(public_value(&app, "promo.banner").await, None);
    admin.delete("/settings/promo.banner").expect(404).await;
    assert_eq!(admin.get("/settings").await, json!([]));
}

#[tokio::test]
async fn a_setting_change_is_visible_on_the_next_read() {
    let (app, admin) = TestApp::with_admin().await;
    // Read first, so "not set" is what the cache holds.
    assert_eq!(public_value(&app, VIDEO).await, None);
    put(&admin, VIDEO, json!("https://v.example.com/1")).await;
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://v.example.com/1")),
        "create"
    );
    put(&admin, VIDEO, json!("https://v.example.com/2")).await;
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://v.example.com/2")),
        "replace"
    );
    // A write to another key leaves this one correct.
    put(&admin, "other", json!(1)).await;
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://v.example.com/2"))
    );
    admin.delete("/settings/landing_video_url").await;
    assert_eq!(public_value(&app, VIDEO).await, None, "delete");
}

#[tokio::test]
async fn settings_written_by_another_server_show_within_five_seconds() {
    let start = utc(2026, 3, 1, 9, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    put(&admin, VIDEO, json!("https://v.example.com/old")).await;
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://v.example.com/old"))
    );
    // The `langcamp settings set` command, or a second server, on the same database.
    let other = Langcamp::connect(app.core.config().clone(), app.clock.clone())
        .await
        .expect("a second instance");
    other
        .put_setting(
            &Actor::Operator,
            NewSetting::new(VIDEO, json!("https://v.example.com/new")).expect("a setting"),
        )
        .await
        .expect("write on the other server");

    if app.core.db().backend() == langcamp_core::platform::db::Backend::Postgres {
        // PostgreSQL: the other instance's NOTIFY reaches this one in milliseconds
        // (`langcamp-core/src/changes.rs`), long before the time to live.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while public_value(&app, VIDEO).await != Some(json!("https://v.example.com/new")) {
            assert!(std::time::Instant::now() < deadline, "heard within 1 s");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        return;
    }
    app.clock.advance(TimeDelta::milliseconds(4_999));
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://v.example.com/old")),
        "still cached"
    );
    app.clock.advance(TimeDelta::milliseconds(1));
    assert_eq!(
        public_value(&app, VIDEO).await,
        Some(json!("https://v.example.com/new")),
        "reloaded after five seconds"
    );
    other.db().close().await;
}
