//! Mail: a durable outbox written in the caller's transaction, and a worker that delivers it.
//!
//! An action and its mail commit together or not at all; an SMTP outage only delays mail.
//! Messages rest encrypted (they may carry one-time codes), are erased once delivered,
//! and OTP mails are dropped undelivered when their code expires. Workers claim mail with
//! a lease, so several server instances never send one mail twice.

use std::path::PathBuf;
use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};

use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::platform::clock::Clock;
use crate::platform::config::{Config, MailConfig, MailSecurity};
use crate::platform::db::Db;
use crate::platform::db::{Arg, WriteConn};
use crate::platform::health::MailStatus;
use crate::platform::keyring::{Keyring, Opened, Purpose, SealedColumn};
use crate::platform::queue::{Attempt, Claimed, Queue, Retried};
use crate::platform::trace;
use tracing::Instrument as _;

/// The outbox as a durable queue ([`crate::platform::queue`]): claimed with a lease,
/// retried with backoff for a day; a mail sent or given up on keeps no text.
const OUTBOX: Queue = Queue {
    table: "mail_outbox",
    columns: "sealed, trace_parent",
    done: "sent",
    ended: "sealed = NULL",
};
/// How often the worker looks for due mail when nobody wakes it.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
const BATCH: i64 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailKind {
    Otp,
    ContactReply,
    MaterialAssignment,
    SecurityNotice,
}

impl MailKind {
    fn as_str(self) -> &'static str {
        match self {
            MailKind::Otp => "otp",
            MailKind::ContactReply => "contact_reply",
            MailKind::MaterialAssignment => "material_assignment",
            MailKind::SecurityNotice => "security_notice",
        }
    }
}

/// A mail to send: plain text plus an HTML part. Callers escape user text in `html`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutgoingMail {
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// The sealed mail of the outbox that may still be sent (`langcamp keys reseal`).
pub const SEALED_MAIL: SealedColumn = SealedColumn {
    table: "mail_outbox",
    column: "sealed",
    purpose: Purpose::Outbox,
    rows: "status = 'pending'",
};

/// The mail waiting to be sent, and when the oldest was queued.
pub async fn backlog(db: &Db) -> Result<(i64, Option<i64>)> {
    OUTBOX.backlog(db).await
}

/// Queues `mail` inside the caller's transaction, sealed under `keys`, at `now`.
/// `expires_at` (epoch ms) drops it undelivered after that instant.
pub async fn enqueue<C: WriteConn>(
    conn: &mut C,
    keys: &Keyring,
    now: i64,
    kind: MailKind,
    mail: &OutgoingMail,
    expires_at: Option<i64>,
) -> Result<()> {
    let id = new_id();
    let sealed = keys.seal(Purpose::Outbox, &id, &serde_json::to_vec(mail)?);
    conn.exec(
        "INSERT INTO mail_outbox (id, kind, recipient, sealed, status, attempts, next_attempt_at, created_at, expires_at, trace_parent)
         VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5, $6, $7)",
        &[
            Arg::Text(&id),
            Arg::Text(kind.as_str()),
            Arg::Text(&mail.to),
            Arg::Bytes(&sealed),
            Arg::Int(now),
            Arg::OptInt(expires_at),
            // The request's trace, for the delivery's link (None while tracing is off).
            Arg::OptText(trace::current_traceparent().as_deref()),
        ],
    )
    .await?;
    Ok(())
}

/// Escapes text for inclusion in HTML.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Makes text safe for a header line: control characters (CR, LF, ...) become spaces.
pub fn header_safe(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Wraps a body in the minimal HTML document every mail uses.
pub fn html_document(title: &str, body_html: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title></head>\
         <body style=\"font-family:sans-serif;line-height:1.5\">{}</body></html>",
        escape_html(title),
        body_html
    )
}

/// Where mail goes.
enum Transport {
    /// The transport, and the longest time one delivery attempt may take.
    Smtp(AsyncSmtpTransport<Tokio1Executor>, Duration),
    /// Development: `.eml` files in this folder.
    Files(PathBuf),
}

