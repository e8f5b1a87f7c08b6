//! The operator's kit on the real binary: `langcamp doctor`, `langcamp backup`, connection
//! errors that name host, port and cause, and the log formats. Runs on SQLite, or on
//! PostgreSQL when `TEST_DATABASE_URL` names a server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
mod common;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use langcamp_testkit::s3;
use serde_json::{Value, json};

use common::Env;

/// Nothing listens on the discard port: connections are refused at once.
const REFUSED_DB: &str = "postgres://ana:topsecret@127.0.0.1:9/langcamp";

impl Env {
    async fn new() -> Env {
        Env::create("lc_ops").await
    }

    /// A database with the schema in place.
    async fn migrated() -> Env {
        let env = Env::new().await;
        assert!(env.run(&["migrate"]).status.success());
        env
    }

    fn is_postgres(&self) -> bool {
        self.db.url().starts_with("postgres")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = self.langcamp(args);
        command
            .env("JWT_SECRET", "operator-test-secret-0123456789")
            .env("FRONTEND_BASE_URL", "https://school.example")
            .env_remove("MAIL_HOST")
            .env_remove("LOG_FORMAT")
            .env_remove("METRICS_TOKEN");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run langcamp")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts that what the command wrote to stderr names `what`; shows all of it otherwise.
#[track_caller]
fn assert_stderr_names(out: &Output, what: &str) {
    let stderr = text(&out.stderr);
    assert!(stderr.contains(what), "no {what:?} in: {stderr}");
}

fn checks(out: &Output) -> Vec<(String, bool, String)> {
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor printed no JSON ({e}): {}", text(&out.stdout)));
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["ok"] == true,
                c.to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn doctor_passes_every_check_on_a_migrated_database() {
    let env = Env::migrated().await;
    let out = env.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let names: Vec<String> = checks(&out)
        .into_iter()
        .map(|(n, ok, c)| {
            assert!(ok, "{c}");
            n
        })
        .collect();
    for name in [
        "configuration",
        "JWT_SECRET",
        "mail",
        "FRONTEND_BASE_URL",
        "PUBLIC_ORIGIN",
        "STAFF_SECOND_FACTOR",
        "database",
        "migrations",
        "fileStore",
        "keys",
        "traces",
        "webhooks",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    // The text report: one line per check.
    let out = env.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("ok "))
            .count(),
        11,
        "every check but PUBLIC_ORIGIN (unset: passkeys off, a warning)"
    );
}

/// Without `FRONTEND_BASE_URL` (the default) an assignment mail's link has no host:
/// doctor says so with the fix, as a warning that fails nothing.
#[tokio::test]
async fn doctor_warns_about_mail_links_without_a_host_and_still_passes() {
    let env = Env::migrated().await;
    let out = env
        .command(&["doctor"])
        .env_remove("FRONTEND_BASE_URL")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.contains("FRONTEND_BASE_URL"))
        .unwrap_or_else(|| panic!("no FRONTEND_BASE_URL line in\n{report}"));
    assert!(
        line.starts_with("warn ")
            && line.contains("/materials/<id>")
            && line.contains("fix: set FRONTEND_BASE_URL"),
        "{line}"
    );
    let out = env
        .command(&["doctor", "--json"])
        .env_remove("FRONTEND_BASE_URL")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["ok"], true);
    let check = report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == "FRONTEND_BASE_URL"))
        .expect("the FRONTEND_BASE_URL check");
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["warning"], true, "{check}");
}

/// Without `JWT_SECRET` the embedded default's file is used (CONTRACT §22): fine for one
/// machine, so a warning that names the file and the fix for several instances.
#[tokio::test]
async fn doctor_fails_with_the_fix_for_pending_migrations_and_warns_about_the_secret_file() {
    let env = Env::new().await;
    let out = env
        .command(&["doctor"])
        .env_remove("JWT_SECRET")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    let line = |name: &str| {
        report
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in\n{report}"))
            .to_owned()
    };
    assert!(
        line("migrations").starts_with("FAIL") && line("migrations").contains("langcamp migrate"),
        "{report}"
    );
    assert!(
        line("JWT_SECRET").starts_with("warn")
            && line("JWT_SECRET").contains("secret.key")
            && line("JWT_SECRET").contains("fix: for several instances set JWT_SECRET"),
        "{report}"
    );
    assert!(line("database").starts_with("ok"), "{report}");
    assert_stderr_names(&out, "migrations");
}

