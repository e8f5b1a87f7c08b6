//! Webhooks (CONTRACT §24) from outside: endpoints managed by a superadmin with step-up,
//! the four events delivered to a real HTTP receiver on 127.0.0.1 in the Standard Webhooks
//! format, retries with the same `webhook-id` on a manual clock, nothing sent for a change
//! that rolled back, a dead endpoint beside a live one, the address checked again at each
//! delivery, a restart, and two instances on one PostgreSQL database.

use std::collections::HashSet;

use chrono::{TimeDelta, Utc};
use langcamp_core::Actor;
use langcamp_core::contacts::{ContactInput, NewContact};
use serde_json::{Value, json};

use crate::helpers::{
    Case, Client, Session, TestApp, assert_role_matrix, behind_the_back, fresh_client, utc,
};
use crate::receiver::{Receiver, silent_server};

const METRICS_TOKEN: &str = "scrape-webhooks";

/// `GET /metrics`'s text.
async fn metrics(app: &TestApp) -> String {
    app.get("/metrics")
        .bearer(METRICS_TOKEN)
        .send()
        .await
        .expect(200)
        .text()
}

fn start() -> chrono::DateTime<Utc> {
    utc(2026, 11, 25, 9, 0, 0)
}

/// An app on a manual clock whose webhooks may call 127.0.0.1 over `http://` (the
/// receivers of these tests), and its superadmin.
async fn school() -> (TestApp, Session) {
    let app = TestApp::builder()
        .manual_clock(start())
        .var("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
        .var("METRICS_TOKEN", METRICS_TOKEN)
        .spawn()
        .await;
    let root = app.superadmin().await;
    (app, root)
}

/// A new endpoint at `url` hearing `events`: its answer (with the secret).
async fn endpoint(root: &Session, url: &str, events: &[&str]) -> Value {
    root.post("/admin/webhooks", &json!({ "url": url, "events": events }))
        .created()
        .await
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("an id").to_owned()
}

fn secret_of(value: &Value) -> String {
    value["secret"].as_str().expect("a secret").to_owned()
}

/// A contact request, as a visitor sends it.
async fn contact(app: &TestApp, first_name: &str) -> Value {
    app.post("/contact")
        .header("x-forwarded-for", &fresh_client())
        .json(&json!({
            "firstName": first_name, "lastName": "Lind",
            "email": "eva@example.com", "message": "Evening classes?"
        }))
        .created()
        .await
}

/// A contact request written through core (no rate limit: for bursts).
async fn contact_through_core(app: &TestApp, n: usize) {
    app.core
        .create_contact(
            &Actor::Anonymous,
            NewContact::try_from(ContactInput {
                first_name: Some(format!("Visitor{n}")),
                last_name: Some("Lind".into()),
                email: Some(format!("visitor{n}@example.com")),
                message: Some("Hello".into()),
                ..ContactInput::default()
            })
            .expect("a valid contact request"),
        )
        .await
        .expect("create the contact request");
}

/// A new fixed test of one question (the first option is right), as `admin` makes it.
async fn quick_check(admin: &Session) -> Value {
    admin
        .post(
            "/proficiency-tests",
            &json!({
                "title": "Quick check", "locale": "en", "targetLanguage": "de",
                "questions": [{"text": "Guten ___", "options": [{"text": "Tag"}, {"text": "Nacht"}], "correctOptionIndex": 0}],
                "levelRanges": [
                    {"level": "A1", "minScore": 0, "maxScore": 0, "message": "Start"},
                    {"level": "A2", "minScore": 1, "maxScore": 1, "message": "Go on"}
                ]
            }),
        )
        .created()
        .await
}

/// The endpoint's delivery log (first page, up to 100), newest first.
async fn log(root: &Session, id: &str) -> Vec<Value> {
    let page = root
        .get(&format!("/admin/webhooks/{id}/deliveries?limit=100"))
        .await;
    page["list"].as_array().expect("a list").clone()
}

/// Waits until `check` holds on the log of `id` (at most 20 s).
async fn log_until(
    root: &Session,
    id: &str,
    what: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let entries = log(root, id).await;
        if check(&entries) {
            return entries;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: {entries:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn only_a_superadmin_manages_endpoints_and_making_or_changing_one_needs_step_up() {
    let (app, root) = school().await;
    let admin = app.admin().await;
    let student = app.student("ana@example.com").await;
    let receiver = Receiver::start().await;
    let created = root
        .post(
            "/admin/webhooks",
            &json!({ "url": receiver.url(), "events": ["contact.created"], "description": "The CRM" }),
        )
        .send()
        .await;
    assert_eq!(
        created.header("cache-control"),
        Some("no-store"),
        "the secret is shown once"
    );
    let created = created.expect(201).data();
    let id = id_of(&created);
    assert!(secret_of(&created).starts_with("whsec_"));
    assert_eq!(created["url"], receiver.url());
    assert_eq!(created["events"], json!(["contact.created"]));
    assert_eq!(created["description"], "The CRM");
    assert_eq!(created["enabled"], true);
    assert!(created["createdAt"].is_string());

    let listed = root.get("/admin/webhooks").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
    assert!(listed[0].get("secret").is_none(), "never listed: {listed}");
    assert_eq!(listed[0]["id"], id);

    let callers: [(&str, &Client); 4] = [
        ("anonymous", app.anon()),
        ("user", &student),
        ("admin", &admin),
        ("superadmin", &root),
    ];
    const SUPERADMIN: &[u16] = &[401, 403, 403, 200];
    let one = format!("/admin/webhooks/{id}");
    assert_role_matrix(
        &callers,
        &[
            Case::new("GET", "/admin/webhooks", SUPERADMIN),
            Case::new("PATCH", one.clone(), SUPERADMIN).body(json!({ "description": "CRM" })),
            Case::new("POST", format!("{one}/secret"), SUPERADMIN),
            Case::new("GET", format!("{one}/deliveries"), SUPERADMIN),
            Case::new("POST", "/admin/webhooks", &[401, 403, 403, 201])
                .body(json!({ "url": receiver.url(), "events": ["result.created"] })),
        ],
    )
    .await;

    // Ten minutes after the superadmin's last second-factor check: making, changing and
    // re-keying an endpoint need a new check; reading and deleting do not.
    app.clock.advance(TimeDelta::minutes(11));
    root.post(
        "/admin/webhooks",
        &json!({ "url": receiver.url(), "events": ["contact.created"] }),
    )
    .fails(403, "STEP_UP_REQUIRED")
    .await;
    root.patch(&one, &json!({ "enabled": false }))
        .fails(403, "STEP_UP_REQUIRED")
        .await;
    root.post_empty(&format!("{one}/secret"))
        .fails(403, "STEP_UP_REQUIRED")
        .await;
    root.get("/admin/webhooks").await;
    let root = app.sign_in_again(&root).await;
    let changed = root
        .patch(&one, &json!({ "enabled": false, "events": ["user.registered", "contact.created"], "description": null }))
        .await;
    assert_eq!(changed["enabled"], false);
    assert_eq!(
        changed["events"],
        json!(["contact.created", "user.registered"])
    );
    assert_eq!(changed["description"], Value::Null);
    assert!(changed.get("secret").is_none());
    let rotated = root.post_empty(&format!("{one}/secret")).send().await;
    assert_eq!(rotated.header("cache-control"), Some("no-store"));
    let rotated = rotated.expect(200).data();
    assert!(secret_of(&rotated).starts_with("whsec_"));
    assert_ne!(rotated["secret"], created["secret"]);

    let deleted = root.delete(&one).await;
    assert_eq!(deleted, json!({ "id": id, "deleted": true }));
    root.get(&format!("{one}/deliveries")).expect(404).await;
    root.delete(&one).expect(404).await;

    // Each change is in the audit trail, with the endpoint as its target.
    let trail = root.get("/admin/audit?limit=100").await;
    let actions: Vec<&str> = trail["list"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|entry| entry["target"]["id"] == id.as_str())
        .filter_map(|entry| entry["action"].as_str())
        .collect();
    for action in [
        "webhook.created",
        "webhook.updated",
        "webhook.secret_rotated",
        "webhook.deleted",
    ] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
}

#[tokio::test]
async fn a_bad_or_dangerous_endpoint_is_refused_naming_its_field_and_nothing_is_stored() {
    // No allowed networks: the defaults.
    let app = TestApp::at(start()).await;
    let root = app.superadmin().await;
    for (body, field) in [
        (
            json!({ "url": "http://hooks.example.com/x", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "https://127.0.0.1/x", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "https://localhost:8443/x", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "https://169.254.169.254/latest/meta-data", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "https://[::1]/x", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "https://10.1.2.3/x", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "ftp://hooks.example.com/x", "events": ["contact.created"] }),
            "url",
        ),
        (
            json!({ "url": "https://hooks.example.com/x", "events": [] }),
            "events",
        ),
        (
            json!({ "url": "https://hooks.example.com/x", "events": ["course.renamed"] }),
            "events",
        ),
        (json!({ "url": "https://hooks.example.com/x" }), "events"),
        (json!({ "events": ["contact.created"] }), "url"),
        (
            json!({ "url": "https://hooks.example.com/x", "events": ["contact.created"], "secret": "mine" }),
            "secret",
        ),
    ] {
        let errors = root.post("/admin/webhooks", &body).invalid().await;
        assert!(
            errors.iter().any(|e| e.contains(field)),
            "{body}: {errors:?} names {field}"
        );
    }
    assert_eq!(app.rows("webhook_endpoints").await, 0);

    let made = endpoint(&root, "https://hooks.example.com/x", &["contact.created"]).await;
    let one = format!("/admin/webhooks/{}", id_of(&made));
    for body in [
        json!({ "url": "https://127.0.0.1/x" }),
        json!({ "url": null }),
        json!({ "events": [] }),
        json!({ "enabled": "yes" }),
    ] {
        root.patch(&one, &body).expect(400).await;
    }
    root.get(&format!("{one}/deliveries?status=lost"))
        .expect(400)
        .await;
    root.get("/admin/webhooks/not-an-id/deliveries")
        .expect(404)
        .await;
    let kept = root.get("/admin/webhooks").await;
    assert_eq!(kept[0]["url"], "https://hooks.example.com/x");
    assert_eq!(kept[0]["events"], json!(["contact.created"]));
}

#[tokio::test]
async fn an_event_is_delivered_signed_in_the_standard_webhooks_format() {
    let (app, root) = school().await;
    let receiver = Receiver::start().await;
    let made = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    let (id, secret) = (id_of(&made), secret_of(&made));

    let sent = contact(&app, "Eva").await;
    let got = receiver.wait_for(1).await;
    let delivery = &got[0];
    assert_eq!(delivery.method, "POST");
    assert_eq!(delivery.path, "/hooks");
    assert!(
        delivery
            .header("content-type")
            .starts_with("application/json")
    );
    let body = delivery.json();
    assert_eq!(body["type"], "contact.created");
    assert_eq!(body["data"], sent, "the Contact as the API shows it");
    assert_eq!(body["timestamp"], sent["createdAt"]);
    assert_eq!(
        delivery.header("webhook-timestamp"),
        (app.clock.now_ms() / 1000).to_string()
    );
    assert_eq!(delivery.signatures_by(&secret), 1, "{:?}", delivery.headers);
    assert_eq!(
        delivery.signatures_by("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
        0
    );

    let entries = log_until(&root, &id, "delivered", |log| {
        log.first().is_some_and(|d| d["status"] == "delivered")
    })
    .await;
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry["id"], delivery.id(), "the log names the webhook-id");
    assert_eq!(entry["event"], "contact.created");
    assert_eq!(entry["attempts"], 1);
    assert_eq!(entry["lastStatusCode"], 200);
    assert_eq!(entry["lastError"], Value::Null);
    assert!(entry["deliveredAt"].is_string());
    assert_eq!(entry["nextAttemptAt"], Value::Null);

    let metrics = metrics(&app).await;
    assert!(
        metrics.contains("langcamp_webhook_deliveries_total{outcome=\"delivered\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("langcamp_webhook_queue_oldest_seconds 0"),
        "{metrics}"
    );
}

#[tokio::test]
async fn every_event_carries_what_the_contract_says() {
    let (app, root) = school().await;
    // Staff and Ben are created registered before the endpoint exists: not heard.
    let admin = app.admin().await;
    let ben = app.student("ben@example.com").await;
    let receiver = Receiver::start().await;
    endpoint(
        &root,
        &receiver.url(),
        &["user.registered", "result.created", "material.assigned"],
    )
    .await;

    // user.registered: a first sign-in completing its profile.
    let ana = app.sign_in_through_core("ana@example.com").await;
    let completed = ana
        .post(
            "/auth/complete-registration",
            &crate::helpers::registration("Ana Silva", json!(27)),
        )
        .await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].json()["type"], "user.registered");
    assert_eq!(got[0].json()["data"], completed["user"]);

    // result.created: a fixed test's result, without its answers.
    let test = quick_check(&admin).await;
    let result = ana
        .post(
            &format!(
                "/proficiency-tests/{}/submit",
                test["id"].as_str().expect("id")
            ),
            &json!({ "answers": [{"questionIndex": 0, "selectedOptionIndex": 0}] }),
        )
        .created()
        .await;
    let got = receiver.wait_for(2).await;
    let body = got[1].json();
    assert_eq!(body["type"], "result.created");
    let mut expected = result.clone();
    expected
        .as_object_mut()
        .expect("an object")
        .remove("answers");
    assert_eq!(body["data"], expected);
    assert!(body["data"].get("answers").is_none());

    // material.assigned: one delivery for each user newly assigned.
    let material = admin
        .post(
            "/education-materials",
            &json!({ "title": "Verbs", "videos": [{"url": "https://videos.example/verbs.mp4"}] }),
        )
        .created()
        .await;
    let material_id = material["id"].as_str().expect("id");
    let assigned = admin
        .post(
            &format!("/education-materials/{material_id}/assign"),
            &json!({ "userIds": [ana.user_id, ben.user_id] }),
        )
        .await;
    assert_eq!(assigned["assigned"], 2);
    let got = receiver.wait_for(4).await;
    let mut heard: Vec<(String, String)> = got[2..]
        .iter()
        .map(|d| {
            let body = d.json();
            assert_eq!(body["type"], "material.assigned");
            assert_eq!(body["data"]["materialId"], material_id);
            assert!(body["data"]["assignedAt"].is_string());
            (
                body["data"]["userId"].as_str().expect("userId").to_owned(),
                d.id().to_owned(),
            )
        })
        .collect();
    heard.sort();
    let mut users = vec![ana.user_id.clone(), ben.user_id.clone()];
    users.sort();
    assert_eq!(
        heard.iter().map(|(u, _)| u.clone()).collect::<Vec<_>>(),
        users
    );
    assert_ne!(heard[0].1, heard[1].1, "one delivery, one id, each");
    // Assigning again assigns nobody new: nothing more is sent.
    admin
        .post(
            &format!("/education-materials/{material_id}/assign"),
            &json!({ "userIds": [ana.user_id] }),
        )
        .await;
    contact(&app, "Not heard").await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(
        receiver.received().len(),
        4,
        "no contact.created, no second assignment"
    );
}

#[tokio::test]
async fn a_change_that_rolls_back_sends_nothing() {
    let (app, root) = school().await;
    let admin = app.admin().await;
    let ana = app.student("ana@example.com").await;
    let receiver = Receiver::start().await;
    let made = endpoint(
        &root,
        &receiver.url(),
        &["material.assigned", "user.registered"],
    )
    .await;
    let material = admin
        .post(
            "/education-materials",
            &json!({ "title": "Verbs", "videos": [{"url": "https://videos.example/verbs.mp4"}] }),
        )
        .created()
        .await;
    // All or nothing: an unknown user rolls the assignment of Ana back, and its delivery.
    admin
        .post(
            &format!(
                "/education-materials/{}/assign",
                material["id"].as_str().expect("id")
            ),
            &json!({ "userIds": [ana.user_id, "0190f1f8-0000-7000-8000-000000000000"] }),
        )
        .expect(404)
        .await;
    // A registration completed twice: the second is refused and announces nothing.
    let ben = app.sign_in_through_core("ben@example.com").await;
    let registration = crate::helpers::registration("Ben Lind", json!(30));
    ben.post("/auth/complete-registration", &registration).await;
    ben.post("/auth/complete-registration", &registration)
        .fails(409, "CONFLICT")
        .await;
    receiver.wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].json()["type"], "user.registered");
    assert_eq!(app.rows("webhook_deliveries").await, 1);
    assert_eq!(log(&root, &id_of(&made)).await.len(), 1);
}

#[tokio::test]
async fn a_refused_delivery_is_retried_with_the_same_id_backing_off_until_it_fails_after_a_day() {
    let (app, root) = school().await;
    let receiver = Receiver::start().await;
    receiver.answer(500);
    let made = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    let id = id_of(&made);
    contact(&app, "Eva").await;

    let first = receiver.wait_for(1).await;
    let entries = log_until(&root, &id, "the first attempt is recorded", |log| {
        log.first().is_some_and(|d| d["attempts"] == 1)
    })
    .await;
    let entry = &entries[0];
    assert_eq!(entry["status"], "pending");
    assert_eq!(entry["lastStatusCode"], 500);
    assert!(
        entry["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("500")),
        "{entry}"
    );
    let next = chrono::DateTime::parse_from_rfc3339(entry["nextAttemptAt"].as_str().expect("next"))
        .expect("a time");
    let wait = next.timestamp_millis() - app.clock.now_ms();
    assert!(
        (1..=5_000).contains(&wait),
        "the first retry within 5 s: {wait} ms"
    );

    // Not before its time.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(receiver.received().len(), 1);
    app.clock.advance(TimeDelta::milliseconds(wait));
    let again = receiver.wait_for(2).await;
    assert_eq!(
        again[1].id(),
        first[0].id(),
        "the same webhook-id on a retry"
    );
    assert_eq!(again[1].body, first[0].body);
    assert_ne!(
        again[1].header("webhook-timestamp"),
        first[0].header("webhook-timestamp"),
        "each attempt signs its own time"
    );
    assert_eq!(again[1].signatures_by(&secret_of(&made)), 1);

    // Backing off: each wait longer, none over 5 minutes.
    let mut waits = vec![wait];
    for attempt in 3..=10 {
        let entries = log_until(&root, &id, "the attempt is recorded", |log| {
            log.first().is_some_and(|d| d["attempts"] == attempt - 1)
        })
        .await;
        let next = chrono::DateTime::parse_from_rfc3339(
            entries[0]["nextAttemptAt"].as_str().expect("next"),
        )
        .expect("a time");
        let wait = next.timestamp_millis() - app.clock.now_ms();
        assert!(wait <= 5 * 60 * 1000, "at most 5 minutes apart: {wait}");
        waits.push(wait);
        app.clock.advance(TimeDelta::milliseconds(wait));
        receiver
            .wait_for(usize::try_from(attempt).expect("small"))
            .await;
    }
    assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
    assert_eq!(*waits.last().expect("waits"), 5 * 60 * 1000, "{waits:?}");

    // A day after it was queued it fails, and is not tried again.
    app.clock.advance(TimeDelta::hours(24));
    let root = app.sign_in_again(&root).await;
    let entries = log_until(&root, &id, "failed after a day", |log| {
        log.first().is_some_and(|d| d["status"] == "failed")
    })
    .await;
    assert_eq!(entries[0]["nextAttemptAt"], Value::Null);
    let tried = receiver.received().len();
    app.clock.advance(TimeDelta::minutes(10));
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(receiver.received().len(), tried);
    let failed = root
        .get(&format!("/admin/webhooks/{id}/deliveries?status=failed"))
        .await;
    assert_eq!(failed["pagination"]["totalItems"], 1);
    let pending = root
        .get(&format!("/admin/webhooks/{id}/deliveries?status=pending"))
        .await;
    assert_eq!(pending["pagination"]["totalItems"], 0);
    let metrics = metrics(&app).await;
    assert!(
        metrics.contains("langcamp_webhook_deliveries_total{outcome=\"failed\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn after_a_new_secret_deliveries_are_signed_with_both_for_a_day() {
    let (app, root) = school().await;
    let receiver = Receiver::start().await;
    let made = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    let old = secret_of(&made);
    let rotated = root
        .post_empty(&format!("/admin/webhooks/{}/secret", id_of(&made)))
        .await;
    let new = secret_of(&rotated);

    contact(&app, "Eva").await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].header("webhook-signature").split(' ').count(), 2);
    assert_eq!(got[0].signatures_by(&new), 1);
    assert_eq!(got[0].signatures_by(&old), 1);

    app.clock
        .advance(TimeDelta::hours(24) + TimeDelta::seconds(1));
    contact(&app, "Ola").await;
    let got = receiver.wait_for(2).await;
    assert_eq!(got[1].header("webhook-signature").split(' ').count(), 1);
    assert_eq!(got[1].signatures_by(&new), 1);
    assert_eq!(got[1].signatures_by(&old), 0);
}

#[tokio::test]
async fn a_dead_endpoint_does_not_delay_a_live_one() {
    let (app, root) = school().await;
    let dead = silent_server().await;
    let live = Receiver::start().await;
    let dead = endpoint(&root, &format!("http://{dead}/hooks"), &["contact.created"]).await;
    endpoint(&root, &live.url(), &["contact.created"]).await;

    for n in 0..40 {
        contact_through_core(&app, n).await;
    }
    // Each call to the dead one waits 10 s for an answer; the live one has them all long
    // before the first of those calls ends.
    let began = std::time::Instant::now();
    let got = live.wait_for(40).await;
    assert!(
        began.elapsed() < std::time::Duration::from_secs(8),
        "{:?}",
        began.elapsed()
    );
    let ids: HashSet<&str> = got.iter().map(|d| d.id()).collect();
    assert_eq!(ids.len(), 40);
    let waiting = log(&root, &id_of(&dead)).await;
    assert!(waiting.iter().all(|d| d["status"] == "pending"));
}

#[tokio::test]
async fn a_name_that_resolves_inside_is_not_called_at_delivery_time() {
    // Allowed when it was made (`localhost` is 127.0.0.1 and ::1); no longer allowed
    // when the delivery is due.
    let mut app = TestApp::builder()
        .manual_clock(start())
        .var("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")
        .spawn()
        .await;
    let root = app.superadmin().await;
    let receiver = Receiver::start().await;
    let made = endpoint(&root, &receiver.url_by_name("https"), &["contact.created"]).await;
    let by_address = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    app.restart_with(&[("WEBHOOK_ALLOWED_NETWORKS", "")]).await;
    let root = app.bind(&root);
    contact_through_core(&app, 1).await;
    for endpoint in [&made, &by_address] {
        let entries = log_until(&root, &id_of(endpoint), "the attempt is refused", |log| {
            log.first().is_some_and(|d| d["attempts"] == 1)
        })
        .await;
        assert_eq!(entries[0]["status"], "pending");
        assert_eq!(entries[0]["lastStatusCode"], Value::Null);
        let error = entries[0]["lastError"].as_str().expect("an error");
        assert!(
            error.contains("127.0.0.1") || error.contains("WEBHOOK_ALLOWED_NETWORKS"),
            "{error}"
        );
    }
    assert_eq!(receiver.connections(), 0, "nothing was called");
}

#[tokio::test]
async fn a_disabled_endpoint_hears_nothing_and_a_deleted_one_nothing_more() {
    let (app, root) = school().await;
    let receiver = Receiver::start().await;
    let made = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    let one = format!("/admin/webhooks/{}", id_of(&made));
    root.patch(&one, &json!({ "enabled": false })).await;
    contact(&app, "Unheard").await;
    root.patch(&one, &json!({ "enabled": true })).await;
    contact(&app, "Heard").await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].json()["data"]["firstName"], "Heard");
    root.delete(&one).await;
    contact(&app, "Gone").await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(app.rows("webhook_deliveries").await, 0);
}

