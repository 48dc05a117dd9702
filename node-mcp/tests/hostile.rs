//! Hostile input against the real binary over stdio, with a raw JSON-RPC client
//! (docs/limits.md). Every case is one line written to `langonrock mcp`; each must be
//! answered with its exact message (or, where JSON-RPC says so, not at all) well inside a
//! hang bound of ten seconds,
//! and the server must answer a ping afterwards. On an empty data root nothing may be
//! created; on a tenant with history, refusals change no file and `verify` stays clean.
//! `tests/mcp_client/hostile.py` drives the same server through the official Python SDK.

mod common;

use common::{bin, TempDir};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The bound on every answer to a hostile line: not a speed target (speed is measured by
/// `cargo run --release -p langonrock-bench -- limits`, docs/limits.md) but the line between an
/// answer and a hang, wide enough for a debug build on a loaded 2-core machine.
const WITHIN: Duration = Duration::from_secs(10);

/// The bound for a line of `len` bytes: ten seconds, and for a long line one more per 16 MiB,
/// the time a debug build takes to parse it (a release build answers a 100 MiB line in a
/// few milliseconds after its end; docs/limits.md).
fn within(len: usize) -> Duration {
    WITHIN + Duration::from_secs((len / (16 << 20)) as u64)
}

/// A `langonrock mcp` process and a thread reading its stdout, line by line.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    next_id: u64,
}

impl Raw {
    fn start(dsn: &str, flags: &[&str]) -> Raw {
        let mut child = common::spawn_mcp(dsn, flags);
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carries JSON-RPC only: {e}: {line:?}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Raw {
            child,
            stdin,
            lines: rx,
            next_id: 1000,
        }
    }

    fn line(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// The next line the server writes, within `bound` of now.
    fn answer_within(&mut self, bound: Duration, what: &str) -> Value {
        match self.lines.recv_timeout(bound) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("{what}: no answer within {bound:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("{what}: the server closed stdout"),
        }
    }

    /// Asserts the server writes nothing for `wait`.
    fn silent(&mut self, wait: Duration, what: &str) {
        if let Ok(v) = self.lines.recv_timeout(wait) {
            panic!("{what}: expected no answer, got {v}");
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.line(msg.to_string().as_bytes());
        let v = self.answer_within(WITHIN, method);
        assert_eq!(v["id"], id, "{method}: answered another id: {v}");
        v
    }

    fn ping(&mut self, after: &str) {
        let v = self.request("ping", json!({}));
        assert_eq!(v["result"], json!({}), "ping after {after}: {v}");
    }

    fn call(&mut self, name: &str, args: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": name, "arguments": args}));
        tool_text(&v)
    }

    /// Closes stdin, as a client ending the session does, and returns the exit code.
    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_text(v: &Value) -> (String, bool) {
    let r = &v["result"];
    (
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        r["isError"].as_bool().unwrap_or(false),
    )
}

/// What one raw line must get back.
enum Expect {
    /// A JSON-RPC error with this id, code and message.
    Error(Value, i64, &'static str),
    /// A tool result with this text, as an error.
    ToolError(String),
    /// No answer at all (JSON-RPC: responses and notifications are not answered).
    Nothing,
}

fn check_line(r: &mut Raw, name: &str, line: &[u8], expect: Expect) {
    let started = Instant::now();
    r.line(line);
    let bound = within(line.len());
    match expect {
        Expect::Nothing => r.silent(Duration::from_millis(300), name),
        Expect::Error(id, code, message) => {
            let v = r.answer_within(bound, name);
            assert_eq!(
                (
                    &v["id"],
                    v["error"]["code"].as_i64(),
                    v["error"]["message"].as_str()
                ),
                (&id, Some(code), Some(message)),
                "{name}: {v}"
            );
        }
        Expect::ToolError(text) => {
            let v = r.answer_within(bound, name);
            assert_eq!(tool_text(&v), (text, true), "{name}: {v}");
        }
    }
    r.ping(name);
    println!("ok ({:>4} ms): {name}", started.elapsed().as_millis());
}

/// A `tools/call` line.
fn call_line(id: u64, name: &str, args: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": args}})
    .to_string()
    .into_bytes()
}

/// Every file under `dir`, with its size.
fn listing(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
                out.insert(rel, e.metadata().map_or(0, |m| m.len()));
            }
        }
    }
    out
}

fn verify_clean(data: &Path, tenant: &str) {
    let out = Command::new(bin())
        .args(["verify", "--tenant", tenant])
        .env("LANGONROCK_DATA", data)
        .output()
        .expect("run verify");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "verify failed: {text}");
    assert!(text.contains("\"ok\":true"), "{text}");
}

