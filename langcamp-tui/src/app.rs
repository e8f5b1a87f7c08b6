//! The console's state and `update`: all changes happen here, in response to an
//! [`Action`] (a key) or a [`Done`] (a finished core call). Neither ever awaits: core
//! calls leave as [`Task`]s for the runtime to run. What keys do in an open dialog is in
//! `app/dialog.rs`.

use std::collections::BTreeMap;

use langcamp_core::Page;

pub(crate) use self::dialog::edit_line;
use crate::editor::EditRequest;
use crate::input::LineInput;
use crate::keymap::{Action, Focus, KeyContext, Mode};
pub use crate::listing::{Listing, Search};
pub use crate::overlay::{ChoicePurpose, EditorPurpose, Overlay, PromptPurpose};
use crate::task::{Data, Done, Job, Task};
use crate::view::View;
use crate::views;

/// The whole state of the console.
#[derive(Debug)]
pub struct App {
    pub view: View,
    /// False once the user asked to quit.
    pub running: bool,
    /// A dialog over the view, which then has the keyboard.
    pub overlay: Option<Overlay>,
    /// The last result or error, shown in the status line until the next key.
    pub message: Option<Message>,
    /// Core calls under way, by task id.
    pub busy: BTreeMap<u64, Busy>,
    next_id: u64,
    pub dashboard: views::dashboard::DashboardState,
    pub users: views::users::UsersState,
    pub contacts: views::contacts::ContactsState,
    pub placement: views::placement::PlacementState,
    pub materials: views::materials::MaterialsState,
    pub courses: views::courses::CoursesState,
    pub settings: views::settings::SettingsState,
    pub mail: views::mail::MailState,
    pub audit: views::audit::AuditState,
    pub webhooks: views::webhooks::WebhooksState,
    /// A text for the user's editor, for the runtime to take ([`App::take_edit`]).
    edit: Option<EditRequest>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub is_error: bool,
}

/// A core call under way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Busy {
    /// The view it belongs to (reloaded after a successful write).
    pub view: View,
    /// What the status line says meanwhile, e.g. `Loading users…`.
    pub label: String,
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

impl App {
    pub fn new() -> App {
        App {
            view: View::ALL[0],
            running: true,
            overlay: None,
            message: None,
            busy: BTreeMap::new(),
            next_id: 0,
            dashboard: views::dashboard::DashboardState::default(),
            users: views::users::UsersState::default(),
            contacts: views::contacts::ContactsState::default(),
            placement: views::placement::PlacementState::default(),
            materials: views::materials::MaterialsState::default(),
            courses: views::courses::CoursesState::default(),
            settings: views::settings::SettingsState::default(),
            mail: views::mail::MailState::default(),
            audit: views::audit::AuditState::default(),
            webhooks: views::webhooks::WebhooksState::default(),
            edit: None,
        }
    }

    /// The first loads, when the console opens.
    pub fn start(&mut self) -> Vec<Task> {
        self.load(self.view)
    }

    /// Which kind of input has the keyboard now.
    pub fn mode(&self) -> Mode {
        match &self.overlay {
            Some(Overlay::Help) => Mode::Help,
            Some(Overlay::Confirm { .. }) => Mode::Confirm,
            Some(Overlay::Choice { .. }) => Mode::Choice,
            Some(Overlay::Prompt { .. }) => Mode::Line,
            Some(Overlay::Editor { .. }) => Mode::Editor,
            Some(Overlay::Picker { .. }) => Mode::Picker,
            Some(Overlay::NotSaved { .. }) => Mode::NotSaved,
            None if self.search_field().is_some() => Mode::Line,
            None => Mode::Normal,
        }
    }

    pub fn key_context(&self) -> KeyContext {
        KeyContext {
            mode: self.mode(),
            view: self.view,
            focus: match self.view {
                View::Placement => self.placement.focus(),
                View::Webhooks => self.webhooks.focus(),
                _ => Focus::Main,
            },
        }
    }

    /// The current view's search box, if it has one.
    fn search(&self) -> Option<&Search> {
        Some(match Searchable::of(self.view)? {
            Searchable::Users => &self.users.search,
            Searchable::Contacts => &self.contacts.search,
        })
    }

    fn search_mut(&mut self) -> Option<&mut Search> {
        Some(match Searchable::of(self.view)? {
            Searchable::Users => &mut self.users.search,
            Searchable::Contacts => &mut self.contacts.search,
        })
    }

    /// The current view's search field when it is being typed in.
    pub fn search_field(&self) -> Option<&LineInput> {
        self.search().filter(|s| s.active).map(|s| &s.query)
    }

