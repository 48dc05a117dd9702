//! Requests as the hosts receive them, and their validation (engine.md §5.1, §5.2, §6, §7,
//! §10, §11.4). Every host (CLI, MCP, JS) parses through here, so the texts are shared.

use super::store::Digest;
use crate::error::{Error, Result};
use crate::validate;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The most changes a `transact` request may hold.
pub const MAX_CHANGES: usize = 1000;
/// The most written content a `transact` request may hold, in UTF-8 bytes.
pub const MAX_PAYLOAD: usize = 16 * 1024 * 1024;

/// `transaction must be an object scoped to the connected tenant`.
pub const NOT_SCOPED: &str = "transaction must be an object scoped to the connected tenant";
/// `transaction needs between 1 and 1000 changes`.
pub const CHANGE_COUNT: &str = "transaction needs between 1 and 1000 changes";
/// `document change must specify a bundle and path within the connected tenant`.
pub const CHANGE_SHAPE: &str =
    "document change must specify a bundle and path within the connected tenant";
/// `invalid document operation`.
pub const BAD_OPERATION: &str = "invalid document operation";
/// `document content must be a string`.
pub const CONTENT_NOT_STRING: &str = "document content must be a string";
/// `source must contain well-formed Unicode`.
pub const ILL_FORMED: &str = "source must contain well-formed Unicode";
/// `transaction contains duplicate document targets`.
pub const DUPLICATE: &str = "transaction contains duplicate document targets";
/// `transaction source payload exceeds 16 MiB`.
pub const PAYLOAD: &str = "transaction source payload exceeds 16 MiB";
/// `history limit must be an integer from 1 to 100`.
pub const HISTORY_LIMIT: &str = "history limit must be an integer from 1 to 100";
/// `invalid history cursor`.
pub const BAD_CURSOR: &str = "invalid history cursor";
/// `database gc keep must be a positive integer`.
pub const GC_KEEP: &str = "database gc keep must be a positive integer";

/// The text of a written document as the host received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Well-formed text.
    Text(Arc<str>),
    /// A JS string holding lone surrogates (refused with `source must contain well-formed
    /// Unicode`). JS hosts check `String.prototype.isWellFormed()` before converting, since
    /// the conversion to a Rust string would replace them silently.
    IllFormed,
}

impl Content {
    /// Text from UTF-16 code units, as a JS string holds them: `IllFormed` when they hold a
    /// lone surrogate.
    pub fn from_utf16(units: &[u16]) -> Content {
        match String::from_utf16(units) {
            Ok(s) => Content::Text(s.into()),
            Err(_) => Content::IllFormed,
        }
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Content {
        Content::Text(s.into())
    }
}

impl From<&String> for Content {
    fn from(s: &String) -> Content {
        Content::Text(s.as_str().into())
    }
}

impl From<String> for Content {
    fn from(s: String) -> Content {
        Content::Text(s.into())
    }
}

/// What a change does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Create or replace the document with this text.
    Write(crate::bytes::Text),
    /// Remove the document.
    Delete,
}

/// One validated change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Write or delete.
    pub operation: Operation,
    /// The bundle name as given (it resolves to an existing bundle ignoring case).
    pub bundle: String,
    /// The path, NFC-normalised and validated.
    pub path: String,
    /// The source hash the change replaces; `None` creates.
    pub replaces: Option<Digest>,
}

/// A validated transaction (engine.md §5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// The changes, 1 to 1,000 of them in a request.
    pub changes: Vec<Change>,
    /// The revision the head must still be.
    pub expected_revision: Option<Digest>,
}

/// `invalid hash "<value>": expected 64 lowercase hex characters`, with the value as given.
pub fn invalid_hash(shown: &str) -> Error {
    Error::Invalid(format!(
        "invalid hash \"{}\": expected 64 lowercase hex characters",
        crate::bounds::quote(shown)
    ))
}

/// Validates a hash given as a string.
pub fn parse_hash(s: &str) -> Result<Digest> {
    Digest::from_hex(s).ok_or_else(|| invalid_hash(s))
}

/// Validates an optional hash given as JSON: absent and `null` are `None`; a string must be
/// 64 lowercase hex; any other value prints as its compact JSON.
pub fn parse_json_hash(v: Option<&Value>) -> Result<Option<Digest>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_hash(s).map(Some),
        Some(other) => Err(invalid_hash(&other.to_string())),
    }
}

/// Validates a required hash given as JSON: a missing value prints as empty.
pub fn parse_required_json_hash(v: Option<&Value>) -> Result<Digest> {
    parse_json_hash(v)?.ok_or_else(|| invalid_hash(""))
}

