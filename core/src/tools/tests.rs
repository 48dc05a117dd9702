use super::*;
use crate::engine::{DeleteResult, DiagnosticInfo, Renamed, RevisionResult, WriteResult};
use crate::error::{ChangeFailure, ConflictReason, Error};
use serde_json::{json, Value};

const H1: &str = "968f3339aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const H2: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const H3: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

fn names(set: &[&Tool]) -> Vec<&'static str> {
    set.iter().map(|t| t.name).collect()
}

/// Every text of one tool: its description and its parameter descriptions.
fn texts(t: &Tool) -> String {
    let mut s = t.description.to_string();
    for p in t.params {
        if let Some(d) = p.description {
            s.push('\n');
            s.push_str(d);
        }
    }
    s
}

fn count(hay: &str, needle: &str) -> usize {
    hay.to_lowercase().matches(&needle.to_lowercase()).count()
}

#[test]
fn token_budget_of_agent_md_5() {
    let limits = [
        ((false, false), 6, 1300),
        ((false, true), 4, 800),
        ((true, false), 9, 1900),
    ];
    for ((db, ro), n, limit) in limits {
        let set = tool_set(db, ro);
        assert_eq!(set.len(), n);
        let (chars, tokens) = token_tax(&set);
        println!(
            "token tax, database_tools={db} read_only={ro}: {n} tools, {chars} chars, ~{tokens} tokens (limit {limit})"
        );
        assert_eq!(tokens, chars.div_ceil(4));
        assert!(tokens <= limit, "{tokens} > {limit}");
    }
}

#[test]
fn tool_sets_of_agent_md_2() {
    assert_eq!(
        names(&tool_set(false, false)),
        ["manifest", "search", "get", "snapshot", "write", "delete"]
    );
    assert_eq!(
        names(&tool_set(true, false)),
        [
            "manifest", "search", "get", "snapshot", "write", "delete", "transact", "history",
            "restore"
        ]
    );
    assert_eq!(
        names(&tool_set(false, true)),
        ["manifest", "search", "get", "snapshot"]
    );
    assert_eq!(
        names(&tool_set(true, true)),
        ["manifest", "search", "get", "snapshot", "history"]
    );
}

#[test]
fn table_names_titles_and_schemas() {
    let mut seen = std::collections::BTreeSet::new();
    for t in &TOOLS {
        assert!(seen.insert(t.name), "duplicate tool {}", t.name);
        assert_eq!(tool(t.name).map(|x| x.name), Some(t.name));
        let mut params = std::collections::BTreeSet::new();
        for p in t.params {
            assert!(
                params.insert(p.name),
                "duplicate param {}.{}",
                t.name,
                p.name
            );
        }
        let s = t.input_schema();
        assert_eq!(s["type"], "object", "{}", t.name);
        let props = s["properties"].as_object().expect("properties object");
        assert_eq!(
            props
                .keys()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>(),
            t.params
                .iter()
                .map(|p| p.name.to_string())
                .collect::<std::collections::BTreeSet<_>>()
        );
        for (name, p) in props {
            assert!(
                p["type"].is_string() || p["oneOf"].is_array(),
                "{}.{name} has no type",
                t.name
            );
        }
        match s.get("required") {
            Some(r) => {
                for name in r.as_array().expect("required array") {
                    assert!(props.contains_key(name.as_str().unwrap_or_default()));
                }
            }
            None => assert!(t.params.iter().all(|p| !p.required)),
        }
        // Deterministic: the same bytes every time.
        assert_eq!(s.to_string(), t.input_schema().to_string());
        assert!(!t.description.contains('\n') && !t.description.contains('"'));
    }
    assert_eq!(tool("nope"), None);
    let titles: Vec<&str> = TOOLS.iter().map(|t| t.title).collect();
    assert_eq!(
        titles,
        [
            "Read the knowledge manifest",
            "Find concepts by relevance",
            "Fetch concepts by id",
            "Check the current snapshot",
            "Create or replace a concept",
            "Delete a concept",
            "Commit document changes atomically",
            "Read retained revisions",
            "Restore a retained revision",
        ]
    );
}

