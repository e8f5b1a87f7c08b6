//! CONTRACT §22: keys that survive restarts and rotate without loss. The embedded
//! default's secret kept in `DATA_DIR/secret.key`; a rotation with `JWT_SECRET_PREVIOUS`
//! that ends no sign-in, voids no code and loses no mail; `keys reseal` and then the old
//! secret gone; a lost secret answered 409 and counted; the account's second step locked
//! after ten wrong answers; `Cache-Control: no-store` on what carries a secret; step-up
//! for another user's e-mail.
//!
//! Every test runs on a manual clock, so the codes an authenticator app would show are
//! the app clock's ([`TestApp::totp_code`]).

use chrono::TimeDelta;
use langcamp_core::Actor;
use langcamp_core::platform::keyring::{KeyCounts, Keyring};
use serde_json::{Value, json};

use crate::helpers::{Session, TestApp, fresh_client, utc};

const OLD: &str = "the-old-server-secret-0123456789";
const NEW: &str = "the-new-server-secret-0123456789";

fn start() -> chrono::DateTime<chrono::Utc> {
    utc(2026, 12, 2, 9, 0, 0)
}

/// The service on a manual clock at [`start`], signing with `secret` (empty: none set).
async fn app_with_secret(secret: &str) -> TestApp {
    TestApp::builder()
        .manual_clock(start())
        .var("JWT_SECRET", secret)
        .spawn()
        .await
}

/// A student who added a TOTP factor through the API: their level-2 session, the factor's
/// secret and their ten recovery codes.
async fn student_with_totp(app: &TestApp, email: &str) -> (Session, String, Vec<String>) {
    let session = app.sign_in_through_core(email).await;
    let enrolment = session
        .post("/me/factors/totp", &json!({ "name": "Phone" }))
        .created()
        .await;
    let secret = enrolment["secret"].as_str().expect("secret").to_owned();
    let confirm = format!(
        "/me/factors/totp/{}/confirm",
        enrolment["id"].as_str().expect("id")
    );
    let added = session
        .post(&confirm, &json!({ "code": app.totp_code(&secret) }))
        .expect(200)
        .await
        .data();
    let codes = added["recoveryCodes"]
        .as_array()
        .expect("recovery codes with the first factor")
        .iter()
        .map(|c| c.as_str().expect("a code").to_owned())
        .collect();
    let mut session = app.with_tokens(&session, &added);
    session.totp_secret = Some(secret.clone());
    (session, secret, codes)
}

/// A new sign-in of `email` (the e-mail code, through core) and its second step with
/// `method` and `code`.
async fn second_step(
    app: &TestApp,
    email: &str,
    method: &str,
    code: &str,
) -> langcamp_testkit::TestResponse {
    let first = app.sign_in_through_core(email).await;
    answer(&first, method, code).await
}

/// `POST /auth/second-factor/verify` as `session`.
/// `POST /auth/second-factor/verify` as `session`, each from a client address of its own
/// (the per-address rate limit is not what these tests look at).
async fn answer(session: &Session, method: &str, code: &str) -> langcamp_testkit::TestResponse {
    session
        .call(hyper::Method::POST, "/auth/second-factor/verify")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({ "method": method, "code": code }))
        .send()
        .await
}

/// The `kid` of an access token's header.
fn kid_of(token: &str) -> String {
    let header = token.split('.').next().expect("a JWT");
    let bytes = base64_url_decode(header);
    let header: Value = serde_json::from_slice(&bytes).expect("a JSON header");
    header["kid"].as_str().expect("a kid").to_owned()
}

fn base64_url_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes() {
        let value = ALPHABET.iter().position(|b| *b == byte).expect("base64url") as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    out
}

async fn counts(app: &TestApp) -> KeyCounts {
    app.core
        .key_counts(&Actor::Operator)
        .await
        .expect("the counts")
}

/// The TOTP code of the next time step (the current one may be spent already).
fn next_code(app: &TestApp, secret: &str) -> String {
    langcamp_core::auth::totp::code_from_base32(secret, app.core.clock().now_ms() + 30_000)
        .expect("a base32 secret")
}

