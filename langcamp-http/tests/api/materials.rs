//! Education materials (CONTRACT §7): forms with PDFs, updates, deletion with files,
//! all-or-nothing assignment with mail, and who may see what.

use chrono::TimeDelta;
use langcamp_core::users::NewUser;
use langcamp_core::{Actor, Role};
use serde_json::{Value, json};

use crate::helpers::{Case, Client, Session, TestApp, TestResponse, assert_role_matrix, utc};
use crate::smtp::ReceivedMail;
use crate::storage::{Multipart, pdf, png, stored_files};

const SUBJECT_PREFIX: &str = "New learning material: ";

async fn send_form(
    app: &TestApp,
    method: hyper::Method,
    path: &str,
    token: &str,
    form: Multipart,
) -> TestResponse {
    let (content_type, body) = form.finish();
    app.call(method, path)
        .bearer(token)
        .body(&content_type, body)
        .send()
        .await
}

/// `POST /education-materials` as `admin` with a multipart form.
pub async fn create_form(app: &TestApp, admin: &Session, form: Multipart) -> TestResponse {
    send_form(
        app,
        hyper::Method::POST,
        "/education-materials",
        &admin.access,
        form,
    )
    .await
}

async fn create_json(admin: &Session, body: Value) -> Value {
    admin.post("/education-materials", &body).created().await
}

/// Nothing of a refused material was kept: no row, no file record, no file.
async fn assert_nothing_stored(app: &TestApp) {
    assert_eq!(app.rows("education_materials").await, 0);
    assert_eq!(app.rows("stored_files").await, 0);
    assert_eq!(stored_files(app), Vec::<std::path::PathBuf>::new());
}

/// A user created directly (no sign-in mail), with a name.
async fn person(app: &TestApp, email: &str, name: &str) -> String {
    app.core
        .create_user(
            &Actor::Operator,
            NewUser::new(email, Role::User, Some(name)).expect("a valid user"),
        )
        .await
        .expect("create a user")
        .id
}

