//! `langcamp seed [--demo]`: create what a fresh school needs, and optionally a believable
//! demo school. Idempotent: every item is looked up by its natural key (an e-mail, a title,
//! a setting key) and only created when missing, so running it twice changes nothing.
//!
//! Everything goes through the core operations as the operator, so the demo data obeys the
//! same validation as data entered over HTTP. The demo school itself is data, in
//! `seed/demo.json`; this file holds how it is laid out in time: a manual clock spreads
//! users, results and contacts over the past months, so the dashboard's trends have
//! something to show.

use std::collections::HashSet;

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use langcamp_core::contacts::{
    ContactInput, ContactSearch, ContactStatus, NewContact, ReplyInput, ReplyText,
};
use langcamp_core::courses::{CourseFilter, CourseInput, NewCourse};
use langcamp_core::domain::validate::Patch;
use langcamp_core::domain::{Id, LanguageFilter};
use langcamp_core::materials::{Assignment, MaterialInput, NewMaterial};
use langcamp_core::placement::{
    LevelRangeInput, NewTest, ProficiencyTest, ResultQuery, SubmitInput, TestInput,
};
use langcamp_core::settings::NewSetting;
use langcamp_core::users::{AdminProfileInput, NewUser, ProfileChange, User};
use langcamp_core::{Actor, Clock, Error, Langcamp, PageRequest, Role};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Cli, CliError};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also create a demo school: courses, placement tests, materials, students with
    /// results over the past months, contacts and the landing video.
    #[arg(long)]
    demo: bool,
}

/// What one run created (items that already existed are not counted).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    settings: usize,
    users: usize,
    courses: usize,
    tests: usize,
    results: usize,
    materials: usize,
    assignments: usize,
    contacts: usize,
}

pub async fn run(cli: &Cli, args: &Args) -> Result<(), CliError> {
    let config = crate::config(cli)?;
    let now = Utc::now();
    let clock = Clock::manual(now);
    let app = crate::open_with_clock(config, clock.clone()).await?;
    app.migrate()
        .await
        .map_err(|e| CliError::from(e).context("migration failed"))?;
    let mut seeder = Seeder {
        app: app.clone(),
        clock,
        now,
        created: Created::default(),
    };
    seeder.base().await?;
    if args.demo {
        seeder.demo().await?;
    }
    if cli.json {
        crate::print_json(&seeder.created)?;
    } else {
        let c = &seeder.created;
        println!(
            "seeded: {} settings, {} users, {} courses, {} tests, {} results, {} materials, {} assignments, {} contacts",
            c.settings,
            c.users,
            c.courses,
            c.tests,
            c.results,
            c.materials,
            c.assignments,
            c.contacts
        );
    }
    app.db().close().await;
    Ok(())
}

struct Seeder {
    app: Langcamp,
    clock: Clock,
    now: DateTime<Utc>,
    created: Created,
}

/// The demo school, read from `seed/demo.json`: each record is in the shape of the core
/// input it becomes (the body a client would send), so the data obeys the same rules.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Demo {
    landing_video_url: String,
    staff: Vec<Staff>,
    /// In the order they signed up.
    students: Vec<Student>,
    courses: Vec<CourseInput>,
    /// Without `levelRanges`: every test shares `level_ranges`.
    placement_tests: Vec<TestInput>,
    level_ranges: Vec<LevelRangeInput>,
    materials: Vec<MaterialInput>,
    contacts: Vec<DemoContact>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Staff {
    email: String,
    role: Role,
    name: String,
}

/// A student; one without `name` has not completed registration.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Student {
    email: String,
    name: Option<String>,
    profile: Option<AdminProfileInput>,
}

/// A contact request, sent `daysAgo` days before the run and then brought to `status`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DemoContact {
    days_ago: i64,
    status: ContactStatus,
    form: ContactInput,
}

