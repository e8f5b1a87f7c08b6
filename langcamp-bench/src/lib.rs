//! Benchmarks of Langcamp operations at scale: a deterministic data generator that writes
//! straight into the schema with multi-row `INSERT`s in big transactions, and latency
//! statistics. The binaries are built by CI (they are workspace members) and run by hand;
//! `docs/BENCHMARKS.md` says how and records the figures.

use std::time::Duration;

pub mod catalogue;

use chrono::{DateTime, TimeDelta, Utc};
use langcamp_core::platform::db::{Db, Tx};
use sqlx::{AssertSqlSafe, Executor};

/// How many rows of each kind to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    pub name: &'static str,
    pub users: u64,
    pub results: u64,
    pub contacts: u64,
    pub assignments: u64,
}

impl Scale {
    /// 100k users, 1M results, 100k contacts, 200k assignments.
    pub const FULL: Scale = Scale {
        name: "full",
        users: 100_000,
        results: 1_000_000,
        contacts: 100_000,
        assignments: 200_000,
    };

    /// One tenth of [`Scale::FULL`].
    pub const TENTH: Scale = Scale {
        name: "tenth",
        users: 10_000,
        results: 100_000,
        contacts: 10_000,
        assignments: 20_000,
    };
}

/// How many tests the generator writes (the added ones of [`catalogue`] come after).
pub const LANGUAGES_COUNT: u64 = LANGUAGES.len() as u64;

/// Catalogue sizes, the same at every scale.
pub const COURSES: u64 = 20;
pub const MATERIALS: u64 = 200;
/// Data covers this many days before "now".
pub const SPAN_DAYS: i64 = 3 * 365;

/// Languages of the generated tests (`None`: a test without a target language).
pub(crate) const LANGUAGES: [(Option<&str>, &str); 8] = [
    (Some("en"), "English placement test"),
    (Some("de"), "German placement test"),
    (Some("fr"), "French placement test"),
    (Some("es"), "Spanish placement test"),
    (Some("it"), "Italian placement test"),
    (Some("pt-BR"), "Brazilian Portuguese placement test"),
    (Some("ja"), "Japanese placement test"),
    (None, "General placement test"),
];

const STATUSES: [&str; 4] = ["PENDING", "IN_PROGRESS", "REPLIED", "CLOSED"];

/// A per-question snapshot like the one placement results keep (three questions).
const ANSWERS: &str = r#"[{"questionId":"0190a000-0000-7000-8000-000000000001","questionText":"Choose the correct article.","selectedOptionId":"0190a000-0000-7000-8000-000000000011","selectedOptionText":"der","correctOptionId":"0190a000-0000-7000-8000-000000000011","correctOptionText":"der","points":1,"isCorrect":true},{"questionId":"0190a000-0000-7000-8000-000000000002","questionText":"Which sentence is correct?","selectedOptionId":"0190a000-0000-7000-8000-000000000021","selectedOptionText":"Ich habe gegessen.","correctOptionId":"0190a000-0000-7000-8000-000000000021","correctOptionText":"Ich habe gegessen.","points":2,"isCorrect":true},{"questionId":"0190a000-0000-7000-8000-000000000003","questionText":"Pick the synonym of schnell.","selectedOptionId":"0190a000-0000-7000-8000-000000000032","selectedOptionText":"langsam","correctOptionId":"0190a000-0000-7000-8000-000000000031","correctOptionText":"rasch","points":1,"isCorrect":false}]"#;

/// A small deterministic generator (SplitMix64), so every run builds the same data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        let width = u64::try_from(hi.saturating_sub(lo)).unwrap_or(0);
        lo + i64::try_from(self.below(width.saturating_add(1))).unwrap_or(0)
    }
}

/// An id shaped like the app's (UUID text), unique per kind and number.
pub(crate) fn id(kind: u8, n: u64) -> String {
    format!("0190{kind:02x}00-0000-7000-8000-{n:012x}")
}

pub(crate) fn text(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

pub(crate) fn optional(value: Option<&str>) -> String {
    value.map_or_else(|| "NULL".to_owned(), text)
}

/// When user `i` of `users` signed up: spread evenly over the span, oldest first.
fn user_created(now_ms: i64, i: u64, users: u64) -> i64 {
    let span = TimeDelta::days(SPAN_DAYS).num_milliseconds();
    let offset = i128::from(span) * i128::from(users - i) / i128::from(users.max(1));
    now_ms - i64::try_from(offset).unwrap_or(span)
}

/// The level band of a score out of 40.
fn level_of(score: i64) -> &'static str {
    match score {
        0..=6 => "A1",
        7..=13 => "A2",
        14..=20 => "B1",
        21..=27 => "B2",
        28..=34 => "C1",
        _ => "C2",
    }
}

