//! Results: own results, admin lists and details (CONTRACT §6).

use super::*;

/// What the result lists are read from: a school on a manual clock at [`start`] with two
/// tests, the German sample and a French one, and two students, Ana and Ben.
struct TwoTests {
    app: TestApp,
    admin: Session,
    german: Value,
    french: Value,
    ana: Session,
    ben: Session,
}

impl TwoTests {
    async fn new() -> TwoTests {
        let School { app, admin, test } = School::at_start().await;
        let french = json!({ "title": "French placement", "targetLanguage": "fr" });
        let french = create(&admin, &with(sample(), french)).await;
        let ana = app.student("ana@example.com").await;
        let ben = app.student("ben@example.com").await;
        TwoTests {
            app,
            admin,
            german: test,
            french,
            ana,
            ben,
        }
    }
}

#[tokio::test]
async fn own_results_are_listed_newest_first_and_retakes_are_separate_results() {
    let TwoTests {
        app,
        german,
        french,
        ana,
        ben,
        ..
    } = TwoTests::new().await;
    let plan: [(&Session, &Value, Answers); 3] = [
        (&ana, &german, &[(0, 2)]),
        (&ana, &french, &[(1, 0)]),
        (&ana, &german, &[(2, 0)]),
    ];
    let ids = submit_in_turn(&app, &plan, TimeDelta::minutes(3)).await;
    submit(&ben, &id(&german), &[(0, 2)]).await.expect(201);
    let mine = ana.get("/proficiency-tests/results/me").await;
    let listed: Vec<&str> = mine
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str(), ids[0].as_str()]);
    assert_eq!(mine[0]["totalScore"], 3);
    assert_eq!(mine[1]["test"]["title"], "French placement");
    assert_eq!(mine[1]["test"]["targetLanguage"], "fr");
    assert_eq!(mine[2]["completedAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(mine[0]["answers"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn own_result_detail_shows_texts_and_points_but_never_the_correct_option() {
    let School { app, test, .. } = School::new().await;
    let student = app.student("ana@example.com").await;
    let result = submitted(&student, &id(&test), &[(0, 2), (1, 1)]).await;
    let detail = student
        .get(&format!("/proficiency-tests/results/me/{}", id(&result)))
        .await;
    let q = &test["questions"];
    assert_eq!(
        detail["answers"],
        json!([
            {"questionId": q[0]["id"], "questionText": "___ Haus", "points": 1,
             "selectedOptionId": q[0]["options"][2]["id"], "selectedOptionText": "das", "isCorrect": true},
            {"questionId": q[1]["id"], "questionText": "Ich ___ müde", "points": 2,
             "selectedOptionId": q[1]["options"][1]["id"], "selectedOptionText": "bist", "isCorrect": false},
            {"questionId": q[2]["id"], "questionText": "Perfekt von gehen", "points": 3,
             "selectedOptionId": null, "selectedOptionText": null, "isCorrect": false}
        ])
    );
    // The detail is the result with richer answers: every other field is the same.
    let fields = result.as_object().expect("a result object");
    assert!(fields.len() > 10, "{result}");
    for (field, value) in fields.iter().filter(|(field, _)| *field != "answers") {
        assert_eq!(&detail[field], value, "{field}");
    }
    let text = detail.to_string();
    for wrong in [&q[1]["options"][0], &q[2]["options"][0]] {
        let correct_id = wrong["id"].as_str().expect("id");
        assert!(
            !text.contains(correct_id),
            "the correct option of a wrong answer leaked"
        );
    }
    assert!(!text.contains("\"bin\"") && !text.contains("bin gegangen"));
}

#[tokio::test]
async fn someone_elses_result_is_not_found() {
    let School { app, test, .. } = School::new().await;
    let ana = app.student("ana@example.com").await;
    let ben = app.student("ben@example.com").await;
    let result = submitted(&ana, &id(&test), &[(0, 2)]).await;
    let path = format!("/proficiency-tests/results/me/{}", id(&result));
    let refused = ben.get(&path).fails(404, "NOT_FOUND").await;
    assert_eq!(refused.errors(), ["test result not found"]);
    ana.get("/proficiency-tests/results/me/not-an-id")
        .expect(404)
        .await;
    ana.get(&path).expect(200).await;
}

#[tokio::test]
async fn admins_see_the_correct_option_of_each_question_in_result_detail() {
    let School { app, admin, test } = School::new().await;
    let student = app.student("ana@example.com").await;
    let result = submitted(&student, &id(&test), &[(0, 2), (1, 1)]).await;
    let detail = admin
        .get(&format!("/proficiency-tests/admin/results/{}", id(&result)))
        .await;
    let q = &test["questions"];
    let correct: Vec<(Value, Value)> = detail["answers"]
        .as_array()
        .expect("answers")
        .iter()
        .map(|a| (a["correctOptionId"].clone(), a["correctOptionText"].clone()))
        .collect();
    assert_eq!(
        correct,
        [
            (q[0]["options"][2]["id"].clone(), json!("das")),
            (q[1]["options"][0]["id"].clone(), json!("bin")),
            (q[2]["options"][0]["id"].clone(), json!("bin gegangen")),
        ]
    );
    assert_eq!(detail["answers"][1]["selectedOptionText"], "bist");
    assert_eq!(detail["user"]["email"], "ana@example.com");
    admin
        .get("/proficiency-tests/admin/results/0190a4b6-0000-7000-8000-000000000000")
        .expect(404)
        .await;
    admin
        .get("/proficiency-tests/admin/results/nope")
        .expect(404)
        .await;
}

#[tokio::test]
async fn admins_list_results_with_filters_and_pages() {
    let TwoTests {
        app,
        admin,
        german,
        french,
        ana,
        ben,
    } = TwoTests::new().await;
    // (who, test, answers) -> levels A1, B1, A2, B1, A1
    let plan: [(&Session, &Value, Answers); 5] = [
        (&ana, &german, &[(0, 2)]),
        (&ana, &german, &[(1, 0), (2, 0)]),
        (&ana, &french, &[(2, 0)]),
        (&ben, &german, &[(0, 2), (1, 0), (2, 0)]),
        (&ben, &french, &[(1, 1)]),
    ];
    let ids = submit_in_turn(&app, &plan, TimeDelta::minutes(1)).await;
    let result_ids = |page: &Value| listed(page, "id");
    let get = |query: &str| admin.get(&format!("/proficiency-tests/admin/results{query}"));
    let all = get("").await;
    assert_eq!(result_ids(&all), pick(&ids, &[4, 3, 2, 1, 0]));
    assert_eq!(all["pagination"]["totalItems"], 5);
    assert_eq!(all["list"][0]["user"]["email"], "ben@example.com");

    assert_eq!(
        result_ids(&get(&format!("?testId={}", id(&german))).await),
        pick(&ids, &[3, 1, 0])
    );
    assert_eq!(
        result_ids(&get(&format!("?userId={}", ana.user_id)).await),
        pick(&ids, &[2, 1, 0])
    );
    assert_eq!(result_ids(&get("?level=B1").await), pick(&ids, &[3, 1]));
    assert_eq!(
        result_ids(&get("?targetLanguage=fr").await),
        pick(&ids, &[4, 2])
    );
    assert_eq!(
        result_ids(
            &get(&format!(
                "?userId={}&level=A1&targetLanguage=de",
                ben.user_id
            ))
            .await
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        result_ids(&get("?testId=not-an-id").await),
        Vec::<String>::new()
    );

    let page = get("?page=2&limit=2").await;
    assert_eq!(result_ids(&page), pick(&ids, &[2, 1]));
    assert_eq!(
        page["pagination"],
        json!({"currentPage": 2, "totalPages": 3, "totalItems": 5, "itemsPerPage": 2,
               "hasNextPage": true, "hasPrevPage": true})
    );
    admin
        .assert_invalid_queries(&[
            "/proficiency-tests/admin/results?limit=0",
            "/proficiency-tests/admin/results?page=x",
            "/proficiency-tests/admin/results?targetLanguage=!!",
        ])
        .await;
}

#[tokio::test]
async fn admins_delete_results_and_read_a_users_results() {
    let School { app, admin, test } = School::at_start().await;
    let ana = app.student("ana@example.com").await;
    let ben = app.student("ben@example.com").await;
    let first = submitted(&ana, &id(&test), &[(0, 2)]).await;
    app.clock.advance(TimeDelta::minutes(1));
    let second = submitted(&ana, &id(&test), &[(1, 0)]).await;
    submit(&ben, &id(&test), &[(1, 0)]).await.expect(201);

    let theirs = admin
        .get(&format!(
            "/proficiency-tests/admin/results/user/{}",
            ana.user_id
        ))
        .await;
    let listed: Vec<&Value> = theirs["list"]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(listed, [&second["id"], &first["id"]]);
    assert_eq!(theirs["list"][0], second);

    let deleted = admin
        .delete(&format!("/proficiency-tests/admin/results/{}", id(&first)))
        .await;
    assert_eq!(deleted, json!({"id": first["id"], "deleted": true}));
    admin
        .delete(&format!("/proficiency-tests/admin/results/{}", id(&first)))
        .expect(404)
        .await;
    ana.get(&format!("/proficiency-tests/results/me/{}", id(&first)))
        .expect(404)
        .await;
    let after = admin
        .get(&format!(
            "/proficiency-tests/admin/results/user/{}",
            ana.user_id
        ))
        .await;
    assert_eq!(after["list"].as_array().map(Vec::len), Some(1));
    admin
        .get("/proficiency-tests/admin/results/user/0190a4b6-0000-7000-8000-000000000000")
        .expect(404)
        .await;
    admin
        .get("/proficiency-tests/admin/results/user/nope")
        .expect(404)
        .await;
    admin
        .delete("/proficiency-tests/admin/results/nope")
        .expect(404)
        .await;
    // A user without results has an empty list.
    let none = admin
        .get(&format!(
            "/proficiency-tests/admin/results/user/{}",
            admin.user_id
        ))
        .await;
    assert_eq!(none, json!({"list": []}));
}

#[tokio::test]
async fn results_keep_their_test_title_language_and_details_after_the_test_is_edited_and_deleted() {
    let School { app, admin, test } = School::new().await;
    let student = app.student("ana@example.com").await;
    let test_path = format!("/proficiency-tests/{}", id(&test));
    let result = submitted(&student, &id(&test), &[(0, 2), (1, 1), (2, 0)]).await;
    let own_path = format!("/proficiency-tests/results/me/{}", id(&result));
    let admin_path = format!("/proficiency-tests/admin/results/{}", id(&result));
    let own_before = student.get(&own_path).await;
    let admin_before = admin.get(&admin_path).await;

    admin
        .patch(
            &test_path,
            &json!({
                "title": "Renamed",
                "targetLanguage": "de-AT",
                "questions": [{"id": test["questions"][0]["id"], "text": "Changed", "points": 5,
                               "options": [{"text": "p"}, {"text": "q"}], "correctOptionIndex": 1}],
                "levelRanges": [{"level": "C2", "minScore": 0, "maxScore": 5}]
            }),
        )
        .await;
    assert_eq!(student.get(&own_path).await, own_before);
    assert_eq!(admin.get(&admin_path).await, admin_before);
    assert_eq!(own_before["test"]["title"], "German placement");
    assert_eq!(own_before["answers"][0]["questionText"], "___ Haus");
    assert_eq!(admin_before["answers"][1]["correctOptionText"], "bin");

    let deleted = admin.delete(&test_path).await;
    assert_eq!(deleted, json!({"id": test["id"], "deleted": true}));
    admin.assert_gone(&test_path).await;

    assert_eq!(student.get(&own_path).await, own_before);
    assert_eq!(admin.get(&admin_path).await, admin_before);
    let mine = student.get("/proficiency-tests/results/me").await;
    assert_eq!(mine[0]["testId"], test["id"]);
    assert_eq!(
        mine[0]["test"],
        json!({"id": test["id"], "title": "German placement", "targetLanguage": "de"})
    );
    assert_eq!(mine[0]["totalScore"], 4);
    let listed = admin.get("/proficiency-tests/admin/results").await;
    assert_eq!(listed["pagination"]["totalItems"], 1);
    student
        .get(&format!("{test_path}/status"))
        .expect(404)
        .await;
}

#[tokio::test]
async fn deleting_a_user_removes_their_results() {
    let School { app, admin, test } = School::new().await;
    let student = app.student("ana@example.com").await;
    submit(&student, &id(&test), &[(0, 2)]).await.expect(201);
    admin.delete(&format!("/users/{}", student.user_id)).await;
    let listed = admin.get("/proficiency-tests/admin/results").await;
    assert_eq!(listed["pagination"]["totalItems"], 0);
}
