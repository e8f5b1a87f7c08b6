//! The audit trail view (CONTRACT §17): the seeded school's writes, newest first, with
//! their changes; filters by actor, action, target and time; nothing edits an entry.

use crossterm::event::KeyCode;
use langcamp_core::audit::{AuditQuery, operator_name};
use langcamp_core::settings::NewSetting;
use langcamp_core::{Actor, PageRequest, Role};
use langcamp_tui::view::View;
use serde_json::json;

use crate::harness::{Console, address, assert_snapshot};
use crate::views::open;

const HEAD: &str = "head@langcamp.example";

/// The seeded school where, a day after the seeding, the head (a superadmin, signed in)
/// raised the class size and made Ana an admin; the console open on the audit trail.
/// Returns the time the head started at, RFC 3339.
async fn with_head_changes() -> (Console, String) {
    let mut console = open(View::Audit).await;
    console.clock.advance(chrono::TimeDelta::days(1));
    let since = console.clock.now().to_rfc3339();
    let core = &console.core;
    let op = &Actor::Operator;
    let head = core
        .get_user_by_email(op, &address(HEAD))
        .await
        .expect("head");
    let head = core.act_as(op, &head.typed_id()).await.expect("act as");
    let setting = NewSetting::new("max_class_size", json!(14)).expect("a setting");
    core.put_setting(&head, setting).await.expect("put");
    console.clock.advance(chrono::TimeDelta::minutes(5));
    let ana = core
        .get_user_by_email(op, &address("ana.silva@example.com"))
        .await
        .expect("ana");
    core.set_role(&head, &ana.typed_id(), Role::Admin)
        .await
        .expect("role");
    console.press(KeyCode::Char('r')).await;
    (console, since)
}

/// Typed at a filter prompt opened with `key`: the old text cleared first.
async fn filter(console: &mut Console, key: char, text: &str) {
    console.press(KeyCode::Char(key)).await;
    assert!(console.app.overlay.is_some(), "a prompt for {key}");
    for _ in 0..80 {
        console.press(KeyCode::Backspace).await;
    }
    console.type_text(text).await;
    console.press(KeyCode::Enter).await;
}

/// The actions of the entries shown.
fn actions(console: &Console) -> Vec<String> {
    let items = &console.app.audit.list.items;
    items.iter().map(|e| e.action.clone()).collect()
}

/// Ids are new on every run: the ones shown are replaced with fixed ones of their length.
fn fixed_ids(console: &mut Console) {
    for (n, entry) in console.app.audit.list.items.iter_mut().enumerate() {
        let fixed = |kind: u32| format!("01900000-0000-7000-8000-{:06}{n:06}", kind);
        entry.id = fixed(1);
        if entry.actor.id.is_some() {
            entry.actor.id = Some(fixed(2));
        }
        if entry.target.id.is_some() {
            entry.target.id = Some(fixed(3));
        }
    }
}

#[tokio::test]
async fn the_trail_shows_the_seeded_writes_newest_first_as_the_operator() {
    let console = open(View::Audit).await;
    let list = &console.app.audit.list;
    let total = list.pagination.as_ref().expect("paged").total_items;
    assert!(total > 20, "{total} entries");
    assert_eq!(list.items.len(), 15, "a page of 15");
    assert!(
        list.items.windows(2).all(|w| w[0].at >= w[1].at),
        "newest first"
    );
    // The seeding's last writes are its settings, by the operator.
    assert_eq!(list.items[0].action, "setting.put");
    assert_eq!(list.items[0].actor.kind, "operator");
    assert_eq!(list.items[0].actor.email, operator_name());
    let screen = console.screen(100, 30);
    for text in ["┌ Audit · page 1 of", "setting.put", "TARGET", "Actor: all"] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    assert!(screen.contains("max_class_size") || screen.contains("opening_hours"));
}

