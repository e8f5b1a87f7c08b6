//! Client addresses behind proxies (`TRUSTED_PROXIES`, CONTRACT §1 "Client address").
//!
//! A proxy *appends* the address it saw to `X-Forwarded-For`, after whatever the client
//! itself sent, so only the entries added by proxies we trust can be believed. Reading
//! from the right and stopping at the first address outside the trusted networks gives
//! the client as the nearest untrusted hop saw it; the left-most value (the old rule) is
//! whatever the client chose to write.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A network in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`); a bare address is a
/// network of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    /// Parses `addr/prefix` or a bare address. Host bits are cleared; an IPv4-mapped IPv6
    /// network (`::ffff:10.0.0.0/104`) becomes its IPv4 network, as addresses do.
    pub fn parse(raw: &str) -> Option<IpNet> {
        let raw = raw.trim();
        let (addr, prefix) = match raw.split_once('/') {
            Some((addr, prefix)) => {
                // Digits only: `u8::from_str` would also take a leading `+`.
                if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                (
                    addr.parse::<IpAddr>().ok()?,
                    Some(prefix.parse::<u8>().ok()?),
                )
            }
            None => (raw.parse::<IpAddr>().ok()?, None),
        };
        let (addr, prefix) = match addr {
            IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => {
                let v4 = v6.to_ipv4_mapped()?;
                match prefix {
                    None => (IpAddr::V4(v4), 32),
                    Some(p) if (96..=128).contains(&p) => (IpAddr::V4(v4), p - 96),
                    Some(_) => return None,
                }
            }
            IpAddr::V4(_) => (addr, prefix.unwrap_or(32)),
            IpAddr::V6(_) => (addr, prefix.unwrap_or(128)),
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return None;
        }
        Some(IpNet {
            addr: mask(addr, prefix),
            prefix,
        })
    }

    /// Whether `ip` (normalized first) lies inside this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = normalize(ip);
        ip.is_ipv4() == self.addr.is_ipv4() && mask(ip, self.prefix) == self.addr
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Parses a comma-separated list of networks; empty items are skipped, so an empty list
/// trusts nobody. `Err` names the first item that is not a network.
pub fn parse_networks(raw: &str) -> Result<Vec<IpNet>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| IpNet::parse(item).ok_or_else(|| item.to_owned()))
        .collect()
}

/// `ip` with the bits past `prefix` cleared.
fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let kept = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(bits & kept))
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let kept = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(bits & kept))
        }
    }
}