/// `Method not found: "mmm…"` for a 1 MB method name.
const METHOD_CUT: &str = "Method not found: \"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm…\"";

const H0: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One refused tool call: what it is, the tool, its arguments and the exact reply.
struct Bad {
    name: &'static str,
    tool: String,
    args: Value,
    text: String,
}

fn bad(name: &'static str, tool: &str, args: Value, text: impl Into<String>) -> Bad {
    Bad {
        name,
        tool: tool.to_string(),
        args,
        text: text.into(),
    }
}

/// The tool calls of the bad-input list: each refused with its exact text and nothing
/// written. `bundles` is the tenant's bundle list as the unknown-bundle refusal prints it.
fn bad_calls(bundles: &str) -> Vec<Bad> {
    let mega = "a".repeat(1 << 20);
    let cut = format!("{}…", "a".repeat(120));
    let long_seg = format!("{}.md", "é".repeat(130));
    let e120 = format!("{}…", "é".repeat(120));
    vec![
        // Path rules (compile.md §10.3 and docs/limits.md), each with its own message.
        bad("a path with ..", "write", json!({"bundle": "b", "path": "../x.md", "content": "x"}),
            "invalid path \"../x.md\": segment \"..\" starts with a dot"),
        bad("an absolute path", "write", json!({"bundle": "b", "path": "/abs.md", "content": "x"}),
            "invalid path \"/abs.md\": must be relative to the bundle"),
        bad("a backslash", "write", json!({"bundle": "b", "path": "a\\b.md", "content": "x"}),
            "invalid path \"a\\b.md\": use forward slashes only"),
        bad("a NUL byte", "write", json!({"bundle": "b", "path": "a\u{0}b.md", "content": "x"}),
            "invalid path \"a\\u0000b.md\": holds a NUL byte"),
        bad("not a .md file", "write", json!({"bundle": "b", "path": "a.txt", "content": "x"}),
            "invalid path \"a.txt\": a concept must be a .md file"),
        bad("an empty segment", "write", json!({"bundle": "b", "path": "a//b.md", "content": "x"}),
            "invalid path \"a//b.md\": has an empty segment (two slashes in a row)"),
        bad("a hidden segment", "write", json!({"bundle": "b", "path": "x/.h.md", "content": "x"}),
            "invalid path \"x/.h.md\": segment \".h.md\" starts with a dot"),
        bad("a trailing space", "write", json!({"bundle": "b", "path": "a /b.md", "content": "x"}),
            "invalid path \"a /b.md\": segment \"a \" ends with a space"),
        bad("a trailing dot", "write", json!({"bundle": "b", "path": "a./b.md", "content": "x"}),
            "invalid path \"a./b.md\": segment \"a.\" ends with a dot"),
        bad("a control character", "write", json!({"bundle": "b", "path": "a\tb.md", "content": "x"}),
            "invalid path \"a\\u0009b.md\": segment \"a\\u0009b.md\" holds the control character U+0009"),
        bad("a reserved character", "write", json!({"bundle": "b", "path": "a:b.md", "content": "x"}),
            "invalid path \"a:b.md\": segment \"a:b.md\" holds \":\", which Windows file names cannot hold"),
        bad("a right-to-left override", "write", json!({"bundle": "b", "path": "inv\u{202e}dm.exe.md", "content": "x"}),
            "invalid path \"inv\\u202edm.exe.md\": segment \"inv\\u202edm.exe.md\" holds U+202E, a bidirectional control that can make one path look like another"),
        bad("a zero-width space", "write", json!({"bundle": "b", "path": "or\u{200b}ders.md", "content": "x"}),
            "invalid path \"or\\u200bders.md\": segment \"or\\u200bders.md\" holds U+200B, an invisible character that can make one path look like another"),
        bad("a segment of 130 × é (263 bytes)", "write", json!({"bundle": "b", "path": long_seg, "content": "x"}),
            format!("invalid path \"{e120}\": segment \"{e120}\" is longer than 255 bytes in UTF-8")),
        bad("a # segment", "write", json!({"bundle": "b", "path": "x/#a.md", "content": "x"}),
            "invalid path \"x/#a.md\": segment \"#a.md\" starts with #"),
        bad("a device name", "write", json!({"bundle": "b", "path": "con.md", "content": "x"}),
            "invalid path \"con.md\": segment \"con.md\" is a reserved device name on Windows"),
        bad("a - concept", "write", json!({"bundle": "b", "path": "-.md", "content": "x"}),
            "invalid path \"-.md\": \"-\" cannot name a concept"),
        bad("a 1 MB path", "write", json!({"bundle": "b", "path": format!("{mega}.md"), "content": "x"}),
            format!("invalid path \"{cut}\": longer than 200 characters")),
        bad("a 1 MB path to delete", "delete", json!({"bundle": "b", "path": format!("{mega}.md"), "replaces": H0}),
            format!("invalid path \"{cut}\": longer than 200 characters")),
        // Bundle names.
        bad("a bundle name with a space", "write", json!({"bundle": "No Bundle", "path": "a.md", "content": "x"}),
            "invalid bundle name \"No Bundle\": expected 1-64 chars of [a-z0-9_-]"),
        bad("a bundle name with a bidi control", "write", json!({"bundle": "a\u{202e}b", "path": "a.md", "content": "x"}),
            "invalid bundle name \"a\\u202eb\": expected 1-64 chars of [a-z0-9_-]"),
        bad("a 1 MB bundle name", "write", json!({"bundle": mega, "path": "a.md", "content": "x"}),
            format!("invalid bundle name \"{cut}\": expected 1-64 chars of [a-z0-9_-]")),
        bad("a device bundle name", "write", json!({"bundle": "aux", "path": "a.md", "content": "x"}),
            "invalid bundle name \"aux\": a reserved device name on Windows"),
        // Hashes and preconditions.
        bad("a 1 MB hash", "write", json!({"bundle": "b", "path": "z.md", "content": "x", "replaces": mega}),
            format!("invalid hash \"{cut}\": expected 64 lowercase hex characters")),
        bad("a hash of nothing", "write", json!({"bundle": "b", "path": "z.md", "content": "x", "replaces": H0}),
            "concept does not exist: re-read the concept and retry with its new hash\nomit replaces to create it"),
        bad("a delete of nothing", "delete", json!({"bundle": "b", "path": "z.md"}),
            "concept does not exist"),
        bad("a delete of nothing with a hash", "delete", json!({"bundle": "b", "path": "z.md", "replaces": H0}),
            "concept does not exist: re-read the concept and retry with its new hash"),
        bad("content over 16 MiB", "write", json!({"bundle": "b", "path": "big.md", "content": "x".repeat(16 * 1024 * 1024 + 1)}),
            "transaction source payload exceeds 16 MiB"),
        // Arguments against the schema, named.
        bad("content missing", "write", json!({"bundle": "b", "path": "x.md"}), "content is required"),
        bad("content not a string", "write", json!({"bundle": "b", "path": "x.md", "content": 3}),
            "content must be a string"),
        bad("k of 0", "search", json!({"query": "x", "k": 0}), "k must be an integer from 1 to 50"),
        bad("k of 1e400", "search", json!({"query": "x", "k": 1e300}), "k must be an integer from 1 to 50"),
        bad("an empty query", "search", json!({"query": ""}), "query must be a non-empty string"),
        bad("no ids", "get", json!({"ids": []}), "ids must be a non-empty array of strings"),
        bad("a negative offset", "get", json!({"ids": ["a"], "offset": -1}),
            "offset must be a non-negative integer"),
        bad("a limit of 0", "get", json!({"ids": ["a"], "limit": 0}), "limit must be a positive integer"),
        bad("an unknown tool", "nope", json!({}), "unknown tool \"nope\""),
        bad("a 1 MB tool name", &mega, json!({}), format!("unknown tool \"{cut}\"")),
        bad("a database tool in the default mode", "transact", json!({"changes": []}),
            "unknown tool \"transact\""),
        bad("an unknown bundle", "manifest", json!({"bundle": "zz"}),
            format!("no bundle \"zz\" in this tenant: found {bundles}")),
        bad("a 1 MB bundle filter", "search", json!({"query": "x", "bundle": mega}),
            format!("no bundle \"{cut}\" in this tenant: found {bundles}")),
    ]
}

