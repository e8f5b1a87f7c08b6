//! Issue #39: a caller that stops waiting (a client hanging up, a timeout) never splits an
//! operation and never hands a connection inside a transaction to the next caller.
//!
//! Each operation here is dropped after its future has waited `n` times, for every `n`
//! from 0 until it finishes on its own, so it is cancelled at each of its awaits in turn:
//! acquiring a connection, the `BEGIN`, every statement, the `COMMIT`. After each drop,
//! every connection the pool holds is checked (on PostgreSQL: a statement run in a
//! transaction left open sees `now()` at that transaction's start, not its own), and at
//! the end every course has its audit entry and every entry its course.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use langcamp_core::courses::{CourseInput, NewCourse};
use langcamp_core::users::UserQuery;
use langcamp_core::{PageRequest, Role};

use langcamp_testkit::database::assert_no_connection_inside_a_transaction;

use crate::harness::TestCore;

/// Runs `work` until it has waited `waits` times, then drops it (`None`), or to its end.
async fn cancel_after<F: Future>(work: F, waits: usize) -> Option<F::Output> {
    let mut work = pin!(work);
    let mut waited = 0;
    std::future::poll_fn(|cx| match work.as_mut().poll(cx) {
        Poll::Ready(value) => Poll::Ready(Some(value)),
        Poll::Pending if waited == waits => Poll::Ready(None),
        Poll::Pending => {
            waited += 1;
            Poll::Pending
        }
    })
    .await
}

/// The check of [`assert_no_connection_inside_a_transaction`] on the core's pool.
async fn no_connection_is_inside_a_transaction(school: &TestCore, after: &str) {
    assert_no_connection_inside_a_transaction(school.core.db().reader(), after).await;
}

fn new_course(title: &str) -> NewCourse {
    let input: CourseInput =
        serde_json::from_value(serde_json::json!({ "title": title })).expect("a course body");
    NewCourse::try_from(input).expect("a valid course")
}

#[tokio::test]
async fn a_staff_write_cancelled_at_any_await_commits_whole_or_leaves_nothing() {
    let school = TestCore::start().await;
    let office = school.user("office@school.test", Role::Admin).await;
    let mut finished_alone = false;
    let mut created = 0;
    for waits in 0..200 {
        let title = format!("Course {waits}");
        let outcome = cancel_after(
            school.core.create_course(&office, new_course(&title)),
            waits,
        )
        .await;
        no_connection_is_inside_a_transaction(
            &school,
            &format!("after a create cancelled at wait {waits}"),
        )
        .await;
        if let Some(course) = outcome {
            course.expect("an uncancelled create succeeds");
            created += 1;
            finished_alone = true;
            break;
        }
    }
    assert!(finished_alone, "the create finishes within 200 waits");
    // A later write goes through: nothing is stuck.
    school
        .core
        .create_course(&office, new_course("After the hang-ups"))
        .await
        .expect("a write after the cancelled ones");
    created += 1;
    let courses = school.count("SELECT COUNT(*) FROM courses").await;
    let entries = school
        .count("SELECT COUNT(*) FROM audit_events WHERE action = 'course.created'")
        .await;
    let paired = school
        .count(
            "SELECT COUNT(*) FROM courses c
             WHERE (SELECT COUNT(*) FROM audit_events a
                    WHERE a.action = 'course.created' AND a.target_id = c.id) = 1",
        )
        .await;
    assert_eq!(
        courses, entries,
        "no course without its entry, no entry without its course"
    );
    assert_eq!(paired, courses, "each course has exactly its own entry");
    assert!(courses >= created, "the uncancelled creates are kept");
}

#[tokio::test]
async fn a_snapshot_read_cancelled_at_any_await_leaves_no_transaction_behind() {
    let school = TestCore::start().await;
    let office = school.user("office@school.test", Role::Admin).await;
    let query = UserQuery::default();
    no_connection_is_inside_a_transaction(&school, "before anything").await;
    for waits in 0..200 {
        let outcome = cancel_after(
            school
                .core
                .list_users(&office, &query, PageRequest::default()),
            waits,
        )
        .await;
        no_connection_is_inside_a_transaction(
            &school,
            &format!("after a list cancelled at wait {waits}"),
        )
        .await;
        if let Some(page) = outcome {
            page.expect("an uncancelled list succeeds");
            return;
        }
    }
    panic!("the list finishes within 200 waits");
}
