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

use std::time::Duration;

use futures_util::StreamExt;
use langcamp_core::courses::{CourseInput, NewCourse};
use langcamp_core::domain::Id;
use langcamp_core::materials::{MaterialInput, NewMaterial};
use langcamp_core::settings::{NewSetting, SettingKey};
use langcamp_core::storage::{Accept, StagedFile};
use langcamp_core::users::UserQuery;
use langcamp_core::{Actor, PageRequest, Role};

use langcamp_testkit::database::{
    assert_every_course_has_its_own_entry, assert_no_connection_inside_a_transaction,
};

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
    let courses = assert_every_course_has_its_own_entry(school.core.db().reader()).await;
    assert!(courses >= created, "the uncancelled creates are kept");
}

/// A caller that leaves while its write waits for the database (every connection busy)
/// has handed nothing over yet, so nothing is written; before, the wait ran in the write's
/// own task, and a crowd of clients that hang up queued work nobody waited for ahead of
/// the steady ones until their waits timed out (503).
#[tokio::test]
async fn a_write_whose_caller_left_while_it_waited_for_the_database_leaves_nothing() {
    let school = TestCore::with_one_connection().await;
    let office = school.user("office@school.test", Role::Admin).await;

    let held = school
        .core
        .db()
        .writer_connection()
        .await
        .expect("the one connection");
    let waiting = tokio::spawn({
        let core = school.core.clone();
        let office = office.clone();
        async move {
            core.create_course(&office, new_course("Nobody waits"))
                .await
        }
    });
    // Long enough for the create to reach its wait for the held connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "the create waits for the connection"
    );
    waiting.abort();
    assert!(waiting.await.expect_err("aborted").is_cancelled());
    drop(held);

    school
        .core
        .create_course(&office, new_course("Somebody waits"))
        .await
        .expect("a write after the abandoned one");
    assert_eq!(
        school
            .count("SELECT COUNT(*) FROM courses WHERE title = 'Nobody waits'")
            .await,
        0,
        "the abandoned create left nothing"
    );
    assert_eq!(school.count("SELECT COUNT(*) FROM courses").await, 1);
}

fn new_material(title: &str) -> NewMaterial {
    let input: MaterialInput =
        serde_json::from_value(serde_json::json!({ "title": title })).expect("a material body");
    NewMaterial::try_from(input).expect("a valid material")
}

async fn staged_pdf(school: &TestCore, office: &Actor, number: usize) -> StagedFile {
    let bytes = bytes::Bytes::from(format!("%PDF-1.4\nworkbook {number}\n"));
    let chunks = futures_util::stream::iter([Ok::<_, langcamp_core::Error>(bytes)]);
    school
        .core
        .stage_file(office, Accept::Pdf, Some("workbook.pdf"), chunks)
        .await
        .expect("stage a PDF")
}

