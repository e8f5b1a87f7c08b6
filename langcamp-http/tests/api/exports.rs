//! Exports (CONTRACT §18): the admin lists as CSV, streamed in chunks, and personal data.

use serde_json::{Value, json};

use crate::helpers::{Case, Client, Session, TestApp, actions, assert_role_matrix, fresh_client};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A three-question test (1 point each, levels A1 0-1, A2 2-3) of `language`.
fn quiz(title: &str, language: &str) -> Value {
    let question = |text: &str| {
        json!({"text": text, "points": 1,
        "options": [{"text": "yes"}, {"text": "no"}], "correctOptionIndex": 0})
    };
    json!({
        "title": title, "targetLanguage": language,
        "questions": [question("Eins?"), question("Zwei, \"drei\"?"), question("Vier?")],
        "levelRanges": [
            {"level": "A1", "minScore": 0, "maxScore": 1, "message": "Start, here"},
            {"level": "A2", "minScore": 2, "maxScore": 3, "message": "=1+1 is \"fine\""}
        ]
    })
}

async fn submit(who: &Session, test_id: &str, right: usize) {
    let answers: Vec<Value> = (0..3)
        .map(|q| json!({"questionIndex": q, "selectedOptionIndex": if q < right { 0 } else { 1 }}))
        .collect();
    who.post(
        &format!("/proficiency-tests/{test_id}/submit"),
        &json!({ "answers": answers }),
    )
    .expect(201)
    .await;
}

async fn contact(app: &TestApp, first: &str, email: &str, message: &str) -> Value {
    app.post("/contact")
        .header("x-forwarded-for", &fresh_client())
        .json(
            &json!({"firstName": first, "lastName": "Lopes, Jr.", "email": email,
                      "phone": "+351 912 345 678", "message": message}),
        )
        .created()
        .await
}

/// A school with awkward text: commas, quotes, accents, line breaks and a formula.
async fn school() -> (TestApp, Session, Vec<Session>) {
    let (app, admin) = TestApp::with_admin().await;
    let ana = app.student("ana@example.com").await;
    let zoe = app.student("zoe@example.com").await;
    let eve = app.student("eve@example.com").await;
    for (who, name, city) in [
        (&ana, "Ana \"Nina\" Souza, PhD", "São Paulo"),
        (&zoe, "Zoë Ærø", "Tromsø"),
        (&eve, "=HYPERLINK(\"http://evil.test\",\"x\")", "@home"),
    ] {
        who.patch("/me/profile", &json!({"name": name, "city": city}))
            .expect(200)
            .await;
    }
    let german = admin
        .post("/proficiency-tests", &quiz("Deutsch, \"schnell\"", "de"))
        .created()
        .await;
    let french = admin
        .post("/proficiency-tests", &quiz("Français", "fr"))
        .created()
        .await;
    let (german, french) = (id(&german), id(&french));
    submit(&ana, &german, 3).await;
    submit(&ana, &french, 1).await;
    submit(&zoe, &german, 0).await;
    submit(&eve, &french, 2).await;
    contact(
        &app,
        "Ana",
        "ana@example.com",
        "Line one,\nline \"two\"\nthree",
    )
    .await;
    contact(&app, "Zoë", "zoe@example.com", "Olá, tudo bem?").await;
    contact(&app, "-Eve", "eve@example.com", "+1 call me\tplease").await;
    (app, admin, vec![ana, zoe, eve])
}

fn id(value: &Value) -> String {
    value["id"].as_str().expect("an id").to_owned()
}

/// The text of a cell as the export writes it, from the list's JSON item.
fn cell(item: &Value, column: &str) -> String {
    let value = column.split('.').fold(item, |v, key| &v[key]);
    let text = match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match text.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => format!("'{text}"),
        _ => text,
    }
}

