//! The arithmetic of the dashboard's figures: rates rounded to 2 decimals (0 without a
//! denominator), and the 30-day windows built from whole days of the rollups.

use super::rollups::{Days, Series, day_of};

/// Percent `part / whole`, 2 decimals; 0 when `whole` is 0.
pub(super) fn percent(part: i64, whole: i64) -> f64 {
    ratio(part.saturating_mul(100), whole)
}

/// `numerator / denominator`, 2 decimals; 0 when the denominator is 0.
pub(super) fn ratio(numerator: i64, denominator: i64) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        round2(numerator as f64 / denominator as f64)
    }
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Change from `previous` to `current` in percent; 0 when `previous` is 0, as every rate
/// whose denominator is 0 (contract §11).
pub(super) fn growth(current: i64, previous: i64) -> f64 {
    percent(current - previous, previous)
}

/// Rows of `series` at or after `t`: the whole days from `t`'s day on, less the rows of
/// that day before `t` (`head`).
pub(super) fn since(days: &Days, series: Series, t: i64, head: i64) -> i64 {
    days.sum(series, day_of(t), None) - head
}

/// Rows of `series` in `[from, to)`, each bound with the rows of its day before it.
pub(super) fn between(
    days: &Days,
    series: Series,
    (from, from_head): (i64, i64),
    (to, to_head): (i64, i64),
) -> i64 {
    days.sum(series, day_of(from), Some(day_of(to))) - from_head + to_head
}

/// Count and score sum per key, ordered by key.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) count: i64,
    pub(super) score: i64,
}

impl Tally {
    pub(super) fn average(&self) -> f64 {
        ratio(self.score, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::rollups::DAY_MS;

    #[test]
    fn percentages_round_to_two_decimals_and_are_zero_without_a_whole() {
        assert_eq!(percent(1, 3), 33.33);
        assert_eq!(percent(2, 3), 66.67);
        assert_eq!(percent(7, 10), 70.0);
        assert_eq!(percent(5, 0), 0.0);
        assert_eq!(ratio(41, 3), 13.67);
        assert_eq!(ratio(5, 4), 1.25);
        assert_eq!(ratio(5, 0), 0.0);
    }

    #[test]
    fn growth_is_relative_to_the_earlier_window() {
        assert_eq!(growth(5, 2), 150.0);
        assert_eq!(growth(1, 4), -75.0);
        assert_eq!(growth(3, 3), 0.0);
        assert_eq!(growth(3, 0), 0.0);
        assert_eq!(growth(0, 0), 0.0);
    }

    #[test]
    fn windows_add_whole_days_and_correct_for_the_partial_day_at_each_edge() {
        // Rows per day: day 0: 4, day 1: 2, day 2: 6, day 3: 1.
        let days = Days::from_rows(
            (0..4)
                .zip([4, 2, 6, 1])
                .map(|(d, n)| ("users".to_owned(), d * DAY_MS, n)),
        );
        let noon = |d: i64| d * DAY_MS + DAY_MS / 2;
        // Heads: 1 of day 1's 2 rows are before its noon, 5 of day 2's 6 before its noon.
        assert_eq!(since(&days, Series::Users, noon(1), 1), 1 + 6 + 1);
        assert_eq!(since(&days, Series::Users, 0, 0), 13);
        assert_eq!(
            between(&days, Series::Users, (noon(1), 1), (noon(2), 5)),
            1 + 5
        );
        assert_eq!(
            between(&days, Series::Users, (DAY_MS, 0), (3 * DAY_MS, 0)),
            8
        );
        assert_eq!(since(&days, Series::Results, 0, 0), 0);
    }
}
