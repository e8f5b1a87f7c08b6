//! `langcamp users`: list, create, promote and delete users, as the operator.

use clap::{Subcommand, ValueEnum};
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
    }
    app.db().close().await;
    Ok(())
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
