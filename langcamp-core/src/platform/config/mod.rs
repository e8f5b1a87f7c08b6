//! Configuration: one typed struct, read once from the environment (and `.env`).
//!
//! Every front end builds a [`Config`] and passes it explicitly; nothing else reads
//! environment variables. A bad value stops start-up with a message naming the variable.

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::platform::keyring::MIN_SECRET_LEN;
use crate::platform::net::{IpNet, parse_networks};

/// `SHUTDOWN_DRAIN` when unset: longer than a load balancer's active checks take to see
/// `/ready` fail (HAProxy's `inter 1s fall 2`: 2 to 3 s) and than nginx keeps an idle
/// upstream connection in the documented configuration (4 s).
pub const DEFAULT_SHUTDOWN_DRAIN: Duration = Duration::from_secs(5);

/// `TRUSTED_PROXIES` when unset: a proxy on the same host.
pub const DEFAULT_TRUSTED_PROXIES: &str = "127.0.0.0/8,::1/128";

/// A secret string whose `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(\"[redacted]\")")
    }
}

/// How the SMTP connection is secured (`MAIL_SECURE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailSecurity {
    StartTls,
    Tls,
    None,
}

/// Outgoing mail settings. `host: None` writes `.eml` files under the data directory.
#[derive(Clone, Debug)]
pub struct MailConfig {
    pub host: Option<String>,
    pub port: u16,
    pub user: Option<String>,
    pub pass: Option<Secret>,
    pub security: MailSecurity,
    pub from_name: String,
    pub from_address: String,
    /// Longest time one delivery attempt may take, connecting included (`MAIL_TIMEOUT`).
    /// A server that accepts but never answers costs one attempt this long, then a retry.
    pub timeout: Duration,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub host: IpAddr,
    pub port: u16,
    /// `sqlite://...` or `postgres://...`; may carry a password, hence a secret.
    pub database_url: Secret,
    /// `DATABASE_MAX_CONNECTIONS`: the most connections of the PostgreSQL pool, or of the
    /// SQLite reader pool (SQLite writes always use one). Unset: the built-in defaults.
    pub database_max_connections: Option<u32>,
    /// `JWT_SECRET`: signs access tokens and keys every derived secret (the keyring,
    /// `platform::keyring`). Unset: the secret kept in `DATA_DIR/secret.key`, made at the
    /// first start.
    pub jwt_secret: Option<Secret>,
    /// `JWT_SECRET_PREVIOUS`: earlier secrets, comma-separated, still read (tokens they
    /// signed, values they sealed or hashed) but never written with (CONTRACT §22).
    pub jwt_secret_previous: Vec<Secret>,
    pub jwt_expiration: Duration,
    pub jwt_refresh_expiration: Duration,
    pub otp_ttl: Duration,
    /// `METRICS_TOKEN`: the bearer token `GET /metrics` requires; unset, there is no
    /// `/metrics` at all (contract §15).
    pub metrics_token: Option<Secret>,
    pub mail: MailConfig,
    pub frontend_base_url: String,
    pub public_base_url: String,
    pub data_dir: PathBuf,
    pub upload_max_bytes: u64,
    /// Bounds the bytes of all stored files together (`FILE_STORE_MAX_BYTES`); `None`: no quota.
    pub file_store_max_bytes: Option<u64>,
    /// Peers whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`, see [`crate::platform::net`]).
    pub trusted_proxies: Vec<IpNet>,
    /// Where uploaded files' bytes live (`FILE_STORE` and `S3_*`).
    pub file_store: FileStoreConfig,
    /// `SHUTDOWN_DRAIN`: after SIGTERM, how long `langcamp serve` keeps accepting
    /// connections (with `/ready` answering 503) before it closes its listener;
    /// zero turns the drain off.
    pub shutdown_drain: Duration,
    /// `AUDIT_RETENTION_DAYS`: audit entries older than this many days are purged by the
    /// server's maintenance (contract §17); 1 to 36500, default 400.
    pub audit_retention_days: u32,
    /// `STAFF_SECOND_FACTOR`: whether admins and superadmins need a second factor before
    /// anything but their own account (CONTRACT §20); default `required`.
    pub staff_second_factor: SecondFactorPolicy,
    /// `STEP_UP_MAX_AGE`: how recent a second-factor check must be for the operations that
    /// can empty the school's data (step-up, CONTRACT §20); default `10m`.
    pub step_up_max_age: Duration,
    /// `WEBHOOK_ALLOWED_NETWORKS`: networks a webhook may call though they are private,
    /// loopback or link-local, and the only ones it may call over `http://` (CONTRACT
    /// §24); empty by default.
    pub webhook_allowed_networks: Vec<IpNet>,
    /// `PUBLIC_ORIGIN`: the origin the web client runs on (`https://school.example`), the
    /// passkeys' relying party (CONTRACT §21); unset, the passkey routes answer 400.
    pub public_origin: Option<String>,
}

