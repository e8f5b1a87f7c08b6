//! Encoded answers of the public lists (`langcamp-http/src/encoded.rs`): validators, 304,
//! gzip, and that a write is never answered with the old bytes.

use std::io::Read;

use serde_json::{Value, json};

use crate::helpers::{Session, TestApp};

async fn course(admin: &Session, title: &str) -> Value {
    admin.post("/courses", &json!({
            "title": title,
            "description": "A course description long enough to make the list worth compressing.",
            "targetLanguage": "de",
            "locale": "en",
            "isPublished": true
        })).created().await
}

#[tokio::test]
async fn the_public_course_list_revalidates_with_its_etag_until_a_write() {
    let (app, admin) = TestApp::with_admin().await;
    let first = course(&admin, "German A1").await;

    let answer = app.get("/courses").expect(200).await;
    let etag = answer.header("etag").expect("an ETag").to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    assert_eq!(answer.header("cache-control"), Some("no-cache"));
    assert_eq!(answer.json()["data"][0]["title"], "German A1");
    assert_eq!(answer.json()["statusCode"], 200);

    let again = app
        .get("/courses")
        .header("if-none-match", &etag)
        .expect(304)
        .await;
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));

    // A write on this server: the very next answer has the new data and a new validator.
    admin
        .patch(
            &format!("/courses/{}", first["id"].as_str().expect("id")),
            &json!({ "title": "German A1 (evenings)" }),
        )
        .await;
    let changed = app
        .get("/courses")
        .header("if-none-match", &etag)
        .expect(200)
        .await;
    assert_eq!(changed.json()["data"][0]["title"], "German A1 (evenings)");
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
}

#[tokio::test]
async fn large_public_lists_are_gzipped_only_for_clients_that_ask() {
    let (app, admin) = TestApp::with_admin().await;
    for n in 0..12 {
        course(&admin, &format!("Course number {n}")).await;
    }
    let plain = app.get("/courses").expect(200).await;
    assert_eq!(plain.header("content-encoding"), None);
    assert!(plain.body.len() > 1024, "large enough to compress");

    let zipped = app
        .get("/courses")
        .header("accept-encoding", "br, gzip")
        .expect(200)
        .await;
    assert_eq!(zipped.header("content-encoding"), Some("gzip"));
    assert_eq!(zipped.header("vary"), Some("Accept-Encoding"));
    assert!(zipped.body.len() < plain.body.len());
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(&zipped.body[..])
        .read_to_end(&mut text)
        .expect("valid gzip");
    assert_eq!(text, plain.body.to_vec(), "the same bytes once unpacked");

    let refused = app
        .get("/courses")
        .header("accept-encoding", "gzip;q=0")
        .expect(200)
        .await;
    assert_eq!(refused.header("content-encoding"), None);
}

#[tokio::test]
async fn admins_get_their_own_fresh_lists_without_validators() {
    let (app, admin) = TestApp::with_admin().await;
    course(&admin, "Published").await;
    let public = app.get("/courses").expect(200).await;
    let etag = public.header("etag").expect("an ETag").to_owned();
    let own = admin
        .get("/courses")
        .header("if-none-match", &etag)
        .expect(200)
        .await;
    assert_eq!(own.header("etag"), None);
}

#[tokio::test]
async fn the_public_test_list_is_encoded_and_follows_writes() {
    let (app, admin) = TestApp::with_admin().await;
    let empty = app.get("/proficiency-tests").expect(200).await;
    let etag = empty.header("etag").expect("an ETag").to_owned();
    assert_eq!(empty.json()["data"]["list"], json!([]));
    app.get("/proficiency-tests")
        .header("if-none-match", &etag)
        .expect(304)
        .await;
    admin.post("/proficiency-tests", &json!({
            "title": "German placement",
            "targetLanguage": "de",
            "locale": "en",
            "isActive": true,
            "questions": [{ "text": "Der, die oder das Haus?", "options": [{ "text": "der" }, { "text": "das" }], "correctOptionIndex": 1 }],
            "levelRanges": [{ "level": "A1", "minScore": 0, "maxScore": 1, "message": "Start here" }]
        })).expect(201).await;
    let after = app
        .get("/proficiency-tests")
        .header("if-none-match", &etag)
        .expect(200)
        .await;
    assert_eq!(after.json()["data"]["list"][0]["title"], "German placement");
    assert!(
        after.json()["data"]["list"][0]["questions"][0]
            .get("correctOptionIndex")
            .is_none(),
        "never shown to the public"
    );
}
