//! The mail templates view: edited in the user's editor (the tests stand in for it with
//! [`Console::edit_outside`]), checked before saving, previewed, reset, and started for a
//! new locale.

use crossterm::event::KeyCode;
use langcamp_core::Actor;
use langcamp_core::mail_templates::{MailTemplate, MailTemplateInput, NewMailTemplate};
use langcamp_tui::app::Overlay;
use langcamp_tui::view::View;

use crate::harness::{Console, assert_snapshot};
use crate::views::open;

/// Every template in effect, as core lists them.
async fn templates(console: &Console) -> Vec<MailTemplate> {
    console
        .core
        .list_mail_templates(&Actor::Operator)
        .await
        .expect("templates")
}

/// The template in effect for `kind` in `locale`, as core lists it.
async fn template(console: &Console, kind: &str, locale: &str) -> Option<MailTemplate> {
    templates(console)
        .await
        .into_iter()
        .find(|t| t.kind.as_str() == kind && t.locale == locale)
}

/// Moves the selection to `kind` in `locale`.
async fn select(console: &mut Console, kind: &str, locale: &str) {
    while console.app.mail.list.selected > 0 {
        console.press(KeyCode::Up).await;
    }
    for _ in 0..console.app.mail.list.items.len() {
        let selected = console.app.mail.list.selected().expect("a selection");
        if selected.kind.as_str() == kind && selected.locale == locale {
            return;
        }
        console.press(KeyCode::Down).await;
    }
    panic!("no {kind} template in {locale} in the list");
}

/// The status column of the selected row as the screen shows it.
fn selected_row(console: &Console) -> String {
    console
        .screen(100, 30)
        .lines()
        .find(|l| l.contains('▶'))
        .expect("a selected row")
        .to_owned()
}

/// The school has edited its German sign-in mail.
async fn with_an_edited_template() -> Console {
    let console = Console::seeded().await;
    let input = MailTemplateInput {
        subject: Some("Ihr Code für {{ schoolName }}".into()),
        text: Some("Ihr Code: {{ code }}\n\nEr gilt {{ minutes }} Minuten.".into()),
        html: None,
    };
    let template = NewMailTemplate::parse("otp", "de", input).expect("a valid template");
    console
        .core
        .put_mail_template(&Actor::Operator, template)
        .await
        .expect("stored");
    console
}

#[tokio::test]
async fn the_mail_view_lists_every_template_by_kind_and_locale_and_shows_the_selected_one() {
    let mut console = with_an_edited_template().await;
    console.press(KeyCode::Char('8')).await;
    assert_eq!(console.app.view, View::Mail);
    assert_eq!(console.app.mail.list.items.len(), 24);
    select(&mut console, "otp", "de").await;
    assert_snapshot(&console, "mail");
    let screen = console.screen(100, 30);
    assert!(screen.contains("built-in"), "{screen}");

    // The preview renders the template in effect with sample values, and follows the
    // selection.
    console.press(KeyCode::Char('p')).await;
    let preview = console.app.mail.selected_preview().expect("a preview");
    assert_eq!(preview.mail.subject, "Ihr Code für Langcamp");
    assert_snapshot(&console, "mail-preview");
    console.press(KeyCode::Down).await;
    let preview = console.app.mail.selected_preview().expect("a preview");
    assert_eq!(
        (preview.locale.as_str(), preview.mail.subject.as_str()),
        ("en", "Your Langcamp sign-in code")
    );
    console.press(KeyCode::Char('p')).await;
    let screen = console.screen(100, 30);
    assert!(screen.contains("┌ Template "), "{screen}");
    assert!(
        screen.contains("Subject    Your {{ schoolName }} sign-in"),
        "{screen}"
    );
}

