//! What staff send about webhook endpoints (the wire inputs, with their OpenAPI schemas),
//! and the validated commands the operations take. Where a URL's host resolves is checked
//! by the operation (a network lookup), and again at every delivery.

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::event::Event;
use crate::domain::Text;
use crate::domain::error::{Error, Result};
use crate::domain::validate::{Patch, Problems, passed};

/// The longest endpoint URL.
pub const URL_MAX: usize = 2048;

/// An endpoint's description (up to 500 characters).
pub type Description = Text<500>;

/// The body of `POST /admin/webhooks`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndpointInput {
    /// Where deliveries are POSTed: `https://` (`http://` only into
    /// `WEBHOOK_ALLOWED_NETWORKS`); no private, loopback or link-local host.
    #[schema(value_type = String, format = "uri", max_length = 2048, example = "https://crm.school.example/hooks/langcamp")]
    pub url: Option<String>,
    /// The events it hears: a non-empty subset of `contact.created`, `user.registered`,
    /// `result.created` and `material.assigned`.
    #[schema(value_type = Vec<Event>, min_items = 1, example = json!(["contact.created", "result.created"]))]
    pub events: Option<Vec<String>>,
    /// Up to 500 characters.
    #[schema(value_type = Option<String>, max_length = 500, example = "The CRM")]
    pub description: Option<String>,
}

/// The body of `PATCH /admin/webhooks/{id}`: absent fields stay; `description: null`
/// clears it.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndpointUpdate {
    #[serde(default)]
    #[schema(value_type = String, format = "uri", max_length = 2048)]
    pub url: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Vec<Event>, min_items = 1)]
    pub events: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 500)]
    pub description: Patch<String>,
    /// `false` stops new deliveries (and pauses those waiting); `true` resumes.
    #[serde(default)]
    #[schema(value_type = bool)]
    pub enabled: Patch<bool>,
}

/// The filter of `GET /admin/webhooks/{id}/deliveries`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryFilter {
    /// `pending`, `delivered` or `failed` (empty: every status); another value is 400.
    #[param(value_type = Option<String>, pattern = r"^\s*(pending|delivered|failed)?\s*$")]
    pub status: Option<String>,
}

/// A validated [`EndpointInput`].
#[derive(Clone, Debug, PartialEq)]
pub struct NewEndpoint {
    pub url: url::Url,
    pub events: Vec<Event>,
    pub description: Option<Description>,
}

/// A validated [`EndpointUpdate`]: `None` leaves a field as it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EndpointChange {
    pub url: Option<url::Url>,
    pub events: Option<Vec<Event>>,
    pub description: Option<Option<Description>>,
    pub enabled: Option<bool>,
}

/// A delivery's state, for the log's filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryStatus {
    Pending,
    Delivered,
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }
}

/// A validated [`DeliveryFilter`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveryQuery {
    pub status: Option<DeliveryStatus>,
}

impl TryFrom<&DeliveryFilter> for DeliveryQuery {
    type Error = Error;

    fn try_from(filter: &DeliveryFilter) -> Result<DeliveryQuery> {
        let status = match filter.status.as_deref().map(str::trim) {
            None | Some("") => None,
            Some("pending") => Some(DeliveryStatus::Pending),
            Some("delivered") => Some(DeliveryStatus::Delivered),
            Some("failed") => Some(DeliveryStatus::Failed),
            Some(_) => {
                return Err(Error::invalid(
                    "status must be pending, delivered or failed",
                ));
            }
        };
        Ok(DeliveryQuery { status })
    }
}

/// The form of an endpoint's URL: `http(s)://`, a host, no user name or password, at most
/// [`URL_MAX`] characters. Where it leads is the operation's check.
fn url(raw: &str) -> std::result::Result<url::Url, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err("url is required".into());
    }
    if raw.chars().count() > URL_MAX {
        return Err(format!("url must be at most {URL_MAX} characters"));
    }
    let url = url::Url::parse(raw).map_err(|_| "url must be an https:// address".to_owned())?;
    if !matches!(url.scheme(), "https" | "http") || url.host().is_none() {
        return Err("url must be an https:// address".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("url must not carry a user name or password".into());
    }
    Ok(url)
}

