//! The SQL of second factors: reads on any connection, and the writes as pieces of the
//! group commit ([`Write`]), each with its audit entry, its security notice mail and the
//! change notice that makes every instance forget the user's cached sign-ins (whether a
//! user has a factor is part of them).

mod passkeys;
mod verify;

use serde_json::json;

use super::{Factor, FactorKind};
use crate::Langcamp;
use crate::audit::{self, Entries, Entry, Staff, StaffWrite, Target};
use crate::auth::session::{self, FactorMethod, NewRefreshToken};
use crate::domain::actor::Actor;
use crate::domain::error::{Error, Result};
use crate::domain::time::Timestamp;
use crate::platform::changes::Change;
use crate::platform::db::{Arg, Locks, Row, Write, WriteConn};
use crate::platform::mail::{MailKind, OutgoingMail};

pub(super) use self::passkeys::{
    PasskeySignIn, SaveChallenge, TakeChallenge, passkey_by_credential, passkeys_of,
};
pub(super) use self::verify::{Checked, Verdict, VerifyFactor, locked_until};

fn factor_from_row(row: &impl Row) -> Result<Factor> {
    Ok(Factor {
        id: row.text("id")?,
        kind: match row.text("kind")?.as_str() {
            "totp" => FactorKind::Totp,
            _ => FactorKind::Passkey,
        },
        name: row.text("name")?,
        created_at: Timestamp::from_millis(row.int("created_at")?),
        last_used_at: row.opt_int("last_used_at")?.map(Timestamp::from_millis),
    })
}

/// A user's confirmed factors, oldest first.
pub(super) async fn confirmed<C: WriteConn>(conn: &mut C, user_id: &str) -> Result<Vec<Factor>> {
    let rows = conn
        .fetch_all(
            "SELECT id, kind, name, created_at, last_used_at FROM user_factors
             WHERE user_id = $1 AND confirmed_at IS NOT NULL ORDER BY created_at, id",
            &[Arg::Text(user_id)],
        )
        .await?;
    rows.iter().map(factor_from_row).collect()
}

/// A user's unused recovery codes: each one's id and stored hash.
pub(super) async fn unused_recovery_codes<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
) -> Result<Vec<(String, String)>> {
    let rows = conn
        .fetch_all(
            "SELECT id, code_hash FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL",
            &[Arg::Text(user_id)],
        )
        .await?;
    rows.iter()
        .map(|row| Ok((row.text("id")?, row.text("code_hash")?)))
        .collect()
}

/// How many of a user's recovery codes are unused.
pub(super) async fn recovery_codes_left<C: WriteConn>(conn: &mut C, user_id: &str) -> Result<i64> {
    let row = conn
        .fetch_first(
            "SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL",
            &[Arg::Text(user_id)],
        )
        .await?;
    row.map_or(Ok(0), |row| row.int("n"))
}

/// The ways a user can pass their second factor, in one statement: their confirmed
/// factors' kinds, and `recovery` while a code is left.
pub(super) async fn methods<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
) -> Result<Vec<FactorMethod>> {
    let Some(row) = conn
        .fetch_first(
            "SELECT
                 (SELECT COUNT(*) FROM user_factors
                  WHERE user_id = $1 AND kind = 'totp' AND confirmed_at IS NOT NULL) AS totp,
                 (SELECT COUNT(*) FROM user_factors
                  WHERE user_id = $1 AND kind = 'passkey' AND confirmed_at IS NOT NULL) AS passkey,
                 (SELECT COUNT(*) FROM recovery_codes
                  WHERE user_id = $1 AND used_at IS NULL) AS recovery",
            &[Arg::Text(user_id)],
        )
        .await?
    else {
        return Ok(Vec::new());
    };
    let (totp, passkey) = (row.int("totp")? > 0, row.int("passkey")? > 0);
    let mut methods = Vec::with_capacity(3);
    if totp {
        methods.push(FactorMethod::Totp);
    }
    if passkey {
        methods.push(FactorMethod::Passkey);
    }
    // Codes without a factor (none are made then) would be no second factor.
    if (totp || passkey) && row.int("recovery")? > 0 {
        methods.push(FactorMethod::Recovery);
    }
    Ok(methods)
}

