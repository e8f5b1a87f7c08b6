//! Calls the server makes to addresses others chose (webhook deliveries, CONTRACT §24),
//! through one HTTP client that checks where it goes itself.
//!
//! Whoever configures a URL could point it at the server's own network: the cloud's
//! metadata service (169.254.169.254), the database, an admin port on localhost. So:
//!
//! * a URL is `https://`, or `http://` only into `WEBHOOK_ALLOWED_NETWORKS`;
//! * every address a name resolves to is checked *at each connection* (the client's
//!   resolver drops those it may not call), so a name that later resolves inside (DNS
//!   rebinding) is not called; an address written in the URL is checked before the call;
//! * loopback, private (RFC 1918 and the shared 100.64.0.0/10), link-local, unique-local,
//!   unspecified, multicast and broadcast addresses are refused unless they lie inside
//!   `WEBHOOK_ALLOWED_NETWORKS`;
//! * redirects are not followed, no proxy from the environment is used, and a call ends
//!   after [`CALL_TIMEOUT`].

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::platform::net::{IpNet, normalize};

/// The longest a call may take, answer included (CONTRACT §24: a 2xx within 10 seconds).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a name may take to resolve when a URL is checked before it is stored.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether `ip` is an address that only `WEBHOOK_ALLOWED_NETWORKS` may open: loopback,
/// private, shared (CGNAT), link-local, unique-local, unspecified, multicast, broadcast.
pub fn is_internal(ip: IpAddr) -> bool {
    match normalize(ip) {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.octets()[0] == 0
                // 100.64.0.0/10, the carrier-grade NAT's shared space (RFC 6598).
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
        }
    }
}

/// Where outgoing calls may go.
#[derive(Clone, Debug, Default)]
pub struct Destinations {
    /// `WEBHOOK_ALLOWED_NETWORKS`.
    pub allowed: Vec<IpNet>,
}

impl Destinations {
    /// Whether a call over `https` (else `http://`) may open `ip`.
    pub fn may_call(&self, ip: IpAddr, https: bool) -> bool {
        let allowed = self.allowed.iter().any(|net| net.contains(ip));
        allowed || (https && !is_internal(ip))
    }

    /// Why `url` may not be called, if it may not: its scheme, its form, or an address
    /// its host is or resolves to now. A name that does not resolve (yet) passes: every
    /// call checks again.
    pub async fn refusal(&self, url: &reqwest::Url) -> Option<String> {
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            _ => return Some("url must be an https:// address".into()),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Some("url must not carry a user name or password".into());
        }
        let Some(host) = url.host() else {
            return Some("url must name a host".into());
        };
        let addresses: Vec<IpAddr> = match host {
            url::Host::Ipv4(v4) => vec![IpAddr::V4(v4)],
            url::Host::Ipv6(v6) => vec![IpAddr::V6(v6)],
            url::Host::Domain(name) => {
                let port = url.port_or_known_default().unwrap_or(443);
                let looked_up =
                    tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((name, port)))
                        .await;
                match looked_up {
                    Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
                    // Not resolvable now: checked again at every call.
                    _ => Vec::new(),
                }
            }
        };
        if let Some(ip) = addresses.iter().find(|ip| !self.may_call(**ip, https)) {
            return Some(if https {
                format!(
                    "url resolves to {ip}, an address of a private, loopback or link-local \
                     network: only WEBHOOK_ALLOWED_NETWORKS may be called there"
                )
            } else {
                HTTP_ONLY_INSIDE.to_owned()
            });
        }
        // http:// goes only where the allowed networks say, so its host must resolve now.
        (!https && addresses.is_empty()).then(|| HTTP_ONLY_INSIDE.to_owned())
    }
}

const HTTP_ONLY_INSIDE: &str =
    "url must be an https:// address (http:// only into WEBHOOK_ALLOWED_NETWORKS)";

/// Looks a name up: the system's resolver, or a table in tests.
pub type Lookup = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>
        + Send
        + Sync,
>;

/// The system's resolver (getaddrinfo, as every other connection of the process).
pub fn system_lookup() -> Lookup {
    Arc::new(|name: String| {
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            Ok(found.map(|a| a.ip()).collect())
        })
    })
}

/// The client's resolver: the addresses of a name that the call may open, or an error
/// naming why there is none.
struct Checked {
    lookup: Lookup,
    destinations: Destinations,
    https: bool,
}

impl Resolve for Checked {
    fn resolve(&self, name: Name) -> Resolving {
        let (lookup, destinations, https) =
            (self.lookup.clone(), self.destinations.clone(), self.https);
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let found = lookup(name.clone()).await?;
            let callable: Vec<SocketAddr> = found
                .into_iter()
                .filter(|ip| destinations.may_call(*ip, https))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if callable.is_empty() {
                return Err(format!(
                    "{name} resolves to no address that may be called (private, loopback or link-local ones are refused outside WEBHOOK_ALLOWED_NETWORKS)"
                )
                .into());
            }
            let addrs: Addrs = Box::new(callable.into_iter());
            Ok(addrs)
        })
    }
}

/// The HTTP client of outgoing calls: one for `https://`, one for `http://` (whose
/// resolvers allow different addresses).
#[derive(Clone, Debug)]
pub struct Outgoing {
    https: reqwest::Client,
    http: reqwest::Client,
    destinations: Destinations,
}

/// The answer to a call: its status, or why there was none.
pub type Answered = std::result::Result<u16, String>;

