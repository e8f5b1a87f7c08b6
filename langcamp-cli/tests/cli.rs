//! The real `langcamp` binary against a fresh database: SQLite, or PostgreSQL when
//! `TEST_DATABASE_URL` names a server.

mod common;

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use sqlx::Connection;

use common::Env;

impl Env {
    async fn new() -> Env {
        Env::create("lc_cli").await
    }

    /// A database with the schema in place.
    async fn migrated() -> Env {
        let env = Env::new().await;
        env.json(&["migrate", "--json"]);
        env
    }

    fn run(&self, args: &[&str]) -> Output {
        self.langcamp(args)
            .env_remove("JWT_SECRET")
            .output()
            .expect("run langcamp")
    }

    /// Runs one statement on the database directly, as something outside the service.
    async fn execute(&self, statement: &'static str) {
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(self.db.url())
            .await
            .expect("connect");
        sqlx::Executor::execute(&mut conn, statement)
            .await
            .expect(statement);
        conn.close().await.expect("close");
    }

    /// The number `query` counts, read directly.
    async fn count(&self, query: &'static str) -> i64 {
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(self.db.url())
            .await
            .expect("connect");
        let (n,): (i64,) = sqlx::query_as(query)
            .fetch_one(&mut conn)
            .await
            .expect(query);
        conn.close().await.expect("close");
        n
    }

