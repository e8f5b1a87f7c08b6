//! Webhooks (CONTRACT §24), read-only: every endpoint with the events it hears, whether it
//! is enabled and how its deliveries stand (pending, delivered, failed, resting after
//! failed rounds), and below it the selected endpoint's recent deliveries, newest first,
//! page by page, filtered by status. A superadmin adds and changes endpoints over the API
//! only (with step-up, the secret shown once there), so no key here writes.

use langcamp_core::domain::Id;
use langcamp_core::webhooks::{Delivery, DeliveryStatus, EndpointStanding};
use langcamp_core::{Page, Timestamp};
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::app::{App, Listing};
use crate::keymap::{Action, Focus};
use crate::listing::next_filter;
use crate::table::{Column, ListTable};
use crate::task::{Job, Task};
use crate::ui;
use crate::view::View;

/// The statuses `f` cycles the deliveries shown through (after all of them).
pub const STATUSES: [DeliveryStatus; 3] = [
    DeliveryStatus::Pending,
    DeliveryStatus::Delivered,
    DeliveryStatus::Failed,
];

#[derive(Clone, Debug, Default)]
pub struct WebhooksState {
    pub endpoints: Listing<EndpointStanding>,
    /// The deliveries of the endpoint `shown`.
    pub deliveries: Listing<Delivery>,
    /// The id of the endpoint whose deliveries are shown: the selected one.
    pub shown: Option<String>,
    /// Only the deliveries with this status (`None`: all).
    pub status: Option<DeliveryStatus>,
    /// The deliveries pane has the keys (otherwise the endpoints).
    pub deliveries_focused: bool,
}

impl WebhooksState {
    pub fn focus(&self) -> Focus {
        if self.deliveries_focused {
            Focus::Secondary
        } else {
            Focus::Main
        }
    }
}

/// Loads the endpoints; the deliveries are (re)loaded when they have come, for the
/// endpoint then selected.
pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let job = Job::WebhookStandings;
    let task = app.task(View::Webhooks, "Loading webhook endpoints…", job);
    app.webhooks.endpoints.loading(task)
}

fn load_deliveries(app: &mut App) -> Vec<Task> {
    let s = &app.webhooks;
    let Some(id) = s.shown.clone() else {
        return Vec::new();
    };
    let job = Job::WebhookDeliveries {
        id: Id::from(id),
        status: s.status,
        page: s.deliveries.page,
    };
    let task = app.task(View::Webhooks, "Loading deliveries…", job);
    app.webhooks.deliveries.loading(task)
}

/// The deliveries follow the selected endpoint: from their first page when it is another
/// one than those shown, the page shown again when it is the same.
fn follow_selection(app: &mut App) -> Vec<Task> {
    let s = &mut app.webhooks;
    let selected = s.endpoints.selected().map(|e| e.endpoint.id.clone());
    if selected != s.shown {
        s.shown = selected;
        s.deliveries = Listing::default();
    }
    if s.shown.is_none() {
        // No endpoint: no deliveries to wait for.
        s.deliveries.loaded = true;
        s.deliveries_focused = false;
    }
    load_deliveries(app)
}

pub(crate) fn endpoints_loaded(app: &mut App, id: u64, list: Vec<EndpointStanding>) -> Vec<Task> {
    let s = &mut app.webhooks;
    if s.endpoints.load_id != Some(id) {
        return Vec::new();
    }
    s.endpoints.fill(list);
    follow_selection(app)
}

