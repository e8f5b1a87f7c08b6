//! Ctrl-C and SIGTERM: `serve` stops on them gracefully, and a long command stops on them
//! leaving a consistent state (each command says which) instead of being killed midway.

use std::future::Future;

use crate::CliError;

/// Resolves at the first SIGINT (Ctrl-C) or SIGTERM. Until this is first polled the
/// signals keep their default action (the process ends at once).
pub async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

/// The operator (or a supervisor) stopped the command before `work` finished.
#[derive(Debug)]
pub struct Interrupted;

impl Interrupted {
    /// Exit 1 with `what` said about the state left behind; not 75, which a retrying
    /// wrapper would take as "run me again" against the operator's wish.
    pub fn into_error(self, what: impl std::fmt::Display) -> CliError {
        CliError::failed(format!("interrupted: {what}"))
    }
}

/// Runs `work` until it finishes or a signal comes; on a signal `work` is dropped where
/// it stands (its transaction rolls back, its unfinished upload is abandoned).
pub async fn unless_interrupted<T>(work: impl Future<Output = T>) -> Result<T, Interrupted> {
    tokio::select! {
        // The work's own end wins a tie: a finished job is reported as finished.
        biased;
        done = work => Ok(done),
        () = signal() => Err(Interrupted),
    }
}
