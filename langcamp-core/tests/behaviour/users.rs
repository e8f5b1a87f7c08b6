//! Users as core keeps them: the last superadmin stays, whatever two operations race to
//! remove the last two; an address goes to one user, whatever two edits race for it; a
//! stored role this build does not know is a fault, never a quiet `user`.

use langcamp_core::domain::{Email, Id};
use langcamp_core::users::{NewUser, UserQuery};
use langcamp_core::{Actor, Error, PageRequest, Role};

use crate::harness::TestCore;

#[tokio::test]
async fn two_superadmins_removed_at_once_leave_one() {
    let app = TestCore::start().await;
    // Without a lock, PostgreSQL let both through within the first rounds.
    for round in 0..10 {
        let root = |name: String| {
            let core = app.core.clone();
            async move {
                core.create_user(
                    &Actor::Operator,
                    NewUser::new(&name, Role::Superadmin, None).expect("a valid user"),
                )
                .await
                .expect("create a superadmin")
                .id
            }
        };
        let a = root(format!("root-a{round}@example.com")).await;
        let b = root(format!("root-b{round}@example.com")).await;
        // The only superadmins now: a and b (earlier rounds left one, removed here).
        let mut tx = app.core.db().begin().await.expect("begin");
        sqlx::query("DELETE FROM users WHERE role = 'superadmin' AND id <> $1 AND id <> $2")
            .bind(&a)
            .bind(&b)
            .execute(&mut *tx)
            .await
            .expect("clear earlier superadmins");
        tx.commit().await.expect("commit");
        let core = app.core.clone();
        let demote = |id: String| {
            let core = core.clone();
            async move {
                let admin = Role::Admin;
                core.set_role(&Actor::Operator, &id.into(), admin)
                    .await
                    .map(|_| ())
            }
        };
        let delete = |id: String| {
            let core = core.clone();
            async move {
                core.delete_user(&Actor::Operator, &Id::from(&id))
                    .await
                    .map(|_| ())
            }
        };
        let (first, second) = if round % 2 == 0 {
            tokio::join!(demote(a.clone()), demote(b.clone()))
        } else {
            tokio::join!(delete(a.clone()), demote(b.clone()))
        };
        let refused = [&first, &second]
            .iter()
            .filter(|o| matches!(o, Err(Error::Conflict(_))))
            .count();
        assert_eq!(refused, 1, "round {round}: {first:?} {second:?}");
        let left = app
            .count("SELECT COUNT(*) FROM users WHERE role = 'superadmin'")
            .await;
        assert_eq!(left, 1, "round {round}");
    }
}

#[tokio::test]
async fn a_stored_role_this_build_does_not_know_is_an_internal_error_never_a_user() {
    let school = TestCore::start().await;
    let core = &school.core;
    let admin = school.user("owner@school.test", Role::Admin).await;
    let id = Id::from(admin.caller().expect("signed in").user_id.as_str());
    school
        .write_around_check(
            "users",
            "users_role_check",
            "UPDATE users SET role = 'owner' WHERE email = 'owner@school.test'",
        )
        .await;

    let read = core.get_user(&Actor::Operator, &id).await;
    match read {
        Err(Error::Internal(cause)) => assert!(
            cause.to_string().contains("the role \"owner\""),
            "the log names the value: {cause}"
        ),
        other => panic!("expected an internal error, got {other:?}"),
    }
    let listed = core
        .list_users(
            &Actor::Operator,
            &UserQuery::default(),
            PageRequest::default(),
        )
        .await;
    assert!(matches!(listed, Err(Error::Internal(_))), "{listed:?}");
    // Nobody acts with that row's rights, not even through the operator.
    assert!(matches!(
        core.act_as(&Actor::Operator, &id).await,
        Err(Error::Internal(_))
    ));

    // The fault stays with that row: another user reads as before, and once the row is
    // repaired (by hand, as it was damaged) it reads again.
    let other = school.user("teacher@school.test", Role::Admin).await;
    let other = Id::from(other.caller().expect("signed in").user_id.as_str());
    assert!(core.get_user(&Actor::Operator, &other).await.is_ok());
    school
        .sql("UPDATE users SET role = 'admin' WHERE email = 'owner@school.test'")
        .await;
    let repaired = core
        .get_user(&Actor::Operator, &id)
        .await
        .expect("the repaired row");
    assert_eq!(repaired.role, Role::Admin);
}

/// Staff edits of users are pieces of the group commit on SQLite (several in one
/// transaction, each in its savepoint) and transactions side by side on PostgreSQL: two
/// edits giving one address to two users at once leave it with one of them, the other
/// refused with 409 and nothing of it written, its entry included.
#[tokio::test]
async fn two_users_given_one_address_at_once_leave_it_with_one_and_one_entry() {
    let school = TestCore::start().await;
    let core = &school.core;
    for round in 0..6 {
        let user = |name: String| async move {
            core.create_user(
                &Actor::Operator,
                NewUser::new(&name, Role::User, None).expect("a valid user"),
            )
            .await
            .expect("create a user")
            .typed_id()
        };
        let a = user(format!("a{round}@example.com")).await;
        let b = user(format!("b{round}@example.com")).await;
        let address = format!("wanted{round}@example.com");
        let email = || Email::parse("email", &address).expect("an address");
        let (first, second) = tokio::join!(
            core.set_user_email(&Actor::Operator, &a, email()),
            core.set_user_email(&Actor::Operator, &b, email()),
        );
        let refused: Vec<&Error> = [&first, &second]
            .into_iter()
            .filter_map(|outcome| outcome.as_ref().err())
            .collect();
        assert_eq!(refused.len(), 1, "round {round}: {first:?} {second:?}");
        assert!(
            matches!(refused[0], Error::Conflict(m) if m == "that e-mail address is already in use"),
            "round {round}: {refused:?}"
        );
        let taken = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM users WHERE email = $1")
            .bind(&address)
            .fetch_one(core.db().reader())
            .await
            .expect("count");
        assert_eq!(taken, 1, "round {round}");
        let entries = sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM audit_events WHERE action = 'user.email_changed' AND target_id IN ($1, $2)",
        )
        .bind(a.as_str())
        .bind(b.as_str())
        .fetch_one(core.db().reader())
        .await
        .expect("count");
        assert_eq!(entries, 1, "round {round}: only the kept edit's entry");
    }
}