pub(crate) fn deliveries_loaded(app: &mut App, id: u64, page: Page<Delivery>) -> Vec<Task> {
    if app.webhooks.deliveries.answer_page(id, page) {
        return load_deliveries(app);
    }
    Vec::new()
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.webhooks;
    if action == Action::CycleFilter {
        s.status = next_filter(s.status, &STATUSES);
        s.deliveries.first_page();
        return load_deliveries(app);
    }
    if s.deliveries_focused {
        match action {
            Action::Up | Action::Down => s.deliveries.move_selection(action),
            Action::NextPage | Action::PrevPage if s.deliveries.turn_page(action) => {
                return load_deliveries(app);
            }
            Action::Back => s.deliveries_focused = false,
            _ => {}
        }
        return Vec::new();
    }
    match action {
        Action::Up | Action::Down => {
            let before = s.endpoints.selected;
            s.endpoints.move_selection(action);
            if s.endpoints.selected != before {
                return follow_selection(app);
            }
        }
        Action::Open if s.shown.is_some() => s.deliveries_focused = true,
        _ => {}
    }
    Vec::new()
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.webhooks;
    // A school has a few endpoints: their table takes what they need (at most half), the
    // deliveries the rest.
    let rows = u16::try_from(s.endpoints.items.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3)
        .max(5);
    let [bar, top, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(rows.min(area.height.saturating_sub(1) / 2)),
        Constraint::Fill(1),
    ])
    .areas(area);
    frame.render_widget(
        Line::from(vec![
            Span::styled("Deliveries: ", ui::dim()),
            Span::raw(s.status.map_or("all", DeliveryStatus::as_str)),
        ]),
        bar,
    );
    ENDPOINTS.render_named(
        frame,
        top,
        &s.endpoints,
        ENDPOINTS.name,
        !s.deliveries_focused,
    );

    // The detail is of the pane that has the keys: the endpoint, or the delivery.
    let percent = if area.width < 100 { 60 } else { 64 };
    let [list_area, detail_area] = ui::list_and_detail(bottom, percent);
    DELIVERIES.render_named(
        frame,
        list_area,
        &s.deliveries,
        DELIVERIES.name,
        s.deliveries_focused,
    );
    let (title, lines) = if s.deliveries_focused {
        let lines = s.deliveries.selected().map(delivery_detail);
        (" Delivery ", lines)
    } else {
        let lines = s.endpoints.selected().map(endpoint_detail);
        (" Endpoint ", lines)
    };
    ui::render_detail(frame, detail_area, title, lines.unwrap_or_default());
}

const ENDPOINTS: ListTable<EndpointStanding> = ListTable {
    name: "Webhooks",
    noun: ("endpoint", "endpoints"),
    columns: &[
        Column::new("URL", Fill(3), |s| short_url(&s.endpoint.url).into()),
        Column::new("EVENTS", Fill(2), |s| events(s, ", ").into()),
        Column::new("STATE", Length(19), |s| state(s).into()),
        Column::new("PENDING", Length(7), |s| s.pending.to_string().into()),
        Column::new("DELIVERED", Length(9), |s| s.delivered.to_string().into()),
        Column::new("FAILED", Length(6), |s| s.failed.to_string().into()),
    ],
    empty: "No webhook endpoints: a superadmin adds one over the API (POST /admin/webhooks).",
};

const DELIVERIES: ListTable<Delivery> = ListTable {
    name: "Deliveries",
    noun: ("delivery", "deliveries"),
    columns: &[
        Column::new("QUEUED", Length(11), |d| short_time(d.created_at).into()),
        Column::new("EVENT", Length(17), |d| d.event.as_str().into()),
        Column::new("STATUS", Length(9), |d| d.status.as_str().into()),
        Column::new("TRIES", Length(5), |d| d.attempts.to_string().into()),
        Column::new("ANSWER", Fill(1), |d| answer(d).into()),
    ],
    empty: "No deliveries match.",
};

/// The URL without `https://`, which nearly every one starts with (an `http://` one, only
/// into the allowed networks, keeps its scheme and stands out); the detail has it whole.
fn short_url(url: &str) -> &str {
    url.strip_prefix("https://").unwrap_or(url)
}

/// The endpoint's events, each by its name, joined with `separator`.
fn events(s: &EndpointStanding, separator: &str) -> String {
    let names: Vec<&str> = s.endpoint.events.iter().map(|e| e.as_str()).collect();
    names.join(separator)
}

/// `enabled`, `disabled`, or `resting until 09:05` (an enabled endpoint after failed
/// rounds; a rest lasts minutes at most, so the time of day says when).
fn state(s: &EndpointStanding) -> String {
    match (s.endpoint.enabled, s.resting_until) {
        (false, _) => "disabled".to_owned(),
        (true, Some(until)) => format!("resting until {}", until.0.format("%H:%M")),
        (true, None) => "enabled".to_owned(),
    }
}

/// `05-04 09:00`: a recent time (the log keeps 30 days), short enough for a column.
fn short_time(t: Timestamp) -> String {
    t.0.format("%m-%d %H:%M").to_string()
}

/// The last answer: its status code, else why none came, else `—` (not tried yet).
fn answer(d: &Delivery) -> String {
    match (d.last_status_code, &d.last_error) {
        (Some(code), _) => code.to_string(),
        (None, Some(error)) => error.clone(),
        (None, None) => "—".to_owned(),
    }
}

fn optional_time(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "—".to_owned(), ui::date_time)
}

