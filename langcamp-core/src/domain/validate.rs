//! Parsing of client input into validated values ("parse, don't validate").
//!
//! Each operation collects every problem of its input in [`Problems`] and fails once
//! with one message per invalid field.

use serde::Deserialize;

use crate::domain::LanguageTag;
use crate::domain::error::{Error, Result};

/// The messages gathered while parsing one input.
#[derive(Debug, Default)]
pub struct Problems(Vec<String>);

impl Problems {
    pub fn new() -> Problems {
        Problems::default()
    }

    pub fn add(&mut self, message: impl Into<String>) {
        self.0.push(message.into());
    }

    /// Keeps the value of `result`, or records its message and returns `None`.
    pub fn take<T>(&mut self, result: std::result::Result<T, String>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(m) => {
                self.0.push(m);
                None
            }
        }
    }

    /// How many problems were recorded so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Succeeds when nothing was recorded.
    pub fn finish(self) -> Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Error::Validation(self.0))
        }
    }
}

/// A field's value once [`Problems::finish`] has succeeded. Every parse that gives no value
/// records why, so `None` here is a bug (an internal error), never the client's mistake.
pub fn passed<T>(value: Option<T>) -> Result<T> {
    value.ok_or_else(|| Error::internal("an input passed validation without a value"))
}

/// One parsed field of a PATCH body (or of a create, where absent means the default).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Field<T> {
    /// Absent: keep the current value (or the default on create).
    #[default]
    Keep,
    Set(T),
    /// Refused; its message is already recorded.
    Invalid,
}

impl<T> Field<T> {
    /// Applies the field to `slot`; false when it was invalid.
    pub(crate) fn apply(self, slot: &mut T) -> bool {
        match self {
            Field::Keep => true,
            Field::Set(v) => {
                *slot = v;
                true
            }
            Field::Invalid => false,
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        matches!(self, Field::Set(_))
    }
}

/// A JSON field that distinguishes "absent" from `null` (for PATCH bodies).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Patch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Patch::Null,
            Some(v) => Patch::Value(v),
        })
    }
}

impl<T> Patch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Patch::Absent)
    }

    /// The change to a field that `null` may clear: `None` leaves it (absent, or a value
    /// `parse` refused, its message recorded), `Some(None)` clears it (`null`, or a value
    /// `parse` takes for empty), `Some(Some(v))` sets it.
    pub fn clearable<U>(
        self,
        problems: &mut Problems,
        parse: impl FnOnce(T) -> std::result::Result<Option<U>, String>,
    ) -> Option<Option<U>> {
        match self {
            Patch::Absent => None,
            Patch::Null => Some(None),
            Patch::Value(v) => problems.take(parse(v)),
        }
    }

    /// The change to a field that `null` may not clear: `Some(v)` sets it, `None` leaves
    /// it (absent, or refused: `<field> cannot be null`, or `parse`'s message).
    pub fn non_null<U>(
        self,
        problems: &mut Problems,
        field: &str,
        parse: impl FnOnce(T) -> std::result::Result<U, String>,
    ) -> Option<U> {
        match self {
            Patch::Absent => None,
            Patch::Null => {
                problems.add(format!("{field} cannot be null"));
                None
            }
            Patch::Value(v) => problems.take(parse(v)),
        }
    }
}

impl Patch<String> {
    /// [`clearable`](Patch::clearable) for a text field whose parser names the field in its
    /// message, as `LanguageTag::parse_optional` and the other optional values do.
    pub fn clearable_field<U>(
        self,
        problems: &mut Problems,
        field: &str,
        parse: fn(&str, &str) -> std::result::Result<Option<U>, String>,
    ) -> Option<Option<U>> {
        self.clearable(problems, |raw| parse(field, &raw))
    }
}

/// A trimmed, lower-cased e-mail address of a plausible shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    pub fn parse(field: &str, raw: &str) -> std::result::Result<Email, String> {
        let bad = || format!("{field} must be a valid e-mail address");
        if clean_chars(field, raw, Lines::Single).is_err() {
            return Err(bad());
        }
        let email = raw.trim().to_lowercase();
        if email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad());
        }
        let (local, domain) = email.rsplit_once('@').ok_or_else(bad)?;
        let local_ok = !local.is_empty()
            && local.len() <= 64
            && !local.contains('@')
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && !local.contains(['<', '>', '(', ')', '[', ']', ',', ';', ':', '\\', '"']);
        let domain_ok = domain.contains('.')
            && domain.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_alphanumeric() || c == '-')
            });
        if local_ok && domain_ok {
            Ok(Email(email))
        } else {
            Err(bad())
        }
    }
}

