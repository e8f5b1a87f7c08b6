//! The admin dashboard (CONTRACT §11): counts, rates, monthly trends, distributions and
//! recent activity over users, courses, placement results, contacts and materials.
//!
//! Every figure is computed by an aggregate query in the database, never by loading rows:
//! totals and windows are `COUNT(*)` over integer-time ranges on indexes, the level and
//! language distributions are one `GROUP BY` pass over a covering index (migration 0050),
//! and month boundaries are computed here in Rust with chrono, so the SQL never applies a
//! date function to a row and is the same on SQLite and PostgreSQL. The queries are
//! independent and run concurrently on the reader pool; each figure is exact as of its
//! query (a write committed during the call may be seen by some figures and not others).
//! `docs/BENCHMARKS.md` records how long this takes at a million results.
//!
//! Definitions, where the contract leaves a choice:
//! * "Last 30 days" is `[now - 30 days, ...)` and "the 30 days before" is
//!   `[now - 60 days, now - 30 days)`, with `now` from the app clock.
//! * `monthlyGrowthRate` is `(last30 - previous30) / previous30 * 100`; when the previous
//!   window is empty it is 100 if the last one is not, and 0 if both are empty.
//! * Rates, percentages and averages are rounded to 2 decimals and are 0 when their
//!   denominator is 0. `avgAssignmentsPerUser` is assignments per user holding at least one
//!   assignment (`assignments / assignedUsers`).
//! * Roles and contact statuses list every value, zero counts included, in a fixed order;
//!   levels are ordered by key, languages by submissions (most first) then key. A result
//!   without a target language counts under `und` ("Undetermined").

mod calendar;
mod languages;

use std::collections::BTreeMap;

use chrono::TimeDelta;
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyPool, Row};
use utoipa::{IntoParams, ToSchema};

use crate::Langcamp;
use crate::actor::{Actor, Role};
use crate::error::{Error, Result};
use crate::time::Timestamp;

/// Months in `trends` when the query names none.
pub const DEFAULT_MONTHS: u32 = 6;
/// The most months `trends` may cover.
pub const MAX_MONTHS: u32 = 24;
/// Items in each list of `recentActivity`.
pub const RECENT_ITEMS: i64 = 5;

const CONTACT_STATUSES: [(&str, &str); 4] = [
    ("PENDING", "Pending"),
    ("IN_PROGRESS", "In progress"),
    ("REPLIED", "Replied"),
    ("CLOSED", "Closed"),
];

/// Query of `GET /admin/dashboard`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct DashboardQuery {
    /// Calendar months covered by `trends`, ending with the current one: 1 to 24, default 6.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 24, example = 6)]
    pub months: Option<String>,
}

impl DashboardQuery {
    /// A query for `months` months (tools that have a number already).
    pub fn months(months: u32) -> DashboardQuery {
        DashboardQuery {
            months: Some(months.to_string()),
        }
    }
}

fn parse_months(raw: Option<&str>) -> Result<u32> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_MONTHS);
    };
    match raw.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_MONTHS).contains(&n) => Ok(n),
        _ => Err(Error::invalid(format!(
            "months must be a whole number from 1 to {MAX_MONTHS}"
        ))),
    }
}