#[tokio::test]
async fn unreachable_servers_are_named_with_host_port_and_cause() {
    let env = Env::new().await;
    let out = env
        .command(&["doctor", "--json"])
        .env("DATABASE_URL", REFUSED_DB)
        .env("MAIL_HOST", "127.0.0.1")
        .env("MAIL_PORT", "9")
        .env("MAIL_SECURE", "none")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let report = checks(&out);
    let find = |name: &str| {
        report
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("no {name} in {report:?}"))
            .clone()
    };
    let (_, ok, database) = find("database");
    assert!(
        !ok && database.contains("127.0.0.1:9") && database.contains("refused"),
        "{database}"
    );
    assert!(
        !database.contains("topsecret"),
        "the password leaked: {database}"
    );
    let (_, ok, mail) = find("mail");
    assert!(!ok && mail.contains("127.0.0.1:9"), "{mail}");
    // The file store does not need the database: it is still checked.
    assert!(find("fileStore").1);

    // Every other command says the same instead of "service temporarily unavailable".
    let out = env
        .command(&["users", "list"])
        .env("DATABASE_URL", REFUSED_DB)
        .output()
        .expect("run");
    // 75 (EX_TEMPFAIL): the server may come back, the same command may then succeed.
    assert_eq!(out.status.code(), Some(75));
    let message = text(&out.stderr);
    assert!(
        message.contains("PostgreSQL at 127.0.0.1:9") && message.contains("refused"),
        "{message}"
    );
    assert!(!message.contains("topsecret"), "{message}");
}

