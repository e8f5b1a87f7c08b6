//! The dashboard's rollup tables (migration 0060): how the dashboard reads them, and the
//! recounts that check and rebuild them.
//!
//! Database triggers keep them exact in the same transaction as every insert, update and
//! delete of the rows they count, cascades included; the migration files say how, and
//! what that means for concurrent writers on PostgreSQL. A figure that is a sum over a
//! whole table is
//! then a read of a few hundred rows instead of a pass over a million:
//! * `stats_counts`: named whole-table counts (`users.role.<role>`, `users.completed`,
//!   `contacts.status.<status>`, `assignments`, `assignments.holders`);
//! * `stats_results`: results and their score sum by level and target language;
//! * `stats_days`: rows per UTC day of each [`Series`];
//! * `stats_holdings`: assignments per user holding any (what `assignments.holders`
//!   counts, kept so that a trigger knows when a user's first or last one comes or goes);
//! * `stats_result_tests` (migration 0150): results by test, level and target language,
//!   and `stats_audit_days`: audit entries per day and action, the admin lists' totals
//!   (with `users.role.<role>.completed` in `stats_counts`).
//!
//! On PostgreSQL a count is kept in up to 8 rows (shards, migration 0080), so that
//! concurrent writers rarely wait for each other's row; every read here sums them there.
//! SQLite keeps one row per count (its writer is alone), and the dashboard's reads take the
//! rows as they are (summing cost it 70 % more on `stats_days`).
//!
//! A row that a recount would not produce (a level whose results were all deleted) stays
//! with zeros: the distributions skip such rows, a zero adds nothing to a sum, and the
//! check treats a zero row and no row alike.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe, Row};

use crate::Langcamp;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::Result;
use crate::platform::db::{Backend, Locks, backend_of};
use crate::platform::progress::{Progress, Silent};

/// Milliseconds in a UTC day, the width of a `stats_days` bucket.
pub(super) const DAY_MS: i64 = 86_400_000;

/// The start of the UTC day of `ms`, as the triggers compute it (`t - t % day`).
pub(super) fn day_of(ms: i64) -> i64 {
    ms - ms % DAY_MS
}

/// A series of `stats_days`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Series {
    /// Users by `created_at`.
    Users,
    /// Placement results by `completed_at`.
    Results,
    /// Contact requests by `created_at`.
    Contacts,
    /// Material assignments by `assigned_at`.
    Assignments,
}

impl Series {
    fn key(self) -> &'static str {
        match self {
            Series::Users => "users",
            Series::Results => "results",
            Series::Contacts => "contacts",
            Series::Assignments => "assignments",
        }
    }
}

/// The rows of `stats_days` from one day on, by series and day.
pub(super) struct Days(HashMap<String, BTreeMap<i64, i64>>);

impl Days {
    pub(super) async fn load_from(conn: &mut AnyConnection, first_day: i64) -> Result<Days> {
        let sql = match backend_of(conn) {
            // One row per day and series: nothing to sum.
            Backend::Sqlite => "SELECT day, series, n FROM stats_days WHERE day >= $1",
            Backend::Postgres => {
                "SELECT day, series, CAST(SUM(n) AS BIGINT) AS n FROM stats_days WHERE day >= $1
                 GROUP BY day, series"
            }
        };
        let rows = sqlx::query(sql).bind(first_day).fetch_all(conn).await?;
        let rows = rows
            .iter()
            .map(|row| {
                Ok((
                    row.try_get("series")?,
                    row.try_get("day")?,
                    row.try_get("n")?,
                ))
            })
            .collect::<Result<Vec<(String, i64, i64)>>>()?;
        Ok(Days::from_rows(rows))
    }

    /// From `(series, day, n)` rows.
    pub(super) fn from_rows(rows: impl IntoIterator<Item = (String, i64, i64)>) -> Days {
        let mut days: HashMap<String, BTreeMap<i64, i64>> = HashMap::new();
        for (series, day, n) in rows {
            days.entry(series).or_default().insert(day, n);
        }
        Days(days)
    }

    /// Rows of `series` on the days starting in `[from, to)`; `to: None` has no end.
    pub(super) fn sum(&self, series: Series, from: i64, to: Option<i64>) -> i64 {
        let Some(days) = self.0.get(series.key()) else {
            return 0;
        };
        match to {
            Some(to) if to <= from => 0,
            Some(to) => days.range(from..to).map(|(_, n)| n).sum(),
            None => days.range(from..).map(|(_, n)| n).sum(),
        }
    }
}

