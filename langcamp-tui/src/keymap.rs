//! The keymap: a pure function from a key press, in a context, to an [`Action`].
//!
//! One table of [`Binding`]s per context is the single source of truth: the keymap looks
//! keys up in it, the footer shows its short list and the help screen shows all of it, so
//! the screen never advertises a key that does nothing.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::view::View;

/// What the user asked for. Views interpret the generic ones (`Delete`, `Open`, ...) for
/// the thing selected on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Quit,
    ToggleHelp,
    /// Esc: close, cancel or clear.
    Back,
    SwitchTo(View),
    NextView,
    PrevView,
    Reload,
    Up,
    Down,
    NextPage,
    PrevPage,
    Search,
    /// The view's first filter (users: role).
    CycleFilter,
    /// The view's second filter (users: registration state).
    CycleFilter2,
    Open,
    Delete,
    EditEmail,
    SetRole,
    /// Remove every second factor of the selected user (users).
    ResetFactors,
    SetStatus,
    TogglePublish,
    Duplicate,
    Assign,
    Unassign,
    ToggleActive,
    ResultsByUser,
    /// Write the list with its current filter to a CSV file.
    Export,
    MoreMonths,
    FewerMonths,
    /// Mark or unmark (the user picker).
    Toggle,
    /// Show the rendered preview instead, or back (mail templates).
    TogglePreview,
    /// Add one for a new name (a mail template for a new locale).
    New,
    /// Filter by who did it (the audit trail: the actor's e-mail).
    FilterActor,
    /// Filter by what was done (the audit trail: the action).
    FilterAction,
    /// Filter by the id of what it was done to (the audit trail: the target's id).
    FilterTargetId,
    /// Filter by a time lower bound (the audit trail: since).
    FilterSince,
    /// Drop every filter of the view.
    ClearFilters,
    // Text entry, confirmation and choices.
    Type(char),
    Backspace,
    DeleteChar,
    Left,
    Right,
    Home,
    End,
    Newline,
    Submit,
    Yes,
    No,
}

/// Which kind of input has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Moving around a view.
    Normal,
    /// The full help screen.
    Help,
    /// A yes/no question.
    Confirm,
    /// A list of options to pick one from.
    Choice,
    /// A one-line field: a search box or a prompt.
    Line,
    /// The multi-line editor.
    Editor,
    /// Picking users by search.
    Picker,
    /// A text edited outside was refused: edit it again or drop it.
    NotSaved,
}

/// Which pane of a view with two has the keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Focus {
    #[default]
    Main,
    Secondary,
}

/// Everything the keymap needs to know about the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyContext {
    pub mode: Mode,
    pub view: View,
    pub focus: Focus,
}

/// One key binding: the keys that trigger it, how the footer and help show it, and the
/// action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub keys: Vec<Key>,
    /// The keys as shown on screen, e.g. `↑/k`.
    pub label: String,
    pub help: &'static str,
    pub action: Action,
    /// Shown in the footer (the rest only in the full help).
    pub footer: bool,
}

/// A key, with Ctrl or without.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

