//! Settings: every key with its JSON value; edit a value as JSON, checked before it is
//! sent (and by core, which refuses `null`).

use langcamp_core::settings::Setting;
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use crate::app::{App, EditorPurpose, Listing, Overlay};
use crate::input::TextArea;
use crate::keymap::Action;
use crate::table::{Column, ListTable};
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
        Action::Up | Action::Down => s.list.move_selection(action),
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
    TABLE.render(frame, table_area, &s.list);
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

const TABLE: ListTable<Setting> = ListTable {
    name: "Settings",
    noun: ("key", "keys"),
    columns: &[
        Column::new("KEY", Length(28), |s| s.key.as_str().into()),
        Column::new("VALUE", Fill(1), |s| s.value.to_string().into()),
        Column::new("UPDATED", Length(16), |s| {
            ui::date_time(s.updated_at).into()
        }),
    ],
    empty: "No settings yet.",
};
