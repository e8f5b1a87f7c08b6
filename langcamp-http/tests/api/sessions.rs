//! Live sign-ins served from memory (`langcamp-core/src/sessions.rs`) still obey every
//! contract rule at once: each test first makes the server hold the sign-in (a `GET /me`),
//! then changes it through another path and expects the very next request to see it.

use chrono::TimeDelta;
use langcamp_core::domain::Id;
use langcamp_core::{Actor, Config, Langcamp, Role};
use langcamp_testkit::database;
use serde_json::json;

use crate::helpers::{Session, TestApp, registration, utc};

/// Makes the server hold `session`'s sign-in (and checks it answers).
async fn warm(session: &Session) -> serde_json::Value {
    session.get("/me").expect(200).await;
    session.get("/me").await
}

/// A second handle on the same database, as the `langcamp` command or another instance
/// would open it: its own memory, the server's files and database.
async fn second_process(app: &TestApp) -> Langcamp {
    let url = app.core.config().database_url.expose();
    let config = Config::from_lookup(database::process_vars(url, &app.data_dir))
        .expect("configuration of the second process");
    Langcamp::connect(config, langcamp_core::Clock::System)
        .await
        .expect("second process connects")
}

#[tokio::test]
async fn a_held_sign_in_ends_at_once_on_logout() {
    let app = TestApp::spawn().await;
    let student = app.student("held@example.com").await;
    let other = app.sign_in("held@example.com").await;
    warm(&student).await;
    warm(&other).await;
    student.post_empty("/auth/logout").expect(200).await;
    student.get("/me").fails(401, "TOKEN_INVALID").await;
    // The user's other sign-in is not ended, only reloaded.
    other.get("/me").expect(200).await;
}

#[tokio::test]
async fn a_held_sign_in_ended_by_its_refresh_token_at_logout_is_refused_at_once() {
    let app = TestApp::spawn().await;
    let phone = app.student("two@example.com").await;
    let laptop = app.sign_in("two@example.com").await;
    warm(&laptop).await;
    // Logging out on the phone with the laptop's refresh token ends the laptop's sign-in.
    phone
        .post("/auth/logout", &json!({ "refreshToken": laptop.refresh }))
        .await;
    laptop.get("/me").expect(401).await;
}

#[tokio::test]
async fn a_held_sign_in_revoked_by_refresh_reuse_is_refused_at_once() {
    let start = utc(2026, 11, 22, 10, 0, 0);
    let app = TestApp::at(start).await;
    let session = app.sign_in("reuse@example.com").await;
    warm(&session).await;
    app.refresh(&session.refresh).await;
    app.clock.advance(TimeDelta::seconds(11));
    warm(&session).await;
    app.refresh(&session.refresh).expect(401).await;
    session.get("/me").expect(401).await;
}

#[tokio::test]
async fn role_changes_reach_a_held_sign_in_in_both_directions() {
    let app = TestApp::spawn().await;
    let root = app.superadmin().await;
    let student = app.student("climber@example.com").await;
    assert_eq!(warm(&student).await["role"], "user");
    student.get("/users").fails(403, "FORBIDDEN").await;
    root.set_role(&student.user_id, "admin").await;
    // At once an admin, so at once held to the second factor staff need (CONTRACT §20).
    student
        .get("/users")
        .fails(403, "SECOND_FACTOR_REQUIRED")
        .await;
    assert_eq!(warm(&student).await["role"], "admin");
    let staff = app.with_totp(student).await;
    staff.get("/users").expect(200).await;
    root.set_role(&staff.user_id, "user").await;
    staff.get("/users").fails(403, "FORBIDDEN").await;
    assert_eq!(warm(&staff).await["role"], "user");
}

#[tokio::test]
async fn profile_registration_and_email_changes_show_in_the_next_me() {
    let (app, admin) = TestApp::with_admin().await;
    let fresh = app.sign_in("fresh@example.com").await;
    assert_eq!(warm(&fresh).await["isRegistrationComplete"], false);

    fresh
        .post(
            "/auth/complete-registration",
            &registration("Ana", json!(30)),
        )
        .await;
    let me = warm(&fresh).await;
    assert_eq!(me["isRegistrationComplete"], true);
    assert_eq!(me["name"], "Ana");

    fresh
        .patch("/me/profile", &json!({ "city": "Porto" }))
        .await;
    assert_eq!(warm(&fresh).await["city"], "Porto");

    let profile = format!("/admin/users/{}/profile", fresh.user_id);
    let name = json!({ "name": "Ana Silva" });
    admin.patch(&profile, &name).expect(200).await;
    assert_eq!(warm(&fresh).await["name"], "Ana Silva");

    let email = format!("/users/{}/email", fresh.user_id);
    let address = json!({ "email": "ana@example.com" });
    admin.patch(&email, &address).expect(200).await;
    let me = fresh.get("/auth/optional").await;
    assert_eq!(me["user"]["email"], "ana@example.com");
}

#[tokio::test]
async fn a_held_sign_in_of_a_deleted_user_is_refused_at_once() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("leaving@example.com").await;
    warm(&student).await;
    admin.delete(&format!("/users/{}", student.user_id)).await;
    student.get("/me").fails(401, "TOKEN_INVALID").await;
}

