//! CONTRACT §17: every staff write leaves one entry, written by its own transaction;
//! refused and failed writes leave none; the trail refuses edits and keeps its retention.

use chrono::TimeDelta;
use serde_json::{Value, json};
use sqlx::Connection;

use crate::helpers::{Session, TestApp, actions, fresh_client, utc};
use crate::materials::create_form;
use crate::storage::{Multipart, pdf, stored_files};

/// Every entry, newest first, as the superadmin reads them.
async fn entries(root: &Session, query: &str) -> Vec<Value> {
    let page = root.get(&format!("/admin/audit?limit=100{query}")).await;
    page["list"].as_array().cloned().unwrap_or_default()
}

/// Runs `statement` on the test's database from outside the service.
async fn execute(app: &TestApp, statement: &str) -> Result<(), sqlx::Error> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(app.core.config().database_url.expose())
        .await
        .expect("connect");
    let outcome = sqlx::Executor::execute(&mut conn, sqlx::AssertSqlSafe(statement.to_owned()))
        .await
        .map(|_| ());
    conn.close().await.expect("close");
    outcome
}

fn is_postgres(app: &TestApp) -> bool {
    app.core
        .config()
        .database_url
        .expose()
        .starts_with("postgres")
}

/// Makes every insert into `table` whose `column` is `value` fail, on either backend (a
/// trigger installed from outside the service).
async fn refuse_inserts(app: &TestApp, table: &str, column: &str, value: &str) {
    let statement = if is_postgres(app) {
        format!(
            "CREATE FUNCTION refuse_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                 IF NEW.{column} = '{value}' THEN RAISE EXCEPTION 'refused'; END IF;
                 RETURN NEW; END $$;
             CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION refuse_{table}();"
        )
    } else {
        format!(
            "CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} WHEN NEW.{column} = '{value}'
             BEGIN SELECT RAISE(ABORT, 'refused'); END;"
        )
    };
    execute(app, &statement).await.expect("install the fault");
}

