//! The operator's kit over HTTP (contract §1 and §15): `/health`, `/ready` and its named
//! checks, `/metrics` behind its token with route templates as labels, and `X-Request-Id`
//! on every answer and as `requestId` in failure envelopes.

use serde_json::json;

use crate::helpers::{TestApp, fresh_client};

const TOKEN: &str = "metrics-token-for-tests";

async fn with_metrics() -> TestApp {
    TestApp::builder().var("METRICS_TOKEN", TOKEN).spawn().await
}

#[tokio::test]
async fn health_answers_ok_outside_the_envelope() {
    let app = TestApp::spawn().await;
    let response = app.get("/health").expect(200).await;
    assert_eq!(response.json(), json!({ "status": "ok" }));
    assert!(response.header("x-request-id").is_some());
}

#[tokio::test]
async fn ready_names_every_check_when_all_pass() {
    let app = TestApp::spawn().await;
    let body = app.get("/ready").expect(200).await.json();
    assert_eq!(body["status"], "ready");
    for check in ["database", "migrations", "fileStore"] {
        assert_eq!(body["checks"][check]["ok"], true, "{check}: {body}");
    }
    assert_eq!(body["mailWorker"]["running"], true, "{body}");
    assert!(body.get("isSuccess").is_none(), "not enveloped: {body}");
}

#[tokio::test]
async fn ready_is_503_naming_the_database_when_it_is_gone() {
    let app = TestApp::spawn().await;
    app.core.db().close().await;
    let response = app.get("/ready").expect(503).await;
    assert!(response.header("retry-after").is_some());
    let body = response.json();
    assert_eq!(body["status"], "unavailable");
    assert_eq!(body["checks"]["database"]["ok"], false, "{body}");
    assert!(
        body["failing"]
            .as_array()
            .is_some_and(|f| f.contains(&json!("database"))),
        "{body}"
    );
    // Liveness does not depend on the database: restarting would not help.
    app.get("/health").expect(200).await;
}

#[tokio::test]
async fn ready_is_503_when_a_migration_is_pending() {
    let app = TestApp::spawn().await;
    let mut tx = app.core.db().begin().await.expect("begin");
    sqlx::query(
        "DELETE FROM _sqlx_migrations WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)",
    )
    .execute(&mut *tx)
    .await
    .expect("forget the newest migration");
    tx.commit().await.expect("commit");
    let body = app.get("/ready").expect(503).await.json();
    assert_eq!(body["checks"]["migrations"]["ok"], false, "{body}");
    assert!(
        body["checks"]["migrations"]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("langcamp migrate")),
        "{body}"
    );
    assert_eq!(body["checks"]["database"]["ok"], true, "{body}");
}

/// During a rolling upgrade the new release migrates first; an instance of the previous
/// release that restarts then (a crash, its supervisor) must start and serve beside the
/// newer, expand-only schema rather than refuse an applied migration it does not know.
#[tokio::test]
async fn an_instance_starts_and_is_ready_beside_a_newer_releases_migration() {
    let app = TestApp::spawn().await;
    let mut tx = app.core.db().begin().await.expect("begin");
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES ($1, 'a newer release', TRUE, $2, 0)",
    )
    .bind(99_990_101_i64)
    .bind(vec![7_u8; 48])
    .execute(&mut *tx)
    .await
    .expect("apply a migration of a newer release");
    tx.commit().await.expect("commit");

    // What `langcamp serve` does on start: check, then migrate when not current; sqlx's
    // own run of the migrations accepts the newer one too.
    assert_eq!(app.core.check_before_serving().await.ok(), Some(true));
    let applied = app.core.db().migrate().await.expect("migrate beside it");
    assert!(applied.is_empty(), "{applied:?}");
    app.get("/ready").expect(200).await;

    // An unknown migration older than this build's newest is not a newer release's.
    let mut tx = app.core.db().begin().await.expect("begin");
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (89, 'not ours', TRUE, $1, 0)",
    )
    .bind(vec![7_u8; 48])
    .execute(&mut *tx)
    .await
    .expect("apply an unknown older migration");
    tx.commit().await.expect("commit");
    assert_eq!(app.core.check_before_serving().await.ok(), Some(false));
}