/// `data` of `GET /admin/dashboard`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Dashboard {
    /// When the statistics were computed (the app clock).
    pub generated_at: Timestamp,
    /// Number of months covered by `trends`.
    #[schema(example = 6)]
    pub months: u32,
    pub overview: Overview,
    /// One entry per calendar month (UTC), oldest first, ending with the current month.
    pub trends: Vec<TrendPoint>,
    pub distributions: Distributions,
    pub recent_activity: RecentActivity,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub users: UserStats,
    pub courses: CourseStats,
    pub tests: TestStats,
    pub contacts: ContactStats,
    pub materials: MaterialStats,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserStats {
    pub total: i64,
    /// Admins and superadmins.
    pub admins: i64,
    pub registration_completed: i64,
    /// `registrationCompleted / total` in percent, 2 decimals; 0 without users.
    #[schema(example = 66.67)]
    pub completion_rate: f64,
    /// Users created in the last 30 days.
    pub new_last30_days: i64,
    /// Change of new users in the last 30 days against the 30 days before, in percent
    /// (100 when the earlier window had none and the last one has some).
    #[schema(example = 12.5)]
    pub monthly_growth_rate: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CourseStats {
    pub total: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestStats {
    /// Placement tests that exist now.
    pub total_tests: i64,
    /// Results ever submitted (of existing and deleted tests).
    pub total_submissions: i64,
    /// Mean `totalScore` of all results in points, 2 decimals; 0 without results.
    #[schema(example = 14.33)]
    pub average_score: f64,
    pub submissions_last30_days: i64,
    /// Change of submissions in the last 30 days against the 30 days before, in percent.
    pub monthly_growth_rate: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactStats {
    pub total: i64,
    /// Status `PENDING`.
    pub pending: i64,
    /// Status `REPLIED`.
    pub replied: i64,
    /// `replied / total` in percent, 2 decimals; 0 without contacts.
    pub reply_rate: f64,
    pub new_last30_days: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaterialStats {
    /// Education materials.
    pub total: i64,
    /// Material assignments.
    pub assignments: i64,
    /// Users holding at least one assignment.
    pub assigned_users: i64,
    /// `assignments / assignedUsers`, 2 decimals; 0 without assignments.
    #[schema(example = 1.25)]
    pub avg_assignments_per_user: f64,
    pub assignments_last30_days: i64,
}

/// Counts of one calendar month (UTC).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrendPoint {
    /// `YYYY-MM`.
    #[schema(example = "2026-11")]
    pub month: String,
    #[schema(example = "Nov 2026")]
    pub label: String,
    /// Users created in the month.
    pub users: i64,
    /// Placement results completed in the month.
    pub test_submissions: i64,
    /// Contact requests received in the month.
    pub contacts: i64,
    /// Materials assigned in the month.
    pub material_assignments: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Distributions {
    /// Users by role: `user`, `admin`, `superadmin`.
    pub roles: Vec<Share>,
    /// Contacts by status: `PENDING`, `IN_PROGRESS`, `REPLIED`, `CLOSED`.
    pub contacts_by_status: Vec<Share>,
    /// Results by level, over all results, ordered by level.
    pub levels: Vec<LevelShare>,
    /// Results by the test's target language, most submissions first.
    pub languages: Vec<LanguageShare>,
}

/// A part of a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    /// The stored value, such as `admin` or `PENDING`.
    #[schema(example = "PENDING")]
    pub key: String,
    #[schema(example = "Pending")]
    pub label: String,
    pub count: i64,
    /// Percent of the whole, 2 decimals; 0 when the whole is 0.
    #[schema(example = 33.33)]
    pub percentage: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LevelShare {
    /// The stored level, such as `B1`.
    #[schema(example = "B1")]
    pub key: String,
    /// The level itself.
    #[schema(example = "B1")]
    pub label: String,
    pub count: i64,
    /// Percent of all results, 2 decimals.
    pub percentage: f64,
    /// Mean `totalScore` in points, 2 decimals.
    pub average_score: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LanguageShare {
    /// The stored language code, such as `de`; `und` for results without one.
    #[schema(example = "de")]
    pub key: String,
    /// The language's English name; an unknown code is labelled with the code.
    #[schema(example = "German")]
    pub label: String,
    pub submissions: i64,
    /// Mean `totalScore` in points, 2 decimals.
    pub average_score: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentActivity {
    /// The 5 newest contact requests, newest first.
    pub contacts: Vec<RecentContact>,
    /// The 5 newest placement results, newest first.
    pub test_results: Vec<RecentResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentContact {
    pub id: String,
    /// First and last name.
    #[schema(example = "Ana Silva")]
    pub full_name: String,
    pub email: String,
    #[schema(example = "PENDING")]
    pub status: String,
    pub created_at: Timestamp,
    pub replied_at: Option<Timestamp>,
    pub source: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecentResult {
    pub id: String,
    /// Null while the user has not completed registration.
    pub user_name: Option<String>,
    pub user_email: String,
    #[schema(example = "B1")]
    pub level: String,
    pub total_score: i64,
    /// Null when the test named no language.
    #[schema(example = "de")]
    pub target_language: Option<String>,
    pub test_title: String,
    pub completed_at: Timestamp,
}

/// Percent `part / whole`, 2 decimals; 0 when `whole` is 0.
fn percent(part: i64, whole: i64) -> f64 {
    ratio(part.saturating_mul(100), whole)
}

/// `numerator / denominator`, 2 decimals; 0 when the denominator is 0.
fn ratio(numerator: i64, denominator: i64) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        round2(numerator as f64 / denominator as f64)
    }
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Change from `previous` to `current` in percent; 100 from nothing to something.
fn growth(current: i64, previous: i64) -> f64 {
    match (previous, current) {
        (0, 0) => 0.0,
        (0, _) => 100.0,
        _ => percent(current - previous, previous),
    }
}

/// Counts of the window of 30 days and the one before, and totals that are plain counts.
const OVERVIEW: &str = "SELECT
    (SELECT COUNT(*) FROM users WHERE is_registration_complete = 1) AS users_completed,
    (SELECT COUNT(*) FROM users WHERE created_at >= $1) AS users_new,
    (SELECT COUNT(*) FROM users WHERE created_at >= $2 AND created_at < $1) AS users_previous,
    (SELECT COUNT(*) FROM courses) AS courses,
    (SELECT COUNT(*) FROM proficiency_tests) AS tests,
    (SELECT COUNT(*) FROM test_results WHERE completed_at >= $1) AS results_new,
    (SELECT COUNT(*) FROM test_results WHERE completed_at >= $2 AND completed_at < $1) AS results_previous,
    (SELECT COUNT(*) FROM contacts WHERE created_at >= $1) AS contacts_new,
    (SELECT COUNT(*) FROM education_materials) AS materials,
    (SELECT COUNT(*) FROM material_assignments) AS assignments,
    (SELECT COUNT(*) FROM material_assignments WHERE assigned_at >= $1) AS assignments_new";

/// One `COUNT(*)` of rows whose time is in `[$lo, $hi)`.
macro_rules! month_count {
    ($table:literal, $column:literal, $lo:literal, $hi:literal) => {
        concat!(
            "(SELECT COUNT(*) FROM ",
            $table,
            " WHERE ",
            $column,
            " >= $",
            $lo,
            " AND ",
            $column,
            " < $",
            $hi,
            ")"
        )
    };
}

/// One row of [`MAX_MONTHS`] counts of `table` by `column` between the 25 boundaries
/// `$1..$25`; unused months get empty ranges (`$k = $k+1`).
macro_rules! monthly_counts {
    ($table:literal, $column:literal) => {
        concat!(
            "SELECT ",
            month_count!($table, $column, 1, 2),
            ", ",
            month_count!($table, $column, 2, 3),
            ", ",
            month_count!($table, $column, 3, 4),
            ", ",
            month_count!($table, $column, 4, 5),
            ", ",
            month_count!($table, $column, 5, 6),
            ", ",
            month_count!($table, $column, 6, 7),
            ", ",
            month_count!($table, $column, 7, 8),
            ", ",
            month_count!($table, $column, 8, 9),
            ", ",
            month_count!($table, $column, 9, 10),
            ", ",
            month_count!($table, $column, 10, 11),
            ", ",
            month_count!($table, $column, 11, 12),
            ", ",
            month_count!($table, $column, 12, 13),
            ", ",
            month_count!($table, $column, 13, 14),
            ", ",
            month_count!($table, $column, 14, 15),
            ", ",
            month_count!($table, $column, 15, 16),
            ", ",
            month_count!($table, $column, 16, 17),
            ", ",
            month_count!($table, $column, 17, 18),
            ", ",
            month_count!($table, $column, 18, 19),
            ", ",
            month_count!($table, $column, 19, 20),
            ", ",
            month_count!($table, $column, 20, 21),
            ", ",
            month_count!($table, $column, 21, 22),
            ", ",
            month_count!($table, $column, 22, 23),
            ", ",
            month_count!($table, $column, 23, 24),
            ", ",
            month_count!($table, $column, 24, 25)
        )
    };
}

const USERS_BY_MONTH: &str = monthly_counts!("users", "created_at");
const RESULTS_BY_MONTH: &str = monthly_counts!("test_results", "completed_at");
const CONTACTS_BY_MONTH: &str = monthly_counts!("contacts", "created_at");
const ASSIGNMENTS_BY_MONTH: &str = monthly_counts!("material_assignments", "assigned_at");

/// Counts of each month of `bounds` (25 boundaries, see [`monthly_counts`]).
async fn monthly(pool: &AnyPool, sql: &'static str, bounds: &[i64]) -> Result<[i64; 24]> {
    let mut query = sqlx::query(sql);
    for bound in bounds {
        query = query.bind(*bound);
    }
    let row = query.fetch_one(pool).await?;
    let mut counts = [0i64; MAX_MONTHS as usize];
    for (i, count) in counts.iter_mut().enumerate() {
        *count = row.try_get(i)?;
    }
    Ok(counts)
}

/// `(key, count)` of a `GROUP BY`.
async fn grouped(pool: &AnyPool, sql: &'static str) -> Result<Vec<(String, i64)>> {
    let rows = sqlx::query(sql).fetch_all(pool).await?;
    rows.iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect()
}

/// Count and total score of the results of one level and language.
struct ResultGroup {
    level: String,
    language: Option<String>,
    count: i64,
    score: i64,
}

async fn result_groups(pool: &AnyPool) -> Result<Vec<ResultGroup>> {
    let rows = sqlx::query(
        "SELECT level, target_language, COUNT(*) AS n, CAST(SUM(total_score) AS BIGINT) AS score
         FROM test_results GROUP BY level, target_language",
    )
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ResultGroup {
                level: row.try_get("level")?,
                language: row.try_get("target_language")?,
                count: row.try_get("n")?,
                score: row.try_get::<Option<i64>, _>("score")?.unwrap_or(0),
            })
        })
        .collect()
}

async fn assigned_users(pool: &AnyPool) -> Result<i64> {
    Ok(
        // Grouping, not COUNT(DISTINCT): SQLite walks the user_id index in order and
        // PostgreSQL hashes instead of sorting every id under the collation.
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM (SELECT user_id FROM material_assignments GROUP BY user_id) holders",
        )
            .fetch_one(pool)
            .await?,
    )
}

async fn recent_contacts(pool: &AnyPool) -> Result<Vec<RecentContact>> {
    let rows = sqlx::query(
        "SELECT id, first_name, last_name, email, status, source, created_at, replied_at
         FROM contacts ORDER BY created_at DESC, id DESC LIMIT $1",
    )
    .bind(RECENT_ITEMS)
    .fetch_all(pool)
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

async fn recent_results(pool: &AnyPool) -> Result<Vec<RecentResult>> {
    let rows = sqlx::query(
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
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(RecentResult {
                id: row.try_get("id")?,
                user_name: row.try_get("user_name")?,
                user_email: row.try_get("user_email")?,
                level: row.try_get("level")?,
                total_score: row.try_get("total_score")?,
                target_language: row.try_get("target_language")?,
                test_title: row.try_get("test_title")?,
                completed_at: Timestamp::from_millis(row.try_get("completed_at")?),
            })
        })
        .collect()
}

/// The plain counts of [`OVERVIEW`].
struct Counts {
    users_completed: i64,
    users_new: i64,
    users_previous: i64,
    courses: i64,
    tests: i64,
    results_new: i64,
    results_previous: i64,
    contacts_new: i64,
    materials: i64,
    assignments: i64,
    assignments_new: i64,
}

async fn counts(pool: &AnyPool, since_30: i64, since_60: i64) -> Result<Counts> {
    let row = sqlx::query(OVERVIEW)
        .bind(since_30)
        .bind(since_60)
        .fetch_one(pool)
        .await?;
    Ok(Counts {
        users_completed: row.try_get("users_completed")?,
        users_new: row.try_get("users_new")?,
        users_previous: row.try_get("users_previous")?,
        courses: row.try_get("courses")?,
        tests: row.try_get("tests")?,
        results_new: row.try_get("results_new")?,
        results_previous: row.try_get("results_previous")?,
        contacts_new: row.try_get("contacts_new")?,
        materials: row.try_get("materials")?,
        assignments: row.try_get("assignments")?,
        assignments_new: row.try_get("assignments_new")?,
    })
}

/// Count and score sum per key, ordered by key.
#[derive(Default)]
struct Tally {
    count: i64,
    score: i64,
}

impl Tally {
    fn average(&self) -> f64 {
        ratio(self.score, self.count)
    }
}

impl Langcamp {
    /// `GET /admin/dashboard`: statistics for admins (see the module documentation).
    #[tracing::instrument(skip_all)]
    pub async fn dashboard(&self, actor: &Actor, query: &DashboardQuery) -> Result<Dashboard> {
        actor.require(Role::Admin)?;
        let months = parse_months(query.months.as_deref())?;
        let now = self.clock().now();
        let now_ms = now.timestamp_millis();
        let day_ms = TimeDelta::days(1).num_milliseconds();
        let since_30 = now_ms - 30 * day_ms;
        let since_60 = now_ms - 60 * day_ms;

        let spans = calendar::months_ending_at(now, months)?;
        let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
            return Err(Error::internal("no months to report"));
        };
        // 25 boundaries: the unused leading months are empty ranges at the first start.
        let unused = MAX_MONTHS as usize - spans.len();
        let bounds: Vec<i64> = std::iter::repeat_n(first.start_ms, unused)
            .chain(spans.iter().map(|s| s.start_ms))
            .chain(std::iter::once(last.end_ms))
            .collect();

        let pool = self.db().reader();
        let (
            counts,
            roles,
            statuses,
            groups,
            assigned_users,
            users_by_month,
            results_by_month,
            contacts_by_month,
            assignments_by_month,
            recent_contacts,
            recent_results,
        ) = tokio::try_join!(
            counts(pool, since_30, since_60),
            grouped(pool, "SELECT role, COUNT(*) FROM users GROUP BY role"),
            grouped(
                pool,
                "SELECT status, COUNT(*) FROM contacts GROUP BY status"
            ),
            result_groups(pool),
            assigned_users(pool),
            monthly(pool, USERS_BY_MONTH, &bounds),
            monthly(pool, RESULTS_BY_MONTH, &bounds),
            monthly(pool, CONTACTS_BY_MONTH, &bounds),
            monthly(pool, ASSIGNMENTS_BY_MONTH, &bounds),
            recent_contacts(pool),
            recent_results(pool),
        )?;

        // Users by role.
        let count_of = |groups: &[(String, i64)], key: &str| {
            groups
                .iter()
                .filter(|(k, _)| k == key)
                .map(|(_, n)| n)
                .sum::<i64>()
        };
        let users_total: i64 = roles.iter().map(|(_, n)| n).sum();
        let role_shares: Vec<Share> = Role::ALL
            .iter()
            .map(|role| {
                let count = count_of(&roles, role.as_str());
                Share {
                    key: role.as_str().to_owned(),
                    label: role_label(*role).to_owned(),
                    count,
                    percentage: percent(count, users_total),
                }
            })
            .collect();
        let admins =
            count_of(&roles, Role::Admin.as_str()) + count_of(&roles, Role::Superadmin.as_str());

        // Contacts by status.
        let contacts_total: i64 = statuses.iter().map(|(_, n)| n).sum();
        let status_shares: Vec<Share> = CONTACT_STATUSES
            .iter()
            .map(|(key, label)| {
                let count = count_of(&statuses, key);
                Share {
                    key: (*key).to_owned(),
                    label: (*label).to_owned(),
                    count,
                    percentage: percent(count, contacts_total),
                }
            })
            .collect();

        // Results by level and by language, from the one grouped pass.
        let mut levels: BTreeMap<String, Tally> = BTreeMap::new();
        let mut languages: BTreeMap<String, Tally> = BTreeMap::new();
        let mut all_results = Tally::default();
        for group in &groups {
            let language = group
                .language
                .as_deref()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .unwrap_or(languages::UNDETERMINED);
            for tally in [
                levels.entry(group.level.clone()).or_default(),
                languages.entry(language.to_owned()).or_default(),
                &mut all_results,
            ] {
                tally.count += group.count;
                tally.score += group.score;
            }
        }
        let level_shares = levels
            .iter()
            .map(|(key, tally)| LevelShare {
                key: key.clone(),
                label: key.clone(),
                count: tally.count,
                percentage: percent(tally.count, all_results.count),
                average_score: tally.average(),
            })
            .collect();
        let mut language_shares: Vec<LanguageShare> = languages
            .iter()
            .map(|(key, tally)| LanguageShare {
                key: key.clone(),
                label: languages::label(key),
                submissions: tally.count,
                average_score: tally.average(),
            })
            .collect();
        // Stable: equal counts keep the key order.
        language_shares.sort_by_key(|share| std::cmp::Reverse(share.submissions));

        let skip = unused;
        let trends = spans
            .iter()
            .enumerate()
            .map(|(i, span)| TrendPoint {
                month: span.key.clone(),
                label: span.label.clone(),
                users: users_by_month[skip + i],
                test_submissions: results_by_month[skip + i],
                contacts: contacts_by_month[skip + i],
                material_assignments: assignments_by_month[skip + i],
            })
            .collect();

        Ok(Dashboard {
            generated_at: Timestamp(now),
            months,
            overview: Overview {
                users: UserStats {
                    total: users_total,
                    admins,
                    registration_completed: counts.users_completed,
                    completion_rate: percent(counts.users_completed, users_total),
                    new_last30_days: counts.users_new,
                    monthly_growth_rate: growth(counts.users_new, counts.users_previous),
                },
                courses: CourseStats {
                    total: counts.courses,
                },
                tests: TestStats {
                    total_tests: counts.tests,
                    total_submissions: all_results.count,
                    average_score: all_results.average(),
                    submissions_last30_days: counts.results_new,
                    monthly_growth_rate: growth(counts.results_new, counts.results_previous),
                },
                contacts: ContactStats {
                    total: contacts_total,
                    pending: count_of(&statuses, "PENDING"),
                    replied: count_of(&statuses, "REPLIED"),
                    reply_rate: percent(count_of(&statuses, "REPLIED"), contacts_total),
                    new_last30_days: counts.contacts_new,
                },
                materials: MaterialStats {
                    total: counts.materials,
                    assignments: counts.assignments,
                    assigned_users,
                    avg_assignments_per_user: ratio(counts.assignments, assigned_users),
                    assignments_last30_days: counts.assignments_new,
                },
            },
            trends,
            distributions: Distributions {
                roles: role_shares,
                contacts_by_status: status_shares,
                levels: level_shares,
                languages: language_shares,
            },
            recent_activity: RecentActivity {
                contacts: recent_contacts,
                test_results: recent_results,
            },
        })
    }
}

fn role_label(role: Role) -> &'static str {
    match role {
        Role::User => "User",
        Role::Admin => "Admin",
        Role::Superadmin => "Superadmin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_default_to_six_and_accept_one_to_twenty_four() {
        assert_eq!(parse_months(None).ok(), Some(6));
        assert_eq!(parse_months(Some("1")).ok(), Some(1));
        assert_eq!(parse_months(Some(" 24 ")).ok(), Some(24));
        for bad in ["0", "25", "-1", "abc", "", "6.5", "99999999999"] {
            assert!(
                matches!(parse_months(Some(bad)), Err(Error::Validation(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn percentages_round_to_two_decimals_and_are_zero_without_a_whole() {
        assert_eq!(percent(1, 3), 33.33);
        assert_eq!(percent(2, 3), 66.67);
        assert_eq!(percent(7, 10), 70.0);
        assert_eq!(percent(5, 0), 0.0);
        assert_eq!(ratio(41, 3), 13.67);
        assert_eq!(ratio(5, 4), 1.25);
        assert_eq!(ratio(5, 0), 0.0);
    }

    #[test]
    fn growth_is_relative_to_the_earlier_window() {
        assert_eq!(growth(5, 2), 150.0);
        assert_eq!(growth(1, 4), -75.0);
        assert_eq!(growth(3, 3), 0.0);
        assert_eq!(growth(3, 0), 100.0);
        assert_eq!(growth(0, 0), 0.0);
    }

    #[test]
    fn the_monthly_query_has_twenty_four_counts_over_twenty_five_boundaries() {
        assert_eq!(USERS_BY_MONTH.matches("COUNT(*)").count(), 24);
        assert!(USERS_BY_MONTH.contains("created_at >= $24 AND created_at < $25"));
        assert!(!USERS_BY_MONTH.contains("$26"));
    }
}