fn endpoint_detail(s: &EndpointStanding) -> Vec<Line<'static>> {
    let e = &s.endpoint;
    // The URL on a line of its own: it is seldom short.
    let mut lines = vec![
        Line::from(Span::styled(e.url.clone(), ui::key_style())),
        ui::field("Events", events(s, ", ")),
        ui::field("Enabled", ui::yes_no(e.enabled)),
    ];
    if let Some(until) = s.resting_until {
        lines.push(ui::field(
            "Resting",
            format!("until {}", ui::date_time(until)),
        ));
    }
    if s.failing_rounds > 0 {
        let rounds = if s.failing_rounds == 1 {
            "round"
        } else {
            "rounds"
        };
        lines.push(ui::field(
            "Failing",
            format!("{} {rounds} in a row", s.failing_rounds),
        ));
    }
    lines.extend([
        Line::default(),
        ui::field("Pending", s.pending.to_string()),
        ui::field("Delivered", s.delivered.to_string()),
        ui::field("Failed", s.failed.to_string()),
        ui::field("Last sent", optional_time(s.last_delivered_at)),
        Line::default(),
        ui::field("Created", ui::date_time(e.created_at)),
        ui::field("Updated", ui::date_time(e.updated_at)),
        ui::field("Id", e.id.clone()),
    ]);
    if let Some(description) = &e.description {
        lines.push(Line::default());
        lines.extend(description.lines().map(|l| Line::from(l.to_owned())));
    }
    lines
}

fn delivery_detail(d: &Delivery) -> Vec<Line<'static>> {
    let mut lines = vec![
        ui::field("Event", d.event.clone()),
        ui::field("Status", d.status.clone()),
        ui::field("Attempts", d.attempts.to_string()),
        ui::field(
            "Answer",
            d.last_status_code
                .map_or_else(|| "—".to_owned(), |code| code.to_string()),
        ),
        ui::field("Queued", ui::date_time(d.created_at)),
        ui::field("Delivered", optional_time(d.delivered_at)),
        ui::field("Next try", optional_time(d.next_attempt_at)),
        ui::field("Id", d.id.clone()),
    ];
    if let Some(error) = &d.last_error {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Last error:", ui::dim())));
        lines.extend(error.lines().map(|l| Line::from(l.to_owned())));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use langcamp_core::webhooks::{Endpoint, Event};

    fn standing(enabled: bool, resting_until: Option<Timestamp>) -> EndpointStanding {
        EndpointStanding {
            endpoint: Endpoint {
                id: "e1".into(),
                url: "https://hooks.example.com/x".into(),
                events: vec![Event::ContactCreated, Event::ResultCreated],
                description: None,
                enabled,
                created_at: Timestamp::from_millis(0),
                updated_at: Timestamp::from_millis(0),
                secret: None,
            },
            pending: 2,
            failed: 0,
            delivered: 5,
            last_delivered_at: None,
            failing_rounds: 3,
            resting_until,
        }
    }

    #[test]
    fn an_endpoint_is_enabled_disabled_or_resting_until_a_time() {
        // 1970-01-01 00:05:30 UTC.
        let until = Some(Timestamp::from_millis(330_000));
        assert_eq!(state(&standing(true, None)), "enabled");
        assert_eq!(state(&standing(true, until)), "resting until 00:05");
        assert_eq!(state(&standing(false, until)), "disabled");
        assert_eq!(
            events(&standing(true, None), ", "),
            "contact.created, result.created"
        );
    }

    #[test]
    fn the_list_shows_an_https_url_without_its_scheme_and_an_http_one_whole() {
        assert_eq!(short_url("https://crm.example/hook"), "crm.example/hook");
        assert_eq!(short_url("http://10.0.0.5/hook"), "http://10.0.0.5/hook");
    }

    #[test]
    fn a_delivery_answer_is_its_status_code_else_its_error_else_a_dash() {
        let mut d = Delivery {
            id: "d1".into(),
            event: "contact.created".into(),
            status: "pending".into(),
            attempts: 0,
            last_status_code: None,
            last_error: None,
            created_at: Timestamp::from_millis(0),
            delivered_at: None,
            next_attempt_at: None,
        };
        assert_eq!(answer(&d), "—");
        d.last_error = Some("timed out".into());
        assert_eq!(answer(&d), "timed out");
        d.last_status_code = Some(500);
        d.last_error = Some("answered 500".into());
        assert_eq!(answer(&d), "500");
    }
}
