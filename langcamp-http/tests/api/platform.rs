//! The HTTP platform: envelope, routing, CORS, limits, documentation, migrations, mail
//! delivery and database outages.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{TestApp, fresh_client};
use crate::smtp::SmtpSink;

#[tokio::test]
async fn root_answers_with_plain_text() {
    let app = TestApp::spawn().await;
    let response = app.get("/").expect(200).await;
    assert!(
        response
            .header("content-type")
            .unwrap_or("")
            .starts_with("text/plain")
    );
    assert!(response.text().contains("Langcamp"));
}

#[tokio::test]
async fn successes_and_failures_wear_the_envelope() {
    let app = TestApp::spawn().await;
    let ok = app
        .post("/auth/otp/request")
        .json(&json!({ "email": "ana@example.com" }))
        .expect(200)
        .await
        .json();
    assert_eq!(ok["isSuccess"], true);
    assert_eq!(ok["statusCode"], 200);
    assert_eq!(ok["errors"], json!([]));
    assert!(ok["data"].is_object());
    let timestamp = ok["timestamp"].as_str().expect("timestamp");
    assert!(
        timestamp.ends_with('Z') && timestamp.len() == 24,
        "{timestamp}"
    );

    let failed = app.get("/users/whoever").expect(401).await.json();
    assert_eq!(failed["isSuccess"], false);
    assert_eq!(failed["statusCode"], 401);
    assert_eq!(failed["data"], json!(null));
    assert_eq!(failed["code"], "UNAUTHORIZED");
    assert!(failed["errors"].as_array().is_some_and(|e| !e.is_empty()));
}

/// The envelope's `timestamp` is the app's clock (the injectable one), on successes and
/// on failures alike, so a test or a replay with a manual clock sees its own time.
#[tokio::test]
async fn envelope_timestamps_come_from_the_app_clock() {
    let start = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2024, 2, 29, 23, 59, 58)
        .single()
        .expect("a date");
    let app = TestApp::at(start).await;
    for step in 0..2 {
        let now = langcamp_core::Timestamp(app.clock.now()).to_string();
        let ok = app
            .otp_request(&fresh_client(), "ana@example.com")
            .expect(200)
            .await
            .json();
        assert_eq!(ok["timestamp"], now.as_str(), "step {step}");
        let failures = [
            app.get("/me").expect(401).await,
            app.get("/no/such/route").expect(404).await,
            app.delete("/auth/otp/request").expect(405).await,
        ];
        for failed in failures {
            assert_eq!(
                failed.json()["timestamp"],
                now.as_str(),
                "{}",
                failed.text()
            );
        }
        app.clock.advance(chrono::TimeDelta::seconds(3));
    }
}

#[tokio::test]
async fn unknown_routes_are_404_and_wrong_methods_405_with_allow() {
    let app = TestApp::spawn().await;
    app.get("/no/such/route").fails(404, "NOT_FOUND").await;
    let wrong = app
        .delete("/auth/otp/request")
        .fails(405, "METHOD_NOT_ALLOWED")
        .await;
    let allow = wrong.header("allow").unwrap_or_default();
    assert!(allow.contains("POST"), "{allow}");
    assert!(!allow.contains("DELETE"), "{allow}");
}

#[tokio::test]
async fn cors_preflight_allows_any_origin() {
    let app = TestApp::spawn().await;
    let response = app
        .call(hyper::Method::OPTIONS, "/users")
        .header("origin", "https://school.example")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "authorization")
        .send()
        .await
        .expect(204);
    assert_eq!(response.header("access-control-allow-origin"), Some("*"));
    let headers = response
        .header("access-control-allow-headers")
        .unwrap_or_default()
        .to_lowercase();
    for needed in ["authorization", "content-type", "accept-language"] {
        assert!(headers.contains(needed), "{headers}");
    }
    assert!(
        response
            .header("access-control-allow-methods")
            .unwrap_or_default()
            .contains("PATCH")
    );
    assert!(response.body.is_empty());
    // Ordinary answers carry the header too.
    let plain = app
        .get("/")
        .header("origin", "https://x.example")
        .expect(200)
        .await;
    assert_eq!(plain.header("access-control-allow-origin"), Some("*"));
}

