//! The admin dashboard (CONTRACT §11): every figure of a known data set, computed by hand,
//! on a fixed clock; zero denominators; month boundaries. The figures as JSON are the
//! `data` of `GET /admin/dashboard` (the HTTP tests prove the route, `months` and roles).
//!
//! The data set is written with plain SQL through the core's database handle, so these
//! tests depend on the tables only, not on the other resources' operations.

use chrono::{DateTime, Utc};
use langcamp_core::dashboard::TrendMonths;
use langcamp_core::{Actor, Role};
use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::harness::TestCore;

/// The app clock of these tests.
pub(crate) const NOW: &str = "2026-11-22T12:00:00.000Z";

pub(crate) fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("a valid time")
        .with_timezone(&Utc)
}

fn ms(text: &str) -> i64 {
    at(text).timestamp_millis()
}

async fn user(
    conn: &mut AnyConnection,
    id: &str,
    name: Option<&str>,
    role: &str,
    complete: bool,
    created: &str,
) {
    sqlx::query(
        "INSERT INTO users (id, email, name, role, is_registration_complete, locale, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'en', $6, $6)",
    )
    .bind(id)
    .bind(format!("{id}@example.com"))
    .bind(name)
    .bind(role)
    .bind(i64::from(complete))
    .bind(ms(created))
    .execute(conn)
    .await
    .expect("insert a user");
}

#[allow(clippy::too_many_arguments)]
async fn result(
    conn: &mut AnyConnection,
    id: &str,
    user_id: &str,
    title: &str,
    language: Option<&str>,
    level: &str,
    score: i64,
    completed: &str,
) {
    sqlx::query(
        "INSERT INTO test_results (id, test_id, user_id, test_title, target_language, total_score,
                                   max_score, level, message, answers, completed_at)
         VALUES ($1, NULL, $2, $3, $4, $5, 20, $6, '', '[]', $7)",
    )
    .bind(id)
    .bind(user_id)
    .bind(title)
    .bind(language)
    .bind(score)
    .bind(level)
    .bind(ms(completed))
    .execute(conn)
    .await
    .expect("insert a result");
}

#[allow(clippy::too_many_arguments)]
async fn contact(
    conn: &mut AnyConnection,
    id: &str,
    first: &str,
    last: &str,
    status: &str,
    source: Option<&str>,
    created: &str,
    replied: Option<&str>,
) {
    sqlx::query(
        "INSERT INTO contacts (id, first_name, last_name, email, message, status, source,
                               replied_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'Hello', $5, $6, $7, $8, $8)",
    )
    .bind(id)
    .bind(first)
    .bind(last)
    .bind(format!("{}@example.org", first.to_lowercase()))
    .bind(status)
    .bind(source)
    .bind(replied.map(ms))
    .bind(ms(created))
    .execute(conn)
    .await
    .expect("insert a contact");
}

async fn assignment(conn: &mut AnyConnection, material: &str, user_id: &str, assigned: &str) {
    sqlx::query(
        "INSERT INTO material_assignments (material_id, user_id, assigned_at, assigned_by)
         VALUES ($1, $2, $3, NULL)",
    )
    .bind(material)
    .bind(user_id)
    .bind(ms(assigned))
    .execute(conn)
    .await
    .expect("insert an assignment");
}

/// Courses, tests and materials: only their number matters here.
async fn things(conn: &mut AnyConnection, table: &str, ids: &[&str]) {
    for id in ids {
        let sql = match table {
            "courses" => {
                "INSERT INTO courses (id, title, created_at, updated_at) VALUES ($1, 'Course', $2, $2)"
            }
            "proficiency_tests" => {
                "INSERT INTO proficiency_tests (id, title, created_at, updated_at) VALUES ($1, 'Test', $2, $2)"
            }
            _ => {
                "INSERT INTO education_materials (id, title, created_at, updated_at) VALUES ($1, 'Material', $2, $2)"
            }
        };
        sqlx::query(sql)
            .bind(*id)
            .bind(ms("2026-01-10T00:00:00Z"))
            .execute(&mut *conn)
            .await
            .expect("insert a row");
    }
}

/// The data set of the main test (the admin who calls is one more user, created at NOW).
/// The 30-day windows are [2026-10-23T12:00Z, ...) and [2026-09-23T12:00Z, 2026-10-23T12:00Z).
/// The dashboard that `caller` reads for the last `months` months, as its JSON.
async fn figures(t: &TestCore, caller: &Actor, months: u32) -> Value {
    let months = TrendMonths::new(months).expect("1 to 24 months");
    let dashboard = t
        .core
        .dashboard(caller, months)
        .await
        .expect("the dashboard");
    serde_json::to_value(dashboard).expect("serializable")
}

