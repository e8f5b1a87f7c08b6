//! The operator acting on a user's behalf. A few operations belong to a signed-in user
//! (taking a placement test); the demo seed and the console's tests need them done for a
//! student, so the operator (and only the operator) may take a student's place.

use crate::domain::Id;
use crate::users::User;
use crate::{Actor, Assurance, Caller, Langcamp, Result};

/// The session of the operator acting as a user. No sign-in has this id, so the cache of
/// live sessions never answers for it and each operation reads the user's row itself.
pub const OPERATOR_SESSION: &str = "operator";

impl Langcamp {
    /// The operator in the place of the user `user_id`, with the role the user has now;
    /// 404 when there is no such user.
    pub async fn act_as(&self, actor: &Actor, user_id: &Id<User>) -> Result<Actor> {
        actor.require_operator()?;
        let user = self.get_user(actor, user_id).await?;
        Ok(Actor::User(Caller {
            user_id: user.id,
            email: user.email,
            role: user.role,
            session_id: OPERATOR_SESSION.to_owned(),
            token_id: OPERATOR_SESSION.to_owned(),
            token_expires_at: 0,
            origin: None,
            assurance: Assurance::FULL,
        }))
    }
}
