//! The role matrix: which caller may run which operation, as one table.

use hyper::Method;
use serde_json::Value;

use crate::client::Client;

/// One operation of a role matrix and the status each caller gets, in the order of the
/// callers given to [`assert_role_matrix`].
#[derive(Clone, Debug)]
pub struct Case {
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
    pub expect: Vec<u16>,
}

impl Case {
    pub fn new(method: &str, path: impl Into<String>, expect: &[u16]) -> Case {
        Case {
            method: method.parse().expect("an HTTP method"),
            path: path.into(),
            body: None,
            expect: expect.to_vec(),
        }
    }

    /// The operation with a JSON body.
    pub fn body(mut self, body: Value) -> Case {
        self.body = Some(body);
        self
    }
}

/// Runs every case as every caller and asserts the status; a refusal must say why in the
/// envelope: `UNAUTHORIZED` for 401 (no caller), `FORBIDDEN` for 403 (the wrong role).
/// Cases run in table order, each as the callers in order, so a table may end with the
/// operations that change what the others read (a delete last).
pub async fn assert_role_matrix(callers: &[(&str, &Client)], cases: &[Case]) {
    for case in cases {
        assert_eq!(
            case.expect.len(),
            callers.len(),
            "{} {}: one status per caller",
            case.method,
            case.path
        );
        for ((who, client), expected) in callers.iter().zip(&case.expect) {
            let mut call = client.call(case.method.clone(), &case.path);
            if let Some(body) = &case.body {
                call = call.json(body);
            }
            let response = call.send().await;
            let label = format!("{} {} as {who}", case.method, case.path);
            assert_eq!(response.status, *expected, "{label}: {}", response.text());
            match expected {
                401 => assert_eq!(response.code(), "UNAUTHORIZED", "{label}"),
                403 => assert_eq!(response.code(), "FORBIDDEN", "{label}"),
                _ => {}
            }
        }
    }
}
