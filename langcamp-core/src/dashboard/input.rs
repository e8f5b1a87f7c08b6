//! The query of the dashboard, and the number of months it becomes.

use serde::Deserialize;
use utoipa::IntoParams;

use super::{DEFAULT_MONTHS, MAX_MONTHS};
use crate::domain::error::{Error, Result};

/// Query of `GET /admin/dashboard`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct DashboardQuery {
    /// Calendar months covered by `trends`, ending with the current one: 1 to 24, default 6.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 24, example = 6)]
    pub months: Option<String>,
}

/// How many calendar months `trends` covers, ending with the current one: 1 to 24.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrendMonths(u32);

impl TrendMonths {
    /// `months`, when it is 1 to [`MAX_MONTHS`].
    pub fn new(months: u32) -> Result<TrendMonths> {
        if (1..=MAX_MONTHS).contains(&months) {
            Ok(TrendMonths(months))
        } else {
            Err(Error::invalid(format!(
                "months must be a whole number from 1 to {MAX_MONTHS}"
            )))
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl Default for TrendMonths {
    fn default() -> TrendMonths {
        TrendMonths(DEFAULT_MONTHS)
    }
}

/// Absent is the default; anything else must be a whole number from 1 to 24.
impl TryFrom<&DashboardQuery> for TrendMonths {
    type Error = Error;

    fn try_from(query: &DashboardQuery) -> Result<TrendMonths> {
        let Some(raw) = query.months.as_deref() else {
            return Ok(TrendMonths::default());
        };
        // A number that is not a `u32` is out of range too: one message for both.
        TrendMonths::new(raw.trim().parse::<u32>().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_months(raw: Option<&str>) -> Result<u32> {
        let query = DashboardQuery {
            months: raw.map(str::to_owned),
        };
        TrendMonths::try_from(&query).map(TrendMonths::get)
    }

    #[test]
    fn months_default_to_six_and_accept_one_to_twenty_four() {
        assert_eq!(parse_months(None).ok(), Some(6));
        assert_eq!(parse_months(Some("1")).ok(), Some(1));
        assert_eq!(parse_months(Some(" 24 ")).ok(), Some(24));
        for bad in ["0", "25", "-1", "abc", "", "6.5", "99999999999"] {
            assert!(
                matches!(parse_months(Some(bad)), Err(Error::Validation(_))),
                "{bad:?}"
            );
        }
    }
}
