//! MCP over stdio: the line framing and the JSON-RPC edge in front of rmcp (docs/mcp.md,
//! "Every request gets one answer").
//!
//! rmcp's own stdio transport drops a line longer than 16 MiB, a line that is not JSON, a
//! request with a lone surrogate or an id it cannot represent, all without a word, so the
//! client waits forever; and a stray response or notification before `initialize` ends the
//! session. [`StdioTransport`] reads the lines itself and hands rmcp only messages it can
//! serve. Every other line gets the answer JSON-RPC 2.0 prescribes, written here:
//!
//! | line | answer |
//! |---|---|
//! | longer than [`bounds::MESSAGE_BYTES`] | −32600 with the request's id (found by a scan of the bytes as they are dropped) |
//! | not JSON (or not UTF-8) | −32700, id `null` |
//! | a batch, or not an object | −32600, id `null` |
//! | `jsonrpc` other than `"2.0"`, `method` not a string | −32600 |
//! | an id that is not a string or an integer of 64 bits (`1e400`, `1.5`, `null`, `true`) | −32600, id `null` |
//! | `params` not an object; a lone surrogate outside a tool's arguments | −32602 |
//! | a second `initialize` | −32600 |
//! | a response, or a notification before the session starts | none (ignored) |
//!
//! A `tools/call` whose `arguments` are not an object, or hold strings with lone surrogates,
//! goes to the server with what was found in `_meta` ([`WIRE_META`]), so the reply is the
//! tool error the core words (`arguments must be an object`, `source must contain
//! well-formed Unicode`). Writes go through one task in message order, so a line written
//! here never splits one rmcp writes, and reading stays cancellation-safe: nothing is
//! awaited between consuming a line and handing its message over.

use langonrock_core::bounds;
use langonrock_core::wire::{self, Scanner, Step};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The `_meta` key of a `tools/call` under which the transport passes what it found on the
/// wire: `{"illFormed": [path, …], "arguments": <the arguments when not an object>}`, each
/// path an array of keys and indexes within `arguments`.
pub const WIRE_META: &str = "dev.langonrock/wire";

/// The message for a line beyond the limit.
pub fn too_long() -> String {
    format!(
        "message longer than {} bytes (100 MiB), the most this server reads in one line; a request carries at most 16 MiB of document content",
        bounds::MESSAGE_BYTES
    )
}

/// JSON-RPC 2.0 error codes.
const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// The answer to a request whose id this server cannot echo (with id `null`).
pub(crate) const BAD_ID: &str =
    "Invalid request: id must be a string or an integer of at most 64 bits";

/// The request methods of MCP (through protocol 2026-07-28) that rmcp reads. rmcp answers
/// any other method with its name as the whole message, however long, so those are answered
/// here, the name quoted as every error quotes a value.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "completion/complete",
    "logging/setLevel",
];

/// What to do with one line.
enum Decision {
    Forward(Box<RxJsonRpcMessage<RoleServer>>),
    Answer(Vec<u8>),
    /// Nothing to answer; the reason is for reading the code.
    Ignore(#[allow(dead_code)] &'static str),
}

/// An error response line.
fn error_line(id: Option<&Value>, code: i64, message: &str) -> Vec<u8> {
    let id = id.map_or_else(|| "null".to_string(), Value::to_string);
    let message = Value::String(message.to_string());
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
        .into_bytes()
        .into_iter()
        .chain([b'\n'])
        .collect()
}

/// An id rmcp can carry: a string, or an integer that fits in 64 bits.
pub(crate) fn valid_id(v: &Value) -> bool {
    v.is_string() || v.as_i64().is_some()
}

/// The line reader's state, kept across cancelled reads.
struct Lines<R> {
    read: BufReader<R>,
    buf: Vec<u8>,
    /// While dropping the rest of a line beyond the limit: a scan of its bytes.
    oversized: Option<Scanner>,
    /// The longest line kept ([`bounds::MESSAGE_BYTES`]; smaller in unit tests).
    limit: usize,
}

/// One line, or the end.
enum Line {
    Whole,
    Oversized(wire::Found),
    Eof,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// Reads one line into `buf` (without its `\n`), or scans and drops one beyond the
    /// limit. Cancellation-safe: bytes are consumed only after they are kept or scanned.
    async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                // A last line without its line break is still a message.
                if self.oversized.is_some() {
                    let scan = self
                        .oversized
                        .take()
                        .map(Scanner::finish)
                        .unwrap_or_default();
                    return Ok(Line::Oversized(scan));
                }
                if self.buf.iter().any(|b| !b.is_ascii_whitespace()) {
                    return Ok(Line::Whole);
                }
                return Ok(Line::Eof);
            }
            let newline = memchr_newline(available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..newline.unwrap_or(available.len())];
            if let Some(scan) = self.oversized.as_mut() {
                scan.feed(chunk);
            } else if self.buf.len() + chunk.len() > self.limit {
                let mut scan = Scanner::new();
                scan.feed(&self.buf);
                scan.feed(chunk);
                self.buf.clear();
                self.buf.shrink_to(1 << 20);
                self.oversized = Some(scan);
            } else {
                self.buf.extend_from_slice(chunk);
            }
            self.read.consume(take);
            if newline.is_some() {
                if let Some(scan) = self.oversized.take() {
                    return Ok(Line::Oversized(scan.finish()));
                }
                return Ok(Line::Whole);
            }
        }
    }
}

