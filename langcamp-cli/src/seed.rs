//! `langcamp seed [--demo]`: create what a fresh school needs, and optionally a believable
//! demo school. Idempotent: every item is looked up by its natural key (an e-mail, a title,
//! a setting key) and only created when missing, so running it twice changes nothing.
//!
//! Everything goes through the core operations as the operator, so the demo data obeys the
//! same validation as data entered over HTTP. A manual clock spreads users, results and
//! contacts over the past months, so the dashboard's trends have something to show.

use std::collections::HashSet;

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use langcamp_core::contacts::{
    ContactSearch, ContactStatus, Message, Name, NewContact, Phone, ReplyText, Source,
};
use langcamp_core::courses::{CourseFilter, CourseInput, NewCourse};
use langcamp_core::domain::{CefrLevel, Email, HttpUrl, Id, LanguageTag};
use langcamp_core::materials::{Assignment, Description, NewMaterial, Title, Video, VideoTitle};
use langcamp_core::placement::{ProficiencyTest, ResultFilter, SubmitInput, TestFilter, TestInput};
use langcamp_core::settings::SettingInput;
use langcamp_core::users::AdminProfileInput;
use langcamp_core::{Actor, Caller, Clock, Error, Langcamp, PageRequest, Role};
use serde::Serialize;
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

/// A demo student: e-mail local part, name, age, gender, city, country, dialling code.
struct Student(
    &'static str,
    &'static str,
    i64,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

struct Seeder {
    app: Langcamp,
    clock: Clock,
    now: DateTime<Utc>,
    created: Created,
}

const OP: Actor = Actor::Operator;

fn input<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::internal(format!("demo data does not fit its input type: {e}")))
}

