//! `langcamp doctor`: checks everything a deployment depends on, one line per check with
//! what to do when it fails. Exit 0 only when every check passes, so it can gate a
//! deployment script. A warning (`warn`, `"warning": true`) is a setting that works but
//! serves people badly, such as mail links without a host; it names the fix and passes. The database, migration and file-store checks are the readiness
//! report of `GET /ready` (`langcamp_core::platform::health`), so both always agree.

use std::time::Duration;

use langcamp_core::platform::config::SecondFactorPolicy;
use langcamp_core::platform::health::{self, Check};
use langcamp_core::{Clock, Config, Langcamp};
use serde::Serialize;

use crate::{Cli, CliError};

/// A database that has not answered in this long is reported as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One line of the report: the check, and the fix when it failed or warns.
#[derive(Debug, Serialize)]
struct Line {
    name: &'static str,
    ok: bool,
    /// Passed, with a fix worth making (`ok` stays true: a warning fails nothing).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    warning: bool,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<&'static str>,
}

impl Line {
    fn from_check(check: Check, fix: &'static str) -> Line {
        Line {
            name: check.name,
            ok: check.ok,
            warning: false,
            fix: (!check.ok).then_some(fix),
            detail: check.detail,
        }
    }

    fn passed(name: &'static str, detail: impl Into<String>) -> Line {
        Line {
            name,
            ok: true,
            warning: false,
            detail: detail.into(),
            fix: None,
        }
    }

    fn failed(name: &'static str, detail: impl Into<String>, fix: &'static str) -> Line {
        Line {
            name,
            ok: false,
            warning: false,
            detail: detail.into(),
            fix: Some(fix),
        }
    }

    fn warned(name: &'static str, detail: impl Into<String>, fix: &'static str) -> Line {
        Line {
            name,
            ok: true,
            warning: true,
            detail: detail.into(),
            fix: Some(fix),
        }
    }
}

pub async fn run(cli: &Cli) -> Result<(), CliError> {
    let lines = match crate::config(cli) {
        Ok(config) => checks(config).await,
        Err(message) => vec![Line::failed(
            "configuration",
            message.to_string(),
            "correct the variable named above (README: Configuration)",
        )],
    };
    let ok = lines.iter().all(|l| l.ok);
    if cli.json {
        crate::print_json(&serde_json::json!({ "ok": ok, "checks": lines }))?;
    } else {
        for line in &lines {
            let status = match (line.ok, line.warning) {
                (false, _) => "FAIL",
                (true, true) => "warn",
                (true, false) => "ok",
            };
            match line.fix {
                None => println!("{status:<5} {:<14} {}", line.name, line.detail),
                Some(fix) => println!("{status:<5} {:<14} {}; fix: {fix}", line.name, line.detail),
            }
        }
    }
    if ok {
        Ok(())
    } else {
        let failed: Vec<&str> = lines.iter().filter(|l| !l.ok).map(|l| l.name).collect();
        // The report is the answer, even when only the database is down: the contract
        // gives doctor 0 (all pass) or 1.
        Err(CliError::failed(format!(
            "{} check(s) failed: {}",
            failed.len(),
            failed.join(", ")
        )))
    }
}

