//! A school's system hearing webhooks, for the tests: a real HTTP server on 127.0.0.1 that
//! records every request and answers the status it is told to, and a check of the
//! Standard Webhooks signature written from the specification (not from the server's code).

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use langcamp_core::platform::crypto::hmac_sha256;

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    /// The `webhook-id`.
    pub fn id(&self) -> &str {
        self.header("webhook-id")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }

    /// How many of the `webhook-signature`'s signatures `secret` (`whsec_...`) made, as a
    /// receiver checks them: HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed with the
    /// base64-decoded bytes after `whsec_`.
    pub fn signatures_by(&self, secret: &str) -> usize {
        let key = STANDARD
            .decode(secret.strip_prefix("whsec_").expect("a whsec_ secret"))
            .expect("base64 after whsec_");
        let content = format!(
            "{}.{}.{}",
            self.id(),
            self.header("webhook-timestamp"),
            self.body
        );
        let expected = format!(
            "v1,{}",
            STANDARD.encode(hmac_sha256(&key, content.as_bytes()))
        );
        self.header("webhook-signature")
            .split(' ')
            .filter(|signature| *signature == expected)
            .count()
    }
}

#[derive(Default)]
struct State {
    status: AtomicU16,
    got: Mutex<Vec<Received>>,
    connections: AtomicUsize,
}

/// The receiver: answers 200 until told otherwise.
#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the receiver");
        let addr = listener.local_addr().expect("address");
        let state = Arc::new(State::default());
        state.status.store(200, Ordering::SeqCst);
        let serving = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                serving.connections.fetch_add(1, Ordering::SeqCst);
                let state = Arc::clone(&serving);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = Arc::clone(&state);
                        async move { Ok::<_, Infallible>(record(&state, request).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver { addr, state }
    }

    /// Where endpoints point: `http://127.0.0.1:<port>/hooks`.
    pub fn url(&self) -> String {
        format!("http://{}/hooks", self.addr)
    }

    /// The same receiver by the name `localhost`.
    pub fn url_by_name(&self, scheme: &str) -> String {
        format!("{scheme}://localhost:{}/hooks", self.addr.port())
    }

    /// Answers `status` from now on.
    pub fn answer(&self, status: u16) {
        self.state.status.store(status, Ordering::SeqCst);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.got.lock().expect("the log").clone()
    }

    /// Connections opened to it (a refused call opens none).
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Waits until it got at least `count` requests (at most 20 s); all it got.
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let got = self.received();
            if got.len() >= count {
                return got;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the receiver got {} of {count} requests",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn record(state: &State, request: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let headers = parts
        .headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                value.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    state.got.lock().expect("the log").push(Received {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    let status = state.status.load(Ordering::SeqCst);
    Response::builder()
        .status(status)
        .body(Full::new(Bytes::from_static(b"ok")))
        .expect("a response")
}

/// A server that accepts connections and never answers: a dead endpoint, as a worker
/// calling it sees one (each call ends at its timeout).
pub async fn silent_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    addr
}