/// A user's TOTP factor as stored: its secret still sealed.
pub(super) struct StoredTotp {
    pub id: String,
    pub name: String,
    pub sealed: Vec<u8>,
    pub confirmed: bool,
}

/// The user's TOTP factor, pending or confirmed, if any.
pub(super) async fn totp_of<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
) -> Result<Option<StoredTotp>> {
    let row = conn
        .fetch_first(
            "SELECT id, name, totp_secret, confirmed_at FROM user_factors
             WHERE user_id = $1 AND kind = 'totp'",
            &[Arg::Text(user_id)],
        )
        .await?;
    row.map(|row| {
        Ok(StoredTotp {
            id: row.text("id")?,
            name: row.text("name")?,
            sealed: row.bytes("totp_secret")?,
            confirmed: row.opt_int("confirmed_at")?.is_some(),
        })
    })
    .transpose()
}

/// One confirmed factor of a user, if it is theirs.
pub(super) async fn factor_of<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
    factor_id: &str,
) -> Result<Option<Factor>> {
    let row = conn
        .fetch_first(
            "SELECT id, kind, name, created_at, last_used_at FROM user_factors
             WHERE id = $1 AND user_id = $2 AND confirmed_at IS NOT NULL",
            &[Arg::Text(factor_id), Arg::Text(user_id)],
        )
        .await?;
    row.as_ref().map(factor_from_row).transpose()
}

/// What every factor write carries: who acts, on whose account, when.
pub(super) struct Writer {
    pub app: Langcamp,
    pub actor: Actor,
    pub user_id: String,
    pub now: i64,
}

impl Writer {
    async fn record<C: WriteConn>(
        &self,
        conn: &mut C,
        action: &'static str,
        changes: serde_json::Value,
    ) -> Result<()> {
        let entry = Entry::new(action, Target::user(&self.user_id)).with_change_map(changes);
        audit::record_own(conn, &self.app, &self.actor, entry).await
    }

    async fn notify<C: WriteConn>(&self, conn: &mut C, notice: &OutgoingMail) -> Result<()> {
        self.app
            .queue_mail(conn, MailKind::SecurityNotice, notice, None)
            .await
    }

    /// The user's cached sign-ins are forgotten on every instance once this commits.
    async fn announce<C: WriteConn>(&self, conn: &mut C) -> Result<()> {
        self.app
            .announce(conn, &Change::User(self.user_id.clone()))
            .await
    }
}

/// A factor's audit `changes`: its type and name appearing or going.
fn factor_change(kind: FactorKind, name: &str, added: bool) -> serde_json::Value {
    let (kind, name) = (json!(kind.as_str()), json!(name));
    if added {
        json!({ "type": { "from": null, "to": kind }, "name": { "from": null, "to": name } })
    } else {
        json!({ "type": { "from": kind, "to": null }, "name": { "from": name, "to": null } })
    }
}

/// Recovery codes to store: each code's id and Argon2id hash (the codes themselves are
/// shown once and never stored).
pub(super) type CodeHashes = Vec<(String, String)>;

async fn replace_recovery_codes<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
    codes: &CodeHashes,
    now: i64,
) -> Result<()> {
    conn.exec(
        "DELETE FROM recovery_codes WHERE user_id = $1",
        &[Arg::Text(user_id)],
    )
    .await?;
    for (id, hash) in codes {
        conn.exec(
            "INSERT INTO recovery_codes (id, user_id, code_hash, created_at, used_at)
             VALUES ($1, $2, $3, $4, NULL)",
            &[
                Arg::Text(id),
                Arg::Text(user_id),
                Arg::Text(hash),
                Arg::Int(now),
            ],
        )
        .await?;
    }
    Ok(())
}

/// `POST /me/factors/totp`: a pending TOTP factor, replacing a pending one; 409 with a
/// confirmed one. Nothing is audited until it is confirmed.
pub(super) struct StartTotp {
    pub user_id: String,
    pub id: String,
    pub name: String,
    pub sealed: Vec<u8>,
    pub now: i64,
}

