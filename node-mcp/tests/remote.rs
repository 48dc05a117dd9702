//! Remote connections against a real `langonrock serve` (docs/remote.md): the same table of
//! calls runs through an embedded connection and through the server, over its unix socket
//! and over TCP with tokens, and the answers must be the same bytes. Revision ids and commit
//! times differ between the two data roots (their clocks differ), so both transcripts name
//! them by order of first appearance before they are compared; everything else is compared
//! as is.

mod common;

use common::{bin, TempDir};
use langonrock::{Connection, Options};
use langonrock_core::engine::{parse_transaction, HistoryRequest, RestoreRequest};
use langonrock_core::read::GetOptions;
use langonrock_core::search::SearchOptions;
use langonrock_core::Error;
use serde_json::json;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const TODAY: &str = "2026-06-01";

/// The binary that serves: this build's, or `LANGONROCK_SERVE_BIN`.
fn serve_bin() -> String {
    std::env::var("LANGONROCK_SERVE_BIN").unwrap_or_else(|_| bin().to_string())
}

/// A running `langonrock serve`, stopped on drop.
struct Server {
    child: Child,
    /// What the banner says it listens on: the socket path or `host:port`.
    on: String,
}

impl Server {
    fn start(data: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(serve_bin())
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(args)
            .env("LANGONROCK_TODAY", TODAY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn langonrock serve");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut banner = String::new();
        err.read_line(&mut banner).expect("read the banner");
        // Keep draining the request log so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while err.read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        });
        let on = banner
            .split(" on ")
            .nth(1)
            .and_then(|rest| rest.split(" (").next())
            .unwrap_or_else(|| panic!("no banner: {banner:?}"))
            .to_string();
        Server { child, on }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A data root holding the okf-samples bundles in tenant `t`, and a byte copy of it.
fn twin_roots(dir: &TempDir) -> (PathBuf, PathBuf) {
    let a = dir.path().join("local");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/okf-samples");
    let out = Command::new(bin())
        .args(["import"])
        .arg(&samples)
        .arg("--data")
        .arg(&a)
        .args(["--tenant", "t"])
        .output()
        .expect("import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b = dir.path().join("served");
    copy_dir(&a, &b);
    (a, b)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// One call's answer as text: `ok <json>` or `err <code> <message> <extras>`.
fn answer<T: serde::Serialize>(r: Result<T, Error>) -> String {
    match r {
        Ok(v) => format!("ok {}", serde_json::to_string(&v).unwrap()),
        Err(e) => format!("err {}", langonrock_core::http_api::error_body(&e)),
    }
}

/// Names every 64-hex revision id, cursor and commit time by its first appearance, so two
/// transcripts that differ only in commit times compare equal. Snapshot ids and source
/// hashes do not depend on the clock, and they are kept (a snapshot or hash that differs
/// still fails).
fn normalise(transcript: &str, keep: &[String]) -> String {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, names: &mut HashMap<String, String>| {
        let is_time = word.len() == 24 && word.ends_with('Z') && word.as_bytes()[10] == b'T';
        let is_hex = word.len() == 64 && word.bytes().all(|b| b.is_ascii_hexdigit());
        let is_cursor = word.len() > 80
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if (is_time || is_hex || is_cursor) && !keep.contains(word) {
            let n = names.len();
            let name = names
                .entry(word.clone())
                .or_insert_with(|| format!("<{n}>"));
            out.push_str(name);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in transcript.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.') {
            word.push(c);
        } else {
            flush(&mut word, &mut out, &mut names);
            out.push(c);
        }
    }
    flush(&mut word, &mut out, &mut names);
    out
}

/// The table: every call of the library surface that a route serves, reads and changes,
/// successes and refusals, in an order where later calls see earlier changes.
fn transcript(c: &Connection) -> String {
    let mut t = String::new();
    let mut line = |name: &str, text: String| {
        t.push_str(name);
        t.push_str(": ");
        t.push_str(&text);
        t.push('\n');
    };
    let get = |ids: &[&str], o: GetOptions| answer(c.get(ids, &o));
    let search = |q: &str, k: usize, bundle: Option<&str>, expand: bool| {
        answer(c.search(
            q,
            &SearchOptions {
                k,
                bundle: bundle.map(str::to_string),
                expand,
            },
        ))
    };
    line("manifest", answer(c.manifest(None)));
    line("manifest ga4", answer(c.manifest(Some("ga4"))));
    line("manifest GA4", answer(c.manifest(Some("GA4"))));
    line("manifest again", answer(c.manifest(None)));
    line("manifest nope", answer(c.manifest(Some("nope"))));
    line("snapshot", answer(c.snapshot()));
    line("source", answer(c.list_source()));
    line(
        "get",
        get(
            &["orders", "nope", "customers", "orders"],
            GetOptions::default(),
        ),
    );
    line(
        "get find",
        get(
            &["orders"],
            GetOptions {
                find: Some("order".into()),
                limit: Some(40),
                ..GetOptions::default()
            },
        ),
    );
    line(
        "get source slice",
        get(
            &["orders"],
            GetOptions {
                source: true,
                offset: Some(3),
                limit: Some(20),
                ..GetOptions::default()
            },
        ),
    );
    line(
        "get missing section",
        get(
            &["orders"],
            GetOptions {
                section: Some("nosuch".into()),
                ..GetOptions::default()
            },
        ),
    );
    line("search", search("orders revenue", 3, None, true));
    line("search bundle", search("sessions", 5, Some("GA4"), false));
    line("search unknown bundle", search("x", 5, Some("nope"), true));
    line(
        "read",
        answer(c.read_source("acme_retail", "tables/orders.md")),
    );
    line(
        "read missing",
        answer(c.read_source("acme_retail", "nope.md")),
    );
    line(
        "read bad path",
        answer(c.read_source("acme_retail", "../x.md")),
    );
    line(
        "history",
        answer(c.history(HistoryRequest {
            before: None,
            limit: Some(2),
        })),
    );
    line(
        "history bad cursor",
        answer(c.history(HistoryRequest {
            before: Some("garbage".into()),
            limit: None,
        })),
    );
    let base = c.history(HistoryRequest::default()).unwrap().revisions[0]
        .revision
        .clone();
    // Changes.
    let idea = "---\ntype: note\n---\nAn idea about [orders](../acme_retail/tables/orders.md).\n";
    line("write", answer(c.write("inbox", "idea.md", idea, None)));
    line(
        "write exists",
        answer(c.write("inbox", "idea.md", "x", None)),
    );
    line(
        "write changed",
        answer(c.write("inbox", "idea.md", "x", Some(&"a".repeat(64)))),
    );
    line(
        "write missing",
        answer(c.write("inbox", "nope.md", "x", Some(&"a".repeat(64)))),
    );
    line(
        "write nav",
        answer(c.write("inbox", "index.md", "# Inbox\n", None)),
    );
    line(
        "write bad path",
        answer(c.write("inbox", "a/../b.md", "x", None)),
    );
    let h = c.current_hash("Inbox", "idea.md").unwrap_or_default();
    line(
        "write case-insensitive bundle",
        answer(c.write("INBOX", "idea.md", "---\ntype: note\n---\nv2\n", Some(&h))),
    );
    line(
        "delete changed",
        answer(c.delete("inbox", "idea.md", Some(&"b".repeat(64)))),
    );
    line(
        "delete missing",
        answer(c.delete("inbox", "gone.md", Some(&"b".repeat(64)))),
    );
    let h = c.current_hash("inbox", "idea.md").unwrap_or_default();
    line("delete", answer(c.delete("inbox", "idea.md", Some(&h))));
    let txn = |v: serde_json::Value| parse_transaction(&v).unwrap();
    line(
        "transact",
        answer(c.transact(txn(json!({"changes": [
            {"operation": "write", "bundle": "inbox", "path": "a.md", "content": "---\ntype: note\n---\nA\n"},
            {"operation": "write", "bundle": "inbox", "path": "b.md", "content": "B"}
        ]})))),
    );
    line(
        "transact preconditions",
        answer(c.transact(txn(json!({"changes": [
            {"operation": "write", "bundle": "inbox", "path": "c.md", "content": "C"},
            {"operation": "write", "bundle": "inbox", "path": "a.md", "content": "A2"},
            {"operation": "delete", "bundle": "inbox", "path": "zz.md", "replaces": "c".repeat(64)}
        ]})))),
    );
    line(
        "transact expected revision",
        answer(c.transact(txn(json!({"changes": [
            {"operation": "write", "bundle": "inbox", "path": "c.md", "content": "C"}
        ], "expectedRevision": "d".repeat(64)})))),
    );
    line("delete bundle missing", answer(c.delete_bundle("nope")));
    line("delete bundle", answer(c.delete_bundle("INBOX")));
    line(
        "restore conflict",
        answer(c.restore(RestoreRequest {
            revision: base.clone(),
            expected_revision: "e".repeat(64),
        })),
    );
    let head = c.history(HistoryRequest::default()).unwrap().revisions[0]
        .revision
        .clone();
    line(
        "restore",
        answer(c.restore(RestoreRequest {
            revision: base,
            expected_revision: head,
        })),
    );
    line(
        "history after",
        answer(c.history(HistoryRequest::default())),
    );
    line("manifest after", answer(c.manifest(None)));
    line("source after", answer(c.list_source()));
    t
}

/// Snapshot ids and source hashes of a transcript: kept as they are by [`normalise`].
fn content_ids(t: &str) -> Vec<String> {
    let mut keep = Vec::new();
    for key in ["\"snapshot\":\"", "\"hash\":\""] {
        for part in t.split(key).skip(1) {
            keep.push(part.chars().take(64).collect());
        }
    }
    keep
}

fn compare(local: &str, remote: &str) {
    let mut keep = content_ids(local);
    keep.extend(content_ids(remote));
    let (a, b) = (normalise(local, &keep), normalise(remote, &keep));
    let differ: Vec<String> = a
        .lines()
        .zip(b.lines())
        .filter(|(la, lb)| la != lb)
        .map(|(la, lb)| format!("embedded: {la}\nremote:   {lb}"))
        .collect();
    assert!(
        differ.is_empty(),
        "embedded and remote answers differ:\n{}",
        differ.join("\n")
    );
    assert_eq!(a.lines().count(), b.lines().count());
}

fn embedded(root: &Path) -> Connection {
    Options::default()
        .clock(Pinned)
        .open_files(root, "t")
        .unwrap()
}

/// The system clock with the read date pinned, as the server's `LANGONROCK_TODAY`.
struct Pinned;

impl langonrock::clock::Clock for Pinned {
    fn today(&self) -> String {
        TODAY.into()
    }
    fn commit_time(&self) -> String {
        langonrock::clock::now_iso()
    }
    fn millis(&self) -> u64 {
        langonrock::clock::millis(std::time::SystemTime::now())
    }
}

#[test]
fn the_same_calls_give_the_same_answers_over_a_socket() {
    let dir = TempDir::new("remote-socket");
    let (a, b) = twin_roots(&dir);
    let server = Server::start(&b, &[]);
    let local = transcript(&embedded(&a));
    let remote = langonrock::open(&format!("okf+unix://{}?tenant=t", server.on)).unwrap();
    assert!(remote.is_remote());
    let remote = transcript(&remote);
    compare(&local, &remote);
    // The table covers what it says: successes and each kind of refusal.
    for needle in [
        "write exists: err {\"code\":\"CONFLICT\"",
        "\"reason\":\"exists\"",
        "\"reason\":\"changed\"",
        "\"reason\":\"missing\"",
        "\"changes\":[",
        "\"code\":\"NOT_FOUND\"",
        "\"code\":\"INVALID\"",
        "restore: ok {",
        "get missing section: ok {}",
    ] {
        assert!(remote.contains(needle), "{needle} not in:\n{remote}");
    }
}
