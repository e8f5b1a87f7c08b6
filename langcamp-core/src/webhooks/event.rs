//! The events the school's own systems can hear (CONTRACT §24), and the set of them an
//! endpoint hears as it is stored.

use serde::Serialize;
use utoipa::ToSchema;

/// Something that happened here that a school's system may want to hear of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, ToSchema)]
pub enum Event {
    /// A contact request arrived (`data`: the contact request).
    #[serde(rename = "contact.created")]
    ContactCreated,
    /// A user completed their registration (`data`: the user).
    #[serde(rename = "user.registered")]
    UserRegistered,
    /// A placement result was stored, of a fixed or an adaptive test (`data`: the result
    /// without its answers).
    #[serde(rename = "result.created")]
    ResultCreated,
    /// A material was assigned to a user (`data`: `{materialId, userId, assignedAt}`).
    #[serde(rename = "material.assigned")]
    MaterialAssigned,
}

impl Event {
    pub const ALL: [Event; 4] = [
        Event::ContactCreated,
        Event::UserRegistered,
        Event::ResultCreated,
        Event::MaterialAssigned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Event::ContactCreated => "contact.created",
            Event::UserRegistered => "user.registered",
            Event::ResultCreated => "result.created",
            Event::MaterialAssigned => "material.assigned",
        }
    }

    pub fn parse(raw: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.as_str() == raw.trim())
    }
}

/// The stored form of an endpoint's events: each name between commas
/// (`,contact.created,result.created,`), so that hearing one is one `LIKE`.
pub(super) fn stored(events: &[Event]) -> String {
    let mut sorted = events.to_vec();
    sorted.sort();
    sorted.dedup();
    let names: Vec<&str> = sorted.iter().map(|e| e.as_str()).collect();
    format!(",{},", names.join(","))
}

/// The events of a stored set (a name this build does not know is left out).
pub(super) fn from_stored(text: &str) -> Vec<Event> {
    text.split(',').filter_map(Event::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_stored_sorted_once_each_and_read_back() {
        let set = [
            Event::ResultCreated,
            Event::ContactCreated,
            Event::ResultCreated,
        ];
        let text = stored(&set);
        assert_eq!(text, ",contact.created,result.created,");
        assert_eq!(
            from_stored(&text),
            vec![Event::ContactCreated, Event::ResultCreated]
        );
        assert_eq!(
            from_stored(",contact.created,course.renamed,"),
            vec![Event::ContactCreated]
        );
    }
}