/// A field a body must carry: absent is `<field> is required`, else what `parse` makes of
/// it, its messages naming the same field (`required("email", raw, Email::parse)`).
pub fn required<T>(
    field: &str,
    raw: Option<&str>,
    parse: impl FnOnce(&str, &str) -> std::result::Result<T, String>,
) -> std::result::Result<T, String> {
    match raw {
        None => Err(format!("{field} is required")),
        Some(raw) => parse(field, raw),
    }
}

/// A list's search text or exact-match filter as clients send it: trimmed; absent or
/// blank searches for nothing.
pub fn search_text(raw: Option<&str>) -> Option<String> {
    raw.map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

crate::domain::string_value!(Email);

/// Whether a text field is one line (names, titles, e-mail, phone, keys, labels) or may
/// span lines (messages, descriptions, question text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines {
    Single,
    Multi,
}

/// Whether `c` may not appear in a text field of this kind: the C0 controls U+0000-U+001F
/// and DEL everywhere (multi-line text keeps line feed and tab), and the bidirectional
/// embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069, which make a name or
/// title display as something else than it is.
pub fn is_forbidden_char(c: char, lines: Lines) -> bool {
    let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let control = matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}');
    bidi || (control && !(lines == Lines::Multi && matches!(c, '\n' | '\t')))
}

/// The one character rule for client text (CONTRACT §1), applied to the value as sent
/// (before trimming, so a trailing CR LF is refused rather than silently cut). Every text
/// parser here goes through it.
pub fn clean_chars(field: &str, raw: &str, lines: Lines) -> std::result::Result<(), String> {
    if !raw.chars().any(|c| is_forbidden_char(c, lines)) {
        return Ok(());
    }
    Err(match lines {
        Lines::Single => {
            format!(
                "{field} must not contain control characters, line breaks or bidirectional overrides"
            )
        }
        Lines::Multi => format!(
            "{field} must not contain control characters other than line feed and tab, or bidirectional overrides"
        ),
    })
}

/// A required single-line text field: trimmed, `min..=max` characters.
pub fn text(
    field: &str,
    raw: Option<&str>,
    min: usize,
    max: usize,
) -> std::result::Result<String, String> {
    text_lines(field, raw, min, max, Lines::Single)
}

/// A required multi-line text field (line feeds and tabs allowed).
pub fn multiline_text(
    field: &str,
    raw: Option<&str>,
    min: usize,
    max: usize,
) -> std::result::Result<String, String> {
    text_lines(field, raw, min, max, Lines::Multi)
}

fn text_lines(
    field: &str,
    raw: Option<&str>,
    min: usize,
    max: usize,
    lines: Lines,
) -> std::result::Result<String, String> {
    required(field, raw, |field, raw| {
        bounded_lines(field, raw, min, max, lines)
    })
}

/// A trimmed single-line text of `min..=max` characters.
pub fn bounded(
    field: &str,
    raw: &str,
    min: usize,
    max: usize,
) -> std::result::Result<String, String> {
    bounded_lines(field, raw, min, max, Lines::Single)
}

/// A trimmed text of `min..=max` characters, of the given kind.
pub fn bounded_lines(
    field: &str,
    raw: &str,
    min: usize,
    max: usize,
    lines: Lines,
) -> std::result::Result<String, String> {
    clean_chars(field, raw, lines)?;
    let value = raw.trim();
    let len = value.chars().count();
    if len < min || len > max {
        if min <= 1 && len == 0 {
            return Err(format!("{field} must not be empty"));
        }
        return Err(format!("{field} must be {min} to {max} characters long"));
    }
    Ok(value.to_owned())
}

/// An optional single-line text: empty after trimming counts as absent.
pub fn optional_text(
    field: &str,
    raw: Option<&str>,
    max: usize,
) -> std::result::Result<Option<String>, String> {
    optional_lines(field, raw, max, Lines::Single)
}

/// An optional multi-line text: empty after trimming counts as absent.
pub fn optional_multiline_text(
    field: &str,
    raw: Option<&str>,
    max: usize,
) -> std::result::Result<Option<String>, String> {
    optional_lines(field, raw, max, Lines::Multi)
}

fn optional_lines(
    field: &str,
    raw: Option<&str>,
    max: usize,
    lines: Lines,
) -> std::result::Result<Option<String>, String> {
    if let Some(raw) = raw {
        clean_chars(field, raw, lines)?;
    }
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => bounded_lines(field, v, 1, max, lines).map(Some),
    }
}

/// A BCP 47 language tag such as `en`, `de-AT` or `zh-Hant-TW` (shape only), normalized;
/// the rule lives in [`LanguageTag`].
pub fn language_tag(field: &str, raw: &str) -> std::result::Result<String, String> {
    LanguageTag::parse(field, raw).map(LanguageTag::into_string)
}

/// The first language of an `Accept-Language` header, if it is a valid tag.
pub fn first_accept_language(header: &str) -> Option<String> {
    header
        .split(',')
        .filter_map(|item| item.split(';').next())
        .map(str::trim)
        .find(|tag| !tag.is_empty() && *tag != "*")
        .and_then(|tag| language_tag("accept-language", tag).ok())
}

