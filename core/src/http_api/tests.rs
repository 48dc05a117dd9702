use super::*;
use crate::engine::{HistoryRequest, RestoreRequest};

const H: &str = "968f3339aa6a0e9a4bd0b4a7f8fd3b2c3b8d4cb7e2c1b0a9f8e7d6c5b4a39281";

#[test]
fn routes_and_headers() {
    let r = manifest("/v1/acme", Some("sales ops"), Some("\"s:2026-01-01\""));
    assert_eq!(r.method, "GET");
    assert_eq!(r.path, "/v1/acme/manifest?bundle=sales%20ops");
    assert_eq!(
        r.headers,
        vec![("if-none-match", "\"s:2026-01-01\"".to_string())]
    );
    assert_eq!(manifest("/v1", None, None).path, "/v1/manifest");
    // Each path segment is encoded on its own: `/` separates, `%` and `..` stay data.
    let r = read_source("/v1/t", "b", "a b/ü%/../x.md");
    assert_eq!(r.path, "/v1/t/source/b/a%20b/%C3%BC%25/../x.md");
    let r = write("/v1/t", "b", "x.md", "hi", None);
    assert_eq!(r.method, "PUT");
    assert_eq!(
        r.headers,
        vec![
            ("content-type", MARKDOWN.to_string()),
            ("if-none-match", "*".to_string())
        ]
    );
    assert_eq!(r.body, b"hi");
    let r = write("/v1/t", "b", "x.md", "hi", Some(H));
    assert_eq!(r.headers[1], ("if-match", format!("\"{H}\"")));
    let r = delete("/v1/t", "b", "x.md", Some(H));
    assert_eq!((r.method, r.headers.len()), ("DELETE", 1));
    assert!(delete("/v1/t", "b", "x.md", None).headers.is_empty());
    assert_eq!(delete_bundle("/v1", "b").path, "/v1/bundles/b");
    let r = history(
        "/v1/t",
        &HistoryRequest {
            before: Some("a+b/c".into()),
            limit: Some(5),
        },
    );
    assert_eq!(r.path, "/v1/t/history?limit=5&before=a%2Bb%2Fc");
    assert_eq!(
        history("/v1/t", &HistoryRequest::default()).path,
        "/v1/t/history"
    );
    let r = restore(
        "/v1/t",
        &RestoreRequest {
            revision: "r".into(),
            expected_revision: "e".into(),
        },
    );
    assert_eq!(
        String::from_utf8(r.body).unwrap(),
        r#"{"expectedRevision":"e","revision":"r"}"#
    );
}

#[test]
fn request_bodies() {
    let opts = GetOptions {
        section: Some("usage".into()),
        offset: None,
        limit: Some(10),
        find: None,
        source: true,
    };
    let r = get("/v1/t", &["a", "b"], &opts);
    assert_eq!(
        String::from_utf8(r.body).unwrap(),
        r#"{"ids":["a","b"],"limit":10,"section":"usage","source":true}"#
    );
    let r = search(
        "/v1/t",
        "replay export",
        &SearchOptions {
            k: 5,
            bundle: Some("ops".into()),
            expand: true,
        },
    );
    assert_eq!(
        String::from_utf8(r.body).unwrap(),
        r#"{"bundle":"ops","expand":true,"k":5,"q":"replay export"}"#
    );
    let txn = crate::engine::parse_transaction(&json!({
        "changes": [
            {"operation": "write", "bundle": "b", "path": "x.md", "content": "hi"},
            {"operation": "delete", "bundle": "b", "path": "y.md", "replaces": H}
        ],
        "expectedRevision": H
    }))
    .unwrap();
    assert_eq!(
        transaction_json(&txn),
        json!({
            "changes": [
                {"operation": "write", "bundle": "b", "path": "x.md", "content": "hi"},
                {"operation": "delete", "bundle": "b", "path": "y.md", "replaces": H}
            ],
            "expectedRevision": H
        })
    );
}

