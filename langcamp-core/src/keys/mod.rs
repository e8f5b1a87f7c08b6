//! The server's keys as the operator sees them (CONTRACT §22): `langcamp keys reseal`
//! writes every stored value still sealed under a previous secret under the current one,
//! and says how many still need a previous secret (`JWT_SECRET_PREVIOUS` can go at 0) and
//! how many no configured secret opens; `langcamp doctor` counts the same without writing.
//!
//! The values live in several areas (TOTP secrets in `auth`, queued mail in the outbox,
//! webhook secrets in `webhooks`): each area reseals its own through
//! [`crate::platform::keyring::reseal`]; this area adds them up.

use crate::Langcamp;
use crate::audit::{Entry, Target};
use crate::domain::actor::Actor;
use crate::domain::error::Result;
use crate::platform::keyring::{self, KeyCounts};
use crate::platform::mail::SEALED_MAIL;

impl Langcamp {
    /// `langcamp keys reseal`: every readable value under a previous secret written again
    /// under the current one; what is left. Idempotent, safe while the service runs;
    /// recorded in the audit trail when it changed anything. Operator only.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn reseal_keys(&self, actor: &Actor) -> Result<KeyCounts> {
        actor.require_operator()?;
        let counts = self.count_keys(true).await?;
        if counts.resealed > 0 {
            let entry = Entry::new("keys.resealed", Target::named("keys", "stored secrets"))
                .with_change_map(serde_json::json!({
                    "resealed": { "from": null, "to": counts.resealed },
                }));
            self.record_alone(actor, entry).await?;
        }
        Ok(counts)
    }

    /// What still needs a previous secret, and what no configured secret opens, without
    /// writing (`langcamp doctor`). Operator only.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn key_counts(&self, actor: &Actor) -> Result<KeyCounts> {
        actor.require_operator()?;
        self.count_keys(false).await
    }

    async fn count_keys(&self, write: bool) -> Result<KeyCounts> {
        let mut counts = self.reseal_factor_secrets(write).await?;
        counts += keyring::reseal(self.db(), self.keys(), SEALED_MAIL, write).await?;
        counts += self.reseal_webhook_secrets(write).await?;
        Ok(counts)
    }
}
