//! The validators every handler runs on client text (after JSON parsing, or on query
//! strings and headers): they must answer `Ok` or a message, never panic, and what they
//! accept must stay within the limits they promise.
#![no_main]

use langcamp_core::PageRequest;
use langcamp_core::domain::id::looks_like_id;
use langcamp_core::domain::validate::{
    Email, bounded, first_accept_language, http_url, language_tag, optional_text, text,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(email) = Email::parse("email", raw) {
        let email = email.as_str();
        assert!(email.len() <= 254 && email.contains('@'));
        assert_eq!(email, email.trim());
        // A stored address parses to itself (it is parsed again at every sign-in).
        assert_eq!(
            Email::parse("email", email)
                .map(Email::into_string)
                .as_deref(),
            Ok(email)
        );
    }
    if let Ok(value) = text("name", Some(raw), 1, 100) {
        let n = value.chars().count();
        assert!((1..=100).contains(&n));
    }
    if let Ok(value) = bounded("name", raw, 0, 5) {
        assert!(value.chars().count() <= 5);
    }
    let _ = optional_text("source", Some(raw), 200);
    if let Ok(tag) = language_tag("locale", raw) {
        assert!(tag.len() <= 35);
        // Normalising is idempotent.
        assert_eq!(language_tag("locale", &tag).as_deref(), Ok(tag.as_str()));
    }
    let _ = first_accept_language(raw);
    if let Ok(url) = http_url("url", raw) {
        assert!(url.starts_with("http://") || url.starts_with("https://"));
    }
    let _ = looks_like_id(raw);
    // Query strings: `page` and `limit`, split at the first `&`.
    let (page, limit) = raw.split_once('&').unwrap_or((raw, ""));
    if let Ok(request) = PageRequest::parse(Some(page), Some(limit)) {
        assert!(request.offset() >= 0 && request.limit() >= 1);
    }
});
