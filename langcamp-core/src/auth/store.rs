//! The writes of a sign-in: the code used up, the user found or created, the sign-in and
//! its refresh tokens.

use super::{FactorMethod, OTP_MAX_ATTEMPTS, SignIn};
use crate::domain::error::{Error, Result};
use crate::factors;
use crate::platform::db::{Arg, Row as _, Write, WriteConn};
use crate::users::{self, User};

/// Who a code signed in: the user, the new sign-in's id and the user's second factors.
pub(super) struct SignedInUser {
    pub user: User,
    pub session_id: String,
    pub methods: Vec<FactorMethod>,
}

impl Write for SignIn {
    type Output = Option<SignedInUser>;

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
        let (user, methods) =
            match users::create_user_if_new(conn, &self.email, &self.locale, self.now).await? {
                // A user this sign-in created has no second factor yet.
                Some(user) => (user, Vec::new()),
                // A returning user: their row says whether they have a factor, and only the
                // factors of one who has are read (most users have none).
                None => {
                    let row = conn
                        .fetch_first(
                            concat!(
                                "SELECT ",
                                users::user_columns!(),
                                ", ",
                                factors::has_factor!("users.id"),
                                "FROM users WHERE email = $1"
                            ),
                            &[Arg::Text(email)],
                        )
                        .await?
                        .ok_or_else(|| {
                            Error::internal("user vanished right after the sign-in found it")
                        })?;
                    let user = User::from_row(&row)?;
                    let methods = if row.int("has_factor")? != 0 {
                        factors::methods_of(conn, &user.id).await?
                    } else {
                        Vec::new()
                    };
                    (user, methods)
                }
            };
        // A new sign-in, its end and first use set at once, and its first refresh token.
        conn.exec(
            "INSERT INTO sessions (id, user_id, created_at, expires_at, revoked_at, last_used_at)
             VALUES ($1, $2, $3, $4, NULL, $3)",
            &[
                Arg::Text(&self.session_id),
                Arg::Text(&user.id),
                Arg::Int(self.now),
                Arg::Int(self.refresh.expires_at),
            ],
        )
        .await?;
        record_refresh_token(conn, &self.session_id, &self.refresh, self.now).await?;
        Ok(Some(SignedInUser {
            user,
            session_id: self.session_id,
            methods,
        }))
    }
}

/// Records the refresh token `refresh` (its hash) of the sign-in `session_id`.
pub(super) async fn record_refresh_token<C: WriteConn>(
    conn: &mut C,
    session_id: &str,
    refresh: &NewRefreshToken,
    now: i64,
) -> Result<()> {
    conn.exec(
        "INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at, rotated_at)
         VALUES ($1, $2, $3, $4, NULL)",
        &[
            Arg::Text(&refresh.hash),
            Arg::Text(session_id),
            Arg::Int(now),
            Arg::Int(refresh.expires_at),
        ],
    )
    .await?;
    Ok(())
}

/// A refresh token about to be recorded: its hash and end (the token itself goes to the
/// client only).
#[derive(Clone, Debug)]
pub struct NewRefreshToken {
    pub hash: String,
    pub expires_at: i64,
}

/// Raises the sign-in `session_id` to level 2 with a second-factor check at `now`: its
/// wrong-code count starts again, its unrotated refresh token is rotated away (deleted: a
/// sign-in stays one chain) and `refresh` recorded. 401 when the sign-in has ended.
pub(super) async fn raise_sign_in<C: WriteConn>(
    conn: &mut C,
    session_id: &str,
    refresh: &NewRefreshToken,
    now: i64,
) -> Result<()> {
    let raised = conn
        .exec(
            "UPDATE sessions SET aal = 2, factor_at = $1, factor_failures = 0, expires_at = $2,
                 last_used_at = $1
             WHERE id = $3 AND revoked_at IS NULL",
            &[
                Arg::Int(now),
                Arg::Int(refresh.expires_at),
                Arg::Text(session_id),
            ],
        )
        .await?;
    if raised == 0 {
        return Err(crate::domain::error::Error::TokenInvalid);
    }
    conn.exec(
        "DELETE FROM refresh_tokens WHERE session_id = $1 AND rotated_at IS NULL",
        &[Arg::Text(session_id)],
    )
    .await?;
    record_refresh_token(conn, session_id, refresh, now).await
}

/// Counts a wrong second-factor code against the sign-in; the fifth ends it. Whether it
/// ended.
pub(super) async fn count_wrong_factor<C: WriteConn>(
    conn: &mut C,
    session_id: &str,
    now: i64,
) -> Result<bool> {
    let failures = conn
        .fetch_first(
            "UPDATE sessions SET factor_failures = factor_failures + 1 WHERE id = $1
             RETURNING factor_failures",
            &[Arg::Text(session_id)],
        )
        .await?
        .map(|row| row.int("factor_failures"))
        .transpose()?
        .unwrap_or(0);
    if failures < super::FACTOR_MAX_ATTEMPTS {
        return Ok(false);
    }
    conn.exec(
        "UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
        &[Arg::Int(now), Arg::Text(session_id)],
    )
    .await?;
    Ok(true)
}

/// A new sign-in of `user_id` already at `level` (a passkey proves both factors at once)
/// with its first refresh token.
pub(super) async fn open_sign_in<C: WriteConn>(
    conn: &mut C,
    session_id: &str,
    user_id: &str,
    level: super::SignInLevel,
    refresh: &NewRefreshToken,
    now: i64,
) -> Result<()> {
    conn.exec(
        "INSERT INTO sessions (id, user_id, created_at, expires_at, revoked_at, last_used_at, aal, factor_at)
         VALUES ($1, $2, $3, $4, NULL, $3, $5, $6)",
        &[
            Arg::Text(session_id),
            Arg::Text(user_id),
            Arg::Int(now),
            Arg::Int(refresh.expires_at),
            Arg::Int(i64::from(level.aal)),
            Arg::OptInt(level.factor_at),
        ],
    )
    .await?;
    record_refresh_token(conn, session_id, refresh, now).await
}
