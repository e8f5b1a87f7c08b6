//! CONTRACT §20: a second factor. Enrolment, the second step of a sign-in, recovery codes,
//! the highest available assurance, step-up, the lock-out, resets, the security notice
//! mail and the audit entries, and secrets never readable from the database.
//!
//! Every test runs on a manual clock, so the codes an authenticator app would show are
//! the app clock's ([`TestApp::totp_code`]).

use chrono::TimeDelta;
use serde_json::{Value, json};

use crate::helpers::{Call, Session, TestApp, utc};

fn start() -> chrono::DateTime<chrono::Utc> {
    utc(2026, 11, 23, 9, 0, 0)
}

/// The service on a manual clock at [`start`], with the setting `name` = `value`.
async fn app_with(name: &str, value: &str) -> TestApp {
    TestApp::builder()
        .manual_clock(start())
        .var(name, value)
        .spawn()
        .await
}

/// Starts a TOTP factor as `session`: (its id, its base32 secret).
async fn start_totp(session: &Session) -> (String, String) {
    let enrolment = session
        .post("/me/factors/totp", &json!({ "name": "Phone" }))
        .created()
        .await;
    let uri = enrolment["otpauthUri"].as_str().expect("otpauthUri");
    assert!(uri.starts_with("otpauth://totp/"), "{uri}");
    (
        enrolment["id"].as_str().expect("id").to_owned(),
        enrolment["secret"].as_str().expect("secret").to_owned(),
    )
}

/// Adds a TOTP factor as `session` through the API, the way an authenticator app would:
/// the confirmation's answer (new tokens, the recovery codes) and the factor's secret.
async fn add_totp(app: &TestApp, session: &Session) -> (Value, String) {
    let (id, secret) = start_totp(session).await;
    let added = session
        .post(
            &format!("/me/factors/totp/{id}/confirm"),
            &json!({ "code": app.totp_code(&secret) }),
        )
        .expect(200)
        .await
        .data();
    (added, secret)
}

/// Each call is refused with 403 `SECOND_FACTOR_REQUIRED`: its caller's sign-in is at
/// level 1 and must take its second step (or enrol) first.
async fn refused_until_the_second_step(calls: impl IntoIterator<Item = Call>) {
    for call in calls {
        call.fails(403, "SECOND_FACTOR_REQUIRED").await;
    }
}

/// The same caller with the tokens of a sign-in answer.
fn with_tokens(app: &TestApp, session: &Session, data: &Value) -> Session {
    app.with_tokens(session, data)
}

/// The assurance level an access token carries, as the server reads it.
async fn level_of(app: &TestApp, session: &Session) -> u8 {
    app.core
        .authenticate(&session.access)
        .await
        .expect("a valid token")
        .assurance
        .level
}

async fn verify(session: &Session, method: &str, code: &str) -> langcamp_testkit::TestResponse {
    session
        .post(
            "/auth/second-factor/verify",
            &json!({ "method": method, "code": code }),
        )
        .send()
        .await
}

async fn audit_actions(app: &TestApp, user_id: &str) -> Vec<String> {
    let rows: Vec<String> =
        sqlx::query_scalar("SELECT action FROM audit_events WHERE target_id = $1 ORDER BY at, id")
            .bind(user_id)
            .fetch_all(app.core.db().reader())
            .await
            .expect("the trail");
    rows
}

#[tokio::test]
async fn a_student_enrols_with_a_wrong_then_a_right_code_and_gets_ten_recovery_codes_once() {
    let app = TestApp::at(start()).await;
    let ana = app.sign_in("ana@example.com").await;
    let (id, secret) = start_totp(&ana).await;
    let confirm = format!("/me/factors/totp/{id}/confirm");

    let wrong = if app.totp_code(&secret) == "000000" {
        "111111"
    } else {
        "000000"
    };
    ana.post(&confirm, &json!({ "code": wrong }))
        .fails(400, "VALIDATION_FAILED")
        .await;
    let listed = ana.get("/me/factors").await;
    assert_eq!(listed["factors"], json!([]), "still pending: no factor yet");

    let added = ana
        .post(&confirm, &json!({ "code": app.totp_code(&secret) }))
        .expect(200)
        .await
        .data();
    assert_eq!(added["aal"], 2);
    assert_eq!(added["factor"]["type"], "totp");
    assert_eq!(added["factor"]["name"], "Phone");
    let codes: Vec<&str> = added["recoveryCodes"]
        .as_array()
        .expect("codes with the first factor")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(codes.len(), 10);
    for code in &codes {
        assert_eq!(code.len(), 9, "{code}");
        assert_eq!(&code[4..5], "-");
        assert!(
            code.chars()
                .all(|c| c == '-' || c.is_ascii_lowercase() || c.is_ascii_digit())
        );
    }
    let ana = with_tokens(&app, &ana, &added);
    assert_eq!(level_of(&app, &ana).await, 2);
    let listed = ana.get("/me/factors").await;
    assert_eq!(listed["recoveryCodesLeft"], 10);
    assert_eq!(listed["factors"][0]["type"], "totp");
    assert!(
        listed.to_string().find(&secret).is_none(),
        "never the secret again"
    );

    // A second TOTP is refused; a refresh keeps level 2.
    app.clock.advance(TimeDelta::seconds(1));
    let refreshed = app.refresh(&ana.refresh).expect(200).await.data();
    let refreshed = with_tokens(&app, &ana, &refreshed);
    assert_eq!(
        level_of(&app, &refreshed).await,
        2,
        "a refresh keeps the level"
    );
    refreshed
        .post("/me/factors/totp", &json!({}))
        .fails(409, "CONFLICT")
        .await;
}