/// The operator's `langcamp users set-role` and `users delete` run in a process of their
/// own. On SQLite it tells the server through the signal file beside the database, before
/// the command returns, so the next request sees it; on PostgreSQL through NOTIFY, which
/// reaches the server a few milliseconds after the commit.
#[tokio::test]
async fn changes_made_by_another_process_reach_a_held_sign_in_at_once() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("operator-target@example.com").await;
    warm(&admin).await;
    warm(&student).await;
    let operator = second_process(&app).await;

    let user = langcamp_core::Role::User;
    operator
        .set_role(&Actor::Operator, &admin.user_id.as_str().into(), user)
        .await
        .expect("demote from the other process");
    let sqlite = app.core.db().backend() == langcamp_core::platform::db::Backend::Sqlite;
    let limit = std::time::Duration::from_secs(1);
    let status = async |path: &str, token: &str| app.get(path).bearer(token).send().await.status;
    if sqlite {
        assert_eq!(status("/users", &admin.access).await, 403, "at once");
    }
    assert_within(limit, "demoted", async || {
        status("/users", &admin.access).await == 403
    })
    .await;
    assert_eq!(warm(&admin).await["role"], Role::User.as_str());

    operator
        .delete_user(&Actor::Operator, &Id::from(&student.user_id))
        .await
        .expect("delete from the other process");
    if sqlite {
        assert_eq!(status("/me", &student.access).await, 401, "at once");
    }
    assert_within(limit, "refused", async || {
        status("/me", &student.access).await == 401
    })
    .await;
}

#[tokio::test]
async fn the_server_holds_a_sign_in_after_the_first_check_on_sqlite() {
    let app = TestApp::spawn().await;
    let student = app.student("counted@example.com").await;
    warm(&student).await;
    let sessions = app.core.sessions();
    if app.core.db().backend() == langcamp_core::platform::db::Backend::Sqlite {
        assert!(sessions.is_enabled());
        assert_eq!(
            sessions.len(),
            1,
            "one sign-in held, not reloaded per request"
        );
    }
    student.post_empty("/auth/logout").expect(200).await;
    assert!(sessions.is_empty(), "logout forgot it");
}

/// Waits until `check` holds; fails the test unless it does within `limit` (`what` says
/// what was awaited); how long it took.
async fn assert_within(
    limit: std::time::Duration,
    what: &str,
    mut check: impl AsyncFnMut() -> bool,
) -> std::time::Duration {
    let started = std::time::Instant::now();
    while started.elapsed() < limit {
        if check().await {
            return started.elapsed();
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    panic!("{what}: not within {limit:?}");
}

/// Two instances on one PostgreSQL database hear each other's writes (LISTEN/NOTIFY,
/// `langcamp-core/src/changes.rs`) in milliseconds, far inside the public cache's 5 s
/// time to live. On SQLite one process owns the file, so there is no second instance.
#[tokio::test]
async fn two_instances_on_one_postgres_database_honour_each_others_writes_at_once() {
    let a = TestApp::spawn().await;
    if a.core.db().backend() != langcamp_core::platform::db::Backend::Postgres {
        return;
    }
    let url = a.core.config().database_url.expose().to_owned();
    let b = TestApp::with_var("DATABASE_URL", &url).await;
    let limit = std::time::Duration::from_secs(1);
    assert_within(
        std::time::Duration::from_secs(10),
        "both instances listen",
        async || a.core.sessions().is_enabled() && b.core.sessions().is_enabled(),
    )
    .await;

    let admin = a.admin().await;
    let student = a.student("roaming@example.com").await;
    // The same sign-ins calling B.
    let (student_on_b, admin_on_b) = (b.bind(&student), b.bind(&admin));
    warm(&student_on_b).await;
    warm(&admin_on_b).await;
    assert_eq!(b.core.sessions().len(), 2, "B holds both sign-ins");

    // Logout on A: the token is refused on B.
    student.post_empty("/auth/logout").expect(200).await;
    let refused = assert_within(limit, "B refused the token", async || {
        student_on_b.get("/me").send().await.status == 401
    })
    .await;

    // A role change on A: B's held sign-in loses admin rights.
    let root = a.superadmin().await;
    admin_on_b.get("/users").expect(200).await;
    root.set_role(&admin.user_id, "user").await;
    let demoted = assert_within(limit, "B saw the demotion", async || {
        admin_on_b.get("/users").send().await.status == 403
    })
    .await;

    // A course edited on A: B's public list shows it.
    let course = root
        .post(
            "/courses",
            &json!({ "title": "Old title", "isPublished": true }),
        )
        .created()
        .await;
    assert_within(limit, "B lists the new course", async || {
        b.get("/courses").send().await.json()["data"][0]["title"] == "Old title"
    })
    .await;
    root.patch(
        &format!("/courses/{}", course["id"].as_str().expect("id")),
        &json!({ "title": "New title" }),
    )
    .await;
    let renamed = assert_within(limit, "B lists the new title", async || {
        b.get("/courses").send().await.json()["data"][0]["title"] == "New title"
    })
    .await;
    println!("B caught up: logout {refused:?}, role {demoted:?}, course {renamed:?}");
}
