//! A sign-in: its level, its tokens, the memory of live ones, refresh and logout.
//!
//! * Access tokens: HS256 JWTs (algorithm pinned) naming the sign-in (`sid`); every
//!   request checks that the sign-in is live, the token not blacklisted, and takes the
//!   user's current role from the database.
//! * Refresh tokens: random at sign-in, stored as SHA-256, rotated on every use. A sign-in
//!   is one chain, never a tree: the token that follows `T` is a keyed hash of `T`
//!   ([`crate::platform::keyring::Keyring::successor_token`]), so a rotated token
//!   presented again within [`REUSE_GRACE_MS`] (two tabs refreshing at once) answers the
//!   *same* successor (under whichever configured secret it was made) with a fresh access
//!   token. Later, it is treated as stolen and its whole sign-in is revoked.
//! * Assurance: a sign-in is at level 1 after the e-mail code, 2 after a second factor or
//!   a passkey ([`SignInLevel`]); its row and its tokens carry the level, so a refresh
//!   keeps it.
//!
//! This is the lowest part of `auth`: the e-mail code (`code`) and the second factors
//! (`factors`) open and raise sign-ins through it, and it imports neither.

pub mod live;
mod store;
mod tokens;
pub mod verified;

use serde::Serialize;
use sqlx::Row;
use utoipa::ToSchema;

use crate::Langcamp;
use crate::audit::{self, Entry, Target};
use crate::auth::input::{RefreshToken, SignOut};
use crate::domain::actor::{Actor, Assurance, Caller, Origin, Role};
use crate::domain::error::{Error, Result};
use crate::platform::changes::Change;
use crate::platform::config::SecondFactorPolicy;
use crate::platform::crypto::{random_token, sha256_hex};
use crate::users::User;

/// Wrong second-factor codes one sign-in may send; the fifth ends it (CONTRACT §20).
pub const FACTOR_MAX_ATTEMPTS: i64 = 5;
pub(crate) const HOUR_MS: i64 = 3600 * 1000;
/// How long a rotated refresh token may still be exchanged (concurrent refreshes).
pub const REUSE_GRACE_MS: i64 = 10 * 1000;
/// Clock skew tolerated when checking token expiry.
const LEEWAY_MS: i64 = 30 * 1000;

pub(crate) use self::store::{
    NewRefreshToken, count_wrong_factor, has_factor, open_sign_in, raise_sign_in,
    record_refresh_token,
};
pub(crate) use self::tokens::{Claims, SignInLevel};

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    pub access_token: String,
    pub refresh_token: String,
    pub user: User,
    pub registration_complete: bool,
    /// The sign-in's assurance level: 1 after the e-mail code alone, 2 after a second
    /// factor or a passkey (CONTRACT §20).
    #[schema(minimum = 1, maximum = 2)]
    pub aal: u8,
    /// What comes next: `none` (the token works), `required` (verify one of `methods`
    /// with `POST /auth/second-factor/verify`) or `enroll` (staff without a factor: add
    /// one, `POST /me/factors/totp` or `POST /me/passkeys/options`).
    pub second_factor: SecondFactorStep,
    /// The user's second factors (empty without any).
    pub methods: Vec<FactorMethod>,
}

/// What a sign-in needs next (CONTRACT §20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecondFactorStep {
    /// Nothing: the access token works.
    None,
    /// A second factor: the user has one and is held to it.
    Required,
    /// A factor must be added first (staff under `STAFF_SECOND_FACTOR=required`).
    Enroll,
}

/// A kind of second factor a user can verify with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FactorMethod {
    Totp,
    Passkey,
    Recovery,
}