/// An `http://` or `https://` address.
pub fn http_url(field: &str, raw: &str) -> std::result::Result<String, String> {
    clean_chars(field, raw, Lines::Single)?;
    let url = raw.trim();
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest)
            if !rest.is_empty()
                && !rest.starts_with('/')
                && url.len() <= 2000
                && !url.chars().any(|c| c.is_whitespace() || c.is_control()) =>
        {
            Ok(url.to_owned())
        }
        _ => Err(format!("{field} must be an http:// or https:// address")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_trimmed_lowercased_and_checked() {
        assert_eq!(
            Email::parse("email", "  Ana.Silva@Example.COM ").map(Email::into_string),
            Ok("ana.silva@example.com".into())
        );
        for bad in [
            "",
            "ana",
            "ana@",
            "@example.com",
            "ana@example",
            "a b@example.com",
            "ana@exa mple.com",
            "ana@@example.com",
            "ana@example..com",
            "x\r\n@example.com",
            "<a>@example.com",
        ] {
            assert!(
                Email::parse("email", bad).is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn language_tags_are_normalized() {
        assert_eq!(language_tag("locale", "EN-us"), Ok("en-US".into()));
        assert_eq!(
            language_tag("locale", "zh-hant-tw"),
            Ok("zh-Hant-TW".into())
        );
        assert!(language_tag("locale", "english").is_err());
        assert!(language_tag("locale", "e").is_err());
        assert_eq!(
            first_accept_language("de-AT,de;q=0.9,en;q=0.8").as_deref(),
            Some("de-AT")
        );
        assert_eq!(first_accept_language("*").as_deref(), None);
        assert_eq!(first_accept_language("").as_deref(), None);
    }

    #[test]
    fn text_fields_are_trimmed_and_bounded() {
        assert_eq!(text("name", Some("  Ana "), 1, 100), Ok("Ana".into()));
        assert!(text("name", Some("   "), 1, 100).is_err());
        assert!(text("name", None, 1, 100).is_err());
        assert!(text("name", Some(&"x".repeat(101)), 1, 100).is_err());
        assert_eq!(optional_text("city", Some("  "), 100), Ok(None));
    }

    #[test]
    fn single_line_text_refuses_controls_and_bidi_overrides() {
        for bad in [
            "Eve\r\nBcc: victim@example.com",
            "Eve\n",
            "tab\there",
            "nul\u{0}",
            "del\u{7f}",
            "\u{1b}[31mred",
            "abc\u{202e}gpj.exe",
            "x\u{202a}",
            "x\u{2066}y\u{2069}",
        ] {
            let err = text("firstName", Some(bad), 1, 100).expect_err(bad);
            assert!(err.starts_with("firstName must not contain"), "{err}");
            assert!(optional_text("city", Some(bad), 100).is_err(), "{bad:?}");
            assert!(bounded("title", bad, 1, 100).is_err(), "{bad:?}");
            assert!(Email::parse("email", &format!("a{bad}@example.com")).is_err());
            assert!(http_url("url", &format!("https://example.com/{bad}")).is_err());
        }
        // Other non-ASCII text, including right-to-left scripts and marks, is fine.
        for good in ["Zoë", "محمد", "שלום\u{200f}", "李小龙", "O'Brien-Smith"] {
            assert_eq!(text("name", Some(good), 1, 100), Ok(good.to_owned()));
        }
    }

    #[test]
    fn multi_line_text_keeps_line_feeds_and_tabs_only() {
        assert_eq!(
            multiline_text("message", Some("Hello,\n\tsecond line\n"), 1, 5000),
            Ok("Hello,\n\tsecond line".into())
        );
        assert_eq!(
            optional_multiline_text("description", Some("a\nb"), 100),
            Ok(Some("a\nb".into()))
        );
        for bad in [
            "a\r\nb",
            "a\u{0}",
            "a\u{7f}",
            "a\u{b}",
            "a\u{202d}b",
            "a\u{2068}",
        ] {
            let err = multiline_text("message", Some(bad), 1, 5000).expect_err(bad);
            assert!(err.contains("other than line feed and tab"), "{err}");
            assert!(optional_multiline_text("description", Some(bad), 100).is_err());
        }
        assert!(is_forbidden_char('\n', Lines::Single));
        assert!(!is_forbidden_char('\n', Lines::Multi));
        assert!(!is_forbidden_char(' ', Lines::Single));
    }

    #[test]
    fn only_http_urls_pass() {
        assert!(http_url("url", "https://video.example.com/v/1").is_ok());
        assert!(http_url("url", "javascript:alert(1)").is_err());
        assert!(http_url("url", "ftp://example.com").is_err());
        assert!(http_url("url", "https://").is_err());
    }
}
