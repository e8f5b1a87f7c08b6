//! Users: a searchable, filterable, paginated table with a detail pane; change a role,
//! edit an e-mail address, delete (after confirmation).

use langcamp_core::Role;
use langcamp_core::domain::Id;
use langcamp_core::domain::validate;
use langcamp_core::users::{User, UserQuery};
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;

use crate::app::{App, ChoicePurpose, Listing, Overlay, PromptPurpose, Search};
use crate::input::LineInput;
use crate::keymap::Action;
use crate::listing::next_filter;
use crate::table::{Column, ListTable};
use crate::task::{ExportList, Job, Task};
use crate::ui;
use crate::view::View;

#[derive(Clone, Debug, Default)]
pub struct UsersState {
    /// The search text (e-mail or name).
    pub search: Search,
    pub role: Option<Role>,
    /// Registration complete (`Some(true)`), incomplete, or either.
    pub complete: Option<bool>,
    pub list: Listing<User>,
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let s = &app.users;
    let job = Job::Users {
        q: s.search.query.text().to_owned(),
        role: s.role,
        complete: s.complete,
        page: s.list.page,
    };
    let task = app.task(View::Users, "Loading users…", job);
    app.users.list.loading(task)
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.users;
    match action {
        Action::Up | Action::Down => s.list.move_selection(action),
        Action::NextPage | Action::PrevPage if s.list.turn_page(action) => return load(app),
        Action::Search => s.search.active = true,
        Action::CycleFilter => {
            s.role = next_filter(s.role, &Role::ALL);
            s.list.first_page();
            return load(app);
        }
        Action::CycleFilter2 => {
            s.complete = next_filter(s.complete, &[true, false]);
            s.list.first_page();
            return load(app);
        }
        Action::SetRole => {
            if let Some(user) = s.list.selected() {
                app.overlay = Some(Overlay::choice(
                    format!("Role of {}", user.email),
                    &Role::ALL,
                    &user.role,
                    ChoicePurpose::Role {
                        id: user.typed_id(),
                        email: user.email.clone(),
                    },
                ));
            }
        }
        Action::EditEmail => {
            if let Some(user) = s.list.selected() {
                app.overlay = Some(Overlay::Prompt {
                    title: format!("New e-mail address of {}", user.email),
                    input: LineInput::new(&user.email),
                    purpose: PromptPurpose::Email {
                        id: user.typed_id(),
                    },
                    awaiting: None,
                });
            }
        }
        Action::Export => {
            let query = UserQuery {
                text: validate::search_text(Some(s.search.query.text())),
                is_registration_complete: s.complete,
                role: s.role,
            };
            let job = Job::Export(ExportList::Users(query));
            return vec![app.task(View::Users, "Exporting users…", job)];
        }
        Action::Delete => {
            if let Some(user) = s.list.selected() {
                app.overlay = Some(Overlay::Confirm {
                    question: format!(
                        "Delete {} ({}) with their results and assignments?",
                        user.email, user.role
                    ),
                    job: Job::DeleteUser {
                        id: user.typed_id(),
                        email: user.email.clone(),
                    },
                    view: View::Users,
                });
            }
        }
        _ => {}
    }
    Vec::new()
}

pub(crate) fn role_chosen(
    app: &mut App,
    id: Id<User>,
    email: String,
    selected: usize,
) -> Vec<Task> {
    let Some(role) = Role::ALL.get(selected).copied() else {
        return Vec::new();
    };
    let unchanged = app
        .users
        .list
        .items
        .iter()
        .any(|u| u.id == id.as_str() && u.role == role);
    if unchanged {
        return Vec::new();
    }
    vec![app.task(View::Users, "Saving…", Job::SetRole { id, email, role })]
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.users;
    let [bar, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    render_filter_bar(s, frame, bar);

    TABLE.render_with_detail(frame, body, &s.list, 62, " Details ", user_detail);
}

const TABLE: ListTable<User> = ListTable {
    name: "Users",
    noun: ("user", "users"),
    columns: &[
        Column::new("E-MAIL", Fill(3), |u| u.email.as_str().into()),
        Column::new("NAME", Fill(2), |u| ui::or_dash(&u.name).into()),
        Column::new("ROLE", Length(10), |u| u.role.as_str().into()),
        Column::new("DONE", Length(4), |u| {
            ui::yes_no(u.is_registration_complete).into()
        }),
    ],
    empty: "No users match.",
};

fn render_filter_bar(s: &UsersState, frame: &mut Frame, area: Rect) {
    let mut spans = ui::search_spans(&s.search, frame, area);
    spans.extend(ui::filter_spans("Role", s.role.map_or("all", Role::as_str)));
    let registration = match s.complete {
        None => "all",
        Some(true) => "complete",
        Some(false) => "incomplete",
    };
    spans.extend(ui::filter_spans("Registration", registration));
    frame.render_widget(Line::from(spans), area);
}

fn user_detail(u: &User) -> Vec<Line<'static>> {
    let opt = ui::or_dash;
    let phone = match (&u.country_code, &u.phone_number) {
        (Some(c), Some(p)) => format!("{c} {p}"),
        (None, Some(p)) => p.clone(),
        _ => "—".into(),
    };
    vec![
        ui::field("E-mail", u.email.clone()),
        ui::field("Name", opt(&u.name)),
        ui::field("Role", u.role.to_string()),
        ui::field(
            "Registered",
            if u.is_registration_complete {
                "complete"
            } else {
                "incomplete"
            },
        ),
        ui::field("Age", u.age.map_or("—".into(), |a| a.to_string())),
        ui::field("Gender", opt(&u.gender)),
        ui::field("City", opt(&u.city)),
        ui::field("Country", opt(&u.country)),
        ui::field("Phone", phone),
        ui::field("Locale", u.locale.clone()),
        ui::field("Created", ui::date_time(u.created_at)),
        ui::field("Updated", ui::date_time(u.updated_at)),
    ]
}
