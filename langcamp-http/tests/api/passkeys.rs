//! CONTRACT §21: passkeys, with a software authenticator (`langcamp_testkit::passkey`):
//! registration, a sign-in without mail, a replayed assertion, one signed for another
//! origin, a counter that goes backwards, an unknown credential, a passkey as staff's
//! second factor, removal, and two instances finishing each other's ceremonies.

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use langcamp_testkit::passkey::SoftPasskey;

use crate::helpers::{Session, TestApp};

const ORIGIN: &str = "https://school.example";

async fn app() -> TestApp {
    TestApp::builder()
        .var("PUBLIC_ORIGIN", ORIGIN)
        .spawn()
        .await
}

/// Registers a passkey for `session` (which has no factor yet, or a fresh check); the
/// passkey, and the caller with the level-2 tokens the registration answers.
async fn register(app: &TestApp, session: &Session, name: &str) -> (SoftPasskey, Session, Value) {
    let options = session.post("/me/passkeys/options", &json!({})).await;
    let public_key = &options["options"];
    assert_eq!(
        public_key["authenticatorSelection"]["residentKey"],
        "required"
    );
    assert_eq!(
        public_key["authenticatorSelection"]["userVerification"],
        "required"
    );
    assert_eq!(public_key["rp"]["id"], "school.example");
    let (passkey, credential) = SoftPasskey::create(public_key, ORIGIN);
    let added = session
        .post(
            "/me/passkeys",
            &json!({ "challengeId": options["challengeId"], "credential": credential, "name": name }),
        )
        .created()
        .await;
    assert_eq!(added["aal"], 2);
    assert_eq!(added["factor"]["type"], "passkey");
    let caller = app.with_tokens(session, &added);
    (passkey, caller, added)
}

/// The options of a passkey sign-in (`POST /auth/passkey/options`), with their
/// `challengeId`.
async fn sign_in_options(app: &TestApp) -> Value {
    app.post("/auth/passkey/options")
        .json(&json!({}))
        .send()
        .await
        .expect(200)
        .data()
}

/// `passkey`'s answer to sign-in `options`, signed in `origin`: a body for
/// `POST /auth/passkey/verify`.
fn sign_in_answer(passkey: &mut SoftPasskey, options: &Value, origin: &str) -> Value {
    let credential = passkey.get(&options["options"], origin);
    json!({ "challengeId": options["challengeId"], "credential": credential })
}

/// A passkey sign-in's options, and the answer to `credential` signed in `origin`.
async fn sign_in(
    app: &TestApp,
    passkey: &mut SoftPasskey,
    origin: &str,
) -> (Value, langcamp_testkit::TestResponse) {
    let body = sign_in_answer(passkey, &sign_in_options(app).await, origin);
    let answer = app.post("/auth/passkey/verify").json(&body).send().await;
    (body, answer)
}

#[tokio::test]
async fn a_student_registers_a_passkey_and_signs_in_with_one_touch() {
    let app = app().await;
    let ana = app.student("ana@example.com").await;
    let (mut passkey, _, added) = register(&app, &ana, "Phone").await;
    assert_eq!(
        added["recoveryCodes"].as_array().map(Vec::len),
        Some(10),
        "the first factor brings recovery codes"
    );

    let (_, answer) = sign_in(&app, &mut passkey, ORIGIN).await;
    let signed_in = answer.expect(200).data();
    assert_eq!(signed_in["aal"], 2);
    assert_eq!(signed_in["secondFactor"], "none");
    assert_eq!(signed_in["user"]["email"], "ana@example.com");
    assert_eq!(signed_in["methods"], json!(["passkey", "recovery"]));
    let ana = app.with_tokens(&ana, &signed_in);
    ana.get("/proficiency-tests/results/me").expect(200).await;
    let factors = ana.get("/me/factors").await;
    assert_eq!(factors["factors"][0]["name"], "Phone");
    assert!(factors["factors"][0]["lastUsedAt"].is_string());
}

