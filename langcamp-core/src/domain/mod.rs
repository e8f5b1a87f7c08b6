//! Domain types: values parsed once, at the edge of core, and carried typed from there on.
//!
//! Wire inputs (the JSON bodies, owned by the resource modules for their OpenAPI schema)
//! are bags of optional strings; each resource's `input.rs` turns one into a validated
//! command made of these types, collecting one message per problem. Operations take the
//! command, so nothing behind the edge parses a string again, and the console and the CLI
//! build the same commands from typed values.

mod cefr;
mod contact_status;
mod id;
mod language;
mod text;
mod url;

/// E-mail addresses are parsed in [`crate::validate`], beside the character rule.
pub use crate::validate::Email;
pub use cefr::CefrLevel;
pub use contact_status::ContactStatus;
pub use id::Id;
pub use language::LanguageTag;
pub use text::{LongText, Text};
pub use url::HttpUrl;
