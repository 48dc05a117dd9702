//! The tool session of `tests/data/sessions/tools.json`, shared by the suites that run it:
//! tests/it/tool_session.rs (the golden) and node-mcp/tests/remote.rs (through `serve`),
//! which includes this file by path.

use langonrock::Connection;
use langonrock_core::engine::HistoryRequest;
use serde_json::Value;

/// Replaces `$HEAD`, `$PARENT` and `$HASH:<bundle>/<path>` in every string of `v`.
pub(crate) fn substitute(v: &mut Value, conn: &Connection) {
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
