//! Issue 21: one refresh-token chain per sign-in, the client address behind proxies, a
//! bounded file store, security headers and clean text (CONTRACT §1, §3, §10).

use std::collections::HashSet;

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse, fresh_client, utc};
use crate::materials::create_form;
use crate::storage::{Multipart, stored_files};

fn start() -> chrono::DateTime<Utc> {
    utc(2026, 11, 24, 9, 0, 0)
}

async fn refresh(app: &TestApp, token: &str) -> TestResponse {
    app.post("/auth/refresh")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({ "refreshToken": token }))
        .send()
        .await
}

fn tokens(pair: &Value) -> (String, String) {
    (
        pair["accessToken"].as_str().expect("access").to_owned(),
        pair["refreshToken"].as_str().expect("refresh").to_owned(),
    )
}

// ---- One chain per sign-in -------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_simultaneous_refreshes_of_one_token_end_with_one_live_refresh_token() {
    let app = TestApp::spawn().await;
    let session = app.sign_in("race@example.com").await;
    // Twenty requests at once, each on its own connection (and, on PostgreSQL, its own
    // pooled database connection), all presenting the same token.
    let calls = (0..20).map(|_| {
        let app = &app;
        let token = session.refresh.clone();
        async move { refresh(app, &token).await }
    });
    let answers = futures_util::future::join_all(calls).await;
    let mut refresh_tokens = HashSet::new();
    let mut access_tokens = HashSet::new();
    for answer in answers {
        let (access, refresh) = tokens(&answer.expect(200).data());
        refresh_tokens.insert(refresh);
        access_tokens.insert(access);
    }
    assert_eq!(refresh_tokens.len(), 1, "one chain, never a tree");
    assert_eq!(
        access_tokens.len(),
        20,
        "every caller gets its own access token"
    );
    assert_eq!(
        app.count("SELECT COUNT(*) FROM refresh_tokens WHERE rotated_at IS NULL")
            .await,
        1
    );
    assert_eq!(app.rows("refresh_tokens").await, 2);
    for access in &access_tokens {
        app.get("/me").bearer(access).expect(200).await;
    }
    // The one live token carries the chain on.
    let next = refresh_tokens.into_iter().next().expect("one token");
    let (_, after) = tokens(&refresh(&app, &next).await.expect(200).data());
    assert_ne!(after, next);
}

#[tokio::test]
async fn a_reuse_within_the_grace_answers_the_same_successor_for_the_same_sign_in() {
    let app = TestApp::at(start()).await;
    let session = app.sign_in("tabs2@example.com").await;
    let (first_access, successor) =
        tokens(&refresh(&app, &session.refresh).await.expect(200).data());
    app.clock.advance(TimeDelta::seconds(9));
    let (second_access, again) = tokens(&refresh(&app, &session.refresh).await.expect(200).data());
    assert_eq!(again, successor);
    assert_ne!(second_access, first_access);
    // Both access tokens belong to one sign-in: ending it through one ends the other.
    app.post("/auth/logout").bearer(&second_access).await;
    app.get("/me").bearer(&first_access).expect(401).await;
    refresh(&app, &successor).await.expect(401);
}

#[tokio::test]
async fn a_token_replayed_after_the_grace_is_caught_even_after_a_grace_reuse() {
    let app = TestApp::at(start()).await;
    let victim = app.sign_in("victim@example.com").await;
    let (_, successor) = tokens(&refresh(&app, &victim.refresh).await.expect(200).data());
    app.clock.advance(TimeDelta::seconds(5));
    // A thief replaying inside the grace only gets the victim's own successor...
    let (_, stolen) = tokens(&refresh(&app, &victim.refresh).await.expect(200).data());
    assert_eq!(stolen, successor);
    // ...so when either rotates it, the other's copy is a reuse, caught after the grace.
    let (victim_access, _) = tokens(&refresh(&app, &successor).await.expect(200).data());
    app.clock.advance(TimeDelta::seconds(11));
    refresh(&app, &stolen).await.expect(401);
    app.get("/me").bearer(&victim_access).expect(401).await;
}

// ---- The client address behind proxies --------------------------------------------------

async fn otp_request(app: &TestApp, forwarded_for: &str, n: usize) -> TestResponse {
    app.otp_request(forwarded_for, &format!("addr{n}@example.com"))
        .send()
        .await
}