/// The replies that are answers, not errors, but echo their input: cut as errors are.
fn echoing_reads(r: &mut Raw) {
    let mega = "a".repeat(1 << 20);
    let cut = format!("{}…", "a".repeat(120));
    let started = Instant::now();
    let (text, err) = r.call("get", json!({"ids": [mega, "nope"]}));
    assert_eq!(
        (text.as_str(), err),
        (format!("@@ not found\n{cut} nope").as_str(), false)
    );
    r.ping("get of a 1 MB id");
    println!(
        "ok ({:>4} ms): a get of a 1 MB id",
        started.elapsed().as_millis()
    );
}

/// Raw lines and what each must get back, in a session already initialized.
fn raw_cases() -> Vec<(&'static str, Vec<u8>, Expect)> {
    let null = Value::Null;
    vec![
        ("a line that is not JSON", b"this is not json".to_vec(),
            Expect::Error(null.clone(), -32700, "Parse error: expected ident at line 1 column 2")),
        ("truncated JSON", br#"{"jsonrpc":"2.0","id":1,"method":"ping""#.to_vec(),
            Expect::Error(null.clone(), -32700, "Parse error: EOF while parsing an object at line 1 column 39")),
        ("bytes that are not UTF-8", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
            Expect::Error(null.clone(), -32700, "Parse error: the message is not valid UTF-8")),
        ("a batch", br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: batches are not supported; send one message per line")),
        ("a bare number", b"42".to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: a message must be a JSON object")),
        ("jsonrpc 1.0", br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#.to_vec(),
            Expect::Error(json!(7), -32600, "Invalid request: jsonrpc must be \"2.0\"")),
        ("method not a string", br#"{"jsonrpc":"2.0","id":8,"method":["ping"]}"#.to_vec(),
            Expect::Error(json!(8), -32600, "Invalid request: method must be a string")),
        ("an id of 1e400", br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: id must be a string or an integer of at most 64 bits")),
        ("a fractional id", br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: id must be a string or an integer of at most 64 bits")),
        ("an id beyond 64 bits", br#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: id must be a string or an integer of at most 64 bits")),
        ("a null id", br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: id must be a string or an integer of at most 64 bits")),
        ("an object id", br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: id must be a string or an integer of at most 64 bits")),
        ("a request without a method", br#"{"jsonrpc":"2.0","id":9}"#.to_vec(),
            Expect::Error(json!(9), -32600, "Invalid request: a request needs a method")),
        ("params not an object", br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1]}"#.to_vec(),
            Expect::Error(json!(10), -32602, "Invalid params: params must be an object")),
        ("a tool call without a name", br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"arguments":{}}}"#.to_vec(),
            Expect::Error(json!(11), -32602, "Invalid params: params.name must be the tool's name, a string")),
        ("arguments: [1]", br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"write","arguments":[1]}}"#.to_vec(),
            Expect::ToolError("arguments must be an object".into())),
        ("arguments: \"x\"", br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"search","arguments":"x"}}"#.to_vec(),
            Expect::ToolError("arguments must be an object".into())),
        ("a second initialize", br#"{"jsonrpc":"2.0","id":14,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}"#.to_vec(),
            Expect::Error(json!(14), -32600, "Invalid request: the session is already initialized")),
        ("a lone surrogate in content", br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"write","arguments":{"bundle":"b","path":"s.md","content":"x\ud83d"}}}"#.to_vec(),
            Expect::ToolError("source must contain well-formed Unicode".into())),
        ("a lone low surrogate in content", br#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"write","arguments":{"bundle":"b","path":"s.md","content":"\ude00x"}}}"#.to_vec(),
            Expect::ToolError("source must contain well-formed Unicode".into())),
        ("a lone surrogate in a query", br#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"search","arguments":{"query":"\ud83d"}}}"#.to_vec(),
            Expect::ToolError("query must contain well-formed Unicode".into())),
        ("a lone surrogate in a path", br#"{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"write","arguments":{"bundle":"b","path":"\ud800.md","content":"x"}}}"#.to_vec(),
            Expect::ToolError("path must contain well-formed Unicode".into())),
        ("a lone surrogate in an id to get", br#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"get","arguments":{"ids":["a","\udbff"]}}}"#.to_vec(),
            Expect::ToolError("ids[1] must contain well-formed Unicode".into())),
        ("a lone surrogate in a tool name", br#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"wr\ud800ite","arguments":{}}}"#.to_vec(),
            Expect::Error(json!(20), -32602, "Invalid params: params.name must contain well-formed Unicode")),
        ("a lone surrogate in the id", br#"{"jsonrpc":"2.0","id":"a\ud800","method":"ping"}"#.to_vec(),
            Expect::Error(null.clone(), -32600, "Invalid request: id must be a string or an integer of at most 64 bits")),
        ("a stray response", br#"{"jsonrpc":"2.0","id":99,"result":{}}"#.to_vec(), Expect::Nothing),
        ("a stray error response", br#"{"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"x"}}"#.to_vec(), Expect::Nothing),
        ("an unknown notification", br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}"#.to_vec(), Expect::Nothing),
        ("a notification with a lone surrogate", br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"x":"\ud800"}}"#.to_vec(), Expect::Nothing),
        ("an empty line", Vec::new(), Expect::Nothing),
        ("an unknown method", br#"{"jsonrpc":"2.0","id":21,"method":"frobnicate"}"#.to_vec(),
            Expect::Error(json!(21), -32601, "Method not found: \"frobnicate\"")),
        ("a 1 MB method name", format!(r#"{{"jsonrpc":"2.0","id":23,"method":"{}"}}"#, "m".repeat(1 << 20)).into_bytes(),
            Expect::Error(json!(23), -32601, METHOD_CUT)),
        ("an unknown resource", br#"{"jsonrpc":"2.0","id":22,"method":"resources/read","params":{"uri":"okf://nope"}}"#.to_vec(),
            Expect::Error(json!(22), -32002, "no resource \"okf://nope\"")),
    ]
}