#[tokio::test]
async fn each_staff_write_leaves_one_entry_with_its_actor_target_changes_and_request_id() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;

    // One write, then exactly one more entry: the newest, with the request's id.
    let step = |request_id: &'static str| {
        let root = &root;
        async move {
            let newest = entries(root, "").await;
            assert_eq!(
                newest[0]["requestId"], request_id,
                "the newest entry is the write's: {:#}",
                newest[0]
            );
            newest[0].clone()
        }
    };
    let before = entries(&root, "").await.len();

    let course = admin
        .call(hyper::Method::POST, "/courses")
        .header("x-request-id", "create-course-1")
        .json(&json!({ "title": "German A1" }))
        .send()
        .await
        .expect(201)
        .data();
    let created = step("create-course-1").await;
    assert_eq!(created["action"], "course.created");
    assert_eq!(created["actor"]["type"], "user");
    assert_eq!(created["actor"]["id"], admin.user_id.as_str());
    assert_eq!(created["actor"]["email"], "admin@langcamp.test");
    assert_eq!(created["actor"]["role"], "admin");
    assert_eq!(created["target"]["type"], "course");
    assert_eq!(created["target"]["id"], course["id"]);
    assert_eq!(created["target"]["label"], "German A1");
    assert_eq!(created["changes"], Value::Null);
    assert!(created["clientAddress"].is_string(), "{created:#}");

    let course_path = format!("/courses/{}", course["id"].as_str().expect("id"));
    admin
        .call(hyper::Method::PATCH, &course_path)
        .header("x-request-id", "update-course-1")
        .json(&json!({ "title": "German A1 (evening)" }))
        .send()
        .await
        .expect(200);
    let updated = step("update-course-1").await;
    assert_eq!(updated["action"], "course.updated");
    assert_eq!(
        updated["changes"],
        json!({ "title": { "from": "German A1", "to": "German A1 (evening)" } }),
        "only the field that changed"
    );

    admin
        .call(hyper::Method::PUT, "/settings")
        .header("x-request-id", "setting-1")
        .json(&json!({ "key": "school_name", "value": "Escola" }))
        .send()
        .await
        .expect(200);
    let setting = step("setting-1").await;
    assert_eq!(setting["action"], "setting.put");
    assert_eq!(
        setting["target"],
        json!({ "type": "setting", "id": "school_name", "label": "school_name" })
    );
    assert_eq!(
        setting["changes"],
        json!({ "value": { "from": null, "to": "Escola" } })
    );

    root.call(
        hyper::Method::PATCH,
        &format!("/users/{}/role", student.user_id),
    )
    .header("x-request-id", "role-1")
    .json(&json!({ "role": "admin" }))
    .send()
    .await
    .expect(200);
    let role = step("role-1").await;
    assert_eq!(role["action"], "user.role_changed");
    assert_eq!(role["actor"]["role"], "superadmin");
    assert_eq!(
        role["target"],
        json!({ "type": "user", "id": student.user_id, "label": "ana@example.com" })
    );
    assert_eq!(
        role["changes"]["role"],
        json!({ "from": "user", "to": "admin" })
    );

    admin
        .call(hyper::Method::DELETE, &course_path)
        .header("x-request-id", "delete-course-1")
        .send()
        .await
        .expect(200);
    let deleted = step("delete-course-1").await;
    assert_eq!(deleted["action"], "course.deleted");
    assert_eq!(deleted["target"]["label"], "German A1 (evening)");

    admin
        .call(hyper::Method::PUT, "/admin/mail-templates/otp/nl")
        .header("x-request-id", "template-1")
        .json(&json!({ "subject": "Code", "text": "{{ code }}" }))
        .send()
        .await
        .expect(200);
    let template = step("template-1").await;
    assert_eq!(template["action"], "mail_template.put");
    assert_eq!(
        template["target"],
        json!({ "type": "mail_template", "id": "otp/nl", "label": "otp.nl" })
    );

    assert_eq!(
        entries(&root, "").await.len(),
        before + 6,
        "one entry per write, no more"
    );
    // Filters: by action, by target, by actor.
    let by_action = entries(&root, "&action=course.updated").await;
    assert_eq!(by_action.len(), 1);
    let by_target = entries(
        &root,
        &format!(
            "&targetType=course&targetId={}",
            course["id"].as_str().expect("id")
        ),
    )
    .await;
    assert_eq!(by_target.len(), 3, "created, updated, deleted");
    let by_actor = entries(&root, &format!("&actorId={}", root.user_id)).await;
    assert!(
        by_actor
            .iter()
            .all(|e| e["actor"]["id"] == root.user_id.as_str())
    );
    // Its role change, and before it its own factor added and recovery codes made.
    assert_eq!(by_actor.len(), 3);
}

/// A setting is named by its key and a mail template by `kind/locale` (CONTRACT §17), so
/// `targetId` finds the whole history of either, deletions included.
#[tokio::test]
async fn a_settings_and_a_templates_history_is_found_by_its_key_or_kind_and_locale() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    for value in ["https://v.example/1", "https://v.example/2"] {
        admin
            .put(
                "/settings",
                &json!({ "key": "landing_video_url", "value": value }),
            )
            .await;
    }
    admin
        .put(
            "/settings",
            &json!({ "key": "school_name", "value": "Escola" }),
        )
        .await;
    admin.delete("/settings/landing_video_url").await;
    let template = json!({ "subject": "Code", "text": "{{ code }}" });
    admin
        .put("/admin/mail-templates/otp/pt-BR", &template)
        .await;
    admin.put("/admin/mail-templates/otp/de", &template).await;
    admin.delete("/admin/mail-templates/otp/pt-br").await;

    let history = entries(&root, "&targetType=setting&targetId=landing_video_url").await;
    let actions: Vec<&Value> = history.iter().map(|e| &e["action"]).collect();
    assert_eq!(actions, ["setting.deleted", "setting.put", "setting.put"]);
    assert_eq!(
        history[2]["changes"],
        json!({ "value": { "from": null, "to": "https://v.example/1" } })
    );
    // The template's id is its path, the locale in its normal form whatever was typed;
    // `/` may come percent-encoded.
    for query in [
        "&targetId=otp/pt-BR",
        "&targetType=mail_template&targetId=otp%2Fpt-BR",
    ] {
        let history = entries(&root, query).await;
        let actions: Vec<&Value> = history.iter().map(|e| &e["action"]).collect();
        assert_eq!(
            actions,
            ["mail_template.deleted", "mail_template.put"],
            "{query}"
        );
        assert_eq!(history[0]["target"]["label"], "otp.pt-BR");
    }
}

