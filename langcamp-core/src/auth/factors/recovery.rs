//! Recovery codes (CONTRACT §20, §22): ten single-use codes of eight characters from
//! `a-z0-9` (some 41 bits each), made when a user's first factor is confirmed, shown that
//! once as `xxxx-xxxx`. A code is accepted in any case, with or without its dash.
//!
//! Stored as Argon2id hashes (OWASP's parameters: 19 MiB, two passes, one lane), each
//! with a salt of its own: 41 bits are within reach of a search on a fast keyed hash once
//! the key leaks, not on a memory-hard one, and no rotation of the server secret touches
//! them. Codes made before stay keyed hashes until used or renewed, matched under every
//! configured secret. Hashing is slow on purpose, so it runs off the async workers.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::domain::error::{Error, Result};
use crate::platform::crypto::{constant_time_eq, random_bytes};
use crate::platform::keyring::Keyring;

/// How many codes a user gets at a time.
pub const CODES: usize = 10;

const LENGTH: usize = 8;
const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Ten new codes as shown (`xxxx-xxxx`), from the CSPRNG.
pub(super) fn new_codes() -> Vec<String> {
    (0..CODES)
        .map(|_| {
            let code: String = (0..LENGTH)
                .map(|_| char::from(ALPHABET[rand::random_range(0..ALPHABET.len())]))
                .collect();
            format!("{}-{}", &code[..4], &code[4..])
        })
        .collect()
}

/// The code as stored (hashed): lower case, without the dash or spaces; `None` when it
/// cannot be a recovery code.
pub(super) fn normalized(code: &str) -> Option<String> {
    let plain: String = code
        .chars()
        .filter(|c| *c != '-' && !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    (plain.len() == LENGTH && plain.bytes().all(|b| ALPHABET.contains(&b))).then_some(plain)
}

/// Whether a stored hash is one of the keyed hashes of the releases before Argon2.
pub(crate) fn is_legacy(stored: &str) -> bool {
    !stored.starts_with("$argon2")
}

/// The Argon2id hash of each normalized code, each with a salt of its own.
pub(super) async fn hash_all(codes: Vec<String>) -> Result<Vec<String>> {
    tokio::task::spawn_blocking(move || {
        codes
            .iter()
            .map(|code| {
                let salt = SaltString::encode_b64(&random_bytes::<16>())
                    .map_err(|e| Error::internal(e.to_string()))?;
                Argon2::default()
                    .hash_password(code.as_bytes(), &salt)
                    .map(|hash| hash.to_string())
                    .map_err(|e| Error::internal(e.to_string()))
            })
            .collect()
    })
    .await
    .map_err(Error::internal)?
}

/// Which of `stored` (id, hash) the normalized `code` of `user_id` matches, if any: an
/// Argon2id hash, or a keyed hash of before under any configured secret.
pub(super) async fn find(
    keys: &Keyring,
    user_id: &str,
    code: &str,
    stored: Vec<(String, String)>,
) -> Result<Option<String>> {
    let legacy = keys.legacy_recovery_hashes(user_id, code);
    let code = code.to_owned();
    tokio::task::spawn_blocking(move || {
        stored.into_iter().find_map(|(id, hash)| {
            let matches = if is_legacy(&hash) {
                legacy
                    .iter()
                    .any(|candidate| constant_time_eq(candidate.as_bytes(), hash.as_bytes()))
            } else {
                PasswordHash::new(&hash).is_ok_and(|parsed| {
                    Argon2::default()
                        .verify_password(code.as_bytes(), &parsed)
                        .is_ok()
                })
            };
            matches.then_some(id)
        })
    })
    .await
    .map_err(Error::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_ten_distinct_eight_characters_shown_with_a_dash() {
        let codes = new_codes();
        assert_eq!(codes.len(), CODES);
        let distinct: std::collections::HashSet<&String> = codes.iter().collect();
        assert_eq!(distinct.len(), CODES);
        for code in &codes {
            assert_eq!(code.len(), 9, "{code}");
            assert_eq!(&code[4..5], "-");
            assert!(normalized(code).is_some(), "{code}");
        }
    }

    #[test]
    fn case_and_the_dash_are_ignored_and_anything_else_is_refused() {
        assert_eq!(normalized("AB12-cd34").as_deref(), Some("ab12cd34"));
        assert_eq!(normalized(" ab12cd34 ").as_deref(), Some("ab12cd34"));
        assert_eq!(normalized("ab12-cd3"), None);
        assert_eq!(normalized("ab12-cd3!"), None);
        assert_eq!(normalized("ab12-cd345"), None);
    }

    #[tokio::test]
    async fn a_code_matches_its_own_hash_only_and_codes_of_before_still_match() {
        let keys = Keyring::new("first-secret-0123456789", &[]);
        let hashes = hash_all(vec!["ab12cd34".into(), "ef56gh78".into()])
            .await
            .expect("hashed");
        assert!(
            hashes
                .iter()
                .all(|h| h.starts_with("$argon2id$") && !h.contains("ab12cd34"))
        );
        assert_ne!(hashes[0], hashes[1]);
        let stored = vec![
            ("one".to_owned(), hashes[0].clone()),
            ("two".to_owned(), hashes[1].clone()),
        ];
        let found = find(&keys, "u", "ef56gh78", stored.clone())
            .await
            .expect("looked");
        assert_eq!(found.as_deref(), Some("two"));
        assert_eq!(
            find(&keys, "u", "zz99zz99", stored).await.expect("looked"),
            None
        );
        // A keyed hash of the release before, under a secret now previous.
        let old =
            Keyring::new("first-secret-0123456789", &[]).legacy_recovery_hashes("u", "ab12cd34");
        let rotated = Keyring::new("second-secret-0123456789", &["first-secret-0123456789"]);
        let stored = vec![("old".to_owned(), old[0].clone())];
        assert!(is_legacy(&old[0]));
        let found = find(&rotated, "u", "ab12cd34", stored.clone())
            .await
            .expect("looked");
        assert_eq!(found.as_deref(), Some("old"));
        assert_eq!(
            find(&rotated, "v", "ab12cd34", stored)
                .await
                .expect("looked"),
            None,
            "bound to its user"
        );
    }
}
