//! The one renderer of mail: MiniJinja, with HTML auto-escaping in the `html` part, strict
//! undefined (a misspelt variable is an error, never an empty string) and a fuel limit (a
//! template is staff's text and must not loop for long).
//!
//! Templates are checked when they are saved ([`check`]): compiled, their variables looked
//! up in their kind's list, rendered with sample values; so a template is never found
//! broken when a mail is sent.

use std::sync::LazyLock;

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};

use super::kind::SAMPLE_CODE;
use super::{MailValues, TemplateKind, TemplateSource};
use crate::platform::mail;

/// Instructions one render may run; a mail's template needs a few hundred.
const FUEL: u64 = 50_000;
/// The longest text one part may render to.
const RENDERED_MAX: usize = 200_000;

static ENVIRONMENT: LazyLock<Environment<'static>> = LazyLock::new(environment);

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|name| match name {
        "html" => AutoEscape::Html,
        _ => AutoEscape::None,
    });
    // HTML-escaping as the rest of the mail does it: MiniJinja's own also writes `/` as
    // `&#x2f;`, which is valid but makes every link in a mail's source unreadable.
    env.set_formatter(|out, state, value| {
        if matches!(state.auto_escape(), AutoEscape::Html) && !value.is_safe() {
            out.write_str(&mail::escape_html(&value.to_string()))?;
            Ok(())
        } else {
            minijinja::escape_formatter(out, state, value)
        }
    });
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(16);
    env.add_filter("paragraphs", |text: &str| {
        Value::from_safe_string(paragraphs(text))
    });
    env.add_filter("quote", quote);
    env
}

/// The parts of a template, by the name its messages use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Subject,
    Text,
    Html,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Subject => "subject",
            Part::Text => "text",
            Part::Html => "html",
        }
    }
}

/// A mail as it is sent: one-line subject, text, and the HTML document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Renders `source` with `values`. Without an `html` part, the HTML is the text, escaped,
/// in paragraphs.
pub fn render(
    source: &TemplateSource,
    values: &MailValues,
    school_name: &str,
) -> Result<Rendered, String> {
    let context = values.context(school_name);
    let subject = render_part(Part::Subject, &source.subject, &context)?;
    // The subject was checked to render to one line; a header never gets a line break.
    let subject = mail::header_safe(&subject)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let text = render_part(Part::Text, &source.text, &context)?;
    let body = match &source.html {
        Some(html) => render_part(Part::Html, html, &context)?,
        None => paragraphs(&text),
    };
    let html = mail::html_document(&subject, &body);
    Ok(Rendered {
        subject,
        text,
        html,
    })
}

