//! What keys do while a dialog is open: the help, a confirmation, a choice, a prompt, the
//! editor, the user picker and a text the user's editor gave back unsaved. A dialog that
//! is submitted hands its input to the view it belongs to; a prompt or editor whose save is
//! under way knows its task (`awaiting`), so it closes only when the save succeeds.

use langcamp_core::domain::Email;

use super::App;
use crate::input::{LineInput, TextArea};
use crate::keymap::Action;
use crate::overlay::{ChoicePurpose, EditorPurpose, Overlay, PromptPurpose};
use crate::task::{Job, Task};
use crate::view::View;
use crate::views;

impl App {
    /// Applies `action` to the open dialog `overlay` (taken out of the state): it closes,
    /// hands its input on, or stays open with the change.
    pub(super) fn overlay_action(&mut self, overlay: Overlay, action: Action) -> Vec<Task> {
        // Actions that close the dialog.
        let mut overlay = match overlay {
            Overlay::Help if action == Action::ToggleHelp => return Vec::new(),
            Overlay::Confirm { .. } if action == Action::No => return Vec::new(),
            Overlay::Confirm { job, view, .. } if action == Action::Yes => {
                let label = busy_label(&job);
                return vec![self.task(view, label, job)];
            }
            Overlay::Choice { .. } | Overlay::Prompt { .. } | Overlay::Editor { .. }
                if action == Action::Back =>
            {
                return Vec::new();
            }
            Overlay::NotSaved { draft, .. } if action == Action::Open => {
                self.edit_outside(draft);
                return Vec::new();
            }
            Overlay::NotSaved { what, .. } if action == Action::Back => {
                self.info(format!("discarded the changes to {what}"));
                return Vec::new();
            }
            Overlay::Choice {
                purpose, selected, ..
            } if action == Action::Submit => return self.chosen(purpose, selected),
            Overlay::Prompt {
                purpose: PromptPurpose::ResultsOf,
                input,
                ..
            } if action == Action::Submit => {
                return views::placement::results_of_user(self, input.text());
            }
            Overlay::Prompt {
                purpose: PromptPurpose::NewMailTemplate,
                title,
                input,
                ..
            } if action == Action::Submit => {
                return views::mail::new_named(self, title, input);
            }
            Overlay::Prompt {
                purpose: PromptPurpose::AuditFilter(field),
                title,
                input,
                ..
            } if action == Action::Submit => {
                return views::audit::filter_submitted(self, field, title, input);
            }
            Overlay::Picker { picker, awaiting } => {
                return views::materials::picker_action(self, picker, awaiting, action);
            }
            open => open,
        };
        // Actions within the dialog; a submitted prompt or editor stays open until its
        // save succeeds.
        let mut tasks = Vec::new();
        match &mut overlay {
            Overlay::Choice {
                options, selected, ..
            } => match action {
                Action::Up => *selected = selected.saturating_sub(1),
                Action::Down => *selected = (*selected + 1).min(options.len().saturating_sub(1)),
                _ => {}
            },
            Overlay::Prompt {
                input,
                purpose,
                awaiting,
                ..
            } => match action {
                Action::Submit if awaiting.is_none() => {
                    if let Some(task) = self.prompted(purpose, input.text()) {
                        *awaiting = Some(task.id);
                        tasks.push(task);
                    }
                }
                other => edit_line(input, other),
            },
            Overlay::Editor {
                editor,
                purpose,
                awaiting,
                ..
            } => match action {
                Action::Submit if awaiting.is_none() => {
                    if let Some(task) = self.edited(purpose, editor) {
                        *awaiting = Some(task.id);
                        tasks.push(task);
                    }
                }
                other => edit_text(editor, other),
            },
            Overlay::Help
            | Overlay::Confirm { .. }
            | Overlay::Picker { .. }
            | Overlay::NotSaved { .. } => {}
        }
        self.overlay = Some(overlay);
        tasks
    }

    /// An option was picked.
    fn chosen(&mut self, purpose: ChoicePurpose, selected: usize) -> Vec<Task> {
        match purpose {
            ChoicePurpose::Role { id, email } => {
                views::users::role_chosen(self, id, email, selected)
            }
            ChoicePurpose::ContactStatus { id, current } => {
                views::contacts::status_chosen(self, id, current, selected)
            }
        }
    }

    /// A prompt was submitted: the task saving it, if the input can be sent.
    fn prompted(&mut self, purpose: &PromptPurpose, text: &str) -> Option<Task> {
        match purpose {
            PromptPurpose::Email { id } => match Email::parse("email", text) {
                Ok(email) => {
                    let job = Job::SetEmail {
                        id: id.clone(),
                        email,
                    };
                    Some(self.task(View::Users, "Saving…", job))
                }
                Err(problem) => {
                    self.error(problem);
                    None
                }
            },
            PromptPurpose::ResultsOf
            | PromptPurpose::NewMailTemplate
            | PromptPurpose::AuditFilter(_) => None,
        }
    }

    /// The editor was submitted: the task saving it, if the text can be sent.
    fn edited(&mut self, purpose: &EditorPurpose, editor: &TextArea) -> Option<Task> {
        match purpose {
            EditorPurpose::Reply { id, email } => views::contacts::reply(self, id, email, editor),
            EditorPurpose::Setting { key } => views::settings::save(self, key, editor),
        }
    }

    /// The save the open prompt, editor or picker waits for.
    pub(super) fn awaiting(&self) -> Option<u64> {
        match &self.overlay {
            Some(
                Overlay::Prompt { awaiting, .. }
                | Overlay::Editor { awaiting, .. }
                | Overlay::Picker { awaiting, .. },
            ) => *awaiting,
            _ => None,
        }
    }

    /// The save failed: the dialog takes input again.
    pub(super) fn clear_awaiting(&mut self) {
        if let Some(
            Overlay::Prompt { awaiting, .. }
            | Overlay::Editor { awaiting, .. }
            | Overlay::Picker { awaiting, .. },
        ) = &mut self.overlay
        {
            *awaiting = None;
        }
    }
}

/// The status line's text while `job` runs.
fn busy_label(job: &Job) -> &'static str {
    match job {
        Job::DeleteUser { .. }
        | Job::DeleteContact { .. }
        | Job::DeleteCourse { .. }
        | Job::DeleteResult { .. } => "Deleting…",
        Job::ResetMailTemplate { .. } | Job::ResetFactors { .. } => "Resetting…",
        _ => "Saving…",
    }
}

/// Applies an editing action to a one-line field.
pub(crate) fn edit_line(input: &mut LineInput, action: Action) {
    match action {
        Action::Type(c) => input.insert(c),
        Action::Backspace => input.backspace(),
        Action::DeleteChar => input.delete(),
        Action::Left => input.left(),
        Action::Right => input.right(),
        Action::Home => input.home(),
        Action::End => input.end(),
        _ => {}
    }
}

/// Applies an editing action to the editor.
fn edit_text(editor: &mut TextArea, action: Action) {
    match action {
        Action::Type(c) => editor.insert(c),
        Action::Newline => editor.newline(),
        Action::Backspace => editor.backspace(),
        Action::DeleteChar => editor.delete(),
        Action::Left => editor.left(),
        Action::Right => editor.right(),
        Action::Up => editor.up(),
        Action::Down => editor.down(),
        Action::Home => editor.home(),
        Action::End => editor.end(),
        _ => {}
    }
}
