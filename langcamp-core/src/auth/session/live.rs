//! Live sign-ins held in memory, so the token check and `GET /me` need no database round
//! trip (each SQLite read costs several thread hand-offs: `/work/shared/evidence` and
//! `docs/BENCHMARKS.md` show them as most of a request's time).
//!
//! An entry, keyed by sign-in id (the `sid` claim), says "this sign-in is live until
//! `expires_at`, and its user row is this". It is only ever filled from a database read
//! that checked the sign-in, the token blacklist and the user, and it is dropped exactly:
//! * every write that ends a sign-in or changes a user (logout, revocation on refresh
//!   reuse, role, profile, e-mail, registration, deletion) calls [`Sessions::forget_user`]
//!   or [`Sessions::forget_session`] right after its transaction commits, so the next
//!   request on this process sees the write;
//! * a load that began before such a write is not stored when it ends (a generation counter
//!   tells), so a slow reader cannot put the old row back;
//! * another process on the same SQLite file (the `langcamp` command, the console) tells
//!   this one through a signal file beside the database (`<db>-signal`): every forgetting
//!   appends a byte to it, and every token check compares the file's length (one `stat`)
//!   with the last length this process accounted for. A change it did not make itself
//!   drops every entry. So a role change from the command line takes effect at the next
//!   request, as the contract asks, with no polling interval.
//! * PostgreSQL instances cannot see each other's memory nor a shared file, so there the
//!   cache stays off unless [`Sessions::enable`] is called by something that hears every
//!   instance's writes (see the PostgreSQL listener); then it is exact there too.
//!
//! A revoked access token (`jti` blacklisted at logout) needs no entry of its own: logout
//! always ends the token's sign-in in the same transaction, and that drops the entry.
//! Extending a sign-in (refresh) needs no forgetting: an entry's `expires_at` can only be
//! earlier than the database's, and an entry past it is reloaded.
//!
//! Only `std` locks, never held across an `.await`.

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::users::User;

/// How many sign-ins are held at most (about 500 bytes each: some 10 MB). When it is full
/// of sign-ins that have not ended, it is emptied and refills with the ones in use.
pub const MAX_LIVE_SESSIONS: usize = 20_000;

/// The signal file is emptied past this size (which every process then sees as a change).
const SIGNAL_MAX_BYTES: u64 = 1 << 20;

/// A live sign-in as the database last showed it.
#[derive(Clone, Debug)]
pub struct LiveSession {
    pub user: Arc<User>,
    /// Epoch ms when the sign-in ends, as of the read that filled the entry.
    pub expires_at: i64,
    /// Whether the user has a confirmed second factor (a factor added or removed changes
    /// the user, and forgets their entries like any change of theirs).
    pub has_factor: bool,
}

/// The cache of live sign-ins of one [`crate::Langcamp`] handle.
pub struct Sessions {
    enabled: AtomicBool,
    max_entries: usize,
    signal: Option<Signal>,
    state: RwLock<State>,
}

struct State {
    /// Bumped by every forgetting; a load stores its entry only if it is unchanged.
    generation: u64,
    entries: HashMap<String, LiveSession>,
}

/// The cross-process change signal of an SQLite database: a file that only grows (until
/// it is emptied), whose length changes whenever any process forgets something.
struct Signal {
    path: PathBuf,
    /// The file length this process has accounted for (`u64::MAX`: none yet).
    seen: AtomicU64,
    /// The file, kept open so a check is one `fstat` of a descriptor instead of a `stat`
    /// that walks the path (a profile of `GET /me` showed the path walk); `None` while it
    /// cannot be opened.
    open: RwLock<Option<File>>,
}

impl Signal {
    fn new(path: PathBuf) -> Signal {
        let signal = Signal {
            path,
            seen: AtomicU64::new(u64::MAX),
            open: RwLock::new(None),
        };
        let len = signal.len();
        signal.seen.store(len, Ordering::Release);
        signal
    }