const fn key(code: KeyCode) -> Key {
    Key { code, ctrl: false }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

fn bind(keys: &[Key], label: &str, help: &'static str, action: Action) -> Binding {
    Binding {
        keys: keys.to_vec(),
        label: label.to_owned(),
        help,
        action,
        footer: true,
    }
}

fn more(keys: &[Key], label: &str, help: &'static str, action: Action) -> Binding {
    Binding {
        footer: false,
        ..bind(keys, label, help, action)
    }
}

use KeyCode::{
    BackTab, Backspace, Char, Delete, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right,
    Tab, Up,
};

/// The bindings that work in `cx`, the view's own first.
pub fn bindings(cx: KeyContext) -> Vec<Binding> {
    let mut list = match cx.mode {
        Mode::Normal => {
            let mut list = vec![
                bind(&[key(Char('?'))], "?", "help", Action::ToggleHelp),
                bind(&[key(Char('q'))], "q", "quit", Action::Quit),
            ];
            list.extend(view_bindings(cx.view, cx.focus));
            list.extend([
                bind(
                    &[key(Tab)],
                    &format!("{}/Tab", View::keys_label()),
                    "views",
                    Action::NextView,
                ),
                more(
                    &[key(BackTab)],
                    "Shift-Tab",
                    "previous view",
                    Action::PrevView,
                ),
                more(&[key(Char('r'))], "r", "reload", Action::Reload),
            ]);
            if !list.iter().any(|b| b.keys.contains(&key(Esc))) {
                list.push(more(
                    &[key(Esc)],
                    "Esc",
                    "dismiss the message",
                    Action::Back,
                ));
            }
            list
        }
        Mode::Help => vec![bind(
            &[key(Esc), key(Char('?')), key(Char('q'))],
            "Esc/?",
            "close help",
            Action::ToggleHelp,
        )],
        Mode::Confirm => vec![
            bind(&[key(Char('y'))], "y", "yes", Action::Yes),
            bind(&[key(Char('n')), key(Esc)], "n/Esc", "no", Action::No),
        ],
        Mode::Choice => vec![
            bind(&[key(Up), key(Char('k'))], "↑↓", "choose", Action::Up),
            more(&[key(Down), key(Char('j'))], "↓/j", "down", Action::Down),
            bind(&[key(Enter)], "Enter", "apply", Action::Submit),
            bind(&[key(Esc)], "Esc", "cancel", Action::Back),
        ],
        Mode::Line => with_editing_keys(
            vec![
                bind(&[key(Enter)], "Enter", "done", Action::Submit),
                bind(&[key(Esc)], "Esc", "cancel", Action::Back),
            ],
            [&[key(Home), ctrl('a')], &[key(End), ctrl('e')]],
            ["start", "end"],
        ),
        Mode::Picker => with_editing_keys(
            vec![
                bind(&[key(Enter)], "Enter", "apply", Action::Submit),
                bind(&[key(Char(' '))], "Space", "mark", Action::Toggle),
                bind(&[key(Up)], "↑↓", "select", Action::Up),
                more(&[key(Down)], "↓", "down", Action::Down),
                bind(&[key(Esc)], "Esc", "cancel", Action::Back),
            ],
            [&[key(Home)], &[key(End)]],
            ["start", "end"],
        ),
        Mode::NotSaved => vec![
            bind(
                &[key(Char('e')), key(Enter)],
                "e/Enter",
                "edit again",
                Action::Open,
            ),
            bind(&[key(Esc)], "Esc", "discard the changes", Action::Back),
        ],
        Mode::Editor => with_editing_keys(
            vec![
                bind(
                    &[ctrl('s')],
                    "Ctrl-S",
                    if cx.view == View::Contacts {
                        "send"
                    } else {
                        "save"
                    },
                    Action::Submit,
                ),
                bind(&[key(Esc)], "Esc", "cancel", Action::Back),
                bind(&[key(Enter)], "Enter", "new line", Action::Newline),
                more(&[key(Up)], "↑", "up", Action::Up),
                more(&[key(Down)], "↓", "down", Action::Down),
            ],
            [&[key(Home)], &[key(End)]],
            ["line start", "line end"],
        ),
    };
    list.push(more(&[ctrl('c')], "Ctrl-C", "quit at once", Action::Quit));
    list
}

/// `list` and then the keys that edit text in a field (the full help lists them, the
/// footer does not): `home_end` are the keys to the start and the end, `home_end_help`
/// what help calls them.
fn with_editing_keys(
    mut list: Vec<Binding>,
    home_end: [&[Key]; 2],
    home_end_help: [&'static str; 2],
) -> Vec<Binding> {
    list.extend([
        more(
            &[key(Backspace)],
            "Backspace",
            "delete left",
            Action::Backspace,
        ),
        more(&[key(Delete)], "Del", "delete right", Action::DeleteChar),
        more(&[key(Left)], "←", "left", Action::Left),
        more(&[key(Right)], "→", "right", Action::Right),
        more(home_end[0], "Home", home_end_help[0], Action::Home),
        more(home_end[1], "End", home_end_help[1], Action::End),
    ]);
    list
}

fn list_keys() -> [Binding; 2] {
    [
        bind(&[key(Up), key(Char('k'))], "↑↓", "select", Action::Up),
        more(&[key(Down), key(Char('j'))], "↓/j", "down", Action::Down),
    ]
}

fn page_keys() -> [Binding; 2] {
    [
        bind(
            &[key(PageDown), key(Char(']'))],
            "]/[",
            "page",
            Action::NextPage,
        ),
        more(
            &[key(PageUp), key(Char('['))],
            "[",
            "previous page",
            Action::PrevPage,
        ),
    ]
}

/// How a view moves through what it shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Moves {
    /// Nothing to select (the dashboard).
    None,
    /// A list: up and down.
    List,
    /// A list shown page by page.
    Pages,
}

fn view_bindings(view: View, focus: Focus) -> Vec<Binding> {
    let (moves, own) = match view {
        View::Dashboard => (
            Moves::None,
            vec![
                bind(
                    &[key(Char('+')), key(Char('='))],
                    "+/-",
                    "months",
                    Action::MoreMonths,
                ),
                more(&[key(Char('-'))], "-", "fewer months", Action::FewerMonths),
            ],
        ),
        View::Users => (
            Moves::Pages,
            vec![
                bind(&[key(Char('/'))], "/", "search", Action::Search),
                bind(&[key(Char('f'))], "f", "role", Action::CycleFilter),
                bind(&[key(Char('c'))], "c", "registration", Action::CycleFilter2),
                bind(&[key(Char('s'))], "s", "set role", Action::SetRole),
                bind(&[key(Char('e'))], "e", "e-mail", Action::EditEmail),
                bind(&[key(Char('d'))], "d", "delete", Action::Delete),
                bind(
                    &[key(Char('F'))],
                    "F",
                    "reset factors",
                    Action::ResetFactors,
                ),
                more(&[key(Char('x'))], "x", "export as CSV", Action::Export),
            ],
        ),
        View::Contacts => (
            Moves::Pages,
            vec![
                bind(&[key(Enter)], "Enter", "reply", Action::Open),
                bind(&[key(Char('s'))], "s", "status", Action::SetStatus),
                bind(&[key(Char('d'))], "d", "delete", Action::Delete),
                bind(&[key(Char('f'))], "f", "filter", Action::CycleFilter),
                bind(&[key(Char('/'))], "/", "search", Action::Search),
                more(&[key(Char('x'))], "x", "export as CSV", Action::Export),
            ],
        ),
        View::Placement if focus == Focus::Main => (
            Moves::Pages,
            vec![
                bind(&[key(Enter)], "Enter", "to results", Action::Open),
                bind(
                    &[key(Char('a'))],
                    "a",
                    "activate/deactivate",
                    Action::ToggleActive,
                ),
                bind(
                    &[key(Char('u'))],
                    "u",
                    "results of a user",
                    Action::ResultsByUser,
                ),
                more(
                    &[key(Char('x'))],
                    "x",
                    "export the results shown as CSV",
                    Action::Export,
                ),
            ],
        ),
        View::Placement => (
            Moves::Pages,
            vec![
                bind(&[key(Char('d'))], "d", "delete result", Action::Delete),
                bind(&[key(Esc)], "Esc", "to tests", Action::Back),
                more(
                    &[key(Char('x'))],
                    "x",
                    "export the results shown as CSV",
                    Action::Export,
                ),
            ],
        ),
        View::Materials => (
            Moves::Pages,
            vec![
                bind(&[key(Char('a'))], "a", "assign to users", Action::Assign),
                bind(
                    &[key(Char('u'))],
                    "u",
                    "unassign from a user",
                    Action::Unassign,
                ),
            ],
        ),
        View::Courses => (
            Moves::List,
            vec![
                bind(
                    &[key(Char('p'))],
                    "p",
                    "publish/unpublish",
                    Action::TogglePublish,
                ),
                bind(&[key(Char('c'))], "c", "duplicate", Action::Duplicate),
                bind(&[key(Char('d'))], "d", "delete", Action::Delete),
            ],
        ),
        View::Settings => (
            Moves::List,
            vec![bind(
                &[key(Enter), key(Char('e'))],
                "Enter/e",
                "edit value",
                Action::Open,
            )],
        ),
        View::Mail => (
            Moves::List,
            vec![
                bind(
                    &[key(Enter), key(Char('e'))],
                    "Enter/e",
                    "edit",
                    Action::Open,
                ),
                bind(&[key(Char('p'))], "p", "preview", Action::TogglePreview),
                bind(&[key(Char('n'))], "n", "new locale", Action::New),
                bind(&[key(Char('d'))], "d", "reset to built-in", Action::Delete),
            ],
        ),
        View::Webhooks if focus == Focus::Main => (
            Moves::List,
            vec![
                bind(&[key(Enter)], "Enter", "to deliveries", Action::Open),
                bind(&[key(Char('f'))], "f", "status", Action::CycleFilter),
            ],
        ),
        View::Webhooks => (
            Moves::Pages,
            vec![
                bind(&[key(Char('f'))], "f", "status", Action::CycleFilter),
                bind(&[key(Esc)], "Esc", "to endpoints", Action::Back),
            ],
        ),
        View::Audit => (
            Moves::Pages,
            vec![
                bind(&[key(Char('u'))], "u", "actor", Action::FilterActor),
                bind(&[key(Char('a'))], "a", "action", Action::FilterAction),
                bind(&[key(Char('f'))], "f", "target type", Action::CycleFilter),
                bind(&[key(Enter)], "Enter", "this target", Action::Open),
                more(&[key(Char('i'))], "i", "target id", Action::FilterTargetId),
                bind(&[key(Char('s'))], "s", "since", Action::FilterSince),
                bind(
                    &[key(Char('x'))],
                    "x",
                    "clear filters",
                    Action::ClearFilters,
                ),
            ],
        ),
    };
    let mut list = Vec::new();
    if moves != Moves::None {
        list.extend(list_keys());
    }
    if moves == Moves::Pages {
        list.extend(page_keys());
    }
    list.extend(own);
    list
}

/// The action for `event` in `cx`, if any. Only presses count (not releases or repeats
/// of Windows consoles), and in text modes an unbound character is typed.
pub fn map_key(cx: KeyContext, event: KeyEvent) -> Option<Action> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let is_ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
    let pressed = Key {
        code: event.code,
        ctrl: is_ctrl,
    };
    if cx.mode == Mode::Normal
        && !is_ctrl
        && let Char(c) = event.code
        && c.is_ascii_digit()
    {
        return View::of_key(c).map(Action::SwitchTo);
    }
    if let Some(binding) = bindings(cx).into_iter().find(|b| b.keys.contains(&pressed)) {
        return Some(binding.action);
    }
    match (cx.mode, event.code) {
        (Mode::Line | Mode::Editor | Mode::Picker, Char(c))
            if !is_ctrl && !event.modifiers.contains(KeyModifiers::ALT) =>
        {
            Some(Action::Type(c))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
