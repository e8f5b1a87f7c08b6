//! Sign-in with one-time codes, tokens, registration and the own profile (CONTRACT §3).

use std::time::Duration;

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use crate::helpers::{
    Case, Client, Session, TestApp, assert_nulls_refused, assert_role_matrix, extract_code,
    registration, utc,
};

fn start() -> chrono::DateTime<Utc> {
    utc(2026, 11, 22, 10, 0, 0)
}

async fn verify(app: &TestApp, email: &str, code: &str) -> crate::helpers::TestResponse {
    app.post("/auth/otp/verify")
        .json(&json!({ "email": email, "code": code }))
        .send()
        .await
}

fn wrong(code: &str) -> String {
    format!(
        "{:06}",
        (code.parse::<u32>().expect("digits") + 1) % 1_000_000
    )
}

#[tokio::test]
async fn the_whole_sign_in_story_works() {
    let app = TestApp::spawn().await;
    let requested = app
        .post("/auth/otp/request")
        .json(&json!({ "email": "  Ana@Example.com " }))
        .await;
    assert_eq!(requested["expiresInSeconds"], 600);

    let mails = app.mail_to("ana@example.com", 1).await;
    assert_eq!(mails.len(), 1);
    let code = extract_code(&mails[0].text_body()).expect("a code in the mail");
    assert!(mails[0].html_body().is_some_and(|h| h.contains(&code)));

    let signed_in = app
        .post("/auth/otp/verify")
        .header("accept-language", "pt-PT,pt;q=0.9,en;q=0.5")
        .json(&json!({ "email": "ana@example.com", "code": code }))
        .await;
    assert_eq!(signed_in["registrationComplete"], false);
    assert_eq!(signed_in["user"]["isRegistrationComplete"], false);
    assert_eq!(signed_in["user"]["role"], "user");
    assert_eq!(signed_in["user"]["locale"], "pt-PT");
    assert_eq!(signed_in["user"]["email"], "ana@example.com");
    let access = signed_in["accessToken"]
        .as_str()
        .expect("access")
        .to_owned();
    let refresh = signed_in["refreshToken"]
        .as_str()
        .expect("refresh")
        .to_owned();

    let status = app.get("/auth/registration-status").bearer(&access).await;
    assert_eq!(status["isRegistrationComplete"], false);

    let completed = app
        .post("/auth/complete-registration")
        .bearer(&access)
        .json(&json!({
            "name": "Ana Silva", "age": 27, "gender": "female", "country": "Portugal",
            "countryCode": "+351", "phoneNumber": "912345678", "city": "Lisbon"
        }))
        .await;
    assert_eq!(completed["registrationComplete"], true);
    assert_eq!(completed["user"]["name"], "Ana Silva");
    assert_eq!(completed["user"]["isRegistrationComplete"], true);

    app.post("/auth/complete-registration")
        .bearer(&access)
        .json(&registration("Ana Silva", json!(27)))
        .fails(409, "CONFLICT")
        .await;

    let me = app.get("/me").bearer(&access).await;
    assert_eq!(me["city"], "Lisbon");
    assert_eq!(me["countryCode"], "+351");

    let pair = app
        .post("/auth/refresh")
        .json(&json!({ "refreshToken": refresh }))
        .await;
    let access2 = pair["accessToken"].as_str().expect("new access").to_owned();
    let refresh2 = pair["refreshToken"]
        .as_str()
        .expect("new refresh")
        .to_owned();
    assert_ne!(refresh2, refresh);
    app.get("/me").bearer(&access2).expect(200).await;

    app.post("/auth/logout").bearer(&access2).expect(200).await;
    app.get("/me")
        .bearer(&access2)
        .fails(401, "TOKEN_INVALID")
        .await;
    app.refresh(&refresh2).expect(401).await;

    // Signing in again with a known address keeps the user.
    let session = app.sign_in("ana@example.com").await;
    assert_eq!(session.user_id, me["id"].as_str().expect("id"));
}

