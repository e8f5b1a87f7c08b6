//! Access tokens whose signature has already been checked.
//!
//! Checking an HS256 token is two base64 decodings, two JSON parses and an HMAC: a profile
//! of `GET /me` put it among the largest costs of an authenticated request once the
//! sign-in itself came from memory ([`crate::auth::session::live`]). Whether a token's signature and
//! claims are valid never changes (the key is fixed for the life of the process), so the
//! claims of a token that passed are kept, keyed by the whole token, and a later request
//! with the same token skips the decoding. Everything that *can* change is still checked
//! on every request by the caller: the expiry against the clock, and the sign-in, the
//! blacklist and the user's current role through the live sign-in.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::auth::session::Claims;

/// How many tokens are held at most (about 400 bytes each: some 8 MB). When it is full of
/// unexpired tokens it is emptied and refills with those in use.
pub const MAX_VERIFIED_TOKENS: usize = 20_000;

#[derive(Debug, Default)]
pub struct VerifiedTokens {
    tokens: RwLock<HashMap<Box<str>, Arc<Claims>>>,
}

impl VerifiedTokens {
    /// The claims of `token`, if it was verified before.
    pub(crate) fn get(&self, token: &str) -> Option<Arc<Claims>> {
        self.tokens
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(token)
            .cloned()
    }

    /// Keeps the claims of a token that just passed verification.
    pub(crate) fn keep(&self, token: &str, claims: Arc<Claims>, now_ms: i64) {
        let mut tokens = self.tokens.write().unwrap_or_else(|e| e.into_inner());
        if tokens.len() >= MAX_VERIFIED_TOKENS {
            tokens.retain(|_, claims| claims.exp.saturating_mul(1000) > now_ms);
            if tokens.len() >= MAX_VERIFIED_TOKENS {
                tokens.clear();
            }
        }
        tokens.insert(token.into(), claims);
    }

    pub fn len(&self) -> usize {
        self.tokens.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