#[tokio::test]
async fn without_jwt_secret_the_first_start_keeps_a_secret_that_a_restart_reads_again() {
    let mut app = app_with_secret("").await;
    let file = app.data_dir.join("secret.key");
    let kept = std::fs::read_to_string(&file).expect("the first start made the secret file");
    assert_eq!(kept.trim().len(), 64, "256 bits, hexadecimal");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file)
            .expect("there")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "readable by the service's user only");
    }
    let (ana, secret, _) = student_with_totp(&app, "ana@example.com").await;

    app.restart_with(&[]).await;
    assert_eq!(std::fs::read_to_string(&file).expect("still there"), kept);
    let ana = app.bind(&ana);
    ana.get("/me").expect(200).await;
    app.clock.advance(TimeDelta::seconds(60));
    let raised = second_step(&app, "ana@example.com", "totp", &app.totp_code(&secret))
        .await
        .expect(200)
        .data();
    assert_eq!(raised["aal"], 2, "the TOTP secret still opens: {raised}");
}

#[tokio::test]
async fn a_rotation_ends_no_sign_in_voids_no_code_and_loses_no_mail() {
    let mut app = app_with_secret(OLD).await;
    let (ana, secret, codes) = student_with_totp(&app, "ana@example.com").await;
    let old_kid = Keyring::new(OLD, &[]).current().id();
    assert_eq!(kid_of(&ana.access), old_kid, "a token names its key");
    let ben_code = app.request_code("ben@example.com").await;

    // A sign-in code queued while no worker runs: sealed under the old secret, sent after.
    app.stop_mail_too().await;
    let carla = langcamp_core::domain::validate::Email::parse("email", "carla@example.com")
        .expect("an address");
    app.core.request_otp(carla, None).await.expect("queued");

    app.restart_with(&[("JWT_SECRET", NEW), ("JWT_SECRET_PREVIOUS", OLD)])
        .await;
    let ana = app.bind(&ana);
    ana.get("/me").expect(200).await;
    let refreshed = app.refresh(&ana.refresh).send().await.expect(200).data();
    let new_token = refreshed["accessToken"].as_str().expect("a token");
    assert_eq!(kid_of(new_token), Keyring::new(NEW, &[]).current().id());
    app.with_token(new_token).get("/me").expect(200).await;

    for (email, code) in [("ben@example.com", ben_code)] {
        app.post("/auth/otp/verify")
            .json(&json!({ "email": email, "code": code }))
            .send()
            .await
            .expect(200);
    }
    let carla_mail = app.mail_to("carla@example.com", 1).await;
    let carla_code = crate::helpers::extract_code(&carla_mail[0].text_body())
        .expect("the mail queued under the old secret was sent");
    app.post("/auth/otp/verify")
        .json(&json!({ "email": "carla@example.com", "code": carla_code }))
        .send()
        .await
        .expect(200);

    assert_eq!(counts(&app).await.need_previous, 1, "ana's TOTP secret");
    app.clock.advance(TimeDelta::seconds(60));
    let raised = second_step(&app, "ana@example.com", "totp", &app.totp_code(&secret))
        .await
        .expect(200)
        .data();
    assert_eq!(raised["aal"], 2);
    assert_eq!(
        counts(&app).await,
        KeyCounts::default(),
        "the check sealed the secret again under the new key"
    );
    second_step(&app, "ana@example.com", "recovery", &codes[0])
        .await
        .expect(200);
}

#[tokio::test]
async fn after_keys_reseal_the_previous_secret_can_go() {
    let mut app = app_with_secret(OLD).await;
    let (ana, secret, _) = student_with_totp(&app, "ana@example.com").await;
    student_with_totp(&app, "dora@example.com").await;
    app.outbox_drained().await;
    app.restart_with(&[("JWT_SECRET", NEW), ("JWT_SECRET_PREVIOUS", OLD)])
        .await;
    assert_eq!(counts(&app).await.need_previous, 2);

    let resealed = app
        .core
        .reseal_keys(&Actor::Operator)
        .await
        .expect("resealed");
    assert_eq!(
        resealed,
        KeyCounts {
            resealed: 2,
            need_previous: 0,
            unreadable: 0
        }
    );
    let again = app
        .core
        .reseal_keys(&Actor::Operator)
        .await
        .expect("resealed");
    assert_eq!(again, KeyCounts::default(), "idempotent");
    let entries = app
        .count("SELECT COUNT(*) FROM audit_events WHERE action = 'keys.resealed'")
        .await;
    assert_eq!(entries, 1, "recorded when it changed something");

    app.restart_with(&[("JWT_SECRET_PREVIOUS", "")]).await;
    app.clock.advance(TimeDelta::seconds(60));
    second_step(&app, "ana@example.com", "totp", &next_code(&app, &secret))
        .await
        .expect(200);
    app.bind(&ana).get("/me").fails(401, "TOKEN_INVALID").await;
}

