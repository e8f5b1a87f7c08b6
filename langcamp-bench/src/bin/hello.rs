//! `hello`: the baseline of the HTTP benchmark. A bare hyper "Hello, World!" server with
//! the runtime settings of `langcamp serve` (tokio multi-thread runtime, hyper-util's auto
//! builder with the same HTTP/1 timer and header read timeout), so the ratio of an
//! endpoint to it measures what Langcamp adds. `hello [PORT] [FILE]` (port 8081 by
//! default): without FILE it answers "Hello, World!"; with FILE, the file's bytes as
//! `application/json`, the same-bytes baseline of a list endpoint (a bare server sending
//! the very answer from memory: the ceiling for an endpoint that sends that many bytes).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

/// Same as `langcamp_http::HEADER_READ_TIMEOUT`.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::main]
async fn main() {
    let port = std::env::args()
        .nth(1)
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(8081);
    let answer = match std::env::args().nth(2) {
        None => Answer {
            body: Bytes::from_static(b"Hello, World!"),
            content_type: HeaderValue::from_static("text/plain; charset=utf-8"),
        },
        Some(file) => match std::fs::read(&file) {
            Ok(bytes) => Answer {
                body: Bytes::from(bytes),
                content_type: HeaderValue::from_static("application/json"),
            },
            Err(e) => {
                eprintln!("hello: cannot read {file}: {e}");
                std::process::exit(1);
            }
        },
    };
    let answer: &'static Answer = Box::leak(Box::new(answer));
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("hello: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let connection = builder
            .serve_connection_with_upgrades(
                TokioIo::new(stream),
                service_fn(move |request| hello(answer, request)),
            )
            .into_owned();
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}

/// What every request gets.
struct Answer {
    body: Bytes,
    content_type: HeaderValue,
}

async fn hello(
    answer: &'static Answer,
    _: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut response = Response::new(Full::new(answer.body.clone()));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, answer.content_type.clone());
    Ok(response)
}
