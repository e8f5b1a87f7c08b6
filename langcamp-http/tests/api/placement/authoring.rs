//! Authoring and reading: creating tests, the public list, the detail (CONTRACT §6).

use super::*;

#[tokio::test]
async fn admins_create_a_test_and_read_it_back_with_the_answer_key() {
    let school = School::at_start().await;
    let School { admin, test, .. } = &school;
    assert_eq!(test["title"], "German placement");
    assert_eq!(test["description"], "Find your level");
    assert_eq!(test["locale"], "en");
    assert_eq!(test["targetLanguage"], "de");
    assert_eq!(test["timeLimitMinutes"], 30);
    assert_eq!(test["isActive"], true);
    assert_eq!(test["questionCount"], 3);
    assert_eq!(test["maxScore"], 6);
    assert_eq!(test["createdAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(test["updatedAt"], "2026-11-22T10:00:00.000Z");
    let questions = test["questions"].as_array().expect("questions");
    assert_eq!(questions.len(), 3);
    assert_eq!(questions[0]["text"], "___ Haus");
    assert_eq!(questions[0]["points"], 1);
    assert_eq!(questions[0]["correctOptionIndex"], 2);
    assert_eq!(questions[1]["correctOptionIndex"], 0);
    assert_eq!(questions[0]["options"][2]["text"], "das");
    assert!(questions[0]["options"][2]["id"].as_str().is_some());
    assert!(questions[0]["id"].as_str().is_some());
    assert_eq!(
        test["levelRanges"],
        json!([
            {"level": "A1", "minScore": 0, "maxScore": 2, "message": "Start with A1"},
            {"level": "A2", "minScore": 3, "maxScore": 4, "message": "A2 suits you"},
            {"level": "B1", "minScore": 5, "maxScore": 6, "message": "Go for B1"}
        ])
    );
    let read = admin.get(&format!("/proficiency-tests/{}", id(test))).await;
    assert_eq!(&read, test);
}

#[tokio::test]
async fn points_default_to_one_and_the_optional_fields_to_null() {
    let (_app, admin) = TestApp::with_admin().await;
    let test = create(&admin,
        &json!({
            "title": "  Minimal  ",
            "questions": [{"text": "Q", "options": [{"text": "a"}, {"text": "b"}], "correctOptionIndex": 1}],
            "levelRanges": [{"level": "A1", "minScore": 0, "maxScore": 1}]
        }),
    )
    .await;
    assert_eq!(test["title"], "Minimal");
    assert_eq!(test["questions"][0]["points"], 1);
    assert_eq!(test["maxScore"], 1);
    assert_eq!(test["description"], Value::Null);
    assert_eq!(test["locale"], Value::Null);
    assert_eq!(test["targetLanguage"], Value::Null);
    assert_eq!(test["timeLimitMinutes"], Value::Null);
    assert_eq!(test["levelRanges"][0]["message"], "");
}

#[tokio::test]
async fn the_public_reads_active_tests_without_the_answer_key() {
    let School { app, admin, test } = School::new().await;
    let student = app.student("ana@example.com").await;
    let path = format!("/proficiency-tests/{}", id(&test));
    for token in [None, Some(&student.access)] {
        let mut call = app.get(&path);
        if let Some(token) = token {
            call = call.bearer(token);
        }
        let read = call.send().await.expect(200).data();
        assert_eq!(read["id"], test["id"]);
        assert_eq!(
            read["questions"][0]["options"][2]["id"],
            test["questions"][0]["options"][2]["id"]
        );
        assert_eq!(read["questions"][0].get("correctOptionIndex"), None);
        assert_eq!(answer_key_leaks(&read), Vec::<String>::new());
        let mut call = app.get("/proficiency-tests");
        if let Some(token) = token {
            call = call.bearer(token);
        }
        let list = call.send().await.expect(200).data();
        assert_eq!(list["list"][0]["id"], test["id"]);
        assert_eq!(
            list["list"][0]["questions"].as_array().map(Vec::len),
            Some(3)
        );
        assert_eq!(answer_key_leaks(&list), Vec::<String>::new());
    }
    let admin_list = admin.get("/proficiency-tests").await;
    assert_eq!(
        admin_list["list"][0]["questions"][0]["correctOptionIndex"],
        2
    );
}

#[tokio::test]
async fn inactive_tests_are_hidden_from_everyone_but_admins() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("ana@example.com").await;
    let hidden = create(&admin, &with(sample(), json!({ "isActive": false }))).await;
    let french = json!({ "title": "French", "targetLanguage": "fr" });
    let shown = create(&admin, &with(sample(), french)).await;
    assert_eq!(hidden["isActive"], false);

    let public = app.get("/proficiency-tests").await;
    assert_eq!(public["pagination"]["totalItems"], 1);
    assert_eq!(public["list"][0]["id"], shown["id"]);
    let all = admin.get("/proficiency-tests").await;
    assert_eq!(all["pagination"]["totalItems"], 2);

    let path = format!("/proficiency-tests/{}", id(&hidden));
    app.get(&path).fails(404, "NOT_FOUND").await;
    student.get(&path).expect(404).await;
    admin.get(&path).expect(200).await;
    let languages = app.get("/proficiency-tests/languages").await;
    assert_eq!(languages, json!(["fr"]));
    submit(&student, &id(&hidden), &[(0, 0)]).await.expect(404);
    student.get(&format!("{path}/status")).expect(404).await;

    // Activating it shows it.
    admin.patch(&path, &json!({"isActive": true})).await;
    app.get(&path).expect(200).await;
    submit(&student, &id(&hidden), &[(0, 0)]).await.expect(201);
}

#[tokio::test]
async fn test_lists_filter_by_locale_and_target_language_and_paginate_newest_first() {
    let (app, admin) = TestApp::with_admin_at(start()).await;
    for (i, (locale, target)) in [
        ("en", "de"),
        ("en", "fr"),
        ("de", "fr"),
        ("en", "de"),
        ("EN", "DE"),
    ]
    .into_iter()
    .enumerate()
    {
        let fields =
            json!({ "title": format!("Test {i}"), "locale": locale, "targetLanguage": target });
        let body = with(sample(), fields);
        create(&admin, &body).await;
        app.clock.advance(TimeDelta::minutes(1));
    }
    let titles = |page: &Value| listed(page, "title");
    let all = app.get("/proficiency-tests").await;
    assert_eq!(
        titles(&all),
        ["Test 4", "Test 3", "Test 2", "Test 1", "Test 0"]
    );
    assert_eq!(all["list"][0]["locale"], "en", "codes are normalised");
    assert_eq!(all["list"][0]["targetLanguage"], "de");

    let german = app.get("/proficiency-tests?targetLanguage=de").await;
    assert_eq!(titles(&german), ["Test 4", "Test 3", "Test 0"]);
    let from_english = app
        .get("/proficiency-tests?locale=en&targetLanguage=fr")
        .await;
    assert_eq!(titles(&from_english), ["Test 1"]);
    let upper = app.get("/proficiency-tests?locale=DE").await;
    assert_eq!(titles(&upper), ["Test 2"]);
    let none = app.get("/proficiency-tests?targetLanguage=it").await;
    assert_eq!(none["list"], json!([]));
    assert_eq!(none["pagination"]["totalPages"], 0);

    let page = app.get("/proficiency-tests?page=2&limit=2").await;
    assert_eq!(titles(&page), ["Test 2", "Test 1"]);
    assert_eq!(
        page["list"][0]["questions"].as_array().map(Vec::len),
        Some(3)
    );
    assert_eq!(
        page["pagination"],
        json!({"currentPage": 2, "totalPages": 3, "totalItems": 5, "itemsPerPage": 2,
               "hasNextPage": true, "hasPrevPage": true})
    );
    let past = app.get("/proficiency-tests?page=4&limit=2").await;
    assert_eq!(past["list"], json!([]));
    assert_eq!(past["pagination"]["totalItems"], 5);

    app.anon()
        .assert_invalid_queries(&[
            "/proficiency-tests?locale=not_a_tag!",
            "/proficiency-tests?targetLanguage=1",
            "/proficiency-tests?page=0",
            "/proficiency-tests?limit=101",
        ])
        .await;
}

#[tokio::test]
async fn languages_lists_each_target_language_of_active_tests_once_sorted() {
    let (app, admin) = TestApp::with_admin().await;
    assert_eq!(app.get("/proficiency-tests/languages").await, json!([]));
    for target in ["fr", "de", "fr", "es"] {
        create(&admin, &with(sample(), json!({ "targetLanguage": target }))).await;
    }
    let inactive = json!({ "targetLanguage": "it", "isActive": false });
    create(&admin, &with(sample(), inactive)).await;
    create(&admin, &with(sample(), json!({ "targetLanguage": null }))).await;
    assert_eq!(
        app.get("/proficiency-tests/languages").await,
        json!(["de", "es", "fr"])
    );
}
