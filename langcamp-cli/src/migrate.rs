//! `langcamp migrate`: apply pending migrations and list what was applied.

use crate::{Cli, CliError};

pub async fn run(cli: &Cli) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let applied = app
        .migrate()
        .await
        .map_err(|e| CliError::from(e).context("migration failed"))?;
    if cli.json {
        println!("{}", serde_json::json!({ "applied": applied }));
    } else if applied.is_empty() {
        println!("The database is up to date.");
    } else {
        for m in &applied {
            println!("applied {} {}", m.version, m.description);
        }
    }
    app.db().close().await;
    Ok(())
}
