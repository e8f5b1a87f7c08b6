//! The admin dashboard (CONTRACT §11).

use langcamp_core::Result;
use langcamp_core::dashboard::{Dashboard, DashboardQuery, TrendMonths};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_dashboard>(RateRule::Default, Access::Admin, dashboard);
}

/// Dashboard statistics.
///
/// Computed from the database at the time of the call, all figures from one snapshot
/// (times in UTC):
/// - "Last 30 days" means from `generatedAt` minus 30 days on; growth rates compare that
///   window with the 30 days before it: `(last - previous) / previous * 100`, or 0 when
///   the previous window is empty (like every rate whose denominator is 0).
/// - Rates, percentages and averages are rounded to 2 decimals and are 0 when their
///   denominator is 0. `avgAssignmentsPerUser` divides by `assignedUsers`.
/// - `trends` has one entry per calendar month, oldest first, ending with the current month.
/// - `roles` and `contactsByStatus` list every value, zero counts included; `levels` and
///   `languages` cover all results (`languages` most submissions first; a result without a
///   target language counts under `und`, "Undetermined").
/// - `recentActivity` holds the 5 newest contact requests and the 5 newest results.
#[utoipa::path(get, operation_id = "getDashboard", path = "/admin/dashboard", tag = "dashboard",
    params(DashboardQuery),
    responses(
        (status = 200, description = "The statistics", body = Envelope<Dashboard>),
        (status = 400, description = "`months` is not a whole number from 1 to 24", body = ErrorEnvelope),
    ))]
pub async fn dashboard(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let months = TrendMonths::try_from(&DashboardQuery {
        months: ctx.query("months").map(str::to_owned),
    })?;
    Ok(Reply::ok(&ctx.app.dashboard(&actor, months).await?))
}
