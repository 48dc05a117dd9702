//! The reply texts of agent.md §6 (writes, deletes, transactions, their refusals) and the
//! advice sentence of agent.md §7.2.

use super::args::ChangeArg;
use crate::engine::{DeleteResult, DiagnosticInfo, Renamed, RevisionResult, WriteResult};
use crate::error::{ConflictReason, Error};
use crate::text::utf16_len;

/// The line given for a navigation document instead of `id <id>` (agent.md §6.2).
pub const NAVIGATION_NOTE: &str =
    "note: index.md and log.md are navigation documents: stored, never listed or searched";

/// The next step after an indeterminate `write` (agent.md §6.3.1).
pub const WRITE_INDETERMINATE_STEP: &str =
    "get the concept and check whether it holds your content before writing again";

/// The next step after an indeterminate `delete` (agent.md §6.3.1).
pub const DELETE_INDETERMINATE_STEP: &str =
    "get the concept and check whether it is gone before deleting again";

fn push_renamed(out: &mut String, renamed: &[Renamed]) {
    for r in renamed {
        out.push_str("\nrenamed ");
        out.push_str(&r.from);
        out.push(' ');
        out.push_str(&r.to);
    }
}

/// The text of a successful `write` (agent.md §6.2). `bundle` and `path` name the document
/// as stored.
pub fn write_success(bundle: &str, path: &str, r: &WriteResult) -> String {
    let mut out = format!(
        "wrote {bundle}/{path} (hash {}), snapshot {}, {} concepts\n",
        r.hash, r.snapshot, r.concepts
    );
    match &r.id {
        Some(id) => {
            out.push_str("id ");
            out.push_str(id);
        }
        None => out.push_str(NAVIGATION_NOTE),
    }
    push_renamed(&mut out, &r.renamed);
    for d in &r.diagnostics {
        out.push('\n');
        out.push_str(&d.level);
        out.push(' ');
        out.push_str(&d.path);
        out.push_str(": ");
        out.push_str(&d.message);
    }
    out
}

fn retry_line(hash: &str) -> String {
    format!("\nretry with replaces: \"{hash}\"")
}

/// The text of a failed `write` (agent.md §6.3). `current` is the written document's hash
/// looked up after the failure (`None` when it does not exist or the lookup failed).
pub fn write_failure(err: &Error, current: Option<&str>) -> String {
    let mut out = err.message();
    match err {
        Error::IndeterminateCommit { .. } => {
            out.push('\n');
            out.push_str(WRITE_INDETERMINATE_STEP);
        }
        Error::Conflict {
            reason: Some(ConflictReason::Missing),
            ..
        } => out.push_str("\nomit replaces to create it"),
        _ => {
            if let Some(h) = current {
                out.push_str(&retry_line(h));
            }
        }
    }
    out
}

/// The text of a failed `delete` that was given `replaces` (agent.md §6.3, §6.4.3).
pub fn delete_failure(err: &Error, current: Option<&str>) -> String {
    let mut out = err.message();
    match err {
        Error::IndeterminateCommit { .. } => {
            out.push('\n');
            out.push_str(DELETE_INDETERMINATE_STEP);
        }
        _ => {
            if let Some(h) = current {
                out.push_str(&retry_line(h));
            }
        }
    }
    out
}

/// The error text of a `delete` without `replaces` (agent.md §6.4.2): nothing is changed.
pub fn delete_needs_hash(current: Option<&str>) -> String {
    match current {
        None => "concept does not exist".to_string(),
        Some(h) => format!(
            "deleting needs the hash of the version being removed{}",
            retry_line(h)
        ),
    }
}

/// The text of a successful `delete` (agent.md §6.4.1).
pub fn delete_success(bundle: &str, path: &str, r: &DeleteResult) -> String {
    let mut out = format!(
        "deleted {bundle}/{path}, snapshot {}, {} concepts",
        r.snapshot, r.concepts
    );
    push_renamed(&mut out, &r.renamed);
    out
}

