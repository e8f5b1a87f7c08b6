//! Faults from the outside: SMTP servers that hang or refuse, and clients that trickle
//! their headers or bodies. Every test is bounded well under 15 s and fails if the
//! protection it checks is taken away.
//!
//! Mail scheduling runs on the manual clock (so backoff is checked exactly); socket
//! timeouts are real time, shortened through `MAIL_TIMEOUT` and `serve_with`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use langcamp_core::Actor;
use langcamp_core::contacts::{ContactInput, NewContact, ReplyInput, ReplyText};
use langcamp_http::ServeOptions;
use serde_json::json;
use sqlx::Row;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::helpers::{TestApp, TestAppBuilder, extract_code, fresh_client};
use crate::smtp::ReceivedMail;

fn start() -> DateTime<Utc> {
    "2030-03-04T09:00:00Z".parse().expect("a valid instant")
}

// ---------------------------------------------------------------------------------------
// A misbehaving SMTP server.

/// What the fake SMTP server does with the next connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behaviour {
    /// Accepts the connection and never says a word (not even the greeting).
    Silent,
    /// Answers `554` to `MAIL FROM`.
    RefuseSender,
    /// Answers `554` to `RCPT TO`.
    RefuseRecipient,
    /// A working server: stores what it receives.
    Accept,
}

#[derive(Debug)]
struct FakeState {
    behaviour: Mutex<Behaviour>,
    connections: AtomicUsize,
    refusals: AtomicUsize,
    received: Mutex<Vec<ReceivedMail>>,
}

/// An SMTP server on 127.0.0.1 whose behaviour a test switches; the switch applies to
/// connections opened after it.
struct FakeSmtp {
    port: u16,
    state: Arc<FakeState>,
    task: JoinHandle<()>,
}

