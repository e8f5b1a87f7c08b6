//! User administration (CONTRACT §4).

use langcamp_core::domain::{Deleted, Email};
use langcamp_core::users::{
    AdminProfileInput, EmailInput, ProfileChange, RoleInput, User, UserEnvelope, UserFilter,
    UserQuery,
};
use langcamp_core::{Page, Result, Role};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::{Ctx, PageParams};
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_list>(RateRule::Default, Access::Admin, list);
    r.add::<__path_get>(RateRule::Default, Access::Admin, get);
    r.add::<__path_delete>(RateRule::Default, Access::Admin, delete);
    r.add::<__path_set_role>(RateRule::Default, Access::Superadmin, set_role);
    r.add::<__path_set_email>(RateRule::Default, Access::Admin, set_email);
    r.add::<__path_update_profile>(RateRule::Default, Access::Admin, update_profile);
}

/// List users, newest first.
#[utoipa::path(get, operation_id = "listUsers", path = "/users", tag = "users",
    params(UserFilter, PageParams),
    responses(
        (status = 200, description = "A page of users", body = Envelope<Page<User>>),
        (status = 400, description = "Bad filter or pagination", body = ErrorEnvelope),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let query = UserQuery::try_from(&UserFilter {
        q: ctx.query("q").map(str::to_owned),
        is_registration_complete: ctx.query("isRegistrationComplete").map(str::to_owned),
        role: ctx.query("role").map(str::to_owned),
    })?;
    Ok(Reply::ok(&ctx.app.list_users(&actor, &query, page).await?))
}

/// One user.
#[utoipa::path(get, operation_id = "getUser", path = "/users/{id}", tag = "users",
    params(("id" = String, Path, description = "User id")),
    responses(
        (status = 200, description = "The user", body = Envelope<User>),
        (status = 404, description = "No such user", body = ErrorEnvelope),
    ))]
pub async fn get(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.get_user(&actor, &ctx.id("id")).await?))
}

/// Delete a user with their sessions, results and assignments. Admins and superadmins
/// can only be deleted by a superadmin; the last superadmin cannot be deleted.
#[utoipa::path(delete, operation_id = "deleteUser", path = "/users/{id}", tag = "users",
    params(("id" = String, Path, description = "User id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 403, description = "Not allowed to delete this user", body = ErrorEnvelope),
        (status = 404, description = "No such user", body = ErrorEnvelope),
        (status = 409, description = "The last superadmin", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.delete_user(&actor, &ctx.id("id")).await?,
    ))
}

/// Change a user's role (superadmin only).
#[utoipa::path(patch, operation_id = "setUserRole", path = "/users/{id}/role", tag = "users",
    params(("id" = String, Path, description = "User id")), request_body = RoleInput,
    responses(
        (status = 200, description = "Updated user", body = Envelope<User>),
        (status = 400, description = "Unknown role", body = ErrorEnvelope),
        (status = 404, description = "No such user", body = ErrorEnvelope),
        (status = 409, description = "Would demote the last superadmin", body = ErrorEnvelope),
    ))]
pub async fn set_role(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let role = ctx.command::<RoleInput, Role>().await?;
    Ok(Reply::ok(
        &ctx.app.set_role(&actor, &ctx.id("id"), role).await?,
    ))
}

/// Change a user's e-mail address.
#[utoipa::path(patch, operation_id = "setUserEmail", path = "/users/{id}/email", tag = "users",
    params(("id" = String, Path, description = "User id")), request_body = EmailInput,
    responses(
        (status = 200, description = "Updated user", body = Envelope<User>),
        (status = 400, description = "Not an e-mail address", body = ErrorEnvelope),
        (status = 403, description = "Not an admin, or the user is an admin and the caller no superadmin; STEP_UP_REQUIRED: another user's e-mail is their first factor, so changing it needs a recent second-factor check", body = ErrorEnvelope),
        (status = 404, description = "No such user", body = ErrorEnvelope),
        (status = 409, description = "Address used by another user", body = ErrorEnvelope),
    ))]
pub async fn set_email(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let email = ctx.command::<EmailInput, Email>().await?;
    Ok(Reply::ok(
        &ctx.app.set_user_email(&actor, &ctx.id("id"), email).await?,
    ))
}

/// Edit a user's profile (any subset; note `phone`, not `phoneNumber`).
#[utoipa::path(patch, operation_id = "updateUserProfile", path = "/admin/users/{id}/profile", tag = "users",
    params(("id" = String, Path, description = "User id")), request_body = AdminProfileInput,
    responses(
        (status = 200, description = "Updated user", body = Envelope<UserEnvelope>),
        (status = 400, description = "Invalid fields", body = ErrorEnvelope),
        (status = 403, description = "Not allowed to edit this user; STEP_UP_REQUIRED when `email` changes another user's address (their first factor) without a recent second-factor check", body = ErrorEnvelope),
        (status = 404, description = "No such user", body = ErrorEnvelope),
        (status = 409, description = "Address used by another user", body = ErrorEnvelope),
    ))]
pub async fn update_profile(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let change = ctx.command::<AdminProfileInput, ProfileChange>().await?;
    Ok(Reply::ok(
        &ctx.app
            .admin_update_profile(&actor, &ctx.id("id"), change)
            .await?,
    ))
}