#[tokio::test]
async fn replayed_foreign_backwards_and_unknown_assertions_sign_nobody_in() {
    let app = app().await;
    let ana = app.student("ana@example.com").await;
    let (mut passkey, _, _) = register(&app, &ana, "Phone").await;

    // Replayed: its challenge is used up.
    let (body, answer) = sign_in(&app, &mut passkey, ORIGIN).await;
    answer.expect(200);
    app.post("/auth/passkey/verify")
        .json(&body)
        .send()
        .await
        .fails(401, "UNAUTHORIZED");

    // Signed in a page of another origin (a phishing copy of the site).
    let (_, answer) = sign_in(&app, &mut passkey, "https://school.example.evil.test").await;
    answer.fails(401, "UNAUTHORIZED");

    // A counter that goes backwards: a cloned credential.
    passkey.counter = 10;
    sign_in(&app, &mut passkey, ORIGIN).await.1.expect(200);
    passkey.counter = 5;
    sign_in(&app, &mut passkey, ORIGIN)
        .await
        .1
        .fails(401, "UNAUTHORIZED");
    passkey.counter = 11;
    sign_in(&app, &mut passkey, ORIGIN).await.1.expect(200);

    // A credential this site never registered.
    let options = sign_in_options(&app).await;
    let foreign_options = json!({
        "rp": { "id": "school.example" },
        "challenge": options["options"]["challenge"],
        "user": { "id": "AAAAAAAAAAAAAAAAAAAAAA" },
    });
    let (mut stranger, _) = SoftPasskey::create(&foreign_options, ORIGIN);
    app.post("/auth/passkey/verify")
        .json(&sign_in_answer(&mut stranger, &options, ORIGIN))
        .send()
        .await
        .fails(401, "UNAUTHORIZED");
}

#[tokio::test]
async fn a_passkey_is_staffs_second_factor_and_goes_when_removed() {
    let app = app().await;
    let office = app.admin().await;
    let (mut passkey, office, added) = register(&app, &office, "YubiKey").await;
    assert_eq!(added["recoveryCodes"], Value::Null, "not the first factor");

    let short = app.sign_in_through_core(&office.email).await;
    short
        .get("/users")
        .fails(403, "SECOND_FACTOR_REQUIRED")
        .await;
    let options = short.post("/auth/second-factor/options", &json!({})).await;
    let credential = passkey.get(&options["options"], ORIGIN);
    let raised = short
        .post(
            "/auth/second-factor/verify",
            &json!({ "method": "passkey", "challengeId": options["challengeId"], "credential": credential }),
        )
        .expect(200)
        .await
        .data();
    assert_eq!(raised["aal"], 2);
    let staff = app.with_tokens(&short, &raised);
    staff.get("/users").expect(200).await;

    // A wrong passkey answer counts as a wrong code.
    let again = app.sign_in_through_core(&office.email).await;
    let options = again.post("/auth/second-factor/options", &json!({})).await;
    let credential = passkey.get(&options["options"], "https://elsewhere.test");
    again
        .post(
            "/auth/second-factor/verify",
            &json!({ "method": "passkey", "challengeId": options["challengeId"], "credential": credential }),
        )
        .send()
        .await
        .fails(401, "OTP_INVALID");

    let id = staff.get("/me/factors").await["factors"]
        .as_array()
        .expect("factors")
        .iter()
        .find(|f| f["type"] == "passkey")
        .and_then(|f| f["id"].as_str())
        .expect("the passkey")
        .to_owned();
    staff.delete(&format!("/me/factors/{id}")).expect(200).await;
    sign_in(&app, &mut passkey, ORIGIN)
        .await
        .1
        .fails(401, "UNAUTHORIZED");
}

#[tokio::test]
async fn adding_a_passkey_when_a_factor_exists_needs_a_level_two_sign_in() {
    let app = app().await;
    let ana = app.with_totp(app.student("ana@example.com").await).await;
    let short = app.sign_in_through_core(&ana.email).await;
    short
        .post("/me/passkeys/options", &json!({}))
        .fails(403, "SECOND_FACTOR_REQUIRED")
        .await;
}

