//! Small cryptographic helpers: hexadecimal, plain hashes for high-entropy tokens, HMAC,
//! constant-time comparison and random bytes. The server's keys and what they seal are
//! the keyring's (`keyring.rs`).

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

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

/// Constant-time equality of two byte strings (`subtle`); their lengths are not secret.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

/// Random bytes from the operating system's cryptographic generator (via rand's CSPRNG).
pub fn random_bytes<const N: usize>() -> [u8; N] {
    rand::random()
}

/// URL-safe random token (hex) carrying `N` bytes of entropy.
pub fn random_token<const N: usize>() -> String {
    hex(&random_bytes::<N>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_constant_time_eq_behave() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
    }
}
