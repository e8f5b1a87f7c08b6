//! A console on a seeded temporary database (SQLite, or PostgreSQL when `TEST_DATABASE_URL`
//! names a server), driven by key presses and rendered to ratatui's `TestBackend`. Core
//! calls run to completion after each key (in order), so every render is deterministic;
//! the clock is fixed.

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use langcamp_core::contacts::{ContactInput, ContactStatus, NewContact, ReplyInput, ReplyText};
use langcamp_core::courses::{CourseInput, NewCourse};
use langcamp_core::domain::validate::Patch;
use langcamp_core::domain::{Email, Id};
use langcamp_core::materials::{MaterialInput, NewMaterial};
use langcamp_core::placement::{NewTest, SubmitInput, TestInput, TestPatch};
use langcamp_core::settings::NewSetting;
use langcamp_core::users::{AdminProfileInput, NewUser, ProfileChange};
use langcamp_core::{Actor, Clock, Config, Langcamp, Role};
use langcamp_testkit::TestDatabase;
use langcamp_tui::app::App;
use langcamp_tui::editor::EditRequest;
use langcamp_tui::keymap::map_key;
use langcamp_tui::task::settle;
use langcamp_tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

/// An e-mail address of the demo school's data.
pub fn address(email: &str) -> Email {
    Email::parse("email", email).expect("an e-mail address")
}

/// The instant every test starts at: Monday 2026-05-04 09:00 UTC. Seeding moves the
/// clock on by five days and an hour per item, so the school's history spans months.
pub fn start_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, 4, 9, 0, 0)
        .single()
        .expect("a valid date")
}

pub struct Console {
    pub core: Langcamp,
    pub clock: Clock,
    pub app: App,
    /// The folder and database, removed when the test ends.
    _db: TestDatabase,
}

impl Console {
    /// The kinds of mail queued for `recipient`, oldest first.
    pub async fn outbox(&self, recipient: &str) -> Vec<String> {
        sqlx::query_scalar("SELECT kind FROM mail_outbox WHERE recipient = $1 ORDER BY created_at")
            .bind(recipient)
            .fetch_all(self.core.db().reader())
            .await
            .expect("outbox")
    }

    /// A migrated, empty school: on SQLite, or on the PostgreSQL server that
    /// `TEST_DATABASE_URL` names.
    pub async fn empty() -> Console {
        let db = TestDatabase::create_migrated("lc_tui").await;
        let config = Config::from_lookup(db.vars()).expect("test configuration");
        let clock = Clock::manual(start_time());
        let core = Langcamp::connect(config, clock.clone())
            .await
            .expect("connect");
        core.migrate().await.expect("migrate");
        Console {
            core,
            clock,
            app: App::new(),
            _db: db,
        }
    }

    /// A school with staff, students, contact requests, placement tests and results,
    /// materials, courses and settings, created through core as the operator, spread over
    /// four months. The console is open on its first view.
    pub async fn seeded() -> Console {
        let mut console = Console::empty().await;
        console.seed().await;
        let tasks = console.app.start();
        settle(&mut console.app, &console.core, tasks).await;
        console
    }

    fn tick(&self) {
        self.clock.advance(TimeDelta::days(5) + TimeDelta::hours(1));
    }

