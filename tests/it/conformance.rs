//! The store conformance suite (engine.md §9.3), written once against the [`Store`] trait.
//!
//! Every store runs the same cases: `run_all(&|| Box::new(MyStore::new(...)))`. Each case
//! gets fresh stores from the factory. Failures are injected by wrapping the store in
//! [`FaultyStore`], so a real store fails exactly where the memory store does. Case 8 (a
//! native and a Node writer racing on one files tenant) needs two runtimes and lives with
//! the files store's own tests.

use langonrock_core::compile::SourceDoc;
use langonrock_core::engine::parse_transaction;
use langonrock_core::engine::{
    run, Answer, CommitOutcome, Digest, Engine, Fault, FaultyStore, GcOptions, HistoryRequest, Key,
    Kind, Need, Op, RestoreRequest, Step, Store, StoreError, SwapFault, SwapOutcome,
};
use langonrock_core::engine::{ImportRequest, Transaction};
use langonrock_core::{manifest, Error};
use serde_json::json;

/// A factory of fresh, empty stores.
pub(crate) type Make<'a> = &'a dyn Fn() -> Box<dyn Store>;

const TENANT: &str = "conf";
const TODAY: &str = "2026-06-01";

/// The commit time of the `n`-th commit of a case.
pub(crate) fn at(n: u64) -> String {
    format!(
        "2026-05-01T09:{:02}:{:02}.{:03}Z",
        (n / 60) % 60,
        n % 60,
        n % 1000
    )
}

/// An engine opened on `store`.
pub(crate) fn open(store: &mut dyn Store) -> Engine {
    let mut e = Engine::new(TENANT).unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    e
}

/// Everything a reader can observe of a tenant, as bytes: manifest, snapshot id, sources,
/// and the whole history.
pub(crate) fn observe(e: &mut Engine, store: &mut dyn Store) -> String {
    let s = e.read().unwrap();
    let mut out = manifest::manifest(s.model(), TENANT, None, TODAY).unwrap();
    out.push_str(&format!(
        "snapshot {}\nrevision {:?}\n",
        s.snapshot_id(),
        s.revision()
    ));
    for src in s.list_source() {
        let c = s.read_source(&src.bundle, &src.path).unwrap();
        out.push_str(&serde_json::to_string(&src).unwrap());
        out.push_str(&serde_json::to_string(&c).unwrap());
        out.push('\n');
    }
    let mut before = None;
    loop {
        let op = e.history(HistoryRequest {
            before: before.clone(),
            limit: Some(100),
        });
        let page = run(e, store, op).unwrap();
        out.push_str(&serde_json::to_string(&page.revisions).unwrap());
        match page.next {
            Some(n) => before = Some(n),
            None => break,
        }
    }
    out
}

fn doc(n: usize, extra: &str) -> String {
    format!(
        "---\ntype: note\ndescription: Note {n}{extra}.\n---\n# Note {n}\n\nSee [[note{}]].\n",
        n + 1
    )
}

fn write(
    e: &mut Engine,
    store: &mut dyn Store,
    path: &str,
    content: &str,
    n: u64,
) -> langonrock_core::Result<String> {
    let replaces = e.read().unwrap().source_hash("notes", path);
    let op = e.write("notes", path, content, replaces.as_deref(), &at(n));
    run(e, store, op).map(|w| w.revision)
}

fn txn(e: &Engine, docs: &[(&str, String)]) -> Transaction {
    let s = e.read().unwrap();
    let changes: Vec<_> = docs
        .iter()
        .map(|(p, c)| json!({"operation": "write", "bundle": "notes", "path": p, "content": c, "replaces": s.source_hash("notes", p)}))
        .collect();
    parse_transaction(&json!({ "changes": changes })).unwrap()
}

/// Steps an op until it asks for a commit, serving reads from `store`; returns the op and
/// the prepared commit.
pub(crate) fn prepare<T: 'static>(
    e: &mut Engine,
    store: &mut dyn Store,
    mut op: Op<T>,
) -> (Op<T>, langonrock_core::engine::PreparedCommit) {
    let mut answer = None;
    loop {
        match op.resume(e, answer.take()).unwrap() {
            Step::Need(Need::Commit(p)) => return (op, p),
            Step::Need(n) => answer = Some(langonrock_core::engine::serve(store, TENANT, n)),
            Step::Done(_) => panic!("the op finished without a commit"),
        }
    }
}

