//! The text fields of the material forms (`POST` and `PATCH /education-materials`),
//! gathered into the JSON object a JSON body would be, so a form and a JSON body are
//! checked alike. The handler reads its forms through it, and so does the fuzz target
//! (`fuzz/fuzz_targets/multipart.rs`), which thereby fuzzes this very code.

use langcamp_core::{Error, Result};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::multipart::Part;
use crate::request::parse_json;

/// A text part of a material form holds at most this many bytes.
pub const TEXT_PART_LIMIT: usize = 256 * 1024;
/// Text fields of the create form; the update form adds `removePdfIds`.
pub const CREATE_FIELDS: [&str; 6] = [
    "title",
    "description",
    "locale",
    "targetLanguage",
    "level",
    "videos",
];
pub const UPDATE_FIELDS: [&str; 7] = [
    "title",
    "description",
    "locale",
    "targetLanguage",
    "level",
    "videos",
    "removePdfIds",
];
/// Fields whose text is JSON.
const JSON_FIELDS: [&str; 2] = ["videos", "removePdfIds"];

/// The text fields of one form, read so far.
pub struct TextFields {
    allowed: &'static [&'static str],
    fields: Map<String, Value>,
}

impl TextFields {
    /// For a form of the `allowed` fields ([`CREATE_FIELDS`] or [`UPDATE_FIELDS`]).
    pub fn new(allowed: &'static [&'static str]) -> TextFields {
        TextFields {
            allowed,
            fields: Map::new(),
        }
    }

    /// Reads a text part and answers its length in bytes. An unknown or repeated field is
    /// 400, and so is a JSON field whose text is not a JSON array; a JSON field left blank
    /// counts as absent.
    pub async fn read(&mut self, part: Part) -> Result<usize> {
        let name = part.name().to_owned();
        if !self.allowed.contains(&name.as_str()) {
            return Err(Error::invalid(format!("unknown field: {name}")));
        }
        if self.fields.contains_key(&name) {
            return Err(Error::invalid(format!("{name} is given more than once")));
        }
        let text = part.text(TEXT_PART_LIMIT).await?;
        let len = text.len();
        let value = if JSON_FIELDS.contains(&name.as_str()) {
            if text.trim().is_empty() {
                return Ok(len);
            }
            serde_json::from_str::<Value>(&text)
                .ok()
                .filter(Value::is_array)
                .ok_or_else(|| Error::invalid(format!("{name} must be a JSON array")))?
        } else {
            Value::String(text)
        };
        self.fields.insert(name, value);
        Ok(len)
    }

    /// The fields as the JSON body `T` they stand for, checked as that body would be.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        parse_json(&serde_json::to_vec(&self.fields)?)
    }
}
