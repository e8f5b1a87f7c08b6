//! The OpenAPI document against the route table: the same operations, unique camelCase
//! operation ids, and each endpoint's declared access both documented and enforced before
//! the body is read.

use std::collections::{BTreeSet, HashMap};

use hyper::Method;
use langcamp_http::Access;
use serde_json::{Value, json};

use crate::helpers::{TestApp, registration};

fn documented_operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            operations.push((method.to_uppercase(), path.clone(), operation));
        }
    }
    operations
}

fn is_camel_case(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_lowercase())
        && id.chars().all(|c| c.is_ascii_alphanumeric())
}

#[tokio::test]
async fn the_route_table_and_the_document_list_the_same_operations() {
    let app = TestApp::spawn().await;
    let doc = app.get("/swagger/json").expect(200).await.json();

    let served: BTreeSet<(String, String)> = langcamp_http::docs::operations()
        .iter()
        .map(|op| (op.method.as_str().to_owned(), op.path.clone()))
        .collect();
    let documented: BTreeSet<(String, String)> = documented_operations(&doc)
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    assert_eq!(
        served.len(),
        langcamp_http::docs::operations().len(),
        "an operation is registered twice"
    );
    assert_eq!(served, documented);

    let mut ids = HashMap::new();
    for (method, path, operation) in documented_operations(&doc) {
        let id = operation["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(is_camel_case(id), "{method} {path}: {id} is not camelCase");
        if let Some(other) = ids.insert(id.to_owned(), format!("{method} {path}")) {
            panic!("{id} names both {other} and {method} {path}");
        }
    }
}

#[test]
fn camel_case_is_told_apart() {
    assert!(is_camel_case("listCourses"));
    assert!(is_camel_case("logout"));
    assert!(!is_camel_case("list_users"));
    assert!(!is_camel_case("ListUsers"));
    assert!(!is_camel_case(""));
}

#[tokio::test]
async fn the_document_states_each_operations_access() {
    let app = TestApp::spawn().await;
    let doc = app.get("/swagger/json").expect(200).await.json();
    for op in langcamp_http::docs::operations() {
        let operation = &doc["paths"][&op.path][op.method.as_str().to_lowercase()];
        let security = operation["security"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let anonymous_allowed = security.is_empty()
            || security
                .iter()
                .any(|s| s.as_object().is_some_and(|o| o.is_empty()));
        let responses = &operation["responses"];
        let what = format!("{} {} ({:?})", op.method, op.path, op.access);
        match op.access {
            Access::Anyone => assert!(anonymous_allowed, "{what}: documented as needing a token"),
            _ => {
                assert_eq!(security, vec![json!({"bearer": []})], "{what}: security");
                assert!(responses.get("401").is_some(), "{what}: 401 not documented");
            }
        }
        let needs_role = matches!(op.access, Access::Admin | Access::Superadmin);
        if needs_role {
            assert!(responses.get("403").is_some(), "{what}: 403 not documented");
        }
    }
}

/// The path of `op` with every parameter filled by an id that names nothing.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "no-such-id"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Every endpoint above `Anyone` answers 401 without a token and 403 to a role below its
/// access, with a body that would be refused with 400 if it were read, and for ids that
/// name nothing (404 if looked up): the router settles access first. A caller at the
/// declared access gets past every check of access (so the declaration is not too low
/// either: core's own check would answer 403).
#[tokio::test]
async fn every_endpoint_refuses_a_caller_below_its_access_before_the_body_and_the_lookup() {
    let app = TestApp::spawn().await;
    let student = app.student("student@langcamp.test").await;
    let admin = app.admin().await;
    let superadmin = app.superadmin().await;
    let not_an_object = json!(["not", "an", "object"]);
    for op in langcamp_http::docs::operations() {
        if op.access == Access::Anyone {
            continue;
        }
        let path = concrete(&op.path);
        let method = Method::from_bytes(op.method.as_str().as_bytes()).expect("method");
        let what = format!("{} {} ({:?})", op.method, op.path, op.access);
        // The operation with a body that is never valid, so only the access check or the
        // body's parse can answer (never the lookup).
        let call = || app.call(method.clone(), &path).json(&not_an_object);

        let anonymous = call().send().await;
        assert_eq!(
            anonymous.status,
            401,
            "{what} anonymous: {}",
            anonymous.text()
        );
        assert_eq!(anonymous.code(), "UNAUTHORIZED", "{what}");

        let bad_token = call().bearer("not-a-token").send().await;
        assert_eq!(
            bad_token.status,
            401,
            "{what} bad token: {}",
            bad_token.text()
        );
        assert_eq!(bad_token.code(), "TOKEN_INVALID", "{what}");

        let at = match op.access {
            Access::OwnAccount | Access::SignedIn => &student.access,
            Access::Admin => &admin.access,
            Access::Superadmin | Access::Anyone => &superadmin.access,
        };
        let passed = call().bearer(at).send().await;
        assert!(
            passed.status != 401 && passed.status != 403,
            "{what} at its access: {} {}",
            passed.status,
            passed.text()
        );

        let below: &[&str] = match op.access {
            Access::Admin => &[&student.access],
            Access::Superadmin => &[&student.access, &admin.access],
            Access::Anyone | Access::OwnAccount | Access::SignedIn => &[],
        };
        for token in below {
            let refused = call().bearer(token).send().await;
            assert_eq!(refused.status, 403, "{what}: {}", refused.text());
            assert_eq!(refused.code(), "FORBIDDEN", "{what}");
            assert_eq!(
                refused.errors(),
                ["you do not have permission to do this"],
                "{what}: the same message as core's check"
            );
        }
    }
}

/// JSON Schema (and so every client generated from the document) counts `27.0` as an
/// integer: integer fields take it as 27, while `27.5` is still refused.
#[tokio::test]
async fn a_whole_number_written_with_a_fraction_is_an_integer() {
    let app = TestApp::spawn().await;
    let session = app.sign_in("whole@langcamp.test").await;
    let done = session
        .post(
            "/auth/complete-registration",
            &registration("Ana Silva", json!(27.0)),
        )
        .expect(200)
        .await;
    assert_eq!(done.data()["user"]["age"], 27, "{}", done.text());

    session
        .patch("/me/profile", &json!({"age": 27.5}))
        .fails(400, "VALIDATION_FAILED")
        .await;
    let me = session.get("/me").expect(200).await;
    assert_eq!(me.data()["age"], 27);
}

/// Every documented object lists all its fields, so a generated client and schemathesis
/// know that nothing else comes or may be sent (the one exception is read by hand).
#[tokio::test]
async fn every_documented_object_is_closed() {
    fn open_objects(schema: &Value, at: &str, found: &mut Vec<String>) {
        if schema["properties"].is_object() && schema["additionalProperties"] != json!(false) {
            found.push(at.to_owned());
        }
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            open_objects(property, &format!("{at}.{name}"), found);
        }
        open_objects_in(&schema["items"], &format!("{at}[]"), found);
    }
    fn open_objects_in(schema: &Value, at: &str, found: &mut Vec<String>) {
        if schema.is_object() {
            open_objects(schema, at, found);
        }
    }
    let app = TestApp::spawn().await;
    let doc = app.get("/swagger/json").expect(200).await.json();
    let mut found = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().expect("schemas") {
        open_objects(schema, name, &mut found);
    }
    assert_eq!(found, vec!["SubmittedAnswer".to_owned()]);
}
