//! The writes of a sign-in: the code used up, the user found or created, the sign-in and
//! its refresh tokens.

use super::{OTP_MAX_ATTEMPTS, SignIn};
use crate::domain::error::Result;
use crate::platform::db::{Arg, Write, WriteConn};
use crate::users::{self, User};

impl Write for SignIn {
    type Output = Option<(User, String)>;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<Self::Output> {
        let email = self.email.as_str();
        // Deleting the row is the single use: of concurrent verifies, one deletes it.
        let consumed = conn
            .fetch_first(
                "DELETE FROM otp_codes
                 WHERE email = $1 AND code_hash = $2 AND expires_at > $3 AND attempts < $4
                 RETURNING email",
                &[
                    Arg::Text(email),
                    Arg::Text(&self.hash),
                    Arg::Int(self.now),
                    Arg::Int(OTP_MAX_ATTEMPTS),
                ],
            )
            .await?;
        if consumed.is_none() {
            // A wrong try counts against the live code, whoever sends it (so this is a
            // success of the write: the count must be kept).
            conn.exec(
                "UPDATE otp_codes SET attempts = attempts + 1 WHERE email = $1 AND expires_at > $2",
                &[Arg::Text(email), Arg::Int(self.now)],
            )
            .await?;
            return Ok(None);
        }
        let user = users::find_or_create_user(conn, &self.email, &self.locale, self.now).await?;
        // A new sign-in, its end and first use set at once, and its first refresh token.
        conn.exec(
            "INSERT INTO sessions (id, user_id, created_at, expires_at, revoked_at, last_used_at)
             VALUES ($1, $2, $3, $4, NULL, $3)",
            &[
                Arg::Text(&self.session_id),
                Arg::Text(&user.id),
                Arg::Int(self.now),
                Arg::Int(self.expires_at),
            ],
        )
        .await?;
        record_refresh_token(
            conn,
            &self.refresh_hash,
            &self.session_id,
            self.now,
            self.expires_at,
        )
        .await?;
        Ok(Some((user, self.session_id)))
    }
}

/// Records a refresh token (by its hash) of the sign-in `session_id`.
pub(super) async fn record_refresh_token<C: WriteConn>(
    conn: &mut C,
    token_hash: &str,
    session_id: &str,
    now: i64,
    expires_at: i64,
) -> Result<()> {
    conn.exec(
        "INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at, rotated_at)
         VALUES ($1, $2, $3, $4, NULL)",
        &[
            Arg::Text(token_hash),
            Arg::Text(session_id),
            Arg::Int(now),
            Arg::Int(expires_at),
        ],
    )
    .await?;
    Ok(())
}
