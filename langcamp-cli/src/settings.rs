//! `langcamp settings`: read and write settings (any JSON value), as the operator.

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::settings::{NewSetting, SettingKey};

use crate::{Cli, CliError};

#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// Print a setting's value.
    #[command(after_help = "Example:\n  langcamp settings get landing_video_url")]
    Get { key: String },
    /// Create or replace a setting; the value is JSON (quote strings).
    #[command(
        after_help = "Examples:\n  langcamp settings set landing_video_url '\"https://videos.example/intro.mp4\"'\n  langcamp settings set max_class_size 12"
    )]
    Set { key: String, value: String },
    /// List every setting.
    #[command(after_help = "Example:\n  langcamp settings list --json")]
    List,
}

pub async fn run(cli: &Cli, command: &SettingsCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let operator = Actor::Operator;
    match command {
        SettingsCommand::Get { key } => {
            let setting = app.get_setting(&operator, &SettingKey::named(key)?).await?;
            if cli.json {
                crate::print_json(&setting)?;
            } else {
                println!("{}", setting.value);
            }
        }
        SettingsCommand::Set { key, value } => {
            let value: serde_json::Value = serde_json::from_str(value).map_err(|e| {
                CliError::usage(format!(
                    "the value must be JSON (quote strings: '\"text\"'): {e}"
                ))
            })?;
            let setting = app
                .put_setting(&operator, NewSetting::new(key.clone(), value)?)
                .await?;
            if cli.json {
                crate::print_json(&setting)?;
            } else {
                println!("{} = {}", setting.key, setting.value);
            }
        }
        SettingsCommand::List => {
            let settings = app.list_settings(&operator).await?;
            if cli.json {
                crate::print_json(&settings)?;
            } else {
                for s in &settings {
                    println!("{} = {}", s.key, s.value);
                }
            }
        }
    }
    app.db().close().await;
    Ok(())
}
