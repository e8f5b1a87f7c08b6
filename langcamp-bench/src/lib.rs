//! Benchmarks of Langcamp operations at scale: a deterministic data generator that writes
//! straight into the schema with multi-row `INSERT`s in transactions of a few thousand
//! rows (the database's triggers on), and latency statistics. The binaries are built by CI
//! (they are workspace members) and run by hand; `docs/BENCHMARKS.md` says how and records
//! the figures.

use std::time::{Duration, Instant};

pub mod catalogue;

use chrono::{DateTime, TimeDelta, Utc};
use langcamp_core::platform::db::{Db, Tx};
use sqlx::{AssertSqlSafe, Executor};

/// How many rows of each kind to generate, and what they look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    pub name: &'static str,
    pub users: u64,
    pub results: u64,
    pub contacts: u64,
    pub assignments: u64,
    /// Entries of the audit trail.
    pub audit_events: u64,
    pub shape: Shape,
}

/// What the generated rows look like: each benchmark keeps the data its recorded figures
/// were measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The dashboard's and the HTTP benchmark's (`dashboard-bench`, `api-bench`):
    /// addresses `student<N>@bench.langcamp.test`, seven in ten users registered (named
    /// `Student <N>`), one in 1,000 an admin and one in 10,000 a superadmin, the eight
    /// tests of [`LANGUAGES`], each result of a random user, test and score.
    Dashboard,
    /// The admin lists' (`list-bench`, issue #54): addresses [`student_email`], two in
    /// three users registered with a whole profile (named [`student_name`]), one in 10,000
    /// an admin and user 1 the one superadmin; [`LIST_TESTS`] tests in four languages;
    /// results in turn over the users, each of a random test and level; an audit trail
    /// over the last [`AUDIT_DAYS`] days.
    Lists,
}

impl Scale {
    /// 100k users, 1M results, 100k contacts, 200k assignments.
    pub const FULL: Scale = Scale {
        name: "full",
        users: 100_000,
        results: 1_000_000,
        contacts: 100_000,
        assignments: 200_000,
        audit_events: 0,
        shape: Shape::Dashboard,
    };

    /// One tenth of [`Scale::FULL`].
    pub const TENTH: Scale = Scale::FULL.divided("tenth", 10);

    /// The admin lists at ten million rows (issue #54): 1M users, 10M results, 1M
    /// contacts, 1M audit entries, 200k assignments.
    pub const LISTS_FULL: Scale = Scale {
        name: "full",
        users: 1_000_000,
        results: 10_000_000,
        contacts: 1_000_000,
        assignments: 200_000,
        audit_events: 1_000_000,
        shape: Shape::Lists,
    };