fn run_bad_calls(r: &mut Raw, bundles: &str) {
    for (i, b) in bad_calls(bundles).into_iter().enumerate() {
        let line = call_line(5000 + i as u64, &b.tool, b.args);
        check_line(r, b.name, &line, Expect::ToolError(b.text));
    }
}

impl Raw {
    /// Initializes the session of a server started with [`Raw::start`].
    fn initialize(&mut self) {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "langonrock", "{init}");
        self.line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

#[test]
fn hostile_lines_on_an_empty_data_root_answer_and_create_nothing() {
    let dir = TempDir::new("hostile-empty");
    let data = dir.path().join("data");
    let dsn = format!("okf://{}?tenant=t", data.display());

    // Before the session starts: stray responses and notifications are ignored (they used
    // to end the server), pings answered, and the session then starts as usual.
    let mut r = Raw::start(&dsn, &[]);
    check_line(
        &mut r,
        "a response before initialize",
        br#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        Expect::Nothing,
    );
    check_line(
        &mut r,
        "a notification before initialize",
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Expect::Nothing,
    );
    check_line(
        &mut r,
        "a line that is not JSON before initialize",
        b"hello",
        Expect::Error(
            Value::Null,
            -32700,
            "Parse error: expected value at line 1 column 1",
        ),
    );
    r.initialize();
    for (name, line, expect) in raw_cases() {
        check_line(&mut r, name, &line, expect);
    }
    run_bad_calls(&mut r, "none");
    echoing_reads(&mut r);
    let (m, err) = r.call("manifest", json!({}));
    assert!(!err && m.starts_with("# tenant: t\n"), "{m}");
    assert_eq!(r.close(), 0, "a clean close exits 0");
    assert!(
        !data.exists(),
        "nothing may be created before the first commit: {:?}",
        listing(&data)
    );
    verify_clean(&data, "t");
    assert!(!data.exists(), "verify creates nothing");
}

/// The YAML that made the parser's work unbounded, and the diagnostic each gets at once.
fn yaml_cases() -> Vec<(&'static str, String, String)> {
    let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let mut prev = "a".to_string();
    for l in 0..9 {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        laughs.push_str(&format!("l{l}: &l{l} [{refs}]\n"));
        prev = format!("l{l}");
    }
    let fm = |yaml: &str| format!("---\ntype: t\n{yaml}\n---\nBody.\n");
    vec![
        (
            "YAML flow sequences 100,000 deep (200 KB)",
            fm(&format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000))),
            "invalid YAML frontmatter: flow collections nested deeper than 128 levels at line 2 column 132".into(),
        ),
        (
            "YAML flow mappings 100,000 deep",
            fm(&format!("a: {}x{}", "{a: ".repeat(100_000), "}".repeat(100_000))),
            "invalid YAML frontmatter: flow collections nested deeper than 128 levels at line 2 column 516".into(),
        ),
        (
            "YAML billion laughs",
            fm(&laughs),
            "invalid YAML frontmatter: aliases expand to more than 100,000 nodes".into(),
        ),
    ]
}

