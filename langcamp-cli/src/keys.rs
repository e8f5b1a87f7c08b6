//! `langcamp keys`: the server's keys (CONTRACT §22). After a rotation (the new secret in
//! `JWT_SECRET`, the old one in `JWT_SECRET_PREVIOUS`, every instance restarted), `reseal`
//! writes every stored value still sealed under the old secret under the new one, and says
//! when the old one can go.

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::platform::keyring::KeyCounts;

use crate::{Cli, CliError};

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Seal every stored secret (TOTP secrets, queued mail, webhook secrets) under the
    /// current JWT_SECRET; print how many changed, how many still need a previous secret
    /// and how many no configured secret opens. Idempotent; safe while the service runs.
    #[command(after_help = "Examples:\n  langcamp keys reseal\n  langcamp keys reseal --json")]
    Reseal,
}

pub async fn run(cli: &Cli, command: &KeysCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let outcome = match command {
        KeysCommand::Reseal => app.reseal_keys(&Actor::Operator).await,
    };
    app.db().close().await;
    let counts = outcome?;
    if cli.json {
        crate::print_json(&counts)?;
    } else {
        print!("{}", describe(&counts));
    }
    Ok(())
}

/// What the counts mean for the operator, one line each.
fn describe(counts: &KeyCounts) -> String {
    let mut text = format!(
        "Resealed {} stored value(s) under the current JWT_SECRET.\n",
        counts.resealed
    );
    text.push_str(&if counts.need_previous == 0 {
        "Nothing needs a previous secret: JWT_SECRET_PREVIOUS can go (after the last token it signed has expired, JWT_EXPIRATION).\n".to_owned()
    } else {
        format!(
            "{} value(s) still need a previous secret (recovery codes made before this release, until they are used or renewed): keep JWT_SECRET_PREVIOUS.\n",
            counts.need_previous
        )
    });
    if counts.unreadable > 0 {
        text.push_str(&format!(
            "{} value(s) open under no configured secret (a secret was lost): those users' authenticator apps must be reset (`langcamp users reset-factors <email>`); such queued mail fails without being sent.\n",
            counts.unreadable
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_says_when_the_previous_secret_can_go() {
        let done = describe(&KeyCounts {
            resealed: 3,
            need_previous: 0,
            unreadable: 0,
        });
        assert!(done.contains("Resealed 3"), "{done}");
        assert!(done.contains("JWT_SECRET_PREVIOUS can go"), "{done}");
        let lost = describe(&KeyCounts {
            resealed: 0,
            need_previous: 2,
            unreadable: 1,
        });
        assert!(lost.contains("keep JWT_SECRET_PREVIOUS"), "{lost}");
        assert!(lost.contains("langcamp users reset-factors"), "{lost}");
    }
}
