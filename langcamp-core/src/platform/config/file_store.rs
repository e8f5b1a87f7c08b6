//! Where uploaded files' bytes live: `FILE_STORE` (the local disk or an S3-compatible
//! object store) and the `S3_*` variables.

use super::{ConfigError, Secret, value_of};

/// `FILE_STORE`: the local disk (`local`, the default) or an S3-compatible object store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileStoreConfig {
    /// Files under `DATA_DIR/files`.
    Local,
    /// `s3://bucket/prefix`.
    S3(S3Config),
}

/// An S3-compatible object store: `FILE_STORE=s3://bucket/prefix` and `S3_*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Config {
    pub bucket: String,
    /// Key prefix without leading or trailing `/`; empty: the bucket's root.
    pub prefix: String,
    /// `S3_ENDPOINT`: a self-hosted store's URL, addressed path-style; unset: AWS itself,
    /// addressed virtual-hosted-style.
    pub endpoint: Option<String>,
    /// `S3_REGION` (default `us-east-1`).
    pub region: String,
    /// `S3_ACCESS_KEY_ID` and `S3_SECRET_ACCESS_KEY`, both or neither; neither: the
    /// instance's own credentials (instance metadata, web identity).
    pub credentials: Option<(String, Secret)>,
}

impl S3Config {
    /// The store named as in `FILE_STORE` (never carries a credential; safe to log).
    pub fn url(&self) -> String {
        if self.prefix.is_empty() {
            format!("s3://{}", self.bucket)
        } else {
            format!("s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

impl FileStoreConfig {
    /// Where the files go, for the start-up log (never a credential).
    pub fn describe(&self) -> String {
        match self {
            FileStoreConfig::Local => "local disk (DATA_DIR/files)".to_owned(),
            FileStoreConfig::S3(s3) => match &s3.endpoint {
                Some(endpoint) => format!("{} at {endpoint}", s3.url()),
                None => format!("{} in {}", s3.url(), s3.region),
            },
        }
    }

    /// Parses a `FILE_STORE` value (also `langcamp storage migrate --to`), with the
    /// `S3_*` variables from `lookup`.
    pub fn parse(
        value: Option<&str>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<FileStoreConfig, ConfigError> {
        let value = value.map(str::trim).filter(|v| !v.is_empty());
        let Some(value) = value else {
            return Ok(FileStoreConfig::Local);
        };
        if value.eq_ignore_ascii_case("local") {
            return Ok(FileStoreConfig::Local);
        }
        let bad = |message: String| ConfigError::new("FILE_STORE", message);
        let rest = value.strip_prefix("s3://").ok_or_else(|| {
            bad(format!(
                "cannot use {value:?}: expected local or s3://bucket/prefix"
            ))
        })?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if !is_bucket_name(bucket) {
            return Err(bad(format!(
                "{bucket:?} is not a bucket name (3 to 63 lowercase letters, digits, dots and \
                 hyphens, starting and ending with a letter or digit)"
            )));
        }
        let prefix = prefix.trim_matches('/');
        if prefix
            .split('/')
            .any(|part| part == "." || part == ".." || (part.is_empty() && !prefix.is_empty()))
            || prefix.chars().any(|c| c.is_control() || c == '\\')
        {
            return Err(bad(format!(
                "{prefix:?} is not a plain key prefix (no empty, . or .. segments, no control characters)"
            )));
        }
        let get = |name: &str| value_of(&lookup, name);
        let endpoint = match get("S3_ENDPOINT") {
            None => None,
            Some(url) => {
                let plain = url
                    .strip_prefix("http://")
                    .or_else(|| url.strip_prefix("https://"))
                    .is_some_and(|host| {
                        !host.is_empty()
                            && !host.contains(['@', '?', '#'])
                            && !host.starts_with('/')
                            && !host.chars().any(char::is_whitespace)
                    });
                if !plain {
                    return Err(ConfigError::new(
                        "S3_ENDPOINT",
                        format!(
                            "cannot use {url:?}: expected http://host[:port] or https://host[:port] \
                             (without credentials in it)"
                        ),
                    ));
                }
                Some(url.trim_end_matches('/').to_owned())
            }
        };
        let region = get("S3_REGION").unwrap_or_else(|| "us-east-1".to_owned());
        if !region
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return Err(ConfigError::new(
                "S3_REGION",
                format!("cannot use {region:?}: expected a region name such as eu-central-1"),
            ));
        }
        let credentials = match (get("S3_ACCESS_KEY_ID"), get("S3_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some((id, Secret::new(secret))),
            (None, None) => None,
            (Some(_), None) => {
                return Err(ConfigError::new(
                    "S3_SECRET_ACCESS_KEY",
                    "is required when S3_ACCESS_KEY_ID is set",
                ));
            }
            (None, Some(_)) => {
                return Err(ConfigError::new(
                    "S3_ACCESS_KEY_ID",
                    "is required when S3_SECRET_ACCESS_KEY is set",
                ));
            }
        };
        Ok(FileStoreConfig::S3(S3Config {
            bucket: bucket.to_owned(),
            prefix: prefix.to_owned(),
            endpoint,
            region,
            credentials,
        }))
    }
}

/// S3's bucket naming rules (the ones a URL can break).
fn is_bucket_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (3..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'.' || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && !name.contains("..")
}