/// Checks one change's bundle, path, content and hash (§5.2 rule 3, after the shape check):
/// the validators of compile.md §10, then content, then `replaces`. Returns the change with
/// its path in NFC.
pub fn check_change(
    operation: &str,
    bundle: &str,
    path: &str,
    content: Option<Content>,
    replaces: Result<Option<Digest>>,
) -> Result<Change> {
    validate::bundle_name(bundle)?;
    let path = validate::document_path(path)?;
    let operation = match operation {
        "write" => match content {
            None => return Err(Error::Invalid(CONTENT_NOT_STRING.into())),
            Some(Content::IllFormed) => return Err(Error::Invalid(ILL_FORMED.into())),
            Some(Content::Text(t)) => Operation::Write(t.into()),
        },
        "delete" => Operation::Delete,
        _ => return Err(Error::Invalid(BAD_OPERATION.into())),
    };
    let replaces = replaces?;
    if operation == Operation::Delete && replaces.is_none() {
        return Err(invalid_hash(""));
    }
    Ok(Change {
        operation,
        bundle: bundle.to_string(),
        path,
        replaces,
    })
}

/// Parses and validates a `transact` request (engine.md §5.2, rules 1–6, in order, with the
/// exact texts). A failure tied to one change is [`Error::InvalidChange`] naming it.
pub fn parse_transaction(value: &Value) -> Result<Transaction> {
    parse_transaction_with(value, &[])
}

/// [`parse_transaction`] for a host that received JS strings: `ill_formed` lists the indexes
/// of changes whose `content` held lone surrogates (the JSON value carries a lossy copy).
pub fn parse_transaction_with(value: &Value, ill_formed: &[usize]) -> Result<Transaction> {
    let Some(obj) = value.as_object().filter(|o| !o.contains_key("tenant")) else {
        return Err(Error::Invalid(NOT_SCOPED.into()));
    };
    let items = match obj.get("changes") {
        Some(Value::Array(a)) if !a.is_empty() && a.len() <= MAX_CHANGES => a,
        _ => return Err(Error::Invalid(CHANGE_COUNT.into())),
    };
    let mut changes = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let at = |e: Error| Error::InvalidChange {
            message: e.message(),
            index,
        };
        let shape = item
            .as_object()
            .filter(|o| !o.contains_key("tenant"))
            .and_then(|o| {
                let bundle = o.get("bundle")?.as_str()?;
                let path = o.get("path")?.as_str()?;
                Some((o, bundle, path))
            });
        let Some((o, bundle, path)) = shape else {
            return Err(at(Error::Invalid(CHANGE_SHAPE.into())));
        };
        let operation = o.get("operation").and_then(Value::as_str).unwrap_or("");
        let content = match o.get("content") {
            Some(Value::String(_)) if ill_formed.contains(&index) => Some(Content::IllFormed),
            Some(Value::String(s)) => Some(Content::Text(s.as_str().into())),
            _ => None,
        };
        let change = check_change(
            operation,
            bundle,
            path,
            content,
            parse_json_hash(o.get("replaces")),
        )
        .map_err(at)?;
        changes.push(change);
    }
    finish_transaction(changes, parse_json_hash(obj.get("expectedRevision")))
}

/// The rules of §5.2 that follow the per-change checks, in order: the expected revision,
/// duplicate targets (rule 5), the payload limit (rule 6). `changes` passed
/// [`check_change`] each; every host's validation ends here, so the order and texts are
/// one.
pub fn finish_transaction(
    changes: Vec<Change>,
    expected_revision: Result<Option<Digest>>,
) -> Result<Transaction> {
    let expected_revision = expected_revision?;
    check_duplicates(&changes)?;
    let payload: usize = changes
        .iter()
        .map(|c| match &c.operation {
            Operation::Write(t) => t.len(),
            Operation::Delete => 0,
        })
        .sum();
    if payload > MAX_PAYLOAD {
        return Err(Error::Invalid(PAYLOAD.into()));
    }
    Ok(Transaction {
        changes,
        expected_revision,
    })
}

/// The lower-cased `bundle/path` that uniqueness compares (compile.md §10.3).
pub fn fold_target(bundle: &str, path: &str) -> String {
    format!("{}/{}", bundle.to_ascii_lowercase(), path.to_lowercase())
}

/// §5.2 rule 5: two changes on one lower-cased target are refused, naming the later one,
/// unless they differ in case and are a delete and a write (a case-only rename).
pub fn check_duplicates(changes: &[Change]) -> Result<()> {
    let mut seen: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, c) in changes.iter().enumerate() {
        let earlier = seen.entry(fold_target(&c.bundle, &c.path)).or_default();
        for &j in earlier.iter() {
            let d = &changes[j];
            let differ_in_case = d.bundle != c.bundle || d.path != c.path;
            let write_and_delete = matches!(
                (&d.operation, &c.operation),
                (Operation::Delete, Operation::Write(_)) | (Operation::Write(_), Operation::Delete)
            );
            if !(differ_in_case && write_and_delete) {
                return Err(Error::InvalidChange {
                    message: DUPLICATE.into(),
                    index: i,
                });
            }
        }
        earlier.push(i);
    }
    Ok(())
}

