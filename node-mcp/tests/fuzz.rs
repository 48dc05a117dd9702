//! A fuzz target over whole JSON-RPC messages and tool arguments (docs/limits.md): the MCP
//! server of `langonrock mcp` (its stdio framing, rmcp, the tool table, the engine) runs
//! in process over an in-memory tenant, and proptest feeds it sessions of generated lines:
//! tool calls with arbitrary arguments (strings with lone surrogates, controls, bidi
//! characters; numbers out of range; wrong types), every other method, notifications,
//! responses, batches, truncated and garbage lines, ids of every kind.
//!
//! Each session must end (no hang: a deadline per session), nothing may panic, stdout must
//! be one JSON value per line, and every request with a valid id must get exactly one answer
//! with that id, none for notifications and responses.
//!
//! `LANGONROCK_FUZZ_CASES` sets the number of sessions (default 32, for the suite); a long
//! run: `LANGONROCK_FUZZ_CASES=100000 nice cargo test -p langonrock-node-mcp --test fuzz --
//! --nocapture`.

use langonrock_node_mcp::mcp::{self, Mode};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long one session may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(60);

/// What a line must get back.
#[derive(Clone, Debug)]
enum Expect {
    /// Exactly one answer with this id.
    Answer(i64),
    /// No answer with an id of its own (a notification, a response, garbage: at most an
    /// error with a null id).
    NoId,
}

#[derive(Clone, Debug)]
struct Line {
    bytes: Vec<u8>,
    expect: Expect,
}

/// A placeholder character that the line builder turns into a lone surrogate escape.
const LONE: char = '\u{E000}';

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9_./-]{0,12}",
        "[a-z]{1,8}\\.md",
        "[a-z]{1,6}/[a-z]{1,6}\\.md",
        "\\PC{0,16}",
        Just("../x.md".to_string()),
        Just("con.md".to_string()),
        Just("a\u{202e}b.md".to_string()),
        Just("a\u{200b}b.md".to_string()),
        Just("a\u{0}b.md".to_string()),
        Just(format!("{}.md", "é".repeat(130))),
        Just(format!("x{LONE}y")),
        Just("---\ntype: t\n---\nBody [[x]].\n".to_string()),
        Just(format!(
            "---\ntype: t\na: {}{}\n---\n",
            "[".repeat(300),
            "]".repeat(300)
        )),
        Just("0".repeat(64)),
        (1usize..3000).prop_map(|n| "a".repeat(n)),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u64..60).prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const TOOLS: &[&str] = &[
    "manifest", "search", "get", "snapshot", "write", "delete", "transact", "history", "restore",
];
const PARAMS: &[&str] = &[
    "bundle",
    "path",
    "content",
    "replaces",
    "query",
    "k",
    "ids",
    "section",
    "offset",
    "limit",
    "find",
    "source",
    "changes",
    "expectedRevision",
    "before",
    "revision",
];

/// Tool arguments: mostly objects of the table's parameter names with arbitrary values.
fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => proptest::collection::btree_map(
            proptest::sample::select(PARAMS).prop_map(str::to_string),
            value(),
            0..6
        )
        .prop_map(|m: BTreeMap<String, Value>| Value::Object(m.into_iter().collect())),
        2 => proptest::collection::vec(
            (text(), text(), text(), proptest::bool::ANY),
            1..4
        )
        .prop_map(|cs| json!({"changes": cs.into_iter().map(|(b, p, c, w)| if w {
            json!({"operation": "write", "bundle": b, "path": p, "content": c})
        } else {
            json!({"operation": "delete", "bundle": b, "path": p, "replaces": c})
        }).collect::<Vec<_>>()})),
        1 => value(),
    ]
}

/// The JSON text of a message with the placeholder turned into a lone surrogate escape.
fn encode(v: &Value) -> Vec<u8> {
    v.to_string().replace(LONE, "\\ud83d").into_bytes()
}