/// Every problem of a template of `kind`, one message each: syntax errors with their line
/// and column, unknown variables, a failed render with the sample values, a subject that
/// is not one line, an `otp` template that does not show the code.
pub fn check(kind: TemplateKind, source: &TemplateSource) -> Vec<String> {
    let mut problems = Vec::new();
    let parts = [
        (Part::Subject, Some(&source.subject)),
        (Part::Text, Some(&source.text)),
        (Part::Html, source.html.as_ref()),
    ];
    for (part, text) in parts {
        let Some(text) = text else { continue };
        match ENVIRONMENT.template_from_named_str(part.name(), text) {
            Ok(template) => {
                let mut unknown: Vec<String> = template
                    .undeclared_variables(false)
                    .into_iter()
                    .filter(|name| !kind.variables().contains(&name.as_str()))
                    .filter(|name| !ENVIRONMENT.globals().any(|(global, _)| global == name))
                    .collect();
                unknown.sort();
                for name in unknown {
                    problems.push(format!(
                        "{}: unknown variable `{name}`; {kind} templates know {}",
                        part.name(),
                        kind.variables().join(", ")
                    ));
                }
            }
            Err(e) => problems.push(describe(part, text, &e)),
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    let sample = kind.sample();
    let context = sample.context("Langcamp");
    for (part, text) in parts {
        let Some(text) = text else { continue };
        let rendered = match render_part(part, text, &context) {
            Ok(rendered) => rendered,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        if part == Part::Subject {
            if rendered.contains(['\n', '\r']) {
                problems.push("subject must render to one line".into());
            } else if rendered.chars().any(char::is_control) {
                problems.push("subject must not render to control characters".into());
            } else if rendered.trim().is_empty() {
                problems.push("subject must not render to nothing".into());
            }
        } else if kind == TemplateKind::Otp && !rendered.contains(SAMPLE_CODE) {
            problems.push(format!(
                "{}: an otp template must show the code with {{{{ code }}}}",
                part.name()
            ));
        }
    }
    problems
}

fn render_part(part: Part, source: &str, context: &Value) -> Result<String, String> {
    let template = ENVIRONMENT
        .template_from_named_str(part.name(), source)
        .map_err(|e| describe(part, source, &e))?;
    let rendered = template
        .render(context)
        .map_err(|e| describe(part, source, &e))?;
    if rendered.len() > RENDERED_MAX {
        return Err(format!(
            "{}: renders to more than {RENDERED_MAX} bytes",
            part.name()
        ));
    }
    Ok(rendered)
}

/// A MiniJinja error as one message: the part, what went wrong, and where.
fn describe(part: Part, source: &str, error: &minijinja::Error) -> String {
    let what = match error.detail() {
        Some(detail) => format!("{}: {detail}", error.kind()),
        None => error.kind().to_string(),
    };
    let place = match (error.range(), error.line()) {
        (Some(range), _) => {
            let (line, column) = line_and_column(source, range.start);
            format!(" at line {line}, column {column}")
        }
        (None, Some(line)) => format!(" at line {line}"),
        (None, None) => String::new(),
    };
    format!("{}: {what}{place}", part.name())
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_and_column(source: &str, offset: usize) -> (usize, usize) {
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit_once('\n')
        .map_or(before, |(_, last)| last)
        .chars()
        .count()
        + 1;
    (line, column)
}

/// Text as HTML paragraphs: escaped, a blank line between paragraphs, line breaks kept.
pub(super) fn paragraphs(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    text.split("\n\n")
        .map(|p| p.trim_matches('\n'))
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let lines: Vec<String> = p.split('\n').map(mail::escape_html).collect();
            format!("<p>{}</p>", lines.join("<br>"))
        })
        .collect()
}

/// Text quoted as a mail quotes it: `> ` before every line.
fn quote(text: &str) -> String {
    text.replace("\r\n", "\n")
        .split('\n')
        .map(|line| format!("> {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(subject: &str, text: &str, html: Option<&str>) -> TemplateSource {
        TemplateSource {
            subject: subject.into(),
            text: text.into(),
            html: html.map(str::to_owned),
        }
    }

    #[test]
    fn values_are_escaped_in_html_only() {
        let values = MailValues::ContactReply {
            first_name: "Ana".into(),
            reply: "<script>alert(1)</script>\nBye".into(),
            original_message: "Hi & bye".into(),
        };
        let template = source(
            "Re: {{ schoolName }}",
            "{{ reply }}\n{{ originalMessage | quote }}",
            Some("<p>{{ firstName }}</p>{{ reply | paragraphs }}"),
        );
        let mail = render(&template, &values, "A & B").expect("renders");
        assert_eq!(mail.subject, "Re: A & B");
        assert_eq!(mail.text, "<script>alert(1)</script>\nBye\n> Hi & bye");
        assert!(
            mail.html
                .contains("<p>&lt;script&gt;alert(1)&lt;/script&gt;<br>Bye</p>"),
            "{}",
            mail.html
        );
        assert!(!mail.html.contains("<script>"));
    }

    #[test]
    fn without_html_the_text_is_sent_in_escaped_paragraphs() {
        let values = MailValues::Otp {
            code: "123456".into(),
            minutes: 10,
        };
        let template = source("Code", "Your <code> is {{ code }}\n\nBye", None);
        let mail = render(&template, &values, "School").expect("renders");
        assert!(
            mail.html
                .contains("<p>Your &lt;code&gt; is 123456</p><p>Bye</p>")
        );
    }

    #[test]
    fn every_problem_is_named_with_its_place() {
        let problems = check(
            TemplateKind::Otp,
            &source("Hi {{ nickname }}", "Line\n{% if %}", Some("no code here")),
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("subject: unknown variable `nickname`"));
        assert!(
            problems[1].starts_with("text: syntax error") && problems[1].contains("line 2"),
            "{problems:?}"
        );

        let problems = check(
            TemplateKind::ContactReply,
            &source("Re: {{ reply }}", "{{ reply }}", None),
        );
        assert_eq!(problems, ["subject must render to one line"]);

        let problems = check(
            TemplateKind::Otp,
            &source("Code", "no code", Some("{{ code }}")),
        );
        assert_eq!(
            problems,
            ["text: an otp template must show the code with {{ code }}"]
        );
        assert!(check(TemplateKind::Otp, &source("Code", "{{ code }}", None)).is_empty());
    }

    #[test]
    fn a_template_that_runs_away_is_stopped() {
        let problems = check(
            TemplateKind::Otp,
            &source(
                "x",
                "{{ code }}{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
                None,
            ),
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("text: "), "{problems:?}");
    }

    #[test]
    fn lines_and_columns_count_characters() {
        assert_eq!(line_and_column("ab\ncé{{", 6), (2, 3));
        assert_eq!(line_and_column("{{", 0), (1, 1));
    }
}