#[test]
fn every_error_comes_back_as_itself() {
    let errors = vec![
        Error::Invalid("bad".into()),
        Error::InvalidChange {
            message: "invalid document path \"../x\"".into(),
            index: 3,
        },
        Error::NotFound("no such bundle".into()),
        Error::Conflict {
            message: "concept already exists: re-read the concept and retry with its new hash"
                .into(),
            reason: Some(ConflictReason::Exists),
            changes: vec![],
        },
        Error::Conflict {
            message: "transaction preconditions failed".into(),
            reason: None,
            changes: vec![
                ChangeFailure {
                    index: 0,
                    reason: ConflictReason::Changed,
                },
                ChangeFailure {
                    index: 2,
                    reason: ConflictReason::Missing,
                },
            ],
        },
        Error::IndeterminateCommit { revision: H.into() },
        Error::corrupt("head record fails its digest"),
        Error::Store("disk full".into()),
        Error::Unauthorized("invalid or missing bearer token".into()),
        Error::Forbidden("this token may read but not write".into()),
    ];
    let statuses = [400, 400, 404, 412, 409, 503, 500, 500, 401, 403];
    for (e, want) in errors.iter().zip(statuses) {
        // The transact route answers the transaction conflict; the others are single-document.
        let single = !matches!(e, Error::Conflict { changes, .. } if !changes.is_empty());
        let status = error_status(e, single);
        assert_eq!(status, want, "{e:?}");
        let body = error_body(e);
        assert_eq!(&error_from_response(status, body.as_bytes()), e, "{body}");
    }
    assert_eq!(
        error_body(&errors[4]),
        r#"{"changes":[{"index":0,"reason":"changed"},{"index":2,"reason":"missing"}],"code":"CONFLICT","message":"transaction preconditions failed"}"#
    );
    assert_eq!(error_status(&errors[3], false), 409);
}

#[test]
fn other_failures_name_status_and_body() {
    let e = error_from_response(502, b"<html>bad gateway</html>\n");
    assert_eq!(e.code(), "STORE");
    assert_eq!(
        e.message(),
        "langonrock server returned 502: <html>bad gateway</html>"
    );
    // JSON that is not our error, or an unknown code, is not rebuilt.
    for body in [
        &br#"{"code":"TEAPOT","message":"x"}"#[..],
        br#"{"message":"x"}"#,
        b"[]",
    ] {
        assert_eq!(error_from_response(500, body).code(), "STORE");
    }
    // A huge body is quoted short, cut on a character boundary.
    let big = "é".repeat(10_000);
    let m = error_from_response(500, big.as_bytes()).message();
    assert!(m.ends_with('…'), "{m}");
    assert!(m.len() < QUOTED_BODY + 64);
    // A success status with a body that does not parse is an unexpected answer too.
    let r = Response {
        status: 200,
        etag: None,
        body: b"{not json",
    };
    let e = r.json::<crate::snapshot::Snapshot>(200).unwrap_err();
    assert_eq!(e.message(), "langonrock server returned 200: {not json");
    let r = Response {
        status: 204,
        etag: None,
        body: b"",
    };
    assert_eq!(
        r.text(200).unwrap_err().message(),
        "langonrock server returned 204: "
    );
}

