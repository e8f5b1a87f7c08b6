//! `langcamp mail-templates`: the mail templates of CONTRACT §16 as files, one readable,
//! diffable `<kind>.<locale>.mail` file per template, so a school keeps its wording in
//! version control and a translator edits plain text.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use langcamp_core::Actor;
use langcamp_core::mail_templates::{MailTemplate, NewMailTemplate, file};

use crate::{Cli, CliError};

#[derive(Debug, Subcommand)]
pub enum MailTemplatesCommand {
    /// List every template in effect: built-in, or edited (stored) with the time it was saved.
    #[command(after_help = "Example:\n  langcamp mail-templates list --json")]
    List,
    /// Write every template in effect to DIR (created if missing), one
    /// `<kind>.<locale>.mail` file each.
    #[command(after_help = "Example:\n  langcamp mail-templates export mail-templates/")]
    Export { dir: PathBuf },
    /// Store the templates of DIR's `*.mail` files. Every file is checked first (its name,
    /// its form, its template): when one is bad, nothing changes and every problem is
    /// listed. A file the same as the template in effect changes nothing.
    #[command(after_help = "Example:\n  langcamp mail-templates import mail-templates/")]
    Import { dir: PathBuf },
}

pub async fn run(cli: &Cli, command: &MailTemplatesCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let operator = Actor::Operator;
    match command {
        MailTemplatesCommand::List => {
            let templates = app.list_mail_templates(&operator).await?;
            if cli.json {
                crate::print_json(&templates)?;
            } else {
                for t in &templates {
                    println!(
                        "{:<18} {:<8} {:<24} {}",
                        t.kind,
                        t.locale,
                        origin(t),
                        t.subject
                    );
                }
            }
        }
        MailTemplatesCommand::Export { dir } => {
            let templates = app.list_mail_templates(&operator).await?;
            let written = export(dir, &templates)?;
            if cli.json {
                crate::print_json(&serde_json::json!({ "written": written }))?;
            } else {
                println!("wrote {} templates to {}", written.len(), dir.display());
            }
        }
        MailTemplatesCommand::Import { dir } => {
            let templates = read_dir(dir)?;
            let report = app.import_mail_templates(&operator, templates).await?;
            if cli.json {
                crate::print_json(&report)?;
            } else {
                for name in &report.stored {
                    println!("stored {name}");
                }
                println!(
                    "{} stored, {} unchanged",
                    report.stored.len(),
                    report.unchanged.len()
                );
            }
        }
    }
    app.db().close().await;
    Ok(())
}

/// `built-in`, or when staff saved it.
fn origin(template: &MailTemplate) -> String {
    match &template.updated_at {
        Some(at) if !template.built_in => format!("edited {at}"),
        _ => "built-in".to_owned(),
    }
}

/// Writes each template to `dir`; the paths written.
fn export(dir: &Path, templates: &[MailTemplate]) -> Result<Vec<String>, CliError> {
    let io = |path: &Path, e: std::io::Error| CliError::failed(format!("{}: {e}", path.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut written = Vec::with_capacity(templates.len());
    for t in templates {
        let path = dir.join(format!("{}.{}.{}", t.kind, t.locale, file::EXTENSION));
        let text = file::format(&t.subject, &t.text, t.html.as_deref());
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

/// Every `*.mail` file of `dir`, checked: all of them, or every problem of every file.
fn read_dir(dir: &Path) -> Result<Vec<NewMailTemplate>, CliError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| CliError::failed(format!("{}: {e}", dir.display())))?;
    let mut names: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(&format!(".{}", file::EXTENSION)))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(CliError::failed(format!(
            "{}: no *.{} files",
            dir.display(),
            file::EXTENSION
        )));
    }
    let mut templates = Vec::with_capacity(names.len());
    let mut problems: Vec<String> = Vec::new();
    for name in &names {
        match read_one(&dir.join(name), name) {
            Ok(template) => templates.push(template),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(templates)
    } else {
        Err(CliError::failed(format!(
            "nothing was imported; fix these first:\n  {}",
            problems.join("\n  ")
        )))
    }
}

fn read_one(path: &Path, name: &str) -> Result<NewMailTemplate, Vec<String>> {
    let (kind, locale) = file::parse_file_name(name).map_err(|e| vec![e])?;
    let text = std::fs::read_to_string(path).map_err(|e| vec![format!("{name}: {e}")])?;
    let input = file::parse(&text).map_err(|e| vec![format!("{name}: {e}")])?;
    NewMailTemplate::new(kind, locale, input).map_err(|error| match error {
        langcamp_core::Error::Validation(messages) => messages
            .into_iter()
            .map(|m| format!("{name}: {m}"))
            .collect(),
        other => vec![format!("{name}: {other}")],
    })
}
