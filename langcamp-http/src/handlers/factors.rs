//! Second factors (CONTRACT §20): enrolment, the second step of a sign-in, recovery codes,
//! and a superadmin's reset of a colleague's factors.

use langcamp_core::Result;
use langcamp_core::auth::{
    CodeInput, FactorAdded, FactorList, FactorName, NewPasskey, PasskeyAnswer, PasskeyOptions,
    PasskeyOptionsInput, PasskeyRegistrationInput, PasskeyVerifyInput, RecoveryCodes,
    SecondFactorInput, SecondFactorProof, TotpEnrolment, TotpStartInput,
};
use langcamp_core::auth::{Message, OtpCode, SignedIn};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_verify_second_factor>(
        RateRule::SecondFactor,
        Access::OwnAccount,
        verify_second_factor,
    );
    r.add::<__path_list_factors>(RateRule::Default, Access::OwnAccount, list_factors);
    r.add::<__path_start_totp>(RateRule::Default, Access::OwnAccount, start_totp);
    r.add::<__path_confirm_totp>(RateRule::SecondFactor, Access::OwnAccount, confirm_totp);
    r.add::<__path_remove_factor>(RateRule::Default, Access::SignedIn, remove_factor);
    r.add::<__path_new_recovery_codes>(RateRule::Default, Access::SignedIn, new_recovery_codes);
    r.add::<__path_reset_factors>(RateRule::Default, Access::Superadmin, reset_factors);
    r.add::<__path_second_factor_options>(
        RateRule::SecondFactor,
        Access::OwnAccount,
        second_factor_options,
    );
    r.add::<__path_passkey_registration_options>(
        RateRule::Default,
        Access::OwnAccount,
        passkey_registration_options,
    );
    r.add::<__path_register_passkey>(RateRule::SecondFactor, Access::OwnAccount, register_passkey);
    r.add::<__path_passkey_sign_in_options>(
        RateRule::SecondFactor,
        Access::Anyone,
        passkey_sign_in_options,
    );
    r.add::<__path_sign_in_with_passkey>(
        RateRule::SecondFactor,
        Access::Anyone,
        sign_in_with_passkey,
    );
}

/// The second step of a sign-in: a TOTP code, a recovery code or a passkey assertion
/// raises the caller's sign-in to assurance level 2. The answer carries new tokens for the
/// same sign-in (its previous refresh token is rotated away). Open at level 1 and 2 (a
/// level-2 sign-in verifies again for step-up). Five wrong codes in one sign-in end it;
/// ten wrong answers in a row for one account lock its second step for 15 minutes. The
/// answer carries tokens: `Cache-Control: no-store`.
#[utoipa::path(post, operation_id = "verifySecondFactor", path = "/auth/second-factor/verify", tag = "factors", request_body = SecondFactorInput,
    responses(
        (status = 200, description = "The sign-in is at level 2", body = Envelope<SignedIn>),
        (status = 400, description = "A malformed body (a method the user does not have counts as a wrong code)", body = ErrorEnvelope),
        (status = 401, description = "A wrong, used or replayed code (OTP_INVALID); after the fifth the sign-in is ended and its tokens answer 401", body = ErrorEnvelope),
        (status = 409, description = "The TOTP factor's secret opens under no configured server secret (a secret was lost): the factor must be reset; passkeys and recovery codes still work (CONFLICT)", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client), or the account's second step locked after ten wrong answers in a row (up to 15 minutes): wait `Retry-After` seconds", body = ErrorEnvelope),
    ))]
pub async fn verify_second_factor(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let proof = ctx
        .command::<SecondFactorInput, SecondFactorProof>()
        .await?;
    Ok(Reply::ok(&ctx.app.verify_second_factor(&actor, proof).await?).secret())
}

/// The caller's second factors and how many recovery codes are left; never a secret.
#[utoipa::path(get, operation_id = "listMyFactors", path = "/me/factors", tag = "factors",
    responses((status = 200, description = "The caller's factors", body = Envelope<FactorList>)))]
pub async fn list_factors(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.list_factors(&actor).await?))
}