/// Every item of a paginated admin list (`path` with its filters), all pages.
async fn whole_list(admin: &Client, path: &str) -> Vec<Value> {
    let join = if path.contains('?') { '&' } else { '?' };
    let mut items = Vec::new();
    for page in 1.. {
        let data = admin
            .get(&format!("{path}{join}limit=100&page={page}"))
            .expect(200)
            .await
            .data();
        let list = data["list"].as_array().expect("a list").clone();
        if list.is_empty() {
            break;
        }
        items.extend(list);
    }
    items
}

/// The header and rows of a CSV export, after checking its framing.
fn parse(body: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    assert!(body.starts_with(BOM), "a byte-order mark first");
    let text = &body[BOM.len()..];
    // RFC 4180: every record ends with CRLF (a bare LF only inside a quoted field).
    assert!(text.ends_with(b"\r\n"), "CRLF line ends");
    let mut reader = csv::ReaderBuilder::new().from_reader(text);
    let header = reader
        .headers()
        .expect("a header row")
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            r.expect("a well-formed record")
                .iter()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    (header, rows)
}

/// The CSV of `csv_path` holds exactly the list's items of `list_path` (same filters),
/// in the same order, cell by cell.
async fn assert_export_matches(admin: &Client, csv_path: &str, list_path: &str) -> usize {
    let items = whole_list(admin, list_path).await;
    let response = admin.get(csv_path).expect(200).await;
    let (header, rows) = parse(&response.body);
    assert_eq!(rows.len(), items.len(), "{csv_path}: one row per item");
    for (row, item) in rows.iter().zip(&items) {
        assert_eq!(row.len(), header.len(), "{csv_path}");
        for (column, text) in header.iter().zip(row) {
            let expected = &item[column.as_str()];
            if expected.is_array() {
                // JSON in a cell: compared as JSON (the key order is the writer's).
                let parsed: Value = serde_json::from_str(text).expect("JSON in the cell");
                assert_eq!(&parsed, expected, "{csv_path} {column}");
            } else {
                assert_eq!(text, &cell(item, column), "{csv_path} {column}");
            }
        }
    }
    rows.len()
}

#[tokio::test]
async fn each_csv_holds_the_rows_of_its_list_with_the_same_filters() {
    let (app, admin, people) = school().await;
    let ana = &people[0];
    for (csv_path, list_path, expected) in [
        ("/admin/exports/users.csv", "/users", 4),
        ("/admin/exports/users.csv?role=user", "/users?role=user", 3),
        ("/admin/exports/users.csv?q=%C3%B8", "/users?q=%C3%B8", 1),
        (
            "/admin/exports/users.csv?isRegistrationComplete=true&q=example",
            "/users?isRegistrationComplete=true&q=example",
            3,
        ),
        (
            "/admin/exports/results.csv",
            "/proficiency-tests/admin/results",
            4,
        ),
        (
            "/admin/exports/results.csv?targetLanguage=de",
            "/proficiency-tests/admin/results?targetLanguage=de",
            2,
        ),
        (
            &format!("/admin/exports/results.csv?userId={}&level=A2", ana.user_id),
            &format!(
                "/proficiency-tests/admin/results?userId={}&level=A2",
                ana.user_id
            ),
            1,
        ),
        ("/admin/exports/contacts.csv", "/contact/admin", 3),
        (
            "/admin/exports/contacts.csv?q=zo%C3%AB",
            "/contact/admin?q=zo%C3%AB",
            1,
        ),
        (
            "/admin/exports/contacts.csv?status=CLOSED",
            "/contact/admin?status=CLOSED",
            0,
        ),
    ] {
        let rows = assert_export_matches(&admin, csv_path, list_path).await;
        assert_eq!(rows, expected, "{csv_path}");
    }
    drop(app);
}

