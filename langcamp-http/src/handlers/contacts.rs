//! Contact desk (CONTRACT §8): the public form and the admins' inbox.

use langcamp_core::contacts::{
    Contact, ContactFilter, ContactInput, ContactSearch, ContactStatus, ContactStatusInput,
    NewContact, ReplyInput, ReplyText,
};
use langcamp_core::domain::Deleted;
use langcamp_core::{Page, Result};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::{Ctx, PageParams};
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_create>(RateRule::Contact, Access::Anyone, create);
    r.add::<__path_list>(RateRule::Default, Access::Admin, list);
    r.add::<__path_get>(RateRule::Default, Access::Admin, get);
    r.add::<__path_delete>(RateRule::Default, Access::Admin, delete);
    r.add::<__path_reply>(RateRule::Default, Access::Admin, reply);
    r.add::<__path_set_status>(RateRule::Default, Access::Admin, set_status);
}

/// Send a contact request (public). Strings are trimmed, the e-mail lower-cased; the new
/// request is `PENDING`. Replies are written in `locale`, else the first `Accept-Language`
/// tag, else the school's default.
#[utoipa::path(post, operation_id = "createContact", path = "/contact", tag = "contacts", request_body = ContactInput,
    params(("accept-language" = Option<String>, Header, description = "The replies' language when the body has no `locale` (first tag)")),
    responses(
        (status = 201, description = "The stored contact request", body = Envelope<Contact>),
        (status = 400, description = "Invalid fields (one message per field)", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (6 per hour per client)", body = ErrorEnvelope),
    ))]
pub async fn create(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.optional_actor().await?;
    let new = ctx
        .command::<ContactInput, NewContact>()
        .await?
        .or_accept_language(ctx.header("accept-language"));
    Ok(Reply::created(&ctx.app.create_contact(&actor, new).await?))
}

/// List contact requests, newest first.
#[utoipa::path(get, operation_id = "listContacts", path = "/contact/admin", tag = "contacts",
    params(ContactFilter, PageParams),
    responses(
        (status = 200, description = "A page of contact requests", body = Envelope<Page<Contact>>),
        (status = 400, description = "Unknown status, or bad pagination", body = ErrorEnvelope),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let search = ContactSearch::try_from(&ContactFilter {
        status: ctx.query("status").map(str::to_owned),
        q: ctx.query("q").map(str::to_owned),
    })?;
    Ok(Reply::ok(
        &ctx.app.list_contacts(&actor, &search, page).await?,
    ))
}

/// One contact request.
#[utoipa::path(get, operation_id = "getContact", path = "/contact/admin/{id}", tag = "contacts",
    params(("id" = String, Path, description = "Contact request id")),
    responses(
        (status = 200, description = "The contact request", body = Envelope<Contact>),
        (status = 404, description = "No such contact request", body = ErrorEnvelope),
    ))]
pub async fn get(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.get_contact(&actor, &ctx.id("id")).await?,
    ))
}

/// Reply to a contact request: the reply is mailed to the visitor and the request becomes
/// `REPLIED`. A later reply replaces the stored text, moves `repliedAt` and sends another mail.
#[utoipa::path(post, operation_id = "replyToContact", path = "/contact/admin/{id}/reply", tag = "contacts",
    params(("id" = String, Path, description = "Contact request id")), request_body = ReplyInput,
    responses(
        (status = 200, description = "The replied contact request", body = Envelope<Contact>),
        (status = 400, description = "Missing or over-long reply", body = ErrorEnvelope),
        (status = 404, description = "No such contact request", body = ErrorEnvelope),
    ))]
pub async fn reply(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let reply = ctx.command::<ReplyInput, ReplyText>().await?;
    Ok(Reply::ok(
        &ctx.app
            .reply_to_contact(&actor, &ctx.id("id"), &reply)
            .await?,
    ))
}

/// Set a contact request's status (`PENDING`, `IN_PROGRESS`, `REPLIED`, `CLOSED`), from any state.
#[utoipa::path(patch, operation_id = "setContactStatus", path = "/contact/admin/{id}/status", tag = "contacts",
    params(("id" = String, Path, description = "Contact request id")), request_body = ContactStatusInput,
    responses(
        (status = 200, description = "The updated contact request", body = Envelope<Contact>),
        (status = 400, description = "Missing or unknown status", body = ErrorEnvelope),
        (status = 404, description = "No such contact request", body = ErrorEnvelope),
    ))]
pub async fn set_status(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let status = ctx.command::<ContactStatusInput, ContactStatus>().await?;
    Ok(Reply::ok(
        &ctx.app
            .set_contact_status(&actor, &ctx.id("id"), status)
            .await?,
    ))
}

/// Delete a contact request.
#[utoipa::path(delete, operation_id = "deleteContact", path = "/contact/admin/{id}", tag = "contacts",
    params(("id" = String, Path, description = "Contact request id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 404, description = "No such contact request", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.delete_contact(&actor, &ctx.id("id")).await?,
    ))
}