/// Appends `s` as a JSON string.
fn push_json<T: serde::Serialize + ?Sized>(out: &mut String, v: &T) {
    out.push_str(&serde_json::to_string(v).unwrap_or_default());
}

/// The MCP answer of `transact` and `restore` (agent.md §6.5.1): compact JSON
/// `{revision, snapshot, concepts, bundles, diagnostics, diagnosticCount}`, where
/// `diagnostics` is `request` (the diagnostics of the documents the request wrote; none for
/// `restore`) and `diagnosticCount` counts the tenant's.
pub fn revision_answer(r: &RevisionResult, request: &[DiagnosticInfo]) -> String {
    let mut out = String::from("{\"revision\":");
    push_json(&mut out, &r.revision);
    out.push_str(",\"snapshot\":");
    push_json(&mut out, &r.snapshot);
    out.push_str(",\"concepts\":");
    out.push_str(&r.concepts.to_string());
    out.push_str(",\"bundles\":");
    push_json(&mut out, &r.bundles);
    out.push_str(",\"diagnostics\":");
    push_json(&mut out, request);
    out.push_str(",\"diagnosticCount\":");
    out.push_str(&r.diagnostics.len().to_string());
    out.push('}');
    out
}

/// The diagnostics of the documents a request wrote: those whose lower-cased
/// `bundle/path` equals a written target's (bundle names match ignoring case).
pub fn request_diagnostics(
    all: &[DiagnosticInfo],
    written: &[(&str, &str)],
) -> Vec<DiagnosticInfo> {
    let keys: Vec<(String, String)> = written
        .iter()
        .map(|(b, p)| (b.to_lowercase(), p.to_lowercase()))
        .collect();
    all.iter()
        .filter(|d| {
            let k = (d.bundle.to_lowercase(), d.path.to_lowercase());
            keys.contains(&k)
        })
        .cloned()
        .collect()
}

/// The bundle name as stored (bundles match ignoring case), or as given when `model` has
/// no such bundle: the name the `write` and `delete` answers print.
pub fn stored_bundle(model: &crate::compile::Model, bundle: &str) -> String {
    model
        .find_bundle(bundle)
        .map_or_else(|| bundle.to_string(), str::to_string)
}

/// The text of a successful `transact` (agent.md §6.5.1): [`revision_answer`] with the
/// diagnostics of the documents the request wrote.
pub fn transact_success(r: &RevisionResult, changes: &[ChangeArg]) -> String {
    let written: Vec<(&str, &str)> = changes
        .iter()
        .filter(|c| c.write)
        .map(|c| (c.bundle.as_str(), c.path.as_str()))
        .collect();
    revision_answer(r, &request_diagnostics(&r.diagnostics, &written))
}

/// Whether a failed `write`, `delete` or `transact` looks up the current hashes for its
/// retry lines (agent.md §6.3): on every failure except an indeterminate commit.
pub fn looks_up_after(err: &Error) -> bool {
    !matches!(err, Error::IndeterminateCommit { .. })
}

/// One change a transact failure is tied to (agent.md §6.5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TiedChange {
    /// Zero-based index in the request.
    pub index: usize,
    /// The change's bundle and path, when both were strings.
    pub target: Option<(String, String)>,
    /// For a failed precondition on an existing document: its current hash.
    pub retry_hash: Option<String>,
}