#[tokio::test]
async fn a_json_body_that_is_not_an_object_is_refused_and_mails_nothing() {
    let app = TestApp::spawn().await;
    for body in [r#"["a@example.com"]"#, r#""a@example.com""#, "5", "null"] {
        let errors = app
            .post("/auth/otp/request")
            .header("x-forwarded-for", &fresh_client())
            .body("application/json", body.to_owned())
            .invalid()
            .await;
        assert_eq!(errors, ["request body must be a JSON object"], "{body}");
    }
    // A real request afterwards is the first mail the server sends.
    app.otp_request(&fresh_client(), "b@example.com").await;
    let mail = app.smtp.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(mail.len(), 1, "the refused bodies sent no mail");
    assert_eq!(mail[0].to, vec!["b@example.com".to_owned()]);
}

#[tokio::test]
async fn a_body_with_several_wrong_fields_gets_one_message_per_field() {
    let (_app, admin) = TestApp::with_admin().await;
    let errors = admin
        .post(
            "/courses",
            &json!({ "title": 5, "capacity": "ten", "colour": "red", "isPublished": "yes" }),
        )
        .invalid()
        .await;
    assert_eq!(errors.len(), 4, "{errors:?}");
    for field in ["title", "capacity", "colour", "isPublished"] {
        assert!(
            errors.iter().any(|m| m.contains(field)),
            "{field} is named: {errors:?}"
        );
    }
    let courses = admin.get("/courses").await;
    assert_eq!(courses, json!([]), "nothing was created");
}