#[tokio::test]
async fn refused_requests_and_users_own_writes_leave_no_entry() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let admin = app.admin().await;
    let student = app.student("ben@example.com").await;
    let before = entries(&root, "").await.len();

    admin
        .post("/courses", &json!({ "title": "" }))
        .fails(400, "VALIDATION_FAILED")
        .await;
    student
        .post("/courses", &json!({ "title": "Mine" }))
        .fails(403, "FORBIDDEN")
        .await;
    admin
        .patch(
            &format!("/users/{}/role", student.user_id),
            &json!({ "role": "admin" }),
        )
        .fails(403, "FORBIDDEN")
        .await;
    // A user's own writes are not staff actions.
    student
        .patch("/me/profile", &json!({ "city": "Porto" }))
        .await;
    app.post("/contact")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({ "firstName": "A", "lastName": "B", "email": "a@example.com", "message": "Hi" }))
        .send()
        .await
        .expect(201);
    assert_eq!(entries(&root, "").await.len(), before);

    // Only a superadmin reads the trail.
    admin.get("/admin/audit").fails(403, "FORBIDDEN").await;
    student.get("/admin/audit").fails(403, "FORBIDDEN").await;
    app.get("/admin/audit").fails(401, "UNAUTHORIZED").await;
    root.get("/admin/audit?from=yesterday")
        .fails(400, "VALIDATION_FAILED")
        .await;
}

#[tokio::test]
async fn a_write_that_fails_after_its_change_leaves_neither_change_nor_entry() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let contact = app
        .post("/contact")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({ "firstName": "Eva", "lastName": "Lind", "email": "eva@example.com", "message": "Hi" }))
        .send()
        .await
        .expect(201)
        .data();
    // The reply's mail is queued after the reply and its entry are written: make that
    // last step fail.
    let refuse = if is_postgres(&app) {
        "CREATE FUNCTION refuse_mail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no mail'; END $$;
         CREATE TRIGGER refuse_mail BEFORE INSERT ON mail_outbox FOR EACH ROW EXECUTE FUNCTION refuse_mail();"
    } else {
        "CREATE TRIGGER refuse_mail BEFORE INSERT ON mail_outbox BEGIN SELECT RAISE(ABORT, 'no mail'); END;"
    };
    execute(&app, refuse).await.expect("install the fault");
    let before = entries(&root, "").await.len();
    let path = format!(
        "/contact/admin/{}/reply",
        contact["id"].as_str().expect("id")
    );
    let failed = admin
        .post(&path, &json!({ "replyMessage": "Yes." }))
        .send()
        .await;
    assert!(failed.status >= 500, "{}", failed.text());
    assert_eq!(entries(&root, "").await.len(), before, "no entry");
    let stored = admin
        .get(&format!(
            "/contact/admin/{}",
            contact["id"].as_str().expect("id")
        ))
        .await;
    assert_eq!(stored["status"], "PENDING", "no change");
    assert_eq!(stored["replyMessage"], Value::Null);
}

