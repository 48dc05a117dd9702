//! The engine against the memory store: every refusal and validation text of engine.md,
//! verbatim, the bad-input list of issue 3, and the shapes of the results.

use crate::conformance::observe;
use langonrock_core::compile::SourceDoc;
use langonrock_core::engine::{
    parse_history_request, parse_transaction, parse_transaction_with, run, Answer, CommitOutcome,
    Content, Engine, Fault, GcOptions, HistoryRequest, ImportRequest, Key, Kind, MemoryStore, Need,
    Op, RepairRequest, RestoreRequest, Step, Store, SwapFault, WriteResult,
};
use langonrock_core::error::{ChangeFailure, ConflictReason};
use langonrock_core::Error;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const TENANT: &str = "conf";

struct Host {
    store: MemoryStore,
    e: Engine,
    n: u64,
}

type Snap = (String, Option<Vec<u8>>, BTreeMap<Key, Vec<u8>>);

impl Host {
    fn new() -> Host {
        let mut store = MemoryStore::new();
        let mut e = Engine::new(TENANT).unwrap();
        let op = e.open();
        run(&mut e, &mut store, op).unwrap();
        Host { store, e, n: 0 }
    }

    fn run<T: 'static>(&mut self, op: Op<T>) -> Result<T, Error> {
        run(&mut self.e, &mut self.store, op)
    }

    fn at(&mut self) -> String {
        self.n += 1;
        crate::conformance::at(self.n)
    }

    fn write(
        &mut self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        let at = self.at();
        let op = self.e.write(bundle, path, content, replaces, &at);
        self.run(op)
    }

    fn create(&mut self, bundle: &str, path: &str, content: &str) -> WriteResult {
        self.write(bundle, path, content, None).unwrap()
    }

    fn hash(&self, bundle: &str, path: &str) -> String {
        self.e.read().unwrap().source_hash(bundle, path).unwrap()
    }

    fn transact(&mut self, v: Value) -> Result<langonrock_core::engine::RevisionResult, Error> {
        let t = parse_transaction(&v)?;
        let at = self.at();
        let op = self.e.transact(t, &at);
        self.run(op)
    }

    fn head_revision(&self) -> String {
        self.e.read().unwrap().revision().unwrap()
    }

    /// Everything observable, plus the store's exact contents.
    fn snap(&mut self) -> Snap {
        let o = observe(&mut self.e, &mut self.store);
        (o, self.store.head(TENANT), self.store.records(TENANT))
    }

    fn paths(&self) -> Vec<String> {
        self.e
            .read()
            .unwrap()
            .list_source()
            .into_iter()
            .map(|s| format!("{}/{}", s.bundle, s.path))
            .collect()
    }
}

fn concept(desc: &str) -> String {
    format!("---\ntype: note\ndescription: {desc}\n---\n# Title\n\nBody.\n")
}