#[tokio::test]
async fn a_value_no_key_opens_is_a_conflict_never_a_server_error() {
    let mut app = app_with_secret(OLD).await;
    let (_, secret, codes) = student_with_totp(&app, "ana@example.com").await;
    app.outbox_drained().await;
    app.stop_mail_too().await;
    let ana = langcamp_core::domain::validate::Email::parse("email", "ana@example.com")
        .expect("an address");
    app.core.request_otp(ana, None).await.expect("queued");

    // The old secret is lost: not even in JWT_SECRET_PREVIOUS.
    app.restart_with(&[("JWT_SECRET", NEW)]).await;
    app.clock.advance(TimeDelta::seconds(60));
    let refused = second_step(&app, "ana@example.com", "totp", &app.totp_code(&secret))
        .await
        .fails(409, "CONFLICT");
    let message = refused.errors().join(" ");
    assert!(message.contains("reset"), "{message}");
    second_step(&app, "ana@example.com", "recovery", &codes[0])
        .await
        .expect(200);

    let mut failed = false;
    for _ in 0..500 {
        let row: Option<(String, i64)> = sqlx::query_as(
            "SELECT status, attempts FROM mail_outbox WHERE recipient = 'ana@example.com' AND kind = 'otp'",
        )
        .fetch_optional(app.core.db().reader())
        .await
        .expect("the mail");
        if let Some((status, attempts)) = row
            && status != "pending"
        {
            assert_eq!(
                (status.as_str(), attempts),
                ("failed", 1),
                "failed at once, never retried"
            );
            failed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(failed, "the mail no key opens is marked failed");
    assert_eq!(counts(&app).await.unreadable, 1, "the TOTP secret");
}

#[tokio::test]
async fn ten_wrong_answers_in_a_row_lock_the_second_step_for_fifteen_minutes() {
    let app = app_with_secret(OLD).await;
    let (ana, secret, _) = student_with_totp(&app, "ana@example.com").await;
    let wrong = |n: usize| format!("{:06}", (n * 7919) % 1_000_000);
    let mut sent = 0;
    for _ in 0..2 {
        let first = app.sign_in_through_core("ana@example.com").await;
        for _ in 0..5 {
            let mut code = wrong(sent);
            if code == app.totp_code(&secret) {
                code = wrong(sent + 1000);
            }
            answer(&first, "totp", &code)
                .await
                .fails(401, "OTP_INVALID");
            sent += 1;
        }
    }
    let first = app.sign_in_through_core("ana@example.com").await;
    let locked = answer(&first, "totp", &app.totp_code(&secret)).await;
    let retry_after = locked.retry_after();
    assert!((1..=900).contains(&retry_after), "{retry_after}");
    locked.fails(429, "RATE_LIMITED");
    answer(&first, "recovery", "aaaa-bbbb")
        .await
        .fails(429, "RATE_LIMITED");

    let notices = app.mail_to("ana@example.com", 3).await;
    assert!(
        notices
            .iter()
            .any(|m| m.text_body().contains("locked for 15 minutes")),
        "the user is told"
    );
    let lock: Option<String> = sqlx::query_scalar(
        "SELECT changes FROM audit_events WHERE action = 'auth.second_factor_locked' AND target_id = $1 AND changes LIKE '%lockedUntil%'",
    )
    .bind(&ana.user_id)
    .fetch_optional(app.core.db().reader())
    .await
    .expect("the trail");
    assert!(lock.is_some(), "the lock is audited");

    app.clock.advance(TimeDelta::minutes(15));
    let raised = answer(&first, "totp", &next_code(&app, &secret))
        .await
        .expect(200)
        .data();
    assert_eq!(
        raised["aal"], 2,
        "a right answer after the lock ends passes"
    );
    // ... and starts the count anew: nine wrong answers lock nothing.
    app.clock.advance(TimeDelta::seconds(90));
    for n in 0..9 {
        let first = app.sign_in_through_core("ana@example.com").await;
        let mut code = wrong(n + 500);
        if code == app.totp_code(&secret) {
            code = wrong(n + 1500);
        }
        answer(&first, "totp", &code)
            .await
            .fails(401, "OTP_INVALID");
    }
    second_step(&app, "ana@example.com", "totp", &app.totp_code(&secret))
        .await
        .expect(200);
}

#[tokio::test]
async fn answers_that_carry_tokens_secrets_or_codes_are_never_stored() {
    let app = app_with_secret(OLD).await;
    let no_store = |response: &langcamp_testkit::TestResponse, what: &str| {
        assert_eq!(response.header("cache-control"), Some("no-store"), "{what}");
    };
    let code = app.request_code("ana@example.com").await;
    let signed_in = app
        .post("/auth/otp/verify")
        .json(&json!({ "email": "ana@example.com", "code": code }))
        .send()
        .await;
    no_store(&signed_in, "the sign-in");
    let data = signed_in.expect(200).data();
    let refreshed = app
        .refresh(data["refreshToken"].as_str().expect("a refresh token"))
        .send()
        .await;
    no_store(&refreshed, "a refresh");
    let data = refreshed.expect(200).data();
    let ana = app.with_token(data["accessToken"].as_str().expect("a token"));

    let enrolment = ana
        .call(hyper::Method::POST, "/me/factors/totp")
        .json(&json!({ "name": "Phone" }))
        .send()
        .await;
    no_store(&enrolment, "a TOTP secret");
    let enrolment = enrolment.expect(201).data();
    let secret = enrolment["secret"].as_str().expect("secret").to_owned();
    let confirmed = ana
        .call(
            hyper::Method::POST,
            &format!(
                "/me/factors/totp/{}/confirm",
                enrolment["id"].as_str().expect("id")
            ),
        )
        .json(&json!({ "code": app.totp_code(&secret) }))
        .send()
        .await;
    no_store(&confirmed, "recovery codes and tokens");
    let data = confirmed.expect(200).data();
    let ana = app.with_token(data["accessToken"].as_str().expect("a token"));
    let codes = ana
        .call(hyper::Method::POST, "/me/recovery-codes")
        .json(&json!({}))
        .send()
        .await;
    no_store(&codes, "new recovery codes");
    codes.expect(200);

    app.clock.advance(TimeDelta::seconds(60));
    let first = app.sign_in_through_core("ana@example.com").await;
    let raised = first
        .call(hyper::Method::POST, "/auth/second-factor/verify")
        .json(&json!({ "method": "totp", "code": app.totp_code(&secret) }))
        .send()
        .await;
    no_store(&raised, "the second step");
    raised.expect(200);

    let profile = ana.call(hyper::Method::GET, "/me").send().await;
    assert_eq!(
        profile.header("cache-control"),
        None,
        "what carries no secret is not marked"
    );
}

#[tokio::test]
async fn changing_another_users_e_mail_needs_a_recent_second_factor_check() {
    let app = app_with_secret(OLD).await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    app.clock.advance(TimeDelta::minutes(11));
    let email = format!("/users/{}/email", student.user_id);
    let profile = format!("/admin/users/{}/profile", student.user_id);
    admin
        .patch(&email, &json!({ "email": "ana@elsewhere.example" }))
        .fails(403, "STEP_UP_REQUIRED")
        .await;
    admin
        .patch(&profile, &json!({ "email": "ana@elsewhere.example" }))
        .fails(403, "STEP_UP_REQUIRED")
        .await;
    admin
        .patch(&profile, &json!({ "name": "Ana Maria" }))
        .expect(200)
        .await;
    let admin = app.sign_in_again(&admin).await;
    admin
        .patch(&email, &json!({ "email": "ana@elsewhere.example" }))
        .expect(200)
        .await;
}