impl SecondFactorStep {
    /// The step of a sign-in at `level` by a user with `role` and these `methods`.
    pub(crate) fn after(
        level: SignInLevel,
        role: Role,
        methods: &[FactorMethod],
        policy: SecondFactorPolicy,
    ) -> SecondFactorStep {
        if level.aal >= 2 {
            SecondFactorStep::None
        } else if !methods.is_empty() {
            SecondFactorStep::Required
        } else if role >= Role::Admin && policy == SecondFactorPolicy::Required {
            SecondFactorStep::Enroll
        } else {
            SecondFactorStep::None
        }
    }
}

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Message {
    pub message: String,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct OptionalAuth {
    pub authenticated: bool,
    pub user: Option<User>,
}

impl Langcamp {
    /// The answer of a sign-in (a code, a passkey, a second factor): the access token at
    /// `level`, and what comes next.
    pub(crate) fn signed_in(
        &self,
        user: User,
        session_id: &str,
        level: SignInLevel,
        methods: Vec<FactorMethod>,
        refresh_token: String,
        now: i64,
    ) -> Result<SignedIn> {
        let access_token = self.sign_access_token(&user.id, session_id, user.role, level, now)?;
        let policy = self.config().staff_second_factor;
        Ok(SignedIn {
            access_token,
            refresh_token,
            registration_complete: user.is_registration_complete,
            aal: level.aal,
            second_factor: SecondFactorStep::after(level, user.role, &methods, policy),
            methods,
            user,
        })
    }

    /// A new refresh token for a sign-in: the token for the client, and what to record.
    pub(crate) fn new_refresh_token(&self, now: i64) -> (String, NewRefreshToken) {
        let token = random_token::<32>();
        let record = NewRefreshToken {
            hash: sha256_hex(token.as_bytes()),
            expires_at: now + self.refresh_ttl_ms(),
        };
        (token, record)
    }

    /// Step-up (CONTRACT §20): the caller's sign-in checked its second factor within
    /// `STEP_UP_MAX_AGE`, else 403 `STEP_UP_REQUIRED`.
    pub(crate) fn require_step_up(&self, actor: &Actor) -> Result<()> {
        let max_age = i64::try_from(self.config().step_up_max_age.as_millis()).unwrap_or(i64::MAX);
        actor.require_recent_factor(self.clock().now_ms(), max_age)
    }
    /// `POST /auth/refresh`: rotates the refresh token. A reuse past the grace revokes the
    /// sign-in and is recorded in the audit trail (`auth.refresh_reused`, with `origin`:
    /// the request that presented it).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn refresh(&self, token: RefreshToken, origin: Option<Origin>) -> Result<TokenPair> {
        let token = token.as_str();
        let now = self.clock().now_ms();
        let hash = sha256_hex(token.as_bytes());
        let mut tx = self.db().begin().await?;
        let row = sqlx::query(
            "SELECT t.session_id, t.expires_at, t.rotated_at, s.user_id, s.revoked_at, s.aal,
                    s.factor_at, u.role, u.email
             FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id
             WHERE t.token_hash = $1",
        )
        .bind(&hash)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::TokenInvalid)?;
        let session_id: String = row.try_get("session_id")?;
        let expires_at: i64 = row.try_get("expires_at")?;
        let rotated_at: Option<i64> = row.try_get("rotated_at")?;
        let revoked_at: Option<i64> = row.try_get("revoked_at")?;
        let user_id: String = row.try_get("user_id")?;
        let role: Role = row
            .try_get::<String, _>("role")?
            .parse()
            .map_err(|_| Error::TokenInvalid)?;
        if revoked_at.is_some() || expires_at <= now {
            return Err(Error::TokenInvalid);
        }
        // A refresh keeps the level the sign-in was raised to; it is no new check.
        let level = SignInLevel {
            aal: u8::try_from(row.try_get::<i64, _>("aal")?).unwrap_or(1),
            factor_at: row.try_get("factor_at")?,
        };
        let successor = self.keys().successor_token(token);
        match rotated_at {
            None => {
                // Of concurrent refreshes of one token, exactly one rotates it here: on
                // PostgreSQL the others wait for its row lock and then find it rotated.
                let rotated = sqlx::query(
                    "UPDATE refresh_tokens SET rotated_at = $1 WHERE token_hash = $2 AND rotated_at IS NULL",
                )
                .bind(now)
                .bind(&hash)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if rotated == 1 {
                    let pair = self
                        .issue_pair(&mut tx, &session_id, &user_id, role, level, now, successor)
                        .await?;
                    tx.commit().await?;
                    return Ok(pair);
                }
                // A concurrent refresh rotated it just now and recorded the successor.
            }
            Some(at) if now - at <= REUSE_GRACE_MS => {
                // Two tabs refreshing at once: the same successor, never a second branch.
            }
            Some(_) => {
                tracing::warn!(session_id = %session_id, "rotated refresh token reused: revoking the sign-in");
                sqlx::query("UPDATE sessions SET revoked_at = $1 WHERE id = $2")
                    .bind(now)
                    .bind(&session_id)
                    .execute(&mut *tx)
                    .await?;
                // The token's user is the actor: their token was presented again.
                let holder = Actor::User(Caller {
                    user_id: user_id.clone(),
                    email: row.try_get("email")?,
                    role,
                    session_id: session_id.clone(),
                    token_id: String::new(),
                    token_expires_at: 0,
                    origin,
                    assurance: Assurance {
                        level: level.aal,
                        factor_checked_at: level.factor_at,
                        has_factor: false,
                        second_factor_required: false,
                    },
                });
                let entry = Entry::new("auth.refresh_reused", Target::user(&user_id));
                audit::record_own(&mut tx, self, &holder, entry).await?;
                self.commit_change(tx, Change::Session(session_id.clone()))
                    .await?;
                return Err(Error::TokenInvalid);
            }
        }
        // Nothing to write: the successor was recorded by the rotation, perhaps under a
        // secret that is previous now (a rotation of the secret in between).
        let mut recorded = successor;
        for candidate in self.keys().successor_tokens(token) {
            let found: Option<i64> = sqlx::query_scalar(
                "SELECT 1 FROM refresh_tokens WHERE token_hash = $1 AND session_id = $2",
            )
            .bind(sha256_hex(candidate.as_bytes()))
            .bind(&session_id)
            .fetch_optional(&mut *tx)
            .await?;
            if found.is_some() {
                recorded = candidate;
                break;
            }
        }
        drop(tx);
        Ok(TokenPair {
            access_token: self.sign_access_token(&user_id, &session_id, role, level, now)?,
            refresh_token: recorded,
        })
    }

    /// `POST /auth/logout`: ends the sign-in of the access token and blacklists it.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn logout(&self, actor: &Actor, sign_out: SignOut) -> Result<Message> {
        // Open before the second factor too: whoever signed in may always sign out.
        let caller = actor.caller_before_second_factor()?;
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        sqlx::query("UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(now)
            .bind(&caller.session_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO revoked_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING")
            .bind(&caller.token_id)
            .bind(caller.token_expires_at + LEEWAY_MS)
            .execute(&mut *tx)
            .await?;
        if let Some(token) = sign_out.refresh_token {
            // The refresh token's own sign-in ends too, if it is the caller's.
            sqlx::query(
                "UPDATE sessions SET revoked_at = $1
                 WHERE revoked_at IS NULL AND user_id = $2
                   AND id IN (SELECT session_id FROM refresh_tokens WHERE token_hash = $3)",
            )
            .bind(now)
            .bind(&caller.user_id)
            .bind(sha256_hex(token.as_str().as_bytes()))
            .execute(&mut *tx)
            .await?;
        }
        // The refresh token may have ended another of the caller's sign-ins: forget them all.
        self.commit_change(tx, Change::User(caller.user_id.clone()))
            .await?;
        Ok(Message {
            message: "signed out".into(),
        })
    }

    /// `GET /auth/optional`: who is calling, if anyone.
    pub async fn optional_auth(&self, actor: &Actor) -> Result<OptionalAuth> {
        match actor {
            Actor::User(_) => Ok(OptionalAuth {
                authenticated: true,
                user: Some(self.me(actor).await?),
            }),
            _ => Ok(OptionalAuth {
                authenticated: false,
                user: None,
            }),
        }
    }

    /// Deletes what has expired: codes, issue logs, blacklist entries, ended sign-ins,
    /// delivered mail bookkeeping. Runs in the background; safe on several instances.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn purge_expired(&self) -> Result<()> {
        let now = self.clock().now_ms();
        let week = 7 * 24 * HOUR_MS;
        let mut tx = self.db().begin().await?;
        for (sql, cutoff) in [
            ("DELETE FROM otp_codes WHERE expires_at <= $1", now),
            (
                "DELETE FROM otp_issues WHERE issued_at <= $1",
                now - HOUR_MS,
            ),
            ("DELETE FROM revoked_tokens WHERE expires_at <= $1", now),
            ("DELETE FROM passkey_challenges WHERE expires_at <= $1", now),
            ("DELETE FROM refresh_tokens WHERE expires_at <= $1", now),
            (
                "DELETE FROM sessions WHERE expires_at <= $1 OR revoked_at <= $1",
                now - week,
            ),
            (
                "DELETE FROM mail_outbox WHERE status <> 'pending' AND created_at <= $1",
                now - week,
            ),
        ] {
            sqlx::query(sql).bind(cutoff).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Runs [`Langcamp::purge_expired`] every few minutes until `shutdown` resolves.
    pub async fn run_maintenance(&self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(300));
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                _ = tick.tick() => {
                    if let Err(e) = self.purge_expired().await {
                        tracing::warn!(error = %e, "purging expired rows failed; will retry");
                    }
                    if let Err(e) = self.purge_audit().await {
                        tracing::warn!(error = %e, "purging old audit entries failed; will retry");
                    }
                }
            }
        }
    }
}
