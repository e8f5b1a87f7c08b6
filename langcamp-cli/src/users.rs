//! `langcamp users`: list, create, promote and delete users, and reset a user's second
//! factors (CONTRACT §20), as the operator.

use clap::{Subcommand, ValueEnum};
use langcamp_core::auth::FactorList;
use langcamp_core::domain::validate;
use langcamp_core::domain::{Email, Id};
use langcamp_core::users::{NewUser, User, UserQuery};
use langcamp_core::{Actor, PageRequest, Role};

use crate::{Cli, CliError, confirm};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    User,
    Admin,
    Superadmin,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::User => Role::User,
            RoleArg::Admin => Role::Admin,
            RoleArg::Superadmin => Role::Superadmin,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// List users, newest first.
    #[command(
        after_help = "Examples:\n  langcamp users list --role admin\n  langcamp users list --q ana --json"
    )]
    List {
        /// Only users with this role.
        #[arg(long, value_enum)]
        role: Option<RoleArg>,
        /// Case-insensitive part of the e-mail or name.
        #[arg(long)]
        q: Option<String>,
        /// Page (1-based).
        #[arg(long, default_value_t = 1)]
        page: u32,
        /// Users per page (1..=100).
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Create a user (registration is complete only when a name is given).
    #[command(
        after_help = "Example:\n  langcamp users create head@school.example --role superadmin --name 'Head Teacher'"
    )]
    Create {
        email: String,
        #[arg(long, value_enum, default_value = "user")]
        role: RoleArg,
        #[arg(long)]
        name: Option<String>,
    },
    /// Change a user's role (the superadmin task).
    #[command(
        after_help = "Example:\n  langcamp users set-role teacher@school.example admin --yes"
    )]
    SetRole {
        email: String,
        #[arg(value_enum)]
        role: RoleArg,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
    /// Delete a user with their sessions, results and assignments.
    #[command(after_help = "Example:\n  langcamp users delete former@school.example --yes")]
    Delete {
        email: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
    /// Remove every second factor and recovery code of a user who lost theirs, and end
    /// their sign-ins; they are told by mail and add a factor again at their next sign-in.
    #[command(after_help = "Example:\n  langcamp users reset-factors teacher@school.example --yes")]
    ResetFactors {
        email: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
}

/// The user's address as given on the command line; one that is not an address fails the
/// command like any refused input (exit 1).
fn address(raw: &str) -> Result<Email, CliError> {
    Email::parse("email", raw).map_err(CliError::failed)
}

pub async fn run(cli: &Cli, command: &UsersCommand) -> Result<(), CliError> {
    let app = crate::open(crate::config(cli)?).await?;
    let operator = Actor::Operator;
    match command {
        UsersCommand::List {
            role,
            q,
            page,
            limit,
        } => {
            let page = PageRequest::parse(Some(&page.to_string()), Some(&limit.to_string()))?;
            let query = UserQuery {
                text: validate::search_text(q.as_deref()),
                is_registration_complete: None,
                role: role.map(Role::from),
            };
            let found = app.list_users(&operator, &query, page).await?;
            if cli.json {
                crate::print_json(&found)?;
            } else {
                print_table(&found.list);
                println!(
                    "page {} of {} ({} users)",
                    found.pagination.current_page,
                    found.pagination.total_pages.max(1),
                    found.pagination.total_items
                );
            }
        }
        UsersCommand::Create { email, role, name } => {
            let user = app
                .create_user(
                    &operator,
                    NewUser::new(email, (*role).into(), name.as_deref())?,
                )
                .await?;
            report(cli, &user, "created")?;
        }
        UsersCommand::SetRole { email, role, yes } => {
            let user = app.get_user_by_email(&operator, &address(email)?).await?;
            let role = Role::from(*role);
            confirm(
                *yes,
                &format!(
                    "Change the role of {} from {} to {role}?",
                    user.email, user.role
                ),
            )?;
            let user = app.set_role(&operator, &user.id.into(), role).await?;
            report(cli, &user, "updated")?;
        }
        UsersCommand::Delete { email, yes } => {
            let user = app.get_user_by_email(&operator, &address(email)?).await?;
            confirm(
                *yes,
                &format!(
                    "Delete {} ({}) with their results and assignments?",
                    user.email, user.role
                ),
            )?;
            let deleted = app.delete_user(&operator, &Id::from(&user.id)).await?;
            if cli.json {
                crate::print_json(&deleted)?;
            } else {
                println!("deleted {}", user.email);
            }
        }
        UsersCommand::ResetFactors { email, yes } => {
            let user = app.get_user_by_email(&operator, &address(email)?).await?;
            let id = Id::from(&user.id);
            let had = app.user_factors(&operator, &id).await?;
            confirm(
                *yes,
                &format!(
                    "Reset the second factors of {} ({}): {}? Their sign-ins end and they \
                     are told by mail.",
                    user.email,
                    user.role,
                    what_goes(&had)
                ),
            )?;
            app.reset_factors(&operator, &id).await?;
            if cli.json {
                crate::print_json(&serde_json::json!({
                    "id": user.id,
                    "email": user.email,
                    "factorsRemoved": had.factors.len(),
                    "recoveryCodesRemoved": had.recovery_codes_left,
                }))?;
            } else {
                println!(
                    "reset the second factors of {} ({}); their sign-ins ended and a notice \
                     mail is queued",
                    user.email,
                    what_goes(&had)
                );
            }
        }
    }
    app.db().close().await;
    Ok(())
}

/// What a reset removes, e.g. `2 factors (Phone, MacBook) and 10 recovery codes`.
fn what_goes(list: &FactorList) -> String {
    let names: Vec<&str> = list.factors.iter().map(|f| f.name.as_str()).collect();
    let factors = match names.len() {
        0 => "no factor".to_owned(),
        1 => format!("1 factor ({})", names[0]),
        n => format!("{n} factors ({})", names.join(", ")),
    };
    let codes = match list.recovery_codes_left {
        0 => "no recovery code".to_owned(),
        1 => "1 recovery code".to_owned(),
        n => format!("{n} recovery codes"),
    };
    format!("{factors} and {codes}")
}

fn report(cli: &Cli, user: &User, what: &str) -> Result<(), CliError> {
    if cli.json {
        crate::print_json(user)
    } else {
        println!("{what} {} ({}, id {})", user.email, user.role, user.id);
        Ok(())
    }
}

fn print_table(users: &[User]) {
    println!(
        "{:<36}  {:<32}  {:<10}  {:<8}  NAME",
        "ID", "EMAIL", "ROLE", "COMPLETE"
    );
    for u in users {
        println!(
            "{:<36}  {:<32}  {:<10}  {:<8}  {}",
            u.id,
            u.email,
            u.role.as_str(),
            if u.is_registration_complete {
                "yes"
            } else {
                "no"
            },
            u.name.as_deref().unwrap_or("-")
        );
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::Cli;

    #[test]
    fn reset_factors_takes_an_address_and_an_optional_yes() {
        for line in [
            "langcamp users reset-factors a@example.com",
            "langcamp users reset-factors a@example.com --yes --json",
        ] {
            assert!(
                Cli::try_parse_from(line.split_whitespace()).is_ok(),
                "{line}"
            );
        }
        for line in [
            "langcamp users reset-factors",
            "langcamp users reset-factors a@example.com b@example.com",
        ] {
            let err = Cli::try_parse_from(line.split_whitespace()).expect_err(line);
            assert_eq!(err.exit_code(), 2, "{line}");
        }
    }
}
