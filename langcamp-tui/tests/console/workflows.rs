//! Writes through the console: each lands in the database, and failures leave the
//! screen usable.

use crossterm::event::KeyCode;
use langcamp_core::contacts::{ContactSearch, ContactStatus};
use langcamp_core::domain::Id;
use langcamp_core::settings::SettingKey;
use langcamp_core::users::NewUser;
use langcamp_core::{Actor, Error, PageRequest, Role};
use langcamp_tui::view::View;

use crate::harness::{address, assert_snapshot};
use crate::views::open;

#[tokio::test]
async fn a_reply_typed_in_the_console_is_stored_and_its_mail_queued() {
    let mut console = open(View::Contacts).await;
    // The newest request, from Marta Reis, is selected.
    console.press(KeyCode::Enter).await;
    console
        .type_text("Hello Marta,\nyes: Tuesdays and Thursdays at 18:30.")
        .await;
    assert_snapshot(&console, "contacts-reply-typed");

    console.ctrl('s').await;
    assert!(console.app.overlay.is_none(), "the editor closes once sent");
    assert_snapshot(&console, "contacts-reply-sent");

    let page = console
        .core
        .list_contacts(
            &Actor::Operator,
            &ContactSearch {
                status: None,
                text: Some("marta".into()),
            },
            PageRequest::default(),
        )
        .await
        .expect("contacts");
    let marta = &page.list[0];
    assert_eq!(marta.status, ContactStatus::Replied);
    assert_eq!(
        marta.reply_message.as_deref(),
        Some("Hello Marta,\nyes: Tuesdays and Thursdays at 18:30.")
    );
    assert_eq!(
        console.outbox("marta.reis@example.com").await,
        ["contact_reply"]
    );
}

#[tokio::test]
async fn an_empty_reply_is_not_sent_and_the_editor_stays_open() {
    let mut console = open(View::Contacts).await;
    console.press(KeyCode::Enter).await;
    console.type_text("  \n").await;
    console.ctrl('s').await;
    assert!(console.app.overlay.is_some());
    assert_eq!(console.error(), "write a reply first");
    console.press(KeyCode::Esc).await;
    assert!(console.app.overlay.is_none());
    let screen = console.screen(100, 30);
    assert!(screen.contains("PENDING"), "{screen}");
}

async fn user(console: &crate::harness::Console, email: &str) -> langcamp_core::users::User {
    console
        .core
        .get_user_by_email(&Actor::Operator, &address(email))
        .await
        .expect("user")
}

/// The titles of the materials assigned to `email`.
async fn materials_of(console: &crate::harness::Console, email: &str) -> Vec<String> {
    let user = user(console, email).await;
    console
        .core
        .user_materials(&Actor::Operator, &langcamp_core::domain::Id::from(&user.id))
        .await
        .expect("materials")
        .into_iter()
        .map(|a| a.material.title)
        .collect()
}

#[tokio::test]
async fn a_material_is_assigned_to_users_picked_by_search_and_unassigned_again() {
    let mut console = open(View::Materials).await;
    // The newest material, "Business English: meetings", is selected.
    console.press(KeyCode::Char('a')).await;
    console.type_text("example.com").await;
    console
        .press_all(&[
            KeyCode::Char(' '),
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Char(' '),
        ])
        .await;
    assert_snapshot(&console, "materials-assign-picker");
    console.press(KeyCode::Enter).await;
    assert!(console.app.overlay.is_none());
    assert_eq!(
        console.message(),
        "assigned \"Business English: meetings\" to 2 users; mails queued"
    );
    assert_eq!(
        materials_of(&console, "new.student@example.com").await,
        ["Business English: meetings"]
    );
    assert_eq!(
        materials_of(&console, "ana.silva@example.com").await,
        ["Business English: meetings"]
    );
    assert_eq!(
        console.outbox("ana.silva@example.com").await,
        ["material_assignment"]
    );

    console.press(KeyCode::Char('u')).await;
    console.type_text("ana").await;
    console.press(KeyCode::Enter).await;
    assert_eq!(
        console.message(),
        "unassigned \"Business English: meetings\" from ana.silva@example.com"
    );
    assert!(
        materials_of(&console, "ana.silva@example.com")
            .await
            .is_empty()
    );
    assert_eq!(
        materials_of(&console, "new.student@example.com")
            .await
            .len(),
        1
    );

    // Unassigning again fails in core; the picker stays open with the error shown.
    console.press(KeyCode::Char('u')).await;
    console.type_text("ana").await;
    console.press(KeyCode::Enter).await;
    assert_eq!(
        console.error(),
        "this material is not assigned to that user"
    );
    assert!(console.app.overlay.is_some());
    console.press(KeyCode::Esc).await;
    assert!(console.app.overlay.is_none());
}