#[tokio::test]
async fn awkward_text_survives_and_formulas_are_guarded() {
    let (_app, admin, _people) = school().await;
    let users = admin.get("/admin/exports/users.csv").expect(200).await;
    let (header, rows) = parse(&users.body);
    let name = header.iter().position(|c| c == "name").expect("name");
    let city = header.iter().position(|c| c == "city").expect("city");
    let names: Vec<&str> = rows.iter().map(|r| r[name].as_str()).collect();
    assert!(names.contains(&"Ana \"Nina\" Souza, PhD"), "{names:?}");
    assert!(names.contains(&"Zoë Ærø"), "{names:?}");
    assert!(
        names.contains(&"'=HYPERLINK(\"http://evil.test\",\"x\")"),
        "{names:?}"
    );
    assert!(rows.iter().any(|r| r[city] == "'@home"));
    // The quoted field as written: quotes doubled, the whole field quoted.
    let text = String::from_utf8_lossy(&users.body);
    assert!(text.contains("\"Ana \"\"Nina\"\" Souza, PhD\""), "{text}");
    assert!(
        text.contains(",\"'=HYPERLINK(\"\"http://evil.test\"\",\"\"x\"\")\","),
        "{text}"
    );

    let contacts = admin.get("/admin/exports/contacts.csv").expect(200).await;
    let (header, rows) = parse(&contacts.body);
    let message = header.iter().position(|c| c == "message").expect("message");
    let first = header
        .iter()
        .position(|c| c == "firstName")
        .expect("firstName");
    let phone = header.iter().position(|c| c == "phone").expect("phone");
    let messages: Vec<&str> = rows.iter().map(|r| r[message].as_str()).collect();
    assert!(
        messages.contains(&"Line one,\nline \"two\"\nthree"),
        "{messages:?}"
    );
    assert!(messages.contains(&"'+1 call me\tplease"), "{messages:?}");
    assert!(rows.iter().any(|r| r[first] == "'-Eve"));
    assert!(rows.iter().all(|r| r[phone] == "'+351 912 345 678"));
}

#[tokio::test]
async fn a_csv_export_is_an_attachment_with_its_header_row_even_when_empty() {
    let (app, admin) = TestApp::with_admin().await;
    let today = app.core.clock().now().format("%Y-%m-%d").to_string();
    // Nothing matches: the file is the mark and the header row.
    for (name, filter, header) in [
        (
            "users",
            "?q=nobody",
            "id,email,name,role,isRegistrationComplete,age,gender,city,country,countryCode,phoneNumber,locale,createdAt,updatedAt",
        ),
        (
            "results",
            "",
            "id,testId,userId,totalScore,maxScore,level,message,completedAt,ability,standardError,user.id,user.name,user.email,test.id,test.title,test.targetLanguage,answers",
        ),
        (
            "contacts",
            "?q=nobody",
            "id,firstName,lastName,email,phone,message,status,replyMessage,source,locale,repliedAt,createdAt,updatedAt",
        ),
    ] {
        let response = admin
            .get(&format!("/admin/exports/{name}.csv{filter}"))
            .expect(200)
            .await;
        assert_eq!(
            response.header("content-type"),
            Some("text/csv; charset=utf-8")
        );
        assert_eq!(
            response.header("content-disposition"),
            Some(format!("attachment; filename=\"{name}-{today}.csv\"").as_str())
        );
        let mut expected = BOM.to_vec();
        expected.extend_from_slice(format!("{header}\r\n").as_bytes());
        assert_eq!(response.body.as_ref(), &expected[..], "{name}");
    }
}

#[tokio::test]
async fn rows_across_many_chunks_come_once_each_newest_first() {
    let (app, admin) = TestApp::with_admin().await;
    // 2,345 users, many with the same creation time: the key's tie-break (the id) decides
    // where each chunk of 1,000 ends.
    let mut tx = app.core.db().begin().await.expect("a transaction");
    for n in 0..2345_i64 {
        sqlx::query(
            "INSERT INTO users (id, email, role, is_registration_complete, locale, created_at, updated_at)
             VALUES ($1, $2, 'user', 0, 'en', $3, $3)",
        )
        .bind(format!("seeded-{n:05}"))
        .bind(format!("s{n}@bulk.test"))
        .bind(1_700_000_000_000 + n / 7)
        .execute(&mut *tx)
        .await
        .expect("insert");
    }
    tx.commit().await.expect("commit");
    let response = admin
        .get("/admin/exports/users.csv?q=bulk.test")
        .expect(200)
        .await;
    let (_, rows) = parse(&response.body);
    let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    let mut expected: Vec<(i64, String)> = (0..2345_i64)
        .map(|n| (1_700_000_000_000 + n / 7, format!("seeded-{n:05}")))
        .collect();
    expected.sort_by(|a, b| b.cmp(a));
    let expected: Vec<&str> = expected.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(ids, expected);
}

