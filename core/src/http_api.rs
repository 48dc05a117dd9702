//! The HTTP wire of `langonrock serve` (docs/http.md, docs/remote.md) as plain data: the
//! request each connection operation becomes, the error body and status each error
//! becomes, and the way back from a response to a result or to the same error. The server
//! and the remote connections (Rust and JS) all go through here, so the two ends cannot
//! drift. No IO: the hosts move the bytes.

use crate::error::{ChangeFailure, ConflictReason, Error, Result};
use crate::read::GetOptions;
use crate::search::SearchOptions;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::Deserializer;
use serde_json::{json, Map, Value};
use std::fmt;

/// The `Content-Type` of a manifest or search answer.
pub const TSV: &str = "text/tab-separated-values";
/// The `Content-Type` of a document's text.
pub const MARKDOWN: &str = "text/markdown; charset=utf-8";
/// The `Content-Type` of JSON bodies.
pub const JSON: &str = "application/json";

/// How much of an unexpected response body an error message quotes.
pub const QUOTED_BODY: usize = 512;

/// One request of a remote connection, before the transport adds `Host`,
/// `Authorization` and `Content-Length`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, `PUT` or `DELETE`.
    pub method: &'static str,
    /// The path and query: the connection's prefix, the route, percent-encoded segments.
    pub path: String,
    /// The other headers: `Content-Type`, `If-Match`, `If-None-Match`.
    pub headers: Vec<(&'static str, String)>,
    /// The body; empty for none.
    pub body: Vec<u8>,
    /// Whether the request only reads (`GET`, and the `get` and `search` POSTs): a client
    /// may send it again after a broken connection.
    pub read: bool,
}

impl Request {
    fn new(method: &'static str, path: String) -> Request {
        Request {
            method,
            path,
            headers: Vec::new(),
            body: Vec::new(),
            read: method == "GET",
        }
    }

    fn reading(mut self) -> Request {
        self.read = true;
        self
    }

    fn json(method: &'static str, path: String, body: &Value) -> Request {
        let mut r = Request::new(method, path);
        r.headers.push(("content-type", JSON.into()));
        r.body = body.to_string().into_bytes();
        r
    }

    fn header(mut self, name: &'static str, value: String) -> Request {
        self.headers.push((name, value));
        self
    }
}

