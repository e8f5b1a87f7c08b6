//! Identifiers: UUID v7 strings, time-ordered so inserts stay at the end of indexes.

/// A new identifier for any record.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A new UUID v7 for things that need uniqueness but no strict order, such as request
/// ids: made without [`new_id`]'s process-wide lock (which keeps ids from one process in
/// strict order within a millisecond, and which request ids made on two threads at once
/// queued on) and without a system call for randomness: 74 random bits from a generator
/// per thread, seeded once from the OS-seeded keys of `std`'s hasher.
pub fn new_unordered_id() -> String {
    use std::cell::Cell;
    use std::hash::{BuildHasher, RandomState};

    thread_local! {
        static STATE: Cell<u64> =
            Cell::new(RandomState::new().hash_one(std::thread::current().id()));
    }
    // SplitMix64: a full-period generator whose outputs pass statistical tests; these ids
    // need to differ, not to be unpredictable (they are echoed to the client anyway).
    let next = || {
        STATE.with(|state| {
            let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            state.set(z);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    };
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&next().to_le_bytes());
    random[8..].copy_from_slice(&next().to_le_bytes()[..2]);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    uuid::Builder::from_unix_timestamp_millis(millis, &random)
        .into_uuid()
        .to_string()
}

/// Whether `text` could be an identifier we issued; a malformed id is simply not found,
/// so callers use this to answer 404 without a query.
pub fn looks_like_id(text: &str) -> bool {
    uuid::Uuid::try_parse(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unordered_ids_are_version_7_and_differ() {
        let ids: std::collections::HashSet<String> =
            (0..10_000).map(|_| new_unordered_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(10) {
            let uuid = uuid::Uuid::try_parse(id).expect("a uuid");
            assert_eq!(uuid.get_version_num(), 7);
            assert!(looks_like_id(id));
        }
    }
}
