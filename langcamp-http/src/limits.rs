//! Rate limits: one keyed limiter per rule of the specification's table.
//!
//! Clients are keyed by their address as [`langcamp_core::platform::net::client_address`] finds it
//! (the peer, or behind a proxy in `TRUSTED_PROXIES` the right-most untrusted
//! `X-Forwarded-For` entry), IPv6 per /64 network and IPv4-mapped addresses as IPv4, so
//! neither a forged header nor a rotation through one's own /64 buys a fresh budget. The
//! default rule keys on the client and the route, so each endpoint has its own budget.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use hyper::header::HeaderMap;
use langcamp_core::platform::net::{self, IpNet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateRule {
    /// 120 per minute, per client and endpoint.
    Default,
    Refresh,
    OtpRequest,
    OtpVerify,
    /// A second factor's code or a passkey (confirm, verify, passkey sign-in): as
    /// [`RateRule::OtpVerify`], per client and endpoint.
    SecondFactor,
    Contact,
    Upload,
}

impl RateRule {
    /// Every rule, for the metrics registered at 0.
    pub const ALL: [RateRule; 7] = [
        RateRule::Default,
        RateRule::Refresh,
        RateRule::OtpRequest,
        RateRule::OtpVerify,
        RateRule::SecondFactor,
        RateRule::Contact,
        RateRule::Upload,
    ];

    /// The rule's name in metrics (`langcamp_rate_limited_total{rule}`).
    pub fn label(self) -> &'static str {
        match self {
            RateRule::Default => "default",
            RateRule::Refresh => "refresh",
            RateRule::OtpRequest => "otp_request",
            RateRule::OtpVerify => "otp_verify",
            RateRule::SecondFactor => "second_factor",
            RateRule::Contact => "contact",
            RateRule::Upload => "upload",
        }
    }

    /// (requests, window) as in the specification.
    pub fn budget(self) -> (u32, Duration) {
        match self {
            RateRule::Default => (120, Duration::from_secs(60)),
            RateRule::Refresh => (30, Duration::from_secs(60)),
            RateRule::OtpRequest => (5, Duration::from_secs(5 * 60)),
            RateRule::OtpVerify | RateRule::SecondFactor => (12, Duration::from_secs(5 * 60)),
            RateRule::Contact => (6, Duration::from_secs(3600)),
            RateRule::Upload => (20, Duration::from_secs(10 * 60)),
        }
    }

    fn quota(self) -> Quota {
        let (requests, window) = self.budget();
        let burst = NonZeroU32::new(requests).unwrap_or(NonZeroU32::MIN);
        Quota::with_period(window / requests)
            .unwrap_or_else(|| Quota::per_second(burst))
            .allow_burst(burst)
    }
}

/// Key of a client on one route (`route` is 0 for the rules that are not per route).
type Key = (IpAddr, u16);

pub struct RateLimits {
    limiters: Vec<(RateRule, DefaultKeyedRateLimiter<Key>)>,
}

impl RateLimits {
    pub fn new() -> RateLimits {
        RateLimits {
            limiters: RateRule::ALL
                .iter()
                .map(|rule| (*rule, governor::RateLimiter::keyed(rule.quota())))
                .collect(),
        }
    }