#[tokio::test]
async fn json_bodies_get_clear_400s_and_415s() {
    let app = TestApp::spawn().await;
    let cases = [
        ("{not json", "malformed"),
        (r#"{"email": 5}"#, "invalid type"),
        (
            r#"{"email": "a@example.com", "extra": 1}"#,
            "unknown field `extra`",
        ),
        ("", "JSON object"),
        (r#"{}"#, "email is required"),
    ];
    for (body, expected) in cases {
        let response = app
            .post("/auth/otp/request")
            .header("x-forwarded-for", &fresh_client())
            .body("application/json", body.to_owned())
            .fails(400, "VALIDATION_FAILED")
            .await;
        assert!(
            response.text().contains(expected),
            "{body:?}: {}",
            response.text()
        );
    }
    let wrong_type = app
        .post("/auth/otp/request")
        .body("text/plain", r#"{"email":"a@example.com"}"#)
        .expect(415)
        .await;
    assert_eq!(wrong_type.code(), "UNSUPPORTED_MEDIA_TYPE");
}

#[tokio::test]
async fn deeply_nested_json_is_a_400_not_a_crash() {
    let app = TestApp::spawn().await;
    let body = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    app.post("/auth/otp/request")
        .body("application/json", body)
        .expect(400)
        .await;
    app.get("/").expect(200).await;
}

/// Sends a chunked body of `total` bytes without a length and returns the status line.
async fn stream_body(app: &TestApp, total: usize) -> String {
    let mut stream = tokio::net::TcpStream::connect(app.addr)
        .await
        .expect("connect");
    let head = "POST /auth/otp/request HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
                Transfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.expect("write head");
    let chunk = vec![b' '; 1024 * 1024];
    let mut sent = 0;
    while sent < total {
        let frame = format!("{:x}\r\n", chunk.len());
        if stream.write_all(frame.as_bytes()).await.is_err()
            || stream.write_all(&chunk).await.is_err()
            || stream.write_all(b"\r\n").await.is_err()
        {
            break; // the server stopped reading: fine, read its answer
        }
        sent += chunk.len();
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut answer))
        .await
        .expect("an answer in time")
        .expect("read");
    String::from_utf8_lossy(&answer[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn bodies_over_the_limit_get_413_without_being_buffered() {
    let app = TestApp::spawn().await;
    // A declared length over 50 MB is refused before anything is read.
    let declared = app
        .post("/auth/otp/request")
        .header("content-length", "52428801")
        .header("content-type", "application/json")
        .send()
        .await;
    // hyper's client sends the real (empty) length; check the raw form too.
    assert!(
        declared.status == 413 || declared.status == 400,
        "{}",
        declared.status
    );
    let mut stream = tokio::net::TcpStream::connect(app.addr)
        .await
        .expect("connect");
    stream
        .write_all(b"POST /auth/otp/request HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 52428801\r\n\r\n")
        .await
        .expect("write");
    let mut answer = vec![0u8; 2048];
    let n = stream.read(&mut answer).await.expect("read");
    let text = String::from_utf8_lossy(&answer[..n]);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("PAYLOAD_TOO_LARGE"), "{text}");

    // A streamed JSON body is cut off at its (1 MB) cap, long before 50 MB arrive.
    assert!(stream_body(&app, 60 * 1024 * 1024).await.contains("413"));
}

#[tokio::test]
async fn rate_limits_refuse_after_exactly_the_budget_per_client() {
    let app = TestApp::spawn().await;
    for i in 0..5 {
        app.otp_request("203.0.113.10", &format!("r{i}@example.com"))
            .await;
    }
    let refused = app
        .post("/auth/otp/request")
        // What the client wrote itself, then what the (trusted, local) proxy appended.
        .header("x-forwarded-for", "198.51.100.99, 203.0.113.10")
        .json(&json!({ "email": "r9@example.com" }))
        .send()
        .await
        .expect(429);
    assert_eq!(refused.code(), "RATE_LIMITED");
    let retry_after = refused.retry_after();
    assert!((1..=300).contains(&retry_after), "{retry_after}");
    // Another forwarded client has its own budget.
    app.otp_request("203.0.113.11", "other@example.com").await;
    // Garbage in the header falls back to the peer address, which still has budget...
    app.otp_request("not-an-address", "peer@example.com").await;
}

#[tokio::test]
async fn garbage_forwarded_for_values_never_disable_limiting() {
    let app = TestApp::spawn().await;
    for i in 0..5 {
        app.otp_request(&format!("garbage-{i}"), &format!("g{i}@example.com"))
            .await;
    }
    // All five were counted against the peer address.
    app.otp_request("more garbage", "g9@example.com")
        .expect(429)
        .await;
}

#[tokio::test]
async fn the_default_limit_counts_each_endpoint_separately() {
    let app = TestApp::spawn().await;
    for _ in 0..120 {
        app.get("/")
            .header("x-forwarded-for", "198.51.100.1")
            .expect(200)
            .await;
    }
    app.get("/")
        .header("x-forwarded-for", "198.51.100.1")
        .expect(429)
        .await;
    app.get("/swagger/json")
        .header("x-forwarded-for", "198.51.100.1")
        .await;
}

#[tokio::test]
async fn swagger_json_matches_the_snapshot_and_is_openapi_3() {
    let app = TestApp::spawn().await;
    let served = app.get("/swagger/json").expect(200).await.json();
    assert!(
        served["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3."))
    );
    assert!(
        served["paths"]
            .as_object()
            .is_some_and(|p| p.contains_key("/auth/otp/verify"))
    );
    assert_eq!(
        served["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );

    let snapshot_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/openapi.json");
    let current = serde_json::to_string_pretty(&served).expect("pretty JSON") + "\n";
    langcamp_testkit::assert_snapshot(
        &snapshot_path,
        &current,
        "the OpenAPI document changed; review it and run \
         `UPDATE_SNAPSHOTS=1 cargo test --workspace --test api -- swagger_json` to accept",
    );
}

#[tokio::test]
async fn api_docs_serve_the_swagger_ui() {
    let app = TestApp::spawn().await;
    for path in ["/api/docs", "/api/docs/"] {
        let page = app.get(path).expect(200).await;
        assert!(
            page.header("content-type")
                .unwrap_or("")
                .starts_with("text/html")
        );
        assert!(page.text().contains("swagger-ui"), "{path}");
    }
    let init = app
        .get("/api/docs/swagger-initializer.js")
        .expect(200)
        .await;
    assert!(init.text().contains("/swagger/json"));
    app.get("/api/docs/swagger-ui-bundle.js").expect(200).await;
}

#[tokio::test]
async fn migrations_apply_once_and_then_are_a_no_op() {
    let app = TestApp::spawn().await;
    // The harness migrated already: again is a no-op, on both backends.
    assert!(app.core.migrate().await.expect("migrate again").is_empty());
    assert!(app.core.migrate().await.expect("and again").is_empty());
}

#[tokio::test]
async fn mail_sent_while_smtp_is_down_arrives_once_it_is_up() {
    // Reserve a port, then leave it closed: the SMTP server is "down".
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("probe port");
        probe.local_addr().expect("addr").port()
    };
    let down = SmtpSink::start_on(port).await;
    down.stop();
    let app = TestApp::with_var("MAIL_PORT", &port.to_string()).await;
    app.post("/auth/otp/request")
        .json(&json!({ "email": "late@example.com" }))
        .await;
    // The request succeeded; the first attempt fails and is retried later.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let up = SmtpSink::start_on(port).await;
    let mails = up.wait_for(1, Duration::from_secs(15)).await;
    assert_eq!(
        mails.len(),
        1,
        "the mail was delivered after the server came up"
    );
    assert_eq!(mails[0].to, vec!["late@example.com".to_owned()]);
    assert!(crate::helpers::extract_code(&mails[0].text_body()).is_some());
}

/// A TCP relay in front of PostgreSQL that a test can "stop" (drop every connection and
/// refuse new ones) and "start" again on the same port.
pub(crate) struct DatabaseRelay {
    pub(crate) port: u16,
    target: String,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl DatabaseRelay {
    pub(crate) async fn start(port: u16, target: &str) -> DatabaseRelay {
        let listener = loop {
            match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
                Ok(l) => break l,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        };
        let port = listener.local_addr().expect("addr").port();
        let upstream = target.to_owned();
        let task = tokio::spawn(async move {
            let mut links = tokio::task::JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                links.spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        DatabaseRelay {
            port,
            target: target.to_owned(),
            task: Some(task),
        }
    }

    /// Cuts every connection (the JoinSet is dropped with the task) and frees the port.
    pub(crate) async fn stop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }

    pub(crate) async fn restart(&mut self) {
        *self = DatabaseRelay::start(self.port, &self.target).await;
    }

    /// The PostgreSQL pass only: a server on a new test database behind a relay the test
    /// can stop. `None` on SQLite, where an embedded database cannot be stopped.
    pub(crate) async fn app_behind() -> Option<(DatabaseRelay, TestApp)> {
        let Ok(server) = std::env::var("TEST_DATABASE_URL") else {
            eprintln!(
                "skipped on SQLite: an embedded database cannot be stopped; runs in the PostgreSQL pass"
            );
            return None;
        };
        let (relay, relayed) = DatabaseRelay::for_new_database(&server).await;
        let app = TestApp::with_var("DATABASE_URL", &relayed).await;
        Some((relay, app))
    }

    /// A new test database on `server` (a `TEST_DATABASE_URL`) and a relay in front of
    /// it: the relay and the URL that reaches the database through it.
    pub(crate) async fn for_new_database(server: &str) -> (DatabaseRelay, String) {
        // postgres://user@host:port/db -> the same, through a relay we control.
        let scratch =
            std::env::temp_dir().join(format!("langcamp-relay-{}", uuid::Uuid::new_v4().simple()));
        let direct = crate::helpers::test_database_url(&scratch).await;
        let authority = server
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .map(|a| a.rsplit('@').next().unwrap_or(a).to_owned())
            .expect("host:port in TEST_DATABASE_URL");
        let relay = DatabaseRelay::start(0, &authority).await;
        let relayed = direct.replacen(&authority, &format!("127.0.0.1:{}", relay.port), 1);
        (relay, relayed)
    }
}

#[tokio::test]
async fn a_stopped_database_gives_503_and_the_server_recovers_by_itself() {
    let Some((mut relay, app)) = DatabaseRelay::app_behind().await else {
        return;
    };
    let student = app.student("outage@example.com").await;
    student.get("/me").expect(200).await;

    relay.stop().await;
    // Live sign-ins are held in memory only while this instance hears every other
    // writer (`langcamp-core/src/changes.rs`); its listening connection went down with the
    // database, and from the moment it notices (milliseconds) every check goes to the
    // database again.
    let noticed = tokio::time::Instant::now() + Duration::from_secs(2);
    while app.core.sessions().is_enabled() && tokio::time::Instant::now() < noticed {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        !app.core.sessions().is_enabled(),
        "the lost listener turned the sign-in cache off"
    );
    for _ in 0..3 {
        let down = student.get("/me").send().await;
        assert_eq!(
            down.status,
            503,
            "no token check passes while the database is down: {}",
            down.text()
        );
        assert_eq!(down.code(), "SERVICE_UNAVAILABLE");
        assert!(
            !down.text().to_lowercase().contains("sqlx"),
            "no internals leak: {}",
            down.text()
        );
    }
    app.get("/").expect(200).await;

    relay.restart().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let response = student.get("/me").send().await;
        if response.status == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not recovered within 10 s: {}",
            response.status
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
