//! The dashboard's rollup tables (migration 0060) against a recount of the rows they
//! count: after every kind of change, cascades included; under concurrent writers; and
//! the check and rebuild that find and repair drift.

use std::collections::BTreeSet;

use futures_util::future::join_all;
use langcamp_core::dashboard::{Dashboard, Drift, TrendMonths};
use langcamp_core::domain::Id;
use langcamp_core::materials::Assignment;
use langcamp_core::platform::progress::Silent;
use langcamp_core::users::NewUser;
use langcamp_core::{Actor, Role};

use crate::dashboard::{NOW, at, seed};
use crate::harness::TestCore;

/// A new education material (only its id matters here).
async fn material(app: &TestCore) -> String {
    let id = langcamp_core::domain::id::new_id();
    let mut tx = app.core.db().begin().await.expect("begin");
    sqlx::query(
        "INSERT INTO education_materials (id, title, created_at, updated_at)
         VALUES ($1, 'Material', 0, 0)",
    )
    .bind(&id)
    .execute(&mut *tx)
    .await
    .expect("insert a material");
    tx.commit().await.expect("commit");
    id
}

/// A new user who has not completed their registration; their id.
async fn student(app: &TestCore, email: &str) -> String {
    app.core
        .create_user(
            &Actor::Operator,
            NewUser::new(email, Role::User, None).expect("a valid user"),
        )
        .await
        .expect("create a user")
        .id
}

/// The dashboard as the operator sees it.
async fn figures(app: &TestCore, months: TrendMonths) -> Dashboard {
    app.core
        .dashboard(&Actor::Operator, months)
        .await
        .expect("dashboard")
}

async fn rebuild(app: &TestCore) -> Vec<Drift> {
    app.core
        .rebuild_dashboard_rollups(&Actor::Operator, &Silent)
        .await
        .expect("rebuild")
}

async fn check(app: &TestCore) -> Vec<Drift> {
    app.core
        .check_dashboard_rollups(&Actor::Operator)
        .await
        .expect("check the rollups")
}

#[tokio::test]
async fn rollups_follow_inserts_updates_deletes_and_cascades() {
    let app = TestCore::at(at(NOW)).await;
    seed(&app).await;
    assert_eq!(check(&app).await, vec![]);

    // Every column a rollup counts, changed in place.
    app.sql("UPDATE users SET role = 'admin' WHERE id = 'u1'")
        .await;
    app.sql("UPDATE users SET is_registration_complete = 1 WHERE id = 'u2'")
        .await;
    app.sql("UPDATE users SET created_at = created_at - 86400000 WHERE id = 'u3'")
        .await;
    app.sql("UPDATE contacts SET status = 'CLOSED' WHERE status = 'PENDING'")
        .await;
    app.sql("UPDATE contacts SET created_at = 0 WHERE id = 'c1'")
        .await;
    app.sql("UPDATE test_results SET level = 'C2', total_score = 19 WHERE id = 'r1'")
        .await;
    app.sql("UPDATE test_results SET target_language = NULL WHERE id = 'r2'")
        .await;
    app.sql("UPDATE material_assignments SET assigned_at = assigned_at + 3600000")
        .await;
    // A user's assignment moves to another user, and one changes material only.
    app.sql("UPDATE material_assignments SET user_id = 'u8' WHERE user_id = 'u1' AND material_id = 'm1'").await;
    app.sql("UPDATE material_assignments SET material_id = 'm3' WHERE user_id = 'u1' AND material_id = 'm2'").await;
    assert_eq!(check(&app).await, vec![]);

    // Deleting a user removes their results and assignments by cascade; deleting a
    // material removes its assignments.
    app.sql("DELETE FROM users WHERE id = 'u3'").await;
    app.sql("DELETE FROM education_materials WHERE id = 'm1'")
        .await;
    app.sql("DELETE FROM contacts WHERE id = 'c2'").await;
    assert_eq!(check(&app).await, vec![]);

    // Everything gone: the figures are zeros, with no stale group left in them.
    app.sql("DELETE FROM users").await;
    app.sql("DELETE FROM contacts").await;
    assert_eq!(check(&app).await, vec![]);
    let dashboard = figures(&app, TrendMonths::default()).await;
    assert_eq!(dashboard.overview.users.total, 0);
    assert_eq!(dashboard.overview.tests.total_submissions, 0);
    assert_eq!(dashboard.overview.materials.assigned_users, 0);
    assert_eq!(dashboard.overview.contacts.total, 0);
    assert!(dashboard.distributions.levels.is_empty());
    assert!(dashboard.distributions.languages.is_empty());
    assert!(
        dashboard
            .trends
            .iter()
            .all(|t| t.users == 0 && t.test_submissions == 0)
    );
}

