//! Reading the configuration from a map of variables.

use super::*;
use std::collections::HashMap;

fn load(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_lookup(|name| map.get(name).cloned())
}

/// The trusted proxies, written as CIDRs.
fn proxies(config: &Config) -> Vec<String> {
    config
        .trusted_proxies
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn defaults_follow_the_contract() {
    let config = load(&[]).expect("defaults are valid");
    assert_eq!(config.port, 3000);
    assert_eq!(config.host.to_string(), "0.0.0.0");
    assert_eq!(config.jwt_expiration, Duration::from_secs(900));
    assert_eq!(
        config.jwt_refresh_expiration,
        Duration::from_secs(7 * 86400)
    );
    assert_eq!(config.otp_ttl, Duration::from_secs(600));
    assert_eq!(config.mail.port, 587);
    assert_eq!(config.mail.host, None);
    assert_eq!(config.mail.timeout, Duration::from_secs(30));
    assert_eq!(config.upload_max_bytes, 20 * 1024 * 1024);
    assert_eq!(proxies(&config), ["127.0.0.0/8", "::1/128"]);
    assert_eq!(config.file_store_max_bytes, None);
    assert_eq!(config.shutdown_drain, Duration::from_secs(5));
    assert_eq!(
        config.jwt_secret, None,
        "the secret file's, made at the first start"
    );
    assert!(config.jwt_secret_previous.is_empty());
    assert!(config.database_url.expose().starts_with("sqlite://./data/"));
    assert!(!config.is_postgres());
}

#[test]
fn durations_accept_ms_style_strings() {
    assert_eq!(parse_duration("900"), Some(Duration::from_secs(900)));
    assert_eq!(parse_duration("15m"), Some(Duration::from_secs(900)));
    assert_eq!(parse_duration("12h"), Some(Duration::from_secs(43200)));
    assert_eq!(parse_duration("7d"), Some(Duration::from_secs(604800)));
    assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
    assert_eq!(parse_duration("soon"), None);
    assert_eq!(parse_duration("0"), None);
    assert_eq!(parse_duration("-5m"), None);
}

#[test]
fn the_smtp_timeout_takes_the_duration_syntax() {
    let config = load(&[("MAIL_TIMEOUT", "1500ms")]).expect("valid");
    assert_eq!(config.mail.timeout, Duration::from_millis(1500));
    let config = load(&[("MAIL_TIMEOUT", "2m")]).expect("valid");
    assert_eq!(config.mail.timeout, Duration::from_secs(120));
}

#[test]
fn the_shutdown_drain_takes_the_duration_syntax_and_zero_turns_it_off() {
    for (value, expected) in [
        ("10", Duration::from_secs(10)),
        ("2500ms", Duration::from_millis(2500)),
        ("1m", Duration::from_secs(60)),
        ("0", Duration::ZERO),
        ("0s", Duration::ZERO),
        (" 00ms ", Duration::ZERO),
    ] {
        let config = load(&[("SHUTDOWN_DRAIN", value)]).expect(value);
        assert_eq!(config.shutdown_drain, expected, "{value:?}");
    }
    for bad in ["soon", "-1s", "0 parsecs", "5 parsecs", "1.5s", "s"] {
        let err = load(&[("SHUTDOWN_DRAIN", bad)]).expect_err(bad);
        assert_eq!(err.variable, "SHUTDOWN_DRAIN");
        assert!(err.to_string().contains("SHUTDOWN_DRAIN"), "{err}");
    }
}

#[test]
fn the_pool_size_is_the_default_unless_database_max_connections_is_set() {
    let config = load(&[]).expect("defaults are valid");
    assert_eq!(config.database_max_connections, None);
    assert_eq!(config.pool_size(32), 32);
    let config = load(&[("DATABASE_MAX_CONNECTIONS", " 1 ")]).expect("valid");
    assert_eq!(config.pool_size(32), 1);
    let config = load(&[("DATABASE_MAX_CONNECTIONS", "1000")]).expect("valid");
    assert_eq!(config.pool_size(4), 1000);
    for bad in ["0", "-1", "1001", "ten", "2.5"] {
        let err = load(&[("DATABASE_MAX_CONNECTIONS", bad)]).expect_err(bad);
        assert_eq!(err.variable, "DATABASE_MAX_CONNECTIONS");
        assert!(err.message.contains("1 to 1000"), "{err}");
    }
}

#[test]
fn a_bad_value_names_its_variable() {
    for (name, value) in [
        ("PORT", "eighty"),
        ("JWT_EXPIRATION", "forever"),
        ("OTP_TTL", "10 parsecs"),
        ("MAIL_TIMEOUT", "0s"),
        ("SHUTDOWN_DRAIN", "a while"),
        ("MAIL_SECURE", "maybe"),
        ("TRUSTED_PROXIES", "10.0.0.0/8, proxy.local"),
        ("WEBHOOK_ALLOWED_NETWORKS", "10.0.0.0/8, crm.local"),
        ("FILE_STORE_MAX_BYTES", "0"),
        ("FILE_STORE_MAX_BYTES", "1GB"),
        ("DATABASE_URL", "mysql://x"),
        ("UPLOAD_MAX_BYTES", "-1"),
        ("JWT_SECRET", "short"),
        ("JWT_SECRET_PREVIOUS", "a-long-enough-old-secret,short"),
    ] {
        let err = load(&[(name, value)]).expect_err(name);
        assert_eq!(err.variable, name);
        assert!(err.to_string().contains(name));
    }
}

#[test]
fn the_removed_trust_forwarded_for_stops_start_up_naming_trusted_proxies() {
    for value in ["true", "false", ""] {
        let err = load(&[("TRUST_FORWARDED_FOR", value)]).expect_err(value);
        assert_eq!(err.variable, "TRUST_FORWARDED_FOR");
        assert!(err.to_string().contains("TRUSTED_PROXIES"), "{err}");
    }
}

#[test]
fn trusted_proxies_take_cidrs_and_empty_trusts_nobody() {
    let config =
        load(&[("TRUSTED_PROXIES", "10.0.0.0/8, 2001:db8::/32,192.0.2.7")]).expect("valid");
    assert_eq!(
        proxies(&config),
        ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7/32"]
    );
    let config = load(&[("TRUSTED_PROXIES", "")]).expect("valid");
    assert!(config.trusted_proxies.is_empty());
    let config = load(&[("FILE_STORE_MAX_BYTES", "1048576")]).expect("valid");
    assert_eq!(config.file_store_max_bytes, Some(1 << 20));
}

#[test]
fn previous_secrets_are_a_comma_separated_list() {
    let config = load(&[(
        "JWT_SECRET_PREVIOUS",
        " first-old-secret-0123, second-old-secret-0123 ,",
    )])
    .expect("valid");
    let previous: Vec<&str> = config
        .jwt_secret_previous
        .iter()
        .map(Secret::expose)
        .collect();
    assert_eq!(
        previous,
        ["first-old-secret-0123", "second-old-secret-0123"]
    );
}

#[test]
fn secrets_are_redacted_in_debug_output() {
    let config = load(&[
        ("JWT_SECRET", "a-very-secret-signing-key"),
        ("JWT_SECRET_PREVIOUS", "an-old-signing-key-0123"),
        ("MAIL_PASS", "hunter2hunter2"),
        ("DATABASE_URL", "postgres://app:pw-in-url@db/langcamp"),
    ])
    .expect("valid");
    let debug = format!("{config:?}");
    assert!(!debug.contains("a-very-secret-signing-key"));
    assert!(!debug.contains("an-old-signing-key-0123"));
    assert!(!debug.contains("hunter2hunter2"));
    assert!(!debug.contains("pw-in-url"));
    assert!(config.is_postgres());
}

#[test]
fn file_store_is_local_by_default_or_an_s3_bucket_with_its_settings() {
    assert_eq!(load(&[]).expect("valid").file_store, FileStoreConfig::Local);
    assert_eq!(
        load(&[("FILE_STORE", "local")]).expect("valid").file_store,
        FileStoreConfig::Local
    );
    let config = load(&[
        ("FILE_STORE", "s3://langcamp-files/prod/uploads/"),
        ("S3_ENDPOINT", "http://127.0.0.1:9000/"),
        ("S3_REGION", "eu-central-1"),
        ("S3_ACCESS_KEY_ID", "AKIDEXAMPLE"),
        ("S3_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-secret"),
    ])
    .expect("valid");
    let FileStoreConfig::S3(s3) = &config.file_store else {
        panic!("expected S3: {:?}", config.file_store);
    };
    assert_eq!(s3.bucket, "langcamp-files");
    assert_eq!(s3.prefix, "prod/uploads");
    assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
    assert_eq!(s3.region, "eu-central-1");
    assert_eq!(s3.url(), "s3://langcamp-files/prod/uploads");
    assert!(
        !format!("{config:?}").contains("wJalrXUtnFEMI-secret"),
        "the S3 secret is redacted"
    );
    let config = load(&[("FILE_STORE", "s3://bucket")]).expect("valid");
    let FileStoreConfig::S3(s3) = &config.file_store else {
        panic!("expected S3");
    };
    assert_eq!((s3.prefix.as_str(), s3.region.as_str()), ("", "us-east-1"));
    assert_eq!(
        (s3.endpoint.as_ref(), s3.credentials.as_ref()),
        (None, None)
    );
}

#[test]
fn a_bad_file_store_setting_names_its_variable() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("FILE_STORE", "disk")], "FILE_STORE"),
        (&[("FILE_STORE", "s3://")], "FILE_STORE"),
        (&[("FILE_STORE", "s3://Bad_Bucket/x")], "FILE_STORE"),
        (&[("FILE_STORE", "s3://ok-bucket/a//b")], "FILE_STORE"),
        (&[("FILE_STORE", "s3://ok-bucket/a/../b")], "FILE_STORE"),
        (
            &[
                ("FILE_STORE", "s3://ok-bucket"),
                ("S3_ENDPOINT", "minio:9000"),
            ],
            "S3_ENDPOINT",
        ),
        (
            &[
                ("FILE_STORE", "s3://ok-bucket"),
                ("S3_ENDPOINT", "http://user:pw@minio"),
            ],
            "S3_ENDPOINT",
        ),
        (
            &[
                ("FILE_STORE", "s3://ok-bucket"),
                ("S3_REGION", "eu central"),
            ],
            "S3_REGION",
        ),
        (
            &[
                ("FILE_STORE", "s3://ok-bucket"),
                ("S3_ACCESS_KEY_ID", "AKID"),
            ],
            "S3_SECRET_ACCESS_KEY",
        ),
        (
            &[
                ("FILE_STORE", "s3://ok-bucket"),
                ("S3_SECRET_ACCESS_KEY", "s"),
            ],
            "S3_ACCESS_KEY_ID",
        ),
    ];
    for (vars, variable) in cases {
        let err = load(vars).expect_err(&format!("{vars:?} is refused"));
        assert_eq!(err.variable, *variable, "{vars:?}: {err}");
    }
}