/// The admin who reads the dashboard: one more user, created at the clock's time.
async fn admin(t: &TestCore) -> Actor {
    t.user("admin@langcamp.test", Role::Admin).await
}

pub(crate) async fn seed(t: &TestCore) {
    let mut tx = t.core.db().begin().await.expect("begin");
    let c = &mut *tx;
    #[rustfmt::skip]
    let users = [
        // (id, name, role, registration complete, created)
        ("u1", Some("User One"),   "user",       true,  "2026-11-20T08:00:00.000Z"),
        ("u2", None,               "user",       false, "2026-11-01T00:00:00.000Z"),
        ("u3", Some("User Three"), "user",       true,  "2026-10-31T23:59:59.999Z"),
        // Exactly 30 days before NOW: new.
        ("u4", None,               "user",       false, "2026-10-23T12:00:00.000Z"),
        // One millisecond earlier: the 30 days before.
        ("u5", Some("Admin Five"), "admin",      true,  "2026-10-23T11:59:59.999Z"),
        // Exactly 60 days before NOW: still the 30 days before; u7 just outside.
        ("u6", Some("Root Six"),   "superadmin", true,  "2026-09-23T12:00:00.000Z"),
        ("u7", None,               "user",       false, "2026-09-23T11:59:59.999Z"),
        ("u8", Some("User Eight"), "user",       true,  "2026-06-01T00:00:00.000Z"),
        ("u9", Some("User Nine"),  "user",       true,  "2026-05-31T23:59:59.999Z"),
    ];
    for (id, name, role, complete, created) in users {
        user(c, id, name, role, complete, created).await;
    }

    things(c, "courses", &["k1", "k2", "k3"]).await;
    things(c, "proficiency_tests", &["t1", "t2"]).await;
    things(c, "education_materials", &["m1", "m2", "m3"]).await;

    let (de, fr) = ("German Placement", "French Placement");
    #[rustfmt::skip]
    let results = [
        // (id, user, test title, target language, level, score, completed)
        ("r1", "u1", de,           Some("de"),    "B1", 12, "2026-11-22T11:00:00.000Z"),
        ("r2", "u3", de,           Some("de"),    "A2", 7,  "2026-11-01T00:00:00.000Z"),
        ("r3", "u1", fr,           Some("fr"),    "B1", 15, "2026-10-31T23:59:59.999Z"),
        ("r4", "u8", "Portuguese", Some("pt-BR"), "C1", 20, "2026-10-01T00:00:00.000Z"),
        ("r5", "u2", "Mystery",    Some("xq"),    "A1", 2,  "2026-07-15T10:00:00.000Z"),
        ("r6", "u9", "Old",        None,          "B1", 14, "2026-03-03T09:00:00.000Z"),
    ];
    for (id, user_id, title, language, level, score, completed) in results {
        result(c, id, user_id, title, language, level, score, completed).await;
    }

    #[rustfmt::skip]
    let contacts = [
        // (id, first name, last name, status, source, created, replied)
        ("c1", "Ana",   "Silva",  "PENDING",     Some("landing"), "2026-11-21T09:00:00.000Z", None),
        ("c2", "Ben",   "Okafor", "REPLIED",     None,            "2026-11-10T08:30:00.000Z", Some("2026-11-11T10:00:00.000Z")),
        ("c3", "Chloe", "Martin", "IN_PROGRESS", Some("courses"), "2026-10-30T15:00:00.000Z", None),
        ("c4", "Dev",   "Patel",  "CLOSED",      None,            "2026-08-05T12:00:00.000Z", None),
        ("c5", "Eva",   "Novak",  "PENDING",     None,            "2026-06-30T23:59:59.999Z", None),
        ("c6", "Finn",  "Berg",   "REPLIED",     None,            "2025-12-24T10:00:00.000Z", Some("2025-12-25T10:00:00.000Z")),
    ];
    for (id, first, last, status, source, created, replied) in contacts {
        contact(c, id, first, last, status, source, created, replied).await;
    }

    assignment(c, "m1", "u1", "2026-11-15T10:00:00.000Z").await;
    assignment(c, "m1", "u3", "2026-10-25T10:00:00.000Z").await;
    assignment(c, "m2", "u1", "2026-10-01T10:00:00.000Z").await;
    assignment(c, "m3", "u8", "2026-06-01T00:00:00.000Z").await;
    assignment(c, "m2", "u9", "2026-02-01T10:00:00.000Z").await;
    tx.commit().await.expect("commit");
}

