//! MCP over Streamable HTTP at `/mcp`: the official MCP Python SDK runs the stdio
//! scenarios (`tests/mcp_client/http_e2e.py` over `e2e.py`) over TCP with tokens and over
//! the unix socket; curl checks the endpoint's auth answers and its session bounds.

use crate::common::mcp_expected;
use crate::util::{temp, token, Server};
use serde_json::json;
use std::process::Command;
use std::time::Duration;

const MODES: [(&str, bool, bool); 4] = [
    ("default", false, false),
    ("read_only", false, true),
    ("database_tools", true, false),
    ("read_grant", false, true),
];

fn run_sdk(
    dir: &std::path::Path,
    base: &str,
    tokens: &serde_json::Value,
    socket: Option<&std::path::Path>,
) {
    let grants = socket.is_none();
    let (tok, exp) = (dir.join("tokens-map.json"), dir.join("expected.json"));
    std::fs::write(&tok, tokens.to_string()).unwrap();
    std::fs::write(&exp, mcp_expected(&MODES).to_string()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client/http_e2e.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg(base).arg(&tok).arg(&exp);
    if let Some(s) = socket {
        cmd.arg(s);
    }
    let out = cmd
        .output()
        .expect("python3 runs (scripts/setup.sh installs the MCP SDK)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "ok: tools/list, resources and identity in mode default",
        "ok: tools/list, resources and identity in mode read_only",
        "ok: tools/list, resources and identity in mode database_tools",
        "ok: tools/list, resources and identity in mode read_grant",
        "ok: write -> refusal -> retry with the hash -> success, diagnostics, renames, bad input",
        "ok: delete's hash round trip; get with find, source, a capped read, not found",
        "ok: transact, history and restore",
        "ok: a read grant gets the read tools only",
    ] {
        if grants || !line.contains("read grant") && !line.contains("read_grant") {
            assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
        }
    }
    assert!(
        !stdout.contains("FAILED")
            && !String::from_utf8_lossy(&out.stderr).contains("termination failed")
    );
}

#[test]
fn python_sdk_over_tcp_with_tokens() {
    let dir = temp("mcp-tcp");
    let data = dir.join("data");
    let mut tokens = serde_json::Map::new();
    for t in [
        "e2e",
        "empty-default",
        "empty-read-only",
        "empty-database-tools",
        "empty-read-grant",
    ] {
        tokens.insert(
            t.into(),
            json!({"write": token(&data, t, true), "read": token(&data, t, false)}),
        );
    }
    let srv = Server::start(&data, &["--port", "0"], &[]);
    run_sdk(
        &dir,
        &format!("http://{}", srv.host_port()),
        &tokens.into(),
        None,
    );
    let log = srv.stop();
    assert!(
        log.lines().any(|l| l.starts_with("POST /mcp 200 ")),
        "{log}"
    );
    assert!(
        log.lines().any(|l| l.starts_with("POST /mcp 401 ")),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn python_sdk_over_the_socket() {
    let dir = temp("mcp-sock");
    let data = dir.join("data");
    let srv = Server::start(&data, &[], &[]);
    let sock = data.join("langonrock.sock");
    run_sdk(&dir, "http://langonrock", &json!({}), Some(&sock));
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

fn initialize() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "0"}}})
}