#[test]
fn hostile_lines_on_a_tenant_with_history_change_nothing() {
    let dir = TempDir::new("hostile-tenant");
    let data = dir.path().join("data");
    let dsn = format!("okf://{}?tenant=t", data.display());
    let doc = "---\ntype: note\n---\nHello world.\n";
    {
        let mut r = Raw::start(&dsn, &["--database-tools"]);
        r.initialize();
        for i in 0..3 {
            let (t, err) = r.call(
                "write",
                json!({"bundle": "notes", "path": format!("d{i}.md"), "content": doc}),
            );
            assert!(!err, "{t}");
        }
        assert_eq!(r.close(), 0);
    }
    let before = listing(&data);
    let mut r = Raw::start(&dsn, &["--database-tools"]);
    r.initialize();
    for (name, line, expect) in raw_cases() {
        check_line(&mut r, name, &line, expect);
    }
    for (i, b) in bad_calls("notes").into_iter().enumerate() {
        let mut text = b.text;
        if b.name == "a database tool in the default mode" {
            text = "changes must be an array of 1 to 1000 changes".into();
        }
        check_line(
            &mut r,
            b.name,
            &call_line(6000 + i as u64, &b.tool, b.args),
            Expect::ToolError(text),
        );
    }
    echoing_reads(&mut r);
    // The database tools' own refusals.
    let hash = |t: &str| langonrock_core::engine::Digest::of(t.as_bytes()).to_hex();
    let mega = "a".repeat(1 << 20);
    let cut = format!("{}…", "a".repeat(120));
    for (i, (name, tool, args, text)) in [
        ("a 1 MB history cursor", "history", json!({"before": mega}), "before must be a string of at most 512 characters".to_string()),
        ("a bad history cursor", "history", json!({"before": "x"}), "invalid history cursor".into()),
        ("a history limit of 0", "history", json!({"limit": 0}), "limit must be an integer from 1 to 100".into()),
        ("a 1 MB revision to restore", "restore", json!({"revision": mega, "expectedRevision": H0}),
            format!("revision: invalid hash \"{cut}\": expected 64 lowercase hex characters")),
        ("a revision outside history", "restore", json!({"revision": H0, "expectedRevision": H0}),
            "database changed: re-read the revision and document hashes".into()),
        ("1,001 changes", "transact", json!({"changes": vec![json!({"operation": "delete", "bundle": "b", "path": "a.md", "replaces": H0}); 1001]}),
            "changes must be an array of 1 to 1000 changes".into()),
        ("a transaction with a bad path", "transact", json!({"changes": [{"operation": "write", "bundle": "notes", "path": "../a.md", "content": "x"}]}),
            "invalid path \"../a.md\": segment \"..\" starts with a dot\nchanges[0]: notes/../a.md".into()),
        ("a transaction with a lone surrogate", "transact", Value::Null, String::new()),
        ("a transaction replacing a stale hash", "transact", json!({"changes": [{"operation": "write", "bundle": "notes", "path": "d0.md", "content": "y", "replaces": H0}]}),
            format!("concept changed since it was read: re-read the concept and retry with its new hash\nchanges[0]: notes/d0.md\nretry with replaces: \"{}\"", hash(doc))),
        ("a write over an existing concept", "write", json!({"bundle": "notes", "path": "d1.md", "content": "y"}),
            format!("concept already exists: re-read the concept and retry with its new hash\nretry with replaces: \"{}\"", hash(doc))),
        ("a lone surrogate over an existing concept", "write", Value::Null, String::new()),
    ]
    .into_iter()
    .enumerate()
    {
        let id = 7000 + i as u64;
        let line = match name {
            "a transaction with a lone surrogate" => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"transact","arguments":{{"changes":[{{"operation":"write","bundle":"notes","path":"ok.md","content":"x"}},{{"operation":"write","bundle":"notes","path":"s.md","content":"\ud83d"}}]}}}}}}"#
            ).into_bytes(),
            "a lone surrogate over an existing concept" => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"write","arguments":{{"bundle":"notes","path":"d2.md","content":"\ud83d","replaces":"{}"}}}}}}"#,
                hash(doc)
            ).into_bytes(),
            _ => call_line(id, tool, args),
        };
        let text = match name {
            "a transaction with a lone surrogate" => "source must contain well-formed Unicode\nchanges[1]: notes/s.md".to_string(),
            "a lone surrogate over an existing concept" => format!("source must contain well-formed Unicode\nretry with replaces: \"{}\"", hash(doc)),
            _ => text,
        };
        check_line(&mut r, name, &line, Expect::ToolError(text));
    }
    assert_eq!(r.close(), 0);
    assert_eq!(listing(&data), before, "a refusal changes no file");
    verify_clean(&data, "t");

    // Frontmatter that made the YAML parser's work unbounded: each write is accepted (content
    // never fails a write) with its diagnostic, at once.
    let mut r = Raw::start(&dsn, &[]);
    r.initialize();
    for (i, (name, content, diagnostic)) in yaml_cases().into_iter().enumerate() {
        let started = Instant::now();
        let path = format!("y{i}.md");
        let (text, err) = r.call(
            "write",
            json!({"bundle": "notes", "path": path, "content": content}),
        );
        assert!(!err, "{name}: {text}");
        assert!(
            text.ends_with(&format!("\nwarn {path}: {diagnostic}\nwarn {path}: missing required frontmatter field \"type\"")),
            "{name}: {text}"
        );
        r.ping(name);
        println!("ok ({:>4} ms): {name}", started.elapsed().as_millis());
    }
    assert_eq!(r.close(), 0);
    verify_clean(&data, "t");
}

