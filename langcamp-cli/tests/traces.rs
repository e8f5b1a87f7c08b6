//! Traces (CONTRACT §23) from outside: `langcamp serve` with `OTEL_EXPORTER_OTLP_ENDPOINT`
//! pointing at a collector of this test, which decodes each OTLP/HTTP request with the
//! OpenTelemetry project's own message definitions (`opentelemetry-proto`). A request
//! carrying a `traceparent` becomes the server span under it, with its database
//! statements under that; the mail it queues is delivered (to a real SMTP listener) in a
//! trace of its own linked to it; no span carries the address or the code; JSON log lines
//! carry the ids; a malformed `traceparent` starts a new trace; a dead collector costs the
//! requests nothing and its spans are counted as dropped. On SQLite, and on PostgreSQL
//! with `TEST_DATABASE_URL`.

mod common;

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message as _;

use common::Env;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
const SERVER: i32 = 2;
const CLIENT: i32 = 3;

/// One span as the collector got it, with its resource's attributes.
#[derive(Clone, Debug)]
struct Got {
    name: String,
    kind: i32,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    attributes: HashMap<String, String>,
    resource: HashMap<String, String>,
    links: Vec<(String, String)>,
    status_code: i32,
}

impl Got {
    fn attribute(&self, key: &str) -> &str {
        self.attributes.get(key).map_or("", String::as_str)
    }
}

