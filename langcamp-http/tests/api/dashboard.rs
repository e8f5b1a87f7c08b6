//! The admin dashboard over HTTP (CONTRACT §11): the route answers in the envelope,
//! `months` is validated, only admins read it. The figures themselves are core's and are
//! proven on a known data set in `langcamp-core/tests/behaviour/dashboard.rs`.

use langcamp_core::Actor;
use langcamp_core::dashboard::TrendMonths;
use serde_json::json;

use crate::helpers::{TestApp, utc};

#[tokio::test]
async fn the_calling_admin_is_counted_in_the_figures_of_a_new_school() {
    let app = TestApp::builder()
        .manual_clock(utc(2026, 11, 22, 12, 0, 0))
        .spawn()
        .await;
    let admin = app.admin().await;

    let data = admin.get("/admin/dashboard").await;
    assert_eq!(data["generatedAt"], "2026-11-22T12:00:00.000Z");
    assert_eq!(data["months"], 6);
    // The admin is the only user: created now, registration complete.
    assert_eq!(
        data["overview"]["users"],
        json!({
            "total": 1, "admins": 1, "registrationCompleted": 1, "completionRate": 100.0,
            "newLast30Days": 1, "monthlyGrowthRate": 0.0,
        })
    );
    assert_eq!(data["overview"]["tests"]["averageScore"], 0.0);
    assert_eq!(data["overview"]["contacts"]["replyRate"], 0.0);
    assert_eq!(
        data["trends"][5],
        json!({
            "month": "2026-11", "label": "Nov 2026", "users": 1, "testSubmissions": 0,
            "contacts": 0, "materialAssignments": 0,
        })
    );
    assert_eq!(
        admin.get("/admin/dashboard?months=24").await["trends"]
            .as_array()
            .map(Vec::len),
        Some(24)
    );
}

#[tokio::test]
async fn months_outside_one_to_twenty_four_or_not_a_number_are_refused() {
    let (_app, admin) = TestApp::with_admin().await;
    for bad in ["0", "25", "abc", "", "-1", "2.5"] {
        let errors = admin
            .get(&format!("/admin/dashboard?months={bad}"))
            .invalid()
            .await;
        assert_eq!(
            errors,
            ["months must be a whole number from 1 to 24"],
            "months={bad}"
        );
    }
    for good in ["1", "24"] {
        admin.get(&format!("/admin/dashboard?months={good}")).await;
    }
}

#[tokio::test]
async fn only_admins_and_superadmins_read_the_dashboard() {
    let app = TestApp::spawn().await;
    app.get("/admin/dashboard").fails(401, "UNAUTHORIZED").await;
    app.get("/admin/dashboard")
        .bearer("not-a-token")
        .expect(401)
        .await;

    let student = app.student("student@example.com").await;
    student
        .get("/admin/dashboard")
        .fails(403, "FORBIDDEN")
        .await;

    let root = app.superadmin().await;
    let data = root.get("/admin/dashboard").await;
    assert_eq!(data["overview"]["users"]["admins"], 1);
    assert_eq!(data["overview"]["users"]["total"], 2);

    // A user who is not an admin is refused by the core operation too, before any query.
    let refused = app
        .core
        .dashboard(&Actor::Anonymous, TrendMonths::default())
        .await;
    assert!(matches!(refused, Err(langcamp_core::Error::Unauthorized)));
}
