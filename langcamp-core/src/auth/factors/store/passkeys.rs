//! The SQL of passkeys: the stored credentials, the ceremonies waiting for their answer
//! (`passkey_challenges`), and a passkey sign-in as one piece.

use crate::auth::session::{self, NewRefreshToken};
use crate::domain::error::Result;
use crate::platform::db::{Arg, Row, Write, WriteConn};

/// A registered passkey as stored: what the relying-party library keeps of it, as JSON.
pub(in crate::auth::factors) struct StoredPasskey {
    pub factor_id: String,
    pub user_id: String,
    pub passkey: String,
}

fn passkey_from_row(row: &impl Row) -> Result<StoredPasskey> {
    Ok(StoredPasskey {
        factor_id: row.text("id")?,
        user_id: row.text("user_id")?,
        passkey: row.text("passkey")?,
    })
}

/// A user's passkeys.
pub(in crate::auth::factors) async fn passkeys_of<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
) -> Result<Vec<StoredPasskey>> {
    let rows = conn
        .fetch_all(
            "SELECT id, user_id, passkey FROM user_factors
             WHERE user_id = $1 AND kind = 'passkey' ORDER BY created_at, id",
            &[Arg::Text(user_id)],
        )
        .await?;
    rows.iter().map(passkey_from_row).collect()
}

/// The passkey with this credential id (hex), whoever's it is.
pub(in crate::auth::factors) async fn passkey_by_credential<C: WriteConn>(
    conn: &mut C,
    credential_id: &str,
) -> Result<Option<StoredPasskey>> {
    let row = conn
        .fetch_first(
            "SELECT id, user_id, passkey FROM user_factors WHERE credential_id = $1 AND kind = 'passkey'",
            &[Arg::Text(credential_id)],
        )
        .await?;
    row.as_ref().map(passkey_from_row).transpose()
}

/// Keeps a ceremony's state for its answer (`passkey_challenges`).
pub(in crate::auth::factors) struct SaveChallenge {
    pub id: String,
    pub purpose: &'static str,
    pub user_id: Option<String>,
    pub state: String,
    pub now: i64,
    pub expires_at: i64,
}

impl Write for SaveChallenge {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
        conn.exec(
            "INSERT INTO passkey_challenges (id, purpose, user_id, state, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                Arg::Text(&self.id),
                Arg::Text(self.purpose),
                Arg::OptText(self.user_id.as_deref()),
                Arg::Text(&self.state),
                Arg::Int(self.now),
                Arg::Int(self.expires_at),
            ],
        )
        .await?;
        Ok(())
    }
}

/// Takes a ceremony's state: the challenge is deleted as it is read (single use), and
/// only while it lives and belongs to `user_id` (`None`: a sign-in's, which names nobody).
pub(in crate::auth::factors) struct TakeChallenge {
    pub id: String,
    pub purpose: &'static str,
    pub user_id: Option<String>,
    pub now: i64,
}

impl Write for TakeChallenge {
    type Output = Option<String>;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<Option<String>> {
        let (id, purpose, now) = (
            Arg::Text(&self.id),
            Arg::Text(self.purpose),
            Arg::Int(self.now),
        );
        let row = match &self.user_id {
            Some(user_id) => {
                conn.fetch_first(
                    "DELETE FROM passkey_challenges
                     WHERE id = $1 AND purpose = $2 AND expires_at > $3 AND user_id = $4
                     RETURNING state",
                    &[id, purpose, now, Arg::Text(user_id)],
                )
                .await?
            }
            None => {
                conn.fetch_first(
                    "DELETE FROM passkey_challenges
                     WHERE id = $1 AND purpose = $2 AND expires_at > $3 AND user_id IS NULL
                     RETURNING state",
                    &[id, purpose, now],
                )
                .await?
            }
        };
        row.map(|row| row.text("state")).transpose()
    }
}

/// A sign-in with a passkey: the passkey's stored state moves on (its counter), only if it
/// is still what the assertion was checked against, and a sign-in opens at level 2.
pub(in crate::auth::factors) struct PasskeySignIn {
    pub factor_id: String,
    pub user_id: String,
    pub checked_against: String,
    pub passkey: String,
    pub session_id: String,
    pub refresh: NewRefreshToken,
    pub now: i64,
}

impl Write for PasskeySignIn {
    /// Whether the passkey was still as checked (else nothing is written).
    type Output = bool;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<bool> {
        let moved = conn
            .exec(
                "UPDATE user_factors SET passkey = $1, last_used_at = $2 WHERE id = $3 AND passkey = $4",
                &[
                    Arg::Text(&self.passkey),
                    Arg::Int(self.now),
                    Arg::Text(&self.factor_id),
                    Arg::Text(&self.checked_against),
                ],
            )
            .await?;
        if moved == 0 {
            return Ok(false);
        }
        let level = session::SignInLevel::second_factor(self.now);
        session::open_sign_in(
            conn,
            &self.session_id,
            &self.user_id,
            level,
            &self.refresh,
            self.now,
        )
        .await?;
        Ok(true)
    }
}