#[tokio::test]
async fn codes_and_refresh_tokens_are_stored_only_as_hashes() {
    let app = TestApp::spawn().await;
    let code = app.request_code("hash@example.com").await;
    let stored: Vec<(String, String)> = sqlx::query_as("SELECT email, code_hash FROM otp_codes")
        .fetch_all(app.core.db().reader())
        .await
        .expect("read codes");
    assert_eq!(stored.len(), 1);
    assert!(!stored[0].1.contains(&code));
    assert_eq!(stored[0].1.len(), 64);

    // The outbox row is sealed and, once delivered, erased. The sink has the mail as soon
    // as the SMTP dialogue ends, a moment before the worker records the delivery: wait for it.
    let mut sealed: Vec<(Option<Vec<u8>>, String)> = Vec::new();
    for _ in 0..200 {
        sealed = sqlx::query_as("SELECT sealed, status FROM mail_outbox")
            .fetch_all(app.core.db().reader())
            .await
            .expect("read outbox");
        if sealed.iter().all(|(_, status)| status == "sent") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        sealed
            .iter()
            .all(|(body, status)| status == "sent" && body.is_none()),
        "{sealed:?}"
    );

    let session = app.sign_in("hash@example.com").await;
    let hashes: Vec<String> = sqlx::query_scalar("SELECT token_hash FROM refresh_tokens")
        .fetch_all(app.core.db().reader())
        .await
        .expect("read refresh tokens");
    assert!(!hashes.is_empty());
    assert!(
        hashes
            .iter()
            .all(|h| h != &session.refresh && !h.contains(&session.refresh))
    );
}

#[tokio::test]
async fn a_code_expires_after_its_ttl() {
    let app = TestApp::at(start()).await;
    let code = app.request_code("slow@example.com").await;
    app.clock
        .advance(TimeDelta::minutes(10) + TimeDelta::seconds(1));
    assert_eq!(
        verify(&app, "slow@example.com", &code)
            .await
            .expect(401)
            .code(),
        "OTP_INVALID"
    );
}

#[tokio::test]
async fn a_code_just_inside_its_ttl_still_works() {
    let app = TestApp::at(start()).await;
    let code = app.request_code("quick@example.com").await;
    app.clock
        .advance(TimeDelta::minutes(9) + TimeDelta::seconds(59));
    verify(&app, "quick@example.com", &code).await.expect(200);
}

#[tokio::test]
async fn five_wrong_tries_kill_a_code_whatever_the_client_address() {
    let app = TestApp::spawn().await;
    let code = app.request_code("target@example.com").await;
    for i in 0..5 {
        app.post("/auth/otp/verify")
            .header("x-forwarded-for", &format!("198.51.100.{i}"))
            .json(&json!({ "email": "target@example.com", "code": wrong(&code) }))
            .expect(401)
            .await;
    }
    app.post("/auth/otp/verify")
        .header("x-forwarded-for", "198.51.100.200")
        .json(&json!({ "email": "target@example.com", "code": code }))
        .fails(401, "OTP_INVALID")
        .await;
    // A new code works again.
    let fresh = app.request_code("target@example.com").await;
    verify(&app, "target@example.com", &fresh).await.expect(200);
}

#[tokio::test]
async fn concurrent_verifies_of_one_code_succeed_exactly_once() {
    let app = TestApp::spawn().await;
    let code = app.request_code("race@example.com").await;
    let attempts = (0..16).map(|i| {
        app.post("/auth/otp/verify")
            .header("x-forwarded-for", &format!("192.0.2.{i}"))
            .json(&json!({ "email": "race@example.com", "code": code }))
            .send()
    });
    let statuses: Vec<u16> = futures_util::future::join_all(attempts)
        .await
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 401),
        "{statuses:?}"
    );
    assert_eq!(app.rows("users").await, 1);
}