/// An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as the IPv4 address it is, so a
/// dual-stack listener and a proxy writing either form count one client once.
pub fn normalize(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// What rate limits count against: the address, or for IPv6 its /64 network, since one
/// subscriber is routinely given a whole /64 and could otherwise rotate through it.
pub fn rate_key(ip: IpAddr) -> IpAddr {
    match normalize(ip) {
        IpAddr::V6(v6) => mask(IpAddr::V6(v6), 64),
        v4 => v4,
    }
}

/// One `X-Forwarded-For` item as an address: `1.2.3.4`, `2001:db8::1`, or either with a
/// port (`1.2.3.4:80`, `[2001:db8::1]:443`).
pub fn parse_forwarded_item(item: &str) -> Option<IpAddr> {
    let item = item.trim();
    item.parse::<IpAddr>()
        .ok()
        .or_else(|| item.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .map(normalize)
}

/// The client address of a request that came from `peer` carrying the `X-Forwarded-For`
/// values `forwarded` (each header line, in order; `None` for a line that is not text).
///
/// From a peer outside `trusted` the header is ignored. Otherwise its items are read from
/// right to left, skipping trusted addresses; the first one outside `trusted` is the
/// client, and when all are trusted the left-most is. An item that is not an address
/// ends the scan with the peer: past it, nothing is known to come from a trusted hop.
pub fn client_address<'a>(
    peer: IpAddr,
    forwarded: impl DoubleEndedIterator<Item = Option<&'a str>>,
    trusted: &[IpNet],
) -> IpAddr {
    let peer = normalize(peer);
    let is_trusted = |ip: IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(peer) {
        return peer;
    }
    let mut leftmost = peer;
    for line in forwarded.rev() {
        let Some(line) = line else {
            return peer;
        };
        for item in line.rsplit(',') {
            let Some(ip) = parse_forwarded_item(item) else {
                return peer;
            };
            if !is_trusted(ip) {
                return ip;
            }
            leftmost = ip;
        }
    }
    leftmost
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address")
    }

    fn nets(s: &str) -> Vec<IpNet> {
        parse_networks(s).expect("networks")
    }

    fn client(peer: &str, xff: &[&str], trusted: &str) -> String {
        client_address(ip(peer), xff.iter().map(|v| Some(*v)), &nets(trusted)).to_string()
    }

    #[test]
    fn networks_parse_and_contain() {
        let net = IpNet::parse("10.1.2.3/8").expect("net");
        assert_eq!(net.to_string(), "10.0.0.0/8");
        assert!(net.contains(ip("10.200.0.1")));
        assert!(net.contains(ip("::ffff:10.9.9.9")));
        assert!(!net.contains(ip("11.0.0.1")));
        assert!(!net.contains(ip("::a00:1")));
        let v6 = IpNet::parse("2001:db8::/32").expect("net");
        assert!(v6.contains(ip("2001:db8:ffff::1")));
        assert!(!v6.contains(ip("2001:db9::1")));
        assert_eq!(
            IpNet::parse("::ffff:192.0.2.0/120").map(|n| n.to_string()),
            Some("192.0.2.0/24".into())
        );
        assert_eq!(
            IpNet::parse("::1").map(|n| n.to_string()),
            Some("::1/128".into())
        );
        assert!(
            IpNet::parse("0.0.0.0/0")
                .expect("all")
                .contains(ip("8.8.8.8"))
        );
        for bad in [
            "",
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/",
            "10.0.0.0/+8",
            "host",
            "1.2.3",
        ] {
            assert_eq!(IpNet::parse(bad), None, "{bad:?}");
        }
        assert_eq!(parse_networks(" , ").map(|n| n.len()), Ok(0));
        assert_eq!(parse_networks("10.0.0.0/8, nope"), Err("nope".into()));
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        assert_eq!(
            client("203.0.113.9", &["198.51.100.1"], "127.0.0.0/8"),
            "203.0.113.9"
        );
        assert_eq!(client("127.0.0.1", &["198.51.100.1"], ""), "127.0.0.1");
    }

    #[test]
    fn a_client_behind_an_appending_proxy_cannot_choose_its_address() {
        // The client sent "1.1.1.1"; the proxy (trusted) appended the address it saw.
        assert_eq!(
            client("127.0.0.1", &["1.1.1.1, 203.0.113.9"], "127.0.0.0/8"),
            "203.0.113.9"
        );
        // Two trusted hops: the right-most untrusted address is the client.
        assert_eq!(
            client(
                "10.0.0.2",
                &["6.6.6.6, 203.0.113.9, 10.0.0.1"],
                "10.0.0.0/8"
            ),
            "203.0.113.9"
        );
        // Several header lines are one list, in order.
        assert_eq!(
            client(
                "10.0.0.2",
                &["6.6.6.6", "203.0.113.9, 10.0.0.1"],
                "10.0.0.0/8"
            ),
            "203.0.113.9"
        );
    }

    #[test]
    fn all_trusted_gives_the_leftmost_and_garbage_gives_the_peer() {
        assert_eq!(
            client("10.0.0.2", &["10.0.0.7, 10.0.0.1"], "10.0.0.0/8"),
            "10.0.0.7"
        );
        assert_eq!(client("10.0.0.2", &[], "10.0.0.0/8"), "10.0.0.2");
        for garbage in ["unknown", "999.1.1.1", "1.2.3.4.5", "", "203.0.113.9, "] {
            assert_eq!(
                client("10.0.0.2", &[garbage], "10.0.0.0/8"),
                "10.0.0.2",
                "{garbage:?}"
            );
        }
        // Garbage left of the client is never reached.
        assert_eq!(
            client("10.0.0.2", &["junk, 203.0.113.9"], "10.0.0.0/8"),
            "203.0.113.9"
        );
        let not_text = client_address(ip("10.0.0.2"), [None].into_iter(), &nets("10.0.0.0/8"));
        assert_eq!(not_text.to_string(), "10.0.0.2");
    }

    #[test]
    fn ports_and_mapped_addresses_are_understood() {
        // (peer, the forwarded address, the client seen)
        for (peer, forwarded, seen) in [
            ("127.0.0.1", "[2001:db8::1]:443", "2001:db8::1"),
            ("127.0.0.1", "203.0.113.9:5000", "203.0.113.9"),
            ("127.0.0.1", "::ffff:1.2.3.4", "1.2.3.4"),
            // A mapped loopback peer is the loopback, so the default list trusts it.
            ("::ffff:127.0.0.1", "1.2.3.4", "1.2.3.4"),
        ] {
            assert_eq!(
                client(peer, &[forwarded], "127.0.0.0/8"),
                seen,
                "{peer} {forwarded}"
            );
        }
    }

    #[test]
    fn ipv6_clients_are_keyed_per_64_and_mapped_ipv4_as_ipv4() {
        assert_eq!(rate_key(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(rate_key(ip("2001:db8:1:2:ffff::9")), ip("2001:db8:1:2::"));
        assert_ne!(rate_key(ip("2001:db8:1:3::1")), ip("2001:db8:1:2::"));
        assert_eq!(rate_key(ip("::ffff:1.2.3.4")), ip("1.2.3.4"));
        assert_eq!(rate_key(ip("1.2.3.4")), ip("1.2.3.4"));
    }
}