#[test]
fn long_lines_are_read_or_answered_with_their_id() {
    let dir = TempDir::new("hostile-long");
    let data = dir.path().join("data");
    let dsn = format!("okf://{}?tenant=t", data.display());
    let mut r = Raw::start(&dsn, &[]);
    r.initialize();
    // 17 MiB, beyond the 16 MiB rmcp's own transport dropped: read and answered.
    let pad = " ".repeat(17 << 20);
    let line = format!(
        r#"{{"jsonrpc":"2.0",{pad}"id":1,"method":"tools/call","params":{{"name":"snapshot","arguments":{{}}}}}}"#
    );
    r.line(line.as_bytes());
    let v = r.answer_within(within(line.len()), "a 17 MiB line");
    assert_eq!((v["id"].as_i64(), tool_text(&v).1), (Some(1), false), "{v}");
    r.ping("a 17 MiB line");
    // Beyond 100 MiB: refused with the request's id, wherever in the line the id stands,
    // within the hang bound of the line's end.
    let content = "x".repeat(langonrock_core::bounds::MESSAGE_BYTES);
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"write","arguments":{{"bundle":"b","path":"a.md","content":"{content}"}}}},"id":"tail-id"}}"#
    );
    drop(content);
    let bound = within(line.len());
    r.line(line.as_bytes());
    drop(line);
    let v = r.answer_within(bound, "a line over 100 MiB");
    assert_eq!(v["id"], "tail-id", "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(
        v["error"]["message"],
        "message longer than 104857600 bytes (100 MiB), the most this server reads in one line; a request carries at most 16 MiB of document content"
    );
    r.ping("a line over 100 MiB");
    assert_eq!(r.close(), 0);
    assert!(!data.exists(), "nothing created: {:?}", listing(&data));
}