    fn len(&self) -> u64 {
        let removed = match self.open.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(file) => match file.metadata() {
                Ok(meta) if still_linked(&meta) => return meta.len(),
                _ => true,
            },
            None => false,
        };
        if removed {
            // Perhaps made anew since: whatever was seen before no longer counts, so this
            // check sees a change and drops every entry.
            self.seen.store(u64::MAX, Ordering::Release);
        }
        self.reopen()
    }

    /// Opens the file by its path (first use, or the open one was removed).
    fn reopen(&self) -> u64 {
        let opened = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            // A file this process may not write to (the writer's job) is still read.
            .or_else(|_| File::open(&self.path))
            .and_then(|file| Ok((file.metadata()?.len(), file)));
        let mut open = self.open.write().unwrap_or_else(|e| e.into_inner());
        match opened {
            Ok((len, file)) => {
                *open = Some(file);
                len
            }
            Err(_) => {
                *open = None;
                // A missing or unreadable file reads as 0: a later append makes it differ.
                std::fs::metadata(&self.path).map_or(0, |m| m.len())
            }
        }
    }

    /// Appends one byte; the file's length afterwards, or `None` when it could not be
    /// written (then nobody else can be told, and this process must not trust old entries).
    fn bump(&self) -> Option<u64> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .ok()?;
        if file.metadata().ok()?.len() >= SIGNAL_MAX_BYTES {
            file.set_len(0).ok()?;
        }
        file.write_all(b".").ok()?;
        Some(file.metadata().ok()?.len())
    }
}

/// Whether an open file still has a name (a removed one keeps its descriptor working but
/// nobody else writes to it any more).
#[cfg(unix)]
fn still_linked(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.nlink() > 0
}

#[cfg(not(unix))]
fn still_linked(_meta: &std::fs::Metadata) -> bool {
    // Elsewhere an open file cannot be removed, so the descriptor is the file.
    true
}

impl fmt::Debug for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions")
            .field("enabled", &self.enabled.load(Ordering::Relaxed))
            .field("entries", &self.read().entries.len())
            .field("signal", &self.signal.as_ref().map(|s| &s.path))
            .finish()
    }
}

impl Sessions {
    /// A cache that is on from the start (one process, or processes sharing `signal`).
    pub fn new(signal: Option<PathBuf>) -> Sessions {
        Sessions::with_capacity(signal, MAX_LIVE_SESSIONS, true)
    }

    /// A cache that serves nothing until [`Sessions::enable`] (PostgreSQL).
    pub fn disabled() -> Sessions {
        Sessions::with_capacity(None, MAX_LIVE_SESSIONS, false)
    }

    fn with_capacity(signal: Option<PathBuf>, max_entries: usize, enabled: bool) -> Sessions {
        let signal = signal.map(Signal::new);
        Sessions {
            enabled: AtomicBool::new(enabled),
            max_entries,
            signal,
            state: RwLock::new(State {
                generation: 0,
                entries: HashMap::new(),
            }),
        }
    }

    /// Starts serving entries (called once every other writer's changes are heard).
    pub fn enable(&self) {
        self.forget_all();
        self.enabled.store(true, Ordering::Release);
    }