fn max_put_time(store: &mut dyn Store) -> u64 {
    store
        .keys(TENANT)
        .unwrap()
        .iter()
        .map(|k| k.put_time)
        .max()
        .unwrap_or(0)
}

/// Runs every case.
pub(crate) fn run_all(make: Make) {
    reopen_is_byte_for_byte(make);
    aborted_commit_is_never_observable(make);
    queued_commit_ignores_the_aborted_one(make);
    puts_are_idempotent_and_conflicts_detected(make);
    stale_expected_head_conflicts(make);
    indeterminate_is_old_or_new(make);
    collection_keeps_what_is_reached(make);
    collection_racing_a_commit(make);
}

/// §9.3.1: reopening yields the last acknowledged revision, byte for byte.
pub(crate) fn reopen_is_byte_for_byte(make: Make) {
    let mut store = make();
    let mut e = open(&mut *store);
    for n in 0..6 {
        write(
            &mut e,
            &mut *store,
            &format!("note{n}.md"),
            &doc(n, ""),
            n as u64,
        )
        .unwrap();
    }
    write(&mut e, &mut *store, "index.md", "# Index\n", 7).unwrap();
    write(&mut e, &mut *store, "note2.md", &doc(2, " edited"), 8).unwrap();
    let want = observe(&mut e, &mut *store);
    let mut again = open(&mut *store);
    assert_eq!(observe(&mut again, &mut *store), want);
}

/// §9.3.2: an aborted multi-document commit is never observable, before or after a reopen.
pub(crate) fn aborted_commit_is_never_observable(make: Make) {
    for fault in [
        Fault::Put(0),
        Fault::Put(1),
        Fault::Put(3),
        Fault::Swap(SwapFault::Fail),
    ] {
        let mut store = FaultyStore::new(make());
        let mut e = open(&mut store);
        write(&mut e, &mut store, "note0.md", &doc(0, ""), 0).unwrap();
        let before = observe(&mut e, &mut store);
        store.faults.inject(fault);
        let t = txn(
            &e,
            &[
                ("note0.md", doc(0, " changed")),
                ("note1.md", doc(1, "")),
                ("note2.md", doc(2, "")),
            ],
        );
        let op = e.transact(t, &at(1));
        let err = run(&mut e, &mut store, op).unwrap_err();
        assert_eq!(err.code(), "STORE", "{fault:?}");
        assert_eq!(observe(&mut e, &mut store), before, "{fault:?}");
        let mut again = open(&mut store);
        assert_eq!(observe(&mut again, &mut store), before, "{fault:?}");
    }
}

/// §9.3.3: a commit queued behind an aborted one is prepared against the unchanged head.
pub(crate) fn queued_commit_ignores_the_aborted_one(make: Make) {
    let mut store = FaultyStore::new(make());
    let mut e = open(&mut store);
    let first = write(&mut e, &mut store, "note0.md", &doc(0, ""), 0).unwrap();
    store.faults.inject(Fault::Swap(SwapFault::Fail));
    let t = txn(
        &e,
        &[("aborted1.md", "x".into()), ("aborted2.md", "y".into())],
    );
    let op = e.transact(t, &at(1));
    assert!(run(&mut e, &mut store, op).is_err());
    let second = write(&mut e, &mut store, "note1.md", &doc(1, ""), 2).unwrap();
    let page = {
        let op = e.history(HistoryRequest::default());
        run(&mut e, &mut store, op).unwrap()
    };
    assert_eq!(page.revisions.len(), 2);
    assert_eq!(page.revisions[0].revision, second);
    assert_eq!(page.revisions[0].parent.as_deref(), Some(first.as_str()));
    let mut again = open(&mut store);
    let paths: Vec<String> = again
        .read()
        .unwrap()
        .list_source()
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(paths, ["note0.md", "note1.md"]);
    let _ = observe(&mut again, &mut store);
}

