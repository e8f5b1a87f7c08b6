//! The text fields of the material forms (`POST` and `PATCH /education-materials`),
//! gathered into the JSON object a JSON body would be, so a form and a JSON body are
//! checked alike. The handler reads its forms through it, and so does the fuzz target
//! (`fuzz/fuzz_targets/multipart.rs`), which thereby fuzzes this very code.

use langcamp_core::{Error, Result};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::multipart::Part;
use crate::request::parse_command;

/// A text part of a material form holds at most this many bytes.
pub const TEXT_PART_LIMIT: usize = 256 * 1024;
/// Text fields of both forms.
const FIELDS: [&str; 6] = [
    "title",
    "description",
    "locale",
    "targetLanguage",
    "level",
    "videos",
];
/// The update form's own text field: ids of PDFs to remove.
const REMOVE_PDF_IDS: &str = "removePdfIds";
/// Fields whose text is JSON.
const JSON_FIELDS: [&str; 2] = ["videos", REMOVE_PDF_IDS];

/// The text fields of one form, read so far.
pub struct TextFields {
    /// Whether `removePdfIds` is a field (the update form).
    removals: bool,
    fields: Map<String, Value>,
}

impl TextFields {
    /// For the create form.
    pub fn create() -> TextFields {
        TextFields {
            removals: false,
            fields: Map::new(),
        }
    }

    /// For the update form, which also takes `removePdfIds`.
    pub fn update() -> TextFields {
        TextFields {
            removals: true,
            fields: Map::new(),
        }
    }

    fn allows(&self, name: &str) -> bool {
        FIELDS.contains(&name) || (self.removals && name == REMOVE_PDF_IDS)
    }

    /// Reads a text part and answers its length in bytes. An unknown or repeated field is
    /// 400, and so is a JSON field whose text is not a JSON array; a JSON field left blank
    /// counts as absent.
    pub async fn read(&mut self, part: Part) -> Result<usize> {
        let name = part.name().to_owned();
        if !self.allows(&name) {
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

    /// The fields as the JSON body `I` they stand for, converted into the command `C` and
    /// checked as that body would be.
    pub fn parse<I: DeserializeOwned, C: TryFrom<I, Error = Error>>(&self) -> Result<C> {
        parse_command(&serde_json::to_vec(&self.fields)?, C::try_from)
    }
}