    /// This scale with every count divided by `by`, named `name`.
    pub const fn divided(self, name: &'static str, by: u64) -> Scale {
        Scale {
            name,
            users: self.users / by,
            results: self.results / by,
            contacts: self.contacts / by,
            assignments: self.assignments / by,
            audit_events: self.audit_events / by,
            shape: self.shape,
        }
    }
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

/// The tests of the lists' shape: test `n` is in language `n % 4` of [`LIST_LANGUAGES`].
pub const LIST_TESTS: u64 = 20;
pub const LIST_LANGUAGES: [(&str, &str); 4] = [
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
];

/// The CEFR levels, in the order of the score bands of [`level_of`].
pub const LEVELS: [&str; 6] = ["A1", "A2", "B1", "B2", "C1", "C2"];

/// The audit trail of the lists' shape covers this many days before "now": the default
/// `AUDIT_RETENTION_DAYS`.
pub const AUDIT_DAYS: i64 = 400;

const FIRST_NAMES: [&str; 16] = [
    "Ana", "Ben", "Chiara", "Dmitri", "Elif", "Farah", "Gustavo", "Hana", "Ines", "Jonas", "Kofi",
    "Lena", "Mateo", "Noor", "Oskar", "Priya",
];

/// A staff mix in turn: mostly course and contact work, now and then a role or a setting.
const AUDIT_ACTIONS: [&str; 10] = [
    "course.updated",
    "contact.status_changed",
    "course.updated",
    "user.role_changed",
    "contact.status_changed",
    "setting.put",
    "material.assigned",
    "test.updated",
    "contact.replied",
    "course.updated",
];

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

/// The id of user `n`.
pub fn user_id(n: u64) -> String {
    id(1, n)
}

/// The e-mail address of user `n` of the lists' shape.
pub fn student_email(n: u64) -> String {
    format!("student{n}@school{}.example", n % 97)
}

/// Whether user `n` of the lists' shape completed the registration (two in three).
pub fn is_registered(n: u64) -> bool {
    n % 3 != 2
}

/// The 8 hex characters of the name of user `n` of the lists' shape (a hash of `n`).
pub fn name_tag(n: u64) -> String {
    format!("{:08x}", Rng::new(n).next_u64() >> 32)
}

/// The name of registered user `n` of the lists' shape: a first name and [`name_tag`].
pub fn student_name(n: u64) -> String {
    format!("{} {}", FIRST_NAMES[(n % 16) as usize], name_tag(n))
}

/// The role of user `n` of the lists' shape: user 1 is the superadmin, one in 10,000 an
/// admin.
pub fn list_role(n: u64) -> &'static str {
    match n {
        1 => "superadmin",
        n if n % 10_000 == 0 => "admin",
        _ => "user",
    }
}

/// The e-mail address of contact request `n` (both shapes).
pub fn contact_email(n: u64) -> String {
    format!("visitor{n}@bench.langcamp.test")
}

/// The title of test `n` of the lists' shape.
pub fn list_test_title(n: u64) -> String {
    format!(
        "{} placement test {}",
        LIST_LANGUAGES[(n % 4) as usize].1,
        n / 4 + 1
    )
}

/// The action of audit entry `n` of the lists' shape.
pub fn audit_action(n: u64) -> &'static str {
    AUDIT_ACTIONS[(n % AUDIT_ACTIONS.len() as u64) as usize]
}