fn text_of(attributes: &[KeyValue]) -> HashMap<String, String> {
    attributes
        .iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(AnyValue::StringValue(s)) => s.clone(),
                Some(AnyValue::IntValue(i)) => i.to_string(),
                Some(AnyValue::BoolValue(b)) => b.to_string(),
                Some(AnyValue::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

/// A collector on 127.0.0.1 keeping every span it is sent.
#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<Got>>>,
}

impl Collector {
    async fn start() -> (Collector, SocketAddr) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the collector");
        let addr = listener.local_addr().expect("address");
        let collector = Collector::default();
        let keeping = collector.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let keeping = keeping.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let keeping = keeping.clone();
                        async move { Ok::<_, Infallible>(keeping.take(request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        (collector, addr)
    }

    async fn take(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<Full<Bytes>> {
        let path_ok = request.uri().path() == "/v1/traces";
        let protobuf = request
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes() == b"application/x-protobuf");
        let body = request
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let Ok(decoded) = ExportTraceServiceRequest::decode(body) else {
            return answer(400);
        };
        if !path_ok || !protobuf {
            return answer(404);
        }
        let mut spans = self.spans.lock().expect("spans");
        for resource_spans in decoded.resource_spans {
            let resource = text_of(
                &resource_spans
                    .resource
                    .map(|r| r.attributes)
                    .unwrap_or_default(),
            );
            for scope in resource_spans.scope_spans {
                for span in scope.spans {
                    spans.push(Got {
                        name: span.name,
                        kind: span.kind,
                        trace_id: hex(&span.trace_id),
                        span_id: hex(&span.span_id),
                        parent_span_id: hex(&span.parent_span_id),
                        attributes: text_of(&span.attributes),
                        resource: resource.clone(),
                        links: span
                            .links
                            .iter()
                            .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
                            .collect(),
                        status_code: span.status.map_or(0, |s| s.code),
                    });
                }
            }
        }
        answer(200)
    }

    fn spans(&self) -> Vec<Got> {
        self.spans.lock().expect("spans").clone()
    }

    /// Waits until a span matching `check` arrived (at most 20 s).
    async fn wait_for(&self, what: &str, check: impl Fn(&Got) -> bool) -> Got {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(found) = self.spans().into_iter().find(&check) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "no span {what}; got {:#?}",
                self.spans()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn answer(status: u16) -> hyper::Response<Full<Bytes>> {
    hyper::Response::builder()
        .status(status)
        .body(Full::new(Bytes::new()))
        .expect("a response")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An SMTP server that takes every mail (and keeps nothing).
async fn smtp_sink() -> u16 {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = tokio::io::BufReader::new(read).lines();
                let _ = write.write_all(b"220 sink ESMTP\r\n").await;
                let mut in_data = false;
                while let Ok(Some(line)) = lines.next_line().await {
                    let reply: &[u8] = if in_data {
                        if line != "." {
                            continue;
                        }
                        in_data = false;
                        b"250 queued\r\n"
                    } else {
                        let verb = line.get(..4).unwrap_or("").to_ascii_uppercase();
                        match verb.as_str() {
                            "EHLO" => b"250-sink\r\n250 8BITMIME\r\n",
                            "DATA" => {
                                in_data = true;
                                b"354 go on\r\n"
                            }
                            "QUIT" => {
                                let _ = write.write_all(b"221 bye\r\n").await;
                                break;
                            }
                            _ => b"250 ok\r\n",
                        }
                    };
                    if write.write_all(reply).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("address")
        .port()
}

/// `langcamp serve` on the test's database with `vars`; its stderr (the log) is collected.
struct Server {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(env: &Env, vars: &[(&str, String)]) -> Server {
        let port = free_port();
        let mut command = env.langcamp(&["serve"]);
        command
            .env("PORT", port.to_string())
            .env("HOST", "127.0.0.1")
            .env("JWT_SECRET", "traces-test-secret-0123456789abcdef")
            .env("SHUTDOWN_DRAIN", "0")
            .env("RUST_LOG", "info,sqlx=warn")
            .env("LOG_FORMAT", "json")
            .env_remove("MAIL_HOST")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in vars {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start langcamp serve");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().expect("log").push(line);
            }
        });
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the server did not start: {:?}",
                log.lock().expect("log")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Server { child, port, log }
    }

    /// One request: its status line and body.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !body.is_empty() {
            head.push_str("Content-Type: application/json\r\n");
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream
            .write_all(format!("{head}{body}").as_bytes())
            .expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read");
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        let body = answer
            .split_once("\r\n\r\n")
            .map_or(String::new(), |(_, b)| b.to_owned());
        (status, body)
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn migrated(prefix: &str) -> Env {
    let env = Env::create(prefix).await;
    let out = env.langcamp(&["migrate"]).output().expect("migrate");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env
}

fn database_system(env: &Env) -> &'static str {
    if env.db.url().starts_with("postgres") {
        "postgresql"
    } else {
        "sqlite"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_traced_under_its_caller_with_its_statements_and_its_mail() {
    let env = migrated("traces_request").await;
    let (collector, addr) = Collector::start().await;
    let smtp = smtp_sink().await;
    let server = Server::start(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=test".into(),
            ),
            ("MAIL_HOST", "127.0.0.1".into()),
            ("MAIL_PORT", smtp.to_string()),
            ("MAIL_SECURE", "none".into()),
            ("MAIL_FROM_ADDRESS", "school@langcamp.test".into()),
        ],
    );
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let email = "ana.traced@example.com";
    let (status, _) = server.request(
        "POST",
        "/auth/otp/request",
        &[
            ("traceparent", &traceparent),
            ("tracestate", "vendor=1"),
            ("user-agent", "trace-test/1.0"),
            ("x-forwarded-for", "10.1.2.3"),
        ],
        &format!("{{\"email\":\"{email}\"}}"),
    );
    assert_eq!(status, 200);

    let request = collector
        .wait_for("for the request", |s| {
            s.kind == SERVER && s.trace_id == TRACE
        })
        .await;
    assert_eq!(request.name, "POST /auth/otp/request");
    assert_eq!(
        request.parent_span_id, PARENT,
        "a child of the caller's span"
    );
    assert_eq!(request.attribute("http.request.method"), "POST");
    assert_eq!(request.attribute("http.route"), "/auth/otp/request");
    assert_eq!(request.attribute("http.response.status_code"), "200");
    assert_eq!(request.attribute("url.path"), "/auth/otp/request");
    assert_eq!(request.attribute("user_agent.original"), "trace-test/1.0");
    assert!(
        !request.attribute("client.address").is_empty(),
        "{request:?}"
    );
    assert_eq!(
        request.status_code, 0,
        "unset: only a 5xx is an error of the server"
    );
    assert_eq!(
        request.resource.get("service.name").map(String::as_str),
        Some("langcamp")
    );
    assert!(request.resource.contains_key("service.version"));
    assert!(request.resource.contains_key("service.instance.id"));
    assert_eq!(
        request
            .resource
            .get("deployment.environment")
            .map(String::as_str),
        Some("test")
    );

    // Its database work: client spans in its trace, under it (SQLite's group-commit write
    // is one span; PostgreSQL's statements are each one, under that write).
    let statement = collector
        .wait_for("for a database statement", |s| {
            s.kind == CLIENT && s.trace_id == TRACE && s.attributes.contains_key("db.system.name")
        })
        .await;
    assert_eq!(statement.attribute("db.system.name"), database_system(&env));
    assert!(!statement.attribute("db.operation.name").is_empty());
    let ids: HashMap<String, Got> = collector
        .spans()
        .into_iter()
        .filter(|s| s.trace_id == TRACE)
        .map(|s| (s.span_id.clone(), s))
        .collect();
    let mut up = statement.clone();
    while up.span_id != request.span_id {
        up = ids
            .get(&up.parent_span_id)
            .unwrap_or_else(|| panic!("{up:?} hangs under the request"))
            .clone();
    }

    // The code's mail goes out in a trace of its own, linked to the request's.
    let delivery = collector
        .wait_for("for the SMTP delivery", |s| s.name == "smtp send")
        .await;
    assert_eq!(delivery.kind, CLIENT);
    assert_ne!(delivery.trace_id, TRACE, "its own trace");
    assert!(
        delivery.links.iter().any(|(trace, _)| trace == TRACE),
        "linked to the request: {delivery:?}"
    );

    // Nothing in any span names the address (nor the code: no span holds a body).
    for span in collector.spans() {
        for value in span.attributes.values().chain(span.resource.values()) {
            assert!(!value.contains("ana.traced"), "{span:?}");
            assert!(!value.contains('@'), "an address in {span:?}");
        }
    }

    // The JSON log line of the request carries its ids.
    let log = server.log();
    let access = log
        .iter()
        .find(|line| line.contains("\"route\":\"/auth/otp/request\""))
        .unwrap_or_else(|| panic!("the access line in {log:#?}"));
    let line: serde_json::Value = serde_json::from_str(access).expect("a JSON line");
    assert_eq!(line["trace_id"], TRACE);
    assert_eq!(line["span_id"], request.span_id.as_str());
    assert!(
        line["request_id"].is_string(),
        "the request id stays: {line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_traceparent_starts_a_new_trace() {
    let env = migrated("traces_malformed").await;
    let (collector, addr) = Collector::start().await;
    let server = Server::start(
        &env,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))],
    );
    for bad in [
        "garbage",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    ] {
        let (status, _) = server.request("GET", "/courses", &[("traceparent", bad)], "");
        assert_eq!(status, 200, "a bad traceparent is never an error");
    }
    let (status, _) = server.request("GET", "/no/such/route", &[], "");
    assert_eq!(status, 404);
    collector
        .wait_for("for the unmatched request", |s| {
            s.kind == SERVER && s.name == "GET"
        })
        .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let requests: Vec<Got> = collector
            .spans()
            .into_iter()
            .filter(|s| s.kind == SERVER && s.name == "GET /courses")
            .collect();
        if requests.len() == 2 {
            for span in requests {
                assert!(span.parent_span_id.is_empty(), "a root: {span:?}");
                assert_ne!(span.trace_id, TRACE);
            }
            break;
        }
        assert!(Instant::now() < deadline, "{:#?}", collector.spans());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_collector_costs_the_requests_nothing_and_its_spans_are_counted_dropped() {
    let env = migrated("traces_dead").await;
    // Nothing listens there.
    let dead = free_port();
    let server = Server::start(
        &env,
        &[
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{dead}"),
            ),
            ("METRICS_TOKEN", "scrape".into()),
        ],
    );
    let began = Instant::now();
    for _ in 0..50 {
        let (status, _) = server.request("GET", "/courses", &[], "");
        assert_eq!(status, 200);
    }
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, metrics) =
            server.request("GET", "/metrics", &[("authorization", "Bearer scrape")], "");
        let dropped = metrics
            .lines()
            .find_map(|l| l.strip_prefix("langcamp_trace_spans_dropped_total "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        if dropped >= 50 {
            break;
        }
        assert!(Instant::now() < deadline, "dropped {dropped}:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_endpoint_nothing_is_traced_and_log_lines_carry_no_ids() {
    let env = migrated("traces_off").await;
    let server = Server::start(&env, &[]);
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let (status, _) = server.request("GET", "/courses", &[("traceparent", &traceparent)], "");
    assert_eq!(status, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    let access = loop {
        if let Some(line) = server
            .log()
            .into_iter()
            .find(|line| line.contains("\"route\":\"/courses\""))
        {
            break line;
        }
        assert!(Instant::now() < deadline, "{:#?}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!access.contains("trace_id"), "{access}");
}

/// The access-log line of the request with `request_id`, parsed.
fn access_line(server: &Server, request_id: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(line) = server
            .log()
            .into_iter()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
            .find(|line| line["request_id"] == request_id)
        {
            return line;
        }
        assert!(Instant::now() < deadline, "{:#?}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_sampler_leaves_out_makes_no_span_and_its_log_still_names_its_trace() {
    let env = migrated("traces_sampled").await;
    let (collector, addr) = Collector::start().await;
    // New traces are never kept; a caller's decision is followed.
    let server = Server::start(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio".into()),
            ("OTEL_TRACES_SAMPLER_ARG", "0".into()),
        ],
    );
    let unsampled = format!("00-{TRACE}-{PARENT}-00");
    for (request_id, traceparent) in [
        ("left-out-new", None),
        ("left-out-caller", Some(&unsampled)),
    ] {
        let mut headers = vec![("x-request-id", request_id)];
        if let Some(traceparent) = traceparent {
            headers.push(("traceparent", traceparent.as_str()));
        }
        let (status, _) = server.request("GET", "/courses", &headers, "");
        assert_eq!(status, 200);
    }
    // The caller's sampled trace is kept, after the two left out (the first of which read
    // the courses from the database: its statements make no span either).
    let sampled = format!("00-{TRACE}-{PARENT}-01");
    let (status, _) = server.request(
        "GET",
        "/courses",
        &[("traceparent", &sampled), ("x-request-id", "kept")],
        "",
    );
    assert_eq!(status, 200);
    let kept = collector
        .wait_for("the sampled request", |s| {
            s.kind == SERVER && s.name == "GET /courses"
        })
        .await;
    assert_eq!(kept.trace_id, TRACE);
    assert_eq!(kept.parent_span_id, PARENT);
    // Spans are exported in the order they end: by now the left-out requests' would be in.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let spans = collector.spans();
    let servers = spans.iter().filter(|s| s.kind == SERVER).count();
    assert_eq!(servers, 1, "only the sampled request: {spans:#?}");
    assert!(
        spans.iter().all(|s| s.trace_id == TRACE),
        "no statement or other span outside the kept trace: {spans:#?}"
    );
    // The left-out requests' log lines still carry ids: the caller's trace, or a new one.
    let new = access_line(&server, "left-out-new");
    let new_trace = new["trace_id"].as_str().expect("a trace id");
    assert_eq!(new_trace.len(), 32, "{new}");
    assert_ne!(new_trace, TRACE);
    assert_eq!(new["span_id"].as_str().map(str::len), Some(16), "{new}");
    let caller = access_line(&server, "left-out-caller");
    assert_eq!(caller["trace_id"], TRACE, "{caller}");
    assert_ne!(caller["span_id"], PARENT, "a span id of its own: {caller}");
    let kept_line = access_line(&server, "kept");
    assert_eq!(kept_line["trace_id"], TRACE);
    assert_eq!(kept_line["span_id"], kept.span_id.as_str());
}

/// `langcamp doctor`'s line `traces` (its JSON check) with `vars` set, and its exit code.
fn doctor_traces(env: &Env, vars: &[(&str, String)]) -> (Option<i32>, serde_json::Value) {
    let mut command = env.langcamp(&["doctor", "--json"]);
    command
        .env("JWT_SECRET", "traces-test-secret-0123456789abcdef")
        .env_remove("MAIL_HOST")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    for (name, value) in vars {
        command.env(name, value);
    }
    let out = command.output().expect("doctor");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let line = report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "traces"))
        .cloned()
        .unwrap_or_else(|| panic!("no traces line: {report}"));
    (out.status.code(), line)
}

/// `langcamp doctor` says where spans go and whether the collector takes them: a
/// collector that answers passes, one that is not there (or not at that path) warns and
/// fails nothing (spans are only dropped), a setting `serve` refuses fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_that_the_collector_takes_an_export() {
    let env = migrated("traces_doctor").await;
    let (collector, addr) = Collector::start().await;

    let (code, off) = doctor_traces(&env, &[]);
    assert_eq!(code, Some(0), "{off}");
    assert_eq!(off["ok"], true);
    assert!(off.get("warning").is_none(), "{off}");
    assert!(
        off["detail"].as_str().is_some_and(|d| d.starts_with("off")),
        "{off}"
    );

    let endpoint = format!("http://{addr}");
    let (code, on) = doctor_traces(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone()),
            ("OTEL_SERVICE_NAME", "langcamp-eu".into()),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio".into()),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25".into()),
        ],
    );
    assert_eq!(code, Some(0), "{on}");
    assert!(on["ok"] == true && on.get("warning").is_none(), "{on}");
    assert_eq!(
        on["detail"],
        format!(
            "spans of langcamp-eu to {endpoint}/v1/traces, sampler parentbased_traceidratio 0.25: the collector takes them"
        )
    );
    assert!(
        collector.spans().is_empty(),
        "an empty export carries no span"
    );

    // Not at that path: the collector answers 404.
    let (code, lost) = doctor_traces(
        &env,
        &[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("http://{addr}/v1/elsewhere"),
        )],
    );
    assert_eq!(code, Some(0), "{lost}");
    assert!(lost["ok"] == true && lost["warning"] == true, "{lost}");
    assert!(
        lost["detail"].as_str().is_some_and(|d| d.contains("404")),
        "{lost}"
    );

    let dead = free_port();
    let (code, refused) = doctor_traces(
        &env,
        &[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{dead}"),
        )],
    );
    assert_eq!(code, Some(0), "{refused}");
    assert!(
        refused["ok"] == true && refused["warning"] == true,
        "{refused}"
    );
    assert!(
        refused["detail"]
            .as_str()
            .is_some_and(|d| d.contains(&format!("TCP connection to 127.0.0.1:{dead}: "))),
        "{refused}"
    );
    assert!(
        refused["fix"]
            .as_str()
            .is_some_and(|f| f.contains("OTEL_EXPORTER_OTLP_ENDPOINT")),
        "{refused}"
    );

    let (code, bad) = doctor_traces(
        &env,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
            ("OTEL_TRACES_SAMPLER", "sometimes".into()),
        ],
    );
    assert_eq!(code, Some(1), "{bad}");
    assert_eq!(bad["ok"], false);
    assert!(
        bad["detail"]
            .as_str()
            .is_some_and(|d| d.contains("OTEL_TRACES_SAMPLER")),
        "{bad}"
    );
}
