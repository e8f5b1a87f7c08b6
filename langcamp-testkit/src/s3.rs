//! The S3 test server: moto, which `scripts/s3-test-server.sh` installs and starts, named
//! by `TEST_S3_ENDPOINT`. It takes any credentials and is only spoken to unsigned here, to
//! create a bucket and to list what is in it (what it stores is not under test).

use std::io::{Read, Write};
use std::net::TcpStream;

/// `TEST_S3_ENDPOINT`, or `None` when it is unset (a test that needs it is then skipped,
/// saying so with [`skip`]).
pub fn endpoint() -> Option<String> {
    std::env::var("TEST_S3_ENDPOINT")
        .ok()
        .filter(|e| !e.trim().is_empty())
}

/// Says that the running test is skipped for want of the S3 test server, and how to start
/// it. The test harness names each test's thread after the test.
pub fn skip() {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    eprintln!(
        "skipped {test}: TEST_S3_ENDPOINT is unset; start the S3 test server with \
         `TEST_S3_ENDPOINT=\"$(scripts/s3-test-server.sh)\"` to run it"
    );
}

/// A new bucket of a unique name on the server at `endpoint`; its name.
pub fn create_bucket(endpoint: &str) -> String {
    let name = format!("lc-{}", uuid::Uuid::new_v4().simple());
    let (status, body) = request(endpoint, "PUT", &format!("/{name}"));
    assert_eq!(status, 200, "create bucket {name}: {body}");
    name
}

/// One plain HTTP/1.1 request without a body (blocking: it is short, and callers are
/// synchronous): the status and the whole response.
pub fn request(endpoint: &str, method: &str, path: &str) -> (u16, String) {
    let authority = endpoint
        .trim_end_matches('/')
        .strip_prefix("http://")
        .expect("TEST_S3_ENDPOINT is an http:// URL");
    let mut stream = TcpStream::connect(authority).expect("reach the S3 test server");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}