/// A material's piece commits even when its caller has stopped waiting; the staged PDF's
/// bytes are kept only when the operation settles them after the commit, so the caller's
/// leaving must not stop that either: a recorded PDF without its bytes could never be
/// served again.
#[tokio::test]
async fn a_material_cancelled_at_any_await_keeps_the_bytes_of_every_pdf_it_recorded() {
    let school = TestCore::start().await;
    let office = school.user("office@school.test", Role::Admin).await;
    let mut finished_alone = false;
    for waits in 0..200 {
        let pdf = staged_pdf(&school, &office, waits).await;
        let title = format!("Material {waits}");
        let create = school
            .core
            .create_material(&office, new_material(&title), vec![pdf]);
        if let Some(material) = cancel_after(create, waits).await {
            material.expect("an uncancelled create succeeds");
            finished_alone = true;
            break;
        }
    }
    assert!(finished_alone, "the create finishes within 200 waits");
    // Work whose caller left finishes on its own (and an abandoned upload's bytes go in
    // the background): give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let recorded: Vec<String> = sqlx::query_scalar("SELECT file_id FROM material_pdfs")
        .fetch_all(school.core.db().reader())
        .await
        .expect("the recorded PDFs");
    let materials = school
        .count("SELECT COUNT(*) FROM education_materials")
        .await;
    assert_eq!(
        i64::try_from(recorded.len()).ok(),
        Some(materials),
        "each material recorded its one PDF"
    );
    for file_id in recorded {
        let meta = school
            .core
            .stored_file(&office, &Id::from(file_id.as_str()))
            .await
            .expect("the PDF's record");
        let mut bytes = school
            .core
            .read_stored_file(&meta, None)
            .await
            .unwrap_or_else(|e| panic!("the bytes of the recorded PDF {file_id}: {e}"));
        while let Some(chunk) = bytes.next().await {
            chunk.unwrap_or_else(|e| panic!("the bytes of the recorded PDF {file_id}: {e}"));
        }
    }
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

/// Polls `check` until it holds, for at most `seconds`; whether it did.
async fn within(seconds: u64, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Issue #52: a write whose caller left runs on to its end and may commit; this instance
/// must then forget what the write changed, as it would for a caller that waited (it does
/// not hear its own change notices). Once forgetting was the caller's step after the
/// write, so a hang-up in between kept the old value cached here until its time to live
/// ran out (for a sign-in: as long as the sign-in). The caches live on the app's clock,
/// which stands still here: a value left stale stays stale. (On SQLite a caller that
/// leaves before the writer takes its work leaves nothing written, and cannot leave here
/// while the writer runs it; on PostgreSQL the write runs in a task of its own once it
/// holds its connection, and this failed at wait 0 before the fix.)
#[tokio::test]
async fn a_cached_write_whose_caller_left_is_forgotten_here_once_it_commits() {
    let school = TestCore::at(chrono::Utc::now()).await;
    let office = school.user("office@school.test", Role::Admin).await;
    let key = SettingKey::named("landing_video_url").expect("a key");
    let setting = |value: String| {
        NewSetting::new("landing_video_url", serde_json::json!(value)).expect("a setting")
    };
    let stored = async || -> serde_json::Value {
        let text: String =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = 'landing_video_url'")
                .fetch_one(school.core.db().reader())
                .await
                .expect("the stored value");
        serde_json::from_str(&text).expect("JSON")
    };
    school
        .core
        .put_setting(&office, setting("v0".into()))
        .await
        .expect("the first value");
    let mut finished_alone = false;
    for waits in 0..200 {
        // The value before is cached now.
        school
            .core
            .get_setting(&office, &key)
            .await
            .expect("cached");
        let value = serde_json::json!(format!("v{}", waits + 1));
        let put = school
            .core
            .put_setting(&office, setting(format!("v{}", waits + 1)));
        if cancel_after(put, waits).await.is_some() {
            finished_alone = true;
        }
        // A write after it (of something else, which forgets no setting): on SQLite's
        // single writer the abandoned one has run, or been dropped unrun, by the time
        // this one is answered.
        school
            .core
            .create_course(&office, new_course(&format!("Barrier {waits}")))
            .await
            .expect("a later write");
        within(2, async || stored().await == value).await;
        let written = stored().await;
        let seen_here = within(5, async || {
            school
                .core
                .get_setting(&office, &key)
                .await
                .is_ok_and(|s| s.value == written)
        })
        .await;
        assert!(
            seen_here,
            "cancelled at wait {waits}: the database holds {written}, this instance still serves the value before"
        );
        if finished_alone {
            break;
        }
    }
    assert!(finished_alone, "the write finishes within 200 waits");
}

/// Issue #52: `POST /storage/upload` records a staged file and then keeps its bytes; a
/// caller that left between the two dropped the staged file unsettled, which removed the
/// bytes of a file now recorded (and counted against the quota). Every recorded upload
/// must keep its bytes.
#[tokio::test]
async fn an_upload_cancelled_at_any_await_keeps_the_bytes_of_every_file_it_recorded() {
    let school = TestCore::start().await;
    let visitor = Actor::Anonymous;
    let mut finished_alone = false;
    for waits in 0..200 {
        let bytes = bytes::Bytes::from(format!("%PDF-1.4\nupload {waits}\n"));
        let chunks = futures_util::stream::iter([Ok::<_, langcamp_core::Error>(bytes)]);
        let staged = school
            .core
            .stage_file(&visitor, Accept::AnyAllowed, Some("upload.pdf"), chunks)
            .await
            .expect("a staged upload");
        if let Some(saved) = cancel_after(school.core.save_upload(&visitor, staged), waits).await {
            saved.expect("an uncancelled upload succeeds");
            finished_alone = true;
            break;
        }
    }
    assert!(finished_alone, "the upload finishes within 200 waits");
    // Work whose caller left finishes on its own: give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let recorded: Vec<String> = sqlx::query_scalar("SELECT id FROM stored_files")
        .fetch_all(school.core.db().reader())
        .await
        .expect("the recorded files");
    assert!(!recorded.is_empty());
    for file_id in recorded {
        let meta = school
            .core
            .stored_file(&visitor, &Id::from(file_id.as_str()))
            .await
            .expect("the file's record");
        let mut bytes = school
            .core
            .read_stored_file(&meta, None)
            .await
            .unwrap_or_else(|e| panic!("the bytes of the recorded file {file_id}: {e}"));
        while let Some(chunk) = bytes.next().await {
            chunk.unwrap_or_else(|e| panic!("the bytes of the recorded file {file_id}: {e}"));
        }
    }
}
