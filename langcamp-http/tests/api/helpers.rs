//! The test harness: a real server on 127.0.0.1:0 with a fresh database per test, a real
//! SMTP sink for its mail, and the typed client of `langcamp-testkit` bound to each caller.
//!
//! The backend is SQLite (a file in a temporary folder) unless `TEST_DATABASE_URL` names a
//! PostgreSQL server, in which case every test gets its own new database on it. The same
//! tests run against both.
//!
//! Likewise the file store is the local disk unless `TEST_S3_ENDPOINT` names an
//! S3-compatible server (`scripts/s3-test-server.sh`), in which case every test that does
//! not choose `FILE_STORE` itself gets its own new bucket there (see [`crate::s3_store`]).

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use hyper::Method;
use langcamp_core::auth::FactorName;
use langcamp_core::auth::{OtpCode, OtpSignIn, OtpVerifyInput};
use langcamp_core::users::NewUser;
use langcamp_core::{Actor, Clock, Config, Langcamp, Role};
use langcamp_testkit::database;
pub use langcamp_testkit::{Call, Case, Client, TestResponse, assert_role_matrix};
use tokio::sync::oneshot;

use crate::smtp::{ReceivedMail, SmtpSink};

pub struct TestApp {
    pub addr: SocketAddr,
    pub core: Langcamp,
    pub clock: Clock,
    pub smtp: SmtpSink,
    pub data_dir: PathBuf,
    /// The test's own bucket when its files are in the S3 test server.
    pub s3: Option<crate::s3_store::TestBucket>,
    client: Client,
    shutdown: Vec<oneshot::Sender<()>>,
    /// The configuration it was started with (a restart changes some of it).
    vars: HashMap<String, String>,
}

#[derive(Default)]
pub struct TestAppBuilder {
    start: Option<DateTime<Utc>>,
    vars: HashMap<String, String>,
}

impl TestAppBuilder {
    /// Runs the app on a manual clock starting at `start` (move it with `app.clock`).
    pub fn manual_clock(mut self, start: DateTime<Utc>) -> Self {
        self.start = Some(start);
        self
    }

    /// Sets a configuration variable.
    pub fn var(mut self, name: &str, value: &str) -> Self {
        self.vars.insert(name.to_owned(), value.to_owned());
        self
    }

    pub async fn spawn(self) -> TestApp {
        let smtp = SmtpSink::start().await;
        self.spawn_with_smtp(smtp).await
    }

