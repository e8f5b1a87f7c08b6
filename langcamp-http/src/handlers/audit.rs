//! The audit trail (CONTRACT §17): superadmins read who did what, and when.

use langcamp_core::audit::{AuditEntry, AuditFilter, AuditQuery};
use langcamp_core::{Page, Result};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::{Ctx, PageParams};
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_list>(RateRule::Default, Access::Superadmin, list);
}

/// The audit trail, newest first: every staff write (users, courses, tests, results,
/// materials and assignments, contacts, settings, mail templates), every write by the
/// `langcamp` command and the console (actor type `operator`), and a refresh token's reuse
/// (`auth.refresh_reused`). Entries are never edited or deleted, except by the retention
/// purge (`AUDIT_RETENTION_DAYS`, recorded as `audit.purged`). A user target's `label` is
/// the user's e-mail now, `deleted user` once the user is gone.
#[utoipa::path(get, path = "/admin/audit", tag = "audit", operation_id = "listAudit",
    params(AuditFilter, PageParams),
    responses(
        (status = 200, description = "A page of entries", body = Envelope<Page<AuditEntry>>),
        (status = 400, description = "A time that is not RFC 3339, or bad pagination", body = ErrorEnvelope),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let query = AuditQuery::try_from(&AuditFilter {
        actor_id: ctx.query("actorId").map(str::to_owned),
        target_type: ctx.query("targetType").map(str::to_owned),
        target_id: ctx.query("targetId").map(str::to_owned),
        action: ctx.query("action").map(str::to_owned),
        from: ctx.query("from").map(str::to_owned),
        to: ctx.query("to").map(str::to_owned),
    })?;
    Ok(Reply::ok(&ctx.app.list_audit(&actor, &query, page).await?))
}
