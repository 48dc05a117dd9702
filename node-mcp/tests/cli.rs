//! The CLI of cli.md with the real binary: exact stdout, stderr and exit codes.

mod common;

use common::{run, text, TempDir};
use std::path::Path;

const DOC: &str = "---\ntype: table\n---\nOrders placed online.\n";
const DOC_HASH: &str = "2d65d1f371dce60a30bf1ea8b7b3d84a5b89cdb3b89c60d45e9beae0d7330425";
const CHANGED: &str = "re-read the concept and retry with its new hash";

fn ok(data: &Path, args: &[&str], stdin: &str) -> (String, String) {
    let (code, out, err) = text(&run(data, args, stdin.as_bytes()));
    assert_eq!(code, 0, "{args:?}: {err}");
    (out, err)
}

fn fails(data: &Path, args: &[&str], stdin: &[u8], want_err: &str) {
    let (code, out, err) = text(&run(data, args, stdin));
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (1, "", want_err),
        "{args:?}"
    );
}

#[test]
fn usage_version_and_argument_errors() {
    let d = TempDir::new("cli-usage");
    let (code, out, err) = text(&run(d.path(), &[], b""));
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.starts_with("usage: langonrock <command>"));
    let (out, err) = ok(d.path(), &["--help"], "");
    assert!(out.starts_with("usage: langonrock <command>") && err.is_empty());
    let (out, _) = ok(d.path(), &["-v"], "");
    assert_eq!(out, format!("langonrock {}\n", env!("CARGO_PKG_VERSION")));
    fails(
        d.path(),
        &["frob"],
        b"",
        "error: unknown command \"frob\"\n",
    );
    fails(
        d.path(),
        &["get", "--tenant", "t"],
        b"",
        "error: get requires at least one concept id\n",
    );
    fails(
        d.path(),
        &["search", "q", "--tenant", "t", "--k", "10abc"],
        b"",
        "error: --k must be a positive integer, got \"10abc\"\n",
    );
    fails(
        d.path(),
        &["manifest"],
        b"",
        "error: --tenant is required\n",
    );
    fails(
        d.path(),
        &["mcp", "okf://data/x?tenant=t"],
        b"",
        "error: invalid dsn \"okf://data/x?tenant=t\": expected okf:///absolute/path?tenant=<name>\n",
    );
    // Nothing was created by any of these.
    assert!(!d.path().join("tenants").exists());
}

