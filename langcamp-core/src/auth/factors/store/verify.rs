//! The second step of a sign-in, as one piece: a checked proof spent (a TOTP step, a
//! recovery code, a passkey's counter) and the sign-in raised, or a wrong one counted.

use serde_json::json;

use super::Writer;
use crate::auth::session::{self, NewRefreshToken};
use crate::domain::error::Result;
use crate::platform::changes::Change;
use crate::platform::db::{Arg, Row as _, Write, WriteConn};
use crate::platform::mail::OutgoingMail;

/// A second factor checked (beforehand, outside the piece) for `POST
/// /auth/second-factor/verify`, to be spent here.
pub(in crate::auth::factors) enum Checked {
    /// A TOTP code matching `step` of the factor (`None`: it matched no step); its secret
    /// was read under a previous key when `resealed` holds the value read and the same
    /// secret sealed under the current key.
    Totp {
        factor_id: String,
        step: Option<i64>,
        resealed: Option<(Vec<u8>, Vec<u8>)>,
    },
    /// A recovery code, by the id of the unused code it matched (`None`: none).
    Recovery { code_id: Option<String> },
    /// A passkey assertion that verified: its factor, what the library stored when it was
    /// checked, and what it stores now.
    Passkey {
        factor_id: String,
        checked_against: String,
        passkey: String,
    },
    /// A proof that could not be right (no such factor, a failed assertion).
    Wrong,
}

/// The outcome of a second-factor check.
pub(in crate::auth::factors) enum Verdict {
    /// The sign-in is at level 2 now.
    Raised,
    /// The proof was wrong; `ended` when it was the sign-in's fifth and ended it,
    /// `locked` when it was the account's tenth in a row and locked its second step.
    Wrong { ended: bool, locked: bool },
    /// The account's second step is locked until then (epoch ms): the proof was not
    /// looked at.
    Locked { until: i64 },
}

/// Wrong second-factor answers in a row that lock an account's second step (CONTRACT §22).
pub(in crate::auth::factors) const ACCOUNT_MAX_WRONG: i64 = 10;
/// How long such a lock lasts.
pub(in crate::auth::factors) const LOCK_MS: i64 = 15 * 60 * 1000;

/// Until when (epoch ms) the second step of `user_id` is locked at `now`, if it is.
pub(in crate::auth::factors) async fn locked_until<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
    now: i64,
) -> Result<Option<i64>> {
    let row = conn
        .fetch_first(
            "SELECT locked_until FROM second_factor_failures WHERE user_id = $1 AND locked_until > $2",
            &[Arg::Text(user_id), Arg::Int(now)],
        )
        .await?;
    row.map(|row| row.int("locked_until")).transpose()
}

/// Counts a wrong answer of `user_id` against the account; from the tenth in a row on,
/// each locks the second step for [`LOCK_MS`] (so after a lock one more wrong answer locks
/// it again: only a right one starts the count anew). Whether this one locked it.
async fn count_wrong_answer<C: WriteConn>(conn: &mut C, user_id: &str, now: i64) -> Result<bool> {
    let failures = conn
        .fetch_first(
            "INSERT INTO second_factor_failures (user_id, failures, locked_until) VALUES ($1, 1, NULL)
             ON CONFLICT (user_id) DO UPDATE SET failures = second_factor_failures.failures + 1
             RETURNING failures",
            &[Arg::Text(user_id)],
        )
        .await?
        .map(|row| row.int("failures"))
        .transpose()?
        .unwrap_or(0);
    if failures < ACCOUNT_MAX_WRONG {
        return Ok(false);
    }
    conn.exec(
        "UPDATE second_factor_failures SET locked_until = $1 WHERE user_id = $2",
        &[Arg::Int(now + LOCK_MS), Arg::Text(user_id)],
    )
    .await?;
    Ok(true)
}

/// Spends a checked proof: a TOTP step accepted once, a recovery code used once, a
/// passkey's counter moved on; then the sign-in is raised. A wrong or replayed proof is
/// counted against the sign-in instead, and the fifth ends it.
pub(in crate::auth::factors) struct VerifyFactor {
    pub writer: Writer,
    pub session_id: String,
    pub checked: Checked,
    pub refresh: NewRefreshToken,
    /// Sent when a recovery code is used.
    pub recovery_notice: OutgoingMail,
    /// Sent when this answer locks the account's second step.
    pub locked_notice: OutgoingMail,
}

