//! The answer key never leaks to students; every operation checks the role (CONTRACT §6).

use super::*;

#[tokio::test]
async fn no_response_to_a_non_admin_carries_the_answer_key() {
    let School { app, admin, test } = School::new().await;
    let student = app.student("ana@example.com").await;
    let test_id = id(&test);
    let q = &test["questions"];
    // Wrong on 1, unanswered 2: their correct options must not show up in results.
    let result = submit(&student, &test_id, &[(0, 2), (1, 2)]).await;
    let result_text = result.text();
    let result = result.expect(201).data();
    let hidden: Vec<String> = [&q[1]["options"][0], &q[2]["options"][0]]
        .iter()
        .map(|o| o["id"].as_str().expect("id").to_owned())
        .collect();

    let mut bodies: Vec<(String, String, bool)> = vec![("submit".into(), result_text, true)];
    let reads = [
        ("/proficiency-tests".to_owned(), false),
        ("/proficiency-tests?targetLanguage=de".to_owned(), false),
        ("/proficiency-tests/languages".to_owned(), false),
        (format!("/proficiency-tests/{test_id}"), false),
        (format!("/proficiency-tests/{test_id}/status"), true),
        ("/proficiency-tests/results/me".to_owned(), true),
        (
            format!("/proficiency-tests/results/me/{}", id(&result)),
            true,
        ),
        (
            format!("/proficiency-tests/admin/results/{}", id(&result)),
            true,
        ),
        ("/proficiency-tests/admin/results".to_owned(), true),
        (
            format!("/proficiency-tests/admin/results/user/{}", student.user_id),
            true,
        ),
    ];
    for (path, is_result) in reads {
        for token in [None, Some(student.access.as_str())] {
            let mut call = app.get(&path);
            if let Some(token) = token {
                call = call.bearer(token);
            }
            let response = call.send().await;
            assert!(response.status < 500, "{path}: {}", response.status);
            bodies.push((
                format!("{path} ({:?})", token.is_some()),
                response.text(),
                is_result,
            ));
        }
    }
    // A failed submission answers without the key too.
    let failed = submit(&student, &test_id, &[(0, 9)]).await;
    bodies.push(("bad submit".into(), failed.text(), true));

    for (what, body, is_result) in &bodies {
        let value: Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(
            answer_key_leaks(&value),
            Vec::<String>::new(),
            "{what}: {body}"
        );
        if *is_result {
            for correct in &hidden {
                assert!(
                    !body.contains(correct.as_str()),
                    "{what} leaks a correct option id: {body}"
                );
            }
        }
    }
    // The scan is able to find a key: the admin's views carry it.
    let admin_view = admin
        .get(&format!("/proficiency-tests/{test_id}"))
        .expect(200)
        .await
        .json();
    assert_eq!(answer_key_leaks(&admin_view).len(), 3);
    let admin_result = admin
        .get(&format!("/proficiency-tests/admin/results/{}", id(&result)))
        .expect(200)
        .await
        .json();
    assert_eq!(answer_key_leaks(&admin_result).len(), 6);
}

