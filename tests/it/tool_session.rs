//! The tool session of `tests/data/sessions/tools.json`: every call through the native MCP
//! server's call path (`McpServer::call` over a `langonrock::Connection`), compared with the
//! golden `tool-session.txt`. The JS suite runs the same session through `callTool` and
//! compares with the same golden, so the two hosts answer byte for byte alike.

use crate::util::{check_golden, data_dir};
use langonrock::clock::Clock;
use langonrock::Connection;
use langonrock_core::engine::{HistoryRequest, MemoryStore};
use langonrock_node_mcp::mcp::{McpServer, Mode, TenantBackend};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// A clock that never moves.
struct Fixed {
    today: String,
    commit: String,
}

impl Clock for Fixed {
    fn today(&self) -> String {
        self.today.clone()
    }
    fn commit_time(&self) -> String {
        self.commit.clone()
    }
    fn millis(&self) -> u64 {
        0
    }
}

/// Replaces `$HEAD`, `$PARENT` and `$HASH:<bundle>/<path>` in every string of `v`.
fn substitute(v: &mut Value, conn: &Connection) {
    match v {
        Value::String(s) if s.starts_with('$') => {
            let page = conn
                .history(HistoryRequest {
                    before: None,
                    limit: Some(1),
                })
                .unwrap();
            let head = page.revisions.first();
            *s = match s.as_str() {
                "$HEAD" => head.map(|r| r.revision.clone()).unwrap_or_default(),
                "$PARENT" => head.and_then(|r| r.parent.clone()).unwrap_or_default(),
                other => {
                    let target = other.strip_prefix("$HASH:").expect("a known token");
                    let (b, p) = target.split_once('/').unwrap();
                    conn.read_source(b, p)
                        .unwrap()
                        .map(|c| c.hash)
                        .unwrap_or_default()
                }
            };
        }
        Value::Array(a) => a.iter_mut().for_each(|x| substitute(x, conn)),
        Value::Object(o) => o.values_mut().for_each(|x| substitute(x, conn)),
        _ => {}
    }
}

/// Runs the session; returns the transcript the golden holds.
pub fn transcript(script: &Value) -> String {
    let s = |k: &str| script[k].as_str().unwrap().to_string();
    let clock = Fixed {
        today: s("today"),
        commit: s("commitTime"),
    };
    let conn = Arc::new(
        langonrock::Options::default()
            .clock(clock)
            .open_store(Arc::new(Mutex::new(MemoryStore::new())), &s("tenant"))
            .unwrap(),
    );
    let backend = Arc::new(TenantBackend::new_shared(conn.clone()));
    let server = McpServer::new(
        backend,
        Mode {
            database_tools: true,
            read_only: false,
        },
        None,
    );
    let mut out = String::new();
    for (i, call) in script["calls"].as_array().unwrap().iter().enumerate() {
        let name = call[0].as_str().unwrap();
        let mut args = call[1].clone();
        substitute(&mut args, &conn);
        let args = (!args.is_null()).then_some(args);
        let (text, is_error) = server.call(name, args.as_ref());
        out.push_str(&format!(
            "== {i} {name} {}\n{text}\n",
            if is_error { "error" } else { "ok" }
        ));
    }
    out
}

#[test]
fn tool_session_golden() {
    let path = data_dir().join("sessions").join("tools.json");
    let script: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    check_golden("tool-session.txt", &transcript(&script));
}