/// §9.3.4: puts are idempotent, and a conflicting put is detected.
pub(crate) fn puts_are_idempotent_and_conflicts_detected(make: Make) {
    let mut store = make();
    let bytes = b"hello".to_vec();
    let key = Key::of(Kind::Source, &bytes);
    store.put(TENANT, &key, &bytes).unwrap();
    store.put(TENANT, &key, &bytes).unwrap();
    assert_eq!(store.get(TENANT, &key).unwrap(), Some(bytes.clone()));
    assert_eq!(
        store
            .get_many(TENANT, &[key, Key::of(Kind::Source, b"nope")])
            .unwrap(),
        vec![Some(bytes), None]
    );
    assert_eq!(store.keys(TENANT).unwrap().len(), 1);
    match store.put(TENANT, &key, b"other") {
        Err(StoreError::Corrupt(m)) => assert!(m.starts_with("database corruption: "), "{m}"),
        other => panic!("a conflicting put gave {other:?}"),
    }
    assert_eq!(
        store.get(TENANT, &key).unwrap().as_deref(),
        Some(&b"hello"[..])
    );
    // A derived record is replaced by a put.
    let dkey = Key::new(Kind::Derived, Digest::of(b"snapshot"));
    store.put(TENANT, &dkey, b"v1").unwrap();
    store.put(TENANT, &dkey, b"v2").unwrap();
    assert_eq!(
        store.get(TENANT, &dkey).unwrap().as_deref(),
        Some(&b"v2"[..])
    );
    // An identical put refreshes the put time.
    let t1 = store
        .keys(TENANT)
        .unwrap()
        .iter()
        .find(|k| k.key == key)
        .unwrap()
        .put_time;
    store.put(TENANT, &dkey, b"v3").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    store.put(TENANT, &key, b"hello").unwrap();
    let t2 = store
        .keys(TENANT)
        .unwrap()
        .iter()
        .find(|k| k.key == key)
        .unwrap()
        .put_time;
    assert!(t2 > t1, "{t1} -> {t2}");
}

/// §9.3.5: a stale expected head gives conflict, and two racing writers cannot both win.
pub(crate) fn stale_expected_head_conflicts(make: Make) {
    let mut store = make();
    let mut a = open(&mut *store);
    write(&mut a, &mut *store, "note0.md", &doc(0, ""), 0).unwrap();
    let mut b = open(&mut *store);
    let op = a.write("notes", "a.md", "from a", None, &at(1));
    let (op_a, pa) = prepare(&mut a, &mut *store, op);
    let op = b.write("notes", "b.md", "from b", None, &at(1));
    let (op_b, pb) = prepare(&mut b, &mut *store, op);
    assert_eq!(pa.expected, pb.expected);
    let mut finish = |e: &mut Engine, mut op: Op<_>, p: langonrock_core::engine::PreparedCommit| {
        let answer = langonrock_core::engine::serve(&mut *store, TENANT, Need::Commit(p));
        op.resume(e, Some(answer))
    };
    let ra = finish(&mut a, op_a, pa);
    let rb = finish(&mut b, op_b, pb);
    assert!(matches!(ra, Ok(Step::Done(_))));
    let err = rb.unwrap_err();
    assert_eq!(
        err.message(),
        "database changed: re-read the revision and document hashes"
    );
    assert_eq!(err.code(), "CONFLICT");
    // The loser refreshes and wins the second time, with a's change kept.
    let rev = write(&mut b, &mut *store, "b.md", "from b", 2).unwrap();
    let paths: Vec<String> = b
        .read()
        .unwrap()
        .list_source()
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(paths, ["a.md", "b.md", "note0.md"]);
    assert_eq!(b.read().unwrap().revision().unwrap(), rev);
    // A direct stale swap.
    let head = store.read_head(TENANT).unwrap();
    assert_eq!(
        store.swap_head(TENANT, Some(b"not the head"), head.as_deref().unwrap()),
        SwapOutcome::Conflict
    );
    assert_eq!(
        store.swap_head(TENANT, None, head.as_deref().unwrap()),
        SwapOutcome::Conflict
    );
}

