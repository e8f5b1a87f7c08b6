//! Typed identifiers: `Id<Material>` and `Id<User>` are different types, so passing a
//! user's id where a material's is expected (or swapping two arguments) does not compile.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
        Id::from(crate::id::new_id())
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    pub fn into_string(self) -> String {
        self.raw
    }

    /// Whether this could be an id we issued (see [`crate::id::looks_like_id`]).
    pub fn is_well_formed(&self) -> bool {
        crate::id::looks_like_id(&self.raw)
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

/// What a delete answers: the id of the record that is gone.
impl<T> From<&Id<T>> for crate::users::Deleted {
    fn from(id: &Id<T>) -> crate::users::Deleted {
        crate::users::Deleted {
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
}
