//! Every REST route over the unix socket with no tokens (the path names the tenant and any
//! caller may write): each success, each error status and JSON body.

use crate::util::{doc, sha, temp, RemovedAtEnd, Server, TODAY};
use serde_json::{json, Value};

const CHANGED: &str = "re-read the concept and retry with its new hash";
const EMPTY_SNAPSHOT: &str = "aa8e3e55062260f0baa1149637313b38e68891b7fbfaef7725e210f79ba1daaa";

fn keys(r: &crate::util::Reply) -> Vec<String> {
    crate::util::keys_in_order(&r.body)
}

#[test]
fn every_route_over_the_socket() {
    let dir = temp("routes");
    let data = dir.join("data");
    let srv = Server::start(&data, &[], &[]);
    let mut requests = 0;
    let mut send = |r: crate::util::Req| {
        requests += 1;
        r.send()
    };

    // An empty tenant reads as empty, and nothing is created for it.
    let r = send(srv.req("GET", "/v1/acme/snapshot"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.body,
        format!("{{\"snapshot\":\"{EMPTY_SNAPSHOT}\",\"concepts\":0}}")
    );
    let r = send(srv.req("GET", "/v1/acme/manifest"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/tab-separated-values"));
    assert_eq!(
        r.body,
        "# tenant: acme\n# bundles:\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n"
    );
    assert_eq!(
        r.header("etag"),
        Some(format!("\"{EMPTY_SNAPSHOT}:{TODAY}\"").as_str())
    );
    assert!(
        !data.join("tenants").join("acme").exists(),
        "a read creates no tenant"
    );

    // PUT: create, refuse, replace.
    let idea = doc("idea", "A first idea.");
    let put = |path: &str| {
        srv.req("PUT", &format!("/v1/acme/source/notes/{path}"))
            .header("Content-Type", "text/markdown")
    };
    let r = send(
        put("idea.md")
            .header("If-None-Match", "*")
            .body(idea.clone()),
    );
    assert_eq!(r.status, 200, "{r:?}");
    let h1 = sha(&idea);
    assert_eq!(r.header("etag"), Some(format!("\"{h1}\"").as_str()));
    let w = r.json();
    assert_eq!(
        keys(&r),
        [
            "hash",
            "revision",
            "snapshot",
            "concepts",
            "id",
            "renamed",
            "diagnostics"
        ]
    );
    assert_eq!(
        (w["hash"].as_str(), w["concepts"].as_u64(), w["id"].as_str()),
        (Some(h1.as_str()), Some(1), Some("idea"))
    );
    let rev1 = w["revision"].as_str().unwrap().to_string();
    let r = send(
        put("idea.md")
            .header("If-None-Match", "*")
            .body(idea.clone()),
    );
    r.error(
        412,
        "CONFLICT",
        &format!("concept already exists: {CHANGED}"),
    );
    assert_eq!(r.json()["reason"], "exists");
    send(put("idea.md").body(idea.clone())).error(
        428,
        "INVALID",
        "a write needs If-Match: \"<hash>\" to replace, or If-None-Match: * to create",
    );
    let r = send(
        put("idea.md")
            .header("If-Match", &format!("\"{}\"", "0".repeat(64)))
            .body(idea.clone()),
    );
    r.error(
        412,
        "CONFLICT",
        &format!("concept changed since it was read: {CHANGED}"),
    );
    assert_eq!(r.json()["reason"], "changed");
    let r = send(put("nothing.md").header("If-Match", &h1).body(idea.clone()));
    r.error(
        412,
        "CONFLICT",
        &format!("concept does not exist: {CHANGED}"),
    );
    assert_eq!(r.json()["reason"], "missing");
    send(
        put("idea.md")
            .header("If-Match", "\"abc\"")
            .body(idea.clone()),
    )
    .error(
        400,
        "INVALID",
        "invalid hash \"abc\": expected 64 lowercase hex characters",
    );
    send(
        put("bad.md")
            .header("If-None-Match", "*")
            .body(vec![0xff, 0xfe]),
    )
    .error(400, "INVALID", "source must contain valid UTF-8");
    send(
        put("bad.txt")
            .header("If-None-Match", "*")
            .body(idea.clone()),
    )
    .error(
        400,
        "INVALID",
        &langonrock_core::validate::document_path("bad.txt")
            .unwrap_err()
            .message(),
    );
    send(
        srv.req("PUT", "/v1/acme/source/notes/form.md")
            .header("If-None-Match", "*")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(idea.clone()),
    )
    .error(
        415,
        "INVALID",
        "a document is sent as its raw bytes: use content-type text/markdown, not a form encoding",
    );
    let idea2 = doc("idea", "A better idea.");
    let h2 = sha(&idea2);
    let r = send(
        put("idea.md")
            .header("If-Match", &format!("\"{h1}\""))
            .body(idea2.clone()),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("etag"), Some(format!("\"{h2}\"").as_str()));
    // A second bundle renames the first concept.
    let r = send(
        srv.req("PUT", "/v1/acme/source/other/idea.md")
            .header("If-None-Match", "*")
            .header("Content-Type", "text/markdown")
            .body(idea.clone()),
    );
    assert_eq!(
        r.json()["renamed"],
        json!([{"from": "idea", "to": "notes/idea"}])
    );
    send(srv.req("PATCH", "/v1/acme/source/notes/idea.md")).error(
        405,
        "INVALID",
        "PATCH is not allowed on a concept",
    );

    // GET of one document.
    let r = send(srv.req("GET", "/v1/acme/source/notes/idea.md"));
    assert_eq!((r.status, r.body.as_str()), (200, idea2.as_str()));
    assert_eq!(
        r.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert_eq!(r.header("etag"), Some(format!("\"{h2}\"").as_str()));
    send(srv.req("GET", "/v1/acme/source/notes/missing.md")).error(
        404,
        "NOT_FOUND",
        "no such concept",
    );

    // The listing.
    let r = send(srv.req("GET", "/v1/acme/source"));
    assert_eq!(
        r.json(),
        json!([
            {"bundle": "notes", "path": "idea.md", "hash": h2, "bytes": idea2.len(), "id": "notes/idea"},
            {"bundle": "other", "path": "idea.md", "hash": h1, "bytes": idea.len(), "id": "other/idea"},
        ])
    );
    send(srv.req("POST", "/v1/acme/source")).error(
        405,
        "INVALID",
        "the source listing is read only",
    );

    // manifest: ETag, 304, bundle slice.
    let snap = send(srv.req("GET", "/v1/acme/snapshot")).json();
    assert_eq!(snap["concepts"], 2);
    let snapshot = snap["snapshot"].as_str().unwrap().to_string();
    let r = send(srv.req("GET", "/v1/acme/manifest"));
    let etag = format!("\"{snapshot}:{TODAY}\"");
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert_eq!(
        r.body,
        "# tenant: acme\n# bundles: notes other\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\nnotes/idea\tnotes\tidea\t-\t-\tA better idea.\t-\nother/idea\tother\tidea\t-\t-\tA first idea.\t-\n"
    );
    let r = send(
        srv.req("GET", "/v1/acme/manifest")
            .header("If-None-Match", &etag),
    );
    assert_eq!((r.status, r.body.as_str()), (304, ""));
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    let r = send(
        srv.req("GET", "/v1/acme/manifest")
            .header("If-None-Match", "\"stale:2026-01-01\""),
    );
    assert_eq!(r.status, 200);
    let r = send(srv.req("GET", "/v1/acme/manifest?bundle=OTHER"));
    let betag = format!("\"{snapshot}:other:{TODAY}\"");
    assert_eq!(r.header("etag"), Some(betag.as_str()));
    assert!(
        r.body
            .ends_with("links\nother/idea\tother\tidea\t-\t-\tA first idea.\t-\n"),
        "{}",
        r.body
    );
    assert_eq!(
        send(
            srv.req("GET", "/v1/acme/manifest?bundle=other")
                .header("If-None-Match", &betag)
        )
        .status,
        304
    );
    send(srv.req("GET", "/v1/acme/manifest?bundle=zz")).error(
        404,
        "NOT_FOUND",
        "no bundle \"zz\" in this tenant: found notes, other",
    );
    send(srv.req("POST", "/v1/acme/manifest")).error(405, "INVALID", "manifest requires GET");
    send(srv.req("DELETE", "/v1/acme/snapshot")).error(405, "INVALID", "snapshot requires GET");

    // get: non-string ids dropped, wrong-typed options ignored, numbers floored.
    let get = |body: Value| srv.req("POST", "/v1/acme/get").json(&body);
    let r = send(get(
        json!({"ids": ["notes/idea", 5, "nope", null], "limit": "ten"}),
    ));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        r#"{"notes/idea":{"text":"A better idea.\n","start":0,"end":15,"total":15}}"#
    );
    let r = send(get(
        json!({"ids": ["notes/idea"], "offset": 2.7, "limit": 3}),
    ));
    assert_eq!(
        r.json()["notes/idea"],
        json!({"text": "bet", "start": 2, "end": 5, "total": 15})
    );
    let r = send(get(json!({"ids": ["notes/idea"], "find": "IDEA"})));
    assert_eq!(r.json()["notes/idea"]["matches"], json!([9]));
    let r = send(get(json!({"ids": ["notes/idea"], "source": true})));
    let s = &r.json()["notes/idea"];
    assert_eq!(
        (
            s["text"].as_str(),
            s["bundle"].as_str(),
            s["path"].as_str(),
            s["hash"].as_str()
        ),
        (
            Some(idea2.as_str()),
            Some("notes"),
            Some("idea.md"),
            Some(h2.as_str())
        )
    );
    let shape = "body must be {\"ids\": [...], \"section\"?, \"offset\"?, \"limit\"?, \"find\"?, \"source\"?}";
    send(get(json!({"id": ["x"]}))).error(400, "INVALID", shape);
    send(get(json!({"ids": "notes/idea"}))).error(400, "INVALID", shape);
    send(srv.req("POST", "/v1/acme/get").body("{not json")).error(400, "INVALID", shape);
    send(
        srv.req("POST", "/v1/acme/get")
            .header("Content-Type", "text/plain")
            .body("{}"),
    )
    .error(
        415,
        "INVALID",
        "content-type must be application/json, got \"text/plain\"",
    );
    send(srv.req("GET", "/v1/acme/get")).error(405, "INVALID", "get requires POST");

    // search.
    let search = |body: Value| srv.req("POST", "/v1/acme/search").json(&body);
    let r = send(search(json!({"q": "better", "k": 1})));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/tab-separated-values"));
    assert!(
        r.body.contains("# query: better\n")
            && r.body
                .contains("\nnotes/idea\tnotes\tidea\t-\t-\tA better idea.\t-\t"),
        "{}",
        r.body
    );
    let r = send(search(
        json!({"q": "idea", "bundle": "other", "expand": false}),
    ));
    assert!(r.body.contains("# bundle: other\n"), "{}", r.body);
    let qshape = "body must be {\"q\": \"...\", \"k\"?: n}";
    send(search(json!({"q": ""}))).error(400, "INVALID", qshape);
    send(search(json!({"k": 3}))).error(400, "INVALID", qshape);
    send(search(json!({"q": "x", "bundle": "zz"}))).error(
        404,
        "NOT_FOUND",
        "no bundle \"zz\" in this tenant: found notes, other",
    );
    send(srv.req("GET", "/v1/acme/search")).error(405, "INVALID", "search requires POST");

    // transact.
    let transact = |body: Value| srv.req("POST", "/v1/acme/transact").json(&body);
    send(srv.req("POST", "/v1/acme/transact").body("[")).error(
        400,
        "INVALID",
        "body must be valid JSON",
    );
    send(transact(json!({"changes": []}))).error(
        400,
        "INVALID",
        "transaction needs between 1 and 1000 changes",
    );
    let a =
        json!({"operation": "write", "bundle": "notes", "path": "a.md", "content": doc("t", "A.")});
    let r = send(transact(json!({"changes": [a, a]})));
    r.error(
        400,
        "INVALID",
        "transaction contains duplicate document targets",
    );
    assert_eq!(r.json()["index"], 1);
    let r = send(transact(
        json!({"changes": [a, {"operation": "delete", "bundle": "notes", "path": "idea.md", "replaces": "0".repeat(64)}]}),
    ));
    r.error(
        409,
        "CONFLICT",
        &format!("concept changed since it was read: {CHANGED}"),
    );
    assert_eq!(
        r.json()["changes"],
        json!([{"index": 1, "reason": "changed"}])
    );
    let r = send(transact(json!({"changes": [a]})));
    assert_eq!(r.status, 200, "{r:?}");
    let t = r.json();
    assert_eq!(
        keys(&r),
        ["revision", "snapshot", "concepts", "bundles", "diagnostics"]
    );
    assert_eq!(
        (t["concepts"].as_u64(), t["bundles"].clone()),
        (Some(3), json!(["notes", "other"]))
    );
    let rev_t = t["revision"].as_str().unwrap().to_string();
    send(srv.req("GET", "/v1/acme/transact")).error(405, "INVALID", "transact requires POST");

    // history.
    let r = send(srv.req("GET", "/v1/acme/history?limit=2"));
    let page = r.json();
    assert_eq!(page["revisions"].as_array().unwrap().len(), 2);
    assert_eq!(page["revisions"][0]["revision"], rev_t.as_str());
    let next = page["next"].as_str().unwrap();
    let r = send(srv.req("GET", &format!("/v1/acme/history?before={next}&limit=100")));
    let older = r.json();
    assert_eq!(
        older["revisions"].as_array().unwrap().last().unwrap()["revision"],
        rev1.as_str()
    );
    for bad in ["0", "101", "x", "1.5"] {
        send(srv.req("GET", &format!("/v1/acme/history?limit={bad}"))).error(
            400,
            "INVALID",
            "history limit must be an integer from 1 to 100",
        );
    }
    send(srv.req("GET", "/v1/acme/history?before=nonsense")).error(
        400,
        "INVALID",
        "invalid history cursor",
    );
    send(srv.req("POST", "/v1/acme/history")).error(405, "INVALID", "history requires GET");

    // restore.
    let restore = |body: Value| srv.req("POST", "/v1/acme/restore").json(&body);
    let rshape = "restore needs revision and expectedRevision in the connected tenant";
    send(restore(json!({}))).error(400, "INVALID", rshape);
    send(restore(
        json!({"revision": rev1, "expectedRevision": rev_t, "tenant": "acme"}),
    ))
    .error(400, "INVALID", rshape);
    send(restore(json!({"revision": "x", "expectedRevision": rev_t}))).error(
        400,
        "INVALID",
        "invalid hash \"x\": expected 64 lowercase hex characters",
    );
    send(restore(json!({"revision": rev1, "expectedRevision": rev1}))).error(
        409,
        "CONFLICT",
        "database changed: re-read the revision and document hashes",
    );
    let r = send(restore(
        json!({"revision": rev1, "expectedRevision": rev_t}),
    ));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["concepts"], 1);
    send(srv.req("GET", "/v1/acme/restore")).error(405, "INVALID", "restore requires POST");

    // DELETE of one document.
    let del = || srv.req("DELETE", "/v1/acme/source/notes/idea.md");
    send(del()).error(428, "INVALID", "deleting needs If-Match: \"<hash>\"");
    let r = send(del().header("If-Match", &format!("\"{h2}\"")));
    r.error(
        412,
        "CONFLICT",
        &format!("concept changed since it was read: {CHANGED}"),
    );
    let r = send(del().header("If-Match", &format!("\"{h1}\"")));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(keys(&r), ["revision", "snapshot", "concepts", "renamed"]);
    assert_eq!(r.json()["concepts"], 0);

    // Bundles.
    send(srv.req("DELETE", "/v1/acme/bundles/zz")).error(404, "NOT_FOUND", "no such bundle");
    send(srv.req("GET", "/v1/acme/bundles/notes")).error(
        405,
        "INVALID",
        "only DELETE is allowed on a bundle",
    );
    let r = send(
        srv.req("PUT", "/v1/acme/source/gone/x.md")
            .header("If-None-Match", "*")
            .header("Content-Type", "text/markdown")
            .body(doc("t", "X.")),
    );
    assert_eq!(r.status, 200);
    // 200 with the RevisionResult a local deleteBundle returns (not http.md's 204).
    let r = send(srv.req("DELETE", "/v1/acme/bundles/gone"));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        keys(&r),
        ["revision", "snapshot", "concepts", "bundles", "diagnostics"]
    );
    assert_eq!(r.json()["bundles"], json!([]));
    assert_eq!(
        send(srv.req("GET", "/v1/acme/source/gone/x.md")).status,
        404
    );

    // CORS: a preflight from any origin, and every answer readable by a page, ETag included.
    let r = send(
        srv.req("OPTIONS", "/v1/acme/source/notes/idea.md")
            .header("Origin", "https://notes.example")
            .header("Access-Control-Request-Method", "PUT"),
    );
    assert_eq!((r.status, r.body.as_str()), (204, ""));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        r.header("access-control-allow-methods"),
        Some("GET, POST, PUT, DELETE")
    );
    assert_eq!(
        r.header("access-control-allow-headers"),
        Some("authorization, content-type, if-match, if-none-match")
    );
    assert_eq!(r.header("access-control-max-age"), Some("86400"));
    for r in [
        send(srv.req("GET", "/v1/acme/manifest")),
        send(srv.req("GET", "/v1/acme/nope")),
    ] {
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{r:?}");
        assert_eq!(
            r.header("access-control-expose-headers"),
            Some("ETag"),
            "{r:?}"
        );
    }

    // Routing.
    for path in [
        "/v1/acme/nope",
        "/v2/acme/manifest",
        "/",
        "/v1",
        "/v1/acme/manifest/extra",
        "/v1/acme/bundles",
        "/v1/acme/source/notes",
    ] {
        send(srv.req("GET", path)).error(404, "NOT_FOUND", "no such route");
    }
    send(srv.req("GET", "/v1/manifest")).error(
        401,
        "UNAUTHORIZED",
        "tenant required in path when no tokens exist",
    );
    send(srv.req("GET", "/v1/Bad%20Name/manifest")).error(
        400,
        "INVALID",
        "invalid tenant id \"Bad Name\": expected 1-64 chars of [a-z0-9_-]",
    );
    // Tenant ids are lower-cased.
    assert_eq!(
        send(srv.req("GET", "/v1/ACME/snapshot")).json()["concepts"],
        0
    );

    // Every request was logged once: method, path without query, status, bytes, time.
    let log = srv.stop();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), requests, "{log}");
    for l in &lines {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f.len(), 5, "{l}");
        assert!(
            ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"].contains(&f[0]),
            "{l}"
        );
        assert!(f[1].starts_with('/') && !f[1].contains('?'), "{l}");
        assert!(
            f[2].parse::<u16>().is_ok() && f[3].parse::<u64>().is_ok() && f[4].ends_with("ms"),
            "{l}"
        );
    }
    assert!(
        lines.contains(&"GET /v1/acme/manifest 304 0 ")
            || lines
                .iter()
                .any(|l| l.starts_with("GET /v1/acme/manifest 304 0 ")),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// JSON that only `serde_json` refuses (a lone surrogate escape, a number a double cannot
/// hold): one answer naming the member and the fix, the rule of MCP and the CLI
/// (docs/limits.md), and nothing written.
#[test]
fn flawed_json_bodies_name_the_member() {
    let dir = temp("routes-flaws");
    let _removed = RemovedAtEnd(dir.clone());
    let data = dir.join("data");
    let srv = Server::start(&data, &[], &[]);
    let r = srv
        .req("PUT", "/v1/acme/source/notes/idea.md")
        .header("Content-Type", "text/markdown")
        .header("If-None-Match", "*")
        .body(doc("idea", "A first idea."))
        .send();
    assert_eq!(r.status, 200, "{r:?}");
    let snapshot = srv.req("GET", "/v1/acme/snapshot").send().body;
    let post = |route: &str, body: &str| {
        srv.req("POST", &format!("/v1/acme/{route}"))
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
    };
    let unicode = |member: &str| format!("{member} must contain well-formed Unicode");
    post("search", r#"{"q": "idea \ud83d"}"#).error(400, "INVALID", &unicode("q"));
    post("search", r#"{"q": "idea", "bundle": "\udc00"}"#).error(
        400,
        "INVALID",
        &unicode("bundle"),
    );
    post("search", r#"{"q": "idea", "k": 1e400}"#).error(
        400,
        "INVALID",
        "k must be a number a double can hold (at most about 1.8e308), got 1e400",
    );
    post("get", r#"{"ids": ["notes/idea", "\ud800"]}"#).error(400, "INVALID", &unicode("ids[1]"));
    post("get", r#"{"ids": ["notes/idea"], "limit": -1e999}"#).error(
        400,
        "INVALID",
        "limit must be a number a double can hold (at most about 1.8e308), got -1e999",
    );
    let hash = "0".repeat(64);
    post(
        "restore",
        &format!(r#"{{"revision": "\ud800", "expectedRevision": "{hash}"}}"#),
    )
    .error(400, "INVALID", &unicode("revision"));
    // Document content is the engine's refusal, as everywhere; another member is named.
    let change = |content: &str| {
        format!(
            r#"{{"changes": [{{"operation": "write", "bundle": "notes", "path": "b.md", "content": "ok"}}, {{"operation": "write", "bundle": "notes", "path": "c.md", "content": "{content}"}}]}}"#
        )
    };
    let r = post("transact", &change(r"broken \ud83d emoji"));
    r.error(400, "INVALID", "source must contain well-formed Unicode");
    assert_eq!(r.json()["index"], 1, "{r:?}");
    post(
        "transact",
        r#"{"changes": [{"operation": "write", "bundle": "\ud83d", "path": "c.md", "content": "x"}]}"#,
    )
    .error(400, "INVALID", &unicode("changes[0].bundle"));
    // The same shape with well-formed JSON still gets the route's message.
    post("search", r#"{"q": 7}"#).error(400, "INVALID", "body must be {\"q\": \"...\", \"k\"?: n}");
    post("search", r#"{"q": "\ud83d"#).error(
        400,
        "INVALID",
        "body must be {\"q\": \"...\", \"k\"?: n}",
    );
    assert_eq!(
        srv.req("GET", "/v1/acme/snapshot").send().body,
        snapshot,
        "nothing written"
    );
    let log = srv.stop();
    assert_eq!(
        log.lines().filter(|l| l.contains(" 400 ")).count(),
        10,
        "{log}"
    );
}
