//! Operation results: plain structs with the docs' field names, serialised as compact JSON
//! with keys in the docs' order (docs/README.md §4.3). Absent optional fields are left out;
//! `null` appears only where the docs say null.

use crate::compile::Diagnostic;
use serde::{Deserialize, Serialize};

/// A diagnostic as results carry it: `{level, bundle, path, message}` (compile.md §9).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticInfo {
    /// `warn`, or `info` for a document without frontmatter.
    pub level: String,
    /// The bundle.
    pub bundle: String,
    /// The bundle-relative path.
    pub path: String,
    /// The exact message.
    pub message: String,
}

impl From<&Diagnostic> for DiagnosticInfo {
    fn from(d: &Diagnostic) -> DiagnosticInfo {
        DiagnosticInfo {
            level: d.level().into(),
            bundle: d.bundle.clone(),
            path: d.path.clone(),
            message: d.message.clone(),
        }
    }
}

/// A concept whose public id changed: `{from, to}`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Renamed {
    /// The old public id.
    pub from: String,
    /// The new public id.
    pub to: String,
}

/// The result of `write` (engine.md §4.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteResult {
    /// The new source hash.
    pub hash: String,
    /// The revision id.
    pub revision: String,
    /// The snapshot id.
    pub snapshot: String,
    /// The tenant's concept count.
    pub concepts: usize,
    /// The written concept's public id; absent for a navigation document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Other concepts whose public id changed, sorted by `from`.
    pub renamed: Vec<Renamed>,
    /// The diagnostics of the written document.
    pub diagnostics: Vec<DiagnosticInfo>,
}

/// The result of `delete` (engine.md §4.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteResult {
    /// The revision id.
    pub revision: String,
    /// The snapshot id.
    pub snapshot: String,
    /// The tenant's concept count.
    pub concepts: usize,
    /// Concepts whose public id changed, sorted by `from`.
    pub renamed: Vec<Renamed>,
}

/// `RevisionResult` (engine.md §5.4): `transact`, `deleteBundle`, `restore`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionResult {
    /// The revision id.
    pub revision: String,
    /// The snapshot id.
    pub snapshot: String,
    /// The concept count.
    pub concepts: usize,
    /// The bundle names, sorted.
    pub bundles: Vec<String>,
    /// The whole tenant's diagnostics.
    pub diagnostics: Vec<DiagnosticInfo>,
}

/// One entry of a history page (engine.md §6.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionInfo {
    /// The revision id.
    pub revision: String,
    /// The parent revision id, or null.
    pub parent: Option<String>,
    /// The snapshot id the revision was committed with.
    pub snapshot: String,
    /// The commit time.
    pub created: String,
    /// The revision's concept count.
    pub concepts: u64,
    /// The revision's bundle names, sorted.
    pub bundles: Vec<String>,
}

/// A page of `history` (engine.md §6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryPage {
    /// Newest first.
    pub revisions: Vec<RevisionInfo>,
    /// The cursor of the next page, present only when more retained revisions follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// The result of `gc` (engine.md §10.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GcResult {
    /// The tenant id.
    pub tenant: String,
    /// The retained revision ids, newest first.
    pub kept: Vec<String>,
    /// How many revisions left retained history (or would): `history` and `restore` no
    /// longer reach them, whether or not their records are removed yet.
    pub dropped_revisions: u64,
    /// How many revision records were (or would be) removed.
    pub removed_revisions: u64,
    /// How many other records were (or would be) removed.
    pub removed_records: u64,
    /// The bytes those records held.
    pub bytes_freed: u64,
    /// How many records no retained revision reaches but that were put within the grace
    /// period, so they stay on disk for a later collection.
    pub pending_records: u64,
    /// The bytes those records hold.
    pub pending_bytes: u64,
    /// When the grace period of the last of them ends (milliseconds since the Unix epoch, in
    /// the store's time): a collection after it removes them unless a commit reaches them.
    pub pending_until: Option<u64>,
    /// Whether this was a dry run.
    pub dry_run: bool,
}

/// One problem `verify` found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// The artifact: `head`, or a record key such as `source/<hex>`.
    pub artifact: String,
    /// The message, starting `database corruption: `.
    pub message: String,
}

/// The result of `verify` (engine.md §11.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyResult {
    /// The tenant id.
    pub tenant: String,
    /// Whether no issue was found.
    pub ok: bool,
    /// The SHA-256 of the head record's bytes, or null when there is none.
    pub head: Option<String>,
    /// The revision ids checked, newest first.
    pub verified_revisions: Vec<String>,
    /// The problems found.
    pub issues: Vec<Issue>,
}

/// The result of `repair` (engine.md §11.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairResult {
    /// The tenant id.
    pub tenant: String,
    /// The new head record's digest.
    pub head: String,
    /// The revision the new head names.
    pub revision: String,
}

/// One entry of `listSource` (read.md §6.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceEntry {
    /// The bundle.
    pub bundle: String,
    /// The path.
    pub path: String,
    /// The source hash.
    pub hash: String,
    /// The UTF-8 byte length.
    pub bytes: usize,
    /// The public id; absent for navigation documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The result of `readSource` (read.md §6.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceContent {
    /// The exact stored text.
    pub content: String,
    /// The source hash.
    pub hash: String,
}

/// The result of `open` and `refresh`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpenResult {
    /// The head revision id, or null for an empty tenant.
    pub revision: Option<String>,
    /// The served snapshot id.
    pub snapshot: String,
    /// The concept count.
    pub concepts: usize,
    /// Whether this call loaded a new head (false when the loaded one was current).
    pub loaded: bool,
}

/// The result of `import` (cli.md §4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportResult {
    /// The head revision id after the import.
    pub revision: String,
    /// The served snapshot id after the import.
    pub snapshot: String,
    /// The concept count.
    pub concepts: usize,
    /// The bundle names, sorted.
    pub bundles: Vec<String>,
    /// The diagnostics of the folder's documents.
    pub diagnostics: Vec<DiagnosticInfo>,
    /// Whether the snapshot id equals the previous head's (`reused` in the status line).
    pub reused: bool,
    /// Whether anything was committed (a new revision or a new baseline). False for a
    /// `--strict` import refused for diagnostics, and when nothing changed.
    pub committed: bool,
}