#[tokio::test]
async fn a_template_edited_in_the_editor_is_stored_and_listed_as_edited() {
    let mut console = open(View::Mail).await;
    select(&mut console, "otp", "en").await;
    console.press(KeyCode::Char('e')).await;
    let request = console
        .edit_outside(|text| {
            assert!(text.starts_with("subject: Your {{ schoolName }} sign-in code\n"));
            assert!(text.contains("\n=== text ===\n"), "{text}");
            assert!(text.contains("\n=== html ===\n"), "{text}");
            text.replace(
                "subject: Your {{ schoolName }} sign-in code",
                "subject: {{ code }} is your {{ schoolName }} code",
            )
        })
        .await;
    assert_eq!(request.file_name, "otp.en.mail");
    assert_eq!(
        console.message(),
        "saved the otp template in en; the next mail uses it"
    );
    assert!(console.app.overlay.is_none());

    let stored = template(&console, "otp", "en").await.expect("otp en");
    assert!(!stored.built_in);
    assert_eq!(stored.subject, "{{ code }} is your {{ schoolName }} code");
    assert!(stored.html.is_some(), "the HTML part is kept");
    let selected = console.app.mail.list.selected().expect("a selection");
    assert_eq!((selected.kind.as_str(), selected.built_in), ("otp", false));
    let row = selected_row(&console);
    assert!(row.contains("edited 2026-"), "{row}");

    // The preview renders what was saved.
    console.press(KeyCode::Char('p')).await;
    let preview = console.app.mail.selected_preview().expect("a preview");
    assert_eq!(preview.mail.subject, "428517 is your Langcamp code");
    let screen = console.screen(100, 30);
    assert!(
        screen.contains("Subject    428517 is your Langcamp code"),
        "{screen}"
    );

    // Saving the same text again changes nothing.
    console.press(KeyCode::Char('e')).await;
    console.edit_outside(str::to_owned).await;
    assert_eq!(
        console.message(),
        "the otp template in en is unchanged: nothing saved"
    );
}

#[tokio::test]
async fn an_invalid_edit_shows_every_problem_stores_nothing_and_can_be_edited_again() {
    let mut console = open(View::Mail).await;
    select(&mut console, "otp", "fr").await;
    console.press(KeyCode::Char('e')).await;
    let broken = "subject: Code {{ nmae }}\n=== text ===\nBonjour {{ schoolName \n";
    console.edit_outside(|_| broken.to_owned()).await;

    assert_eq!(
        console.error(),
        "the otp template in fr was not saved: 2 problems"
    );
    let Some(Overlay::NotSaved { problems, .. }) = &console.app.overlay else {
        panic!("no problems shown: {:?}", console.app.overlay);
    };
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("unknown variable `nmae`"),
        "{problems:?}"
    );
    assert!(problems[1].starts_with("text: "), "{problems:?}");
    assert!(problems[1].contains("line 1"), "{problems:?}");
    assert_snapshot(&console, "mail-not-saved");
    assert!(templates(&console).await.iter().all(|t| t.built_in));

    // `e` opens the editor again on the text as the user left it; fixed, it is saved.
    console.press(KeyCode::Char('e')).await;
    assert!(console.app.overlay.is_none());
    let request = console
        .edit_outside(|text| {
            assert_eq!(text, broken);
            "subject: Code {{ code }}\n=== text ===\nBonjour, {{ code }}.\n".to_owned()
        })
        .await;
    assert_eq!(request.file_name, "otp.fr.mail");
    let stored = template(&console, "otp", "fr").await.expect("otp fr");
    assert_eq!(
        (stored.built_in, stored.subject.as_str(), stored.html),
        (false, "Code {{ code }}", None)
    );

    // An otp template without the code, then discarded with Esc.
    console.press(KeyCode::Char('e')).await;
    console
        .edit_outside(|_| "subject: Code\n=== text ===\nBonjour.\n".to_owned())
        .await;
    assert_eq!(
        console.error(),
        "the otp template in fr was not saved: 1 problem"
    );
    console.press(KeyCode::Esc).await;
    assert!(console.app.overlay.is_none());
    assert_eq!(
        console.message(),
        "discarded the changes to the otp template in fr"
    );
    let stored = template(&console, "otp", "fr").await.expect("otp fr");
    assert_eq!(stored.subject, "Code {{ code }}");

    // A file that is not in the template form says so.
    console.press(KeyCode::Char('e')).await;
    console
        .edit_outside(|_| "Bonjour {{ code }}\n".to_owned())
        .await;
    let Some(Overlay::NotSaved { problems, .. }) = &console.app.overlay else {
        panic!("no problems shown");
    };
    assert_eq!(
        problems,
        &["the first line must start with \"subject:\"".to_owned()]
    );
}

#[tokio::test]
async fn an_editor_that_fails_saves_nothing() {
    let mut console = open(View::Mail).await;
    console.press(KeyCode::Enter).await;
    let request = console.app.take_edit().expect("a text to edit");
    let tasks = console.app.edited_outside(
        request,
        Err("the editor `vi` ended with exit status: 1".into()),
    );
    assert!(tasks.is_empty());
    assert_eq!(
        console.error(),
        "the editor `vi` ended with exit status: 1; nothing saved"
    );
    assert!(templates(&console).await.iter().all(|t| t.built_in));
}