impl Transport {
    fn from_config(mail: &MailConfig, data_dir: &std::path::Path) -> Result<Transport> {
        let Some(host) = &mail.host else {
            return Ok(Transport::Files(data_dir.join("mail")));
        };
        let builder = match mail.security {
            MailSecurity::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(host),
            MailSecurity::StartTls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host),
            MailSecurity::None => Ok(AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(
                host,
            )),
        }
        .map_err(Error::internal)?;
        // lettre's own timeout only bounds the TCP connect on tokio; `send` bounds the rest.
        let mut builder = builder.port(mail.port).timeout(Some(mail.timeout));
        if let Some(user) = &mail.user {
            let pass = mail
                .pass
                .as_ref()
                .map(|p| p.expose().to_owned())
                .unwrap_or_default();
            builder = builder.credentials(Credentials::new(user.clone(), pass));
        }
        Ok(Transport::Smtp(builder.build(), mail.timeout))
    }

    async fn send(&self, id: &str, message: Message) -> std::result::Result<(), String> {
        match self {
            // A server that accepts and then never answers would otherwise hold the worker
            // (and every mail behind this one) forever: the whole attempt is bounded.
            Transport::Smtp(smtp, timeout) => {
                match tokio::time::timeout(*timeout, smtp.send(message)).await {
                    Ok(sent) => sent.map(drop).map_err(|e| e.to_string()),
                    Err(_) => Err(format!(
                        "the SMTP server did not complete the delivery within {} ms (MAIL_TIMEOUT)",
                        timeout.as_millis()
                    )),
                }
            }
            Transport::Files(dir) => {
                tokio::fs::create_dir_all(dir)
                    .await
                    .map_err(|e| e.to_string())?;
                let path = dir.join(format!("{id}.eml"));
                tokio::fs::write(&path, message.formatted())
                    .await
                    .map_err(|e| e.to_string())?;
                tracing::info!(path = %path.display(), "mail written to file (no MAIL_HOST set)");
                Ok(())
            }
        }
    }
}

/// Connects to the configured SMTP server, reads its greeting, negotiates TLS and logs
/// in, then hangs up (`langcamp doctor`). Errors name the server and the cause.
pub async fn check_smtp(mail: &MailConfig) -> std::result::Result<String, String> {
    let Some(host) = &mail.host else {
        return Ok(
            "MAIL_HOST is not set: mail is written as .eml files under DATA_DIR/mail".into(),
        );
    };
    let server = format!("SMTP server {host}:{}", mail.port);
    let transport = match Transport::from_config(mail, std::path::Path::new(".")) {
        Ok(Transport::Smtp(smtp, _)) => smtp,
        Ok(Transport::Files(_)) => return Err(format!("{server}: no SMTP transport")),
        Err(e) => return Err(format!("{server}: {e}")),
    };
    match tokio::time::timeout(mail.timeout, transport.test_connection()).await {
        Ok(Ok(true)) => Ok(format!(
            "{server} greeted{}",
            if mail.user.is_some() {
                " and accepted the credentials"
            } else {
                " (no MAIL_USER: no login tried)"
            }
        )),
        Ok(Ok(false)) => Err(format!("{server}: the connection was not usable")),
        Ok(Err(e)) => Err(format!(
            "{server}: {}",
            crate::platform::health::describe_error(&e)
        )),
        Err(_) => Err(format!(
            "{server}: no answer within {} ms (MAIL_TIMEOUT)",
            mail.timeout.as_millis()
        )),
    }
}

/// What the mail worker works with: the handle's database, keys, clock and configuration,
/// the status it reports, and the signal that new mail was committed.
#[derive(Clone, Copy)]
pub struct Outbox<'a> {
    pub db: &'a Db,
    pub keys: &'a Keyring,
    pub clock: &'a Clock,
    pub config: &'a Config,
    pub status: &'a MailStatus,
    pub wakeup: &'a tokio::sync::Notify,
}

/// Delivers queued mail until `shutdown` resolves.
pub async fn run_worker(outbox: Outbox<'_>, shutdown: impl std::future::Future<Output = ()>) {
    let transport = match Transport::from_config(&outbox.config.mail, &outbox.config.data_dir) {
        Ok(t) => t,
        Err(e) => {
            tracing::error!(error = %e, "mail transport cannot be built; mail stays queued");
            return;
        }
    };
    if let Transport::Files(dir) = &transport {
        tracing::warn!(dir = %dir.display(), "MAIL_HOST is not set: mail is written as .eml files");
    }
    let owner = new_id();
    tokio::pin!(shutdown);
    outbox.status.set_running(true);
    // Cleared on every way out of the loop, so readiness never reports a dead worker alive.
    struct Stopped<'a>(&'a MailStatus);
    impl Drop for Stopped<'_> {
        fn drop(&mut self) {
            self.0.set_running(false);
        }
    }
    let _stopped = Stopped(outbox.status);
    loop {
        match deliver_due(&outbox, &transport, &owner).await {
            Ok(0) | Err(_) => {
                tokio::select! {
                    () = &mut shutdown => return,
                    () = outbox.wakeup.notified() => {}
                    () = tokio::time::sleep(POLL_INTERVAL) => {}
                }
            }
            // There may be more due mail: go again at once, unless asked to stop.
            Ok(_) => {
                if futures_util::FutureExt::now_or_never(&mut shutdown).is_some() {
                    return;
                }
            }
        }
    }
}