#[tokio::test]
async fn backup_copies_a_live_sqlite_database_that_the_cli_opens_and_refuses_postgres() {
    let env = Env::migrated().await;
    let created = env.run(&["users", "create", "kept@example.com", "--name", "Kept"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let copy = env.db.dir().join("copy.db");
    let copy_arg = copy.to_string_lossy().into_owned();
    let out = env.run(&["backup", &copy_arg]);
    if env.is_postgres() {
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert_stderr_names(&out, "pg_dump");
        assert!(!copy.exists());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = env
        .command(&["users", "list", "--json"])
        .env("DATABASE_URL", format!("sqlite://{copy_arg}"))
        .output()
        .expect("run");
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    assert!(text(&listed.stdout).contains("kept@example.com"));

    // Written as copy.db.partial and renamed once whole: nothing is left beside it.
    assert!(!env.db.dir().join("copy.db.partial").exists());
    assert!(!env.db.dir().join("copy.db.partial-journal").exists());

    // A backup never overwrites.
    let again = env.run(&["backup", &copy_arg]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("already exists"));

    // What a killed backup left is named, never reused.
    let left = env.db.dir().join("killed.db.partial");
    std::fs::write(&left, b"half a database").expect("write");
    let killed = env.db.dir().join("killed.db");
    let out = env.run(&["backup", &killed.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1));
    assert_stderr_names(&out, "killed.db.partial exists");
    assert!(!killed.exists());
}

/// `langcamp export`: the list's rows as CSV with its filters, to stdout or to a new file
/// (written whole or not at all); a bad filter is a usage error.
#[tokio::test]
async fn export_writes_a_list_as_csv_to_stdout_or_a_new_file() {
    let env = Env::migrated().await;
    for (email, name, role) in [
        ("ana@example.com", "Ana, \"Nina\"", "user"),
        ("head@example.com", "=Head", "admin"),
    ] {
        let created = env.run(&["users", "create", email, "--name", name, "--role", role]);
        assert!(created.status.success(), "{}", text(&created.stderr));
    }
    let out = env.run(&["export", "users", "--role", "user"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    assert!(csv.starts_with("\u{feff}id,email,name,role,"), "{csv}");
    assert_eq!(csv.matches("\r\n").count(), 2, "the header and Ana: {csv}");
    assert!(
        csv.contains(",ana@example.com,\"Ana, \"\"Nina\"\"\",user,true,"),
        "{csv}"
    );

    let file = env.db.dir().join("users.csv");
    let file_arg = file.to_string_lossy().into_owned();
    let out = env.run(&["export", "users", "--out", &file_arg, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let written = std::fs::read(&file).expect("the file");
    assert_eq!(report["bytes"], written.len());
    let written = String::from_utf8(written).expect("UTF-8");
    assert!(
        written.contains(",head@example.com,'=Head,admin,"),
        "{written}"
    );
    assert!(!env.db.dir().join("users.csv.partial").exists());

    let again = env.run(&["export", "users", "--out", &file_arg]);
    assert_eq!(again.status.code(), Some(1));
    assert_stderr_names(&again, "already exists");
    let bad = env.run(&["export", "results", "--target-language", "not a tag"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
    let contacts = env.run(&["export", "contacts", "--status", "CLOSED"]);
    assert!(contacts.status.success(), "{}", text(&contacts.stderr));
    assert_eq!(
        text(&contacts.stdout).matches("\r\n").count(),
        1,
        "only the header"
    );
}

/// A long command draws its progress bar only for a person at a terminal: piped (as
/// here, stdout and stderr both) or with `--json`, stdout holds the result alone and
/// stderr nothing at all (`RUST_LOG=warn`).
#[tokio::test]
async fn long_commands_print_no_progress_when_piped_or_with_json() {
    let env = Env::migrated().await;
    let piped = env.db.dir().join("piped.db").to_string_lossy().into_owned();
    let json = env.db.dir().join("json.db").to_string_lossy().into_owned();
    // No file is recorded, so the object store is never called: no S3 server needed.
    let to = ["storage", "migrate", "--to", "s3://langcamp-nowhere/files"];
    let mut runs: Vec<Vec<&str>> = vec![
        vec!["stats", "rebuild"],
        vec!["stats", "rebuild", "--json"],
        to.to_vec(),
        [&to[..], &["--json"]].concat(),
    ];
    if !env.is_postgres() {
        runs.push(vec!["backup", &piped]);
        runs.push(vec!["backup", &json, "--json"]);
    }
    for args in runs {
        let out = env
            .command(&args)
            .env("S3_ENDPOINT", "http://127.0.0.1:9")
            .env("S3_ACCESS_KEY_ID", "langcamp-test")
            .env("S3_SECRET_ACCESS_KEY", "langcamp-test-secret")
            .output()
            .expect("run langcamp");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{args:?} wrote to stderr");
        let stdout = text(&out.stdout);
        assert!(
            !stdout.contains(['\r', '\u{1b}']),
            "{args:?} redrew a line: {stdout:?}"
        );
        if args.contains(&"--json") {
            serde_json::from_slice::<Value>(&out.stdout)
                .unwrap_or_else(|e| panic!("{args:?} printed more than JSON ({e}): {stdout}"));
        } else {
            assert_eq!(stdout.lines().count(), 1, "{args:?}: {stdout}");
        }
    }
}

/// deploy/langcamp.env.example, the file an operator copies to /etc/langcamp, names every
/// variable of the README's configuration table.
#[test]
fn the_env_example_names_every_configuration_variable() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let example =
        std::fs::read_to_string(root.join("deploy/langcamp.env.example")).expect("env example");
    let table = readme
        .split("## Configuration")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the README's configuration section");
    let variables: Vec<&str> = table
        .lines()
        .filter_map(|row| row.strip_prefix("| "))
        .filter_map(|row| row.split(" |").next())
        .flat_map(|cell| cell.split(", "))
        .filter_map(|name| name.strip_prefix('`')?.strip_suffix('`'))
        .collect();
    assert!(variables.len() > 25, "{variables:?}");
    for name in variables {
        let set = example.lines().any(|line| {
            line.trim_start_matches('#')
                .strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('='))
        });
        assert!(set, "{name} is missing from deploy/langcamp.env.example");
    }
}

#[test]
fn a_bad_log_format_is_a_usage_error_naming_the_variable() {
    let out = Command::new(env!("CARGO_BIN_EXE_langcamp"))
        .args(["migrate"])
        .env("LOG_FORMAT", "yaml")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("LOG_FORMAT"));
}

/// Starts `langcamp serve` on a free port and returns it with its stderr lines.
fn serve(
    env: &Env,
    json: bool,
) -> (
    std::process::Child,
    u16,
    std::io::Lines<BufReader<std::process::ChildStderr>>,
) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut command = env.command(&["serve"]);
    command
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("RUST_LOG", "info,sqlx=warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if json {
        command.env("LOG_FORMAT", "json");
    }
    let mut child = command.spawn().expect("start langcamp serve");
    let lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    (child, port, lines)
}

fn get(port: u16, path: &str, request_id: &str) -> String {
    for _ in 0..200 {
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let request = format!(
                "GET {path} HTTP/1.1\r\nHost: t\r\nX-Request-Id: {request_id}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).expect("send");
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            return answer;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server did not start");
}

#[tokio::test]
async fn json_logs_are_one_object_a_line_with_the_request_id() {
    let env = Env::new().await;
    let (mut child, port, mut lines) = serve(&env, true);
    let answer = get(port, "/courses/not-a-course", "trace-json-1");
    assert!(answer.contains("x-request-id: trace-json-1"), "{answer}");
    let mut access = None;
    for line in lines.by_ref() {
        let line = line.expect("a log line");
        let value: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        if value["request_id"] == "trace-json-1" {
            access = Some(value);
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let access = access.expect("the access line");
    assert_eq!(access["route"], "/courses/{id}", "{access}");
    assert_eq!(access["status"], 404, "{access}");
    assert_eq!(access["method"], "GET", "{access}");
    assert_eq!(access["client"], "127.0.0.1", "{access}");
    assert!(access["latency_ms"].is_number(), "{access}");
    assert!(
        access["timestamp"].is_string() && access["level"] == "INFO",
        "{access}"
    );
}

#[tokio::test]
async fn text_logs_carry_no_colour_codes_when_not_on_a_terminal() {
    let env = Env::new().await;
    let (mut child, port, mut lines) = serve(&env, false);
    get(port, "/courses", "trace-text-1");
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("a log line");
        let done = line.contains("trace-text-1");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let log = seen.join("\n");
    assert!(log.contains("trace-text-1"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "escape codes in a piped log:\n{log}"
    );
}

#[tokio::test]
async fn storage_migrate_copies_the_local_files_into_an_object_store_once() {
    use langcamp_core::domain::Id;
    use langcamp_core::storage::Accept;
    use langcamp_core::{Actor, Clock, Config, Langcamp};

    let Some(endpoint) = s3::endpoint() else {
        s3::skip();
        return;
    };
    let env = Env::migrated().await;
    let bucket = s3::create_bucket(&endpoint);
    let s3_vars = [
        ("S3_ENDPOINT", endpoint.clone()),
        ("S3_ACCESS_KEY_ID", "langcamp-test".to_owned()),
        ("S3_SECRET_ACCESS_KEY", "langcamp-test-secret".to_owned()),
    ];
    let lookup = |store: Option<String>| {
        let vars: Vec<(String, String)> = [
            ("DATA_DIR", env.db.dir().to_string_lossy().into_owned()),
            ("DATABASE_URL", env.db.url().to_owned()),
            ("JWT_SECRET", "operator-test-secret-0123456789".to_owned()),
        ]
        .into_iter()
        .chain(s3_vars.iter().cloned())
        .chain(store.map(|s| ("FILE_STORE", s)))
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        Config::from_lookup(move |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
        .expect("configuration")
    };

    // Two files stored on the local disk.
    let local = Langcamp::connect(lookup(None), Clock::System)
        .await
        .expect("connect");
    let contents = [
        b"%PDF-1.4\nthe first file\n".to_vec(),
        b"%PDF-1.7\nthe second file, a little longer\n".to_vec(),
    ];
    let mut ids = Vec::new();
    for content in &contents {
        let chunks = futures_util::stream::iter(vec![Ok::<_, langcamp_core::Error>(
            bytes::Bytes::from(content.clone()),
        )]);
        let staged = local
            .stage_file(&Actor::Anonymous, Accept::AnyAllowed, Some("f.pdf"), chunks)
            .await
            .expect("staged");
        let stored = local
            .save_upload(&Actor::Anonymous, staged)
            .await
            .expect("stored");
        ids.push(stored.id);
    }
    local.db().close().await;

    let target = format!("s3://{bucket}/files");
    let migrate = |env: &Env| {
        let mut command = env.command(&["storage", "migrate", "--to", &target, "--json"]);
        for (name, value) in &s3_vars {
            command.env(name, value);
        }
        command.output().expect("run langcamp")
    };
    let out = migrate(&env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // No progress bar off a terminal (the report alone on stdout, nothing on stderr).
    assert_eq!(text(&out.stderr), "");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["to"], target.as_str());
    assert_eq!(report["report"]["files"], 2, "{report}");
    assert_eq!(report["report"]["copied"], 2, "{report}");
    assert_eq!(report["report"]["alreadyPresent"], 0, "{report}");
    let total: usize = contents.iter().map(Vec::len).sum();
    assert_eq!(report["report"]["bytesCopied"], total, "{report}");

    // Again: nothing left to copy.
    let out = migrate(&env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["report"]["copied"], 0, "{report}");
    assert_eq!(report["report"]["alreadyPresent"], 2, "{report}");

    // Switched to the object store, with the local files gone, every file reads back.
    std::fs::remove_dir_all(env.db.dir().join("files")).expect("remove the local files");
    let remote = Langcamp::connect(lookup(Some(target.clone())), Clock::System)
        .await
        .expect("connect");
    for (id, content) in ids.iter().zip(&contents) {
        let meta = remote
            .stored_file(&Actor::Anonymous, &Id::from(id))
            .await
            .expect("recorded");
        let mut stream = remote.read_stored_file(&meta, None).await.expect("read");
        let mut read = Vec::new();
        while let Some(chunk) = futures_util::StreamExt::next(&mut stream).await {
            read.extend_from_slice(&chunk.expect("chunk"));
        }
        assert_eq!(&read, content);
    }
    remote.db().close().await;

    // With the local files gone a run still passes: everything is in the target already.
    let out = migrate(&env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A target that is not an object store, or not a valid one, is a usage error.
    let out = env.run(&["storage", "migrate", "--to", "local"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = env.run(&["storage", "migrate", "--to", "s3://No_Such"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_stderr_names(&out, "FILE_STORE");
}

#[tokio::test]
async fn doctor_names_the_s3_settings_when_the_object_store_is_unreachable() {
    let env = Env::migrated().await;
    let out = env
        .command(&["doctor", "--json"])
        .env("FILE_STORE", "s3://langcamp-files/prod")
        // The discard port: nothing listens, connections are refused at once.
        .env("S3_ENDPOINT", "http://127.0.0.1:9")
        .env("S3_ACCESS_KEY_ID", "AKIDDOCTOR")
        .env("S3_SECRET_ACCESS_KEY", "doctor-secret-value")
        .output()
        .expect("run langcamp");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let (_, ok, check) = checks(&out)
        .into_iter()
        .find(|(name, _, _)| name == "fileStore")
        .expect("a fileStore check");
    assert!(!ok, "{check}");
    assert!(
        check.contains("S3_ENDPOINT"),
        "the fix names the settings: {check}"
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains("doctor-secret-value"), "{all}");

    let out = env
        .command(&["doctor"])
        .env("FILE_STORE", "s3://Not_A_Bucket")
        .output()
        .expect("run langcamp");
    assert_ne!(out.status.code(), Some(0));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("FILE_STORE"),
        "a bad value names its variable: {all}"
    );
}

/// `langcamp keys reseal` (CONTRACT §22) after a rotation: a TOTP secret sealed under the
/// old secret is sealed again under the new one, and the old one can go.
#[tokio::test]
async fn keys_reseal_seals_under_the_new_secret_and_says_when_the_old_one_can_go() {
    use langcamp_core::auth::{FactorName, OtpCode, OtpSignIn, OtpVerifyInput};
    use langcamp_core::{Actor, Clock, Config, Langcamp};

    const OLD: &str = "the-old-server-secret-0123456789";
    const NEW: &str = "the-new-server-secret-0123456789";
    let env = Env::migrated().await;
    // A user with a TOTP factor, sealed under the old secret.
    let vars = langcamp_testkit::database::process_vars(env.db.url(), env.db.dir());
    let config = Config::from_lookup(|name| match name {
        "JWT_SECRET" => Some(OLD.to_owned()),
        _ => vars(name),
    })
    .expect("a configuration");
    let core = Langcamp::connect(config, Clock::System)
        .await
        .expect("connected");
    // Ana signs in with a code, as `POST /auth/otp/verify` would.
    let now = core.clock().now_ms();
    let mut conn = core.db().writer_connection().await.expect("a connection");
    let hash = core.keys().otp_hash("ana@example.com", "135790");
    langcamp_testkit::database::store_sign_in_code(&mut conn, "ana@example.com", &hash, now).await;
    drop(conn);
    let sign_in = OtpSignIn::try_from(OtpVerifyInput {
        email: Some("ana@example.com".into()),
        code: Some("135790".into()),
    })
    .expect("a sign-in");
    let signed_in = core.verify_otp(sign_in, None).await.expect("signed in");
    let ana = Actor::User(
        core.authenticate(&signed_in.access_token)
            .await
            .expect("a caller"),
    );
    let enrolment = core
        .start_totp(&ana, FactorName::parse("name", "Phone").expect("a name"))
        .await
        .expect("started");
    let code =
        langcamp_core::auth::totp::code_from_base32(&enrolment.secret, core.clock().now_ms())
            .expect("a code");
    core.confirm_totp(
        &ana,
        &enrolment.id,
        OtpCode::parse(Some(&code)).expect("6 digits"),
    )
    .await
    .expect("confirmed");
    core.db().close().await;

    let reseal = |previous: &str| {
        env.command(&["keys", "reseal", "--json"])
            .env("JWT_SECRET", NEW)
            .env("JWT_SECRET_PREVIOUS", previous)
            .output()
            .expect("run")
    };
    let out = reseal(OLD);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let first: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    // The TOTP secret, and the two security notices queued with it (no mail worker ran).
    assert_eq!(
        first,
        json!({ "resealed": 3, "needPrevious": 0, "unreadable": 0 })
    );
    let again: Value = serde_json::from_slice(&reseal(OLD).stdout).expect("JSON");
    assert_eq!(
        again,
        json!({ "resealed": 0, "needPrevious": 0, "unreadable": 0 })
    );
    let out = env
        .command(&["keys", "reseal"])
        .env("JWT_SECRET", NEW)
        .output()
        .expect("run");
    assert!(
        text(&out.stdout).contains("JWT_SECRET_PREVIOUS can go"),
        "{}",
        text(&out.stdout)
    );
}

/// `langcamp webhooks list` (CONTRACT §24): each endpoint with its events and how its
/// deliveries stand.
#[tokio::test]
async fn webhooks_list_shows_each_endpoint_and_its_deliveries() {
    use langcamp_core::contacts::{ContactInput, NewContact};
    use langcamp_core::webhooks::{EndpointInput, NewEndpoint};
    use langcamp_core::{Actor, Clock, Config, Langcamp};

    let env = Env::migrated().await;
    let out = env.run(&["webhooks", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("No webhook endpoints"),
        "{}",
        text(&out.stdout)
    );

    let vars = langcamp_testkit::database::process_vars(env.db.url(), env.db.dir());
    let config = Config::from_lookup(vars).expect("a configuration");
    let core = Langcamp::connect(config, Clock::System)
        .await
        .expect("connected");
    let new = NewEndpoint::try_from(EndpointInput {
        url: Some("https://crm.school.example/hooks".into()),
        events: Some(vec!["contact.created".into()]),
        description: Some("The CRM".into()),
    })
    .expect("a valid endpoint");
    let endpoint = core
        .create_webhook(&Actor::Operator, new)
        .await
        .expect("created");
    for n in 0..2 {
        let contact = NewContact::try_from(ContactInput {
            first_name: Some(format!("Visitor{n}")),
            last_name: Some("Lind".into()),
            email: Some("visitor@example.com".into()),
            message: Some("Hello".into()),
            ..ContactInput::default()
        })
        .expect("a contact");
        core.create_contact(&Actor::Anonymous, contact)
            .await
            .expect("stored");
    }
    core.db().close().await;

    let out = env.run(&["webhooks", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(listed[0]["id"], endpoint.id.as_str());
    assert_eq!(listed[0]["url"], "https://crm.school.example/hooks");
    assert_eq!(listed[0]["events"], json!(["contact.created"]));
    assert_eq!(listed[0]["pending"], 2);
    assert_eq!(listed[0]["delivered"], 0);
    assert!(listed[0].get("secret").is_none(), "{listed}");
    let out = env.run(&["webhooks", "list"]);
    let shown = text(&out.stdout);
    assert!(
        shown.contains("https://crm.school.example/hooks"),
        "{shown}"
    );
    assert!(
        shown.contains("2 pending, 0 delivered, 0 failed"),
        "{shown}"
    );
    assert!(shown.contains("The CRM"), "{shown}");

    // doctor counts them; an endpoint nobody has tried yet is not resting.
    let out = env.run(&["doctor", "--json"]);
    let webhooks = checks(&out)
        .into_iter()
        .find(|(name, _, _)| name == "webhooks")
        .expect("a webhooks line");
    assert!(webhooks.1, "{}", webhooks.2);
    assert!(
        webhooks.2.contains(
            r#""detail":"1 endpoint(s), 2 deliveries pending, 0 failed in the last 30 days""#
        ),
        "{}",
        webhooks.2
    );
}