impl Demo {
    fn load() -> Result<Demo, Error> {
        serde_json::from_str(include_str!("seed/demo.json"))
            .map_err(|e| Error::internal(format!("demo data does not fit its input type: {e}")))
    }
}

/// A command built from the demo data, checked by the rules clients' input passes.
fn valid<T>(parsed: Result<T, Error>) -> Result<T, Error> {
    parsed.map_err(|e| Error::internal(format!("demo data breaks a rule: {e}")))
}

/// A demo student's id, and whether the student completed registration.
struct Enrolled {
    id: Id<User>,
    registered: bool,
    /// When they joined, in days before the run.
    joined_days_ago: i64,
}

/// A placement test and, per question, the position of its right option.
struct SeededTest {
    id: Id<ProficiencyTest>,
    answer_key: Vec<i64>,
}

const OP: Actor = Actor::Operator;

impl Seeder {
    /// Sets the clock `days` before the start of the run (plus `hours`), for what comes next.
    fn at(&self, days: i64, hours: i64) {
        self.clock
            .set(self.now - Duration::days(days) + Duration::hours(hours));
    }

    /// What every school needs: the settings the site reads.
    async fn base(&mut self) -> Result<(), Error> {
        self.setting("landing_video_url", json!("")).await
    }

    async fn setting(&mut self, key: &str, value: Value) -> Result<(), Error> {
        let empty = value == json!("");
        let setting = NewSetting::new(key, value)?;
        match self.app.get_setting(&OP, setting.key()).await {
            Ok(existing) if existing.value != json!("") || empty => return Ok(()),
            Ok(_) | Err(Error::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        self.app.put_setting(&OP, setting).await?;
        self.created.settings += 1;
        Ok(())
    }

    async fn demo(&mut self) -> Result<(), Error> {
        let demo = Demo::load()?;
        self.at(0, 0);
        self.setting("landing_video_url", json!(demo.landing_video_url))
            .await?;
        for staff in &demo.staff {
            self.at(210, 0);
            self.user(&staff.email, staff.role, Some(&staff.name))
                .await?;
        }
        let students = self.students(demo.students).await?;
        self.courses(demo.courses).await?;
        let tests = self.tests(demo.placement_tests, demo.level_ranges).await?;
        self.results(&students, &tests).await?;
        self.adaptive_test().await?;
        self.materials(demo.materials, &students).await?;
        self.contacts(demo.contacts).await?;
        self.at(0, 0);
        Ok(())
    }

    /// Students from several countries, joined over the past months up to the last few
    /// days: the dates are relative to the run, so the demo looks like a live school
    /// whenever it is seeded (activity in the last 30 days, and growing).
    async fn students(&mut self, students: Vec<Student>) -> Result<Vec<Enrolled>, Error> {
        let mut enrolled = Vec::new();
        let count = students.len() as i64;
        for (i, student) in students.into_iter().enumerate() {
            // One sign-up every 12 days, the newest 4 days ago.
            let joined_days_ago = 4 + 12 * (count - 1 - i as i64);
            self.at(joined_days_ago, 9);
            let new = NewUser::new(&student.email, Role::User, student.name.as_deref())?;
            let user = match self.app.get_user_by_email(&OP, new.email()).await {
                Ok(user) => user,
                Err(Error::NotFound(_)) => {
                    let user = self.app.create_user(&OP, new).await?;
                    self.created.users += 1;
                    if let Some(profile) = student.profile {
                        self.app
                            .admin_update_profile(
                                &OP,
                                &user.typed_id(),
                                ProfileChange::try_from(profile)?,
                            )
                            .await?;
                    }
                    user
                }
                Err(e) => return Err(e),
            };
            enrolled.push(Enrolled {
                id: user.typed_id(),
                registered: student.name.is_some(),
                joined_days_ago,
            });
        }
        Ok(enrolled)
    }

    async fn user(&mut self, email: &str, role: Role, name: Option<&str>) -> Result<(), Error> {
        let new = NewUser::new(email, role, name)?;
        match self.app.get_user_by_email(&OP, new.email()).await {
            Ok(_) => Ok(()),
            Err(Error::NotFound(_)) => {
                self.app.create_user(&OP, new).await?;
                self.created.users += 1;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Courses starting next year, six weeks each, one a month from January.
    async fn courses(&mut self, courses: Vec<CourseInput>) -> Result<(), Error> {
        let existing: HashSet<String> = self
            .app
            .list_courses(&OP, &CourseFilter::default())
            .await?
            .iter()
            .map(|c| c.title.clone())
            .collect();
        let year = self.now.year();
        for (i, mut course) in courses.into_iter().enumerate() {
            if matches!(&course.title, Patch::Value(title) if existing.contains(title)) {
                continue;
            }
            let month = (i as u32 % 9) + 1;
            let start = Utc
                .with_ymd_and_hms(year + 1, month, 5, 0, 0, 0)
                .single()
                .unwrap_or(self.now);
            let end = start + Duration::weeks(6);
            course.start_date = Patch::Value(start.format("%Y-%m-%d").to_string());
            course.end_date = Patch::Value(end.format("%Y-%m-%d").to_string());
            self.app
                .create_course(&OP, NewCourse::try_from(course)?)
                .await?;
            self.created.courses += 1;
        }
        Ok(())
    }

    /// The tests already there (a second seed finds its tests by title and adds none).
    async fn existing_tests(&self) -> Result<Vec<ProficiencyTest>, Error> {
        let first = PageRequest {
            page: 1,
            limit: 100,
        };
        let every_language = LanguageFilter::default();
        Ok(self.app.list_tests(&OP, &every_language, first).await?.list)
    }

    /// One placement test per language, with CEFR ranges covering every score.
    async fn tests(
        &mut self,
        tests: Vec<TestInput>,
        ranges: Vec<LevelRangeInput>,
    ) -> Result<Vec<SeededTest>, Error> {
        let existing = self.existing_tests().await?;
        let mut seeded = Vec::new();
        for mut test in tests {
            let answer_key = test
                .questions
                .iter()
                .flatten()
                .map(|q| q.correct_option_index.unwrap_or(0))
                .collect();
            let id = match existing
                .iter()
                .find(|t| Some(&t.title) == test.title.as_ref())
            {
                Some(found) => found.typed_id(),
                None => {
                    self.at(220, 0);
                    test.level_ranges = Some(ranges.clone());
                    let id = self
                        .app
                        .create_test(&OP, NewTest::try_from(test)?)
                        .await?
                        .typed_id();
                    self.created.tests += 1;
                    id
                }
            };
            seeded.push(SeededTest { id, answer_key });
        }
        Ok(seeded)
    }

    /// One adaptive test (CONTRACT §19), from `seed/adaptive_test.json`: 60 questions, 10
    /// at each CEFR level. Nobody has taken it: its attempts are for the visitor to try.
    async fn adaptive_test(&mut self) -> Result<(), Error> {
        let input: TestInput = serde_json::from_str(include_str!("seed/adaptive_test.json"))
            .map_err(|e| Error::internal(format!("demo data does not fit its input type: {e}")))?;
        let existing = self.existing_tests().await?;
        if existing
            .iter()
            .any(|t| Some(&t.title) == input.title.as_ref())
        {
            return Ok(());
        }
        self.at(220, 0);
        self.app
            .create_test(&OP, valid(NewTest::try_from(input))?)
            .await?;
        self.created.tests += 1;
        Ok(())
    }

    /// Students who completed registration take one or two tests over the past months.
    async fn results(&mut self, students: &[Enrolled], tests: &[SeededTest]) -> Result<(), Error> {
        let taken = self
            .app
            .list_test_results(&OP, &ResultQuery::default(), PageRequest::default())
            .await?
            .pagination
            .total_items;
        if taken > 0 || tests.is_empty() {
            return Ok(());
        }
        for (i, enrolled) in students.iter().filter(|s| s.registered).enumerate() {
            let student = self.app.act_as(&OP, &enrolled.id).await?;
            for round in 0..(1 + i % 2) {
                let test = &tests[(i + round) % tests.len()];
                // Deterministic, varied answers: student i gets the first k right.
                let right = (i * 3 + round * 2) % 7;
                let answers: Vec<Value> = test
                    .answer_key
                    .iter()
                    .enumerate()
                    .map(|(q, &correct)| {
                        let chosen = if q < right {
                            correct
                        } else {
                            (correct + 1) % 4
                        };
                        json!({ "questionIndex": q, "selectedOptionIndex": chosen })
                    })
                    .collect();
                // A first test the day after joining; a retake after some months of
                // classes, recently (a fifth of their time at the school ago).
                let days_ago = match round {
                    0 => enrolled.joined_days_ago - 1,
                    _ => enrolled.joined_days_ago / 5,
                };
                self.at(days_ago.max(1), 5);
                let submission = SubmitInput {
                    answers: Patch::Value(json!(answers)),
                };
                self.app.submit_test(&student, &test.id, submission).await?;
                self.created.results += 1;
            }
        }
        Ok(())
    }

    /// Materials with videos, each assigned to a few students.
    async fn materials(
        &mut self,
        materials: Vec<MaterialInput>,
        students: &[Enrolled],
    ) -> Result<(), Error> {
        let existing: Vec<String> = self
            .app
            .list_materials(
                &OP,
                None,
                PageRequest {
                    page: 1,
                    limit: 100,
                },
            )
            .await?
            .list
            .into_iter()
            .map(|m| m.title)
            .collect();
        for (m, material) in materials.into_iter().enumerate() {
            if existing.iter().any(|t| Some(t) == material.title.as_ref()) {
                continue;
            }
            self.at(100 - 30 * m as i64, 11);
            let new = valid(NewMaterial::try_from(material))?;
            let material = self.app.create_material(&OP, new, Vec::new()).await?;
            self.created.materials += 1;
            let picked = students
                .iter()
                .skip(m)
                .step_by(3)
                .take(4)
                .map(|s| s.id.clone())
                .collect();
            self.at(95 - 30 * m as i64, 12);
            let assigned = self
                .app
                .assign_material(&OP, &material.typed_id(), &Assignment::new(picked)?)
                .await?;
            self.created.assignments += usize::try_from(assigned.assigned).unwrap_or(0);
        }
        Ok(())
    }

    /// Contacts in every status, some replied (the reply mail goes to the outbox).
    async fn contacts(&mut self, contacts: Vec<DemoContact>) -> Result<(), Error> {
        for DemoContact {
            days_ago,
            status,
            form,
        } in contacts
        {
            let found = self
                .app
                .list_contacts(
                    &OP,
                    &ContactSearch {
                        text: form.email.clone(),
                        status: None,
                    },
                    PageRequest::default(),
                )
                .await?;
            if found.pagination.total_items > 0 {
                continue;
            }
            self.at(days_ago, 10);
            let new = valid(NewContact::try_from(form))?;
            let first = new.first_name.as_str().to_owned();
            let contact = self.app.create_contact(&OP, new).await?;
            self.created.contacts += 1;
            self.at(days_ago, 30);
            match status {
                ContactStatus::Replied => {
                    let reply = valid(ReplyText::try_from(ReplyInput {
                        reply_message: Some(format!(
                            "Dear {first},\n\nthank you for your message. Our office will be happy to help: yes, that works. Kind regards,\nLangcamp"
                        )),
                    }))?;
                    self.app
                        .reply_to_contact(&OP, &contact.typed_id(), &reply)
                        .await?;
                }
                ContactStatus::Pending => {}
                other => {
                    self.app
                        .set_contact_status(&OP, &contact.typed_id(), other)
                        .await?;
                }
            }
        }
        Ok(())
    }
}