#[tokio::test]
async fn a_sign_in_says_what_comes_next_and_a_user_with_a_factor_is_held_to_it() {
    let app = TestApp::at(start()).await;
    let ana = app.with_totp(app.student("ana@example.com").await).await;
    let secret = ana.totp_secret.clone().expect("a secret");

    // The e-mail code alone: level 1, and the factor is required next.
    let answer = app.otp_answer("ana@example.com").await;
    assert_eq!(answer["aal"], 1);
    assert_eq!(answer["secondFactor"], "required");
    assert_eq!(answer["methods"], json!(["totp", "recovery"]));
    let short = with_tokens(&app, &ana, &answer);
    short.get("/me").expect(200).await;
    short.get("/me/factors").expect(200).await;
    refused_until_the_second_step([
        short.get("/proficiency-tests/results/me"),
        short.patch("/me/profile", &json!({ "city": "Faro" })),
        // Whoever reads the mailbox cannot add a factor of their own.
        short.post("/me/factors/totp", &json!({})),
    ])
    .await;

    app.clock.advance(TimeDelta::seconds(30));
    let raised = verify(&short, "totp", &app.totp_code(&secret))
        .await
        .expect(200)
        .data();
    assert_eq!(raised["aal"], 2);
    assert_eq!(raised["secondFactor"], "none");
    let ana = with_tokens(&app, &ana, &raised);
    ana.get("/proficiency-tests/results/me").expect(200).await;
    // The earlier refresh token of the sign-in was rotated away.
    app.refresh(&short.refresh)
        .fails(401, "TOKEN_INVALID")
        .await;

    // A student without a factor, and staff without one, are told so.
    let bea = app.otp_answer("bea@example.com").await;
    assert_eq!(
        (bea["aal"].clone(), bea["secondFactor"].clone()),
        (json!(1), json!("none"))
    );
    assert_eq!(bea["methods"], json!([]));
}

#[tokio::test]
async fn staff_at_level_one_reach_only_their_own_account_until_they_enrol() {
    let app = TestApp::at(start()).await;
    app.add_user("office@school.test", langcamp_core::Role::Admin)
        .await;
    let answer = app.otp_answer("office@school.test").await;
    assert_eq!(answer["secondFactor"], "enroll");
    let office = app.sign_in_through_core("office@school.test").await;
    office.get("/me").expect(200).await;
    refused_until_the_second_step([
        office.get("/users"),
        office.post("/courses", &json!({ "title": "A1" })),
    ])
    .await;
    // Public routes show it what they show anyone: no unpublished course.
    let root = app.superadmin().await;
    root.post(
        "/courses",
        &json!({ "title": "Draft", "isPublished": false }),
    )
    .created()
    .await;
    assert_eq!(office.get("/courses").await, json!([]));

    let (added, _) = add_totp(&app, &office).await;
    let office = with_tokens(&app, &office, &added);
    office.get("/users").expect(200).await;
}

#[tokio::test]
async fn staff_under_the_optional_policy_work_without_a_factor_until_they_add_one() {
    let app = app_with("STAFF_SECOND_FACTOR", "optional").await;
    app.add_user("office@school.test", langcamp_core::Role::Admin)
        .await;
    let office = app.sign_in_through_core("office@school.test").await;
    office.get("/users").expect(200).await;
    // Without a factor step-up does not apply.
    office.get("/admin/exports/users.csv").expect(200).await;
}

