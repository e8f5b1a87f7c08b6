//! Bounded client text: trimmed, free of control characters and bidirectional overrides
//! (CONTRACT §1), and within a length the type carries, so a field's rule is written once
//! (`Text<200>` is every one-line title, `LongText<5000>` every description).

use std::fmt;

use crate::domain::validate::{self, Lines};

/// One line of 1 to `MAX` characters (names, titles, labels).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Text<const MAX: usize>(String);

/// 1 to `MAX` characters that may span lines (line feeds and tabs kept).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LongText<const MAX: usize>(String);

macro_rules! bounded_text {
    ($name:ident, $lines:expr) => {
        impl<const MAX: usize> $name<MAX> {
            /// A required value; empty after trimming is refused. Messages name `field`.
            pub fn parse(field: &str, raw: &str) -> Result<$name<MAX>, String> {
                validate::bounded_lines(field, raw, 1, MAX, $lines).map($name)
            }

            /// A value that may be left out: empty after trimming is `None`.
            pub fn parse_optional(field: &str, raw: &str) -> Result<Option<$name<MAX>>, String> {
                validate::clean_chars(field, raw, $lines)?;
                if raw.trim().is_empty() {
                    Ok(None)
                } else {
                    $name::parse(field, raw).map(Some)
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl<const MAX: usize> fmt::Display for $name<MAX> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

bounded_text!(Text, Lines::Single);
bounded_text!(LongText, Lines::Multi);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_trimmed_bounded_and_one_line() {
        assert_eq!(
            Text::<10>::parse("title", " Ana ").map(Text::into_string),
            Ok("Ana".into())
        );
        assert_eq!(
            Text::<10>::parse("title", "  "),
            Err("title must not be empty".into())
        );
        assert_eq!(
            Text::<3>::parse("title", "abcd"),
            Err("title must be 1 to 3 characters long".into())
        );
        assert!(Text::<10>::parse("title", "a\nb").is_err());
        assert_eq!(Text::<10>::parse_optional("title", " "), Ok(None));
        assert!(Text::<10>::parse_optional("title", "\r\n").is_err());
    }

    #[test]
    fn long_text_keeps_line_feeds() {
        assert_eq!(
            LongText::<10>::parse_optional("description", "a\nb")
                .map(|t| t.map(LongText::into_string)),
            Ok(Some("a\nb".into()))
        );
        assert!(LongText::<10>::parse("description", "a\r\nb").is_err());
    }
}
