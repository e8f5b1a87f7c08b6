//! The writes of a test: its own row and its children (questions, options, level ranges),
//! inserted, rewritten or deleted together, and the difficulties calibration stores.
//!
//! The staff writes ([`Create`], [`Duplicate`], [`Update`], [`Delete`]) are
//! [`StaffWrite`]s: each runs with its audit entry and the tests' change notice as one
//! piece of write work, so on SQLite it shares the group commit's transaction with the
//! writes beside it. On PostgreSQL each takes the lock it needs first, as a transaction of
//! its own: an edit locks the test's row, a duplicate reads one snapshot.

use super::require_test;
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::CefrLevel;
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::placement::draft::{self, TestDraft};
use crate::placement::{ProficiencyTest, TestPatch, copy_title};
use crate::platform::db::{Arg, Locks, Row as _, WriteConn, bit};

/// Takes the test's row lock before reading it, so two edits of one test run one after
/// the other, the second on the result of the first. Whether the test exists.
async fn lock_test<C: WriteConn>(conn: &mut C, id: &str) -> Result<bool> {
    let locked = conn
        .exec(
            "UPDATE proficiency_tests SET updated_at = updated_at WHERE id = $1",
            &[Arg::Text(id)],
        )
        .await?;
    Ok(locked > 0)
}

/// The test's own columns, `title` to `level_messages`, in the order INSERT and UPDATE
/// list them; `messages` is the draft's level messages as JSON ([`messages_json`]).
fn own_columns<'a>(draft: &'a TestDraft, messages: Option<&'a str>) -> [Arg<'a>; 11] {
    [
        Arg::Text(&draft.settings.title),
        Arg::OptText(draft.settings.description.as_deref()),
        Arg::OptText(draft.settings.locale.as_deref()),
        Arg::OptText(draft.settings.target_language.as_deref()),
        Arg::OptInt(draft.settings.time_limit_minutes),
        Arg::Int(bit(draft.settings.is_active)),
        Arg::Int(question_count(draft)),
        Arg::Int(draft.max_score()),
        Arg::Text(draft.settings.mode.as_str()),
        Arg::OptInt(draft.settings.max_questions),
        Arg::OptText(messages),
    ]
}

fn messages_json(draft: &TestDraft) -> Option<String> {
    draft
        .settings
        .level_messages
        .as_ref()
        .and_then(|m| serde_json::to_string(m).ok())
}

fn question_count(draft: &TestDraft) -> i64 {
    i64::try_from(draft.questions.len()).unwrap_or(i64::MAX)
}

async fn insert_test<C: WriteConn>(
    conn: &mut C,
    id: &str,
    draft: &TestDraft,
    now: i64,
) -> Result<()> {
    let messages = messages_json(draft);
    let mut args = vec![Arg::Text(id)];
    args.extend(own_columns(draft, messages.as_deref()));
    args.push(Arg::Int(now));
    conn.exec(
        "INSERT INTO proficiency_tests (id, title, description, locale, target_language,
             time_limit_minutes, is_active, question_count, max_score, mode, max_questions,
             level_messages, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
        &args,
    )
    .await?;
    insert_children(conn, id, draft).await
}

async fn insert_children<C: WriteConn>(
    conn: &mut C,
    test_id: &str,
    draft: &TestDraft,
) -> Result<()> {
    for (position, question) in (0i64..).zip(&draft.questions) {
        let correct = question
            .options
            .get(question.correct_index)
            .ok_or_else(|| Error::internal("correct option index out of range after validation"))?;
        conn.exec(
            "INSERT INTO test_questions (id, test_id, position, text, points, correct_option_id,
                 level, answer_count)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                Arg::Text(&question.id),
                Arg::Text(test_id),
                Arg::Int(position),
                Arg::Text(&question.text),
                Arg::Int(question.points),
                Arg::Text(&correct.id),
                Arg::OptText(question.level.map(CefrLevel::as_str)),
                Arg::Int(question.answer_count),
            ],
        )
        .await?;
        // A separate statement: a NULL bound as an optional float would poison
        // PostgreSQL's cached statement for real values (ARCHITECTURE.md, sqlx's `Any` trap).
        if let Some(difficulty) = question.difficulty {
            set_difficulty(conn, &question.id, difficulty, question.answer_count).await?;
        }
        for (option_position, option) in (0i64..).zip(&question.options) {
            conn.exec(
                "INSERT INTO test_options (id, question_id, position, text) VALUES ($1, $2, $3, $4)",
                &[
                    Arg::Text(&option.id),
                    Arg::Text(&question.id),
                    Arg::Int(option_position),
                    Arg::Text(&option.text),
                ],
            )
            .await?;
        }
    }
    for (position, range) in (0i64..).zip(&draft.level_ranges) {
        conn.exec(
            "INSERT INTO test_level_ranges (id, test_id, position, level, min_score, max_score, message)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                Arg::Text(&new_id()),
                Arg::Text(test_id),
                Arg::Int(position),
                Arg::Text(&range.level),
                Arg::Int(range.min_score),
                Arg::Int(range.max_score),
                Arg::Text(&range.message),
            ],
        )
        .await?;
    }
    Ok(())
}

async fn delete_children<C: WriteConn>(conn: &mut C, test_id: &str) -> Result<()> {
    let id = [Arg::Text(test_id)];
    conn.exec(
        "DELETE FROM test_options WHERE question_id IN
             (SELECT id FROM test_questions WHERE test_id = $1)",
        &id,
    )
    .await?;
    conn.exec("DELETE FROM test_questions WHERE test_id = $1", &id)
        .await?;
    conn.exec("DELETE FROM test_level_ranges WHERE test_id = $1", &id)
        .await?;
    Ok(())
}