#[test]
fn the_endpoint_applies_the_auth_rules_and_bounds_sessions() {
    let dir = temp("mcp-bounds");
    let data = dir.join("data");
    let w = token(&data, "acme", true);
    let env = [
        ("LANGONROCK_SERVE_MAX_SESSIONS", "2"),
        ("LANGONROCK_SERVE_SESSION_IDLE_MS", "1500"),
    ];
    let srv = Server::start(&data, &["--port", "0"], &env);
    let post = |tok: Option<&str>, query: &str| {
        let mut r = srv
            .req("POST", &format!("/mcp{query}"))
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize());
        if let Some(t) = tok {
            r = r.token(t);
        }
        r.send()
    };
    post(None, "").error(401, "UNAUTHORIZED", "invalid or missing bearer token");
    post(Some("nope"), "").error(401, "UNAUTHORIZED", "invalid or missing bearer token");
    post(Some(&w), "?tenant=other").error(
        403,
        "FORBIDDEN",
        "token does not grant access to that tenant",
    );
    post(Some(&w), "?tools=all").error(
        400,
        "INVALID",
        "unknown tools \"all\": expected read-only or database",
    );
    // Two sessions at most; the third initialize is refused.
    let a = post(Some(&w), "?tenant=acme");
    assert_eq!(a.status, 200, "{a:?}");
    let sid = a
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let b = post(Some(&w), "");
    assert_eq!(b.status, 200, "{b:?}");
    post(Some(&w), "").error(503, "UNAVAILABLE", "too many MCP sessions");
    // Ending one makes room.
    let d = srv
        .req("DELETE", "/mcp")
        .token(&w)
        .header("Mcp-Session-Id", &sid)
        .send();
    assert_eq!(d.status, 204, "{d:?}");
    let c = post(Some(&w), "");
    assert_eq!(c.status, 200, "{c:?}");
    post(Some(&w), "").error(503, "UNAVAILABLE", "too many MCP sessions");
    // Idle sessions end on their own.
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(post(Some(&w), "").status, 200);
    drop(srv);
    // With no tokens (a socket) the endpoint needs ?tenant=.
    let data2 = dir.join("data2");
    let srv = Server::start(&data2, &[], &[]);
    srv.req("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize())
        .send()
        .error(
            401,
            "UNAUTHORIZED",
            "tenant required in path when no tokens exist",
        );
    let r = srv
        .req("POST", "/mcp?tenant=acme")
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize())
        .send();
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.body.contains("\"serverInfo\":{\"name\":\"langonrock\""),
        "{}",
        r.body
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The text of the JSON-RPC message in an answer: an event stream's `data:` line with a
/// message, or a JSON body.
fn message(body: &str) -> serde_json::Value {
    let text = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|l| l.starts_with('{'))
        .unwrap_or(body);
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// What only `serde_json` refuses gets the stdio server's answers over `/mcp` too
/// (docs/limits.md), not rmcp's bare 415: a lone surrogate or an out-of-range number in a
/// tool's arguments is named by the tool, one elsewhere (or a flawed id) is a JSON-RPC
/// error; nothing is written.
#[test]
fn flawed_messages_are_answered_as_over_stdio() {
    let dir = temp("mcp-flaws");
    let data = dir.join("data");
    let srv = Server::start(&data, &[], &[]);
    let post = |sid: Option<&str>, body: &str| {
        let mut r = srv
            .req("POST", "/mcp?tenant=acme")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body.to_string());
        if let Some(s) = sid {
            r = r.header("Mcp-Session-Id", s);
        }
        r.send()
    };
    let init = post(None, &initialize().to_string());
    let sid = init
        .header("mcp-session-id")
        .expect("a session")
        .to_string();
    let sid = Some(sid.as_str());
    assert_eq!(
        post(
            sid,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        )
        .status,
        202
    );
    let call = |id: &str, name: &str, args: &str| {
        let r = post(
            sid,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
            ),
        );
        assert_eq!(r.status, 200, "{r:?}");
        message(&r.body)
    };
    let tool_error = |m: serde_json::Value, text: &str| {
        assert_eq!(m["result"]["isError"], true, "{m}");
        assert_eq!(m["result"]["content"][0]["text"], text, "{m}");
    };
    tool_error(
        call("2", "search", r#"{"query":"a \ud83d"}"#),
        "query must contain well-formed Unicode",
    );
    tool_error(
        call("3", "search", r#"{"query":"a","k":1e400}"#),
        "k must be an integer from 1 to 50",
    );
    tool_error(
        call(
            "4",
            "write",
            r#"{"bundle":"b","path":"a.md","content":"x \ud83d"}"#,
        ),
        "source must contain well-formed Unicode",
    );
    tool_error(call("5", "search", "[1]"), "arguments must be an object");
    let m = call("1e400", "search", "{}");
    assert_eq!(
        (m["id"].clone(), m["error"]["code"].clone()),
        (json!(null), json!(-32600)),
        "{m}"
    );
    let m = call("7", r"\ud83d", "{}");
    assert_eq!(
        (m["id"].clone(), m["error"]["message"].clone()),
        (
            json!(7),
            json!("Invalid params: params.name must contain well-formed Unicode")
        ),
        "{m}"
    );
    // A well-formed call still works.
    let m = call("8", "search", r#"{"query":"anything"}"#);
    assert_eq!(m["result"]["isError"], false, "{m}");
    assert!(
        !data.join("tenants").join("acme").exists(),
        "nothing written"
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}