#[test]
fn write_read_manifest_source_delete() {
    let d = TempDir::new("cli-docs");
    let data = d.path();
    let t = ["--tenant", "Acme"];
    let args = |a: &[&'static str]| -> Vec<&'static str> { [a, &t[..]].concat() };
    // Reading an empty tenant announces it and creates nothing.
    let (out, err) = ok(data, &args(&["manifest"]), "");
    let empty = "# tenant: acme\n# bundles:\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n";
    assert_eq!(out, empty);
    assert_eq!(err, format!("tenant \"acme\" has no revisions in {}; the first write creates it\n0 concepts, 68 bytes, ~17 tokens\n", data.display()));
    assert_eq!(empty.len(), 68);
    assert!(!data.join("tenants").exists());
    let (out, err) = ok(
        data,
        &args(&["write", "sales", "orders.md", "--create"]),
        DOC,
    );
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("", format!("wrote sales/orders.md {DOC_HASH}\n").as_str())
    );
    fails(
        data,
        &args(&["write", "sales", "orders.md", "--create"]),
        DOC.as_bytes(),
        &format!("error: sales/orders.md: concept already exists: {CHANGED}\n"),
    );
    fails(data, &args(&["write", "sales", "orders.md"]), DOC.as_bytes(),
        "error: a write needs --replaces <hash> to update, --create for a new concept, or --force to overwrite whatever is there\n");
    fails(
        data,
        &args(&["write", "sales", "bad.md", "--create"]),
        b"\xff\xfe",
        "error: sales/bad.md: source must contain valid UTF-8\n",
    );
    fails(
        data,
        &args(&["write", "sales", "../x.md", "--create"]),
        DOC.as_bytes(),
        "error: invalid path \"../x.md\": segment \"..\" starts with a dot\n",
    );
    fails(
        data,
        &args(&["write", "sales", "x.md", "--replaces", "abc"]),
        DOC.as_bytes(),
        "error: sales/x.md: invalid hash \"abc\": expected 64 lowercase hex characters\n",
    );
    let (out, err) = ok(data, &args(&["read", "SALES", "orders.md"]), "");
    assert_eq!(
        (out.as_str(), err.as_str()),
        (DOC, format!("{DOC_HASH}\n").as_str())
    );
    fails(
        data,
        &args(&["read", "sales", "nope.md"]),
        b"",
        "error: no document sales/nope.md: paths are relative to the bundle (`langonrock source` lists them)\n",
    );
    let (out, err) = ok(data, &args(&["manifest"]), "");
    let want = "# tenant: acme\n# bundles: sales\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\norders\tsales\ttable\t-\t-\tOrders placed online.\t-\n";
    assert_eq!(out, want);
    assert_eq!(
        err,
        format!(
            "1 concept, {} bytes, ~{} tokens\n",
            want.len(),
            want.len().div_ceil(4)
        )
    );
    let (out, err) = ok(data, &args(&["source"]), "");
    assert_eq!(out, format!("{DOC_HASH}\t42\tsales/orders.md\torders\n"));
    assert_eq!(err, "1 file\n");
    let (snap, err) = ok(data, &args(&["snapshot"]), "");
    assert!(snap.len() == 65 && snap.ends_with('\n') && err == "1 concept\n");
    fails(
        data,
        &args(&["delete", "sales", "orders.md"]),
        b"",
        "error: delete needs --replaces <hash> or --force\n",
    );
    let zeros = "0".repeat(64);
    fails(
        data,
        &[
            "delete",
            "sales",
            "orders.md",
            "--replaces",
            &zeros,
            "--tenant",
            "Acme",
        ],
        b"",
        &format!("error: sales/orders.md: concept changed since it was read: {CHANGED}\n"),
    );
    let (out, err) = ok(
        data,
        &[
            "delete",
            "sales",
            "orders.md",
            "--replaces",
            DOC_HASH,
            "--tenant",
            "Acme",
        ],
        "",
    );
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("", "deleted sales/orders.md\n")
    );
    let (out, _) = ok(data, &args(&["history", "--limit", "1"]), "");
    let page: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(page["revisions"].as_array().map(Vec::len), Some(1));
    assert!(page["next"].is_string() && out.ends_with("}\n"));
    let (out, _) = ok(data, &["verify"], "");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(
        (v["tenant"].as_str(), v["ok"].as_bool()),
        (Some("acme"), Some(true))
    );
    assert_eq!(v["verifiedRevisions"].as_array().map(Vec::len), Some(2));
    // Within the grace period nothing leaves the disk, and the line says what will.
    let (_, err) = ok(data, &["gc", "--dry-run", "--keep", "1"], "");
    let (head, tail) = err
        .split_once(" written within the grace period ")
        .unwrap_or_default();
    assert!(
        head.starts_with("acme: would keep 1 revision and drop 1 from history; would remove 0 revisions and 0 records from disk, free 0 bytes; ")
            && head.ends_with(" bytes)")
            && tail.starts_with("would stay until a gc after 2")
            && tail.ends_with("Z\n"),
        "{err}"
    );
    let (_, err) = ok(data, &["gc", "--keep", "1", "--grace", "0"], "");
    assert!(
        err.starts_with("acme: kept 1 revision, dropped 1 from history; removed 1 revision and ")
            && err.contains(" records from disk, freed ")
            && !err.contains("grace"),
        "{err}"
    );
    let (_, err) = ok(data, &["gc", "--keep", "1", "--grace", "0"], "");
    assert_eq!(
        err,
        "acme: kept 1 revision, dropped 0 from history; removed 0 revisions and 0 records from disk, freed 0 bytes\n"
    );
    let (out, _) = ok(data, &["verify"], "");
    assert!(out.contains("\"ok\":true"), "{out}");
}