#[tokio::test]
async fn bad_filters_are_refused_as_on_the_lists_and_unknown_exports_are_not_found() {
    let (_app, admin) = TestApp::with_admin().await;
    for path in [
        "/admin/exports/users.csv?role=teacher",
        "/admin/exports/users.csv?isRegistrationComplete=maybe",
        "/admin/exports/results.csv?targetLanguage=not%20a%20tag",
        "/admin/exports/contacts.csv?status=closed",
    ] {
        admin.get(path).fails(400, "VALIDATION_FAILED").await;
    }
    for path in [
        "/admin/exports/courses.csv",
        "/admin/exports/otp_codes.csv",
        "/admin/exports/users.json",
    ] {
        admin.get(path).fails(404, "NOT_FOUND").await;
    }
}

#[tokio::test]
async fn exports_are_for_admins_and_personal_data_for_its_owner() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("ana@example.com").await;
    let callers: [(&str, &Client); 3] = [
        ("anonymous", app.anon()),
        ("user", &student),
        ("admin", &admin),
    ];
    let theirs = format!("/admin/users/{}/export", admin.user_id);
    assert_role_matrix(
        &callers,
        &[
            Case::new("GET", "/admin/exports/users.csv", &[401, 403, 200]),
            Case::new("GET", "/admin/exports/results.csv", &[401, 403, 200]),
            Case::new("GET", "/admin/exports/contacts.csv", &[401, 403, 200]),
            Case::new("GET", "/me/export", &[401, 200, 200]),
            Case::new("GET", theirs, &[401, 403, 200]),
        ],
    )
    .await;
    admin
        .get("/admin/users/no-such-user/export")
        .fails(404, "NOT_FOUND")
        .await;
}

