//! Users as core keeps them: a stored role this build does not know is a fault, never a
//! quiet `user`.

use langcamp_core::domain::Id;
use langcamp_core::users::UserQuery;
use langcamp_core::{Actor, Error, PageRequest, Role};

use crate::harness::TestCore;

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