fn conflict_of(e: Error) -> (String, Option<ConflictReason>, Vec<ChangeFailure>) {
    match e {
        Error::Conflict {
            message,
            reason,
            changes,
        } => (message, reason, changes),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

const RETRY: &str = ": re-read the concept and retry with its new hash";
const CHANGED: &str = "database changed: re-read the revision and document hashes";
const H0: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn preconditions_carry_reason_and_text() {
    let mut h = Host::new();
    h.create("sales", "orders.md", &concept("Orders."));
    let before = h.snap();
    let (m, r, _) = conflict_of(h.write("sales", "orders.md", "x", None).unwrap_err());
    assert_eq!(
        (m.as_str(), r),
        (
            format!("concept already exists{RETRY}").as_str(),
            Some(ConflictReason::Exists)
        )
    );
    let (m, r, _) = conflict_of(h.write("sales", "new.md", "x", Some(H0)).unwrap_err());
    assert_eq!(
        (m, r),
        (
            format!("concept does not exist{RETRY}"),
            Some(ConflictReason::Missing)
        )
    );
    let (m, r, _) = conflict_of(h.write("sales", "orders.md", "x", Some(H0)).unwrap_err());
    assert_eq!(
        (m, r),
        (
            format!("concept changed since it was read{RETRY}"),
            Some(ConflictReason::Changed)
        )
    );
    let at = h.at();
    let op = h.e.delete("sales", "gone.md", Some(H0), &at);
    let (m, r, _) = conflict_of(h.run(op).unwrap_err());
    assert_eq!(
        (m, r),
        (
            format!("concept does not exist{RETRY}"),
            Some(ConflictReason::Missing)
        )
    );
    assert_eq!(h.snap(), before);
}

#[test]
fn malformed_hashes() {
    let mut h = Host::new();
    h.create("sales", "orders.md", "x");
    let before = h.snap();
    let msg = |v: &str| format!("invalid hash \"{v}\": expected 64 lowercase hex characters");
    assert_eq!(
        h.write("sales", "orders.md", "y", Some("abc"))
            .unwrap_err()
            .message(),
        msg("abc")
    );
    let upper = h.hash("sales", "orders.md").to_uppercase();
    assert_eq!(
        h.write("sales", "orders.md", "y", Some(&upper))
            .unwrap_err()
            .message(),
        msg(&upper)
    );
    assert_eq!(
        h.write("sales", "orders.md", "y", Some(&format!("{H0}0")))
            .unwrap_err()
            .code(),
        "INVALID"
    );
    let at = h.at();
    let op = h.e.delete("sales", "orders.md", None, &at);
    assert_eq!(h.run(op).unwrap_err().message(), msg(""));
    let e = h.transact(json!({"changes": [{"operation": "delete", "bundle": "sales", "path": "orders.md", "replaces": 42}]}));
    assert_eq!(
        e.unwrap_err(),
        Error::InvalidChange {
            message: msg("42"),
            index: 0
        }
    );
    let e = h.transact(json!({"changes": [{"operation": "delete", "bundle": "sales", "path": "orders.md", "replaces": {"a": [1]}}]}));
    assert_eq!(e.unwrap_err().message(), msg("{\"a\":[1]}"));
    let e = h.transact(json!({"changes": [{"operation": "write", "bundle": "sales", "path": "x.md", "content": "x"}], "expectedRevision": "nope"}));
    assert_eq!(e.unwrap_err(), Error::Invalid(msg("nope")));
    let e = h.transact(json!({"changes": [{"operation": "write", "bundle": "sales", "path": "x.md", "content": "x"}], "expectedRevision": 7}));
    assert_eq!(e.unwrap_err().message(), msg("7"));
    let at = h.at();
    let op = h.e.restore(
        RestoreRequest {
            revision: "r".into(),
            expected_revision: H0.into(),
        },
        &at,
    );
    assert_eq!(h.run(op).unwrap_err().message(), msg("r"));
    let op = h.e.restore(
        RestoreRequest {
            revision: H0.into(),
            expected_revision: "".into(),
        },
        &at,
    );
    assert_eq!(h.run(op).unwrap_err().message(), msg(""));
    assert_eq!(
        langonrock_core::engine::parse_restore_request(&json!({"revision": H0}))
            .unwrap_err()
            .message(),
        msg("")
    );
    assert_eq!(h.snap(), before);
}

#[test]
fn bad_input_leaves_the_tenant_exactly_as_it_was() {
    let mut h = Host::new();
    h.create("sales", "orders.md", &concept("Orders."));
    let before = h.snap();
    let w = |p: &str| json!({"operation": "write", "bundle": "sales", "path": p, "content": "x"});
    // A tenant key inside a change, or on the request.
    let e = h.transact(json!({"changes": [{"operation": "write", "bundle": "sales", "path": "a.md", "content": "x", "tenant": "other"}]}));
    assert_eq!(
        e.unwrap_err(),
        Error::InvalidChange {
            message: "document change must specify a bundle and path within the connected tenant"
                .into(),
            index: 0
        }
    );
    let e = h.transact(json!({"tenant": "conf", "changes": [w("a.md")]}));
    assert_eq!(
        e.unwrap_err(),
        Error::Invalid("transaction must be an object scoped to the connected tenant".into())
    );
    // 1,001 changes, and none.
    let many: Vec<Value> = (0..1001).map(|i| w(&format!("n{i}.md"))).collect();
    assert_eq!(
        h.transact(json!({ "changes": many })).unwrap_err(),
        Error::Invalid("transaction needs between 1 and 1000 changes".into())
    );
    assert_eq!(
        h.transact(json!({"changes": []})).unwrap_err().message(),
        "transaction needs between 1 and 1000 changes"
    );
    // 17 MiB of content.
    let big = "x".repeat(17 * 1024 * 1024);
    let e = h.transact(json!({"changes": [{"operation": "write", "bundle": "sales", "path": "big.md", "content": big}]}));
    assert_eq!(
        e.unwrap_err(),
        Error::Invalid("transaction source payload exceeds 16 MiB".into())
    );
    // A write is a transaction too: bound by the same limit.
    let e = h.write("sales", "big.md", &big, None);
    assert_eq!(
        e.unwrap_err().message(),
        "transaction source payload exceeds 16 MiB"
    );
    // Lone surrogates, as a JS string carries them.
    let units: Vec<u16> = "ab".encode_utf16().chain([0xD800]).collect();
    let at = h.at();
    let op =
        h.e.write("sales", "s.md", Content::from_utf16(&units), None, &at);
    assert_eq!(
        h.run(op).unwrap_err(),
        Error::Invalid("source must contain well-formed Unicode".into())
    );
    let e = parse_transaction_with(&json!({"changes": [w("ok.md"), w("s.md")]}), &[1]).unwrap_err();
    assert_eq!(
        e,
        Error::InvalidChange {
            message: "source must contain well-formed Unicode".into(),
            index: 1
        }
    );
    // Paths with `..` and a backslash.
    assert_eq!(
        h.write("sales", "../x.md", "x", None)
            .unwrap_err()
            .message(),
        "invalid path \"../x.md\": segment \"..\" starts with a dot"
    );
    assert_eq!(
        h.write("sales", "a\\b.md", "x", None)
            .unwrap_err()
            .message(),
        "invalid path \"a\\b.md\": use forward slashes only"
    );
    let e = h
        .transact(json!({"changes": [w("ok.md"), w("a/../b.md")]}))
        .unwrap_err();
    assert_eq!(e.code(), "INVALID");
    assert!(matches!(e, Error::InvalidChange { index: 1, .. }));
    assert_eq!(
        h.write("Bad Bundle", "a.md", "x", None)
            .unwrap_err()
            .message(),
        "invalid bundle name \"Bad Bundle\": expected 1-64 chars of [a-z0-9_-]"
    );
    // Content that is not a string, an unknown operation.
    let e = h.transact(json!({"changes": [{"operation": "write", "bundle": "sales", "path": "a.md", "content": null}]}));
    assert_eq!(
        e.unwrap_err().message(),
        "document content must be a string"
    );
    let e =
        h.transact(json!({"changes": [{"operation": "move", "bundle": "sales", "path": "a.md"}]}));
    assert_eq!(e.unwrap_err().message(), "invalid document operation");
    // Duplicates.
    let e = h.transact(json!({"changes": [w("a.md"), w("b.md"), w("A.md")]}));
    assert_eq!(
        e.unwrap_err(),
        Error::InvalidChange {
            message: "transaction contains duplicate document targets".into(),
            index: 2
        }
    );
    // A stale expectedRevision, and one on an empty tenant.
    let e = h.transact(json!({"changes": [w("a.md")], "expectedRevision": H0}));
    assert_eq!(conflict_of(e.unwrap_err()).0, CHANGED);
    assert_eq!(h.snap(), before);
    let mut empty = Host::new();
    let e = empty.transact(json!({"changes": [w("a.md")], "expectedRevision": H0}));
    assert_eq!(conflict_of(e.unwrap_err()).0, CHANGED);
    assert_eq!(empty.store.head(TENANT), None);
    // An invalid commit time from the host.
    let op = h.e.write("sales", "t.md", "x", None, "2026-05-01");
    assert_eq!(
        h.run(op).unwrap_err().message(),
        "invalid commit time \"2026-05-01\": expected YYYY-MM-DDTHH:MM:SS.sssZ"
    );
    assert_eq!(h.snap(), before);
}

#[test]
fn transaction_reports_every_failed_precondition() {
    let mut h = Host::new();
    h.create("sales", "a.md", "a");
    h.create("sales", "b.md", "b");
    let before = h.snap();
    let e = h.transact(json!({"changes": [
        {"operation": "write", "bundle": "sales", "path": "new.md", "content": "n"},
        {"operation": "write", "bundle": "sales", "path": "a.md", "content": "a2", "replaces": H0},
        {"operation": "write", "bundle": "sales", "path": "b.md", "content": "b2"},
        {"operation": "delete", "bundle": "sales", "path": "zz.md", "replaces": H0},
    ]}));
    let (m, r, changes) = conflict_of(e.unwrap_err());
    assert_eq!(m, format!("concept changed since it was read{RETRY}"));
    assert_eq!(r, None);
    assert_eq!(
        changes,
        vec![
            ChangeFailure {
                index: 1,
                reason: ConflictReason::Changed
            },
            ChangeFailure {
                index: 2,
                reason: ConflictReason::Exists
            },
            ChangeFailure {
                index: 3,
                reason: ConflictReason::Missing
            },
        ]
    );
    assert_eq!(h.snap(), before);
}

#[test]
fn transaction_commits_all_or_nothing_with_the_result_shape() {
    let mut h = Host::new();
    h.create("sales", "orders.md", &concept("Orders."));
    let r0 = h.head_revision();
    let r = h
        .transact(json!({"changes": [
            {"operation": "write", "bundle": "sales", "path": "orders.md", "content": concept("Orders, edited."), "replaces": h.hash("sales", "orders.md")},
            {"operation": "write", "bundle": "ops", "path": "orders.md", "content": "# Ops orders\n\n[x](missing.md)\n"},
        ], "expectedRevision": r0}))
        .unwrap();
    assert_eq!(r.bundles, ["ops", "sales"]);
    assert_eq!(r.concepts, 2);
    assert_ne!(r.revision, r0);
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(
        json,
        format!(
            "{{\"revision\":\"{}\",\"snapshot\":\"{}\",\"concepts\":2,\"bundles\":[\"ops\",\"sales\"],\"diagnostics\":[{{\"level\":\"info\",\"bundle\":\"ops\",\"path\":\"orders.md\",\"message\":\"no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF\"}},{{\"level\":\"warn\",\"bundle\":\"ops\",\"path\":\"orders.md\",\"message\":\"unresolved link \\\"missing.md\\\"\"}}]}}",
            r.revision, r.snapshot
        )
    );
    let ids: Vec<String> =
        h.e.read()
            .unwrap()
            .model()
            .concepts()
            .iter()
            .map(|c| c.id.clone())
            .collect();
    assert_eq!(ids, ["ops/orders", "sales/orders"]);
}

#[test]
fn write_result_names_ids_renames_and_diagnostics() {
    let mut h = Host::new();
    let w = h.create("sales", "y.md", &concept("Y."));
    assert_eq!(w.id.as_deref(), Some("y"));
    assert_eq!(
        w.hash,
        langonrock_core::engine::Digest::of(concept("Y.").as_bytes()).to_hex()
    );
    assert!(w.renamed.is_empty());
    // A same-named concept in another bundle prefixes both.
    let w = h.create("ops", "y.md", "# No frontmatter\n");
    assert_eq!(w.id.as_deref(), Some("ops/y"));
    assert_eq!(
        serde_json::to_value(&w.renamed).unwrap(),
        json!([{"from": "y", "to": "sales/y"}])
    );
    assert_eq!(w.diagnostics.len(), 1);
    assert_eq!(
        w.diagnostics[0].message,
        "no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF"
    );
    assert_eq!(w.concepts, 2);
    // A navigation document has no id.
    let w = h.create("sales", "index.md", "# Index\n");
    assert_eq!(w.id, None);
    assert!(!serde_json::to_string(&w).unwrap().contains("\"id\""));
    let json = serde_json::to_string(&w).unwrap();
    assert!(
        json.starts_with(&format!(
            "{{\"hash\":\"{}\",\"revision\":\"{}\",\"snapshot\":\"",
            w.hash, w.revision
        )),
        "{json}"
    );
    assert!(
        json.ends_with(",\"concepts\":2,\"renamed\":[],\"diagnostics\":[]}"),
        "{json}"
    );
    // Deleting the other y renames back.
    let at = h.at();
    let hash = h.hash("ops", "y.md");
    let op = h.e.delete("ops", "y.md", Some(&hash), &at);
    let d = h.run(op).unwrap();
    assert_eq!(
        serde_json::to_value(&d.renamed).unwrap(),
        json!([{"from": "sales/y", "to": "y"}])
    );
    assert_eq!(d.concepts, 1);
    // The ops bundle went with its last document; sales stays.
    assert_eq!(h.e.read().unwrap().model().bundles, ["sales"]);
    let json = serde_json::to_string(&d).unwrap();
    assert_eq!(json, format!("{{\"revision\":\"{}\",\"snapshot\":\"{}\",\"concepts\":1,\"renamed\":[{{\"from\":\"sales/y\",\"to\":\"y\"}}]}}", d.revision, d.snapshot));
}

#[test]
fn no_op_commits_make_no_revision() {
    let mut h = Host::new();
    let w = h.create("sales", "a.md", "same");
    let before = h.snap();
    let again = h.write("sales", "a.md", "same", Some(&w.hash)).unwrap();
    assert_eq!(
        (
            again.hash.as_str(),
            again.revision.as_str(),
            again.snapshot.as_str()
        ),
        (w.hash.as_str(), w.revision.as_str(), w.snapshot.as_str())
    );
    assert_eq!(h.snap(), before);
    let r = h.transact(json!({"changes": [{"operation": "write", "bundle": "sales", "path": "a.md", "content": "same", "replaces": w.hash}]})).unwrap();
    assert_eq!(r.revision, w.revision);
    assert_eq!(h.snap(), before);
    // Restoring the head's own revision is a no-op too.
    let at = h.at();
    let op = h.e.restore(
        RestoreRequest {
            revision: w.revision.clone(),
            expected_revision: w.revision.clone(),
        },
        &at,
    );
    assert_eq!(h.run(op).unwrap().revision, w.revision);
    assert_eq!(h.snap(), before);
}

#[test]
fn case_rules() {
    let mut h = Host::new();
    let w = h.create("sales", "Note.md", &concept("N."));
    let before = h.snap();
    // A new path differing only in case.
    assert_eq!(
        h.write("sales", "note.md", "x", None).unwrap_err(),
        Error::Invalid("document paths must be unique across case-insensitive filesystems".into())
    );
    // Two spellings of one new bundle.
    let e = h.transact(json!({"changes": [
        {"operation": "write", "bundle": "Ops", "path": "a.md", "content": "a"},
        {"operation": "write", "bundle": "ops", "path": "b.md", "content": "b"}]}));
    assert_eq!(
        e.unwrap_err().message(),
        "document paths must be unique across case-insensitive filesystems"
    );
    // Two concepts with one id.
    let e = h.transact(json!({"changes": [
        {"operation": "write", "bundle": "sales", "path": "My Note.md", "content": "a"},
        {"operation": "write", "bundle": "sales", "path": "My_Note.md", "content": "b"}]}));
    assert_eq!(
        e.unwrap_err(),
        Error::Invalid("ambiguous concept id \"My_Note\": My Note.md and My_Note.md".into())
    );
    assert_eq!(h.snap(), before);
    // A case-only rename in one transaction.
    h.transact(json!({"changes": [
        {"operation": "delete", "bundle": "sales", "path": "Note.md", "replaces": w.hash},
        {"operation": "write", "bundle": "sales", "path": "note.md", "content": concept("N.")}]}))
        .unwrap();
    assert_eq!(h.paths(), ["sales/note.md"]);
    // A bundle named in another case is the same bundle, and keeps its case.
    h.create("SALES", "other.md", "o");
    assert_eq!(h.paths(), ["sales/note.md", "sales/other.md"]);
    h.create("Ops", "x.md", "x");
    h.create("OPS", "y.md", "y");
    assert_eq!(h.e.read().unwrap().model().bundles, ["Ops", "sales"]);
}

#[test]
fn bundles_come_and_go_with_documents() {
    let mut h = Host::new();
    assert_eq!(h.e.read().unwrap().model().bundles, Vec::<String>::new());
    h.create("ops", "index.md", "# Index\n");
    h.create("ops", "run.md", &concept("Run."));
    h.create("sales", "a.md", &concept("A."));
    // A bundle holding only a navigation document stays.
    let at = h.at();
    let hash = h.hash("ops", "run.md");
    let op = h.e.delete("ops", "run.md", Some(&hash), &at);
    h.run(op).unwrap();
    assert_eq!(h.e.read().unwrap().model().bundles, ["ops", "sales"]);
    let before = h.snap();
    let at = h.at();
    let op = h.e.delete_bundle("nope", &at);
    assert_eq!(
        h.run(op).unwrap_err(),
        Error::NotFound("no such bundle".into())
    );
    let op = h.e.delete_bundle("bad name", &at);
    assert_eq!(h.run(op).unwrap_err().code(), "INVALID");
    assert_eq!(h.snap(), before);
    let op = h.e.delete_bundle("OPS", &at);
    let r = h.run(op).unwrap();
    assert_eq!(r.bundles, ["sales"]);
    assert_eq!(h.paths(), ["sales/a.md"]);
}

#[test]
fn history_pages_and_cursors() {
    let mut h = Host::new();
    let empty = {
        let op = h.e.history(HistoryRequest::default());
        h.run(op).unwrap()
    };
    assert_eq!(serde_json::to_string(&empty).unwrap(), "{\"revisions\":[]}");
    let mut revs = Vec::new();
    for i in 0..25 {
        let replaces = h.e.read().unwrap().source_hash("sales", "a.md");
        revs.push(
            h.write("sales", "a.md", &format!("v{i}"), replaces.as_deref())
                .unwrap()
                .revision,
        );
    }
    revs.reverse();
    let page = |h: &mut Host, before: Option<String>, limit: Option<i64>| {
        let op = h.e.history(HistoryRequest { before, limit });
        h.run(op)
    };
    let p1 = page(&mut h, None, None).unwrap();
    assert_eq!(p1.revisions.len(), 20);
    assert_eq!(p1.revisions[0].revision, revs[0]);
    assert_eq!(p1.revisions[0].parent.as_deref(), Some(revs[1].as_str()));
    assert_eq!(p1.revisions[0].bundles, ["sales"]);
    assert_eq!(p1.revisions[0].concepts, 1);
    let cursor = p1.next.clone().unwrap();
    assert!(cursor.len() <= 512 && !cursor.contains('='));
    let p2 = page(&mut h, Some(cursor.clone()), Some(20)).unwrap();
    assert_eq!(
        p2.revisions
            .iter()
            .map(|r| r.revision.clone())
            .collect::<Vec<_>>(),
        revs[20..]
    );
    assert_eq!(p2.next, None);
    assert_eq!(p2.revisions[4].parent, None);
    // Exactly filling a page leaves no cursor.
    let p = page(&mut h, None, Some(25)).unwrap();
    assert_eq!((p.revisions.len(), p.next), (25, None));
    let p = page(&mut h, None, Some(24)).unwrap();
    assert!(p.next.is_some());
    let json = serde_json::to_value(page(&mut h, None, Some(1)).unwrap()).unwrap();
    assert_eq!(
        json["revisions"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .len(),
        6
    );
    let text = serde_json::to_string(&page(&mut h, None, Some(1)).unwrap().revisions[0]).unwrap();
    assert!(
        text.starts_with(&format!(
            "{{\"revision\":\"{}\",\"parent\":\"{}\",\"snapshot\":\"",
            revs[0], revs[1]
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "\",\"created\":\"2026-05-01T09:00:25.025Z\",\"concepts\":1,\"bundles\":[\"sales\"]}"
        ),
        "{text}"
    );
    // Limits.
    for bad in [0, 101, -1] {
        assert_eq!(
            page(&mut h, None, Some(bad)).unwrap_err(),
            Error::Invalid("history limit must be an integer from 1 to 100".into())
        );
    }
    assert_eq!(
        parse_history_request(&json!({"limit": 2.5}))
            .unwrap_err()
            .message(),
        "history limit must be an integer from 1 to 100"
    );
    // Cursors that do not decode, are too long, or name another tenant.
    let other = langonrock_core::engine::encode_cursor(
        "other",
        &langonrock_core::engine::Digest::from_hex(&revs[3]).unwrap(),
    );
    for bad in [
        "%%%".to_string(),
        "A".repeat(513),
        other,
        format!("{cursor}x"),
    ] {
        assert_eq!(
            page(&mut h, Some(bad), None).unwrap_err(),
            Error::Invalid("invalid history cursor".into())
        );
    }
    // A cursor naming a revision that is not on the chain.
    let stranger =
        langonrock_core::engine::encode_cursor(TENANT, &langonrock_core::engine::Digest([9; 32]));
    let e = page(&mut h, Some(stranger), None).unwrap_err();
    assert_eq!(
        conflict_of(e).0,
        "history cursor expired or is not committed; restart history pagination"
    );
    // After collection, a cursor into the collected part has expired.
    let op = h.e.gc(GcOptions {
        keep: 10,
        dry_run: false,
        grace_ms: 0,
        now: u64::MAX,
    });
    h.run(op).unwrap();
    let e = page(&mut h, Some(cursor), None).unwrap_err();
    assert_eq!(
        conflict_of(e).0,
        "history cursor expired or is not committed; restart history pagination"
    );
    let p = page(&mut h, None, Some(100)).unwrap();
    assert_eq!(p.revisions.len(), 10);
    assert_eq!(p.next, None);
    assert_eq!(p.revisions[9].parent.as_deref(), Some(revs[10].as_str()));
}

#[test]
fn restore_commits_a_new_revision() {
    let mut h = Host::new();
    let a = h.create("sales", "a.md", &concept("A."));
    let state_a = h.snap().0;
    h.create("sales", "b.md", &concept("B."));
    h.write("sales", "a.md", &concept("A2."), Some(&a.hash))
        .unwrap();
    let head = h.head_revision();
    // A stale expected revision, and a revision outside history.
    let at = h.at();
    let op = h.e.restore(
        RestoreRequest {
            revision: a.revision.clone(),
            expected_revision: a.revision.clone(),
        },
        &at,
    );
    assert_eq!(conflict_of(h.run(op).unwrap_err()).0, CHANGED);
    let op = h.e.restore(
        RestoreRequest {
            revision: H0.into(),
            expected_revision: head.clone(),
        },
        &at,
    );
    assert_eq!(
        conflict_of(h.run(op).unwrap_err()).0,
        "revision is not in retained committed history"
    );
    let op = h.e.restore(
        RestoreRequest {
            revision: a.revision.clone(),
            expected_revision: head.clone(),
        },
        &at,
    );
    let r = h.run(op).unwrap();
    assert_ne!(r.revision, a.revision);
    assert_eq!(r.snapshot, a.snapshot);
    assert_eq!(h.paths(), ["sales/a.md"]);
    let op = h.e.history(HistoryRequest {
        before: None,
        limit: Some(1),
    });
    let p = h.run(op).unwrap();
    assert_eq!(p.revisions[0].parent.as_deref(), Some(head.as_str()));
    // The restored state reads like the old one (history aside).
    let now = h.snap().0;
    let cut = |s: &str| s[..s.find("revision Some").unwrap()].to_string();
    assert_eq!(cut(&now), cut(&state_a));
    // A restore of a collected revision.
    for i in 0..3 {
        let replaces = h.hash("sales", "a.md");
        h.write("sales", "a.md", &format!("v{i}"), Some(&replaces))
            .unwrap();
    }
    let op = h.e.gc(GcOptions {
        keep: 2,
        dry_run: false,
        grace_ms: 0,
        now: u64::MAX,
    });
    h.run(op).unwrap();
    let before = h.snap();
    let head = h.head_revision();
    let at = h.at();
    let op = h.e.restore(
        RestoreRequest {
            revision: a.revision.clone(),
            expected_revision: head,
        },
        &at,
    );
    assert_eq!(
        conflict_of(h.run(op).unwrap_err()).0,
        "revision is not in retained committed history"
    );
    assert_eq!(h.snap(), before);
}

#[test]
fn gc_validates_and_reports() {
    let mut h = Host::new();
    for i in 0..13 {
        h.create("sales", &format!("n{i}.md"), &format!("doc {i}"));
    }
    let op = h.e.gc(GcOptions {
        keep: 0,
        dry_run: false,
        grace_ms: 0,
        now: 0,
    });
    assert_eq!(
        h.run(op).unwrap_err(),
        Error::Invalid("database gc keep must be a positive integer".into())
    );
    // With the default grace nothing recent is removed, though retainedFrom moves.
    let now = h.store.now();
    let op = h.e.gc(GcOptions::at(now));
    let g = h.run(op).unwrap();
    assert_eq!(
        (
            g.kept.len(),
            g.removed_revisions,
            g.removed_records,
            g.bytes_freed
        ),
        (10, 0, 0, 0)
    );
    let json = serde_json::to_string(&g).unwrap();
    assert!(
        json.starts_with("{\"tenant\":\"conf\",\"kept\":[\""),
        "{json}"
    );
    assert!(
        json.contains(
            "],\"droppedRevisions\":3,\"removedRevisions\":0,\"removedRecords\":0,\"bytesFreed\":0,\"pendingRecords\":6,\"pendingBytes\":"
        ),
        "{json}"
    );
    let op = h.e.gc(GcOptions {
        keep: 10,
        dry_run: false,
        grace_ms: 0,
        now: u64::MAX,
    });
    let g = h.run(op).unwrap();
    // Three revisions and their bundle records go; every source is still reached.
    assert_eq!((g.removed_revisions, g.removed_records), (3, 3));
    let op = h.e.verify();
    assert!(h.run(op).unwrap().ok);
    // An empty tenant collects nothing.
    let mut e = Host::new();
    let op = e.e.gc(GcOptions::at(0));
    assert_eq!(serde_json::to_string(&e.run(op).unwrap()).unwrap(), "{\"tenant\":\"conf\",\"kept\":[],\"droppedRevisions\":0,\"removedRevisions\":0,\"removedRecords\":0,\"bytesFreed\":0,\"pendingRecords\":0,\"pendingBytes\":0,\"pendingUntil\":null,\"dryRun\":false}");
}

#[test]
fn verify_finds_corruption_and_open_fails_closed() {
    let mut h = Host::new();
    h.create("sales", "a.md", "alpha");
    h.create("sales", "b.md", "beta");
    let op = h.e.verify();
    let v = h.run(op).unwrap();
    assert!(v.ok);
    assert_eq!(v.verified_revisions.len(), 2);
    let head_digest = langonrock_core::engine::Digest::of(&h.store.head(TENANT).unwrap()).to_hex();
    assert_eq!(v.head.as_deref(), Some(head_digest.as_str()));
    let json = serde_json::to_string(&v).unwrap();
    assert_eq!(json, format!("{{\"tenant\":\"conf\",\"ok\":true,\"head\":\"{head_digest}\",\"verifiedRevisions\":[\"{}\",\"{}\"],\"issues\":[]}}", v.verified_revisions[0], v.verified_revisions[1]));
    // Tamper with a source: verify reports it, opening fails closed.
    let alpha = Key::of(Kind::Source, b"alpha");
    h.store.tamper(TENANT, &alpha, b"alphA".to_vec());
    let op = h.e.verify();
    let v = h.run(op).unwrap();
    assert!(!v.ok);
    assert_eq!(
        serde_json::to_value(&v.issues).unwrap(),
        json!([{"artifact": format!("source/{}", alpha.digest), "message": format!("database corruption: source/{} does not match its digest", alpha.digest)}])
    );
    let mut fresh = Engine::new(TENANT).unwrap();
    let op = fresh.open();
    let e = run(&mut fresh, &mut h.store, op).unwrap_err();
    assert_eq!(
        e,
        Error::Corrupt(format!(
            "database corruption: source/{} does not match its digest",
            alpha.digest
        ))
    );
    assert_eq!(fresh.read().unwrap_err(), e);
    // A missing record: the reader re-reads the head once, then reports it.
    h.store.lose(TENANT, &alpha);
    let op = fresh.open();
    assert_eq!(
        run(&mut fresh, &mut h.store, op).unwrap_err().message(),
        format!("database corruption: source/{} is missing", alpha.digest)
    );
    // Repair needs the verified head digest.
    let old_head = h.store.head(TENANT).unwrap();
    let op = fresh.repair(RepairRequest {
        revision: v.verified_revisions[1].clone(),
        expected_head: None,
    });
    assert_eq!(
        run(&mut fresh, &mut h.store, op).unwrap_err(),
        Error::conflict("head changed since verification; run verify again before repair")
    );
    // The revision must verify: both reach the lost source.
    let op = fresh.repair(RepairRequest {
        revision: v.verified_revisions[1].clone(),
        expected_head: Some(head_digest.clone()),
    });
    assert_eq!(
        run(&mut fresh, &mut h.store, op).unwrap_err().code(),
        "CORRUPT"
    );
    h.store.put(TENANT, &alpha, b"alpha").unwrap();
    let op = fresh.repair(RepairRequest {
        revision: v.verified_revisions[1].clone(),
        expected_head: Some(head_digest.clone()),
    });
    let r = run(&mut fresh, &mut h.store, op).unwrap();
    assert_eq!(r.revision, v.verified_revisions[1]);
    assert_eq!(
        r.head,
        langonrock_core::engine::Digest::of(&h.store.head(TENANT).unwrap()).to_hex()
    );
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        format!(
            "{{\"tenant\":\"conf\",\"head\":\"{}\",\"revision\":\"{}\"}}",
            r.head, r.revision
        )
    );
    // The old head is kept for recovery; the engine serves the repaired head.
    assert_eq!(
        h.store
            .records(TENANT)
            .get(&Key::of(Kind::Recovery, &old_head)),
        Some(&old_head)
    );
    assert_eq!(fresh.read().unwrap().revision().unwrap(), r.revision);
    assert_eq!(fresh.read().unwrap().list_source().len(), 1);
    let op = fresh.history(HistoryRequest::default());
    assert_eq!(
        run(&mut fresh, &mut h.store, op).unwrap().revisions.len(),
        1
    );
}

#[test]
fn foreign_and_corrupt_heads() {
    let mut store = MemoryStore::new();
    store.set_head_raw(TENANT, Some(b"ref: 3f2a9c\n".to_vec()));
    let mut e = Engine::new(TENANT).unwrap();
    let op = e.open();
    let err = run(&mut e, &mut store, op).unwrap_err();
    assert_eq!(err, Error::Invalid("tenant \"conf\" was written by another langonrock format: export it there and import it here".into()));
    let op = e.write("a", "b.md", "x", None, "2026-05-01T09:30:00.000Z");
    assert_eq!(run(&mut e, &mut store, op).unwrap_err(), err);
    assert_eq!(store.head(TENANT).as_deref(), Some(&b"ref: 3f2a9c\n"[..]));
    assert!(store.records(TENANT).is_empty());
    store.set_head_raw(
        TENANT,
        Some(b"{\"format\":\"langonrock/head\",\"version\":1,\"revision\":\"x\"}".to_vec()),
    );
    let op = e.open();
    assert_eq!(
        run(&mut e, &mut store, op).unwrap_err().message(),
        "database corruption: head record is malformed"
    );
}

#[test]
fn commit_lifecycle_outcomes() {
    let mut h = Host::new();
    h.create("sales", "a.md", "a");
    let before = h.snap();
    // A failed commit may leave unreachable records behind (collection removes them); what
    // is observable and the head stay exactly as they were.
    let seen = |h: &mut Host| {
        let s = h.snap();
        (s.0, s.1)
    };
    let before_seen = (before.0.clone(), before.1.clone());
    // Reads during a commit see the previous revision; a second prepare is refused.
    let at = h.at();
    let mut op = h.e.write("sales", "b.md", "b", None, &at);
    let mut answer = None;
    let prepared = loop {
        match op.resume(&mut h.e, answer.take()).unwrap() {
            Step::Need(Need::Commit(p)) => break p,
            Step::Need(n) => answer = Some(langonrock_core::engine::serve(&mut h.store, TENANT, n)),
            Step::Done(_) => unreachable!(),
        }
    };
    assert!(h.e.commit_in_flight());
    assert_eq!(
        op.pending_result().map(|w| w.id.clone()),
        Some(Some("b".to_string()))
    );
    assert_eq!(h.paths(), ["sales/a.md"]);
    let other = h.e.write("sales", "c.md", "c", None, &at);
    assert_eq!(
        h.run(other).unwrap_err().message(),
        "a commit is already in flight; prepare the next one after its outcome"
    );
    // A host that loses the op reports the commit as indeterminate.
    let mut lost = Host::new();
    let at = lost.at();
    let lost_op = lost.e.write("sales", "x.md", "x", None, &at);
    let mut lost_op = lost_op;
    let first = lost_op.resume(&mut lost.e, None).unwrap();
    assert!(matches!(first, Step::Need(Need::Head)));
    let head = langonrock_core::engine::serve(&mut lost.store, TENANT, Need::Head);
    let Step::Need(Need::Commit(p)) = lost_op.resume(&mut lost.e, Some(head)).unwrap() else {
        panic!()
    };
    drop(lost_op);
    assert_eq!(
        lost.e.forget_commit(),
        Some(Error::IndeterminateCommit {
            revision: p.revision.to_hex()
        })
    );
    assert_eq!(lost.e.forget_commit(), None);
    let refresh = lost.e.refresh();
    lost.run(refresh).unwrap();
    assert!(lost.paths().is_empty());
    // The prepared data: records the head does not reach, expected and new head.
    assert_eq!(prepared.expected, h.store.head(TENANT));
    let kinds: Vec<Kind> = prepared.records.iter().map(|r| r.0.kind).collect();
    assert_eq!(kinds, [Kind::Source, Kind::Record, Kind::Revision]);
    assert_eq!(prepared.records[0].1, b"b");
    // A failed store: STORE with its message; nothing changed.
    let r = op.resume(
        &mut h.e,
        Some(Answer::Outcome(CommitOutcome::Failed(
            langonrock_core::engine::StoreError::Failed("disk full".into()),
        ))),
    );
    assert_eq!(r.unwrap_err(), Error::Store("disk full".into()));
    assert!(!h.e.commit_in_flight());
    assert_eq!(h.snap(), before);
    // A failed swap, a failed put, a failed head read.
    h.store.inject(Fault::Swap(SwapFault::Fail));
    assert_eq!(
        h.write("sales", "b.md", "b", None).unwrap_err(),
        Error::Store("injected store failure".into())
    );
    assert_eq!(seen(&mut h), before_seen);
    h.store.inject(Fault::Put(0));
    assert_eq!(
        h.write("sales", "b.md", "b", None).unwrap_err().code(),
        "STORE"
    );
    h.store.inject(Fault::ReadHead);
    assert_eq!(
        h.write("sales", "b.md", "b", None).unwrap_err().code(),
        "STORE"
    );
    assert_eq!(seen(&mut h), before_seen);
    // A store failing reads does not fail the engine closed.
    h.store.inject(Fault::Get);
    let mut fresh = Engine::new(TENANT).unwrap();
    let op = fresh.open();
    assert_eq!(
        run(&mut fresh, &mut h.store, op).unwrap_err().code(),
        "STORE"
    );
    let op = fresh.open();
    run(&mut fresh, &mut h.store, op).unwrap();
    // The memory store refuses a head that references records never put.
    let at = h.at();
    let op = h.e.write("sales", "b.md", "b", None, &at);
    let mut op = op;
    let mut answer = None;
    let p = loop {
        match op.resume(&mut h.e, answer.take()).unwrap() {
            Step::Need(Need::Commit(p)) => break p,
            Step::Need(n) => answer = Some(langonrock_core::engine::serve(&mut h.store, TENANT, n)),
            Step::Done(_) => unreachable!(),
        }
    };
    let outcome = h.store.swap_head(TENANT, p.expected.as_deref(), &p.head);
    assert!(
        matches!(&outcome, langonrock_core::engine::SwapOutcome::Failed(m) if m.contains("which was never put")),
        "{outcome:?}"
    );
    let _ = op.resume(&mut h.e, Some(Answer::Outcome(outcome.into())));
    assert_eq!(seen(&mut h), before_seen);
}

#[test]
fn refresh_applies_another_writers_commits() {
    let mut h = Host::new();
    h.create("sales", "a.md", &concept("A."));
    let mut other = Engine::new(TENANT).unwrap();
    let op = other.open();
    run(&mut other, &mut h.store, op).unwrap();
    h.create("sales", "b.md", &concept("B."));
    h.create("ops", "c.md", &concept("C."));
    let op = other.refresh();
    let r = run(&mut other, &mut h.store, op).unwrap();
    assert!(r.loaded);
    assert_eq!(r.concepts, 3);
    let op = other.refresh();
    assert!(!run(&mut other, &mut h.store, op).unwrap().loaded);
    let want = h.snap().0;
    assert_eq!(observe(&mut other, &mut h.store), want);
    // A commit from the stale engine refreshes first, so its preconditions see b.md.
    let mut third = Engine::new(TENANT).unwrap();
    let op = third.open();
    run(&mut third, &mut h.store, op).unwrap();
    h.create("sales", "d.md", "d");
    let op = third.write("sales", "d.md", "mine", None, "2026-05-02T00:00:00.000Z");
    assert_eq!(
        conflict_of(run(&mut third, &mut h.store, op).unwrap_err()).1,
        Some(ConflictReason::Exists)
    );
}

#[test]
fn import_reconciles_with_its_baseline() {
    let mut h = Host::new();
    let folder = |docs: &[(&str, &str)]| {
        docs.iter()
            .map(|(p, t)| SourceDoc::new("notes", *p, *t))
            .collect::<Vec<_>>()
    };
    let import = |h: &mut Host, docs: Vec<SourceDoc>, strict: bool| {
        let at = h.at();
        let op = h.e.import(
            ImportRequest {
                location: "/f".into(),
                documents: docs,
                strict,
            },
            &at,
        );
        h.run(op)
    };
    let r = import(
        &mut h,
        folder(&[("a.md", "# A\n"), ("b.md", "# B\n")]),
        false,
    )
    .unwrap();
    assert!(r.committed && !r.reused);
    assert_eq!(r.diagnostics.len(), 2);
    // The database edits a.md; the folder edits b.md and drops nothing.
    let ha = h.hash("notes", "a.md");
    h.write("notes", "a.md", "# A db\n", Some(&ha)).unwrap();
    h.create("notes", "db-only.md", "# Only in the database\n");
    let r = import(
        &mut h,
        folder(&[("a.md", "# A\n"), ("b.md", "# B folder\n")]),
        false,
    )
    .unwrap();
    assert!(r.committed);
    let s = h.e.read().unwrap();
    assert_eq!(s.read_source("notes", "a.md").unwrap().content, "# A db\n");
    assert_eq!(
        s.read_source("notes", "b.md").unwrap().content,
        "# B folder\n"
    );
    assert!(s.read_source("notes", "db-only.md").is_some());
    // Both sides change a.md: refused, naming it.
    let before = h.snap();
    let e = import(
        &mut h,
        folder(&[("a.md", "# A folder\n"), ("b.md", "# B folder\n")]),
        false,
    )
    .unwrap_err();
    assert_eq!(
        conflict_of(e).0,
        "folder and database both changed notes/a.md; reconcile the source hashes before importing"
    );
    assert_eq!(h.snap(), before);
    // The folder deletes b.md.
    let r = import(&mut h, folder(&[("a.md", "# A\n")]), false).unwrap();
    assert!(r.committed && h.e.read().unwrap().read_source("notes", "b.md").is_none());
    // Nothing changed: no revision, nothing committed.
    let before = h.snap();
    let r = import(&mut h, folder(&[("a.md", "# A\n")]), false).unwrap();
    assert!(!r.committed && r.reused);
    assert_eq!(h.snap(), before);
    // A baseline-only change keeps the revision under a new head record.
    let rev = h.head_revision();
    let r = import(&mut h, folder(&[("a.md", "# A db\n")]), false).unwrap();
    assert!(r.committed);
    assert_eq!(r.revision, rev);
    assert_ne!(h.store.head(TENANT), before.1);
    // --strict refuses a folder with diagnostics and commits nothing.
    let before = h.snap();
    let r = import(
        &mut h,
        folder(&[("a.md", "# A db\n"), ("c.md", "# C\n")]),
        true,
    )
    .unwrap();
    assert!(!r.committed);
    assert_eq!(
        r.diagnostics
            .iter()
            .map(|d| d.path.as_str())
            .collect::<Vec<_>>(),
        ["a.md", "c.md"]
    );
    assert_eq!(h.snap(), before);
}

#[test]
fn memory_store_refuses_a_head_whose_retained_chain_is_incomplete() {
    let mut h = Host::new();
    let first = h.create("sales", "a.md", "a");
    h.create("sales", "b.md", "b");
    let first_key = Key::new(
        Kind::Revision,
        langonrock_core::engine::Digest::from_hex(&first.revision).unwrap(),
    );
    let bytes = h.store.records(TENANT)[&first_key].clone();
    h.store.lose(TENANT, &first_key);
    let e = h.write("sales", "c.md", "c", None).unwrap_err();
    assert_eq!(
        e,
        Error::Store(format!("head references {first_key}, which was never put"))
    );
    h.store.put(TENANT, &first_key, &bytes).unwrap();
    h.create("sales", "c.md", "c");
    assert_eq!(h.paths(), ["sales/a.md", "sales/b.md", "sales/c.md"]);
}

/// Edit to search: once a write returns, the next search sees it, and the carried-over index
/// equals one built from scratch for the same model (search.md §8).
#[test]
fn search_sees_each_commit_and_matches_a_fresh_index() {
    use langonrock_core::search::{search, Index, SearchOptions};
    let mut h = Host::new();
    let opts = SearchOptions::default();
    let today = "2026-09-21";
    h.create(
        "sales",
        "orders.md",
        "---\ntype: table\n---\nOrders placed online.\n",
    );
    let first =
        h.e.read()
            .unwrap()
            .search(TENANT, "zebra", &opts, today)
            .unwrap();
    assert!(first.contains("# hits: 0 direct, 0 linked\n"), "{first}");
    let hash = h.hash("sales", "orders.md");
    h.write(
        "sales",
        "orders.md",
        "---\ntype: table\n---\nOrders placed online by zebra.\n",
        Some(&hash),
    )
    .unwrap();
    h.create(
        "ops",
        "zebra.md",
        "---\ntype: runbook\n---\nZebra crossing, see [[orders]].\n",
    );
    let served = h.e.read().unwrap();
    for q in ["zebra", "orders", "crossing online"] {
        let carried = served.search(TENANT, q, &opts, today).unwrap();
        let fresh = search(
            served.model(),
            &Index::build(served.model(), today),
            TENANT,
            q,
            &opts,
            today,
        )
        .unwrap();
        assert_eq!(carried, fresh, "{q}");
    }
    let hits = served.search(TENANT, "zebra", &opts, today).unwrap();
    assert!(hits.contains("# hits: 2 direct, 0 linked\n"), "{hits}");
    // A new date re-dates the index in place; the answer equals a fresh index of that date.
    let later = served.search(TENANT, "zebra", &opts, "2030-01-01").unwrap();
    let fresh = search(
        served.model(),
        &Index::build(served.model(), "2030-01-01"),
        TENANT,
        "zebra",
        &opts,
        "2030-01-01",
    )
    .unwrap();
    assert_eq!(later, fresh);
}
