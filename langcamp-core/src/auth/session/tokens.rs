//! Access tokens: signing one with a refresh token, and checking one on every request.

use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, Row};

use super::store::{NewRefreshToken, record_refresh_token};
use super::{LEEWAY_MS, TokenPair};
use crate::Langcamp;
use crate::auth::session::live::LiveSession;
use crate::domain::actor::{Assurance, Caller, Role};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::platform::config::SecondFactorPolicy;
use crate::platform::crypto::sha256_hex;
use crate::users::User;

/// The claims of an access token.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Claims {
    sub: String,
    sid: String,
    role: Role,
    jti: String,
    iat: i64,
    /// Epoch seconds.
    pub(crate) exp: i64,
    typ: String,
    /// The sign-in's assurance level (CONTRACT §20); a token from before the second
    /// factor existed is level 1.
    #[serde(default = "level_one")]
    aal: u8,
    /// Epoch seconds of the sign-in's latest second-factor check; null at level 1.
    #[serde(default)]
    fat: Option<i64>,
}

fn level_one() -> u8 {
    1
}

/// The assurance a sign-in has reached, as its tokens carry it (`aal`, `fat`) and its row
/// keeps it (`sessions.aal`, `sessions.factor_at`), so a refresh keeps it too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SignInLevel {
    pub aal: u8,
    /// Epoch ms of the latest second-factor check.
    pub factor_at: Option<i64>,
}

impl SignInLevel {
    /// A sign-in with the e-mail code alone.
    pub const EMAIL_CODE: SignInLevel = SignInLevel {
        aal: 1,
        factor_at: None,
    };

    /// A sign-in whose second factor (or passkey) was checked at `now` (epoch ms).
    pub fn second_factor(now: i64) -> SignInLevel {
        SignInLevel {
            aal: 2,
            factor_at: Some(now),
        }
    }
}

