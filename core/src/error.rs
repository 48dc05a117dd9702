//! The one error type of the core, with stable codes (docs/README.md §4.4).

use std::fmt;

/// Why a precondition failed (engine.md §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictReason {
    /// No `replaces`, but the document exists.
    Exists,
    /// `replaces` given, but there is no document.
    Missing,
    /// The hashes differ.
    Changed,
}

impl ConflictReason {
    /// The reason as data: `exists`, `missing` or `changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictReason::Exists => "exists",
            ConflictReason::Missing => "missing",
            ConflictReason::Changed => "changed",
        }
    }
}

/// One failed change of a refused transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeFailure {
    /// Zero-based index of the change in the request.
    pub index: usize,
    /// Why it failed.
    pub reason: ConflictReason,
}

/// Every error of the core. The message is the exact text the docs give; `code()` is stable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The request is malformed.
    Invalid(String),
    /// A request validation failure tied to one change of a transaction (engine.md §5.2;
    /// code `INVALID`). `index` is the zero-based change the message is about.
    InvalidChange {
        /// The message.
        message: String,
        /// The change it names.
        index: usize,
    },
    /// An unknown bundle or document where one is required.
    NotFound(String),
    /// A precondition or expected revision does not hold.
    Conflict {
        /// The message.
        message: String,
        /// The reason, for a single-document precondition.
        reason: Option<ConflictReason>,
        /// Every failing change, for a transaction.
        changes: Vec<ChangeFailure>,
    },
    /// The store cannot say whether the commit landed.
    IndeterminateCommit {
        /// The revision that may or may not have landed.
        revision: String,
    },
    /// Stored data fails its digest or is missing.
    Corrupt(String),
    /// The store failed and nothing changed.
    Store(String),
    /// A remote server refused the request's credentials: no token, or an unknown one
    /// (docs/http.md, code `UNAUTHORIZED`).
    Unauthorized(String),
    /// A remote server refused what the token grants: another tenant, or a write with a
    /// read grant (docs/http.md, code `FORBIDDEN`).
    Forbidden(String),
}

impl Error {
    /// The stable code: `INVALID`, `NOT_FOUND`, `CONFLICT`, `INDETERMINATE_COMMIT`, `CORRUPT`
    /// or `STORE`; a remote connection adds `UNAUTHORIZED` and `FORBIDDEN`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Invalid(_) | Error::InvalidChange { .. } => "INVALID",
            Error::NotFound(_) => "NOT_FOUND",
            Error::Conflict { .. } => "CONFLICT",
            Error::IndeterminateCommit { .. } => "INDETERMINATE_COMMIT",
            Error::Corrupt(_) => "CORRUPT",
            Error::Store(_) => "STORE",
            Error::Unauthorized(_) => "UNAUTHORIZED",
            Error::Forbidden(_) => "FORBIDDEN",
        }
    }

    /// A plain conflict without reason or changes.
    pub fn conflict(message: impl Into<String>) -> Error {
        Error::Conflict {
            message: message.into(),
            reason: None,
            changes: Vec::new(),
        }
    }

    /// A corruption error; the message gets the `database corruption: ` prefix.
    pub fn corrupt(detail: impl fmt::Display) -> Error {
        Error::Corrupt(format!("database corruption: {detail}"))
    }

    /// The message text, exactly as the docs word it.
    pub fn message(&self) -> String {
        match self {
            Error::Invalid(m)
            | Error::NotFound(m)
            | Error::Corrupt(m)
            | Error::Store(m)
            | Error::Unauthorized(m)
            | Error::Forbidden(m) => m.clone(),
            Error::Conflict { message, .. } | Error::InvalidChange { message, .. } => {
                message.clone()
            }
            Error::IndeterminateCommit { revision } => format!(
                "commit outcome is indeterminate; inspect revision {revision} before retrying"
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Error {}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
