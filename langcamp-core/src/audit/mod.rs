//! The audit trail (CONTRACT §17): who did what to which record, and when.
//!
//! One entry per staff write, written by [`record`] inside the write's own transaction, so
//! no change exists without its entry and no entry without its change: a refused or
//! failed write rolls its entry back with it. `record` takes any [`WriteConn`]: an open
//! transaction, or the connection of a [`crate::platform::db::Write`] piece. The staff
//! writes are such pieces, run by `Langcamp::write_change` (most as a `StaffWrite`, whose
//! entry is written after the area's work, in the same piece): on SQLite they join the
//! group commit in a savepoint of their own, so a burst of them shares the writer's
//! transaction and the pages the entries touch (each entry adds a row to five indexes)
//! instead of each paying its own commit. The table is append-only (database triggers
//! refuse `UPDATE` and `DELETE`, migration 0095); the one exception is the retention
//! purge of [`Langcamp::purge_audit`], run by the server's maintenance.
//!
//! What an entry never holds: secrets or token material (no operation passes any), and a
//! user target's e-mail (user targets are kept by id; their label is read when the trail
//! is read, and reads `deleted user` once the user is gone). An actor's e-mail is kept, so
//! a staff member stays named after leaving.

mod delete;
mod input;
mod store;
mod write;

pub(crate) use self::store::about_user;
pub(crate) use self::write::{Entries, Staff, StaffWrite};

use std::sync::OnceLock;

use crate::platform::db::WriteConn;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

pub use self::input::{AuditFilter, AuditQuery, time};
use crate::Langcamp;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;

/// The label of a user target whose user is gone.
pub const DELETED_USER: &str = "deleted user";

/// What an action was done to.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// `user`, `course`, `test`, `result`, `material`, `contact`, `setting`,
    /// `mail_template`, `export`, `stats`, `storage`, `audit`.
    pub kind: &'static str,
    pub id: Option<String>,
    /// A human name of the record at the time (a course's title, a setting's key); `None`
    /// for users, whose label is read when the trail is read.
    pub label: Option<String>,
}

impl Target {
    /// A user, by id.
    pub fn user(id: impl Into<String>) -> Target {
        Target {
            kind: "user",
            id: Some(id.into()),
            label: None,
        }
    }

    /// A record of another kind, with its id and a label.
    pub fn record(kind: &'static str, id: impl Into<String>, label: impl Into<String>) -> Target {
        Target {
            kind,
            id: Some(id.into()),
            label: Some(label.into()),
        }
    }

    /// Something that is no single record (an export, a purge): no id, a label only. A
    /// setting or a mail template is a record, by its key or `kind/locale`.
    pub fn named(kind: &'static str, label: impl Into<String>) -> Target {
        Target {
            kind,
            id: None,
            label: Some(label.into()),
        }
    }
}

/// One staff action, as [`record`] writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// `<target type>.<verb>`: `user.role_changed`, `course.updated`, `setting.put`, ...
    pub action: &'static str,
    pub target: Target,
    /// For updates: each field that changed, `{from, to}` ([`changes`]); `None` otherwise.
    pub changes: Option<Value>,
}

impl Entry {
    pub fn new(action: &'static str, target: Target) -> Entry {
        Entry {
            action,
            target,
            changes: None,
        }
    }

    /// The entry with the fields that differ between `before` and `after`.
    pub fn with_changes(mut self, before: &impl Serialize, after: &impl Serialize) -> Entry {
        self.changes = Some(changes(before, after));
        self
    }

    /// The entry with `changes` given as they are (`{field: {from, to}}`).
    pub fn with_change_map(mut self, changes: Value) -> Entry {
        self.changes = Some(changes);
        self
    }
}

/// `{field: {from, to}}` for each top-level field whose value differs between `before`
/// and `after` (their JSON forms), leaving out `updatedAt`, which every update moves. An
/// update that changed nothing has `{}`: the action was still taken, and is recorded.
pub fn changes(before: &impl Serialize, after: &impl Serialize) -> Value {
    let (Ok(Value::Object(before)), Ok(Value::Object(after))) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return Value::Object(Map::new());
    };
    let mut changed = Map::new();
    for (field, to) in &after {
        if field == "updatedAt" {
            continue;
        }
        let from = before.get(field).unwrap_or(&Value::Null);
        if from != to {
            changed.insert(field.clone(), serde_json::json!({ "from": from, "to": to }));
        }
    }
    Value::Object(changed)
}