fn month(key: &str, label: &str, counts: [i64; 4]) -> Value {
    json!({
        "month": key,
        "label": label,
        "users": counts[0],
        "testSubmissions": counts[1],
        "contacts": counts[2],
        "materialAssignments": counts[3],
    })
}

/// The default six `trends` months at the tests' clock (June to November 2026), each with
/// its counts as [`month`] takes them.
fn june_to_november(counts: [[i64; 4]; 6]) -> Value {
    let months = [
        ("2026-06", "Jun 2026"),
        ("2026-07", "Jul 2026"),
        ("2026-08", "Aug 2026"),
        ("2026-09", "Sep 2026"),
        ("2026-10", "Oct 2026"),
        ("2026-11", "Nov 2026"),
    ];
    let trends = months.iter().zip(counts);
    Value::Array(
        trends
            .map(|((key, label), counts)| month(key, label, counts))
            .collect(),
    )
}

/// A distribution over a fixed list of keys: every key in its order, with its label, and
/// the count and percentage given for it.
fn shares<const N: usize>(keys: [(&str, &str); N], figures: [(i64, f64); N]) -> Value {
    keys.into_iter()
        .zip(figures)
        .map(|((key, label), (count, percentage))| {
            json!({ "key": key, "label": label, "count": count, "percentage": percentage })
        })
        .collect()
}

/// `distributions.roles`: every role, as (count, percentage) of user, admin, superadmin.
fn roles(figures: [(i64, f64); 3]) -> Value {
    shares(
        [
            ("user", "User"),
            ("admin", "Admin"),
            ("superadmin", "Superadmin"),
        ],
        figures,
    )
}

/// `distributions.contactsByStatus`: every status, as (count, percentage) of pending, in
/// progress, replied, closed.
fn contact_statuses(figures: [(i64, f64); 4]) -> Value {
    shares(
        [
            ("PENDING", "Pending"),
            ("IN_PROGRESS", "In progress"),
            ("REPLIED", "Replied"),
            ("CLOSED", "Closed"),
        ],
        figures,
    )
}