/// Whether staff must use a second factor (`STAFF_SECOND_FACTOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecondFactorPolicy {
    /// Admins and superadmins at assurance level 1 reach only their own account and the
    /// factor routes until they add and use a factor.
    Required,
    /// Staff without a factor work at level 1; one who adds a factor is held to it.
    Optional,
}

mod file_store;
pub use file_store::{FileStoreConfig, S3Config};

/// A configuration value that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {variable}: {message}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub message: String,
}

impl ConfigError {
    fn new(variable: &'static str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            variable,
            message: message.into(),
        }
    }
}

/// A variable's value from `lookup`, trimmed; blank counts as unset.
fn value_of(lookup: impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

impl Config {
    /// Reads `.env` (if present) and then the process environment.
    pub fn from_env() -> Result<Config, ConfigError> {
        // A missing .env is normal; a malformed one is reported like any bad value.
        match dotenvy::dotenv() {
            Ok(_) => {}
            Err(e) if e.not_found() => {}
            Err(e) => {
                return Err(ConfigError {
                    variable: ".env",
                    message: e.to_string(),
                });
            }
        }
        Config::from_lookup(|name| std::env::var(name).ok())
    }

    /// Builds the configuration from any variable lookup (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let get = |name: &str| value_of(&lookup, name);

        let port = parse_or("PORT", get("PORT"), 3000u16, |v| v.parse().ok())?;
        let host = parse_or("HOST", get("HOST"), IpAddr::from([0, 0, 0, 0]), |v| {
            v.parse().ok()
        })?;
        let data_dir = PathBuf::from(get("DATA_DIR").unwrap_or_else(|| "./data".to_owned()));
        let database_url = match get("DATABASE_URL") {
            Some(url) => {
                if !(url.starts_with("sqlite:") || is_postgres_url(&url)) {
                    return Err(ConfigError::new(
                        "DATABASE_URL",
                        "expected a sqlite: or postgres:// URL",
                    ));
                }
                url
            }
            None => default_sqlite_url(&data_dir),
        };
        let database_max_connections = get("DATABASE_MAX_CONNECTIONS")
            .map(|v| {
                v.parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_POOL_CONNECTIONS).contains(n))
                    .ok_or_else(|| {
                        let expected = format!("a whole number from 1 to {MAX_POOL_CONNECTIONS}");
                        ConfigError::new(
                            "DATABASE_MAX_CONNECTIONS",
                            format!("cannot use {v:?}: expected {expected}"),
                        )
                    })
            })
            .transpose()?;
        let secret = |name: &'static str, value: &str| {
            if value.len() < MIN_SECRET_LEN {
                return Err(ConfigError::new(
                    name,
                    format!("each secret must be at least {MIN_SECRET_LEN} characters"),
                ));
            }
            Ok(Secret::new(value))
        };
        let jwt_secret = get("JWT_SECRET")
            .map(|v| secret("JWT_SECRET", &v))
            .transpose()?;
        let jwt_secret_previous = get("JWT_SECRET_PREVIOUS")
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| secret("JWT_SECRET_PREVIOUS", s))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        let duration = |name: &'static str, default: Duration| {
            parse_or(name, get(name), default, parse_duration)
        };
        let jwt_expiration = duration("JWT_EXPIRATION", Duration::from_secs(15 * 60))?;
        let jwt_refresh_expiration =
            duration("JWT_REFRESH_EXPIRATION", Duration::from_secs(7 * 24 * 3600))?;
        let otp_ttl = duration("OTP_TTL", Duration::from_secs(10 * 60))?;
        // The one duration that may be zero: `0` turns the drain off.
        let shutdown_drain = parse_or(
            "SHUTDOWN_DRAIN",
            get("SHUTDOWN_DRAIN"),
            DEFAULT_SHUTDOWN_DRAIN,
            parse_duration_or_zero,
        )?;

        let audit_retention_days = parse_or(
            "AUDIT_RETENTION_DAYS",
            get("AUDIT_RETENTION_DAYS"),
            400u32,
            |v| v.parse().ok().filter(|d| (1..=36_500).contains(d)),
        )?;

        let staff_second_factor = parse_or(
            "STAFF_SECOND_FACTOR",
            get("STAFF_SECOND_FACTOR"),
            SecondFactorPolicy::Required,
            |v| match v.to_ascii_lowercase().as_str() {
                "required" => Some(SecondFactorPolicy::Required),
                "optional" => Some(SecondFactorPolicy::Optional),
                _ => None,
            },
        )?;
        let step_up_max_age = duration("STEP_UP_MAX_AGE", Duration::from_secs(10 * 60))?;
        let public_origin = get("PUBLIC_ORIGIN")
            .map(|v| {
                web_origin(&v).ok_or_else(|| {
                    ConfigError::new(
                        "PUBLIC_ORIGIN",
                        format!("cannot use {v:?}: expected an origin such as https://school.example (a scheme, a host and perhaps a port; no path)"),
                    )
                })
            })
            .transpose()?;

        let security = parse_or(
            "MAIL_SECURE",
            get("MAIL_SECURE"),
            MailSecurity::StartTls,
            |v| match v.to_ascii_lowercase().as_str() {
                "starttls" => Some(MailSecurity::StartTls),
                "tls" | "true" => Some(MailSecurity::Tls),
                "none" | "false" => Some(MailSecurity::None),
                _ => None,
            },
        )?;
        let from_address =
            get("MAIL_FROM_ADDRESS").unwrap_or_else(|| "no-reply@langcamp.local".into());
        if !from_address.contains('@') {
            return Err(ConfigError::new(
                "MAIL_FROM_ADDRESS",
                "expected an e-mail address",
            ));
        }
        let mail = MailConfig {
            host: get("MAIL_HOST"),
            port: parse_or("MAIL_PORT", get("MAIL_PORT"), 587u16, |v| v.parse().ok())?,
            user: get("MAIL_USER"),
            pass: get("MAIL_PASS").map(Secret::new),
            security,
            from_name: get("MAIL_FROM_NAME").unwrap_or_else(|| "Langcamp".into()),
            from_address,
            timeout: duration("MAIL_TIMEOUT", Duration::from_secs(30))?,
        };

        let frontend_base_url = get("FRONTEND_BASE_URL")
            .map(|v| v.trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let public_base_url = get("PUBLIC_BASE_URL")
            .map(|v| v.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("http://localhost:{port}"));
        let upload_max_bytes = parse_or(
            "UPLOAD_MAX_BYTES",
            get("UPLOAD_MAX_BYTES"),
            20 * 1024 * 1024,
            |v| v.parse().ok().filter(|n| *n > 0),
        )?;
        let file_store_max_bytes = get("FILE_STORE_MAX_BYTES")
            .map(|v| {
                v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    ConfigError::new(
                        "FILE_STORE_MAX_BYTES",
                        format!("cannot use {v:?}: expected a number of bytes above 0"),
                    )
                })
            })
            .transpose()?;
        // The old switch trusted every peer's header; refuse it rather than ignore it, so
        // nobody believes they still have the behaviour they configured.
        if lookup("TRUST_FORWARDED_FOR").is_some() {
            return Err(ConfigError::new(
                "TRUST_FORWARDED_FOR",
                format!(
                    "was removed; list the proxies whose X-Forwarded-For is believed in \
                     TRUSTED_PROXIES instead (comma-separated CIDRs, default \
                     {DEFAULT_TRUSTED_PROXIES}; empty trusts no proxy)"
                ),
            ));
        }
        // Set but empty means "trust nobody", so this one is not read through `get`.
        let trusted_proxies = match lookup("TRUSTED_PROXIES") {
            None => parse_networks(DEFAULT_TRUSTED_PROXIES).unwrap_or_default(),
            Some(v) => parse_networks(&v).map_err(|item| {
                ConfigError::new(
                    "TRUSTED_PROXIES",
                    format!("{item:?} is not an IP address or CIDR network"),
                )
            })?,
        };

        let file_store = FileStoreConfig::parse(lookup("FILE_STORE").as_deref(), &lookup)?;
        let webhook_allowed_networks = get("WEBHOOK_ALLOWED_NETWORKS")
            .map(|v| {
                parse_networks(&v).map_err(|item| {
                    ConfigError::new(
                        "WEBHOOK_ALLOWED_NETWORKS",
                        format!("{item:?} is not an IP address or CIDR network"),
                    )
                })
            })
            .transpose()?
            .unwrap_or_default();

        Ok(Config {
            host,
            port,
            database_url: Secret::new(database_url),
            database_max_connections,
            jwt_secret,
            jwt_secret_previous,
            jwt_expiration,
            jwt_refresh_expiration,
            otp_ttl,
            metrics_token: get("METRICS_TOKEN").map(Secret::new),
            mail,
            frontend_base_url,
            public_base_url,
            data_dir,
            upload_max_bytes,
            file_store_max_bytes,
            trusted_proxies,
            file_store,
            shutdown_drain,
            audit_retention_days,
            staff_second_factor,
            step_up_max_age,
            webhook_allowed_networks,
            public_origin,
        })
    }

    /// A configuration for tests and tools: SQLite under `data_dir`, mail to files.
    pub fn for_data_dir(data_dir: impl Into<PathBuf>) -> Config {
        let data_dir = data_dir.into();
        let dir = data_dir.to_string_lossy().into_owned();
        Config::from_lookup(|name| match name {
            "DATA_DIR" => Some(dir.clone()),
            "JWT_SECRET" => Some("langcamp-test-secret-0123456789".into()),
            _ => None,
        })
        .unwrap_or_else(|e| unreachable!("the built-in defaults are valid: {e}"))
    }

    /// The size of a connection pool: `DATABASE_MAX_CONNECTIONS`, else `default`.
    pub fn pool_size(&self, default: u32) -> u32 {
        self.database_max_connections.unwrap_or(default)
    }

    pub fn is_postgres(&self) -> bool {
        is_postgres_url(self.database_url.expose())
    }
}

