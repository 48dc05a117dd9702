//! The `langonrock` library through its public surface, as a Rust program uses it: one
//! connection shared by threads and by async tasks, the tool surface against the MCP
//! server's, and the refusals of bad DSNs and closed connections.

use crate::util::TempDir;
use langonrock::{AsyncConnection, Connection, Options, ToolMode};
use langonrock_core::engine::{
    HistoryRequest, Key, KeyInfo, MemoryStore, Store, StoreError, SwapOutcome,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The calls table through `open` on the files store and on a memory store: byte for byte
/// the golden transcript (node-mcp/tests/remote.rs runs it over a socket and HTTP).
#[test]
fn the_calls_table_answers_alike_on_files_and_memory() {
    let script = crate::calls::script();
    let tenant = script["tenant"].as_str().unwrap();
    let clock = || crate::calls::Fixed::of(&script);
    let dir = TempDir::new("calls");
    let dsn = format!("okf://{}?tenant={tenant}", dir.path().display());
    let files = Options::default().clock(clock()).open(&dsn).unwrap();
    assert_eq!(files.data(), Some(dir.path()));
    let files = crate::calls::transcript(&files, &script);
    crate::util::check_golden("calls.txt", &files);
    let memory = Options::default()
        .clock(clock())
        .open_store(Arc::new(Mutex::new(MemoryStore::new())), tenant)
        .unwrap();
    let memory = crate::calls::transcript(&memory, &script);
    assert_eq!(memory, files, "memory and files answer differently");
    // The table covers what it says: successes and each kind of refusal.
    for needle in [
        "\"reason\":\"exists\"",
        "\"reason\":\"changed\"",
        "\"reason\":\"missing\"",
        "\"changes\":[",
        "\"index\":1",
        "\"code\":\"NOT_FOUND\"",
        "\"code\":\"INVALID\"",
        "\"ok\":true",
        "\"dryRun\":true",
    ] {
        assert!(files.contains(needle), "{needle} not in the transcript");
    }
}

/// The calls table through `open("postgres://…")` on a real PostgreSQL server (the one
/// scripts/postgres.sh starts, else a private one): the same golden transcript, byte for
/// byte, as files and memory.
#[test]
fn the_calls_table_answers_alike_on_postgres() {
    let script = crate::calls::script();
    let tenant = script["tenant"].as_str().unwrap();
    let server = crate::pg::server();
    let schema = crate::pg::fresh_schema("calls");
    let dsn = server.dsn_with(&format!("schema={schema}&tenant={tenant}"));
    assert!(dsn.starts_with("postgres://"), "{dsn}");
    let conn = Options::default()
        .clock(crate::calls::Fixed::of(&script))
        .open(&dsn)
        .unwrap();
    assert!(!conn.is_remote() && conn.data().is_none());
    let pg = crate::calls::transcript(&conn, &script);
    crate::util::check_golden("calls.txt", &pg);
    // A second connection to the same database sees the table's commits.
    let other = langonrock::open(&dsn).unwrap();
    assert_eq!(other.snapshot().unwrap(), conn.snapshot().unwrap());
}

/// `warm()` readies a connection opened from a derived record once; a closed one refuses.
#[test]
fn warm_readies_a_connection_opened_from_a_derived_record() {
    let dir = TempDir::new("warm");
    let dsn = format!("okf://{}?tenant=acme", dir.path().display());
    let first = langonrock::open(&dsn).unwrap();
    first.write("notes", "a.md", &note(1), None).unwrap();
    first.write("notes", "b.md", &note(2), None).unwrap();
    first.close(); // puts the derived record
    let conn = langonrock::open(&dsn).unwrap();
    assert!(conn.served_from_derived());
    assert!(conn.warm().unwrap(), "the first warm has work");
    assert!(!conn.warm().unwrap(), "the second has none");
    conn.write("notes", "c.md", &note(3), None).unwrap();
    assert_eq!(rows(&conn.manifest(None).unwrap()), 3);
    conn.close();
    let e = conn.warm().unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        ("INVALID", "connection is closed".into())
    );
}