#[tokio::test]
async fn the_dashboard_reports_every_figure_of_a_known_data_set() {
    let t = TestCore::at(at(NOW)).await;
    let admin = admin(&t).await;
    seed(&t).await;

    let data = figures(&t, &admin, 6).await;

    assert_eq!(data["generatedAt"], NOW);
    assert_eq!(data["months"], 6);
    assert_eq!(
        data["overview"],
        json!({
            "users": {
                "total": 10,
                "admins": 3,
                "registrationCompleted": 7,
                "completionRate": 70.0,
                "newLast30Days": 5,
                "monthlyGrowthRate": 150.0,
            },
            "courses": { "total": 3 },
            "tests": {
                "totalTests": 2,
                "totalSubmissions": 6,
                "averageScore": 11.67,
                "submissionsLast30Days": 3,
                "monthlyGrowthRate": 200.0,
            },
            "contacts": {
                "total": 6,
                "pending": 2,
                "replied": 2,
                "replyRate": 33.33,
                "newLast30Days": 3,
            },
            "materials": {
                "total": 3,
                "assignments": 5,
                "assignedUsers": 4,
                "avgAssignmentsPerUser": 1.25,
                "assignmentsLast30Days": 2,
            },
        })
    );
    assert_eq!(
        data["trends"],
        june_to_november([
            [1, 0, 1, 1],
            [0, 1, 0, 0],
            [0, 0, 1, 0],
            [2, 0, 0, 0],
            [3, 2, 1, 2],
            [3, 2, 2, 1],
        ])
    );
    assert_eq!(
        data["distributions"]["roles"],
        roles([(7, 70.0), (2, 20.0), (1, 10.0)])
    );
    assert_eq!(
        data["distributions"]["contactsByStatus"],
        contact_statuses([(2, 33.33), (1, 16.67), (2, 33.33), (1, 16.67)])
    );
    assert_eq!(
        data["distributions"]["levels"],
        json!([
            { "key": "A1", "label": "A1", "count": 1, "percentage": 16.67, "averageScore": 2.0 },
            { "key": "A2", "label": "A2", "count": 1, "percentage": 16.67, "averageScore": 7.0 },
            { "key": "B1", "label": "B1", "count": 3, "percentage": 50.0, "averageScore": 13.67 },
            { "key": "C1", "label": "C1", "count": 1, "percentage": 16.67, "averageScore": 20.0 },
        ])
    );
    assert_eq!(
        data["distributions"]["languages"],
        json!([
            { "key": "de", "label": "German", "submissions": 2, "averageScore": 9.5 },
            { "key": "fr", "label": "French", "submissions": 1, "averageScore": 15.0 },
            { "key": "pt-BR", "label": "Portuguese (BR)", "submissions": 1, "averageScore": 20.0 },
            { "key": "und", "label": "Undetermined", "submissions": 1, "averageScore": 14.0 },
            { "key": "xq", "label": "xq", "submissions": 1, "averageScore": 2.0 },
        ])
    );
    assert_eq!(
        data["recentActivity"]["contacts"],
        json!([
            {
                "id": "c1", "fullName": "Ana Silva", "email": "ana@example.org",
                "status": "PENDING", "createdAt": "2026-11-21T09:00:00.000Z",
                "repliedAt": null, "source": "landing",
            },
            {
                "id": "c2", "fullName": "Ben Okafor", "email": "ben@example.org",
                "status": "REPLIED", "createdAt": "2026-11-10T08:30:00.000Z",
                "repliedAt": "2026-11-11T10:00:00.000Z", "source": null,
            },
            {
                "id": "c3", "fullName": "Chloe Martin", "email": "chloe@example.org",
                "status": "IN_PROGRESS", "createdAt": "2026-10-30T15:00:00.000Z",
                "repliedAt": null, "source": "courses",
            },
            {
                "id": "c4", "fullName": "Dev Patel", "email": "dev@example.org",
                "status": "CLOSED", "createdAt": "2026-08-05T12:00:00.000Z",
                "repliedAt": null, "source": null,
            },
            {
                "id": "c5", "fullName": "Eva Novak", "email": "eva@example.org",
                "status": "PENDING", "createdAt": "2026-06-30T23:59:59.999Z",
                "repliedAt": null, "source": null,
            },
        ])
    );
    assert_eq!(
        data["recentActivity"]["testResults"],
        json!([
            {
                "id": "r1", "userName": "User One", "userEmail": "u1@example.com",
                "level": "B1", "totalScore": 12, "targetLanguage": "de",
                "testTitle": "German Placement", "completedAt": "2026-11-22T11:00:00.000Z",
            },
            {
                "id": "r2", "userName": "User Three", "userEmail": "u3@example.com",
                "level": "A2", "totalScore": 7, "targetLanguage": "de",
                "testTitle": "German Placement", "completedAt": "2026-11-01T00:00:00.000Z",
            },
            {
                "id": "r3", "userName": "User One", "userEmail": "u1@example.com",
                "level": "B1", "totalScore": 15, "targetLanguage": "fr",
                "testTitle": "French Placement", "completedAt": "2026-10-31T23:59:59.999Z",
            },
            {
                "id": "r4", "userName": "User Eight", "userEmail": "u8@example.com",
                "level": "C1", "totalScore": 20, "targetLanguage": "pt-BR",
                "testTitle": "Portuguese", "completedAt": "2026-10-01T00:00:00.000Z",
            },
            {
                "id": "r5", "userName": null, "userEmail": "u2@example.com",
                "level": "A1", "totalScore": 2, "targetLanguage": "xq",
                "testTitle": "Mystery", "completedAt": "2026-07-15T10:00:00.000Z",
            },
        ])
    );
}