#[test]
fn schemas_of_agent_md_3() {
    let get = |n: &str| tool(n).map(Tool::input_schema).unwrap_or_default();
    // Compared as values: key order depends on serde_json's `preserve_order` feature.
    let parsed = |s: &str| serde_json::from_str::<Value>(s).unwrap_or_default();
    assert_eq!(
        get("search"),
        parsed(
            r#"{"properties":{"bundle":{"description":"Restricts the ranking.","type":"string"},"k":{"description":"Ranked matches before expansion (default 8).","maximum":50,"minimum":1,"type":"integer"},"query":{"minLength":1,"type":"string"}},"required":["query"],"type":"object"}"#
        )
    );
    let g = get("get");
    assert_eq!(g["properties"]["ids"]["minItems"], 1);
    assert_eq!(g["properties"]["ids"]["items"]["type"], "string");
    assert_eq!(g["properties"]["offset"]["minimum"], 0);
    assert_eq!(g["properties"]["limit"]["minimum"], 1);
    assert_eq!(g["properties"]["find"]["minLength"], 1);
    assert_eq!(g["properties"]["source"]["type"], "boolean");
    assert_eq!(g["required"], json!(["ids"]));
    assert_eq!(
        get("snapshot"),
        parsed(r#"{"properties":{},"type":"object"}"#)
    );
    assert_eq!(
        get("write")["required"],
        json!(["bundle", "path", "content"])
    );
    assert_eq!(get("delete")["required"], json!(["bundle", "path"]));
    let t = get("transact");
    let ch = &t["properties"]["changes"];
    assert_eq!(
        (ch["minItems"].clone(), ch["maxItems"].clone()),
        (json!(1), json!(1000))
    );
    let one = ch["items"]["oneOf"].as_array().cloned().unwrap_or_default();
    assert_eq!(one.len(), 2);
    assert_eq!(one[0]["properties"]["operation"]["const"], "write");
    assert_eq!(one[0]["additionalProperties"], false);
    assert_eq!(one[0]["properties"]["replaces"]["pattern"], HEX64_PATTERN);
    assert_eq!(one[1]["properties"]["operation"]["const"], "delete");
    assert_eq!(
        one[1]["required"],
        json!(["operation", "bundle", "path", "replaces"])
    );
    assert!(one[1]["properties"].get("content").is_none());
    assert_eq!(
        t["properties"]["expectedRevision"]["pattern"],
        HEX64_PATTERN
    );
    assert_eq!(t["required"], json!(["changes"]));
    let h = get("history");
    assert_eq!(h["properties"]["before"]["maxLength"], 512);
    assert_eq!(
        (
            h["properties"]["limit"]["minimum"].clone(),
            h["properties"]["limit"]["maximum"].clone()
        ),
        (json!(1), json!(100))
    );
    assert_eq!(
        get("restore")["required"],
        json!(["revision", "expectedRevision"])
    );
}

#[test]
fn descriptions_carry_agent_md_4_once() {
    // (tool, phrase that stands for one point): each must occur exactly once in the tool's
    // texts. The quoted phrases of §4 are among them, verbatim.
    let points: &[(&str, &[&str])] = &[
        (
            "manifest",
            &[
                "index of all knowledge",
                "one TSV row per concept (id, bundle, kind, status, grain, one-line summary, outgoing links)",
                "before anything else",
                "whenever you need to know what exists",
                "fetch them with `get`",
                "Never guess an id",
                "(deprecated, draft, stale)",
                "prefer current ones",
                "say so when you rely on one that is not",
                "Only this bundle's rows",
                "On a large tenant, narrow by bundle or use `search`",
            ],
        ),
        (
            "search",
            &[
                "returns manifest rows, never bodies",
                "instead of the manifest on a large tenant",
                "do not know which concept holds the answer",
                "the manifest's columns plus `pos`",
                "cluster densest",
                "(`-` when no exact word position was found)",
                "`{offset: pos, limit: 2000}`",
                "without `section`",
                "with `find` when you have a literal phrase",
                "one link away from the top hits",
                "Restricts the ranking",
                "before expansion (default 8)",
            ],
        ),
        (
            "get",
            &[
                "by manifest id",
                "one call",
                "a batch is one round trip",
                "heading-derived section",
                "lower-case with underscores",
                "subsections included",
                "answers with its section names",
                "default 15,000",
                "`@@ id [start..end of total]`",
                "continue with `offset`",
                "offsets are then within it",
                "where does it say X",
                "literal, case-insensitive phrase",
                "window around the first match",
                "first 20 matches and their total count",
                "whole stored document, frontmatter included",
                "framed with its path and hash",
                "`@@ not found`",
            ],
        ),
        ("snapshot", &["snapshot digest", "changed"]),
        (
            "write",
            &[
                "creates or replaces one document and recompiles",
                "visible at once",
                "whole Markdown document, not a patch",
                "at least `type`",
                "`.md`",
                "`tables/orders.md`",
                "creates the bundle",
                "a write to an empty tenant starts it",
                "Omit to create",
                "you need not know the hash",
                "the refusal gives the hash to retry with",
                "changed, `get` it again before retrying",
                "`source: true`",
                "Ids derive from paths",
                "names the new id and every renamed one",
            ],
        ),
        (
            "delete",
            &[
                "removes one document and recompiles",
                "last document removes the bundle",
                "calling without it returns the hash to retry with",
                "as for `write`",
            ],
        ),
        (
            "transact",
            &[
                "Up to 1,000 creates, replaces and deletes in one durable revision",
                "full hash",
                "Guards against any concurrent change",
                "No changes commit if any precondition fails",
            ],
        ),
        (
            "history",
            &["bounded page of committed revisions, newest first", "Pass `next` as `before`"],
        ),
        (
            "restore",
            &[
                "new revision holding a retained older state",
                "`expectedRevision` must equal the current head",
                "History is never rewritten",
            ],
        ),
    ];
    for (name, phrases) in points {
        let t = tool(name).map(texts).unwrap_or_default();
        for p in *phrases {
            assert_eq!(count(&t, p), 1, "{name}: {p:?} must occur once in {t:?}");
        }
    }
    // The snapshot description promises no count (agent.md §4).
    let snap = tool("snapshot").map(texts).unwrap_or_default();
    assert_eq!(count(&snap, "count"), 0);
    // delete points to write's rule instead of restating it.
    let del = tool("delete").map(texts).unwrap_or_default();
    assert_eq!(count(&del, "omit"), 0);
}

#[test]
fn description_with_advice() {
    let m = tool("manifest").expect("manifest");
    let d = m.description_with(Some(EMPTY_ADVICE));
    assert_eq!(
        d,
        format!("{}\n\nThis tenant holds no concepts yet.", m.description)
    );
    assert_eq!(m.description_with(None), m.description);
    let s = tool("search").expect("search");
    assert_eq!(s.description_with(Some("x")), s.description);
    let e = m.list_entry(Some("A."));
    assert_eq!(e["name"], "manifest");
    assert_eq!(e["title"], "Read the knowledge manifest");
    assert!(e["description"]
        .as_str()
        .unwrap_or_default()
        .ends_with("\n\nA."));
    assert_eq!(e["inputSchema"], m.input_schema());
}

fn call(name: &str, args: Value) -> Result<ToolCall, String> {
    parse_call(name, Some(&args))
}

#[test]
fn validation_names_the_argument() {
    let cases: &[(&str, Value, &str)] = &[
        ("nope", json!({}), "unknown tool \"nope\""),
        ("search", json!([]), "arguments must be an object"),
        ("search", json!({}), "query is required"),
        (
            "search",
            json!({"query": ""}),
            "query must be a non-empty string",
        ),
        ("search", json!({"query": 3}), "query must be a string"),
        (
            "search",
            json!({"query": "a", "k": 0}),
            "k must be an integer from 1 to 50",
        ),
        (
            "search",
            json!({"query": "a", "k": 51}),
            "k must be an integer from 1 to 50",
        ),
        (
            "search",
            json!({"query": "a", "k": 2.5}),
            "k must be an integer from 1 to 50",
        ),
        (
            "search",
            json!({"query": "a", "k": "3"}),
            "k must be an integer from 1 to 50",
        ),
        (
            "search",
            json!({"query": "a", "k": null}),
            "k must be an integer from 1 to 50",
        ),
        (
            "search",
            json!({"query": "a", "bundle": 1}),
            "bundle must be a string",
        ),
        ("get", json!({}), "ids is required"),
        (
            "get",
            json!({"ids": []}),
            "ids must be a non-empty array of strings",
        ),
        (
            "get",
            json!({"ids": "a"}),
            "ids must be a non-empty array of strings",
        ),
        (
            "get",
            json!({"ids": ["a", 1]}),
            "ids must be a non-empty array of strings",
        ),
        (
            "get",
            json!({"ids": ["a"], "offset": -1}),
            "offset must be a non-negative integer",
        ),
        (
            "get",
            json!({"ids": ["a"], "limit": 0}),
            "limit must be a positive integer",
        ),
        (
            "get",
            json!({"ids": ["a"], "find": ""}),
            "find must be a non-empty string",
        ),
        (
            "get",
            json!({"ids": ["a"], "source": "yes"}),
            "source must be true or false",
        ),
        (
            "get",
            json!({"ids": ["a"], "section": 2}),
            "section must be a string",
        ),
        (
            "write",
            json!({"bundle": "b", "path": "p.md"}),
            "content is required",
        ),
        (
            "write",
            json!({"bundle": "b", "path": "p.md", "content": "x", "replaces": 7}),
            "replaces must be a string",
        ),
        ("delete", json!({"bundle": "b"}), "path is required"),
        (
            "history",
            json!({"limit": 101}),
            "limit must be an integer from 1 to 100",
        ),
        (
            "history",
            json!({"before": "x".repeat(513)}),
            "before must be a string of at most 512 characters",
        ),
        (
            "restore",
            json!({"revision": H1}),
            "expectedRevision is required",
        ),
        (
            "restore",
            json!({"revision": "ABC", "expectedRevision": H1}),
            "revision: invalid hash \"ABC\": expected 64 lowercase hex characters",
        ),
        (
            "restore",
            json!({"revision": 42, "expectedRevision": H1}),
            "revision: invalid hash \"42\": expected 64 lowercase hex characters",
        ),
        ("transact", json!({}), "changes is required"),
        (
            "transact",
            json!({"changes": []}),
            "changes must be an array of 1 to 1000 changes",
        ),
        (
            "transact",
            json!({"changes": [1]}),
            "changes[0] must be an object",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "move", "bundle": "b", "path": "p.md"}]}),
            "changes[0].operation must be \"write\" or \"delete\"",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": "p.md", "content": "x", "tenant": "t"}]}),
            "changes[0] has an unexpected key \"tenant\" for a write",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": "p.md", "content": "x"}, {"operation": "delete", "bundle": "b", "path": "q.md", "content": "x"}]}),
            "changes[1] has an unexpected key \"content\" for a delete",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "delete", "bundle": "b", "path": "q.md"}]}),
            "changes[0].replaces is required for a delete",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "path": "q.md", "content": ""}]}),
            "changes[0].bundle is required",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": 1, "content": ""}]}),
            "changes[0].path must be a string",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": "q.md"}]}),
            "changes[0].content is required",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": "q.md", "content": "", "replaces": "zz"}]}),
            "changes[0].replaces: invalid hash \"zz\": expected 64 lowercase hex characters",
        ),
        (
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": "q.md", "content": ""}], "expectedRevision": "x"}),
            "expectedRevision: invalid hash \"x\": expected 64 lowercase hex characters",
        ),
    ];
    for (name, args, want) in cases {
        assert_eq!(
            call(name, args.clone()),
            Err(want.to_string()),
            "{name} {args}"
        );
    }
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"operation": "write", "bundle": "b", "path": format!("{i}.md"), "content": ""}))
        .collect();
    assert_eq!(
        call("transact", json!({ "changes": many })),
        Err("changes must be an array of 1 to 1000 changes".into())
    );
}

