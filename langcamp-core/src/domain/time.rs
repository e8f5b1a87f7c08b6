//! The wire form of instants: RFC 3339 UTC with milliseconds and `Z`.
//!
//! The database stores epoch milliseconds (`BIGINT`), which sort and range-query the same
//! way on SQLite and PostgreSQL; [`Timestamp`] converts at the edge.

use std::fmt;

use chrono::{DateTime, Datelike, SecondsFormat, TimeZone, Timelike, Utc};
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

impl Timestamp {
    /// The RFC 3339 text with milliseconds and `Z` (`2026-11-22T10:00:00.000Z`), written
    /// digit by digit: every answer's envelope carries one and most records two more, and
    /// chrono's general formatter (a `String` and a format pass each) showed in the profile
    /// of `GET /me`. `None` where the fixed shape does not fit (a year outside 0..=9999, a
    /// leap second): chrono writes those.
    fn fixed_text(&self) -> Option<[u8; 24]> {
        let t = &self.0;
        let year = u32::try_from(t.year()).ok().filter(|y| *y <= 9999)?;
        let millis = t.timestamp_subsec_millis();
        if millis >= 1000 {
            return None;
        }
        let mut text = *b"0000-00-00T00:00:00.000Z";
        for (at, width, value) in [
            (0, 4, year),
            (5, 2, t.month()),
            (8, 2, t.day()),
            (11, 2, t.hour()),
            (14, 2, t.minute()),
            (17, 2, t.second()),
            (20, 3, millis),
        ] {
            let mut value = value;
            for digit in text[at..at + width].iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        Some(text)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fixed_text() {
            Some(text) => f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?),
            None => f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true)),
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.fixed_text() {
            Some(text) => {
                s.serialize_str(std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?)
            }
            None => s.collect_str(self),
        }
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

    /// The hand-written text is chrono's, digit for digit, across the range it covers, and
    /// chrono still writes what it does not (years past 9999, before 0).
    #[test]
    fn the_fixed_text_is_chronos() {
        let chrono_text = |t: &Timestamp| t.0.to_rfc3339_opts(SecondsFormat::Millis, true);
        let mut ms: i64 = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
        while ms < 253_402_300_800_000 {
            let t = Timestamp::from_millis(ms);
            assert_eq!(t.to_string(), chrono_text(&t), "{ms}");
            ms += 77_777_777_777 + ms.rem_euclid(997);
        }
        for ms in [0, 1, 999, 1_000, 86_399_999, 253_402_300_799_999] {
            let t = Timestamp::from_millis(ms);
            assert_eq!(t.to_string(), chrono_text(&t), "{ms}");
        }
        for ms in [253_402_300_800_000, -62_167_219_200_001] {
            let t = Timestamp::from_millis(ms);
            assert!(t.fixed_text().is_none(), "{ms}");
            assert_eq!(t.to_string(), chrono_text(&t), "{ms}");
        }
    }
}