fn memchr_newline(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

/// The transport: stdin lines in, messages and answers out through one writer task.
pub struct StdioTransport<R> {
    lines: Lines<R>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Whether a session has started: rmcp answered an `initialize`, or a request with the
    /// inline metadata of protocol 2026-07-28, with a result (set by `send`). Before it, rmcp
    /// ends the session on any message that is not a request, so those are held back here.
    started: Arc<AtomicBool>,
    /// The requests forwarded before the session started that would start it if rmcp
    /// answers them with a result, by the JSON text of their id.
    starting: Arc<Mutex<HashSet<String>>>,
    /// Whether an `initialize` was forwarded (a second one is refused).
    initialized: bool,
}

impl<R: AsyncRead + Unpin + Send> StdioTransport<R> {
    /// A transport reading `reader`; the returned task writes every outgoing line to
    /// `writer` in order and ends once the transport and every pending send are gone.
    pub fn new<W>(reader: R, writer: W) -> (StdioTransport<R>, tokio::task::JoinHandle<()>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            let mut writer = writer;
            while let Some(line) = rx.recv().await {
                if writer.write_all(&line).await.is_err() {
                    break;
                }
                // Flush when nothing else is waiting, so a burst goes out in one write.
                if rx.is_empty() && writer.flush().await.is_err() {
                    break;
                }
            }
            let _ = writer.flush().await;
        });
        (
            StdioTransport {
                lines: Lines {
                    read: BufReader::with_capacity(1 << 16, reader),
                    buf: Vec::new(),
                    oversized: None,
                    limit: bounds::MESSAGE_BYTES,
                },
                out: tx,
                started: Arc::new(AtomicBool::new(false)),
                starting: Arc::new(Mutex::new(HashSet::new())),
                initialized: false,
            },
            task,
        )
    }

    /// The same transport with another line limit (for tests).
    pub fn with_limit(mut self, limit: usize) -> StdioTransport<R> {
        self.lines.limit = limit;
        self
    }

    fn answer(&self, line: Vec<u8>) {
        let _ = self.out.send(line);
    }

    /// The answer to a line beyond the limit, from the scan of its bytes.
    fn oversized(&self, found: &wire::Found) -> Decision {
        // Only a message that looks whole is judged by its members; anything else is
        // answered (JSON-RPC answers what it cannot read, with a null id).
        if found.whole && found.response {
            return Decision::Ignore("an oversized response");
        }
        if found.whole && found.method.is_some() && !found.has_id {
            return Decision::Ignore("an oversized notification");
        }
        let id = found
            .id
            .as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .filter(valid_id);
        Decision::Answer(error_line(id.as_ref(), INVALID_REQUEST, &too_long()))
    }

    fn decide(&mut self, line: &[u8]) -> Decision {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Decision::Ignore("an empty line");
        }
        let (mut v, found) = match wire::parse_repairing(line) {
            Ok(parsed) => parsed,
            Err(e) => {
                let why = if std::str::from_utf8(line).is_err() {
                    "the message is not valid UTF-8".to_string()
                } else {
                    e.to_string()
                };
                return Decision::Answer(error_line(
                    None,
                    PARSE_ERROR,
                    &format!("Parse error: {why}"),
                ));
            }
        };
        let Some(obj) = v.as_object_mut() else {
            let why = if v.is_array() {
                "Invalid request: batches are not supported; send one message per line"
            } else {
                "Invalid request: a message must be a JSON object"
            };
            return Decision::Answer(error_line(None, INVALID_REQUEST, why));
        };
        let flawed = id_flawed(&found);
        let id = obj.get("id").filter(|i| valid_id(i) && !flawed).cloned();
        let has_id = obj.contains_key("id");
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Decision::Answer(error_line(
                id.as_ref(),
                INVALID_REQUEST,
                "Invalid request: jsonrpc must be \"2.0\"",
            ));
        }
        let method = match obj.get("method") {
            None => {
                if obj.contains_key("result") || obj.contains_key("error") {
                    // This server sends no requests, so no response is awaited.
                    return Decision::Ignore("a response");
                }
                return Decision::Answer(error_line(
                    id.as_ref(),
                    INVALID_REQUEST,
                    "Invalid request: a request needs a method",
                ));
            }
            Some(Value::String(m)) => m.clone(),
            Some(_) => {
                return Decision::Answer(error_line(
                    id.as_ref(),
                    INVALID_REQUEST,
                    "Invalid request: method must be a string",
                ))
            }
        };
        if has_id && id.is_none() {
            return Decision::Answer(error_line(None, INVALID_REQUEST, BAD_ID));
        }
        let Some(id) = id else {
            // A notification: never answered.
            if !self.started.load(Ordering::Acquire) {
                return Decision::Ignore("a notification before the session started");
            }
            return self.forward(v);
        };
        if !MCP_METHODS.contains(&method.as_str()) {
            return Decision::Answer(error_line(
                Some(&id),
                METHOD_NOT_FOUND,
                &format!("Method not found: \"{}\"", bounds::quote(&method)),
            ));
        }
        if method == "initialize" && (self.initialized || self.started.load(Ordering::Acquire)) {
            return Decision::Answer(error_line(
                Some(&id),
                INVALID_REQUEST,
                "Invalid request: the session is already initialized",
            ));
        }
        let params = obj
            .entry("params")
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(params) = params.as_object_mut() else {
            return Decision::Answer(error_line(
                Some(&id),
                INVALID_PARAMS,
                "Invalid params: params must be an object",
            ));
        };
        if let Some(Value::Object(meta)) = params.get_mut("_meta") {
            meta.remove(WIRE_META);
        }
        let ill_formed = match argument_flaws(&method, &found) {
            Ok(paths) => paths,
            Err(m) => return Decision::Answer(error_line(Some(&id), INVALID_PARAMS, &m)),
        };
        if method == "tools/call" {
            if !params.get("name").is_some_and(Value::is_string) {
                return Decision::Answer(error_line(
                    Some(&id),
                    INVALID_PARAMS,
                    "Invalid params: params.name must be the tool's name, a string",
                ));
            }
            mark_call(params, &ill_formed);
        }
        match self.forward(v) {
            Decision::Forward(m) => {
                if method == "initialize" {
                    self.initialized = true;
                }
                // Any request but a probe starts the session when rmcp gives it a result.
                if !self.started.load(Ordering::Acquire)
                    && !matches!(method.as_str(), "server/discover" | "ping")
                {
                    if let Ok(mut s) = self.starting.lock() {
                        s.insert(id.to_string());
                    }
                }
                Decision::Forward(m)
            }
            other => other,
        }
    }

    /// The message as rmcp's type, or the answer naming what rmcp could not read in it.
    fn forward(&self, v: Value) -> Decision {
        let id = v.get("id").cloned();
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(v) {
            Ok(m) => Decision::Forward(Box::new(m)),
            Err(e) => match id {
                None => Decision::Ignore("a notification rmcp cannot read"),
                Some(id) => Decision::Answer(error_line(
                    Some(&id),
                    INVALID_PARAMS,
                    &format!(
                        "Invalid params: {}",
                        bounds::quote_within(&e.to_string(), 300)
                    ),
                )),
            },
        }
    }
}

