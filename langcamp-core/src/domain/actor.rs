//! Who is calling: every core operation takes an [`Actor`] and checks it itself, so HTTP,
//! the CLI and the console share one set of rules.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::error::{Error, Result};

/// A user's role; each role passes the checks of the roles below it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Admin,
    Superadmin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::User, Role::Admin, Role::Superadmin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
            Role::Superadmin => "superadmin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(s: &str) -> Result<Role> {
        match s.trim() {
            "user" => Ok(Role::User),
            "admin" => Ok(Role::Admin),
            "superadmin" => Ok(Role::Superadmin),
            other => Err(Error::invalid(format!(
                "role must be one of user, admin, superadmin (got {other:?})"
            ))),
        }
    }
}

/// Where a request came from, for the audit trail: the request's `X-Request-Id` and the
/// client's address. The HTTP front end sets it; other callers have none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub request_id: std::sync::Arc<str>,
    pub client_address: std::net::IpAddr,
}

/// A signed-in user, as established from a valid access token and the current database row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub user_id: String,
    /// The address in the database now (the audit trail names staff by it).
    pub email: String,
    /// The role in the database now, not the one in the token.
    pub role: Role,
    pub session_id: String,
    pub token_id: String,
    /// When the access token expires (epoch ms); a blacklist entry lives until then.
    pub token_expires_at: i64,
    /// The request this caller is making, when it came over HTTP.
    pub origin: Option<Origin>,
}

impl Caller {
    /// The caller making the request `origin`.
    pub fn with_origin(mut self, origin: Origin) -> Caller {
        self.origin = Some(origin);
        self
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    Anonymous,
    User(Caller),
    /// The operator at the `langcamp` command or the console: trusted like a superadmin.
    Operator,
}

impl Actor {
    /// The signed-in user, or 401.
    pub fn caller(&self) -> Result<&Caller> {
        match self {
            Actor::User(caller) => Ok(caller),
            Actor::Anonymous | Actor::Operator => Err(Error::Unauthorized),
        }
    }

    /// The role this actor acts with, if any.
    pub fn role(&self) -> Option<Role> {
        match self {
            Actor::Anonymous => None,
            Actor::User(caller) => Some(caller.role),
            Actor::Operator => Some(Role::Superadmin),
        }
    }

    /// Passes when the actor has at least `role`: 401 when anonymous, 403 when too low.
    pub fn require(&self, role: Role) -> Result<()> {
        match self.role() {
            None => Err(Error::Unauthorized),
            Some(have) if have >= role => Ok(()),
            Some(_) => Err(Error::forbidden()),
        }
    }

    pub fn is_admin(&self) -> bool {
        self.role().is_some_and(|r| r >= Role::Admin)
    }

    /// The user id of a signed-in user, for audit columns; `None` for the operator.
    pub fn user_id(&self) -> Option<&str> {
        match self {
            Actor::User(caller) => Some(&caller.user_id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role) -> Actor {
        Actor::User(Caller {
            user_id: "u".into(),
            email: "u@example.com".into(),
            role,
            session_id: "s".into(),
            token_id: "j".into(),
            token_expires_at: 0,
            origin: None,
        })
    }

    #[test]
    fn higher_roles_pass_lower_checks() {
        assert!(matches!(
            Actor::Anonymous.require(Role::User),
            Err(Error::Unauthorized)
        ));
        assert!(user(Role::User).require(Role::User).is_ok());
        assert!(matches!(
            user(Role::User).require(Role::Admin),
            Err(Error::Forbidden(_))
        ));
        assert!(user(Role::Admin).require(Role::Admin).is_ok());
        assert!(matches!(
            user(Role::Admin).require(Role::Superadmin),
            Err(Error::Forbidden(_))
        ));
        assert!(user(Role::Superadmin).require(Role::Admin).is_ok());
        assert!(Actor::Operator.require(Role::Superadmin).is_ok());
    }

    #[test]
    fn roles_parse_from_their_lowercase_names() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>().ok(), Some(role));
        }
        assert!("Admin".parse::<Role>().is_err());
    }
}