#[test]
fn validation_accepts_and_defaults() {
    assert_eq!(parse_call("snapshot", None), Ok(ToolCall::Snapshot));
    assert_eq!(
        call("manifest", json!({"unknown": 1})),
        Ok(ToolCall::Manifest { bundle: None })
    );
    assert_eq!(
        call(
            "search",
            json!({"query": "a b", "k": 50.0, "bundle": "ops"})
        ),
        Ok(ToolCall::Search {
            query: "a b".into(),
            k: 50,
            bundle: Some("ops".into())
        })
    );
    assert_eq!(
        call("search", json!({"query": "q"})),
        Ok(ToolCall::Search {
            query: "q".into(),
            k: 8,
            bundle: None
        })
    );
    // The MCP default cap applies only when neither limit nor find is given.
    assert_eq!(
        call("get", json!({"ids": ["a", "b"]})),
        Ok(ToolCall::Get {
            ids: vec!["a".into(), "b".into()],
            section: None,
            offset: None,
            limit: Some(15_000),
            find: None,
            source: false
        })
    );
    assert_eq!(
        call(
            "get",
            json!({"ids": ["a"], "find": "x", "source": true, "offset": 0})
        ),
        Ok(ToolCall::Get {
            ids: vec!["a".into()],
            section: None,
            offset: Some(0),
            limit: None,
            find: Some("x".into()),
            source: true
        })
    );
    // An explicit limit is honoured, larger ones included; huge offsets saturate.
    assert_eq!(
        call(
            "get",
            json!({"ids": ["a"], "limit": 100000, "offset": 1e300, "section": "s"})
        ),
        Ok(ToolCall::Get {
            ids: vec!["a".into()],
            section: Some("s".into()),
            offset: Some(usize::MAX),
            limit: Some(100_000),
            find: None,
            source: false
        })
    );
    // write passes replaces on unchecked: the engine words a malformed hash.
    assert_eq!(
        call(
            "write",
            json!({"bundle": "b", "path": "p.md", "content": "", "replaces": "x"})
        ),
        Ok(ToolCall::Write {
            bundle: "b".into(),
            path: "p.md".into(),
            content: "".into(),
            replaces: Some("x".into())
        })
    );
    assert_eq!(
        call("delete", json!({"bundle": "b", "path": "p.md"})),
        Ok(ToolCall::Delete {
            bundle: "b".into(),
            path: "p.md".into(),
            replaces: None
        })
    );
    assert_eq!(
        call(
            "transact",
            json!({"changes": [
                {"operation": "write", "bundle": "b", "path": "p.md", "content": "x"},
                {"operation": "delete", "bundle": "b", "path": "q.md", "replaces": H2}
            ], "expectedRevision": H1})
        ),
        Ok(ToolCall::Transact {
            changes: vec![
                ChangeArg {
                    write: true,
                    bundle: "b".into(),
                    path: "p.md".into(),
                    content: Some("x".into()),
                    replaces: None
                },
                ChangeArg {
                    write: false,
                    bundle: "b".into(),
                    path: "q.md".into(),
                    content: None,
                    replaces: Some(H2.into())
                }
            ],
            expected_revision: Some(H1.into()),
            request: transaction(
                &[
                    ChangeArg {
                        write: true,
                        bundle: "b".into(),
                        path: "p.md".into(),
                        content: Some("x".into()),
                        replaces: None
                    },
                    ChangeArg {
                        write: false,
                        bundle: "b".into(),
                        path: "q.md".into(),
                        content: None,
                        replaces: Some(H2.into())
                    }
                ],
                Some(H1)
            ),
        })
    );
    assert_eq!(
        call("history", json!({"before": "abc", "limit": 100})),
        Ok(ToolCall::History {
            before: Some("abc".into()),
            limit: Some(100)
        })
    );
    assert_eq!(
        call("restore", json!({"revision": H1, "expectedRevision": H2})),
        Ok(ToolCall::Restore {
            revision: H1.into(),
            expected_revision: H2.into()
        })
    );
}

