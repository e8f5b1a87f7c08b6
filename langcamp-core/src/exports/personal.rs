//! The personal-data document (CONTRACT §18, GDPR access and portability): everything the
//! school holds about one user, read in one snapshot.

use serde::Serialize;
use sqlx::{AnyConnection, Row};
use utoipa::ToSchema;

use crate::Langcamp;
use crate::contacts::{self, Contact};
use crate::domain::Id;
use crate::domain::error::Result;
use crate::domain::time::Timestamp;
use crate::materials::{self, AssignedMaterial};
use crate::placement::{self, DetailedResult};
use crate::users::{self, User};

/// One user's data: the profile, every result (detailed, without the correct options),
/// the materials assigned, the contact requests sent from the user's e-mail address, the
/// sign-ins (no token material), and the audit entries about them.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonalData {
    pub exported_at: Timestamp,
    pub user: User,
    pub results: Vec<DetailedResult>,
    pub materials: Vec<AssignedMaterial>,
    pub contacts: Vec<Contact>,
    pub sign_ins: Vec<SignIn>,
    /// Entries of the audit trail where the user is actor or target (CONTRACT §17).
    pub audit_events: Vec<crate::audit::AuditEntry>,
}

/// A sign-in: when it began, when it was last refreshed, and when it ended (signed out,
/// revoked, or expired; null while it lasts).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignIn {
    pub created_at: Timestamp,
    pub last_used_at: Timestamp,
    pub ended_at: Option<Timestamp>,
}

/// The document of the user `id`, or `None` when there is no such user.
pub(super) async fn collect(app: &Langcamp, id: &Id<User>) -> Result<Option<PersonalData>> {
    let now = app.clock().now_ms();
    let mut snapshot = app.db().read_snapshot().await?;
    let Some(user) = users::find_user(&mut snapshot, id.as_str()).await? else {
        return Ok(None);
    };
    let results = placement::detailed_results_of(&mut snapshot, &user.id).await?;
    let materials = materials::assigned_materials(app, &mut snapshot, id).await?;
    let contacts = contacts::sent_from(&mut snapshot, &user.email).await?;
    let sign_ins = sign_ins(&mut snapshot, &user.id, now).await?;
    let audit_events = crate::audit::about_user(&mut snapshot, &user.id).await?;
    Ok(Some(PersonalData {
        exported_at: Timestamp::from_millis(now),
        user,
        results,
        materials,
        contacts,
        sign_ins,
        audit_events,
    }))
}

/// The user's sign-ins, newest first; only their times, never a token or its hash.
async fn sign_ins(conn: &mut AnyConnection, user_id: &str, now: i64) -> Result<Vec<SignIn>> {
    let rows = sqlx::query(
        "SELECT created_at, last_used_at, revoked_at, expires_at FROM sessions
         WHERE user_id = $1 ORDER BY created_at DESC, id DESC",
    )
    .bind(user_id)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|row| {
            let revoked_at: Option<i64> = row.try_get("revoked_at")?;
            let expires_at: i64 = row.try_get("expires_at")?;
            let ended_at = revoked_at.or((expires_at <= now).then_some(expires_at));
            Ok(SignIn {
                created_at: Timestamp::from_millis(row.try_get("created_at")?),
                last_used_at: Timestamp::from_millis(row.try_get("last_used_at")?),
                ended_at: ended_at.map(Timestamp::from_millis),
            })
        })
        .collect()
}
