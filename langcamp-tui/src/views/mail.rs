//! Mail templates (CONTRACT §16): every template in effect by kind and locale, built-in or
//! edited; edit one in the user's editor in its file form (checked before it is saved:
//! every problem is shown and the text kept to edit again), preview it rendered with
//! sample values, reset it to the built-in one, start one for a new locale.

use langcamp_core::Error;
use langcamp_core::domain::LanguageTag;
use langcamp_core::mail_templates::{
    MailTemplate, NewMailTemplate, TemplateKind, file, kind_and_locale,
};
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::app::{App, Listing, Overlay, PromptPurpose};
use crate::editor::{EditPurpose, EditRequest};
use crate::input::LineInput;
use crate::keymap::Action;
use crate::table::{Column, ListTable};
use crate::task::{Job, MailPreview, Task};
use crate::ui;
use crate::view::View;

/// The locale a template for a new locale starts from.
const BASE_LOCALE: &str = "en";

#[derive(Clone, Debug, Default)]
pub struct MailState {
    pub list: Listing<MailTemplate>,
    /// The detail pane shows the selected template rendered with sample values.
    pub previewing: bool,
    /// The last preview rendered.
    pub preview: Option<MailPreview>,
    /// The preview being rendered.
    pub preview_id: Option<u64>,
    /// The save under way and its text, offered to edit again if the save fails.
    saving: Option<(u64, EditRequest)>,
}

impl MailState {
    /// The preview of the selected template, once rendered.
    pub fn selected_preview(&self) -> Option<&MailPreview> {
        let t = self.list.selected()?;
        self.preview
            .as_ref()
            .filter(|p| p.kind == t.kind && p.locale.eq_ignore_ascii_case(&t.locale))
    }

    fn find(&self, kind: TemplateKind, locale: &str) -> Option<&MailTemplate> {
        self.list
            .items
            .iter()
            .find(|t| t.kind == kind && t.locale.eq_ignore_ascii_case(locale))
    }
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    // A write or a reload may change what renders: previews are made again.
    app.mail.preview = None;
    app.mail.preview_id = None;
    let task = app.task(View::Mail, "Loading mail templates…", Job::MailTemplates);
    app.mail.list.loading(task)
}

pub(crate) fn loaded(app: &mut App, id: u64, list: Vec<MailTemplate>) -> Vec<Task> {
    if app.mail.list.load_id != Some(id) {
        return Vec::new();
    }
    app.mail.list.fill(list);
    load_preview(app)
}

/// Renders the selected template when the preview is shown and not rendered yet.
fn load_preview(app: &mut App) -> Vec<Task> {
    let s = &app.mail;
    if !s.previewing || s.selected_preview().is_some() {
        return Vec::new();
    }
    let Some(t) = s.list.selected() else {
        return Vec::new();
    };
    let kind = t.kind;
    let locale = match LanguageTag::parse("locale", &t.locale) {
        Ok(locale) => locale,
        Err(problem) => {
            app.error(problem);
            return Vec::new();
        }
    };
    let job = Job::PreviewMailTemplate { kind, locale };
    let task = app.task(View::Mail, "Rendering the preview…", job);
    app.mail.preview_id = Some(task.id);
    vec![task]
}