impl Write for VerifyFactor {
    type Output = Verdict;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<Verdict> {
        let w = &self.writer;
        // Checked again here: of concurrent answers, none passes a lock another one set.
        if let Some(until) = locked_until(conn, &w.user_id, w.now).await? {
            return Ok(Verdict::Locked { until });
        }
        if let Checked::Totp {
            factor_id,
            resealed: Some((read, again)),
            ..
        } = &self.checked
        {
            // The secret read under a previous key is kept under the current one, right
            // answer or wrong (unless it changed meanwhile).
            conn.exec(
                "UPDATE user_factors SET totp_secret = $1 WHERE id = $2 AND totp_secret = $3",
                &[Arg::Bytes(again), Arg::Text(factor_id), Arg::Bytes(read)],
            )
            .await?;
        }
        let spent = match &self.checked {
            Checked::Totp {
                factor_id,
                step: Some(step),
                ..
            } => {
                // A step is accepted once (RFC 6238 §5.2): of two uses of one code, and of
                // concurrent ones, the first moves `totp_last_step` past it.
                conn.exec(
                    "UPDATE user_factors SET totp_last_step = $1, last_used_at = $2
                     WHERE id = $3 AND user_id = $4 AND confirmed_at IS NOT NULL
                       AND (totp_last_step IS NULL OR totp_last_step < $1)",
                    &[
                        Arg::Int(*step),
                        Arg::Int(w.now),
                        Arg::Text(factor_id),
                        Arg::Text(&w.user_id),
                    ],
                )
                .await?
                    == 1
            }
            Checked::Recovery { code_id: None } => false,
            Checked::Recovery {
                code_id: Some(code_id),
            } => {
                let used = conn
                    .exec(
                        "UPDATE recovery_codes SET used_at = $1
                         WHERE id = $2 AND user_id = $3 AND used_at IS NULL",
                        &[Arg::Int(w.now), Arg::Text(code_id), Arg::Text(&w.user_id)],
                    )
                    .await?
                    == 1;
                if used {
                    w.record(conn, "recovery_code.used", json!({})).await?;
                    w.notify(conn, &self.recovery_notice).await?;
                }
                used
            }
            Checked::Passkey {
                factor_id,
                checked_against,
                passkey,
            } => {
                // Only if no other use of the passkey moved its counter meanwhile.
                conn.exec(
                    "UPDATE user_factors SET passkey = $1, last_used_at = $2
                     WHERE id = $3 AND user_id = $4 AND passkey = $5",
                    &[
                        Arg::Text(passkey),
                        Arg::Int(w.now),
                        Arg::Text(factor_id),
                        Arg::Text(&w.user_id),
                        Arg::Text(checked_against),
                    ],
                )
                .await?
                    == 1
            }
            Checked::Totp { step: None, .. } | Checked::Wrong => false,
        };
        if spent {
            conn.exec(
                "DELETE FROM second_factor_failures WHERE user_id = $1",
                &[Arg::Text(&w.user_id)],
            )
            .await?;
            session::raise_sign_in(conn, &self.session_id, &self.refresh, w.now).await?;
            return Ok(Verdict::Raised);
        }
        let ended = session::count_wrong_factor(conn, &self.session_id, w.now).await?;
        if ended {
            w.record(conn, "auth.second_factor_locked", json!({}))
                .await?;
            w.app
                .announce(conn, &Change::Session(self.session_id.clone()))
                .await?;
        }
        let locked = count_wrong_answer(conn, &w.user_id, w.now).await?;
        if locked {
            let until = crate::domain::time::Timestamp::from_millis(w.now + LOCK_MS);
            w.record(
                conn,
                "auth.second_factor_locked",
                json!({ "lockedUntil": { "from": null, "to": until } }),
            )
            .await?;
            w.notify(conn, &self.locked_notice).await?;
        }
        Ok(Verdict::Wrong { ended, locked })
    }
}