    /// Typing in a search box reloads page 1 with each change; Esc clears the search.
    fn search_action(&mut self, action: Action) -> Vec<Task> {
        let Some(search) = self.search_mut() else {
            return Vec::new();
        };
        let changed = match action {
            Action::Submit => {
                search.active = false;
                false
            }
            Action::Back => {
                search.active = false;
                let had_text = !search.query.text().is_empty();
                search.query.clear();
                had_text
            }
            other => {
                let before = search.query.text().to_owned();
                edit_line(&mut search.query, other);
                search.query.text() != before
            }
        };
        if !changed {
            return Vec::new();
        }
        match Searchable::of(self.view) {
            Some(Searchable::Users) => self.users.list.first_page(),
            Some(Searchable::Contacts) => self.contacts.list.first_page(),
            None => {}
        }
        self.load(self.view)
    }

    /// The status line's activity for the current view, e.g. `Loading users…`.
    pub fn activity(&self) -> Option<&str> {
        self.busy
            .values()
            .rev()
            .find(|b| b.view == self.view)
            .map(|b| b.label.as_str())
    }

    /// Registers a core call and returns it for the runtime to run.
    pub(crate) fn task(&mut self, view: View, label: impl Into<String>, job: Job) -> Task {
        self.next_id += 1;
        let id = self.next_id;
        self.busy.insert(
            id,
            Busy {
                view,
                label: label.into(),
            },
        );
        Task { id, job }
    }

    /// Loads (or reloads) what `view` shows.
    pub fn load(&mut self, view: View) -> Vec<Task> {
        match view {
            View::Dashboard => views::dashboard::load(self),
            View::Users => views::users::load(self),
            View::Contacts => views::contacts::load(self),
            View::Placement => views::placement::load(self),
            View::Materials => views::materials::load(self),
            View::Courses => views::courses::load(self),
            View::Settings => views::settings::load(self),
            View::Mail => views::mail::load(self),
            View::Audit => views::audit::load(self),
            View::Webhooks => views::webhooks::load(self),
        }
    }

    /// Asks for `request` to be edited in the user's editor.
    pub(crate) fn edit_outside(&mut self, request: EditRequest) {
        self.edit = Some(request);
    }

    /// The text to edit in the user's editor, if the console asked for one. The runtime
    /// (or a test) edits it and gives the outcome to [`App::edited_outside`].
    pub fn take_edit(&mut self) -> Option<EditRequest> {
        self.edit.take()
    }