/// The largest `DATABASE_MAX_CONNECTIONS`: PostgreSQL's own default limit is 100 for all
/// clients together, so more than this per instance is a typo.
const MAX_POOL_CONNECTIONS: u32 = 1000;

fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

fn default_sqlite_url(data_dir: &std::path::Path) -> String {
    format!(
        "sqlite://{}?mode=rwc",
        data_dir.join("langcamp.db").display()
    )
}

fn parse_or<T>(
    variable: &'static str,
    value: Option<String>,
    default: T,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, ConfigError> {
    match value {
        None => Ok(default),
        Some(v) => parse(&v).ok_or_else(|| ConfigError {
            variable,
            message: format!("cannot use {v:?}"),
        }),
    }
}

/// A web origin, `http(s)://host[:port]` (a trailing `/` dropped), or `None`.
fn web_origin(value: &str) -> Option<String> {
    let value = value.trim().trim_end_matches('/');
    let rest = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))?;
    let host = rest.split(':').next().unwrap_or("");
    let well_formed = !host.is_empty()
        && !rest.contains(['/', '?', '#', '@', ' '])
        && rest
            .split_once(':')
            .is_none_or(|(_, port)| port.parse::<u16>().is_ok_and(|p| p > 0));
    well_formed.then(|| value.to_owned())
}

