//! CONTRACT §24: the console's view of the webhook endpoints and their recent deliveries,
//! read-only (endpoints are added and changed over the API). No webhook worker runs here,
//! so a delivery a write queues stays pending; what a worker's failed attempts leave is
//! written to the tables directly.

use chrono::TimeDelta;
use crossterm::event::KeyCode;
use langcamp_core::Actor;
use langcamp_core::contacts::{ContactInput, NewContact};
use langcamp_core::domain::Id;
use langcamp_core::webhooks::{DeliveryStatus, EndpointChange, EndpointInput, NewEndpoint};
use langcamp_tui::view::View;

use crate::harness::{Console, assert_snapshot};
use crate::views::open;

const CRM: &str = "https://hooks.example.com/crm";
const SITE: &str = "https://hooks.example.com/site";

/// Adds an endpoint for `events` through core, as a superadmin would over the API.
async fn endpoint(
    console: &Console,
    url: &str,
    events: &[&str],
    description: Option<&str>,
) -> String {
    let input = EndpointInput {
        url: Some(url.into()),
        events: Some(events.iter().map(|e| (*e).to_owned()).collect()),
        description: description.map(str::to_owned),
    };
    let new = NewEndpoint::try_from(input).expect("a valid endpoint");
    let created = console
        .core
        .create_webhook(&Actor::Operator, new)
        .await
        .expect("create the endpoint");
    created.id
}

/// A contact request from `first`, through core: it queues a `contact.created` delivery
/// for each endpoint that hears it.
async fn contact(console: &Console, first: &str) {
    let input = ContactInput {
        first_name: Some(first.into()),
        last_name: Some("Example".into()),
        email: Some(format!("{}@example.com", first.to_lowercase())),
        phone: None,
        message: Some("Do you have evening classes?".into()),
        source: None,
        locale: None,
    };
    let new = NewContact::try_from(input).expect("a valid contact request");
    console
        .core
        .create_contact(&Actor::Operator, new)
        .await
        .expect("contact");
}

/// The row of the endpoints table that shows `url` (without `https://`), as its words.
fn row_of(screen: &str, url: &str) -> Vec<String> {
    let shown = url.trim_start_matches("https://");
    let line = screen
        .lines()
        .find(|l| {
            l.trim_start_matches(['│', '▶', '›', ' '])
                .starts_with(shown)
        })
        .unwrap_or_else(|| panic!("a row for {url}:\n{screen}"));
    line.split_whitespace().map(str::to_owned).collect()
}

