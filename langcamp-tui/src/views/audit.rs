//! The audit trail (CONTRACT §17), read-only: who did what to which record, and when,
//! newest first, page by page, beside the selected entry with its changes. Filters by the
//! actor's e-mail, the action, the target (its type, its id, or the selected entry's
//! target) and a time lower bound. No key edits or deletes an entry.

use langcamp_core::audit::{self, AuditEntry, AuditQuery};
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::app::{App, Listing, Overlay, PromptPurpose};
use crate::input::LineInput;
use crate::keymap::Action;
use crate::listing::next_filter;
use crate::table::{Column, ListTable};
use crate::task::{Job, Task};
use crate::ui;
use crate::view::View;

/// The kinds of record an entry can be about, in the order `f` cycles through them.
pub const TARGET_TYPES: [&str; 13] = [
    "user",
    "course",
    "test",
    "result",
    "material",
    "contact",
    "setting",
    "mail_template",
    "webhook",
    "export",
    "stats",
    "storage",
    "audit",
];

/// A filter typed at a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditField {
    /// The actor's e-mail (or the operator's name).
    Actor,
    /// The action, e.g. `user.role_changed`.
    Action,
    /// The target's id.
    TargetId,
    /// The earliest time, RFC 3339.
    Since,
}

impl AuditField {
    fn title(self) -> &'static str {
        match self {
            AuditField::Actor => {
                "Only actions by (an e-mail or the operator's name; empty: anyone)"
            }
            AuditField::Action => "Only the action (e.g. user.role_changed; empty: any)",
            AuditField::TargetId => "Only the target with the id (empty: any)",
            AuditField::Since => "Since (RFC 3339, e.g. 2026-05-04T09:00:00Z; empty: any time)",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct AuditState {
    /// The filters as core takes them.
    pub query: AuditQuery,
    /// The lower time bound as it was typed.
    pub since: Option<String>,
    /// The name of the target filtered on, when it was taken from an entry.
    pub target_label: Option<String>,
    pub list: Listing<AuditEntry>,
}

impl AuditState {
    /// The current text of a filter typed at a prompt.
    fn value(&self, field: AuditField) -> Option<&str> {
        match field {
            AuditField::Actor => self.query.actor_email.as_deref(),
            AuditField::Action => self.query.action.as_deref(),
            AuditField::TargetId => self.query.target_id.as_deref(),
            AuditField::Since => self.since.as_deref(),
        }
    }
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let s = &app.audit;
    let job = Job::Audit {
        query: s.query.clone(),
        page: s.list.page,
    };
    let task = app.task(View::Audit, "Loading the audit trail…", job);
    app.audit.list.loading(task)
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.audit;
    match action {
        Action::Up | Action::Down => s.list.move_selection(action),
        Action::NextPage | Action::PrevPage if s.list.turn_page(action) => return load(app),
        Action::CycleFilter => {
            let current = TARGET_TYPES
                .iter()
                .position(|t| Some(*t) == s.query.target_type.as_deref());
            let indexes: Vec<usize> = (0..TARGET_TYPES.len()).collect();
            s.query.target_type = next_filter(current, &indexes).map(|i| TARGET_TYPES[i].into());
            s.query.target_id = None;
            s.target_label = None;
            return reload(app);
        }
        Action::Open => {
            let Some(entry) = s.list.selected() else {
                return Vec::new();
            };
            let target = &entry.target;
            let same = s.query.target_type.as_deref() == Some(target.kind.as_str())
                && s.query.target_id == target.id;
            if same {
                s.query.target_type = None;
                s.query.target_id = None;
                s.target_label = None;
            } else {
                s.query.target_type = Some(target.kind.clone());
                s.query.target_id = target.id.clone();
                // A target without an id (a setting, an export) is filtered by its type.
                s.target_label = target.id.as_ref().and(target.label.clone());
            }
            return reload(app);
        }
        Action::FilterActor => prompt(app, AuditField::Actor),
        Action::FilterAction => prompt(app, AuditField::Action),
        Action::FilterTargetId => prompt(app, AuditField::TargetId),
        Action::FilterSince => prompt(app, AuditField::Since),
        Action::ClearFilters => {
            if s.query == AuditQuery::default() {
                return Vec::new();
            }
            s.query = AuditQuery::default();
            s.since = None;
            s.target_label = None;
            return reload(app);
        }
        _ => {}
    }
    Vec::new()
}

/// Back to page 1 with the filters as they are now.
fn reload(app: &mut App) -> Vec<Task> {
    app.audit.list.first_page();
    load(app)
}

fn prompt(app: &mut App, field: AuditField) {
    let current = app.audit.value(field).unwrap_or_default();
    app.overlay = Some(Overlay::Prompt {
        title: field.title().to_owned(),
        input: LineInput::new(current),
        purpose: PromptPurpose::AuditFilter(field),
        awaiting: None,
    });
}

/// A filter was typed: the list shows page 1 of what it lets through, an empty one
/// clears it. A time that is not one is refused; the prompt stays open with the text and
/// the filter before it stays.
pub(crate) fn filter_submitted(
    app: &mut App,
    field: AuditField,
    title: String,
    input: LineInput,
) -> Vec<Task> {
    let text = input.text().trim();
    let value = (!text.is_empty()).then(|| text.to_owned());
    let s = &mut app.audit;
    match field {
        AuditField::Actor => s.query.actor_email = value,
        AuditField::Action => s.query.action = value,
        AuditField::TargetId => {
            s.query.target_id = value;
            s.target_label = None;
        }
        AuditField::Since => match audit::time("since", value.as_deref()) {
            Ok(from) => {
                s.query.from = from;
                s.since = value;
            }
            Err(problem) => {
                app.error(problem);
                app.overlay = Some(Overlay::Prompt {
                    title,
                    input,
                    purpose: PromptPurpose::AuditFilter(field),
                    awaiting: None,
                });
                return Vec::new();
            }
        },
    }
    reload(app)
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.audit;
    let [bar, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(Line::from(filter_bar(s)), bar);
    // The entry's details stay readable on a small terminal, at the list's cost.
    let percent = if area.width < 100 { 56 } else { 64 };
    TABLE.render_with_detail(frame, body, &s.list, percent, " Entry ", detail);
}

fn filter_bar(s: &AuditState) -> Vec<Span<'static>> {
    let q = &s.query;
    let target = match (&q.target_type, &q.target_id, &s.target_label) {
        (None, None, _) => "all".to_owned(),
        (kind, _, Some(label)) => format!("{} {label}", kind.as_deref().unwrap_or("any")),
        (kind, id, None) => {
            let kind = kind.as_deref().unwrap_or("any");
            id.as_ref()
                .map_or_else(|| kind.to_owned(), |id| format!("{kind} {id}"))
        }
    };
    let mut spans = vec![
        Span::styled("Actor: ", ui::dim()),
        Span::raw(q.actor_email.clone().unwrap_or_else(|| "all".into())),
    ];
    spans.extend(ui::filter_spans(
        "Action",
        q.action.as_deref().unwrap_or("all"),
    ));
    spans.extend(ui::filter_spans("Target", &target));
    spans.extend(ui::filter_spans("Since", s.since.as_deref().unwrap_or("—")));
    spans
}

const TABLE: ListTable<AuditEntry> = ListTable {
    name: "Audit",
    noun: ("entry", "entries"),
    columns: &[
        Column::new("TIME", Length(16), |e| ui::date_time(e.at).into()),
        Column::new("ACTOR", Fill(2), |e| e.actor.email.as_str().into()),
        Column::new("ACTION", Fill(2), |e| e.action.as_str().into()),
        Column::new("TARGET", Fill(3), |e| target(e).into()),
    ],
    empty: "No audit entries match.",
};

/// `course German for Beginners`: the target's type and its label (else its id).
fn target(e: &AuditEntry) -> String {
    let t = &e.target;
    match t.label.as_ref().or(t.id.as_ref()) {
        Some(name) => format!("{} {name}", t.kind),
        None => t.kind.clone(),
    }
}

fn detail(e: &AuditEntry) -> Vec<Line<'static>> {
    let a = &e.actor;
    let who = match a.role {
        Some(role) => format!("{} ({role})", a.kind),
        None => a.kind.clone(),
    };
    // What happened and its changes first (they fit a small terminal), the ids after.
    let mut lines = vec![
        ui::field("At", e.at.0.format("%Y-%m-%d %H:%M:%S").to_string()),
        ui::field("Action", e.action.clone()),
        ui::field("Actor", a.email.clone()),
        ui::field("", who),
        ui::field("Target", e.target.kind.clone()),
        ui::field("", ui::or_dash(&e.target.label)),
        Line::default(),
    ];
    lines.extend(changes(e.changes.as_ref()));
    lines.extend([
        Line::default(),
        ui::field("Request id", ui::or_dash(&e.request_id)),
        ui::field("Client", ui::or_dash(&e.client_address)),
        ui::field("Target id", ui::or_dash(&e.target.id)),
    ]);
    if let Some(id) = &a.id {
        lines.push(ui::field("Actor id", id.clone()));
    }
    lines.push(ui::field("Entry id", e.id.clone()));
    lines
}

/// `Changes:` and one `field: from → to` line per changed field (values as compact JSON).
fn changes(changes: Option<&Value>) -> Vec<Line<'static>> {
    let heading = |text: &str| Line::from(Span::styled(text.to_owned(), ui::dim()));
    match changes {
        None | Some(Value::Null) => vec![heading("No changes recorded.")],
        Some(Value::Object(fields)) if fields.is_empty() => {
            vec![heading("Changes: none (nothing differed).")]
        }
        Some(Value::Object(fields)) => {
            let mut lines = vec![heading("Changes:")];
            for (field, change) in fields {
                let (from, to) = match change {
                    Value::Object(c) => (
                        c.get("from").unwrap_or(&Value::Null),
                        c.get("to").unwrap_or(&Value::Null),
                    ),
                    other => (&Value::Null, other),
                };
                lines.push(Line::from(vec![
                    Span::raw(format!("{field}: ")),
                    Span::raw(compact(from)),
                    Span::styled(" → ", ui::dim()),
                    Span::raw(compact(to)),
                ]));
            }
            lines
        }
        Some(other) => vec![heading("Changes:"), Line::from(compact(other))],
    }
}

/// A JSON value on one line.
pub fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn changes_are_one_field_a_line_from_and_to_as_compact_json() {
        let changes = json!({
            "role": {"from": "user", "to": "admin"},
            "price": {"from": null, "to": 140.5},
            "tags": {"from": ["a"], "to": {"b": [1, 2]}}
        });
        assert_eq!(
            text(&super::changes(Some(&changes))),
            [
                "Changes:",
                "price: null → 140.5",
                "role: \"user\" → \"admin\"",
                "tags: [\"a\"] → {\"b\":[1,2]}",
            ]
        );
        assert_eq!(text(&super::changes(None)), ["No changes recorded."]);
        assert_eq!(
            text(&super::changes(Some(&json!({})))),
            ["Changes: none (nothing differed)."]
        );
    }
}
