//! Contact desk: the public contact form, and the admins' inbox with replies by e-mail.
//!
//! A reply and its mail commit together, one piece of the group commit with its audit entry:
//! the visitor gets exactly the text that is stored (the mail is in `mail`). Here: the operations and what they answer; [`input`] holds
//! what clients send and the validated commands, `store` the SQL.

mod input;
mod store;
pub(crate) use store::SEARCH_INDEX;

pub(crate) use self::store::{chunk_after as export_chunk, sent_from};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use self::input::{
    ContactFilter, ContactInput, ContactSearch, ContactStatusInput, MESSAGE_MAX, Message, NAME_MAX,
    Name, NewContact, PHONE_MAX, PHONE_MIN, Phone, REPLY_MAX, ReplyInput, ReplyText, SOURCE_MAX,
    Source,
};
use crate::Langcamp;
use crate::audit::Target;
pub use crate::domain::ContactStatus;
use crate::domain::Deleted;
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::Result;
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::mail_templates::MailValues;
use crate::webhooks::Event;

/// A contact request. Unset optional fields are `null`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    pub id: String,
    #[schema(example = "Ana")]
    pub first_name: String,
    #[schema(example = "Silva")]
    pub last_name: String,
    #[schema(example = "ana.silva@example.com")]
    pub email: String,
    #[schema(example = "+351 912 345 678")]
    pub phone: Option<String>,
    /// The visitor's text.
    pub message: String,
    pub status: ContactStatus,
    /// The latest admin reply.
    pub reply_message: Option<String>,
    /// Where the visitor came from.
    #[schema(example = "pricing-page")]
    pub source: Option<String>,
    /// The language replies are written in (BCP 47); null: the school's default
    /// (setting `mail.default_locale`) at reply time.
    #[schema(example = "pt-PT")]
    pub locale: Option<String>,
    /// When the latest reply was sent.
    pub replied_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Contact {
    /// The request's id, typed.
    pub fn typed_id(&self) -> Id<Contact> {
        Id::from(&self.id)
    }
}

impl Langcamp {
    /// `POST /contact`: anyone may write to the school. A visitor's form is not a staff
    /// action; one the operator writes (the demo seed) is, and is audited.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_contact(&self, actor: &Actor, new: NewContact) -> Result<Contact> {
        let announce = self.announcement(Event::ContactCreated).await?;
        let announced = announce.is_some();
        let create = store::Create {
            id: Id::new(),
            new,
            now: self.clock().now_ms(),
            announce,
        };
        let contact = if *actor == Actor::Operator {
            self.staff_write(actor, create, None).await?
        } else {
            self.write_change(create, None).await?
        };
        self.wake_webhooks(announced);
        Ok(contact)
    }

    /// `GET /contact/admin`: newest first, filtered by status and text.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_contacts(
        &self,
        actor: &Actor,
        search: &ContactSearch,
        page: PageRequest,
    ) -> Result<Page<Contact>> {
        actor.require(Role::Admin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        let (list, total) = store::list(&mut snapshot, search, page).await?;
        Ok(Page::new(list, page, total))
    }

    /// `GET /contact/admin/{id}`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_contact(&self, actor: &Actor, id: &Id<Contact>) -> Result<Contact> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        store::require(&mut *conn, id).await
    }

    /// `POST /contact/admin/{id}/reply`: stores the reply, marks the request `REPLIED` and
    /// mails the reply to the visitor, all in one transaction. A later reply replaces the
    /// stored text and sends another mail.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn reply_to_contact(
        &self,
        actor: &Actor,
        id: &Id<Contact>,
        reply: &ReplyText,
    ) -> Result<Contact> {
        actor.require(Role::Admin)?;
        let book = self.mail_book().await?;
        // The mail is written before the piece, from the fields of the request it answers,
        // which nothing changes after it is sent (name, message, address, locale); the
        // piece reads the request again for the change it makes.
        let sent = {
            let mut conn = self.db().reader().acquire().await?;
            store::require(&mut *conn, id).await?
        };
        let values = MailValues::ContactReply {
            first_name: sent.first_name.clone(),
            reply: reply.as_str().to_owned(),
            original_message: sent.message.clone(),
        };
        let mail = book.compose(&sent.email, sent.locale.as_deref(), &values)?;
        let work = store::Reply {
            id: id.clone(),
            reply: reply.clone(),
            mail,
        };
        let contact = self.staff_write(actor, work, None).await?;
        self.wake_mail_worker();
        Ok(contact)
    }

    /// `PATCH /contact/admin/{id}/status`: any of the four values, from any state.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn set_contact_status(
        &self,
        actor: &Actor,
        id: &Id<Contact>,
        status: ContactStatus,
    ) -> Result<Contact> {
        actor.require(Role::Admin)?;
        let work = store::SetStatus {
            id: id.clone(),
            status,
        };
        self.staff_write(actor, work, None).await
    }

    /// `DELETE /contact/admin/{id}`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_contact(&self, actor: &Actor, id: &Id<Contact>) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        let delete =
            "DELETE FROM contacts WHERE id = $1 RETURNING first_name || ' ' || last_name AS label";
        let audit = ("contact.deleted", "contact");
        self.delete_by_id(actor, audit, id.as_str(), delete, store::not_found, None)
            .await
    }
}

/// A contact request as the audit trail names it: by the visitor's name.
fn contact_target(contact: &Contact) -> Target {
    Target::record(
        "contact",
        &contact.id,
        format!("{} {}", contact.first_name, contact.last_name),
    )
}
