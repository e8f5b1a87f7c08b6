//! `langcamp console` needs a terminal; the full run is scripts/console-check.sh (tmux).

use std::process::{Command, Stdio};

#[test]
fn the_console_refuses_to_start_without_a_terminal() {
    let data_dir = std::env::temp_dir().join(format!("langcamp-console-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_langcamp"))
        .arg("console")
        .env("DATA_DIR", &data_dir)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run langcamp");
    let _ = std::fs::remove_dir_all(&data_dir);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("langcamp: the console needs a terminal"),
        "{stderr}"
    );
}
