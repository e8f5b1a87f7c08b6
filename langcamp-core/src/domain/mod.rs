//! Domain types: values parsed once, at the edge of core, and carried typed from there on.
//!
//! Wire inputs (the JSON bodies, owned by the resource modules for their OpenAPI schema)
//! are bags of optional strings; each resource's `input.rs` turns one into a validated
//! command made of these types, collecting one message per problem. Operations take the
//! command, so nothing behind the edge parses a string again, and the console and the CLI
//! build the same commands from typed values.

/// The accessors of a value that is a checked string: the text (borrowed or owned) and
/// `Display`, the same for every such type.
macro_rules! string_value {
    ($name:ident) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}
pub(crate) use string_value;

pub mod actor;
mod cefr;
mod contact_status;
pub mod error;
pub mod id;
mod language;
pub mod money;
pub mod page;
mod text;
pub mod time;
mod url;
pub mod validate;

/// E-mail addresses are parsed in [`crate::domain::validate`], beside the character rule.
pub use crate::domain::validate::Email;
pub use cefr::CefrLevel;
pub use contact_status::ContactStatus;
pub use id::{Deleted, Id};
pub use language::{LanguageFilter, LanguageTag};
pub use text::{LongText, Text};
pub use url::HttpUrl;
