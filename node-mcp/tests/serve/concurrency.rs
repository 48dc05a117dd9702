//! How one server shares its data root: reads answered while a commit runs, commits to one
//! tenant serialized while other tenants go on, commits by other writers (the CLI, a stdio
//! MCP process) seen on the next request, and a `--read-only` server that writes nothing.

use crate::util::{doc, run, sha, temp, tree, Server};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn put(srv: &Server, tenant: &str, path: &str, text: &str) -> crate::util::Reply {
    srv.req("PUT", &format!("/v1/{tenant}/source/notes/{path}"))
        .header("If-None-Match", "*")
        .header("Content-Type", "text/markdown")
        .body(text.to_string())
        .send()
}

fn snapshot(srv: &Server, tenant: &str) -> serde_json::Value {
    srv.req("GET", &format!("/v1/{tenant}/snapshot"))
        .send()
        .json()
}

#[test]
fn other_writers_are_seen_on_the_next_request() {
    let dir = temp("writers");
    let data = dir.join("data");
    let srv = Server::start(&data, &[], &[]);
    assert_eq!(
        put(&srv, "acme", "a.md", &doc("note", "From serve.")).status,
        200
    );
    let etag = srv
        .req("GET", "/v1/acme/manifest")
        .send()
        .header("etag")
        .unwrap()
        .to_string();
    // The CLI writes to the same data root.
    let file = dir.join("b.md");
    std::fs::write(&file, doc("note", "From the CLI.")).unwrap();
    let f = file.display().to_string();
    let (code, _, err) = run(
        &data,
        &[
            "write", "notes", "b.md", "--create", "--from", &f, "--tenant", "acme",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(snapshot(&srv, "acme")["concepts"], 2);
    let m = srv
        .req("GET", "/v1/acme/manifest")
        .header("If-None-Match", &etag)
        .send();
    assert_eq!(m.status, 200, "the manifest changed, so its ETag did");
    assert!(m.body.contains("\tFrom the CLI.\t"));
    // So does a stdio MCP server.
    let dsn = format!("okf://{}?tenant=acme", data.display());
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write", "arguments": {"bundle": "notes", "path": "c.md", "content": doc("note", "From MCP.")}}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (code, out, err) = run(&data, &["mcp", &dsn], input.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote notes/c.md (hash "), "{out}");
    assert_eq!(snapshot(&srv, "acme")["concepts"], 3);
    let r = srv.req("GET", "/v1/acme/source/notes/c.md").send();
    assert_eq!(r.body, doc("note", "From MCP."));
    // And the CLI sees what serve wrote.
    assert_eq!(
        put(&srv, "acme", "d.md", &doc("note", "Again from serve.")).status,
        200
    );
    let (_, out, _) = run(&data, &["snapshot", "--tenant", "acme"], b"");
    assert_eq!(out.trim_end(), snapshot(&srv, "acme")["snapshot"]);
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reads_and_other_tenants_do_not_wait_for_a_commit() {
    let dir = temp("busy");
    let data = dir.join("data");
    let srv = Arc::new(Server::start(&data, &[], &[]));
    assert_eq!(
        put(&srv, "big", "seed.md", &doc("note", "Seed.")).status,
        200
    );
    let before = snapshot(&srv, "big")["snapshot"]
        .as_str()
        .unwrap()
        .to_string();
    // A large commit: 300 documents of 4 KiB.
    let changes: Vec<serde_json::Value> = (0..300)
        .map(|i| json!({"operation": "write", "bundle": "bulk", "path": format!("d{i}.md"), "content": doc("note", &format!("Document {i}. {}", "word ".repeat(800)))}))
        .collect();
    let done = Arc::new(Mutex::new(None::<Instant>));
    let commit = {
        let (srv, done) = (srv.clone(), done.clone());
        std::thread::spawn(move || {
            let r = srv
                .req("POST", "/v1/big/transact")
                .json(&json!({"changes": changes}))
                .send();
            *done.lock().unwrap() = Some(Instant::now());
            r
        })
    };
    // Meanwhile: reads of the same tenant, and a write to another one.
    let mut during = Vec::new();
    let mut other = None;
    while done.lock().unwrap().is_none() {
        let s = snapshot(&srv, "big");
        let answered = Instant::now();
        during.push((answered, s["snapshot"].as_str().unwrap().to_string()));
        if other.is_none() {
            let r = put(&srv, "small", "x.md", &doc("note", "Elsewhere."));
            assert_eq!(r.status, 200);
            other = Some(Instant::now());
        }
    }
    let r = commit.join().unwrap();
    assert_eq!(r.status, 200, "{}", &r.body[..r.body.len().min(300)]);
    let end = done.lock().unwrap().unwrap();
    let early: Vec<&(Instant, String)> = during.iter().filter(|(t, _)| *t < end).collect();
    println!("{} reads answered while the commit ran", early.len());
    assert!(
        !early.is_empty(),
        "no read was answered while the commit ran"
    );
    assert!(
        early
            .iter()
            .all(|(_, s)| *s == before || *s == r.json()["snapshot"]),
        "a read saw a state that was never published"
    );
    assert!(
        early.iter().any(|(_, s)| *s == before),
        "every read waited for the commit"
    );
    assert!(
        other.is_some_and(|t| t < end),
        "a write to another tenant waited for the commit"
    );
    // The next read sees the commit.
    assert_eq!(snapshot(&srv, "big")["concepts"], 301);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn commits_to_one_tenant_are_serialized() {
    let dir = temp("serial");
    let data = dir.join("data");
    let srv = Arc::new(Server::start(&data, &[], &[]));
    // Eight creates of one document: exactly one lands.
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let srv = srv.clone();
            std::thread::spawn(move || {
                put(
                    &srv,
                    "acme",
                    "same.md",
                    &doc("note", &format!("Writer {i}.")),
                )
                .status
            })
        })
        .collect();
    let mut statuses: Vec<u16> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 412, 412, 412, 412, 412, 412, 412]);
    // Forty creates of different documents from eight clients: all land.
    let writers: Vec<_> = (0..8)
        .map(|i| {
            let srv = srv.clone();
            std::thread::spawn(move || {
                (0..5)
                    .map(|j| {
                        put(
                            &srv,
                            "acme",
                            &format!("w{i}-{j}.md"),
                            &doc("note", "Parallel."),
                        )
                        .status
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for w in writers {
        assert!(w.join().unwrap().iter().all(|s| *s == 200));
    }
    assert_eq!(snapshot(&srv, "acme")["concepts"], 41);
    let page = srv.req("GET", "/v1/acme/history?limit=100").send().json();
    assert_eq!(page["revisions"].as_array().unwrap().len(), 41);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_read_only_server_writes_nothing() {
    let dir = temp("readonly");
    let data = dir.join("data");
    let folder = dir.join("folder");
    std::fs::create_dir_all(&folder).unwrap();
    for i in 0..5 {
        std::fs::write(
            folder.join(format!("n{i}.md")),
            doc("note", &format!("Note {i} links [[n{}]].", (i + 1) % 5)),
        )
        .unwrap();
    }
    let f = folder.display().to_string();
    let (code, _, err) = run(
        &data,
        &["import", &f, "--bundle", "notes", "--tenant", "acme"],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    // Without its derived record the tenant compiles on open, and a writable server would
    // put the record back.
    let derived = data.join("tenants").join("acme").join("derived");
    std::fs::remove_dir_all(&derived).unwrap();
    let before = tree(&data);
    let srv = Server::start(&data, &["--read-only"], &[]);
    assert!(srv.banner.ends_with("(0 tokens, 0 writable tenants)"));
    assert_eq!(snapshot(&srv, "acme")["concepts"], 5);
    assert_eq!(srv.req("GET", "/v1/acme/manifest").send().status, 200);
    assert_eq!(
        srv.req("POST", "/v1/acme/search")
            .json(&json!({"q": "note"}))
            .send()
            .status,
        200
    );
    assert_eq!(
        srv.req("POST", "/v1/acme/get")
            .json(&json!({"ids": ["n1"], "source": true}))
            .send()
            .status,
        200
    );
    assert_eq!(
        srv.req("GET", "/v1/acme/source/notes/n1.md").send().status,
        200
    );
    assert_eq!(srv.req("GET", "/v1/acme/history").send().status, 200);
    assert_eq!(snapshot(&srv, "ghost")["concepts"], 0);
    let ro = "this server is read-only";
    put(&srv, "acme", "new.md", &doc("note", "No.")).error(403, "FORBIDDEN", ro);
    srv.req("DELETE", "/v1/acme/source/notes/n1.md")
        .header("If-Match", &sha(&doc("note", "x")))
        .send()
        .error(403, "FORBIDDEN", ro);
    srv.req("POST", "/v1/acme/transact")
        .json(&json!({"changes": [{"operation": "delete", "bundle": "notes", "path": "n1.md", "replaces": "0".repeat(64)}]}))
        .send()
        .error(403, "FORBIDDEN", ro);
    srv.req("DELETE", "/v1/acme/bundles/notes")
        .send()
        .error(403, "FORBIDDEN", ro);
    srv.req("POST", "/v1/acme/restore")
        .json(&json!({"revision": "0".repeat(64), "expectedRevision": "0".repeat(64)}))
        .send()
        .error(403, "FORBIDDEN", ro);
    srv.stop();
    assert_eq!(tree(&data), before, "a read-only server wrote to the store");
    // The same reads on a writable server put the derived record back (so the check above
    // could fail).
    let srv = Server::start(&data, &[], &[]);
    assert_eq!(snapshot(&srv, "acme")["concepts"], 5);
    srv.stop();
    assert!(
        derived.is_dir(),
        "the writable server put no derived record"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