#[test]
fn answers() {
    let r = Response {
        status: 304,
        etag: Some("\"e\""),
        body: b"",
    };
    assert_eq!(
        manifest_answer(&r, Some("cached")),
        Ok(ManifestAnswer::Cached("cached".into()))
    );
    assert!(manifest_answer(&r, None).is_err());
    let r = Response {
        status: 200,
        etag: Some("\"e2\""),
        body: b"# tenant: t\n",
    };
    assert_eq!(
        manifest_answer(&r, Some("cached")),
        Ok(ManifestAnswer::Fresh {
            text: "# tenant: t\n".into(),
            etag: Some("\"e2\"".into())
        })
    );
    let missing = Response {
        status: 404,
        etag: None,
        body: br#"{"code":"NOT_FOUND","message":"no such concept"}"#,
    };
    assert_eq!(read_source_answer(&missing), Ok(None));
    let etag = format!("\"{H}\"");
    let found = Response {
        status: 200,
        etag: Some(&etag),
        body: b"\xEF\xBB\xBFhi\r\n",
    };
    assert_eq!(
        read_source_answer(&found),
        Ok(Some(("\u{feff}hi\r\n".into(), H.into())))
    );
    let no_etag = Response {
        etag: None,
        ..found
    };
    assert_eq!(read_source_answer(&no_etag).unwrap_err().code(), "STORE");
    // Key order survives, and `__proto__`-like keys are plain data.
    let m = ordered_object(br#"{"z":1,"10":2,"__proto__":3,"a":4}"#).unwrap();
    let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["z", "10", "__proto__", "a"]);
    assert_eq!(ordered_object(b"{} x"), None);
    assert_eq!(ordered_object(b"[1]"), None);
}