/// Claims and delivers one batch; returns how many mails it handled.
async fn deliver_due(outbox: &Outbox<'_>, transport: &Transport, owner: &str) -> Result<usize> {
    let now = outbox.clock.now_ms();
    expire_stale(outbox, now).await?;
    let claimed = OUTBOX.claim(outbox.db, owner, now, BATCH, None).await?;
    let count = claimed.len();
    for mail in claimed {
        deliver_one(outbox, transport, owner, mail).await?;
    }
    Ok(count)
}

async fn expire_stale(outbox: &Outbox<'_>, now: i64) -> Result<()> {
    let mut tx = outbox.db.begin().await?;
    sqlx::query(
        "UPDATE mail_outbox SET status = 'expired', sealed = NULL, lease_until = NULL
         WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= $1",
    )
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn deliver_one(
    outbox: &Outbox<'_>,
    transport: &Transport,
    owner: &str,
    mail: Claimed,
) -> Result<()> {
    use sqlx::Row as _;
    let sealed: Option<Vec<u8>> = mail.row.try_get("sealed")?;
    // A mail no configured secret opens (its key was lost) can never be sent: it fails at
    // once, with the reason, and is never retried.
    let opened = sealed
        .as_deref()
        .and_then(|sealed| outbox.keys.open(Purpose::Outbox, &mail.id, sealed));
    let unreadable = opened.is_none();
    // Read under a previous secret: kept under the current one if it waits for a retry.
    let resealed = match &opened {
        Some(Opened {
            plain,
            current: false,
        }) => Some(outbox.keys.seal(Purpose::Outbox, &mail.id, plain)),
        _ => None,
    };
    let message = opened
        .and_then(|opened| serde_json::from_slice::<OutgoingMail>(&opened.plain).ok())
        .ok_or_else(|| {
            "the message cannot be opened: no configured secret (JWT_SECRET, JWT_SECRET_PREVIOUS) opens it".to_owned()
        })
        .and_then(|m| build_message(&outbox.config.mail, &m));
    // An SMTP delivery is a span of its own trace (files written in development are not).
    let span = match transport {
        Transport::Smtp(..) => {
            let queued_by: Option<String> = mail.row.try_get("trace_parent")?;
            trace::smtp_delivery(queued_by.as_deref())
        }
        Transport::Files(_) => tracing::Span::none(),
    };
    let outcome = match message {
        Ok(message) => {
            transport
                .send(&mail.id, message)
                .instrument(span.clone())
                .await
        }
        Err(e) => Err(e),
    };
    if outcome.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    let now = outbox.clock.now_ms();
    let attempt = Attempt {
        claimed: &mail,
        owner,
        now,
    };
    match outcome {
        Ok(()) => {
            outbox.status.delivered(now);
            OUTBOX
                .done(outbox.db, attempt, &[("sent_at", Arg::Int(now))])
                .await
        }
        Err(error) => {
            let set = match &resealed {
                Some(sealed) => vec![("sealed", Arg::Bytes(sealed))],
                None => Vec::new(),
            };
            let retried = OUTBOX
                .retry(outbox.db, attempt, (&error, unreadable), &set)
                .await?;
            let attempts = mail.attempts + 1;
            match retried {
                Retried::Failed => {
                    tracing::error!(mail_id = %mail.id, attempts, %error, "mail delivery failed for good");
                    outbox.status.attempt_failed(&error, now, true);
                }
                Retried::At(_) => {
                    tracing::warn!(mail_id = %mail.id, attempts, %error, "mail delivery failed; will retry");
                    outbox.status.attempt_failed(&error, now, false);
                }
            }
            Ok(())
        }
    }
}

fn build_message(config: &MailConfig, mail: &OutgoingMail) -> std::result::Result<Message, String> {
    let from = Mailbox::new(
        Some(header_safe(&config.from_name)),
        config
            .from_address
            .parse()
            .map_err(|e| format!("MAIL_FROM_ADDRESS: {e}"))?,
    );
    let to: Mailbox = mail.to.parse().map_err(|e| format!("recipient: {e}"))?;
    Message::builder()
        .from(from)
        .to(to)
        .subject(header_safe(&mail.subject))
        .multipart(
            MultiPart::alternative()
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_PLAIN)
                        .body(mail.text.clone()),
                )
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(mail.html.clone()),
                ),
        )
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_break_html_or_headers() {
        assert_eq!(
            escape_html("<b>\"x\" & 'y'</b>"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;"
        );
        assert_eq!(
            header_safe("Hi\r\nBcc: evil@example.com"),
            "Hi  Bcc: evil@example.com"
        );
    }
}