#[test]
fn advice_label_examples() {
    assert_eq!(advice_label(20_549), "21,000");
    assert_eq!(advice_label(1_234), "1,200");
    assert_eq!(advice_label(7), "7");
    assert_eq!(advice_label(0), "0");
    assert_eq!(advice_label(99), "99");
    assert_eq!(advice_label(150), "150");
    assert_eq!(advice_label(155), "160");
    assert_eq!(advice_label(995), "1,000");
    assert_eq!(advice_label(1_250), "1,300");
    assert_eq!(advice_label(1_249_999), "1,200,000");
}

#[test]
fn advice_sentences() {
    assert_eq!(
        advice("# tenant: t\n# bundles:\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n"),
        "This tenant holds no concepts yet."
    );
    let head = "# tenant: t\n# bundles: b\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n";
    // Two rows of 29 units each: small, so reading it whole is cheaper.
    let small = format!(
        "{head}a\tb\ttable\t-\t-\tOrders placed.\t-\nc\tb\ttable\t-\t-\tOrders placed.\t-\n"
    );
    let len = small.len();
    assert_eq!(
        advice(&small),
        format!(
            "This tenant's manifest measures ~{} tokens; reading it whole is cheaper than searching.",
            len.div_ceil(4)
        )
    );
    // 2,000 equal rows: resultChars = 120 + 43 + 30 × 16 = 643; 20 × 643 = 12,860 < len.
    let mut big = head.to_string();
    for i in 0..2000 {
        big.push_str(&format!("c{i:04}\tb\tt\t-\t-\tSummary text.\t-\n"));
    }
    let len = big.len();
    assert!(len > 12_860);
    assert_eq!(
        advice(&big),
        format!(
            "This tenant's manifest measures ~{} tokens; prefer \"search\" over reading it whole.",
            advice_label(len.div_ceil(4))
        )
    );
    // UTF-16 lengths: a row of non-BMP characters counts two units per character.
    let wide = format!("{head}\u{1F600}\tb\tt\t-\t-\t-\t-\n");
    let units = crate::text::utf16_len(&wide);
    assert_eq!(units, wide.chars().count() + 1);
    assert!(advice(&wide).contains(&format!("~{} tokens", units.div_ceil(4))));
}

