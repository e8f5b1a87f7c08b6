//! User administration (CONTRACT §4).

use langcamp_core::Role;
use langcamp_core::users::NewUser;
use serde_json::json;

use crate::helpers::{TestApp, assert_nulls_refused};

#[tokio::test]
async fn admins_list_users_newest_first_with_filters_and_pages() {
    let (app, admin) = TestApp::with_admin().await;
    for i in 0..12 {
        app.core
            .create_user(
                &langcamp_core::Actor::Operator,
                NewUser::new(&format!("student{i:02}@example.com"), Role::User, None)
                    .expect("a valid user"),
            )
            .await
            .expect("create");
    }
    app.core
        .create_user(
            &langcamp_core::Actor::Operator,
            NewUser::new("Maria.Named@example.com", Role::User, Some("Maria Named"))
                .expect("a valid user"),
        )
        .await
        .expect("create");

    let first = admin.get("/users").await;
    assert_eq!(first["pagination"]["totalItems"], 14);
    assert_eq!(first["pagination"]["totalPages"], 2);
    assert_eq!(first["pagination"]["itemsPerPage"], 10);
    assert_eq!(first["pagination"]["hasNextPage"], true);
    assert_eq!(first["pagination"]["hasPrevPage"], false);
    assert_eq!(
        first["list"][0]["email"], "maria.named@example.com",
        "newest first"
    );

    let second = admin.get("/users?page=2&limit=10").await;
    assert_eq!(second["list"].as_array().map(Vec::len), Some(4));
    let past = admin.get("/users?page=9").await;
    assert_eq!(past["list"], json!([]));
    assert_eq!(past["pagination"]["totalItems"], 14);

    let by_name = admin.get("/users?q=MARIA").await;
    assert_eq!(by_name["pagination"]["totalItems"], 1);
    let by_email = admin.get("/users?q=student0").await;
    assert_eq!(by_email["pagination"]["totalItems"], 10);
    let wildcard = admin.get("/users?q=%25").await;
    assert_eq!(
        wildcard["pagination"]["totalItems"], 0,
        "% is a literal, not a wildcard"
    );
    let complete = admin.get("/users?isRegistrationComplete=true").await;
    assert_eq!(complete["pagination"]["totalItems"], 2);
    let admins = admin.get("/users?role=admin").await;
    assert_eq!(admins["pagination"]["totalItems"], 1);

    admin
        .assert_invalid_queries(&[
            "/users?page=0",
            "/users?limit=101",
            "/users?limit=x",
            "/users?isRegistrationComplete=maybe",
            "/users?role=king",
        ])
        .await;
}

#[tokio::test]
async fn unknown_or_malformed_user_ids_are_404() {
    let (_app, admin) = TestApp::with_admin().await;
    for id in [
        "0190a0c4-0000-7000-8000-000000000000",
        "not-an-id",
        "%27%20OR%201=1",
    ] {
        admin.get(&format!("/users/{id}")).expect(404).await;
    }
    let me = admin.get(&format!("/users/{}", admin.user_id)).await;
    assert_eq!(me["role"], "admin");
}

#[tokio::test]
async fn superadmins_change_roles_but_never_demote_the_last_superadmin() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let student = app.student("promote@example.com").await;
    let promoted = root.set_role(&student.user_id, "admin").await;
    assert_eq!(promoted["role"], "admin");
    // Staff are held to a second factor (CONTRACT §20): the new admin adds one first.
    student
        .get("/users")
        .fails(403, "SECOND_FACTOR_REQUIRED")
        .await;
    let student = app.with_totp(student).await;
    student.get("/users").expect(200).await;

    root.set_role(&student.user_id, "emperor").expect(400).await;
    root.set_role(&root.user_id, "admin")
        .fails(409, "CONFLICT")
        .await;
    root.delete(&format!("/users/{}", root.user_id))
        .expect(409)
        .await;
}

#[tokio::test]
async fn only_a_superadmin_manages_admins() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let admin = app.admin().await;
    let other_admin = app.user_with_role("admin2@example.com", Role::Admin).await;
    // An admin changes neither a superadmin's address nor another admin's profile.
    for (path, body) in [
        (
            format!("/users/{}/email", root.user_id),
            json!({ "email": "mine@example.com" }),
        ),
        (
            format!("/admin/users/{}/profile", other_admin.user_id),
            json!({ "name": "Hijacked" }),
        ),
    ] {
        admin.patch(&path, &body).expect(403).await;
    }
    admin
        .delete(&format!("/users/{}", other_admin.user_id))
        .expect(403)
        .await;
    root.delete(&format!("/users/{}", other_admin.user_id))
        .await;
}

#[tokio::test]
async fn the_admin_profile_edit_refuses_null_for_required_fields() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("adminnulls@example.com").await;
    let path = format!("/admin/users/{}/profile", student.user_id);
    let before = admin.get(&format!("/users/{}", student.user_id)).await;
    let required = ["name", "age", "phone", "gender", "country", "email"];
    assert_nulls_refused(&admin, &path, &required, json!({})).await;
    let cleared = admin.patch(&path, &json!({ "city": null })).await;
    assert_eq!(cleared["user"]["city"], json!(null), "city is optional");
    let after = admin.get(&format!("/users/{}", student.user_id)).await;
    for field in ["name", "age", "phoneNumber", "gender", "country", "email"] {
        assert_eq!(after[field], before[field], "{field} is unchanged");
    }
}

#[tokio::test]
async fn admins_edit_profiles_and_emails_with_conflicts_refused() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("edit@example.com").await;
    app.student("taken@example.com").await;

    let edited = admin
        .patch(
            &format!("/admin/users/{}/profile", student.user_id),
            &json!({ "name": "Edited Name", "phone": "5550001", "age": 40, "city": "Berlin" }),
        )
        .await;
    assert_eq!(edited["user"]["name"], "Edited Name");
    assert_eq!(edited["user"]["phoneNumber"], "5550001");

    admin
        .patch(
            &format!("/users/{}/email", student.user_id),
            &json!({ "email": "TAKEN@example.com" }),
        )
        .fails(409, "CONFLICT")
        .await;
    let (profile, email) = (
        format!("/admin/users/{}/profile", student.user_id),
        format!("/users/{}/email", student.user_id),
    );
    for (path, body, status) in [
        (&profile, json!({ "email": "taken@example.com" }), 409),
        (&email, json!({ "email": "not an email" }), 400),
    ] {
        admin.patch(path, &body).expect(status).await;
    }
    let moved = admin
        .patch(
            &format!("/users/{}/email", student.user_id),
            &json!({ "email": "Moved@Example.com" }),
        )
        .await;
    assert_eq!(moved["email"], "moved@example.com");
    // The old address no longer signs this user in; the new one does.
    let session = app.sign_in("moved@example.com").await;
    assert_eq!(session.user_id, student.user_id);
}

#[tokio::test]
async fn deleting_a_user_removes_their_sessions() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("leaving@example.com").await;
    let deleted = admin.delete(&format!("/users/{}", student.user_id)).await;
    assert_eq!(deleted, json!({ "id": student.user_id, "deleted": true }));
    let sessions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE user_id = $1")
        .bind(&student.user_id)
        .fetch_one(app.core.db().reader())
        .await
        .expect("count");
    assert_eq!(sessions, 0);
    admin
        .get(&format!("/users/{}", student.user_id))
        .expect(404)
        .await;
}