#[tokio::test]
async fn concurrent_writers_keep_the_rollups_exact() {
    let app = TestCore::at(at(NOW)).await;
    let mut students = Vec::new();
    for i in 0..5 {
        students.push(student(&app, &format!("student{i}@example.com")).await);
    }
    let doomed = student(&app, "doomed@example.com").await;
    let mut materials = Vec::new();
    for _ in 0..4 {
        materials.push(material(&app).await);
    }
    let assign = |material: &String, users: Vec<String>| {
        let (core, material) = (app.core.clone(), material.clone());
        async move {
            let assignment =
                Assignment::new(users.into_iter().map(Id::from).collect()).expect("user ids");
            core.assign_material(&Actor::Operator, &Id::from(material), &assignment)
                .await
        }
    };
    for outcome in join_all(materials.iter().map(|m| assign(m, vec![doomed.clone()]))).await {
        outcome.expect("assign to the doomed user");
    }

    // Four admins assign four materials to the same students at once: each student's
    // first assignment makes them a holder exactly once, whichever transaction wins.
    let assignments = materials.iter().map(|m| assign(m, students.clone()));
    // Meanwhile results arrive for two students and the doomed user, who is deleted
    // with their results and assignments.
    let owners = [&students[0], &students[1], &doomed];
    let writes = (0..24i64).map(|i| {
        let db = app.core.db().clone();
        let owner = owners[i as usize % owners.len()].clone();
        let doomed = doomed.clone();
        async move {
            let outcome = async {
                let mut tx = db.begin().await?;
                sqlx::query(
                    "INSERT INTO test_results (id, user_id, test_title, target_language,
                     total_score, max_score, level, answers, completed_at)
                 VALUES ($1, $2, 'Concurrent', 'de', $3, 40, 'B1', '[]', $4)",
                )
                .bind(langcamp_core::domain::id::new_id())
                .bind(&owner)
                .bind(i)
                .bind(at(NOW).timestamp_millis() - i * 3_600_000)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok::<_, langcamp_core::Error>(())
            }
            .await;
            (owner == doomed, outcome)
        }
    });
    let core = app.core.clone();
    let doomed_id = doomed.clone();
    let deletion = async move {
        core.delete_user(&Actor::Operator, &Id::from(&doomed_id))
            .await
    };
    let (assigned, written, deleted) =
        tokio::join!(join_all(assignments), join_all(writes), deletion);
    for outcome in assigned {
        assert_eq!(outcome.expect("assign").assigned, 5);
    }
    deleted.expect("delete the doomed user");
    // A result of the doomed user written after the deletion finds no user (a foreign
    // key error); every other write succeeds.
    for (for_doomed, outcome) in written {
        assert!(for_doomed || outcome.is_ok(), "{outcome:?}");
    }
    assert_eq!(check(&app).await, vec![]);
    let dashboard = figures(&app, TrendMonths::default()).await;
    assert_eq!(dashboard.overview.materials.assignments, 20);
    assert_eq!(dashboard.overview.materials.assigned_users, 5);

    // And unassigning at once, each student losing their last assignment to a
    // different transaction.
    let removals = students.iter().flat_map(|student| {
        materials.iter().map(|material| {
            let core = app.core.clone();
            let (student, material) = (student.clone(), material.clone());
            async move {
                core.unassign_material(&Actor::Operator, &Id::from(material), &Id::from(student))
                    .await
            }
        })
    });
    for outcome in join_all(removals).await {
        outcome.expect("unassign");
    }
    assert_eq!(check(&app).await, vec![]);
    let dashboard = figures(&app, TrendMonths::default()).await;
    assert_eq!(dashboard.overview.materials.assignments, 0);
    assert_eq!(dashboard.overview.materials.assigned_users, 0);
}