fn diag(path: &str, message: &str) -> DiagnosticInfo {
    DiagnosticInfo {
        level: "warn".into(),
        bundle: "sales".into(),
        path: path.into(),
        message: message.into(),
    }
}

#[test]
fn write_success_text() {
    let renamed = vec![
        Renamed {
            from: "orders".into(),
            to: "sales/orders".into(),
        },
        Renamed {
            from: "x".into(),
            to: "y".into(),
        },
    ];
    let r = WriteResult {
        hash: H1.into(),
        revision: H3.into(),
        snapshot: H2.into(),
        concepts: 1,
        id: Some("sales/orders".into()),
        renamed,
        diagnostics: vec![diag(
            "tables/orders.md",
            "missing required frontmatter field \"type\"",
        )],
    };
    assert_eq!(
        write_success("sales", "tables/orders.md", &r),
        format!(
            "wrote sales/tables/orders.md (hash {H1}), snapshot {H2}, 1 concepts\nid sales/orders\nrenamed orders sales/orders\nrenamed x y\nwarn tables/orders.md: missing required frontmatter field \"type\""
        )
    );
    let nav = WriteResult {
        id: None,
        renamed: Vec::new(),
        diagnostics: Vec::new(),
        ..r
    };
    assert_eq!(
        write_success("sales", "index.md", &nav),
        format!(
            "wrote sales/index.md (hash {H1}), snapshot {H2}, 1 concepts\nnote: index.md and log.md are navigation documents: stored, never listed or searched"
        )
    );
}