    /// Stops serving entries (the changes of other writers can no longer be heard).
    pub fn disable(&self) {
        self.enabled.store(false, Ordering::Release);
        self.forget_all();
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Drops everything if another process signalled a change since the last check.
    /// Called once per token check, before [`Sessions::get`].
    pub fn catch_up(&self) {
        let Some(signal) = &self.signal else { return };
        let now = signal.len();
        if now == signal.seen.load(Ordering::Acquire) {
            return;
        }
        let mut state = self.write();
        state.generation = state.generation.wrapping_add(1);
        state.entries.clear();
        signal.seen.store(now, Ordering::Release);
    }

    /// The generation to hand back to [`Sessions::store`] after a load.
    pub fn generation(&self) -> u64 {
        self.read().generation
    }

    /// The live sign-in `sid` of user `user_id`, if held and not past its end at `now_ms`.
    pub fn get(&self, sid: &str, user_id: &str, now_ms: i64) -> Option<LiveSession> {
        if !self.is_enabled() {
            return None;
        }
        let state = self.read();
        let live = state.entries.get(sid)?;
        (live.user.id == user_id && live.expires_at > now_ms).then(|| live.clone())
    }

    /// Keeps what a load read, unless something was forgotten since it began.
    pub fn store(&self, generation: u64, sid: &str, live: LiveSession, now_ms: i64) {
        if !self.is_enabled() {
            return;
        }
        let mut state = self.write();
        if state.generation != generation {
            return;
        }
        if state.entries.len() >= self.max_entries && !state.entries.contains_key(sid) {
            state.entries.retain(|_, e| e.expires_at > now_ms);
            if state.entries.len() >= self.max_entries {
                // Dropping entries is always safe: they are reloaded on their next use.
                state.entries.clear();
            }
        }
        state.entries.insert(sid.to_owned(), live);
    }

    /// Forgets one sign-in (it ended). Call after the commit that ended it.
    pub fn forget_session(&self, sid: &str) {
        self.forget(|state| {
            state.entries.remove(sid);
        });
    }

    /// Forgets every sign-in of a user (their row changed, they were deleted, or one of
    /// their sign-ins ended by refresh token). Call after the commit.
    pub fn forget_user(&self, user_id: &str) {
        self.forget(|state| state.entries.retain(|_, e| e.user.id != user_id));
    }

    /// Forgets everything.
    pub fn forget_all(&self) {
        self.forget(|state| state.entries.clear());
    }

    fn forget(&self, drop_entries: impl FnOnce(&mut State)) {
        let mut state = self.write();
        state.generation = state.generation.wrapping_add(1);
        drop_entries(&mut state);
        if let Some(signal) = &self.signal {
            // Under the lock, so this process's own bumps are told apart from others':
            // the length grew by exactly one byte since the last length accounted for
            // only if nobody else wrote in between.
            let before = signal.seen.load(Ordering::Acquire);
            match signal.bump() {
                Some(after) if before != u64::MAX && after == before + 1 => {}
                Some(after) => {
                    state.entries.clear();
                    signal.seen.store(after, Ordering::Release);
                    return;
                }
                None => {
                    tracing::warn!(path = %signal.path.display(), "cannot write the session signal file; other processes may serve ended sign-ins");
                    state.entries.clear();
                    return;
                }
            }
            signal.seen.store(before + 1, Ordering::Release);
        }
    }

    /// How many sign-ins are held.
    pub fn len(&self) -> usize {
        self.read().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // Every update is one insert, remove, retain or clear: a poisoned lock holds a usable map.
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user as the sign-in cache holds it; only its id matters here.
    fn user(id: &str) -> Arc<User> {
        let user = serde_json::from_value(serde_json::json!({
            "id": id,
            "email": format!("{id}@example.com"),
            "role": "user",
            "isRegistrationComplete": false,
            "locale": "en",
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z",
        }));
        Arc::new(user.expect("a user"))
    }

    fn live(id: &str, expires_at: i64) -> LiveSession {
        LiveSession {
            user: user(id),
            expires_at,
            has_factor: false,
        }
    }

    #[test]
    fn a_stored_sign_in_is_served_until_it_ends_and_only_to_its_user() {
        let s = Sessions::new(None);
        s.store(s.generation(), "s1", live("u1", 100), 0);
        assert!(s.get("s1", "u1", 99).is_some());
        assert!(s.get("s1", "u2", 99).is_none(), "another user's token");
        assert!(s.get("s1", "u1", 100).is_none(), "ended");
        assert!(s.get("s2", "u1", 0).is_none());
    }

    #[test]
    fn forgetting_a_user_drops_all_their_sign_ins_and_no_others() {
        let s = Sessions::new(None);
        s.store(s.generation(), "a", live("u1", 100), 0);
        s.store(s.generation(), "b", live("u1", 100), 0);
        s.store(s.generation(), "c", live("u2", 100), 0);
        s.forget_user("u1");
        assert!(s.get("a", "u1", 0).is_none());
        assert!(s.get("b", "u1", 0).is_none());
        assert!(s.get("c", "u2", 0).is_some());
        s.forget_session("c");
        assert!(s.is_empty());
    }

    #[test]
    fn a_load_overtaken_by_a_forgetting_is_not_stored() {
        let s = Sessions::new(None);
        let generation = s.generation();
        s.forget_user("u1");
        s.store(generation, "a", live("u1", 100), 0);
        assert!(s.is_empty());
    }

    #[test]
    fn a_disabled_cache_serves_and_keeps_nothing() {
        let s = Sessions::disabled();
        s.store(s.generation(), "a", live("u1", 100), 0);
        assert!(s.get("a", "u1", 0).is_none());
        s.enable();
        s.store(s.generation(), "a", live("u1", 100), 0);
        assert!(s.get("a", "u1", 0).is_some());
        s.disable();
        assert!(s.get("a", "u1", 0).is_none());
    }

    #[test]
    fn a_full_cache_drops_ended_sign_ins_first_and_else_starts_over() {
        let s = Sessions::with_capacity(None, 2, true);
        s.store(s.generation(), "a", live("u1", 10), 0);
        s.store(s.generation(), "b", live("u2", 100), 0);
        s.store(s.generation(), "c", live("u3", 100), 20);
        assert!(s.get("c", "u3", 20).is_some());
        assert!(s.get("b", "u2", 20).is_some(), "the ended one made room");
        assert_eq!(s.len(), 2);
        s.store(s.generation(), "d", live("u4", 100), 30);
        assert!(s.get("d", "u4", 30).is_some());
        assert_eq!(
            s.len(),
            1,
            "nothing had ended: emptied, then kept the new one"
        );
    }

    /// The path of a signal file in a folder of its own, removed with it.
    struct SignalFile {
        dir: std::path::PathBuf,
        path: std::path::PathBuf,
    }

    impl SignalFile {
        fn new() -> SignalFile {
            let dir = std::env::temp_dir()
                .join(format!("langcamp-signal-{}", crate::domain::id::new_id()));
            std::fs::create_dir_all(&dir).ok();
            let path = dir.join("db-signal");
            SignalFile { dir, path }
        }
    }

    impl Drop for SignalFile {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.dir).ok();
        }
    }

