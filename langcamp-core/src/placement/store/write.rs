//! The writes of a test: its own row and its children (questions, options, level ranges),
//! inserted, rewritten or deleted together, and the difficulties calibration stores.

use sqlx::AnyConnection;

use crate::domain::CefrLevel;
use crate::domain::error::{Error, Result};
use crate::domain::id::{looks_like_id, new_id};
use crate::placement::draft::TestDraft;
use crate::platform::db::bit;
use crate::platform::db::listing::Bound;

/// Takes the test's row lock before reading it, so two edits of one test run one after
/// the other, the second on the result of the first. Whether the test exists.
pub(in crate::placement) async fn lock_test(conn: &mut AnyConnection, id: &str) -> Result<bool> {
    if !looks_like_id(id) {
        return Ok(false);
    }
    let locked = sqlx::query("UPDATE proficiency_tests SET updated_at = updated_at WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(locked.rows_affected() > 0)
}

pub(in crate::placement) async fn insert_test(
    conn: &mut AnyConnection,
    id: &str,
    draft: &TestDraft,
    now: i64,
) -> Result<()> {
    let query = sqlx::query(
        "INSERT INTO proficiency_tests (id, title, description, locale, target_language,
             time_limit_minutes, is_active, question_count, max_score, mode, max_questions,
             level_messages, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
    );
    bind_draft(query.bind(id), draft)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    insert_children(conn, id, draft).await
}

/// Binds the test's own columns, `title` to `level_messages`, in the order INSERT and
/// UPDATE list them.
fn bind_draft<'q>(query: Bound<'q>, draft: &'q TestDraft) -> Bound<'q> {
    let messages = draft
        .level_messages
        .as_ref()
        .and_then(|m| serde_json::to_string(m).ok());
    query
        .bind(&draft.title)
        .bind(draft.description.as_deref())
        .bind(draft.locale.as_deref())
        .bind(draft.target_language.as_deref())
        .bind(draft.time_limit_minutes)
        .bind(bit(draft.is_active))
        .bind(question_count(draft))
        .bind(draft.max_score())
        .bind(draft.mode.as_str())
        .bind(draft.max_questions)
        .bind(messages)
}

fn question_count(draft: &TestDraft) -> i64 {
    i64::try_from(draft.questions.len()).unwrap_or(i64::MAX)
}

async fn insert_children(conn: &mut AnyConnection, test_id: &str, draft: &TestDraft) -> Result<()> {
    for (position, question) in (0i64..).zip(&draft.questions) {
        let correct = question
            .options
            .get(question.correct_index)
            .ok_or_else(|| Error::internal("correct option index out of range after validation"))?;
        sqlx::query(
            "INSERT INTO test_questions (id, test_id, position, text, points, correct_option_id,
                 level, answer_count)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&question.id)
        .bind(test_id)
        .bind(position)
        .bind(&question.text)
        .bind(question.points)
        .bind(&correct.id)
        .bind(question.level.map(CefrLevel::as_str))
        .bind(question.answer_count)
        .execute(&mut *conn)
        .await?;
        // A separate statement: a NULL bound as `Option<f64>` would poison PostgreSQL's
        // cached statement for real values (ARCHITECTURE.md, sqlx's `Any` trap).
        if let Some(difficulty) = question.difficulty {
            set_difficulty(conn, &question.id, difficulty, question.answer_count).await?;
        }
        for (option_position, option) in (0i64..).zip(&question.options) {
            sqlx::query(
                "INSERT INTO test_options (id, question_id, position, text) VALUES ($1, $2, $3, $4)",
            )
            .bind(&option.id)
            .bind(&question.id)
            .bind(option_position)
            .bind(&option.text)
            .execute(&mut *conn)
            .await?;
        }
    }
    for (position, range) in (0i64..).zip(&draft.level_ranges) {
        sqlx::query(
            "INSERT INTO test_level_ranges (id, test_id, position, level, min_score, max_score, message)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(new_id())
        .bind(test_id)
        .bind(position)
        .bind(&range.level)
        .bind(range.min_score)
        .bind(range.max_score)
        .bind(&range.message)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn delete_children(conn: &mut AnyConnection, test_id: &str) -> Result<()> {
    sqlx::query(
        "DELETE FROM test_options WHERE question_id IN
             (SELECT id FROM test_questions WHERE test_id = $1)",
    )
    .bind(test_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM test_questions WHERE test_id = $1")
        .bind(test_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM test_level_ranges WHERE test_id = $1")
        .bind(test_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Writes the draft over the stored test; questions, options and ranges are rewritten
/// (kept ids and all) only when they changed.
pub(in crate::placement) async fn update_test(
    conn: &mut AnyConnection,
    id: &str,
    draft: &TestDraft,
    children_changed: bool,
    now: i64,
) -> Result<()> {
    let query = sqlx::query(
        "UPDATE proficiency_tests SET title = $1, description = $2, locale = $3,
             target_language = $4, time_limit_minutes = $5, is_active = $6,
             question_count = $7, max_score = $8, mode = $9, max_questions = $10,
             level_messages = $11, updated_at = $12
         WHERE id = $13",
    );
    bind_draft(query, draft)
        .bind(now)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    if children_changed {
        delete_children(conn, id).await?;
        insert_children(conn, id, draft).await?;
    }
    Ok(())
}

/// Deletes a test and its questions; its results stay (their `test_id` becomes NULL, the
/// snapshot keeps the rest). Whether the test existed.
pub(in crate::placement) async fn delete_test(conn: &mut AnyConnection, id: &str) -> Result<bool> {
    if !looks_like_id(id) {
        return Ok(false);
    }
    sqlx::query("UPDATE test_results SET test_id = NULL WHERE test_id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    delete_children(conn, id).await?;
    let deleted = sqlx::query("DELETE FROM proficiency_tests WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(deleted.rows_affected() > 0)
}

/// Stores a question's calibrated difficulty and the answers it rests on.
pub(in crate::placement) async fn set_difficulty(
    conn: &mut AnyConnection,
    question_id: &str,
    difficulty: f64,
    answer_count: i64,
) -> Result<()> {
    sqlx::query("UPDATE test_questions SET difficulty = $1, answer_count = $2 WHERE id = $3")
        .bind(difficulty)
        .bind(answer_count)
        .bind(question_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Stores the number of answers a question had at calibration, its difficulty unchanged.
pub(in crate::placement) async fn set_answer_count(
    conn: &mut AnyConnection,
    question_id: &str,
    answer_count: i64,
) -> Result<()> {
    sqlx::query("UPDATE test_questions SET answer_count = $1 WHERE id = $2")
        .bind(answer_count)
        .bind(question_id)
        .execute(conn)
        .await?;
    Ok(())
}
