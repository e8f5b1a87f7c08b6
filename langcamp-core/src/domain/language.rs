//! Language tags (BCP 47 shape), normalized so equal tags compare equal, and the lists'
//! filter by language.

use crate::domain::error::Result;
use crate::domain::validate::Problems;

/// A BCP 47 language tag such as `en`, `de-AT` or `zh-Hant-TW`, checked for shape only and
/// normalized (`EN-us` is `en-US`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LanguageTag(String);

impl LanguageTag {
    /// A tag as clients send it; the message names `field`.
    pub fn parse(field: &str, raw: &str) -> Result<LanguageTag, String> {
        let tag = raw.trim();
        let mut parts = tag.split('-');
        let primary = parts.next().unwrap_or("");
        let primary_ok =
            (2..=3).contains(&primary.len()) && primary.chars().all(|c| c.is_ascii_alphabetic());
        let rest_ok = parts
            .all(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()));
        if primary_ok && rest_ok && tag.len() <= 35 {
            Ok(LanguageTag(normalize(tag)))
        } else {
            Err(format!(
                "{field} must be a language code such as \"en\" or \"de-AT\""
            ))
        }
    }

    /// A tag, or nothing for an empty (or blank) value: the optional tag fields and the
    /// list filters, where empty means "none".
    pub fn parse_optional(field: &str, raw: &str) -> Result<Option<LanguageTag>, String> {
        if raw.trim().is_empty() {
            Ok(None)
        } else {
            LanguageTag::parse(field, raw).map(Some)
        }
    }
}

crate::domain::string_value!(LanguageTag);

/// The language filter of a list (courses, placement tests): the language of the texts
/// and the language taught or tested. Each absent or empty is no filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LanguageFilter {
    pub locale: Option<LanguageTag>,
    pub target_language: Option<LanguageTag>,
}

impl LanguageFilter {
    /// The filter of a list's query, one message per field that is not a tag.
    pub fn parse(locale: Option<&str>, target_language: Option<&str>) -> Result<LanguageFilter> {
        let mut problems = Problems::new();
        let filter = LanguageFilter {
            locale: LanguageTag::filter(&mut problems, "locale", locale),
            target_language: LanguageTag::filter(&mut problems, "targetLanguage", target_language),
        };
        problems.finish()?;
        Ok(filter)
    }
}

impl LanguageTag {
    /// A query's filter by a tag: absent or empty is none; anything else must be a tag
    /// (else its message is recorded).
    pub fn filter(problems: &mut Problems, field: &str, raw: Option<&str>) -> Option<LanguageTag> {
        problems
            .take(LanguageTag::parse_optional(field, raw?))
            .flatten()
    }
}

/// `EN-us` -> `en-US`: lower-case language, title-case script, upper-case two-letter region.
fn normalize(tag: &str) -> String {
    tag.split('-')
        .enumerate()
        .map(|(i, p)| {
            if i == 0 {
                p.to_ascii_lowercase()
            } else if p.len() == 2 {
                p.to_ascii_uppercase()
            } else if p.len() == 4 {
                let mut s = p.to_ascii_lowercase();
                s[..1].make_ascii_uppercase();
                s
            } else {
                p.to_ascii_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_normalized_and_empty_means_none() {
        let tag = |raw| LanguageTag::parse("locale", raw).map(LanguageTag::into_string);
        assert_eq!(tag("EN-us"), Ok("en-US".into()));
        assert_eq!(tag("zh-hant-tw"), Ok("zh-Hant-TW".into()));
        assert!(tag("english").is_err());
        assert_eq!(LanguageTag::parse_optional("locale", "  "), Ok(None));
        assert_eq!(
            LanguageTag::parse_optional("targetLanguage", "e"),
            Err("targetLanguage must be a language code such as \"en\" or \"de-AT\"".into())
        );
    }
}