    #[test]
    fn another_process_forgetting_drops_everything_here_but_our_own_does_not() {
        let signal = SignalFile::new();
        let path = signal.path.clone();
        let here = Sessions::new(Some(path.clone()));
        let there = Sessions::new(Some(path.clone()));
        here.store(here.generation(), "a", live("u1", 100), 0);
        here.store(here.generation(), "b", live("u2", 100), 0);

        here.forget_session("a");
        here.catch_up();
        assert!(
            here.get("b", "u2", 0).is_some(),
            "our own signal is not news"
        );

        there.forget_user("u2");
        assert!(here.get("b", "u2", 0).is_some(), "not yet checked");
        here.catch_up();
        assert!(
            here.get("b", "u2", 0).is_none(),
            "the other process's change"
        );

        // The other process bumps between two of ours: ours must not hide it.
        here.store(here.generation(), "c", live("u3", 100), 0);
        there.forget_user("u9");
        here.forget_session("zzz");
        assert!(here.get("c", "u3", 0).is_none());
    }

    #[test]
    fn a_removed_signal_file_counts_as_a_change_and_is_followed_to_its_new_self() {
        let signal = SignalFile::new();
        let path = signal.path.clone();
        let here = Sessions::new(Some(path.clone()));
        here.store(here.generation(), "a", live("u1", 100), 0);
        here.catch_up();
        assert!(here.get("a", "u1", 0).is_some(), "nothing changed yet");

        // An operator removes the file; a new one of the same length appears.
        std::fs::remove_file(&path).expect("the signal file exists once opened");
        std::fs::write(&path, b"").expect("a new signal file");
        here.catch_up();
        assert!(
            here.get("a", "u1", 0).is_none(),
            "a removed file is a change"
        );

        // From now on the new file is the one watched.
        here.store(here.generation(), "b", live("u2", 100), 0);
        here.catch_up();
        assert!(here.get("b", "u2", 0).is_some());
        Sessions::new(Some(path.clone())).forget_user("u9");
        here.catch_up();
        assert!(
            here.get("b", "u2", 0).is_none(),
            "a write to the new file is heard"
        );
    }
}