impl FakeSmtp {
    async fn start(behaviour: Behaviour) -> FakeSmtp {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake SMTP server");
        let port = listener.local_addr().expect("its address").port();
        let state = Arc::new(FakeState {
            behaviour: Mutex::new(behaviour),
            connections: AtomicUsize::new(0),
            refusals: AtomicUsize::new(0),
            received: Mutex::new(Vec::new()),
        });
        let task = tokio::spawn({
            let state = Arc::clone(&state);
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    state.connections.fetch_add(1, Ordering::SeqCst);
                    let behaviour = *state
                        .behaviour
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    tokio::spawn(fake_session(stream, behaviour, Arc::clone(&state)));
                }
            }
        });
        FakeSmtp { port, state, task }
    }

    fn set(&self, behaviour: Behaviour) {
        *self
            .state
            .behaviour
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = behaviour;
    }

    fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    fn refusals(&self) -> usize {
        self.state.refusals.load(Ordering::SeqCst)
    }

    fn received(&self) -> Vec<ReceivedMail> {
        self.state
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits up to `within` for `n` received mails.
    async fn wait_for(&self, n: usize, within: Duration) -> Vec<ReceivedMail> {
        let deadline = Instant::now() + within;
        loop {
            let received = self.received();
            if received.len() >= n || Instant::now() > deadline {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for FakeSmtp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn fake_session(stream: TcpStream, behaviour: Behaviour, state: Arc<FakeState>) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let mut line = String::new();
    if behaviour == Behaviour::Silent {
        // Hold the connection open, read and drop whatever comes, until the client leaves.
        while matches!(reader.read_line(&mut line).await, Ok(n) if n > 0) {
            line.clear();
        }
        return;
    }
    let _ = writer.write_all(b"220 fake ESMTP\r\n").await;
    let (mut from, mut to) = (String::new(), Vec::new());
    loop {
        line.clear();
        if !matches!(reader.read_line(&mut line).await, Ok(n) if n > 0) {
            return;
        }
        let command = line.trim_end().to_ascii_uppercase();
        let refused = |state: &FakeState| {
            state.refusals.fetch_add(1, Ordering::SeqCst);
            "554 5.7.1 Refused by policy\r\n"
        };
        let reply = if command.starts_with("EHLO") || command.starts_with("HELO") {
            "250 fake\r\n"
        } else if command.starts_with("MAIL") {
            from = address(&line);
            if behaviour == Behaviour::RefuseSender {
                refused(&state)
            } else {
                "250 OK\r\n"
            }
        } else if command.starts_with("RCPT") {
            to.push(address(&line));
            if behaviour == Behaviour::RefuseRecipient {
                refused(&state)
            } else {
                "250 OK\r\n"
            }
        } else if command.starts_with("DATA") {
            let _ = writer.write_all(b"354 go ahead\r\n").await;
            let mut data = String::new();
            loop {
                line.clear();
                if !matches!(reader.read_line(&mut line).await, Ok(n) if n > 0) {
                    return;
                }
                if line.trim_end() == "." {
                    break;
                }
                data.push_str(line.strip_prefix('.').unwrap_or(&line));
            }
            state
                .received
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(ReceivedMail {
                    from: std::mem::take(&mut from),
                    to: std::mem::take(&mut to),
                    data,
                });
            "250 queued\r\n"
        } else if command.starts_with("QUIT") {
            let _ = writer.write_all(b"221 bye\r\n").await;
            return;
        } else {
            "250 OK\r\n"
        };
        if writer.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// `MAIL FROM:<a@b.c> BODY=8BITMIME` -> `a@b.c`.
fn address(line: &str) -> String {
    line.split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map(|(address, _)| address.to_owned())
        .unwrap_or_default()
}

/// The outbox row of the mail to `recipient`, as the worker left it.
#[derive(Debug)]
struct OutboxRow {
    status: String,
    attempts: i64,
    next_attempt_at: i64,
    last_error: Option<String>,
    sealed: bool,
}

/// An app on the manual clock at [`start`] that sends its mail to `smtp`.
fn mailing_through(smtp: &FakeSmtp) -> TestAppBuilder {
    TestApp::builder()
        .manual_clock(start())
        .var("MAIL_PORT", &smtp.port.to_string())
}

async fn outbox_row(app: &TestApp, recipient: &str) -> Option<OutboxRow> {
    let row = sqlx::query(
        "SELECT status, attempts, next_attempt_at, last_error, sealed FROM mail_outbox
         WHERE recipient = $1",
    )
    .bind(recipient)
    .fetch_optional(app.core.db().reader())
    .await
    .expect("read the outbox")?;
    let sealed: Option<Vec<u8>> = row.try_get("sealed").expect("sealed");
    Some(OutboxRow {
        status: row.try_get("status").expect("status"),
        attempts: row.try_get("attempts").expect("attempts"),
        next_attempt_at: row.try_get("next_attempt_at").expect("next_attempt_at"),
        last_error: row.try_get("last_error").expect("last_error"),
        sealed: sealed.is_some(),
    })
}

/// Waits up to `within` for the outbox row of `recipient` to satisfy `done`.
async fn wait_for_row(
    app: &TestApp,
    recipient: &str,
    within: Duration,
    done: impl Fn(&OutboxRow) -> bool,
) -> OutboxRow {
    let deadline = Instant::now() + within;
    loop {
        let row = outbox_row(app, recipient).await;
        match row {
            Some(row) if done(&row) => return row,
            _ if Instant::now() > deadline => {
                panic!("the outbox row of {recipient} did not get there in {within:?}: {row:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

async fn request_code(app: &TestApp, email: &str) {
    let data = app.otp_request(&fresh_client(), email).await;
    assert_eq!(data["expiresInSeconds"], 600);
}

fn code_of(mails: &[ReceivedMail], to: &str) -> String {
    let mail = mails
        .iter()
        .find(|m| m.to == [to.to_owned()])
        .unwrap_or_else(|| panic!("no mail to {to} in {mails:?}"));
    extract_code(&mail.text_body()).unwrap_or_else(|| panic!("no code in {}", mail.text_body()))
}

#[tokio::test]
async fn an_smtp_server_that_never_answers_delays_mail_but_not_requests() {
    let smtp = FakeSmtp::start(Behaviour::Silent).await;
    let app = mailing_through(&smtp)
        .var("MAIL_TIMEOUT", "3s")
        .spawn()
        .await;
    let t0 = app.clock.now_ms();

    request_code(&app, "first@example.com").await;
    // The worker has connected and waits for a greeting that never comes...
    let deadline = Instant::now() + Duration::from_secs(3);
    while smtp.connections() == 0 {
        assert!(Instant::now() < deadline, "the worker never connected");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // ...and meanwhile requests are served: this one is answered while the first attempt
    // is still hanging (nothing was recorded for it yet).
    request_code(&app, "second@example.com").await;
    let first = outbox_row(&app, "first@example.com").await.expect("queued");
    assert_eq!((first.status.as_str(), first.attempts), ("pending", 0));

    // MAIL_TIMEOUT ends the attempt: without it the worker would wait forever.
    let first = wait_for_row(&app, "first@example.com", Duration::from_secs(6), |r| {
        r.attempts == 1
    })
    .await;
    assert_eq!(first.status, "pending");
    assert!(first.sealed, "the mail is kept for the next attempt");
    assert_eq!(first.next_attempt_at, t0 + 2000);
    let error = first.last_error.expect("the failure is recorded");
    assert!(error.contains("MAIL_TIMEOUT"), "{error}");

    // A working server takes over. The second mail may have gone to the silent server
    // before the switch: let that attempt end too, then pass the backoff: both arrive.
    smtp.set(Behaviour::Accept);
    let second = wait_for_row(&app, "second@example.com", Duration::from_secs(6), |r| {
        r.attempts == 1
    })
    .await;
    assert!(
        second.status == "sent" || second.next_attempt_at == t0 + 2000,
        "{second:?}"
    );
    app.clock.advance(TimeDelta::seconds(2));
    let mails = smtp.wait_for(2, Duration::from_secs(5)).await;
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert_eq!(code_of(&mails, "first@example.com").len(), 6);
    assert_eq!(code_of(&mails, "second@example.com").len(), 6);
    let first = wait_for_row(&app, "first@example.com", Duration::from_secs(5), |r| {
        r.status == "sent"
    })
    .await;
    assert_eq!((first.attempts, first.sealed), (2, false));
}

#[tokio::test]
async fn a_refusing_smtp_server_gets_retries_with_backoff_and_the_mail_is_not_lost() {
    let smtp = FakeSmtp::start(Behaviour::RefuseSender).await;
    let app = mailing_through(&smtp).spawn().await;
    let t0 = app.clock.now_ms();
    let email = "refused@example.com";

    // The request does not notice.
    request_code(&app, email).await;

    // First attempt refused: retried 2 s later, and not before (the clock stands still).
    let row = wait_for_row(&app, email, Duration::from_secs(5), |r| r.attempts == 1).await;
    assert_eq!((row.status.as_str(), row.sealed), ("pending", true));
    assert_eq!(row.next_attempt_at, t0 + 2000);
    let error = row.last_error.expect("the refusal is recorded");
    assert!(error.contains("554"), "{error}");

    // Second attempt at +2 s, refused again: the wait doubles.
    app.clock.advance(TimeDelta::seconds(2));
    let row = wait_for_row(&app, email, Duration::from_secs(5), |r| r.attempts == 2).await;
    assert_eq!((row.status.as_str(), row.sealed), ("pending", true));
    assert_eq!(row.next_attempt_at, t0 + 2000 + 4000);
    assert_eq!(smtp.refusals(), 2);

    // The server accepts again: the third attempt delivers, and the code in it works.
    smtp.set(Behaviour::Accept);
    app.clock.advance(TimeDelta::seconds(4));
    let mails = smtp.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(mails.len(), 1);
    let row = wait_for_row(&app, email, Duration::from_secs(5), |r| r.status == "sent").await;
    assert_eq!((row.attempts, row.sealed), (3, false));
    app.post("/auth/otp/verify")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({ "email": email, "code": code_of(&mails, email) }))
        .await;
}

#[tokio::test]
async fn refused_mail_is_retried_until_its_code_expires_or_a_day_passes_never_forever() {
    let smtp = FakeSmtp::start(Behaviour::RefuseRecipient).await;
    let app = mailing_through(&smtp).spawn().await;
    let t0 = app.clock.now_ms();

    // A code mail (expires with its code) and an admin's reply (no expiry).
    request_code(&app, "code@example.com").await;
    let contact = app
        .core
        .create_contact(
            &Actor::Anonymous,
            NewContact::try_from(ContactInput {
                first_name: Some("Ana".into()),
                last_name: Some("Silva".into()),
                email: Some("reply@example.com".into()),
                message: Some("Evening classes?".into()),
                ..ContactInput::default()
            })
            .expect("a valid contact request"),
        )
        .await
        .expect("create the contact request");
    app.core
        .reply_to_contact(
            &Actor::Operator,
            &contact.typed_id(),
            &ReplyText::try_from(ReplyInput {
                reply_message: Some("Yes, on Tuesdays.".into()),
            })
            .expect("a valid reply"),
        )
        .await
        .expect("the reply is stored whatever the SMTP server says");

    for recipient in ["code@example.com", "reply@example.com"] {
        let row = wait_for_row(&app, recipient, Duration::from_secs(5), |r| r.attempts == 1).await;
        assert_eq!(row.next_attempt_at, t0 + 2000, "{recipient}");
        assert!(row.last_error.expect("recorded").contains("554"));
    }

    // Past the code's 10 minutes: the code mail is dropped unsent (and erased); the reply
    // is tried once more, with the next wait doubled.
    app.clock.advance(TimeDelta::minutes(11));
    let now = app.clock.now_ms();
    let reply = wait_for_row(&app, "reply@example.com", Duration::from_secs(5), |r| {
        r.attempts == 2
    })
    .await;
    assert_eq!((reply.status.as_str(), reply.sealed), ("pending", true));
    assert_eq!(reply.next_attempt_at, now + 4000);
    let code = wait_for_row(&app, "code@example.com", Duration::from_secs(5), |r| {
        r.status == "expired"
    })
    .await;
    assert_eq!((code.attempts, code.sealed), (1, false));

    // A day after it was queued, the reply is given up: marked failed with its last error,
    // never claimed again.
    app.clock.advance(TimeDelta::hours(24));
    let reply = wait_for_row(&app, "reply@example.com", Duration::from_secs(5), |r| {
        r.status == "failed"
    })
    .await;
    assert_eq!((reply.attempts, reply.sealed), (3, false));
    assert!(reply.last_error.expect("recorded").contains("554"));
    assert_eq!(smtp.refusals(), 4);
    assert!(smtp.received().is_empty());
}

// ---------------------------------------------------------------------------------------
// Slow clients, against a server with short timeouts.

/// The same application served with other timeouts; stopped when dropped.
struct Served {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Served {
    /// What SIGTERM does in `langcamp serve`.
    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve_with(app: &TestApp, options: ServeOptions) -> Served {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(langcamp_http::serve_with(
        app.core.clone(),
        listener,
        async {
            let _ = stopped.await;
        },
        options,
    ));
    Served {
        addr,
        stop: Some(stop),
    }
}

/// What a raw client saw: the bytes the server sent, and when it closed the connection
/// (time since the client started), or `None` if it was still open after `patience`.
struct Outcome {
    answer: String,
    closed_after: Option<Duration>,
}

/// Connects, sends `head`, then one byte of `trickle` every 100 ms (until the server has
/// sent `answers` responses, or the bytes run out: the client then stays connected without
/// sending), and reads until the server closes or `patience` passes.
async fn slow_client(
    addr: SocketAddr,
    head: &[u8],
    trickle: &[u8],
    answers: usize,
    patience: Duration,
) -> Outcome {
    let started = Instant::now();
    let stream = TcpStream::connect(addr).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let answered = Arc::new(AtomicUsize::new(0));
    let head = head.to_vec();
    let trickle = trickle.to_vec();
    let sender = tokio::spawn({
        let answered = Arc::clone(&answered);
        async move {
            if writer.write_all(&head).await.is_ok() {
                for byte in trickle {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if answered.load(Ordering::SeqCst) >= answers
                        || writer.write_all(&[byte]).await.is_err()
                    {
                        break;
                    }
                }
            }
            // Keep the writing half open (dropping it sends FIN): the server alone decides
            // when the connection ends.
            std::future::pending::<()>().await;
            drop(writer);
        }
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let closed_after = loop {
        match tokio::time::timeout_at(started + patience, reader.read(&mut buf)).await {
            Err(_) => break None,
            Ok(Ok(0) | Err(_)) => break Some(started.elapsed()),
            Ok(Ok(n)) => {
                answer.extend_from_slice(&buf[..n]);
                let seen = String::from_utf8_lossy(&answer)
                    .matches("HTTP/1.1 ")
                    .count();
                answered.store(seen, Ordering::SeqCst);
            }
        }
    };
    sender.abort();
    Outcome {
        answer: String::from_utf8_lossy(&answer).into_owned(),
        closed_after,
    }
}

fn short_headers() -> ServeOptions {
    ServeOptions {
        header_read_timeout: Duration::from_secs(1),
        ..ServeOptions::default()
    }
}

/// A one-second pause allowed between body bytes, and `read_secs` for the whole body.
fn body_deadlines(read_secs: u64) -> ServeOptions {
    ServeOptions {
        body_idle_timeout: Duration::from_secs(1),
        body_read_timeout: Duration::from_secs(read_secs),
        ..ServeOptions::default()
    }
}

/// The server still answers ordinary requests on a fresh connection.
async fn still_serving(addr: SocketAddr) {
    let outcome = slow_client(
        addr,
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        b"",
        1,
        Duration::from_secs(5),
    )
    .await;
    assert!(
        outcome.answer.starts_with("HTTP/1.1 200"),
        "{}",
        outcome.answer
    );
}

#[track_caller]
fn assert_cut_between(outcome: &Outcome, at_least: Duration, at_most: Duration) {
    let closed = outcome
        .closed_after
        .unwrap_or_else(|| panic!("the connection was still open; got {:?}", outcome.answer));
    assert!(
        closed >= at_least && closed <= at_most,
        "closed after {closed:?}, expected {at_least:?}..{at_most:?}"
    );
}

#[tokio::test]
async fn a_client_trickling_its_headers_is_cut_off_at_the_header_timeout() {
    let app = TestApp::spawn().await;
    let server = serve_with(&app, short_headers()).await;
    // 5 s worth of header bytes, one every 100 ms: never a complete head.
    let outcome = slow_client(
        server.addr,
        b"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: ",
        &[b'a'; 50],
        1,
        Duration::from_secs(8),
    )
    .await;
    assert_cut_between(&outcome, Duration::from_secs(1), Duration::from_secs(4));
    assert_eq!(
        outcome.answer, "",
        "no answer to a request that never arrived"
    );
    still_serving(server.addr).await;
}

#[tokio::test]
async fn a_connection_that_stays_silent_is_closed_at_the_header_timeout() {
    let app = TestApp::spawn().await;
    let server = serve_with(&app, short_headers()).await;
    // Not a byte: the HTTP version is never known, so only the server's own deadline helps.
    let outcome = slow_client(server.addr, b"", b"", 1, Duration::from_secs(6)).await;
    assert_cut_between(&outcome, Duration::from_secs(1), Duration::from_secs(4));
    assert_eq!(outcome.answer, "");
    // The same for a client that stops after the first byte of an HTTP/2 preface.
    let outcome = slow_client(server.addr, b"P", b"", 1, Duration::from_secs(6)).await;
    assert_cut_between(&outcome, Duration::from_secs(1), Duration::from_secs(4));
    still_serving(server.addr).await;
}

#[tokio::test]
async fn the_second_request_on_a_kept_alive_connection_has_the_same_header_timeout() {
    let app = TestApp::spawn().await;
    let server = serve_with(&app, short_headers()).await;
    let started = Instant::now();
    let outcome = slow_client(
        server.addr,
        b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\nX-Slow: ",
        &[b'a'; 50],
        2,
        Duration::from_secs(8),
    )
    .await;
    // The first request is answered, the second never completes and is cut.
    assert!(
        outcome.answer.starts_with("HTTP/1.1 200"),
        "{}",
        outcome.answer
    );
    assert_eq!(
        outcome.answer.matches("HTTP/1.1 ").count(),
        1,
        "{}",
        outcome.answer
    );
    assert_cut_between(&outcome, Duration::from_secs(1), Duration::from_secs(4));
    assert!(started.elapsed() < Duration::from_secs(8));
}

const JSON_HEAD: &str = "POST /auth/otp/request HTTP/1.1\r\nHost: t\r\n\
                         Content-Type: application/json\r\nContent-Length: 1000\r\n";

fn json_head() -> Vec<u8> {
    format!("{JSON_HEAD}X-Forwarded-For: {}\r\n\r\n{{", fresh_client()).into_bytes()
}

#[track_caller]
fn assert_request_timeout(outcome: &Outcome) {
    assert!(
        outcome.answer.starts_with("HTTP/1.1 408"),
        "{}",
        outcome.answer
    );
    assert!(
        outcome.answer.contains("REQUEST_TIMEOUT"),
        "{}",
        outcome.answer
    );
    assert!(
        outcome
            .answer
            .to_ascii_lowercase()
            .contains("connection: close"),
        "{}",
        outcome.answer
    );
}

#[tokio::test]
async fn a_client_trickling_its_body_gets_408_at_the_body_deadline() {
    let app = TestApp::spawn().await;
    let server = serve_with(&app, body_deadlines(2)).await;
    // 1000 bytes at 10 a second would take 100 s; the pauses stay under the idle timeout.
    let outcome = slow_client(
        server.addr,
        &json_head(),
        &[b' '; 999],
        1,
        Duration::from_secs(8),
    )
    .await;
    assert_request_timeout(&outcome);
    assert_cut_between(&outcome, Duration::from_secs(2), Duration::from_secs(5));
    still_serving(server.addr).await;
}

#[tokio::test]
async fn a_client_that_stops_sending_its_body_gets_408_after_the_idle_timeout() {
    let app = TestApp::spawn().await;
    let server = serve_with(&app, body_deadlines(10)).await;
    // One byte of the 1000 announced, then silence.
    let outcome = slow_client(server.addr, &json_head(), b"", 1, Duration::from_secs(8)).await;
    assert_request_timeout(&outcome);
    assert_cut_between(&outcome, Duration::from_secs(1), Duration::from_secs(4));
    still_serving(server.addr).await;
}

// ---------------------------------------------------------------------------------------
// The listener's close.

/// Whether a connection attempt made while the server stops was refused, never completed,
/// or completed and was answered (the answer's first line).
#[derive(Debug)]
enum Attempt {
    Refused,
    NeverCompleted,
    Answered(String),
}

async fn attempt(addr: SocketAddr) -> Attempt {
    let mut stream =
        match tokio::time::timeout(Duration::from_millis(100), TcpStream::connect(addr)).await {
            Err(_) => return Attempt::NeverCompleted,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Attempt::Refused;
            }
            Ok(Err(e)) => panic!("connect failed: {e}"),
            Ok(Ok(stream)) => stream,
        };
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .expect("a completed connection takes its request");
    let mut answer = Vec::new();
    // A reset here is what a proxy turns into 502 for a POST: the test fails on it.
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer))
        .await
        .expect("answered within 5 s")
        .expect("a completed connection is answered, never reset");
    let answer = String::from_utf8_lossy(&answer);
    Attempt::Answered(answer.lines().next().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn a_connection_completed_while_the_listener_closes_is_answered_and_later_ones_never_complete()
 {
    // No drain; a long wait for the handshakes under way, so the test sees it.
    let app = TestApp::spawn().await;
    let mut served = serve_with(
        &app,
        ServeOptions {
            shutdown_drain: Duration::ZERO,
            handshake_wait: Duration::from_secs(2),
            ..ServeOptions::default()
        },
    )
    .await;
    still_serving(served.addr).await;

    served.stop();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let attempt = attempt(served.addr).await;
        let refused = matches!(attempt, Attempt::Refused);
        seen.push(attempt);
        if refused {
            break;
        }
    }
    // Whatever completed was answered (in `attempt`); then, before the close, the listener
    // stopped completing connections (a client's connect times out with nothing sent, so
    // a proxy resends even a POST elsewhere) and after it, refused them.
    for answered in seen.iter().filter_map(|a| match a {
        Attempt::Answered(line) => Some(line),
        _ => None,
    }) {
        assert!(answered.starts_with("HTTP/1.1 200"), "{seen:?}");
    }
    assert!(matches!(seen.last(), Some(Attempt::Refused)), "{seen:?}");
    let never_completed = seen
        .iter()
        .filter(|a| matches!(a, Attempt::NeverCompleted))
        .count();
    assert!(never_completed >= 3, "{seen:?}");
}