/// A value of the demo data, checked by the rule clients' values pass.
fn valid<T>(parsed: Result<T, String>) -> Result<T, Error> {
    parsed.map_err(|message| Error::internal(format!("demo data breaks a rule: {message}")))
}

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
        match self.app.get_setting(&OP, key).await {
            Ok(existing) if existing.value != json!("") || value == json!("") => return Ok(()),
            Ok(_) | Err(Error::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
        self.app
            .put_setting(&OP, SettingInput::new(key, value))
            .await?;
        self.created.settings += 1;
        Ok(())
    }

    async fn demo(&mut self) -> Result<(), Error> {
        self.at(0, 0);
        self.setting(
            "landing_video_url",
            json!("https://videos.langcamp.example/welcome.mp4"),
        )
        .await?;
        let students = self.users().await?;
        self.courses().await?;
        let tests = self.tests().await?;
        self.results(&students, &tests).await?;
        self.materials(&students).await?;
        self.contacts().await?;
        self.at(0, 0);
        Ok(())
    }

    /// Two admins and students from several countries, joined over the past seven months.
    async fn users(&mut self) -> Result<Vec<String>, Error> {
        let staff = [
            (
                "director@langcamp.example",
                Role::Superadmin,
                "Helena Duarte",
            ),
            ("office@langcamp.example", Role::Admin, "Tomás Ferreira"),
        ];
        for (email, role, name) in staff {
            self.at(210, 0);
            self.user(email, role, Some(name)).await?;
        }
        let students: [Student; 16] = [
            Student(
                "ana.silva",
                "Ana Silva",
                27,
                "female",
                "Lisbon",
                "Portugal",
                "+351",
            ),
            Student(
                "lukas.meyer",
                "Lukas Meyer",
                34,
                "male",
                "Berlin",
                "Germany",
                "+49",
            ),
            Student(
                "sofia.rossi",
                "Sofia Rossi",
                22,
                "female",
                "Milan",
                "Italy",
                "+39",
            ),
            Student(
                "james.brown",
                "James Brown",
                41,
                "male",
                "Leeds",
                "United Kingdom",
                "+44",
            ),
            Student(
                "camille.martin",
                "Camille Martin",
                29,
                "female",
                "Lyon",
                "France",
                "+33",
            ),
            Student(
                "mateo.garcia",
                "Mateo García",
                19,
                "male",
                "Seville",
                "Spain",
                "+34",
            ),
            Student(
                "yuki.tanaka",
                "Yuki Tanaka",
                31,
                "female",
                "Osaka",
                "Japan",
                "+81",
            ),
            Student(
                "olga.nowak",
                "Olga Nowak",
                45,
                "female",
                "Kraków",
                "Poland",
                "+48",
            ),
            Student(
                "pedro.costa",
                "Pedro Costa",
                38,
                "male",
                "Porto",
                "Portugal",
                "+351",
            ),
            Student(
                "emma.schulz",
                "Emma Schulz",
                16,
                "female",
                "Vienna",
                "Austria",
                "+43",
            ),
            Student(
                "noah.jansen",
                "Noah Jansen",
                25,
                "male",
                "Utrecht",
                "Netherlands",
                "+31",
            ),
            Student(
                "lea.dubois",
                "Léa Dubois",
                52,
                "female",
                "Geneva",
                "Switzerland",
                "+41",
            ),
            Student("ali.kaya", "Ali Kaya", 30, "male", "Izmir", "Turkey", "+90"),
            Student(
                "maria.lopez",
                "María López",
                24,
                "prefer_not_to_say",
                "Valencia",
                "Spain",
                "+34",
            ),
            Student(
                "finn.larsen",
                "Finn Larsen",
                36,
                "male",
                "Aarhus",
                "Denmark",
                "+45",
            ),
            Student(
                "ines.moreau",
                "Inès Moreau",
                21,
                "other",
                "Nantes",
                "France",
                "+33",
            ),
        ];
        let mut ids = Vec::new();
        for (i, Student(local, name, age, gender, city, country, code)) in
            students.iter().enumerate()
        {
            // Spread sign-ups over about seven months, a few each month.
            self.at(200 - 12 * i as i64, 9);
            let email = format!("{local}@example.com");
            let existing = self.app.get_user_by_email(&OP, &email).await;
            let user = match existing {
                Ok(user) => user,
                Err(Error::NotFound(_)) => {
                    // The last few have not completed registration yet.
                    let complete = i < 13;
                    let user = self
                        .app
                        .create_user(&OP, &email, Role::User, complete.then_some(*name))
                        .await?;
                    self.created.users += 1;
                    if complete {
                        let profile: AdminProfileInput = input(json!({
                            "age": age, "gender": gender, "city": city, "country": country,
                            "phone": format!("{}{:07}", &code[1..], 1_000_000 + i * 7919)
                        }))?;
                        self.app
                            .admin_update_profile(&OP, &user.id, profile)
                            .await?;
                    }
                    user
                }
                Err(e) => return Err(e),
            };
            ids.push(user.id);
        }
        Ok(ids)
    }

    async fn user(&mut self, email: &str, role: Role, name: Option<&str>) -> Result<(), Error> {
        match self.app.get_user_by_email(&OP, email).await {
            Ok(_) => Ok(()),
            Err(Error::NotFound(_)) => {
                self.app.create_user(&OP, email, role, name).await?;
                self.created.users += 1;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    async fn courses(&mut self) -> Result<(), Error> {
        let existing: HashSet<String> = self
            .app
            .list_courses(&OP, &CourseFilter::default())
            .await?
            .iter()
            .map(|c| c.title.clone())
            .collect();
        let year = self.now.year();
        let courses = [
            (
                "English for Travellers",
                "en",
                "A2",
                "en",
                "Lisbon",
                290.0,
                "EUR",
                true,
            ),
            (
                "Business English Intensive",
                "en",
                "B2",
                "en",
                "Online",
                540.0,
                "EUR",
                true,
            ),
            (
                "Deutsch kompakt",
                "de",
                "A1",
                "de",
                "Berlin",
                350.0,
                "EUR",
                true,
            ),
            (
                "German Grammar Workshop",
                "de",
                "B1",
                "en",
                "Online",
                180.0,
                "EUR",
                true,
            ),
            (
                "Español conversacional",
                "es",
                "B1",
                "es",
                "Seville",
                320.0,
                "EUR",
                true,
            ),
            (
                "Spanish Summer Camp",
                "es",
                "A2",
                "en",
                "Valencia",
                890.0,
                "EUR",
                true,
            ),
            (
                "Français des affaires",
                "fr",
                "C1",
                "fr",
                "Lyon",
                610.0,
                "EUR",
                true,
            ),
            (
                "Italiano per principianti",
                "it",
                "A1",
                "pt-PT",
                "Milan",
                260.0,
                "EUR",
                false,
            ),
        ];
        for (i, (title, target, level, locale, location, price, currency, published)) in
            courses.iter().enumerate()
        {
            if existing.contains(*title) {
                continue;
            }
            let month = (i as u32 % 9) + 1;
            let start = Utc
                .with_ymd_and_hms(year + 1, month, 5, 0, 0, 0)
                .single()
                .unwrap_or(self.now);
            let end = start + Duration::weeks(6);
            let course: CourseInput = input(json!({
                "title": title,
                "summary": format!("{level} course in {location}, six weeks, small groups."),
                "description": format!("{title}: speaking-first lessons with native teachers, weekly progress checks and a certificate at the end."),
                "targetLanguage": target, "level": level, "locale": locale, "location": location,
                "startDate": start.format("%Y-%m-%d").to_string(), "endDate": end.format("%Y-%m-%d").to_string(),
                "price": price, "currency": currency, "capacity": 12, "isPublished": published, "sortOrder": i
            }))?;
            self.app
                .create_course(&OP, NewCourse::try_from(course)?)
                .await?;
            self.created.courses += 1;
        }
        Ok(())
    }

    /// One placement test per language, six questions worth 1, 1, 1, 2, 2 and 3 points,
    /// with CEFR ranges covering every score from 0 to 10.
    async fn tests(&mut self) -> Result<Vec<String>, Error> {
        let existing: Vec<ProficiencyTest> = self
            .app
            .list_tests(
                &OP,
                &TestFilter::default(),
                PageRequest {
                    page: 1,
                    limit: 100,
                },
            )
            .await?
            .list;
        let mut ids = Vec::new();
        for (language, name, questions) in placement_questions() {
            let title = format!("{name} placement test");
            if let Some(test) = existing.iter().find(|t| t.title == title) {
                ids.push(test.id.clone());
                continue;
            }
            self.at(220, 0);
            let points = [1, 1, 1, 2, 2, 3];
            let questions: Vec<Value> = questions
                .iter()
                .zip(points)
                .enumerate()
                .map(|(q, ((text, options, correct), points))| {
                    // The right answer is written first; move it to a varying position.
                    let position = correct_position(q);
                    let mut shuffled = options.to_vec();
                    shuffled.swap(*correct, position);
                    json!({
                        "text": text,
                        "points": points,
                        "options": shuffled.iter().map(|o| json!({ "text": o })).collect::<Vec<_>>(),
                        "correctOptionIndex": position
                    })
                })
                .collect();
            let ranges = [
                (
                    "A1",
                    0,
                    1,
                    "You are starting out: our A1 courses build the basics.",
                ),
                (
                    "A2",
                    2,
                    3,
                    "You handle everyday phrases: an A2 course is your next step.",
                ),
                (
                    "B1",
                    4,
                    5,
                    "You get by in most situations: a B1 course will make you fluent.",
                ),
                (
                    "B2",
                    6,
                    7,
                    "You speak with confidence: a B2 course polishes grammar and style.",
                ),
                (
                    "C1",
                    8,
                    9,
                    "You are an advanced speaker: our C1 seminars are for you.",
                ),
                (
                    "C2",
                    10,
                    10,
                    "Near-native command: try our C2 conversation club.",
                ),
            ];
            let test: TestInput = input(json!({
                "title": title,
                "description": format!("Twelve minutes, six questions: find your {name} level."),
                "locale": "en",
                "targetLanguage": language,
                "timeLimitMinutes": 12,
                "isActive": true,
                "questions": questions,
                "levelRanges": ranges.iter().map(|(level, min, max, message)| {
                    json!({ "level": level, "minScore": min, "maxScore": max, "message": message })
                }).collect::<Vec<_>>()
            }))?;
            ids.push(self.app.create_test(&OP, test).await?.id);
            self.created.tests += 1;
        }
        Ok(ids)
    }

    /// Students who completed registration take one or two tests over the past months.
    async fn results(&mut self, students: &[String], tests: &[String]) -> Result<(), Error> {
        let taken = self
            .app
            .list_test_results(&OP, &ResultFilter::default(), PageRequest::default())
            .await?
            .pagination
            .total_items;
        if taken > 0 || tests.is_empty() {
            return Ok(());
        }
        for (i, student) in students.iter().enumerate().take(13) {
            for round in 0..(1 + i % 2) {
                let test = &tests[(i + round) % tests.len()];
                // Deterministic, varied answers: student i gets the first k right.
                let right = (i * 3 + round * 2) % 7;
                let answers: Vec<Value> = (0..6)
                    .map(|q| {
                        let correct = correct_position(q);
                        let chosen = if q < right {
                            correct
                        } else {
                            (correct + 1) % 4
                        };
                        json!({ "questionIndex": q, "selectedOptionIndex": chosen })
                    })
                    .collect();
                self.at(190 - 12 * i as i64 + 20 * round as i64 - 10, 15);
                let student_actor = Actor::User(Caller {
                    user_id: student.clone(),
                    role: Role::User,
                    session_id: "seed".into(),
                    token_id: "seed".into(),
                    token_expires_at: 0,
                });
                let submission: SubmitInput = input(json!({ "answers": answers }))?;
                self.app
                    .submit_test(&student_actor, test, submission)
                    .await?;
                self.created.results += 1;
            }
        }
        Ok(())
    }

    /// Materials with videos, each assigned to a few students.
    async fn materials(&mut self, students: &[String]) -> Result<(), Error> {
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
        let materials = [
            (
                "Everyday English, unit 1",
                "en",
                CefrLevel::A2,
                "Greetings, small talk and directions.",
            ),
            (
                "German cases explained",
                "de",
                CefrLevel::B1,
                "Nominative, accusative, dative and genitive with examples.",
            ),
            (
                "Spanish for the kitchen",
                "es",
                CefrLevel::A1,
                "Food, recipes and ordering at a restaurant.",
            ),
            (
                "French business e-mails",
                "fr",
                CefrLevel::B2,
                "Formal openings, requests and polite closings.",
            ),
        ];
        for (m, (title, language, level, description)) in materials.iter().enumerate() {
            if existing.iter().any(|t| t == title) {
                continue;
            }
            self.at(150 - 30 * m as i64, 11);
            let video = |title: &str, file: &str| -> Result<Video, Error> {
                Ok(Video {
                    id: None,
                    title: Some(valid(VideoTitle::parse("title", title))?),
                    url: valid(HttpUrl::parse(
                        "url",
                        &format!("https://videos.langcamp.example/{language}/{m}/{file}"),
                    ))?,
                })
            };
            let new = NewMaterial {
                title: valid(Title::parse("title", title))?,
                description: Some(valid(Description::parse("description", description))?),
                locale: Some(valid(LanguageTag::parse("locale", "en"))?),
                target_language: Some(valid(LanguageTag::parse("targetLanguage", language))?),
                level: Some(*level),
                videos: vec![
                    video("Lesson video", "lesson.mp4")?,
                    video("Pronunciation drill", "drill.mp4")?,
                ],
            };
            let material = self.app.create_material(&OP, new, Vec::new()).await?;
            self.created.materials += 1;
            let picked = students
                .iter()
                .skip(m)
                .step_by(3)
                .take(4)
                .map(Id::from)
                .collect();
            self.at(140 - 30 * m as i64, 12);
            let assigned = self
                .app
                .assign_material(&OP, &material.typed_id(), &Assignment::new(picked)?)
                .await?;
            self.created.assignments += usize::try_from(assigned.assigned).unwrap_or(0);
        }
        Ok(())
    }

    /// Contacts in every status, some replied (the reply mail goes to the outbox).
    async fn contacts(&mut self) -> Result<(), Error> {
        let contacts = [
            (
                "Marta",
                "Reis",
                "marta.reis@example.com",
                "Do you offer evening classes for adults in Lisbon?",
                "website",
                ContactStatus::Pending,
                2,
            ),
            (
                "Jonas",
                "Weber",
                "jonas.weber@example.com",
                "Can my company book a private German course for five people?",
                "linkedin",
                ContactStatus::InProgress,
                9,
            ),
            (
                "Chloé",
                "Bernard",
                "chloe.bernard@example.com",
                "Is the Spanish summer camp suitable for a 16-year-old?",
                "instagram",
                ContactStatus::Replied,
                20,
            ),
            (
                "Peter",
                "Novak",
                "peter.novak@example.com",
                "I took the placement test twice; which result counts?",
                "website",
                ContactStatus::Replied,
                45,
            ),
            (
                "Aisha",
                "Khan",
                "aisha.khan@example.com",
                "Please remove my data from your newsletter.",
                "email",
                ContactStatus::Closed,
                70,
            ),
            (
                "Giulia",
                "Bianchi",
                "giulia.bianchi@example.com",
                "Do you have scholarships for the Italian course?",
                "website",
                ContactStatus::Pending,
                100,
            ),
            (
                "Oliver",
                "Smith",
                "oliver.smith@example.com",
                "What materials do I need for the business English course?",
                "google",
                ContactStatus::Replied,
                130,
            ),
            (
                "Hana",
                "Sato",
                "hana.sato@example.com",
                "Can I switch from A2 to B1 after the first week?",
                "website",
                ContactStatus::InProgress,
                160,
            ),
        ];
        for (first, last, email, message, source, status, days_ago) in contacts {
            let found = self
                .app
                .list_contacts(
                    &OP,
                    &ContactSearch {
                        text: Some(email.to_owned()),
                        status: None,
                    },
                    PageRequest::default(),
                )
                .await?;
            if found.pagination.total_items > 0 {
                continue;
            }
            self.at(days_ago, 10);
            let contact = self
                .app
                .create_contact(
                    &OP,
                    NewContact {
                        first_name: valid(Name::parse("firstName", first))?,
                        last_name: valid(Name::parse("lastName", last))?,
                        email: valid(Email::parse("email", email))?,
                        phone: valid(Phone::parse_optional("+351 912 000 000"))?,
                        message: valid(Message::parse("message", message))?,
                        source: valid(Source::parse_optional("source", source))?,
                    },
                )
                .await?;
            self.created.contacts += 1;
            self.at(days_ago, 30);
            match status {
                ContactStatus::Replied => {
                    let reply = valid(ReplyText::parse(
                        "replyMessage",
                        &format!(
                            "Dear {first},\n\nthank you for your message. Our office will be happy to help: yes, that works. Kind regards,\nLangcamp"
                        ),
                    ))?;
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

/// Where the right option of question `q` sits in the demo tests.
fn correct_position(q: usize) -> usize {
    (q * 3 + 1) % 4
}

/// (language code, English name, questions: text, four options, index of the right one).
type Question = (&'static str, [&'static str; 4], usize);

fn placement_questions() -> Vec<(&'static str, &'static str, [Question; 6])> {
    vec![
        (
            "en",
            "English",
            [
                (
                    "She ___ to work by bus every day.",
                    ["goes", "go", "going", "gone"],
                    0,
                ),
                (
                    "I have lived here ___ 2019.",
                    ["since", "for", "from", "during"],
                    0,
                ),
                (
                    "If it rains, we ___ at home.",
                    ["will stay", "stayed", "would stayed", "stay will"],
                    0,
                ),
                (
                    "By the time we arrived, the film ___.",
                    ["had started", "has started", "starts", "was start"],
                    0,
                ),
                (
                    "I wish I ___ more time to travel.",
                    ["had", "have", "will have", "am having"],
                    0,
                ),
                (
                    "Hardly ___ the door when the phone rang.",
                    ["had I opened", "I had opened", "I opened", "did I opened"],
                    0,
                ),
            ],
        ),
        (
            "de",
            "German",
            [
                (
                    "Ich ___ aus Portugal.",
                    ["komme", "kommst", "kommt", "kommen"],
                    0,
                ),
                (
                    "Wir fahren morgen ___ Berlin.",
                    ["nach", "zu", "in", "bei"],
                    0,
                ),
                (
                    "Gestern ___ ich ins Kino gegangen.",
                    ["bin", "habe", "war", "hatte"],
                    0,
                ),
                (
                    "Das ist der Mann, ___ ich geholfen habe.",
                    ["dem", "den", "der", "dessen"],
                    0,
                ),
                (
                    "Wenn ich Zeit ___, würde ich mehr lesen.",
                    ["hätte", "habe", "hatte", "haben"],
                    0,
                ),
                (
                    "Der Vertrag muss bis Freitag ___ werden.",
                    [
                        "unterschrieben",
                        "unterschreiben",
                        "unterschrieb",
                        "unterschreibt",
                    ],
                    0,
                ),
            ],
        ),
        (
            "es",
            "Spanish",
            [
                ("Yo ___ estudiante.", ["soy", "estoy", "es", "eres"], 0),
                ("¿Dónde ___ el banco?", ["está", "es", "hay", "son"], 0),
                ("Ayer ___ al mercado.", ["fui", "iba", "voy", "he ido"], 0),
                (
                    "Espero que tú ___ bien.",
                    ["estés", "estás", "estar", "estarás"],
                    0,
                ),
                (
                    "Si tuviera dinero, ___ un coche.",
                    ["compraría", "compro", "compraré", "compré"],
                    0,
                ),
                (
                    "Me alegro de que ___ venido.",
                    ["hayas", "has", "habías", "hayan"],
                    0,
                ),
            ],
        ),
        (
            "fr",
            "French",
            [
                (
                    "Je ___ français.",
                    ["parle", "parles", "parlons", "parlez"],
                    0,
                ),
                (
                    "Nous ___ au cinéma hier.",
                    ["sommes allés", "avons allé", "allons", "irons"],
                    0,
                ),
                (
                    "Il faut que tu ___ tes devoirs.",
                    ["fasses", "fais", "feras", "faisais"],
                    0,
                ),
                (
                    "C'est le livre ___ je t'ai parlé.",
                    ["dont", "que", "qui", "où"],
                    0,
                ),
                (
                    "Si j'avais su, je ___ venu.",
                    ["serais", "suis", "serai", "étais"],
                    0,
                ),
                (
                    "Bien qu'il ___ tard, elle continue.",
                    ["soit", "est", "sera", "était"],
                    0,
                ),
            ],
        ),
        (
            "it",
            "Italian",
            [
                (
                    "Io ___ italiano.",
                    ["parlo", "parli", "parla", "parliamo"],
                    0,
                ),
                (
                    "Domani ___ a Roma.",
                    ["andiamo", "andato", "andare", "andavo"],
                    0,
                ),
                (
                    "Ieri ___ una pizza.",
                    ["ho mangiato", "sono mangiato", "mangio", "mangerò"],
                    0,
                ),
                (
                    "Penso che lui ___ ragione.",
                    ["abbia", "ha", "avrà", "aveva"],
                    0,
                ),
                (
                    "Se potessi, ___ in Italia.",
                    ["vivrei", "vivo", "vivrò", "vissi"],
                    0,
                ),
                (
                    "Benché ___ stanco, ha finito il lavoro.",
                    ["fosse", "era", "è", "sarà"],
                    0,
                ),
            ],
        ),
    ]
}
