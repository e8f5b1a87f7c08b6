//! `X-Forwarded-For` values: the client address is the peer for an untrusted peer, else
//! an address that the header holds or the peer; garbage never panics.
#![no_main]

use std::net::{IpAddr, SocketAddr};

use hyper::header::{HeaderMap, HeaderValue};
use langcamp_core::platform::net::{self, parse_forwarded_item};
use langcamp_http::limits::client_ip;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let peer = SocketAddr::from(([192, 0, 2, 1], 4000));
    let trusted = net::parse_networks("192.0.2.0/24").expect("networks");
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(ip) = parse_forwarded_item(text) {
            // An item is an address or an address with a port, mapped IPv4 as IPv4.
            let item = text.trim();
            let plain = item.parse::<IpAddr>().ok();
            let with_port = item.parse::<SocketAddr>().ok().map(|s| s.ip());
            assert!(
                [plain, with_port]
                    .into_iter()
                    .flatten()
                    .any(|found| net::normalize(found) == ip),
                "{text:?} -> {ip}"
            );
        }
    }
    // Through the header map, as the server sees it (any bytes a header value may hold).
    if let Ok(value) = HeaderValue::from_bytes(data) {
        let as_text = value.to_str().ok().map(str::to_owned);
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", value);
        let found = client_ip(&headers, peer, &trusted);
        // Either the peer, or an item of the header outside the trusted network.
        if found != peer.ip() {
            let text = as_text.expect("a found address comes from a text value");
            assert!(!trusted[0].contains(found), "{text:?} -> {found}");
            assert!(
                text.split(',').any(|item| parse_forwarded_item(item) == Some(found)),
                "{text:?} -> {found}"
            );
        }
        // An untrusted peer is always itself.
        assert_eq!(client_ip(&headers, peer, &[]), peer.ip());
    }
});