#[test]
fn the_second_factor_settings_and_the_passkey_origin_are_read_and_checked() {
    let defaults = load(&[]).expect("defaults");
    assert_eq!(defaults.staff_second_factor, SecondFactorPolicy::Required);
    assert_eq!(defaults.step_up_max_age, Duration::from_secs(600));
    assert_eq!(defaults.public_origin, None);
    let set = load(&[
        ("STAFF_SECOND_FACTOR", "optional"),
        ("STEP_UP_MAX_AGE", "2m"),
        ("PUBLIC_ORIGIN", "http://localhost:5173/"),
    ])
    .expect("valid values");
    assert_eq!(set.staff_second_factor, SecondFactorPolicy::Optional);
    assert_eq!(set.step_up_max_age, Duration::from_secs(120));
    assert_eq!(set.public_origin.as_deref(), Some("http://localhost:5173"));
    for (name, value) in [
        ("STAFF_SECOND_FACTOR", "sometimes"),
        ("STEP_UP_MAX_AGE", "soon"),
        ("PUBLIC_ORIGIN", "school.example"),
        ("PUBLIC_ORIGIN", "https://school.example/app"),
        ("PUBLIC_ORIGIN", "https://school.example:0"),
        ("PUBLIC_ORIGIN", "ftp://school.example"),
    ] {
        let err = load(&[(name, value)]).expect_err(value);
        assert_eq!(err.variable, name, "{value}");
    }
}