/// A non-empty set of known events, each named at most once.
fn events(raw: &[String]) -> std::result::Result<Vec<Event>, String> {
    if raw.is_empty() {
        return Err("events must name at least one event".into());
    }
    let mut events = Vec::with_capacity(raw.len());
    for name in raw {
        let event = Event::parse(name).ok_or_else(|| {
            format!(
                "events: unknown event {name:?}; the events are contact.created, user.registered, result.created and material.assigned"
            )
        })?;
        if !events.contains(&event) {
            events.push(event);
        }
    }
    events.sort();
    Ok(events)
}

fn description(raw: &str) -> std::result::Result<Option<Description>, String> {
    Description::parse_optional("description", raw)
}

impl TryFrom<EndpointInput> for NewEndpoint {
    type Error = Error;

    fn try_from(input: EndpointInput) -> Result<NewEndpoint> {
        let mut problems = Problems::new();
        let url = problems.take(url(input.url.as_deref().unwrap_or("")));
        let events = problems.take(match &input.events {
            Some(names) => events(names),
            None => Err("events is required".into()),
        });
        let description = problems.take(description(input.description.as_deref().unwrap_or("")));
        problems.finish()?;
        Ok(NewEndpoint {
            url: passed(url)?,
            events: passed(events)?,
            description: passed(description)?,
        })
    }
}

impl TryFrom<EndpointUpdate> for EndpointChange {
    type Error = Error;

    fn try_from(input: EndpointUpdate) -> Result<EndpointChange> {
        let mut problems = Problems::new();
        fn required<T>(problems: &mut Problems, field: &str) -> Option<T> {
            problems.add(format!("{field} cannot be null"));
            None
        }
        let url = match input.url {
            Patch::Absent => None,
            Patch::Null => required(&mut problems, "url"),
            Patch::Value(raw) => problems.take(url(&raw)),
        };
        let events = match input.events {
            Patch::Absent => None,
            Patch::Null => required(&mut problems, "events"),
            Patch::Value(names) => problems.take(events(&names)),
        };
        let enabled = match input.enabled {
            Patch::Absent => None,
            Patch::Null => required(&mut problems, "enabled"),
            Patch::Value(on) => Some(on),
        };
        let description = input.description.clearable_field(
            &mut problems,
            "description",
            Description::parse_optional,
        );
        problems.finish()?;
        Ok(EndpointChange {
            url,
            events,
            description,
            enabled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(json: serde_json::Value) -> Result<NewEndpoint> {
        NewEndpoint::try_from(serde_json::from_value::<EndpointInput>(json).expect("the wire form"))
    }

    #[test]
    fn an_endpoint_needs_an_http_url_and_known_events() {
        let ok = new(serde_json::json!({
            "url": "https://crm.example.com/hook", "events": ["result.created", "contact.created"],
        }))
        .expect("valid");
        assert_eq!(ok.events, vec![Event::ContactCreated, Event::ResultCreated]);
        for (body, message) in [
            (
                serde_json::json!({ "events": ["contact.created"] }),
                "url is required",
            ),
            (
                serde_json::json!({ "url": "ftp://x.example/h", "events": ["contact.created"] }),
                "https://",
            ),
            (
                serde_json::json!({ "url": "https://u:p@x.example/h", "events": ["contact.created"] }),
                "user name",
            ),
            (
                serde_json::json!({ "url": "https://x.example/h", "events": [] }),
                "at least one",
            ),
            (
                serde_json::json!({ "url": "https://x.example/h", "events": ["course.renamed"] }),
                "course.renamed",
            ),
            (
                serde_json::json!({ "url": "https://x.example/h" }),
                "events is required",
            ),
        ] {
            let Err(Error::Validation(messages)) = new(body.clone()) else {
                panic!("{body} was accepted");
            };
            assert!(
                messages.iter().any(|m| m.contains(message)),
                "{body}: {messages:?}"
            );
        }
    }

    #[test]
    fn a_change_keeps_what_it_does_not_name_and_refuses_null_where_needed() {
        let change = |json| {
            EndpointChange::try_from(serde_json::from_value::<EndpointUpdate>(json).expect("wire"))
        };
        let kept = change(serde_json::json!({ "enabled": false })).expect("valid");
        assert_eq!(
            kept,
            EndpointChange {
                enabled: Some(false),
                ..EndpointChange::default()
            }
        );
        let cleared = change(serde_json::json!({ "description": null })).expect("valid");
        assert_eq!(cleared.description, Some(None));
        assert!(change(serde_json::json!({ "url": null })).is_err());
        assert!(change(serde_json::json!({ "events": null })).is_err());
    }
}