/// A warm only installs what it prepared outside the engine: it takes no `writer.lock`, so
/// it never waits for another process's commit, and reads beside it refresh as usual and see
/// that commit (docs/connection.md rule 7). Here the lock is held as another process's commit
/// holds it; a warm that took the lock would wait until it is let go.
#[test]
fn warm_does_not_wait_for_another_writers_lock() {
    let dir = TempDir::new("warm-lock");
    let dsn = format!("okf://{}?tenant=acme", dir.path().display());
    let first = langonrock::open(&dsn).unwrap();
    first.write("notes", "a.md", &note(1), None).unwrap();
    first.close(); // puts the derived record
    let conn = Arc::new(langonrock::open(&dsn).unwrap());
    assert!(conn.served_from_derived());
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.path().join("tenants/acme/writer.lock"))
        .unwrap();
    lock.lock().unwrap();
    let (done, warmed) = mpsc::channel();
    let warming = {
        let conn = conn.clone();
        std::thread::spawn(move || done.send(conn.warm()).unwrap())
    };
    let r = warmed.recv_timeout(Duration::from_secs(60));
    lock.unlock().unwrap();
    warming.join().unwrap();
    let r = r.expect("the warm finished while another writer held writer.lock");
    assert!(r.unwrap(), "the warm had work and installed it");
    conn.write("notes", "b.md", &note(2), None).unwrap();
    assert_eq!(rows(&conn.manifest(None).unwrap()), 2);
}

fn note(i: usize) -> String {
    format!("---\ntype: note\n---\n# Note {i}\n\nNote number {i} about orders.\n")
}

/// The number of manifest rows (concepts) of a manifest TSV.
fn rows(manifest: &str) -> usize {
    manifest.lines().filter(|l| !l.starts_with('#')).count() - 1
}

