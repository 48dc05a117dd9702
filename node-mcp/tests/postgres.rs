//! The binary on a PostgreSQL database (docs/postgres.md): every data verb takes a
//! `postgres://` DSN in place of `--data` and answers byte for byte as on files, the MCP
//! server takes one as its DSN, and no output ever shows the password. A commit whose
//! connection is cut mid-way is reported indeterminate, never with a line to retry.

mod common;

use common::{bin, run, text, TempDir};
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/okf-samples")
}

/// Runs the binary; asserts success and that the password is not in its output.
fn ok(args: &[&str], stdin: &str, password: &str) -> (String, String) {
    let d = TempDir::new("pg-env");
    let (code, out, err) = text(&run(d.path(), args, stdin.as_bytes()));
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(
        !out.contains(password) && !err.contains(password),
        "{args:?} printed the password"
    );
    (out, err)
}

fn password(dsn: &str) -> String {
    let userinfo = dsn.split_once("://").unwrap().1.split_once('@').unwrap().0;
    userinfo.split_once(':').unwrap().1.to_string()
}

#[test]
fn data_verbs_on_postgres_answer_as_on_files() {
    let server = langonrock_postgres::test_server::server();
    let pg = server.dsn_with(&format!("schema=cli_{}", std::process::id()));
    let secret = password(&pg);
    let d = TempDir::new("pg-cli");
    let files = d.path().join("data").display().to_string();
    let samples = samples().display().to_string();
    let mut answers = Vec::new();
    for root in [files.as_str(), pg.as_str()] {
        let with = |args: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            v.extend(["--data".into(), root.into(), "--tenant".into(), "t".into()]);
            v
        };
        let call = |args: &[&str], stdin: &str| {
            let v = with(args);
            let refs: Vec<&str> = v.iter().map(String::as_str).collect();
            ok(&refs, stdin, &secret)
        };
        let mut seen = Vec::new();
        seen.push(call(&["import", &samples], "").1);
        for args in [
            &["snapshot"][..],
            &["manifest"],
            &["manifest", "--bundle", "ga4"],
            &["search", "orders", "revenue"],
            &["source"],
            &["get", "orders", "gross-margin"],
        ] {
            seen.push(call(args, "").0);
        }
        let (_, wrote) = call(
            &["write", "notes", "new.md", "--create"],
            "---\ntype: note\n---\nNew.\n",
        );
        seen.push(wrote);
        seen.push(call(&["read", "notes", "new.md"], "").0);
        seen.push(call(&["delete", "notes", "new.md", "--force"], "").1);
        let history = call(&["history"], "").0;
        let page: serde_json::Value = serde_json::from_str(&history).unwrap();
        seen.push(page["revisions"].as_array().unwrap().len().to_string());
        let (out, _) = call(&["verify"], "");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["ok"], true, "{out}");
        seen.push(call(&["gc", "--dry-run"], "").1);
        // Export and import into another tenant: the same snapshot.
        let out_dir = d.path().join(format!("export-{}", answers.len()));
        let out_dir = out_dir.display().to_string();
        seen.push(call(&["export", &out_dir], "").1);
        let v = ["import", &out_dir, "--data", root, "--tenant", "t2"];
        ok(&v, "", &secret);
        let (snap2, _) = ok(&["snapshot", "--data", root, "--tenant", "t2"], "", &secret);
        assert_eq!(snap2, seen[1]);
        // verify and gc without a tenant act on every tenant.
        let (out, _) = ok(&["verify", "--data", root], "", &secret);
        assert_eq!(out.lines().count(), 2, "{out}");
        let (_, err) = ok(
            &["gc", "--keep", "1", "--grace", "0", "--data", root],
            "",
            &secret,
        );
        assert!(
            err.starts_with("t: kept 1 revision, dropped 2 from history; removed 2 revisions and "),
            "{err}"
        );
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1]);
    // The tenant in the DSN stands for --tenant.
    let (snap, _) = ok(
        &["snapshot", "--data", &format!("{pg}&tenant=t")],
        "",
        &secret,
    );
    assert_eq!(snap, answers[1][1]);
    // `query <postgres dsn> <verb>` prints what the local verb prints.
    let (queried, _) = ok(
        &["query", &format!("{pg}&tenant=t"), "snapshot"],
        "",
        &secret,
    );
    assert_eq!(queried, answers[1][1]);
}