#[tokio::test]
async fn an_endpoint_shows_its_events_its_counts_and_its_pending_delivery() {
    let mut console = open(View::Webhooks).await;
    let screen = console.screen(100, 30);
    assert!(screen.contains("┌ Webhooks · 0 endpoints"), "{screen}");
    assert!(screen.contains("No webhook endpoints"), "{screen}");

    endpoint(&console, CRM, &["contact.created"], Some("The CRM")).await;
    console.clock.advance(TimeDelta::minutes(1));
    contact(&console, "Lena").await;
    console.press(KeyCode::Char('r')).await;

    let s = &console.app.webhooks;
    assert_eq!(s.endpoints.items.len(), 1);
    assert_eq!(s.endpoints.items[0].pending, 1);
    let statuses: Vec<&str> = s
        .deliveries
        .items
        .iter()
        .map(|d| d.status.as_str())
        .collect();
    assert_eq!(statuses, ["pending"]);
    let screen = console.screen(100, 30);
    for text in [
        "┌ Webhooks · 1 endpoint",
        "URL",
        "EVENTS",
        "PENDING",
        "DELIVERED",
        "FAILED",
        "┌ Deliveries · page 1 of 1 · 1 delivery",
        "Deliveries: all",
        "┌ Endpoint",
        "The CRM",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    // The detail has the URL whole.
    assert!(screen.contains(&format!("││{CRM}")), "{screen}");
    // URL, events, state, then pending, delivered and failed.
    let row = row_of(&screen, CRM);
    assert_eq!(
        row[row.len() - 7..],
        [
            "hooks.example.com/crm",
            "contact.created",
            "enabled",
            "1",
            "0",
            "0",
            "│"
        ],
        "{screen}"
    );
    // The delivery: queued, its event, pending, not tried yet.
    let line = screen
        .lines()
        .find(|l| l.contains("pending") && l.contains("contact.created"))
        .unwrap_or_else(|| panic!("the pending delivery:\n{screen}"));
    assert!(line.contains(" 0 "), "no attempt yet: {line}");

    // Enter: the deliveries have the keys and the detail is the selected delivery's.
    console.press(KeyCode::Enter).await;
    assert!(console.app.webhooks.deliveries_focused);
    let screen = console.screen(100, 30);
    for text in [
        "┌ Delivery",
        "Status     pending",
        "Attempts   0",
        "Next try",
        "Esc to endpoints",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }

    // f shows the deliveries of one status in turn, then all again.
    let mut shown = Vec::new();
    for _ in 0..4 {
        console.press(KeyCode::Char('f')).await;
        let s = &console.app.webhooks;
        shown.push((s.status, s.deliveries.items.len()));
    }
    assert_eq!(
        shown,
        [
            (Some(DeliveryStatus::Pending), 1),
            (Some(DeliveryStatus::Delivered), 0),
            (Some(DeliveryStatus::Failed), 0),
            (None, 1),
        ]
    );
    console.press(KeyCode::Char('f')).await;
    console.press(KeyCode::Char('f')).await;
    let screen = console.screen(100, 30);
    assert!(screen.contains("Deliveries: delivered"), "{screen}");
    assert!(screen.contains("No deliveries match."), "{screen}");

    console.press(KeyCode::Esc).await;
    assert!(!console.app.webhooks.deliveries_focused);
    assert!(console.screen(100, 30).contains("┌ Endpoint"));
}

/// A disabled endpoint, and one resting after two failed rounds whose oldest delivery was
/// answered 500 twice, as the worker leaves them; the deliveries follow the selection.
#[tokio::test]
async fn a_resting_endpoint_says_until_when_and_a_failed_attempt_shows_its_answer() {
    let mut console = open(View::Webhooks).await;
    let crm = endpoint(&console, CRM, &["contact.created"], None).await;
    let site = endpoint(
        &console,
        SITE,
        &["result.created", "material.assigned"],
        None,
    )
    .await;
    let change = EndpointChange {
        enabled: Some(false),
        ..EndpointChange::default()
    };
    console
        .core
        .update_webhook(&Actor::Operator, &Id::from(&site), change)
        .await
        .expect("disable");
    console.clock.advance(TimeDelta::minutes(1));
    contact(&console, "Lena").await;
    console.clock.advance(TimeDelta::minutes(1));
    contact(&console, "Tomas").await;

    let now = console.core.clock().now_ms();
    let mut conn = console
        .core
        .db()
        .writer_connection()
        .await
        .expect("a connection");
    let oldest: String = sqlx::query_scalar(
        "SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at LIMIT 1",
    )
    .bind(&crm)
    .fetch_one(&mut *conn)
    .await
    .expect("the oldest delivery");
    sqlx::query(
        "UPDATE webhook_deliveries
         SET attempts = 2, last_status_code = 500, last_error = 'answered 500',
             next_attempt_at = $1
         WHERE id = $2",
    )
    .bind(now + 30_000)
    .bind(&oldest)
    .execute(&mut *conn)
    .await
    .expect("a failed attempt");
    sqlx::query("UPDATE webhook_endpoints SET failures = 2, resting_until = $1 WHERE id = $2")
        .bind(now + 30_000)
        .bind(&crm)
        .execute(&mut *conn)
        .await
        .expect("resting");
    drop(conn);
    console.press(KeyCode::Char('r')).await;

    let screen = console.screen(100, 30);
    let until = (console.clock.now() + TimeDelta::seconds(30)).format("%H:%M");
    let crm_row = row_of(&screen, CRM);
    assert_eq!(
        crm_row[crm_row.len() - 8..],
        [
            "contact.created",
            "resting",
            "until",
            &until.to_string(),
            "2",
            "0",
            "0",
            "│"
        ],
        "{screen}"
    );
    let site_row = row_of(&screen, SITE);
    assert!(site_row.contains(&"disabled".to_owned()), "{screen}");
    for text in ["Resting    until", "Failing    2 rounds in a row"] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    // The delivery tried twice shows its last answer's status code.
    let tried = screen
        .lines()
        .find(|l| l.contains("contact.created   pending   2"))
        .unwrap_or_else(|| panic!("the delivery tried twice:\n{screen}"));
    assert!(tried.contains("2     500"), "{tried}");
    // Newest first: Tomas's delivery, then Lena's, tried twice.
    let s = &console.app.webhooks;
    let tries: Vec<i64> = s.deliveries.items.iter().map(|d| d.attempts).collect();
    assert_eq!(tries, [0, 2]);

    // Down to the disabled endpoint: its deliveries (none) are shown; back up to the CRM.
    console.press(KeyCode::Down).await;
    assert_eq!(console.app.webhooks.shown.as_deref(), Some(site.as_str()));
    let screen = console.screen(100, 30);
    assert!(screen.contains("No deliveries match."), "{screen}");
    for text in [
        &format!("││{SITE}"),
        "Events     result.created,",
        "material.assigned",
        "Enabled    no",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    console.press(KeyCode::Up).await;
    assert_eq!(console.app.webhooks.shown.as_deref(), Some(crm.as_str()));

    // Enter, down to the delivery tried twice: its answer and its error in full.
    console.press(KeyCode::Enter).await;
    console.press(KeyCode::Down).await;
    let screen = console.screen(100, 30);
    for text in [
        "Attempts   2",
        "Answer     500",
        "Last error:",
        "answered 500",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
    fix_ids(&mut console);
    assert_snapshot(&console, "webhooks");
}

#[tokio::test]
async fn the_webhooks_help_says_it_is_read_only_and_where_endpoints_are_made() {
    let mut console = open(View::Webhooks).await;
    assert_eq!(View::Webhooks.key(), '0');
    console.press(KeyCode::Char('?')).await;
    let screen = console.screen(100, 30);
    for text in [
        "Webhooks view",
        "to deliveries",
        "status",
        "Read-only",
        "/admin/webhooks",
    ] {
        assert!(screen.contains(text), "{text}:\n{screen}");
    }
}

/// Ids are new on every run: the ones shown are replaced with fixed ones of their length.
fn fix_ids(console: &mut Console) {
    let s = &mut console.app.webhooks;
    for (n, e) in s.endpoints.items.iter_mut().enumerate() {
        let fixed = format!("01900000-0000-7000-8000-000001{n:06}");
        if s.shown.as_ref() == Some(&e.endpoint.id) {
            s.shown = Some(fixed.clone());
        }
        e.endpoint.id = fixed;
    }
    for (n, d) in s.deliveries.items.iter_mut().enumerate() {
        d.id = format!("01900000-0000-7000-8000-000002{n:06}");
    }
}