#[tokio::test]
async fn the_personal_data_export_holds_the_users_data_and_nothing_of_anyone_else() {
    let (app, admin, people) = school().await;
    let (ana, zoe) = (&people[0], &people[1]);
    let material = admin
        .post(
            "/education-materials",
            &json!({"title": "Hören, \"leicht\""}),
        )
        .created()
        .await;
    let other = admin
        .post("/education-materials", &json!({"title": "Only for Zoë"}))
        .created()
        .await;
    for (material, user) in [(&material, ana), (&other, zoe)] {
        admin
            .post(
                &format!("/education-materials/{}/assign", id(material)),
                &json!({"userIds": [user.user_id]}),
            )
            .expect(200)
            .await;
    }
    // A second sign-in of Ana's, then signed out.
    let again = app.sign_in_through_core("ana@example.com").await;
    again
        .post("/auth/logout", &json!({"refreshToken": again.refresh}))
        .send()
        .await;

    let response = ana.get("/me/export").expect(200).await;
    let today = app.core.clock().now().format("%Y-%m-%d").to_string();
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(
        response.header("content-disposition"),
        Some(format!("attachment; filename=\"langcamp-data-{today}.json\"").as_str())
    );
    let data: Value = serde_json::from_slice(&response.body).expect("a JSON document");
    assert!(data["exportedAt"].is_string());
    assert_eq!(data["user"]["id"], ana.user_id.as_str());
    assert_eq!(data["user"]["name"], "Ana \"Nina\" Souza, PhD");

    let results = data["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["userId"] == ana.user_id.as_str()));
    // Detailed: the question texts, never the answer key.
    assert!(results[0]["answers"][0]["questionText"].is_string());
    assert!(results[0]["answers"][0].get("correctOptionId").is_none());

    let materials = data["materials"].as_array().expect("materials");
    assert_eq!(materials.len(), 1);
    assert_eq!(materials[0]["material"]["id"], id(&material).as_str());
    assert!(materials[0]["assignedAt"].is_string());

    let contacts = data["contacts"].as_array().expect("contacts");
    assert_eq!(contacts.len(), 1);
    assert_eq!(contacts[0]["email"], "ana@example.com");

    let sign_ins = data["signIns"].as_array().expect("sign-ins");
    assert_eq!(sign_ins.len(), 2, "{sign_ins:?}");
    for sign_in in sign_ins {
        let mut keys: Vec<&str> = sign_in
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["createdAt", "endedAt", "lastUsedAt"]);
    }
    assert_eq!(
        sign_ins.iter().filter(|s| s["endedAt"].is_null()).count(),
        1
    );
    // The entries about the user: the fixture made them through core, as the operator.
    assert_eq!(actions(&data["auditEvents"]), ["user.created"]);

    // Nothing of another user's anywhere in the document.
    let text = String::from_utf8_lossy(&response.body);
    for foreign in [
        zoe.user_id.as_str(),
        "zoe@example.com",
        "Only for Zoë",
        &ana.refresh,
        &ana.access,
    ] {
        assert!(!text.contains(foreign), "{foreign} in {text}");
    }

    // The admin's download of Ana's data is the same document.
    let by_admin = admin
        .get(&format!("/admin/users/{}/export", ana.user_id))
        .expect(200)
        .await;
    let by_admin: Value = serde_json::from_slice(&by_admin.body).expect("a JSON document");
    assert_eq!(by_admin["user"], data["user"]);
    assert_eq!(by_admin["results"], data["results"]);
    assert_eq!(by_admin["contacts"], data["contacts"]);
    // A user cannot read another's.
    ana.get(&format!("/admin/users/{}/export", zoe.user_id))
        .fails(403, "FORBIDDEN")
        .await;
}

/// The views of the reporting schema (PostgreSQL): every table of school data.
const REPORTING_VIEWS: [&str; 16] = [
    "audit_events",
    "contacts",
    "courses",
    "education_materials",
    "mail_templates",
    "material_assignments",
    "material_pdfs",
    "material_videos",
    "proficiency_tests",
    "settings",
    "stored_files",
    "test_level_ranges",
    "test_options",
    "test_questions",
    "test_results",
    "users",
];