    pub async fn spawn_with_smtp(self, smtp: SmtpSink) -> TestApp {
        let data_dir =
            std::env::temp_dir().join(format!("langcamp-test-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&data_dir).expect("temporary data directory");
        let database_url = match self.vars.get("DATABASE_URL") {
            Some(url) => url.clone(),
            None => database::create_migrated_database(&data_dir, DATABASE_PREFIX).await,
        };
        let mut vars: HashMap<String, String> = [
            ("DATA_DIR", data_dir.to_string_lossy().into_owned()),
            ("DATABASE_URL", database_url),
            ("JWT_SECRET", database::JWT_SECRET.to_owned()),
            ("MAIL_HOST", "127.0.0.1".to_owned()),
            ("MAIL_PORT", smtp.port.to_string()),
            ("MAIL_SECURE", "none".to_owned()),
            ("MAIL_FROM_ADDRESS", "school@langcamp.test".to_owned()),
            ("FRONTEND_BASE_URL", "https://school.example".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let s3 = if self.vars.contains_key("FILE_STORE") {
            None
        } else {
            crate::s3_store::TestBucket::create().await
        };
        if let Some(bucket) = &s3 {
            vars.extend(bucket.vars());
        }
        vars.extend(self.vars);
        let clock = match self.start {
            Some(start) => Clock::manual(start),
            None => Clock::System,
        };
        let (addr, core, shutdown) = launch(&vars, clock.clone()).await;
        let client = Client::new(addr);
        TestApp {
            addr,
            core,
            clock,
            smtp,
            data_dir,
            s3,
            client,
            shutdown,
            vars,
        }
    }
}

/// A server and its mail and webhook workers on the configuration `vars`, with `clock`, on a new port;
/// the senders that stop them.
async fn launch(
    vars: &HashMap<String, String>,
    clock: Clock,
) -> (SocketAddr, Langcamp, Vec<oneshot::Sender<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind port 0");
    let addr = listener.local_addr().expect("local address");
    let base = format!("http://{addr}");
    let config = Config::from_lookup(|name| match name {
        "PUBLIC_BASE_URL" if !vars.contains_key(name) => Some(base.clone()),
        _ => vars.get(name).cloned(),
    })
    .expect("test configuration");
    let core = Langcamp::connect(config, clock)
        .await
        .expect("connect to the test database");
    core.migrate().await.expect("migrate the test database");

    let (stop_server, server_stopped) = oneshot::channel::<()>();
    let (stop_mail, mail_stopped) = oneshot::channel::<()>();
    let (stop_webhooks, webhooks_stopped) = oneshot::channel::<()>();
    tokio::spawn(langcamp_http::serve(core.clone(), listener, async {
        let _ = server_stopped.await;
    }));
    let worker = core.clone();
    tokio::spawn(async move {
        worker
            .run_mail_worker(async {
                let _ = mail_stopped.await;
            })
            .await;
    });
    let worker = core.clone();
    tokio::spawn(async move {
        worker
            .run_webhook_worker(async {
                let _ = webhooks_stopped.await;
            })
            .await;
    });
    (addr, core, vec![stop_server, stop_mail, stop_webhooks])
}

/// The database for one test: a file in its folder, or a new PostgreSQL database.
pub async fn test_database_url(data_dir: &std::path::Path) -> String {
    database::create_database(data_dir, DATABASE_PREFIX).await
}

/// What the harness's PostgreSQL databases are called (`lc_test_<uuid>`).
const DATABASE_PREFIX: &str = "lc_test";

impl Drop for TestApp {
    fn drop(&mut self) {
        for stop in self.shutdown.drain(..) {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
        drop_test_database(self.core.config().database_url.expose());
    }
}

/// Drops a PostgreSQL test database (no-op for SQLite), so runs do not fill the disk.
pub fn drop_test_database(url: &str) {
    database::drop_database(url, DATABASE_PREFIX);
}

/// A signed-in test user: its tokens, and a client that calls as it
/// (`admin.get(path).await`, through `Deref`).
#[derive(Clone)]
pub struct Session {
    pub access: String,
    pub refresh: String,
    pub user_id: String,
    pub email: String,
    /// The base32 secret of the TOTP factor this caller added (staff add one to sign in:
    /// CONTRACT §20), to play their authenticator app.
    pub totp_secret: Option<String>,
    client: Client,
}

impl std::ops::Deref for Session {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Session {
    /// `PATCH /users/{user_id}/role` to `role`, as this caller (a superadmin's right).
    pub fn set_role(&self, user_id: &str, role: &str) -> Call {
        self.patch(
            &format!("/users/{user_id}/role"),
            &serde_json::json!({ "role": role }),
        )
    }
}

impl TestApp {
    /// Stops the server and the mail worker, as if the process ended; the database (which
    /// another instance may share) stays until the app is dropped.
    pub fn stop(&mut self) {
        for stop in self.shutdown.drain(..) {
            let _ = stop.send(());
        }
    }

    pub async fn spawn() -> TestApp {
        TestApp::builder().spawn().await
    }

    /// [`TestApp::stop`], then waits until the mail worker has ended: mail queued from
    /// now on (through `app.core`) waits for the next start.
    pub async fn stop_mail_too(&mut self) {
        self.stop();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.core.mail_status().snapshot().running {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the mail worker ends"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until the outbox holds no mail waiting to be sent (up to 10 s).
    pub async fn outbox_drained(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self
            .count("SELECT COUNT(*) FROM mail_outbox WHERE status = 'pending'")
            .await
            > 0
        {
            assert!(tokio::time::Instant::now() < deadline, "the outbox drains");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Stops this instance and starts it again on the same folder, database, clock and
    /// SMTP sink, with `changes` to its configuration (an empty value unsets a variable):
    /// a restart, perhaps with a new `JWT_SECRET`. It listens on a new port; bind earlier
    /// sessions to it with [`TestApp::bind`].
    pub async fn restart_with(&mut self, changes: &[(&str, &str)]) {
        self.stop();
        for (name, value) in changes {
            self.vars.insert((*name).to_owned(), (*value).to_owned());
        }
        let (addr, core, shutdown) = launch(&self.vars, self.clock.clone()).await;
        self.addr = addr;
        self.core = core;
        self.client = Client::new(addr);
        self.shutdown = shutdown;
    }

    /// A server on a manual clock starting at `start` (move it with `app.clock`).
    pub async fn at(start: DateTime<Utc>) -> TestApp {
        TestApp::builder().manual_clock(start).spawn().await
    }

    /// A server with one configuration variable set (`UPLOAD_MAX_BYTES`, ...).
    pub async fn with_var(name: &str, value: &str) -> TestApp {
        TestApp::builder().var(name, value).spawn().await
    }

    /// A number the database answers (`SELECT COUNT(*) ...`), read as another process would.
    pub async fn count(&self, sql: impl sqlx::SqlSafeStr) -> i64 {
        sqlx::query_scalar(sql)
            .fetch_one(self.core.db().reader())
            .await
            .expect("the count")
    }

    /// How many rows `table` holds (`app.rows("stored_files")`), read as [`TestApp::count`].
    pub async fn rows(&self, table: &str) -> i64 {
        self.count(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .await
    }

    /// A server and its admin, signed in: where most tests start.
    pub async fn with_admin() -> (TestApp, Session) {
        let app = TestApp::spawn().await;
        let admin = app.admin().await;
        (app, admin)
    }

    /// [`TestApp::with_admin`] on a manual clock starting at `start`.
    pub async fn with_admin_at(start: DateTime<Utc>) -> (TestApp, Session) {
        let app = TestApp::at(start).await;
        let admin = app.admin().await;
        (app, admin)
    }

    pub fn builder() -> TestAppBuilder {
        TestAppBuilder::default()
    }

    /// An anonymous caller.
    pub fn anon(&self) -> &Client {
        &self.client
    }

    /// A caller with `token` as its bearer (a token a test made or altered).
    pub fn with_token(&self, token: &str) -> Client {
        self.client.with_token(token)
    }

    /// `session`'s sign-in calling this server (another instance on the same database).
    pub fn bind(&self, session: &Session) -> Session {
        Session {
            client: self.client.with_token(&session.access),
            ..session.clone()
        }
    }

    /// An anonymous request without a body yet, for what the typed [`Client`] does not
    /// cover (raw bodies, headers, no body on a POST).
    pub fn call(&self, method: Method, path: &str) -> Call {
        self.client.call(method, path)
    }

    pub fn get(&self, path: &str) -> Call {
        self.call(Method::GET, path)
    }

    pub fn post(&self, path: &str) -> Call {
        self.call(Method::POST, path)
    }

    pub fn put(&self, path: &str) -> Call {
        self.call(Method::PUT, path)
    }

    pub fn patch(&self, path: &str) -> Call {
        self.call(Method::PATCH, path)
    }

    pub fn delete(&self, path: &str) -> Call {
        self.call(Method::DELETE, path)
    }

    /// `POST /auth/otp/request` for `email` from the client address `client` (as
    /// `X-Forwarded-For`: each address has its own rate-limit budget).
    pub fn otp_request(&self, client: &str, email: &str) -> Call {
        self.post("/auth/otp/request")
            .header("x-forwarded-for", client)
            .json(&serde_json::json!({ "email": email }))
    }

    /// `POST /auth/refresh` with `refresh_token`, anonymously as every client sends it.
    pub fn refresh(&self, refresh_token: &str) -> Call {
        self.post("/auth/refresh")
            .json(&serde_json::json!({ "refreshToken": refresh_token }))
    }

    /// Waits for the newest mail to `to` whose text matches, up to 10 s.
    pub async fn mail_to(&self, to: &str, count: usize) -> Vec<ReceivedMail> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let mails: Vec<ReceivedMail> = self
                .smtp
                .messages()
                .into_iter()
                .filter(|m| m.to.iter().any(|t| t == to))
                .collect();
            if mails.len() >= count || tokio::time::Instant::now() > deadline {
                return mails;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Requests a code for `email` and reads it from the newest mail to that address that
    /// carries one (a staff member's security notices may arrive beside it).
    /// Each call comes from its own client address, so helpers never hit rate limits.
    pub async fn request_code(&self, email: &str) -> String {
        let before = self.mail_to(email, 0).await.len();
        self.otp_request(&fresh_client(), email)
            .send()
            .await
            .expect(200);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let mails = self.mail_to(email, before + 1).await;
            if let Some(code) = mails
                .iter()
                .skip(before)
                .find_map(|mail| extract_code(&mail.text_body()))
            {
                return code;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no code mail for {email}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Signs the caller of `session` in again through the real flow, with its second
    /// factor when it has one (`POST /auth/second-factor/verify` with the app's code for
    /// the next time step, since the current one may be spent already).
    pub async fn sign_in_again(&self, session: &Session) -> Session {
        let signed_in = self.sign_in(&session.email).await;
        self.second_factor(signed_in, session.totp_secret.as_deref())
            .await
    }

    /// [`TestApp::sign_in_through_core`] again, with the second factor when it has one.
    pub async fn sign_in_again_through_core(&self, session: &Session) -> Session {
        let signed_in = self.sign_in_through_core(&session.email).await;
        self.second_factor(signed_in, session.totp_secret.as_deref())
            .await
    }

    async fn second_factor(&self, signed_in: Session, secret: Option<&str>) -> Session {
        let Some(secret) = secret else {
            return signed_in;
        };
        let next_step = self.core.clock().now_ms() + 30_000;
        let code = langcamp_core::auth::totp::code_from_base32(secret, next_step)
            .expect("a base32 secret");
        let data = signed_in
            .post(
                "/auth/second-factor/verify",
                &serde_json::json!({ "method": "totp", "code": code }),
            )
            .expect(200)
            .await
            .data();
        Session {
            totp_secret: Some(secret.to_owned()),
            ..self.with_tokens(&signed_in, &data)
        }
    }

    /// The caller of `session` with the tokens of a sign-in answer `data` (a second
    /// factor verified, a factor added, a refresh).
    pub fn with_tokens(&self, session: &Session, data: &serde_json::Value) -> Session {
        let access = data["accessToken"].as_str().expect("accessToken");
        Session {
            client: self.client.with_token(access),
            access: access.to_owned(),
            refresh: data["refreshToken"]
                .as_str()
                .expect("refreshToken")
                .to_owned(),
            ..session.clone()
        }
    }

    /// The answer of `POST /auth/otp/verify` with the code just mailed to `email`: the
    /// first step of a sign-in (tokens, `aal`, and what comes next).
    pub async fn otp_answer(&self, email: &str) -> serde_json::Value {
        let code = self.request_code(email).await;
        self.post("/auth/otp/verify")
            .header("x-forwarded-for", &fresh_client())
            .json(&serde_json::json!({ "email": email, "code": code }))
            .send()
            .await
            .expect(200)
            .data()
    }

    /// Signs `email` in through the real flow.
    pub async fn sign_in(&self, email: &str) -> Session {
        let data = self.otp_answer(email).await;
        let access = data["accessToken"].as_str().expect("accessToken");
        Session {
            access: access.to_owned(),
            refresh: data["refreshToken"]
                .as_str()
                .expect("refreshToken")
                .to_owned(),
            user_id: data["user"]["id"].as_str().expect("user id").to_owned(),
            email: email.to_owned(),
            totp_secret: None,
            client: self.client.with_token(access),
        }
    }

    /// Signs `email` in through core rather than HTTP and SMTP: a code is stored as
    /// `POST /auth/otp/request` stores it (hashed with the server's key, as the benchmarks
    /// seed theirs) and core's own sign-in verifies it. The sign-in tests walk the real
    /// flow ([`TestApp::sign_in`]); every other test only needs a signed-in caller, and
    /// this one sends no mail, so it neither waits for the SMTP sink nor adds to its mail.
    pub async fn sign_in_through_core(&self, email: &str) -> Session {
        const CODE: &str = "246810";
        let address = email.trim().to_lowercase();
        let now = self.core.clock().now_ms();
        let code_hash = self.core.keys().otp_hash(&address, CODE);
        let mut conn = self
            .core
            .db()
            .writer_connection()
            .await
            .expect("a writer connection");
        database::store_sign_in_code(&mut conn, &address, &code_hash, now).await;
        drop(conn);
        let signed_in = self
            .core
            .verify_otp(
                OtpSignIn::try_from(OtpVerifyInput {
                    email: Some(address),
                    code: Some(CODE.to_owned()),
                })
                .expect("a valid address and code"),
                None,
            )
            .await
            .expect("sign in through core");
        Session {
            client: self.client.with_token(&signed_in.access_token),
            access: signed_in.access_token,
            refresh: signed_in.refresh_token,
            user_id: signed_in.user.id.to_string(),
            email: email.to_owned(),
            totp_secret: None,
        }
    }

    /// Creates a user as the operator does (`langcamp users create`), with no sign-in.
    pub async fn add_user(&self, email: &str, role: Role) {
        self.core
            .create_user(
                &Actor::Operator,
                NewUser::new(email, role, Some("Test Person")).expect("a valid user"),
            )
            .await
            .expect("create the user");
    }

    /// A signed-in user with `role` and a complete profile. Staff add a TOTP factor
    /// through core and hold the level-2 tokens its confirmation answers, as a real staff
    /// member does at their first sign-in under `STAFF_SECOND_FACTOR=required` (CONTRACT
    /// §20); students sign in with the code alone.
    pub async fn user_with_role(&self, email: &str, role: Role) -> Session {
        self.add_user(email, role).await;
        let session = self.sign_in_through_core(email).await;
        if role == Role::User {
            return session;
        }
        self.with_totp(session).await
    }

    /// `session` after adding a TOTP factor through core: its sign-in raised to level 2.
    pub async fn with_totp(&self, session: Session) -> Session {
        let actor = Actor::User(
            self.core
                .authenticate(&session.access)
                .await
                .expect("a valid access token"),
        );
        let name = FactorName::parse("name", "Test authenticator").expect("a name");
        let enrolment = self
            .core
            .start_totp(&actor, name)
            .await
            .expect("start a TOTP factor");
        let code = self.totp_code(&enrolment.secret);
        let added = self
            .core
            .confirm_totp(
                &actor,
                &enrolment.id,
                OtpCode::parse(Some(&code)).expect("6 digits"),
            )
            .await
            .expect("confirm the TOTP factor");
        Session {
            client: self.client.with_token(&added.access_token),
            access: added.access_token,
            refresh: added.refresh_token,
            totp_secret: Some(enrolment.secret),
            ..session
        }
    }

    /// The code an authenticator app shows now (by the app's clock) for a base32 secret.
    pub fn totp_code(&self, secret: &str) -> String {
        langcamp_core::auth::totp::code_from_base32(secret, self.core.clock().now_ms())
            .expect("a base32 secret")
    }

    pub async fn admin(&self) -> Session {
        self.user_with_role("admin@langcamp.test", Role::Admin)
            .await
    }

    pub async fn superadmin(&self) -> Session {
        self.user_with_role("root@langcamp.test", Role::Superadmin)
            .await
    }

    pub async fn student(&self, email: &str) -> Session {
        self.user_with_role(email, Role::User).await
    }
}

/// Each of the required `fields` set to `null` in `PATCH path` (beside the fields of
/// `beside`) is refused: 400 `VALIDATION_FAILED` with the one message "`field` cannot be null".
pub async fn assert_nulls_refused(
    caller: &Client,
    path: &str,
    fields: &[&str],
    beside: serde_json::Value,
) {
    for field in fields {
        let mut body = beside.clone();
        body[*field] = serde_json::Value::Null;
        let refused = caller.patch(path, &body).send().await;
        assert_eq!(refused.status, 400, "{field}: {}", refused.text());
        assert_eq!(refused.code(), "VALIDATION_FAILED", "{field}");
        assert_eq!(
            refused.errors(),
            [format!("{field} cannot be null")],
            "{field}"
        );
    }
}

/// A complete registration for `POST /auth/complete-registration`: a woman in Portugal.
/// Runs `statement` with `$1` bound to `id`, as another process writing the database would
/// (no cache of this server hears of it).
pub async fn behind_the_back(app: &TestApp, statement: &'static str, id: &str) {
    let mut tx = app.core.db().begin().await.expect("begin");
    sqlx::query(statement)
        .bind(id)
        .execute(&mut *tx)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
    tx.commit().await.expect("commit");
}

pub fn registration(name: &str, age: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "name": name, "age": age, "gender": "female", "country": "Portugal",
        "countryCode": "+351", "phoneNumber": "912345678"
    })
}

/// An instant in UTC, for manual clocks and expected timestamps.
pub fn utc(year: i32, month: u32, day: u32, hour: u32, minute: u32, second: u32) -> DateTime<Utc> {
    use chrono::TimeZone;
    Utc.with_ymd_and_hms(year, month, day, hour, minute, second)
        .single()
        .expect("a valid date")
}

/// A client address no other helper call uses (10.0.0.0/8).
/// The `action` of each audit entry in `entries` (a JSON array), in order.
pub fn actions(entries: &serde_json::Value) -> Vec<&str> {
    entries
        .as_array()
        .expect("an array of audit entries")
        .iter()
        .filter_map(|entry| entry["action"].as_str())
        .collect()
}

pub fn fresh_client() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::net::Ipv4Addr::from(0x0a00_0000 | (n & 0x00ff_ffff)).to_string()
}

/// The first run of six digits in a text.
pub fn extract_code(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(5)).find_map(|i| {
        let window = &bytes[i..i + 6];
        let bounded = (i == 0 || !bytes[i - 1].is_ascii_digit())
            && bytes.get(i + 6).is_none_or(|b| !b.is_ascii_digit());
        (bounded && window.iter().all(u8::is_ascii_digit))
            .then(|| String::from_utf8_lossy(window).into_owned())
    })
}