impl Write for StartTotp {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
        conn.take_user(&self.user_id).await?;
        if totp_of(conn, &self.user_id)
            .await?
            .is_some_and(|t| t.confirmed)
        {
            return Err(super::totp_exists());
        }
        conn.exec(
            "DELETE FROM user_factors WHERE user_id = $1 AND kind = 'totp' AND confirmed_at IS NULL",
            &[Arg::Text(&self.user_id)],
        )
        .await?;
        conn.exec(
            "INSERT INTO user_factors (id, user_id, kind, name, totp_secret, created_at)
             VALUES ($1, $2, 'totp', $3, $4, $5)",
            &[
                Arg::Text(&self.id),
                Arg::Text(&self.user_id),
                Arg::Text(&self.name),
                Arg::Bytes(&self.sealed),
                Arg::Int(self.now),
            ],
        )
        .await?;
        Ok(())
    }
}

/// The factor a [`AddFactor`] makes active.
pub(super) enum NewFactor {
    /// A pending TOTP factor, confirmed by a code of time step `step`.
    ConfirmTotp { id: String, step: i64 },
    /// A registered passkey.
    Passkey {
        id: String,
        name: String,
        credential_id: String,
        passkey: String,
    },
}

/// A factor made active (a TOTP confirmed, a passkey registered): the first one of a user
/// brings recovery codes; the caller's sign-in is raised to level 2 with a new refresh
/// token (the previous one rotated away); each is audited and told by mail.
pub(super) struct AddFactor {
    pub writer: Writer,
    pub session_id: String,
    /// The assurance level of the caller's sign-in.
    pub level: u8,
    pub factor: NewFactor,
    /// Stored only if this is the user's first factor.
    pub codes: CodeHashes,
    pub refresh: NewRefreshToken,
    pub added_notice: OutgoingMail,
    pub codes_notice: OutgoingMail,
}

impl Write for AddFactor {
    /// The factor, and whether it is the user's first (the codes were stored).
    type Output = (Factor, bool);

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<(Factor, bool)> {
        let w = &self.writer;
        conn.take_user(&w.user_id).await?;
        let first = confirmed(conn, &w.user_id).await?.is_empty();
        // Whoever reads the mailbox must not add a factor of their own: a factor added by
        // the owner since this began holds a level-1 sign-in to it (CONTRACT §20).
        if !first && self.level < 2 {
            return Err(Error::SecondFactorRequired);
        }
        let id = match &self.factor {
            NewFactor::ConfirmTotp { id, step } => {
                let confirmed = conn
                    .exec(
                        "UPDATE user_factors SET confirmed_at = $1, last_used_at = $1, totp_last_step = $2
                         WHERE id = $3 AND user_id = $4 AND kind = 'totp' AND confirmed_at IS NULL",
                        &[Arg::Int(w.now), Arg::Int(*step), Arg::Text(id), Arg::Text(&w.user_id)],
                    )
                    .await?;
                if confirmed == 0 {
                    return Err(super::no_pending_totp());
                }
                id
            }
            NewFactor::Passkey {
                id,
                name,
                credential_id,
                passkey,
            } => {
                if passkeys_of(conn, &w.user_id).await?.len() >= super::MAX_PASSKEYS {
                    return Err(Error::Conflict(format!(
                        "{} passkeys are the most one account may have: remove one first",
                        super::MAX_PASSKEYS
                    )));
                }
                conn.exec(
                    "INSERT INTO user_factors (id, user_id, kind, name, credential_id, passkey, created_at, confirmed_at)
                     VALUES ($1, $2, 'passkey', $3, $4, $5, $6, $6)",
                    &[
                        Arg::Text(id),
                        Arg::Text(&w.user_id),
                        Arg::Text(name),
                        Arg::Text(credential_id),
                        Arg::Text(passkey),
                        Arg::Int(w.now),
                    ],
                )
                .await
                .map_err(|e| match e {
                    // The credential's own id, taken from its attestation.
                    Error::Conflict(_) => super::registered_already(),
                    other => other,
                })?;
                id
            }
        };
        let factor = factor_of(conn, &w.user_id, id)
            .await?
            .ok_or_else(|| Error::internal("the factor just added is gone"))?;
        session::raise_sign_in(conn, &self.session_id, &self.refresh, w.now).await?;
        w.record(
            conn,
            "factor.added",
            factor_change(factor.kind, &factor.name, true),
        )
        .await?;
        w.notify(conn, &self.added_notice).await?;
        if first {
            if self.codes.is_empty() {
                // The codes were made only if the user had no factor when this began.
                return Err(Error::Conflict(
                    "your second factors changed meanwhile: try again".into(),
                ));
            }
            replace_recovery_codes(conn, &w.user_id, &self.codes, w.now).await?;
            w.record(conn, "recovery_codes.created", json!({})).await?;
            w.notify(conn, &self.codes_notice).await?;
        }
        w.announce(conn).await?;
        Ok((factor, first))
    }
}