fn conflict(reason: ConflictReason, what: &str) -> Error {
    Error::Conflict {
        message: format!("{what}: re-read the concept and retry with its new hash"),
        reason: Some(reason),
        changes: Vec::new(),
    }
}

#[test]
fn write_failure_texts() {
    let exists = conflict(ConflictReason::Exists, "concept already exists");
    assert_eq!(
        write_failure(&exists, Some(H1)),
        format!("concept already exists: re-read the concept and retry with its new hash\nretry with replaces: \"{H1}\"")
    );
    let changed = conflict(ConflictReason::Changed, "concept changed since it was read");
    assert_eq!(
        write_failure(&changed, Some(H2)),
        format!("concept changed since it was read: re-read the concept and retry with its new hash\nretry with replaces: \"{H2}\"")
    );
    let missing = conflict(ConflictReason::Missing, "concept does not exist");
    assert_eq!(
        write_failure(&missing, None),
        "concept does not exist: re-read the concept and retry with its new hash\nomit replaces to create it"
    );
    // Any other failure gets the retry line when the document exists, whatever the message.
    let invalid = Error::Invalid("invalid hash \"x\": expected 64 lowercase hex characters".into());
    assert_eq!(
        write_failure(&invalid, Some(H3)),
        format!("invalid hash \"x\": expected 64 lowercase hex characters\nretry with replaces: \"{H3}\"")
    );
    assert_eq!(
        write_failure(&Error::Store("disk full".into()), None),
        "disk full"
    );
    let ind = Error::IndeterminateCommit {
        revision: H2.into(),
    };
    assert_eq!(
        write_failure(&ind, Some(H1)),
        format!("commit outcome is indeterminate; inspect revision {H2} before retrying\nget the concept and check whether it holds your content before writing again")
    );
    assert_eq!(
        delete_failure(&ind, Some(H1)),
        format!("commit outcome is indeterminate; inspect revision {H2} before retrying\nget the concept and check whether it is gone before deleting again")
    );
    assert_eq!(
        delete_failure(&changed, Some(H3)),
        format!("concept changed since it was read: re-read the concept and retry with its new hash\nretry with replaces: \"{H3}\"")
    );
    assert_eq!(
        delete_failure(&missing, None),
        "concept does not exist: re-read the concept and retry with its new hash"
    );
}

#[test]
fn delete_texts() {
    assert_eq!(delete_needs_hash(None), "concept does not exist");
    assert_eq!(
        delete_needs_hash(Some(H1)),
        format!(
            "deleting needs the hash of the version being removed\nretry with replaces: \"{H1}\""
        )
    );
    let r = DeleteResult {
        revision: H1.into(),
        snapshot: H2.into(),
        concepts: 0,
        renamed: Vec::new(),
    };
    assert_eq!(
        delete_success("sales", "a.md", &r),
        format!("deleted sales/a.md, snapshot {H2}, 0 concepts")
    );
    let r = DeleteResult {
        concepts: 3,
        renamed: vec![Renamed {
            from: "sales/orders".into(),
            to: "orders".into(),
        }],
        ..r
    };
    assert_eq!(
        delete_success("ops", "orders.md", &r),
        format!("deleted ops/orders.md, snapshot {H2}, 3 concepts\nrenamed sales/orders orders")
    );
}

#[test]
fn revision_answer_texts() {
    let all = vec![
        diag(
            "a.md",
            "no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF",
        ),
        diag("b.md", "unresolved link \"x\""),
    ];
    let r = RevisionResult {
        revision: H1.into(),
        snapshot: H2.into(),
        concepts: 4,
        bundles: vec!["ops".into(), "sa\"les".into()],
        diagnostics: all.clone(),
    };
    let mine = request_diagnostics(&r.diagnostics, &[("SALES", "b.md"), ("ops", "z.md")]);
    assert_eq!(mine, vec![all[1].clone()]);
    assert_eq!(
        revision_answer(&r, &mine),
        format!(
            r#"{{"revision":"{H1}","snapshot":"{H2}","concepts":4,"bundles":["ops","sa\"les"],"diagnostics":[{{"level":"warn","bundle":"sales","path":"b.md","message":"unresolved link \"x\""}}],"diagnosticCount":2}}"#
        )
    );
    assert_eq!(
        revision_answer(&r, &[]),
        format!(
            r#"{{"revision":"{H1}","snapshot":"{H2}","concepts":4,"bundles":["ops","sa\"les"],"diagnostics":[],"diagnosticCount":2}}"#
        )
    );
}

