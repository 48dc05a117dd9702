//! Tokens over TCP: missing and wrong tokens, read grants writing, tokens for another
//! tenant, a tenant named like a verb, percent-encoded `..` and `/` in route segments and in
//! bundle and path segments. Each refusal has its exact status and message, and none writes
//! anything.

use crate::util::{doc, temp, token, tree, Server};
use serde_json::json;

#[test]
fn refusals_write_nothing() {
    let dir = temp("security");
    let data = dir.join("data");
    let w = token(&data, "acme", true);
    let r = token(&data, "acme", false);
    let beta = token(&data, "beta", true);
    let verb = token(&data, "manifest", true);
    let ghost = token(&data, "ghost", false);
    let srv = Server::start(&data, &["--port", "0"], &[]);
    let before = tree(&data);
    let md = |req: crate::util::Req| {
        req.header("Content-Type", "text/markdown")
            .header("If-None-Match", "*")
            .body(doc("note", "Text."))
    };
    let unauthorized = "invalid or missing bearer token";

    // No token, a wrong one, another scheme.
    srv.req("GET", "/v1/acme/manifest")
        .send()
        .error(401, "UNAUTHORIZED", unauthorized);
    srv.req("GET", "/v1/manifest")
        .token("0123")
        .send()
        .error(401, "UNAUTHORIZED", unauthorized);
    srv.req("GET", "/v1/manifest")
        .header("Authorization", &format!("Basic {w}"))
        .send()
        .error(401, "UNAUTHORIZED", unauthorized);
    md(srv.req("PUT", "/v1/acme/source/notes/a.md"))
        .send()
        .error(401, "UNAUTHORIZED", unauthorized);
    // A read grant reads (the tenant from the token) and cannot write.
    let m = srv.req("GET", "/v1/manifest").token(&r).send();
    assert_eq!(
        (m.status, m.body.lines().next()),
        (200, Some("# tenant: acme"))
    );
    let may_not = "this token may read but not write";
    md(srv.req("PUT", "/v1/source/notes/a.md").token(&r))
        .send()
        .error(403, "FORBIDDEN", may_not);
    srv.req("DELETE", "/v1/source/notes/a.md")
        .token(&r)
        .header("If-Match", &"0".repeat(64))
        .send()
        .error(403, "FORBIDDEN", may_not);
    let change = json!({"changes": [{"operation": "write", "bundle": "notes", "path": "a.md", "content": "x"}]});
    srv.req("POST", "/v1/transact")
        .token(&r)
        .json(&change)
        .send()
        .error(403, "FORBIDDEN", may_not);
    srv.req("POST", "/v1/acme/restore")
        .token(&r)
        .json(&json!({"revision": "0".repeat(64), "expectedRevision": "0".repeat(64)}))
        .send()
        .error(403, "FORBIDDEN", may_not);
    srv.req("DELETE", "/v1/bundles/notes")
        .token(&r)
        .send()
        .error(403, "FORBIDDEN", may_not);
    // A token for another tenant.
    let other = "token does not grant access to that tenant";
    srv.req("GET", "/v1/beta/manifest")
        .token(&w)
        .send()
        .error(403, "FORBIDDEN", other);
    md(srv.req("PUT", "/v1/beta/source/notes/a.md").token(&w))
        .send()
        .error(403, "FORBIDDEN", other);
    md(srv.req("PUT", "/v1/acme/source/notes/a.md").token(&beta))
        .send()
        .error(403, "FORBIDDEN", other);
    // A tenant named like a verb cannot be addressed in the path; its token still works.
    srv.req("GET", "/v1/manifest/manifest")
        .token(&verb)
        .send()
        .error(404, "NOT_FOUND", "no such route");
    let m = srv.req("GET", "/v1/manifest").token(&verb).send();
    assert_eq!(m.body.lines().next(), Some("# tenant: manifest"));
    // Percent-encoded `..` and `/` in the tenant segment.
    for (seg, shown) in [
        ("%2E%2E", ".."),
        ("acme%2F..%2Fbeta", "acme/../beta"),
        ("..%2Fbeta", "../beta"),
        ("%2e%2e%2f", "../"),
    ] {
        srv.req("GET", &format!("/v1/{seg}/manifest"))
            .token(&w)
            .send()
            .error(
                400,
                "INVALID",
                &format!("invalid tenant id \"{shown}\": expected 1-64 chars of [a-z0-9_-]"),
            );
    }
    srv.req("GET", "/v1/acme/../beta/manifest")
        .token(&w)
        .send()
        .error(404, "NOT_FOUND", "no such route");
    srv.req("GET", "/v1/%zz/manifest").token(&w).send().error(
        400,
        "INVALID",
        "the path holds a bad percent-encoding or bytes that are not UTF-8",
    );
    // ... and in bundle and path segments.
    let invalid_path = |p: &str| {
        langonrock_core::validate::document_path(p)
            .unwrap_err()
            .message()
    };
    let invalid_bundle = |b: &str| {
        langonrock_core::validate::bundle_name(b)
            .unwrap_err()
            .message()
    };
    for (path, message) in [
        (
            "/v1/acme/source/notes/%2E%2E%2Fx.md",
            invalid_path("../x.md"),
        ),
        (
            "/v1/acme/source/notes/..%2F..%2Fescape.md",
            invalid_path("../../escape.md"),
        ),
        ("/v1/acme/source/notes/%2E%2E/x.md", invalid_path("../x.md")),
        ("/v1/acme/source/notes/%2Fabs.md", invalid_path("/abs.md")),
        ("/v1/acme/source/notes/a%5Cb.md", invalid_path("a\\b.md")),
        ("/v1/acme/source/notes/a%00b.md", invalid_path("a\0b.md")),
        ("/v1/acme/source/%2E%2E/x.md", invalid_bundle("..")),
        (
            "/v1/acme/source/no%2Fbundle/x.md",
            invalid_bundle("no/bundle"),
        ),
    ] {
        md(srv.req("PUT", path).token(&w))
            .send()
            .error(400, "INVALID", &message);
    }
    // A read never leaves the tenant's documents.
    srv.req(
        "GET",
        "/v1/acme/source/notes/%2E%2E%2F%2E%2E%2F%2E%2E%2Ftokens.json",
    )
    .token(&w)
    .send()
    .error(404, "NOT_FOUND", "no such concept");
    // A tenant that does not exist reads empty; a read grant cannot create it.
    let g = srv.req("GET", "/v1/ghost/manifest").token(&ghost).send();
    assert_eq!(
        g.body,
        "# tenant: ghost\n# bundles:\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n"
    );
    md(srv.req("PUT", "/v1/source/notes/a.md").token(&ghost))
        .send()
        .error(403, "FORBIDDEN", may_not);
    assert_eq!(tree(&data), before, "a refused request wrote something");
    assert!(!data.join("tenants").exists());

    // A write grant creates the tenant with its first write.
    let ok = md(srv.req("PUT", "/v1/acme/source/notes/a%2Fb.md").token(&w)).send();
    assert_eq!(ok.status, 200, "{ok:?}");
    assert_eq!(
        srv.req("GET", "/v1/source/notes/a/b.md")
            .token(&r)
            .send()
            .status,
        200
    );
    assert!(data.join("tenants").join("acme").is_dir());
    assert!(!data.join("tenants").join("beta").exists());

    // Tokens never reach the log: not from the header, not from a query string.
    srv.req("GET", &format!("/v1/snapshot?token={w}"))
        .token(&w)
        .send();
    let log = srv.stop();
    for t in [&w, &r, &beta, &verb, &ghost] {
        assert!(!log.contains(t.as_str()), "a token is in the log:\n{log}");
    }
    assert!(log.contains("GET /v1/snapshot 200 "), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