#[tokio::test]
async fn a_client_behind_an_appending_proxy_cannot_change_its_key() {
    // The test client connects from 127.0.0.1, inside the default TRUSTED_PROXIES: it
    // plays a proxy that appends the real client's address to what the client sent.
    let app = TestApp::spawn().await;
    for n in 0..5 {
        otp_request(&app, &format!("198.51.100.{n}, 203.0.113.50"), n)
            .await
            .expect(200);
    }
    let refused = otp_request(&app, "198.51.100.99, 203.0.113.50", 9).await;
    assert_eq!(refused.expect(429).code(), "RATE_LIMITED");
    // Trusted hops to the right are skipped; the client is still the same.
    otp_request(&app, "1.2.3.4, 203.0.113.50, 127.0.0.5", 10)
        .await
        .expect(429);
}

#[tokio::test]
async fn one_ipv6_64_is_one_client_and_mapped_ipv4_is_its_ipv4() {
    let app = TestApp::spawn().await;
    for n in 0..5 {
        otp_request(&app, &format!("2001:db8:7:7::{:x}", n * 257 + 1), n)
            .await
            .expect(200);
    }
    otp_request(&app, "2001:db8:7:7:ffff:ffff:ffff:ffff", 6)
        .await
        .expect(429);
    otp_request(&app, "2001:db8:7:8::1", 7).await.expect(200);

    for n in 10..15 {
        otp_request(&app, "198.51.100.20", n).await.expect(200);
    }
    otp_request(&app, "::ffff:198.51.100.20", 16)
        .await
        .expect(429);
}

#[tokio::test]
async fn with_no_trusted_proxies_the_forwarded_header_is_ignored() {
    let app = TestApp::builder().var("TRUSTED_PROXIES", "").spawn().await;
    for n in 0..5 {
        otp_request(&app, &format!("203.0.113.{n}"), n)
            .await
            .expect(200);
    }
    // Every request was the peer's (127.0.0.1) whatever it claimed.
    otp_request(&app, "203.0.113.200", 9).await.expect(429);
}

#[test]
fn the_removed_trust_forwarded_for_refuses_to_start_naming_trusted_proxies() {
    let err = langcamp_core::Config::from_lookup(|name| {
        (name == "TRUST_FORWARDED_FOR").then(|| "true".to_owned())
    })
    .expect_err("refused");
    assert!(err.to_string().contains("TRUSTED_PROXIES"), "{err}");
}

// ---- Headers ----------------------------------------------------------------------------

#[tokio::test]
async fn every_answer_says_nosniff_and_the_docs_page_has_a_strict_csp() {
    let app = TestApp::spawn().await;
    let answers = [
        app.get("/courses").expect(200).await,
        app.get("/nowhere").expect(404).await,
        app.get("/me").expect(401).await,
        app.get("/").expect(200).await,
        app.get("/swagger/json").expect(200).await,
        app.call(hyper::Method::OPTIONS, "/courses")
            .send()
            .await
            .expect(204),
    ];
    for answer in &answers {
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(answer.header("content-security-policy"), None);
    }
    for path in ["/api/docs", "/api/docs/", "/api/docs/swagger-ui.css"] {
        let docs = app.get(path).expect(200).await;
        assert_eq!(docs.header("x-content-type-options"), Some("nosniff"));
        let csp = docs.header("content-security-policy").expect("a CSP");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(docs.header("x-frame-options"), Some("DENY"));
    }
}

// ---- Clean text -------------------------------------------------------------------------

#[tokio::test]
async fn control_characters_and_bidi_overrides_are_refused_in_every_input_type() {
    let (app, admin) = TestApp::with_admin().await;
    let contact = |first: &str, message: &str| json!({ "firstName": first, "lastName": "Doe", "email": "eve@example.com", "message": message });
    let post_contact = |body: Value| {
        let app = &app;
        async move {
            app.post("/contact")
                .header("x-forwarded-for", &fresh_client())
                .json(&body)
                .send()
                .await
        }
    };
    for first in [
        "Eve\r\nBcc: victim@example.com",
        "Eve\n",
        "E\u{0}ve",
        "Eve\u{202e}",
    ] {
        let refused = post_contact(contact(first, "hello")).await.expect(400);
        assert_eq!(refused.code(), "VALIDATION_FAILED");
        assert!(
            refused.json()["errors"][0]
                .as_str()
                .unwrap_or("")
                .contains("firstName")
        );
    }
    post_contact(contact("Eve", "line\r\nbreak"))
        .await
        .expect(400);
    post_contact(contact("Eve", "bell\u{7}")).await.expect(400);
    assert_eq!(app.rows("contacts").await, 0);
    // Multi-line text keeps line feeds and tabs; names in any script are fine.
    let stored = post_contact(contact("Zoë", "Dear school,\n\tplease call me.\n"))
        .await
        .expect(201)
        .data();
    assert_eq!(stored["message"], "Dear school,\n\tplease call me.");

    // A course title (single line) and description (multi-line).
    let course =
        |title: &str, description: &str| json!({ "title": title, "description": description });
    for (title, description) in [
        ("Deutsch\u{2066}A1", "ok"),
        ("Deutsch\tA1", "ok"),
        ("Deutsch", "a\u{1b}[2J"),
    ] {
        admin
            .post("/courses", &course(title, description))
            .expect(400)
            .await;
    }
    admin
        .post("/courses", &course("Deutsch A1", "Week 1:\n\tgreetings"))
        .expect(201)
        .await;

    // Profile fields.
    let student = app.sign_in("clean@example.com").await;
    for name in ["Ana\u{202d}", "Ana\r"] {
        student
            .patch("/me/profile", &json!({ "name": name }))
            .expect(400)
            .await;
    }
    student
        .patch(
            "/me/profile",
            &json!({ "city": "Tel Aviv \u{05ea}\u{05dc}" }),
        )
        .await;

    // A multipart text field goes through the same rule.
    let form = Multipart::new().text("title", "Grammar\u{202e}fdp.exe");
    create_form(&app, &admin, form).await.expect(400);
    assert_eq!(app.rows("education_materials").await, 0);
}

