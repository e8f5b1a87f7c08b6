//! Rate limits: one keyed limiter per rule of the specification's table.
//!
//! Clients are keyed by the first `X-Forwarded-For` value (when trusted and parseable),
//! else by the peer address, so a garbage header can never switch limiting off. The
//! default rule keys on the client and the route, so each endpoint has its own budget.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use hyper::header::HeaderMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateRule {
    /// 120 per minute, per client and endpoint.
    Default,
    Refresh,
    OtpRequest,
    OtpVerify,
    Contact,
    Upload,
}

impl RateRule {
    const ALL: [RateRule; 6] = [
        RateRule::Default,
        RateRule::Refresh,
        RateRule::OtpRequest,
        RateRule::OtpVerify,
        RateRule::Contact,
        RateRule::Upload,
    ];

    /// (requests, window) as in the specification.
    pub fn budget(self) -> (u32, Duration) {
        match self {
            RateRule::Default => (120, Duration::from_secs(60)),
            RateRule::Refresh => (30, Duration::from_secs(60)),
            RateRule::OtpRequest => (5, Duration::from_secs(5 * 60)),
            RateRule::OtpVerify => (12, Duration::from_secs(5 * 60)),
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
        let route = if rule == RateRule::Default { route } else { 0 };
        let Some((_, limiter)) = self.limiters.iter().find(|(r, _)| *r == rule) else {
            return Ok(());
        };
        limiter
            .check_key(&(client, route))
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

/// The client a request is counted against.
pub fn client_ip(headers: &HeaderMap, peer: SocketAddr, trust_forwarded_for: bool) -> IpAddr {
    let forwarded = headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .and_then(first_forwarded);
    match forwarded {
        Some(ip) if trust_forwarded_for => ip,
        _ => peer.ip(),
    }
}

/// The first address of an `X-Forwarded-For` value, if it is one.
pub fn first_forwarded(value: &str) -> Option<IpAddr> {
    let first = value.split(',').next()?.trim();
    first
        .parse::<IpAddr>()
        .ok()
        .or_else(|| first.parse::<SocketAddr>().ok().map(|s| s.ip()))
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

    #[test]
    fn the_first_forwarded_value_identifies_the_client() {
        assert_eq!(
            client_ip(&headers("203.0.113.7, 10.0.0.1"), peer(), true).to_string(),
            "203.0.113.7"
        );
        assert_eq!(
            client_ip(&headers(" 2001:db8::1 "), peer(), true).to_string(),
            "2001:db8::1"
        );
        assert_eq!(
            client_ip(&headers("[2001:db8::1]:443"), peer(), true).to_string(),
            "2001:db8::1"
        );
    }

    #[test]
    fn garbage_or_untrusted_forwarded_values_fall_back_to_the_peer() {
        for garbage in ["", "unknown", "999.1.1.1", ",1.2.3.4", "1.2.3.4.5"] {
            assert_eq!(
                client_ip(&headers(garbage), peer(), true),
                peer().ip(),
                "{garbage:?}"
            );
        }
        assert_eq!(
            client_ip(&headers("203.0.113.7"), peer(), false),
            peer().ip()
        );
        assert_eq!(client_ip(&HeaderMap::new(), peer(), true), peer().ip());
    }

    #[test]
    fn a_rule_allows_exactly_its_budget_then_refuses_with_a_wait() {
        let limits = RateLimits::new();
        let ip: IpAddr = [203, 0, 113, 1].into();
        for _ in 0..5 {
            assert!(limits.check(RateRule::OtpRequest, 3, ip).is_ok());
        }
        let wait = limits
            .check(RateRule::OtpRequest, 3, ip)
            .expect_err("sixth is refused");
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
        for _ in 0..120 {
            assert!(limits.check(RateRule::Default, 1, ip).is_ok());
        }
        assert!(limits.check(RateRule::Default, 1, ip).is_err());
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