pub(crate) fn preview_loaded(app: &mut App, id: u64, preview: MailPreview) -> Vec<Task> {
    if app.mail.preview_id == Some(id) {
        app.mail.preview_id = None;
        app.mail.preview = Some(preview);
    }
    Vec::new()
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.mail;
    match action {
        Action::Up | Action::Down => {
            s.list.move_selection(action);
            return load_preview(app);
        }
        Action::TogglePreview => {
            s.previewing = !s.previewing;
            return load_preview(app);
        }
        Action::Open => {
            let request = s
                .list
                .selected()
                .map(|t| edit_request(t.kind, &t.locale, t));
            match request {
                Some(Ok(request)) => app.edit_outside(request),
                Some(Err(problem)) => app.error(problem),
                None => {}
            }
        }
        Action::New => {
            let kind = s.list.selected().map_or(TemplateKind::Otp, |t| t.kind);
            app.overlay = Some(Overlay::Prompt {
                title: "New template: kind and locale, e.g. otp nl".to_owned(),
                input: LineInput::new(&format!("{kind} ")),
                purpose: PromptPurpose::NewMailTemplate,
                awaiting: None,
            });
        }
        Action::Delete => {
            let Some(t) = s.list.selected() else {
                return Vec::new();
            };
            let (kind, shown) = (t.kind, t.locale.clone());
            if t.built_in {
                app.error(format!(
                    "the {kind} template in {shown} is the built-in one: nothing to reset"
                ));
                return Vec::new();
            }
            match LanguageTag::parse("locale", &shown) {
                Ok(locale) => {
                    app.overlay = Some(Overlay::Confirm {
                        question: format!(
                            "Reset the {kind} template in {shown} to the built-in one? \
                             The edited one is deleted."
                        ),
                        job: Job::ResetMailTemplate { kind, locale },
                        view: View::Mail,
                    });
                }
                Err(problem) => app.error(problem),
            }
        }
        _ => {}
    }
    Vec::new()
}

/// Editing `base`'s text in the user's editor, to be saved for `kind` in `locale`.
fn edit_request(
    kind: TemplateKind,
    locale: &str,
    base: &MailTemplate,
) -> Result<EditRequest, String> {
    let locale = LanguageTag::parse("locale", locale)?;
    let text = file::format(&base.subject, &base.text, base.html.as_deref());
    Ok(EditRequest {
        file_name: file::file_name(kind, &locale),
        text: text.clone(),
        purpose: EditPurpose::MailTemplate {
            kind,
            locale,
            original: text,
        },
    })
}

/// The new template's kind and locale were typed (`otp nl`): its editor opens with the
/// template in effect for that locale if there is one, else the English one. The prompt
/// stays open, with the problem shown, until they name a kind and a locale.
pub(crate) fn new_named(app: &mut App, title: String, input: LineInput) -> Vec<Task> {
    let words: Vec<&str> = input.text().split_whitespace().collect();
    let named = match words[..] {
        [kind, locale] => kind_and_locale(kind, locale).map_err(|e| match e {
            Error::Validation(problems) => problems.join("; "),
            other => other.to_string(),
        }),
        _ => Err("type a kind and a locale, e.g. otp nl".to_owned()),
    };
    let (kind, locale) = match named {
        Ok(named) => named,
        Err(problem) => {
            app.error(problem);
            app.overlay = Some(Overlay::Prompt {
                title,
                input,
                purpose: PromptPurpose::NewMailTemplate,
                awaiting: None,
            });
            return Vec::new();
        }
    };
    let s = &app.mail;
    let base = s
        .find(kind, locale.as_str())
        .or_else(|| s.find(kind, BASE_LOCALE));
    match base.map(|base| edit_request(kind, locale.as_str(), base)) {
        Some(Ok(request)) => app.edit_outside(request),
        Some(Err(problem)) => app.error(problem),
        None => app.error(format!(
            "no {kind} template in {BASE_LOCALE} to start from: reload (r) and try again"
        )),
    }
    Vec::new()
}

/// The editor gave back `text` for a template: saved when it is one, otherwise every
/// problem is shown and the text kept to edit again.
pub(crate) fn edited(app: &mut App, request: EditRequest, text: String) -> Vec<Task> {
    let EditPurpose::MailTemplate {
        kind,
        locale,
        original,
    } = &request.purpose;
    let what = format!("the {kind} template in {locale}");
    if text == *original {
        app.info(format!("{what} is unchanged: nothing saved"));
        return Vec::new();
    }
    let checked = file::parse(&text)
        .map_err(|problem| vec![problem])
        .and_then(|input| {
            NewMailTemplate::new(*kind, locale.clone(), input).map_err(|e| match e {
                Error::Validation(problems) => problems,
                other => vec![other.to_string()],
            })
        });
    let draft = EditRequest { text, ..request };
    match checked {
        Ok(template) => {
            let task = app.task(View::Mail, "Saving…", Job::PutMailTemplate { template });
            app.mail.saving = Some((task.id, draft));
            vec![task]
        }
        Err(problems) => {
            not_saved(app, what, problems, draft);
            Vec::new()
        }
    }
}

