//! The calls table of `tests/data/sessions/calls.json`: library operations with JS-shaped
//! arguments, run in order through one `langonrock::Connection`, each answer written as the
//! transcript `tests/data/golden/calls.txt` holds. Every DSN kind must give that transcript:
//! memory and files here, a `langonrock serve` over a socket and over HTTP in
//! node-mcp/tests/remote.rs (which includes this file by path), PostgreSQL where a server
//! runs.

use langonrock::clock::Clock;
use langonrock::{
    parse_transaction, Connection, GcRequest, GetOptions, HistoryRequest, RestoreRequest,
    SearchOptions,
};
use langonrock_core::http_api::error_body;
use serde_json::Value;

/// The table's file.
pub(crate) fn script() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/sessions/calls.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The golden transcript.
#[allow(dead_code)] // used by node-mcp/tests/remote.rs, which includes this file
pub(crate) fn golden() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/golden/calls.txt"
    );
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The table's clock: every read on `today`, every commit at `commitTime`.
#[allow(dead_code)] // node-mcp/tests/remote.rs includes this file and uses the server's clock
pub(crate) struct Fixed {
    today: String,
    commit: String,
}

#[allow(dead_code)] // as for `Fixed`
impl Fixed {
    /// The clock `script` names.
    pub(crate) fn of(script: &Value) -> Fixed {
        Fixed {
            today: script["today"].as_str().unwrap().into(),
            commit: script["commitTime"].as_str().unwrap().into(),
        }
    }
}

impl Clock for Fixed {
    fn today(&self) -> String {
        self.today.clone()
    }
    fn commit_time(&self) -> String {
        self.commit.clone()
    }
    fn millis(&self) -> u64 {
        langonrock::clock::millis(std::time::SystemTime::now())
    }
}

/// One answer as the transcript writes it: a text result as it is (a TSV ends with its
/// `\n`), any other result as compact JSON and `\n`, an error as `error ` and the HTTP
/// API's error body (code, message, reason, changes, index) and `\n`.
fn answer<T: serde::Serialize>(r: Result<T, langonrock::Error>) -> String {
    match r {
        // The result's own serialization, so keys keep the spec's order.
        Ok(v) => {
            let json = serde_json::to_string(&v).unwrap();
            serde_json::from_str::<String>(&json).unwrap_or(json + "\n")
        }
        Err(e) => format!("error {}\n", error_body(&e)),
    }
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn number(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// Runs one call of the table on `c`.
fn run(c: &Connection, name: &str, a: &Value) -> String {
    let s = |key: &str| text(a, key).unwrap_or_default();
    match name {
        "manifest" => answer(c.manifest(text(a, "bundle").as_deref())),
        "snapshot" => answer(c.snapshot()),
        "listSource" => answer(c.list_source()),
        "get" => {
            let ids: Vec<String> = a["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_str().unwrap().to_string())
                .collect();
            let opts = GetOptions {
                section: text(a, "section"),
                offset: number(a, "offset"),
                limit: number(a, "limit"),
                find: text(a, "find"),
                source: a.get("source").and_then(Value::as_bool).unwrap_or(false),
            };
            // The slices in result order, as the JS package's Map iterates them (the JSON
            // of an HTTP `get` answer).
            let r = c.get(&ids, &opts).map(|found| {
                let pairs: Vec<String> = found
                    .iter()
                    .map(|(id, slice)| {
                        format!(
                            "{}:{}",
                            Value::String(id.clone()),
                            serde_json::to_string(slice).unwrap()
                        )
                    })
                    .collect();
                format!("{{{}}}\n", pairs.join(","))
            });
            answer(r)
        }
        "search" => {
            let d = SearchOptions::default();
            let opts = SearchOptions {
                k: number(a, "k").map_or(d.k, |k| k as usize),
                bundle: text(a, "bundle"),
                expand: a.get("expand").and_then(Value::as_bool).unwrap_or(d.expand),
            };
            answer(c.search(&s("query"), &opts))
        }
        "readSource" => answer(c.read_source(&s("bundle"), &s("path"))),
        "write" => answer(c.write(
            &s("bundle"),
            &s("path"),
            &s("content"),
            text(a, "replaces").as_deref(),
        )),
        "delete" => answer(c.delete(&s("bundle"), &s("path"), text(a, "replaces").as_deref())),
        "deleteBundle" => answer(c.delete_bundle(&s("bundle"))),
        "transact" => answer(parse_transaction(a).and_then(|t| c.transact(t))),
        "history" => answer(c.history(HistoryRequest {
            before: text(a, "before"),
            limit: a.get("limit").and_then(Value::as_i64),
        })),
        "restore" => answer(c.restore(RestoreRequest {
            revision: s("revision"),
            expected_revision: s("expectedRevision"),
        })),
        "gc" => {
            let d = GcRequest::default();
            answer(
                c.gc(GcRequest {
                    keep: a.get("keep").and_then(Value::as_i64).unwrap_or(d.keep),
                    dry_run: a
                        .get("dryRun")
                        .and_then(Value::as_bool)
                        .unwrap_or(d.dry_run),
                    grace_ms: number(a, "graceMs").unwrap_or(d.grace_ms),
                }),
            )
        }
        "verify" => answer(c.verify()),
        other => panic!("calls.json: unknown operation {other}"),
    }
}

/// The transcript of the whole table on `c`: per call a header `== <i> <name> <args>`
/// (arguments as in the table, placeholders unreplaced) and its answer. On a remote
/// connection the calls marked `embedded` must be refused as not available remotely, and
/// they are left out of the transcript ([`without_embedded`] drops them from a local one).
pub(crate) fn transcript(c: &Connection, script: &Value) -> String {
    let mut out = String::new();
    for (i, call) in script["calls"].as_array().unwrap().iter().enumerate() {
        let name = call[0].as_str().unwrap();
        let embedded = call.get(2).and_then(Value::as_str) == Some("embedded");
        let mut args = call[1].clone();
        crate::session::substitute(&mut args, c);
        let text = run(c, name, &args);
        if embedded && c.is_remote() {
            let refusal = langonrock::not_remote(name);
            assert_eq!(
                text,
                format!("error {}\n", error_body(&refusal)),
                "call {i}"
            );
            continue;
        }
        let mark = if embedded { " [embedded]" } else { "" };
        out.push_str(&format!("== {i} {name} {}{mark}\n{text}", call[1]));
    }
    out
}

#[allow(dead_code)] // used by node-mcp/tests/remote.rs, which includes this file
/// A local transcript without the blocks of calls marked `embedded`: what a remote
/// connection's transcript must equal.
pub(crate) fn without_embedded(transcript: &str) -> String {
    let mut out = String::new();
    let mut keep = true;
    for line in transcript.split_inclusive('\n') {
        if line.starts_with("== ") {
            keep = !line.trim_end().ends_with(" [embedded]");
        }
        if keep {
            out.push_str(line);
        }
    }
    out
}
