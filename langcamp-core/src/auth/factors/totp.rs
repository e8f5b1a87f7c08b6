//! Time-based one-time codes (RFC 6238) as every authenticator app makes them: HMAC-SHA-1,
//! 6 digits, 30-second steps, one step of clock skew either way. The arithmetic is
//! `totp-rs`'s; here are only our choices: a 160-bit secret from our CSPRNG (RFC 4226's
//! recommended length), the `otpauth://` URI naming the school and the user, and the step
//! a code matched, so the caller accepts each step once (RFC 6238 §5.2: a code works once).

use totp_rs::{Algorithm, Builder, Totp};

use crate::domain::error::{Error, Result};
use crate::platform::crypto::random_bytes;

/// Bytes of a new secret: 160 bits.
const SECRET_BYTES: usize = 20;

/// A new random secret.
pub(super) fn new_secret() -> Vec<u8> {
    random_bytes::<SECRET_BYTES>().to_vec()
}

/// The generator of `secret`, labelled for the `otpauth://` URI with the school (issuer)
/// and the user's e-mail (account).
fn generator(secret: &[u8], issuer: &str, account: &str) -> Result<Totp> {
    // The URI's label is `issuer:account`: neither may carry a colon of its own.
    let label = |text: &str| text.replace(':', " ");
    Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(6)
        .with_skew(1)
        .with_step_duration(30)
        .with_secret(secret.to_vec())
        .with_account_name(label(account))
        .with_issuer(Some(label(issuer)))
        .build()
        .map_err(|e| Error::internal(format!("a TOTP generator: {e}")))
}

/// The secret as authenticator apps take it by hand (base32, no padding) and the
/// `otpauth://totp/...` URI they read from a QR code.
pub(super) fn enrolment(secret: &[u8], issuer: &str, account: &str) -> Result<(String, String)> {
    let totp = generator(secret, issuer, account)?;
    let uri = totp
        .to_url()
        .map_err(|e| Error::internal(format!("an otpauth URI: {e}")))?;
    Ok((totp.secret().to_base32(), uri))
}

/// The time step `code` is valid for at `now_ms` (the current one or one either side),
/// if it is valid; the caller refuses a step it accepted before.
pub(super) fn matching_step(secret: &[u8], code: &str, now_ms: i64) -> Result<Option<i64>> {
    let totp = generator(secret, "", "")?;
    let now = u64::try_from(now_ms / 1000).unwrap_or(0);
    Ok(totp
        .check(code, now)
        .and_then(|step| i64::try_from(step).ok()))
}

/// The code of a base32 `secret` (as enrolment shows it) at `now_ms`: what an
/// authenticator app shows. For the tests, the console check and the schemathesis run,
/// which play the app.
pub fn code_from_base32(secret: &str, now_ms: i64) -> Result<String> {
    let bytes = totp_rs::Secret::try_from_base32(secret)
        .map_err(|e| Error::invalid(format!("not a base32 secret: {e}")))?;
    code_at(bytes.as_ref(), now_ms)
}

/// The code of `secret` at `now_ms`: what an authenticator app shows.
pub fn code_at(secret: &[u8], now_ms: i64) -> Result<String> {
    let totp = generator(secret, "", "")?;
    Ok(totp
        .generate(u64::try_from(now_ms / 1000).unwrap_or(0))
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238's test secret (ASCII "12345678901234567890") and its SHA-1 vectors, cut to
    /// six digits.
    const RFC_SECRET: &[u8] = b"12345678901234567890";

    #[test]
    fn codes_match_the_rfc_vectors() {
        assert_eq!(code_at(RFC_SECRET, 59_000).expect("a code"), "287082");
        assert_eq!(
            code_at(RFC_SECRET, 1_111_111_109_000).expect("a code"),
            "081804"
        );
        assert_eq!(
            code_at(RFC_SECRET, 2_000_000_000_000).expect("a code"),
            "279037"
        );
    }

    #[test]
    fn a_code_matches_its_step_and_one_either_side_only() {
        let now = 1_111_111_109_000;
        let code = code_at(RFC_SECRET, now).expect("a code");
        let step = now / 1000 / 30;
        assert_eq!(
            matching_step(RFC_SECRET, &code, now).expect("checked"),
            Some(step)
        );
        assert_eq!(
            matching_step(RFC_SECRET, &code, now + 30_000).expect("checked"),
            Some(step)
        );
        assert_eq!(
            matching_step(RFC_SECRET, &code, now - 30_000).expect("checked"),
            Some(step)
        );
        assert_eq!(
            matching_step(RFC_SECRET, &code, now + 60_000).expect("checked"),
            None
        );
        assert_eq!(
            matching_step(RFC_SECRET, "000000x", now).expect("checked"),
            None
        );
    }

    #[test]
    fn the_uri_names_the_school_and_the_user_and_carries_the_secret() {
        let secret = new_secret();
        let (base32, uri) =
            enrolment(&secret, "Escola: Lisboa", "ana@example.com").expect("an enrolment");
        assert!(uri.starts_with("otpauth://totp/"), "{uri}");
        assert!(uri.contains("ana%40example.com"), "{uri}");
        assert!(
            uri.contains("issuer=Escola%20%20Lisboa") || uri.contains("issuer=Escola"),
            "{uri}"
        );
        assert!(uri.contains(&format!("secret={base32}")), "{uri}");
        assert_eq!(secret.len(), 20);
    }
}