/// A contact reply is one piece of the group commit with its entry and its mail: two
/// replies sent at once share a transaction on SQLite, and when one's mail is refused, that
/// reply leaves neither change, entry nor mail, while the other keeps all three.
#[tokio::test]
async fn a_grouped_reply_whose_mail_fails_leaves_nothing_and_the_one_beside_it_keeps_its_mail() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let send = |first: &'static str, email: &'static str| {
        app.post("/contact")
            .header("x-forwarded-for", &fresh_client())
            .json(
                &json!({ "firstName": first, "lastName": "Lind", "email": email, "message": "Hi" }),
            )
            .send()
    };
    let refused = send("Eva", "refused@example.com").await.expect(201).data();
    let kept = send("Ola", "kept@example.com").await.expect(201).data();
    refuse_inserts(&app, "mail_outbox", "recipient", "refused@example.com").await;
    let before = entries(&root, "").await.len();
    let reply = |contact: &Value| {
        let path = format!(
            "/contact/admin/{}/reply",
            contact["id"].as_str().expect("id")
        );
        admin.post(&path, &json!({ "replyMessage": "Yes." })).send()
    };
    let (failed, sent) = tokio::join!(reply(&refused), reply(&kept));
    assert!(failed.status >= 500, "{}", failed.text());
    assert_eq!(sent.status, 200, "{}", sent.text());
    let stored = |contact: &Value| {
        admin.get(&format!(
            "/contact/admin/{}",
            contact["id"].as_str().expect("id")
        ))
    };
    assert_eq!(stored(&refused).await["status"], "PENDING", "no change");
    assert_eq!(stored(&kept).await["status"], "REPLIED");
    let after = entries(&root, "").await;
    assert_eq!(after.len(), before + 1, "only the kept reply's entry");
    assert_eq!(after[0]["action"], "contact.replied");
    assert_eq!(after[0]["target"]["id"], kept["id"]);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM mail_outbox WHERE kind = 'contact_reply' AND recipient = 'kept@example.com'")
            .await,
        1,
        "the kept reply's mail"
    );
    assert_eq!(
        app.count("SELECT COUNT(*) FROM mail_outbox WHERE recipient = 'refused@example.com'")
            .await,
        0
    );
}

/// A settings write runs with its entry as one piece of the SQLite group commit (its own
/// transaction on PostgreSQL): when its change fails after the entry was written, the entry
/// is undone too, and the write beside it is kept.
#[tokio::test]
async fn a_grouped_write_that_fails_after_its_entry_leaves_neither_change_nor_entry() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    refuse_inserts(&app, "settings", "key", "refused.key").await;
    let before = entries(&root, "").await.len();
    let (refused, kept) = tokio::join!(
        admin
            .put("/settings", &json!({ "key": "refused.key", "value": "x" }))
            .send(),
        admin
            .put("/settings", &json!({ "key": "kept.key", "value": "y" }))
            .send(),
    );
    assert!(refused.status >= 500, "{}", refused.text());
    assert_eq!(kept.status, 200, "{}", kept.text());
    admin
        .get("/settings/refused.key")
        .fails(404, "NOT_FOUND")
        .await;
    assert_eq!(admin.get("/settings/kept.key").await["value"], "y");
    let after = entries(&root, "").await;
    assert_eq!(after.len(), before + 1, "only the kept write's entry");
    assert_eq!(after[0]["target"]["label"], "kept.key");
}

#[tokio::test]
async fn the_trail_refuses_updates_and_deletes_from_sql() {
    let (app, admin) = TestApp::with_admin().await;
    admin
        .put("/settings", &json!({ "key": "a.key", "value": 1 }))
        .await;
    let stored = app.rows("audit_events").await;
    assert!(stored >= 1);
    for statement in [
        "UPDATE audit_events SET actor_email = 'someone@else.example'",
        "DELETE FROM audit_events",
    ] {
        let refused = execute(&app, statement).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.to_string().contains("append-only")),
            "{statement}: {refused:?}"
        );
    }
    if is_postgres(&app) {
        assert!(execute(&app, "TRUNCATE audit_events").await.is_err());
    }
    assert_eq!(app.rows("audit_events").await, stored);
}

