//! The SQL of contact requests. The admin list's filter is written once, for its count
//! and its page.
//!
//! The writes are pieces of work for [`Langcamp::write_change`] ([`Create`], [`Reply`],
//! [`SetStatus`]): the change with its audit entry (and a reply's mail, rendered before),
//! so on SQLite they share the group commit with the writes beside them.

use sqlx::AnyConnection;

use super::input::{NewContact, ReplyText};
use super::{Contact, ContactSearch, contact_target};
use crate::audit::{Entries, Entry, Staff, StaffWrite};
use crate::domain::error::{Error, Result};
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::domain::{ContactStatus, Id};
use crate::platform::db::listing::{self, Conditions, Paged, Search};
use crate::platform::db::search_index::SearchIndex;
use crate::platform::db::{self, Arg, Backend, Row, Write, WriteConn, by_id};
use crate::platform::mail::{MailKind, OutgoingMail};
use crate::webhooks::Announcement;

/// Every query that returns contacts selects these columns, in this order.
macro_rules! select_contacts {
    ($($rest:expr),+) => {
        concat!(
            "SELECT id, first_name, last_name, email, phone, message, status, reply_message, \
             source, locale, replied_at, created_at, updated_at FROM contacts ",
            $($rest),+
        )
    };
}

/// The admin list: contact requests newest first, their keys found in an index before
/// their rows are read.
const PAGED: Paged = Paged {
    joined: None,
    select: select_contacts!(""),
    from: "contacts",
    key: "id",
    order: "created_at DESC, id DESC",
};

/// The contact requests' searched text: the names and the e-mail (migration 0150's
/// indexes).
const SEARCH: Search = Search {
    postgres: "lower(first_name) || chr(1) || lower(last_name) || chr(1) || lower(email)",
    sqlite: SEARCH_INDEX,
};

/// The contact requests' FTS5 table on SQLite (migrations 0150 and 0190).
pub(crate) const SEARCH_INDEX: SearchIndex = SearchIndex {
    table: "contacts",
    fts: "contact_search",
    keys: "contact_search_keys",
    keyed: "contact_id",
    text: "lower(first_name) || char(1) || lower(last_name) || char(1) || lower(email)",
};

/// The admin list's conditions, for the filters given.
fn conditions(backend: Backend, search: &ContactSearch) -> Conditions {
    let mut conditions = Conditions::default();
    conditions
        .and_text("status = ?", search.status.map(ContactStatus::as_str))
        .and_search(backend, &SEARCH, search.text.as_deref());
    conditions
}

fn contact_from_row(row: &impl Row) -> Result<Contact> {
    let id = row.text("id")?;
    let status = row.text("status")?;
    // The table's CHECK constraint allows only the four values, so another one was
    // written around it or by a newer release (a status added while this build still
    // serves, mid-deploy). Reading it as PENDING would put a closed or answered request
    // back in the admins' queue, to be answered twice; refusing the read (500, the row
    // and the value in the log, never in the answer) shows the fault where it is.
    let status = ContactStatus::parse("status", &status).map_err(|_| {
        Error::internal(format!(
            "contact {id} has the status {status:?}, which this build does not know"
        ))
    })?;
    Ok(Contact {
        id,
        first_name: row.text("first_name")?,
        last_name: row.text("last_name")?,
        email: row.text("email")?,
        phone: row.opt_text("phone")?,
        message: row.text("message")?,
        status,
        reply_message: row.opt_text("reply_message")?,
        source: row.opt_text("source")?,
        locale: row.opt_text("locale")?,
        replied_at: row.opt_int("replied_at")?.map(Timestamp::from_millis),
        created_at: Timestamp::from_millis(row.int("created_at")?),
        updated_at: Timestamp::from_millis(row.int("updated_at")?),
    })
}

pub(super) fn not_found() -> Error {
    Error::not_found("contact request")
}

/// The contact request, or 404.
pub(super) async fn require<C: WriteConn>(conn: &mut C, id: &Id<Contact>) -> Result<Contact> {
    let row = by_id::find(conn, select_contacts!("WHERE id = $1"), id.as_str()).await?;
    row.as_ref()
        .map(contact_from_row)
        .transpose()?
        .ok_or_else(not_found)
}

async fn insert<C: WriteConn>(
    conn: &mut C,
    id: &Id<Contact>,
    new: &NewContact,
    now: i64,
) -> Result<()> {
    conn.exec(
        "INSERT INTO contacts (id, first_name, last_name, email, phone, message, status, source, locale, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8, $9, $9)",
        &[
            Arg::Text(id.as_str()),
            Arg::Text(new.first_name.as_str()),
            Arg::Text(new.last_name.as_str()),
            Arg::Text(new.email.as_str()),
            Arg::OptText(new.phone.as_ref().map(|p| p.as_str())),
            Arg::Text(new.message.as_str()),
            Arg::OptText(new.source.as_ref().map(|s| s.as_str())),
            Arg::OptText(new.locale.as_ref().map(|l| l.as_str())),
            Arg::Int(now),
        ],
    )
    .await?;
    Ok(())
}

/// A page of the admin list (newest first) and the total.
pub(super) async fn list(
    conn: &mut AnyConnection,
    search: &ContactSearch,
    page: PageRequest,
) -> Result<(Vec<Contact>, i64)> {
    let conditions = conditions(db::backend_of(conn), search);
    if search.text.is_some() {
        let (rows, total) = PAGED.search_page(conn, &conditions, page).await?;
        let list = rows.iter().map(contact_from_row).collect::<Result<_>>()?;
        return Ok((list, total));
    }
    // Without a search, the counts the triggers keep (`contacts.status.<status>`).
    let counts = listing::counts(conn, "contacts.status.").await?;
    let total = match search.status {
        Some(status) => counts
            .get(&format!("contacts.status.{}", status.as_str()))
            .copied()
            .unwrap_or(0),
        None => counts.values().sum(),
    };
    let rows = PAGED.page_by_keys(conn, &conditions, page, total).await?;
    let list = rows.iter().map(contact_from_row).collect::<Result<_>>()?;
    Ok((list, total))
}

