//! The query of the dashboard.

use serde::Deserialize;
use utoipa::IntoParams;

use super::{DEFAULT_MONTHS, MAX_MONTHS};
use crate::error::{Error, Result};

/// Query of `GET /admin/dashboard`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct DashboardQuery {
    /// Calendar months covered by `trends`, ending with the current one: 1 to 24, default 6.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 24, example = 6)]
    pub months: Option<String>,
}

impl DashboardQuery {
    /// A query for `months` months (tools that have a number already).
    pub fn months(months: u32) -> DashboardQuery {
        DashboardQuery {
            months: Some(months.to_string()),
        }
    }
}

pub(super) fn parse_months(raw: Option<&str>) -> Result<u32> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_MONTHS);
    };
    match raw.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_MONTHS).contains(&n) => Ok(n),
        _ => Err(Error::invalid(format!(
            "months must be a whole number from 1 to {MAX_MONTHS}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