#[tokio::test]
async fn a_new_code_replaces_the_old_one() {
    let app = TestApp::spawn().await;
    let first = app.request_code("twice@example.com").await;
    let second = app.request_code("twice@example.com").await;
    if first != second {
        verify(&app, "twice@example.com", &first).await.expect(401);
    }
    verify(&app, "twice@example.com", &second).await.expect(200);
    // And it verifies only once.
    verify(&app, "twice@example.com", &second).await.expect(401);
}

#[tokio::test]
async fn a_code_only_works_for_its_own_address() {
    let app = TestApp::spawn().await;
    let code = app.request_code("owner@example.com").await;
    app.request_code("other@example.com").await;
    verify(&app, "other@example.com", &code).await.expect(401);
    verify(&app, "nobody@example.com", &code).await.expect(401);
    verify(&app, "owner@example.com", &code).await.expect(200);
}

#[tokio::test]
async fn an_address_gets_at_most_five_codes_an_hour() {
    let app = TestApp::spawn().await;
    let mut last = String::new();
    for i in 0..5 {
        let _ = i;
        last = app.request_code("flood@example.com").await;
    }
    // A sixth request, from another client address: same answer, no mail, old code alive.
    let answer = app.otp_request("192.0.2.77", "flood@example.com").await;
    assert_eq!(answer["expiresInSeconds"], 600);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(app.mail_to("flood@example.com", 0).await.len(), 5);
    verify(&app, "flood@example.com", &last).await.expect(200);
}

#[tokio::test]
async fn known_and_unknown_addresses_get_identical_answers() {
    let app = TestApp::spawn().await;
    app.student("known@example.com").await;
    let strip = |mut v: Value| {
        v.as_object_mut().expect("object").remove("timestamp");
        v
    };
    let known = app
        .otp_request("192.0.2.1", "known@example.com")
        .expect(200)
        .await;
    let unknown = app
        .otp_request("192.0.2.2", "unknown@example.com")
        .expect(200)
        .await;
    assert_eq!(strip(known.json()), strip(unknown.json()));
    assert_eq!(known.body.len(), unknown.body.len());
}

#[tokio::test]
async fn verify_refuses_malformed_input_with_400() {
    let app = TestApp::spawn().await;
    for body in [
        json!({ "email": "not-an-email", "code": "123456" }),
        json!({ "email": "a@example.com", "code": "12345" }),
        json!({ "email": "a@example.com", "code": "abcdef" }),
        json!({ "email": "a@example.com" }),
        json!({ "code": "123456" }),
    ] {
        app.post("/auth/otp/verify")
            .json(&body)
            .fails(400, "VALIDATION_FAILED")
            .await;
    }
}

#[tokio::test]
async fn a_reused_refresh_token_revokes_its_sign_in_but_not_others() {
    let app = TestApp::at(start()).await;
    let tab = app.sign_in("family@example.com").await;
    let other_device = app.sign_in("family@example.com").await;
    let rotated = app
        .post("/auth/refresh")
        .json(&json!({ "refreshToken": tab.refresh }))
        .await;
    let new_access = rotated["accessToken"].as_str().expect("access").to_owned();

    app.clock.advance(TimeDelta::seconds(11));
    app.refresh(&tab.refresh).expect(401).await;
    // The whole sign-in is gone, including the pair from the legitimate rotation...
    app.get("/me").bearer(&new_access).expect(401).await;
    let new_refresh = rotated["refreshToken"].as_str().expect("refresh");
    app.refresh(new_refresh).expect(401).await;
    // ...but the user's other sign-in is untouched.
    other_device.get("/me").expect(200).await;
}

#[tokio::test]
async fn two_tabs_refreshing_at_once_both_get_working_pairs_of_one_chain() {
    let app = TestApp::at(start()).await;
    let session = app.sign_in("tabs@example.com").await;
    let first = app
        .post("/auth/refresh")
        .json(&json!({ "refreshToken": session.refresh }))
        .await;
    app.clock.advance(TimeDelta::seconds(3));
    let second = app
        .post("/auth/refresh")
        .json(&json!({ "refreshToken": session.refresh }))
        .await;
    for pair in [&first, &second] {
        let access = pair["accessToken"].as_str().expect("access");
        app.get("/me").bearer(access).expect(200).await;
    }
    // One chain, never a tree: the second tab gets the same refresh token.
    assert_eq!(first["refreshToken"], second["refreshToken"]);
    let refresh = first["refreshToken"].as_str().expect("refresh");
    app.refresh(refresh).await;
}

