//! Where a contact request stands.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::error::Error;

/// Where a contact request stands. New requests are `PENDING`; a reply makes it `REPLIED`;
/// admins may set any value at any time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContactStatus {
    Pending,
    InProgress,
    Replied,
    Closed,
}

impl ContactStatus {
    pub const ALL: [ContactStatus; 4] = [
        ContactStatus::Pending,
        ContactStatus::InProgress,
        ContactStatus::Replied,
        ContactStatus::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ContactStatus::Pending => "PENDING",
            ContactStatus::InProgress => "IN_PROGRESS",
            ContactStatus::Replied => "REPLIED",
            ContactStatus::Closed => "CLOSED",
        }
    }

    /// A status as clients send it: trimmed, exactly one of the four upper-case values.
    pub fn parse(field: &str, raw: &str) -> Result<ContactStatus, String> {
        let value = raw.trim();
        ContactStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == value)
            .ok_or_else(|| format!("{field} must be one of PENDING, IN_PROGRESS, REPLIED, CLOSED"))
    }
}

impl fmt::Display for ContactStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ContactStatus {
    type Err = Error;

    fn from_str(s: &str) -> Result<ContactStatus, Error> {
        ContactStatus::parse("status", s).map_err(Error::invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_four_contract_values_only() {
        for status in ContactStatus::ALL {
            assert_eq!(status.as_str().parse::<ContactStatus>().ok(), Some(status));
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(serde_json::Value::String(status.as_str().into()))
            );
        }
        assert!("pending".parse::<ContactStatus>().is_err());
        assert!("OPEN".parse::<ContactStatus>().is_err());
    }
}
