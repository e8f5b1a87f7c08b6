//! Security headers every answer carries (CONTRACT §1), set in one place after routing so
//! no handler, error path or raw file answer can forget them.

use hyper::header::{self, HeaderMap, HeaderValue};

/// What the documentation page may load: its own scripts, styles, images and the OpenAPI
/// document, nothing from elsewhere, and no page may frame it (clickjacking).
/// `data:` images are Swagger UI's inline SVG icons; there is no inline script to allow.
/// The one inline style Swagger UI's bundle (5.32.6, vendored) inserts is allowed by its
/// hash, as Chromium reported it, rather than by `'unsafe-inline'`.
pub const DOCS_CSP: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'self'; \
     form-action 'none'; frame-ancestors 'none'";

/// What a stored file opened as a page may do: nothing. An uploaded PDF or SVG-bearing
/// image is served on the API's own origin; `sandbox` gives the document an origin of its
/// own with scripts, forms and plugins off, so a crafted file cannot act with the API
/// origin's rights (issue #41). An `<img>` or `<video>` of it elsewhere is not affected.
pub const FILE_CSP: &str = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self';      style-src 'unsafe-inline'; frame-ancestors 'self'";

/// `nosniff` on every answer (a browser must never guess a JSON error or an upload into
/// HTML), on `/api/docs` the content security policy plus the legacy framing ban, and on
/// stored files a sandbox.
pub fn add_security_headers(path: &str, headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if path == "/api/docs" || path.starts_with("/api/docs/") {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DOCS_CSP),
        );
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    } else if path.starts_with("/storage/files/") {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(FILE_CSP),
        );
    }
}
