//! Why a command failed, and its exit code: the one place that decides both.
//!
//! Scripts branch on the exit code, so each kind that calls for a different reaction has
//! its own: fix the command line (2), look at the message (1), or run the same command
//! again later (75).

use std::fmt;

use langcamp_core::Error;
use langcamp_core::platform::health::describe_error;

#[derive(Debug)]
pub enum CliError {
    /// The command line is wrong or incomplete (clap exits 2 for its own findings, too).
    Usage(String),
    /// The operation failed: not found, refused input, a conflict, a failed check, a bug.
    Failed(String),
    /// A dependency (the database, the file store) is unreachable or refusing work for
    /// now; running the same command later may succeed without changing anything.
    Unavailable(String),
}

/// `EX_TEMPFAIL` of sysexits.h: the code that mail agents, cron wrappers and retry loops
/// already read as "temporary failure, try again later".
pub const EXIT_UNAVAILABLE: u8 = 75;

impl CliError {
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage(message.into())
    }

    pub fn failed(message: impl Into<String>) -> CliError {
        CliError::Failed(message.into())
    }

    /// 0 is success; these are the contract's 1 and 2, and 75 for "retry later".
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Failed(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Unavailable(_) => EXIT_UNAVAILABLE,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            CliError::Usage(m) | CliError::Failed(m) | CliError::Unavailable(m) => m,
        }
    }

    /// The same kind with another message (one that names more than the core error does).
    pub fn with_message(self, message: String) -> CliError {
        match self {
            CliError::Usage(_) => CliError::Usage(message),
            CliError::Failed(_) => CliError::Failed(message),
            CliError::Unavailable(_) => CliError::Unavailable(message),
        }
    }

    /// Prefixes the message with what the command was doing, keeping the kind.
    pub fn context(self, doing: impl fmt::Display) -> CliError {
        let message = format!("{doing}: {}", self.message());
        self.with_message(message)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl From<Error> for CliError {
    fn from(error: Error) -> CliError {
        match error {
            // The operator runs the command on the server: the cause (host, port, driver
            // message) is theirs to see, unlike an HTTP client's.
            Error::Unavailable(_) => CliError::Unavailable(describe_error(&error)),
            Error::Internal(_) => CliError::Failed(describe_error(&error)),
            // NotFound, Validation, Conflict, Forbidden, quotas and the rest: the message
            // is the explanation, and retrying the same command will not change it.
            other => CliError::Failed(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_core_error_kind_has_its_exit_code() {
        let io = || std::io::Error::other("connection refused");
        for (error, code) in [
            (Error::not_found("user"), 1),
            (Error::invalid("bad key"), 1),
            (Error::Conflict("already exists".into()), 1),
            (Error::forbidden(), 1),
            (Error::internal(io()), 1),
            (Error::Unavailable(Box::new(io())), EXIT_UNAVAILABLE),
        ] {
            let text = error.to_string();
            assert_eq!(CliError::from(error).exit_code(), code, "{text}");
        }
        assert_eq!(CliError::usage("x").exit_code(), 2);
    }

    #[test]
    fn an_unavailable_dependency_is_named_with_its_cause() {
        let error = CliError::from(Error::Unavailable(Box::new(std::io::Error::other(
            "connection refused",
        ))))
        .context("migration failed");
        assert_eq!(error.exit_code(), EXIT_UNAVAILABLE);
        assert!(
            error.message().starts_with("migration failed: ")
                && error.message().contains("connection refused"),
            "{error}"
        );
    }
}
