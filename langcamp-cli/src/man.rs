//! `langcamp man`: the manual page langcamp(1) in roff, generated from the same clap
//! definitions as the parser and the completions, so it never drifts from `--help`.
//!
//! One page holds every command with its arguments (clap_mangen alone would refer to a
//! page per subcommand, `langcamp-users(1)`, that an install of one page does not have),
//! then the exit codes every script branches on.

use clap::{Arg, ArgAction, Command, CommandFactory};
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};

use crate::{Cli, CliError};

pub fn run() -> Result<(), CliError> {
    let page = page().map_err(|e| CliError::failed(format!("cannot render the page: {e}")))?;
    crate::completions::write_stdout(&page)
}

/// langcamp.1: title, name, synopsis, description and global options as clap_mangen
/// renders them, then every command, the exit status and where to read more.
fn page() -> std::io::Result<Vec<u8>> {
    let mut command = Cli::command().disable_help_subcommand(true);
    // Fills in each subcommand's full name (`langcamp users set-role`) for its usage line.
    command.build();
    let version = command.get_version().unwrap_or_default().to_owned();
    let man = Man::new(command.clone())
        .title("LANGCAMP")
        .section("1")
        .source(format!("langcamp {version}"))
        .manual("Langcamp operator's manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;

    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    roff.text([roman(
        "A flag marked [env: NAME] also reads that environment variable; the service \
         itself is configured through the environment. Each command has --help with \
         examples.",
    )]);
    for sub in command.get_subcommands() {
        commands(&mut roff, sub);
    }
    exit_status(&mut roff);
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(
        "The configuration variables, the deployment under systemd and the backups are \
         described in the README and docs/OPERATIONS.md of the source distribution.",
    )]);
    roff.to_writer(&mut out)?;
    Ok(title_first(&String::from_utf8_lossy(&out)).into_bytes())
}

/// Each piece rendered on its own starts with roff's apostrophe preamble (two lines that
/// define the `Aq` string): keep one, after the `.TH` line, which `man` and `whatis`
/// expect first.
fn title_first(pieces: &str) -> String {
    let preamble = Roff::new().render();
    let body = pieces.replace(&preamble, "");
    match body.split_once('\n') {
        Some((title, rest)) => format!("{title}\n{preamble}{rest}"),
        None => body,
    }
}

/// `command` and, below it, each of its subcommands: a command with subcommands of its
/// own (`users`) is a heading for them, a leaf gets its usage line, text and arguments.
fn commands(roff: &mut Roff, command: &Command) {
    if command.is_hide_set() {
        return;
    }
    if command.has_subcommands() {
        for sub in command.get_subcommands() {
            commands(roff, sub);
        }
        return;
    }
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    roff.control("TP", []);
    roff.text([bold(usage)]);
    if let Some(about) = command.get_long_about().or_else(|| command.get_about()) {
        roff.text([roman(about.to_string())]);
    }
    let own: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_global_set() && !a.is_hide_set())
        .filter(|a| !matches!(a.get_action(), ArgAction::Help | ArgAction::Version))
        .collect();
    if own.is_empty() {
        return;
    }
    roff.control("RS", []);
    for arg in own {
        roff.control("TP", []);
        roff.text([italic(arg_name(arg))]);
        let mut help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        if let Some(env) = arg.get_env() {
            help.push_str(&format!(" [env: {}]", env.to_string_lossy()));
        }
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_owned())
            .collect();
        if !values.is_empty() {
            help.push_str(&format!(" [one of: {}]", values.join(", ")));
        }
        roff.text([roman(help)]);
    }
    roff.control("RE", []);
}

/// `--to <TO>`, `--yes`, `<EMAIL>`.
fn arg_name(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .and_then(|names| names.first())
        .map(|name| name.to_string())
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
    let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
    match arg.get_long() {
        Some(long) if takes_value => format!("--{long} <{value}>"),
        Some(long) => format!("--{long}"),
        None => format!("<{value}>"),
    }
}

/// The codes of `crate::error`, for scripts and supervisors.
fn exit_status(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        ("0", "Success."),
        (
            "1",
            "The operation failed (the message is on stderr), or was interrupted.",
        ),
        (
            "2",
            "Usage error, including a destructive command without --yes when not on a terminal.",
        ),
        (
            "75",
            "A dependency (the database, the file store) is unavailable for now (EX_TEMPFAIL): \
             the same command may succeed when run again.",
        ),
    ] {
        roff.control("TP", []);
        roff.text([bold(code)]);
        roff.text([roman(meaning)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        String::from_utf8(page().expect("render")).expect("UTF-8")
    }

    #[test]
    fn the_page_is_langcamp_1_in_roff() {
        let page = text();
        assert!(page.starts_with(".TH LANGCAMP 1 "), "{page}");
        for section in ["NAME", "SYNOPSIS", "OPTIONS", "COMMANDS", "\"EXIT STATUS\""] {
            assert!(page.contains(&format!("\n.SH {section}\n")), "{section}");
        }
    }

    #[test]
    fn every_command_has_its_usage_line_and_arguments() {
        let page = text();
        for usage in [
            "langcamp serve",
            "langcamp users set\\-role",
            "langcamp storage migrate",
            "langcamp completions",
            "langcamp man",
        ] {
            assert!(page.contains(usage), "{usage}: {page}");
        }
        assert!(page.contains("\\-\\-to <TO>"), "{page}");
        assert!(page.contains("[env: PORT]"), "{page}");
    }
}