async fn checks(config: Config) -> Vec<Line> {
    let mut lines = vec![Line::passed(
        "configuration",
        format!("read; data directory {}", config.data_dir.display()),
    )];
    lines.push(secret_line(&config));
    lines.push(
        match langcamp_core::platform::mail::check_smtp(&config.mail).await {
            Ok(detail) => Line::passed("mail", detail),
            Err(detail) => Line::failed(
                "mail",
                detail,
                "check MAIL_HOST, MAIL_PORT, MAIL_SECURE, MAIL_USER and MAIL_PASS",
            ),
        },
    );
    lines.push(frontend_line(&config.frontend_base_url));
    lines.push(passkeys_line(config.public_origin.as_deref()));
    lines.push(second_factor_line(config.staff_second_factor));
    lines.push(traces_line().await);

    let url = config.database_url.expose().to_owned();
    let location = health::database_location(&url);
    let store = langcamp_core::platform::file_store::default_store(&config);
    let store_fix = match &config.file_store {
        langcamp_core::platform::config::FileStoreConfig::Local => {
            "make DATA_DIR/files writable by this user, with free space"
        }
        langcamp_core::platform::config::FileStoreConfig::S3(_) => {
            "check FILE_STORE, S3_ENDPOINT, S3_REGION and the S3 credentials, and that the bucket exists and is reachable"
        }
    };
    let store_check = || async {
        match &store {
            Ok(store) => health::file_store_check(store.as_ref()).await,
            Err(e) => Check::fail("fileStore", format!("cannot set up the file store: {e}")),
        }
    };
    let connected =
        tokio::time::timeout(CONNECT_TIMEOUT, Langcamp::connect(config, Clock::System)).await;
    const DB_FIX: &str =
        "check DATABASE_URL and that the database server runs and accepts connections from here";
    match connected {
        Ok(Ok(app)) => {
            let report = app.readiness().await;
            let keys = app.key_counts(&langcamp_core::Actor::Operator).await;
            let webhooks = app.webhook_standings(&langcamp_core::Actor::Operator).await;
            app.db().close().await;
            for check in report.checks {
                let fix = match check.name {
                    "database" => DB_FIX,
                    "migrations" => {
                        "run `langcamp migrate` (or start `langcamp serve`, which migrates)"
                    }
                    "fileStore" => store_fix,
                    _ => "see docs/OPERATIONS.md",
                };
                let mut line = Line::from_check(check, fix);
                if line.name == "database" {
                    line.detail = format!("{location}: {}", line.detail);
                    if !line.ok
                        && let Some(probe) = health::tcp_probe(&url).await
                    {
                        line.detail = format!("{}; {probe}", line.detail);
                    }
                }
                lines.push(line);
            }
            if let Ok(counts) = keys {
                lines.push(keys_line(&counts));
            }
            if let Ok(standings) = webhooks {
                lines.push(webhooks_line(&standings));
            }
        }
        Ok(Err(e)) => {
            lines.push(Line::failed(
                "database",
                health::connect_error(&url, &e).await,
                DB_FIX,
            ));
            lines.push(Line::from_check(store_check().await, store_fix));
        }
        Err(_) => {
            lines.push(Line::failed(
                "database",
                format!(
                    "{location}: no answer within {} s",
                    CONNECT_TIMEOUT.as_secs()
                ),
                DB_FIX,
            ));
            lines.push(Line::from_check(store_check().await, store_fix));
        }
    }
    lines
}

/// Which server secret is in use (CONTRACT §22): `JWT_SECRET`, or the embedded default's
/// file, which is fine for one machine only (every instance must share the secret).
fn secret_line(config: &Config) -> Line {
    const NAME: &str = "JWT_SECRET";
    let previous = match config.jwt_secret_previous.len() {
        0 => String::new(),
        n => format!("; {n} previous in JWT_SECRET_PREVIOUS (run `langcamp keys reseal`)"),
    };
    if let Some(secret) = &config.jwt_secret {
        return Line::passed(
            NAME,
            format!("set, {} characters{previous}", secret.expose().len()),
        );
    }
    let file = config
        .data_dir
        .join(langcamp_core::platform::keyring::SECRET_FILE);
    let detail = match langcamp_core::platform::keyring::read_secret_file(&file) {
        Ok(Some(_)) => format!("not set: the secret kept in {} is used", file.display()),
        Ok(None) => format!("not set: the first start makes {}", file.display()),
        Err(e) => {
            return Line::failed(
                NAME,
                e.to_string(),
                "restore the file from a backup, or set JWT_SECRET",
            );
        }
    };
    Line::warned(
        NAME,
        format!("{detail} (fine for one machine){previous}"),
        "for several instances set JWT_SECRET to a random string of 32+ characters, the same on every instance",
    )
}

/// Stored secrets that still need a previous server secret, or that none opens.
fn keys_line(counts: &langcamp_core::platform::keyring::KeyCounts) -> Line {
    const NAME: &str = "keys";
    if counts.unreadable > 0 {
        Line::warned(
            NAME,
            format!(
                "{} stored value(s) open under no configured secret (a secret was lost); {} need a previous one",
                counts.unreadable, counts.need_previous
            ),
            "reset the factors of the users whose authenticator apps no longer check (`langcamp users reset-factors <email>`); queued mail that cannot open fails unsent",
        )
    } else if counts.need_previous > 0 {
        Line::warned(
            NAME,
            format!(
                "{} stored value(s) still need a previous secret",
                counts.need_previous
            ),
            "run `langcamp keys reseal`; keep JWT_SECRET_PREVIOUS until it reports 0",
        )
    } else {
        Line::passed(
            NAME,
            "every stored secret opens under the current JWT_SECRET",
        )
    }
}

