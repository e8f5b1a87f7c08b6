//! An HTTP client bound to a caller, for tests against a running server.
//!
//! A [`Client`] carries the server's address and, for a signed-in caller, its bearer
//! token, so a test reads as what it checks:
//!
//! ```text
//! let me = student.get("/me").await;                       // 200, the envelope's data
//! let course = admin.post("/courses", &body).created().await;   // 201, the data
//! student.delete(&path).fails(403, "FORBIDDEN").await;
//! let page: Page = admin.get("/users").data_as().await;    // typed
//! ```

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::pin::Pin;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderMap;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A caller of one server: anonymous, or holding a bearer token. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    addr: SocketAddr,
    http: HyperClient<HttpConnector, Full<Bytes>>,
    token: Option<String>,
}

impl Client {
    /// An anonymous caller of the server at `addr`.
    pub fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            http: HyperClient::builder(TokioExecutor::new()).build_http(),
            token: None,
        }
    }

    /// The same server, called with `token` as the bearer.
    pub fn with_token(&self, token: &str) -> Client {
        Client {
            token: Some(token.to_owned()),
            ..self.clone()
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A request of any method, with this caller's token; add a body with [`Call::json`]
    /// or [`Call::body`].
    pub fn call(&self, method: Method, path: &str) -> Call {
        let call = Call {
            client: self.clone(),
            method,
            path: path.to_owned(),
            headers: Vec::new(),
            body: Bytes::new(),
        };
        match &self.token {
            Some(token) => call.bearer(token),
            None => call,
        }
    }

    pub fn get(&self, path: &str) -> Call {
        self.call(Method::GET, path)
    }

    pub fn delete(&self, path: &str) -> Call {
        self.call(Method::DELETE, path)
    }

    pub fn post(&self, path: &str, body: &Value) -> Call {
        self.call(Method::POST, path).json(body)
    }

    /// Nothing is at `path` any more: reading it and deleting it again are both 404.
    pub async fn assert_gone(&self, path: &str) {
        self.get(path).fails(404, "NOT_FOUND").await;
        self.delete(path).fails(404, "NOT_FOUND").await;
    }

    /// Each of `paths` (a listing with a query it must refuse) is `400 VALIDATION_FAILED`.
    pub async fn assert_invalid_queries(&self, paths: &[&str]) {
        for path in paths {
            self.get(path).invalid().await;
        }
    }

    /// A POST without a body: an action on what the path names (`/courses/{id}/duplicate`).
    pub fn post_empty(&self, path: &str) -> Call {
        self.call(Method::POST, path)
    }

    pub fn patch(&self, path: &str, body: &Value) -> Call {
        self.call(Method::PATCH, path).json(body)
    }

    pub fn put(&self, path: &str, body: &Value) -> Call {
        self.call(Method::PUT, path).json(body)
    }
}

/// A request being built. Awaiting it expects `200` and gives the envelope's `data`;
/// [`Call::expect`], [`Call::fails`] and [`Call::send`] say otherwise.
pub struct Call {
    client: Client,
    method: Method,
    path: String,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Call {
    pub fn bearer(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn json(mut self, body: &Value) -> Self {
        self.body = Bytes::from(serde_json::to_vec(body).expect("serializable"));
        self.header("content-type", "application/json")
    }

    pub fn body(mut self, content_type: &str, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self.header("content-type", content_type)
    }

    /// Sends the request and reads the whole answer, whatever its status.
    pub async fn send(self) -> TestResponse {
        let mut request = Request::builder()
            .method(self.method.clone())
            .uri(format!("http://{}{}", self.client.addr, self.path));
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = request.body(Full::new(self.body)).expect("valid request");
        let response = self
            .client
            .http
            .request(request)
            .await
            .expect("the server answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("read the body")
            .to_bytes();
        TestResponse {
            status,
            headers,
            body,
            request: format!("{} {}", self.method, self.path),
        }
    }

    /// Sends the request and asserts the answer's status.
    pub async fn expect(self, status: u16) -> TestResponse {
        self.send().await.expect(status)
    }

    /// Expects `201 Created` and gives the envelope's `data`: what was made.
    pub async fn created(self) -> Value {
        self.expect(201).await.data()
    }

    /// Sends the request and asserts a failure: its status and the envelope's `code`.
    pub async fn fails(self, status: u16, code: &str) -> TestResponse {
        self.send().await.fails(status, code)
    }

    /// Expects `200` and reads the envelope's `data` as `T`.
    pub async fn data_as<T: DeserializeOwned>(self) -> T {
        self.expect(200).await.data_as()
    }

    /// Expects `400 VALIDATION_FAILED` and gives the envelope's `errors`, one message per
    /// problem.
    pub async fn invalid(self) -> Vec<String> {
        self.fails(400, "VALIDATION_FAILED").await.errors()
    }
}

impl IntoFuture for Call {
    type Output = Value;
    type IntoFuture = Pin<Box<dyn Future<Output = Value> + Send>>;

    /// `200`, and the envelope's `data`: the answer most tests want.
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { self.expect(200).await.data() })
    }
}

/// An answer, fully read.
#[derive(Debug)]
pub struct TestResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// `METHOD /path` of the request, for assertion messages.
    pub request: String,
}

impl TestResponse {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{}: body is not JSON ({e}): {}",
                self.request,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// `data` of the envelope.
    pub fn data(&self) -> Value {
        self.json()["data"].clone()
    }

    /// `data` of the envelope as `T`.
    pub fn data_as<T: DeserializeOwned>(&self) -> T {
        serde_json::from_value(self.data())
            .unwrap_or_else(|e| panic!("{}: unexpected data ({e}): {}", self.request, self.text()))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `Retry-After` header of a refusal, in whole seconds; a failure when it is
    /// missing or not a number.
    #[track_caller]
    pub fn retry_after(&self) -> u64 {
        self.header("retry-after")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{}: no Retry-After in seconds", self.request))
    }

    /// Asserts the status, showing the request and the body when it differs.
    #[track_caller]
    pub fn expect(self, status: u16) -> TestResponse {
        assert_eq!(
            self.status,
            status,
            "{}: unexpected status; body: {}",
            self.request,
            self.text()
        );
        self
    }

    /// Asserts a failure: the status and the envelope's `code`.
    #[track_caller]
    pub fn fails(self, status: u16, code: &str) -> TestResponse {
        let response = self.expect(status);
        assert_eq!(
            response.code(),
            code,
            "{}: unexpected code; body: {}",
            response.request,
            response.text()
        );
        response
    }

    /// The envelope's `errors` of a failure, one message each.
    pub fn errors(&self) -> Vec<String> {
        let body = self.json();
        let errors = body["errors"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no errors: {}", self.request, self.text()));
        errors
            .iter()
            .map(|e| e.as_str().expect("an error message").to_owned())
            .collect()
    }

    /// The envelope's `code` of a failure.
    pub fn code(&self) -> String {
        self.json()["code"].as_str().unwrap_or_default().to_owned()
    }
}