#[tokio::test]
async fn the_purge_removes_only_entries_past_their_retention_and_records_itself() {
    let start = utc(2026, 1, 10, 9, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    let root = app.superadmin().await;
    admin
        .put("/settings", &json!({ "key": "old.one", "value": 1 }))
        .await;
    admin
        .put("/settings", &json!({ "key": "old.two", "value": 2 }))
        .await;
    app.clock.advance(TimeDelta::days(390));
    let admin = app.sign_in_again_through_core(&admin).await;
    admin
        .put("/settings", &json!({ "key": "recent", "value": 3 }))
        .await;
    assert_eq!(
        app.core.purge_audit().await.expect("purge"),
        0,
        "nothing is 400 days old yet"
    );
    app.clock.advance(TimeDelta::days(20));
    // The two settings, and the fixtures' two users made through core at the start, each
    // with their factor added and recovery codes made (CONTRACT §20).
    assert_eq!(app.core.purge_audit().await.expect("purge"), 8);
    let root = app.sign_in_again_through_core(&root).await;
    let left = entries(&root, "").await;
    let actions: Vec<&str> = left.iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions, ["audit.purged", "setting.put"]);
    assert_eq!(left[0]["actor"]["type"], "operator");
    assert_eq!(left[0]["changes"]["count"]["from"], 8);
    assert_eq!(left[1]["target"]["label"], "recent");
}

#[tokio::test]
async fn a_deleted_users_entries_stay_and_read_deleted_user() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let student = app.student("gone@example.com").await;
    admin
        .patch(
            &format!("/admin/users/{}/profile", student.user_id),
            &json!({ "city": "Faro" }),
        )
        .await;
    admin.delete(&format!("/users/{}", student.user_id)).await;
    let about = entries(
        &root,
        &format!("&targetType=user&targetId={}", student.user_id),
    )
    .await;
    let actions: Vec<&str> = about.iter().filter_map(|e| e["action"].as_str()).collect();
    // The test's fixture made the user through core as the operator: recorded too.
    assert_eq!(
        actions,
        ["user.deleted", "user.profile_updated", "user.created"]
    );
    assert_eq!(about[2]["actor"]["type"], "operator");
    for entry in &about {
        assert_eq!(entry["target"]["label"], "deleted user", "{entry:#}");
        assert_eq!(entry["target"]["id"], student.user_id.as_str());
    }
    assert_eq!(
        about[1]["changes"]["city"],
        json!({ "from": null, "to": "Faro" })
    );
}

#[tokio::test]
async fn a_reused_refresh_token_is_recorded_with_its_user_and_request() {
    let app = TestApp::at(utc(2026, 11, 22, 10, 0, 0)).await;
    let root = app.superadmin().await;
    let session = app.sign_in("reuse@example.com").await;
    app.refresh(&session.refresh).expect(200).await;
    app.clock.advance(TimeDelta::seconds(30));
    app.refresh(&session.refresh)
        .header("x-request-id", "replayed-1")
        .expect(401)
        .await;
    let reused = entries(&root, "&action=auth.refresh_reused").await;
    assert_eq!(reused.len(), 1);
    assert_eq!(reused[0]["actor"]["email"], "reuse@example.com");
    assert_eq!(reused[0]["requestId"], "replayed-1");
    assert_eq!(reused[0]["target"]["id"], session.user_id.as_str());
}

/// CONTRACT §17 and §18: every CSV or personal-data export by staff is recorded, and a
/// user's personal data holds the entries about them.
#[tokio::test]
async fn exports_are_recorded_and_the_personal_data_holds_the_entries_about_the_user() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let student = app.student("data@example.com").await;
    admin
        .patch(
            &format!("/admin/users/{}/profile", student.user_id),
            &json!({ "city": "Braga" }),
        )
        .await;
    let csv = admin
        .call(hyper::Method::GET, "/admin/exports/users.csv?role=user")
        .header("x-request-id", "export-1")
        .send()
        .await;
    assert_eq!(csv.status, 200, "{}", csv.text());
    let downloaded = entries(&root, "&action=export.downloaded").await;
    assert_eq!(downloaded.len(), 1);
    assert_eq!(downloaded[0]["requestId"], "export-1");
    assert_eq!(downloaded[0]["target"]["label"], "users.csv");
    assert!(
        downloaded[0]["changes"]["filters"]["to"]
            .as_str()
            .is_some_and(|f| f.contains("User")),
        "{:#}",
        downloaded[0]
    );

    let document = admin
        .call(
            hyper::Method::GET,
            &format!("/admin/users/{}/export", student.user_id),
        )
        .send()
        .await;
    assert_eq!(document.status, 200, "{}", document.text());
    let data = document.json();
    assert_eq!(
        actions(&data["auditEvents"]),
        ["user.created", "user.profile_updated"]
    );
    let personal = entries(&root, "&action=export.personal_data").await;
    assert_eq!(personal.len(), 1);
    assert_eq!(personal[0]["target"]["id"], student.user_id.as_str());
    // A user's own export is not a staff action.
    let own = student.call(hyper::Method::GET, "/me/export").send().await;
    assert_eq!(own.status, 200, "{}", own.text());
    assert_eq!(
        entries(&root, "&action=export.personal_data").await.len(),
        1
    );
}

