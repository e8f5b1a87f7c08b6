//! Identifiers: UUID v7 strings, time-ordered so inserts stay at the end of indexes.

/// A new identifier for any record.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Whether `text` could be an identifier we issued; a malformed id is simply not found,
/// so callers use this to answer 404 without a query.
pub fn looks_like_id(text: &str) -> bool {
    uuid::Uuid::try_parse(text).is_ok()
}