#[tokio::test]
async fn access_tokens_expire_with_the_clock() {
    let app = TestApp::at(start()).await;
    let session = app.sign_in("clock@example.com").await;
    session.get("/me").expect(200).await;
    app.clock.advance(TimeDelta::minutes(16));
    session.get("/me").fails(401, "TOKEN_INVALID").await;
}

/// Verified tokens are remembered (`langcamp_core::auth::verified`): the memory is keyed by the
/// whole token, so a copy with another signature, or with the claims changed and the
/// signature kept, is checked afresh and refused.
#[tokio::test]
async fn a_remembered_token_never_vouches_for_an_altered_copy() {
    let app = TestApp::spawn().await;
    let session = app.sign_in("altered@example.com").await;
    session.get("/me").expect(200).await;
    let (payload_end, _) = session.access.rsplit_once('.').expect("a JWT");
    let mut signature: Vec<u8> = session.access[payload_end.len() + 1..].bytes().collect();
    signature[0] = if signature[0] == b'A' { b'B' } else { b'A' };
    let resigned = format!(
        "{payload_end}.{}",
        String::from_utf8(signature).expect("ascii")
    );
    let mut parts = session.access.split('.');
    let (header, payload, sig) = (
        parts.next().expect("header"),
        parts.next().expect("payload"),
        parts.next().expect("signature"),
    );
    let mut payload = payload.to_owned();
    payload.insert(payload.len() / 2, 'x');
    let reclaimed = format!("{header}.{payload}.{sig}");
    for altered in [resigned, reclaimed] {
        app.get("/me")
            .bearer(&altered)
            .fails(401, "TOKEN_INVALID")
            .await;
    }
    session.get("/me").expect(200).await;
}

fn forge(claims: &Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("encode")
}

fn b64url(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("payload");
    serde_json::from_slice(&crate::smtp::base64_decode(payload)).expect("claims JSON")
}

#[tokio::test]
async fn hostile_tokens_all_get_the_same_401() {
    let app = TestApp::spawn().await;
    let session = app.sign_in("victim@example.com").await;
    let claims = claims_of(&session.access);
    assert_eq!(claims["typ"], "access");
    for key in ["sub", "sid", "role", "jti", "iat", "exp"] {
        assert!(claims.get(key).is_some(), "claim {key} present");
    }
    let secret = langcamp_testkit::database::JWT_SECRET.as_bytes();

    let mut admin = claims.clone();
    admin["role"] = json!("superadmin");
    let mut expired = claims.clone();
    expired["exp"] = json!(claims["iat"].as_i64().expect("iat") - 3600);
    let mut refresh_typ = claims.clone();
    refresh_typ["typ"] = json!("refresh");
    let header_none = b64url(br#"{"alg":"none","typ":"JWT"}"#);
    let body = session.access.split('.').nth(1).expect("payload");
    let edited_role_same_signature = {
        let parts: Vec<&str> = session.access.split('.').collect();
        format!(
            "{}.{}.{}",
            parts[0],
            b64url(admin.to_string().as_bytes()),
            parts[2]
        )
    };
    let hostile = [
        format!("{header_none}.{body}."),
        forge(&claims, b"some-other-secret-entirely-000000"),
        edited_role_same_signature,
        forge(&expired, secret),
        forge(&refresh_typ, secret),
        session.access[..session.access.len() - 5].to_owned(),
        "not.a.token".to_owned(),
        "garbage".to_owned(),
    ];
    for token in hostile {
        let response = app.get("/me").bearer(&token).expect(401).await;
        assert_eq!(response.code(), "TOKEN_INVALID", "{token}");
        assert_eq!(response.errors(), ["invalid or expired token"]);
    }
    // The edited role with a valid signature still only grants the current database role.
    let forged_admin = forge(&admin, secret);
    app.get("/users").bearer(&forged_admin).expect(403).await;
    // Missing token: 401 UNAUTHORIZED.
    app.get("/me").fails(401, "UNAUTHORIZED").await;
    app.get("/me")
        .header("authorization", "Basic abc")
        .fails(401, "TOKEN_INVALID")
        .await;
}

#[tokio::test]
async fn a_demoted_admin_loses_access_on_the_next_request() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let admin = app.admin().await;
    admin.get("/users").expect(200).await;
    root.set_role(&admin.user_id, "user").await;
    admin.get("/users").expect(403).await;
}

