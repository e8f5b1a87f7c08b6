//! `langcamp webhooks`: the endpoints that hear the school's events (CONTRACT §24) and how
//! their deliveries stand. They are made and changed through the API (a superadmin with
//! step-up), which shows each secret once.

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::webhooks::EndpointStanding;

use crate::{Cli, CliError};

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// List every endpoint: its URL and events, whether it is enabled, and its deliveries
    /// pending, delivered and failed (the log keeps 30 days), the latest delivery, and
    /// whether it is resting after failed attempts.
    #[command(after_help = "Examples:\n  langcamp webhooks list\n  langcamp webhooks list --json")]
    List,
}

pub async fn run(cli: &Cli, command: &WebhooksCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let outcome = match command {
        WebhooksCommand::List => app.webhook_standings(&Actor::Operator).await,
    };
    app.db().close().await;
    let standings = outcome?;
    if cli.json {
        crate::print_json(&standings)?;
    } else {
        print!("{}", describe(&standings));
    }
    Ok(())
}

/// One paragraph per endpoint.
fn describe(standings: &[EndpointStanding]) -> String {
    if standings.is_empty() {
        return "No webhook endpoints (a superadmin adds one with POST /admin/webhooks).\n".into();
    }
    let mut text = String::new();
    for s in standings {
        let e = &s.endpoint;
        let events: Vec<&str> = e.events.iter().map(|event| event.as_str()).collect();
        text.push_str(&format!(
            "{}  {}{}\n  events: {}\n  deliveries: {} pending, {} delivered, {} failed; last delivered {}\n",
            e.id,
            e.url,
            if e.enabled { "" } else { "  (disabled)" },
            events.join(", "),
            s.pending,
            s.delivered,
            s.failed,
            s.last_delivered_at
                .map_or_else(|| "never".to_owned(), |at| at.to_string()),
        ));
        if let Some(until) = s.resting_until {
            text.push_str(&format!(
                "  resting until {until} after {} failed round(s) in a row\n",
                s.failing_rounds
            ));
        }
        if let Some(description) = &e.description {
            text.push_str(&format!("  {description}\n"));
        }
    }
    text
}
