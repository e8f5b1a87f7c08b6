//! Second factors (CONTRACT §20): TOTP, recovery codes and, with `passkeys`, WebAuthn
//! credentials; and the second step of a sign-in that raises it to assurance level 2.
//!
//! Why: staff accounts were protected by one mailbox, and whoever reads one sign-in mail
//! could download the school's whole student register. So staff need a second factor
//! (`STAFF_SECOND_FACTOR`, default `required`), anyone may add one, and a user who has one
//! is held to it (the highest assurance available).
//!
//! * Enrolment: a TOTP factor is pending until a code from the authenticator app confirms
//!   it; confirming (or registering a passkey) raises the caller's sign-in to level 2 and,
//!   for the first factor, makes ten recovery codes, shown once. Whoever reads the mailbox
//!   must not add a factor of their own: a user who has one adds another only from a
//!   level-2 sign-in with a recent check (step-up), never at level 1.
//! * The second step: `verify_second_factor` spends a TOTP code (each time step once), a
//!   recovery code (once) or a passkey assertion; five wrong ones end the sign-in.
//! * Secrets: a TOTP secret is sealed (AEAD, a key derived from the server secret) before
//!   it is stored and shown once, at enrolment; recovery codes are stored as keyed hashes.
//!   Neither is logged, audited or answered again.
//! * Every change is audited and told to the user by mail in their language (the
//!   `security_notice` template), and makes every instance forget the user's cached
//!   sign-ins, which carry whether the user has a factor.
//!
//! Where the rule "a sign-in held to a second factor reaches only its own account" lives:
//! in [`crate::Actor`] (`caller`, `require`), the path every operation takes.

mod input;
pub mod passkeys;
mod recovery;
mod store;
pub mod totp;

use serde::Serialize;
use utoipa::ToSchema;

use crate::Langcamp;
use crate::auth::input::OtpCode;
use crate::auth::session::{FactorMethod, SignInLevel, SignedIn};
use crate::domain::Id;
use crate::domain::actor::{Actor, Caller, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::time::Timestamp;
use crate::mail_templates::{MailBook, MailValues, SecurityEvent};
use crate::platform::changes::Change;
use crate::platform::config::SecondFactorPolicy;
use crate::platform::db::WriteConn;
use crate::platform::keyring::{self, KeyCounts, Opened, Purpose, SealedColumn};
use crate::platform::mail::OutgoingMail;
use crate::users::{self, User};

pub use self::input::{
    CodeInput, FactorName, NewPasskey, PasskeyAnswer, PasskeyOptionsInput,
    PasskeyRegistrationInput, PasskeyVerifyInput, ProofMethod, SecondFactorInput,
    SecondFactorProof, TotpStartInput,
};
pub use self::passkeys::{MAX_PASSKEYS, PasskeyOptions};
pub use self::recovery::CODES as RECOVERY_CODES;
use self::store::{Checked, CodeHashes, Verdict, Writer};

/// A kind of second factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FactorKind {
    Totp,
    Passkey,
}

impl FactorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FactorKind::Totp => "totp",
            FactorKind::Passkey => "passkey",
        }
    }
}

/// A confirmed second factor, as its owner sees it: never a secret.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Factor {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: FactorKind,
    pub name: String,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

/// `GET /me/factors`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FactorList {
    pub factors: Vec<Factor>,
    pub recovery_codes_left: u32,
}

/// `POST /me/factors/totp`: the pending factor and what the authenticator app needs.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TotpEnrolment {
    pub id: String,
    /// The secret in base32, for typing into an app; shown only now.
    pub secret: String,
    /// `otpauth://totp/<school>:<e-mail>?secret=...&issuer=<school>`, for a QR code.
    pub otpauth_uri: String,
}

/// A factor made active: the caller's sign-in is at level 2 with these tokens.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FactorAdded {
    pub factor: Factor,
    /// The ten recovery codes, with the user's first factor only (else `null`); shown
    /// only now.
    pub recovery_codes: Option<Vec<String>>,
    pub access_token: String,
    pub refresh_token: String,
    #[schema(minimum = 2, maximum = 2)]
    pub aal: u8,
}

/// `POST /me/recovery-codes`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryCodes {
    pub recovery_codes: Vec<String>,
}

fn factor_not_found() -> Error {
    Error::not_found("factor")
}