#[tokio::test]
async fn a_deleted_users_token_gets_401() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("gone@example.com").await;
    admin.delete(&format!("/users/{}", student.user_id)).await;
    student.get("/me").fails(401, "TOKEN_INVALID").await;
    app.refresh(&student.refresh).expect(401).await;
}

#[tokio::test]
async fn own_profile_refuses_email_and_role_and_validates_fields() {
    let app = TestApp::spawn().await;
    let student = app.student("profile@example.com").await;
    for body in [
        json!({ "email": "new@example.com" }),
        json!({ "role": "admin" }),
    ] {
        student
            .patch("/me/profile", &body)
            .fails(400, "VALIDATION_FAILED")
            .await;
    }
    let invalid = student.patch("/me/profile", &json!({ "age": 3, "gender": "robot", "countryCode": "351", "phoneNumber": "12", "name": null })).expect(400).await;
    assert_eq!(invalid.json()["errors"].as_array().map(Vec::len), Some(5));
    let me = student.get("/me").await;
    assert_eq!(
        me["name"], "Test Person",
        "a refused change changes nothing"
    );

    let updated = student
        .patch(
            "/me/profile",
            &json!({ "age": 30, "city": "Porto", "phoneNumber": "912000111", "locale": "de-AT" }),
        )
        .await;
    assert_eq!(updated["age"], 30);
    assert_eq!(updated["city"], "Porto");
    assert_eq!(updated["locale"], "de-AT");
    let cleared = student.patch("/me/profile", &json!({ "city": null })).await;
    assert_eq!(cleared["city"], json!(null));
    assert_eq!(cleared["age"], 30, "absent fields stay");
}

#[tokio::test]
async fn own_profile_refuses_null_for_each_required_field_and_keeps_the_profile() {
    let app = TestApp::spawn().await;
    let student = app.student("nulls@example.com").await;
    let before = student.get("/me").await;
    let required = [
        "name",
        "age",
        "gender",
        "country",
        "countryCode",
        "phoneNumber",
        "locale",
    ];
    let change = json!({ "city": "Changed" });
    assert_nulls_refused(&student, "/me/profile", &required, change).await;
    let all = student
        .patch(
            "/me/profile",
            &json!({ "name": null, "age": null, "gender": null, "country": null,
                       "countryCode": null, "phoneNumber": null }),
        )
        .expect(400)
        .await;
    assert_eq!(
        all.json()["errors"].as_array().map(Vec::len),
        Some(6),
        "one message per field"
    );
    let after = student.get("/me").await;
    assert_eq!(after, before, "a refused change changes nothing");
}

#[tokio::test]
async fn complete_registration_requires_the_profile() {
    let app = TestApp::spawn().await;
    let fresh = app.sign_in("new@example.com").await;
    let missing = fresh
        .post("/auth/complete-registration", &json!({ "name": "New" }))
        .expect(400)
        .await;
    assert_eq!(missing.json()["errors"].as_array().map(Vec::len), Some(5));
}

