//! `langcamp seed [--demo]`: create what a fresh school needs, and optionally a believable
//! demo school. Idempotent: every item is looked up by its natural key (an e-mail, a title,
//! a setting key) and only created when missing, so running it twice changes nothing.
//!
//! Everything goes through the core operations as the operator, so the demo data obeys the
//! same validation as data entered over HTTP. A manual clock spreads users, results and
//! contacts over the past months, so the dashboard's trends have something to show.

use std::collections::HashSet;

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};
use langcamp_core::contacts::{ContactFilter, ContactInput, ContactStatusInput, ReplyInput};
use langcamp_core::courses::{CourseInput, CourseQuery};
use langcamp_core::settings::SettingInput;
use langcamp_core::users::AdminProfileInput;
use langcamp_core::{Actor, Clock, Error, Langcamp, PageRequest, Role};
use serde::Serialize;
use serde_json::{Value, json};

use crate::Cli;

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

pub async fn run(cli: &Cli, args: &Args) -> Result<(), String> {
    let config = crate::config(cli)?;
    let now = Utc::now();
    let clock = Clock::manual(now);
    let app = Langcamp::connect(config, clock.clone())
        .await
        .map_err(|e| format!("cannot open the database: {e}"))?;
    app.migrate()
        .await
        .map_err(|e| format!("migration failed: {e}"))?;
    let mut seeder = Seeder {
        app: app.clone(),
        clock,
        now,
        created: Created::default(),
    };
    seeder.base().await.map_err(crate::failure)?;
    if args.demo {
        seeder.demo().await.map_err(crate::failure)?;
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

const OP: Actor = Actor::Operator;

fn input<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::internal(format!("demo data does not fit its input type: {e}")))
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
        self.contacts().await?;
        let _ = students;
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
        let students: [(&str, &str, i64, &str, &str, &str, &str, &str); 16] = [
            (
                "ana.silva",
                "Ana Silva",
                27,
                "female",
                "Lisbon",
                "Portugal",
                "+351",
                "pt-PT",
            ),
            (
                "lukas.meyer",
                "Lukas Meyer",
                34,
                "male",
                "Berlin",
                "Germany",
                "+49",
                "de",
            ),
            (
                "sofia.rossi",
                "Sofia Rossi",
                22,
                "female",
                "Milan",
                "Italy",
                "+39",
                "it",
            ),
            (
                "james.brown",
                "James Brown",
                41,
                "male",
                "Leeds",
                "United Kingdom",
                "+44",
                "en",
            ),
            (
                "camille.martin",
                "Camille Martin",
                29,
                "female",
                "Lyon",
                "France",
                "+33",
                "fr",
            ),
            (
                "mateo.garcia",
                "Mateo García",
                19,
                "male",
                "Seville",
                "Spain",
                "+34",
                "es",
            ),
            (
                "yuki.tanaka",
                "Yuki Tanaka",
                31,
                "female",
                "Osaka",
                "Japan",
                "+81",
                "en",
            ),
            (
                "olga.nowak",
                "Olga Nowak",
                45,
                "female",
                "Kraków",
                "Poland",
                "+48",
                "en",
            ),
            (
                "pedro.costa",
                "Pedro Costa",
                38,
                "male",
                "Porto",
                "Portugal",
                "+351",
                "pt-PT",
            ),
            (
                "emma.schulz",
                "Emma Schulz",
                16,
                "female",
                "Vienna",
                "Austria",
                "+43",
                "de-AT",
            ),
            (
                "noah.jansen",
                "Noah Jansen",
                25,
                "male",
                "Utrecht",
                "Netherlands",
                "+31",
                "en",
            ),
            (
                "lea.dubois",
                "Léa Dubois",
                52,
                "female",
                "Geneva",
                "Switzerland",
                "+41",
                "fr",
            ),
            (
                "ali.kaya", "Ali Kaya", 30, "male", "Izmir", "Turkey", "+90", "en",
            ),
            (
                "maria.lopez",
                "María López",
                24,
                "prefer_not_to_say",
                "Valencia",
                "Spain",
                "+34",
                "es",
            ),
            (
                "finn.larsen",
                "Finn Larsen",
                36,
                "male",
                "Aarhus",
                "Denmark",
                "+45",
                "en",
            ),
            (
                "ines.moreau",
                "Inès Moreau",
                21,
                "other",
                "Nantes",
                "France",
                "+33",
                "fr",
            ),
        ];
        let mut ids = Vec::new();
        for (i, (local, name, age, gender, city, country, code, locale)) in
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
                    let _ = locale;
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
            .list_courses(&OP, &CourseQuery::default())
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
            self.app.create_course(&OP, course).await?;
            self.created.courses += 1;
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
                "PENDING",
                2,
            ),
            (
                "Jonas",
                "Weber",
                "jonas.weber@example.com",
                "Can my company book a private German course for five people?",
                "linkedin",
                "IN_PROGRESS",
                9,
            ),
            (
                "Chloé",
                "Bernard",
                "chloe.bernard@example.com",
                "Is the Spanish summer camp suitable for a 16-year-old?",
                "instagram",
                "REPLIED",
                20,
            ),
            (
                "Peter",
                "Novak",
                "peter.novak@example.com",
                "I took the placement test twice; which result counts?",
                "website",
                "REPLIED",
                45,
            ),
            (
                "Aisha",
                "Khan",
                "aisha.khan@example.com",
                "Please remove my data from your newsletter.",
                "email",
                "CLOSED",
                70,
            ),
            (
                "Giulia",
                "Bianchi",
                "giulia.bianchi@example.com",
                "Do you have scholarships for the Italian course?",
                "website",
                "PENDING",
                100,
            ),
            (
                "Oliver",
                "Smith",
                "oliver.smith@example.com",
                "What materials do I need for the business English course?",
                "google",
                "REPLIED",
                130,
            ),
            (
                "Hana",
                "Sato",
                "hana.sato@example.com",
                "Can I switch from A2 to B1 after the first week?",
                "website",
                "IN_PROGRESS",
                160,
            ),
        ];
        for (first, last, email, message, source, status, days_ago) in contacts {
            let found = self
                .app
                .list_contacts(
                    &OP,
                    &ContactFilter {
                        q: Some(email.to_owned()),
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
                    input::<ContactInput>(json!({
                        "firstName": first, "lastName": last, "email": email, "message": message,
                        "phone": "+351 912 000 000", "source": source
                    }))?,
                )
                .await?;
            self.created.contacts += 1;
            self.at(days_ago, 30);
            match status {
                "REPLIED" => {
                    let reply: ReplyInput = input(json!({
                        "replyMessage": format!("Dear {first},\n\nthank you for your message. Our office will be happy to help: yes, that works. Kind regards,\nLangcamp")
                    }))?;
                    self.app.reply_to_contact(&OP, &contact.id, reply).await?;
                }
                "PENDING" => {}
                other => {
                    let change: ContactStatusInput = input(json!({ "status": other }))?;
                    self.app
                        .set_contact_status(&OP, &contact.id, change)
                        .await?;
                }
            }
        }
        Ok(())
    }
}
