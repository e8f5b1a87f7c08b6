//! Passkeys (CONTRACT §21): WebAuthn credentials that sign a user in with one touch and no
//! mail, and serve as a second factor that phishing cannot steal (the browser binds them to
//! the real origin). The ceremonies are `webauthn-rs`'s; here are our choices:
//!
//! * the relying party is `PUBLIC_ORIGIN` (its host is the RP id); without it every
//!   passkey route answers 400 naming the variable;
//! * options go out, and credentials come in, in the JSON forms of WebAuthn Level 3, so a
//!   browser's `PublicKeyCredential.parseCreationOptionsFromJSON` and `credential.toJSON()`
//!   fit with no glue: `options` is the `publicKey` member of the library's answer;
//! * user verification is required; registration asks for a discoverable credential
//!   (resident key required) and excludes the user's passkeys; at most ten per user;
//! * a ceremony's state waits in `passkey_challenges` for five minutes and is deleted as
//!   its answer reads it (single use), so any instance finishes what another began;
//! * a signature counter that goes backwards is refused by the library, and a passkey's
//!   stored state moves on only if it is still what the assertion was checked against
//!   (two uses at once cannot both pass on one counter).
//!
//! A passkey sign-in is assurance level 2; a passkey added to an account is a factor like a
//! TOTP one (the first brings recovery codes, adding one when a factor exists needs
//! step-up).

use serde::Serialize;
use utoipa::ToSchema;
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyAuthentication, PasskeyRegistration,
    PublicKeyCredential, RegisterPublicKeyCredential, Url, Uuid, Webauthn, WebauthnBuilder,
};

use super::store::{self, Checked, NewFactor, PasskeySignIn, SaveChallenge, TakeChallenge};
use super::{FactorAdded, NewPasskey, PasskeyAnswer};
use crate::Langcamp;
use crate::auth::session::{SignInLevel, SignedIn};
use crate::domain::actor::{Actor, Caller};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::platform::crypto::hex;
use crate::platform::db::Undo;
use crate::users;

/// How long a ceremony may take, from its options to its answer.
const CHALLENGE_TTL_MS: i64 = 5 * 60 * 1000;

/// The most passkeys one user may have.
pub const MAX_PASSKEYS: usize = 10;

/// A ceremony's options: `options` goes to `navigator.credentials.create/get` (through
/// `PublicKeyCredential.parse...OptionsFromJSON`), `challengeId` comes back with the answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasskeyOptions {
    pub challenge_id: String,
    /// `PublicKeyCredentialCreationOptionsJSON` or `PublicKeyCredentialRequestOptionsJSON`
    /// (WebAuthn Level 3): binary members are base64url strings.
    #[schema(value_type = Object)]
    pub options: serde_json::Value,
}

/// What a ceremony is for (`passkey_challenges.purpose`).
#[derive(Clone, Copy)]
enum Purpose {
    Register,
    SignIn,
    SecondFactor,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Register => "register",
            Purpose::SignIn => "sign_in",
            Purpose::SecondFactor => "second_factor",
        }
    }
}

/// The answer to a passkey that cannot sign anyone in: unknown, malformed, not matching
/// its challenge, signed for another origin, its counter gone backwards.
fn refused() -> Error {
    Error::Unauthorized
}

fn user_handle(user_id: &str) -> Result<Uuid> {
    Uuid::parse_str(user_id).map_err(|_| Error::internal("a user id is not a UUID"))
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string(value)?)
}

fn stored_passkey(json: &str) -> Result<Passkey> {
    serde_json::from_str(json)
        .map_err(|e| Error::internal(format!("a stored passkey does not read: {e}")))
}

impl Langcamp {
    /// The relying party of `PUBLIC_ORIGIN`, named after the school; 400 without it.
    async fn relying_party(&self) -> Result<Webauthn> {
        let origin = self.config().public_origin.as_deref().ok_or_else(|| {
            Error::invalid(
                "passkeys need PUBLIC_ORIGIN: the origin the web client runs on, such as https://school.example",
            )
        })?;
        let url = Url::parse(origin).map_err(|e| Error::internal(format!("PUBLIC_ORIGIN: {e}")))?;
        let rp_id = url
            .host_str()
            .ok_or_else(|| Error::internal("PUBLIC_ORIGIN has no host"))?
            .to_owned();
        let book = self.mail_book().await?;
        WebauthnBuilder::new(&rp_id, &url)
            .and_then(|builder| builder.rp_name(book.school_name()).build())
            .map_err(|e| Error::internal(format!("the passkey relying party: {e}")))
    }

    /// Keeps a ceremony's state; its options go out with the challenge's id.
    async fn save_challenge(
        &self,
        purpose: Purpose,
        user_id: Option<&str>,
        state: String,
        options: serde_json::Value,
    ) -> Result<PasskeyOptions> {
        let now = self.clock().now_ms();
        let id = new_id();
        let save = SaveChallenge {
            id: id.clone(),
            purpose: purpose.as_str(),
            user_id: user_id.map(str::to_owned),
            state,
            now,
            expires_at: now + CHALLENGE_TTL_MS,
        };
        self.db().write(Undo::SingleStatement, save).await?;
        Ok(PasskeyOptions {
            challenge_id: id,
            options,
        })
    }

