//! Signing in, as one area (CONTRACT §3, §20, §21, §22): the e-mail code, second factors and
//! passkeys, the tokens and sign-ins they open.
//!
//! Its parts import each other one way, bottom to top (`tests/floors.rs` checks it):
//!
//! * `input`: what clients send, parsed into validated values;
//! * `session`: a sign-in, its level (aal 1 or 2), its access and refresh tokens, the
//!   memory of live sign-ins, refresh and logout;
//! * `factors`: second factors (TOTP, recovery codes, passkeys), their enrolment and the
//!   second step that raises a sign-in to level 2; a passkey also signs in on its own;
//! * `code`: the first factor, a one-time code by mail, which opens a sign-in at level 1
//!   and tells from the user's factors what comes next.
//!
//! This file only names the parts and what the rest of the crate and the front ends use.

pub mod code;
pub mod factors;
mod input;
pub mod session;

pub use self::code::{OTP_MAX_ATTEMPTS, OTP_MAX_PER_HOUR, OtpRequested};
pub use self::factors::{
    CodeInput, Factor, FactorAdded, FactorKind, FactorList, FactorName, MAX_PASSKEYS, NewPasskey,
    PasskeyAnswer, PasskeyOptions, PasskeyOptionsInput, PasskeyRegistrationInput,
    PasskeyVerifyInput, ProofMethod, RECOVERY_CODES, RecoveryCodes, SecondFactorInput,
    SecondFactorProof, TotpEnrolment, TotpStartInput, totp,
};
pub use self::input::{
    LogoutInput, OtpCode, OtpRequestInput, OtpSignIn, OtpVerifyInput, RefreshInput, RefreshToken,
    SignOut,
};
pub use self::session::{
    FACTOR_MAX_ATTEMPTS, FactorMethod, Message, OptionalAuth, REUSE_GRACE_MS, SecondFactorStep,
    SignedIn, TokenPair, live, verified,
};