#[tokio::test]
async fn trends_cover_the_requested_months_across_the_new_year() {
    let t = TestCore::at(at(NOW)).await;
    let admin = admin(&t).await;
    seed(&t).await;

    let year = figures(&t, &admin, 12).await;
    assert_eq!(year["months"], 12);
    let trends = year["trends"].as_array().expect("trends");
    assert_eq!(trends.len(), 12);
    // December 2025 holds the old replied contact (c6); then the assignment of February,
    // the result of March (r6) and the user of May (u9).
    assert_eq!(trends[0], month("2025-12", "Dec 2025", [0, 0, 1, 0]));
    assert_eq!(trends[1], month("2026-01", "Jan 2026", [0, 0, 0, 0]));
    assert_eq!(trends[2], month("2026-02", "Feb 2026", [0, 0, 0, 1]));
    assert_eq!(trends[3], month("2026-03", "Mar 2026", [0, 1, 0, 0]));
    assert_eq!(trends[4], month("2026-04", "Apr 2026", [0, 0, 0, 0]));
    assert_eq!(trends[5], month("2026-05", "May 2026", [1, 0, 0, 0]));
    assert_eq!(trends[11], month("2026-11", "Nov 2026", [3, 2, 2, 1]));
    let totals =
        |field: &str| -> i64 { trends.iter().map(|m| m[field].as_i64().unwrap_or(0)).sum() };
    assert_eq!(
        totals("users"),
        10,
        "every user was created within the year"
    );
    assert_eq!(totals("testSubmissions"), 6);
    assert_eq!(totals("contacts"), 6);
    assert_eq!(totals("materialAssignments"), 5);

    let one = figures(&t, &admin, 1).await;
    assert_eq!(one["months"], 1);
    assert_eq!(
        one["trends"],
        json!([month("2026-11", "Nov 2026", [3, 2, 2, 1])])
    );

    let most = figures(&t, &admin, 24).await;
    let trends = most["trends"].as_array().expect("trends");
    assert_eq!(trends.len(), 24);
    assert_eq!(trends[0]["month"], "2024-12");
    assert_eq!(trends[0]["label"], "Dec 2024");
    assert_eq!(trends[23]["month"], "2026-11");
}

#[tokio::test]
async fn the_current_month_begins_at_utc_midnight_of_the_first() {
    let t = TestCore::at(at("2026-11-30T23:59:59.999Z")).await;
    let admin = admin(&t).await;
    let mut tx = t.core.db().begin().await.expect("begin");
    let c = &mut *tx;
    user(c, "late", None, "user", false, "2026-11-30T23:59:59.999Z").await;
    contact(
        c,
        "dec",
        "Dora",
        "Dec",
        "PENDING",
        None,
        "2026-12-01T00:00:00.000Z",
        None,
    )
    .await;
    tx.commit().await.expect("commit");

    // Still November: the admin and "late" count; December's contact is not in any month yet.
    let november = figures(&t, &admin, 2).await;
    assert_eq!(
        november["trends"],
        json!([
            month("2026-10", "Oct 2026", [0, 0, 0, 0]),
            month("2026-11", "Nov 2026", [2, 0, 0, 0]),
        ])
    );
    assert_eq!(november["overview"]["contacts"]["total"], 1);

    t.clock.set(at("2026-12-01T00:00:00.000Z"));
    let december = figures(&t, &admin, 2).await;
    assert_eq!(december["generatedAt"], "2026-12-01T00:00:00.000Z");
    assert_eq!(
        december["trends"],
        json!([
            month("2026-11", "Nov 2026", [2, 0, 0, 0]),
            month("2026-12", "Dec 2026", [0, 0, 1, 0]),
        ])
    );
}

#[tokio::test]
async fn an_empty_database_reports_zeros_without_dividing_by_zero() {
    let t = TestCore::at(at(NOW)).await;

    let data = figures(&t, &Actor::Operator, 6).await;
    assert_eq!(
        data["overview"],
        json!({
            "users": {
                "total": 0, "admins": 0, "registrationCompleted": 0, "completionRate": 0.0,
                "newLast30Days": 0, "monthlyGrowthRate": 0.0,
            },
            "courses": { "total": 0 },
            "tests": {
                "totalTests": 0, "totalSubmissions": 0, "averageScore": 0.0,
                "submissionsLast30Days": 0, "monthlyGrowthRate": 0.0,
            },
            "contacts": { "total": 0, "pending": 0, "replied": 0, "replyRate": 0.0, "newLast30Days": 0 },
            "materials": {
                "total": 0, "assignments": 0, "assignedUsers": 0, "avgAssignmentsPerUser": 0.0,
                "assignmentsLast30Days": 0,
            },
        })
    );
    assert_eq!(data["trends"], june_to_november([[0; 4]; 6]));
    assert_eq!(
        data["distributions"],
        json!({
            "roles": roles([(0, 0.0); 3]),
            "contactsByStatus": contact_statuses([(0, 0.0); 4]),
            "levels": [],
            "languages": [],
        })
    );
    assert_eq!(
        data["recentActivity"],
        json!({ "contacts": [], "testResults": [] })
    );
}