#[tokio::test]
async fn a_role_is_changed_from_the_user_list() {
    let mut console = open(View::Users).await;
    console.press(KeyCode::Char('/')).await;
    console.type_text("jonas").await;
    console
        .press_all(&[
            KeyCode::Enter,
            KeyCode::Char('s'),
            KeyCode::Down,
            KeyCode::Enter,
        ])
        .await;
    assert_eq!(console.message(), "jonas.weber@example.com is now admin");
    assert_eq!(
        user(&console, "jonas.weber@example.com").await.role,
        langcamp_core::Role::Admin
    );
    let screen = console.screen(100, 30);
    assert!(screen.contains("Search: jonas"), "{screen}");
    assert!(screen.contains("Users · page 1 of 1 · 1 user "), "{screen}");
}

#[tokio::test]
async fn refusing_to_demote_the_last_superadmin_leaves_the_console_usable() {
    let mut console = open(View::Users).await;
    console
        .press_all(&[KeyCode::Char('f'), KeyCode::Char('f'), KeyCode::Char('f')])
        .await;
    assert_eq!(console.app.users.list.items.len(), 1, "only the superadmin");
    console
        .press_all(&[KeyCode::Char('s'), KeyCode::Up, KeyCode::Up, KeyCode::Enter])
        .await;
    assert_snapshot(&console, "users-error");
    assert_eq!(
        user(&console, "head@langcamp.example").await.role,
        langcamp_core::Role::Superadmin
    );
    // The next key clears the error and works as usual.
    console.press(KeyCode::Char('f')).await;
    assert!(console.app.message.is_none());
    assert_eq!(console.app.users.list.items.len(), 5);
}

#[tokio::test]
async fn an_e_mail_address_is_edited_and_a_bad_one_is_refused_in_place() {
    let mut console = open(View::Users).await;
    // new.student@example.com is selected; replace the domain.
    console.press(KeyCode::Char('e')).await;
    for _ in 0.."example.com".len() {
        console.press(KeyCode::Backspace).await;
    }
    console.press(KeyCode::Enter).await;
    let message = console.app.message.clone().expect("message");
    assert!(message.is_error, "{message:?}");
    assert!(console.app.overlay.is_some(), "the prompt stays open");
    console.type_text("school.example").await;
    console.press(KeyCode::Enter).await;
    assert!(console.app.overlay.is_none());
    assert_eq!(
        console.message(),
        "e-mail changed to new.student@school.example"
    );
    assert_eq!(
        console.app.users.list.items[0].email,
        "new.student@school.example"
    );
}

#[tokio::test]
async fn a_user_is_deleted_only_after_confirmation() {
    let mut console = open(View::Users).await;
    console.press(KeyCode::Char('d')).await;
    console.press(KeyCode::Char('n')).await;
    assert_eq!(console.app.users.list.items.len(), 5);
    console.press(KeyCode::Char('d')).await;
    assert_snapshot(&console, "users-confirm-delete");
    console.press(KeyCode::Char('y')).await;
    assert_eq!(console.message(), "deleted new.student@example.com");
    assert_eq!(console.app.users.list.items.len(), 4);
    let gone = console
        .core
        .get_user_by_email(&Actor::Operator, &address("new.student@example.com"))
        .await;
    assert!(gone.is_err());
}

#[tokio::test]
async fn a_contact_status_is_changed_and_the_filter_follows_it() {
    let mut console = open(View::Contacts).await;
    // Marta Reis (PENDING) is selected.
    console
        .press_all(&[
            KeyCode::Char('s'),
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Enter,
        ])
        .await;
    assert_eq!(console.message(), "status set to CLOSED");
    assert_eq!(
        console.app.contacts.list.items[0].status,
        ContactStatus::Closed
    );
    let statuses = |console: &crate::harness::Console| -> Vec<String> {
        console
            .app
            .contacts
            .list
            .items
            .iter()
            .map(|c| c.first_name.clone())
            .collect()
    };
    console.press(KeyCode::Char('f')).await;
    assert_eq!(console.app.contacts.status, Some(ContactStatus::Pending));
    assert!(statuses(&console).is_empty());
    console.press(KeyCode::Char('f')).await;
    assert_eq!(statuses(&console), ["Peter"]);
    console.press(KeyCode::Char('d')).await;
    console.press(KeyCode::Char('y')).await;
    assert!(statuses(&console).is_empty());
    console
        .press_all(&[KeyCode::Char('f'), KeyCode::Char('f'), KeyCode::Char('f')])
        .await;
    assert_eq!(console.app.contacts.status, None);
    assert_eq!(statuses(&console), ["Marta", "Chloé"]);
}