#[tokio::test]
async fn ready_is_503_when_the_file_store_refuses_writes() {
    // The local disk's fault (an unreachable object store: `s3_store::`).
    let app = TestApp::builder().var("FILE_STORE", "local").spawn().await;
    // A plain file where the store's folder should be: no write can succeed, even as root.
    let files = app.data_dir.join("files");
    let _ = std::fs::remove_dir_all(&files);
    std::fs::write(&files, b"not a folder").expect("block the file store");
    let body = app.get("/ready").expect(503).await.json();
    assert_eq!(body["checks"]["fileStore"]["ok"], false, "{body}");
    assert_eq!(body["failing"], json!(["fileStore"]), "{body}");

    // And it recovers by itself once the store is writable again.
    std::fs::remove_file(&files).expect("unblock");
    app.get("/ready").expect(200).await;
}

#[tokio::test]
async fn ready_is_503_during_the_drain_while_requests_are_still_served() {
    // A drain far longer than the test: nothing here races its end.
    let mut app = TestApp::builder()
        .var("SHUTDOWN_DRAIN", "10m")
        .spawn()
        .await;
    let student = app.student("ana@example.com").await;
    let before = app.get("/ready").expect(200).await;
    assert_eq!(
        before.header("connection"),
        None,
        "keep-alive before the drain"
    );

    // What SIGTERM does in `langcamp serve`; the server sees it on its own task.
    app.stop();
    let mut ready = app.get("/ready").send().await;
    for _ in 0..200 {
        if ready.status == 503 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        ready = app.get("/ready").send().await;
    }
    assert_eq!(ready.status, 503, "{}", ready.text());
    assert!(ready.header("retry-after").is_some());
    assert_eq!(ready.header("cache-control"), Some("no-store"));
    let body = ready.json();
    assert_eq!(body["status"], "unavailable", "{body}");
    assert_eq!(body["failing"], json!(["shutdown"]), "{body}");
    assert_eq!(body["checks"]["shutdown"]["ok"], false, "{body}");

    // Meanwhile the listener accepts and everything is answered: reads, a signed-in
    // read, a write. Each answer closes its connection, so a proxy opens a new one for
    // its next request rather than reusing one the server is about to close.
    let answers = [
        app.get("/health").expect(200).await,
        app.get("/courses").expect(200).await,
        student.get("/me").expect(200).await,
        student
            .patch("/me/profile", &json!({ "city": "Porto" }))
            .expect(200)
            .await,
        app.get("/ready").expect(503).await,
    ];
    for answer in &answers {
        assert_eq!(
            answer.header("connection"),
            Some("close"),
            "{}",
            answer.request
        );
    }
    assert_eq!(answers[3].data()["city"], "Porto");
}

#[tokio::test]
async fn operations_endpoints_are_not_rate_limited() {
    let app = TestApp::spawn().await;
    // The default budget is 120 a minute per client and endpoint.
    for _ in 0..130 {
        app.get("/health").expect(200).await;
    }
}

#[tokio::test]
async fn metrics_do_not_exist_without_a_token() {
    let app = TestApp::spawn().await;
    app.get("/metrics").expect(404).await;
}

