//! The admin dashboard (CONTRACT §11): counts, rates, monthly trends, distributions and
//! recent activity over users, courses, placement results, contacts and materials.
//!
//! Every figure is computed in the database, never by loading rows, and costs about the
//! same at ten users as at a million results: whole-table counts, the level and language
//! distributions and the monthly trends are reads of the rollup tables that triggers keep
//! exact (migration 0060, [`rollups`]); the 30-day windows are whole days of those rollups
//! plus a range count of the partial day at each edge; the rest are counts of small tables
//! and the 5 newest rows by index. Month boundaries are computed here with chrono, so the
//! SQL never applies a date function to a row and is the same on SQLite and PostgreSQL.
//! The reads run in one read-only snapshot, so the figures agree with each other.
//! `docs/BENCHMARKS.md` records how long this takes at a million results.
//!
//! Definitions, where the contract leaves a choice:
//! * "Last 30 days" is `[now - 30 days, ...)` and "the 30 days before" is
//!   `[now - 60 days, now - 30 days)`, with `now` from the app clock.
//! * `monthlyGrowthRate` is `(last30 - previous30) / previous30 * 100`; like every rate it
//!   is 0 when its denominator (the previous window) is 0 (contract §11).
//! * Rates, percentages and averages are rounded to 2 decimals and are 0 when their
//!   denominator is 0. `avgAssignmentsPerUser` is assignments per user holding at least one
//!   assignment (`assignments / assignedUsers`).
//! * Roles and contact statuses list every value, zero counts included, in a fixed order;
//!   levels are ordered by key, languages by submissions (most first) then key. A result
//!   without a target language counts under `und` ("Undetermined").

mod calendar;
mod languages;
mod rollups;

pub use rollups::Drift;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use utoipa::{IntoParams, ToSchema};

use crate::Langcamp;
use crate::actor::{Actor, Role};
use crate::error::{Error, Result};
use crate::time::Timestamp;
use rollups::{DAY_MS, Days, Series, day_of};

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
    /// (0 when the earlier window had none).
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

/// Change from `previous` to `current` in percent; 0 when `previous` is 0, as every rate
/// whose denominator is 0 (contract §11).
fn growth(current: i64, previous: i64) -> f64 {
    percent(current - previous, previous)
}

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

/// The counts of [`PLAIN_COUNTS`].
struct PlainCounts {
    courses: i64,
    tests: i64,
    materials: i64,
    users_head_30: i64,
    users_head_60: i64,
    results_head_30: i64,
    results_head_60: i64,
    contacts_head_30: i64,
    assignments_head_30: i64,
}

async fn plain_counts(
    conn: &mut AnyConnection,
    since_30: i64,
    since_60: i64,
) -> Result<PlainCounts> {
    let row = sqlx::query(PLAIN_COUNTS)
        .bind(day_of(since_30))
        .bind(since_30)
        .bind(day_of(since_60))
        .bind(since_60)
        .fetch_one(conn)
        .await?;
    Ok(PlainCounts {
        courses: row.try_get("courses")?,
        tests: row.try_get("tests")?,
        materials: row.try_get("materials")?,
        users_head_30: row.try_get("users_head_30")?,
        users_head_60: row.try_get("users_head_60")?,
        results_head_30: row.try_get("results_head_30")?,
        results_head_60: row.try_get("results_head_60")?,
        contacts_head_30: row.try_get("contacts_head_30")?,
        assignments_head_30: row.try_get("assignments_head_30")?,
    })
}

/// Rows of `series` at or after `t`: the whole days from `t`'s day on, less the rows of
/// that day before `t` (`head`).
fn since(days: &Days, series: Series, t: i64, head: i64) -> i64 {
    days.sum(series, day_of(t), None) - head
}

/// Rows of `series` in `[from, to)`, each bound with the rows of its day before it.
fn between(
    days: &Days,
    series: Series,
    (from, from_head): (i64, i64),
    (to, to_head): (i64, i64),
) -> i64 {
    days.sum(series, day_of(from), Some(day_of(to))) - from_head + to_head
}