/// Assigning a material to users while one of them is deleted: the assignment either
/// happens or finds the user gone, and the deletion happens; never a deadlock (a 503).
#[tokio::test]
async fn assigning_while_a_user_is_deleted_never_deadlocks() {
    let app = TestCore::start().await;
    for round in 0..6 {
        let mut ids = Vec::new();
        for who in ["keep", "gone"] {
            ids.push(student(&app, &format!("{who}{round}@example.com")).await);
        }
        let material = material(&app).await;
        // Alternate the order of the two users in the request.
        let users = if round % 2 == 0 {
            vec![ids[0].clone(), ids[1].clone()]
        } else {
            vec![ids[1].clone(), ids[0].clone()]
        };
        let assignment =
            Assignment::new(users.into_iter().map(Id::from).collect()).expect("user ids");
        let material_id = Id::from(&material);
        let doomed = Id::from(&ids[1]);
        let (assigned, deleted) = tokio::join!(
            app.core
                .assign_material(&Actor::Operator, &material_id, &assignment),
            app.core.delete_user(&Actor::Operator, &doomed),
        );
        deleted.expect("delete");
        match assigned {
            Ok(result) => assert_eq!(result.assigned, 2),
            Err(langcamp_core::Error::NotFound(_)) => {}
            Err(other) => panic!("round {round}: {other:?}"),
        }
        assert_eq!(check(&app).await, vec![]);
    }
}

#[tokio::test]
async fn the_check_reports_drift_and_the_rebuild_repairs_it() {
    let app = TestCore::at(at(NOW)).await;
    seed(&app).await;
    let query = TrendMonths::new(24).expect("24 months");
    let before = figures(&app, query).await;

    // Damage of three kinds: a wrong count, a missing row, a row that should not exist.
    // One row of the count (PostgreSQL keeps a count in shards, migration 0080).
    app.sql(
        if app.core.db().backend() == langcamp_core::platform::db::Backend::Postgres {
            "UPDATE stats_counts SET n = n + 5 WHERE name = 'users.role.user'
             AND shard = (SELECT MIN(shard) FROM stats_counts WHERE name = 'users.role.user')"
        } else {
            "UPDATE stats_counts SET n = n + 5 WHERE name = 'users.role.user'"
        },
    )
    .await;
    app.sql("DELETE FROM stats_results WHERE level = 'B1' AND target_language = 'de'")
        .await;
    app.sql("INSERT INTO stats_days (day, series, n) VALUES (86400000, 'contacts', 2)")
        .await;
    let drift = check(&app).await;
    let found: BTreeSet<(&str, &str)> = drift.iter().map(|d| (d.table, d.key.as_str())).collect();
    assert_eq!(
        found,
        BTreeSet::from([
            ("stats_counts", "users.role.user"),
            ("stats_days", "contacts/86400000"),
            ("stats_results", "B1/de"),
        ]),
        "{drift:?}"
    );
    let users = drift
        .iter()
        .find(|d| d.key == "users.role.user")
        .expect("the role count");
    assert_eq!(users.stored[0], users.recounted[0] + 5);
    let stray = drift
        .iter()
        .find(|d| d.table == "stats_days")
        .expect("the stray day");
    assert_eq!(
        (stray.stored.clone(), stray.recounted.clone()),
        (vec![2], vec![0])
    );
    assert_ne!(figures(&app, query).await, before);

    let repaired = rebuild(&app).await;
    assert_eq!(repaired, drift);
    assert_eq!(check(&app).await, vec![]);
    assert_eq!(figures(&app, query).await, before);
    // A second rebuild finds nothing to repair.
    let again = rebuild(&app).await;
    assert_eq!(again, vec![]);
}

#[tokio::test]
async fn only_superadmins_and_operators_check_or_rebuild() {
    let app = TestCore::start().await;
    let admin = app.user("admin@langcamp.test", Role::Admin).await;
    assert!(matches!(
        app.core.check_dashboard_rollups(&admin).await,
        Err(langcamp_core::Error::Forbidden(_))
    ));
    assert!(matches!(
        app.core
            .rebuild_dashboard_rollups(&Actor::Anonymous, &Silent)
            .await,
        Err(langcamp_core::Error::Unauthorized)
    ));
    let root = app.user("root@langcamp.test", Role::Superadmin).await;
    assert_eq!(
        app.core
            .check_dashboard_rollups(&root)
            .await
            .expect("check"),
        vec![]
    );
}