    async fn seed(&self) {
        let op = &Actor::Operator;
        let core = &self.core;
        for (email, role, name) in [
            (
                "head@langcamp.example",
                Role::Superadmin,
                Some("Helena Head"),
            ),
            ("maria@langcamp.example", Role::Admin, Some("Maria Costa")),
            ("ana.silva@example.com", Role::User, Some("Ana Silva")),
            ("jonas.weber@example.com", Role::User, Some("Jonas Weber")),
            ("new.student@example.com", Role::User, None),
        ] {
            core.create_user(op, NewUser::new(email, role, name).expect("a valid user"))
                .await
                .expect("create user");
            self.tick();
        }
        let ana = core
            .get_user_by_email(op, &address("ana.silva@example.com"))
            .await
            .expect("ana");
        let profile: AdminProfileInput = serde_json::from_value(json!({
            "age": 27, "gender": "female", "city": "Lisbon", "country": "Portugal",
            "phone": "912345678"
        }))
        .expect("profile");
        let change = ProfileChange::try_from(profile).expect("a valid profile");
        core.admin_update_profile(op, &Id::from(&ana.id), change)
            .await
            .expect("profile");

        let mut contact_ids = Vec::new();
        for (first, last, email, message, source) in [
            (
                "Peter",
                "Novak",
                "peter.novak@example.com",
                "I would like to book a trial lesson in German.",
                None,
            ),
            (
                "Chloé",
                "Bernard",
                "chloe.bernard@example.com",
                "Is there a discount for students?\nI study in Porto.",
                Some("pricing-page"),
            ),
            (
                "Marta",
                "Reis",
                "marta.reis@example.com",
                "Do you offer evening classes for adults in Lisbon?",
                Some("website"),
            ),
        ] {
            let input = ContactInput {
                first_name: Some(first.into()),
                last_name: Some(last.into()),
                email: Some(email.into()),
                phone: source.map(|_| "+351 912 000 000".into()),
                message: Some(message.into()),
                source: source.map(str::to_owned),
                locale: None,
            };
            let new = NewContact::try_from(input).expect("a valid contact request");
            let contact = core.create_contact(op, new).await.expect("contact");
            contact_ids.push(contact.typed_id());
            self.tick();
        }
        core.set_contact_status(op, &contact_ids[0], ContactStatus::InProgress)
            .await
            .expect("status");
        core.reply_to_contact(
            op,
            &contact_ids[1],
            &ReplyText::try_from(ReplyInput {
                reply_message: Some("Yes: 20% off with a student card.".into()),
            })
            .expect("a valid reply"),
        )
        .await
        .expect("reply");
        self.tick();

        for course in [
            json!({
                "title": "German for Beginners", "targetLanguage": "de", "level": "A1",
                "locale": "en", "location": "Berlin", "startDate": "2027-01-11",
                "endDate": "2027-03-19", "price": 290, "currency": "EUR", "capacity": 12,
                "isPublished": true, "sortOrder": 1,
                "summary": "Ten weeks, two evenings a week."
            }),
            json!({
                "title": "Business English", "targetLanguage": "en", "level": "B2",
                "startDate": "2027-02-01", "isPublished": false, "sortOrder": 2
            }),
            json!({
                "title": "Spanish Summer Camp", "targetLanguage": "es", "level": "A2",
                "location": "Valencia", "startDate": "2027-07-05", "endDate": "2027-07-30",
                "price": 640, "currency": "EUR", "isPublished": true, "sortOrder": 3
            }),
        ] {
            let input: CourseInput = serde_json::from_value(course).expect("course");
            let new = NewCourse::try_from(input).expect("valid course");
            core.create_course(op, new).await.expect("create course");
            self.tick();
        }

        let german: TestInput = serde_json::from_value(json!({
            "title": "German placement test", "targetLanguage": "de", "locale": "en",
            "timeLimitMinutes": 20,
            "questions": [
                {"text": "Wie ___ du?", "options": [{"text": "heißt"}, {"text": "heißen"}],
                 "correctOptionIndex": 0},
                {"text": "Ich ___ aus Porto.", "options": [{"text": "komme"}, {"text": "kommt"}],
                 "correctOptionIndex": 0},
                {"text": "Gestern ___ ich ins Kino gegangen.", "points": 2,
                 "options": [{"text": "habe"}, {"text": "bin"}], "correctOptionIndex": 1},
                {"text": "Wenn ich Zeit ___, käme ich.", "points": 2,
                 "options": [{"text": "hätte"}, {"text": "habe"}], "correctOptionIndex": 0}
            ],
            "levelRanges": [
                {"level": "A1", "minScore": 0, "maxScore": 2, "message": "Start with A1."},
                {"level": "A2", "minScore": 3, "maxScore": 4, "message": "Join an A2 group."},
                {"level": "B1", "minScore": 5, "maxScore": 6, "message": "Welcome to B1."}
            ]
        }))
        .expect("test");
        let german = NewTest::try_from(german).expect("a valid test");
        let german = core.create_test(op, german).await.expect("create test");
        self.tick();
        let spanish: TestInput = serde_json::from_value(json!({
            "title": "Spanish placement test", "targetLanguage": "es",
            "questions": [
                {"text": "¿Cómo te ___?", "options": [{"text": "llamas"}, {"text": "llama"}],
                 "correctOptionIndex": 0},
                {"text": "Ayer ___ al cine.", "options": [{"text": "fui"}, {"text": "voy"}],
                 "correctOptionIndex": 0}
            ],
            "levelRanges": [
                {"level": "A1", "minScore": 0, "maxScore": 0},
                {"level": "A2", "minScore": 1, "maxScore": 1},
                {"level": "B1", "minScore": 2, "maxScore": 2}
            ]
        }))
        .expect("test");
        let spanish = NewTest::try_from(spanish).expect("a valid test");
        let spanish = core.create_test(op, spanish).await.expect("create test");
        self.tick();
        for (email, test, picks) in [
            ("ana.silva@example.com", &german, vec![0, 0, 1, 0]),
            ("jonas.weber@example.com", &german, vec![0, 0, 0, 1]),
            ("jonas.weber@example.com", &spanish, vec![0, 1]),
            ("ana.silva@example.com", &german, vec![1, 0, 1, 1]),
        ] {
            let user = core
                .get_user_by_email(op, &address(email))
                .await
                .expect("user");
            let taker = core.act_as(op, &user.typed_id()).await.expect("act as");
            let answers: Vec<_> = picks
                .iter()
                .enumerate()
                .map(|(q, o)| json!({"questionIndex": q, "selectedOptionIndex": o}))
                .collect();
            let input = SubmitInput {
                answers: Patch::Value(json!(answers)),
            };
            core.submit_test(&taker, &test.typed_id(), input)
                .await
                .expect("submit");
            self.tick();
        }
        let deactivate = TestPatch {
            is_active: Patch::Value(false),
            ..TestPatch::default()
        };
        core.update_test(op, &spanish.typed_id(), deactivate)
            .await
            .expect("deactivate");
        self.tick();

        for material in [
            json!({
                "title": "Everyday German, unit 1", "targetLanguage": "de", "level": "A1",
                "locale": "en", "description": "Greetings, numbers and the café.",
                "videos": [
                    {"title": "Greetings", "url": "https://video.example.com/greetings"},
                    {"url": "https://video.example.com/numbers"}
                ]
            }),
            json!({
                "title": "Business English: meetings", "targetLanguage": "en", "level": "B2"
            }),
        ] {
            let input: MaterialInput = serde_json::from_value(material).expect("material");
            let new = NewMaterial::try_from(input).expect("a valid material");
            core.create_material(op, new, Vec::new())
                .await
                .expect("create material");
            self.tick();
        }

        for (key, value) in [
            (
                "landing_video_url",
                json!("https://videos.langcamp.example/welcome.mp4"),
            ),
            ("max_class_size", json!(12)),
            (
                "opening_hours",
                json!({"weekdays": "09:00-20:00", "saturday": "10:00-14:00"}),
            ),
        ] {
            core.put_setting(op, NewSetting::new(key, value).expect("a setting"))
                .await
                .expect("setting");
        }
        self.tick();
    }

