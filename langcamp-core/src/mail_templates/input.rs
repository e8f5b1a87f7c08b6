//! What staff send to change a template (the wire input, with its schema) and the checked
//! template it becomes: every problem named at save, so a template never breaks at send.

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::{TemplateKind, render};
use crate::domain::LanguageTag;
use crate::domain::error::{Error, Result};
use crate::domain::validate::{self, Lines, Problems, passed};

pub const SUBJECT_MAX: usize = 1_000;
pub const TEXT_MAX: usize = 20_000;
// Every part at its longest, in the longest JSON escapes (12 bytes a character), stays
// under the 1 MB of a JSON body.
pub const HTML_MAX: usize = 50_000;

/// Body of `PUT /admin/mail-templates/{kind}/{locale}` and of its preview.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MailTemplateInput {
    /// One line; Jinja placeholders such as `{{ schoolName }}`.
    #[schema(value_type = String, min_length = 1, max_length = 1000, example = "Your {{ schoolName }} sign-in code")]
    pub subject: Option<String>,
    /// The plain-text part.
    #[schema(value_type = String, min_length = 1, max_length = 20000, example = "Your sign-in code is {{ code }}\n\nIt is valid for {{ minutes }} minutes.")]
    pub text: Option<String>,
    /// Optional: the HTML part's body (values are HTML-escaped in it); without it the HTML
    /// part is the text, escaped, in paragraphs.
    #[schema(
        max_length = 50000,
        example = "<p>Your sign-in code is <b>{{ code }}</b></p>"
    )]
    pub html: Option<String>,
}

/// Body of `POST /admin/mail-templates/{kind}/{locale}/preview`: a template to render, or
/// nothing (no body, or `{}`) to render the one in effect.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MailTemplatePreviewInput {
    /// One line; required with `text`.
    #[schema(min_length = 1, max_length = 1000)]
    pub subject: Option<String>,
    /// Required with `subject`.
    #[schema(min_length = 1, max_length = 20000)]
    pub text: Option<String>,
    #[schema(max_length = 50000)]
    pub html: Option<String>,
}

impl MailTemplatePreviewInput {
    /// The template to render, or `None` for the one in effect.
    pub fn template(self) -> Option<MailTemplateInput> {
        if self.subject.is_none() && self.text.is_none() && self.html.is_none() {
            return None;
        }
        Some(MailTemplateInput {
            subject: self.subject,
            text: self.text,
            html: self.html,
        })
    }
}

/// A template's three parts, line ends normalized; checked for its kind by
/// [`TemplateSource::parse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateSource {
    pub subject: String,
    pub text: String,
    pub html: Option<String>,
}

impl TemplateSource {
    /// A template of `kind`: every problem of its fields and of its template syntax,
    /// variables and rendering, one message each.
    pub fn parse(kind: TemplateKind, input: MailTemplateInput) -> Result<TemplateSource> {
        let source = TemplateSource::unchecked(input)?;
        let problems = render::check(kind, &source);
        if problems.is_empty() {
            Ok(source)
        } else {
            Err(Error::Validation(problems))
        }
    }

    /// The fields checked, the template not yet (the built-in files, which their tests
    /// check, and the first step of [`TemplateSource::parse`]).
    pub(super) fn unchecked(input: MailTemplateInput) -> Result<TemplateSource> {
        let mut problems = Problems::new();
        let subject = problems.take(validate::required(
            "subject",
            input.subject.as_deref(),
            |field, raw| part(field, raw, SUBJECT_MAX, Lines::Single),
        ));
        let text = problems.take(validate::required(
            "text",
            input.text.as_deref(),
            |field, raw| part(field, raw, TEXT_MAX, Lines::Multi),
        ));
        let html = problems.take(
            input
                .html
                .as_deref()
                .filter(|h| !h.trim().is_empty())
                .map(|raw| part("html", raw, HTML_MAX, Lines::Multi))
                .transpose(),
        );
        problems.finish()?;
        Ok(TemplateSource {
            subject: passed(subject)?,
            text: passed(text)?,
            html: passed(html)?,
        })
    }
}

/// One part: line ends normalized, no control characters but line feed and tab (none in
/// a subject), not blank, at most `max` characters.
fn part(field: &str, raw: &str, max: usize, lines: Lines) -> std::result::Result<String, String> {
    let text = raw.replace("\r\n", "\n");
    validate::clean_chars(field, &text, lines)?;
    let text = match lines {
        Lines::Single => text.trim().to_owned(),
        Lines::Multi => text.trim_end().to_owned(),
    };
    if text.trim().is_empty() {
        return Err(format!("{field} must not be empty"));
    }
    if text.chars().count() > max {
        return Err(format!("{field} must be at most {max} characters long"));
    }
    Ok(text)
}

/// A template to store for a kind and locale, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMailTemplate {
    pub kind: TemplateKind,
    pub locale: LanguageTag,
    pub source: TemplateSource,
}

impl NewMailTemplate {
    /// The kind and locale of a path, and a body: every problem at once.
    pub fn parse(kind: &str, locale: &str, input: MailTemplateInput) -> Result<NewMailTemplate> {
        let (kind, locale) = kind_and_locale(kind, locale)?;
        NewMailTemplate::new(kind, locale, input)
    }

    /// A body for a kind and locale already parsed (a template file's name).
    pub fn new(
        kind: TemplateKind,
        locale: LanguageTag,
        input: MailTemplateInput,
    ) -> Result<NewMailTemplate> {
        Ok(NewMailTemplate {
            kind,
            locale,
            source: TemplateSource::parse(kind, input)?,
        })
    }
}

/// The path of a template, `{kind}/{locale}`, as the document describes it (read with
/// [`kind_and_locale`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct TemplateAddress {
    /// The kind of mail.
    kind: TemplateKind,
    /// A BCP 47 tag, e.g. `de` or `pt-BR`.
    #[param(pattern = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    locale: String,
}

/// The kind and locale of a template's address; 400 naming each problem.
pub fn kind_and_locale(kind: &str, locale: &str) -> Result<(TemplateKind, LanguageTag)> {
    let mut problems = Problems::new();
    let kind = problems.take(TemplateKind::parse(kind));
    let locale = problems.take(LanguageTag::parse("locale", locale));
    problems.finish()?;
    Ok((passed(kind)?, passed(locale)?))
}
