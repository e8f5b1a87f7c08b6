//! CONTRACT §21: passkeys, with a software authenticator (`langcamp_testkit::passkey`):
//! registration, a sign-in without mail, a replayed assertion, one signed for another
//! origin, a counter that goes backwards, an unknown credential, a passkey as staff's
//! second factor, removal, and two instances finishing each other's ceremonies.

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use langcamp_testkit::passkey::SoftPasskey;

use crate::helpers::{Session, TestApp, fresh_client};

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
    let options = passkey_call(session, "/me/passkeys/options", &json!({}))
        .expect(200)
        .await
        .data();
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
    let added = passkey_call(
        session,
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

/// `POST path` with `body` as `session`, from a client address of its own: the ceremony
/// routes' rate limit per address is not what most tests here look at.
fn passkey_call(session: &Session, path: &str, body: &Value) -> langcamp_testkit::Call {
    session
        .call(hyper::Method::POST, path)
        .header("x-forwarded-for", &fresh_client())
        .json(body)
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

#[tokio::test]
async fn a_credential_registered_already_is_a_conflict() {
    let app = app().await;
    let ana = app.sign_in("ana@example.com").await;
    let (passkey, ana, _) = register(&app, &ana, "Laptop").await;
    // The same authenticator's credential again, by its owner (a browser would not offer
    // it: the options exclude it) ...
    let options = ana.post("/me/passkeys/options", &json!({})).await;
    let (_, credential) =
        SoftPasskey::create_with_id(&options["options"], ORIGIN, passkey.credential_id.clone());
    ana.post(
        "/me/passkeys",
        &json!({ "challengeId": options["challengeId"], "credential": credential, "name": "Again" }),
    )
    .fails(409, "CONFLICT")
    .await;
    // ... and by someone else.
    let ben = app.sign_in("ben@example.com").await;
    let options = ben.post("/me/passkeys/options", &json!({})).await;
    let (_, credential) =
        SoftPasskey::create_with_id(&options["options"], ORIGIN, passkey.credential_id.clone());
    ben.post(
        "/me/passkeys",
        &json!({ "challengeId": options["challengeId"], "credential": credential, "name": "Copy" }),
    )
    .fails(409, "CONFLICT")
    .await;
    assert_eq!(
        app.count("SELECT COUNT(*) FROM user_factors WHERE kind = 'passkey'")
            .await,
        1
    );
}

/// Creation options for `session` and a software passkey's answer to them: the body of
/// `POST /me/passkeys`, to send later.
async fn registration_body(session: &Session, name: &str) -> Value {
    let options = passkey_call(session, "/me/passkeys/options", &json!({}))
        .expect(200)
        .await
        .data();
    let (_, credential) = SoftPasskey::create(&options["options"], ORIGIN);
    json!({ "challengeId": options["challengeId"], "credential": credential, "name": name })
}

/// The statuses of `calls` sent at once, sorted.
async fn at_once(calls: Vec<langcamp_testkit::Call>) -> Vec<u16> {
    let answers = futures_util::future::join_all(calls.into_iter().map(|call| call.send())).await;
    let mut statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    statuses.sort_unstable();
    statuses
}

/// The writes of one user's factors check what is there (the last factor, ten passkeys,
/// the first factor, one held at level 1) and then write: sent at once they run one at a
/// time (on PostgreSQL the user's row is taken), so no two pass a check together.
#[tokio::test]
async fn concurrent_factor_writes_of_one_user_pass_their_checks_one_at_a_time() {
    let app = app().await;

    // Staff keep their last factor: of two removals at once, one is refused.
    let mut office = app.admin().await;
    for round in 0..5 {
        let (_, with_passkey, _) = register(&app, &office, &format!("Key {round}")).await;
        office = with_passkey;
        let factors = office.get("/me/factors").await["factors"].clone();
        let removals = factors
            .as_array()
            .expect("factors")
            .iter()
            .map(|f| office.delete(&format!("/me/factors/{}", f["id"].as_str().expect("id"))))
            .collect();
        assert_eq!(at_once(removals).await, [200, 409], "round {round}");
        let left = office.get("/me/factors").await["factors"].clone();
        assert_eq!(left.as_array().map(Vec::len), Some(1), "round {round}");
    }

    // At most ten passkeys, however many registrations arrive at once.
    let ana = app.student("ana@example.com").await;
    let (_, mut ana, _) = register(&app, &ana, "Key 1").await;
    for n in 2..=9 {
        ana = register(&app, &ana, &format!("Key {n}")).await.1;
    }
    let bodies = [
        registration_body(&ana, "Key 10").await,
        registration_body(&ana, "Key 11").await,
    ];
    let registrations = bodies
        .iter()
        .map(|body| passkey_call(&ana, "/me/passkeys", body))
        .collect();
    assert_eq!(at_once(registrations).await, [201, 409]);
    let passkeys = format!(
        "SELECT COUNT(*) FROM user_factors WHERE kind = 'passkey' AND user_id = '{}'",
        ana.user_id
    );
    assert_eq!(app.count(sqlx::AssertSqlSafe(passkeys)).await, 10);

    // Two first factors at once from one level-1 sign-in: the first is the first factor
    // (and brings the recovery codes); the other then meets a factor it must pass first.
    let ben = app.student("ben@example.com").await;
    let totp = ben
        .post("/me/factors/totp", &json!({ "name": "Phone" }))
        .created()
        .await;
    let confirm = ben.post(
        &format!(
            "/me/factors/totp/{}/confirm",
            totp["id"].as_str().expect("id")
        ),
        &json!({ "code": app.totp_code(totp["secret"].as_str().expect("secret")) }),
    );
    let passkey = passkey_call(&ben, "/me/passkeys", &registration_body(&ben, "Key").await);
    let statuses = at_once(vec![confirm, passkey]).await;
    assert!(
        statuses == [200, 403] || statuses == [201, 403],
        "one first factor: {statuses:?}"
    );
    assert_eq!(
        app.count("SELECT COUNT(*) FROM user_factors WHERE confirmed_at IS NOT NULL AND user_id IN (SELECT id FROM users WHERE email = 'ben@example.com')")
            .await,
        1
    );
    assert_eq!(
        app.count("SELECT COUNT(*) FROM recovery_codes").await,
        30,
        "office's, ana's and ben's first factors brought ten each"
    );
}
