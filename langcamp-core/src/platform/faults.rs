//! How the platform's failures become the one error type ([`Error`]), at their edge: a
//! database error, an SQLite storage fault, a failed disk or object store. A dependency
//! that failed is `Unavailable` (503 with `Retry-After`), a bug is `Internal`; "row not
//! found" and unique-constraint violations become `NotFound` and `Conflict`.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::domain::error::Error;

impl From<sqlx::Error> for Error {
    fn from(err: sqlx::Error) -> Error {
        match &err {
            sqlx::Error::RowNotFound => Error::NotFound("not found".into()),
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                Error::Conflict("already exists".into())
            }
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::WorkerCrashed => Error::Unavailable(Box::new(err)),
            sqlx::Error::Database(db) => {
                let sqlite = db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some();
                let code = db.code();
                if sqlite && is_sqlite_storage_fault(code.as_deref()) {
                    // The writer connection that saw this may be read-only or left in a
                    // transaction SQLite already rolled back: the pool replaces it.
                    record_storage_fault();
                }
                if is_unavailable_code(sqlite, code.as_deref()) {
                    Error::Unavailable(Box::new(err))
                } else {
                    Error::Internal(Box::new(err))
                }
            }
            _ => Error::Internal(Box::new(err)),
        }
    }
}

/// The SQLite writer thread's connection ([`crate::platform::db`]) reports the same codes as sqlx's
/// SQLite driver, and they mean the same here.
impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Error {
        match &err {
            rusqlite::Error::QueryReturnedNoRows => Error::NotFound("not found".into()),
            rusqlite::Error::SqliteFailure(failure, _) => {
                // SQLITE_CONSTRAINT_PRIMARYKEY and SQLITE_CONSTRAINT_UNIQUE, as sqlx's
                // `is_unique_violation`.
                if matches!(failure.extended_code, 1555 | 2067) {
                    return Error::Conflict("already exists".into());
                }
                let code = failure.extended_code.to_string();
                if is_sqlite_storage_fault(Some(&code)) {
                    record_storage_fault();
                }
                if is_unavailable_code(true, Some(&code)) {
                    Error::Unavailable(Box::new(err))
                } else {
                    Error::Internal(Box::new(err))
                }
            }
            _ => Error::Internal(Box::new(err)),
        }
    }
}

/// SQLite reports extended result codes (`SQLITE_IOERR_WRITE` is 778); the primary code
/// is the low byte.
fn sqlite_primary(code: Option<&str>) -> Option<i64> {
    code.and_then(|c| c.parse::<i64>().ok()).map(|c| c & 0xff)
}

/// SQLite result codes that mean the file or its disk refused the write: SQLITE_READONLY,
/// SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN. After one of them the connection may be
/// unusable (opened read-only, or its transaction rolled back by SQLite itself).
fn is_sqlite_storage_fault(code: Option<&str>) -> bool {
    matches!(sqlite_primary(code), Some(8 | 10 | 13 | 14))
}

/// Database error codes that mean "try again later" rather than "bug".
fn is_unavailable_code(sqlite: bool, code: Option<&str>) -> bool {
    if sqlite {
        // SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY (a read-only file or mount: an
        // operator's fault, cleared without a restart), SQLITE_IOERR, SQLITE_FULL,
        // SQLITE_CANTOPEN.
        return matches!(sqlite_primary(code), Some(5 | 6 | 8 | 10 | 13 | 14));
    }
    matches!(
        code,
        // PostgreSQL: connection exceptions, admin shutdown, cannot connect now,
        // too many connections, serialization failure, deadlock, disk full, out of
        // memory, a read-only transaction forced by the server (a standby, or
        // `default_transaction_read_only` set while the disk is being rescued).
        Some(
            "08000"
                | "08003"
                | "08006"
                | "08001"
                | "08004"
                | "57P01"
                | "57P02"
                | "57P03"
                | "53300"
                | "40001"
                | "40P01"
        ) | Some("53100" | "53200" | "25006")
    )
}

/// How many SQLite storage faults this process has seen. A process-wide count because
/// errors are classified here, without the pool at hand; the writer pool compares it on
/// every release and replaces its connection when it moved. A fault seen by another
/// instance in the same process (tests) costs at most one needless reconnect.
static STORAGE_FAULTS: AtomicU64 = AtomicU64::new(0);

fn record_storage_fault() {
    STORAGE_FAULTS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn storage_faults() -> u64 {
    STORAGE_FAULTS.load(Ordering::Relaxed)
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        if is_unavailable_io(&err) {
            Error::Unavailable(Box::new(err))
        } else {
            Error::Internal(Box::new(err))
        }
    }
}

/// I/O failures that an operator clears (free space, remount read-write, raise a quota or
/// the open-file limit) and after which a retry succeeds: a fault of the machine, not a
/// bug. Everything else stays `Internal`.
fn is_unavailable_io(err: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        err.kind(),
        ErrorKind::StorageFull | ErrorKind::ReadOnlyFilesystem | ErrorKind::QuotaExceeded
    ) || matches!(err.raw_os_error(), Some(EMFILE | ENFILE))
        // The object store failed or is unreachable (storage/s3.rs).
        || err
            .get_ref()
            .is_some_and(|inner| inner.is::<crate::platform::file_store::StoreUnavailable>())
}

/// "Too many open files" (per process, system-wide) have no `ErrorKind`; the numbers
/// are the same on Linux, the BSDs and macOS.
const EMFILE: i32 = 24;
const ENFILE: i32 = 23;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn unavailable(err: io::Error) -> bool {
        matches!(Error::from(err), Error::Unavailable(_))
    }

    #[test]
    fn a_full_read_only_or_over_quota_disk_is_unavailable() {
        assert!(unavailable(io::Error::from(io::ErrorKind::StorageFull)));
        assert!(unavailable(io::Error::from(
            io::ErrorKind::ReadOnlyFilesystem
        )));
        assert!(unavailable(io::Error::from(io::ErrorKind::QuotaExceeded)));
        assert!(unavailable(io::Error::from_raw_os_error(EMFILE)));
        assert!(unavailable(io::Error::from_raw_os_error(ENFILE)));
    }

    #[test]
    fn other_io_errors_stay_internal() {
        assert!(!unavailable(io::Error::from(io::ErrorKind::InvalidData)));
        assert!(!unavailable(io::Error::from(
            io::ErrorKind::PermissionDenied
        )));
        assert!(!unavailable(io::Error::other("a bug")));
        // The object store failing or unreachable (storage/s3.rs) is a dependency's fault.
        assert!(unavailable(io::Error::other(
            crate::platform::file_store::StoreUnavailable("connection refused".into())
        )));
    }

    #[test]
    fn sqlite_extended_codes_are_classified_by_their_primary_code() {
        // SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, SQLITE_FULL, SQLITE_BUSY_SNAPSHOT.
        for code in ["778", "1032", "13", "517"] {
            assert!(is_unavailable_code(true, Some(code)), "{code}");
        }
        // SQLITE_CONSTRAINT_FOREIGNKEY, SQLITE_ERROR.
        for code in ["787", "1"] {
            assert!(!is_unavailable_code(true, Some(code)), "{code}");
        }
        assert!(is_sqlite_storage_fault(Some("778")));
        assert!(!is_sqlite_storage_fault(Some("5")));
        // PostgreSQL SQLSTATEs are not read as SQLite numbers.
        assert!(is_unavailable_code(false, Some("53100")));
        assert!(!is_unavailable_code(false, Some("23503")));
    }
}
