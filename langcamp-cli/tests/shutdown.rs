//! `langcamp serve` under load receives SIGTERM: requests already accepted complete, new
//! connections are refused, the process exits 0, and nothing is left half-written.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// One request on its own connection; `None` when the connection is refused or cut.
/// A connection closed with no answer at all is "cut": the server had accepted it but not
/// yet read its request when the signal came, and graceful shutdown closes such a
/// connection instead of starting a request on it (the client sees a closed connection,
/// as if it had come a moment later and been refused).
fn post_code_request(port: u16, n: usize) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .ok()?;
    let body = format!("{{\"email\":\"load{n}@example.com\"}}");
    let request = format!(
        "POST /auth/otp/request HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n\
         X-Forwarded-For: 10.9.{}.{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        n / 250,
        n % 250,
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    (!answer.is_empty()).then_some(answer)
}

#[test]
fn sigterm_under_load_finishes_accepted_requests_and_exits_cleanly() {
    if std::env::var("TEST_DATABASE_URL").is_ok() {
        eprintln!("runs in the SQLite pass only (it checks the database file directly)");
        return;
    }
    let dir = std::env::temp_dir().join(format!(
        "langcamp-sigterm-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_langcamp"))
        .arg("serve")
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("DATA_DIR", &dir)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start langcamp serve");
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let workers: Vec<_> = (0..8)
        .map(|w| {
            std::thread::spawn(move || {
                let mut answers = Vec::new();
                for i in 0..400 {
                    match post_code_request(port, w * 400 + i) {
                        Some(answer) => answers.push(answer),
                        None => break, // refused: the server is shutting down
                    }
                }
                answers
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let kill = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());

    let deadline = Instant::now() + Duration::from_secs(40);
    let status = loop {
        if let Some(status) = server.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "server did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "exit code 0 after SIGTERM");

    let answers: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("worker"))
        .collect();
    assert!(
        !answers.is_empty(),
        "some requests were served before the signal"
    );
    for answer in &answers {
        assert!(
            answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.1 429"),
            "complete answer: {answer}"
        );
        assert!(
            answer.trim_end().ends_with('}'),
            "the body arrived whole: {answer}"
        );
    }
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "new connections are refused"
    );

    // Every issued code has its mail: the action and its outbox row committed together.
    let url = format!("sqlite://{}", dir.join("langcamp.db").display());
    let (issued, queued) = tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(async {
            use sqlx::Connection;
            let mut conn = sqlx::SqliteConnection::connect(&url)
                .await
                .expect("open the database");
            let issued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM otp_issues")
                .fetch_one(&mut conn)
                .await
                .expect("count codes");
            let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mail_outbox")
                .fetch_one(&mut conn)
                .await
                .expect("count mail");
            (issued, queued)
        });
    assert!(issued > 0);
    assert_eq!(issued, queued, "codes issued vs mails queued");
    let _ = std::fs::remove_dir_all(&dir);
}