/// A `history` request (engine.md §6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistoryRequest {
    /// The cursor of the previous page.
    pub before: Option<String>,
    /// The page size, 1 to 100; default 20.
    pub limit: Option<i64>,
}

/// Parses `{before?, limit?}`: `limit` must be an integer (a JSON number with no fraction)
/// from 1 to 100, `before` a string.
pub fn parse_history_request(value: &Value) -> Result<HistoryRequest> {
    let empty = serde_json::Map::new();
    let obj = match value {
        Value::Null => &empty,
        Value::Object(o) => o,
        _ => return Err(Error::Invalid(HISTORY_LIMIT.into())),
    };
    let limit = match obj.get("limit") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            let i = n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                    .map(|f| f as i64)
            });
            // The range is the engine's too; checking it here lets a remote client refuse
            // it without a round trip.
            Some(
                i.filter(|l| (1..=100).contains(l))
                    .ok_or_else(|| Error::Invalid(HISTORY_LIMIT.into()))?,
            )
        }
        Some(_) => return Err(Error::Invalid(HISTORY_LIMIT.into())),
    };
    let before = match obj.get("before") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(Error::Invalid(BAD_CURSOR.into())),
    };
    Ok(HistoryRequest { before, limit })
}

/// A `restore` request (engine.md §7): both fields as given, validated when run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreRequest {
    /// The revision whose state to restore.
    pub revision: String,
    /// The revision the head must still be.
    pub expected_revision: String,
}

/// Parses `{revision, expectedRevision}`, both required 64-hex ids.
pub fn parse_restore_request(value: &Value) -> Result<(Digest, Digest)> {
    let revision = parse_required_json_hash(value.get("revision"))?;
    let expected = parse_required_json_hash(value.get("expectedRevision"))?;
    Ok((revision, expected))
}

/// `gc` options (engine.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcOptions {
    /// How many revisions to keep along the head's chain (default 10).
    pub keep: i64,
    /// Report and change nothing.
    pub dry_run: bool,
    /// Records put within this many time units before `now` stay (default 3,600,000).
    pub grace_ms: u64,
    /// The host's current time in the store's time unit (`KeyInfo::put_time`).
    pub now: u64,
}

impl GcOptions {
    /// The defaults: keep 10, no dry run, one hour of grace, at `now`.
    pub fn at(now: u64) -> GcOptions {
        GcOptions {
            keep: 10,
            dry_run: false,
            grace_ms: 3_600_000,
            now,
        }
    }
}

/// A library `gc` call's options (engine.md §10: `{keep, dryRun, graceMs}`); the host adds
/// its clock's time ([`GcRequest::at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcRequest {
    /// How many revisions to keep along the head's chain (default 10).
    pub keep: i64,
    /// Report and change nothing (default false).
    pub dry_run: bool,
    /// Records put within this many milliseconds stay (default 3,600,000: one hour).
    pub grace_ms: u64,
}

impl Default for GcRequest {
    fn default() -> GcRequest {
        let d = GcOptions::at(0);
        GcRequest {
            keep: d.keep,
            dry_run: d.dry_run,
            grace_ms: d.grace_ms,
        }
    }
}

impl GcRequest {
    /// The engine's options for this request at the host's time `now`.
    pub fn at(self, now: u64) -> GcOptions {
        GcOptions {
            keep: self.keep,
            dry_run: self.dry_run,
            grace_ms: self.grace_ms,
            now,
        }
    }
}