    /// A ceremony's state, used up; `None` when unknown, expired, used or someone else's.
    async fn take_challenge(
        &self,
        purpose: Purpose,
        user_id: Option<&str>,
        id: &str,
    ) -> Result<Option<String>> {
        let take = TakeChallenge {
            id: id.to_owned(),
            purpose: purpose.as_str(),
            user_id: user_id.map(str::to_owned),
            now: self.clock().now_ms(),
        };
        self.db().write(Undo::SingleStatement, take).await
    }

    /// `POST /me/passkeys/options`: creation options for a new passkey of the caller
    /// (resident key and user verification required, their passkeys excluded). Open as
    /// adding a TOTP factor is: at level 1 only without a factor.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn passkey_registration_options(&self, actor: &Actor) -> Result<PasskeyOptions> {
        let caller = self.may_add_factor(actor)?;
        let rp = self.relying_party().await?;
        let mut conn = self.db().reader().acquire().await?;
        let existing = store::passkeys_of(&mut *conn, &caller.user_id).await?;
        drop(conn);
        if existing.len() >= MAX_PASSKEYS {
            return Err(too_many());
        }
        let exclude = existing
            .iter()
            .map(|p| stored_passkey(&p.passkey).map(|p| p.cred_id().clone()))
            .collect::<Result<Vec<_>>>()?;
        let (challenge, state) = rp
            .start_passkey_registration(
                user_handle(&caller.user_id)?,
                &caller.email,
                &caller.email,
                Some(exclude),
            )
            .map_err(|e| Error::internal(format!("passkey options: {e}")))?;
        let mut options = serde_json::to_value(&challenge.public_key)?;
        // A passkey is a discoverable credential: it signs in without a name typed first.
        // (The library asks for one only where it can; the request is ours to make.)
        options["authenticatorSelection"]["residentKey"] = "required".into();
        options["authenticatorSelection"]["requireResidentKey"] = true.into();
        self.save_challenge(
            Purpose::Register,
            Some(&caller.user_id),
            to_json(&state)?,
            options,
        )
        .await
    }

    /// `POST /me/passkeys`: registers the passkey the browser made for `challenge_id`; the
    /// caller's sign-in is at level 2 afterwards, as after confirming a TOTP factor.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn register_passkey(&self, actor: &Actor, new: NewPasskey) -> Result<FactorAdded> {
        let NewPasskey {
            answer:
                PasskeyAnswer {
                    challenge_id,
                    credential,
                },
            name,
        } = new;
        let caller = self.may_add_factor(actor)?;
        let rp = self.relying_party().await?;
        let state = self
            .take_challenge(Purpose::Register, Some(&caller.user_id), &challenge_id)
            .await?
            .ok_or_else(|| {
                Error::invalid("challengeId is unknown, used or expired: ask for new options")
            })?;
        let state: PasskeyRegistration = serde_json::from_str(&state)?;
        let response: RegisterPublicKeyCredential =
            serde_json::from_value(credential).map_err(|e| {
                Error::invalid(format!("credential is not a RegistrationResponseJSON: {e}"))
            })?;
        // A credential registered already (the user's own, which the browser was asked to
        // exclude, or anyone's) is a conflict, before the library calls it a bad request.
        let mut conn = self.db().reader().acquire().await?;
        let known = store::passkey_by_credential(&mut *conn, &hex(&response.raw_id)).await?;
        drop(conn);
        if known.is_some() {
            return Err(super::registered_already());
        }
        let passkey = rp
            .finish_passkey_registration(&response, &state)
            .map_err(|e| Error::invalid(format!("the passkey was not registered: {e}")))?;
        let factor = NewFactor::Passkey {
            id: new_id(),
            name: name.as_str().to_owned(),
            credential_id: hex(passkey.cred_id()),
            passkey: to_json(&passkey)?,
        };
        let now = self.clock().now_ms();
        self.add_factor(actor, caller, factor, name.as_str(), now)
            .await
    }

    /// `POST /auth/passkey/options`: request options for a sign-in with any discoverable
    /// credential of this relying party.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn passkey_sign_in_options(&self) -> Result<PasskeyOptions> {
        let rp = self.relying_party().await?;
        let (challenge, state) = rp
            .start_discoverable_authentication()
            .map_err(|e| Error::internal(format!("passkey options: {e}")))?;
        let options = serde_json::to_value(&challenge.public_key)?;
        self.save_challenge(Purpose::SignIn, None, to_json(&state)?, options)
            .await
    }

    /// `POST /auth/passkey/verify`: signs in the passkey's user at level 2, no mail needed;
    /// anything wrong with the credential is 401 `UNAUTHORIZED`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_in_with_passkey(&self, answer: PasskeyAnswer) -> Result<SignedIn> {
        let PasskeyAnswer {
            challenge_id,
            credential,
        } = answer;
        let rp = self.relying_party().await?;
        let state = self
            .take_challenge(Purpose::SignIn, None, &challenge_id)
            .await?
            .ok_or_else(refused)?;
        let state: DiscoverableAuthentication = serde_json::from_str(&state)?;
        let response: PublicKeyCredential =
            serde_json::from_value(credential).map_err(|_| refused())?;
        let (handle, credential_id) = rp
            .identify_discoverable_authentication(&response)
            .map_err(|_| refused())?;
        let mut conn = self.db().reader().acquire().await?;
        let stored = store::passkey_by_credential(&mut *conn, &hex(credential_id))
            .await?
            .filter(|p| Uuid::parse_str(&p.user_id).ok() == Some(handle))
            .ok_or_else(refused)?;
        let user = users::find_user(&mut *conn, &stored.user_id)
            .await?
            .ok_or_else(refused)?;
        drop(conn);
        let mut passkey = stored_passkey(&stored.passkey)?;
        let result = rp
            .finish_discoverable_authentication_v2(&response, state, &passkey)
            .map_err(|_| refused())?;
        passkey.update_credential(&result);
        let now = self.clock().now_ms();
        let session_id = new_id();
        let (refresh_token, refresh) = self.new_refresh_token(now);
        let signing_in = PasskeySignIn {
            factor_id: stored.factor_id,
            user_id: user.id.clone(),
            checked_against: stored.passkey,
            passkey: to_json(&passkey)?,
            session_id: session_id.clone(),
            refresh,
            now,
        };
        if !self.db().write(Undo::Savepoint, signing_in).await? {
            return Err(refused());
        }
        let mut conn = self.db().reader().acquire().await?;
        let methods = store::methods(&mut *conn, &user.id).await?;
        drop(conn);
        self.signed_in(
            user,
            &session_id,
            SignInLevel::second_factor(now),
            methods,
            refresh_token,
            now,
        )
    }

    /// `POST /auth/second-factor/options`: request options for the caller's passkeys, for
    /// `POST /auth/second-factor/verify` with `method: "passkey"`; 400 without a passkey.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn second_factor_options(&self, actor: &Actor) -> Result<PasskeyOptions> {
        let caller = actor.caller_before_second_factor()?;
        let rp = self.relying_party().await?;
        let mut conn = self.db().reader().acquire().await?;
        let stored = store::passkeys_of(&mut *conn, &caller.user_id).await?;
        drop(conn);
        if stored.is_empty() {
            return Err(Error::invalid("you have no passkey: verify another factor"));
        }
        let passkeys = stored
            .iter()
            .map(|p| stored_passkey(&p.passkey))
            .collect::<Result<Vec<_>>>()?;
        let (challenge, state) = rp
            .start_passkey_authentication(&passkeys)
            .map_err(|e| Error::internal(format!("passkey options: {e}")))?;
        let options = serde_json::to_value(&challenge.public_key)?;
        self.save_challenge(
            Purpose::SecondFactor,
            Some(&caller.user_id),
            to_json(&state)?,
            options,
        )
        .await
    }

    /// What a passkey assertion for `POST /auth/second-factor/verify` is worth: a
    /// verified use of one of the caller's passkeys, or a wrong proof (counted as such).
    pub(super) async fn check_passkey_factor(
        &self,
        caller: &Caller,
        challenge_id: &str,
        credential: serde_json::Value,
    ) -> Result<Checked> {
        let rp = self.relying_party().await?;
        let Some(state) = self
            .take_challenge(Purpose::SecondFactor, Some(&caller.user_id), challenge_id)
            .await?
        else {
            return Ok(Checked::Wrong);
        };
        let state: PasskeyAuthentication = serde_json::from_str(&state)?;
        let Ok(response) = serde_json::from_value::<PublicKeyCredential>(credential) else {
            return Ok(Checked::Wrong);
        };
        let Ok(result) = rp.finish_passkey_authentication(&response, &state) else {
            return Ok(Checked::Wrong);
        };
        let mut conn = self.db().reader().acquire().await?;
        let stored = store::passkey_by_credential(&mut *conn, &hex(result.cred_id()))
            .await?
            .filter(|p| p.user_id == caller.user_id);
        drop(conn);
        let Some(stored) = stored else {
            return Ok(Checked::Wrong);
        };
        let mut passkey = stored_passkey(&stored.passkey)?;
        passkey.update_credential(&result);
        Ok(Checked::Passkey {
            factor_id: stored.factor_id,
            checked_against: stored.passkey,
            passkey: to_json(&passkey)?,
        })
    }
}

fn too_many() -> Error {
    Error::Conflict(format!(
        "you have {MAX_PASSKEYS} passkeys, the most one account may have: remove one first"
    ))
}
