//! Encoded answers for public data: the envelope bytes of a cached value, kept beside it,
//! so an answer from the cache is a clone of a reference-counted buffer instead of
//! serializing tens of kilobytes per request (the course list is 30 KB, the test list
//! 45 KB in the benchmark's catalogue).
//!
//! Exactness: an encoding is kept for one value *object* of the core's read cache
//! (`langcamp-core/src/cache.rs`), found by its `Arc` identity. The core cache makes a new
//! object for every load, and every write of that data invalidates it (its generation
//! counter), so a write can never be answered with old bytes: the next request gets the
//! new object from core, which has no encoding yet, and is encoded once. An encoding is
//! dropped when the core no longer holds its object (this map then holds the only
//! reference). The map is process-wide because handlers see the core handle, not the
//! server; identity keeps two servers in one process (tests) apart.
//!
//! The envelope's `timestamp` is the time the answer was encoded, which is at most the
//! core cache's time to live (5 s) after the data was read: the time of the data the
//! answer shows, not of the request. The `ETag` is a hash of `data` alone, so it stays the
//! same across reloads of unchanged data and a client revalidating with `If-None-Match`
//! gets 304 with no body. Answers larger than [`GZIP_MIN_BYTES`] are also kept gzipped,
//! for clients that send `Accept-Encoding: gzip`.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, LazyLock, RwLock};

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use hyper::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, HeaderMap, HeaderValue,
    IF_NONE_MATCH, VARY,
};
use hyper::{Response, StatusCode};
use langcamp_core::courses::Course;
use langcamp_core::placement::ProficiencyTest;
use langcamp_core::{Error, Page, Result, Timestamp};
use serde::Serialize;

use crate::reply::{Body, Reply, full};

/// Answers smaller than this are sent as they are (gzip would save little or nothing).
pub const GZIP_MIN_BYTES: usize = 1024;

/// One answer, ready to send.
#[derive(Debug)]
pub struct Encoded {
    /// The whole success envelope.
    pub body: Bytes,
    /// `body` gzipped, when it is large enough to be worth it.
    pub gzip: Option<Bytes>,
    /// A weak validator of `data` (the same data keeps it across reloads).
    pub etag: HeaderValue,
}

impl Encoded {
    /// Encodes `data` in the success envelope (status 200, the time now).
    pub fn new(data: &impl Serialize) -> Result<Encoded> {
        let data = serde_json::to_vec(data).map_err(Error::internal)?;
        let timestamp =
            serde_json::to_string(&Timestamp(chrono::Utc::now())).map_err(Error::internal)?;
        // The same bytes `reply::Envelope` serializes to, fields in the same order.
        let mut body = Vec::with_capacity(data.len() + 100);
        body.extend_from_slice(br#"{"isSuccess":true,"statusCode":200,"data":"#);
        body.extend_from_slice(&data);
        body.extend_from_slice(br#","errors":[],"timestamp":"#);
        body.extend_from_slice(timestamp.as_bytes());
        body.push(b'}');
        let hash = langcamp_core::platform::crypto::sha256_hex(&data);
        let etag =
            HeaderValue::from_str(&format!("W/\"{}\"", &hash[..32])).map_err(Error::internal)?;
        let gzip = if body.len() >= GZIP_MIN_BYTES {
            let mut encoder =
                GzEncoder::new(Vec::with_capacity(body.len() / 4), Compression::default());
            encoder.write_all(&body).map_err(Error::internal)?;
            Some(Bytes::from(encoder.finish().map_err(Error::internal)?))
        } else {
            None
        };
        Ok(Encoded {
            body: Bytes::from(body),
            gzip,
            etag,
        })
    }

    /// The response to a request with `headers`: 304 when its `If-None-Match` holds this
    /// answer's validator, else 200 with the body, gzipped when the client accepts it.
    pub fn respond(&self, headers: &HeaderMap) -> Response<Body> {
        let not_modified = headers
            .get_all(IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| etag_matches(v, &self.etag));
        let (status, body, gzipped) = if not_modified {
            (StatusCode::NOT_MODIFIED, Bytes::new(), false)
        } else {
            match &self.gzip {
                Some(gzip) if accepts_gzip(headers) => (StatusCode::OK, gzip.clone(), true),
                _ => (StatusCode::OK, self.body.clone(), false),
            }
        };
        let mut response = Response::new(full(body));
        *response.status_mut() = status;
        let h = response.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(ETAG, self.etag.clone());
        // Caches may keep it but must ask again each time (then mostly a 304).
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert(VARY, HeaderValue::from_static("Accept-Encoding"));
        if gzipped {
            h.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response
    }
}

/// Whether an `If-None-Match` value names `etag` (weak comparison, RFC 9110 §13.1.2).
fn etag_matches(header: &str, etag: &HeaderValue) -> bool {
    let ours = etag.to_str().unwrap_or("");
    let ours = ours.strip_prefix("W/").unwrap_or(ours);
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == ours)
}

/// Whether `Accept-Encoding` allows gzip (named or `*`, with a non-zero weight).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named = None;
    let mut any = None;
    for value in headers.get_all(ACCEPT_ENCODING).iter() {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let weight = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next_back()
                .unwrap_or(1.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                named = Some(weight > 0.0);
            } else if coding == "*" {
                any = Some(weight > 0.0);
            }
        }
    }
    named.or(any).unwrap_or(false)
}