/// A small fixed test: two questions, two level ranges.
fn small_test(title: &str) -> Value {
    json!({
        "title": title,
        "questions": [
            {"text": "___ Haus", "options": [{"text": "der"}, {"text": "das"}], "correctOptionIndex": 1},
            {"text": "Ich ___ müde", "options": [{"text": "bin"}, {"text": "bist"}], "correctOptionIndex": 0}
        ],
        "levelRanges": [
            {"level": "A1", "minScore": 0, "maxScore": 1, "message": "A1"},
            {"level": "A2", "minScore": 2, "maxScore": 2, "message": "A2"}
        ]
    })
}

/// What the course, test and material writes change, as admins read it and as stored:
/// the lists, a user's materials, the rows of every table those writes touch (children,
/// recorded files, queued mails) and the files in the store.
async fn school_state(app: &TestApp, admin: &Session, user_id: &str) -> Value {
    let mut rows = serde_json::Map::new();
    for table in [
        "courses",
        "proficiency_tests",
        "test_questions",
        "test_options",
        "test_level_ranges",
        "education_materials",
        "material_pdfs",
        "material_videos",
        "material_assignments",
        "stored_files",
        "mail_outbox",
    ] {
        rows.insert(table.to_owned(), json!(app.rows(table).await));
    }
    let mut files: Vec<String> = stored_files(app)
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    files.sort();
    json!({
        "courses": admin.get("/courses").await,
        "tests": admin.get("/proficiency-tests?limit=100").await,
        "materials": admin.get("/education-materials?limit=100").await,
        "assigned": admin.get(&format!("/education-materials/user/{user_id}")).await,
        "rows": rows,
        "files": files,
    })
}