#[tokio::test]
async fn deliveries_queued_before_a_restart_are_delivered_after_it() {
    let (mut app, root) = school().await;
    let receiver = Receiver::start().await;
    let made = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    // The server and its workers stop; the writes go on through core, as a request
    // answered while the process drains would.
    app.stop();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for n in 0..5 {
        contact_through_core(&app, n).await;
    }
    app.restart_with(&[]).await;
    let got = receiver.wait_for(5).await;
    assert_eq!(got.iter().map(|d| d.id()).collect::<HashSet<_>>().len(), 5);
    let root = app.bind(&root);
    log_until(&root, &id_of(&made), "all delivered", |log| {
        log.len() == 5 && log.iter().all(|d| d["status"] == "delivered")
    })
    .await;
}

#[tokio::test]
async fn two_instances_on_one_database_deliver_each_event_once() {
    if std::env::var("TEST_DATABASE_URL").is_err() {
        eprintln!(
            "skipped two_instances_on_one_database_deliver_each_event_once: PostgreSQL only (TEST_DATABASE_URL)"
        );
        return;
    }
    let (a, root) = school().await;
    let url = a.core.config().database_url.expose().to_owned();
    let b = TestApp::builder()
        .manual_clock(start())
        .var("DATABASE_URL", &url)
        .var("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
        .spawn()
        .await;
    let receiver = Receiver::start().await;
    endpoint(&root, &receiver.url(), &["contact.created"]).await;
    // B hears of the endpoint A made (its change notice), then both write and both send.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let writes = (0..200).map(|n| {
        let app = if n % 2 == 0 { &a } else { &b };
        contact_through_core(app, n)
    });
    futures_util::future::join_all(writes).await;
    let got = receiver.wait_for(200).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let got_now = receiver.received();
    assert_eq!(got_now.len(), got.len());
    let ids: HashSet<&str> = got_now.iter().map(|d| d.id()).collect();
    assert_eq!(ids.len(), 200, "each event once");
    assert_eq!(got_now.len(), 200, "no delivery sent twice");
}