#[tokio::test]
async fn reset_brings_the_built_in_template_back_after_confirmation() {
    let mut console = with_an_edited_template().await;
    console.press(KeyCode::Char('8')).await;
    select(&mut console, "otp", "de").await;
    console.press(KeyCode::Char('d')).await;
    let Some(Overlay::Confirm { question, .. }) = &console.app.overlay else {
        panic!("no confirmation");
    };
    assert_eq!(
        question,
        "Reset the otp template in de to the built-in one? The edited one is deleted."
    );
    console.press(KeyCode::Char('n')).await;
    assert!(
        !template(&console, "otp", "de")
            .await
            .expect("otp de")
            .built_in
    );

    console.press(KeyCode::Char('d')).await;
    console.press(KeyCode::Char('y')).await;
    assert_eq!(
        console.message(),
        "reset the otp template in de to the built-in one"
    );
    let built_in = template(&console, "otp", "de").await.expect("otp de");
    assert!(built_in.built_in);
    assert!(console.app.mail.list.selected().expect("selected").built_in);
    assert!(selected_row(&console).contains("built-in"));

    // A built-in template has nothing to reset.
    console.press(KeyCode::Char('d')).await;
    assert!(console.app.overlay.is_none());
    assert_eq!(
        console.error(),
        "the otp template in de is the built-in one: nothing to reset"
    );
}

#[tokio::test]
async fn a_template_for_a_new_locale_starts_from_the_english_one() {
    let mut console = open(View::Mail).await;
    select(&mut console, "contact_reply", "it").await;
    console.press(KeyCode::Char('n')).await;
    // The prompt starts with the selected template's kind.
    let Some(Overlay::Prompt { input, .. }) = &console.app.overlay else {
        panic!("no prompt");
    };
    assert_eq!(input.text(), "contact_reply ");
    // A kind alone, or an unknown kind, is refused in place.
    console.press(KeyCode::Enter).await;
    assert_eq!(console.error(), "type a kind and a locale, e.g. otp nl");
    assert!(console.app.overlay.is_some());
    console.press(KeyCode::Home).await;
    console.type_text("x").await;
    console.press(KeyCode::End).await;
    console.type_text("nl").await;
    console.press(KeyCode::Enter).await;
    let error = console.error();
    assert!(
        error.starts_with("unknown template kind \"xcontact_reply\""),
        "{error}"
    );
    console.press(KeyCode::Home).await;
    console.press(KeyCode::Delete).await;
    console.press(KeyCode::Enter).await;
    assert!(console.app.overlay.is_none());

    let english = template(&console, "contact_reply", "en")
        .await
        .expect("contact_reply en");
    let request = console
        .edit_outside(|text| {
            assert!(text.starts_with(&format!("subject: {}\n", english.subject)));
            text.replace(
                &format!("subject: {}", english.subject),
                "subject: Re: uw bericht aan {{ schoolName }}",
            )
            .replacen("Hello {{ firstName }},", "Hallo {{ firstName }},", 1)
        })
        .await;
    assert_eq!(request.file_name, "contact_reply.nl.mail");
    assert_eq!(
        console.message(),
        "saved the contact_reply template in nl; the next mail uses it"
    );
    let dutch = template(&console, "contact_reply", "nl")
        .await
        .expect("contact_reply nl");
    assert_eq!(dutch.subject, "Re: uw bericht aan {{ schoolName }}");
    assert!(dutch.text.starts_with("Hallo {{ firstName }},"));
    assert_eq!(dutch.html, english.html);
    assert_eq!(console.app.mail.list.items.len(), 25);

    // Naming one that exists opens it as it is.
    console.press(KeyCode::Char('n')).await;
    console.type_text("nl").await;
    console.press(KeyCode::Enter).await;
    console
        .edit_outside(|text| {
            assert!(text.starts_with("subject: Re: uw bericht aan {{ schoolName }}\n"));
            text.to_owned()
        })
        .await;
    assert_eq!(
        console.message(),
        "the contact_reply template in nl is unchanged: nothing saved"
    );

    // Reset, a locale without a built-in template leaves the list.
    select(&mut console, "contact_reply", "nl").await;
    console.press(KeyCode::Char('d')).await;
    console.press(KeyCode::Char('y')).await;
    assert_eq!(console.app.mail.list.items.len(), 24);
    assert!(template(&console, "contact_reply", "nl").await.is_none());
}