impl Outgoing {
    pub fn new(destinations: Destinations, lookup: Lookup) -> std::io::Result<Outgoing> {
        // reqwest's TLS is built without a crypto provider of its own (Cargo.toml): use
        // ring's, as the rest of the process does. Already installed is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = |https: bool| {
            reqwest::Client::builder()
                .dns_resolver(Arc::new(Checked {
                    lookup: lookup.clone(),
                    destinations: destinations.clone(),
                    https,
                }))
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(CALL_TIMEOUT)
                .user_agent(concat!("Langcamp-Webhooks/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(std::io::Error::other)
        };
        Ok(Outgoing {
            https: client(true)?,
            http: client(false)?,
            destinations,
        })
    }

    pub fn destinations(&self) -> &Destinations {
        &self.destinations
    }

    /// POSTs `body` (JSON) with `headers` to `url`: the answer's status, or why none came.
    /// The answer's body is not read past its status.
    pub async fn post_json(&self, url: &str, headers: &[(&str, String)], body: String) -> Answered {
        let url = reqwest::Url::parse(url).map_err(|e| format!("url: {e}"))?;
        let https = url.scheme() == "https";
        if !https && url.scheme() != "http" {
            return Err("url must be an https:// address".into());
        }
        // An address in the URL is no name: the resolver never sees it.
        let literal = match url.host() {
            Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
            Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
            _ => None,
        };
        if let Some(ip) = literal
            && !self.destinations.may_call(ip, https)
        {
            return Err(format!(
                "{ip} may not be called (private, loopback or link-local addresses are refused outside WEBHOOK_ALLOWED_NETWORKS)"
            ));
        }
        let client = if https { &self.https } else { &self.http };
        let mut request = client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        match request.send().await {
            Ok(answer) => Ok(answer.status().as_u16()),
            Err(e) if e.is_timeout() => {
                Err(format!("no answer within {} s", CALL_TIMEOUT.as_secs()))
            }
            Err(e) => Err(describe(&e)),
        }
    }
}

/// An error and its causes on one line (reqwest's own text says little: "error sending
/// request").
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &'static [(&'static str, &'static str)]) -> Lookup {
        Arc::new(move |name: String| {
            Box::pin(async move {
                Ok(entries
                    .iter()
                    .filter(|(n, _)| *n == name)
                    .filter_map(|(_, ip)| ip.parse().ok())
                    .collect())
            })
        })
    }

    #[test]
    fn internal_addresses_are_the_ones_the_contract_names() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(
                is_internal(internal.parse().expect("an address")),
                "{internal}"
            );
        }
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "100.128.0.1"] {
            assert!(
                !is_internal(public.parse().expect("an address")),
                "{public}"
            );
        }
    }

    #[test]
    fn http_only_into_the_allowed_networks() {
        let open = Destinations {
            allowed: vec![IpNet::parse("127.0.0.0/8").expect("a network")],
        };
        let loopback: IpAddr = "127.0.0.1".parse().expect("an address");
        let public: IpAddr = "93.184.216.34".parse().expect("an address");
        assert!(open.may_call(loopback, false) && open.may_call(loopback, true));
        assert!(open.may_call(public, true) && !open.may_call(public, false));
        assert!(!Destinations::default().may_call(loopback, true));
    }

    /// A name that resolves inside (a rebinding, a name for the metadata service) is not
    /// called: the client's own resolver refuses it at the connection, whatever the URL
    /// passed when it was stored.
    #[tokio::test]
    async fn a_name_resolving_inside_is_refused_at_the_call() {
        let lookup = table(&[
            ("metadata.school.test", "169.254.169.254"),
            ("rebound.school.test", "127.0.0.1"),
        ]);
        let outgoing = Outgoing::new(Destinations::default(), lookup).expect("a client");
        for url in [
            "https://metadata.school.test/latest/meta-data/",
            "https://rebound.school.test:8443/hook",
            "https://169.254.169.254/latest/meta-data/",
            "https://[::1]/hook",
        ] {
            let refused = outgoing
                .post_json(url, &[], "{}".into())
                .await
                .expect_err(url);
            assert!(
                refused.contains("may be called") || refused.contains("may not be called"),
                "{url}: {refused}"
            );
        }
    }

    #[tokio::test]
    async fn a_url_is_checked_before_it_is_stored() {
        let destinations = Destinations::default();
        let refusal = |url: &str| {
            let url = reqwest::Url::parse(url).expect("a URL");
            let destinations = destinations.clone();
            async move { destinations.refusal(&url).await }
        };
        assert!(refusal("https://127.0.0.1/hook").await.is_some());
        assert!(refusal("https://[fd00::1]/hook").await.is_some());
        assert!(
            refusal("https://localhost/hook").await.is_some(),
            "resolves to loopback"
        );
        assert!(
            refusal("http://93.184.216.34/hook").await.is_some(),
            "http only inside"
        );
        assert!(refusal("ftp://93.184.216.34/hook").await.is_some());
        assert!(
            refusal("https://user:pw@93.184.216.34/hook")
                .await
                .is_some()
        );
        assert_eq!(refusal("https://93.184.216.34/hook").await, None);
        let inside = Destinations {
            allowed: vec![IpNet::parse("127.0.0.0/8").expect("a network")],
        };
        let url = reqwest::Url::parse("http://127.0.0.1:9000/hook").expect("a URL");
        assert_eq!(inside.refusal(&url).await, None);
    }
}
