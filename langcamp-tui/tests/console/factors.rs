//! CONTRACT §20: the users view shows the selected user's second factors (passkeys by
//! name, recovery codes left, each factor added and last used) and resets them, after
//! confirmation, for a colleague who lost theirs.

use chrono::TimeDelta;
use crossterm::event::KeyCode;
use langcamp_core::Actor;
use langcamp_core::audit::AuditQuery;
use langcamp_core::auth::FactorName;
use langcamp_core::auth::totp::code_from_base32;
use langcamp_core::auth::{OtpCode, OtpSignIn, OtpVerifyInput};
use langcamp_core::platform::keyring::Keyring;
use langcamp_core::{PageRequest, Role};
use langcamp_tui::view::View;

use crate::harness::{Console, address, assert_snapshot};
use crate::views::key_of;

const MARIA: &str = "maria@langcamp.example";

/// Maria (an admin) signs in through core with a code as `POST /auth/otp/request` stores
/// it (no mail), adds a TOTP factor with a code of her authenticator app, and an hour
/// later has two passkeys, "MacBook" (used the next day) and "Phone". The passkeys are
/// rows: core registers one only from a browser's WebAuthn ceremony. Returns the access
/// token of her sign-in, raised to level 2 by the factor.
async fn maria_with_factors(console: &Console) -> String {
    const CODE: &str = "246810";
    let core = &console.core;
    let now = core.clock().now_ms();
    let code_hash = Keyring::new(langcamp_testkit::database::JWT_SECRET, &[]).otp_hash(MARIA, CODE);
    let mut conn = core.db().writer_connection().await.expect("a connection");
    langcamp_testkit::database::store_sign_in_code(&mut conn, MARIA, &code_hash, now).await;
    drop(conn);
    let sign_in = OtpSignIn::try_from(OtpVerifyInput {
        email: Some(MARIA.to_owned()),
        code: Some(CODE.to_owned()),
    })
    .expect("an address and a code");
    let signed_in = core.verify_otp(sign_in, None).await.expect("sign in");
    let maria = Actor::User(
        core.authenticate(&signed_in.access_token)
            .await
            .expect("a valid token"),
    );
    let name = FactorName::parse("name", "Authenticator").expect("a name");
    let enrolment = core.start_totp(&maria, name).await.expect("start TOTP");
    let code = code_from_base32(&enrolment.secret, core.clock().now_ms()).expect("a code");
    let code = OtpCode::parse(Some(&code)).expect("6 digits");
    let added = core
        .confirm_totp(&maria, &enrolment.id, code)
        .await
        .expect("confirm TOTP");

    console.clock.advance(TimeDelta::hours(1));
    let added_at = core.clock().now_ms();
    let used_at = added_at + TimeDelta::days(1).num_milliseconds();
    let mut conn = core.db().writer_connection().await.expect("a connection");
    for (n, name, last_used) in [(1, "MacBook", Some(used_at)), (2, "Phone", None)] {
        sqlx::query(
            "INSERT INTO user_factors
                 (id, user_id, kind, name, credential_id, passkey, created_at, confirmed_at,
                  last_used_at)
             VALUES ($1, $2, 'passkey', $3, $4, '{}', $5, $5, $6)",
        )
        .bind(format!("passkey-{n}"))
        .bind(&signed_in.user.id)
        .bind(name)
        .bind(format!("credential-{n}"))
        .bind(added_at + n)
        .bind(last_used)
        .execute(&mut *conn)
        .await
        .expect("store a passkey");
    }
    added.access_token
}

/// The seeded school with Maria's factors, the console on the users view with Maria
/// (the fourth newest) selected.
async fn on_maria() -> (Console, String) {
    let mut console = Console::seeded().await;
    let token = maria_with_factors(&console).await;
    console.press(key_of(View::Users)).await;
    console
        .press_all(&[KeyCode::Down, KeyCode::Down, KeyCode::Down])
        .await;
    let selected = console.app.users.list.selected().expect("a user");
    assert_eq!(selected.email, MARIA);
    (console, token)
}

#[tokio::test]
async fn the_users_view_shows_a_users_factors_passkeys_and_recovery_codes() {
    let (console, _) = on_maria().await;
    assert_snapshot(&console, "users-factors");
    let screen = console.screen(100, 30);
    assert!(screen.contains("Passkeys   2 (MacBook, Phone)"), "{screen}");
    assert!(screen.contains("Recovery   10 codes left"), "{screen}");
}

#[tokio::test]
async fn factors_are_reset_only_after_confirmation_as_the_operator() {
    let (mut console, token) = on_maria().await;
    let op = &Actor::Operator;
    let maria = console
        .core
        .get_user_by_email(op, &address(MARIA))
        .await
        .expect("maria")
        .typed_id();
    let notices = console.outbox(MARIA).await.len();

    console.press(KeyCode::Char('F')).await;
    console.press(KeyCode::Char('n')).await;
    let kept = console
        .core
        .user_factors(op, &maria)
        .await
        .expect("factors");
    assert_eq!(kept.factors.len(), 3, "no resets without a yes");

    console.press(KeyCode::Char('F')).await;
    assert_snapshot(&console, "users-confirm-reset-factors");
    console.press(KeyCode::Char('y')).await;
    assert_eq!(
        console.message(),
        "reset the second factors of maria@langcamp.example; their sign-ins ended"
    );
    let left = console
        .core
        .user_factors(op, &maria)
        .await
        .expect("factors");
    assert!(left.factors.is_empty(), "{left:?}");
    assert_eq!(left.recovery_codes_left, 0);
    let screen = console.screen(100, 30);
    assert!(screen.contains("Factors    none"), "reloaded:\n{screen}");
    assert_eq!(
        console.app.users.list.selected().map(|u| u.role),
        Some(Role::Admin)
    );

    // In the trail as the operator's, told to Maria by mail; her sign-in is over.
    let query = AuditQuery {
        action: Some("user.factors_reset".into()),
        ..AuditQuery::default()
    };
    let trail = console
        .core
        .list_audit(op, &query, PageRequest::default())
        .await
        .expect("audit");
    assert_eq!(trail.list.len(), 1);
    let entry = &trail.list[0];
    assert_eq!(entry.actor.kind, "operator");
    assert_eq!(entry.target.id.as_deref(), Some(maria.as_str()));
    let mail = console.outbox(MARIA).await;
    assert_eq!(mail.len(), notices + 1, "{mail:?}");
    assert_eq!(mail.last().map(String::as_str), Some("security_notice"));
    assert!(console.core.authenticate(&token).await.is_err());

    // Nothing is left to reset.
    console.press(KeyCode::Char('F')).await;
    assert_eq!(
        console.error(),
        "maria@langcamp.example has no second factor: nothing to reset"
    );
    assert!(console.app.overlay.is_none());
}
