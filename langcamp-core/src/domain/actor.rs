//! Who is calling: every core operation takes an [`Actor`] and checks it itself, so HTTP,
//! the CLI and the console share one set of rules.
//!
//! The second factor (CONTRACT §20) is checked here, once, on the way every operation
//! already takes: [`Actor::caller`] and [`Actor::require`] refuse a sign-in that is held to
//! a second factor it has not passed (`SECOND_FACTOR_REQUIRED`), and such a caller has no
//! role for what public routes show. The few operations open before the second factor
//! (the own account, the factor routes, sign-out) ask for
//! [`Actor::caller_before_second_factor`] instead; step-up is [`Actor::require_recent_factor`].

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

/// How strongly a sign-in is proven, and what its user is held to (CONTRACT §20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assurance {
    /// 1 after the e-mail code alone; 2 after a second factor or a passkey.
    pub level: u8,
    /// The sign-in's latest second-factor check (epoch ms), if any.
    pub factor_checked_at: Option<i64>,
    /// The user has a confirmed factor: step-up applies to them.
    pub has_factor: bool,
    /// The user must reach level 2 before anything but their own account and the factor
    /// routes: staff under `STAFF_SECOND_FACTOR=required`, or anyone with a factor (the
    /// highest assurance available).
    pub second_factor_required: bool,
}

impl Assurance {
    /// Full trust: the operator acting as a user (console, command, seed).
    pub const FULL: Assurance = Assurance {
        level: 2,
        factor_checked_at: None,
        has_factor: false,
        second_factor_required: false,
    };

    /// Whether the sign-in still lacks the second factor its user is held to.
    pub fn lacks_second_factor(&self) -> bool {
        self.second_factor_required && self.level < 2
    }
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
    /// The sign-in's assurance level and what the user is held to.
    pub assurance: Assurance,
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
    /// The signed-in user, or 401; 403 `SECOND_FACTOR_REQUIRED` while their sign-in lacks
    /// the second factor they are held to.
    pub fn caller(&self) -> Result<&Caller> {
        let caller = self.caller_before_second_factor()?;
        if caller.assurance.lacks_second_factor() {
            return Err(Error::SecondFactorRequired);
        }
        Ok(caller)
    }

    /// The signed-in user, or 401, whatever their assurance: for the operations a sign-in
    /// may reach before its second factor (the own account, the factor routes, sign-out).
    pub fn caller_before_second_factor(&self) -> Result<&Caller> {
        match self {
            Actor::User(caller) => Ok(caller),
            Actor::Anonymous | Actor::Operator => Err(Error::Unauthorized),
        }
    }

    /// The role this actor acts with, if any. A sign-in that lacks its second factor has
    /// none: public routes show it what they show anyone.
    pub fn role(&self) -> Option<Role> {
        match self {
            Actor::Anonymous => None,
            Actor::User(caller) if caller.assurance.lacks_second_factor() => None,
            Actor::User(caller) => Some(caller.role),
            Actor::Operator => Some(Role::Superadmin),
        }
    }

    /// Passes when the actor has at least `role`: 401 when anonymous, 403
    /// `SECOND_FACTOR_REQUIRED` while a sign-in lacks its second factor, 403 when too low.
    pub fn require(&self, role: Role) -> Result<()> {
        if let Actor::User(caller) = self
            && caller.assurance.lacks_second_factor()
        {
            return Err(Error::SecondFactorRequired);
        }
        match self.role() {
            None => Err(Error::Unauthorized),
            Some(have) if have >= role => Ok(()),
            Some(_) => Err(Error::forbidden()),
        }
    }

    /// Step-up (CONTRACT §20): passes when the caller's sign-in checked a second factor
    /// within `max_age_ms` of `now_ms`, else 403 `STEP_UP_REQUIRED`. An account without a
    /// factor is not asked (only possible where the policy allows it), nor the operator.
    pub fn require_recent_factor(&self, now_ms: i64, max_age_ms: i64) -> Result<()> {
        let caller = match self {
            Actor::Operator => return Ok(()),
            Actor::Anonymous => return Err(Error::Unauthorized),
            Actor::User(caller) => caller,
        };
        if !caller.assurance.has_factor {
            return Ok(());
        }
        match caller.assurance.factor_checked_at {
            Some(at) if now_ms.saturating_sub(at) <= max_age_ms => Ok(()),
            _ => Err(Error::StepUpRequired),
        }
    }

    /// Passes for the operator only (the `langcamp` command and the console): a signed-in
    /// superadmin does not get to do what only the operator may (act as another user,
    /// stream the whole audit trail); 401 when anonymous, 403 for a user.
    pub fn require_operator(&self) -> Result<()> {
        match self {
            Actor::Operator => Ok(()),
            Actor::Anonymous => Err(Error::Unauthorized),
            Actor::User(_) => Err(Error::forbidden()),
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
            assurance: Assurance::FULL,
        })
    }

    #[test]
    fn only_the_operator_passes_the_operator_check() {
        assert!(Actor::Operator.require_operator().is_ok());
        assert!(matches!(
            Actor::Anonymous.require_operator(),
            Err(Error::Unauthorized)
        ));
        assert!(matches!(
            user(Role::Superadmin).require_operator(),
            Err(Error::Forbidden(_))
        ));
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

    fn signed_in(role: Role, assurance: Assurance) -> Actor {
        match user(role) {
            Actor::User(caller) => Actor::User(Caller {
                assurance,
                ..caller
            }),
            other => other,
        }
    }

    const SHORT: Assurance = Assurance {
        level: 1,
        factor_checked_at: None,
        has_factor: false,
        second_factor_required: true,
    };

    #[test]
    fn a_sign_in_that_lacks_its_second_factor_reaches_only_its_own_account() {
        let admin = signed_in(Role::Admin, SHORT);
        assert!(matches!(
            admin.require(Role::User),
            Err(Error::SecondFactorRequired)
        ));
        assert!(matches!(admin.caller(), Err(Error::SecondFactorRequired)));
        assert!(admin.caller_before_second_factor().is_ok());
        assert!(!admin.is_admin(), "public routes show it what anyone sees");
        let raised = signed_in(Role::Admin, Assurance { level: 2, ..SHORT });
        assert!(raised.require(Role::Admin).is_ok());
        let free = signed_in(
            Role::User,
            Assurance {
                second_factor_required: false,
                ..SHORT
            },
        );
        assert!(
            free.caller().is_ok(),
            "nobody held to a factor works at level 1"
        );
    }

    #[test]
    fn step_up_needs_a_recent_check_only_from_accounts_with_a_factor() {
        let checked_at = |at: Option<i64>| {
            signed_in(
                Role::Superadmin,
                Assurance {
                    level: 2,
                    factor_checked_at: at,
                    has_factor: true,
                    second_factor_required: true,
                },
            )
        };
        let max_age = 600_000;
        assert!(
            checked_at(Some(1_000))
                .require_recent_factor(601_000, max_age)
                .is_ok()
        );
        assert!(matches!(
            checked_at(Some(1_000)).require_recent_factor(601_001, max_age),
            Err(Error::StepUpRequired)
        ));
        assert!(matches!(
            checked_at(None).require_recent_factor(0, max_age),
            Err(Error::StepUpRequired)
        ));
        let without_factor = signed_in(
            Role::Admin,
            Assurance {
                second_factor_required: false,
                ..SHORT
            },
        );
        assert!(without_factor.require_recent_factor(0, max_age).is_ok());
        assert!(Actor::Operator.require_recent_factor(0, max_age).is_ok());
    }
}