/// The admin list's contact requests after the key `(created_at, id)`, newest first,
/// `limit` of them: one chunk of an export (the `exports` area).
pub(crate) async fn chunk_after(
    conn: &mut AnyConnection,
    search: &ContactSearch,
    after: (i64, &str),
    limit: i64,
) -> Result<Vec<Contact>> {
    let conditions = conditions(db::backend_of(conn), search);
    let rows = PAGED
        .chunk_after(conn, &conditions, "(created_at, id) <", after, limit)
        .await?;
    rows.iter().map(contact_from_row).collect()
}

/// The contact requests sent from `email` (stored lower-cased), newest first: the
/// personal-data export (the `exports` area).
pub(crate) async fn sent_from(conn: &mut AnyConnection, email: &str) -> Result<Vec<Contact>> {
    let rows = sqlx::query(select_contacts!(
        "WHERE email = $1 ORDER BY created_at DESC, id DESC"
    ))
    .bind(email)
    .fetch_all(conn)
    .await?;
    rows.iter().map(contact_from_row).collect()
}

/// Stores the reply and marks the request `REPLIED`.
async fn record_reply<C: WriteConn>(
    conn: &mut C,
    id: &Id<Contact>,
    reply: &ReplyText,
    now: i64,
) -> Result<()> {
    conn.exec(
        "UPDATE contacts SET status = 'REPLIED', reply_message = $1, replied_at = $2, updated_at = $2
         WHERE id = $3",
        &[Arg::Text(reply.as_str()), Arg::Int(now), Arg::Text(id.as_str())],
    )
    .await?;
    Ok(())
}

/// Sets the status; false when there is no such request.
async fn set_status<C: WriteConn>(
    conn: &mut C,
    id: &Id<Contact>,
    status: ContactStatus,
    now: i64,
) -> Result<bool> {
    if !id.is_well_formed() {
        return Ok(false);
    }
    let updated = conn
        .exec(
            "UPDATE contacts SET status = $1, updated_at = $2 WHERE id = $3",
            &[
                Arg::Text(status.as_str()),
                Arg::Int(now),
                Arg::Text(id.as_str()),
            ],
        )
        .await?;
    Ok(updated > 0)
}

/// `POST /contact`: the request as stored. A visitor's form is not a staff action; one
/// the operator writes (the demo seed) is recorded.
pub(super) struct Create {
    pub id: Id<Contact>,
    pub new: NewContact,
    pub now: i64,
    /// The `contact.created` deliveries, queued with it.
    pub announce: Option<Announcement>,
}

impl Create {
    async fn insert<C: WriteConn>(self, conn: &mut C) -> Result<Contact> {
        insert(conn, &self.id, &self.new, self.now).await?;
        let contact = require(conn, &self.id).await?;
        if let Some(announce) = &self.announce {
            announce.queue(conn, self.now, &contact).await?;
        }
        Ok(contact)
    }
}

/// A visitor's form.
impl Write for Create {
    type Output = Contact;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<Contact> {
        self.insert(conn).await
    }
}

/// The operator's (the demo seed).
impl StaffWrite for Create {
    type Output = Contact;

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<(Contact, Entries)> {
        let contact = self.insert(conn).await?;
        let entry = Entry::new("contact.created", contact_target(&contact));
        Ok((contact, entry.into()))
    }
}

/// `POST /contact/admin/{id}/reply`: the reply, its entry and its `mail` (rendered before
/// the piece) commit together; 404 when there is no such request.
pub(super) struct Reply {
    pub id: Id<Contact>,
    pub reply: ReplyText,
    pub mail: OutgoingMail,
}

impl StaffWrite for Reply {
    type Output = Contact;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Contact, Entries)> {
        let before = require(conn, &self.id).await?;
        record_reply(conn, &self.id, &self.reply, by.now).await?;
        let contact = require(conn, &self.id).await?;
        by.app
            .queue_mail(conn, MailKind::ContactReply, &self.mail, None)
            .await?;
        let entry =
            Entry::new("contact.replied", contact_target(&contact)).with_changes(&before, &contact);
        Ok((contact, entry.into()))
    }
}

/// `PATCH /contact/admin/{id}/status`: any of the four values, from any state; 404 when
/// there is no such request.
pub(super) struct SetStatus {
    pub id: Id<Contact>,
    pub status: ContactStatus,
}

impl StaffWrite for SetStatus {
    type Output = Contact;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Contact, Entries)> {
        // The row is not read before the write: setting a status is also how an admin
        // repairs one this build cannot read (see `contact_from_row`). Its stored status
        // is read as text, for the trail.
        let from = match by_id::find(
            conn,
            "SELECT status FROM contacts WHERE id = $1",
            self.id.as_str(),
        )
        .await?
        {
            Some(row) => Some(row.text("status")?),
            None => None,
        };
        if !set_status(conn, &self.id, self.status, by.now).await? {
            return Err(not_found());
        }
        let contact = require(conn, &self.id).await?;
        let entry = Entry::new("contact.status_changed", contact_target(&contact))
            .with_change_map(serde_json::json!({ "status": { "from": from, "to": self.status } }));
        Ok((contact, entry.into()))
    }
}