/// Writes `entry` as done by `actor`, on `conn`: the transaction of the write it records
/// (an open transaction, or the connection a [`crate::platform::db::Write`] piece is given, which on
/// SQLite is inside the group commit). Private: the rest of the crate writes an entry only
/// through a [`StaffWrite`] (which cannot leave it out), [`Langcamp::commit_recorded`],
/// [`Langcamp::record_alone`] or [`record_own`]. Anonymous callers never write staff
/// actions; asked to record one, this refuses (a bug), failing the write with it.
async fn record<C: WriteConn>(
    conn: &mut C,
    app: &Langcamp,
    actor: &Actor,
    entry: Entry,
) -> Result<()> {
    let who = Who::of(actor)?;
    store::insert(conn, &new_id(), app.clock().now_ms(), &who, &entry).await
}

/// Writes `entry`, an action of a signed-in user on their own account (a factor added or
/// removed, recovery codes used or made, a sign-in locked or revoked), inside the write
/// that makes it. Staff actions on anyone else's records are [`StaffWrite`]s; an entry
/// here whose target is not the actor's own account is refused (a bug), failing the write.
pub(crate) async fn record_own<C: WriteConn>(
    conn: &mut C,
    app: &Langcamp,
    actor: &Actor,
    entry: Entry,
) -> Result<()> {
    match actor.user_id() {
        Some(own) if entry.target == Target::user(own) => record(conn, app, actor, entry).await,
        _ => Err(Error::internal(format!(
            "`{}` is not an action on the actor's own account: write it as a StaffWrite",
            entry.action
        ))),
    }
}

/// The actor as an entry stores it.
struct Who<'a> {
    kind: &'static str,
    id: Option<&'a str>,
    email: &'a str,
    role: Option<Role>,
    request_id: Option<&'a str>,
    client_address: Option<String>,
}

impl<'a> Who<'a> {
    fn of(actor: &'a Actor) -> Result<Who<'a>> {
        match actor {
            Actor::User(caller) => Ok(Who {
                kind: "user",
                id: Some(&caller.user_id),
                email: &caller.email,
                role: Some(caller.role),
                request_id: caller.origin.as_ref().map(|o| &*o.request_id),
                client_address: caller.origin.as_ref().map(|o| o.client_address.to_string()),
            }),
            Actor::Operator => Ok(Who {
                kind: "operator",
                id: None,
                email: operator_name(),
                role: None,
                request_id: None,
                client_address: None,
            }),
            Actor::Anonymous => Err(Error::internal(
                "an audit entry was asked for without a caller",
            )),
        }
    }
}

/// The operating-system user running the `langcamp` command or the console (or the
/// server, for its own retention purge): `$USER`, else `$LOGNAME`, else `operator`.
pub fn operator_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        ["USER", "LOGNAME"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .map(|v| v.trim().to_owned())
            .find(|v| !v.is_empty())
            .unwrap_or_else(|| "operator".to_owned())
    })
}

/// Who did it, as the trail shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditActor {
    /// `user` (a signed-in staff member over the API) or `operator` (the `langcamp`
    /// command or the console).
    #[serde(rename = "type")]
    #[schema(example = "user")]
    pub kind: String,
    /// The user's id; null for the operator.
    pub id: Option<String>,
    /// The staff member's e-mail, or the operating-system user name of the operator.
    #[schema(example = "admin@school.example")]
    pub email: String,
    /// The role the action was taken with; null for the operator.
    pub role: Option<Role>,
}

/// What it was done to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AuditTarget {
    #[serde(rename = "type")]
    #[schema(example = "course")]
    pub kind: String,
    pub id: Option<String>,
    /// A name of the record: a user's current e-mail (`deleted user` once gone), or the
    /// title or key the record had at the time.
    #[schema(example = "German A1 evening course")]
    pub label: Option<String>,
}

