//! The wire form of instants: RFC 3339 UTC with milliseconds and `Z`.
//!
//! The database stores epoch milliseconds (`BIGINT`), which sort and range-query the same
//! way on SQLite and PostgreSQL; [`Timestamp`] converts at the edge.

use std::fmt;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub fn from_millis(ms: i64) -> Timestamp {
        Timestamp(Utc.timestamp_millis_opt(ms).single().unwrap_or_default())
    }

    pub fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }
}

/// Epoch milliseconds, as the database stores them (a row's column read into a field
/// with `#[sqlx(try_from = "i64")]`).
impl From<i64> for Timestamp {
    fn from(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| Timestamp(t.with_timezone(&Utc)))
            .map_err(serde::de::Error::custom)
    }
}

impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .examples(["2026-11-22T10:00:00.000Z"])
            .into()
    }
}

impl utoipa::ToSchema for Timestamp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_serialize_with_milliseconds_and_z() {
        let t = Timestamp::from_millis(1_795_341_600_123);
        assert_eq!(
            serde_json::to_string(&t).ok().as_deref(),
            Some("\"2026-11-22T10:00:00.123Z\"")
        );
        assert_eq!(t.millis(), 1_795_341_600_123);
    }
}