    /// The user's editor finished `request`: with the edited text, or with why there is
    /// none (it could not run, or it failed), when nothing is saved.
    pub fn edited_outside(
        &mut self,
        request: EditRequest,
        outcome: Result<String, String>,
    ) -> Vec<Task> {
        match outcome {
            Ok(text) => match request.purpose {
                crate::editor::EditPurpose::MailTemplate { .. } => {
                    views::mail::edited(self, request, text)
                }
            },
            Err(problem) => {
                self.error(format!("{problem}; nothing saved"));
                Vec::new()
            }
        }
    }

    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            is_error: false,
        });
    }

    pub(crate) fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            text: text.into(),
            is_error: true,
        });
    }

    /// Applies a user action.
    pub fn update(&mut self, action: Action) -> Vec<Task> {
        if action == Action::Quit {
            self.running = false;
            return Vec::new();
        }
        // A message stays until the next key.
        self.message = None;
        match self.overlay.take() {
            Some(overlay) => self.overlay_action(overlay, action),
            None if self.search_field().is_some() => self.search_action(action),
            None => self.normal_action(action),
        }
    }

    fn normal_action(&mut self, action: Action) -> Vec<Task> {
        match action {
            Action::ToggleHelp => {
                self.overlay = Some(Overlay::Help);
                Vec::new()
            }
            Action::SwitchTo(view) => self.switch(view),
            Action::NextView => self.switch(self.view.next()),
            Action::PrevView => self.switch(self.view.prev()),
            Action::Reload => self.load(self.view),
            action => match self.view {
                View::Dashboard => views::dashboard::action(self, action),
                View::Users => views::users::action(self, action),
                View::Contacts => views::contacts::action(self, action),
                View::Placement => views::placement::action(self, action),
                View::Materials => views::materials::action(self, action),
                View::Courses => views::courses::action(self, action),
                View::Settings => views::settings::action(self, action),
                View::Mail => views::mail::action(self, action),
                View::Audit => views::audit::action(self, action),
                View::Webhooks => views::webhooks::action(self, action),
            },
        }
    }

    fn switch(&mut self, view: View) -> Vec<Task> {
        self.view = view;
        self.load(view)
    }

    /// Applies the answer of a core call.
    pub fn finish(&mut self, done: Done) -> Vec<Task> {
        let Some(busy) = self.busy.remove(&done.id) else {
            return Vec::new();
        };
        match done.outcome {
            Ok(Data::Written(text)) => {
                if self.awaiting() == Some(done.id) {
                    self.overlay = None;
                }
                views::mail::saved(self, done.id);
                self.info(text);
                self.load(busy.view)
            }
            Ok(Data::Exported(text)) => {
                self.info(text);
                Vec::new()
            }
            Ok(Data::Dashboard(data)) => views::dashboard::loaded(self, done.id, *data),
            Ok(Data::Users(page)) => {
                let mut page = Some(page);
                if views::materials::users_found(self, done.id, &mut page) {
                    return Vec::new();
                }
                match page {
                    Some(page) => views::users::loaded(self, done.id, page),
                    None => Vec::new(),
                }
            }
            Ok(Data::Factors(factors)) => views::users::factors_loaded(self, done.id, factors),
            Ok(Data::Materials(page)) => {
                self.page_loaded(View::Materials, done.id, page, |a| &mut a.materials.list)
            }
            Ok(Data::Tests(page)) => views::placement::tests_loaded(self, done.id, page),
            Ok(Data::Results(page)) => views::placement::results_loaded(self, done.id, page),
            Ok(Data::Contacts(page)) => {
                self.page_loaded(View::Contacts, done.id, page, |a| &mut a.contacts.list)
            }
            Ok(Data::Courses(list)) => {
                self.courses.list.answer(done.id, list);
                Vec::new()
            }
            Ok(Data::Settings(list)) => {
                self.settings.list.answer(done.id, list);
                Vec::new()
            }
            Ok(Data::MailTemplates(list)) => views::mail::loaded(self, done.id, list),
            Ok(Data::MailPreview(preview)) => views::mail::preview_loaded(self, done.id, preview),
            Ok(Data::Audit(page)) => {
                self.page_loaded(View::Audit, done.id, page, |a| &mut a.audit.list)
            }
            Ok(Data::WebhookStandings(list)) => {
                views::webhooks::endpoints_loaded(self, done.id, list)
            }
            Ok(Data::WebhookDeliveries(page)) => {
                views::webhooks::deliveries_loaded(self, done.id, page)
            }
            Err(text) => {
                if self.awaiting() == Some(done.id) {
                    self.clear_awaiting();
                }
                self.load_failed(busy.view, done.id);
                self.error(text.clone());
                views::mail::failed(self, done.id, text);
                Vec::new()
            }
        }
    }

    /// Takes a page of the list of `view`; when the page is past the end (a delete
    /// emptied it), loads the one before.
    fn page_loaded<T>(
        &mut self,
        view: View,
        id: u64,
        page: Page<T>,
        list: fn(&mut App) -> &mut Listing<T>,
    ) -> Vec<Task> {
        if list(self).answer_page(id, page) {
            self.load(view)
        } else {
            Vec::new()
        }
    }

    /// A load failed: the view keeps what it showed and stops saying "loading".
    fn load_failed(&mut self, view: View, id: u64) {
        let load_id = match view {
            View::Placement if self.placement.results.load_id == Some(id) => {
                self.placement.results.loaded = true;
                &mut self.placement.results.load_id
            }
            View::Placement => &mut self.placement.tests.load_id,
            View::Dashboard => &mut self.dashboard.load_id,
            View::Users if self.users.factors_id == Some(id) => &mut self.users.factors_id,
            View::Users => &mut self.users.list.load_id,
            View::Contacts => &mut self.contacts.list.load_id,
            View::Materials => match &mut self.overlay {
                Some(Overlay::Picker { picker, .. }) if picker.users.load_id == Some(id) => {
                    &mut picker.users.load_id
                }
                _ => &mut self.materials.list.load_id,
            },
            View::Courses => &mut self.courses.list.load_id,
            View::Settings => &mut self.settings.list.load_id,
            View::Mail if self.mail.preview_id == Some(id) => &mut self.mail.preview_id,
            View::Mail => &mut self.mail.list.load_id,
            View::Audit => &mut self.audit.list.load_id,
            View::Webhooks if self.webhooks.deliveries.load_id == Some(id) => {
                self.webhooks.deliveries.loaded = true;
                &mut self.webhooks.deliveries.load_id
            }
            View::Webhooks => &mut self.webhooks.endpoints.load_id,
        };
        if *load_id == Some(id) {
            *load_id = None;
        }
    }
}

mod dialog;

/// The views with a search box: each searches a list of its own, reloaded from page 1.
#[derive(Clone, Copy)]
enum Searchable {
    Users,
    Contacts,
}

impl Searchable {
    fn of(view: View) -> Option<Searchable> {
        match view {
            View::Users => Some(Searchable::Users),
            View::Contacts => Some(Searchable::Contacts),
            View::Dashboard
            | View::Placement
            | View::Materials
            | View::Courses
            | View::Settings
            | View::Mail
            | View::Audit
            | View::Webhooks => None,
        }
    }
}

#[cfg(test)]
mod tests;