/// One entry of the trail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub id: String,
    pub at: Timestamp,
    #[schema(example = "course.updated")]
    pub action: String,
    pub actor: AuditActor,
    pub target: AuditTarget,
    /// For updates, `{field: {from, to}}` for each field that changed; null otherwise.
    #[schema(value_type = Option<Object>, example = json!({"price": {"from": 120.0, "to": 140.0}}))]
    pub changes: Option<Value>,
    /// The request's `X-Request-Id`; null for the operator.
    pub request_id: Option<String>,
    /// The client's address; null for the operator.
    pub client_address: Option<String>,
}

impl Langcamp {
    /// `GET /admin/audit` (superadmin): newest first, filtered.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_audit(
        &self,
        actor: &Actor,
        query: &AuditQuery,
        page: PageRequest,
    ) -> Result<Page<AuditEntry>> {
        actor.require(Role::Superadmin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        let (list, total) = store::list(&mut snapshot, query, page).await?;
        Ok(Page::new(list, page, total))
    }

    /// Entries of `query` oldest first, in pages of `chunk`, each handed to `each` as it
    /// is read (`langcamp audit export` streams them; memory stays flat). Operator only.
    pub async fn each_audit_entry(
        &self,
        actor: &Actor,
        query: &AuditQuery,
        mut each: impl FnMut(AuditEntry) -> Result<()>,
    ) -> Result<u64> {
        actor.require_operator()?;
        let mut after: Option<(i64, String)> = None;
        let mut count = 0u64;
        loop {
            let mut conn = self.db().reader().acquire().await?;
            let chunk = store::chunk_after(&mut conn, query, after.as_ref(), 1000).await?;
            drop(conn);
            let Some(last) = chunk.last() else {
                return Ok(count);
            };
            after = Some((last.at.millis(), last.id.clone()));
            for entry in chunk {
                each(entry)?;
                count += 1;
            }
        }
    }

    /// Records `entry` in a transaction of its own, for an action that writes nothing
    /// else (an export).
    pub(crate) async fn record_alone(&self, actor: &Actor, entry: Entry) -> Result<()> {
        let tx = self.db().begin().await?;
        self.commit_recorded(tx, actor, entry).await
    }

    /// Commits `tx`, a staff write made in an open transaction (the rollups' rebuild, whose
    /// statements are built at run time), with the entry that records it: the transaction
    /// cannot commit without one.
    pub(crate) async fn commit_recorded(
        &self,
        mut tx: crate::platform::db::Tx,
        actor: &Actor,
        entry: Entry,
    ) -> Result<()> {
        record(&mut tx, self, actor, entry).await?;
        tx.commit().await
    }

    /// Deletes the entries older than `AUDIT_RETENTION_DAYS` and records that it did
    /// (`audit.purged`, with the count) in the same transaction. Run by the server's
    /// maintenance; the number of entries removed.
    pub async fn purge_audit(&self) -> Result<u64> {
        let days = i64::from(self.config().audit_retention_days);
        let before = self.clock().now_ms() - days * 24 * 3600 * 1000;
        let mut tx = self.db().begin().await?;
        let purged = store::purge(&mut tx, before).await?;
        if purged > 0 {
            let label = format!("{purged} entries before {}", Timestamp::from_millis(before));
            record(
                &mut tx,
                self,
                &Actor::Operator,
                Entry::new("audit.purged", Target::named("audit", label))
                    .with_change_map(serde_json::json!({ "count": { "from": purged, "to": 0 } })),
            )
            .await?;
        }
        tx.commit().await?;
        if purged > 0 {
            tracing::info!(purged, "audit entries past their retention purged");
        }
        Ok(purged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_each_field_that_differs_but_never_updated_at() {
        let before =
            serde_json::json!({ "title": "A", "price": 1, "updatedAt": "x", "same": true });
        let after = serde_json::json!({ "title": "B", "price": 1, "updatedAt": "y", "same": true, "new": 3 });
        assert_eq!(
            changes(&before, &after),
            serde_json::json!({
                "title": { "from": "A", "to": "B" },
                "new": { "from": null, "to": 3 },
            })
        );
        assert_eq!(changes(&before, &before), serde_json::json!({}));
    }

    #[test]
    fn anonymous_callers_never_write_an_entry() {
        assert!(Who::of(&Actor::Anonymous).is_err());
        assert_eq!(
            Who::of(&Actor::Operator).map(|w| w.kind).ok(),
            Some("operator")
        );
    }
}