/// A `repair` request (engine.md §11.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairRequest {
    /// The revision the new head names.
    pub revision: String,
    /// The head record's digest as `verify` reported it, or `None` for no head.
    pub expected_head: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> (String, Option<usize>) {
        match parse_transaction(&v).unwrap_err() {
            Error::InvalidChange { message, index } => (message, Some(index)),
            e => (e.message(), None),
        }
    }

    const H: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn rule_order_and_texts() {
        assert_eq!(err(json!([])).0, NOT_SCOPED);
        assert_eq!(err(json!({"tenant": "x", "changes": []})).0, NOT_SCOPED);
        assert_eq!(err(json!({"changes": []})).0, CHANGE_COUNT);
        assert_eq!(err(json!({"changes": "x"})).0, CHANGE_COUNT);
        let many: Vec<Value> = (0..1001).map(|i| json!({"operation": "write", "bundle": "b", "path": format!("{i}.md"), "content": ""})).collect();
        assert_eq!(err(json!({ "changes": many })).0, CHANGE_COUNT);
        assert_eq!(
            err(json!({"changes": [1]})),
            (CHANGE_SHAPE.to_string(), Some(0))
        );
        assert_eq!(
            err(
                json!({"changes": [{"operation": "write", "bundle": "b", "path": "a.md", "content": "", "tenant": "t"}]})
            ),
            (CHANGE_SHAPE.to_string(), Some(0))
        );
        assert_eq!(
            err(
                json!({"changes": [{"operation": "write", "bundle": "b", "path": "a.md", "content": ""}, {"operation": "frob", "bundle": "b", "path": "c.md"}]})
            ),
            (BAD_OPERATION.to_string(), Some(1))
        );
        // Path validation precedes the operation check.
        assert_eq!(
            err(json!({"changes": [{"operation": "frob", "bundle": "b", "path": "../a.md"}]})).0,
            "invalid path \"../a.md\": segment \"..\" starts with a dot"
        );
        assert_eq!(err(json!({"changes": [{"operation": "write", "bundle": "b", "path": "a.md", "content": 3}]})).0, CONTENT_NOT_STRING);
        assert_eq!(
            err(json!({"changes": [{"operation": "delete", "bundle": "b", "path": "a.md"}]})).0,
            "invalid hash \"\": expected 64 lowercase hex characters"
        );
        assert_eq!(err(json!({"changes": [{"operation": "delete", "bundle": "b", "path": "a.md", "replaces": 42}]})).0, "invalid hash \"42\": expected 64 lowercase hex characters");
        assert_eq!(
            err(json!({"changes": [{"operation": "write", "bundle": "b", "path": "a.md", "content": "", "replaces": H.to_uppercase()}]})).0,
            format!("invalid hash \"{}\": expected 64 lowercase hex characters", H.to_uppercase())
        );
        assert_eq!(
            err(
                json!({"changes": [{"operation": "write", "bundle": "b", "path": "a.md", "content": ""}], "expectedRevision": "abc"})
            ),
            (
                "invalid hash \"abc\": expected 64 lowercase hex characters".to_string(),
                None
            )
        );
        let ill = parse_transaction_with(
            &json!({"changes": [{"operation": "write", "bundle": "b", "path": "a.md", "content": "\u{fffd}"}]}),
            &[0],
        );
        assert_eq!(
            ill.unwrap_err(),
            Error::InvalidChange {
                message: ILL_FORMED.into(),
                index: 0
            }
        );
    }

    #[test]
    fn duplicates_and_case_only_rename() {
        let w = |p: &str| json!({"operation": "write", "bundle": "b", "path": p, "content": ""});
        let d = |p: &str| json!({"operation": "delete", "bundle": "b", "path": p, "replaces": H});
        assert_eq!(
            err(json!({"changes": [w("x.md"), w("a.md"), w("A.md")]})),
            (DUPLICATE.to_string(), Some(2))
        );
        assert_eq!(
            err(json!({"changes": [w("a.md"), d("a.md")]})),
            (DUPLICATE.to_string(), Some(1))
        );
        assert!(parse_transaction(&json!({"changes": [d("Note.md"), w("note.md")]})).is_ok());
        assert!(parse_transaction(&json!({"changes": [w("note.md"), d("Note.md")]})).is_ok());
        assert_eq!(
            err(json!({"changes": [d("Note.md"), w("note.md"), w("NOTE.md")]})),
            (DUPLICATE.to_string(), Some(2))
        );
    }

    #[test]
    fn payload_limit() {
        let big = "x".repeat(MAX_PAYLOAD / 2);
        let ok = json!({"changes": [
            {"operation": "write", "bundle": "b", "path": "a.md", "content": big},
            {"operation": "write", "bundle": "b", "path": "b.md", "content": big}]});
        assert!(parse_transaction(&ok).is_ok());
        let over = json!({"changes": [
            {"operation": "write", "bundle": "b", "path": "a.md", "content": big},
            {"operation": "write", "bundle": "b", "path": "b.md", "content": format!("{big}y")}]});
        assert_eq!(err(over).0, PAYLOAD);
    }

    #[test]
    fn history_requests() {
        assert_eq!(
            parse_history_request(&json!({"limit": 5})).unwrap().limit,
            Some(5)
        );
        assert_eq!(
            parse_history_request(&json!({"limit": 5.0})).unwrap().limit,
            Some(5)
        );
        assert_eq!(
            parse_history_request(&json!({"limit": 5.5}))
                .unwrap_err()
                .message(),
            HISTORY_LIMIT
        );
        assert_eq!(
            parse_history_request(&json!({"limit": "5"}))
                .unwrap_err()
                .message(),
            HISTORY_LIMIT
        );
        assert_eq!(
            parse_history_request(&Value::Null).unwrap(),
            HistoryRequest::default()
        );
    }
}
