//! Two server instances on one PostgreSQL database and one object store, each with a data
//! directory of its own (no shared disk), as `docs/OPERATIONS.md` deploys them: what one
//! instance does, the other honours, and what one instance leaves half done when it stops,
//! the other finishes. Needs `TEST_DATABASE_URL` (PostgreSQL) and `TEST_S3_ENDPOINT`.

use std::time::Duration;

use chrono::{TimeDelta, Utc};
use langcamp_core::users::NewUser;
use langcamp_core::{Actor, Role};
use serde_json::json;

use crate::helpers::{TestApp, extract_code, fresh_client, utc};
use crate::storage::{path_of, pdf, upload};

fn start() -> chrono::DateTime<Utc> {
    utc(2026, 11, 25, 9, 0, 0)
}

/// Waits until `check` holds, at most 10 s.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An SMTP server that accepts connections and never says a word: a worker delivering to
/// it hangs holding its claim, as one whose process is about to die.
async fn mute_smtp_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    port
}

async fn pending_claimed_mail(app: &TestApp) -> i64 {
    app.count(
        "SELECT COUNT(*) FROM mail_outbox WHERE status = 'pending' AND lease_until IS NOT NULL",
    )
    .await
}

#[tokio::test]
async fn two_instances_without_a_shared_disk_serve_sign_in_and_deliver_as_one() {
    if std::env::var("TEST_DATABASE_URL").is_err() || crate::s3_store::endpoint().is_none() {
        eprintln!(
            "skipped two_instances_without_a_shared_disk_serve_sign_in_and_deliver_as_one: it \
             needs TEST_DATABASE_URL (scripts/postgres-test-server.sh) and TEST_S3_ENDPOINT \
             (scripts/s3-test-server.sh)"
        );
        return;
    }
    // A delivers mail to a server that never answers.
    let mute = mute_smtp_server().await;
    let mut a = TestApp::builder()
        .manual_clock(start())
        .var("MAIL_HOST", "127.0.0.1")
        .var("MAIL_PORT", &mute.to_string())
        .var("MAIL_TIMEOUT", "1h")
        .spawn()
        .await;
    let bucket = a.s3.clone().expect("a bucket for the files");
    let email = "roaming@example.com";
    a.core
        .create_user(
            &Actor::Operator,
            NewUser::new(email, Role::User, Some("Roaming Person")).expect("a valid user"),
        )
        .await
        .expect("create the user");

    // A file uploaded through A, and a code requested on A whose mail A's worker claims
    // (and hangs on), all before B exists.
    let bytes = pdf("across instances");
    let file = upload(&a, "shared.pdf", "application/pdf", &bytes)
        .await
        .expect(201)
        .data();
    a.otp_request(&fresh_client(), email)
        .send()
        .await
        .expect(200);
    eventually("A's worker claims the code mail", async || {
        pending_claimed_mail(&a).await == 1
    })
    .await;

    // B: the same database and bucket, its own data directory and SMTP server.
    let url = a.core.config().database_url.expose().to_owned();
    let mut builder = TestApp::builder()
        .manual_clock(start())
        .var("DATABASE_URL", &url);
    for (name, value) in bucket.vars() {
        builder = builder.var(&name, &value);
    }
    let b = builder.spawn().await;
    assert_ne!(a.data_dir, b.data_dir);

    // Uploaded through A, served by B (from the object store: B's disk never saw it).
    let path = path_of(file["url"].as_str().expect("url"), &a);
    let served = b.get(&path).send().await.expect(200);
    assert_eq!(served.body.as_ref(), bytes.as_slice());
    let partial = b
        .get(&path)
        .header("range", "bytes=0-7")
        .send()
        .await
        .expect(206);
    assert_eq!(partial.body.as_ref(), &bytes[..8]);

    // Refresh-token rotation racing across A and B behaves as on one instance: both tabs
    // get pairs of one chain; a reuse after the grace period, on either instance, ends
    // the sign-in on both.
    let session = b.student("racer@example.com").await;
    let body = json!({ "refreshToken": session.refresh });
    let (on_a, on_b) = tokio::join!(
        a.post("/auth/refresh").json(&body).send(),
        b.post("/auth/refresh").json(&body).send()
    );
    let (on_a, on_b) = (on_a.expect(200).data(), on_b.expect(200).data());
    assert_eq!(
        on_a["refreshToken"], on_b["refreshToken"],
        "one chain, never a tree"
    );
    let rotated_access = on_a["accessToken"].as_str().expect("access").to_owned();
    a.get("/me")
        .bearer(&rotated_access)
        .send()
        .await
        .expect(200);
    a.clock.advance(TimeDelta::seconds(11));
    b.clock.advance(TimeDelta::seconds(11));
    b.post("/auth/refresh").json(&body).send().await.expect(401);
    eventually("A refuses the revoked sign-in", async || {
        a.get("/me").bearer(&rotated_access).send().await.status == 401
    })
    .await;

    // Two superadmins demoting each other at once through A and B: exactly one succeeds.
    let first = b
        .user_with_role("first-root@example.com", Role::Superadmin)
        .await;
    let second = b
        .user_with_role("second-root@example.com", Role::Superadmin)
        .await;
    let (one, two) = tokio::join!(
        a.bind(&first).set_role(&second.user_id, "admin").send(),
        second.set_role(&first.user_id, "admin").send()
    );
    let mut statuses = [one.status, two.status];
    statuses.sort_unstable();
    assert!(
        // The loser is refused as the last superadmin, or as no longer a superadmin.
        statuses == [200, 403] || statuses == [200, 409],
        "exactly one demotion succeeds: {statuses:?}"
    );
    let superadmins: i64 = b
        .count("SELECT COUNT(*) FROM users WHERE role = 'superadmin'")
        .await;
    assert_eq!(superadmins, 1);

    // A stops with the code mail claimed and unsent. Once the claim lapses (two minutes),
    // B delivers it, once, and the code requested on A signs in on B.
    a.stop();
    b.clock.advance(TimeDelta::minutes(3));
    let mails = b.mail_to(email, 1).await;
    assert_eq!(mails.len(), 1, "B delivered the mail A claimed");
    let code = extract_code(&mails[0].text_body()).expect("a code in the mail");
    let signed_in = b
        .post("/auth/otp/verify")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({ "email": email, "code": code }))
        .send()
        .await
        .expect(200)
        .data();
    assert_eq!(signed_in["user"]["email"], email);
    // Sent, so no worker will claim it again: delivered exactly once.
    let (status, attempts): (String, i64) =
        sqlx::query_as("SELECT status, attempts FROM mail_outbox WHERE recipient = $1")
            .bind(email)
            .fetch_one(b.core.db().reader())
            .await
            .expect("the one code mail");
    assert_eq!((status.as_str(), attempts), ("sent", 1), "sent once");
    assert_eq!(b.mail_to(email, 0).await.len(), 1);
}
