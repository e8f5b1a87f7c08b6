//! Web addresses clients give us to show to others (videos, course images).

use crate::domain::validate;

/// An `http://` or `https://` address, trimmed, on one line, at most 2000 bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HttpUrl(String);

impl HttpUrl {
    pub fn parse(field: &str, raw: &str) -> Result<HttpUrl, String> {
        validate::http_url(field, raw).map(HttpUrl)
    }
}

crate::domain::string_value!(HttpUrl);
