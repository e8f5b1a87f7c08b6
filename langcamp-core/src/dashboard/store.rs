//! The SQL of the dashboard's plain counts and recent activity.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::rollups::day_of;
use super::{PlainCounts, RECENT_ITEMS, RecentContact, RecentResult};
use crate::domain::error::Result;
use crate::domain::time::Timestamp;

/// The small tables' sizes, and the rows of the partial days before the 30-day windows'
/// edges: `[day_of(since_30), since_30)` ($1, $2) and `[day_of(since_60), since_60)`
/// ($3, $4), at most a day of rows each.
const PLAIN_COUNTS: &str = "SELECT
    (SELECT COUNT(*) FROM courses) AS courses,
    (SELECT COUNT(*) FROM proficiency_tests) AS tests,
    (SELECT COUNT(*) FROM education_materials) AS materials,
    (SELECT COUNT(*) FROM users WHERE created_at >= $1 AND created_at < $2) AS users_head_30,
    (SELECT COUNT(*) FROM users WHERE created_at >= $3 AND created_at < $4) AS users_head_60,
    (SELECT COUNT(*) FROM test_results WHERE completed_at >= $1 AND completed_at < $2) AS results_head_30,
    (SELECT COUNT(*) FROM test_results WHERE completed_at >= $3 AND completed_at < $4) AS results_head_60,
    (SELECT COUNT(*) FROM contacts WHERE created_at >= $1 AND created_at < $2) AS contacts_head_30,
    (SELECT COUNT(*) FROM material_assignments WHERE assigned_at >= $1 AND assigned_at < $2) AS assignments_head_30";

pub(super) async fn plain_counts(
    conn: &mut AnyConnection,
    since_30: i64,
    since_60: i64,
) -> Result<PlainCounts> {
    Ok(sqlx::query_as(PLAIN_COUNTS)
        .bind(day_of(since_30))
        .bind(since_30)
        .bind(day_of(since_60))
        .bind(since_60)
        .fetch_one(conn)
        .await?)
}

pub(super) async fn recent_contacts(conn: &mut AnyConnection) -> Result<Vec<RecentContact>> {
    let rows = sqlx::query(
        "SELECT id, first_name, last_name, email, status, source, created_at, replied_at
         FROM contacts ORDER BY created_at DESC, id DESC LIMIT $1",
    )
    .bind(RECENT_ITEMS)
    .fetch_all(conn)
    .await?;
    rows.iter().map(recent_contact).collect()
}

fn recent_contact(row: &AnyRow) -> Result<RecentContact> {
    let first: String = row.try_get("first_name")?;
    let last: String = row.try_get("last_name")?;
    Ok(RecentContact {
        id: row.try_get("id")?,
        full_name: format!("{first} {last}").trim().to_owned(),
        email: row.try_get("email")?,
        status: row.try_get("status")?,
        created_at: Timestamp::from_millis(row.try_get("created_at")?),
        replied_at: row
            .try_get::<Option<i64>, _>("replied_at")?
            .map(Timestamp::from_millis),
        source: row.try_get("source")?,
    })
}

pub(super) async fn recent_results(conn: &mut AnyConnection) -> Result<Vec<RecentResult>> {
    Ok(sqlx::query_as(
        // The newest results first, then their users: joining before the LIMIT lets
        // SQLite's planner scan users and sort every result.
        "SELECT r.id, u.name AS user_name, u.email AS user_email, r.level, r.total_score,
                r.target_language, r.test_title, r.completed_at
         FROM (SELECT id, user_id, level, total_score, target_language, test_title, completed_at
               FROM test_results ORDER BY completed_at DESC, id DESC LIMIT $1) r
         JOIN users u ON u.id = r.user_id
         ORDER BY r.completed_at DESC, r.id DESC",
    )
    .bind(RECENT_ITEMS)
    .fetch_all(conn)
    .await?)
}
