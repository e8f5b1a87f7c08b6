//! Small cryptographic helpers: keyed hashes for codes, plain hashes for tokens,
//! and sealing of outbox mail.
//!
//! Every key is derived from the one server secret (`JWT_SECRET`) with a purpose label,
//! so a leak of one derived key tells nothing about the others.

use chacha20poly1305::XChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Lower-case hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// SHA-256 of `data`, hex-encoded. For high-entropy values such as refresh tokens.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// HMAC-SHA-256 of `data` under `key`.
pub fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// Constant-time equality of two byte strings.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Random bytes from the operating system's cryptographic generator (via rand's CSPRNG).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    rand::random()
}

/// URL-safe random token (hex) carrying `N` bytes of entropy.
pub fn random_token<const N: usize>() -> String {
    hex(&random_bytes::<N>())
}

/// Keys derived from the server secret, one per purpose.
#[derive(Clone)]
pub struct Keys {
    pub jwt: Vec<u8>,
    pub otp: [u8; 32],
    pub outbox: [u8; 32],
    /// Derives the refresh token that follows a presented one (see [`Keys::successor_token`]).
    pub refresh: [u8; 32],
    /// Seals second-factor secrets (TOTP) at rest.
    factor_secret: [u8; 32],
    /// The keyed hash of recovery codes.
    recovery: [u8; 32],
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys([redacted])")
    }
}

impl Keys {
    pub fn derive(secret: &str) -> Keys {
        let secret = secret.as_bytes();
        Keys {
            jwt: secret.to_vec(),
            otp: hmac_sha256(secret, b"langcamp/otp-code-hash/v1"),
            outbox: hmac_sha256(secret, b"langcamp/outbox-seal/v1"),
            refresh: hmac_sha256(secret, b"langcamp/refresh-successor/v1"),
            factor_secret: hmac_sha256(secret, b"langcamp/factor-secret-seal/v1"),
            recovery: hmac_sha256(secret, b"langcamp/recovery-code-hash/v1"),
        }
    }

    /// The keyed hash under which a one-time code is stored, bound to its address.
    pub fn otp_hash(&self, email: &str, code: &str) -> String {
        let mut data = Vec::with_capacity(email.len() + code.len() + 1);
        data.extend_from_slice(email.as_bytes());
        data.push(0);
        data.extend_from_slice(code.as_bytes());
        hex(&hmac_sha256(&self.otp, &data))
    }

    /// The refresh token that rotating `token` produces: a keyed hash of it, so every
    /// rotation of the same token (two tabs refreshing at once, on any instance) answers
    /// the same successor without the server ever storing a token in plain text. Only the
    /// holder of `token` and the server can compute it; it carries 256 bits like a random one.
    pub fn successor_token(&self, token: &str) -> String {
        hex(&hmac_sha256(&self.refresh, token.as_bytes()))
    }

    /// The keyed hash under which a recovery code is stored, bound to its user.
    pub fn recovery_code_hash(&self, user_id: &str, code: &str) -> String {
        let mut data = Vec::with_capacity(user_id.len() + code.len() + 1);
        data.extend_from_slice(user_id.as_bytes());
        data.push(0);
        data.extend_from_slice(code.as_bytes());
        hex(&hmac_sha256(&self.recovery, &data))
    }

    /// Encrypts outbox mail (XChaCha20-Poly1305, random nonce prepended).
    pub fn seal(&self, plaintext: &[u8]) -> Vec<u8> {
        seal_under(&self.outbox, plaintext)
    }

    /// Decrypts what [`Keys::seal`] produced; `None` if it was sealed under another key.
    pub fn open(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        open_under(&self.outbox, sealed)
    }

    /// Encrypts a second factor's secret for storage, under a key of its own.
    pub fn seal_factor_secret(&self, secret: &[u8]) -> Vec<u8> {
        seal_under(&self.factor_secret, secret)
    }

    /// Decrypts what [`Keys::seal_factor_secret`] produced; `None` under another server
    /// secret (`JWT_SECRET` was changed since the factor was added).
    pub fn open_factor_secret(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        open_under(&self.factor_secret, sealed)
    }
}

/// XChaCha20-Poly1305 under `key`, the random nonce prepended.
fn seal_under(key: &[u8; 32], plaintext: &[u8]) -> Vec<u8> {
    let cipher = XChaCha20Poly1305::new(key.into());
    let nonce: [u8; 24] = random_bytes();
    let mut out = nonce.to_vec();
    let sealed = cipher
        .encrypt(&nonce.into(), plaintext)
        .unwrap_or_else(|_| unreachable!("encryption of an in-memory buffer cannot fail"));
    out.extend_from_slice(&sealed);
    out
}

fn open_under(key: &[u8; 32], sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < 24 {
        return None;
    }
    let (nonce, ciphertext) = sealed.split_at(24);
    let nonce: [u8; 24] = nonce.try_into().ok()?;
    let cipher = XChaCha20Poly1305::new(key.into());
    cipher.decrypt(&nonce.into(), ciphertext).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_text_opens_only_with_the_same_secret() {
        let keys = Keys::derive("first-secret-0123456789");
        let sealed = keys.seal(b"your code is 123456");
        assert!(!sealed.windows(6).any(|w| w == b"123456"));
        assert_eq!(
            keys.open(&sealed).as_deref(),
            Some(&b"your code is 123456"[..])
        );
        let other = Keys::derive("second-secret-0123456789");
        assert_eq!(other.open(&sealed), None);
        assert_eq!(keys.open(b"short"), None);
    }

    #[test]
    fn otp_hashes_are_bound_to_address_and_secret() {
        let keys = Keys::derive("first-secret-0123456789");
        let a = keys.otp_hash("a@example.com", "123456");
        assert_eq!(a.len(), 64);
        assert_ne!(a, keys.otp_hash("b@example.com", "123456"));
        assert_ne!(
            a,
            Keys::derive("other-secret-0123456789").otp_hash("a@example.com", "123456")
        );
        assert!(!a.contains("123456"));
    }

    #[test]
    fn a_refresh_token_has_one_successor_per_secret() {
        let keys = Keys::derive("first-secret-0123456789");
        let next = keys.successor_token("token-a");
        assert_eq!(next.len(), 64);
        assert_eq!(next, keys.successor_token("token-a"));
        assert_ne!(next, keys.successor_token("token-b"));
        assert_ne!(
            next,
            Keys::derive("other-secret-0123456789").successor_token("token-a")
        );
    }

    #[test]
    fn hex_and_constant_time_eq_behave() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