/// Every row of `stats_counts`, by name.
pub(super) async fn counts(conn: &mut AnyConnection) -> Result<HashMap<String, i64>> {
    let sql = match backend_of(conn) {
        Backend::Sqlite => "SELECT name, n FROM stats_counts",
        Backend::Postgres => {
            "SELECT name, CAST(SUM(n) AS BIGINT) AS n FROM stats_counts GROUP BY name"
        }
    };
    let rows = sqlx::query(sql).fetch_all(conn).await?;
    rows.iter()
        .map(|row| Ok((row.try_get("name")?, row.try_get("n")?)))
        .collect()
}

/// Count and total score of the results of one level and language.
#[derive(sqlx::FromRow)]
pub(super) struct ResultGroup {
    pub level: String,
    /// `""` when the test named no language.
    #[sqlx(rename = "target_language")]
    pub language: String,
    #[sqlx(rename = "submissions")]
    pub count: i64,
    #[sqlx(rename = "score_sum")]
    pub score: i64,
}

pub(super) async fn result_groups(conn: &mut AnyConnection) -> Result<Vec<ResultGroup>> {
    let sql = match backend_of(conn) {
        Backend::Sqlite => {
            "SELECT level, target_language, submissions, score_sum FROM stats_results
             WHERE submissions <> 0"
        }
        Backend::Postgres => {
            "SELECT level, target_language, CAST(SUM(submissions) AS BIGINT) AS submissions,
                    CAST(SUM(score_sum) AS BIGINT) AS score_sum
             FROM stats_results GROUP BY level, target_language HAVING SUM(submissions) <> 0"
        }
    };
    Ok(sqlx::query_as(sql).fetch_all(conn).await?)
}

/// One rollup table, and the statements that recount its rows from the rows it counts.
struct Rollup {
    table: &'static str,
    /// The columns of an `INSERT`, in the order each recount selects them.
    columns: &'static str,
    /// The columns that identify a row, as texts.
    key: &'static str,
    /// The counted values.
    values: &'static str,
    /// `SELECT`s naming their columns as the table does; together, every row the table
    /// should hold. The same statements fill the tables in migration 0060.
    recounts: &'static [&'static str],
}