// ---- The file-store quota ---------------------------------------------------------------

/// A PDF (by its magic bytes) of exactly `size` bytes.
fn pdf_of(size: usize) -> Vec<u8> {
    let mut bytes = b"%PDF-1.4\n".to_vec();
    bytes.resize(size, b'x');
    bytes
}

/// A material's form: its title and one PDF of `size` bytes.
fn material_with_pdf(title: &str, size: usize) -> Multipart {
    Multipart::new()
        .text("title", title)
        .file("pdfs", "a.pdf", "application/pdf", &pdf_of(size))
}

async fn upload(app: &TestApp, bytes: &[u8]) -> TestResponse {
    crate::storage::upload(app, "doc.pdf", "application/pdf", bytes).await
}

#[tokio::test]
async fn an_upload_over_the_quota_answers_507_and_stores_nothing() {
    let app = TestApp::with_var("FILE_STORE_MAX_BYTES", "3000").await;
    upload(&app, &pdf_of(2000)).await.expect(201);
    let refused = upload(&app, &pdf_of(1001)).await.expect(507);
    assert_eq!(refused.code(), "INSUFFICIENT_STORAGE");
    assert_eq!(stored_files(&app).len(), 1);
    assert_eq!(app.rows("stored_files").await, 1);
    assert_eq!(app.count("SELECT bytes FROM file_store_usage").await, 2000);
    // Exactly up to the quota is fine.
    upload(&app, &pdf_of(1000)).await.expect(201);
    upload(&app, &pdf_of(10)).await.expect(507);

    // Material PDFs count against the same quota, and deleting frees their bytes.
    let admin = app.admin().await;
    let form = material_with_pdf("Over quota", 100);
    create_form(&app, &admin, form).await.expect(507);
    assert_eq!(app.rows("education_materials").await, 0);
    assert_eq!(stored_files(&app).len(), 2);
    assert_eq!(app.count("SELECT bytes FROM file_store_usage").await, 3000);
}

#[tokio::test]
async fn deleting_files_gives_their_bytes_back_to_the_quota() {
    let app = TestApp::with_var("FILE_STORE_MAX_BYTES", "1000").await;
    let admin = app.admin().await;
    let form = material_with_pdf("Reading", 900);
    let material = create_form(&app, &admin, form).await.expect(201).data();
    assert_eq!(app.count("SELECT bytes FROM file_store_usage").await, 900);
    upload(&app, &pdf_of(200)).await.expect(507);
    let id = material["id"].as_str().expect("id");
    admin.delete(&format!("/education-materials/{id}")).await;
    assert_eq!(app.count("SELECT bytes FROM file_store_usage").await, 0);
    upload(&app, &pdf_of(1000)).await.expect(201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn simultaneous_uploads_never_pass_the_quota_together() {
    let app = TestApp::with_var("FILE_STORE_MAX_BYTES", "3000").await;
    let file = pdf_of(600);
    let calls = (0..12).map(|_| upload(&app, &file));
    let answers = futures_util::future::join_all(calls).await;
    let stored = answers.iter().filter(|a| a.status == 201).count();
    let refused = answers.iter().filter(|a| a.status == 507).count();
    assert_eq!((stored, refused), (5, 7));
    assert_eq!(app.count("SELECT bytes FROM file_store_usage").await, 3000);
    assert_eq!(app.rows("stored_files").await, 5);
    // Refused uploads' bytes are removed in the background; give it a moment.
    for _ in 0..100 {
        if stored_files(&app).len() == 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(stored_files(&app).len(), 5);
}