#[test]
fn reads_are_answered_while_a_large_commit_runs() {
    let dir = TempDir::new("hostile-busy");
    let data = dir.path().join("data");
    let dsn = format!("okf://{}?tenant=t", data.display());
    let mut r = Raw::start(&dsn, &[]);
    r.initialize();
    let (t, err) = r.call(
        "write",
        json!({"bundle": "b", "path": "a.md", "content": "---\ntype: t\n---\nhello world\n"}),
    );
    assert!(!err, "{t}");
    // A large document whose compile takes seconds (a debug build parses its YAML slowly).
    let yaml: Vec<&str> = vec!["[[[[x]]]]"; 400_000];
    let big = format!("---\ntype: t\na: [{}]\n---\nbody\n", yaml.join(","));
    r.line(&call_line(
        2,
        "write",
        json!({"bundle": "b", "path": "big.md", "content": big}),
    ));
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    for (id, line) in [
        (3, json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})),
        (
            4,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "hello"}}}),
        ),
        (
            5,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get", "arguments": {"ids": ["a"]}}}),
        ),
        (
            6,
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "manifest", "arguments": {}}}),
        ),
    ] {
        r.line(line.to_string().as_bytes());
        let v = r.answer_within(WITHIN, "a read during a commit");
        assert_eq!(v["id"], id, "the read was answered before the commit: {v}");
        assert!(
            v.get("error").is_none() && v["result"]["isError"] != true,
            "{v}"
        );
    }
    println!(
        "reads answered in {} ms while the commit ran",
        started.elapsed().as_millis()
    );
    let v = r.answer_within(Duration::from_secs(120), "the large commit");
    assert_eq!(v["id"], 2, "{v}");
    assert!(!tool_text(&v).1, "{v}");
    assert_eq!(r.close(), 0);
    verify_clean(&data, "t");
}