/// §9.3.6: an indeterminate outcome is reported as such; reopening gives the old or the
/// new revision, never a mix.
pub(crate) fn indeterminate_is_old_or_new(make: Make) {
    for (fault, lands) in [
        (SwapFault::IndeterminateBefore, false),
        (SwapFault::IndeterminateAfter, true),
    ] {
        let mut store = FaultyStore::new(make());
        let mut e = open(&mut store);
        write(&mut e, &mut store, "note0.md", &doc(0, ""), 0).unwrap();
        let old = observe(&mut e, &mut store);
        store.faults.inject(Fault::Swap(fault));
        let t = txn(
            &e,
            &[("note0.md", doc(0, " changed")), ("note1.md", doc(1, ""))],
        );
        let op = e.transact(t, &at(1));
        let (mut op, p) = prepare(&mut e, &mut store, op);
        let revision = p.revision.to_hex();
        let answer = langonrock_core::engine::serve(&mut store, TENANT, Need::Commit(p));
        assert_eq!(answer, Answer::Outcome(CommitOutcome::Indeterminate));
        let err = op.resume(&mut e, Some(answer)).unwrap_err();
        assert_eq!(
            err,
            Error::IndeterminateCommit {
                revision: revision.clone()
            }
        );
        assert_eq!(
            err.message(),
            format!("commit outcome is indeterminate; inspect revision {revision} before retrying")
        );
        // The engine refuses reads until it reloads.
        assert_eq!(e.read().unwrap_err().code(), "INDETERMINATE_COMMIT");
        let mut again = open(&mut store);
        let now = observe(&mut again, &mut store);
        if lands {
            assert_ne!(now, old);
            assert_eq!(again.read().unwrap().revision().unwrap(), revision);
            let paths: Vec<String> = again
                .read()
                .unwrap()
                .list_source()
                .into_iter()
                .map(|s| s.path)
                .collect();
            assert_eq!(paths, ["note0.md", "note1.md"]);
        } else {
            assert_eq!(now, old);
        }
        // The first engine reloads on its next operation and agrees.
        let op = e.refresh();
        run(&mut e, &mut store, op).unwrap();
        assert_eq!(observe(&mut e, &mut store), now);
    }
}

/// §9.3.7: collection never removes a record that a retained revision or an import baseline
/// reaches.
pub(crate) fn collection_keeps_what_is_reached(make: Make) {
    let mut store = make();
    let mut e = open(&mut *store);
    // An import baseline that names a document later edited away.
    let folder = vec![SourceDoc::new(
        "notes",
        "imported.md",
        "# Imported\n\nFrom a folder.\n",
    )];
    let op = e.import(
        ImportRequest {
            location: "/data/folder".into(),
            documents: folder,
            strict: false,
        },
        &at(0),
    );
    assert!(run(&mut e, &mut *store, op).unwrap().committed);
    for n in 1..16u64 {
        write(
            &mut e,
            &mut *store,
            "imported.md",
            &format!("# Imported\n\nEdit {n}.\n"),
            n,
        )
        .unwrap();
        write(
            &mut e,
            &mut *store,
            &format!("note{n}.md"),
            &doc(n as usize, ""),
            100 + n,
        )
        .unwrap();
    }
    let op = e.gc(GcOptions {
        keep: 3,
        dry_run: true,
        grace_ms: 0,
        now: u64::MAX,
    });
    let dry = run(&mut e, &mut *store, op).unwrap();
    assert!(
        dry.dry_run && dry.removed_revisions == 28 && dry.kept.len() == 3,
        "{dry:?}"
    );
    let op = e.gc(GcOptions {
        keep: 3,
        dry_run: false,
        grace_ms: 0,
        now: u64::MAX,
    });
    let gc = run(&mut e, &mut *store, op).unwrap();
    assert_eq!(
        (
            gc.kept.clone(),
            gc.removed_revisions,
            gc.removed_records,
            gc.bytes_freed
        ),
        (dry.kept, 28, dry.removed_records, dry.bytes_freed)
    );
    assert!(gc.removed_records > 0 && gc.bytes_freed > 0);
    let op = e.verify();
    let v = run(&mut e, &mut *store, op).unwrap();
    assert!(v.ok, "{v:?}");
    assert_eq!(v.verified_revisions, gc.kept);
    // The baseline still detects a database-side edit of the imported document.
    let folder = vec![SourceDoc::new(
        "notes",
        "imported.md",
        "# Imported\n\nFolder edit.\n",
    )];
    let op = e.import(
        ImportRequest {
            location: "/data/folder".into(),
            documents: folder,
            strict: false,
        },
        &at(200),
    );
    assert_eq!(
        run(&mut e, &mut *store, op).unwrap_err().message(),
        "folder and database both changed notes/imported.md; reconcile the source hashes before importing"
    );
    // History stops at the retained window; the oldest kept revision restores.
    let op = e.history(HistoryRequest::default());
    let page = run(&mut e, &mut *store, op).unwrap();
    assert_eq!(
        page.revisions
            .iter()
            .map(|r| r.revision.clone())
            .collect::<Vec<_>>(),
        gc.kept
    );
    let head = gc.kept[0].clone();
    let op = e.restore(
        RestoreRequest {
            revision: gc.kept[2].clone(),
            expected_revision: head,
        },
        &at(201),
    );
    run(&mut e, &mut *store, op).unwrap();
    let mut again = open(&mut *store);
    let want = observe(&mut e, &mut *store);
    assert_eq!(observe(&mut again, &mut *store), want);
}

