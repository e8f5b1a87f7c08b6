//! The dialogs the console draws over a view, and what each is for.

use std::fmt;

use langcamp_core::contacts::{Contact, ContactStatus};
use langcamp_core::domain::Id;
use langcamp_core::users::User;

use crate::editor::EditRequest;
use crate::input::{LineInput, TextArea};
use crate::task::Job;
use crate::view::View;
use crate::views;

/// Dialogs.
#[derive(Debug)]
pub enum Overlay {
    Help,
    /// Asks before a destructive job; `y` runs it.
    Confirm {
        question: String,
        job: Job,
        view: View,
    },
    /// Pick one option.
    Choice {
        title: String,
        options: Vec<String>,
        selected: usize,
        purpose: ChoicePurpose,
    },
    /// One line of text.
    Prompt {
        title: String,
        input: LineInput,
        purpose: PromptPurpose,
        /// The task that is saving it: the prompt closes when it succeeds, and stays
        /// (with the error in the status line) when it fails.
        awaiting: Option<u64>,
    },
    /// Users picked by search, for a material.
    Picker {
        picker: views::materials::Picker,
        awaiting: Option<u64>,
    },
    /// Several lines of text.
    Editor {
        title: String,
        /// Shown above the editor (e.g. the request being answered).
        context: Vec<String>,
        editor: TextArea,
        purpose: EditorPurpose,
        awaiting: Option<u64>,
    },
    /// A text edited in the user's editor was not saved: why, and the text, to edit
    /// again or drop.
    NotSaved {
        /// What was edited, e.g. `the otp template in nl`.
        what: String,
        problems: Vec<String>,
        draft: EditRequest,
    },
}

impl Overlay {
    /// A choice among `values`, `current` selected.
    pub fn choice<T: PartialEq + fmt::Display>(
        title: String,
        values: &[T],
        current: &T,
        purpose: ChoicePurpose,
    ) -> Overlay {
        Overlay::Choice {
            title,
            options: values.iter().map(T::to_string).collect(),
            selected: values.iter().position(|v| v == current).unwrap_or(0),
            purpose,
        }
    }
}

/// What a choice is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChoicePurpose {
    /// The role of a user.
    Role { id: Id<User>, email: String },
    /// The status of a contact request.
    ContactStatus {
        id: Id<Contact>,
        current: ContactStatus,
    },
}

/// What a prompt is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptPurpose {
    /// A user's new e-mail address.
    Email { id: Id<User> },
    /// Whose test results to show.
    ResultsOf,
    /// The kind and locale of a new mail template.
    NewMailTemplate,
    /// A filter of the audit trail.
    AuditFilter(views::audit::AuditField),
}

/// What the editor is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorPurpose {
    /// A reply to a contact request.
    Reply { id: Id<Contact>, email: String },
    /// The JSON value of a setting.
    Setting { key: String },
}