#[tokio::test]
async fn every_operation_checks_the_callers_role() {
    let School { app, admin, test } = School::new().await;
    let student = app.student("ana@example.com").await;
    let spare = create(&admin, &sample()).await;
    let result = submitted(&student, &id(&test), &[(0, 2)]).await;
    let (t, s, r, u) = (id(&test), id(&spare), id(&result), student.user_id.clone());
    let answers = json!({"answers": [{"questionIndex": 0, "selectedOptionIndex": 2}]});
    let callers: [(&str, &Client); 3] = [
        ("anonymous", app.anon()),
        ("user", &student),
        ("admin", &admin),
    ];
    const ANYONE: &[u16] = &[200, 200, 200];
    const SIGNED_IN: &[u16] = &[401, 200, 200];
    const ADMIN: &[u16] = &[401, 403, 200];
    const ADMIN_CREATES: &[u16] = &[401, 403, 201];
    let cases = [
        Case::new("GET", "/proficiency-tests", ANYONE),
        Case::new("GET", "/proficiency-tests/languages", ANYONE),
        Case::new("GET", format!("/proficiency-tests/{t}"), ANYONE),
        Case::new("POST", "/proficiency-tests", ADMIN_CREATES).body(sample()),
        Case::new(
            "POST",
            format!("/proficiency-tests/{t}/duplicate"),
            ADMIN_CREATES,
        ),
        Case::new("PATCH", format!("/proficiency-tests/{t}"), ADMIN)
            .body(json!({"title": "Renamed"})),
        Case::new(
            "POST",
            format!("/proficiency-tests/{t}/submit"),
            &[401, 201, 201],
        )
        .body(answers),
        Case::new("GET", format!("/proficiency-tests/{t}/status"), SIGNED_IN),
        Case::new("GET", "/proficiency-tests/results/me", SIGNED_IN),
        // Own results only: the admin did not take this one.
        Case::new(
            "GET",
            format!("/proficiency-tests/results/me/{r}"),
            &[401, 200, 404],
        ),
        Case::new("GET", "/proficiency-tests/admin/results", ADMIN),
        Case::new(
            "GET",
            format!("/proficiency-tests/admin/results/{r}"),
            ADMIN,
        ),
        Case::new(
            "GET",
            format!("/proficiency-tests/admin/results/user/{u}"),
            ADMIN,
        ),
        Case::new(
            "DELETE",
            format!("/proficiency-tests/admin/results/{r}"),
            ADMIN,
        ),
        Case::new("DELETE", format!("/proficiency-tests/{s}"), ADMIN),
    ];
    assert_role_matrix(&callers, &cases).await;
    // A token that is not valid is refused even where anonymous callers are welcome.
    app.get("/proficiency-tests")
        .bearer("not-a-token")
        .fails(401, "TOKEN_INVALID")
        .await;
}

#[tokio::test]
async fn the_cached_public_test_list_shows_every_change_on_the_next_read() {
    let (app, admin) = TestApp::with_admin().await;
    let titles = |page: Value| listed(&page, "title");
    assert!(titles(app.get("/proficiency-tests").await).is_empty());
    let test = create(&admin, &sample()).await;
    let test_id = id(&test);
    let listed = titles(app.get("/proficiency-tests").await);
    assert_eq!(listed.len(), 1, "a new test is listed at once");

    admin
        .patch(
            &format!("/proficiency-tests/{test_id}"),
            &json!({ "title": "Renamed test" }),
        )
        .await;
    assert_eq!(
        titles(app.get("/proficiency-tests").await),
        vec!["Renamed test"]
    );

    admin
        .patch(
            &format!("/proficiency-tests/{test_id}"),
            &json!({ "isActive": false }),
        )
        .await;
    assert!(
        titles(app.get("/proficiency-tests").await).is_empty(),
        "deactivated"
    );

    admin
        .patch(
            &format!("/proficiency-tests/{test_id}"),
            &json!({ "isActive": true }),
        )
        .await;
    app.get("/proficiency-tests").expect(200).await;
    admin.delete(&format!("/proficiency-tests/{test_id}")).await;
    assert!(
        titles(app.get("/proficiency-tests").await).is_empty(),
        "deleted"
    );
}

/// On PostgreSQL each submission also updates the dashboard's rollup rows (migration
/// 0060); submissions at once must all succeed, and all be counted.
#[tokio::test]
async fn submissions_at_once_all_succeed_and_are_all_counted() {
    let (app, admin) = TestApp::with_admin().await;
    let test = id(&create(&admin, &sample()).await);
    let mut students = Vec::new();
    for i in 0..8 {
        students.push(app.student(&format!("eager{i}@example.com")).await);
    }
    let answers: Answers = &[(0, 2), (1, 0), (2, 1)];
    let outcomes = futures_util::future::join_all(
        students
            .iter()
            .map(|student| submit(student, &test, answers)),
    )
    .await;
    for outcome in outcomes {
        assert_eq!(outcome.status, 201, "{}", outcome.text());
    }
    let drift = app
        .core
        .check_dashboard_rollups(&langcamp_core::Actor::Operator)
        .await
        .expect("check");
    assert_eq!(drift, vec![]);
    let dashboard = admin.get("/admin/dashboard").await;
    assert_eq!(dashboard["overview"]["tests"]["totalSubmissions"], 8);
    assert_eq!(dashboard["distributions"]["levels"][0]["key"], "A2");
    assert_eq!(dashboard["distributions"]["levels"][0]["count"], 8);
}