/// Paths as JSON arrays of keys and indexes.
/// Sorts the lone surrogates a scan found in one request of `method` (`found.ill_formed`,
/// paths from the message's root) by the rule of docs/limits.md: those within a
/// `tools/call`'s `params.arguments` come back relative to the arguments, for the tool to
/// name; any other is the error, `Invalid params: <path> must contain well-formed Unicode`
/// (−32602). The stdio server and `/mcp` of `serve` both call it.
pub(crate) fn argument_flaws(method: &str, found: &wire::Found) -> Result<Vec<wire::Path>, String> {
    let arguments = [Step::Key("params".into()), Step::Key("arguments".into())];
    let mut ill_formed = Vec::new();
    for p in &found.ill_formed {
        match p.strip_prefix(&arguments[..]) {
            Some(rest) if method == "tools/call" => ill_formed.push(rest.to_vec()),
            _ => return Err(format!("Invalid params: {}", wire::ill_formed_message(p))),
        }
    }
    Ok(ill_formed)
}

/// Hands a `tools/call`'s wire findings to the tool in `params._meta` ([`WIRE_META`], which
/// `McpServer::call_tool` reads): arguments that are not an object (moved out of `params`,
/// so the tool answers `arguments must be an object`) and the ill-formed paths within them.
/// Returns whether `params` changed.
pub(crate) fn mark_call(params: &mut Map<String, Value>, ill_formed: &[wire::Path]) -> bool {
    let mut wire_meta = Map::new();
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(_) => {
            if let Some(a) = params.remove("arguments") {
                wire_meta.insert("arguments".into(), a);
            }
        }
    }
    if !ill_formed.is_empty() {
        wire_meta.insert("illFormed".into(), paths_json(ill_formed));
    }
    if wire_meta.is_empty() {
        return false;
    }
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Some(m) = meta.as_object_mut() {
        m.insert(WIRE_META.into(), Value::Object(wire_meta));
    }
    true
}