/// Calls that pass the schema, so the engine's own paths run: commits, reads, refusals.
fn valid_call() -> impl Strategy<Value = (String, Value)> {
    let obj = |pairs: Vec<(&str, Option<Value>)>| {
        Value::Object(
            pairs
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
                .collect(),
        )
    };
    prop_oneof![
        4 => ("[a-c]{1,2}", "[a-d]{1,2}\\.md", text(), proptest::option::of("[0-9a-f]{64}"))
            .prop_map(move |(b, p, c, r)| ("write".to_string(), obj(vec![("bundle", Some(json!(b))),
                ("path", Some(json!(p))), ("content", Some(json!(c))), ("replaces", r.map(Value::String))]))),
        1 => ("[a-c]{1,2}", "[a-d]{1,2}\\.md", proptest::option::of("[0-9a-f]{64}"))
            .prop_map(move |(b, p, r)| ("delete".to_string(), obj(vec![("bundle", Some(json!(b))),
                ("path", Some(json!(p))), ("replaces", r.map(Value::String))]))),
        3 => (proptest::collection::vec("[a-d]{1,2}|[a-c]/[a-d]|\\PC{0,4}", 1..4),
            proptest::option::of("[a-z_]{1,6}"), proptest::option::of(0u64..40),
            proptest::option::of(1u64..40), proptest::option::of("[a-z ]{1,6}"), proptest::option::of(proptest::bool::ANY))
            .prop_map(move |(ids, section, offset, limit, find, source)| ("get".to_string(), obj(vec![
                ("ids", Some(json!(ids))), ("section", section.map(Value::String)),
                ("offset", offset.map(|n| json!(n))), ("limit", limit.map(|n| json!(n))),
                ("find", find.map(Value::String)), ("source", source.map(Value::Bool))]))),
        2 => ("\\PC{1,12}", proptest::option::of(1u64..60))
            .prop_map(move |(q, k)| ("search".to_string(), obj(vec![("query", Some(json!(q))), ("k", k.map(|n| json!(n)))]))),
        1 => Just(("manifest".to_string(), json!({}))),
        1 => Just(("snapshot".to_string(), json!({}))),
        1 => proptest::option::of(1u64..120).prop_map(|l| ("history".to_string(), json!({"limit": l}))),
    ]
}

fn line(id: i64) -> impl Strategy<Value = Line> {
    let request = move |method: &'static str, params: Value| Line {
        bytes: encode(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
        expect: Expect::Answer(id),
    };
    prop_oneof![
        10 => (prop_oneof![proptest::sample::select(TOOLS).prop_map(str::to_string), text()], arguments())
            .prop_map(move |(name, args)| request("tools/call", json!({"name": name, "arguments": args}))),
        8 => valid_call().prop_map(move |(name, args)| request("tools/call", json!({"name": name, "arguments": args}))),
        1 => Just(request("ping", json!({}))),
        1 => Just(request("tools/list", json!({}))),
        1 => Just(request("resources/list", json!({}))),
        1 => text().prop_map(move |uri| request("resources/read", json!({"uri": uri}))),
        1 => Just(request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "again", "version": "0"}}))),
        1 => "[a-z/]{1,20}".prop_map(move |m| Line {
            bytes: encode(&json!({"jsonrpc": "2.0", "id": id, "method": m})),
            expect: Expect::Answer(id),
        }),
        1 => value().prop_map(move |p| Line {
            bytes: encode(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p})),
            expect: Expect::Answer(id),
        }),
        // Notifications and responses: never answered.
        1 => ("[a-z/]{1,20}", value()).prop_map(|(m, p)| Line {
            bytes: encode(&json!({"jsonrpc": "2.0", "method": format!("notifications/{m}"), "params": p})),
            expect: Expect::NoId,
        }),
        1 => value().prop_map(move |r| Line {
            bytes: encode(&json!({"jsonrpc": "2.0", "id": id + 1_000_000, "result": r})),
            expect: Expect::NoId,
        }),
        // Ids that cannot be answered as such, batches, truncation, garbage.
        1 => prop_oneof![Just("1e400"), Just("1.5"), Just("null"), Just("true"), Just("[1]"),
            Just("18446744073709551616"), Just("\"\\ud800\"")]
            .prop_map(|id| Line {
                bytes: format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).into_bytes(),
                expect: Expect::NoId,
            }),
        1 => value().prop_map(|v| Line { bytes: encode(&json!([v])), expect: Expect::NoId }),
        1 => (arguments(), 0usize..200).prop_map(move |(args, cut)| {
            let mut b = encode(&json!({"jsonrpc": "2.0", "id": id + 2_000_000, "method": "tools/call",
                "params": {"name": "write", "arguments": args}}));
            b.truncate(cut.min(b.len().saturating_sub(1)));
            Line { bytes: b, expect: Expect::NoId }
        }),
        1 => proptest::collection::vec(any::<u8>().prop_filter("no line break", |b| *b != b'\n'), 0..64)
            .prop_map(|bytes| Line { bytes, expect: Expect::NoId }),
    ]
}

