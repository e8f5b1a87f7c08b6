//! Editing tests: patches, duplicates, deletion (CONTRACT §6).

use super::*;

#[tokio::test]
async fn updates_keep_the_ids_they_carry_and_give_new_ids_to_the_rest() {
    let School { app, admin, test } = School::at_start().await;
    let q = &test["questions"];
    let (q0, q1) = (q[0]["id"].clone(), q[1]["id"].clone());
    let q0_options: Vec<Value> = q[0]["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| o["id"].clone())
        .collect();
    app.clock.advance(TimeDelta::minutes(5));
    let updated = admin.patch(&format!("/proficiency-tests/{}", id(&test)), &json!({
            "title": "German placement, 2nd edition",
            "questions": [
                {"id": q1, "text": "Ich ___ sehr müde", "points": 2,
                 "options": [{"text": "bin"}, {"text": "bist"}], "correctOptionIndex": 0},
                {"id": q0, "text": "___ Haus", "points": 1,
                 "options": [{"id": q0_options[2], "text": "das"}, {"id": q0_options[0], "text": "der"},
                             {"text": "dem"}],
                 "correctOptionIndex": 0},
                {"text": "New question", "points": 3,
                 "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 1}
            ]
        })).await;
    let uq = &updated["questions"];
    assert_eq!(uq[0]["id"], q1, "the carried id stays");
    assert_eq!(uq[0]["text"], "Ich ___ sehr müde");
    assert_eq!(uq[1]["id"], q0);
    assert_eq!(uq[1]["options"][0]["id"], q0_options[2]);
    assert_eq!(uq[1]["options"][0]["text"], "das");
    assert_eq!(uq[1]["options"][1]["id"], q0_options[0]);
    assert_eq!(uq[1]["correctOptionIndex"], 0);
    for fresh in [
        &uq[1]["options"][2]["id"],
        &uq[2]["id"],
        &uq[0]["options"][0]["id"],
    ] {
        assert!(fresh.as_str().is_some());
        assert!(
            !q0_options.contains(fresh) && *fresh != q0 && *fresh != q1,
            "{fresh} is new"
        );
    }
    assert_ne!(
        uq[2]["id"], test["questions"][2]["id"],
        "an id not carried is new"
    );
    assert_eq!(updated["title"], "German placement, 2nd edition");
    assert_eq!(updated["questionCount"], 3);
    assert_eq!(updated["maxScore"], 6);
    assert_eq!(updated["createdAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(updated["updatedAt"], "2026-11-22T10:05:00.000Z");
    assert_eq!(
        updated["levelRanges"], test["levelRanges"],
        "absent fields stay"
    );
    assert_eq!(updated["description"], "Find your level");
    let read = app.get(&format!("/proficiency-tests/{}", id(&test))).await;
    assert_eq!(read["questions"][1]["options"][0]["id"], q0_options[2]);
}

#[tokio::test]
async fn updates_refuse_ids_that_are_not_this_tests_or_this_questions() {
    let school = School::new().await;
    let School { admin, test, .. } = &school;
    let other = create(admin, &sample()).await;
    let q = &test["questions"];
    let path = format!("/proficiency-tests/{}", id(test));
    let response = admin.patch(&path, &json!({
            "questions": [
                {"id": other["questions"][0]["id"], "text": "a", "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"id": q[1]["id"], "text": "b",
                 "options": [{"id": q[2]["options"][0]["id"], "text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"id": q[1]["id"], "text": "c", "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"text": "d", "options": [{"id": q[0]["options"][0]["id"], "text": "x"}, {"text": "y"}], "correctOptionIndex": 0},
                {"id": "not-an-id", "text": "e", "options": [{"text": "x"}, {"text": "y"}], "correctOptionIndex": 0}
            ]
        })).expect(400).await;
    assert_eq!(
        response.errors(),
        [
            "questions[0].id does not name a question of this test",
            "questions[1].options[0].id does not name an option of this question",
            "questions[2].id repeats the id of questions[1]",
            "questions[3].options[0].id does not name an option of this question",
            "questions[4].id does not name a question of this test"
        ]
    );
    let unchanged = admin.get(&path).await;
    assert_eq!(&unchanged, test, "nothing changed");
    // On create, no id can be carried.
    let mut carried = sample();
    carried["questions"][0]["id"] = q[0]["id"].clone();
    assert_eq!(
        create_errors(admin, &carried).await,
        ["questions[0].id does not name a question of this test"]
    );
}

#[tokio::test]
async fn updates_keep_question_count_max_score_and_coverage_in_step() {
    let School { app, admin, test } = School::new().await;
    let path = format!("/proficiency-tests/{}", id(&test));
    let mut questions = sample()["questions"].clone();
    questions[2]["points"] = json!(10);
    // The ranges stop at 6; the new maximum is 13.
    let response = admin
        .patch(&path, &json!({ "questions": questions }))
        .expect(400)
        .await;
    assert_eq!(
        response.errors(),
        [
            "levelRanges must cover every reachable score, but no range covers the reachable scores 10 to 13"
        ]
    );
    let updated = admin
        .patch(
            &path,
            &json!({
                "questions": questions,
                "levelRanges": [
                    {"level": "A1", "minScore": 0, "maxScore": 6},
                    {"level": "B2", "minScore": 7, "maxScore": 13}
                ]
            }),
        )
        .await;
    assert_eq!(updated["maxScore"], 13);
    assert_eq!(updated["questionCount"], 3);
    let one = admin
        .patch(&path, &json!({ "questions": [questions[0].clone()] }))
        .await;
    assert_eq!(
        (one["questionCount"].clone(), one["maxScore"].clone()),
        (json!(1), json!(1))
    );
    let listed = app.get("/proficiency-tests").await;
    assert_eq!(listed["list"][0]["questionCount"], 1);
    assert_eq!(listed["list"][0]["maxScore"], 1);
}

#[tokio::test]
async fn concurrent_edits_of_one_test_both_apply_one_after_the_other() {
    let School { app, admin, test } = School::new().await;
    let path = format!("/proficiency-tests/{}", id(&test));
    let mut questions = sample()["questions"].clone();
    for (i, question) in questions
        .as_array_mut()
        .expect("questions")
        .iter_mut()
        .enumerate()
    {
        question["id"] = test["questions"][i]["id"].clone();
    }
    for round in 0..20 {
        // Each edit changes one field; neither may undo the other's.
        let edit = |body: Value| app.patch(&path).bearer(&admin.access).json(&body).send();
        let (a, b) = tokio::join!(
            edit(json!({"title": format!("Title {round}"), "questions": questions})),
            edit(json!({"description": format!("Description {round}"), "questions": questions}))
        );
        a.expect(200);
        b.expect(200);
        let read = app.get(&path).await;
        assert_eq!(read["title"], format!("Title {round}"));
        assert_eq!(read["description"], format!("Description {round}"));
        assert_eq!(read["questions"][2]["id"], test["questions"][2]["id"]);
    }
}

#[tokio::test]
async fn patch_nulls_clear_optional_fields_and_are_refused_for_required_ones() {
    let school = School::new().await;
    let School { admin, test, .. } = &school;
    let path = format!("/proficiency-tests/{}", id(test));
    let cleared = admin.patch(&path, &json!({"description": null, "locale": null, "targetLanguage": null, "timeLimitMinutes": null})).await;
    for field in [
        "description",
        "locale",
        "targetLanguage",
        "timeLimitMinutes",
    ] {
        assert_eq!(cleared[field], Value::Null, "{field}");
    }
    let response = admin
        .patch(
            &path,
            &json!({"title": null, "isActive": null, "questions": null, "levelRanges": null}),
        )
        .expect(400)
        .await;
    assert_eq!(
        response.errors(),
        [
            "title cannot be null",
            "isActive cannot be null",
            "questions cannot be null",
            "levelRanges cannot be null"
        ]
    );
    let empty = admin
        .patch(&path, &json!({"questions": []}))
        .expect(400)
        .await;
    assert_eq!(
        empty.errors(),
        ["questions must have at least one question"]
    );
    admin
        .patch(
            "/proficiency-tests/0190a4b6-0000-7000-8000-000000000000",
            &json!({"title": "x"}),
        )
        .expect(404)
        .await;
    admin
        .patch("/proficiency-tests/nope", &json!({"title": "x"}))
        .expect(404)
        .await;
}

#[tokio::test]
async fn duplicates_are_inactive_copies_with_new_ids() {
    let school = School::new().await;
    let School { admin, test, .. } = &school;
    let copy = admin
        .post_empty(&format!("/proficiency-tests/{}/duplicate", id(test)))
        .created()
        .await;
    assert_ne!(copy["id"], test["id"]);
    assert_eq!(copy["title"], "German placement (copy)");
    assert_eq!(copy["isActive"], false);
    assert_eq!(copy["levelRanges"], test["levelRanges"]);
    assert_eq!(
        (copy["questionCount"].clone(), copy["maxScore"].clone()),
        (json!(3), json!(6))
    );
    for (a, b) in copy["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .zip(test["questions"].as_array().expect("questions"))
    {
        assert_ne!(a["id"], b["id"]);
        assert_eq!(a["text"], b["text"]);
        assert_eq!(a["points"], b["points"]);
        assert_eq!(a["correctOptionIndex"], b["correctOptionIndex"]);
        assert_ne!(a["options"][0]["id"], b["options"][0]["id"]);
        assert_eq!(a["options"][0]["text"], b["options"][0]["text"]);
    }
    let long = create(admin, &with(sample(), json!({ "title": "t".repeat(200) }))).await;
    let long_copy = admin
        .post_empty(&format!("/proficiency-tests/{}/duplicate", id(&long)))
        .created()
        .await;
    let title = long_copy["title"].as_str().expect("title");
    assert_eq!(title.chars().count(), 200);
    assert!(title.ends_with("t (copy)"));
    admin
        .post_empty("/proficiency-tests/0190a4b6-0000-7000-8000-000000000000/duplicate")
        .expect(404)
        .await;
}
