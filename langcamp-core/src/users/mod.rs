//! Users: profiles, registration, and administration by admins and the operator.
//!
//! Here: the operations and what they answer; [`input`] holds what clients send and the
//! parse of a profile body, `store` the SQL.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Langcamp;
use crate::domain::Deleted;
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::{looks_like_id, new_id};
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::domain::validate::Email;
use crate::platform::changes::Change;
use crate::webhooks::Event;

mod input;
pub mod operator;
mod store;
pub(crate) use store::SEARCH_INDEX;

pub use self::input::{
    AdminProfileInput, EmailInput, GENDERS, Gender, NewUser, ProfileChange, ProfileInput,
    Registration, RegistrationInput, RoleInput, UserFilter, UserQuery,
};
pub(crate) use self::store::chunk_after as export_chunk;
use self::store::require_user;
pub(crate) use self::store::{create_user_if_new, find_user, find_user_by_email, user_columns};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: Option<String>,
    pub role: Role,
    pub is_registration_complete: bool,
    pub age: Option<i64>,
    #[schema(example = "female")]
    pub gender: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    #[schema(example = "+49")]
    pub country_code: Option<String>,
    pub phone_number: Option<String>,
    #[schema(example = "en")]
    pub locale: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl User {
    /// The user's id, typed.
    pub fn typed_id(&self) -> Id<User> {
        Id::from(&self.id)
    }
}
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationStatus {
    pub is_registration_complete: bool,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletedRegistration {
    pub user: User,
    pub registration_complete: bool,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct UserEnvelope {
    pub user: User,
}

/// May `actor` change or delete `target`? Admins manage users; only a superadmin manages
/// admins and superadmins (an admin who could change a superadmin's e-mail could sign in as them).
fn may_manage(actor: &Actor, target: &User) -> Result<()> {
    actor.require(Role::Admin)?;
    if target.role >= Role::Admin {
        actor.require(Role::Superadmin)?;
    }
    Ok(())
}

/// The answer for an id that names no user.
fn no_user() -> Error {
    Error::not_found("user")
}

impl Langcamp {
    /// `GET /me`: the caller's own profile.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn me(&self, actor: &Actor) -> Result<User> {
        // Open before the second factor too: the client shows whose sign-in it is.
        let caller = actor.caller_before_second_factor()?;
        // The token check just filled or confirmed this entry of the live sign-ins.
        let now = self.clock().now_ms();
        if let Some(live) = self
            .sessions()
            .get(&caller.session_id, &caller.user_id, now)
        {
            return Ok(User::clone(&live.user));
        }
        let mut conn = self.db().reader().acquire().await?;
        find_user(&mut *conn, &caller.user_id)
            .await?
            .ok_or(Error::TokenInvalid)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn registration_status(&self, actor: &Actor) -> Result<RegistrationStatus> {
        let user = self.me(actor).await?;
        Ok(RegistrationStatus {
            is_registration_complete: user.is_registration_complete,
        })
    }

    /// Completes a first sign-in's profile; 409 when already complete.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn complete_registration(
        &self,
        actor: &Actor,
        registration: Registration,
    ) -> Result<CompletedRegistration> {
        let caller = actor.caller()?;
        let Registration(change) = registration;
        let announce = self.announcement(Event::UserRegistered).await?;
        let announced = announce.is_some();
        let complete = store::CompleteRegistration {
            app: self.clone(),
            id: caller.user_id.clone(),
            change,
            now: self.clock().now_ms(),
            announce,
        };
        let user = self
            .write_change(complete, Some(Change::User(caller.user_id.clone())))
            .await?;
        self.wake_webhooks(announced);
        Ok(CompletedRegistration {
            user,
            registration_complete: true,
        })
    }

    /// `PATCH /me/profile`: any subset of the profile fields.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update_my_profile(&self, actor: &Actor, change: ProfileChange) -> Result<User> {
        let caller = actor.caller()?;
        // The user's own data: not a staff action, so not audited.
        let work = store::ChangeOwn {
            app: self.clone(),
            id: caller.user_id.clone(),
            change,
            now: self.clock().now_ms(),
        };
        self.write_change(work, Some(Change::User(caller.user_id.clone())))
            .await
    }

    /// `GET /users`: newest first, filtered.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_users(
        &self,
        actor: &Actor,
        query: &UserQuery,
        page: PageRequest,
    ) -> Result<Page<User>> {
        actor.require(Role::Admin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        let (list, total) = store::list(&mut snapshot, query, page).await?;
        Ok(Page::new(list, page, total))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_user(&self, actor: &Actor, id: &Id<User>) -> Result<User> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        require_user(&mut *conn, id.as_str()).await
    }

    /// Looks a user up by e-mail (operator tools).
    pub async fn get_user_by_email(&self, actor: &Actor, email: &Email) -> Result<User> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        find_user_by_email(&mut *conn, email.as_str())
            .await?
            .ok_or_else(no_user)
    }

    /// `PATCH /users/{id}/role`: superadmin only; the last superadmin stays.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn set_role(&self, actor: &Actor, id: &Id<User>, role: Role) -> Result<User> {
        actor.require(Role::Superadmin)?;
        // Step-up (CONTRACT §20): a role change needs a recent second-factor check.
        self.require_step_up(actor)?;
        if !looks_like_id(id.as_str()) {
            return Err(no_user());
        }
        let set = store::SetRole {
            id: id.as_str().to_owned(),
            role,
        };
        self.staff_write(actor, set, Some(Change::User(id.as_str().to_owned())))
            .await
    }

    /// `PATCH /users/{id}/email`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn set_user_email(&self, actor: &Actor, id: &Id<User>, email: Email) -> Result<User> {
        actor.require(Role::Admin)?;
        let change = ProfileChange {
            email: Some(email),
            ..ProfileChange::default()
        };
        self.change_user(actor, id, change, "user.email_changed")
            .await
    }

    /// `PATCH /admin/users/{id}/profile`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn admin_update_profile(
        &self,
        actor: &Actor,
        id: &Id<User>,
        change: ProfileChange,
    ) -> Result<UserEnvelope> {
        actor.require(Role::Admin)?;
        let user = self
            .change_user(actor, id, change, "user.profile_updated")
            .await?;
        Ok(UserEnvelope { user })
    }

    /// Writes staff's `change` to the user `id` as one staff write recorded as `action`
    /// (404 when there is no such user: a malformed id opens no write), allowed only on a
    /// user the actor may manage. Another user's e-mail is their first factor, so changing
    /// it needs step-up (CONTRACT §22). The user's held sign-ins are forgotten.
    async fn change_user(
        &self,
        actor: &Actor,
        id: &Id<User>,
        change: ProfileChange,
        action: &'static str,
    ) -> Result<User> {
        if change.email.is_some() && actor.user_id() != Some(id.as_str()) {
            self.require_step_up(actor)?;
        }
        if !looks_like_id(id.as_str()) {
            return Err(no_user());
        }
        let work = store::ChangeUser {
            id: id.as_str().to_owned(),
            change,
            action,
        };
        let change = Change::User(id.as_str().to_owned());
        self.staff_write(actor, work, Some(change)).await
    }

    /// `DELETE /users/{id}`: removes the user with their sessions, results and assignments.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_user(&self, actor: &Actor, id: &Id<User>) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        // Step-up (CONTRACT §20): so does deleting a user.
        self.require_step_up(actor)?;
        if !looks_like_id(id.as_str()) {
            return Err(no_user());
        }
        let id = id.as_str().to_owned();
        let delete = store::DeleteUser { id: id.clone() };
        self.staff_write(actor, delete, Some(Change::User(id.clone())))
            .await?;
        Ok(Deleted { id, deleted: true })
    }

    /// Creates a user directly (operator tools); registration is complete when a name is given.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_user(&self, actor: &Actor, new: NewUser) -> Result<User> {
        actor.require(Role::Superadmin)?;
        let NewUser { email, role, name } = new;
        let announce = match name {
            Some(_) => self.announcement(Event::UserRegistered).await?,
            None => None,
        };
        let announced = announce.is_some();
        let create = store::CreateUser {
            id: new_id(),
            email,
            role,
            name,
            announce,
        };
        let user = self.staff_write(actor, create, None).await?;
        self.wake_webhooks(announced);
        Ok(user)
    }
}