/// One files connection, shared by threads: writers' commits are serialized (every one
/// lands, none conflicts, the history is one chain), and readers running all the while
/// never fail and never see the tenant shrink or a commit half done.
#[test]
fn threads_share_one_connection() {
    let dir = TempDir::new("threads");
    let conn = Arc::new(Options::default().open_files(dir.path(), "acme").unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (conn, done) = (conn.clone(), done.clone());
            std::thread::spawn(move || {
                let (mut seen, mut reads) = (0, 0);
                while !done.load(Ordering::Acquire) || reads == 0 {
                    let n = rows(&conn.manifest(None).unwrap());
                    assert!(n >= seen, "a read saw {n} concepts after {seen}");
                    let hits = conn.search("orders", &Default::default()).unwrap();
                    assert!(hits.contains("# hits: "));
                    seen = n;
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let conn = conn.clone();
            std::thread::spawn(move || {
                (0..5)
                    .map(|i| {
                        let n = w * 5 + i;
                        conn.write("notes", &format!("n{n}.md"), &note(n), None)
                            .unwrap()
                            .revision
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let revisions: Vec<String> = writers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(rows(&conn.manifest(None).unwrap()), 20);
    let page = conn
        .history(HistoryRequest {
            before: None,
            limit: Some(100),
        })
        .unwrap();
    assert_eq!(page.revisions.len(), 20);
    // Serialized: each revision's parent is the one before it.
    for pair in page.revisions.windows(2) {
        assert_eq!(pair[0].parent.as_deref(), Some(pair[1].revision.as_str()));
    }
    let mut all = revisions.clone();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 20);
}

/// The async variant: clones of one `AsyncConnection` in many tasks of a runtime; every
/// commit lands, and the blocking connection inside sees them.
#[test]
fn async_tasks_share_one_connection() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let dir = TempDir::new("async");
    let dsn = format!("okf://{}?tenant=acme", dir.path().display());
    rt.block_on(async {
        let conn = AsyncConnection::open(&dsn).await.unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let conn = conn.clone();
                tokio::spawn(async move {
                    conn.write("notes", &format!("n{i}.md"), &note(i), None)
                        .await
                        .unwrap();
                    conn.search("orders", &Default::default()).await.unwrap()
                })
            })
            .collect();
        for t in tasks {
            assert!(t.await.unwrap().contains("# hits: "));
        }
        assert_eq!(rows(&conn.manifest(None).await.unwrap()), 8);
        let reply = conn
            .call_tool("get", Some(serde_json::json!({"ids": ["n3"]})))
            .await;
        assert!(!reply.is_error, "{}", reply.text);
        assert!(reply.text.contains("Note number 3"));
        assert_eq!(
            conn.connection().read().unwrap().concepts(),
            8,
            "the blocking connection inside is the same one"
        );
    });
}

/// `tools(mode)` lists exactly what `langonrock mcp` lists in that mode, the manifest
/// tool's description ending with the advice sentence for the tenant.
#[test]
fn tools_are_the_mcp_servers_list() {
    let conn = Connection::memory("acme").unwrap();
    conn.write("notes", "a.md", &note(1), None).unwrap();
    let advice = conn.advice().unwrap();
    assert!(advice.contains('1'), "{advice}");
    for database_tools in [false, true] {
        for read_only in [false, true] {
            let mode = ToolMode {
                database_tools,
                read_only,
            };
            let ours: Vec<serde_json::Value> = conn
                .tools(mode)
                .unwrap()
                .iter()
                .map(|t| t.to_json())
                .collect();
            let server: Vec<serde_json::Value> =
                langonrock_node_mcp::mcp::rmcp_tools(mode, Some(&advice))
                    .iter()
                    .map(|t| serde_json::to_value(t).unwrap())
                    .collect();
            assert_eq!(ours, server, "{mode:?}");
            let manifest = ours[0]["description"].as_str().unwrap();
            assert!(manifest.ends_with(&format!("\n\n{advice}")));
        }
    }
}

/// Every DSN refusal of docs/cli.md ("DSN") through the front door: `INVALID`, the DSN as
/// given, and the form expected.
#[test]
fn bad_dsns_are_refused_with_the_expected_form() {
    const FORM: &str = "expected okf:///absolute/path?tenant=<name>";
    let cases: Vec<(&str, String)> = vec![
        // A host in an okf: DSN (cli.md §5.1).
        (
            "okf://data/x?tenant=a",
            format!("invalid dsn \"okf://data/x?tenant=a\": {FORM}"),
        ),
        // Not a DSN at all.
        ("kb", format!("invalid dsn \"kb\": {FORM}")),
        (
            "okf:relative?tenant=a",
            format!("invalid dsn \"okf:relative?tenant=a\": {FORM}"),
        ),
        // A path that does not percent-decode.
        (
            "okf:///srv/%zz?tenant=a",
            format!("invalid dsn \"okf:///srv/%zz?tenant=a\": {FORM}"),
        ),
        // No tenant, or an empty one (cli.md §5.3).
        (
            "okf:///srv/kb",
            format!("dsn \"okf:///srv/kb\" names no tenant: {FORM}"),
        ),
        (
            "okf:///srv/kb?tenant=",
            format!("dsn \"okf:///srv/kb?tenant=\" names no tenant: {FORM}"),
        ),
        // A tenant that is not a tenant id.
        (
            "okf:///srv/kb?tenant=a%20b",
            "invalid tenant id \"a b\": expected 1-64 chars of [a-z0-9_-]".to_string(),
        ),
    ];
    // The remote forms (docs/remote.md) name their own form.
    const UNIX: &str = "expected okf+unix:///<socket path>?tenant=<name>";
    const HTTP: &str = "expected okf+http://<host>[:<port>]?tenant=<name>&token=<token>";
    const HTTPS: &str = "expected okf+https://<host>[:<port>]?tenant=<name>&token=<token>";
    let remote: Vec<(&str, String)> = vec![
        (
            "okf+unix://host/x.sock",
            format!("invalid dsn \"okf+unix://host/x.sock\": {UNIX}"),
        ),
        (
            "okf+unix://",
            format!("invalid dsn \"okf+unix://\": {UNIX}"),
        ),
        (
            "okf+http://",
            format!("invalid dsn \"okf+http://\": {HTTP}"),
        ),
        (
            "okf+http://user@host?tenant=a",
            format!("invalid dsn \"okf+http://user@host?tenant=a\": {HTTP}"),
        ),
        (
            "okf+http://host:0?tenant=a",
            format!("invalid dsn \"okf+http://host:0?tenant=a\": {HTTP}"),
        ),
        (
            "okf+https://host:99999",
            format!("invalid dsn \"okf+https://host:99999\": {HTTPS}"),
        ),
        (
            "okf+https://host?tenant=No%20Way",
            "invalid tenant id \"No Way\": expected 1-64 chars of [a-z0-9_-]".to_string(),
        ),
    ];
    // The PostgreSQL form (docs/postgres.md): the password never shown.
    const PG: &str = "expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>";
    let postgres: Vec<(&str, String)> = vec![
        (
            "postgres://kb:s3cret@db/kb",
            format!("dsn \"postgres://kb:***@db/kb\" names no tenant: {PG}"),
        ),
        (
            "postgres:db/kb?tenant=a",
            format!("invalid dsn \"postgres:db/kb?tenant=a\": {PG}"),
        ),
        (
            "postgres://db/kb?tenant=a&schema=pg_x",
            "invalid schema \"pg_x\": expected 1-63 chars of [a-z0-9_], not starting with a digit or pg_"
                .to_string(),
        ),
    ];
    for (dsn, message) in cases.into_iter().chain(remote).chain(postgres) {
        let e = langonrock::open(dsn).expect_err(dsn);
        assert_eq!((e.code(), e.message()), ("INVALID", message), "{dsn}");
    }
    // An unknown scheme, as given (cli.md §5.4).
    let e = langonrock::open("mysql://db/kb?tenant=a").unwrap_err();
    assert_eq!(e.code(), "INVALID");
    assert_eq!(
        e.message(),
        "unsupported dsn scheme \"mysql:\", expected one of okf:, okf+unix:, okf+http:, okf+https:, postgres:"
    );
}

/// A memory store whose head swaps wait at a gate the test opens; `arrived` says one is
/// waiting.
struct Gated {
    inner: MemoryStore,
    open: Arc<(Mutex<bool>, Condvar)>,
    arrived: mpsc::Sender<()>,
}

impl Store for Gated {
    fn read_head(&mut self, t: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.read_head(t)
    }
    fn get_many(&mut self, t: &str, k: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.get_many(t, k)
    }
    fn put(&mut self, t: &str, k: &Key, b: &[u8]) -> Result<(), StoreError> {
        self.inner.put(t, k, b)
    }
    fn swap_head(&mut self, t: &str, e: Option<&[u8]>, n: &[u8]) -> SwapOutcome {
        let _ = self.arrived.send(());
        let (open, cv) = &*self.open;
        let mut g = open.lock().unwrap();
        while !*g {
            g = cv.wait(g).unwrap();
        }
        self.inner.swap_head(t, e, n)
    }
    fn keys(&mut self, t: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.inner.keys(t)
    }
    fn remove(&mut self, t: &str, k: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        self.inner.remove(t, k, before)
    }
}

/// `close()` while a commit is in flight: new calls are refused at once with `connection is
/// closed` (tool calls as an error reply), `close` returns only after the commit landed, and
/// what the commit wrote is in the store for the next connection.
#[test]
fn close_waits_for_the_commit_in_flight_and_refuses_later_calls() {
    let open = Arc::new((Mutex::new(false), Condvar::new()));
    let (arrived, waiting) = mpsc::channel();
    let store = Arc::new(Mutex::new(Gated {
        inner: MemoryStore::new(),
        open: open.clone(),
        arrived,
    }));
    let conn = Arc::new(
        Options::default()
            .open_store(store.clone(), "acme")
            .unwrap(),
    );
    let writer = {
        let conn = conn.clone();
        std::thread::spawn(move || conn.write("notes", "a.md", &note(1), None))
    };
    waiting.recv_timeout(Duration::from_secs(10)).unwrap();
    let closed = Arc::new(AtomicBool::new(false));
    let closer = {
        let (conn, closed) = (conn.clone(), closed.clone());
        std::thread::spawn(move || {
            conn.close();
            closed.store(true, Ordering::Release);
        })
    };
    // The close has begun (later calls are refused) but waits for the commit.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !conn.is_closed() {
        assert!(Instant::now() < deadline, "close() never started");
        std::thread::yield_now();
    }
    let e = conn.manifest(None).unwrap_err();
    assert_eq!(
        (e.code(), e.message().as_str()),
        ("INVALID", langonrock::CLOSED)
    );
    let e = conn.write("notes", "b.md", &note(2), None).unwrap_err();
    assert_eq!(e.message(), "connection is closed");
    let reply = conn.call_tool("search", Some(&serde_json::json!({"query": "note"})));
    assert_eq!(
        (reply.text.as_str(), reply.is_error),
        ("connection is closed", true)
    );
    assert!(conn.current_hash("notes", "a.md").is_none());
    assert_eq!(
        conn.tools(ToolMode::default()).unwrap_err().message(),
        "connection is closed"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !closed.load(Ordering::Acquire),
        "close() returned while a commit was in flight"
    );
    *open.0.lock().unwrap() = true;
    open.1.notify_all();
    let w = writer.join().unwrap().unwrap();
    closer.join().unwrap();
    assert!(closed.load(Ordering::Acquire));
    conn.close(); // twice is fine
    let next = Options::default().open_store(store, "acme").unwrap();
    assert_eq!(next.current_hash("notes", "a.md"), Some(w.hash));
}

/// A loopback "server" that answers every connection with `reply` after reading the
/// request's head, then closes: it plays a broken or hostile `langonrock serve`.
struct FakeServer {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl FakeServer {
    fn start(reply: &'static [u8]) -> FakeServer {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let halt = stop.clone();
        std::thread::spawn(move || {
            for s in l.incoming() {
                if halt.load(Ordering::Acquire) {
                    return;
                }
                let Ok(mut s) = s else { continue };
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && s.read(&mut b).is_ok_and(|n| n == 1) {
                    head.push(b[0]);
                }
                let _ = s.write_all(reply);
            }
        });
        FakeServer { port, stop }
    }

    fn dsn(&self) -> String {
        format!("okf+http://127.0.0.1:{}?tenant=t&token=s3cret", self.port)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Every operation of a remote connection against a server that answers garbage: one
/// `STORE` error naming the server (never a panic, never the token), and an error reply for
/// tool calls.
#[test]
fn a_broken_server_gives_store_errors() {
    // (what, the reply, a part of every message, whether messages name the server)
    let cases: [(&str, &'static [u8], &str, bool); 5] = [
        ("not HTTP", b"SSH-2.0-OpenSSH_9.2\r\n\r\n", "not HTTP", true),
        (
            "closes mid-body",
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"snap",
            "broke off mid-answer",
            true,
        ),
        (
            "a server error page",
            b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 12\r\n\r\n<h1>oops</h1",
            "langonrock server returned 500: <h1>oops</h1",
            false,
        ),
        (
            "HTML instead of data",
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/html\r\nContent-Length: 17\r\n\r\n<html>oops</html>",
            "langonrock server returned 200: ",
            false,
        ),
        (
            "JSON of the wrong shape",
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"nope\":1}",
            "langonrock server returned 200: ",
            false,
        ),
    ];
    for (what, reply, needle, names_server) in cases {
        let server = FakeServer::start(reply);
        let c = langonrock::open(&server.dsn()).unwrap();
        let txn = langonrock::parse_transaction(&serde_json::json!({"changes": [
            {"operation": "write", "bundle": "b", "path": "x.md", "content": "x"}]}))
        .unwrap();
        let errors: Vec<(&str, langonrock::Error)> = vec![
            ("manifest", c.manifest(None).unwrap_err()),
            ("get", c.get(&["x"], &Default::default()).unwrap_err()),
            ("search", c.search("x", &Default::default()).unwrap_err()),
            ("snapshot", c.snapshot().unwrap_err()),
            ("list_source", c.list_source().unwrap_err()),
            ("read_source", c.read_source("b", "x.md").unwrap_err()),
            ("write", c.write("b", "x.md", "x", None).unwrap_err()),
            (
                "delete",
                c.delete("b", "x.md", Some(&"a".repeat(64))).unwrap_err(),
            ),
            ("delete_bundle", c.delete_bundle("b").unwrap_err()),
            ("transact", c.transact(txn).unwrap_err()),
            ("history", c.history(HistoryRequest::default()).unwrap_err()),
            (
                "restore",
                c.restore(langonrock::RestoreRequest {
                    revision: "a".repeat(64),
                    expected_revision: "b".repeat(64),
                })
                .unwrap_err(),
            ),
        ];
        for (op, e) in errors {
            let m = e.message();
            assert_eq!(e.code(), "STORE", "{what}: {op}: {m}");
            if names_server {
                assert!(
                    m.contains(&format!("127.0.0.1:{}", server.port)),
                    "{what}: {op}: {m}"
                );
            }
            assert!(m.contains(needle), "{what}: {op}: {m}");
            assert!(!m.contains("s3cret"), "{what}: {op}: the token shows: {m}");
        }
        for (tool, args) in [
            ("manifest", serde_json::json!({})),
            ("get", serde_json::json!({"ids": ["x"]})),
            ("search", serde_json::json!({"query": "x"})),
            (
                "write",
                serde_json::json!({"bundle": "b", "path": "x.md", "content": "x"}),
            ),
        ] {
            let r = c.call_tool(tool, Some(&args));
            assert!(r.is_error, "{what}: {tool}: {}", r.text);
            assert!(r.text.contains(needle), "{what}: {tool}: {}", r.text);
        }
    }
}