/// Whether the scan found the top-level `id` itself flawed (a lone surrogate, a number a
/// double cannot hold): such a request is answered with id `null`.
pub(crate) fn id_flawed(found: &wire::Found) -> bool {
    let id = vec![Step::Key("id".into())];
    found.out_of_range.contains(&id) || found.ill_formed.contains(&id)
}

/// The JSON-RPC error answer `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`
/// (no newline).
pub(crate) fn error_message(id: Option<&Value>, code: i64, message: &str) -> Vec<u8> {
    let mut line = error_line(id, code, message);
    line.pop();
    line
}

fn paths_json(paths: &[wire::Path]) -> Value {
    Value::Array(
        paths
            .iter()
            .map(|p| {
                Value::Array(
                    p.iter()
                        .map(|s| match s {
                            Step::Key(k) => Value::String(k.clone()),
                            Step::Index(i) => json!(i),
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

/// The paths a [`WIRE_META`] entry carries, back as paths.
pub fn paths_from_json(v: &Value) -> Vec<wire::Path> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_array)
                .map(|p| {
                    p.iter()
                        .filter_map(|s| match s {
                            Value::String(k) => Some(Step::Key(k.clone())),
                            Value::Number(n) => n.as_u64().map(|i| Step::Index(i as usize)),
                            _ => None,
                        })
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for StdioTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if !self.started.load(Ordering::Acquire) {
            if let rmcp::model::JsonRpcMessage::Response(r) = &item {
                let id = serde_json::to_string(&r.id).unwrap_or_default();
                if self.starting.lock().is_ok_and(|mut s| s.remove(&id)) {
                    self.started.store(true, Ordering::Release);
                }
            }
        }
        let sent = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out
                    .send(line)
                    .map_err(|_| std::io::Error::other("the output is closed"))
            });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let decision = match self.lines.next().await {
                Err(e) => {
                    eprintln!("error: cannot read the MCP input: {e}");
                    return None;
                }
                Ok(Line::Eof) => return None,
                Ok(Line::Oversized(found)) => self.oversized(&found),
                Ok(Line::Whole) => {
                    let line = std::mem::take(&mut self.lines.buf);
                    let d = self.decide(&line);
                    // Keep a modest buffer, not the largest line ever read.
                    let mut line = line;
                    line.clear();
                    if line.capacity() <= 1 << 20 {
                        self.lines.buf = line;
                    }
                    d
                }
            };
            match decision {
                Decision::Forward(m) => return Some(*m),
                Decision::Answer(line) => self.answer(line),
                Decision::Ignore(_) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