/// The assignment mails `email` received, waiting for `n` of them.
async fn assignment_mails(app: &TestApp, email: &str, n: usize) -> Vec<ReceivedMail> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mails: Vec<ReceivedMail> = app
            .mail_to(email, 0)
            .await
            .into_iter()
            .filter(|m| {
                m.header("subject")
                    .is_some_and(|s| s.starts_with(SUBJECT_PREFIX))
            })
            .collect();
        if mails.len() >= n || tokio::time::Instant::now() > deadline {
            return mails;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

fn path_of(url: &Value, app: &TestApp) -> String {
    url.as_str()
        .and_then(|u| u.strip_prefix(&format!("http://{}", app.addr)))
        .unwrap_or_else(|| panic!("{url} is not on this server"))
        .to_owned()
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("an array")
        .iter()
        .map(|m| {
            m.get("material")
                .unwrap_or(m)
                .get("id")
                .and_then(Value::as_str)
                .expect("id")
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn admins_create_a_material_from_a_form_with_two_pdfs_and_videos() {
    let (app, admin) = TestApp::with_admin().await;
    let workbook = pdf("workbook");
    let answers = pdf("answers");
    let form = Multipart::new()
        .text("title", "  Everyday German, unit 1 ")
        .text("description", "Greetings and introductions")
        .text("locale", "en")
        .text("targetLanguage", "DE")
        .text("level", "a2")
        .text(
            "videos",
            r#"[{"title":"Greetings","url":"https://video.example.com/greetings"},
                {"title":"Numbers","url":"http://video.example.com/numbers"}]"#,
        )
        .file("pdfs", "Workbook.pdf", "application/pdf", &workbook)
        .file("pdfs", "Answers.pdf", "application/octet-stream", &answers);
    let material = create_form(&app, &admin, form).await.expect(201).data();

    assert_eq!(material["title"], "Everyday German, unit 1");
    assert_eq!(material["description"], "Greetings and introductions");
    assert_eq!(material["locale"], "en");
    assert_eq!(material["targetLanguage"], "de");
    assert_eq!(material["level"], "A2");
    assert_eq!(material["createdAt"], material["updatedAt"]);
    let videos = material["videos"].as_array().expect("videos");
    assert_eq!(videos.len(), 2);
    assert_eq!(videos[0]["title"], "Greetings");
    assert_eq!(videos[0]["url"], "https://video.example.com/greetings");
    assert_eq!(videos[1]["url"], "http://video.example.com/numbers");
    assert!(videos[0]["id"].is_string());

    let pdfs = material["pdfs"].as_array().expect("pdfs");
    assert_eq!(pdfs.len(), 2);
    for (item, (title, bytes)) in pdfs
        .iter()
        .zip([("Workbook", &workbook), ("Answers", &answers)])
    {
        assert_eq!(item["title"], title);
        assert_eq!(item["size"], bytes.len());
        let file_id = item["fileId"].as_str().expect("fileId");
        assert_eq!(
            item["url"],
            format!("http://{}/storage/files/{file_id}", app.addr)
        );
        let served = app.get(&path_of(&item["url"], &app)).expect(200).await;
        assert_eq!(served.body.as_ref(), bytes.as_slice());
        assert_eq!(served.header("content-type"), Some("application/pdf"));
    }
    assert_eq!(stored_files(&app).len(), 2);

    let id = material["id"].as_str().expect("id");
    let fetched = admin.get(&format!("/education-materials/{id}")).await;
    assert_eq!(fetched, material);
}

#[tokio::test]
async fn a_json_body_creates_a_material_without_files_and_fields_are_checked() {
    let (app, admin) = TestApp::with_admin().await;
    let material = create_json(
        &admin,
        json!({ "title": "Listening practice", "videos": [{ "url": "https://v.example.com/1" }] }),
    )
    .await;
    assert_eq!(material["pdfs"], json!([]));
    assert_eq!(material["videos"][0]["title"], Value::Null);
    assert_eq!(material["locale"], Value::Null);
    assert_eq!(material["level"], Value::Null);

    for (body, message) in [
        (json!({ "description": "no title" }), "title is required"),
        (
            json!({ "title": "x", "videos": [{ "title": "bad", "url": "ftp://v.example.com/1" }] }),
            "videos[0].url must be an http:// or https:// address",
        ),
        (
            json!({ "title": "x", "videos": [{ "url": "javascript:alert(1)" }] }),
            "videos[0].url must be an http:// or https:// address",
        ),
        (
            json!({ "title": "x", "level": "D1" }),
            "level must be one of A1, A2, B1, B2, C1, C2",
        ),
    ] {
        let refused = admin.post("/education-materials", &body).expect(400).await;
        assert_eq!(refused.errors(), [message], "{body}");
    }
    let unknown = admin
        .post("/education-materials", &json!({ "title": "x", "pdfs": [] }))
        .invalid()
        .await;
    assert!(unknown[0].contains("unknown field `pdfs`"), "{unknown:?}");
    admin
        .call(hyper::Method::POST, "/education-materials")
        .body("text/plain", "title=x")
        .expect(415)
        .await;
    assert_eq!(app.rows("education_materials").await, 1);
}

#[tokio::test]
async fn a_non_pdf_among_the_pdfs_is_refused_and_nothing_is_stored() {
    let (app, admin) = TestApp::with_admin().await;
    let form = Multipart::new()
        .text("title", "Mixed up")
        .file("pdfs", "good.pdf", "application/pdf", &pdf("good"))
        .file("pdfs", "sneaky.pdf", "application/pdf", &png(4, 4));
    let refused = create_form(&app, &admin, form).await.expect(415);
    assert_eq!(refused.code(), "UNSUPPORTED_MEDIA_TYPE");
    assert_eq!(refused.errors(), ["\"sneaky.pdf\" is not a PDF document"]);
    assert_nothing_stored(&app).await;
}

#[tokio::test]
async fn form_mistakes_are_400_and_discard_pdfs_already_received() {
    let (app, admin) = TestApp::with_admin().await;
    let with_pdf = || Multipart::new().file("pdfs", "a.pdf", "application/pdf", &pdf("a"));
    for (form, message) in [
        (
            with_pdf().text("title", "x").text("colour", "red"),
            "unknown field: colour",
        ),
        (
            with_pdf().text("title", "x").text("title", "y"),
            "title is given more than once",
        ),
        (
            with_pdf().text("title", "x").text("videos", "not json"),
            "videos must be a JSON array",
        ),
        (
            with_pdf()
                .text("title", "x")
                .text("videos", r#"{"title":"v","url":"https://v.example.com"}"#),
            "videos must be a JSON array",
        ),
        (
            with_pdf()
                .text("title", "x")
                .text("videos", r#"[{"title":"v","url":"mailto:a@b.c"}]"#),
            "videos[0].url must be an http:// or https:// address",
        ),
        (with_pdf().text("level", "B1"), "title is required"),
        (
            with_pdf().text("title", "x").text("removePdfIds", "[]"),
            "unknown field: removePdfIds",
        ),
    ] {
        let refused = create_form(&app, &admin, form).await.expect(400);
        assert_eq!(refused.errors(), [message]);
    }
    assert_nothing_stored(&app).await;
}

#[tokio::test]
async fn updates_append_and_remove_pdfs_and_change_fields() {
    let start = utc(2026, 11, 22, 10, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    let form = Multipart::new()
        .text("title", "Unit 2")
        .text("description", "Shopping")
        .text(
            "videos",
            r#"[{"title":"Market","url":"https://v.example.com/market"}]"#,
        )
        .file("pdfs", "one.pdf", "application/pdf", &pdf("one"))
        .file("pdfs", "two.pdf", "application/pdf", &pdf("two"));
    let material = create_form(&app, &admin, form).await.expect(201).data();
    let id = material["id"].as_str().expect("id").to_owned();
    let path = format!("/education-materials/{id}");
    let first = material["pdfs"][0].clone();
    let second = material["pdfs"][1].clone();
    let video_id = material["videos"][0]["id"].clone();

    app.clock.advance(TimeDelta::minutes(5));
    let three = pdf("three");
    let form = Multipart::new()
        .text("title", "Unit 2: shopping")
        .text("removePdfIds", &json!([first["id"]]).to_string())
        .file("pdfs", "three.pdf", "application/pdf", &three);
    let updated = send_form(&app, hyper::Method::PATCH, &path, &admin.access, form)
        .await
        .expect(200)
        .data();
    assert_eq!(updated["title"], "Unit 2: shopping");
    assert_eq!(updated["description"], "Shopping", "absent fields stay");
    assert_eq!(updated["videos"], material["videos"], "absent videos stay");
    let pdfs = updated["pdfs"].as_array().expect("pdfs");
    assert_eq!(pdfs.len(), 2);
    assert_eq!(pdfs[0], second);
    assert_eq!(pdfs[1]["title"], "three");
    assert_eq!(pdfs[1]["size"], three.len());
    assert_eq!(updated["createdAt"], "2026-11-22T10:00:00.000Z");
    assert_eq!(updated["updatedAt"], "2026-11-22T10:05:00.000Z");

    // The removed PDF's file is gone, record and bytes; the others are served.
    app.get(&path_of(&first["url"], &app)).expect(404).await;
    app.get(&path_of(&second["url"], &app)).expect(200).await;
    let served = app.get(&path_of(&pdfs[1]["url"], &app)).expect(200).await;
    assert_eq!(served.body.as_ref(), three.as_slice());
    assert_eq!(stored_files(&app).len(), 2);
    assert_eq!(app.rows("stored_files").await, 2);

    // JSON: null clears an optional field, videos are replaced (an id keeps its video).
    let changed = admin.patch(&path, &json!({
            "description": null,
            "level": "c1",
            "videos": [
                { "id": video_id, "title": "Market (new cut)", "url": "https://v.example.com/market2" },
                { "title": "Prices", "url": "https://v.example.com/prices" }
            ]
        })).await;
    assert_eq!(changed["description"], Value::Null);
    assert_eq!(changed["level"], "C1");
    assert_eq!(changed["videos"][0]["id"], video_id);
    assert_eq!(changed["videos"][0]["title"], "Market (new cut)");
    assert_eq!(changed["videos"][1]["title"], "Prices");
    assert_eq!(changed["pdfs"], updated["pdfs"]);

    // Mistakes change nothing.
    for (body, message) in [
        (json!({ "title": null }), "title cannot be null"),
        (
            json!({ "removePdfIds": ["0190f1a2-0000-7000-8000-0000000000ab"] }),
            "removePdfIds: \"0190f1a2-0000-7000-8000-0000000000ab\" is not a PDF of this material",
        ),
        (
            json!({ "videos": [{ "id": "someone-elses", "url": "https://v.example.com/x" }] }),
            "videos[0].id does not name a video of this material",
        ),
    ] {
        let refused = admin.patch(&path, &body).expect(400).await;
        assert_eq!(refused.errors(), [message]);
    }
    let non_pdf = Multipart::new().file("pdfs", "x.pdf", "application/pdf", &png(2, 2));
    send_form(&app, hyper::Method::PATCH, &path, &admin.access, non_pdf)
        .await
        .expect(415);
    let after = admin.get(&path).await;
    assert_eq!(after, changed);
    assert_eq!(stored_files(&app).len(), 2);

    // An empty JSON array removes every video.
    let cleared = admin.patch(&path, &json!({ "videos": [] })).await;
    assert_eq!(cleared["videos"], json!([]));
    admin
        .patch("/education-materials/not-an-id", &json!({ "title": "x" }))
        .expect(404)
        .await;
}

#[tokio::test]
async fn deleting_a_material_removes_its_files_and_assignments() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("dora@example.com").await;
    let form = Multipart::new()
        .text("title", "To be deleted")
        .file("pdfs", "a.pdf", "application/pdf", &pdf("a"))
        .file("pdfs", "b.pdf", "application/pdf", &pdf("b"));
    let material = create_form(&app, &admin, form).await.expect(201).data();
    let id = material["id"].as_str().expect("id");
    admin
        .post(
            &format!("/education-materials/{id}/assign"),
            &json!({ "userIds": [student.user_id] }),
        )
        .await;
    assert_eq!(stored_files(&app).len(), 2);

    let deleted = admin.delete(&format!("/education-materials/{id}")).await;
    assert_eq!(deleted, json!({ "id": id, "deleted": true }));
    assert_eq!(stored_files(&app), Vec::<std::path::PathBuf>::new());
    for pdf in material["pdfs"].as_array().expect("pdfs") {
        app.get(&path_of(&pdf["url"], &app)).expect(404).await;
    }
    assert_eq!(app.rows("stored_files").await, 0);
    assert_eq!(app.rows("material_pdfs").await, 0);
    assert_eq!(app.rows("material_assignments").await, 0);
    let mine = student.get("/education-materials/my-materials").await;
    assert_eq!(mine, json!([]));
    admin
        .assert_gone(&format!("/education-materials/{id}"))
        .await;
}

#[tokio::test]
async fn assignment_is_all_or_nothing_and_mails_each_new_user_once() {
    let (app, admin) = TestApp::with_admin().await;
    let material = create_json(&admin, json!({ "title": "Verbs <b>&</b> more" })).await;
    let id = material["id"].as_str().expect("id");
    let assign_path = format!("/education-materials/{id}/assign");
    let ana = person(&app, "ana@example.com", "Ana").await;
    let ben = person(&app, "ben@example.com", "Ben").await;
    let cleo = person(&app, "cleo@example.com", "Cleo").await;
    let ghost = "0190f1a2-0000-7000-8000-00000000dead";
    let assign = |user_ids: Value| admin.post(&assign_path, &json!({ "userIds": user_ids }));
    let assigned = |assigned: u32, already: u32| json!({ "materialId": id, "assigned": assigned, "alreadyAssigned": already });

    let refused = assign(json!([ana, ghost, ben]))
        .fails(404, "NOT_FOUND")
        .await;
    assert_eq!(refused.errors(), [format!("user \"{ghost}\" not found")]);
    assert_eq!(app.rows("material_assignments").await, 0);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM mail_outbox WHERE kind = 'material_assignment'")
            .await,
        0,
        "no mail is queued"
    );

    let done = assign(json!([ana, ben, ana])).await;
    assert_eq!(done, assigned(2, 0));
    let link = format!("https://school.example/materials/{id}");
    for (email, name) in [("ana@example.com", "Ana"), ("ben@example.com", "Ben")] {
        let mails = assignment_mails(&app, email, 1).await;
        assert_eq!(mails.len(), 1, "one mail to {email}");
        let mail = &mails[0];
        assert_eq!(
            mail.header("subject").as_deref(),
            Some("New learning material: Verbs <b>&</b> more")
        );
        let text = mail.text_body();
        assert!(text.contains(&format!("Hello {name},")), "{text}");
        assert!(text.contains("Verbs <b>&</b> more"), "{text}");
        assert!(text.contains(&link), "{text}");
        let html = mail.html_body().expect("an HTML part");
        assert!(
            html.contains("Verbs &lt;b&gt;&amp;&lt;/b&gt; more"),
            "{html}"
        );
        assert!(!html.contains("<b>&</b>"), "{html}");
        assert!(html.contains(&format!("href=\"{link}\"")), "{html}");
    }

    let again = assign(json!([ana, cleo, ben])).await;
    assert_eq!(again, assigned(1, 2));
    assert_eq!(assignment_mails(&app, "cleo@example.com", 1).await.len(), 1);
    assert_eq!(
        app.count("SELECT COUNT(*) FROM mail_outbox WHERE kind = 'material_assignment'")
            .await,
        3,
        "a second assignment sends no second mail"
    );
    assert_eq!(assignment_mails(&app, "ana@example.com", 1).await.len(), 1);

    for (body, status) in [
        (json!({}), 400),
        (json!({ "userIds": [] }), 400),
        (json!({ "userIds": "ana" }), 400),
        (json!({ "userIds": [ana], "notify": false }), 400),
    ] {
        admin.post(&assign_path, &body).expect(status).await;
    }
    let unknown_material = admin
        .post(
            "/education-materials/0190f1a2-0000-7000-8000-000000000000/assign",
            &json!({ "userIds": [ana] }),
        )
        .expect(404)
        .await;
    assert_eq!(unknown_material.errors(), ["education material not found"]);
}

#[tokio::test]
async fn without_a_frontend_base_the_mail_carries_a_relative_link() {
    let app = TestApp::with_var("FRONTEND_BASE_URL", "").await;
    let admin = app.admin().await;
    let material = create_json(&admin, json!({ "title": "Relative" })).await;
    let id = material["id"].as_str().expect("id");
    let dan = person(&app, "dan@example.com", "Dan").await;
    admin
        .post(
            &format!("/education-materials/{id}/assign"),
            &json!({ "userIds": [dan] }),
        )
        .await;
    let mails = assignment_mails(&app, "dan@example.com", 1).await;
    assert_eq!(mails.len(), 1);
    let text = mails[0].text_body();
    assert!(
        text.contains(&format!("Open it here: /materials/{id}\n")),
        "{text}"
    );
}

#[tokio::test]
async fn users_see_only_their_own_materials_newest_assignment_first() {
    let start = utc(2026, 11, 22, 10, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    let eva = app.student("eva@example.com").await;
    let finn = app.student("finn@example.com").await;
    let a = create_json(&admin, json!({ "title": "A" })).await;
    let b = create_json(&admin, json!({ "title": "B" })).await;
    let c = create_json(&admin, json!({ "title": "C" })).await;
    let id = |m: &Value| m["id"].as_str().expect("id").to_owned();
    let assign = |material: String, user: String| {
        let app = &app;
        let token = admin.access.clone();
        async move {
            app.post(&format!("/education-materials/{material}/assign"))
                .bearer(&token)
                .json(&json!({ "userIds": [user] }))
                .await;
        }
    };
    assign(id(&c), eva.user_id.clone()).await;
    app.clock.advance(TimeDelta::minutes(1));
    assign(id(&a), eva.user_id.clone()).await;
    app.clock.advance(TimeDelta::minutes(1));
    assign(id(&b), finn.user_id.clone()).await;

    let mine = eva.get("/education-materials/my-materials").await;
    assert_eq!(ids(&mine), vec![id(&a), id(&c)], "newest assignment first");
    assert_eq!(mine[0]["assignedAt"], "2026-11-22T10:01:00.000Z");
    assert_eq!(mine[0]["material"], a);

    let of_eva = admin
        .get(&format!("/education-materials/user/{}", eva.user_id))
        .await;
    assert_eq!(of_eva, mine);

    let read = |token: String, material: String| {
        let app = &app;
        async move {
            app.get(&format!("/education-materials/{material}"))
                .bearer(&token)
                .send()
                .await
        }
    };
    assert_eq!(read(eva.access.clone(), id(&a)).await.expect(200).data(), a);
    read(eva.access.clone(), id(&b)).await.expect(404);
    read(finn.access.clone(), id(&a)).await.expect(404);
    assert_eq!(
        read(finn.access.clone(), id(&b)).await.expect(200).data(),
        b
    );
    let missing = read(
        finn.access.clone(),
        "0190f1a2-0000-7000-8000-000000000000".into(),
    )
    .await
    .expect(404);
    assert_eq!(missing.errors(), ["education material not found"]);

    // Unassigning takes the material away.
    let unassigned = admin
        .delete(&format!(
            "/education-materials/{}/assign/{}",
            id(&a),
            eva.user_id
        ))
        .await;
    assert_eq!(
        unassigned,
        json!({ "materialId": id(&a), "userId": eva.user_id, "unassigned": true })
    );
    admin
        .delete(&format!(
            "/education-materials/{}/assign/{}",
            id(&a),
            eva.user_id
        ))
        .expect(404)
        .await;
    read(eva.access.clone(), id(&a)).await.expect(404);
    let mine = eva.get("/education-materials/my-materials").await;
    assert_eq!(ids(&mine), vec![id(&c)]);

    admin
        .get("/education-materials/user/0190f1a2-0000-7000-8000-000000000000")
        .expect(404)
        .await;
}

#[tokio::test]
async fn the_admin_list_is_paginated_newest_first_and_filtered_by_locale() {
    let start = utc(2026, 11, 22, 10, 0, 0);
    let (app, admin) = TestApp::with_admin_at(start).await;
    let mut created = Vec::new();
    for (title, locale) in [("one", "en"), ("two", "de"), ("three", "en")] {
        app.clock.advance(TimeDelta::seconds(1));
        created.push(create_json(&admin, json!({ "title": title, "locale": locale })).await);
    }
    let form = Multipart::new()
        .text("title", "four")
        .text("locale", "en")
        .file("pdfs", "f.pdf", "application/pdf", &pdf("four"));
    app.clock.advance(TimeDelta::seconds(1));
    created.push(create_form(&app, &admin, form).await.expect(201).data());

    let all = admin.get("/education-materials").await;
    assert_eq!(all["pagination"]["totalItems"], 4);
    let titles: Vec<&str> = all["list"]
        .as_array()
        .expect("list")
        .iter()
        .map(|m| m["title"].as_str().expect("title"))
        .collect();
    assert_eq!(titles, ["four", "three", "two", "one"]);
    assert_eq!(all["list"][0], created[3], "PDFs are listed too");

    let english = admin
        .get("/education-materials?locale=EN&limit=2&page=2")
        .await;
    assert_eq!(english["pagination"]["totalItems"], 3);
    assert_eq!(english["pagination"]["totalPages"], 2);
    assert_eq!(english["list"].as_array().map(Vec::len), Some(1));
    assert_eq!(english["list"][0]["title"], "one");

    let none = admin.get("/education-materials?locale=fr").await;
    assert_eq!(none["list"], json!([]));
    assert_eq!(none["pagination"]["totalPages"], 0);
    admin
        .assert_invalid_queries(&[
            "/education-materials?locale=english",
            "/education-materials?limit=0",
            "/education-materials?page=x",
        ])
        .await;
}

#[tokio::test]
async fn every_material_operation_checks_the_role() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("gus@example.com").await;
    let material = create_json(&admin, json!({ "title": "Guarded" })).await;
    let id = material["id"].as_str().expect("id").to_owned();
    let user = student.user_id.clone();

    // Admin only: a user is refused, and so is anonymous.
    let callers: [(&str, &Client); 2] = [("user", &student), ("anonymous", app.anon())];
    const REFUSED: &[u16] = &[403, 401];
    let cases = [
        Case::new("POST", "/education-materials", REFUSED).body(json!({ "title": "x" })),
        Case::new("GET", "/education-materials", REFUSED),
        Case::new("GET", format!("/education-materials/user/{user}"), REFUSED),
        Case::new("PATCH", format!("/education-materials/{id}"), REFUSED)
            .body(json!({ "title": "x" })),
        Case::new("DELETE", format!("/education-materials/{id}"), REFUSED),
        Case::new("POST", format!("/education-materials/{id}/assign"), REFUSED)
            .body(json!({ "userIds": [user] })),
        Case::new(
            "DELETE",
            format!("/education-materials/{id}/assign/{user}"),
            REFUSED,
        ),
    ];
    assert_role_matrix(&callers, &cases).await;
    for path in [
        "/education-materials/my-materials".to_owned(),
        format!("/education-materials/{id}"),
    ] {
        app.get(&path).expect(401).await;
        app.get(&path).bearer("garbage").expect(401).await;
    }

    // A user's form with a PDF is refused before any byte is stored.
    let form =
        Multipart::new()
            .text("title", "x")
            .file("pdfs", "a.pdf", "application/pdf", &pdf("a"));
    send_form(
        &app,
        hyper::Method::POST,
        "/education-materials",
        &student.access,
        form,
    )
    .await
    .expect(403);
    let form = Multipart::new().file("pdfs", "a.pdf", "application/pdf", &pdf("a"));
    send_form(
        &app,
        hyper::Method::PATCH,
        &format!("/education-materials/{id}"),
        &student.access,
        form,
    )
    .await
    .expect(403);
    assert_eq!(stored_files(&app), Vec::<std::path::PathBuf>::new());

    // Nothing changed, and a superadmin passes the admin checks.
    let root = app.superadmin().await;
    let unchanged = root.get(&format!("/education-materials/{id}")).await;
    assert_eq!(unchanged, material);
    assert_eq!(app.rows("material_assignments").await, 0);
    // An admin reads their own (empty) list like any user.
    let own = admin.get("/education-materials/my-materials").await;
    assert_eq!(own, json!([]));
}