/// Rows per `INSERT` statement and per transaction. A transaction stays at a few thousand
/// rows because every counted row also updates the same few rollup rows (migration 0060's
/// triggers): on PostgreSQL each update of a row that the same transaction updated before
/// walks the chain of its earlier versions, so a transaction of n such rows costs n²/2
/// steps. At 100,000 rows a transaction, 200,000 returning students took 300 s to seed.
const ROWS_PER_STATEMENT: usize = 500;
const ROWS_PER_TRANSACTION: u64 = 5_000;

/// Writes `count` rows made by `row(i)` with multi-row `INSERT`s in transactions of
/// [`ROWS_PER_TRANSACTION`].
pub(crate) async fn insert_all(
    db: &Db,
    head: &str,
    count: u64,
    mut row: impl FnMut(u64) -> String,
) -> langcamp_core::Result<()> {
    let mut tx: Option<Tx> = None;
    let mut values: Vec<String> = Vec::with_capacity(ROWS_PER_STATEMENT);
    for i in 0..count {
        values.push(row(i));
        let last = i + 1 == count;
        if values.len() == ROWS_PER_STATEMENT || last {
            let current = match tx.as_mut() {
                Some(current) => current,
                None => tx.insert(db.begin().await?),
            };
            let sql = format!("{head} VALUES {}", values.join(","));
            (&mut **current).execute(AssertSqlSafe(sql)).await?;
            values.clear();
        }
        if ((i + 1) % ROWS_PER_TRANSACTION == 0 || last)
            && let Some(done) = tx.take()
        {
            done.commit().await?;
        }
    }
    Ok(())
}