const ROLLUPS: [Rollup; 6] = [
    Rollup {
        table: "stats_counts",
        columns: "name, n",
        key: "name",
        values: "n",
        recounts: &[
            "SELECT 'users.role.' || role AS name, COUNT(*) AS n FROM users GROUP BY role",
            "SELECT 'users.completed' AS name, COUNT(*) AS n FROM users
             WHERE is_registration_complete = 1",
            "SELECT 'users.role.' || role || '.completed' AS name, COUNT(*) AS n FROM users
             WHERE is_registration_complete = 1 GROUP BY role",
            "SELECT 'contacts.status.' || status AS name, COUNT(*) AS n FROM contacts
             GROUP BY status",
            "SELECT 'assignments' AS name, COUNT(*) AS n FROM material_assignments",
            "SELECT 'assignments.holders' AS name, COUNT(*) AS n
             FROM (SELECT user_id FROM material_assignments GROUP BY user_id) holders",
        ],
    },
    Rollup {
        table: "stats_holdings",
        columns: "user_id, n",
        key: "user_id",
        values: "n",
        recounts: &[
            "SELECT user_id, COUNT(*) AS n FROM material_assignments GROUP BY user_id",
        ],
    },
    Rollup {
        table: "stats_results",
        columns: "level, target_language, submissions, score_sum",
        key: "level, target_language",
        values: "submissions, score_sum",
        recounts: &["SELECT level, COALESCE(target_language, '') AS target_language,
                    COUNT(*) AS submissions, CAST(SUM(total_score) AS BIGINT) AS score_sum
             FROM test_results GROUP BY level, COALESCE(target_language, '')"],
    },
    Rollup {
        table: "stats_result_tests",
        columns: "level, test_id, target_language, n",
        key: "test_id, level, target_language",
        values: "n",
        recounts: &["SELECT level, COALESCE(test_id, '') AS test_id,
                    COALESCE(target_language, '') AS target_language, COUNT(*) AS n
             FROM test_results
             GROUP BY level, COALESCE(test_id, ''), COALESCE(target_language, '')"],
    },
    Rollup {
        table: "stats_audit_days",
        columns: "action, day, n",
        key: "action, CAST(day AS TEXT)",
        values: "n",
        recounts: &["SELECT action, at - at % 86400000 AS day, COUNT(*) AS n
             FROM audit_events GROUP BY action, at - at % 86400000"],
    },
    Rollup {
        table: "stats_days",
        columns: "day, series, n",
        key: "series, CAST(day AS TEXT)",
        values: "n",
        recounts: &[
            "SELECT created_at - created_at % 86400000 AS day, 'users' AS series, COUNT(*) AS n
             FROM users GROUP BY created_at - created_at % 86400000",
            "SELECT completed_at - completed_at % 86400000 AS day, 'results' AS series, COUNT(*) AS n
             FROM test_results GROUP BY completed_at - completed_at % 86400000",
            "SELECT created_at - created_at % 86400000 AS day, 'contacts' AS series, COUNT(*) AS n
             FROM contacts GROUP BY created_at - created_at % 86400000",
            "SELECT assigned_at - assigned_at % 86400000 AS day, 'assignments' AS series, COUNT(*) AS n
             FROM material_assignments GROUP BY assigned_at - assigned_at % 86400000",
        ],
    },
];

/// A rollup row that differs from the recount of the rows it counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drift {
    pub table: &'static str,
    /// The row's key, such as `users.role.admin`, `B1/de` or `results/1763769600000`.
    pub key: String,
    /// The values the table holds (zeros for a missing row).
    pub stored: Vec<i64>,
    /// The values a recount gives (zeros when it gives no row).
    pub recounted: Vec<i64>,
}

/// `key -> values` of rows, without the all-zero ones (the same as no row).
type Rows = BTreeMap<Vec<String>, Vec<i64>>;

/// Reads rows whose first `keys` columns are texts and the `values` after them numbers.
async fn keyed_rows(
    conn: &mut AnyConnection,
    sql: String,
    (keys, values): (usize, usize),
    into: &mut Rows,
) -> Result<()> {
    let rows: Vec<AnyRow> = sqlx::query(AssertSqlSafe(sql)).fetch_all(conn).await?;
    for row in &rows {
        let numbers = (keys..keys + values)
            .map(|i| row.try_get::<i64, _>(i))
            .collect::<std::result::Result<Vec<i64>, _>>()?;
        if numbers.iter().any(|v| *v != 0) {
            let key = (0..keys)
                .map(|i| row.try_get::<String, _>(i))
                .collect::<std::result::Result<Vec<String>, _>>()?;
            into.insert(key, numbers);
        }
    }
    Ok(())
}

/// Every difference between the rollups and a recount, read in `conn`'s transaction;
/// `progress` advances by one for each rollup table compared.
async fn drift(conn: &mut AnyConnection, progress: &dyn Progress) -> Result<Vec<Drift>> {
    let mut drift = Vec::new();
    for rollup in &ROLLUPS {
        let shape = (
            rollup.key.split(',').count(),
            rollup.values.split(',').count(),
        );
        let mut stored = Rows::new();
        // PostgreSQL keeps a count in several rows (shards, migration 0080): their sum.
        let sums = rollup
            .values
            .split(", ")
            .map(|value| format!("CAST(SUM({value}) AS BIGINT)"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT {key}, {sums} FROM {} GROUP BY {key}",
            rollup.table,
            key = rollup.key
        );
        keyed_rows(conn, sql, shape, &mut stored).await?;
        let mut recounted = Rows::new();
        for recount in rollup.recounts {
            let sql = format!(
                "SELECT {}, {} FROM ({recount}) recount",
                rollup.key, rollup.values
            );
            keyed_rows(conn, sql, shape, &mut recounted).await?;
        }
        let zeros = vec![0; shape.1];
        let keys: std::collections::BTreeSet<&Vec<String>> =
            stored.keys().chain(recounted.keys()).collect();
        for key in keys {
            let (s, r) = (
                stored.get(key).unwrap_or(&zeros),
                recounted.get(key).unwrap_or(&zeros),
            );
            if s != r {
                drift.push(Drift {
                    table: rollup.table,
                    key: key.join("/"),
                    stored: s.clone(),
                    recounted: r.clone(),
                });
            }
        }
        progress.advance(1);
    }
    Ok(drift)
}

impl Langcamp {
    /// Compares every rollup row with a recount of the rows it counts, in one snapshot
    /// (superadmins and operators: `langcamp stats check`). Empty when they agree.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn check_dashboard_rollups(&self, actor: &Actor) -> Result<Vec<Drift>> {
        actor.require(Role::Superadmin)?;
        let mut tx = self.db().read_snapshot().await?;
        let drift = drift(&mut tx, &Silent).await?;
        tx.commit().await?;
        Ok(drift)
    }

    /// Replaces every rollup row by a recount, in one write transaction, and returns
    /// the drift it repaired (`langcamp stats rebuild`). No counted row changes between
    /// the recount and the commit (SQLite: the one writer; PostgreSQL: table locks).
    ///
    /// `progress` counts two steps per rollup table: its comparison with a recount, then
    /// its rewrite. Stopped before the commit (the future dropped, the process
    /// interrupted), the transaction rolls back and nothing has changed.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn rebuild_dashboard_rollups(
        &self,
        actor: &Actor,
        progress: &dyn Progress,
    ) -> Result<Vec<Drift>> {
        actor.require(Role::Superadmin)?;
        let mut tx = self.db().begin().await?;
        // No counted row may change between the recount and the commit.
        tx.lock_rollups().await?;
        progress.start(2 * ROLLUPS.len() as u64);
        let drift = drift(&mut tx, progress).await?;
        for rollup in &ROLLUPS {
            let sql = format!("DELETE FROM {}", rollup.table);
            sqlx::query(AssertSqlSafe(sql)).execute(&mut *tx).await?;
            for recount in rollup.recounts {
                let sql = format!(
                    "INSERT INTO {} ({}) {recount}",
                    rollup.table, rollup.columns
                );
                sqlx::query(AssertSqlSafe(sql)).execute(&mut *tx).await?;
            }
            progress.advance(1);
        }
        let target = crate::audit::Target::named("stats", "dashboard rollups");
        let entry = crate::audit::Entry::new("stats.rebuilt", target).with_change_map(
            serde_json::json!({ "rowsRepaired": { "from": null, "to": drift.len() } }),
        );
        self.commit_recorded(tx, actor, entry).await?;
        if !drift.is_empty() {
            tracing::warn!(rows = drift.len(), "repaired dashboard rollups");
        }
        Ok(drift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_start_at_utc_midnight() {
        assert_eq!(day_of(0), 0);
        assert_eq!(day_of(DAY_MS - 1), 0);
        assert_eq!(day_of(DAY_MS), DAY_MS);
        // 2025-11-22T12:00:00Z
        assert_eq!(day_of(1_763_812_800_000), 1_763_769_600_000);
    }

    #[test]
    fn every_recount_names_the_columns_of_its_table() {
        for rollup in &ROLLUPS {
            for recount in rollup.recounts {
                for column in rollup.columns.split(',').map(str::trim) {
                    assert!(
                        recount.contains(&format!(" AS {column}"))
                            || recount.starts_with(&format!("SELECT {column},")),
                        "{}: {recount}",
                        rollup.table
                    );
                }
            }
        }
    }

    #[test]
    fn the_migrations_fill_the_tables_with_these_recounts() {
        // 0060 fills the dashboard's tables, 0150 the lists' counts.
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        for migration in [
            [
                include_str!("../../../migrations/sqlite/0060_dashboard_rollups.sql"),
                include_str!("../../../migrations/sqlite/0150_lists_at_scale.sql"),
            ],
            [
                include_str!("../../../migrations/postgres/0060_dashboard_rollups.sql"),
                include_str!("../../../migrations/postgres/0150_lists_at_scale.sql"),
            ],
        ] {
            let migration = words(&migration.concat());
            for rollup in &ROLLUPS {
                for recount in rollup.recounts {
                    let fill = words(&format!(
                        "INSERT INTO {} ({}) {recount};",
                        rollup.table, rollup.columns
                    ));
                    assert!(migration.contains(&fill), "{fill}");
                }
            }
        }
    }
}
