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
//!
//! Here: the operations and the figures they answer; [`input`] holds the query, `figures`
//! the arithmetic of rates and windows, `store` the SQL of the plain counts and the recent
//! activity (the rollups' SQL is in [`rollups`]).

mod calendar;
mod figures;
mod input;
mod languages;
mod rollups;
mod store;

pub use input::{DashboardQuery, TrendMonths};
pub use rollups::Drift;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Langcamp;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::Result;
use crate::domain::time::Timestamp;
use figures::{Tally, between, growth, percent, ratio, since};
use rollups::{DAY_MS, Days, Series, day_of};
use store::{plain_counts, recent_contacts, recent_results};

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema, sqlx::FromRow)]
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
    #[sqlx(try_from = "i64")]
    pub completed_at: Timestamp,
}

/// The counts of `store::PLAIN_COUNTS`, by column name.
#[derive(sqlx::FromRow)]
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

impl Langcamp {
    /// `GET /admin/dashboard`: statistics for admins (see the module documentation).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn dashboard(&self, actor: &Actor, months: TrendMonths) -> Result<Dashboard> {
        actor.require(Role::Admin)?;
        let months = months.get();
        let now = self.clock().now();
        let now_ms = now.timestamp_millis();
        let since_30 = now_ms - 30 * DAY_MS;
        let since_60 = now_ms - 60 * DAY_MS;
        let spans = calendar::months_ending_at(now, months)?;
        let first_month = spans.first().map_or(now_ms, |span| span.start_ms);

        // Six small reads, one after another in one snapshot, so the figures agree.
        let mut tx = self.db().read_snapshot().await?;
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
