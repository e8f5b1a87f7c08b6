//! Settings: every key with its JSON value; edit a value as JSON, checked before it is
//! sent (and by core, which refuses `null`).

use langcamp_core::settings::Setting;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row};

use crate::app::{App, EditorPurpose, Listing, Overlay};
use crate::input::TextArea;
use crate::keymap::Action;
use crate::task::{Job, Task};
use crate::ui;
use crate::view::View;

#[derive(Clone, Debug, Default)]
pub struct SettingsState {
    pub list: Listing<Setting>,
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let task = app.task(View::Settings, "Loading settings…", Job::Settings);
    app.settings.list.loading(task)
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.settings;
    match action {
        Action::Up => s.list.up(),
        Action::Down => s.list.down(),
        Action::Open => {
            if let Some(setting) = s.list.selected() {
                app.overlay = Some(Overlay::Editor {
                    title: format!("Value of {} (JSON)", setting.key),
                    context: vec![
                        "Any JSON value but null: \"text\", 12, true, [..], {..}.".to_owned(),
                    ],
                    editor: TextArea::new(&pretty(&setting.value)),
                    purpose: EditorPurpose::Setting {
                        key: setting.key.clone(),
                    },
                    awaiting: None,
                });
            }
        }
        _ => {}
    }
    Vec::new()
}

/// Saves the edited value when it is JSON; otherwise says what is wrong and keeps the
/// editor open.
pub(crate) fn save(app: &mut App, key: &str, editor: &TextArea) -> Option<Task> {
    match serde_json::from_str::<serde_json::Value>(&editor.text()) {
        Ok(serde_json::Value::Null) => {
            app.error("the value cannot be null");
            None
        }
        Ok(value) => Some(app.task(
            View::Settings,
            "Saving…",
            Job::PutSetting {
                key: key.to_owned(),
                value,
            },
        )),
        Err(e) => {
            app.error(format!("not valid JSON: {e}"));
            None
        }
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.settings;
    let [table_area, detail_area] =
        Layout::vertical([Constraint::Fill(3), Constraint::Fill(2)]).areas(area);
    let title = format!(" Settings · {} ", ui::page_summary(&s.list, "key", "keys"));
    let pane = ui::TablePane {
        title: &title,
        columns: &[
            ("KEY", Constraint::Length(28)),
            ("VALUE", Constraint::Fill(1)),
            ("UPDATED", Constraint::Length(16)),
        ],
        empty: "No settings yet.",
    };
    pane.render(frame, table_area, &s.list, |setting| {
        Row::new([
            Cell::from(setting.key.clone()),
            Cell::from(setting.value.to_string()),
            Cell::from(ui::date_time(setting.updated_at)),
        ])
    });
    let value: Vec<Line> = s
        .list
        .selected()
        .map(|setting| pretty(&setting.value))
        .unwrap_or_default()
        .lines()
        .map(|l| Line::from(l.to_owned()))
        .collect();
    frame.render_widget(
        Paragraph::new(value).block(ui::block(" Value ")),
        detail_area,
    );
}
