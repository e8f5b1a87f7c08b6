//! Web addresses clients give us to show to others (videos, course images).

use std::fmt;

use crate::validate;

/// An `http://` or `https://` address, trimmed, on one line, at most 2000 bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HttpUrl(String);

impl HttpUrl {
    pub fn parse(field: &str, raw: &str) -> Result<HttpUrl, String> {
        validate::http_url(field, raw).map(HttpUrl)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
