//! Remote connections against a real `langonrock serve` (docs/remote.md): the same table of
//! calls runs through an embedded connection and through the server, over its unix socket
//! and over TCP with tokens, and the answers must be the same bytes. Revision ids and commit
//! times differ between the two data roots (their clocks differ), so both transcripts name
//! them by order of first appearance before they are compared; everything else is compared
//! as is.

#[path = "../../tests/it/calls.rs"]
mod calls;
mod common;
#[path = "../../tests/it/session.rs"]
mod session;

use common::{bin, TempDir};
use langonrock::{Connection, Options};
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
        Server::start_on(data, args, TODAY)
    }

    /// [`Server::start`] with the server's read date `today`.
    fn start_on(data: &Path, args: &[&str], today: &str) -> Server {
        let mut child = Command::new(serve_bin())
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(args)
            .env("LANGONROCK_TODAY", today)
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

/// Names every 64-hex revision id and cursor by its first appearance and writes every
/// commit time as `<time>`, so two transcripts that differ only in commit times compare
/// equal (one side's clock may be fixed, the other's not). Snapshot ids and source hashes
/// do not depend on the clock, and they are kept (a snapshot or hash that differs still
/// fails).
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
        if is_time {
            out.push_str("<time>");
        } else if (is_hex || is_cursor) && !keep.contains(word) {
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

/// The system clock with another pinned read date.
struct PinnedOn(String);

impl langonrock::clock::Clock for PinnedOn {
    fn today(&self) -> String {
        self.0.clone()
    }
    fn commit_time(&self) -> String {
        langonrock::clock::now_iso()
    }
    fn millis(&self) -> u64 {
        langonrock::clock::millis(std::time::SystemTime::now())
    }
}

/// The calls table of tests/data/sessions/calls.json (the golden calls.txt pins its answers
/// on memory and files) through `open` over the server's unix socket and over TCP with a
/// token: the same answers, revision ids and commit times named by first appearance (the
/// server's clock is its own), the calls only a local connection runs refused as such.
#[test]
fn the_calls_table_answers_alike_over_a_socket_and_http() {
    let script = calls::script();
    let tenant = script["tenant"].as_str().unwrap();
    let golden = calls::without_embedded(&calls::golden());
    assert!(
        golden.contains("== 4 transact "),
        "the golden calls.txt is missing"
    );
    for tcp in [false, true] {
        let dir = TempDir::new("remote-calls");
        let root = dir.path().join("served");
        std::fs::create_dir_all(&root).unwrap();
        let dsn = if tcp {
            let token = token(&root, tenant, true);
            let server = Server::start_on(
                &root,
                &["--host", "127.0.0.1", "--port", "0"],
                script["today"].as_str().unwrap(),
            );
            (
                format!("okf+http://{}?tenant={tenant}&token={token}", server.on),
                server,
            )
        } else {
            let server = Server::start_on(&root, &[], script["today"].as_str().unwrap());
            (format!("okf+unix://{}?tenant={tenant}", server.on), server)
        };
        let conn = langonrock::open(&dsn.0).unwrap();
        assert!(conn.is_remote());
        let remote = calls::transcript(&conn, &script);
        compare(&golden, &remote);
        // The server readies its own tenants; the remote connection has nothing to warm.
        assert!(!conn.warm().unwrap());
    }
}

/// Runs this build's binary with `args` and `stdin`; `(code, stdout, stderr)`.
fn cli(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(args)
        .env("LANGONROCK_TODAY", TODAY)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn langonrock");
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn query_prints_what_the_local_verbs_print() {
    let dir = TempDir::new("remote-query");
    let (a, b) = twin_roots(&dir);
    let server = Server::start(&b, &[]);
    let dsn = format!("okf+unix://{}?tenant=t", server.on);
    let a = a.to_str().unwrap();
    let h = "bfeecd2"; // not a hash: refused the same way on both sides
    let verbs: &[(&[&str], &str)] = &[
        (&["manifest"], ""),
        (&["manifest", "--bundle", "GA4"], ""),
        (&["snapshot"], ""),
        (&["source"], ""),
        (&["search", "orders", "revenue", "--k", "2"], ""),
        (&["search", "x", "--bundle", "nope"], ""),
        (&["get", "orders", "--limit", "60"], ""),
        (&["get", "orders", "--find", "order", "--source"], ""),
        (&["read", "acme_retail", "tables/orders.md"], ""),
        (&["read", "acme_retail", "nope.md"], ""),
        (
            &["write", "inbox", "idea.md", "--create"],
            "---\ntype: note\n---\nAn idea.\n",
        ),
        (&["write", "inbox", "idea.md", "--create"], "again"),
        (
            &["write", "INBOX", "idea.md", "--force"],
            "---\ntype: note\n---\nv2\n",
        ),
        (&["write", "inbox", "idea.md", "--replaces", h], "x"),
        (&["delete", "inbox", "idea.md", "--force"], ""),
        (&["delete", "inbox", "idea.md", "--force"], ""),
        (
            &["transact"],
            r#"{"changes":[{"operation":"write","bundle":"inbox","path":"a.md","content":"A"}]}"#,
        ),
        (
            &["transact"],
            r#"{"changes":[{"operation":"write","bundle":"inbox","path":"a.md","content":"A"}]}"#,
        ),
        (&["transact"], "not json"),
        (&["delete-bundle", "inbox"], ""),
        (&["delete-bundle", "inbox"], ""),
        (&["history", "--limit", "2"], ""),
        (
            &[
                "restore",
                &"a".repeat(64),
                "--expected-revision",
                &"b".repeat(64),
            ],
            "",
        ),
    ];
    let (mut local, mut remote) = (String::new(), String::new());
    for (args, stdin) in verbs {
        let mut l: Vec<&str> = args.to_vec();
        l.extend(["--data", a, "--tenant", "t"]);
        let mut r = vec!["query", &dsn];
        r.extend(args.iter().copied());
        for (out, run) in [
            (&mut local, cli(&l, stdin, &[])),
            (&mut remote, cli(&r, stdin, &[])),
        ] {
            out.push_str(&format!(
                "$ {}\nexit {}\n{}--- stderr\n{}",
                args.join(" "),
                run.0,
                run.1,
                run.2
            ));
        }
    }
    compare(&local, &remote);
    assert!(remote.contains("$ get orders --limit 60\nexit 0\n@@ orders [0..60 of "));
    assert!(remote.contains("wrote inbox/idea.md "));
    assert!(remote.contains(
        "error: inbox/idea.md: concept already exists: re-read the concept and retry with its new hash"
    ));
    // Missing ids exit 1; the query names none of them (docs/remote.md).
    let (code, out, err) = cli(&["query", &dsn, "get", "orders", "nope"], "", &[]);
    assert_eq!(code, 1);
    assert!(out.starts_with("@@ orders\n"));
    assert!(!err.contains("nope"), "{err}");
    // gc has no route; a DSN that names no server cannot be reached.
    let (code, _, err) = cli(&["query", &dsn, "gc"], "", &[]);
    assert_eq!((code, err.as_str()), (1, "error: unknown verb \"gc\": expected one of manifest, snapshot, search, get, source, read, write, delete, delete-bundle, transact, history, restore\n"));
    let (code, _, err) = cli(
        &[
            "query",
            "okf+unix:///nonexistent/x.sock?tenant=t",
            "snapshot",
        ],
        "",
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: cannot reach the langonrock server at /nonexistent/x.sock: "),
        "{err}"
    );
}

/// Mints a token with `langonrock token` on the data root.
fn token(data: &Path, tenant: &str, write: bool) -> String {
    let mut args = vec![
        "token",
        "--data",
        data.to_str().unwrap(),
        "--tenant",
        tenant,
    ];
    if write {
        args.push("--write");
    }
    let out = Command::new(serve_bin()).args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn tokens_over_tcp_refuse_and_write_nothing() {
    let dir = TempDir::new("remote-tcp");
    let (_, b) = twin_roots(&dir);
    let write = token(&b, "t", true);
    let read = token(&b, "t", false);
    let other = token(&b, "other", true);
    let server = Server::start(&b, &["--host", "127.0.0.1", "--port", "0"]);
    let at = |q: &str| format!("okf+http://{}?{q}", server.on);
    let conn = langonrock::open(&at(&format!("tenant=t&token={write}"))).unwrap();
    let before = conn.snapshot().unwrap();
    let refusals = [
        (
            at("tenant=t"),
            "UNAUTHORIZED",
            "invalid or missing bearer token",
        ),
        (
            at(&format!("tenant=t&token={}", "0".repeat(64))),
            "UNAUTHORIZED",
            "invalid or missing bearer token",
        ),
        (
            at(&format!("tenant=t&token={read}")),
            "FORBIDDEN",
            "this token may read but not write",
        ),
        (
            at(&format!("tenant=t&token={other}")),
            "FORBIDDEN",
            "token does not grant access to that tenant",
        ),
    ];
    for (dsn, code, message) in refusals {
        let c = langonrock::open(&dsn).unwrap();
        let e = c.write("inbox", "x.md", "x", None).unwrap_err();
        assert_eq!((e.code(), e.message().as_str()), (code, message), "{dsn}");
    }
    assert_eq!(
        conn.snapshot().unwrap(),
        before,
        "no refusal wrote anything"
    );
    // A read grant reads; without `tenant` the token's grant names it.
    let reader = langonrock::open(&at(&format!("token={read}"))).unwrap();
    assert!(reader.manifest(None).unwrap().starts_with("# tenant: t\n"));
    let w = conn
        .write("inbox", "x.md", "---\ntype: note\n---\nX\n", None)
        .unwrap();
    assert_eq!(
        reader.read_source("inbox", "x.md").unwrap().unwrap().hash,
        w.hash
    );
}

/// A certificate authority made for the test and a server certificate for 127.0.0.1 that it
/// signed: `(ca.pem, cert.pem, key.pem)`, by the `openssl` command.
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let p = |n: &str| dir.join(n);
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-days",
                "2",
                "-subj",
                "/CN=langonrock test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-subj",
                "/CN=127.0.0.1",
                "-keyout",
                "key.pem",
                "-out",
                "leaf.csr",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        p("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
        "-out",
        "cert.pem",
    ]);
    (p("ca.pem"), p("cert.pem"), p("key.pem"))
}

#[test]
fn tls_with_a_self_signed_certificate() {
    let dir = TempDir::new("remote-tls");
    let (_, b) = twin_roots(&dir);
    let (ca, cert, key) = certificates(dir.path());
    let t = token(&b, "t", false);
    let server = Server::start(
        &b,
        &[
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let dsn = format!("okf+https://{}?tenant=t&token={t}", server.on);
    let trusted = [("SSL_CERT_FILE", ca.to_str().unwrap())];
    let (code, out, err) = cli(&["query", &dsn, "snapshot"], "", &trusted);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.len(), 65);
    assert!(err.ends_with(" concepts\n"));
    // Not trusted: the handshake fails, named, and nothing is sent in the clear.
    let (code, _, err) = cli(
        &["query", &dsn, "snapshot"],
        "",
        &[("SSL_CERT_FILE", key.to_str().unwrap())],
    );
    assert_eq!(code, 1);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(&format!("https://{}", server.on)), "{err}");
    assert!(!err.contains(&t), "the token must not show: {err}");
    // Plain HTTP to a TLS port is not an answer.
    let (code, _, err) = cli(
        &[
            "query",
            &format!("okf+http://{}?tenant=t&token={t}", server.on),
            "snapshot",
        ],
        "",
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!(
            "error: the langonrock server at http://{} ",
            server.on
        )),
        "{err}"
    );
}

#[test]
fn mcp_over_a_remote_connection_answers_as_over_a_local_one() {
    use common::Rpc;
    let dir = TempDir::new("remote-mcp");
    let (a, b) = twin_roots(&dir);
    let server = Server::start(&b, &[]);
    let local = format!("okf://{}?tenant=t", a.display());
    let remote = format!("okf+unix://{}?tenant=t", server.on);
    let session = |dsn: &str| {
        let mut rpc = Rpc::start(dsn, &["--database-tools"]);
        let mut t = String::new();
        let tools = rpc.request("tools/list", json!({}));
        t.push_str(&tools["result"].to_string());
        t.push('\n');
        let res = rpc.request("resources/read", json!({"uri": "okf://manifest"}));
        t.push_str(&res["result"].to_string());
        t.push('\n');
        let calls = [
            ("manifest", json!({"bundle": "ga4"})),
            ("search", json!({"query": "orders revenue", "k": 3})),
            (
                "get",
                json!({"ids": ["orders", "nope"], "section": "nosuch"}),
            ),
            (
                "get",
                json!({"ids": ["orders"], "source": true, "limit": 80}),
            ),
            ("snapshot", json!({})),
            (
                "write",
                json!({"bundle": "inbox", "path": "idea.md", "content": "---\ntype: note\n---\nAn idea.\n"}),
            ),
            (
                "write",
                json!({"bundle": "inbox", "path": "idea.md", "content": "again"}),
            ),
            (
                "write",
                json!({"bundle": "inbox", "path": "nope.md", "content": "x", "replaces": "a".repeat(64)}),
            ),
            ("delete", json!({"bundle": "inbox", "path": "idea.md"})),
            ("delete", json!({"bundle": "inbox", "path": "gone.md"})),
            (
                "transact",
                json!({"changes": [
                    {"operation": "write", "bundle": "inbox", "path": "idea.md", "content": "B"},
                    {"operation": "write", "bundle": "inbox", "path": "../bad.md", "content": "C"}
                ]}),
            ),
            (
                "transact",
                json!({"changes": [
                    {"operation": "write", "bundle": "inbox", "path": "idea.md", "content": "B"}
                ]}),
            ),
            ("history", json!({"limit": 2})),
        ];
        for (name, args) in calls {
            let (text, is_error) = rpc.call(name, args);
            t.push_str(&format!("{name} {is_error}\n{text}\n"));
        }
        // The refusal's retry line carries the hash; retrying with it succeeds.
        let (text, _) = rpc.call(
            "write",
            json!({"bundle": "inbox", "path": "idea.md", "content": "C"}),
        );
        let hash = text
            .rsplit("replaces: \"")
            .next()
            .unwrap()
            .trim_end_matches('"')
            .to_string();
        let (text, is_error) = rpc.call(
            "write",
            json!({"bundle": "inbox", "path": "idea.md", "content": "C", "replaces": hash}),
        );
        t.push_str(&format!("retry {is_error}\n{text}\n"));
        rpc.finish();
        t
    };
    let (l, r) = (session(&local), session(&remote));
    compare(&l, &r);
    assert!(r.contains("retry with replaces: \""), "{r}");
    assert!(r.contains("retry false\nwrote inbox/idea.md (hash "), "{r}");
    assert!(
        r.contains("@@ orders no section \\\"nosuch\\\"")
            || r.contains("@@ orders no section \"nosuch\""),
        "{r}"
    );
    assert!(r.contains("changes[1]: inbox/../bad.md"), "{r}");
}

#[test]
fn the_tool_session_replies_alike_through_a_remote_connection() {
    // tests/data/sessions/tools.json: every tool, successes and refusals (the golden
    // tool-session.txt pins its embedded replies; here the same calls run on a files
    // connection and on a served one, and the replies must be the same texts).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/sessions/tools.json");
    let script: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let tenant = script["tenant"].as_str().unwrap();
    let today = script["today"].as_str().unwrap();
    let dir = TempDir::new("remote-session");
    let (a, b) = (dir.path().join("local"), dir.path().join("served"));
    std::fs::create_dir_all(&b).unwrap();
    let server = Server::start_on(&b, &[], today);
    let local = Options::default()
        .clock(PinnedOn(today.to_string()))
        .open_files(&a, tenant)
        .unwrap();
    let remote = langonrock::open(&format!("okf+unix://{}?tenant={tenant}", server.on)).unwrap();
    let run = |conn: &Connection| {
        let mut out = String::new();
        for (i, call) in script["calls"].as_array().unwrap().iter().enumerate() {
            let name = call[0].as_str().unwrap();
            let mut args = call[1].clone();
            session::substitute(&mut args, conn);
            let args = (!args.is_null()).then_some(args);
            let reply = conn.call_tool(name, args.as_ref());
            let state = if reply.is_error { "error" } else { "ok" };
            out.push_str(&format!("== {i} {name} {state}\n{}\n", reply.text));
        }
        out
    };
    let (l, r) = (run(&local), run(&remote));
    compare(&l, &r);
    assert!(r.contains("retry with replaces: \""), "{r}");
    assert!(r.matches("== ").count() >= 20, "{r}");
}