    /// Rows of `table` whose `column` (epoch milliseconds) is in `[from, to)`.
    async fn count_between(&self, table: &str, column: &str, from: i64, to: i64) -> i64 {
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(self.db.url())
            .await
            .expect("connect");
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE {column} >= $1 AND {column} < $2");
        let (n,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(from)
            .bind(to)
            .fetch_one(&mut conn)
            .await
            .expect("count");
        conn.close().await.expect("close");
        n
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e})"))
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn migrate_applies_once_then_reports_nothing_new() {
    let env = Env::new().await;
    let first = env.json(&["migrate", "--json"]);
    assert!(first["applied"].as_array().is_some_and(|a| !a.is_empty()));
    let second = env.json(&["migrate", "--json"]);
    assert_eq!(second["applied"], serde_json::json!([]));
}

#[tokio::test]
async fn operators_create_promote_list_and_delete_users() {
    let env = Env::migrated().await;
    let created = env.json(&[
        "users",
        "create",
        "Ana@Example.com",
        "--name",
        "Ana Silva",
        "--json",
    ]);
    assert_eq!(created["email"], "ana@example.com");
    assert_eq!(created["role"], "user");
    assert_eq!(created["isRegistrationComplete"], true);

    let promoted = env.json(&[
        "users",
        "set-role",
        "ana@example.com",
        "admin",
        "--yes",
        "--json",
    ]);
    assert_eq!(promoted["role"], "admin");
    let admins = env.json(&["users", "list", "--role", "admin", "--json"]);
    assert_eq!(admins["pagination"]["totalItems"], 1);
    assert_eq!(admins["list"][0]["email"], "ana@example.com");

    let unknown_role = env.run(&["users", "set-role", "ana@example.com", "emperor", "--yes"]);
    assert_eq!(unknown_role.status.code(), Some(2));
    assert!(
        stderr(&unknown_role).contains("emperor"),
        "{}",
        stderr(&unknown_role)
    );

    let duplicate = env.run(&["users", "create", "ana@example.com"]);
    assert_eq!(duplicate.status.code(), Some(1));
    assert_eq!(
        stderr(&duplicate).trim().lines().count(),
        1,
        "one clear line: {}",
        stderr(&duplicate)
    );
    assert!(stderr(&duplicate).contains("already exists"));

    let missing = env.run(&["users", "delete", "nobody@example.com", "--yes"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("not found"));

    let unconfirmed = env.run(&["users", "delete", "ana@example.com"]);
    assert_eq!(
        unconfirmed.status.code(),
        Some(2),
        "no terminal and no --yes"
    );
    assert!(stderr(&unconfirmed).contains("--yes"));
    assert_eq!(
        env.json(&["users", "list", "--json"])["pagination"]["totalItems"],
        1,
        "nothing deleted"
    );

    let deleted = env.json(&["users", "delete", "ana@example.com", "--yes", "--json"]);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(
        env.json(&["users", "list", "--json"])["pagination"]["totalItems"],
        0
    );
}

#[tokio::test]
async fn the_last_superadmin_cannot_be_demoted_from_the_command_line() {
    let env = Env::migrated().await;
    env.json(&[
        "users",
        "create",
        "root@example.com",
        "--role",
        "superadmin",
        "--json",
    ]);
    let out = env.run(&["users", "set-role", "root@example.com", "user", "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("last superadmin"));
}

#[tokio::test]
async fn settings_are_read_and_written_as_json() {
    let env = Env::migrated().await;
    let set = env.json(&[
        "settings",
        "set",
        "landing_video_url",
        "\"https://videos.example/intro.mp4\"",
        "--json",
    ]);
    assert_eq!(set["value"], "https://videos.example/intro.mp4");
    let out = env.run(&["settings", "get", "landing_video_url"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "\"https://videos.example/intro.mp4\""
    );
    env.json(&["settings", "set", "levels", "{\"max\": 6}", "--json"]);
    assert_eq!(
        env.json(&["settings", "list", "--json"])
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    let not_json = env.run(&["settings", "set", "levels", "{oops"]);
    assert_eq!(not_json.status.code(), Some(2));
    assert!(stderr(&not_json).contains("JSON"));
    let bad_key = env.run(&["settings", "set", "Bad Key", "1"]);
    assert_eq!(bad_key.status.code(), Some(1));
    let missing = env.run(&["settings", "get", "nothing_here"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("not found"));
}

#[tokio::test]
async fn seeding_twice_creates_nothing_the_second_time() {
    let env = Env::new().await;
    let first = env.json(&["seed", "--demo", "--json"]);
    for (kind, minimum) in [
        ("users", 10),
        ("courses", 5),
        ("tests", 3),
        ("results", 10),
        ("materials", 2),
        ("contacts", 4),
    ] {
        assert!(
            first[kind].as_u64().unwrap_or(0) >= minimum,
            "{kind}: {first}"
        );
    }
    let second = env.json(&["seed", "--demo", "--json"]);
    for kind in [
        "settings",
        "users",
        "courses",
        "tests",
        "results",
        "materials",
        "assignments",
        "contacts",
    ] {
        assert_eq!(second[kind], 0, "{kind} created again: {second}");
    }
    let users = env.json(&["users", "list", "--json"]);
    assert_eq!(users["pagination"]["totalItems"], first["users"]);
    let video = env.run(&["settings", "get", "landing_video_url"]);
    assert!(String::from_utf8_lossy(&video.stdout).contains("https://"));
}

/// The demo is laid out relative to the day it is seeded: whenever that is, the school
/// shows activity in the last 30 days, no less than in the 30 before (CONTRACT §14).
#[tokio::test]
async fn the_demo_school_is_active_in_the_last_30_days_whenever_it_is_seeded() {
    let env = Env::new().await;
    env.json(&["seed", "--demo", "--json"]);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let day_ms = 24 * 3600 * 1000_i64;
    for (table, column) in [
        ("users", "created_at"),
        ("test_results", "completed_at"),
        ("education_materials", "created_at"),
        ("material_assignments", "assigned_at"),
        ("contacts", "created_at"),
    ] {
        let last_30 = env
            .count_between(table, column, now_ms - 30 * day_ms, now_ms)
            .await;
        let before = env
            .count_between(table, column, now_ms - 60 * day_ms, now_ms - 30 * day_ms)
            .await;
        assert!(last_30 > 0, "{table}: nothing in the last 30 days");
        assert!(
            last_30 >= before,
            "{table}: {last_30} in the last 30 days, {before} in the 30 before"
        );
    }
}

#[tokio::test]
async fn stats_check_reports_drift_and_rebuild_repairs_it() {
    let env = Env::new().await;
    env.json(&["seed", "--demo", "--json"]);
    let clean = env.json(&["stats", "check", "--json"]);
    assert_eq!(clean["drift"], serde_json::json!([]));

    // One row of the count (PostgreSQL keeps a count in shards, migration 0080).
    let damage = if std::env::var("TEST_DATABASE_URL").is_ok() {
        "UPDATE stats_counts SET n = n + 3 WHERE name = 'assignments'
         AND shard = (SELECT MIN(shard) FROM stats_counts WHERE name = 'assignments')"
    } else {
        "UPDATE stats_counts SET n = n + 3 WHERE name = 'assignments'"
    };
    env.execute(damage).await;
    let out = env.run(&["stats", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("stats_counts assignments: stored ["),
        "{report}"
    );
    assert!(
        stderr(&out).contains("langcamp stats rebuild"),
        "{}",
        stderr(&out)
    );

    let rebuilt = env.json(&["stats", "rebuild", "--json"]);
    assert_eq!(rebuilt["rebuilt"], true);
    assert_eq!(rebuilt["drift"][0]["key"], "assignments");
    let stored = rebuilt["drift"][0]["stored"][0].as_i64().unwrap_or(0);
    let recounted = rebuilt["drift"][0]["recounted"][0].as_i64().unwrap_or(0);
    assert_eq!(stored, recounted + 3, "{rebuilt}");
    let clean = env.json(&["stats", "check", "--json"]);
    assert_eq!(clean["drift"], serde_json::json!([]));
}

#[test]
fn openapi_prints_a_valid_document() {
    let out = Command::new(env!("CARGO_BIN_EXE_langcamp"))
        .arg("openapi")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    assert!(doc["paths"]["/auth/otp/request"].is_object());
}

#[test]
fn help_is_available_everywhere_with_examples() {
    for args in [
        vec!["--help"],
        vec!["users", "--help"],
        vec!["users", "set-role", "--help"],
        vec!["serve", "--help"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_langcamp"))
            .args(&args)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_langcamp"))
        .args(["users", "delete", "--help"])
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Example"));
}

/// The commands `langcamp --help` lists, from its "Commands:" section.
fn listed_commands() -> Vec<String> {
    let help = run_bare(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    String::from_utf8_lossy(&help.stdout)
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn run_bare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_langcamp"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run langcamp")
}

/// The completion scripts and the man page come from the parser's own definition, so
/// each names every command `--help` lists (langcamp-cli/src/completions.rs checks
/// every command at every depth).
#[test]
fn completions_and_the_man_page_name_every_command() {
    let commands = listed_commands();
    assert!(
        ["serve", "backup", "completions", "man"]
            .iter()
            .all(|c| commands.iter().any(|listed| listed == c)),
        "{commands:?}"
    );

    let bash = run_bare(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0), "{}", stderr(&bash));
    let script = String::from_utf8_lossy(&bash.stdout).into_owned();
    let words: Vec<&str> = script
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .collect();
    for command in &commands {
        assert!(words.contains(&command.as_str()), "bash: {command}");
    }
    assert!(script.contains("complete -F _langcamp"), "{script}");
    for shell in ["zsh", "fish", "powershell"] {
        let out = run_bare(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("serve"),
            "{shell}"
        );
    }
    assert_eq!(run_bare(&["completions", "tcsh"]).status.code(), Some(2));

    let man = run_bare(&["man"]);
    assert_eq!(man.status.code(), Some(0), "{}", stderr(&man));
    let page = String::from_utf8_lossy(&man.stdout).into_owned();
    let title = page.lines().next().unwrap_or_default();
    assert!(title.starts_with(".TH LANGCAMP 1 "), "{title}");
    // clap's `help` command is left out: the page itself is the help.
    for command in commands.iter().filter(|c| *c != "help") {
        let usage = format!("\\fBlangcamp {}", command.replace('-', "\\-"));
        assert!(page.contains(&usage), "man: {command}");
    }
}

/// Scripts tell "run it again later" from "this failed": with the database server down,
/// every command exits 75 (EX_TEMPFAIL) and names the server and the cause; a missing
/// thing stays 1 and a wrong command line 2.
#[tokio::test]
async fn an_unreachable_database_exits_75_naming_the_server_and_the_cause() {
    let env = Env::new().await;
    // Port 1 (tcpmux): nothing listens there, so connections are refused at once.
    let unreachable = "postgres://postgres@127.0.0.1:1/langcamp";
    for args in [&["users", "list"][..], &["seed"], &["migrate", "--json"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_langcamp"))
            .args(args)
            .env("DATABASE_URL", unreachable)
            .env("DATA_DIR", env.db.dir())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("run langcamp");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(75), "{args:?}: {err}");
        assert!(
            err.contains("PostgreSQL at 127.0.0.1:1") && err.contains("refused"),
            "{args:?} names the server and the cause: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed a result");
    }

    env.json(&["migrate", "--json"]);
    let missing = env.run(&["settings", "get", "nothing_here"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    let usage = env.run(&["settings", "set", "levels", "{oops"]);
    assert_eq!(usage.status.code(), Some(2), "{}", stderr(&usage));
}

/// CONTRACT §14 and §16: the templates go out as files and come back in, all or nothing.
#[tokio::test]
async fn mail_templates_export_to_files_and_import_all_or_nothing() {
    let env = Env::migrated().await;
    let dir = env.db.dir().join("templates");
    let dir_arg = dir.display().to_string();
    let exported = env.json(&["mail-templates", "export", &dir_arg, "--json"]);
    assert_eq!(exported["written"].as_array().map(Vec::len), Some(24));
    let otp_de = dir.join("otp.de.mail");
    let text = std::fs::read_to_string(&otp_de).expect("otp.de.mail");
    assert!(text.starts_with("subject: Ihr Anmeldecode"), "{text}");

    let unchanged = env.json(&["mail-templates", "import", &dir_arg, "--json"]);
    assert_eq!(unchanged["stored"], serde_json::json!([]));
    assert_eq!(unchanged["unchanged"].as_array().map(Vec::len), Some(24));

    // One file edited, one broken and one misnamed: nothing is imported, and each problem
    // is named with its file.
    std::fs::write(&otp_de, text.replace("Ihr Anmeldecode", "Ihr Zugangscode")).expect("edit");
    let broken = dir.join("contact_reply.fr.mail");
    std::fs::write(&broken, "subject: Re {{ reply }}\n=== text ===\n{% if %}\n").expect("break");
    std::fs::write(
        dir.join("newsletter.en.mail"),
        "subject: x\n=== text ===\ny\n",
    )
    .expect("add");
    let out = env.run(&["mail-templates", "import", &dir_arg]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("nothing was imported"), "{message}");
    assert!(
        message.contains("contact_reply.fr.mail: text: syntax error"),
        "{message}"
    );
    assert!(
        message.contains("newsletter.en.mail: unknown template kind"),
        "{message}"
    );
    let listed = env.json(&["mail-templates", "list", "--json"]);
    assert!(
        listed
            .as_array()
            .expect("a list")
            .iter()
            .all(|t| t["builtIn"] == true),
        "nothing stored: {listed}"
    );

    std::fs::remove_file(&broken).expect("remove");
    std::fs::remove_file(dir.join("newsletter.en.mail")).expect("remove");
    let imported = env.json(&["mail-templates", "import", &dir_arg, "--json"]);
    assert_eq!(imported["stored"], serde_json::json!(["otp.de"]));
    let listed = env.json(&["mail-templates", "list", "--json"]);
    let otp = listed
        .as_array()
        .expect("a list")
        .iter()
        .find(|t| t["kind"] == "otp" && t["locale"] == "de")
        .cloned()
        .expect("otp.de");
    assert_eq!(otp["builtIn"], false);
    assert_eq!(otp["subject"], "Ihr Zugangscode für {{ schoolName }}");
}

/// CONTRACT §17: the command's writes are the operator's, named by the system user, and the
/// trail comes out as a list or as JSON Lines.
#[tokio::test]
async fn a_role_change_by_the_command_is_recorded_as_the_operator() {
    let env = Env::migrated().await;
    env.json(&[
        "users",
        "create",
        "lea@example.com",
        "--name",
        "Léa",
        "--json",
    ]);
    let out = env
        .langcamp(&["users", "set-role", "lea@example.com", "admin", "--yes"])
        .env("USER", "ops-anna")
        .output()
        .expect("run langcamp");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let listed = env.json(&["audit", "list", "--action", "user.role_changed", "--json"]);
    let entries = listed["list"].as_array().expect("a list");
    assert_eq!(entries.len(), 1, "{listed}");
    let entry = &entries[0];
    assert_eq!(entry["actor"]["type"], "operator");
    assert_eq!(entry["actor"]["email"], "ops-anna");
    assert_eq!(entry["actor"]["id"], Value::Null);
    assert_eq!(entry["target"]["label"], "lea@example.com");
    assert_eq!(
        entry["changes"]["role"],
        serde_json::json!({ "from": "user", "to": "admin" })
    );
    assert_eq!(entry["requestId"], Value::Null);

    let export = env.run(&["audit", "export", "--since", "2000-01-01T00:00:00Z"]);
    assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));
    let lines: Vec<Value> = String::from_utf8_lossy(&export.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    let actions: Vec<&str> = lines.iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(
        actions,
        ["user.created", "user.role_changed"],
        "oldest first"
    );
    let bad = env.run(&["audit", "list", "--since", "last week"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

/// CONTRACT §20: the operator resets the second factors of a colleague who lost them, as
/// the superadmin route does: every factor and recovery code goes, recorded as the
/// operator's. The factors are rows here (two passkeys, three recovery codes): the command
/// needs only that they exist; the console's test adds a TOTP factor through core.
#[tokio::test]
async fn an_operator_resets_the_second_factors_of_a_colleague() {
    const FACTORS: &str = "SELECT COUNT(*) FROM user_factors";
    const CODES: &str = "SELECT COUNT(*) FROM recovery_codes";
    let env = Env::migrated().await;
    env.json(&[
        "users",
        "create",
        "maria@school.example",
        "--role",
        "admin",
        "--name",
        "Maria",
        "--json",
    ]);
    env.execute(
        "INSERT INTO user_factors
             (id, user_id, kind, name, credential_id, passkey, created_at, confirmed_at)
         SELECT 'passkey-' || n.n, users.id, 'passkey', n.name, 'credential-' || n.n, '{}', 0, 0
         FROM users, (SELECT 1 AS n, 'MacBook' AS name UNION ALL SELECT 2, 'Phone') AS n
         WHERE users.email = 'maria@school.example'",
    )
    .await;
    env.execute(
        "INSERT INTO recovery_codes (id, user_id, code_hash, created_at)
         SELECT 'code-' || n.n, users.id, 'hash-' || n.n, 0
         FROM users, (SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3) AS n
         WHERE users.email = 'maria@school.example'",
    )
    .await;
    assert_eq!((env.count(FACTORS).await, env.count(CODES).await), (2, 3));

    let unknown = env.run(&["users", "reset-factors", "nobody@school.example", "--yes"]);
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("not found"),
        "{}",
        stderr(&unknown)
    );
    let unconfirmed = env.run(&["users", "reset-factors", "maria@school.example"]);
    assert_eq!(
        unconfirmed.status.code(),
        Some(2),
        "no terminal and no --yes: {}",
        stderr(&unconfirmed)
    );
    assert!(stderr(&unconfirmed).contains("2 factors (MacBook, Phone) and 3 recovery codes"));
    assert!(stderr(&unconfirmed).contains("--yes"));
    assert_eq!((env.count(FACTORS).await, env.count(CODES).await), (2, 3));

    let out = env
        .langcamp(&[
            "users",
            "reset-factors",
            "Maria@School.example",
            "--yes",
            "--json",
        ])
        .env("USER", "ops-anna")
        .output()
        .expect("run langcamp");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reset: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(reset["email"], "maria@school.example");
    assert_eq!(reset["factorsRemoved"], 2);
    assert_eq!(reset["recoveryCodesRemoved"], 3);
    assert_eq!((env.count(FACTORS).await, env.count(CODES).await), (0, 0));

    let listed = env.json(&["audit", "list", "--action", "user.factors_reset", "--json"]);
    let entries = listed["list"].as_array().expect("a list");
    assert_eq!(entries.len(), 1, "{listed}");
    assert_eq!(entries[0]["actor"]["type"], "operator");
    assert_eq!(entries[0]["actor"]["email"], "ops-anna");
    assert_eq!(entries[0]["target"]["id"], reset["id"]);
    assert_eq!(entries[0]["target"]["label"], "maria@school.example");

    // Again, with nothing left: the route's answer too (the sign-ins end), said plainly.
    let again = env.run(&["users", "reset-factors", "maria@school.example", "--yes"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).trim(),
        "reset the second factors of maria@school.example (no factor and no recovery \
         code); their sign-ins ended and a notice mail is queued"
    );
}

#[tokio::test]
async fn placement_calibrate_reports_every_adaptive_question_and_keeps_those_with_few_answers() {
    let env = Env::new().await;
    env.json(&["seed", "--demo", "--json"]);
    let report = env.json(&["placement", "calibrate", "--json"]);
    assert_eq!(report["tests"], 1, "{report}");
    assert_eq!(report["minAnswers"], 50);
    let questions = report["questions"].as_array().expect("questions");
    assert_eq!(questions.len(), 60);
    assert!(
        questions
            .iter()
            .all(|q| q["calibrated"] == false && q["answers"] == 0)
    );
    assert!(questions.iter().all(|q| q["difficulty"] == q["previous"]));
    // No answers: the test keeps the default slope.
    assert_eq!(report["minSlopeAnswers"], 1000);
    assert_eq!(report["slopes"][0]["calibrated"], false, "{report}");
    assert_eq!(report["slopes"][0]["slope"], 1.0);
    let trail = env.json(&["audit", "list", "--action", "test.calibrated", "--json"]);
    assert_eq!(trail["list"][0]["action"], "test.calibrated", "{trail}");
    assert_eq!(
        trail["list"][0]["target"]["label"],
        "English placement (adaptive)"
    );
    let missing = env.run(&["placement", "calibrate", "--test", "no-such-test"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
}
