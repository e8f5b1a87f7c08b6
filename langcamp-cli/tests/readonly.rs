//! `langcamp serve` on a database it cannot write refuses to start, naming the file and
//! the reason (issue 15), instead of serving reads and failing every write. The file sits
//! on a tmpfs remounted read-only, a real read-only file system; mounting needs root.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A tmpfs on a fresh folder, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn mount(args: &[&str], path: &PathBuf) -> bool {
    Command::new("mount")
        .args(args)
        .arg(path)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn langcamp(args: &[&str], dir: &PathBuf, url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_langcamp"));
    command
        .args(args)
        .env("DATABASE_URL", url)
        .env("DATA_DIR", dir)
        .env("RUST_LOG", "warn")
        .env("HOST", "127.0.0.1")
        .env("PORT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `command`, killing it if it is still running after `limit` (a server that
/// started when it should have refused).
fn run_for(mut command: Command, limit: Duration) -> Option<Output> {
    let mut child = command.spawn().expect("start langcamp");
    let started = Instant::now();
    while started.elapsed() < limit {
        if child.try_wait().expect("poll langcamp").is_some() {
            return Some(child.wait_with_output().expect("its output"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn serve_refuses_a_read_only_database_naming_the_file_and_the_reason() {
    if std::env::var("TEST_DATABASE_URL").is_ok() {
        eprintln!("runs in the SQLite pass only (a PostgreSQL database is not a local file)");
        return;
    }
    let path = std::env::temp_dir().join(format!("langcamp-ro-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&path).expect("a mount point");
    if !mount(&["-t", "tmpfs", "-o", "size=16m", "tmpfs"], &path) {
        let _ = std::fs::remove_dir(&path);
        eprintln!("skipped: cannot mount a tmpfs for a read-only file system (needs root)");
        return;
    }
    let disk = Tmpfs(path.clone());
    let file = path.join("langcamp.db");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let migrated = run_for(langcamp(&["migrate"], &path, &url), Duration::from_secs(60))
        .expect("migrate finishes");
    assert!(migrated.status.success(), "{migrated:?}");
    assert!(mount(&["-o", "remount,ro"], &disk.0), "remount read-only");

    let refused = run_for(langcamp(&["serve"], &path, &url), Duration::from_secs(20))
        .expect("serve refuses at once instead of serving");
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&file.display().to_string()),
        "names the file: {stderr}"
    );
    assert!(stderr.contains("cannot be written"), "says why: {stderr}");
    assert!(
        stderr.contains("Read-only file system"),
        "gives the reason: {stderr}"
    );

    // A read-only file on a writable disk (root is stopped only by the immutable flag).
    assert!(mount(&["-o", "remount,rw"], &disk.0), "remount read-write");
    let chattr = |flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(&file)
            .status()
            .is_ok_and(|s| s.success())
    };
    assert!(chattr("+i"), "chattr +i");
    let refused = run_for(langcamp(&["serve"], &path, &url), Duration::from_secs(20))
        .expect("serve refuses at once instead of serving");
    assert!(chattr("-i"), "chattr -i");
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&file.display().to_string()) && stderr.contains("cannot be written"),
        "names the file: {stderr}"
    );
    assert!(
        stderr.contains("not permitted"),
        "gives the reason: {stderr}"
    );

    // Once writable, the same command serves (stopped here by the time limit).
    assert!(
        run_for(langcamp(&["serve"], &path, &url), Duration::from_secs(3)).is_none(),
        "serve starts on a writable database"
    );
}