#[tokio::test]
async fn a_totp_code_works_once_and_a_recovery_code_once() {
    let app = TestApp::at(start()).await;
    let ana = app.student("ana@example.com").await;
    let (added, secret) = add_totp(&app, &ana).await;
    let first_code = added["recoveryCodes"][0]
        .as_str()
        .expect("a code")
        .to_owned();

    // The code that confirmed the factor cannot verify a sign-in in the same time step.
    let short = app.sign_in_through_core("ana@example.com").await;
    verify(&short, "totp", &app.totp_code(&secret))
        .await
        .fails(401, "OTP_INVALID");
    app.clock.advance(TimeDelta::seconds(30));
    let code = app.totp_code(&secret);
    verify(&short, "totp", &code).await.expect(200);
    let again = app.sign_in_through_core("ana@example.com").await;
    verify(&again, "totp", &code)
        .await
        .fails(401, "OTP_INVALID");

    // A recovery code in capitals and without its dash, then the same again.
    let shouted = first_code.replace('-', "").to_uppercase();
    verify(&again, "recovery", &shouted).await.expect(200);
    let third = app.sign_in_through_core("ana@example.com").await;
    verify(&third, "recovery", &first_code)
        .await
        .fails(401, "OTP_INVALID");
    assert_eq!(
        third.get("/me/factors").await["recoveryCodesLeft"],
        9,
        "one code used"
    );
    assert!(
        audit_actions(&app, &ana.user_id)
            .await
            .contains(&"recovery_code.used".to_owned())
    );
}

#[tokio::test]
async fn five_wrong_codes_end_the_sign_in() {
    let app = TestApp::at(start()).await;
    let ana = app.with_totp(app.student("ana@example.com").await).await;
    let short = app.sign_in_through_core("ana@example.com").await;
    let right = app.totp_code(ana.totp_secret.as_deref().expect("a secret"));
    let wrong = if right == "123456" {
        "654321"
    } else {
        "123456"
    };
    for _ in 0..4 {
        verify(&short, "totp", wrong)
            .await
            .fails(401, "OTP_INVALID");
    }
    short.get("/me").expect(200).await;
    verify(&short, "recovery", "aaaa-bbbb")
        .await
        .fails(401, "OTP_INVALID");
    short.get("/me").fails(401, "TOKEN_INVALID").await;
    app.refresh(&short.refresh)
        .fails(401, "TOKEN_INVALID")
        .await;
    assert!(
        audit_actions(&app, &ana.user_id)
            .await
            .contains(&"auth.second_factor_locked".to_owned())
    );
    // Another sign-in of the same user is not touched.
    ana.get("/me").expect(200).await;
}

#[tokio::test]
async fn step_up_asks_for_a_recent_check_before_what_can_empty_the_schools_data() {
    let app = app_with("STEP_UP_MAX_AGE", "5m").await;
    let root = app.superadmin().await;
    let student = app.student("ana@example.com").await;
    root.get("/admin/exports/users.csv").expect(200).await;

    app.clock.advance(TimeDelta::minutes(6));
    let sensitive = [
        ("GET", "/admin/exports/users.csv".to_owned()),
        ("GET", format!("/admin/users/{}/export", student.user_id)),
        ("DELETE", format!("/users/{}", student.user_id)),
        (
            "DELETE",
            format!("/admin/users/{}/factors", student.user_id),
        ),
        ("POST", "/me/recovery-codes".to_owned()),
    ];
    for (method, path) in &sensitive {
        let method = hyper::Method::from_bytes(method.as_bytes()).expect("a method");
        root.call(method, path)
            .send()
            .await
            .fails(403, "STEP_UP_REQUIRED");
    }
    root.set_role(&student.user_id, "admin")
        .fails(403, "STEP_UP_REQUIRED")
        .await;
    // Everything else still works.
    root.get("/users").expect(200).await;

    // Verifying again raises the check's time; the retry passes.
    let secret = root.totp_secret.clone().expect("a secret");
    let again = verify(&root, "totp", &app.totp_code(&secret))
        .await
        .expect(200)
        .data();
    let root = with_tokens(&app, &root, &again);
    root.get("/admin/exports/users.csv").expect(200).await;
    root.set_role(&student.user_id, "admin").expect(200).await;
}