/// The `Authorization` header's value for a token.
pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Percent-encodes one path segment or query value: every byte but the unreserved ones.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if is_unreserved(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A document's route below the prefix: `/source/<bundle>/<path segments>`, each segment
/// encoded on its own so the server splits them back at the same `/`.
fn source_path(prefix: &str, bundle: &str, path: &str) -> String {
    let mut p = format!("{prefix}/source/{}", encode_component(bundle));
    for seg in path.split('/') {
        p.push('/');
        p.push_str(&encode_component(seg));
    }
    p
}

/// `GET [/t]/manifest[?bundle=b]`, revalidating a cached copy with `If-None-Match`.
pub fn manifest(prefix: &str, bundle: Option<&str>, cached_etag: Option<&str>) -> Request {
    let path = match bundle {
        Some(b) => format!("{prefix}/manifest?bundle={}", encode_component(b)),
        None => format!("{prefix}/manifest"),
    };
    let r = Request::new("GET", path);
    match cached_etag {
        Some(e) => r.header("if-none-match", e.to_string()),
        None => r,
    }
}

/// `GET [/t]/snapshot`.
pub fn snapshot(prefix: &str) -> Request {
    Request::new("GET", format!("{prefix}/snapshot"))
}

/// `POST [/t]/get` with `{"ids", "section"?, "offset"?, "limit"?, "find"?, "source"?}`.
pub fn get<S: AsRef<str>>(prefix: &str, ids: &[S], opts: &GetOptions) -> Request {
    let mut body = Map::new();
    body.insert(
        "ids".into(),
        ids.iter().map(|i| Value::from(i.as_ref())).collect(),
    );
    if let Some(s) = &opts.section {
        body.insert("section".into(), s.as_str().into());
    }
    if let Some(n) = opts.offset {
        body.insert("offset".into(), n.into());
    }
    if let Some(n) = opts.limit {
        body.insert("limit".into(), n.into());
    }
    if let Some(f) = &opts.find {
        body.insert("find".into(), f.as_str().into());
    }
    if opts.source {
        body.insert("source".into(), true.into());
    }
    Request::json("POST", format!("{prefix}/get"), &Value::Object(body)).reading()
}

/// `POST [/t]/search` with `{"q", "k", "expand", "bundle"?}`.
pub fn search(prefix: &str, query: &str, opts: &SearchOptions) -> Request {
    let mut body = json!({"q": query, "k": opts.k, "expand": opts.expand});
    if let Some(b) = &opts.bundle {
        body["bundle"] = b.as_str().into();
    }
    Request::json("POST", format!("{prefix}/search"), &body).reading()
}

/// `GET [/t]/source`: the listing.
pub fn list_source(prefix: &str) -> Request {
    Request::new("GET", format!("{prefix}/source"))
}

/// `GET [/t]/source/<bundle>/<path>`: one document's text.
pub fn read_source(prefix: &str, bundle: &str, path: &str) -> Request {
    Request::new("GET", source_path(prefix, bundle, path))
}

/// `PUT [/t]/source/<bundle>/<path>`: `If-None-Match: *` without `replaces`, else
/// `If-Match: "<hash>"`.
pub fn write(
    prefix: &str,
    bundle: &str,
    path: &str,
    content: &str,
    replaces: Option<&str>,
) -> Request {
    let mut r = Request::new("PUT", source_path(prefix, bundle, path))
        .header("content-type", MARKDOWN.into());
    r = match replaces {
        Some(h) => r.header("if-match", format!("\"{h}\"")),
        None => r.header("if-none-match", "*".into()),
    };
    r.body = content.as_bytes().to_vec();
    r
}

/// `DELETE [/t]/source/<bundle>/<path>` with `If-Match: "<hash>"` (none without `replaces`:
/// the server refuses it as the spec words it).
pub fn delete(prefix: &str, bundle: &str, path: &str, replaces: Option<&str>) -> Request {
    let r = Request::new("DELETE", source_path(prefix, bundle, path));
    match replaces {
        Some(h) => r.header("if-match", format!("\"{h}\"")),
        None => r,
    }
}

/// `DELETE [/t]/bundles/<bundle>`.
pub fn delete_bundle(prefix: &str, bundle: &str) -> Request {
    Request::new(
        "DELETE",
        format!("{prefix}/bundles/{}", encode_component(bundle)),
    )
}

/// `POST [/t]/transact` with the request as given (engine.md §5.1).
pub fn transact(prefix: &str, request: &Value) -> Request {
    Request::json("POST", format!("{prefix}/transact"), request)
}

/// The JSON request of a validated transaction: `{changes, expectedRevision?}`.
pub fn transaction_json(txn: &crate::engine::Transaction) -> Value {
    use crate::engine::Operation;
    let changes: Vec<Value> = txn
        .changes
        .iter()
        .map(|c| {
            let mut o = match &c.operation {
                Operation::Write(text) => json!({"operation": "write", "bundle": c.bundle, "path": c.path, "content": &**text}),
                Operation::Delete => json!({"operation": "delete", "bundle": c.bundle, "path": c.path}),
            };
            if let Some(h) = &c.replaces {
                o["replaces"] = h.to_hex().into();
            }
            o
        })
        .collect();
    let mut v = json!({ "changes": changes });
    if let Some(r) = &txn.expected_revision {
        v["expectedRevision"] = r.to_hex().into();
    }
    v
}

/// `GET [/t]/history?limit=&before=`.
pub fn history(prefix: &str, req: &crate::engine::HistoryRequest) -> Request {
    let mut q = Vec::new();
    if let Some(n) = req.limit {
        q.push(format!("limit={n}"));
    }
    if let Some(b) = &req.before {
        q.push(format!("before={}", encode_component(b)));
    }
    let path = if q.is_empty() {
        format!("{prefix}/history")
    } else {
        format!("{prefix}/history?{}", q.join("&"))
    };
    Request::new("GET", path)
}

/// `POST [/t]/restore` with `{"revision", "expectedRevision"}`.
pub fn restore(prefix: &str, req: &crate::engine::RestoreRequest) -> Request {
    Request::json(
        "POST",
        format!("{prefix}/restore"),
        &json!({"revision": req.revision, "expectedRevision": req.expected_revision}),
    )
}

// ---------------------------------------------------------------------------------------
// Errors both ways
// ---------------------------------------------------------------------------------------

/// The status of an error (docs/http.md §5). `single_document`: the PUT and DELETE routes
/// of one document, where a failed precondition is 412 rather than 409.
pub fn error_status(e: &Error, single_document: bool) -> u16 {
    match e {
        Error::Invalid(_) | Error::InvalidChange { .. } => 400,
        Error::NotFound(_) => 404,
        Error::Conflict { .. } if single_document => 412,
        Error::Conflict { .. } => 409,
        Error::IndeterminateCommit { .. } => 503,
        Error::Unauthorized(_) => 401,
        Error::Forbidden(_) => 403,
        _ => 500,
    }
}

/// The JSON body of an error: `{"code", "message"}`, plus `revision` for an indeterminate
/// commit, `reason` for a failed precondition, `changes` for a refused transaction, and
/// `index` (the zero-based change) for a validation failure tied to one change.
pub fn error_body(e: &Error) -> String {
    let mut v = json!({"code": e.code(), "message": e.message()});
    match e {
        Error::IndeterminateCommit { revision } => v["revision"] = revision.as_str().into(),
        Error::Conflict {
            reason, changes, ..
        } => {
            if let Some(r) = reason {
                v["reason"] = r.as_str().into();
            }
            if !changes.is_empty() {
                v["changes"] = changes
                    .iter()
                    .map(|c| json!({"index": c.index, "reason": c.reason.as_str()}))
                    .collect();
            }
        }
        Error::InvalidChange { index, .. } => v["index"] = (*index).into(),
        _ => {}
    }
    v.to_string()
}

fn reason(v: &Value) -> Option<ConflictReason> {
    match v.as_str()? {
        "exists" => Some(ConflictReason::Exists),
        "missing" => Some(ConflictReason::Missing),
        "changed" => Some(ConflictReason::Changed),
        _ => None,
    }
}

/// The body as an error message quotes it: lossy UTF-8, at most [`QUOTED_BODY`] bytes, cut
/// on a character boundary, with `…` when cut.
pub fn quote_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(QUOTED_BODY + 4)]);
    if body.len() <= QUOTED_BODY {
        return text.trim_end().to_string();
    }
    let mut end = QUOTED_BODY.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A failure that is not the server's JSON error (code `STORE`):
