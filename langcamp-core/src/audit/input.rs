//! The trail's filters as clients send them, and the validated query they become.

use serde::Deserialize;
use utoipa::IntoParams;

use crate::domain::error::Result;
use crate::domain::time::Timestamp;
use crate::domain::validate::{Problems, search_text};

/// Query of `GET /admin/audit`; every filter is optional and they combine.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct AuditFilter {
    /// Only actions by this user id.
    pub actor_id: Option<String>,
    /// Only actions on this kind of record (`user`, `course`, `test`, `result`,
    /// `material`, `contact`, `setting`, `mail_template`, `export`, ...).
    pub target_type: Option<String>,
    /// Only actions on this record (with `targetType`).
    pub target_id: Option<String>,
    /// Only this action, e.g. `user.role_changed`.
    pub action: Option<String>,
    /// Only entries at or after this time (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub from: Option<String>,
    /// Only entries before this time (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub to: Option<String>,
}

/// A validated [`AuditFilter`]: empty values are no filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditQuery {
    pub actor_id: Option<String>,
    /// The actor's e-mail or operator name (the `langcamp audit` command's `--actor`).
    pub actor_email: Option<String>,
    pub target_type: Option<String>,
    pub target_id: Option<String>,
    pub action: Option<String>,
    /// Epoch milliseconds, inclusive.
    pub from: Option<i64>,
    /// Epoch milliseconds, exclusive.
    pub to: Option<i64>,
}

impl TryFrom<&AuditFilter> for AuditQuery {
    type Error = crate::Error;

    fn try_from(filter: &AuditFilter) -> Result<AuditQuery> {
        let mut problems = Problems::new();
        let from = problems.take(time("from", filter.from.as_deref()));
        let to = problems.take(time("to", filter.to.as_deref()));
        problems.finish()?;
        Ok(AuditQuery {
            actor_id: search_text(filter.actor_id.as_deref()),
            actor_email: None,
            target_type: search_text(filter.target_type.as_deref()),
            target_id: search_text(filter.target_id.as_deref()),
            action: search_text(filter.action.as_deref()),
            from: from.flatten(),
            to: to.flatten(),
        })
    }
}

/// An optional RFC 3339 time as epoch milliseconds (given, it must be one: a blank value
/// is refused like any other that is not a time).
pub fn time(field: &str, raw: Option<&str>) -> std::result::Result<Option<i64>, String> {
    match raw {
        None => Ok(None),
        Some(text) => chrono::DateTime::parse_from_rfc3339(text.trim())
            .map(|t| Some(Timestamp(t.to_utc()).millis()))
            .map_err(|_| format!("{field} must be an RFC 3339 time such as 2026-11-22T10:00:00Z")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_and_each_bad_one_is_named() {
        let filter = AuditFilter {
            from: Some("2026-11-22T10:00:00Z".into()),
            ..AuditFilter::default()
        };
        let query = AuditQuery::try_from(&filter).expect("valid");
        assert_eq!(query.from, Some(1_795_341_600_000));
        assert_eq!(query.to, None);
        let bad = AuditFilter {
            from: Some("yesterday".into()),
            to: Some(" ".into()),
            ..AuditFilter::default()
        };
        match AuditQuery::try_from(&bad) {
            Err(crate::Error::Validation(messages)) => assert_eq!(messages.len(), 2),
            other => panic!("{other:?}"),
        }
    }
}