#[test]
fn a_clean_close_exits_zero_on_every_protocol_version() {
    let dir = TempDir::new("hostile-close");
    let data = dir.path().join("data");
    let dsn = format!("okf://{}?tenant=t", data.display());
    // Closing before any message, after initialize on each handshake version, and on
    // protocol 2026-07-28 (no initialize: per-request metadata) after a discover alone and
    // after requests.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let r = Raw::start(&dsn, &[]);
    assert_eq!(r.close(), 0, "closed before any message");
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut r = Raw::start(&dsn, &[]);
        let v = r.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"}}),
        );
        assert_eq!(v["result"]["protocolVersion"], version, "{v}");
        r.ping(version);
        assert_eq!(r.close(), 0, "closed on {version}");
    }
    let mut r = Raw::start(&dsn, &[]);
    let v = r.request("server/discover", json!({"_meta": meta}));
    assert!(v.get("result").is_some(), "{v}");
    assert_eq!(r.close(), 0, "closed after a discover on 2026-07-28");
    let mut r = Raw::start(&dsn, &[]);
    let v = r.request("tools/list", json!({"_meta": meta}));
    assert_eq!(
        v["result"]["tools"].as_array().map(Vec::len),
        Some(6),
        "{v}"
    );
    let v = r.request(
        "tools/call",
        json!({"name": "write", "arguments": [1], "_meta": meta}),
    );
    assert_eq!(
        tool_text(&v),
        ("arguments must be an object".into(), true),
        "{v}"
    );
    assert_eq!(r.close(), 0, "closed after requests on 2026-07-28");
    assert!(!data.exists());
}

#[test]
fn python_sdk_hostile_input() {
    let dir = TempDir::new("hostile-sdk");
    let data = dir.path().join("data");
    // The same lists as the raw client's, minus the one the SDK cannot send as a call
    // (a 16 MiB argument: the SDK buffers it fine, but one is enough for the raw client).
    let calls: Vec<Value> = bad_calls("none")
        .into_iter()
        .filter(|b| !b.name.starts_with("content over 16 MiB"))
        .map(|b| json!({"name": b.name, "tool": b.tool, "args": b.args, "text": b.text}))
        .collect();
    let yaml: Vec<Value> = yaml_cases()
        .into_iter()
        .map(|(name, content, diagnostic)| {
            json!({"name": name, "content": content, "diagnostic": diagnostic})
        })
        .collect();
    let annotations: serde_json::Map<String, Value> =
        langonrock_core::tools::tool_set(false, false)
            .iter()
            .map(|t| {
                (
                    t.name.to_string(),
                    t.list_entry(None)["annotations"].clone(),
                )
            })
            .collect();
    let cases = dir.path().join("cases.json");
    std::fs::write(
        &cases,
        json!({"calls": calls, "yaml": yaml, "annotations": annotations}).to_string(),
    )
    .expect("write cases.json");
    common::run_client(
        "hostile.py",
        &data,
        &cases,
        &[
            "(mode legacy), slowest",
            "(mode auto), slowest",
            "(mode 2026-07-28), slowest",
            "ok: a clean close without calls exits 0 on every mode",
            "ok: nothing created, verify clean",
            "ok: YAML bombs answered at once, verify clean",
        ],
    );
}
