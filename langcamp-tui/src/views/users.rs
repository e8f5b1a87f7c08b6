//! Users: a searchable, filterable, paginated table with a detail pane; change a role,
//! edit an e-mail address, delete (after confirmation). The detail pane shows the selected
//! user's second factors (CONTRACT §20), loaded as the selection moves, and `F` resets
//! them (after confirmation) for a colleague who lost theirs.

use langcamp_core::auth::{FactorKind, FactorList};
use langcamp_core::domain::Id;
use langcamp_core::domain::validate;
use langcamp_core::users::{User, UserQuery};
use langcamp_core::{Page, Role};
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::app::{App, ChoicePurpose, Listing, Overlay, PromptPurpose, Search};
use crate::input::LineInput;
use crate::keymap::Action;
use crate::listing::next_filter;
use crate::table::{Column, ListTable};
use crate::task::{ExportList, Job, Task, UserFactors};
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
    /// The second factors of the selected user, once loaded.
    pub factors: Option<UserFactors>,
    /// The load of the selected user's factors under way; answers of older ones are dropped.
    pub factors_id: Option<u64>,
}

impl UsersState {
    /// The second factors of `user`, once loaded.
    pub fn factors_of(&self, user: &User) -> Option<&FactorList> {
        self.factors
            .as_ref()
            .filter(|f| f.user_id.as_str() == user.id)
            .map(|f| &f.list)
    }
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

/// A page of users came: the selected one's factors are loaded next. When the page is
/// past the end (a delete emptied it), the one before is loaded instead.
pub(crate) fn loaded(app: &mut App, id: u64, page: Page<User>) -> Vec<Task> {
    if app.users.list.load_id != Some(id) {
        return Vec::new();
    }
    if app.users.list.fill_page(page) {
        return load(app);
    }
    load_factors(app)
}

/// Loads the selected user's second factors for the detail pane, which says "loading…"
/// until they come (after a reset too, never the factors it removed).
fn load_factors(app: &mut App) -> Vec<Task> {
    app.users.factors = None;
    let Some(user) = app.users.list.selected() else {
        app.users.factors_id = None;
        return Vec::new();
    };
    let job = Job::UserFactors {
        id: user.typed_id(),
    };
    let task = app.task(View::Users, "Loading second factors…", job);
    app.users.factors_id = Some(task.id);
    vec![task]
}

pub(crate) fn factors_loaded(app: &mut App, id: u64, factors: UserFactors) -> Vec<Task> {
    if app.users.factors_id == Some(id) {
        app.users.factors_id = None;
        app.users.factors = Some(factors);
    }
    Vec::new()
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.users;
    match action {
        Action::Up | Action::Down => {
            let before = s.list.selected;
            s.list.move_selection(action);
            if s.list.selected != before {
                return load_factors(app);
            }
        }
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
        Action::ResetFactors => {
            if let Some(user) = s.list.selected() {
                let none = s
                    .factors_of(user)
                    .is_some_and(|f| f.factors.is_empty() && f.recovery_codes_left == 0);
                if none {
                    let text = format!("{} has no second factor: nothing to reset", user.email);
                    app.error(text);
                } else {
                    app.overlay = Some(Overlay::Confirm {
                        question: format!(
                            "Reset every second factor of {} ({})? Their authenticator app, \
                             passkeys and recovery codes stop working, their sign-ins end \
                             and they are told by mail.",
                            user.email, user.role
                        ),
                        job: Job::ResetFactors {
                            id: user.typed_id(),
                            email: user.email.clone(),
                        },
                        view: View::Users,
                    });
                }
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

    TABLE.render_with_detail(frame, body, &s.list, 62, " Details ", |u| {
        let mut lines = user_detail(u);
        lines.push(Line::default());
        lines.extend(factor_lines(s, u));
        lines
    });
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

/// The second factors of `u`: their passkeys by name, the recovery codes left, and each
/// factor with the day it was added and last used (two lines each, so that a TOTP factor
/// and a few passkeys fit below the profile).
fn factor_lines(s: &UsersState, u: &User) -> Vec<Line<'static>> {
    let Some(list) = s.factors_of(u) else {
        let state = if s.factors_id.is_some() {
            "loading…"
        } else {
            "—"
        };
        return vec![ui::field("Factors", state)];
    };
    if list.factors.is_empty() && list.recovery_codes_left == 0 {
        return vec![ui::field("Factors", "none")];
    }
    let passkeys: Vec<&str> = list
        .factors
        .iter()
        .filter(|f| f.kind == FactorKind::Passkey)
        .map(|f| f.name.as_str())
        .collect();
    let passkeys = match passkeys.len() {
        0 => "none".to_owned(),
        n => format!("{n} ({})", passkeys.join(", ")),
    };
    let codes = match list.recovery_codes_left {
        0 => "none left".to_owned(),
        1 => "1 code left".to_owned(),
        n => format!("{n} codes left"),
    };
    let mut lines = vec![
        ui::field("Passkeys", passkeys),
        ui::field("Recovery", codes),
    ];
    for f in &list.factors {
        let kind = match f.kind {
            FactorKind::Totp => "TOTP",
            FactorKind::Passkey => "Passkey",
        };
        let used = f.last_used_at.map_or_else(|| "never".to_owned(), ui::date);
        lines.push(ui::field(kind, f.name.clone()));
        lines.push(Line::from(vec![
            Span::styled("  added ", ui::dim()),
            Span::raw(ui::date(f.created_at)),
            Span::styled(" · used ", ui::dim()),
            Span::raw(used),
        ]));
    }
    lines
}