/// §9.3.9: collection racing a commit never removes a record the acknowledged head reaches.
pub(crate) fn collection_racing_a_commit(make: Make) {
    let mut store = make();
    let mut a = open(&mut *store);
    for n in 0..4u64 {
        write(
            &mut a,
            &mut *store,
            &format!("note{n}.md"),
            &doc(n as usize, ""),
            n,
        )
        .unwrap();
    }
    let t0 = max_put_time(&mut *store);
    // A prepares and stores its records, but has not swapped yet.
    let op = a.write(
        "notes",
        "racing.md",
        "# Racing\n\nNew text.\n",
        None,
        &at(10),
    );
    let (mut op, p) = prepare(&mut a, &mut *store, op);
    for (k, b) in &p.records {
        store.put(TENANT, k, b).unwrap();
    }
    // B collects with a grace period that covers A's puts.
    let mut b = open(&mut *store);
    let now = max_put_time(&mut *store) + 1;
    let op_gc = b.gc(GcOptions {
        keep: 1,
        dry_run: false,
        grace_ms: now - t0,
        now,
    });
    let gc = run(&mut b, &mut *store, op_gc).unwrap();
    assert_eq!(gc.kept.len(), 1);
    // A swaps: B's collection moved the head, so A conflicts and retries; nothing is lost.
    let outcome = store.swap_head(TENANT, p.expected.as_deref(), &p.head);
    let r = op.resume(&mut a, Some(Answer::Outcome(outcome.into())));
    match r {
        Ok(Step::Done(_)) => {}
        Err(e) => {
            assert_eq!(
                e.message(),
                "database changed: re-read the revision and document hashes"
            );
            write(
                &mut a,
                &mut *store,
                "racing.md",
                "# Racing\n\nNew text.\n",
                11,
            )
            .unwrap();
        }
        Ok(Step::Need(n)) => panic!("unexpected need {n:?}"),
    }
    let op = a.verify();
    let v = run(&mut a, &mut *store, op).unwrap();
    assert!(v.ok, "{v:?}");
    let mut again = open(&mut *store);
    assert!(again
        .read()
        .unwrap()
        .read_source("notes", "racing.md")
        .is_some());
    let want = observe(&mut a, &mut *store);
    assert_eq!(observe(&mut again, &mut *store), want);
}

/// The memory store passes the suite.
#[test]
fn memory_store_conforms() {
    run_all(&|| Box::new(langonrock_core::engine::MemoryStore::new()));
}

#[allow(dead_code)]
fn unused(_: Digest) {}