/// When audit entry `n` of `count` was written: evenly over the [`AUDIT_DAYS`] days
/// before `now_ms`, oldest first, the last at `now_ms`.
pub fn audit_at(now_ms: i64, n: u64, count: u64) -> i64 {
    let span = TimeDelta::days(AUDIT_DAYS).num_milliseconds();
    let back =
        i128::from(span) * i128::from(count.saturating_sub(n + 1)) / i128::from(count.max(1));
    now_ms - i64::try_from(back).unwrap_or(span)
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

/// How long the rows of one table took to write.
#[derive(Clone, Debug, PartialEq)]
pub struct Filled {
    pub table: &'static str,
    pub rows: u64,
    pub took: Duration,
}

impl Filled {
    pub fn rows_per_second(&self) -> f64 {
        self.rows as f64 / self.took.as_secs_f64().max(1e-9)
    }
}

/// Runs `fill`, which writes `rows` rows of `table`, and tells `report` how long it took.
async fn timed(
    report: &mut impl FnMut(&Filled),
    table: &'static str,
    rows: u64,
    fill: impl Future<Output = langcamp_core::Result<()>>,
) -> langcamp_core::Result<()> {
    let started = Instant::now();
    fill.await?;
    report(&Filled {
        table,
        rows,
        took: started.elapsed(),
    });
    Ok(())
}

/// Fills an empty, migrated database with `scale` rows as of `now`, telling `report` how
/// long each table took as soon as it is written (a full fill takes a while).
pub async fn generate(
    db: &Db,
    scale: Scale,
    now: DateTime<Utc>,
    mut report: impl FnMut(&Filled),
) -> langcamp_core::Result<()> {
    let now_ms = now.timestamp_millis();
    let catalogue_at = now_ms - TimeDelta::days(SPAN_DAYS).num_milliseconds();
    let mut rng = Rng::new(0x1A4C_A3B0);

    let users = insert_all(
        db,
        "INSERT INTO users (id, email, name, age, gender, city, country, country_code, phone_number, role, is_registration_complete, locale, created_at, updated_at)",
        scale.users,
        |i| {
            let created = user_created(now_ms, i, scale.users);
            let (email, role, complete) = match scale.shape {
                Shape::Dashboard => {
                    let role = if i % 10_000 == 1 {
                        "superadmin"
                    } else if i % 1_000 == 0 {
                        "admin"
                    } else {
                        "user"
                    };
                    (
                        format!("student{i}@bench.langcamp.test"),
                        role,
                        rng.below(10) < 7,
                    )
                }
                Shape::Lists => (student_email(i), list_role(i), is_registered(i)),
            };
            // A registration completes the whole profile (`POST /auth/complete-registration`);
            // the dashboard's data has the name only.
            let profile = match (scale.shape, complete) {
                (_, false) => "NULL, NULL, NULL, NULL, NULL, NULL, NULL".to_owned(),
                (Shape::Dashboard, true) => {
                    format!(
                        "{}, NULL, NULL, NULL, NULL, NULL, NULL",
                        text(&format!("Student {i}"))
                    )
                }
                (Shape::Lists, true) => {
                    let (city, country, code) = [
                        ("Lisbon", "Portugal", "+351"),
                        ("Berlin", "Germany", "+49"),
                        ("Lyon", "France", "+33"),
                        ("Sevilla", "Spain", "+34"),
                        ("Istanbul", "Turkey", "+90"),
                    ][(i % 5) as usize];
                    let gender = ["female", "male", "other", "prefer_not_to_say"][(i % 4) as usize];
                    format!(
                        "{}, {}, {}, {}, {}, {}, {}",
                        text(&student_name(i)),
                        16 + i % 50,
                        text(gender),
                        text(city),
                        text(country),
                        text(code),
                        text(&format!("9{:08}", i % 100_000_000)),
                    )
                }
            };
            format!(
                "({}, {}, {profile}, {}, {}, 'en', {created}, {created})",
                text(&id(1, i)),
                text(&email),
                text(role),
                i64::from(complete),
            )
        },
    );
    timed(&mut report, "users", scale.users, users).await?;

    let courses = insert_all(
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
    );
    timed(&mut report, "courses", COURSES, courses).await?;

    // A test's language and title (a result keeps snapshots of them).
    let test = |t: u64| match scale.shape {
        Shape::Dashboard => {
            let (language, title) = LANGUAGES[t as usize];
            (language, title.to_owned())
        }
        Shape::Lists => (Some(LIST_LANGUAGES[(t % 4) as usize].0), list_test_title(t)),
    };
    let tests = match scale.shape {
        Shape::Dashboard => LANGUAGES_COUNT,
        Shape::Lists => LIST_TESTS,
    };
    let written = insert_all(
        db,
        "INSERT INTO proficiency_tests (id, title, target_language, is_active, question_count, max_score, created_at, updated_at)",
        tests,
        |i| {
            format!(
                "({}, {}, {}, 1, 3, 40, {catalogue_at}, {catalogue_at})",
                text(&id(3, i)),
                text(&test(i).1),
                optional(test(i).0),
            )
        },
    );
    timed(&mut report, "proficiency_tests", tests, written).await?;

    let results = insert_all(
        db,
        "INSERT INTO test_results (id, test_id, user_id, test_title, target_language, total_score, max_score, level, message, answers, completed_at)",
        scale.results,
        |i| {
            let (user, t, score) = match scale.shape {
                Shape::Dashboard => {
                    let user = rng.below(scale.users);
                    let t = rng.below(LANGUAGES_COUNT);
                    (user, t, rng.between(0, 40))
                }
                // Every user the same number of results (give or take one); levels evenly,
                // a score in the level's band.
                Shape::Lists => {
                    let t = rng.below(LIST_TESTS);
                    let band = 7 * i64::try_from(rng.below(6)).unwrap_or(0);
                    (
                        i % scale.users.max(1),
                        t,
                        rng.between(band, (band + 6).min(40)),
                    )
                }
            };
            let completed = rng.between(user_created(now_ms, user, scale.users), now_ms);
            // The snapshot a submission stores (`placement/results`): the test's id and the
            // questions; a bare array of questions would make every read of the row fail.
            let answers = text(&format!(
                r#"{{"testId":"{}","questions":{ANSWERS}}}"#,
                id(3, t)
            ));
            format!(
                "({}, {}, {}, {}, {}, {score}, 40, {}, 'Well done.', {answers}, {completed})",
                text(&id(4, i)),
                text(&id(3, t)),
                text(&id(1, user)),
                text(&test(t).1),
                optional(test(t).0),
                text(level_of(score)),
            )
        },
    );
    timed(&mut report, "test_results", scale.results, results).await?;

    let contacts = insert_all(
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
                text(&contact_email(i)),
                text(status),
                optional(
                    replied
                        .is_some()
                        .then_some("Thank you, here is the information.")
                ),
                optional((i % 5 != 4).then_some(source)),
                replied.map_or_else(|| "NULL".to_owned(), |t| t.to_string()),
            )
        },
    );
    timed(&mut report, "contacts", scale.contacts, contacts).await?;

    let materials = insert_all(
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
    );
    timed(&mut report, "education_materials", MATERIALS, materials).await?;

    // Half of the users (the even ones) hold assignments; pairs are unique by construction.
    let holders = (scale.users / 2).max(1);
    let assignments = insert_all(
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
    );
    timed(
        &mut report,
        "material_assignments",
        scale.assignments,
        assignments,
    )
    .await?;

    if scale.audit_events > 0 {
        let audit = insert_all(
            db,
            "INSERT INTO audit_events (id, at, action, actor_type, actor_id, actor_email, actor_role, target_type, target_id, target_label, changes, request_id, client_address)",
            scale.audit_events,
            |i| audit_row(scale, now_ms, i),
        );
        timed(&mut report, "audit_events", scale.audit_events, audit).await?;
    }
    Ok(())
}