async fn recent_contacts(conn: &mut AnyConnection) -> Result<Vec<RecentContact>> {
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

async fn recent_results(conn: &mut AnyConnection) -> Result<Vec<RecentResult>> {
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
    .fetch_all(conn)
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
        let since_30 = now_ms - 30 * DAY_MS;
        let since_60 = now_ms - 60 * DAY_MS;
        let spans = calendar::months_ending_at(now, months)?;
        let first_month = spans.first().map_or(now_ms, |span| span.start_ms);

        // Six small reads, one after another in one snapshot, so the figures agree.
        let mut tx = self.db().begin_read().await?;
        let counts = rollups::counts(&mut tx).await?;
        let groups = rollups::result_groups(&mut tx).await?;
        let days = Days::load_from(&mut tx, first_month.min(day_of(since_60))).await?;
        let plain = plain_counts(&mut tx, since_30, since_60).await?;
        let recent_contacts = recent_contacts(&mut tx).await?;
        let recent_results = recent_results(&mut tx).await?;
        tx.commit().await?;
        let count = |name: &str| counts.get(name).copied().unwrap_or(0);

        // Users by role.
        let role_count = |role: Role| count(&format!("users.role.{}", role.as_str()));
        let users_total: i64 = Role::ALL.iter().map(|role| role_count(*role)).sum();
        let role_shares: Vec<Share> = Role::ALL
            .iter()
            .map(|role| {
                let count = role_count(*role);
                Share {
                    key: role.as_str().to_owned(),
                    label: role_label(*role).to_owned(),
                    count,
                    percentage: percent(count, users_total),
                }
            })
            .collect();
        let admins = role_count(Role::Admin) + role_count(Role::Superadmin);

        // Contacts by status.
        let status_count = |status: &str| count(&format!("contacts.status.{status}"));
        let contacts_total: i64 = CONTACT_STATUSES
            .iter()
            .map(|(key, _)| status_count(key))
            .sum();
        let status_shares: Vec<Share> = CONTACT_STATUSES
            .iter()
            .map(|(key, label)| {
                let count = status_count(key);
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
            let language = Some(group.language.trim())
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

        let trends = spans
            .iter()
            .map(|span| {
                let month = |series| days.sum(series, span.start_ms, Some(span.end_ms));
                TrendPoint {
                    month: span.key.clone(),
                    label: span.label.clone(),
                    users: month(Series::Users),
                    test_submissions: month(Series::Results),
                    contacts: month(Series::Contacts),
                    material_assignments: month(Series::Assignments),
                }
            })
            .collect();

        let window_30 = |series, head_30| since(&days, series, since_30, head_30);
        let window_60 = |series, head_30, head_60| {
            between(&days, series, (since_60, head_60), (since_30, head_30))
        };
        let users_new = window_30(Series::Users, plain.users_head_30);
        let users_previous = window_60(Series::Users, plain.users_head_30, plain.users_head_60);
        let results_new = window_30(Series::Results, plain.results_head_30);
        let results_previous = window_60(
            Series::Results,
            plain.results_head_30,
            plain.results_head_60,
        );
        let assignments = count("assignments");
        let assigned_users = count("assignments.holders");

        Ok(Dashboard {
            generated_at: Timestamp(now),
            months,
            overview: Overview {
                users: UserStats {
                    total: users_total,
                    admins,
                    registration_completed: count("users.completed"),
                    completion_rate: percent(count("users.completed"), users_total),
                    new_last30_days: users_new,
                    monthly_growth_rate: growth(users_new, users_previous),
                },
                courses: CourseStats {
                    total: plain.courses,
                },
                tests: TestStats {
                    total_tests: plain.tests,
                    total_submissions: all_results.count,
                    average_score: all_results.average(),
                    submissions_last30_days: results_new,
                    monthly_growth_rate: growth(results_new, results_previous),
                },
                contacts: ContactStats {
                    total: contacts_total,
                    pending: status_count("PENDING"),
                    replied: status_count("REPLIED"),
                    reply_rate: percent(status_count("REPLIED"), contacts_total),
                    new_last30_days: window_30(Series::Contacts, plain.contacts_head_30),
                },
                materials: MaterialStats {
                    total: plain.materials,
                    assignments,
                    assigned_users,
                    avg_assignments_per_user: ratio(assignments, assigned_users),
                    assignments_last30_days: window_30(
                        Series::Assignments,
                        plain.assignments_head_30,
                    ),
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
        assert_eq!(growth(3, 0), 0.0);
        assert_eq!(growth(0, 0), 0.0);
    }

    #[test]
    fn windows_add_whole_days_and_correct_for_the_partial_day_at_each_edge() {
        // Rows per day: day 0: 4, day 1: 2, day 2: 6, day 3: 1.
        let days = Days::from_rows(
            (0..4)
                .zip([4, 2, 6, 1])
                .map(|(d, n)| ("users".to_owned(), d * DAY_MS, n)),
        );
        let noon = |d: i64| d * DAY_MS + DAY_MS / 2;
        // Heads: 1 of day 1's 2 rows are before its noon, 5 of day 2's 6 before its noon.
        assert_eq!(since(&days, Series::Users, noon(1), 1), 1 + 6 + 1);
        assert_eq!(since(&days, Series::Users, 0, 0), 13);
        assert_eq!(
            between(&days, Series::Users, (noon(1), 1), (noon(2), 5)),
            1 + 5
        );
        assert_eq!(
            between(&days, Series::Users, (DAY_MS, 0), (3 * DAY_MS, 0)),
            8
        );
        assert_eq!(since(&days, Series::Results, 0, 0), 0);
    }
}
