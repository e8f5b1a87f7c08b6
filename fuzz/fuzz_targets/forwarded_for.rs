//! `X-Forwarded-For` values: the rate limiter keys on the first address, and garbage must
//! fall back to the peer, never panic.
#![no_main]

use std::net::{IpAddr, SocketAddr};

use hyper::header::{HeaderMap, HeaderValue};
use langcamp_http::limits::{client_ip, first_forwarded};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let peer = SocketAddr::from(([192, 0, 2, 1], 4000));
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(ip) = first_forwarded(text) {
            // Whatever was found is the first comma-separated item, as an address or an
            // address with a port.
            let first = text.split(',').next().unwrap_or("").trim();
            let plain = first.parse::<IpAddr>().ok();
            let with_port = first.parse::<SocketAddr>().ok().map(|s| s.ip());
            assert!(
                plain == Some(ip) || with_port == Some(ip),
                "{text:?} -> {ip}"
            );
        }
    }
    // Through the header map, as the server sees it (any bytes a header value may hold).
    // A value that is not visible ASCII is ignored as a whole (hyper's `to_str`), even if it
    // is valid UTF-8: the peer is used, as for any other garbage.
    if let Ok(value) = HeaderValue::from_bytes(data) {
        let expected = value
            .to_str()
            .ok()
            .and_then(first_forwarded)
            .unwrap_or(peer.ip());
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", value);
        assert_eq!(client_ip(&headers, peer, true), expected);
        assert_eq!(client_ip(&headers, peer, false), peer.ip());
    }
});
