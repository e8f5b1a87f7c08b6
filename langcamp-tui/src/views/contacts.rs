//! Contacts: the school's inbox. Filter by status, read a request, reply in the editor
//! (core stores the reply and queues the mail in one transaction, as over HTTP), change
//! the status, delete.

use langcamp_core::contacts::{Contact, ContactSearch, ContactStatus, ReplyText};
use langcamp_core::domain::Id;
use langcamp_core::domain::validate;
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::app::{App, ChoicePurpose, EditorPurpose, Listing, Overlay, Search};
use crate::input::TextArea;
use crate::keymap::Action;
use crate::listing::next_filter;
use crate::table::{Column, ListTable};
use crate::task::{ExportList, Job, Task};
use crate::ui;
use crate::view::View;

#[derive(Clone, Debug, Default)]
pub struct ContactsState {
    /// Name or e-mail.
    pub search: Search,
    pub status: Option<ContactStatus>,
    pub list: Listing<Contact>,
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let s = &app.contacts;
    let job = Job::Contacts {
        q: s.search.query.text().to_owned(),
        status: s.status,
        page: s.list.page,
    };
    let task = app.task(View::Contacts, "Loading contact requests…", job);
    app.contacts.list.loading(task)
}

fn full_name(c: &Contact) -> String {
    format!("{} {}", c.first_name, c.last_name)
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.contacts;
    match action {
        Action::Up | Action::Down => s.list.move_selection(action),
        Action::NextPage | Action::PrevPage if s.list.turn_page(action) => return load(app),
        Action::Search => s.search.active = true,
        Action::CycleFilter => {
            s.status = next_filter(s.status, &ContactStatus::ALL);
            s.list.first_page();
            return load(app);
        }
        Action::Export => {
            let search = ContactSearch {
                status: s.status,
                text: validate::search_text(Some(s.search.query.text())),
            };
            let job = Job::Export(ExportList::Contacts(search));
            return vec![app.task(View::Contacts, "Exporting contact requests…", job)];
        }
        Action::Open => {
            if let Some(c) = s.list.selected() {
                let mut context = vec![
                    format!("To: {} <{}>", full_name(c), c.email),
                    "They wrote:".to_owned(),
                ];
                context.extend(c.message.lines().take(6).map(|l| format!("> {l}")));
                app.overlay = Some(Overlay::Editor {
                    title: format!("Reply to {}", full_name(c)),
                    context,
                    editor: TextArea::default(),
                    purpose: EditorPurpose::Reply {
                        id: c.typed_id(),
                        email: c.email.clone(),
                    },
                    awaiting: None,
                });
            }
        }
        Action::SetStatus => {
            if let Some(c) = s.list.selected() {
                app.overlay = Some(Overlay::choice(
                    format!("Status of the request from {}", full_name(c)),
                    &ContactStatus::ALL,
                    &c.status,
                    ChoicePurpose::ContactStatus {
                        id: c.typed_id(),
                        current: c.status,
                    },
                ));
            }
        }
        Action::Delete => {
            if let Some(c) = s.list.selected() {
                app.overlay = Some(Overlay::Confirm {
                    question: format!("Delete the request from {} <{}>?", full_name(c), c.email),
                    job: Job::DeleteContact {
                        id: c.typed_id(),
                        who: full_name(c),
                    },
                    view: View::Contacts,
                });
            }
        }
        _ => {}
    }
    Vec::new()
}

pub(crate) fn status_chosen(
    app: &mut App,
    id: Id<Contact>,
    current: ContactStatus,
    selected: usize,
) -> Vec<Task> {
    match ContactStatus::ALL.get(selected).copied() {
        Some(status) if status != current => vec![app.task(
            View::Contacts,
            "Saving…",
            Job::SetContactStatus { id, status },
        )],
        _ => Vec::new(),
    }
}

/// The reply is sent when it is one (some text, within its length).
pub(crate) fn reply(
    app: &mut App,
    id: &Id<Contact>,
    email: &str,
    editor: &TextArea,
) -> Option<Task> {
    if editor.is_blank() {
        app.error("write a reply first");
        return None;
    }
    let reply = match ReplyText::parse("replyMessage", &editor.text()) {
        Ok(reply) => reply,
        Err(problem) => {
            app.error(problem);
            return None;
        }
    };
    let job = Job::ReplyContact {
        id: id.clone(),
        email: email.to_owned(),
        reply,
    };
    Some(app.task(View::Contacts, "Sending the reply…", job))
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.contacts;
    let [bar, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let mut spans = ui::search_spans(&s.search, frame, bar);
    spans.extend(ui::filter_spans(
        "Status",
        s.status.map_or("all", ContactStatus::as_str),
    ));
    frame.render_widget(Line::from(spans), bar);

    TABLE.render_with_detail(frame, body, &s.list, 55, " Request ", detail);
}

const TABLE: ListTable<Contact> = ListTable {
    name: "Contacts",
    noun: ("request", "requests"),
    columns: &[
        Column::new("FROM", Fill(1), |c| full_name(c).into()),
        Column::new("STATUS", Length(11), |c| c.status.as_str().into()),
        Column::new("RECEIVED", Length(10), |c| ui::date(c.created_at).into()),
    ],
    empty: "No contact requests match.",
};

fn detail(c: &Contact) -> Vec<Line<'static>> {
    let mut lines = vec![
        ui::field("From", full_name(c)),
        ui::field("E-mail", c.email.clone()),
        ui::field("Phone", ui::or_dash(&c.phone)),
        ui::field("Source", ui::or_dash(&c.source)),
        ui::field("Status", c.status.as_str()),
        ui::field("Received", ui::date_time(c.created_at)),
        ui::field(
            "Replied",
            c.replied_at.map_or_else(|| "—".to_owned(), ui::date_time),
        ),
        Line::default(),
    ];
    lines.extend(c.message.lines().map(|l| Line::from(l.to_owned())));
    if let Some(reply) = &c.reply_message {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Reply:", ui::dim())));
        lines.extend(reply.lines().map(|l| Line::from(format!("│ {l}"))));
    }
    lines
}
