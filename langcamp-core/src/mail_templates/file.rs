//! A template as a file: the built-in templates are written in it, and
//! `langcamp mail-templates export|import` read and write it, so a translator or a school
//! edits plain text that diffs well.
//!
//! ```text
//! subject: Your {{ schoolName }} sign-in code
//! === text ===
//! Your {{ schoolName }} sign-in code is {{ code }}
//! === html ===
//! <p>Your sign-in code is <b>{{ code }}</b></p>
//! ```
//!
//! The `=== html ===` section is optional. A file is named `<kind>.<locale>.mail`.

use super::{MailTemplateInput, TemplateKind};
use crate::domain::LanguageTag;

const SUBJECT: &str = "subject:";
const TEXT_MARKER: &str = "=== text ===";
const HTML_MARKER: &str = "=== html ===";
/// The ending of a template file's name.
pub const EXTENSION: &str = "mail";

/// The parts of a template file, as a template body.
pub fn parse(source: &str) -> Result<MailTemplateInput, String> {
    let source = source.replace("\r\n", "\n");
    let (first, rest) = source.split_once('\n').unwrap_or((&source, ""));
    let subject = first
        .strip_prefix(SUBJECT)
        .ok_or_else(|| format!("the first line must start with {SUBJECT:?}"))?
        .trim();
    let body = rest
        .strip_prefix(TEXT_MARKER)
        .and_then(|b| b.strip_prefix('\n').or(b.is_empty().then_some(b)))
        .ok_or_else(|| format!("the second line must be {TEXT_MARKER:?}"))?;
    let (text, html) = match body.split_once(&format!("\n{HTML_MARKER}\n")) {
        Some((text, html)) => (text, Some(html)),
        None => match body.strip_suffix(&format!("\n{HTML_MARKER}")) {
            Some(text) => (text, Some("")),
            None => (body, None),
        },
    };
    let html = html.map(|h| h.strip_suffix('\n').unwrap_or(h).to_owned());
    Ok(MailTemplateInput {
        subject: Some(subject.to_owned()),
        text: Some(text.strip_suffix('\n').unwrap_or(text).to_owned()),
        html: html.filter(|h| !h.trim().is_empty()),
    })
}

/// A template in file form; [`parse`] reads it back as it was.
pub fn format(subject: &str, text: &str, html: Option<&str>) -> String {
    let mut file = format!("{SUBJECT} {subject}\n{TEXT_MARKER}\n{text}\n");
    if let Some(html) = html {
        file.push_str(HTML_MARKER);
        file.push('\n');
        file.push_str(html);
        file.push('\n');
    }
    file
}

/// The file name of a kind's template in a locale.
pub fn file_name(kind: TemplateKind, locale: &LanguageTag) -> String {
    format!("{kind}.{locale}.{EXTENSION}")
}

/// The kind and locale a file name stands for.
pub fn parse_file_name(name: &str) -> Result<(TemplateKind, LanguageTag), String> {
    let stem = name
        .strip_suffix(&format!(".{EXTENSION}"))
        .ok_or_else(|| format!("{name}: a template file's name ends in .{EXTENSION}"))?;
    let (kind, locale) = stem
        .split_once('.')
        .ok_or_else(|| format!("{name}: a template file is named <kind>.<locale>.{EXTENSION}"))?;
    let kind = TemplateKind::parse(kind).map_err(|e| format!("{name}: {e}"))?;
    let locale = LanguageTag::parse("locale", locale).map_err(|e| format!("{name}: {e}"))?;
    Ok((kind, locale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_back_as_it_was_written() {
        for html in [Some("<p>{{ code }}</p>\n<p>two</p>"), None] {
            let file = format("Code {{ code }}", "Line one\n\nLine {{ code }}", html);
            let input = parse(&file).expect("parses");
            assert_eq!(input.subject.as_deref(), Some("Code {{ code }}"));
            assert_eq!(input.text.as_deref(), Some("Line one\n\nLine {{ code }}"));
            assert_eq!(input.html.as_deref(), html);
        }
    }

    #[test]
    fn windows_line_ends_are_read_and_a_bad_head_is_named() {
        let input = parse("subject: S\r\n=== text ===\r\nT\r\n").expect("parses");
        assert_eq!(input.text.as_deref(), Some("T"));
        assert!(parse("Subject S\n=== text ===\nT\n").is_err());
        assert!(parse("subject: S\nT\n").is_err());
    }

    #[test]
    fn file_names_name_a_kind_and_a_locale() {
        let (kind, locale) = parse_file_name("contact_reply.pt-BR.mail").expect("a name");
        assert_eq!(kind, TemplateKind::ContactReply);
        assert_eq!(locale.as_str(), "pt-BR");
        assert!(parse_file_name("newsletter.en.mail").is_err());
        assert!(parse_file_name("otp.english!.mail").is_err());
        assert!(parse_file_name("otp.en.txt").is_err());
    }
}