/// `langonrock server returned <status>: <body>`.
pub fn unexpected(status: u16, body: &[u8]) -> Error {
    Error::Store(format!(
        "langonrock server returned {status}: {}",
        quote_body(body)
    ))
}

/// The error a non-success response stands for: the server's JSON error rebuilt as the
/// same error (code, message, `revision`, `reason`, `changes`, `index`), so a remote
/// answer reads like a local one; anything else is [`unexpected`].
pub fn error_from_response(status: u16, body: &[u8]) -> Error {
    rebuild(body).unwrap_or_else(|| unexpected(status, body))
}

fn rebuild(body: &[u8]) -> Option<Error> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let code = v.get("code")?.as_str()?;
    let message = v.get("message")?.as_str()?.to_string();
    Some(match code {
        "INVALID" => match v.get("index").and_then(Value::as_u64) {
            Some(i) => Error::InvalidChange {
                message,
                index: usize::try_from(i).ok()?,
            },
            None => Error::Invalid(message),
        },
        "NOT_FOUND" => Error::NotFound(message),
        "CONFLICT" => Error::Conflict {
            message,
            reason: v.get("reason").and_then(reason),
            changes: v
                .get("changes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|c| {
                            Some(ChangeFailure {
                                index: usize::try_from(c.get("index")?.as_u64()?).ok()?,
                                reason: reason(c.get("reason")?)?,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        },
        "INDETERMINATE_COMMIT" => Error::IndeterminateCommit {
            revision: v.get("revision")?.as_str()?.to_string(),
        },
        "CORRUPT" => Error::Corrupt(message),
        "STORE" => Error::Store(message),
        "UNAUTHORIZED" => Error::Unauthorized(message),
        "FORBIDDEN" => Error::Forbidden(message),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------

/// One response as the transport read it.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    /// The status code.
    pub status: u16,
    /// The `ETag` header, if any.
    pub etag: Option<&'a str>,
    /// The whole body.
    pub body: &'a [u8],
}

impl Response<'_> {
    /// The body as text, when the status is `want`; the rebuilt error otherwise.
    pub fn text(&self, want: u16) -> Result<String> {
        self.expect(want)?;
        String::from_utf8(self.body.to_vec()).map_err(|_| unexpected(self.status, self.body))
    }

    /// The body as a manifest or search TSV (read.md §2, search.md §4), when the status is
    /// `want`: a text that starts with its `# tenant: ` line and ends with a line break.
    /// Anything else (an HTML page, a proxy's answer) is [`unexpected`].
    pub fn tsv(&self, want: u16) -> Result<String> {
        let text = self.text(want)?;
        if text.starts_with("# tenant: ") && text.ends_with('\n') {
            Ok(text)
        } else {
            Err(unexpected(self.status, self.body))
        }
    }

    /// The body as JSON of type `T`, when the status is `want`.
    pub fn json<T: DeserializeOwned>(&self, want: u16) -> Result<T> {
        self.expect(want)?;
        serde_json::from_slice(self.body).map_err(|_| unexpected(self.status, self.body))
    }

    /// `Ok` when the status is `want`, else the error the response stands for.
    pub fn expect(&self, want: u16) -> Result<()> {
        if self.status == want {
            Ok(())
        } else if (200..300).contains(&self.status) {
            Err(unexpected(self.status, self.body))
        } else {
            Err(error_from_response(self.status, self.body))
        }
    }

    /// The `ETag` without its quotes (a document's hash).
    pub fn etag_hash(&self) -> Option<String> {
        self.etag.map(|e| e.trim().trim_matches('"').to_string())
    }
}

/// A manifest answer against the cached copy: 200 gives the new body and its ETag, 304
/// the cached body (docs/remote.md).
pub fn manifest_answer(r: &Response<'_>, cached: Option<&str>) -> Result<ManifestAnswer> {
    if r.status == 304 {
        return match cached {
            Some(c) => Ok(ManifestAnswer::Cached(c.to_string())),
            None => Err(unexpected(304, r.body)),
        };
    }
    let text = r.tsv(200)?;
    Ok(ManifestAnswer::Fresh {
        text,
        etag: r.etag.map(str::to_string),
    })
}

/// What [`manifest_answer`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestAnswer {
    /// The server sent the manifest, with its ETag to revalidate with next time.
    Fresh {
        /// The TSV.
        text: String,
        /// The ETag as sent, quotes included.
        etag: Option<String>,
    },
    /// 304: the cached copy is current.
    Cached(String),
}

/// A document read: `Some((content, hash))` on 200, `None` on 404 (no document).
pub fn read_source_answer(r: &Response<'_>) -> Result<Option<(String, String)>> {
    if r.status == 404 {
        return Ok(None);
    }
    let text = r.text(200)?;
    let hash = r
        .etag_hash()
        .filter(|h| crate::hash::is_hex_digest(h))
        .ok_or_else(|| unexpected(r.status, b"a document without its ETag hash"))?;
    Ok(Some((text, hash)))
}

pub use crate::read::OwnedSlice;

/// A `get` answer: the found ids and their slices, in the server's order; `None` when the
/// body is not an object of slices.
pub fn get_answer(body: &[u8]) -> Option<Vec<(String, OwnedSlice)>> {
    ordered_object(body)?
        .into_iter()
        .map(|(id, v)| Some((id, serde_json::from_value(v).ok()?)))
        .collect()
}

/// The bundle names of a tenant manifest's `# bundles:` line (read.md §2), as stored.
pub fn manifest_bundles(tsv: &str) -> Vec<&str> {
    tsv.lines()
        .find_map(|l| l.strip_prefix("# bundles:"))
        .map(|names| names.split_whitespace().collect())
        .unwrap_or_default()
}

/// The stored name of `bundle` (bundles match ignoring ASCII case) among a manifest's.
pub fn stored_bundle_in(tsv: &str, bundle: &str) -> Option<String> {
    manifest_bundles(tsv)
        .into_iter()
        .find(|b| b.eq_ignore_ascii_case(bundle))
        .map(str::to_string)
}

/// The requested ids as `get` keeps them: NFC, each once, in request order.
pub fn distinct_ids<S: AsRef<str>>(ids: &[S]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .map(|i| crate::validate::nfc(i.as_ref()))
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// The second request a remote `get` needs to tell "no such section" from "no such
/// concept" (read.md §4.6 renders them differently): with a `section`, the ids missing from
/// the first answer, fetched whole with `source` so their section names can be compiled
/// from the text. `None` when nothing is missing or no section was asked for.
pub fn get_probe<S: AsRef<str>>(
    ids: &[S],
    opts: &GetOptions,
    found: &[(String, OwnedSlice)],
) -> Option<(Vec<String>, GetOptions)> {
    opts.section.as_ref()?;
    let missing: Vec<String> = distinct_ids(ids)
        .into_iter()
        .filter(|id| !found.iter().any(|(f, _)| f == id))
        .collect();
    (!missing.is_empty()).then(|| {
        (
            missing,
            GetOptions {
                source: true,
                ..GetOptions::default()
            },
        )
    })
}

/// What one requested id of a remote `get` came to, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RemoteOutcome {
    Found(OwnedSlice),
    NoSection {
        sections: Vec<String>,
        source: Option<OwnedSlice>,
    },
    NotFound,
}

/// A remote `get` with every id's outcome, as a local [`crate::read::GetResult`] has them:
/// from the first answer and, when [`get_probe`] asked for one, the probe's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteGet {
    entries: Vec<(String, RemoteOutcome)>,
    section: Option<String>,
}

impl RemoteGet {
    /// Assembles the outcomes. A probed id that exists has no such section: its section
    /// names are those the compiler finds in its text (`parse_document`, the same pass
    /// the server compiled it with).
    pub fn new<S: AsRef<str>>(
        ids: &[S],
        opts: &GetOptions,
        found: Vec<(String, OwnedSlice)>,
        probe: Option<Vec<(String, OwnedSlice)>>,
    ) -> RemoteGet {
        let mut found: std::collections::HashMap<String, OwnedSlice> = found.into_iter().collect();
        let mut probed: std::collections::HashMap<String, OwnedSlice> =
            probe.unwrap_or_default().into_iter().collect();
        let entries = distinct_ids(ids)
            .into_iter()
            .map(|id| {
                let outcome = if let Some(s) = found.remove(&id) {
                    RemoteOutcome::Found(s)
                } else if let Some(p) = probed.remove(&id) {
                    let text: std::sync::Arc<str> = p.text.as_str().into();
                    let parsed = crate::compile::parse_document(
                        p.path.as_deref().unwrap_or(""),
                        &text,
                        crate::compile::SUMMARY_WIDTH,
                    );
                    RemoteOutcome::NoSection {
                        sections: parsed.sections.into_iter().map(|s| s.name).collect(),
                        source: opts.source.then_some(p),
                    }
                } else {
                    RemoteOutcome::NotFound
                };
                (id, outcome)
            })
            .collect();
        RemoteGet {
            entries,
            section: opts.section.clone(),
        }
    }

    /// The outcomes as a [`crate::read::GetResult`] borrowing from this one, for the
    /// renderers ([`crate::read::render_mcp`], [`crate::read::render_cli`]).
    pub fn result(&self) -> crate::read::GetResult<'_> {
        use crate::read::{Entry, GetResult, Outcome};
        GetResult {
            entries: self
                .entries
                .iter()
                .map(|(id, o)| Entry {
                    id: id.clone(),
                    outcome: match o {
                        RemoteOutcome::Found(s) => Outcome::Found(s.as_slice()),
                        RemoteOutcome::NoSection { sections, source } => Outcome::NoSection {
                            sections: sections.iter().map(String::as_str).collect(),
                            source: source.as_ref().and_then(OwnedSlice::source_ref),
                        },
                        RemoteOutcome::NotFound => Outcome::NotFound,
                    },
                })
                .collect(),
            section: self.section.clone(),
        }
    }
}

/// The object id → slice of a `get` answer with its keys in the server's order (JSON
/// objects are unordered to serde_json without `preserve_order`).
pub fn ordered_object(body: &[u8]) -> Option<Vec<(String, Value)>> {
    struct Ordered;
    impl<'de> Visitor<'de> for Ordered {
        type Value = Vec<(String, Value)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut m: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = m.next_entry::<String, Value>()? {
                out.push((k, v));
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let v = (&mut de).deserialize_map(Ordered).ok()?;
    de.end().ok()?;
    Some(v)
}

mod tool;
pub use tool::{RemoteStep, RemoteTool};

#[cfg(test)]
mod tests;
