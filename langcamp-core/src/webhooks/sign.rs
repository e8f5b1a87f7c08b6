//! Signing a delivery as the Standard Webhooks specification says, so that a receiver
//! checks it with a library of its own language: the signed content is
//! `{webhook-id}.{webhook-timestamp}.{body}`, the signature `v1,` and the base64 of its
//! HMAC-SHA-256 under the secret's bytes (the base64 after `whsec_`), several signatures
//! space-separated while an endpoint changes its secret.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::platform::crypto::{hmac_sha256, random_bytes};

/// The prefix of a signing secret.
const PREFIX: &str = "whsec_";

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub(super) fn new_secret() -> String {
    format!("{PREFIX}{}", STANDARD.encode(random_bytes::<32>()))
}

/// The key of a signing secret: its bytes after `whsec_` (`None`: not a secret of ours).
pub(super) fn key_of(secret: &str) -> Option<Vec<u8>> {
    STANDARD.decode(secret.strip_prefix(PREFIX)?).ok()
}

/// The `webhook-signature` of a delivery: one `v1,<signature>` for each key.
pub(super) fn signatures(keys: &[Vec<u8>], id: &str, timestamp: i64, body: &str) -> String {
    let content = format!("{id}.{timestamp}.{body}");
    keys.iter()
        .map(|key| {
            format!(
                "v1,{}",
                STANDARD.encode(hmac_sha256(key, content.as_bytes()))
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectors of the specification's reference libraries (the Python and JavaScript
    /// `standardwebhooks` tests, and the Rust one's `test_sign`).
    #[test]
    fn signatures_match_the_reference_libraries() {
        let vectors = [
            (
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                r#"{"test": 2432232314}"#,
                "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
            ),
            (
                "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
                "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
                1_649_367_553,
                r#"{"email":"test@example.com","username":"test_user"}"#,
                "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
            ),
        ];
        for (secret, id, timestamp, body, expected) in vectors {
            let key = key_of(secret).expect("a secret");
            assert_eq!(signatures(&[key], id, timestamp, body), expected);
        }
    }

    #[test]
    fn two_keys_sign_twice_space_separated_and_a_secret_is_32_bytes() {
        let (a, b) = (new_secret(), new_secret());
        assert!(a.starts_with("whsec_") && a != b);
        let key = key_of(&a).expect("a secret");
        assert_eq!(key.len(), 32);
        let both = signatures(
            &[key.clone(), key_of(&b).expect("a secret")],
            "msg_1",
            1,
            "{}",
        );
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| p.starts_with("v1,")));
        assert_eq!(parts[0], signatures(&[key], "msg_1", 1, "{}"));
        assert_eq!(key_of("not-a-secret"), None);
    }
}