/// Start adding a TOTP factor: a pending factor with its secret and `otpauth://` URI, shown
/// only now. A new call replaces a pending one. At level 1 only for a user without a
/// factor; a user with one needs a level-2 sign-in with a recent check (step-up).
#[utoipa::path(post, operation_id = "startTotp", path = "/me/factors/totp", tag = "factors", request_body(content = Option<TotpStartInput>),
    responses(
        (status = 201, description = "A pending TOTP factor", body = Envelope<TotpEnrolment>),
        (status = 400, description = "A malformed body", body = ErrorEnvelope),
        (status = 403, description = "SECOND_FACTOR_REQUIRED (the caller has a factor and is at level 1) or STEP_UP_REQUIRED (no recent check)", body = ErrorEnvelope),
        (status = 409, description = "A confirmed TOTP factor exists", body = ErrorEnvelope),
    ))]
pub async fn start_totp(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let input: Option<TotpStartInput> = ctx.optional_json().await?;
    let name = FactorName::try_from(input.unwrap_or_default())?;
    Ok(Reply::created(&ctx.app.start_totp(&actor, name).await?).secret())
}

/// Confirm a pending TOTP factor with a code from the app: the factor is active and the
/// caller's sign-in is at level 2 (no second code needed). The first factor brings ten
/// recovery codes, shown only now.
#[utoipa::path(post, operation_id = "confirmTotp", path = "/me/factors/totp/{id}/confirm", tag = "factors", request_body = CodeInput,
    params(("id" = String, Path, description = "The pending factor's id")),
    responses(
        (status = 200, description = "The factor is active; new tokens at level 2", body = Envelope<FactorAdded>),
        (status = 400, description = "Not 6 digits, or not the code the app shows now (the factor stays pending)", body = ErrorEnvelope),
        (status = 403, description = "SECOND_FACTOR_REQUIRED or STEP_UP_REQUIRED, as for starting", body = ErrorEnvelope),
        (status = 404, description = "No such pending factor of the caller's", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn confirm_totp(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let code = ctx.command::<CodeInput, OtpCode>().await?;
    let id = ctx.param("id").to_owned();
    Ok(Reply::ok(&ctx.app.confirm_totp(&actor, &id, code).await?).secret())
}

/// Remove one of the caller's factors (step-up). The last one takes the recovery codes
/// with it; staff under `STAFF_SECOND_FACTOR=required` cannot remove their last one.
#[utoipa::path(delete, operation_id = "removeMyFactor", path = "/me/factors/{id}", tag = "factors",
    params(("id" = String, Path, description = "The factor's id")),
    responses(
        (status = 200, description = "Removed", body = Envelope<Message>),
        (status = 403, description = "SECOND_FACTOR_REQUIRED, or STEP_UP_REQUIRED (verify a factor again, then retry)", body = ErrorEnvelope),
        (status = 404, description = "No such factor of the caller's", body = ErrorEnvelope),
        (status = 409, description = "Staff keep at least one factor", body = ErrorEnvelope),
    ))]
pub async fn remove_factor(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    ctx.app.remove_factor(&actor, ctx.param("id")).await?;
    Ok(Reply::ok(&Message {
        message: "factor removed".into(),
    }))
}

/// Ten new recovery codes (step-up); every earlier one is void. Shown only now.
#[utoipa::path(post, operation_id = "newRecoveryCodes", path = "/me/recovery-codes", tag = "factors",
    responses(
        (status = 200, description = "The new codes", body = Envelope<RecoveryCodes>),
        (status = 403, description = "SECOND_FACTOR_REQUIRED, or STEP_UP_REQUIRED", body = ErrorEnvelope),
        (status = 409, description = "The caller has no factor", body = ErrorEnvelope),
    ))]
pub async fn new_recovery_codes(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.new_recovery_codes(&actor).await?).secret())
}

/// Remove every factor and recovery code of a user and end their sign-ins, for a
/// colleague who lost their factors (superadmin, step-up). Not one's own.
#[utoipa::path(delete, operation_id = "resetUserFactors", path = "/admin/users/{id}/factors", tag = "factors",
    params(("id" = String, Path, description = "The user's id")),
    responses(
        (status = 200, description = "Reset", body = Envelope<Message>),
        (status = 400, description = "The caller's own account", body = ErrorEnvelope),
        (status = 403, description = "Not a superadmin, SECOND_FACTOR_REQUIRED, or STEP_UP_REQUIRED", body = ErrorEnvelope),
        (status = 404, description = "No such user", body = ErrorEnvelope),
    ))]
pub async fn reset_factors(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    ctx.app.reset_factors(&actor, &ctx.id("id")).await?;
    Ok(Reply::ok(&Message {
        message: "every factor of the user was removed and their sign-ins ended".into(),
    }))
}