#[tokio::test]
async fn the_reporting_schema_has_native_types_and_a_read_only_role_reads_only_it() {
    let (app, admin, _people) = school().await;
    if app.core.db().backend() != langcamp_core::platform::db::Backend::Postgres {
        return; // SQLite has no schemas and no reporting views.
    }
    admin
        .post(
            "/courses",
            &json!({"title": "Yen course", "price": 12000, "currency": "JPY", "isPublished": true,
                    "startDate": "2027-01-04"}),
        )
        .created()
        .await;
    admin
        .post(
            "/courses",
            &json!({"title": "Euro course", "price": 249.5, "currency": "EUR"}),
        )
        .created()
        .await;
    admin
        .put(
            "/settings",
            &json!({"key": "school.hours", "value": {"mon": [9, 17]}}),
        )
        .expect(200)
        .await;
    let pool = app.core.db().reader();

    let views: Vec<String> = sqlx::query_scalar(
        "SELECT CAST(table_name AS TEXT) FROM information_schema.views WHERE table_schema = 'reporting'
         ORDER BY table_name",
    )
    .fetch_all(pool)
    .await
    .expect("the views");
    assert_eq!(views, REPORTING_VIEWS);

    // Native types: no epoch milliseconds, 0/1 flags or JSON text left.
    let columns: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT CAST(table_name AS TEXT), CAST(column_name AS TEXT), CAST(data_type AS TEXT)
         FROM information_schema.columns
         WHERE table_schema = 'reporting'",
    )
    .fetch_all(pool)
    .await
    .expect("the columns");
    let type_of = |table: &str, column: &str| {
        columns
            .iter()
            .find(|(t, c, _)| t == table && c == column)
            .map(|(_, _, ty)| ty.as_str())
            .unwrap_or_else(|| panic!("reporting.{table}.{column}"))
    };
    for (table, column, _) in &columns {
        if column.ends_with("_at") && column != "assigned_by" {
            assert_eq!(
                type_of(table, column),
                "timestamp with time zone",
                "{table}.{column}"
            );
        }
    }
    for (table, column, expected) in [
        ("users", "is_registration_complete", "boolean"),
        ("courses", "is_published", "boolean"),
        ("proficiency_tests", "is_active", "boolean"),
        ("courses", "price", "numeric"),
        ("courses", "start_date", "date"),
        ("test_results", "answers", "jsonb"),
        ("settings", "value", "jsonb"),
        ("users", "age", "bigint"),
        ("audit_events", "at", "timestamp with time zone"),
        ("audit_events", "changes", "jsonb"),
    ] {
        assert_eq!(type_of(table, column), expected, "{table}.{column}");
    }
    assert!(
        !columns
            .iter()
            .any(|(_, c, _)| c.contains("token") || c.contains("hash") || c == "storage_key"),
        "{columns:?}"
    );

    // A role with only the grants of docs/OPERATIONS.md reads every view, and nothing else.
    let role = format!("reporting_test_{}", uuid::Uuid::new_v4().simple());
    let mut conn = app
        .core
        .db()
        .writer_connection()
        .await
        .expect("a connection");
    for statement in [
        format!("CREATE ROLE {role} NOLOGIN"),
        format!("GRANT USAGE ON SCHEMA reporting TO {role}"),
        format!("GRANT SELECT ON ALL TABLES IN SCHEMA reporting TO {role}"),
        format!("SET ROLE {role}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut *conn)
            .await
            .expect("the role");
    }
    let mut refused = Vec::new();
    for view in REPORTING_VIEWS {
        // Each row whole, as text: every column is computed (the Any driver reads no
        // timestamptz or jsonb itself).
        let rows: Result<Vec<String>, _> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT CAST(v AS TEXT) FROM reporting.{view} v"
        )))
        .fetch_all(&mut *conn)
        .await;
        if let Err(e) = rows {
            refused.push(format!("{view}: {e}"));
        }
    }
    let prices: Vec<String> =
        sqlx::query_scalar("SELECT CAST(price AS TEXT) FROM reporting.courses ORDER BY title")
            .fetch_all(&mut *conn)
            .await
            .expect("prices");
    let hours: String = sqlx::query_scalar(
        "SELECT CAST(value -> 'mon' ->> 1 AS TEXT) FROM reporting.settings WHERE key = 'school.hours'",
    )
    .fetch_one(&mut *conn)
    .await
    .expect("a setting");
    let users: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM reporting.users WHERE is_registration_complete AND created_at <= now()",
    )
    .fetch_one(&mut *conn)
    .await
    .expect("users");
    let private = [
        "public.users",
        "public.sessions",
        "public.refresh_tokens",
        "public.otp_codes",
        "public.mail_outbox",
    ];
    let mut readable = Vec::new();
    for table in private {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        if sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut *conn)
            .await
            .is_ok()
        {
            readable.push(table);
        }
    }
    let writable = sqlx::query("DELETE FROM reporting.settings")
        .execute(&mut *conn)
        .await
        .is_ok();
    for statement in [
        "RESET ROLE".to_owned(),
        format!("DROP OWNED BY {role}"),
        format!("DROP ROLE {role}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut *conn)
            .await
            .expect("clean up the role");
    }
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(prices, ["249.50", "12000"]);
    assert_eq!(hours, "17");
    assert_eq!(users, 4);
    assert!(readable.is_empty(), "{readable:?}");
    assert!(!writable, "the views are read-only for the role");
}