#[tokio::test]
async fn without_public_origin_the_passkey_routes_say_what_to_set() {
    let app = TestApp::spawn().await;
    let ana = app.student("ana@example.com").await;
    for response in [
        app.post("/auth/passkey/options")
            .json(&json!({}))
            .send()
            .await,
        ana.post("/me/passkeys/options", &json!({})).send().await,
    ] {
        let response = response.fails(400, "VALIDATION_FAILED");
        assert!(
            response.errors()[0].contains("PUBLIC_ORIGIN"),
            "{:?}",
            response.errors()
        );
    }
}

#[tokio::test]
async fn a_ceremony_begun_on_one_instance_finishes_on_another() {
    if std::env::var("TEST_DATABASE_URL").is_err() {
        eprintln!(
            "skipped a_ceremony_begun_on_one_instance_finishes_on_another: it needs TEST_DATABASE_URL"
        );
        return;
    }
    let a = app().await;
    let url = a.core.config().database_url.expose().to_owned();
    let b = TestApp::builder()
        .var("PUBLIC_ORIGIN", ORIGIN)
        .var("DATABASE_URL", &url)
        .spawn()
        .await;
    let ana_on_a = a.student("ana@example.com").await;
    let ana_on_b = b.bind(&ana_on_a);
    // Registration: options from A, the credential to B.
    let options = ana_on_a.post("/me/passkeys/options", &json!({})).await;
    let (mut passkey, credential) = SoftPasskey::create(&options["options"], ORIGIN);
    ana_on_b
        .post(
            "/me/passkeys",
            &json!({ "challengeId": options["challengeId"], "credential": credential, "name": "Phone" }),
        )
        .created()
        .await;
    // Sign-in: options from B, verified on A.
    let answer = sign_in_answer(&mut passkey, &sign_in_options(&b).await, ORIGIN);
    a.post("/auth/passkey/verify")
        .json(&answer)
        .send()
        .await
        .expect(200);
}

/// A ceremony's challenge lives five minutes (§21): an answer at 4:59 signs in, one at
/// 5:01 finds nothing to finish.
#[tokio::test]
async fn a_ceremony_unfinished_after_five_minutes_is_gone() {
    let app = TestApp::builder()
        .var("PUBLIC_ORIGIN", ORIGIN)
        .manual_clock(Utc::now())
        .spawn()
        .await;
    let ana = app.student("ana@example.com").await;
    let (mut passkey, _, _) = register(&app, &ana, "Phone").await;
    let (in_time, too_late) = (sign_in_options(&app).await, sign_in_options(&app).await);
    let in_time = sign_in_answer(&mut passkey, &in_time, ORIGIN);
    let too_late = sign_in_answer(&mut passkey, &too_late, ORIGIN);

    app.clock
        .advance(TimeDelta::minutes(4) + TimeDelta::seconds(59));
    app.post("/auth/passkey/verify")
        .json(&in_time)
        .send()
        .await
        .expect(200);
    app.clock.advance(TimeDelta::seconds(2));
    app.post("/auth/passkey/verify")
        .json(&too_late)
        .send()
        .await
        .fails(401, "UNAUTHORIZED");
}

/// The ceremony routes are limited like OTP verify (§20): twelve in five minutes per
/// client, counted per route, so a client that spent one route's budget can still use
/// another.
#[tokio::test]
async fn the_ceremony_routes_refuse_the_thirteenth_request_in_five_minutes() {
    let app = app().await;
    for _ in 0..12 {
        app.post("/auth/passkey/options")
            .json(&json!({}))
            .send()
            .await
            .expect(200);
    }
    let refused = app
        .post("/auth/passkey/options")
        .json(&json!({}))
        .send()
        .await
        .fails(429, "RATE_LIMITED");
    assert!((1..=300).contains(&refused.retry_after()));
    // Another route of the same rule keeps its own budget: an unknown challenge is refused
    // as such, not as the thirteenth request.
    app.post("/auth/passkey/verify")
        .json(&json!({ "challengeId": "unknown", "credential": {} }))
        .send()
        .await
        .fails(401, "UNAUTHORIZED");
}
