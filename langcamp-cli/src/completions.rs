//! `langcamp completions SHELL`: the shell's completion script, generated from the same
//! clap definitions as the parser, so it never lists a command the binary lacks.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::{Cli, CliError};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: Shell,
}

pub fn run(args: &Args) -> Result<(), CliError> {
    write_stdout(&script(args.shell))
}

/// The completion script for `shell`. Generated into memory: clap_complete panics when
/// its writer fails, and stdout may be a closed pipe (`langcamp completions bash | head`).
fn script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "langcamp", &mut out);
    out
}

/// Writes a generated text to stdout; a closed pipe or a full disk is exit 1, not a panic.
pub fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::failed(format!("cannot write to stdout: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command at every depth (`users`, `set-role`, ...), from the parser's own
    /// definition.
    fn command_names(command: &clap::Command, into: &mut Vec<String>) {
        for sub in command.get_subcommands() {
            into.push(sub.get_name().to_owned());
            command_names(sub, into);
        }
    }

    /// The words of a script: runs of the characters a command name is made of.
    fn words(script: &[u8]) -> std::collections::BTreeSet<String> {
        String::from_utf8_lossy(script)
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn every_shell_completes_every_command() {
        let mut names = Vec::new();
        command_names(&Cli::command(), &mut names);
        assert!(names.len() > 10, "{names:?}");
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::PowerShell] {
            let words = words(&script(shell));
            let missing: Vec<&String> = names.iter().filter(|n| !words.contains(*n)).collect();
            assert!(missing.is_empty(), "{shell}: {missing:?}");
        }
    }

    #[test]
    fn the_bash_script_registers_itself_for_langcamp() {
        let script = String::from_utf8_lossy(&script(Shell::Bash)).into_owned();
        assert!(script.contains("complete -F _langcamp"), "{script}");
    }
}