#[test]
fn transact_failure_texts() {
    let err = Error::Conflict {
        message:
            "concept changed since it was read: re-read the concept and retry with its new hash"
                .into(),
        reason: None,
        changes: vec![
            ChangeFailure {
                index: 0,
                reason: ConflictReason::Changed,
            },
            ChangeFailure {
                index: 3,
                reason: ConflictReason::Missing,
            },
        ],
    };
    let tied = vec![
        TiedChange {
            index: 0,
            target: Some(("inbox".into(), "a.md".into())),
            retry_hash: Some(H1.into()),
        },
        TiedChange {
            index: 3,
            target: Some(("inbox".into(), "b.md".into())),
            retry_hash: None,
        },
    ];
    assert_eq!(
        transact_failure(&err, &tied),
        format!("concept changed since it was read: re-read the concept and retry with its new hash\nchanges[0]: inbox/a.md\nretry with replaces: \"{H1}\"\nchanges[3]: inbox/b.md")
    );
    let invalid = Error::Invalid(
        "document change must specify a bundle and path within the connected tenant".into(),
    );
    let one = vec![TiedChange {
        index: 2,
        target: None,
        retry_hash: None,
    }];
    assert_eq!(
        transact_failure(&invalid, &one),
        "document change must specify a bundle and path within the connected tenant\nchanges[2]"
    );
    let ind = Error::IndeterminateCommit {
        revision: H3.into(),
    };
    assert_eq!(
        transact_failure(&ind, &tied),
        format!("commit outcome is indeterminate; inspect revision {H3} before retrying")
    );
}

#[test]
fn tied_changes_of_a_failure() {
    let changes = vec![
        ChangeArg {
            write: true,
            bundle: "inbox".into(),
            path: "a.md".into(),
            content: Some("x".into()),
            replaces: None,
        },
        ChangeArg {
            write: false,
            bundle: "inbox".into(),
            path: "gone.md".into(),
            content: None,
            replaces: Some(H2.into()),
        },
    ];
    let lookup = |b: &str, p: &str| (b == "inbox" && p == "a.md").then(|| H1.to_string());
    let err = Error::Conflict {
        message: "concept already exists: re-read the concept and retry with its new hash".into(),
        reason: None,
        changes: vec![
            ChangeFailure {
                index: 0,
                reason: ConflictReason::Exists,
            },
            ChangeFailure {
                index: 1,
                reason: ConflictReason::Missing,
            },
        ],
    };
    let tied = tied_changes(&err, &changes, lookup);
    assert_eq!(
        transact_failure(&err, &tied),
        format!("concept already exists: re-read the concept and retry with its new hash\nchanges[0]: inbox/a.md\nretry with replaces: \"{H1}\"\nchanges[1]: inbox/gone.md")
    );
    let dup = Error::InvalidChange {
        message: "transaction contains duplicate document targets".into(),
        index: 1,
    };
    assert_eq!(
        transact_failure(&dup, &tied_changes(&dup, &changes, lookup)),
        "transaction contains duplicate document targets\nchanges[1]: inbox/gone.md"
    );
    let other = Error::conflict("database changed: re-read the revision and document hashes");
    assert_eq!(tied_changes(&other, &changes, lookup), Vec::new());
}

/// The old path: the validated tool changes as JSON for the engine's parser.
fn json_request(changes: &[ChangeArg], expected: Option<&str>) -> Value {
    let list: Vec<Value> = changes
        .iter()
        .map(|c| {
            let mut o = serde_json::Map::new();
            o.insert(
                "operation".into(),
                (if c.write { "write" } else { "delete" }).into(),
            );
            o.insert("bundle".into(), c.bundle.clone().into());
            o.insert("path".into(), c.path.clone().into());
            if let Some(crate::engine::Content::Text(t)) = &c.content {
                o.insert("content".into(), t.to_string().into());
            }
            if let Some(h) = &c.replaces {
                o.insert("replaces".into(), h.clone().into());
            }
            Value::Object(o)
        })
        .collect();
    let mut req = serde_json::Map::new();
    req.insert("changes".into(), list.into());
    if let Some(e) = expected {
        req.insert("expectedRevision".into(), e.into());
    }
    Value::Object(req)
}

/// The tool's own conversion to the engine's request ([`transaction`]) equals the engine's
/// parser on the same changes as JSON, refusals included (texts and the change they name).
#[test]
fn tool_transactions_equal_the_engine_parser() {
    let w = |b: &str, p: &str, c: &str, r: Option<&str>| ChangeArg {
        write: true,
        bundle: b.into(),
        path: p.into(),
        content: Some(c.into()),
        replaces: r.map(str::to_string),
    };
    let d = |b: &str, p: &str, r: &str| ChangeArg {
        write: false,
        bundle: b.into(),
        path: p.into(),
        content: None,
        replaces: Some(r.into()),
    };
    let big = "x".repeat(9 * 1024 * 1024);
    let cases: Vec<(Vec<ChangeArg>, Option<&str>)> = vec![
        (vec![w("b", "a.md", "x", None)], None),
        (
            vec![w("b", "a.md", "x", Some(H1)), d("b", "c.md", H2)],
            Some(H3),
        ),
        (vec![w("b", "../a.md", "x", None)], None),
        (vec![w("bad bundle!", "a.md", "x", None)], None),
        (vec![w("b", "a.txt", "x", None)], None),
        (
            vec![w("b", "a.md", "x", None), w("B", "A.md", "y", None)],
            None,
        ),
        (
            vec![d("b", "Note.md", H1), w("b", "note.md", "y", None)],
            None,
        ),
        (
            vec![w("b", "a.md", &big, None), w("b", "b.md", &big, None)],
            None,
        ),
        (
            vec![w("b", "ok.md", "x", None), w("b", "a\u{0}.md", "x", None)],
            None,
        ),
    ];
    for (changes, expected) in cases {
        let want = crate::engine::parse_transaction(&json_request(&changes, expected));
        assert_eq!(transaction(&changes, expected), want, "{:?}", changes.len());
    }
}

