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