/// Fills an empty, migrated database with `scale` rows as of `now`.
pub async fn generate(db: &Db, scale: Scale, now: DateTime<Utc>) -> langcamp_core::Result<()> {
    let now_ms = now.timestamp_millis();
    let catalogue_at = now_ms - TimeDelta::days(SPAN_DAYS).num_milliseconds();
    let mut rng = Rng::new(0x1A4C_A3B0);

    insert_all(
        db,
        "INSERT INTO users (id, email, name, role, is_registration_complete, locale, created_at, updated_at)",
        scale.users,
        |i| {
            let role = if i % 10_000 == 1 {
                "superadmin"
            } else if i % 1_000 == 0 {
                "admin"
            } else {
                "user"
            };
            let complete = rng.below(10) < 7;
            let name = complete.then(|| format!("Student {i}"));
            let created = user_created(now_ms, i, scale.users);
            format!(
                "({}, {}, {}, {}, {}, 'en', {created}, {created})",
                text(&id(1, i)),
                text(&format!("student{i}@bench.langcamp.test")),
                optional(name.as_deref()),
                text(role),
                i64::from(complete),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO courses (id, title, target_language, is_published, sort_order, created_at, updated_at)",
        COURSES,
        |i| {
            let (language, _) = LANGUAGES[(i % 7) as usize];
            format!(
                "({}, {}, {}, 1, {i}, {catalogue_at}, {catalogue_at})",
                text(&id(2, i)),
                text(&format!("Course {i}")),
                optional(language),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO proficiency_tests (id, title, target_language, is_active, question_count, max_score, created_at, updated_at)",
        LANGUAGES.len() as u64,
        |i| {
            let (language, title) = LANGUAGES[i as usize];
            format!(
                "({}, {}, {}, 1, 3, 40, {catalogue_at}, {catalogue_at})",
                text(&id(3, i)),
                text(title),
                optional(language),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO test_results (id, test_id, user_id, test_title, target_language, total_score, max_score, level, message, answers, completed_at)",
        scale.results,
        |i| {
            let user = rng.below(scale.users);
            let test = rng.below(LANGUAGES.len() as u64);
            let (language, title) = LANGUAGES[test as usize];
            let score = rng.between(0, 40);
            let completed = rng.between(user_created(now_ms, user, scale.users), now_ms);
            // The snapshot a submission stores (`placement/results`): the test's id and the
            // questions; a bare array of questions would make every read of the row fail.
            let answers = text(&format!(
                r#"{{"testId":"{}","questions":{ANSWERS}}}"#,
                id(3, test)
            ));
            format!(
                "({}, {}, {}, {}, {}, {score}, 40, {}, 'Well done.', {answers}, {completed})",
                text(&id(4, i)),
                text(&id(3, test)),
                text(&id(1, user)),
                text(title),
                optional(language),
                text(level_of(score)),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO contacts (id, first_name, last_name, email, phone, message, status, reply_message, source, replied_at, created_at, updated_at)",
        scale.contacts,
        |i| {
            let created = rng.between(catalogue_at, now_ms);
            let status = STATUSES[match rng.below(20) {
                0..=5 => 0,
                6..=7 => 1,
                8..=16 => 2,
                _ => 3,
            }];
            let replied = (status == "REPLIED").then(|| created + 86_400_000);
            let source = ["landing", "courses", "placement"][(i % 4).min(2) as usize];
            format!(
                "({}, 'Visitor', {}, {}, NULL, 'I would like to know more about your summer courses and the placement test.', {}, {}, {}, {}, {created}, {created})",
                text(&id(5, i)),
                text(&format!("Number {i}")),
                text(&format!("visitor{i}@bench.langcamp.test")),
                text(status),
                optional(replied.is_some().then_some("Thank you, here is the information.")),
                optional((i % 5 != 4).then_some(source)),
                replied.map_or_else(|| "NULL".to_owned(), |t| t.to_string()),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO education_materials (id, title, level, created_at, updated_at)",
        MATERIALS,
        |i| {
            format!(
                "({}, {}, {}, {catalogue_at}, {catalogue_at})",
                text(&id(6, i)),
                text(&format!("Material {i}")),
                text(level_of(i64::try_from(i % 41).unwrap_or(0))),
            )
        },
    )
    .await?;

    // Half of the users (the even ones) hold assignments; pairs are unique by construction.
    let holders = (scale.users / 2).max(1);
    insert_all(
        db,
        "INSERT INTO material_assignments (material_id, user_id, assigned_at, assigned_by)",
        scale.assignments,
        |i| {
            let user = (i % holders) * 2;
            let material = (i / holders) % MATERIALS;
            let assigned = rng.between(user_created(now_ms, user, scale.users), now_ms);
            format!(
                "({}, {}, {assigned}, NULL)",
                text(&id(6, material)),
                text(&id(1, user)),
            )
        },
    )
    .await?;
    Ok(())
}

/// Latency statistics of a series of calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    pub calls: usize,
    pub min: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub mean: Duration,
}

impl Latency {
    /// Nearest-rank percentiles of `samples` (not empty).
    pub fn of(mut samples: Vec<Duration>) -> Option<Latency> {
        samples.sort();
        let n = samples.len();
        let rank = |p: usize| samples[(n * p).div_ceil(100).clamp(1, n) - 1];
        let total: Duration = samples.iter().sum();
        Some(Latency {
            calls: n,
            min: *samples.first()?,
            p50: rank(50),
            p99: rank(99),
            max: *samples.last()?,
            mean: total / u32::try_from(n).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let samples = (1..=100).map(Duration::from_millis).collect();
        let latency = Latency::of(samples).expect("samples");
        assert_eq!(latency.p50, Duration::from_millis(50));
        assert_eq!(latency.p99, Duration::from_millis(99));
        assert_eq!(latency.min, Duration::from_millis(1));
        assert_eq!(latency.max, Duration::from_millis(100));
        assert!(Latency::of(Vec::new()).is_none());
    }

    #[test]
    fn users_sign_up_oldest_first_within_the_span() {
        let now = 1_795_341_600_000;
        let span = TimeDelta::days(SPAN_DAYS).num_milliseconds();
        assert_eq!(user_created(now, 0, 100), now - span);
        assert!(user_created(now, 99, 100) < now);
        assert!(user_created(now, 10, 100) < user_created(now, 11, 100));
    }

    #[test]
    fn ids_are_unique_per_kind_and_shaped_like_uuids() {
        assert_ne!(id(1, 5), id(4, 5));
        assert_eq!(id(1, 5).len(), 36);
    }

    #[test]
    fn text_literals_escape_quotes() {
        assert_eq!(text("O'Brien"), "'O''Brien'");
        assert_eq!(optional(None), "NULL");
    }
}