#[test]
fn annotations_tell_reads_from_changes() {
    for t in &TOOLS {
        let a = t.list_entry(None)["annotations"].clone();
        assert_eq!(a["idempotentHint"], true, "{}", t.name);
        if t.writes {
            assert!(a.get("readOnlyHint").is_none(), "{}", t.name);
            let destructive = matches!(t.name, "delete" | "restore" | "transact");
            assert_eq!(a["destructiveHint"], destructive, "{}", t.name);
        } else {
            assert_eq!(a["readOnlyHint"], true, "{}", t.name);
            assert!(a.get("destructiveHint").is_none(), "{}", t.name);
        }
    }
}

#[test]
fn ill_formed_arguments_are_named() {
    use crate::engine::request::Content;
    use crate::wire::Step;
    let key = |k: &str| Step::Key(k.into());
    let with = |name: &str, args: serde_json::Value, paths: Vec<crate::wire::Path>| {
        parse_call_with(name, Some(&args), &paths)
    };
    // Document content goes to the engine, which refuses it in its order of checks.
    match with(
        "write",
        json!({"bundle": "b", "path": "p.md", "content": "a\u{fffd}"}),
        vec![vec![key("content")]],
    ) {
        Ok(ToolCall::Write { content, .. }) => assert_eq!(content, Content::IllFormed),
        other => panic!("{other:?}"),
    }
    match with(
        "transact",
        json!({"changes": [
            {"operation": "write", "bundle": "b", "path": "p.md", "content": "x"},
            {"operation": "write", "bundle": "b", "path": "q.md", "content": "\u{fffd}"}
        ]}),
        vec![vec![key("changes"), Step::Index(1), key("content")]],
    ) {
        Ok(ToolCall::Transact { request, .. }) => assert_eq!(
            request.map(|_| ()),
            Err(crate::Error::InvalidChange {
                message: "source must contain well-formed Unicode".into(),
                index: 1
            })
        ),
        other => panic!("{other:?}"),
    }
    // Any other argument is refused here, by name.
    assert_eq!(
        with(
            "search",
            json!({"query": "\u{fffd}"}),
            vec![vec![key("query")]]
        ),
        Err("query must contain well-formed Unicode".into())
    );
    assert_eq!(
        with(
            "get",
            json!({"ids": ["a", "\u{fffd}"]}),
            vec![vec![key("ids"), Step::Index(1)]]
        ),
        Err("ids[1] must contain well-formed Unicode".into())
    );
    assert_eq!(
        with(
            "transact",
            json!({"changes": [{"operation": "write", "bundle": "b", "path": "\u{fffd}.md", "content": "x"}]}),
            vec![vec![key("changes"), Step::Index(0), key("path")]]
        ),
        Err("changes[0].path must contain well-formed Unicode".into())
    );
    assert_eq!(
        with("snapshot", json!({}), vec![vec![]]),
        Err("arguments must contain well-formed Unicode".into())
    );
    // The tool is looked up first.
    assert_eq!(
        with("nope", json!({}), vec![vec![key("x")]]),
        Err("unknown tool \"nope\"".into())
    );
}

#[test]
fn advice_measured_row_by_row_is_the_whole_manifests() {
    let empty = crate::testutil::model(&[]);
    let m = crate::testutil::model(&[
        (
            "b1",
            "alpha.md",
            "---\ntype: Table\ntitle: Gamma\nstale_after: 2020-01-01\n---\nSee [b](beta.md).\n",
        ),
        (
            "b1",
            "beta.md",
            "---\ntype: Table\n---\nEta \u{1F600} only.\n",
        ),
        ("b2", "gamma.md", "No frontmatter, wide: \u{1F600}.\n"),
    ]);
    for (model, today) in [
        (&empty, "2026-01-01"),
        (&m, "2019-01-01"),
        (&m, "2026-01-01"),
    ] {
        let whole = crate::manifest::manifest(model, "t", None, today).unwrap();
        assert_eq!(crate::manifest::advice(model, "t", today), advice(&whole));
    }
}