/// Writes the draft over the stored test; questions, options and ranges are rewritten
/// (kept ids and all) only when they changed.
async fn update_test<C: WriteConn>(
    conn: &mut C,
    id: &str,
    draft: &TestDraft,
    children_changed: bool,
    now: i64,
) -> Result<()> {
    let messages = messages_json(draft);
    let mut args = own_columns(draft, messages.as_deref()).to_vec();
    args.extend([Arg::Int(now), Arg::Text(id)]);
    conn.exec(
        "UPDATE proficiency_tests SET title = $1, description = $2, locale = $3,
             target_language = $4, time_limit_minutes = $5, is_active = $6,
             question_count = $7, max_score = $8, mode = $9, max_questions = $10,
             level_messages = $11, updated_at = $12
         WHERE id = $13",
        &args,
    )
    .await?;
    if children_changed {
        delete_children(conn, id).await?;
        insert_children(conn, id, draft).await?;
    }
    Ok(())
}

/// Stores a question's calibrated difficulty and the answers it rests on.
pub(in crate::placement) async fn set_difficulty<C: WriteConn>(
    conn: &mut C,
    question_id: &str,
    difficulty: f64,
    answer_count: i64,
) -> Result<()> {
    conn.exec(
        "UPDATE test_questions SET difficulty = $1, answer_count = $2 WHERE id = $3",
        &[
            Arg::Float(difficulty),
            Arg::Int(answer_count),
            Arg::Text(question_id),
        ],
    )
    .await?;
    Ok(())
}

/// Stores the number of answers a question had at calibration, its difficulty unchanged.
pub(in crate::placement) async fn set_answer_count<C: WriteConn>(
    conn: &mut C,
    question_id: &str,
    answer_count: i64,
) -> Result<()> {
    conn.exec(
        "UPDATE test_questions SET answer_count = $1 WHERE id = $2",
        &[Arg::Int(answer_count), Arg::Text(question_id)],
    )
    .await?;
    Ok(())
}

/// A test as the audit trail names it: by its title.
fn test_target(test: &ProficiencyTest) -> Target {
    Target::record("test", &test.id, &test.title)
}

/// Inserts `draft` as the test `id` and answers it as an admin sees it.
async fn insert_and_read<C: WriteConn>(
    conn: &mut C,
    id: &str,
    draft: &TestDraft,
    now: i64,
) -> Result<ProficiencyTest> {
    insert_test(conn, id, draft, now).await?;
    Ok(require_test(conn, id).await?.view(true))
}

/// `POST /proficiency-tests`: the new test of this draft.
pub(in crate::placement) struct Create(pub TestDraft);

impl StaffWrite for Create {
    type Output = ProficiencyTest;

    async fn run<C: WriteConn>(
        self,
        conn: &mut C,
        by: &Staff,
    ) -> Result<(ProficiencyTest, Entries)> {
        let test = insert_and_read(conn, &new_id(), &self.0, by.now).await?;
        let entry = Entry::new("test.created", test_target(&test));
        Ok((test, entry.into()))
    }
}

/// `POST /proficiency-tests/{id}/duplicate`: an inactive copy with new ids, of the test
/// as one snapshot shows it.
pub(in crate::placement) struct Duplicate(pub String);

impl StaffWrite for Duplicate {
    type Output = ProficiencyTest;

    async fn run<C: WriteConn>(
        self,
        conn: &mut C,
        by: &Staff,
    ) -> Result<(ProficiencyTest, Entries)> {
        conn.repeatable_reads().await?;
        let original = require_test(conn, &self.0).await?;
        let mut copy = draft::from_stored(&original);
        copy.settings.title = copy_title(&original.settings.title);
        copy.settings.is_active = false;
        copy.renew_ids();
        let test = insert_and_read(conn, &new_id(), &copy, by.now).await?;
        let entry = Entry::new("test.duplicated", test_target(&test));
        Ok((test, entry.into()))
    }
}

/// `PATCH /proficiency-tests/{id}`: the patch is checked against the stored test, read
/// under the test's row lock.
pub(in crate::placement) struct Update(pub String, pub TestPatch);

impl StaffWrite for Update {
    type Output = ProficiencyTest;

    async fn run<C: WriteConn>(
        self,
        conn: &mut C,
        by: &Staff,
    ) -> Result<(ProficiencyTest, Entries)> {
        let Update(id, patch) = self;
        if !lock_test(conn, &id).await? {
            return Err(Error::not_found("test"));
        }
        let existing = require_test(conn, &id).await?;
        let (draft, children_changed) = draft::from_patch(&existing, patch)?;
        update_test(conn, &id, &draft, children_changed, by.now).await?;
        let test = require_test(conn, &id).await?.view(true);
        let entry = Entry::new("test.updated", test_target(&test))
            .with_changes(&existing.view(true), &test);
        Ok((test, entry.into()))
    }
}

/// `DELETE /proficiency-tests/{id}`: the test and its questions; its results stay (their
/// `test_id` becomes NULL, the snapshot keeps the rest).
pub(in crate::placement) struct Delete(pub String);

impl StaffWrite for Delete {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        let id = [Arg::Text(&self.0)];
        conn.exec(
            "UPDATE test_results SET test_id = NULL WHERE test_id = $1",
            &id,
        )
        .await?;
        delete_children(conn, &self.0).await?;
        let Some(deleted) = conn
            .fetch_first(
                "DELETE FROM proficiency_tests WHERE id = $1 RETURNING title",
                &id,
            )
            .await?
        else {
            return Err(Error::not_found("test"));
        };
        let target = Target::record("test", &self.0, deleted.text("title")?);
        Ok(((), Entry::new("test.deleted", target).into()))
    }
}