#[tokio::test]
async fn courses_are_published_duplicated_and_deleted() {
    let mut console = open(View::Courses).await;
    console.press(KeyCode::Down).await; // Business English, unpublished
    console.press(KeyCode::Char('p')).await;
    assert_eq!(console.message(), "published \"Business English\"");
    assert!(console.app.courses.list.items[1].is_published);
    console.press(KeyCode::Char('c')).await;
    let titles: Vec<(String, bool)> = console
        .app
        .courses
        .list
        .items
        .iter()
        .map(|c| (c.title.clone(), c.is_published))
        .collect();
    assert_eq!(
        titles,
        [
            ("German for Beginners".to_owned(), true),
            ("Business English".to_owned(), true),
            ("Business English (copy)".to_owned(), false),
            ("Spanish Summer Camp".to_owned(), true),
        ]
    );
    console.press(KeyCode::Char('p')).await;
    assert!(!console.app.courses.list.items[1].is_published);
    console.press(KeyCode::Char('d')).await;
    console.press(KeyCode::Char('y')).await;
    assert_eq!(console.message(), "deleted \"Business English\"");
    assert_eq!(console.app.courses.list.items.len(), 3);
}

#[tokio::test]
async fn a_setting_is_edited_as_json_and_bad_json_is_refused() {
    let mut console = open(View::Settings).await;
    console.press(KeyCode::Down).await; // max_class_size = 12
    console
        .press_all(&[KeyCode::Enter, KeyCode::Backspace, KeyCode::Backspace])
        .await;
    console.type_text("{\"adults\": 10,").await;
    console.ctrl('s').await;
    let error = console.error();
    assert!(error.starts_with("not valid JSON"), "{error}");
    assert_snapshot(&console, "settings-bad-json");
    console.type_text("\n\"kids\": 8}").await;
    console.ctrl('s').await;
    assert!(console.app.overlay.is_none());
    let stored = console
        .core
        .get_setting(
            &Actor::Operator,
            &SettingKey::named("max_class_size").expect("a key"),
        )
        .await
        .expect("setting");
    assert_eq!(stored.value, serde_json::json!({"adults": 10, "kids": 8}));
}

#[tokio::test]
async fn placement_results_per_test_and_per_user_and_a_result_is_deleted() {
    let mut console = open(View::Placement).await;
    // The newest test, "Spanish placement test" (inactive), is selected; its results show.
    let scores = |console: &crate::harness::Console| -> Vec<(String, String, i64)> {
        console
            .app
            .placement
            .results
            .items
            .iter()
            .map(|r| (r.user.email.clone(), r.level.clone(), r.total_score))
            .collect()
    };
    assert_eq!(
        scores(&console),
        [("jonas.weber@example.com".to_owned(), "A2".to_owned(), 1)]
    );
    console.press(KeyCode::Char('a')).await;
    assert_eq!(console.message(), "activated \"Spanish placement test\"");
    assert!(console.app.placement.tests.items[0].is_active);

    console.press(KeyCode::Down).await;
    assert_eq!(
        scores(&console),
        [
            ("ana.silva@example.com".to_owned(), "A2".to_owned(), 3),
            ("jonas.weber@example.com".to_owned(), "A1".to_owned(), 2),
            ("ana.silva@example.com".to_owned(), "B1".to_owned(), 6),
        ]
    );

    console.press(KeyCode::Char('u')).await;
    console.type_text("jonas.weber@example.com").await;
    console.press(KeyCode::Enter).await;
    assert_eq!(
        scores(&console),
        [
            ("jonas.weber@example.com".to_owned(), "A2".to_owned(), 1),
            ("jonas.weber@example.com".to_owned(), "A1".to_owned(), 2),
        ]
    );
    assert_snapshot(&console, "placement-user-results");

    // The results pane has the keys: delete Jonas's German result.
    console
        .press_all(&[KeyCode::Down, KeyCode::Char('d'), KeyCode::Char('y')])
        .await;
    assert_eq!(
        console.message(),
        "deleted the result of jonas.weber@example.com"
    );
    assert_eq!(
        scores(&console),
        [("jonas.weber@example.com".to_owned(), "A2".to_owned(), 1)]
    );

    console.press(KeyCode::Esc).await;
    console.press(KeyCode::Char('u')).await;
    console.type_text("nobody@example.com").await;
    console.press(KeyCode::Enter).await;
    assert_eq!(console.error(), "user not found");
    assert!(scores(&console).is_empty());
    assert!(!console.app.placement.results.is_loading());
}