impl Langcamp {
    /// A new access token and the refresh token `refresh_token` (recorded here) for a live
    /// sign-in.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn issue_pair(
        &self,
        conn: &mut AnyConnection,
        session_id: &str,
        user_id: &str,
        role: Role,
        level: SignInLevel,
        now: i64,
        refresh_token: String,
    ) -> Result<TokenPair> {
        let refresh = NewRefreshToken {
            hash: sha256_hex(refresh_token.as_bytes()),
            expires_at: now + self.refresh_ttl_ms(),
        };
        record_refresh_token(conn, session_id, &refresh, now).await?;
        sqlx::query("UPDATE sessions SET expires_at = $1, last_used_at = $2 WHERE id = $3")
            .bind(refresh.expires_at)
            .bind(now)
            .bind(session_id)
            .execute(&mut *conn)
            .await?;
        let access_token = self.sign_access_token(user_id, session_id, role, level, now)?;
        Ok(TokenPair {
            access_token,
            refresh_token,
        })
    }

    pub(super) fn refresh_ttl_ms(&self) -> i64 {
        i64::try_from(self.config().jwt_refresh_expiration.as_millis()).unwrap_or(i64::MAX / 4)
    }

    pub(crate) fn sign_access_token(
        &self,
        user_id: &str,
        session_id: &str,
        role: Role,
        level: SignInLevel,
        now_ms: i64,
    ) -> Result<String> {
        let iat = now_ms / 1000;
        let ttl = i64::try_from(self.config().jwt_expiration.as_secs())
            .unwrap_or(i64::MAX / 4)
            .max(1);
        let claims = Claims {
            sub: user_id.to_owned(),
            sid: session_id.to_owned(),
            role,
            jti: new_id(),
            iat,
            exp: iat + ttl,
            typ: "access".into(),
            aal: level.aal,
            fat: level.factor_at.map(|ms| ms / 1000),
        };
        // `kid` names the secret that signs it, so the token is still checked after a
        // rotation (CONTRACT §22).
        let (kid, key) = self.keys().token_signing_key();
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(kid);
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(key))
            .map_err(Error::internal)
    }

    /// Checks an access token against the signature, the clock, the sign-in, the blacklist
    /// and the user's current row. Any failure is the same 401.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(&self, token: &str) -> Result<Caller> {
        let now = self.clock().now_ms();
        let claims = match self.inner.verified_tokens.get(token) {
            Some(claims) => claims,
            None => {
                let claims = Arc::new(self.verify_signature(token)?);
                if claims.typ == "access" {
                    self.inner
                        .verified_tokens
                        .keep(token, Arc::clone(&claims), now);
                }
                claims
            }
        };
        if claims.typ != "access" || claims.exp.saturating_mul(1000) + LEEWAY_MS <= now {
            return Err(Error::TokenInvalid);
        }
        let live = self.live_session_user(&claims, now).await?;
        let user = &live.user;
        let staff_held = user.role >= Role::Admin
            && self.config().staff_second_factor == SecondFactorPolicy::Required;
        Ok(Caller {
            user_id: claims.sub.clone(),
            email: user.email.clone(),
            role: user.role,
            session_id: claims.sid.clone(),
            token_id: claims.jti.clone(),
            token_expires_at: claims.exp.saturating_mul(1000),
            origin: None,
            assurance: Assurance {
                level: claims.aal,
                factor_checked_at: claims.fat.map(|s| s.saturating_mul(1000)),
                has_factor: live.has_factor,
                second_factor_required: live.has_factor || staff_held,
            },
        })
    }

    /// The claims of `token` if its signature (HS256 under the secret its `kid` names: the
    /// current one or a previous one; a token without `kid`, from before the keyring,
    /// under a secret itself; the algorithm pinned) and its form are valid; the clock is
    /// not consulted (see [`crate::auth::session::verified`]).
    pub(super) fn verify_signature(&self, token: &str) -> Result<Claims> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Error::TokenInvalid)?;
        let mut validation = Validation::new(Algorithm::HS256);
        // Expiry is checked by the caller against the injectable clock.
        validation.validate_exp = false;
        validation.required_spec_claims = ["exp", "sub"].iter().map(|s| (*s).to_owned()).collect();
        self.keys()
            .token_keys(header.kid.as_deref())
            .into_iter()
            .find_map(|key| {
                jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(key), &validation)
                    .ok()
            })
            .map(|data| data.claims)
            .ok_or(Error::TokenInvalid)
    }

    /// The live sign-in and its user: from memory when held (see [`crate::auth::session::live`]),
    /// else one read that checks the sign-in, the blacklist and the user, and keeps the
    /// answer.
    pub(super) async fn live_session_user(&self, claims: &Claims, now: i64) -> Result<LiveSession> {
        let sessions = self.sessions();
        sessions.catch_up();
        if let Some(live) = sessions.get(&claims.sid, &claims.sub, now) {
            return Ok(live);
        }
        let generation = sessions.generation();
        let row = sqlx::query(concat!(
            "SELECT u.id, u.email, u.name, u.role, u.is_registration_complete, u.age, u.gender, u.city,
                    u.country, u.country_code, u.phone_number, u.locale, u.created_at, u.updated_at,
                    s.expires_at AS session_expires_at, ",
            crate::auth::session::has_factor!("u.id"),
            "FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3
               AND NOT EXISTS (SELECT 1 FROM revoked_tokens r WHERE r.jti = $4)",
        ))
        .bind(&claims.sid)
        .bind(&claims.sub)
        .bind(now)
        .bind(&claims.jti)
        .fetch_optional(self.db().reader())
        .await?
        .ok_or(Error::TokenInvalid)?;
        let role: String = row.try_get("role")?;
        if role.parse::<Role>().is_err() {
            return Err(Error::TokenInvalid);
        }
        let user = Arc::new(User::from_row(&row)?);
        let live = LiveSession {
            user,
            expires_at: row.try_get("session_expires_at")?,
            has_factor: row.try_get::<i64, _>("has_factor")? != 0,
        };
        sessions.store(generation, &claims.sid, live.clone(), now);
        Ok(live)
    }
}