#[tokio::test]
async fn the_selected_entry_shows_its_changes_one_field_a_line() {
    let (mut console, _) = with_head_changes().await;
    filter(&mut console, 'u', HEAD).await;
    assert_eq!(actions(&console), ["user.role_changed", "setting.put"]);
    let role = &console.app.audit.list.items[0];
    assert_eq!(role.actor.role, Some(Role::Superadmin));
    assert_eq!(role.target.label.as_deref(), Some("ana.silva@example.com"));
    let screen = console.screen(100, 30);
    assert!(screen.contains(r#"role: "user" → "admin""#), "{screen}");
    fixed_ids(&mut console);
    assert_snapshot(&console, "audit");
    let small = console.screen(80, 24);
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/audit-80x24.txt");
    langcamp_testkit::assert_snapshot(&path, &small, "the audit screen at 80x24 changed");

    console.press(KeyCode::Down).await;
    let screen = console.screen(100, 30);
    assert!(screen.contains("value: 12 → 14"), "{screen}");
}

#[tokio::test]
async fn filters_by_action_target_and_time_combine_and_x_clears_them() {
    let (mut console, since) = with_head_changes().await;
    let all = console
        .app
        .audit
        .list
        .pagination
        .clone()
        .expect("paged")
        .total_items;

    // By action: only that action, on page 1.
    filter(&mut console, 'a', "setting.put").await;
    assert_eq!(actions(&console), ["setting.put"; 4]);
    let screen = console.screen(100, 30);
    assert!(screen.contains("Action: setting.put"), "{screen}");
    assert!(!screen.contains("user.created"), "{screen}");

    // And since the head started: the head's one.
    filter(&mut console, 's', &since).await;
    assert_eq!(actions(&console), ["setting.put"]);
    assert_eq!(console.app.audit.list.items[0].actor.email, HEAD);

    // A time that is not one: the message, the prompt kept, the filter before it too.
    filter(&mut console, 's', "yesterday").await;
    assert!(console.error().contains("RFC 3339"), "{}", console.error());
    assert!(
        console.app.overlay.is_some(),
        "the prompt stays to be corrected"
    );
    console.press(KeyCode::Esc).await;
    assert_eq!(console.app.audit.since.as_deref(), Some(since.as_str()));
    assert_eq!(actions(&console), ["setting.put"]);

    // x clears every filter.
    console.press(KeyCode::Char('x')).await;
    assert_eq!(console.app.audit.query, AuditQuery::default());
    let pagination = console.app.audit.list.pagination.clone().expect("paged");
    assert_eq!(pagination.total_items, all);

    // f cycles the target type: users first.
    console.press(KeyCode::Char('f')).await;
    let items = &console.app.audit.list.items;
    assert!(!items.is_empty() && items.iter().all(|e| e.target.kind == "user"));
    assert!(console.screen(100, 30).contains("Target: user"));

    // Enter: the selected entry's target only (Ana's role change is the newest); again:
    // every target.
    let ana = console.app.audit.list.items[0].target.clone();
    assert_eq!(ana.label.as_deref(), Some("ana.silva@example.com"));
    console.press(KeyCode::Enter).await;
    let items = &console.app.audit.list.items;
    assert!(items.iter().all(|e| e.target.id == ana.id));
    let mut seen: Vec<&str> = items.iter().map(|e| e.action.as_str()).collect();
    seen.sort_unstable();
    assert!(seen.contains(&"user.created") && seen.contains(&"user.role_changed"));
    let screen = console.screen(100, 30);
    assert!(
        screen.contains("Target: user ana.silva@example.com"),
        "{screen}"
    );
    console.press(KeyCode::Enter).await;
    assert_eq!(console.app.audit.query.target_type, None);

    // An empty value clears one filter.
    filter(&mut console, 'u', HEAD).await;
    assert_eq!(console.app.audit.list.items.len(), 2);
    filter(&mut console, 'u', "").await;
    assert_eq!(console.app.audit.query.actor_email, None);
}

#[tokio::test]
async fn no_key_of_the_audit_view_changes_the_trail() {
    let mut console = open(View::Audit).await;
    let count = |c: &Console| {
        c.app
            .audit
            .list
            .pagination
            .clone()
            .expect("paged")
            .total_items
    };
    let before = count(&console);
    for key in [
        KeyCode::Char('d'),
        KeyCode::Delete,
        KeyCode::Char('e'),
        KeyCode::Char('n'),
        KeyCode::Char('p'),
        KeyCode::Char('c'),
    ] {
        console.press(key).await;
        assert!(console.app.overlay.is_none(), "{key:?} opened a dialog");
    }
    console.press(KeyCode::Char('r')).await;
    assert_eq!(count(&console), before);
    let page = console
        .core
        .list_audit(
            &Actor::Operator,
            &AuditQuery::default(),
            PageRequest::default(),
        )
        .await
        .expect("trail");
    assert_eq!(page.pagination.total_items, before);
}

#[tokio::test]
async fn the_audit_help_says_it_is_read_only() {
    let mut console = open(View::Audit).await;
    console.press(KeyCode::Char('?')).await;
    let screen = console.screen(100, 30);
    for text in ["Audit view", "clear filters", "target id", "read-only"] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
}
