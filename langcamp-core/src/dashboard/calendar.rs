//! Calendar months in UTC for the trends, computed here so the SQL only compares integer
//! times (`col >= $1 AND col < $2`) and stays the same on both backends.

use chrono::{DateTime, Datelike, TimeZone, Utc};

use crate::domain::error::{Error, Result};

/// One calendar month: `[start_ms, end_ms)` in epoch milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MonthSpan {
    /// `YYYY-MM`.
    pub key: String,
    /// Like `Nov 2026`.
    pub label: String,
    pub start_ms: i64,
    pub end_ms: i64,
}

/// Months counted from year 0: `year * 12 + (month - 1)`.
fn month_number(t: DateTime<Utc>) -> i64 {
    i64::from(t.year()) * 12 + i64::from(t.month0())
}

/// Midnight UTC of the 1st of the month with that number.
fn first_of(number: i64) -> Result<DateTime<Utc>> {
    let year = i32::try_from(number.div_euclid(12)).map_err(Error::internal)?;
    let month = u32::try_from(number.rem_euclid(12) + 1).map_err(Error::internal)?;
    Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0)
        .single()
        .ok_or_else(|| Error::internal(format!("no first day of {year}-{month:02}")))
}

/// The `count` calendar months ending with the month of `now`, oldest first.
pub(crate) fn months_ending_at(now: DateTime<Utc>, count: u32) -> Result<Vec<MonthSpan>> {
    let current = month_number(now);
    let first = current - i64::from(count) + 1;
    (first..=current)
        .map(|number| {
            let start = first_of(number)?;
            let end = first_of(number + 1)?;
            Ok(MonthSpan {
                key: start.format("%Y-%m").to_string(),
                label: start.format("%b %Y").to_string(),
                start_ms: start.timestamp_millis(),
                end_ms: end.timestamp_millis(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("valid time")
            .with_timezone(&Utc)
    }

    #[test]
    fn months_end_with_the_current_one_oldest_first() {
        let months = months_ending_at(at("2026-11-22T10:00:00Z"), 3).expect("months");
        let keys: Vec<_> = months.iter().map(|m| m.key.as_str()).collect();
        let labels: Vec<_> = months.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(keys, ["2026-09", "2026-10", "2026-11"]);
        assert_eq!(labels, ["Sep 2026", "Oct 2026", "Nov 2026"]);
        assert_eq!(
            months[2].start_ms,
            at("2026-11-01T00:00:00Z").timestamp_millis()
        );
        assert_eq!(
            months[2].end_ms,
            at("2026-12-01T00:00:00Z").timestamp_millis()
        );
        assert_eq!(months[0].end_ms, months[1].start_ms);
    }

    #[test]
    fn months_cross_the_new_year() {
        let months = months_ending_at(at("2027-01-01T00:00:00Z"), 2).expect("months");
        assert_eq!(months[0].key, "2026-12");
        assert_eq!(months[0].label, "Dec 2026");
        assert_eq!(months[1].key, "2027-01");
        assert_eq!(
            months[1].start_ms,
            at("2027-01-01T00:00:00Z").timestamp_millis()
        );
    }

    #[test]
    fn the_last_millisecond_of_a_month_is_still_that_month() {
        let months = months_ending_at(at("2026-02-28T23:59:59.999Z"), 1).expect("months");
        assert_eq!(months[0].key, "2026-02");
        assert_eq!(
            months[0].end_ms,
            at("2026-03-01T00:00:00Z").timestamp_millis()
        );
    }
}
