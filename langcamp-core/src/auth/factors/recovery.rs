//! Recovery codes (CONTRACT §20): ten single-use codes of eight characters from `a-z0-9`
//! (some 41 bits each), made when a user's first factor is confirmed, shown that once as
//! `xxxx-xxxx`, and stored only as keyed hashes bound to the user. A code is accepted in
//! any case, with or without its dash.

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
}