/// Parses `ms`-style durations: `900` (seconds), `500ms`, `30s`, `15m`, `12h`, `7d`.
///
/// A bare number means seconds, as `jsonwebtoken`'s `expiresIn` does for numbers.
pub fn parse_duration(value: &str) -> Option<Duration> {
    let value = value.trim();
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: u64 = number.parse().ok()?;
    let millis = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => number.checked_mul(1000)?,
        "ms" => number,
        "m" | "min" | "mins" | "minute" | "minutes" => number.checked_mul(60_000)?,
        "h" | "hr" | "hrs" | "hour" | "hours" => number.checked_mul(3_600_000)?,
        "d" | "day" | "days" => number.checked_mul(86_400_000)?,
        "w" | "week" | "weeks" => number.checked_mul(604_800_000)?,
        _ => return None,
    };
    (millis > 0).then(|| Duration::from_millis(millis))
}

/// [`parse_duration`], and also a zero written in its syntax (`0`, `0s`, `0ms`).
pub fn parse_duration_or_zero(value: &str) -> Option<Duration> {
    let value = value.trim();
    let digits = value.len() - value.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = value.split_at(digits);
    if !number.is_empty() && number.bytes().all(|b| b == b'0') {
        // Zero of a unit the syntax knows; `0 parsecs` is as wrong as `5 parsecs`.
        return parse_duration(&format!("1{unit}")).map(|_| Duration::ZERO);
    }
    parse_duration(value)
}

#[cfg(test)]
mod tests;
