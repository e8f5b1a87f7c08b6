//! An in-process read cache for public data that is read far more often than written
//! (the published-course list, settings by key, the active placement-test list): the
//! mechanism. Which caches exist, and what they hold, is the handle's (the handle's `Caches`).
//!
//! Why: one indexed read through the pool costs most of a request's time, while this data
//! changes a few times a day.
//!
//! Freshness rules:
//! * Every write on this instance calls [`Cache::invalidate_all`] right after its
//!   transaction commits, so the very next read on this instance sees the write.
//! * A load that started before an invalidation is not stored when it finishes (a
//!   generation counter tells), so a slow reader can never put pre-write data back.
//! * Other instances sharing a PostgreSQL database (and the `langcamp` command, which is a
//!   process of its own) may write too, and this instance does not hear about it. Entries
//!   therefore live at most [`PUBLIC_TTL`] by the app clock: staleness caused by another
//!   process is bounded by that, and is zero for writes made through this instance.
//! * The number of entries is capped, because keys come from public requests (filters,
//!   setting keys): when full, expired entries are dropped, and if it is still full the
//!   value is served without being stored.
//!
//! Only plain `std` types: a `RwLock` that is never held across an `.await`.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use crate::domain::error::Result;

/// How long an entry may be served before it is reloaded, whatever happened elsewhere.
pub const PUBLIC_TTL: Duration = Duration::from_secs(5);

/// A small map of loaded values with a time to live and whole-cache invalidation.
pub struct Cache<K, V> {
    ttl_ms: i64,
    max_entries: usize,
    state: RwLock<State<K, V>>,
}

struct State<K, V> {
    /// Bumped by every invalidation; a load stores its value only if it is unchanged.
    generation: u64,
    entries: HashMap<K, Entry<V>>,
}

struct Entry<V> {
    value: V,
    /// App-clock milliseconds when the load that produced `value` began.
    loaded_at: i64,
}

impl<K, V> fmt::Debug for Cache<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.read();
        f.debug_struct("Cache")
            .field("ttl_ms", &self.ttl_ms)
            .field("entries", &state.entries.len())
            .field("generation", &state.generation)
            .finish()
    }
}

impl<K, V> Cache<K, V> {
    /// A cache whose entries live `ttl`, holding at most `max_entries` keys.
    pub fn new(ttl: Duration, max_entries: usize) -> Cache<K, V> {
        Cache {
            ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
            max_entries,
            state: RwLock::new(State {
                generation: 0,
                entries: HashMap::new(),
            }),
        }
    }

    /// Drops every entry; loads already under way will not be stored.
    pub fn invalidate_all(&self) {
        let mut state = self.write();
        state.generation = state.generation.wrapping_add(1);
        state.entries.clear();
    }

    /// How many entries are held (expired ones included until they are replaced).
    pub fn len(&self) -> usize {
        self.read().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // A panic while holding the lock cannot leave the map half-updated in a way that
    // matters (every update is a single insert or clear), so a poisoned lock is used as is.
    fn read(&self) -> RwLockReadGuard<'_, State<K, V>> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State<K, V>> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    fn fresh(&self, entry: &Entry<V>, now_ms: i64) -> bool {
        now_ms >= entry.loaded_at && now_ms - entry.loaded_at < self.ttl_ms
    }
}

impl<K: Eq + Hash, V: Clone> Cache<K, V> {
    /// The value of `key` if it is held and younger than the time to live.
    pub fn get(&self, key: &K, now_ms: i64) -> Option<V> {
        let state = self.read();
        state
            .entries
            .get(key)
            .filter(|e| self.fresh(e, now_ms))
            .map(|e| e.value.clone())
    }

    /// The held value of `key`, or the result of `load` (stored unless an invalidation
    /// happened meanwhile). Errors of `load` are returned and not stored.
    pub async fn get_or_load<F, Fut>(&self, key: K, now_ms: i64, load: F) -> Result<V>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        let generation = {
            let state = self.read();
            if let Some(entry) = state.entries.get(&key)
                && self.fresh(entry, now_ms)
            {
                return Ok(entry.value.clone());
            }
            state.generation
        };
        let value = load().await?;
        let mut state = self.write();
        if state.generation == generation {
            if state.entries.len() >= self.max_entries && !state.entries.contains_key(&key) {
                let ttl_ms = self.ttl_ms;
                state
                    .entries
                    .retain(|_, e| now_ms >= e.loaded_at && now_ms - e.loaded_at < ttl_ms);
            }
            if state.entries.len() < self.max_entries || state.entries.contains_key(&key) {
                state.entries.insert(
                    key,
                    Entry {
                        value: value.clone(),
                        loaded_at: now_ms,
                    },
                );
            }
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::error::Error;

    fn cache() -> Cache<&'static str, i64> {
        Cache::new(Duration::from_secs(5), 2)
    }

    /// What `get_or_load` answers for `key` at `now` when a load would find `value`.
    async fn load(
        c: &Cache<&'static str, i64>,
        key: &'static str,
        now: i64,
        value: i64,
    ) -> Option<i64> {
        c.get_or_load(key, now, || async move { Ok(value) })
            .await
            .ok()
    }

    #[tokio::test]
    async fn values_are_loaded_once_and_served_until_they_expire() {
        let c = cache();
        assert_eq!(load(&c, "a", 1_000, 1).await, Some(1));
        assert_eq!(load(&c, "a", 5_999, 2).await, Some(1));
        assert_eq!(c.get(&"a", 5_999), Some(1));
        assert_eq!(c.get(&"a", 6_000), None, "expired after 5 s");
        assert_eq!(load(&c, "a", 6_000, 3).await, Some(3));
    }

    #[tokio::test]
    async fn invalidation_drops_everything() {
        let c = cache();
        load(&c, "a", 0, 1).await;
        load(&c, "b", 0, 2).await;
        c.invalidate_all();
        assert!(c.is_empty());
        assert_eq!(load(&c, "a", 0, 9).await, Some(9));
    }

    #[tokio::test]
    async fn a_load_overtaken_by_an_invalidation_is_not_stored() {
        let c = cache();
        let value = c
            .get_or_load("a", 0, || async {
                // A write commits and invalidates while this load is reading old data.
                c.invalidate_all();
                Ok(1)
            })
            .await
            .ok();
        assert_eq!(value, Some(1), "the caller still gets its answer");
        assert_eq!(c.get(&"a", 0), None, "but it is not kept");
    }

    #[tokio::test]
    async fn failed_loads_are_not_stored() {
        let c = cache();
        let failed = c
            .get_or_load("a", 0, || async { Err(Error::invalid("no")) })
            .await;
        assert!(failed.is_err());
        assert!(c.is_empty());
    }

    #[tokio::test]
    async fn a_full_cache_makes_room_from_expired_entries_only() {
        let c = cache();
        load(&c, "a", 0, 1).await;
        load(&c, "b", 3_000, 2).await;
        assert_eq!(load(&c, "c", 4_000, 3).await, Some(3));
        assert_eq!(c.get(&"c", 4_000), None, "full: served but not stored");
        load(&c, "c", 6_000, 3).await;
        assert_eq!(c.get(&"c", 6_000), Some(3), "the expired entry made room");
        assert_eq!(c.get(&"b", 6_000), Some(2));
        assert_eq!(c.len(), 2);
    }
}