#[tokio::test]
async fn optional_auth_answers_anonymous_for_any_bad_token() {
    let app = TestApp::spawn().await;
    let session = app.sign_in("opt@example.com").await;
    let me = session.get("/auth/optional").await;
    assert_eq!(me["authenticated"], true);
    assert_eq!(me["user"]["email"], "opt@example.com");
    for token in ["garbage", "a.b.c", &session.access[..20]] {
        let anon = app.get("/auth/optional").bearer(token).await;
        assert_eq!(anon, json!({ "authenticated": false, "user": null }));
    }
    session.post_empty("/auth/logout").expect(200).await;
    let after = session.get("/auth/optional").await;
    assert_eq!(after["authenticated"], false);
    let anonymous = app.get("/auth/optional").await;
    assert_eq!(anonymous["authenticated"], false);
}

#[tokio::test]
async fn logout_with_a_refresh_token_ends_that_sign_in_too() {
    let app = TestApp::spawn().await;
    let session: Session = app.sign_in("bye@example.com").await;
    session
        .post("/auth/logout", &json!({ "refreshToken": session.refresh }))
        .await;
    app.refresh(&session.refresh).expect(401).await;
    app.post("/auth/logout").expect(401).await;
}

/// The document's logout body is optional: `null` is no body, as an empty one is.
#[tokio::test]
async fn logout_accepts_a_null_body_as_no_body() {
    let app = TestApp::spawn().await;
    let session: Session = app.sign_in("null-bye@example.com").await;
    session.post("/auth/logout", &Value::Null).expect(200).await;
    session.get("/me").fails(401, "TOKEN_INVALID").await;
    let other: Session = app.sign_in("array-bye@example.com").await;
    other.post("/auth/logout", &json!([])).expect(400).await;
}

#[tokio::test]
async fn expired_rows_are_purged() {
    let app = TestApp::at(start()).await;
    let session = app.sign_in("purge@example.com").await;
    session.post_empty("/auth/logout").expect(200).await;
    app.request_code("purge2@example.com").await;
    app.clock.advance(TimeDelta::days(9));
    app.core.purge_expired().await.expect("purge");
    for table in [
        "otp_codes",
        "otp_issues",
        "revoked_tokens",
        "sessions",
        "refresh_tokens",
    ] {
        assert_eq!(app.rows(table).await, 0, "{table} purged");
    }
}

/// Each operation of accounts × anonymous / user / admin / superadmin, as in the role matrix.
#[tokio::test]
async fn the_role_matrix_holds_for_accounts() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let admin = app.admin().await;
    let student = app.student("student@example.com").await;
    let target = app.student("target@example.com").await;
    let user_path = format!("/users/{}", target.user_id);
    let role_path = format!("/users/{}/role", target.user_id);
    let email_path = format!("/users/{}/email", target.user_id);
    let profile_path = format!("/admin/users/{}/profile", target.user_id);
    let callers: [(&str, &Client); 4] = [
        ("anonymous", app.anon()),
        ("user", &student),
        ("admin", &admin),
        ("superadmin", &root),
    ];
    const ANYONE: &[u16] = &[200, 200, 200, 200];
    const USER: &[u16] = &[401, 200, 200, 200];
    const ADMIN: &[u16] = &[401, 403, 200, 200];
    const SUPERADMIN: &[u16] = &[401, 403, 403, 200];
    let cases = [
        Case::new("GET", "/me", USER),
        Case::new("GET", "/auth/registration-status", USER),
        Case::new("PATCH", "/me/profile", USER).body(json!({ "city": "Rome" })),
        Case::new("GET", "/auth/optional", ANYONE),
        Case::new("GET", "/users", ADMIN),
        Case::new("GET", user_path.clone(), ADMIN),
        Case::new("PATCH", profile_path, ADMIN).body(json!({ "city": "Oslo" })),
        Case::new("PATCH", email_path, ADMIN).body(json!({ "email": "target2@example.com" })),
        Case::new("PATCH", role_path, SUPERADMIN).body(json!({ "role": "user" })),
    ];
    assert_role_matrix(&callers, &cases).await;
    // Deleting: admin may delete a user; a user may not; anonymous gets 401.
    let delete = Case::new("DELETE", user_path, &[401, 403, 200]);
    assert_role_matrix(&callers[..3], &[delete]).await;
}
