//! The public catalogue of the HTTP benchmark: grows the generated courses and tests to
//! the sizes of issue 10 (60 courses, 50 tests) and gives the added tests real questions,
//! options and level bands, so `POST /proficiency-tests/{id}/submit` scores against them.

use langcamp_core::platform::db::Db;

use crate::{COURSES, LANGUAGES, id, insert_all, optional, text};

/// Questions of every added test, each with [`OPTIONS`] options worth one point.
pub const QUESTIONS: u64 = 10;
pub const OPTIONS: u64 = 4;

const LEVELS: [(&str, i64, i64); 6] = [
    ("A1", 0, 1),
    ("A2", 2, 3),
    ("B1", 4, 5),
    ("B2", 6, 7),
    ("C1", 8, 9),
    ("C2", 10, 10),
];

/// The id of test `n` (the generator's first tests keep theirs).
pub fn test_id(n: u64) -> String {
    id(3, n)
}

/// Adds courses up to `courses` and tests up to `tests` (beyond the generator's own),
/// as of `at` (epoch ms). The added tests are the ones to submit to: the first is
/// `test_id(LANGUAGES.len())`.
pub async fn extend(db: &Db, courses: u64, tests: u64, at: i64) -> langcamp_core::Result<()> {
    let first_test = LANGUAGES.len() as u64;
    let extra_courses = courses.saturating_sub(COURSES);
    insert_all(
        db,
        "INSERT INTO courses (id, title, summary, description, target_language, level, locale, location, start_date, end_date, price_minor, currency, capacity, is_published, sort_order, created_at, updated_at)",
        extra_courses,
        |i| {
            let n = COURSES + i;
            let (language, _) = LANGUAGES[(n % 7) as usize];
            format!(
                "({}, {}, 'Two weeks of lessons in the mornings and excursions in the afternoons.', 'Small groups of at most twelve students, placed by level after the placement test; all materials included.', {}, {}, 'en', 'Lisbon', '2027-07-{:02}', '2027-07-{:02}', {}, 'EUR', 12, 1, {n}, {at}, {at})",
                text(&id(2, n)),
                text(&format!("Summer course {n}")),
                optional(language),
                text(LEVELS[(n % 6) as usize].0),
                1 + n % 14,
                15 + n % 14,
                // EUR 450, 460, ... in cents.
                (450 + 10 * n) * 100,
            )
        },
    )
    .await?;

    let extra_tests = tests.saturating_sub(first_test);
    insert_all(
        db,
        "INSERT INTO proficiency_tests (id, title, description, locale, target_language, time_limit_minutes, is_active, question_count, max_score, created_at, updated_at)",
        extra_tests,
        |i| {
            let n = first_test + i;
            let (language, _) = LANGUAGES[(n % 7) as usize];
            format!(
                "({}, {}, 'Ten questions, about ten minutes.', 'en', {}, 20, 1, {QUESTIONS}, {QUESTIONS}, {at}, {at})",
                text(&test_id(n)),
                text(&format!("Placement test {n}")),
                optional(language),
            )
        },
    )
    .await?;

    let question = |t: u64, q: u64| id(7, t * QUESTIONS + q);
    insert_all(
        db,
        "INSERT INTO test_questions (id, test_id, position, text, points, correct_option_id)",
        extra_tests * QUESTIONS,
        |i| {
            let (t, q) = (first_test + i / QUESTIONS, i % QUESTIONS);
            let correct = id(8, (t * QUESTIONS + q) * OPTIONS + q % OPTIONS);
            format!(
                "({}, {}, {q}, {}, 1, {})",
                text(&question(t, q)),
                text(&test_id(t)),
                text(&format!("Question {q}: choose the correct form.")),
                text(&correct),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO test_options (id, question_id, position, text)",
        extra_tests * QUESTIONS * OPTIONS,
        |i| {
            let (t, q, o) = (
                first_test + i / (QUESTIONS * OPTIONS),
                (i / OPTIONS) % QUESTIONS,
                i % OPTIONS,
            );
            format!(
                "({}, {}, {o}, {})",
                text(&id(8, (t * QUESTIONS + q) * OPTIONS + o)),
                text(&question(t, q)),
                text(&format!("Option {o}")),
            )
        },
    )
    .await?;

    insert_all(
        db,
        "INSERT INTO test_level_ranges (id, test_id, position, level, min_score, max_score, message)",
        extra_tests * LEVELS.len() as u64,
        |i| {
            let t = first_test + i / LEVELS.len() as u64;
            let p = i % LEVELS.len() as u64;
            let (level, lo, hi) = LEVELS[p as usize];
            format!(
                "({}, {}, {p}, {}, {lo}, {hi}, {})",
                text(&id(9, i + first_test * 100)),
                text(&test_id(t)),
                text(level),
                text(&format!("Your level is {level}.")),
            )
        },
    )
    .await?;
    Ok(())
}

/// The address of prepared one-time code `n`; every prepared code is [`OTP_CODE`].
pub fn otp_email(n: u64) -> String {
    format!("otp{n}@bench.langcamp.test")
}

pub const OTP_CODE: &str = "123456";

/// Stores `count` live one-time codes (addresses [`otp_email`]`(0..count)`), hashed with
/// `keys` as `POST /auth/otp/verify` expects, valid until `expires_at` (epoch ms).
pub async fn otp_codes(
    db: &Db,
    keys: &langcamp_core::platform::keyring::Keyring,
    count: u64,
    now: i64,
    expires_at: i64,
) -> langcamp_core::Result<()> {
    insert_all(
        db,
        "INSERT INTO otp_codes (email, code_hash, attempts, created_at, expires_at)",
        count,
        |n| {
            let email = otp_email(n);
            let hash = keys.otp_hash(&email, OTP_CODE);
            format!(
                "({}, {}, 0, {now}, {expires_at})",
                text(&email),
                text(&hash)
            )
        },
    )
    .await
}

/// Makes the addresses of the first `count` prepared codes students who signed up before
/// (registered, in English), so that each verify is a returning student's sign-in.
pub async fn otp_students(db: &Db, count: u64, now: i64) -> langcamp_core::Result<()> {
    insert_all(
        db,
        "INSERT INTO users (id, email, name, role, is_registration_complete, locale, created_at, updated_at)",
        count,
        |n| {
            format!(
                "({}, {}, {}, 'user', 1, 'en', {now}, {now})",
                text(&id(10, n)),
                text(&otp_email(n)),
                text(&format!("Returning {n}")),
            )
        },
    )
    .await
}

/// The answers of a submission to an added test: every question, option `q % OPTIONS`
/// (right) for even questions and the next one (wrong) for odd ones.
pub fn submission() -> String {
    let answers: Vec<String> = (0..QUESTIONS)
        .map(|q| {
            let option = if q % 2 == 0 {
                q % OPTIONS
            } else {
                (q + 1) % OPTIONS
            };
            format!(r#"{{"questionIndex":{q},"selectedOptionIndex":{option}}}"#)
        })
        .collect();
    format!(r#"{{"answers":[{}]}}"#, answers.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_submission_answers_every_question_once() {
        let body = submission();
        assert_eq!(body.matches("questionIndex").count(), QUESTIONS as usize);
        assert!(body.starts_with(r#"{"answers":[{"questionIndex":0,"selectedOptionIndex":0}"#));
    }

    #[test]
    fn level_bands_cover_every_score_once() {
        let mut next = 0;
        for (_, lo, hi) in LEVELS {
            assert_eq!(lo, next);
            next = hi + 1;
        }
        assert_eq!(next, QUESTIONS as i64 + 1);
    }
}