#[test]
fn mcp_over_postgres_and_bad_input() {
    let server = langonrock_postgres::test_server::server();
    let pg = server.dsn_with(&format!("schema=mcp_{}&tenant=acme", std::process::id()));
    let secret = password(&pg);
    // The banner hides the password (stdin closed: the server ends at once).
    let d = TempDir::new("pg-bad");
    let (_, _, err) = text(&run(d.path(), &["mcp", &pg], b""));
    assert!(!err.contains(&secret));
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("langonrock mcp serving postgres://langonrock:***@127.0.0.1:")
            && first.ends_with(" over stdio"),
        "{first}"
    );
    // A session writes and searches through the database.
    let mut rpc = common::Rpc::start(&pg, &[]);
    let (t, err) = rpc.call(
        "write",
        serde_json::json!({"bundle": "kb", "path": "orders.md", "content": "---\ntype: table\n---\nOrders placed online.\n"}),
    );
    assert!(!err, "{t}");
    let (t, err) = rpc.call("search", serde_json::json!({"query": "orders"}));
    assert!(!err && t.contains("orders"), "{t}");
    rpc.kill();
    // A DSN without a tenant, for mcp.
    let no_tenant = server.dsn_with("schema=x");
    let (code, _, err) = text(&run(d.path(), &["mcp", &no_tenant], b""));
    let shown = langonrock_core::dsn::redact_dsn(&server.dsn);
    assert_eq!(
        (code, err),
        (
            1,
            format!(
                "error: dsn \"{shown}\" names no tenant: expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>\n"
            )
        )
    );
    // A wrong password: the error names the fix and not the password.
    let (head, rest) = server.dsn.split_once('@').unwrap();
    let wrong = format!("{}:not-it@{rest}", head.rsplit_once(':').unwrap().0);
    let (code, out, err) = text(&run(
        d.path(),
        &["snapshot", "--data", &wrong, "--tenant", "t"],
        b"",
    ));
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with("error: cannot log in to PostgreSQL at 127.0.0.1:")
            && err.ends_with(": check the user and password in the dsn\n")
            && !err.contains("not-it"),
        "{err}"
    );
    // A tenant id with SQL metacharacters never reaches the database.
    let (code, _, err) = text(&run(
        d.path(),
        &[
            "snapshot",
            "--data",
            &format!("{}&tenant=x'%3Bdrop", server.dsn),
        ],
        b"",
    ));
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "error: invalid tenant id \"x';drop\": expected 1-64 chars of [a-z0-9_-]\n"
        )
    );
    let _ = bin();
}

/// `langonrock mcp` reaching the database through a proxy that cuts its connection right
/// after the commit statement went out (the write lands) and instead of sending it (it
/// does not): both answers are the indeterminate outcome naming the revision, never a
/// refusal with a hash to retry with; the session goes on.
#[test]
fn mcp_write_over_a_cut_connection_is_indeterminate() {
    use langonrock_postgres::test_server::{Cut, Proxy};
    let server = langonrock_postgres::test_server::server();
    let proxy = Proxy::start(server);
    let params = format!("schema=mcp_cut_{}&tenant=acme", std::process::id());
    let mut rpc = common::Rpc::start(&proxy.dsn_with(server, &params), &[]);
    let doc = |body: &str| format!("---\ntype: note\n---\n{body}\n");
    let write = |rpc: &mut common::Rpc, body: &str, replaces: Option<String>| {
        let mut args = serde_json::json!({"bundle": "kb", "path": "a.md", "content": doc(body)});
        if let Some(h) = replaces {
            args["replaces"] = serde_json::Value::String(h);
        }
        rpc.call("write", args)
    };
    let hash = |rpc: &mut common::Rpc| {
        let (t, err) = rpc.call("get", serde_json::json!({"ids": ["a"], "source": true}));
        assert!(!err, "{t}");
        t
    };
    let (t, err) = write(&mut rpc, "First.", None);
    assert!(!err, "{t}");
    let mut replaces = Some(langonrock_core::hash::source_hash(&doc("First.")));
    for (n, cut) in [Cut::AfterCommitSent, Cut::BeforeCommitSent]
        .into_iter()
        .enumerate()
    {
        proxy.arm(cut);
        let (t, err) = write(&mut rpc, &format!("Edit {n}."), replaces.clone());
        assert!(err, "{cut:?}: {t}");
        assert_eq!(proxy.cuts(), n as u64 + 1);
        assert!(
            t.starts_with("commit outcome is indeterminate; inspect revision ")
                && t.contains(" before retrying"),
            "{cut:?}: {t}"
        );
        assert!(!t.contains("retry with"), "{cut:?}: {t}");
        // The session reads what the database holds: the edit when it landed.
        let got = hash(&mut rpc);
        assert_eq!(
            got.contains(&format!("Edit {n}.")),
            n == 0,
            "{cut:?}: {got}"
        );
        if n == 0 {
            replaces = Some(langonrock_core::hash::source_hash(&doc("Edit 0.")));
        }
    }
    let (t, err) = write(&mut rpc, "After.", replaces);
    assert!(!err, "{t}");
    rpc.kill();
}
