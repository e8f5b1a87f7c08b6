//! The first factor: a one-time code sent by mail (CONTRACT §3).
//!
//! Codes are 6 digits from a CSPRNG, stored only as a keyed hash bound to the address,
//! valid for `OTP_TTL`, single use, dead after 5 wrong tries, at most 5 per address per
//! hour. A request answers the same whatever the address, and its mail goes through the
//! outbox, so neither the answer nor its timing tells whether an account exists. A
//! verified code opens a sign-in at level 1 (`session`), and tells what comes next from
//! the user's second factors (`factors`).

mod store;

use serde::Serialize;
use utoipa::ToSchema;

use crate::Langcamp;
use crate::auth::input::OtpSignIn;
use crate::auth::session::{HOUR_MS, NewRefreshToken, SignInLevel, SignedIn};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::validate::{self, Email};
use crate::mail_templates::MailValues;
use crate::platform::db::Undo;
use crate::platform::mail::MailKind;

/// Wrong tries that end a code.
pub const OTP_MAX_ATTEMPTS: i64 = 5;
/// Codes one address may be sent in an hour.
pub const OTP_MAX_PER_HOUR: i64 = 5;

#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OtpRequested {
    pub message: String,
    pub expires_in_seconds: u64,
}

/// The writes of a sign-in with a one-time code: the code used up (or its wrong try
/// counted), the user found or created, a new sign-in and its first refresh token. The
/// user and the sign-in's id, or `None` for a wrong or spent code.
struct SignIn {
    email: Email,
    /// The hashes the code may be stored as, comma-separated.
    hashes: String,
    locale: String,
    now: i64,
    session_id: String,
    refresh: NewRefreshToken,
}

impl Langcamp {
    /// `POST /auth/otp/request`: sends a code; answers the same for every address. The
    /// mail is in the user's locale, or for an unknown address in the first tag of
    /// `accept_language` (CONTRACT §16).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn request_otp(
        &self,
        email: Email,
        accept_language: Option<&str>,
    ) -> Result<OtpRequested> {
        let ttl = self.config().otp_ttl;
        let answer = OtpRequested {
            message: "If the address can receive mail, a sign-in code is on its way.".into(),
            expires_in_seconds: ttl.as_secs(),
        };
        let now = self.clock().now_ms();
        let expires_at = now + i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2);
        let book = self.mail_book().await?;
        // The reader's locale is read before the write transaction, from the reader pool:
        // on SQLite the writer is shared, and this read needs no lock.
        let known_locale: Option<String> =
            sqlx::query_scalar("SELECT locale FROM users WHERE email = $1")
                .bind(email.as_str())
                .fetch_optional(self.db().reader())
                .await?;

        let mut tx = self.db().begin().await?;
        let recent: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM otp_issues WHERE email = $1 AND issued_at > $2",
        )
        .bind(email.as_str())
        .bind(now - HOUR_MS)
        .fetch_one(&mut *tx)
        .await?;
        if recent >= OTP_MAX_PER_HOUR {
            // Same answer, no mail, the live code left as it was.
            tracing::info!("one-time code not sent: hourly cap for this address reached");
            return Ok(answer);
        }
        let code = format!("{:06}", rand::random_range(0..1_000_000u32));
        sqlx::query(
            "INSERT INTO otp_codes (email, code_hash, attempts, created_at, expires_at) VALUES ($1, $2, 0, $3, $4)
             ON CONFLICT (email) DO UPDATE SET code_hash = excluded.code_hash, attempts = 0,
                 created_at = excluded.created_at, expires_at = excluded.expires_at",
        )
        .bind(email.as_str())
        .bind(self.keys().otp_hash(email.as_str(), &code))
        .bind(now)
        .bind(expires_at)
        .execute(&mut *tx)
        .await?;
        sqlx::query("INSERT INTO otp_issues (id, email, issued_at) VALUES ($1, $2, $3)")
            .bind(new_id())
            .bind(email.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await?;
        // A code replaced by this one must not be delivered late.
        sqlx::query(
            "UPDATE mail_outbox SET status = 'expired', sealed = NULL
             WHERE kind = 'otp' AND recipient = $1 AND status = 'pending'",
        )
        .bind(email.as_str())
        .execute(&mut *tx)
        .await?;
        let locale =
            known_locale.or_else(|| accept_language.and_then(validate::first_accept_language));
        let values = MailValues::Otp {
            code,
            minutes: ttl.as_secs().div_ceil(60),
        };
        let mail = book.compose(email.as_str(), locale.as_deref(), &values)?;
        self.queue_mail(&mut tx, MailKind::Otp, &mail, Some(expires_at))
            .await?;
        tx.commit().await?;
        self.wake_mail_worker();
        Ok(answer)
    }

    /// `POST /auth/otp/verify`: signs in, creating the user on first sign-in.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn verify_otp(
        &self,
        sign_in: OtpSignIn,
        accept_language: Option<&str>,
    ) -> Result<SignedIn> {
        let OtpSignIn { email, code } = sign_in;
        let now = self.clock().now_ms();
        // The code's hash under every configured secret: one issued before a rotation is
        // accepted until it expires (CONTRACT §22).
        let hashes = self
            .keys()
            .otp_hashes(email.as_str(), code.as_str())
            .join(",");
        let locale = accept_language
            .and_then(validate::first_accept_language)
            .unwrap_or_else(|| "en".to_owned());
        // Everything but the writes is done outside the write transaction, which is
        // shared with other sign-ins waiting for the writer (`Db::write`): the ids, the
        // refresh token and its hash before it, the access token's signature after it.
        let session_id = new_id();
        let (refresh_token, refresh) = self.new_refresh_token(now);
        let signing_in = SignIn {
            email,
            hashes,
            locale,
            now,
            session_id,
            refresh,
        };
        let signed_in = self.db().write(Undo::Savepoint, signing_in).await?;
        let Some(store::SignedInUser {
            user,
            session_id,
            methods,
        }) = signed_in
        else {
            return Err(Error::OtpInvalid);
        };
        let level = SignInLevel::EMAIL_CODE;
        self.signed_in(user, &session_id, level, methods, refresh_token, now)
    }
}
