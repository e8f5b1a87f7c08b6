//! Typed identifiers: `Id<Material>` and `Id<User>` are different types, so passing a
//! user's id where a material's is expected (or swapping two arguments) does not compile.
//!
//! Every id is a UUID v7 string, time-ordered so inserts stay at the end of indexes.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A new identifier for any record.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A new UUID v7 for things that need uniqueness but no strict order, such as request
/// ids: made without [`new_id`]'s process-wide lock (which keeps ids from one process in
/// strict order within a millisecond, and which request ids made on two threads at once
/// queued on) and without a system call for randomness: 74 random bits from a generator
/// per thread, seeded once from the OS-seeded keys of `std`'s hasher.
pub fn new_unordered_id() -> String {
    use std::cell::Cell;
    use std::hash::{BuildHasher, RandomState};

    thread_local! {
        static STATE: Cell<u64> =
            Cell::new(RandomState::new().hash_one(std::thread::current().id()));
    }
    // SplitMix64: a full-period generator whose outputs pass statistical tests; these ids
    // need to differ, not to be unpredictable (they are echoed to the client anyway).
    let next = || {
        STATE.with(|state| {
            let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            state.set(z);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    };
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&next().to_le_bytes());
    random[8..].copy_from_slice(&next().to_le_bytes()[..2]);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    uuid::Builder::from_unix_timestamp_millis(millis, &random)
        .into_uuid()
        .to_string()
}

/// Whether `text` could be an identifier we issued; a malformed id is simply not found,
/// so callers use this to answer 404 without a query.
pub fn looks_like_id(text: &str) -> bool {
    uuid::Uuid::try_parse(text).is_ok()
}

/// The id of a record of kind `T` (the resource's output type names the kind: `Id<User>`,
/// `Id<Material>`, `Id<Course>`, `Id<Contact>`). The same string as before on the wire and
/// in the database; the type parameter costs nothing at run time.
///
/// An id named by a client is not checked when it is made: a malformed one is simply a
/// record that does not exist, and the operation answers 404 after its authorization
/// check ([`Id::is_well_formed`] lets it skip the query).
pub struct Id<T> {
    raw: String,
    // `fn() -> T`: neither owns a `T` nor inherits its auto traits (`Send`, `Sync`).
    kind: PhantomData<fn() -> T>,
}

impl<T> Id<T> {
    /// A new id (UUID v7, time-ordered) for a record about to be inserted.
    pub fn new() -> Id<T> {
        Id::from(new_id())
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    pub fn into_string(self) -> String {
        self.raw
    }

    /// Whether this could be an id we issued (see [`looks_like_id`]).
    pub fn is_well_formed(&self) -> bool {
        looks_like_id(&self.raw)
    }
}

impl<T> Default for Id<T> {
    fn default() -> Id<T> {
        Id::new()
    }
}

impl<T> From<String> for Id<T> {
    fn from(raw: String) -> Id<T> {
        Id {
            raw,
            kind: PhantomData,
        }
    }
}

impl<T> From<&str> for Id<T> {
    fn from(raw: &str) -> Id<T> {
        Id::from(raw.to_owned())
    }
}

impl<T> From<&String> for Id<T> {
    fn from(raw: &String) -> Id<T> {
        Id::from(raw.clone())
    }
}

// Written by hand: derives would demand `T: Clone` (and so on) of the marker type.
impl<T> Clone for Id<T> {
    fn clone(&self) -> Id<T> {
        Id::from(self.raw.clone())
    }
}

impl<T> PartialEq for Id<T> {
    fn eq(&self, other: &Id<T>) -> bool {
        self.raw == other.raw
    }
}

impl<T> Eq for Id<T> {}

impl<T> Hash for Id<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}

impl<T> fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.raw, f)
    }
}

impl<T> fmt::Display for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl<T> AsRef<str> for Id<T> {
    fn as_ref(&self) -> &str {
        &self.raw
    }
}

// What a delete answers: the id of the record that is gone (`{id, deleted: true}`); a
// plain comment, since a doc comment would become the schema's description.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Deleted {
    pub id: String,
    pub deleted: bool,
}

impl<T> From<&Id<T>> for Deleted {
    fn from(id: &Id<T>) -> Deleted {
        Deleted {
            id: id.as_str().to_owned(),
            deleted: true,
        }
    }
}

impl<T> Serialize for Id<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de, T> Deserialize<'de> for Id<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id<T>, D::Error> {
        String::deserialize(deserializer).map(Id::from)
    }
}

impl<T> utoipa::PartialSchema for Id<T> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <String as utoipa::PartialSchema>::schema()
    }
}

impl<T> utoipa::ToSchema for Id<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thing;

    #[test]
    fn ids_are_their_string_on_the_wire() {
        let id: Id<Thing> = Id::new();
        assert!(id.is_well_formed());
        let json = serde_json::to_string(&id).expect("serializes");
        assert_eq!(json, format!("\"{id}\""));
        let back: Id<Thing> = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, id);
        assert!(!Id::<Thing>::from("not-an-id").is_well_formed());
    }

    #[test]
    fn unordered_ids_are_version_7_and_differ() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| new_unordered_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(10) {
            let uuid = uuid::Uuid::try_parse(id).expect("a uuid");
            assert_eq!(uuid.get_version_num(), 7);
            assert!(looks_like_id(id));
        }
    }
}