#[tokio::test]
async fn an_endpoints_secret_outlives_a_rotation_of_the_server_secret() {
    const OLD: &str = "the-old-server-secret-0123456789";
    const NEW: &str = "the-new-server-secret-0123456789";
    let mut app = TestApp::builder()
        .manual_clock(start())
        .var("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
        .var("JWT_SECRET", OLD)
        .spawn()
        .await;
    let root = app.superadmin().await;
    let receiver = Receiver::start().await;
    let made = endpoint(&root, &receiver.url(), &["contact.created"]).await;
    let secret = secret_of(&made);

    // The new secret, the old one kept for reading: the endpoint's secret still opens, and
    // is sealed again under the new one when first used.
    app.restart_with(&[("JWT_SECRET", NEW), ("JWT_SECRET_PREVIOUS", OLD)])
        .await;
    contact_through_core(&app, 1).await;
    assert_eq!(receiver.wait_for(1).await[0].signatures_by(&secret), 1);
    let counts = app
        .core
        .key_counts(&Actor::Operator)
        .await
        .expect("the counts");
    assert_eq!(counts.unreadable, 0);

    // The old secret gone: deliveries are still signed with the endpoint's own.
    app.restart_with(&[("JWT_SECRET_PREVIOUS", "")]).await;
    contact_through_core(&app, 2).await;
    assert_eq!(receiver.wait_for(2).await[1].signatures_by(&secret), 1);
}

#[tokio::test]
async fn a_delivery_whose_endpoint_went_as_it_was_queued_is_deleted_not_failed() {
    use sqlx::Connection as _;
    let (app, _root) = school().await;
    // The race made from outside: a write read the endpoint, another deleted it, then the
    // first committed its delivery (PostgreSQL has no foreign key to refuse it; on SQLite
    // the key is switched off for this connection to make the same row).
    sqlx::any::install_default_drivers();
    let url = app.core.config().database_url.expose().to_owned();
    let mut conn = sqlx::AnyConnection::connect(&url).await.expect("connect");
    if !url.starts_with("postgres") {
        sqlx::Executor::execute(&mut conn, "PRAGMA foreign_keys = OFF")
            .await
            .expect("pragma");
    }
    sqlx::query(
        "INSERT INTO webhook_deliveries (id, endpoint_id, event, body, status, attempts, next_attempt_at, created_at)
         VALUES ('orphan', 'no-such-endpoint', 'contact.created', '{}', 'pending', 0, $1, $1)",
    )
    .bind(app.clock.now_ms())
    .execute(&mut conn)
    .await
    .expect("an orphan delivery");
    conn.close().await.expect("close");
    assert_eq!(app.rows("webhook_deliveries").await, 1);

    // The worker's next housekeeping (once a minute) deletes it, whatever its age.
    app.clock.advance(TimeDelta::minutes(2));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while app.rows("webhook_deliveries").await > 0 {
        assert!(std::time::Instant::now() < deadline, "the orphan stayed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        metrics(&app)
            .await
            .contains("langcamp_webhook_deliveries_total{outcome=\"failed\"} 0"),
        "deleted, not counted as a failed delivery"
    );
}

#[tokio::test]
async fn a_result_is_queued_once_for_each_endpoint_hearing_it_and_a_refused_one_not_at_all() {
    let (app, root) = school().await;
    let admin = app.admin().await;
    let ana = app.student("ana@example.com").await;
    let first = Receiver::start().await;
    let second = Receiver::start().await;
    let hears_results = endpoint(&root, &first.url(), &["result.created"]).await;
    endpoint(&root, &second.url(), &["contact.created", "result.created"]).await;
    // An endpoint that hears something else gets nothing of a result.
    let other = endpoint(&root, &first.url(), &["contact.created"]).await;
    let test = quick_check(&admin).await;
    let submit = format!("/proficiency-tests/{}/submit", id_of(&test));
    let answers = json!({ "answers": [{"questionIndex": 0, "selectedOptionIndex": 0}] });
    let result = ana.post(&submit, &answers).created().await;

    let (one, two) = (first.wait_for(1).await, second.wait_for(1).await);
    assert_eq!(one[0].json()["data"]["id"], result["id"]);
    assert_eq!(two[0].json()["data"]["id"], result["id"]);
    assert_ne!(
        one[0].id(),
        two[0].id(),
        "a delivery, and an id, for each endpoint"
    );
    assert_eq!(log(&root, &id_of(&hears_results)).await.len(), 1);
    assert!(log(&root, &id_of(&other)).await.is_empty());

    // Another process moves the test's version: the held copy's guarded insert stores
    // nothing and queues nothing, and the submission done again reading the test queues
    // its result once for each endpoint.
    behind_the_back(
        &app,
        "UPDATE proficiency_tests SET updated_at = updated_at + 1 WHERE id = $1",
        &id_of(&test),
    )
    .await;
    let again = ana.post(&submit, &answers).created().await;
    let (one, two) = (first.wait_for(2).await, second.wait_for(2).await);
    assert_eq!(one[1].json()["data"]["id"], again["id"]);
    assert_eq!(two[1].json()["data"]["id"], again["id"]);

    // A submission refused for its answers queues nothing.
    ana.post(
        &submit,
        &json!({ "answers": [{"questionIndex": 5, "selectedOptionIndex": 0}] }),
    )
    .expect(400)
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(app.rows("test_results").await, 2);
    assert_eq!(app.rows("webhook_deliveries").await, 4);
    assert_eq!(first.received().len(), 2);
    assert_eq!(second.received().len(), 2);
}
