//! The tool session of `tests/data/sessions/tools.json`: every call through the native MCP
//! server's call path (`McpServer::call` over a `langonrock::Connection`), compared with the
//! golden `tool-session.txt`. The JS suite runs the same session through `callTool` and
//! compares with the same golden, so the two hosts answer byte for byte alike.

use crate::util::{check_golden, data_dir};
use langonrock::clock::Clock;
use langonrock_core::engine::MemoryStore;
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
        crate::session::substitute(&mut args, &conn);
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
