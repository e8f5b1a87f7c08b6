//! CONTRACT §1 ("an operation that fails leaves no partial writes") and §17 (no change
//! without its audit entry) when clients hang up (issue #39): real clients send a staff
//! write and reset their connection at moments spread over the request's life, while
//! steady clients keep working beside them.
//!
//! The deterministic proof, an operation cancelled at each of its awaits in turn, is core's
//! (`langcamp-core/tests/behaviour/hangups.rs`); this is the same over real HTTP.

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use std::net::SocketAddr;

use langcamp_testkit::database::{
    assert_every_course_has_its_own_entry, assert_no_connection_inside_a_transaction,
};
use langcamp_testkit::latency::LatencyRelay;

use crate::helpers::{TestApp, test_database_url};

/// Sends a whole `POST /courses` and resets the connection after `wait` (RST, as a phone
/// losing signal leaves it), whether or not the answer came.
/// Each comes from an address of its own (the server trusts loopback as a proxy), so the
/// rate limit of one client does not answer them first.
async fn create_and_hang_up(app: &TestApp, token: &str, number: u64, wait: Duration) {
    let body = json!({ "title": format!("Hang-up {number}") }).to_string();
    let request = format!(
        "POST /courses HTTP/1.1\r\nhost: test\r\nauthorization: Bearer {token}\r\n\
         x-forwarded-for: 192.0.{}.{}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        number / 256,
        number % 256,
        body.len()
    );
    let mut stream = TcpStream::connect(app.addr).await.expect("connect");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send the request");
    if wait.is_zero() {
        tokio::task::yield_now().await;
    } else {
        tokio::time::sleep(wait).await;
    }
    stream.set_zero_linger().expect("linger 0");
    drop(stream);
}

/// The app, on PostgreSQL across a relay that adds 2 ms each way to every round trip (a
/// database a network away), so that hang-ups at chosen moments meet each statement and
/// the `BEGIN` and `COMMIT` on their way; on SQLite as it is.
async fn app_across_a_slow_network() -> TestApp {
    let dir = std::env::temp_dir().join(format!(
        "langcamp-hangups-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("a folder for the database");
    let url = test_database_url(&dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    let Some((scheme_user, rest)) = url.split_once('@').filter(|_| url.starts_with("postgres"))
    else {
        return TestApp::spawn().await;
    };
    let (server, database) = rest.split_once('/').expect("a database in the URL");
    let server: SocketAddr = server.parse().expect("the test server as an address");
    let relay = LatencyRelay::start(server, Duration::from_millis(2));
    let relayed = format!("{scheme_user}@{}/{database}", relay.addr);
    TestApp::builder()
        .var("DATABASE_URL", &relayed)
        .spawn()
        .await
}

#[tokio::test]
async fn clients_hanging_up_mid_write_split_no_operation_and_steady_clients_are_unaffected() {
    let app = app_across_a_slow_network().await;
    let admin = app.admin().await;

    // Started 1 ms apart, each hanging up a little later after sending than the one
    // before (0 to 792 ms, by 8 ms: under this load a write takes some 600 ms across the
    // relay, mostly waiting for a connection), so the hang-ups meet every stage of it.
    let hang_ups = (0..100_u64).map(|i| {
        let (app, token) = (&app, admin.access.clone());
        async move {
            tokio::time::sleep(Duration::from_millis(i)).await;
            create_and_hang_up(app, &token, i, Duration::from_millis(8 * i)).await;
        }
    });
    let steady = (0..4).map(|client| {
        let admin = &admin;
        async move {
            for i in 0..15 {
                let title = format!("Steady {client}-{i}");
                admin
                    .post("/courses", &json!({ "title": title }))
                    .created()
                    .await;
                admin.get("/me").await;
            }
        }
    });
    tokio::join!(
        futures_util::future::join_all(hang_ups),
        futures_util::future::join_all(steady)
    );

    // Work whose client left finishes on its own; give it a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_no_connection_inside_a_transaction(app.core.db().reader(), "after the hang-ups").await;
    let steady_kept = app
        .count("SELECT COUNT(*) FROM courses WHERE title LIKE 'Steady %'")
        .await;
    assert_eq!(steady_kept, 60, "every steady write was answered and kept");
    assert_every_course_has_its_own_entry(app.core.db().reader()).await;
    // Whatever the hang-ups left, the service still writes.
    admin
        .post("/courses", &json!({ "title": "After the hang-ups" }))
        .created()
        .await;
}