/// Every course, test and material write is one piece of the SQLite group commit with its
/// audit entry (a transaction of its own on PostgreSQL), the entry written after the
/// change: when the entry fails, the change is undone with it (child rows, recorded files
/// and queued mails too), a refused upload's bytes are removed and a refused delete's
/// kept, and the writes committed beside it are kept.
#[tokio::test]
async fn course_test_and_material_writes_whose_entry_fails_leave_no_change() {
    let (app, admin) = TestApp::with_admin().await;
    let root = app.superadmin().await;
    let ana = app.student("ana@example.com").await;
    let ben = app.student("ben@example.com").await;
    let course = admin
        .post("/courses", &json!({ "title": "Kept course" }))
        .created()
        .await;
    let test = admin
        .post("/proficiency-tests", &small_test("Kept test"))
        .created()
        .await;
    let form = Multipart::new()
        .text("title", "Kept material")
        .text("videos", r#"[{"url":"https://video.example.com/kept"}]"#)
        .file("pdfs", "kept.pdf", "application/pdf", &pdf("kept"));
    let material = create_form(&app, &admin, form).await.expect(201).data();
    let id = |record: &Value| record["id"].as_str().expect("an id").to_owned();
    let (course, test, material) = (id(&course), id(&test), id(&material));
    let kept_pdf = material_pdf(&admin, &material).await;
    admin
        .post(
            &format!("/education-materials/{material}/assign"),
            &json!({ "userIds": [ana.user_id] }),
        )
        .await;
    let before = school_state(&app, &admin, &ana.user_id).await;
    let entries_before = entries(&root, "").await.len();

    let refuse = if is_postgres(&app) {
        "CREATE FUNCTION refuse_entry() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
             IF NEW.action LIKE 'course.%' OR NEW.action LIKE 'test.%'
                OR NEW.action LIKE 'material.%' THEN RAISE EXCEPTION 'no entry'; END IF;
             RETURN NEW; END $$;
         CREATE TRIGGER refuse_entry BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_entry();"
    } else {
        "CREATE TRIGGER refuse_entry BEFORE INSERT ON audit_events
         WHEN NEW.action LIKE 'course.%' OR NEW.action LIKE 'test.%' OR NEW.action LIKE 'material.%'
         BEGIN SELECT RAISE(ABORT, 'no entry'); END;"
    };
    execute(&app, refuse).await.expect("install the fault");

    let (new_form_type, new_form) = Multipart::new()
        .text("title", "Refused material")
        .file("pdfs", "new.pdf", "application/pdf", &pdf("new"))
        .finish();
    let (patch_form_type, patch_form) = Multipart::new()
        .text("title", "Refused title")
        .text("videos", r#"[{"url":"https://video.example.com/other"}]"#)
        .text("removePdfIds", &json!([kept_pdf]).to_string())
        .file("pdfs", "added.pdf", "application/pdf", &pdf("added"))
        .finish();
    let rewritten = small_test("Refused title");
    let refused = [
        admin
            .post("/courses", &json!({ "title": "Refused course" }))
            .send(),
        admin
            .post_empty(&format!("/courses/{course}/duplicate"))
            .send(),
        admin
            .patch(
                &format!("/courses/{course}"),
                &json!({ "title": "Refused title" }),
            )
            .send(),
        admin
            .post("/proficiency-tests", &small_test("Refused test"))
            .send(),
        admin
            .post_empty(&format!("/proficiency-tests/{test}/duplicate"))
            .send(),
        admin
            .patch(&format!("/proficiency-tests/{test}"), &rewritten)
            .send(),
        admin.delete(&format!("/proficiency-tests/{test}")).send(),
        app.post("/education-materials")
            .bearer(&admin.access)
            .body(&new_form_type, new_form)
            .send(),
        app.patch(&format!("/education-materials/{material}"))
            .bearer(&admin.access)
            .body(&patch_form_type, patch_form)
            .send(),
        admin
            .delete(&format!("/education-materials/{material}"))
            .send(),
        admin
            .post(
                &format!("/education-materials/{material}/assign"),
                &json!({ "userIds": [ben.user_id] }),
            )
            .send(),
        admin
            .delete(&format!(
                "/education-materials/{material}/assign/{}",
                ana.user_id
            ))
            .send(),
    ];
    let kept = (0..4).map(|i| {
        admin
            .put(
                "/settings",
                &json!({ "key": format!("kept.{i}"), "value": i }),
            )
            .send()
    });
    let (refused, kept) = tokio::join!(
        futures_util::future::join_all(refused),
        futures_util::future::join_all(kept)
    );
    for answer in &refused {
        assert!(answer.status >= 500, "{} {}", answer.status, answer.text());
    }
    for answer in &kept {
        assert_eq!(answer.status, 200, "{}", answer.text());
    }

    assert_eq!(school_state(&app, &admin, &ana.user_id).await, before);
    let after = entries(&root, "").await;
    assert_eq!(
        after.len(),
        entries_before + kept.len(),
        "only the kept writes' entries"
    );
    assert!(
        after[..kept.len()]
            .iter()
            .all(|entry| entry["action"] == "setting.put"),
        "{after:#?}"
    );
}

/// The id of the one PDF of a material, as an admin reads it.
async fn material_pdf(admin: &Session, material: &str) -> Value {
    let read = admin.get(&format!("/education-materials/{material}")).await;
    read["pdfs"][0]["id"].clone()
}
