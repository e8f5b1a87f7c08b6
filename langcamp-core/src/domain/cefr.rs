//! CEFR levels (`A1` to `C2`), the one list courses and materials accept.

use std::fmt;

/// A level of the Common European Framework of Reference for languages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CefrLevel {
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
}

impl CefrLevel {
    /// Every level, lowest first.
    pub const ALL: [CefrLevel; 6] = [
        CefrLevel::A1,
        CefrLevel::A2,
        CefrLevel::B1,
        CefrLevel::B2,
        CefrLevel::C1,
        CefrLevel::C2,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CefrLevel::A1 => "A1",
            CefrLevel::A2 => "A2",
            CefrLevel::B1 => "B1",
            CefrLevel::B2 => "B2",
            CefrLevel::C1 => "C1",
            CefrLevel::C2 => "C2",
        }
    }

    /// A level as clients send it: trimmed, any case (`b1` is `B1`). The message names
    /// `field` and every accepted value.
    pub fn parse(field: &str, raw: &str) -> Result<CefrLevel, String> {
        let level = raw.trim();
        CefrLevel::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(level))
            .ok_or_else(|| format!("{field} must be one of {}", CefrLevel::list()))
    }

    /// A level, or nothing for an empty (or blank) value.
    pub fn parse_optional(field: &str, raw: &str) -> Result<Option<CefrLevel>, String> {
        if raw.trim().is_empty() {
            Ok(None)
        } else {
            CefrLevel::parse(field, raw).map(Some)
        }
    }

    /// `A1, A2, B1, B2, C1, C2`: the list every message about a level shows.
    pub fn list() -> String {
        CefrLevel::ALL.map(CefrLevel::as_str).join(", ")
    }
}

impl fmt::Display for CefrLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_in_any_case_and_name_the_list_when_refused() {
        assert_eq!(CefrLevel::parse("level", " b1 "), Ok(CefrLevel::B1));
        assert_eq!(CefrLevel::parse_optional("level", " "), Ok(None));
        assert_eq!(
            CefrLevel::parse("level", "D1"),
            Err("level must be one of A1, A2, B1, B2, C1, C2".to_owned())
        );
        assert!(CefrLevel::parse("level", "A").is_err());
        for level in CefrLevel::ALL {
            assert_eq!(CefrLevel::parse("level", level.as_str()), Ok(level));
        }
    }
}
