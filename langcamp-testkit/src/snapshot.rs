//! Snapshot files: what a test renders, compared with what the repository holds.

use std::path::Path;

/// Asserts that `current` is the content of the snapshot file at `path`; with
/// `UPDATE_SNAPSHOTS=1` in the environment it writes `current` there first, so a
/// deliberate change is accepted by running the test once that way. `what` names the
/// snapshot and how to accept it in the failure message, which shows both versions.
#[track_caller]
pub fn assert_snapshot(path: &Path, current: &str, what: &str) {
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("folder")).expect("snapshot folder");
        std::fs::write(path, current).expect("write snapshot");
    }
    let stored = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        stored == current,
        "{what} ({})\n--- stored\n{stored}\n--- now\n{current}",
        path.display()
    );
}
