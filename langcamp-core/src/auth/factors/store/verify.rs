//! The second step of a sign-in, as one piece: a checked proof spent (a TOTP step, a
//! recovery code, a passkey's counter) and the sign-in raised, or a wrong one counted.

use serde_json::json;

use super::Writer;
use crate::auth::session::{self, NewRefreshToken};
use crate::domain::error::Result;
use crate::platform::changes::Change;
use crate::platform::db::{Arg, Write, WriteConn};
use crate::platform::mail::OutgoingMail;

/// A second factor checked (beforehand, outside the piece) for `POST
/// /auth/second-factor/verify`, to be spent here.
pub(in crate::auth::factors) enum Checked {
    /// A TOTP code matching `step` of the factor (`None`: it matched no step).
    Totp {
        factor_id: String,
        step: Option<i64>,
    },
    /// A recovery code, by its keyed hash.
    Recovery { hash: String },
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
    /// The proof was wrong; `locked` when it was the fifth and ended the sign-in.
    Wrong { locked: bool },
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
}

impl Write for VerifyFactor {
    type Output = Verdict;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<Verdict> {
        let w = &self.writer;
        let spent = match &self.checked {
            Checked::Totp {
                factor_id,
                step: Some(step),
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
            Checked::Recovery { hash } => {
                let used = conn
                    .exec(
                        "UPDATE recovery_codes SET used_at = $1
                         WHERE user_id = $2 AND code_hash = $3 AND used_at IS NULL",
                        &[Arg::Int(w.now), Arg::Text(&w.user_id), Arg::Text(hash)],
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
            session::raise_sign_in(conn, &self.session_id, &self.refresh, w.now).await?;
            return Ok(Verdict::Raised);
        }
        let locked = session::count_wrong_factor(conn, &self.session_id, w.now).await?;
        if locked {
            w.record(conn, "auth.second_factor_locked", json!({}))
                .await?;
            w.app
                .announce(conn, &Change::Session(self.session_id.clone()))
                .await?;
        }
        Ok(Verdict::Wrong { locked })
    }
}
