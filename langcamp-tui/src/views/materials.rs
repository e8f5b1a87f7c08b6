//! Materials: the list with each material's PDFs and videos; assign one to users picked
//! by search (each newly assigned user gets a mail, queued by core), unassign it from a
//! user.

use langcamp_core::Page;
use langcamp_core::domain::Id;
use langcamp_core::materials::Material;
use langcamp_core::users::User;
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Clear, Row};

use crate::app::{App, Listing, Overlay, edit_line};
use crate::input::LineInput;
use crate::keymap::Action;
use crate::table::{Column, ListTable, TablePane, optional};
use crate::task::{Job, Task};
use crate::ui;
use crate::view::View;

#[derive(Clone, Debug, Default)]
pub struct MaterialsState {
    pub list: Listing<Material>,
}

/// Picking users for a material: a search box, the matching users, the ones marked.
#[derive(Clone, Debug)]
pub struct Picker {
    pub material_id: String,
    pub material_title: String,
    /// Assign (several users may be marked) or unassign (one user).
    pub assign: bool,
    pub search: LineInput,
    pub users: Listing<User>,
    /// Marked users: (id, e-mail), in the order they were marked.
    pub marked: Vec<(String, String)>,
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let job = Job::Materials {
        page: app.materials.list.page,
    };
    let task = app.task(View::Materials, "Loading materials…", job);
    app.materials.list.loading(task)
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.materials;
    match action {
        Action::Up | Action::Down => s.list.move_selection(action),
        Action::NextPage | Action::PrevPage if s.list.turn_page(action) => return load(app),
        Action::Assign | Action::Unassign => {
            if let Some(m) = s.list.selected() {
                let picker = Picker {
                    material_id: m.id.clone(),
                    material_title: m.title.clone(),
                    assign: action == Action::Assign,
                    search: LineInput::default(),
                    users: Listing::default(),
                    marked: Vec::new(),
                };
                app.overlay = Some(Overlay::Picker {
                    picker,
                    awaiting: None,
                });
                return search_users(app);
            }
        }
        _ => {}
    }
    Vec::new()
}

/// Loads the users matching the picker's search.
fn search_users(app: &mut App) -> Vec<Task> {
    let Some(Overlay::Picker { picker, .. }) = &app.overlay else {
        return Vec::new();
    };
    let job = Job::Users {
        q: picker.search.text().to_owned(),
        role: None,
        complete: None,
        page: 1,
    };
    let task = app.task(View::Materials, "Searching users…", job);
    if let Some(Overlay::Picker { picker, .. }) = &mut app.overlay {
        picker.users.load_id = Some(task.id);
    }
    vec![task]
}

/// Takes users found for the picker; false when the answer is not the picker's.
pub(crate) fn users_found(app: &mut App, id: u64, page: &mut Option<Page<User>>) -> bool {
    if let Some(Overlay::Picker { picker, .. }) = &mut app.overlay
        && picker.users.load_id == Some(id)
        && let Some(page) = page.take()
    {
        picker.users.fill_page(page);
        return true;
    }
    false
}

/// Keys while the picker is open; it stays open until Esc or a successful save.
pub(crate) fn picker_action(
    app: &mut App,
    mut picker: Picker,
    awaiting: Option<u64>,
    action: Action,
) -> Vec<Task> {
    let mut tasks = Vec::new();
    let mut awaiting = awaiting;
    match action {
        Action::Back => return tasks,
        Action::Up | Action::Down => picker.users.move_selection(action),
        Action::Toggle if picker.assign => {
            if let Some(u) = picker.users.selected() {
                match picker.marked.iter().position(|(id, _)| *id == u.id) {
                    Some(i) => {
                        picker.marked.remove(i);
                    }
                    None => picker.marked.push((u.id.clone(), u.email.clone())),
                }
            }
        }
        Action::Submit if awaiting.is_none() => {
            let mut users = picker.marked.clone();
            if users.is_empty()
                && let Some(u) = picker.users.selected()
            {
                users.push((u.id.clone(), u.email.clone()));
            }
            if users.is_empty() {
                app.error("no user to pick: change the search");
            } else {
                let job = if picker.assign {
                    Job::AssignMaterial {
                        id: Id::from(&picker.material_id),
                        title: picker.material_title.clone(),
                        user_ids: users.into_iter().map(|(id, _)| Id::from(id)).collect(),
                    }
                } else {
                    let (user_id, email) = users.remove(0);
                    Job::UnassignMaterial {
                        id: Id::from(&picker.material_id),
                        title: picker.material_title.clone(),
                        user_id: Id::from(user_id),
                        email,
                    }
                };
                let task = app.task(View::Materials, "Saving…", job);
                awaiting = Some(task.id);
                tasks.push(task);
            }
        }
        other => {
            let before = picker.search.text().to_owned();
            edit_line(&mut picker.search, other);
            if picker.search.text() != before {
                picker.users.first_page();
                app.overlay = Some(Overlay::Picker { picker, awaiting });
                return search_users(app);
            }
        }
    }
    app.overlay = Some(Overlay::Picker { picker, awaiting });
    tasks
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.materials;
    TABLE.render_with_detail(frame, area, &s.list, 58, " Material ", detail);
}

