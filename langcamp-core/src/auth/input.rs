//! What clients send to sign in, refresh and sign out, and the checks of its fields.

use serde::Deserialize;
use utoipa::ToSchema;

use crate::validate::Email;

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

pub(super) fn parse_code(raw: Option<&str>) -> std::result::Result<String, String> {
    let code = raw.map(str::trim).unwrap_or("");
    if code.len() == 6 && code.chars().all(|c| c.is_ascii_digit()) {
        Ok(code.to_owned())
    } else if raw.is_none() {
        Err("code is required".into())
    } else {
        Err("code must be 6 digits".into())
    }
}

pub(super) fn parse_email(raw: Option<&str>) -> std::result::Result<Email, String> {
    match raw {
        None => Err("email is required".into()),
        Some(e) => Email::parse("email", e),
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_must_be_six_digits() {
        assert_eq!(parse_code(Some(" 012345 ")), Ok("012345".into()));
        for bad in ["12345", "1234567", "12345a", "", "１２３４５６"] {
            assert!(parse_code(Some(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(parse_code(None), Err("code is required".into()));
    }
}