/// A value object of the core cache (held, so its address stays its own) and its encoding.
type Slot<V> = (Arc<V>, Arc<Encoded>);

/// Encodings of the values of one core cache, by the identity of the value object.
pub struct EncodedCache<V> {
    slots: RwLock<HashMap<usize, Slot<V>>>,
}

impl<V: Serialize> EncodedCache<V> {
    fn new() -> EncodedCache<V> {
        EncodedCache {
            slots: RwLock::new(HashMap::new()),
        }
    }

    /// The encoding of `value`, made now if this object has none yet.
    pub fn get(&self, value: &Arc<V>) -> Result<Arc<Encoded>> {
        let id = Arc::as_ptr(value) as usize;
        {
            let slots = self.slots.read().unwrap_or_else(|p| p.into_inner());
            // The slot holds its object, so no other object can have this address now.
            if let Some((_, encoded)) = slots.get(&id) {
                return Ok(Arc::clone(encoded));
            }
        }
        let encoded = Arc::new(Encoded::new(&**value)?);
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        // Objects the core dropped (replaced or invalidated) are referenced only here.
        slots.retain(|_, (object, _)| Arc::strong_count(object) > 1);
        slots.insert(id, (Arc::clone(value), Arc::clone(&encoded)));
        Ok(encoded)
    }

    /// How many encodings are held.
    pub fn len(&self) -> usize {
        self.slots.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The public course lists.
pub static COURSES: LazyLock<EncodedCache<Vec<Course>>> = LazyLock::new(EncodedCache::new);
/// The public pages of the test list.
pub static TESTS: LazyLock<EncodedCache<Page<ProficiencyTest>>> = LazyLock::new(EncodedCache::new);

/// The reply for a public cached `value`, from its encoding.
pub fn reply<V: Serialize>(
    cache: &EncodedCache<V>,
    value: &Arc<V>,
    headers: &HeaderMap,
) -> Result<Reply> {
    Ok(Reply::Raw(cache.get(value)?.respond(headers)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_bytes_match_the_ordinary_reply() {
        let encoded = Encoded::new(&vec![1, 2, 3]).expect("encodes");
        let parsed: serde_json::Value = serde_json::from_slice(&encoded.body).expect("json");
        assert_eq!(parsed["isSuccess"], true);
        assert_eq!(parsed["statusCode"], 200);
        assert_eq!(parsed["data"], serde_json::json!([1, 2, 3]));
        assert_eq!(parsed["errors"], serde_json::json!([]));
        assert!(
            parsed["timestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        assert_eq!(parsed.as_object().map(|o| o.len()), Some(5));
    }

    #[test]
    fn the_validator_depends_on_the_data_only() {
        let a = Encoded::new(&"same").expect("encodes");
        let b = Encoded::new(&"same").expect("encodes");
        let c = Encoded::new(&"other").expect("encodes");
        assert_eq!(a.etag, b.etag);
        assert_ne!(a.etag, c.etag);
    }

    #[test]
    fn if_none_match_is_compared_weakly_and_in_lists() {
        let etag = HeaderValue::from_static("W/\"abc\"");
        assert!(etag_matches("W/\"abc\"", &etag));
        assert!(etag_matches("\"abc\"", &etag));
        assert!(etag_matches("\"x\", W/\"abc\"", &etag));
        assert!(etag_matches("*", &etag));
        assert!(!etag_matches("\"abcd\"", &etag));
    }

    #[test]
    fn gzip_is_used_only_when_accepted() {
        let accepts = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                ACCEPT_ENCODING,
                HeaderValue::from_str(value).expect("header"),
            );
            accepts_gzip(&h)
        };
        assert!(accepts("gzip"));
        assert!(accepts("br, GZIP;q=0.5"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("gzip;q=0, *"));
        assert!(!accepts("br, deflate"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn an_encoding_lives_as_long_as_its_object_in_the_core_cache() {
        let cache = EncodedCache::new();
        let first = Arc::new(vec![1]);
        let a = cache.get(&first).expect("encodes");
        let again = cache.get(&first).expect("encodes");
        assert!(Arc::ptr_eq(&a, &again), "a hit is the same buffer");
        drop(first);
        let second = Arc::new(vec![2]);
        let b = cache.get(&second).expect("encodes");
        assert_ne!(a.body, b.body, "a new object is encoded anew");
        assert_eq!(cache.len(), 1, "the dropped object's encoding went with it");
    }
}