/// Where traces go (CONTRACT §23), and whether the collector takes an export now. An
/// unreachable collector only costs the spans (the server runs, dropping and counting
/// them), so that warns; settings `serve` would refuse to start with fail.
async fn traces_line() -> Line {
    const NAME: &str = "traces";
    let settings = match crate::telemetry::settings_from_env() {
        Ok(Some(settings)) => settings,
        Ok(None) => return Line::passed(NAME, "off (OTEL_EXPORTER_OTLP_ENDPOINT is not set)"),
        Err(e) => {
            return Line::failed(
                NAME,
                e.to_string(),
                "correct the OTEL_* variable named above (docs/OPERATIONS.md, Traces)",
            );
        }
    };
    let what = format!(
        "spans of {} to {}, sampler {}",
        settings.service_name,
        settings.endpoint,
        crate::telemetry::sampler_name(settings.sampler)
    );
    match crate::telemetry::probe(&settings).await {
        Ok(()) => Line::passed(NAME, format!("{what}: the collector takes them")),
        Err(e) => Line::warned(
            NAME,
            format!("{what}: an empty export failed ({e}); spans are dropped while it does"),
            "check that the collector runs and takes OTLP/HTTP protobuf at that URL (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS)",
        ),
    }
}

/// The webhook endpoints (CONTRACT §24): an endpoint resting after failed attempts is not
/// hearing the school's events (its deliveries wait, and fail after 24 hours), so that
/// warns.
fn webhooks_line(standings: &[langcamp_core::webhooks::EndpointStanding]) -> Line {
    const NAME: &str = "webhooks";
    if standings.is_empty() {
        return Line::passed(NAME, "no endpoints");
    }
    let pending: i64 = standings.iter().map(|s| s.pending).sum();
    let failed: i64 = standings.iter().map(|s| s.failed).sum();
    let counts = format!(
        "{} endpoint(s), {pending} deliveries pending, {failed} failed in the last 30 days",
        standings.len()
    );
    let resting: Vec<String> = standings
        .iter()
        .filter_map(|s| {
            s.resting_until.map(|until| {
                format!(
                    "{} resting until {until} after {} failed round(s)",
                    s.endpoint.url, s.failing_rounds
                )
            })
        })
        .collect();
    if resting.is_empty() {
        Line::passed(NAME, counts)
    } else {
        Line::warned(
            NAME,
            format!("{counts}; {}", resting.join("; ")),
            "see `langcamp webhooks list` and the endpoint's delivery log (GET /admin/webhooks/{id}/deliveries): the receiver must answer 2xx within 10 s (docs/OPERATIONS.md, Webhooks)",
        )
    }
}

/// `FRONTEND_BASE_URL`, the base of the links in mail (an assigned material's): unset or
/// without `http(s)://`, a link has no host and no mail reader can open it. The school
/// still runs, so this warns.
fn frontend_line(base: &str) -> Line {
    const NAME: &str = "FRONTEND_BASE_URL";
    const FIX: &str =
        "set FRONTEND_BASE_URL to the address of the school's web app, e.g. https://school.example";
    if base.is_empty() {
        Line::warned(
            NAME,
            "not set: an assignment mail links to /materials/<id>, which no mail reader can open",
            FIX,
        )
    } else if !(base.starts_with("https://") || base.starts_with("http://")) {
        Line::warned(
            NAME,
            format!(
                "{base:?} is no http(s) address: an assignment mail links to {base}/materials/<id>, which no mail reader can open"
            ),
            FIX,
        )
    } else {
        Line::passed(NAME, format!("mail links to {base}/materials/<id>"))
    }
}