#[tokio::test]
async fn staff_keep_their_last_factor_and_removing_one_needs_step_up() {
    let app = TestApp::at(start()).await;
    let office = app.admin().await;
    let factors = office.get("/me/factors").await;
    let id = factors["factors"][0]["id"]
        .as_str()
        .expect("a factor")
        .to_owned();
    office
        .delete(&format!("/me/factors/{id}"))
        .fails(409, "CONFLICT")
        .await;

    // A student removes theirs; the recovery codes go with the last factor.
    let ana = app.with_totp(app.student("ana@example.com").await).await;
    let id = ana.get("/me/factors").await["factors"][0]["id"]
        .as_str()
        .expect("a factor")
        .to_owned();
    app.clock.advance(TimeDelta::minutes(11));
    ana.delete(&format!("/me/factors/{id}"))
        .fails(403, "STEP_UP_REQUIRED")
        .await;
    let secret = ana.totp_secret.clone().expect("a secret");
    let again = verify(&ana, "totp", &app.totp_code(&secret))
        .await
        .expect(200)
        .data();
    let ana = with_tokens(&app, &ana, &again);
    ana.delete(&format!("/me/factors/{id}")).expect(200).await;
    let left = ana.get("/me/factors").await;
    assert_eq!(left, json!({ "factors": [], "recoveryCodesLeft": 0 }));
    let actions = audit_actions(&app, &ana.user_id).await;
    assert_eq!(
        actions,
        [
            "user.created",
            "factor.added",
            "recovery_codes.created",
            "factor.removed"
        ]
    );
    let changes: Vec<Option<String>> =
        sqlx::query_scalar("SELECT changes FROM audit_events WHERE target_id = $1")
            .bind(&ana.user_id)
            .fetch_all(app.core.db().reader())
            .await
            .expect("the entries' changes");
    assert!(
        changes.iter().flatten().all(|c| !c.contains(&secret)),
        "no secret in any entry: {changes:?}"
    );
}

#[tokio::test]
async fn a_superadmin_resets_a_colleagues_factors_and_ends_their_sign_ins() {
    let app = TestApp::at(start()).await;
    let root = app.superadmin().await;
    let office = app.admin().await;
    office.get("/users").expect(200).await;

    office
        .delete(&format!("/admin/users/{}/factors", root.user_id))
        .fails(403, "FORBIDDEN")
        .await;
    root.delete(&format!("/admin/users/{}/factors", root.user_id))
        .fails(400, "VALIDATION_FAILED")
        .await;
    root.delete(&format!("/admin/users/{}/factors", office.user_id))
        .expect(200)
        .await;
    office.get("/me").fails(401, "TOKEN_INVALID").await;
    let factors: i64 = app
        .count(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM user_factors WHERE user_id = '{}'",
            office.user_id
        )))
        .await;
    assert_eq!(factors, 0);
    assert!(
        audit_actions(&app, &office.user_id)
            .await
            .contains(&"user.factors_reset".to_owned())
    );
    // The next sign-in enrols again.
    let answer = app.otp_answer(&office.email).await;
    assert_eq!(answer["secondFactor"], "enroll");
}

#[tokio::test]
async fn each_change_is_told_to_the_user_by_mail_in_their_language() {
    let app = TestApp::at(start()).await;
    let ana = app.student("ana@example.com").await;
    ana.patch("/me/profile", &json!({ "locale": "de-AT" }))
        .expect(200)
        .await;
    let ana = app.with_totp(ana).await;
    let mails = app.mail_to("ana@example.com", 2).await;
    let subjects: Vec<String> = mails.iter().filter_map(|m| m.header("Subject")).collect();
    assert_eq!(
        subjects,
        [
            "Sicherheitshinweis von Langcamp",
            "Sicherheitshinweis von Langcamp"
        ]
    );
    let texts: Vec<String> = mails.iter().map(|m| m.text_body()).collect();
    assert!(
        texts[0].contains("zweiter Faktor hinzugefügt: Test authenticator"),
        "{}",
        texts[0]
    );
    assert!(texts[1].contains("Wiederherstellungscodes"), "{}", texts[1]);
    assert!(
        texts
            .iter()
            .all(|t| !t.contains(ana.totp_secret.as_deref().unwrap_or("-"))),
        "no secret in a mail"
    );
}

#[tokio::test]
async fn no_totp_secret_is_readable_from_the_database() {
    let app = TestApp::at(start()).await;
    let ana = app.student("ana@example.com").await;
    let (_, secret) = start_totp(&ana).await;
    let raw = {
        let mut bytes = Vec::new();
        let mut bits = 0u32;
        let mut acc = 0u32;
        for c in secret.chars() {
            let value = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".find(c).expect("base32") as u32;
            acc = (acc << 5) | value;
            bits += 5;
            if bits >= 8 {
                bits -= 8;
                bytes.push((acc >> bits) as u8);
                acc &= (1 << bits) - 1;
            }
        }
        bytes
    };
    assert_eq!(raw.len(), 20, "a 160-bit secret");
    let stored: Vec<u8> = sqlx::query_scalar("SELECT totp_secret FROM user_factors")
        .fetch_one(app.core.db().reader())
        .await
        .expect("the stored secret");
    assert!(
        !stored.windows(raw.len()).any(|w| w == raw.as_slice()),
        "the raw secret is not stored"
    );
    assert!(
        !stored.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "nor its base32"
    );
    let row: String = sqlx::query_scalar("SELECT id || name || kind || user_id FROM user_factors")
        .fetch_one(app.core.db().reader())
        .await
        .expect("the row's text");
    assert!(!row.contains(&secret));
}