#[tokio::test]
async fn metrics_need_the_token() {
    let app = with_metrics().await;
    app.get("/metrics").fails(401, "UNAUTHORIZED").await;
    app.get("/metrics").bearer("wrong-token").expect(401).await;
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_never_by_path() {
    let app = with_metrics().await;
    let id = "0190c6b0-0000-7000-8000-00000000abcd";
    app.get(&format!("/courses/{id}")).expect(404).await;
    app.get("/courses").expect(200).await;
    app.get("/no/such/route").expect(404).await;
    let response = app.get("/metrics").bearer(TOKEN).expect(200).await;
    assert!(
        response
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/plain")),
    );
    let text = response.text();
    assert!(
        text.lines()
            .any(|l| l.starts_with("langcamp_http_requests_total")
                && l.contains("route=\"/courses/{id}\"")
                && l.contains("status=\"404\"")),
        "{text}"
    );
    assert!(text.contains("route=\"unmatched\""), "{text}");
    assert!(!text.contains(id), "a concrete path leaked into a label");
    assert!(
        !text.contains("/no/such/route"),
        "an unknown path leaked into a label"
    );
    for series in [
        "langcamp_http_request_duration_seconds_bucket",
        "langcamp_mail_outbox_queued",
        "langcamp_mail_outbox_oldest_seconds",
        "langcamp_mail_sent_total",
        "langcamp_mail_failed_total",
        "langcamp_db_pool_connections{state=\"max\"}",
        "process_resident_memory_bytes",
    ] {
        assert!(text.contains(series), "{series} missing:\n{text}");
    }
}

/// Every series with a known label set is there before its first event, so `rate()`
/// and `increase()` alerts see the first one (contract §15).
#[tokio::test]
async fn every_rate_limit_rule_and_mail_counter_is_listed_from_the_first_scrape() {
    let app = TestApp::builder().var("METRICS_TOKEN", TOKEN).spawn().await;
    let text = app.get("/metrics").bearer(TOKEN).expect(200).await.text();
    for rule in [
        "default",
        "refresh",
        "otp_request",
        "otp_verify",
        "contact",
        "upload",
    ] {
        let series = format!("langcamp_rate_limited_total{{rule=\"{rule}\"}}");
        assert!(
            text.lines().any(|l| l.starts_with(&series)),
            "{series} missing:\n{text}"
        );
    }
    for counter in ["langcamp_mail_sent_total ", "langcamp_mail_failed_total "] {
        assert!(
            text.lines().any(|l| l.starts_with(counter)),
            "{counter} missing:\n{text}"
        );
    }
}

#[tokio::test]
async fn metrics_report_the_outbox_backlog_and_rate_limits() {
    let app = TestApp::builder()
        .var("METRICS_TOKEN", TOKEN)
        // No SMTP server listens here: mail stays queued.
        .var("MAIL_PORT", "9")
        .spawn()
        .await;
    let client = fresh_client();
    for _ in 0..6 {
        app.otp_request(&client, "queued@example.com").send().await;
    }
    let text = app.get("/metrics").bearer(TOKEN).expect(200).await.text();
    let queued = text
        .lines()
        .find(|l| l.starts_with("langcamp_mail_outbox_queued "))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(queued >= 1.0, "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("langcamp_rate_limited_total")
                && l.contains("rule=\"otp_request\"")),
        "{text}"
    );
}

#[tokio::test]
async fn every_answer_carries_a_request_id_and_failures_quote_it() {
    let app = TestApp::spawn().await;
    let ok = app.get("/courses").expect(200).await;
    let generated = ok.header("x-request-id").expect("a request id");
    assert!(
        langcamp_core::domain::id::looks_like_id(generated),
        "{generated}"
    );
    assert!(
        ok.json().get("requestId").is_none(),
        "successes stay as the contract shows"
    );

    let failed = app
        .get("/no/such/route")
        .header("x-request-id", "client-trace_42.a")
        .expect(404)
        .await;
    assert_eq!(failed.header("x-request-id"), Some("client-trace_42.a"));
    assert_eq!(failed.json()["requestId"], "client-trace_42.a");

    // An id that could forge log lines or is too long is replaced, not echoed.
    for unsafe_id in ["a b", "x\"y", &"z".repeat(65)] {
        let response = app
            .get("/users/nobody")
            .header("x-request-id", unsafe_id)
            .expect(401)
            .await;
        let id = response
            .header("x-request-id")
            .expect("a request id")
            .to_owned();
        assert_ne!(id, unsafe_id);
        assert_eq!(response.json()["requestId"], id.as_str());
    }
}

#[tokio::test]
async fn preflight_and_method_failures_carry_a_request_id_too() {
    let app = TestApp::spawn().await;
    let preflight = app
        .call(hyper::Method::OPTIONS, "/courses")
        .send()
        .await
        .expect(204);
    assert!(preflight.header("x-request-id").is_some());
    let wrong = app.delete("/auth/otp/request").expect(405).await;
    let id = wrong
        .header("x-request-id")
        .expect("a request id")
        .to_owned();
    assert_eq!(wrong.json()["requestId"], id.as_str());
}