    /// Presses a key and lets every core call it causes finish.
    pub async fn press(&mut self, code: KeyCode) {
        self.press_event(KeyEvent::new(code, KeyModifiers::NONE))
            .await;
    }

    /// The text of the message the console shows.
    pub fn message(&self) -> String {
        self.app.message.clone().expect("a message").text
    }

    /// The text of the error the console shows; a failure if it shows none, or a message
    /// that is no error.
    #[track_caller]
    pub fn error(&self) -> String {
        let message = self.app.message.clone().expect("an error message");
        assert!(message.is_error, "not an error: {message:?}");
        message.text
    }

    /// Presses each key in turn, as a user typing the sequence.
    pub async fn press_all(&mut self, codes: &[KeyCode]) {
        for code in codes {
            self.press(*code).await;
        }
    }

    pub async fn ctrl(&mut self, c: char) {
        self.press_event(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
            .await;
    }

    async fn press_event(&mut self, event: KeyEvent) {
        if let Some(action) = map_key(self.app.key_context(), event) {
            let tasks = self.app.update(action);
            settle(&mut self.app, &self.core, tasks).await;
        }
    }

    /// The console asked for a text in the user's editor: `edit` stands in for the user,
    /// from the text the editor opens with to the text saved, and every core call that
    /// causes finishes. Returns what the console asked for. A failure if it asked for none.
    pub async fn edit_outside(&mut self, edit: impl FnOnce(&str) -> String) -> EditRequest {
        let request = self.app.take_edit().expect("a text to edit in the editor");
        let edited = edit(&request.text);
        let tasks = self.app.edited_outside(request.clone(), Ok(edited));
        settle(&mut self.app, &self.core, tasks).await;
        request
    }

    /// Types text, one key per character (`\n` is Enter).
    pub async fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let code = if c == '\n' {
                KeyCode::Enter
            } else {
                KeyCode::Char(c)
            };
            self.press(code).await;
        }
    }

    /// The screen as text, one line per row, trailing blanks cut.
    pub fn screen(&self, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
        terminal
            .draw(|frame| ui::render(&self.app, frame))
            .expect("draw");
        let buffer = terminal.backend().buffer();
        let mut text = String::new();
        for y in 0..buffer.area.height {
            let mut line = String::new();
            for x in 0..buffer.area.width {
                line.push_str(buffer[(x, y)].symbol());
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

/// Compares the 100x30 screen with `tests/snapshots/<name>.txt`; with `UPDATE_SNAPSHOTS=1`
/// writes it first.
pub fn assert_snapshot(console: &Console, name: &str) {
    let current = console.screen(100, 30);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    langcamp_testkit::assert_snapshot(
        &path,
        &current,
        &format!(
            "the {name} screen changed; review it and run \
             `UPDATE_SNAPSHOTS=1 cargo test --workspace --test console` to accept"
        ),
    );
}
