//! Sign-in, tokens and the caller's own profile (CONTRACT §3).

use langcamp_core::Result;
use langcamp_core::auth::{
    LogoutInput, Message, OptionalAuth, OtpRequestInput, OtpRequested, OtpSignIn, OtpVerifyInput,
    RefreshInput, RefreshToken, SignOut, SignedIn, TokenPair,
};
use langcamp_core::domain::Email;
use langcamp_core::users::{
    CompletedRegistration, ProfileChange, ProfileInput, Registration, RegistrationInput,
    RegistrationStatus, User,
};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_request_otp>(RateRule::OtpRequest, Access::Anyone, request_otp);
    r.add::<__path_verify_otp>(RateRule::OtpVerify, Access::Anyone, verify_otp);
    r.add::<__path_refresh>(RateRule::Refresh, Access::Anyone, refresh);
    r.add::<__path_logout>(RateRule::Default, Access::OwnAccount, logout);
    r.add::<__path_registration_status>(RateRule::Default, Access::SignedIn, registration_status);
    r.add::<__path_complete_registration>(
        RateRule::Default,
        Access::SignedIn,
        complete_registration,
    );
    r.add::<__path_optional>(RateRule::Default, Access::Anyone, optional);
    r.add::<__path_me>(RateRule::Default, Access::OwnAccount, me);
    r.add::<__path_update_profile>(RateRule::Default, Access::SignedIn, update_profile);
}

/// Send a one-time sign-in code by mail. Answers the same for every address. The mail is
/// in the user's locale; for an address not yet known, in the first `Accept-Language` tag
/// (then its language, then the school's default).
#[utoipa::path(post, operation_id = "requestOtp", path = "/auth/otp/request", tag = "auth", request_body = OtpRequestInput,
    params(("accept-language" = Option<String>, Header, description = "The mail's language for an address not yet known (first tag)")),
    responses(
        (status = 200, description = "A code is on its way if the address can receive mail", body = Envelope<OtpRequested>),
        (status = 400, description = "Not an e-mail address", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (5 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn request_otp(mut ctx: Ctx) -> Result<Reply> {
    let email = ctx.command::<OtpRequestInput, Email>().await?;
    let language = ctx.header("accept-language");
    Ok(Reply::ok(&ctx.app.request_otp(email, language).await?))
}

/// Exchange the code for tokens. An unknown address creates a user with incomplete registration.
#[utoipa::path(post, operation_id = "verifyOtp", path = "/auth/otp/verify", tag = "auth", request_body = OtpVerifyInput,
    params(("accept-language" = Option<String>, Header, description = "Sets a new user's locale (first tag)")),
    responses(
        (status = 200, description = "Signed in", body = Envelope<SignedIn>),
        (status = 400, description = "Not an e-mail address, or the code is not 6 digits", body = ErrorEnvelope),
        (status = 401, description = "Wrong, expired, used or dead code (OTP_INVALID)", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (12 per 5 minutes per client)", body = ErrorEnvelope),
    ))]
pub async fn verify_otp(mut ctx: Ctx) -> Result<Reply> {
    let sign_in = ctx.command::<OtpVerifyInput, OtpSignIn>().await?;
    let language = ctx.header("accept-language").map(str::to_owned);
    Ok(Reply::ok(&ctx.app.verify_otp(sign_in, language.as_deref()).await?).secret())
}

/// Rotate the refresh token and get a new access token.
///
/// A sign-in is one chain of refresh tokens, never a tree: the same token presented again
/// within 10 seconds of its rotation (two tabs refreshing at once) answers the *same*
/// refresh token its first rotation produced, with a fresh access token for the same
/// sign-in. Presented later, it revokes that sign-in and answers 401.
#[utoipa::path(post, operation_id = "refreshTokens", path = "/auth/refresh", tag = "auth", request_body = RefreshInput,
    responses(
        (status = 200, description = "New tokens; the presented refresh token is used up (within 10 s of its rotation it answers the same successor again)", body = Envelope<TokenPair>),
        (status = 400, description = "refreshToken missing", body = ErrorEnvelope),
        (status = 401, description = "Unknown, expired, revoked or reused (after the 10 s grace) refresh token; a reuse revokes the sign-in", body = ErrorEnvelope),
        (status = 429, description = "Rate limited (30 per minute per client)", body = ErrorEnvelope),
    ))]
pub async fn refresh(mut ctx: Ctx) -> Result<Reply> {
    let token = ctx.command::<RefreshInput, RefreshToken>().await?;
    Ok(Reply::ok(&ctx.app.refresh(token, ctx.origin()).await?).secret())
}

/// End the sign-in of the access token; the token and its refresh token stop working.
#[utoipa::path(post, operation_id = "logout", path = "/auth/logout", tag = "auth", request_body(content = Option<LogoutInput>),
    responses(
        (status = 200, description = "Signed out", body = Envelope<Message>),
        (status = 400, description = "Malformed body", body = ErrorEnvelope),
    ))]
pub async fn logout(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let input: Option<LogoutInput> = ctx.optional_json().await?;
    let sign_out = SignOut::from(input.unwrap_or_default());
    Ok(Reply::ok(&ctx.app.logout(&actor, sign_out).await?))
}

/// Whether the caller has completed registration.
#[utoipa::path(get, operation_id = "getRegistrationStatus", path = "/auth/registration-status", tag = "auth",
    responses(
        (status = 200, description = "Registration state", body = Envelope<RegistrationStatus>),
    ))]
pub async fn registration_status(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.registration_status(&actor).await?))
}

/// Complete the profile after the first sign-in. Requires name, age, gender, country, countryCode, phoneNumber.
#[utoipa::path(post, operation_id = "completeRegistration", path = "/auth/complete-registration", tag = "auth", request_body = RegistrationInput,
    responses(
        (status = 200, description = "Registration complete", body = Envelope<CompletedRegistration>),
        (status = 400, description = "Invalid or missing profile fields", body = ErrorEnvelope),
        (status = 409, description = "Registration is already complete", body = ErrorEnvelope),
    ))]
pub async fn complete_registration(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let registration = ctx.command::<ProfileInput, Registration>().await?;
    Ok(Reply::ok(
        &ctx.app.complete_registration(&actor, registration).await?,
    ))
}

/// Works with or without a token; any invalid token counts as anonymous.
#[utoipa::path(get, operation_id = "getOptionalAuth", path = "/auth/optional", tag = "auth", security((), ("bearer" = [])),
    responses((status = 200, description = "Who is calling", body = Envelope<OptionalAuth>)))]
pub async fn optional(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.optional_actor().await?;
    Ok(Reply::ok(&ctx.app.optional_auth(&actor).await?))
}

/// The caller's own profile.
#[utoipa::path(get, operation_id = "getMe", path = "/me", tag = "auth",
    responses(
        (status = 200, description = "Own profile", body = Envelope<User>),
    ))]
pub async fn me(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.me(&actor).await?))
}

/// Change any subset of the own profile; `email` and `role` are refused.
#[utoipa::path(patch, operation_id = "updateMyProfile", path = "/me/profile", tag = "auth", request_body = ProfileInput,
    responses(
        (status = 200, description = "Updated profile", body = Envelope<User>),
        (status = 400, description = "Invalid fields, or email/role present", body = ErrorEnvelope),
    ))]
pub async fn update_profile(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let change = ctx.command::<ProfileInput, ProfileChange>().await?;
    Ok(Reply::ok(&ctx.app.update_my_profile(&actor, change).await?))
}