/// The harness (like the demo seed) takes placement tests as a student through
/// `act_as`: only the operator may, and it acts with the role the user has now.
#[tokio::test]
async fn only_the_operator_acts_in_a_users_place() {
    let console = crate::harness::Console::empty().await;
    let (core, op) = (&console.core, &Actor::Operator);
    let admin = core
        .create_user(
            op,
            NewUser::new("maria@langcamp.example", Role::Admin, Some("Maria"))
                .expect("a valid user"),
        )
        .await
        .expect("create");
    let as_admin = core.act_as(op, &admin.typed_id()).await.expect("act as");
    assert_eq!(as_admin.role(), Some(Role::Admin));
    assert_eq!(as_admin.user_id(), Some(admin.id.as_str()));
    assert!(matches!(
        core.act_as(&as_admin, &admin.typed_id()).await,
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        core.act_as(&Actor::Anonymous, &admin.typed_id()).await,
        Err(Error::Unauthorized)
    ));
    assert!(matches!(
        core.act_as(op, &Id::from("no-such-user")).await,
        Err(Error::NotFound(_))
    ));
}

/// `x` writes the list with the view's current filter into `DATA_DIR/exports` and names
/// the file; a second export of the same day gets a name of its own.
#[tokio::test]
async fn x_exports_the_current_filter_as_csv_under_the_data_folder() {
    let mut console = open(View::Users).await;
    console.press(KeyCode::Char('f')).await; // role: the first one
    let role = console.app.users.role.expect("a role filter");
    console.press(KeyCode::Char('x')).await;
    let message = console.message();
    let folder = console.core.config().data_dir.join("exports");
    let day = console.clock.now().format("%Y-%m-%d");
    let file = folder.join(format!("users-{day}.csv"));
    assert!(
        message.contains(&format!("exported to {}", file.display())),
        "{message}"
    );
    let text = std::fs::read_to_string(&file).expect("the file");
    let rows = text.matches("\r\n").count() - 1;
    let listed = console
        .app
        .users
        .list
        .pagination
        .as_ref()
        .expect("a page")
        .total_items;
    assert!(rows > 0);
    assert_eq!(rows as u64, listed, "{text}");
    assert!(
        text.lines()
            .skip(1)
            .all(|line| line.contains(&format!(",{},", role.as_str()))),
        "{text}"
    );

    console.press(KeyCode::Char('x')).await;
    assert!(folder.join(format!("users-{day}-2.csv")).exists());
    assert_eq!(console.app.view, View::Users, "the view stays as it was");
}

#[tokio::test]
async fn an_adaptive_test_shows_its_mode_and_its_result_the_ability_error_and_levels_asked() {
    use langcamp_core::placement::{AttemptAnswer, NewTest, TestInput};
    let mut console = open(View::Placement).await;
    let op = &Actor::Operator;
    let questions: Vec<_> = ["A1", "A2", "B1", "B2", "C1", "C2"]
        .iter()
        .flat_map(|level| {
            (0..2).map(move |k| {
                serde_json::json!({
                    "text": format!("{level} question {k}"), "level": level,
                    "options": [{"text": "yes"}, {"text": "no"}], "correctOptionIndex": 0
                })
            })
        })
        .collect();
    let input: TestInput = serde_json::from_value(serde_json::json!({
        "title": "Adaptive English", "targetLanguage": "en", "mode": "adaptive",
        "maxQuestions": 5, "levelMessages": {"C2": "Mastery."}, "questions": questions
    }))
    .expect("test");
    let test = console
        .core
        .create_test(op, NewTest::try_from(input).expect("a valid test"))
        .await
        .expect("create test");
    let user = console
        .core
        .get_user_by_email(op, &address("ana.silva@example.com"))
        .await
        .expect("user");
    let taker = console
        .core
        .act_as(op, &user.typed_id())
        .await
        .expect("act as");
    let mut attempt = console
        .core
        .start_attempt(&taker, &test.typed_id())
        .await
        .expect("start")
        .view;
    while let Some(question) = attempt.question.clone() {
        let answer = AttemptAnswer {
            question_id: question.id,
            option: 0,
        };
        attempt = console
            .core
            .answer_attempt(&taker, &attempt.typed_id(), answer)
            .await
            .expect("answer");
    }
    assert!(attempt.finished);

    console.press(KeyCode::Char('r')).await;
    console.press_all(&[KeyCode::Down, KeyCode::Up]).await;
    let tests = console.screen(120, 30);
    assert!(tests.contains("Adaptive English"), "{tests}");
    assert!(tests.contains("adaptive"), "{tests}");
    assert!(tests.contains("at most 5 asked"), "{tests}");
    assert!(tests.contains("b 3.75"), "{tests}");
    assert!(tests.contains("Mastery."), "{tests}");
    console.press(KeyCode::Enter).await;
    let result = console.screen(120, 30);
    assert!(result.contains("Adaptive result"), "{result}");
    assert!(result.contains("logits"), "{result}");
    assert!(result.contains("Levels asked"), "{result}");
    assert!(result.contains(" → "), "{result}");
}