fn totp_exists() -> Error {
    Error::Conflict("a TOTP factor is already set up: remove it before adding another".into())
}

fn registered_already() -> Error {
    Error::Conflict("this passkey is registered already".into())
}

fn no_pending_totp() -> Error {
    Error::not_found("pending TOTP factor")
}

/// The ways `user_id` can pass a second factor, inside a sign-in's write (the answer's
/// `methods`).
pub(crate) async fn methods_of<C: WriteConn>(
    conn: &mut C,
    user_id: &str,
) -> Result<Vec<FactorMethod>> {
    store::methods(conn, user_id).await
}

/// The answer while an account's second step is locked until `until` (epoch ms).
fn second_step_locked(until: i64, now: i64) -> Error {
    let wait_ms = u64::try_from(until.saturating_sub(now)).unwrap_or(0);
    Error::Locked {
        message: "too many wrong answers: this account's second step is locked for a while; try again later".into(),
        retry_after_secs: wait_ms.div_ceil(1000),
    }
}

/// When something happened, for people reading a mail.
fn for_people(now: i64) -> String {
    chrono::DateTime::from_timestamp_millis(now)
        .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

impl Langcamp {
    /// The user behind `user_id` (404 when there is none), for a notice's address and
    /// language.
    async fn account(&self, user_id: &str) -> Result<User> {
        let mut conn = self.db().reader().acquire().await?;
        users::find_user(&mut conn, user_id)
            .await?
            .ok_or_else(|| Error::not_found("user"))
    }

    /// The security notice to `user` about `event` (on `factor_name`), in their language.
    fn notice(
        &self,
        book: &MailBook,
        user: &User,
        event: SecurityEvent,
        factor_name: &str,
        now: i64,
    ) -> Result<OutgoingMail> {
        let values = MailValues::SecurityNotice {
            event,
            factor_name: factor_name.to_owned(),
            at: for_people(now),
        };
        book.compose(&user.email, Some(&user.locale), &values)
    }

    fn writer(&self, actor: &Actor, user_id: &str, now: i64) -> Writer {
        Writer {
            app: self.clone(),
            actor: actor.clone(),
            user_id: user_id.to_owned(),
            now,
        }
    }

    /// Who may add a factor now: anyone without one (at level 1 too: enrolment); a user
    /// with one only from a level-2 sign-in with a recent check, so that whoever reads the
    /// mailbox cannot add a factor of their own.
    fn may_add_factor<'a>(&self, actor: &'a Actor) -> Result<&'a Caller> {
        let caller = actor.caller_before_second_factor()?;
        if caller.assurance.has_factor {
            if caller.assurance.level < 2 {
                return Err(Error::SecondFactorRequired);
            }
            self.require_step_up(actor)?;
        }
        Ok(caller)
    }

    /// Ten recovery codes as shown, and their hashes to store.
    async fn recovery_codes(&self) -> Result<(Vec<String>, CodeHashes)> {
        let codes = recovery::new_codes();
        let plain = codes
            .iter()
            .filter_map(|c| recovery::normalized(c))
            .collect();
        let hashes = recovery::hash_all(plain).await?;
        Ok((codes, hashes.into_iter().map(|h| (new_id(), h)).collect()))
    }

    /// `GET /me/factors`: the caller's confirmed factors and unused recovery codes; open
    /// before the second factor too.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_factors(&self, actor: &Actor) -> Result<FactorList> {
        let caller = actor.caller_before_second_factor()?;
        self.factors_of(&caller.user_id).await
    }

    /// A user's factors and unused recovery codes (the console's users view; the caller
    /// checks who may see them).
    async fn factors_of(&self, user_id: &str) -> Result<FactorList> {
        let mut conn = self.db().read_snapshot().await?;
        let factors = store::confirmed(&mut *conn, user_id).await?;
        let left = store::recovery_codes_left(&mut *conn, user_id).await?;
        Ok(FactorList {
            factors,
            recovery_codes_left: u32::try_from(left).unwrap_or(0),
        })
    }

    /// A user's factors, for staff (superadmin, or the operator): the console shows them
    /// beside the user.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn user_factors(&self, actor: &Actor, user_id: &Id<User>) -> Result<FactorList> {
        actor.require(Role::Superadmin)?;
        self.account(user_id.as_str()).await?;
        self.factors_of(user_id.as_str()).await
    }

    /// `POST /me/factors/totp`: a pending TOTP factor (replacing a pending one) with its
    /// secret and `otpauth://` URI; 409 with a confirmed one.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn start_totp(&self, actor: &Actor, name: FactorName) -> Result<TotpEnrolment> {
        let caller = self.may_add_factor(actor)?;
        let book = self.mail_book().await?;
        let secret = totp::new_secret();
        let (base32, otpauth_uri) = totp::enrolment(&secret, book.school_name(), &caller.email)?;
        let id = new_id();
        let start = store::StartTotp {
            user_id: caller.user_id.clone(),
            id: id.clone(),
            name: name.into_string(),
            sealed: self.keys().seal(Purpose::FactorSecret, &id, &secret),
            now: self.clock().now_ms(),
        };
        self.write_change(start, None).await?;
        Ok(TotpEnrolment {
            id,
            secret: base32,
            otpauth_uri,
        })
    }

    /// `POST /me/factors/totp/{id}/confirm`: a code from the app makes the pending factor
    /// active and raises the caller's sign-in to level 2 (no second code needed); the
    /// first factor brings recovery codes. A wrong code: 400, the factor stays pending.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn confirm_totp(
        &self,
        actor: &Actor,
        factor_id: &str,
        code: OtpCode,
    ) -> Result<FactorAdded> {
        let caller = self.may_add_factor(actor)?;
        let now = self.clock().now_ms();
        let mut conn = self.db().reader().acquire().await?;
        let pending = store::totp_of(&mut *conn, &caller.user_id)
            .await?
            .filter(|t| t.id == factor_id && !t.confirmed)
            .ok_or_else(no_pending_totp)?;
        drop(conn);
        let secret = self.open_secret(&pending.id, &pending.sealed)?.plain;
        let Some(step) = totp::matching_step(&secret, code.as_str(), now)? else {
            return Err(Error::invalid(
                "code is not the one the authenticator app shows now; the factor stays pending",
            ));
        };
        let factor = store::NewFactor::ConfirmTotp {
            id: pending.id,
            step,
        };
        self.add_factor(actor, caller, factor, &pending.name, now)
            .await
    }

    /// Makes `factor` active for the caller (a confirmed TOTP, a registered passkey).
    async fn add_factor(
        &self,
        actor: &Actor,
        caller: &Caller,
        factor: store::NewFactor,
        name: &str,
        now: i64,
    ) -> Result<FactorAdded> {
        let book = self.mail_book().await?;
        let user = self.account(&caller.user_id).await?;
        // Only a first factor brings codes (the piece checks again).
        let (codes, hashes) = if caller.assurance.has_factor {
            (Vec::new(), Vec::new())
        } else {
            self.recovery_codes().await?
        };
        let (refresh_token, refresh) = self.new_refresh_token(now);
        let adding = store::AddFactor {
            writer: self.writer(actor, &caller.user_id, now),
            session_id: caller.session_id.clone(),
            level: caller.assurance.level,
            factor,
            codes: hashes,
            refresh,
            added_notice: self.notice(&book, &user, SecurityEvent::FactorAdded, name, now)?,
            codes_notice: self.notice(
                &book,
                &user,
                SecurityEvent::RecoveryCodesCreated,
                "",
                now,
            )?,
        };
        let change = Change::User(caller.user_id.clone());
        let (factor, first) = self.write_change(adding, Some(change)).await?;
        self.wake_mail_worker();
        let level = SignInLevel::second_factor(now);
        Ok(FactorAdded {
            factor,
            recovery_codes: first.then_some(codes),
            access_token: self.sign_access_token(
                &user.id,
                &caller.session_id,
                user.role,
                level,
                now,
            )?,
            refresh_token,
            aal: level.aal,
        })
    }

    /// Opens the stored secret of the TOTP factor `factor_id`. One that no configured
    /// secret opens (a secret was lost) cannot be used: 409, the factor must be reset
    /// (CONTRACT §22).
    fn open_secret(&self, factor_id: &str, sealed: &[u8]) -> Result<Opened> {
        self.keys()
            .open(Purpose::FactorSecret, factor_id, sealed)
            .ok_or_else(|| {
                tracing::warn!(%factor_id, "a TOTP secret opens under no configured secret");
                Error::Conflict(
                    "this authenticator app can no longer be checked (the server's key that kept it was lost): \
                     sign in with a passkey or a recovery code, or ask a superadmin or the operator to reset your factors \
                     (langcamp users reset-factors)"
                        .into(),
                )
            })
    }

    /// `DELETE /me/factors/{id}`: removes one of the caller's factors (step-up); staff
    /// held to a second factor keep their last one (409).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn remove_factor(&self, actor: &Actor, factor_id: &str) -> Result<()> {
        let caller = actor.caller()?;
        self.require_step_up(actor)?;
        let now = self.clock().now_ms();
        let mut conn = self.db().reader().acquire().await?;
        let factor = store::factor_of(&mut *conn, &caller.user_id, factor_id)
            .await?
            .ok_or_else(factor_not_found)?;
        drop(conn);
        let book = self.mail_book().await?;
        let user = self.account(&caller.user_id).await?;
        let keep_last = caller.role >= Role::Admin
            && self.config().staff_second_factor == SecondFactorPolicy::Required;
        let removing = store::RemoveFactor {
            writer: self.writer(actor, &caller.user_id, now),
            factor_id: factor.id,
            keep_last,
            notice: self.notice(
                &book,
                &user,
                SecurityEvent::FactorRemoved,
                &factor.name,
                now,
            )?,
        };
        self.write_change(removing, Some(Change::User(caller.user_id.clone())))
            .await?;
        self.wake_mail_worker();
        Ok(())
    }

    /// `POST /me/recovery-codes`: ten new codes (step-up); every earlier one is void.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn new_recovery_codes(&self, actor: &Actor) -> Result<RecoveryCodes> {
        let caller = actor.caller()?;
        self.require_step_up(actor)?;
        let now = self.clock().now_ms();
        let book = self.mail_book().await?;
        let user = self.account(&caller.user_id).await?;
        let (codes, hashes) = self.recovery_codes().await?;
        let making = store::NewRecoveryCodes {
            writer: self.writer(actor, &caller.user_id, now),
            codes: hashes,
            notice: self.notice(&book, &user, SecurityEvent::RecoveryCodesCreated, "", now)?,
        };
        self.write_change(making, None).await?;
        self.wake_mail_worker();
        Ok(RecoveryCodes {
            recovery_codes: codes,
        })
    }

    /// `DELETE /admin/users/{id}/factors` (superadmin, step-up) and `langcamp users
    /// reset-factors` (the operator): every factor and recovery code of the user goes and
    /// their sign-ins end, for a colleague locked out. Not one's own (400).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn reset_factors(&self, actor: &Actor, user_id: &Id<User>) -> Result<()> {
        actor.require(Role::Superadmin)?;
        self.require_step_up(actor)?;
        if actor.user_id() == Some(user_id.as_str()) {
            return Err(Error::invalid(
                "you cannot reset your own factors: remove them one by one, or ask another superadmin",
            ));
        }
        let user = self.account(user_id.as_str()).await?;
        let now = self.clock().now_ms();
        let book = self.mail_book().await?;
        let resetting = store::ResetFactors {
            user_id: user.id.clone(),
            notice: self.notice(&book, &user, SecurityEvent::FactorsReset, "", now)?,
        };
        self.staff_write(actor, resetting, Some(Change::User(user.id.clone())))
            .await?;
        self.wake_mail_worker();
        Ok(())
    }

    /// `POST /auth/second-factor/verify`: a TOTP code, a recovery code or a passkey
    /// assertion raises the caller's sign-in to level 2, with new tokens for the same
    /// sign-in. Wrong: 401 `OTP_INVALID`; the fifth wrong one ends the sign-in, and the
    /// account's tenth in a row locks its second step for 15 minutes (every answer then:
    /// [`Error::Locked`], told by mail and audited; CONTRACT §22).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn verify_second_factor(
        &self,
        actor: &Actor,
        proof: SecondFactorProof,
    ) -> Result<SignedIn> {
        let caller = actor.caller_before_second_factor()?;
        let now = self.clock().now_ms();
        let mut conn = self.db().reader().acquire().await?;
        let locked = store::locked_until(&mut *conn, &caller.user_id, now).await?;
        drop(conn);
        if let Some(until) = locked {
            return Err(second_step_locked(until, now));
        }
        let checked = self.check_proof(caller, proof, now).await?;
        let book = self.mail_book().await?;
        let user = self.account(&caller.user_id).await?;
        let (refresh_token, refresh) = self.new_refresh_token(now);
        let verifying = store::VerifyFactor {
            writer: self.writer(actor, &caller.user_id, now),
            session_id: caller.session_id.clone(),
            checked,
            refresh,
            recovery_notice: self.notice(&book, &user, SecurityEvent::RecoveryCodeUsed, "", now)?,
            locked_notice: self.notice(&book, &user, SecurityEvent::Locked, "", now)?,
        };
        let change = Change::Session(caller.session_id.clone());
        match self.write_change(verifying, Some(change)).await? {
            Verdict::Raised => {
                self.wake_mail_worker();
                let mut conn = self.db().reader().acquire().await?;
                let methods = store::methods(&mut *conn, &user.id).await?;
                drop(conn);
                let session = caller.session_id.clone();
                self.signed_in(
                    user,
                    &session,
                    SignInLevel::second_factor(now),
                    methods,
                    refresh_token,
                    now,
                )
            }
            Verdict::Wrong { ended, locked } => {
                if ended {
                    tracing::warn!("five wrong second-factor codes: the sign-in is ended");
                }
                if locked {
                    tracing::warn!(
                        "ten wrong second-factor answers in a row: the account's second step is locked"
                    );
                    self.wake_mail_worker();
                }
                Err(Error::OtpInvalid)
            }
            Verdict::Locked { until } => Err(second_step_locked(until, now)),
        }
    }

    /// What a proof is worth, found out before its write: the TOTP step a code matches,
    /// a recovery code's hash, a passkey assertion's verdict.
    async fn check_proof(
        &self,
        caller: &Caller,
        proof: SecondFactorProof,
        now: i64,
    ) -> Result<Checked> {
        Ok(match proof {
            SecondFactorProof::Totp(code) => {
                let mut conn = self.db().reader().acquire().await?;
                let totp = store::totp_of(&mut *conn, &caller.user_id).await?;
                drop(conn);
                match totp.filter(|t| t.confirmed) {
                    Some(totp) => {
                        let opened = self.open_secret(&totp.id, &totp.sealed)?;
                        // Read under a previous secret: kept under the current one now.
                        let resealed = (!opened.current).then(|| {
                            let again =
                                self.keys()
                                    .seal(Purpose::FactorSecret, &totp.id, &opened.plain);
                            (totp.sealed.clone(), again)
                        });
                        Checked::Totp {
                            step: totp::matching_step(&opened.plain, code.as_str(), now)?,
                            factor_id: totp.id,
                            resealed,
                        }
                    }
                    None => Checked::Wrong,
                }
            }
            SecondFactorProof::Recovery(plain) => {
                let mut conn = self.db().reader().acquire().await?;
                let unused = store::unused_recovery_codes(&mut *conn, &caller.user_id).await?;
                drop(conn);
                Checked::Recovery {
                    code_id: recovery::find(self.keys(), &caller.user_id, &plain, unused).await?,
                }
            }
            SecondFactorProof::Passkey {
                challenge_id,
                credential,
            } => {
                self.check_passkey_factor(caller, &challenge_id, credential)
                    .await?
            }
        })
    }

    /// The TOTP secrets under a previous secret written again under the current one (with
    /// `write`; else only counted), and the recovery codes of before Argon2, which need a
    /// previous key until they are used or renewed (their codes are unknown here).
    pub(crate) async fn reseal_factor_secrets(&self, write: bool) -> Result<KeyCounts> {
        const TOTP_SECRETS: SealedColumn = SealedColumn {
            table: "user_factors",
            column: "totp_secret",
            purpose: Purpose::FactorSecret,
            rows: "kind = 'totp'",
        };
        let mut counts = keyring::reseal(self.db(), self.keys(), TOTP_SECRETS, write).await?;
        let legacy: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM recovery_codes WHERE used_at IS NULL AND code_hash NOT LIKE '$argon2%'",
        )
        .fetch_one(self.db().reader())
        .await?;
        counts.need_previous += u64::try_from(legacy).unwrap_or(0);
        Ok(counts)
    }
}