/// Audit entry `n` of the lists' shape, as the service's `audit::record` writes it: the
/// actor (admin 0 mostly, the superadmin, now and then the operator at the console), the
/// target with its label (none for a user: that is read at query time), the fields that
/// changed, and the request's id and client address (none for the operator).
fn audit_row(scale: Scale, now_ms: i64, n: u64) -> String {
    let actor = match n % 7 {
        0..=3 => Some((0, "admin", "198.51.100.7")),
        4 | 5 => Some((1, "superadmin", "203.0.113.20")),
        _ => None,
    };
    let (who, origin) = match actor {
        Some((user, role, address)) => (
            format!(
                "'user', {}, {}, {}",
                text(&id(1, user)),
                text(&student_email(user)),
                text(role)
            ),
            format!("{}, {}", text(&id(11, n)), text(address)),
        ),
        None => (
            "'operator', NULL, 'operator', NULL".to_owned(),
            "NULL, NULL".to_owned(),
        ),
    };
    // The how-manieth entry of its action: its targets come in turn.
    let k = n / AUDIT_ACTIONS.len() as u64;
    let record = |kind: &str, kind_id: u8, i: u64, label: &str| {
        format!("{}, {}, {}", text(kind), text(&id(kind_id, i)), text(label))
    };
    let action = audit_action(n);
    let (target, changes) = match action {
        "course.updated" => {
            let c = k % COURSES;
            (
                record("course", 2, c, &format!("Course {c}")),
                format!(r#"{{"sortOrder":{{"from":{c},"to":{}}}}}"#, c + 1),
            )
        }
        "contact.status_changed" | "contact.replied" => {
            let c = k.wrapping_mul(7_919) % scale.contacts.max(1);
            let changes = if action == "contact.replied" {
                r#"{"replyMessage":{"from":null,"to":"Thank you, here is the information."},"status":{"from":"IN_PROGRESS","to":"REPLIED"}}"#
            } else {
                r#"{"status":{"from":"PENDING","to":"IN_PROGRESS"}}"#
            };
            (
                record("contact", 5, c, &format!("Visitor Number {c}")),
                changes.to_owned(),
            )
        }
        "user.role_changed" => {
            let u = k.wrapping_mul(7_919) % scale.users.max(1);
            (
                format!("'user', {}, NULL", text(&id(1, u))),
                r#"{"role":{"from":"user","to":"admin"}}"#.to_owned(),
            )
        }
        "setting.put" => (
            "'setting', 'landing_video_url', 'landing_video_url'".to_owned(),
            r#"{"value":{"from":null,"to":"https://videos.langcamp.test/landing/summer-2027.mp4"}}"#
                .to_owned(),
        ),
        "material.assigned" => {
            let m = k % MATERIALS;
            let user = id(1, k.wrapping_mul(7_919) % scale.users.max(1));
            (
                record("material", 6, m, &format!("Material {m}")),
                format!(r#"{{"assignedTo":{{"from":null,"to":["{user}"]}}}}"#),
            )
        }
        _ => {
            let t = k % LIST_TESTS;
            (
                record("test", 3, t, &list_test_title(t)),
                r#"{"timeLimitMinutes":{"from":null,"to":20}}"#.to_owned(),
            )
        }
    };
    format!(
        "({}, {}, {}, {who}, {target}, {}, {origin})",
        text(&id(12, n)),
        audit_at(now_ms, n, scale.audit_events),
        text(action),
        text(&changes),
    )
}

/// Latency statistics of a series of calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    pub calls: usize,
    pub min: Duration,
    pub p50: Duration,
    pub p90: Duration,
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
            p90: rank(90),
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
        assert_eq!(latency.p90, Duration::from_millis(90));
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
    fn smaller_scales_divide_every_count() {
        let tenth = Scale::LISTS_FULL.divided("tenth", 10);
        assert_eq!(
            (
                tenth.users,
                tenth.results,
                tenth.contacts,
                tenth.audit_events
            ),
            (100_000, 1_000_000, 100_000, 100_000)
        );
        assert_eq!(Scale::TENTH.results, 100_000);
        assert_eq!(Scale::TENTH.shape, Shape::Dashboard);
    }

    #[test]
    fn list_users_have_school_addresses_hex_names_and_few_admins() {
        assert_eq!(student_email(4242), "student4242@school71.example");
        let name = student_name(7);
        let (first, tag) = name.split_once(' ').expect("two words");
        assert!(FIRST_NAMES.contains(&first));
        assert_eq!(tag.len(), 8);
        assert!(
            tag.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(name_tag(7), name_tag(8));
        let roles = |role| (0..100_000).filter(|&n| list_role(n) == role).count();
        assert_eq!((roles("admin"), roles("superadmin")), (10, 1));
        assert_eq!((0..300).filter(|&n| !is_registered(n)).count(), 100);
    }

    #[test]
    fn levels_are_in_the_order_of_the_score_bands() {
        for (band, level) in LEVELS.iter().enumerate() {
            let low = 7 * band as i64;
            assert_eq!(level_of(low), *level);
            assert_eq!(level_of((low + 6).min(40)), *level);
        }
    }

    #[test]
    fn the_trail_covers_its_days_oldest_first_up_to_now() {
        let now = 1_795_341_600_000;
        let span = TimeDelta::days(AUDIT_DAYS).num_milliseconds();
        assert_eq!(audit_at(now, 999, 1_000), now);
        assert!(audit_at(now, 0, 1_000) > now - span);
        assert!(audit_at(now, 10, 1_000) < audit_at(now, 11, 1_000));
    }

    #[test]
    fn text_literals_escape_quotes() {
        assert_eq!(text("O'Brien"), "'O''Brien'");
        assert_eq!(optional(None), "NULL");
    }
}