/// `PUBLIC_ORIGIN`, the passkeys' relying party (CONTRACT §21): unset, passkeys are off
/// (their routes answer 400); browsers offer passkeys only to `https://` origins and
/// `http://localhost`.
fn passkeys_line(origin: Option<&str>) -> Line {
    const NAME: &str = "PUBLIC_ORIGIN";
    const FIX: &str =
        "set PUBLIC_ORIGIN to the origin the web client runs on, e.g. https://school.example";
    match origin {
        None => Line::warned(
            NAME,
            "not set: passkeys are off (their routes answer 400)",
            FIX,
        ),
        Some(origin)
            if origin.starts_with("http://") && !origin.starts_with("http://localhost") =>
        {
            Line::warned(
                NAME,
                format!(
                    "{origin}: browsers offer passkeys only on https:// origins and http://localhost"
                ),
                FIX,
            )
        }
        Some(origin) => Line::passed(NAME, format!("passkeys for {origin}")),
    }
}

/// `STAFF_SECOND_FACTOR` (CONTRACT §20): `optional` leaves staff accounts protected by
/// their mailbox alone.
fn second_factor_line(policy: SecondFactorPolicy) -> Line {
    match policy {
        SecondFactorPolicy::Required => Line::passed(
            "STAFF_SECOND_FACTOR",
            "required: staff need a second factor",
        ),
        SecondFactorPolicy::Optional => Line::warned(
            "STAFF_SECOND_FACTOR",
            "optional: whoever reads a staff member's mailbox can sign in as them",
            "unset STAFF_SECOND_FACTOR (the default is required) once staff have added a factor",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passkeys_and_the_staff_policy_warn_when_off() {
        assert!(passkeys_line(None).warning);
        assert!(passkeys_line(Some("http://school.example")).warning);
        for origin in ["https://school.example", "http://localhost:5173"] {
            let line = passkeys_line(Some(origin));
            assert!(line.ok && !line.warning, "{line:?}");
        }
        assert!(second_factor_line(SecondFactorPolicy::Optional).warning);
        assert!(!second_factor_line(SecondFactorPolicy::Required).warning);
    }

    fn standing(url: &str, resting: bool) -> langcamp_core::webhooks::EndpointStanding {
        let at = langcamp_core::Timestamp::from_millis(1_800_000_000_000);
        langcamp_core::webhooks::EndpointStanding {
            endpoint: langcamp_core::webhooks::Endpoint {
                id: "e1".into(),
                url: url.into(),
                events: vec![langcamp_core::webhooks::Event::ContactCreated],
                description: None,
                enabled: true,
                created_at: at,
                updated_at: at,
                secret: None,
            },
            pending: 3,
            failed: 1,
            delivered: 5,
            last_delivered_at: None,
            failing_rounds: if resting { 4 } else { 0 },
            resting_until: resting.then_some(at),
        }
    }

    #[test]
    fn webhook_endpoints_are_counted_and_a_resting_one_warns() {
        let none = webhooks_line(&[]);
        assert!(
            none.ok && !none.warning && none.detail == "no endpoints",
            "{none:?}"
        );
        let live = webhooks_line(&[standing("https://crm.example/hooks", false)]);
        assert!(live.ok && !live.warning, "{live:?}");
        assert_eq!(
            live.detail,
            "1 endpoint(s), 3 deliveries pending, 1 failed in the last 30 days"
        );
        let dead = webhooks_line(&[
            standing("https://crm.example/hooks", false),
            standing("https://chat.example/in", true),
        ]);
        assert!(dead.ok && dead.warning, "{dead:?}");
        assert!(
            dead.detail
                .contains("https://chat.example/in resting until")
                && dead.detail.contains("after 4 failed round(s)")
                && !dead.detail.contains("crm.example"),
            "{dead:?}"
        );
        assert!(dead.fix.is_some_and(|f| f.contains("webhooks list")));
    }

    #[test]
    fn a_frontend_address_without_a_host_warns_and_passes() {
        for base in ["", "school.example", "/app"] {
            let line = frontend_line(base);
            assert!(line.ok && line.warning, "{base:?}: {line:?}");
            assert!(line.fix.is_some_and(|f| f.contains("FRONTEND_BASE_URL")));
        }
        for base in ["https://school.example", "http://localhost:5173"] {
            let line = frontend_line(base);
            assert!(line.ok && !line.warning && line.fix.is_none(), "{line:?}");
        }
    }
}
