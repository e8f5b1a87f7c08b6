//! What clients send to sign in, refresh and sign out (the wire inputs, with their
//! OpenAPI schemas), and the validated values the operations take.

use serde::Deserialize;
use utoipa::ToSchema;

use crate::domain::error::{Error, Result};
use crate::domain::validate::{self, Email, Problems, passed, required};

#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OtpRequestInput {
    /// An e-mail address (the server's check is stricter than `format: email` alone:
    /// at most 64 characters before the `@`, a dotted domain).
    #[schema(value_type = String, format = Email, max_length = 254, example = "ana@example.com")]
    pub email: Option<String>,
}

#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OtpVerifyInput {
    /// The address the code was sent to.
    #[schema(value_type = String, format = Email, max_length = 254, example = "ana@example.com")]
    pub email: Option<String>,
    /// The 6-digit code from the mail.
    #[schema(value_type = String, pattern = r"^[0-9]{6}$", example = "123456")]
    pub code: Option<String>,
}

#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefreshInput {
    /// The `refreshToken` of the last sign-in or refresh.
    #[schema(value_type = String, min_length = 1)]
    pub refresh_token: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogoutInput {
    pub refresh_token: Option<String>,
}

/// The validated [`OtpVerifyInput`]: the address and its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtpSignIn {
    pub email: Email,
    pub code: OtpCode,
}

impl TryFrom<OtpVerifyInput> for OtpSignIn {
    type Error = Error;

    fn try_from(input: OtpVerifyInput) -> Result<OtpSignIn> {
        let mut problems = Problems::new();
        let email = problems.take(required("email", input.email.as_deref(), Email::parse));
        let code = problems.take(OtpCode::parse(input.code.as_deref()));
        problems.finish()?;
        Ok(OtpSignIn {
            email: passed(email)?,
            code: passed(code)?,
        })
    }
}

/// The address of [`OtpRequestInput`].
impl TryFrom<OtpRequestInput> for Email {
    type Error = Error;

    fn try_from(input: OtpRequestInput) -> Result<Email> {
        required("email", input.email.as_deref(), Email::parse).map_err(Error::invalid)
    }
}

/// A one-time code as a client sends it back: 6 ASCII digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtpCode(String);

impl OtpCode {
    pub fn parse(raw: Option<&str>) -> std::result::Result<OtpCode, String> {
        let code = raw.map(str::trim).unwrap_or("");
        if code.len() == 6 && code.chars().all(|c| c.is_ascii_digit()) {
            Ok(OtpCode(code.to_owned()))
        } else if raw.is_none() {
            Err("code is required".into())
        } else {
            Err("code must be 6 digits".into())
        }
    }
}

crate::domain::string_value!(OtpCode);

/// A refresh token as a client sends it back: trimmed, never empty. Only its hash is
/// looked up, so nothing else is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshToken(String);

impl RefreshToken {
    /// The token, or `None` when absent or blank.
    pub fn optional(raw: Option<&str>) -> Option<RefreshToken> {
        validate::search_text(raw).map(RefreshToken)
    }
}

crate::domain::string_value!(RefreshToken);

impl TryFrom<RefreshInput> for RefreshToken {
    type Error = Error;

    fn try_from(input: RefreshInput) -> Result<RefreshToken> {
        RefreshToken::optional(input.refresh_token.as_deref())
            .ok_or_else(|| Error::invalid("refreshToken is required"))
    }
}

/// The validated [`LogoutInput`]: the refresh token whose sign-in ends too, if any (a
/// blank one is none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignOut {
    pub refresh_token: Option<RefreshToken>,
}

impl From<LogoutInput> for SignOut {
    fn from(input: LogoutInput) -> SignOut {
        SignOut {
            refresh_token: RefreshToken::optional(input.refresh_token.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_must_be_six_digits() {
        let code = |raw| OtpCode::parse(raw).map(OtpCode::into_string);
        assert_eq!(code(Some(" 012345 ")), Ok("012345".into()));
        for bad in ["12345", "1234567", "12345a", "", "１２３４５６"] {
            assert!(code(Some(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(code(None), Err("code is required".into()));
    }
}