/// Request options for the caller's passkeys, to verify one as the second factor
/// (`POST /auth/second-factor/verify` with `method: "passkey"`). 400 without
/// `PUBLIC_ORIGIN` or without a passkey.
#[utoipa::path(post, operation_id = "secondFactorOptions", path = "/auth/second-factor/options", tag = "factors",
    responses(
        (status = 200, description = "`options` for `navigator.credentials.get` (PublicKeyCredentialRequestOptionsJSON)", body = Envelope<PasskeyOptions>),
        (status = 400, description = "PUBLIC_ORIGIN unset, or the caller has no passkey", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn second_factor_options(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.second_factor_options(&actor).await?))
}

/// Creation options for a new passkey of the caller (a discoverable credential, user
/// verification required, their passkeys excluded); valid 5 minutes. As for a TOTP
/// factor: at level 1 only for a user without a factor, else step-up.
#[utoipa::path(post, operation_id = "passkeyRegistrationOptions", path = "/me/passkeys/options", tag = "factors",
    responses(
        (status = 200, description = "`options` for `navigator.credentials.create` (PublicKeyCredentialCreationOptionsJSON)", body = Envelope<PasskeyOptions>),
        (status = 400, description = "PUBLIC_ORIGIN unset", body = ErrorEnvelope),
        (status = 403, description = "SECOND_FACTOR_REQUIRED (the caller has a factor and is at level 1) or STEP_UP_REQUIRED", body = ErrorEnvelope),
    ))]
pub async fn passkey_registration_options(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.passkey_registration_options(&actor).await?,
    ))
}

/// Register the passkey the browser made (`credential.toJSON()`); the caller's sign-in is
/// at level 2 afterwards, and the first factor brings recovery codes, as confirming a TOTP
/// factor does.
#[utoipa::path(post, operation_id = "registerPasskey", path = "/me/passkeys", tag = "factors", request_body = PasskeyRegistrationInput,
    responses(
        (status = 201, description = "The passkey is a factor; new tokens at level 2", body = Envelope<FactorAdded>),
        (status = 400, description = "A malformed body, an unknown, used or expired challenge, a credential that does not verify, or PUBLIC_ORIGIN unset", body = ErrorEnvelope),
        (status = 403, description = "SECOND_FACTOR_REQUIRED or STEP_UP_REQUIRED", body = ErrorEnvelope),
        (status = 409, description = "The credential is registered already, or the caller has 10 passkeys", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn register_passkey(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let new = ctx
        .command::<PasskeyRegistrationInput, NewPasskey>()
        .await?;
    Ok(Reply::created(&ctx.app.register_passkey(&actor, new).await?).secret())
}

/// Request options for a sign-in with a passkey (any discoverable credential of this
/// site); valid 5 minutes.
#[utoipa::path(post, operation_id = "passkeySignInOptions", path = "/auth/passkey/options", tag = "factors", request_body(content = Option<PasskeyOptionsInput>),
    responses(
        (status = 200, description = "`options` for `navigator.credentials.get` (PublicKeyCredentialRequestOptionsJSON)", body = Envelope<PasskeyOptions>),
        (status = 400, description = "A body other than `{}`, or PUBLIC_ORIGIN unset", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn passkey_sign_in_options(mut ctx: Ctx) -> Result<Reply> {
    let _: Option<PasskeyOptionsInput> = ctx.optional_json().await?;
    Ok(Reply::ok(&ctx.app.passkey_sign_in_options().await?))
}

/// Sign in with a passkey, no mail needed: the answer is as `POST /auth/otp/verify`'s,
/// at assurance level 2.
#[utoipa::path(post, operation_id = "signInWithPasskey", path = "/auth/passkey/verify", tag = "factors", request_body = PasskeyVerifyInput,
    responses(
        (status = 200, description = "Signed in at level 2", body = Envelope<SignedIn>),
        (status = 400, description = "A malformed body, or PUBLIC_ORIGIN unset", body = ErrorEnvelope),
        (status = 401, description = "An unknown or used challenge, an unknown credential, a signature that does not verify (another origin, another challenge), a counter that went backwards (UNAUTHORIZED)", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn sign_in_with_passkey(mut ctx: Ctx) -> Result<Reply> {
    let answer = ctx.command::<PasskeyVerifyInput, PasskeyAnswer>().await?;
    Ok(Reply::ok(&ctx.app.sign_in_with_passkey(answer).await?).secret())
}