const TABLE: ListTable<Material> = ListTable {
    name: "Materials",
    noun: ("material", "materials"),
    columns: &[
        Column::new("TITLE", Fill(1), |m| m.title.as_str().into()),
        Column::new("LANG", Length(5), |m| optional(&m.target_language)),
        Column::new("LEVEL", Length(5), |m| optional(&m.level)),
        Column::new("PDFS", Length(4), |m| m.pdfs.len().to_string().into()),
        Column::new("VIDEOS", Length(6), |m| m.videos.len().to_string().into()),
    ],
    empty: "No materials yet.",
};

fn detail(m: &Material) -> Vec<Line<'static>> {
    let opt = ui::or_dash;
    let mut lines = vec![
        ui::field("Title", m.title.clone()),
        ui::field("Language", opt(&m.target_language)),
        ui::field("Level", opt(&m.level)),
        ui::field("Locale", opt(&m.locale)),
        ui::field("Updated", ui::date_time(m.updated_at)),
    ];
    if let Some(d) = &m.description {
        lines.push(Line::default());
        lines.extend(d.lines().map(|l| Line::from(l.to_owned())));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        format!("PDFs ({})", m.pdfs.len()),
        ui::dim(),
    )));
    for pdf in &m.pdfs {
        let kb = pdf.size.div_ceil(1024);
        lines.push(Line::from(format!(
            "  {} ({kb} KB)",
            pdf.title.clone().unwrap_or_else(|| "untitled".into())
        )));
    }
    lines.push(Line::from(Span::styled(
        format!("Videos ({})", m.videos.len()),
        ui::dim(),
    )));
    for video in &m.videos {
        match &video.title {
            Some(title) => {
                lines.push(Line::from(format!("  {title}")));
                lines.push(Line::from(Span::styled(
                    format!("    {}", video.url),
                    ui::dim(),
                )));
            }
            None => lines.push(Line::from(format!("  {}", video.url))),
        }
    }
    lines
}

/// The picker dialog over `area`.
pub fn render_picker(picker: &Picker, awaiting: bool, frame: &mut Frame, area: Rect) {
    let popup = ui::centered(area, 72, area.height.saturating_sub(2));
    frame.render_widget(Clear, popup);
    let verb = if picker.assign { "Assign" } else { "Unassign" };
    let mut title = format!(" {verb} \"{}\" ", picker.material_title);
    if awaiting {
        title.push_str("(saving…) ");
    }
    let block = ui::popup_block(&title);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    let [search, hint, list] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let mut spans = vec![
        Span::styled("Find user: ", ui::dim()),
        Span::styled(picker.search.text().to_owned(), ui::input_style()),
    ];
    let cursor = u16::try_from(picker.search.cursor()).unwrap_or(u16::MAX);
    let x = search.x.saturating_add(11).saturating_add(cursor);
    if x < search.right() {
        frame.set_cursor_position((x, search.y));
    }
    if !picker.marked.is_empty() {
        spans.push(Span::styled(
            format!("   {} marked", picker.marked.len()),
            ui::dim(),
        ));
    }
    frame.render_widget(Line::from(spans), search);
    let help = if picker.assign {
        "Space marks · Enter assigns the marked users (or the highlighted one)"
    } else {
        "Enter unassigns the material from the highlighted user"
    };
    frame.render_widget(Span::styled(help, ui::dim()), hint);
    let title = match &picker.users.pagination {
        Some(p) => format!(
            " Matching users · {} of {} ",
            picker.users.items.len(),
            p.total_items
        ),
        None => " Matching users ".to_owned(),
    };
    let pane = TablePane {
        title: &title,
        columns: &[
            ("", Constraint::Length(if picker.assign { 3 } else { 0 })),
            ("E-MAIL", Constraint::Fill(3)),
            ("NAME", Constraint::Fill(2)),
        ],
        empty: "No users match.",
    };
    let row = |u: &User| {
        let mark = if picker.marked.iter().any(|(id, _)| *id == u.id) {
            "[x]"
        } else {
            "[ ]"
        };
        let first = if picker.assign { mark } else { "" };
        Row::new([
            Cell::from(first),
            Cell::from(u.email.clone()),
            Cell::from(u.name.clone().unwrap_or_default()),
        ])
    };
    pane.render(frame, list, &picker.users, row, true);
}
