//! The writes of a sign-in's own rows: a sign-in opened or raised, a wrong second-factor
//! code counted, a refresh token recorded; and the one column every token check reads
//! with the user, whether they have a second factor.

use crate::domain::error::Result;
use crate::platform::db::{Arg, Row as _, WriteConn};

/// The column `has_factor`: `1` when the user whose id is the SQL expression `$user_id` has
/// a confirmed second factor, else `0`. Read with the user's row where every request or
/// sign-in needs it (the token check, a returning user's sign-in): one `EXISTS` costs
/// a third of counting each kind, and most users have no factor to count.
macro_rules! has_factor {
    ($user_id:literal) => {
        concat!(
            "CASE WHEN EXISTS (SELECT 1 FROM user_factors f WHERE f.user_id = ",
            $user_id,
            " AND f.confirmed_at IS NOT NULL) THEN 1 ELSE 0 END AS has_factor "
        )
    };
}
pub(crate) use has_factor;

/// Records the refresh token `refresh` (its hash) of the sign-in `session_id`.
pub(crate) async fn record_refresh_token<C: WriteConn>(
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
pub(crate) async fn raise_sign_in<C: WriteConn>(
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
pub(crate) async fn count_wrong_factor<C: WriteConn>(
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
pub(crate) async fn open_sign_in<C: WriteConn>(
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