    /// Counts one request; `Err(wait)` when the client is over its budget.
    pub fn check(&self, rule: RateRule, route: u16, client: IpAddr) -> Result<(), Duration> {
        let per_endpoint = matches!(rule, RateRule::Default | RateRule::SecondFactor);
        let route = if per_endpoint { route } else { 0 };
        let Some((_, limiter)) = self.limiters.iter().find(|(r, _)| *r == rule) else {
            return Ok(());
        };
        limiter
            .check_key(&(net::rate_key(client), route))
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Forgets clients whose budget is full again, so memory stays bounded.
    pub fn cleanup(&self) {
        for (_, limiter) in &self.limiters {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// How many client keys are remembered (for tests and metrics).
    pub fn tracked_keys(&self) -> usize {
        self.limiters.iter().map(|(_, l)| l.len()).sum()
    }
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits::new()
    }
}

/// The client a request comes from (rate limits, logs): see CONTRACT §1 "Client address".
pub fn client_ip(headers: &HeaderMap, peer: SocketAddr, trusted: &[IpNet]) -> IpAddr {
    let lines = headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| v.to_str().ok())
        .collect::<Vec<_>>();
    net::client_address(peer.ip(), lines.into_iter(), trusted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 9], 4000))
    }

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", xff.parse().expect("header value"));
        h
    }

    fn trusted(list: &str) -> Vec<IpNet> {
        net::parse_networks(list).expect("networks")
    }

    #[test]
    fn behind_a_trusted_proxy_the_rightmost_untrusted_entry_is_the_client() {
        let proxies = trusted("10.0.0.0/8");
        assert_eq!(
            client_ip(&headers("1.1.1.1, 203.0.113.7, 10.0.0.1"), peer(), &proxies).to_string(),
            "203.0.113.7"
        );
        assert_eq!(
            client_ip(&headers("[2001:db8::1]:443"), peer(), &proxies).to_string(),
            "2001:db8::1"
        );
        // Several header lines are read as one list.
        let mut h = HeaderMap::new();
        h.append("x-forwarded-for", "6.6.6.6".parse().expect("value"));
        h.append("x-forwarded-for", "203.0.113.8".parse().expect("value"));
        assert_eq!(client_ip(&h, peer(), &proxies).to_string(), "203.0.113.8");
    }

    #[test]
    fn garbage_or_untrusted_forwarded_values_fall_back_to_the_peer() {
        let proxies = trusted("10.0.0.0/8");
        for garbage in ["", "unknown", "999.1.1.1", "1.2.3.4,", "1.2.3.4.5"] {
            assert_eq!(
                client_ip(&headers(garbage), peer(), &proxies),
                peer().ip(),
                "{garbage:?}"
            );
        }
        assert_eq!(client_ip(&headers("203.0.113.7"), peer(), &[]), peer().ip());
        assert_eq!(client_ip(&HeaderMap::new(), peer(), &proxies), peer().ip());
    }

    /// Asserts that `ip` may call route `route` of `rule` `times` times in a row.
    fn assert_allowed(limits: &RateLimits, rule: RateRule, route: u16, ip: IpAddr, times: u32) {
        for _ in 0..times {
            assert!(limits.check(rule, route, ip).is_ok());
        }
    }

    /// Spends the whole budget of `ip` on route `route` of `rule`, `budget` calls, and
    /// returns the wait the next call is told.
    fn spend_budget(
        limits: &RateLimits,
        rule: RateRule,
        route: u16,
        ip: IpAddr,
        budget: u32,
    ) -> Duration {
        assert_allowed(limits, rule, route, ip, budget);
        limits
            .check(rule, route, ip)
            .expect_err("a call over the budget is refused")
    }

    #[test]
    fn one_ipv6_64_shares_a_budget_and_mapped_ipv4_is_its_ipv4() {
        let limits = RateLimits::new();
        for n in 0..5u16 {
            let ip = IpAddr::from([0x2001, 0xdb8, 0, 7, n, n, n, n]);
            assert!(limits.check(RateRule::OtpRequest, 3, ip).is_ok());
        }
        let same_64 = IpAddr::from([0x2001, 0xdb8, 0, 7, 9, 9, 9, 9]);
        assert!(limits.check(RateRule::OtpRequest, 3, same_64).is_err());
        let next_64 = IpAddr::from([0x2001, 0xdb8, 0, 8, 0, 0, 0, 1]);
        assert!(limits.check(RateRule::OtpRequest, 3, next_64).is_ok());

        let v4: IpAddr = [198, 51, 100, 4].into();
        assert_allowed(&limits, RateRule::OtpRequest, 3, v4, 5);
        let mapped: IpAddr = "::ffff:198.51.100.4".parse().expect("address");
        assert!(limits.check(RateRule::OtpRequest, 3, mapped).is_err());
    }

    #[test]
    fn a_rule_allows_exactly_its_budget_then_refuses_with_a_wait() {
        let limits = RateLimits::new();
        let ip: IpAddr = [203, 0, 113, 1].into();
        let wait = spend_budget(&limits, RateRule::OtpRequest, 3, ip, 5);
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(60));
        // Another client, and the same client on another rule, are unaffected.
        assert!(
            limits
                .check(RateRule::OtpRequest, 3, [203, 0, 113, 2].into())
                .is_ok()
        );
        assert!(limits.check(RateRule::OtpVerify, 4, ip).is_ok());
    }

    #[test]
    fn the_default_rule_counts_each_route_separately() {
        let limits = RateLimits::new();
        let ip: IpAddr = [203, 0, 113, 1].into();
        spend_budget(&limits, RateRule::Default, 1, ip, 120);
        assert!(limits.check(RateRule::Default, 2, ip).is_ok());
    }

    #[test]
    fn memory_for_many_distinct_clients_is_reclaimed_by_cleanup() {
        let limits = RateLimits::new();
        for n in 0..200_000u32 {
            let ip = IpAddr::from(std::net::Ipv4Addr::from(0x0b00_0000 | n));
            assert!(limits.check(RateRule::Default, 1, ip).is_ok());
        }
        assert_eq!(limits.tracked_keys(), 200_000);
        // One request uses half a second of a 120-per-minute budget; once that is
        // replenished (plus governor's one-period margin) the key holds no information and
        // cleanup forgets it.
        std::thread::sleep(Duration::from_millis(1100));
        limits.cleanup();
        assert_eq!(limits.tracked_keys(), 0);
    }
}