#[test]
fn transact_and_restore() {
    let d = TempDir::new("cli-txn");
    let data = d.path();
    fails(
        data,
        &["transact", "--tenant", "t"],
        b"{nope",
        "error: transaction must be valid JSON\n",
    );
    // What only `serde_json` refuses is named as over REST and MCP (docs/limits.md):
    // document content by the engine, any other member by its path; nothing is written.
    for (body, want) in [
        (
            r#"{"changes":[{"operation":"write","bundle":"b","path":"a.md","content":"x \ud83d"}]}"#,
            "error: b/a.md: source must contain well-formed Unicode\n",
        ),
        (
            r#"{"changes":[{"operation":"write","bundle":"\ud83d","path":"a.md","content":"x"}]}"#,
            "error: changes[0].bundle must contain well-formed Unicode\n",
        ),
        (
            r#"{"changes":[{"operation":"delete","bundle":"b","path":"a.md","replaces":1e400}]}"#,
            "error: changes[0].replaces must be a number a double can hold (at most about 1.8e308), got 1e400\n",
        ),
    ] {
        fails(data, &["transact", "--tenant", "t"], body.as_bytes(), want);
    }
    assert!(!data.join("tenants").join("t").exists(), "nothing written");
    let req = serde_json::json!({"changes": [
        {"operation": "write", "bundle": "b", "path": "a.md", "content": DOC},
        {"operation": "write", "bundle": "b", "path": "c.md", "content": "no frontmatter\n"}]});
    let (out, _) = ok(data, &["transact", "--tenant", "t"], &req.to_string());
    let r: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(r["concepts"], 2);
    assert_eq!(
        r["diagnostics"][0]["message"],
        "no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF"
    );
    let first = r["revision"].as_str().unwrap_or_default().to_string();
    fails(
        data,
        &["transact", "--tenant", "t"],
        req.to_string().as_bytes(),
        &format!("error: b/a.md: concept already exists: {CHANGED}\n"),
    );
    let dup = serde_json::json!({"changes": [
        {"operation": "delete", "bundle": "b", "path": "a.md", "replaces": DOC_HASH},
        {"operation": "delete", "bundle": "b", "path": "A.md", "replaces": DOC_HASH}]});
    fails(
        data,
        &["transact", "--tenant", "t"],
        dup.to_string().as_bytes(),
        "error: b/A.md: transaction contains duplicate document targets\n",
    );
    ok(
        data,
        &["write", "b", "a.md", "--force", "--tenant", "t"],
        "---\ntype: x\n---\nv2\n",
    );
    let (out, _) = ok(data, &["history", "--tenant", "t"], "");
    let page: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let head = page["revisions"][0]["revision"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    fails(
        data,
        &["restore", &first, "--tenant", "t"],
        b"",
        "error: restore requires a revision and --expected-revision <current revision>\n",
    );
    fails(
        data,
        &[
            "restore",
            &first,
            "--expected-revision",
            &first,
            "--tenant",
            "t",
        ],
        b"",
        "error: database changed: re-read the revision and document hashes\n",
    );
    let (out, _) = ok(
        data,
        &[
            "restore",
            &first,
            "--expected-revision",
            &head,
            "--tenant",
            "t",
        ],
        "",
    );
    let r: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(
        r["snapshot"],
        serde_json::from_str::<serde_json::Value>(
            &ok(data, &["transact", "--tenant", "u"], &req.to_string()).0
        )
        .unwrap_or_default()["snapshot"]
    );
    let (read, _) = ok(data, &["read", "b", "a.md", "--tenant", "t"], "");
    assert_eq!(read, DOC);
}

#[test]
fn messages_say_what_failed_and_what_to_do() {
    let d = TempDir::new("cli-messages");
    let data = d.path();
    let args = |a: &[&'static str]| -> Vec<&'static str> {
        let mut v = a.to_vec();
        v.extend(["--tenant", "acme"]);
        v
    };
    // `help` is a command.
    let (out, err) = ok(data, &["help"], "");
    assert!(out.starts_with("usage: langonrock <command>") && err.is_empty());
    ok(
        data,
        &args(&["write", "sales", "tables/orders.md", "--create"]),
        DOC,
    );
    // A missing id fails with an error line; what was found is still printed.
    let (code, out, err) = text(&run(data, &args(&["get", "orders", "nosuch"]), b""));
    assert_eq!(code, 1);
    assert!(out.starts_with("@@ orders\n"), "{out}");
    assert!(
        err.starts_with("1 concept, ")
            && err.ends_with(" tokens\nerror: no such concept or section: nosuch\n"),
        "{err}"
    );
    assert!(!err.contains("warn:"), "{err}");
    // A wrong path is named as a path, with the one that exists.
    fails(
        data,
        &args(&["read", "sales", "orders.md"]),
        b"",
        "error: no document sales/orders.md: paths are relative to the bundle; did you mean sales/tables/orders.md?\n",
    );
    fails(
        data,
        &args(&["read", "sale", "tables/orders.md"]),
        b"",
        "error: no bundle \"sale\" in tenant \"acme\"; its bundles: sales\n",
    );
    // Plurals: one of each.
    let (_, err) = ok(data, &args(&["snapshot"]), "");
    assert_eq!(err, "1 concept\n");
    // DSN errors show the form expected.
    fails(
        data,
        &["mcp", "okf:///srv/kb"],
        b"",
        "error: dsn \"okf:///srv/kb\" names no tenant: expected okf:///absolute/path?tenant=<name>\n",
    );
}

#[test]
fn import_export_and_bad_folders() {
    let d = TempDir::new("cli-import");
    let data = d.path().join("data");
    let folder = d.path().join("notes");
    std::fs::create_dir_all(folder.join("inbox")).unwrap_or_default();
    std::fs::write(folder.join("inbox/My Note.md"), DOC).unwrap_or_default();
    let (_, err) = ok(
        &data,
        &[
            "import",
            folder.to_str().unwrap_or_default(),
            "--tenant",
            "n",
        ],
        "",
    );
    assert!(
        err.contains("\nsnapshot ") && err.ends_with(" (new), 1 bundle (inbox), 1 concept\n"),
        "{err}"
    );
    let (_, err2) = ok(
        &data,
        &[
            "import",
            folder.to_str().unwrap_or_default(),
            "--tenant",
            "n",
        ],
        "",
    );
    assert!(
        err2.contains(" (reused), 1 bundle (inbox), 1 concept\n"),
        "{err2}"
    );
    // A database edit since the import, and a folder edit of the same file: a conflict.
    ok(
        &data,
        &["write", "inbox", "My Note.md", "--force", "--tenant", "n"],
        "---\ntype: x\n---\ndb\n",
    );
    std::fs::write(
        folder.join("inbox/My Note.md"),
        "---\ntype: x\n---\nfolder\n",
    )
    .unwrap_or_default();
    fails(&data, &["import", folder.to_str().unwrap_or_default(), "--tenant", "n"], b"",
        &format!("reading {} as 1 bundle, one per subfolder\nerror: folder and database both changed inbox/My Note.md; reconcile the source hashes before importing\n", folder.display()));
    // Bad folders: nothing written.
    let bad = d.path().join("bad");
    std::fs::create_dir_all(bad.join("b")).unwrap_or_default();
    std::fs::write(bad.join("b/a:b.md"), DOC).unwrap_or_default();
    let (code, _, err) = text(&run(
        &data,
        &["import", bad.to_str().unwrap_or_default(), "--tenant", "x"],
        b"",
    ));
    assert_eq!(code, 1);
    assert!(err.contains("invalid path \"a:b.md\""), "{err}");
    std::fs::remove_file(bad.join("b/a:b.md")).unwrap_or_default();
    std::fs::write(bad.join("b/x.md"), b"\xff").unwrap_or_default();
    fails(
        &data,
        &["import", bad.to_str().unwrap_or_default(), "--tenant", "x"],
        b"",
        "error: b/x.md: source must contain valid UTF-8\n",
    );
    assert!(!data.join("tenants/x").exists());
    // Export, then import into an empty tenant: the same hashes and snapshot id.
    let out_dir = d.path().join("export");
    let (_, err) = ok(
        &data,
        &[
            "export",
            out_dir.to_str().unwrap_or_default(),
            "--tenant",
            "n",
        ],
        "",
    );
    assert_eq!(err, "exported 1 file\n");
    fails(
        &data,
        &[
            "export",
            out_dir.to_str().unwrap_or_default(),
            "--tenant",
            "n",
        ],
        b"",
        &format!(
            "error: export destination already exists: {}\n",
            out_dir.display()
        ),
    );
    ok(
        &data,
        &[
            "import",
            out_dir.to_str().unwrap_or_default(),
            "--tenant",
            "copy",
        ],
        "",
    );
    assert_eq!(
        ok(&data, &["source", "--tenant", "copy"], "").0,
        ok(&data, &["source", "--tenant", "n"], "").0
    );
    assert_eq!(
        ok(&data, &["snapshot", "--tenant", "copy"], "").0,
        ok(&data, &["snapshot", "--tenant", "n"], "").0
    );
}

#[test]
fn corrupt_record_fails_closed() {
    let d = TempDir::new("cli-corrupt");
    let data = d.path();
    ok(
        data,
        &["write", "b", "a.md", "--create", "--tenant", "t"],
        DOC,
    );
    // Tamper with the document's bytes inside the commit's pack (same length, so the
    // pack's index still holds: only the record's digest catches it).
    let packs = data.join("tenants/t/packs");
    for entry in std::fs::read_dir(&packs).expect("packs").flatten() {
        let mut bytes = std::fs::read(entry.path()).unwrap_or_default();
        if let Some(at) = bytes.windows(DOC.len()).position(|w| w == DOC.as_bytes()) {
            bytes[at..at + DOC.len()].fill(b'x');
            std::fs::write(entry.path(), bytes).unwrap_or_default();
        }
    }
    // The write left the head's derived record: reads that need no source are served from
    // it, and every read of the source itself reads the blob and fails closed (engine.md
    // §9.1 rule 1).
    let derived = data.join("tenants/t/derived");
    assert_eq!(
        std::fs::read_dir(&derived)
            .map(Iterator::count)
            .unwrap_or(0),
        1
    );
    let (code, _, _) = text(&run(data, &["manifest", "--tenant", "t"], b""));
    assert_eq!(code, 0);
    let blob = format!("error: database corruption: source/{DOC_HASH} does not match its digest\n");
    for args in [
        &["read", "b", "a.md", "--tenant", "t"][..],
        &["get", "a", "--source", "--tenant", "t"][..],
    ] {
        let (code, out, err) = text(&run(data, args, b""));
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (1, "", blob.as_str()),
            "{args:?}"
        );
    }
    let export = d.path().join("out");
    let (code, _, err) = text(&run(
        data,
        &[
            "export",
            export.to_str().unwrap_or_default(),
            "--tenant",
            "t",
        ],
        b"",
    ));
    assert_eq!((code, err.as_str()), (1, blob.as_str()));
    // Without the derived record, opening reads every blob and fails closed.
    std::fs::remove_dir_all(&derived).unwrap_or_default();
    let (code, out, err) = text(&run(data, &["manifest", "--tenant", "t"], b""));
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.starts_with("error: database corruption: "), "{err}");
    let (code, out, _) = text(&run(data, &["verify", "--tenant", "t"], b""));
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    assert_eq!(v["ok"], false);
    assert_eq!(v["issues"][0]["artifact"], format!("source/{DOC_HASH}"));
    assert!(v["issues"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .starts_with("database corruption: "));
}

#[test]
fn search_prints_the_tsv_with_pos_and_stats() {
    let d = TempDir::new("cli-search");
    ok(
        d.path(),
        &["write", "sales", "orders.md", "--create", "--tenant", "t"],
        DOC,
    );
    let runbook = "---\ntype: runbook\n---\nHow to replay a failed order export.\n\nSee [orders](orders.md).\n";
    ok(
        d.path(),
        &["write", "sales", "replay.md", "--create", "--tenant", "t"],
        runbook,
    );
    let (out, err) = ok(
        d.path(),
        &["search", "replay", "export", "--tenant", "t"],
        "",
    );
    assert_eq!(
        out,
        "# tenant: t\n# bundles: sales\n# query: replay export\n# hits: 1 direct, 1 linked\n\
         id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n\
         replay\tsales\trunbook\t-\t-\tHow to replay a failed order export.\torders\t0\n\
         orders\tsales\ttable\t-\t-\tOrders placed online.\t-\t-\n"
    );
    assert_eq!(
        err,
        format!(
            "2 concepts, {} bytes, ~{} tokens\n",
            out.len(),
            out.len().div_ceil(4)
        )
    );
    let (out, _) = ok(
        d.path(),
        &[
            "search",
            "replay",
            "--no-expand",
            "--k",
            "1",
            "--tenant",
            "t",
        ],
        "",
    );
    assert!(out.contains("# hits: 1 direct, 0 linked\n"), "{out}");
    fails(
        d.path(),
        &["search", "replay", "--bundle", "ops", "--tenant", "t"],
        b"",
        "error: no bundle \"ops\" in this tenant: found sales\n",
    );
}

#[test]
fn a_relative_data_root_of_one_component_is_made_in_the_working_directory() {
    // `--data data` where `data` does not exist yet: its parent is the working directory
    // (it once failed "cannot sync : No such file or directory").
    let tmp = TempDir::new("relative");
    use std::io::Write;
    let mut child = std::process::Command::new(common::bin())
        .current_dir(tmp.path())
        .args([
            "write", "ops", "a.md", "--create", "--data", "data", "--tenant", "acme",
        ])
        .env("LANGONROCK_TODAY", "2026-06-01")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn langonrock");
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(DOC.as_bytes());
    }
    let out = child.wait_with_output().expect("wait for langonrock");
    let (code, _, err) = text(&out);
    assert_eq!(code, 0, "{err}");
    assert!(tmp
        .path()
        .join("data")
        .join("tenants")
        .join("acme")
        .is_dir());
}
