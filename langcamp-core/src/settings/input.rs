//! What a client sends about settings, and the validated values core takes: a
//! [`SettingKey`] and a [`NewSetting`].

use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::domain::error::{Error, Result};
use crate::domain::validate::{Patch, Problems, passed};

pub const KEY_MAX: usize = 100;

/// The body of `PUT /settings`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingInput {
    /// `[a-z0-9_.-]`, 1 to 100 characters.
    #[schema(value_type = String, required = true, pattern = r"^[a-z0-9_.-]{1,100}$", example = "landing_video_url")]
    pub key: Option<String>,
    /// Any JSON value but null (a string, number, boolean, object or array).
    #[serde(default)]
    #[schema(schema_with = non_null_value, required = true)]
    pub value: Patch<Value>,
}

/// Any JSON value but null: the schema of a setting's value.
fn non_null_value() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![
            Type::String,
            Type::Number,
            Type::Boolean,
            Type::Object,
            Type::Array,
        ]))
        .description(Some(
            "Any JSON value but null (a string, number, boolean, object or array).",
        ))
        .examples(["https://video.example.com/landing.mp4"])
        .build()
}

impl SettingInput {
    pub fn new(key: impl Into<String>, value: Value) -> SettingInput {
        SettingInput {
            key: Some(key.into()),
            value: Patch::Value(value),
        }
    }
}

/// A setting's key: `[a-z0-9_.-]{1,100}` after trimming.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SettingKey(String);

impl SettingKey {
    pub fn parse(raw: &str) -> std::result::Result<SettingKey, String> {
        let key = raw.trim();
        let ok = (1..=KEY_MAX).contains(&key.len())
            && key.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-')
            });
        if ok {
            Ok(SettingKey(key.to_owned()))
        } else {
            Err(format!(
                "key must be 1 to {KEY_MAX} characters of a-z, 0-9, _, . and -"
            ))
        }
    }

    /// The key a client names in a path (`GET /settings/{key}`): text that could not be a
    /// key names no setting, so it is not found rather than invalid.
    pub fn named(raw: &str) -> Result<SettingKey> {
        SettingKey::parse(raw).map_err(|_| Error::not_found("setting"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A validated [`SettingInput`]: what [`crate::Langcamp::put_setting`] takes.
#[derive(Clone, Debug, PartialEq)]
pub struct NewSetting {
    pub(super) key: SettingKey,
    pub(super) value: Value,
}

impl NewSetting {
    /// The setting `key` = `value` (tools that have a JSON value already), checked as a
    /// body is.
    pub fn new(key: impl Into<String>, value: Value) -> Result<NewSetting> {
        NewSetting::try_from(SettingInput::new(key, value))
    }

    pub fn key(&self) -> &SettingKey {
        &self.key
    }
}

impl TryFrom<SettingInput> for NewSetting {
    type Error = Error;

    fn try_from(input: SettingInput) -> Result<NewSetting> {
        let mut problems = Problems::new();
        let key = match input.key.as_deref() {
            None => {
                problems.add("key is required");
                None
            }
            Some(raw) => problems.take(SettingKey::parse(raw)),
        };
        let value = match input.value {
            Patch::Absent => {
                problems.add("value is required");
                None
            }
            Patch::Null => {
                problems.add("value cannot be null; delete the setting to remove it");
                None
            }
            Patch::Value(v) => Some(v),
        };
        problems.finish()?;
        Ok(NewSetting {
            key: passed(key)?,
            value: passed(value)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_lowercase_words_up_to_100_characters() {
        let key = SettingKey::parse(" landing_video_url ").expect("a key");
        assert_eq!(key.as_str(), "landing_video_url");
        assert!(SettingKey::parse("site.theme-2").is_ok());
        assert!(SettingKey::parse(&"k".repeat(100)).is_ok());
        for bad in ["", " ", "Landing", "a b", "a/b", "ключ", &"k".repeat(101)] {
            assert!(SettingKey::parse(bad).is_err(), "{bad:?} should be refused");
            assert!(matches!(SettingKey::named(bad), Err(Error::NotFound(_))));
        }
    }

    #[test]
    fn a_null_value_is_told_apart_from_a_missing_one() {
        let null: SettingInput = serde_json::from_str(r#"{"key":"k","value":null}"#).expect("json");
        assert_eq!(null.value, Patch::Null);
        let absent: SettingInput = serde_json::from_str(r#"{"key":"k"}"#).expect("json");
        assert_eq!(absent.value, Patch::Absent);
    }
}
