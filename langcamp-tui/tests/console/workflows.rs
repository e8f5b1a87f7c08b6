//! Writes through the console: each lands in the database, and failures leave the
//! screen usable.

use crossterm::event::KeyCode;
use langcamp_core::contacts::{ContactFilter, ContactStatus};
use langcamp_core::{Actor, PageRequest};
use langcamp_tui::view::View;
use sqlx::Row;

use crate::harness::assert_snapshot;
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
            &ContactFilter {
                status: None,
                q: Some("marta".into()),
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
    let rows = sqlx::query(
        "SELECT recipient, kind FROM mail_outbox WHERE recipient = $1 ORDER BY created_at",
    )
    .bind("marta.reis@example.com")
    .fetch_all(console.core.db().reader())
    .await
    .expect("outbox");
    let mails: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.get("recipient"), r.get("kind")))
        .collect();
    assert_eq!(
        mails,
        [(
            "marta.reis@example.com".to_owned(),
            "contact_reply".to_owned()
        )]
    );
}

#[tokio::test]
async fn an_empty_reply_is_not_sent_and_the_editor_stays_open() {
    let mut console = open(View::Contacts).await;
    console.press(KeyCode::Enter).await;
    console.type_text("  \n").await;
    console.ctrl('s').await;
    assert!(console.app.overlay.is_some());
    let message = console.app.message.clone().expect("a message");
    assert!(message.is_error);
    assert_eq!(message.text, "write a reply first");
    console.press(KeyCode::Esc).await;
    assert!(console.app.overlay.is_none());
    let screen = console.screen(100, 30);
    assert!(screen.contains("PENDING"), "{screen}");
}

/// The kinds of mail queued for `recipient`, oldest first.
async fn outbox(console: &crate::harness::Console, recipient: &str) -> Vec<String> {
    sqlx::query("SELECT kind FROM mail_outbox WHERE recipient = $1 ORDER BY created_at")
        .bind(recipient)
        .fetch_all(console.core.db().reader())
        .await
        .expect("outbox")
        .iter()
        .map(|r| r.get("kind"))
        .collect()
}

async fn materials_of(console: &crate::harness::Console, email: &str) -> Vec<String> {
    let op = &Actor::Operator;
    let user = console
        .core
        .get_user_by_email(op, email)
        .await
        .expect("user");
    console
        .core
        .user_materials(op, &user.id)
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
    console.press(KeyCode::Char(' ')).await;
    console.press(KeyCode::Down).await;
    console.press(KeyCode::Down).await;
    console.press(KeyCode::Char(' ')).await;
    assert_snapshot(&console, "materials-assign-picker");
    console.press(KeyCode::Enter).await;
    assert!(console.app.overlay.is_none());
    let message = console.app.message.clone().expect("message");
    assert_eq!(
        message.text,
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
        outbox(&console, "ana.silva@example.com").await,
        ["material_assignment"]
    );

    console.press(KeyCode::Char('u')).await;
    console.type_text("ana").await;
    console.press(KeyCode::Enter).await;
    assert_eq!(
        console.app.message.clone().expect("message").text,
        "unassigned \"Business English: meetings\" from ana.silva@example.com"
    );
    assert!(materials_of(&console, "ana.silva@example.com").await.is_empty());
    assert_eq!(
        materials_of(&console, "new.student@example.com").await.len(),
        1
    );

    // Unassigning again fails in core; the picker stays open with the error shown.
    console.press(KeyCode::Char('u')).await;
    console.type_text("ana").await;
    console.press(KeyCode::Enter).await;
    let message = console.app.message.clone().expect("message");
    assert!(message.is_error);
    assert_eq!(message.text, "this material is not assigned to that user");
    assert!(console.app.overlay.is_some());
    console.press(KeyCode::Esc).await;
    assert!(console.app.overlay.is_none());
}