fn not_saved(app: &mut App, what: String, problems: Vec<String>, draft: EditRequest) {
    let count = match problems.len() {
        1 => "1 problem".to_owned(),
        n => format!("{n} problems"),
    };
    app.error(format!("{what} was not saved: {count}"));
    app.overlay = Some(Overlay::NotSaved {
        what,
        problems,
        draft,
    });
}

/// Task `id` finished: if it was a save, it is no longer under way.
pub(crate) fn saved(app: &mut App, id: u64) {
    if app
        .mail
        .saving
        .as_ref()
        .is_some_and(|(saving, _)| *saving == id)
    {
        app.mail.saving = None;
    }
}

/// Task `id` failed with `problem`: if it was a save, its text is offered to edit again.
pub(crate) fn failed(app: &mut App, id: u64, problem: String) {
    if app
        .mail
        .saving
        .as_ref()
        .is_some_and(|(saving, _)| *saving == id)
        && let Some((_, draft)) = app.mail.saving.take()
    {
        let EditPurpose::MailTemplate { kind, locale, .. } = &draft.purpose;
        let what = format!("the {kind} template in {locale}");
        not_saved(app, what, vec![problem], draft);
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.mail;
    if s.previewing {
        let title = " Preview · sample values ";
        TABLE.render_with_detail(frame, area, &s.list, 58, title, |_| {
            preview_lines(s.selected_preview())
        });
    } else {
        TABLE.render_with_detail(frame, area, &s.list, 58, " Template ", detail);
    }
}

const TABLE: ListTable<MailTemplate> = ListTable {
    name: "Mail",
    noun: ("template", "templates"),
    columns: &[
        Column::new("KIND", Length(17), |t| t.kind.as_str().into()),
        Column::new("LOCALE", Length(6), |t| t.locale.as_str().into()),
        Column::new("STATUS", Length(17), |t| status(t).into()),
        Column::new("SUBJECT", Fill(1), |t| t.subject.as_str().into()),
    ],
    empty: "No mail templates.",
};

/// `built-in`, or `edited 2026-05-04`.
fn status(t: &MailTemplate) -> String {
    match (t.built_in, t.updated_at) {
        (true, _) => "built-in".to_owned(),
        (false, Some(at)) => format!("edited {}", ui::date(at)),
        (false, None) => "edited".to_owned(),
    }
}

/// A heading of the detail pane.
fn heading(text: &str) -> Line<'static> {
    Line::from(Span::styled(text.to_owned(), ui::dim()))
}

fn detail(t: &MailTemplate) -> Vec<Line<'static>> {
    let status = match t.updated_at {
        Some(at) if !t.built_in => format!("edited {}", ui::date_time(at)),
        _ => status(t),
    };
    let mut lines = vec![
        ui::field("Kind", t.kind.as_str()),
        ui::field("Locale", t.locale.clone()),
        ui::field("Status", status),
        ui::field("Variables", t.kind.variables().join(", ")),
        ui::field("Subject", t.subject.clone()),
        Line::default(),
        heading("Text"),
    ];
    lines.extend(t.text.lines().map(|l| Line::from(l.to_owned())));
    lines.push(Line::default());
    match &t.html {
        Some(html) => {
            lines.push(heading("HTML"));
            lines.extend(html.lines().map(|l| Line::from(l.to_owned())));
        }
        None => lines.push(heading("HTML: none (the text, in paragraphs)")),
    }
    lines
}

fn preview_lines(preview: Option<&MailPreview>) -> Vec<Line<'static>> {
    let Some(p) = preview else {
        return vec![heading("Rendering…")];
    };
    let mut lines = vec![
        ui::field("Subject", p.mail.subject.clone()),
        Line::default(),
    ];
    lines.extend(p.mail.text.lines().map(|l| Line::from(l.to_owned())));
    lines.push(Line::default());
    lines.push(heading(&format!(
        "HTML part: {} characters · p shows the template",
        p.mail.html.chars().count()
    )));
    lines
}
