//! The one error type of every core operation.
//!
//! Front ends map each variant to their own medium (an HTTP status and code, a CLI exit
//! code, a console message) in one place. The platform's failures (database, disk, object
//! store) are classified into it at their edge (`platform/faults.rs`), so no caller ever
//! inspects a driver error.
//!
//! Rate limits that count requests per client address and route are the HTTP layer's
//! (`langcamp-http/src/limits.rs` answers 429); the one limit of core is an account's:
//! [`Error::Locked`].

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The thing does not exist, or the caller may not know that it does.
    #[error("{0}")]
    NotFound(String),
    /// The input was refused; one message per problem.
    #[error("{}", .0.join("; "))]
    Validation(Vec<String>),
    /// No credentials were presented.
    #[error("authentication required")]
    Unauthorized,
    /// A token was presented but is malformed, expired, revoked or of a deleted user.
    #[error("invalid or expired token")]
    TokenInvalid,
    /// A one-time code was wrong, expired, used or dead.
    #[error("invalid or expired code")]
    OtpInvalid,
    /// The caller is known but may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The caller's sign-in must pass its second factor before this (CONTRACT §20).
    #[error("verify your second factor first")]
    SecondFactorRequired,
    /// This needs a recent second-factor check on the caller's sign-in (step-up, §20).
    #[error("verify your second factor again to do this")]
    StepUpRequired,
    /// The request conflicts with the current state (a taken e-mail, the last superadmin).
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// Storing this would pass the file store's quota (`FILE_STORE_MAX_BYTES`); nothing was
    /// stored. A quota, not a fault: retrying will not help until files are removed.
    #[error("{0}")]
    InsufficientStorage(String),
    /// Too many wrong answers locked this for a while (an account's second step, CONTRACT
    /// §22): every answer is refused until `retry_after_secs` have passed.
    #[error("{message}")]
    Locked {
        message: String,
        retry_after_secs: u64,
    },
    /// A dependency (the database) is unreachable; retrying later may succeed.
    #[error("service temporarily unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A bug or an unexpected failure; the cause is logged, never shown to clients.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn not_found(what: &str) -> Error {
        Error::NotFound(format!("{what} not found"))
    }

    pub fn invalid(message: impl Into<String>) -> Error {
        Error::Validation(vec![message.into()])
    }

    pub fn forbidden() -> Error {
        Error::Forbidden("you do not have permission to do this".into())
    }

    pub fn internal(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Internal(cause.into())
    }
}

impl From<serde_json::Error> for Error {
    fn from(err: serde_json::Error) -> Error {
        Error::Internal(Box::new(err))
    }
}