/// `DELETE /me/factors/{id}`: the factor goes, and with the user's last factor their
/// recovery codes; staff held to a factor keep their last one (409).
pub(super) struct RemoveFactor {
    pub writer: Writer,
    pub factor_id: String,
    pub keep_last: bool,
    pub notice: OutgoingMail,
}

impl Write for RemoveFactor {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
        let w = &self.writer;
        conn.take_user(&w.user_id).await?;
        let factors = confirmed(conn, &w.user_id).await?;
        let Some(factor) = factors.iter().find(|f| f.id == self.factor_id) else {
            return Err(super::factor_not_found());
        };
        if factors.len() == 1 && self.keep_last {
            return Err(Error::Conflict(
                "staff keep at least one second factor: add another before removing this one"
                    .into(),
            ));
        }
        conn.exec(
            "DELETE FROM user_factors WHERE id = $1",
            &[Arg::Text(&factor.id)],
        )
        .await?;
        if factors.len() == 1 {
            conn.exec(
                "DELETE FROM recovery_codes WHERE user_id = $1",
                &[Arg::Text(&w.user_id)],
            )
            .await?;
        }
        w.record(
            conn,
            "factor.removed",
            factor_change(factor.kind, &factor.name, false),
        )
        .await?;
        w.notify(conn, &self.notice).await?;
        w.announce(conn).await
    }
}

/// `POST /me/recovery-codes`: ten new codes; every earlier one is void.
pub(super) struct NewRecoveryCodes {
    pub writer: Writer,
    pub codes: CodeHashes,
    pub notice: OutgoingMail,
}

impl Write for NewRecoveryCodes {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<()> {
        let w = &self.writer;
        conn.take_user(&w.user_id).await?;
        if confirmed(conn, &w.user_id).await?.is_empty() {
            return Err(Error::Conflict(
                "recovery codes come with a second factor: add one first".into(),
            ));
        }
        replace_recovery_codes(conn, &w.user_id, &self.codes, w.now).await?;
        w.record(conn, "recovery_codes.created", json!({})).await?;
        w.notify(conn, &self.notice).await
    }
}

/// `DELETE /admin/users/{id}/factors` and `langcamp users reset-factors`: every factor and
/// recovery code of the user goes, and their sign-ins end; a staff write.
pub(super) struct ResetFactors {
    pub user_id: String,
    pub notice: OutgoingMail,
}

impl StaffWrite for ResetFactors {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<((), Entries)> {
        let user_id = self.user_id.as_str();
        conn.take_user(user_id).await?;
        let removed = conn
            .exec(
                "DELETE FROM user_factors WHERE user_id = $1",
                &[Arg::Text(user_id)],
            )
            .await?;
        conn.exec(
            "DELETE FROM recovery_codes WHERE user_id = $1",
            &[Arg::Text(user_id)],
        )
        .await?;
        conn.exec(
            "UPDATE sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL",
            &[Arg::Int(by.now), Arg::Text(user_id)],
        )
        .await?;
        by.app
            .queue_mail(conn, MailKind::SecurityNotice, &self.notice, None)
            .await?;
        let entry = Entry::new("user.factors_reset", Target::user(user_id))
            .with_change_map(json!({ "factors": { "from": removed, "to": 0 } }));
        Ok(((), entry.into()))
    }
}