fn session() -> impl Strategy<Value = Vec<Line>> {
    (1usize..20).prop_flat_map(|n| {
        (0..n as i64)
            .map(|i| line(i + 1).boxed())
            .collect::<Vec<_>>()
    })
}

/// Runs one session in process and returns the lines the server wrote.
fn run(lines: &[Line]) -> Vec<Value> {
    let mut input = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#.to_vec();
    input.push(b'\n');
    for l in lines {
        input.extend_from_slice(&l.bytes);
        input.push(b'\n');
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let out = rt.block_on(async move {
        let conn = langonrock::Connection::memory("fuzz").expect("memory tenant");
        let server = mcp::server_for(
            conn,
            Mode {
                database_tools: true,
                read_only: false,
            },
        );
        let (writer, mut reader) = tokio::io::duplex(1 << 16);
        let serving = tokio::spawn(mcp::serve(server, std::io::Cursor::new(input), writer));
        let mut out = Vec::new();
        tokio::time::timeout(DEADLINE, async {
            tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut out).await
        })
        .await
        .expect("the session ended (no hang)")
        .expect("read the output");
        let outcome = tokio::time::timeout(DEADLINE, serving)
            .await
            .expect("the server ended")
            .expect("the server did not panic");
        assert_eq!(outcome, Ok(()), "a clean end");
        out
    });
    out.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice(l).unwrap_or_else(|e| {
                panic!(
                    "stdout carries one JSON value per line: {e}: {:?}",
                    String::from_utf8_lossy(l)
                )
            })
        })
        .collect()
}

fn cases() -> u32 {
    std::env::var("LANGONROCK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}

/// What the sessions held, printed at the end (so a run shows it exercised the tools).
#[derive(Default)]
struct Stats {
    sessions: u64,
    lines: u64,
    answered: u64,
    tool_ok: u64,
    tool_errors: u64,
    rpc_errors: u64,
}

fn check_session(lines: &[Line], stats: &std::cell::RefCell<Stats>) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let answers = run(lines);
    let mut by_id: BTreeMap<i64, usize> = BTreeMap::new();
    let mut st = stats.borrow_mut();
    st.sessions += 1;
    st.lines += lines.len() as u64;
    for a in &answers {
        prop_assert!(a["jsonrpc"] == "2.0", "{}", a);
        prop_assert!(
            a.get("result").is_some() != a.get("error").is_some(),
            "{}",
            a
        );
        if a.get("error").is_some() {
            st.rpc_errors += 1;
        } else if a["result"].get("content").is_some() {
            if a["result"]["isError"] == true {
                st.tool_errors += 1;
            } else {
                st.tool_ok += 1;
            }
        }
        match &a["id"] {
            Value::Null => {}
            id => {
                let id = id.as_i64();
                prop_assert!(id.is_some(), "an answer's id is one we sent: {}", a);
                *by_id.entry(id.unwrap_or_default()).or_default() += 1;
            }
        }
    }
    prop_assert_eq!(by_id.remove(&0), Some(1), "initialize answered once");
    for l in lines {
        if let Expect::Answer(id) = l.expect {
            prop_assert_eq!(
                by_id.remove(&id),
                Some(1),
                "request {} answered once: {}",
                id,
                String::from_utf8_lossy(&l.bytes)
            );
            st.answered += 1;
        }
    }
    prop_assert!(by_id.is_empty(), "answers to nothing we asked: {:?}", by_id);
    prop_assert!(started.elapsed() < DEADLINE);
    Ok(())
}

#[test]
fn every_request_gets_exactly_one_answer() {
    let started = Instant::now();
    let stats = std::cell::RefCell::new(Stats::default());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: cases(),
        ..ProptestConfig::default()
    });
    if let Err(e) = runner.run(&session(), |lines| check_session(&lines, &stats)) {
        panic!("{e}");
    }
    let s = stats.borrow();
    println!(
        "fuzz: {} sessions, {} lines, {} requests each answered once, {} tool results ({} errors), {} JSON-RPC errors, in {:.1} s",
        s.sessions,
        s.lines,
        s.answered,
        s.tool_ok + s.tool_errors,
        s.tool_errors,
        s.rpc_errors,
        started.elapsed().as_secs_f64()
    );
}