/// The changes a `transact` failure is tied to (agent.md §6.5.2): the one change of a
/// validation failure, or every failed precondition in request order, each with the
/// document's current hash when it exists (`current(bundle, path)`, a lookup whose errors
/// count as absent). Other failures, an indeterminate commit included, tie none.
pub fn tied_changes(
    err: &Error,
    changes: &[ChangeArg],
    mut current: impl FnMut(&str, &str) -> Option<String>,
) -> Vec<TiedChange> {
    let target = |i: usize| changes.get(i).map(|c| (c.bundle.clone(), c.path.clone()));
    match err {
        Error::InvalidChange { index, .. } => vec![TiedChange {
            index: *index,
            target: target(*index),
            retry_hash: None,
        }],
        Error::Conflict {
            changes: failed, ..
        } => failed
            .iter()
            .map(|f| TiedChange {
                index: f.index,
                target: target(f.index),
                retry_hash: changes
                    .get(f.index)
                    .and_then(|c| current(&c.bundle, &c.path)),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The text of a failed `transact` (agent.md §6.5.2): the message, then for each tied
/// change `changes[<i>]: <bundle>/<path>` and, when it has one, its retry line. An
/// indeterminate commit adds nothing, whatever `tied` holds.
pub fn transact_failure(err: &Error, tied: &[TiedChange]) -> String {
    let mut out = err.message();
    if matches!(err, Error::IndeterminateCommit { .. }) {
        return out;
    }
    for t in tied {
        out.push_str(&format!("\nchanges[{}]", t.index));
        if let Some((b, p)) = &t.target {
            out.push_str(&format!(": {b}/{p}"));
        }
        if let Some(h) = &t.retry_hash {
            out.push_str(&retry_line(h));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Advice (agent.md §7.2)
// ---------------------------------------------------------------------------------------

/// The sentence for a tenant without concepts.
pub const EMPTY_ADVICE: &str = "This tenant holds no concepts yet.";

/// `n` rounded to two significant digits (half up), with `,` as the thousands separator:
/// 20,549 → `21,000`, 1,234 → `1,200`, 7 → `7`.
pub fn advice_label(n: usize) -> String {
    let mut p = 1usize;
    while n / p >= 100 {
        p *= 10;
    }
    let rounded = if p == 1 { n } else { (n + p / 2) / p * p };
    let digits = rounded.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The advice sentence for a whole tenant manifest (agent.md §7.2). All lengths are UTF-16
/// units.
pub fn advice(manifest: &str) -> String {
    let mut m = ManifestMeasure::default();
    m.lines(manifest);
    m.advice()
}

/// What the advice sentence (agent.md §7.2) needs of a manifest, gathered from its text in
/// pieces that each end at a line's end (so a manifest need not be held whole:
/// [`crate::manifest::advice`]). All lengths are UTF-16 units.
#[derive(Default)]
pub struct ManifestMeasure {
    len: usize,
    columns: usize,
    rows: usize,
    row_chars: usize,
}

impl ManifestMeasure {
    /// Adds `text`: whole lines, each ending in `\n` but perhaps the last one of the
    /// manifest.
    pub fn lines(&mut self, text: &str) {
        self.len += utf16_len(text);
        for line in text.split('\n') {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with("id\t") {
                self.columns = utf16_len(line);
                continue;
            }
            self.rows += 1;
            self.row_chars += utf16_len(line) + 1;
        }
    }

    /// The advice sentence for the manifest measured.
    pub fn advice(&self) -> String {
        let (columns, rows, row_chars, len) = (self.columns, self.rows, self.row_chars, self.len);
        if rows == 0 {
            return EMPTY_ADVICE.to_string();
        }
        let mean_row = row_chars as f64 / rows as f64;
        let result_chars = 120.0 + columns as f64 + mean_row * rows.min(16) as f64;
        let label = advice_label(len.div_ceil(4));
        if len as f64 > 20.0 * result_chars {
            format!(
                "This tenant's manifest measures ~{label} tokens; prefer \"search\" over reading it whole."
            )
        } else {
            format!(
                "This tenant's manifest measures ~{label} tokens; reading it whole is cheaper than searching."
            )
        }
    }
}

/// The JSON-RPC error message for a resource URI other than the manifest's.
pub fn no_resource(uri: &str) -> String {
    format!("no resource \"{}\"", crate::bounds::quote(uri))
}