#[test]
fn slices_keep_their_fields_and_order() {
    let docs = vec![crate::compile::SourceDoc::new(
        "b",
        "x.md",
        "---\ntype: note\n---\nalpha beta alpha\n",
    )];
    let model = crate::compile::compile(&docs, crate::compile::SUMMARY_WIDTH).unwrap();
    let opts = GetOptions {
        find: Some("alpha".into()),
        source: true,
        ..GetOptions::default()
    };
    let local = crate::read::get(&model, &["x", "nope"], &opts).to_json();
    let parsed = get_answer(local.as_bytes()).unwrap();
    assert_eq!(parsed.len(), 1);
    let back: Map<String, Value> = parsed
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap()))
        .collect();
    // Each slice serialises to the very bytes the server sent for it.
    assert_eq!(
        format!("{{\"x\":{}}}", serde_json::to_string(&parsed[0].1).unwrap()),
        local
    );
    assert_eq!(
        Value::Object(back),
        serde_json::from_str::<Value>(&local).unwrap()
    );
    let text = serde_json::to_string(&parsed[0].1).unwrap();
    assert!(text.starts_with("{\"text\":"), "{text}");
    assert!(
        text.contains("\"matchCount\":2,\"bundle\":\"b\",\"path\":\"x.md\",\"hash\":"),
        "{text}"
    );
    assert_eq!(get_answer(br#"{"x": {"text": 1}}"#), None);
    // A local slice made owned is the same value.
    let r = crate::read::get(&model, &["x"], &opts);
    let (_, slice) = r.slices().next().unwrap();
    assert_eq!(OwnedSlice::from(slice), parsed[0].1);
}

#[test]
fn a_remote_get_renders_as_a_local_one() {
    let docs = vec![
        crate::compile::SourceDoc::new(
            "b",
            "orders.md",
            "---\ntype: table\n---\nOrders.\n\n## Schema\n\nid, total\n\n## Usage\n\nJoin on id.\n",
        ),
        crate::compile::SourceDoc::new("b", "caf\u{e9}.md", "---\ntype: note\n---\nNo sections.\n"),
    ];
    let model = crate::compile::compile(&docs, crate::compile::SUMMARY_WIDTH).unwrap();
    // What `serve` answers to a /get body: the library JSON of the same call.
    let server = |ids: &[String], o: &GetOptions| -> Vec<(String, OwnedSlice)> {
        get_answer(crate::read::get(&model, ids, o).to_json().as_bytes()).unwrap()
    };
    let cafe_nfd = "cafe\u{301}".to_string();
    let cases: Vec<(Vec<String>, GetOptions)> = vec![
        (vec!["orders".into(), "nope".into()], GetOptions::default()),
        (
            vec![
                "orders".into(),
                "café".into(),
                "nope".into(),
                "orders".into(),
            ],
            GetOptions {
                section: Some("usage".into()),
                ..GetOptions::default()
            },
        ),
        (
            vec![cafe_nfd.clone(), "orders".into(), "ghost".into()],
            GetOptions {
                section: Some("no\tsuch".into()),
                source: true,
                ..GetOptions::default()
            },
        ),
        (
            vec!["orders".into()],
            GetOptions {
                find: Some("id".into()),
                limit: Some(12),
                source: true,
                ..GetOptions::default()
            },
        ),
    ];
    let mut all = String::new();
    for (ids, opts) in cases {
        let local = crate::read::render_mcp(&crate::read::get(&model, &ids, &opts));
        all.push_str(&local);
        let found = server(&ids, &opts);
        let probe = get_probe(&ids, &opts, &found).map(|(p, o)| server(&p, &o));
        let remote = RemoteGet::new(&ids, &opts, found, probe);
        assert_eq!(
            crate::read::render_mcp(&remote.result()),
            local,
            "{ids:?} {opts:?}"
        );
        assert_eq!(
            crate::read::render_cli(&remote.result()),
            crate::read::render_cli(&crate::read::get(&model, &ids, &opts))
        );
    }
    for frame in [
        "@@ café no section \"usage\": body",
        "@@ orders b/orders.md hash ",
        " no section \"no such\": body schema usage",
        "@@ not found\nnope",
        "@@ not found\nghost",
    ] {
        assert!(all.contains(frame), "{frame:?} not in {all:?}");
    }
    // No section asked for, or nothing missing: no second request.
    let ids = ["orders".to_string(), "nope".to_string()];
    let found = server(&ids, &GetOptions::default());
    assert_eq!(get_probe(&ids, &GetOptions::default(), &found), None);
}

#[test]
fn bundles_of_a_manifest() {
    let m = "# tenant: t\n# bundles: ga4 Sales\nid\tbundle\n";
    assert_eq!(manifest_bundles(m), ["ga4", "Sales"]);
    assert_eq!(stored_bundle_in(m, "SALES").as_deref(), Some("Sales"));
    assert_eq!(stored_bundle_in(m, "nope"), None);
    assert!(manifest_bundles("# tenant: t\n# bundles: \n").is_empty());
}

#[test]
fn a_remote_write_of_ill_formed_text_is_refused_before_anything_is_sent() {
    use crate::engine::request::Content;
    use crate::tools::ToolCall;
    let call = |bundle: &str| ToolCall::Write {
        bundle: bundle.into(),
        path: "p.md".into(),
        content: Content::IllFormed,
        replaces: None,
    };
    // Reads may go out first (the tool looks up the current hash); the write itself never
    // does. The document does not exist: a 404 NOT_FOUND answers each look-up.
    let not_found = br#"{"error":{"code":"NOT_FOUND","message":"no such document"}}"#;
    let run = |mut op: RemoteTool| {
        let mut step = op.resume(None);
        for _ in 0..8 {
            match step {
                RemoteStep::Send(r) if r.read => {
                    step = op.resume(Some(Ok(Response {
                        status: 404,
                        etag: None,
                        body: not_found,
                    })))
                }
                other => return other,
            }
        }
        step
    };
    // The local engine's refusal, in its order of checks: the content's ...
    match run(RemoteTool::new(call("b"), false, "/v1/t")) {
        RemoteStep::Done(reply) => {
            assert!(reply.is_error, "{reply:?}");
            assert!(
                reply
                    .text
                    .contains("source must contain well-formed Unicode"),
                "{reply:?}"
            );
        }
        RemoteStep::Send(r) => panic!("sent {r:?}"),
    }
    // ... after the bundle's.
    match run(RemoteTool::new(call("Bad Bundle"), false, "/v1/t")) {
        RemoteStep::Done(reply) => {
            assert!(reply.is_error, "{reply:?}");
            assert!(!reply.text.contains("well-formed"), "{reply:?}");
        }
        RemoteStep::Send(r) => panic!("sent {r:?}"),
    }
}
