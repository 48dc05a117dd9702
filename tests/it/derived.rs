//! Derived records (engine.md §9.1 rule 4): an open served from one answers every read
//! byte for byte like an open that compiles, on the memory store and the files store; a
//! derived record that does not check out is ignored, never served and never an error;
//! sources are still read and verified on first use; and commits after such an open equal
//! commits after a compiling one.

use crate::util::data_dir;
use langonrock::files::Files;
use langonrock_core::compile::SourceDoc;
use langonrock_core::engine::{
    derived, derived_key, parse_transaction, run, Engine, ImportRequest, Key, Kind, MemoryStore,
    RestoreRequest, Store,
};
use langonrock_core::read::{render_cli, GetOptions};
use langonrock_core::search::SearchOptions;
use langonrock_core::{manifest, Error};
use proptest::prelude::*;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

const T: &str = "dv";
const TODAY: &str = "2026-06-01";
const LATER: &str = "2027-03-01";

fn at(n: u64) -> String {
    format!("2026-05-{:02}T08:00:00.{:03}Z", 1 + n / 1000, n % 1000)
}

fn samples() -> Vec<SourceDoc> {
    langonrock_node_mcp::folder::read_folder(&data_dir().join("okf-samples"), None)
        .unwrap()
        .docs
        .into_iter()
        .map(|d| d.doc)
        .collect()
}

/// A generated tenant: bundles of concepts that link each other by path and by wiki name,
/// ids that collide across bundles (prefixed), navigation documents, stale dates on both
/// sides of `TODAY`, sections, non-ASCII and CRLF text, and bad YAML.
fn generated(bundles: usize, per: usize) -> Vec<SourceDoc> {
    let mut out = Vec::new();
    for b in 0..bundles {
        let bundle = format!("dom{b}");
        out.push(SourceDoc::new(
            bundle.as_str(),
            "index.md",
            format!("# Domain {b}\n\nNavigation for [t0](tables/t0.md).\n"),
        ));
        for i in 0..per {
            let stale = match i % 4 {
                0 => "stale_after: 2026-01-01\n".to_string(),
                1 => "stale_after: 2026-12-01\n".to_string(),
                2 => "stale_after: someday\n".to_string(),
                _ => String::new(),
            };
            let text = match i % 7 {
                6 => format!("---\ntype: [broken\n---\nBroken {i} in {bundle}.\n"),
                5 => format!(
                    "\u{feff}---\r\ntype: Metric\r\ntitle: Métrique {i}\r\n{stale}---\r\nCafé naïve “{i}” 🎉 revenue.\r\n\r\n## Définition\r\n\r\nSee [[t{}]].\r\n",
                    (i + 1) % per
                ),
                _ => format!(
                    "---\ntype: BigQuery Table\ntitle: Table {i} of {bundle}\ndescription: Rows of orders {i}, shipments and refunds for {bundle}.\nstatus: {}\ngrain: id_{i}\n{stale}---\n\nOne row per order {i}. Joins [next](t{}.md) and [[t{}]] and [[dom{}/t{i}]].\n\n# Schema\n\n| column | type |\n| --- | --- |\n| id_{i} | STRING |\n\n# Common query patterns\n\n```sql\nSELECT * FROM t{i}\n```\n",
                    if i % 3 == 0 { "draft" } else { "current" },
                    (i + 1) % per,
                    (i + 2) % per,
                    (b + 1) % bundles
                ),
            };
            out.push(SourceDoc::new(
                bundle.as_str(),
                format!("tables/t{i}.md"),
                text,
            ));
        }
    }
    out
}

/// Imports `docs` as one revision.
fn import(e: &mut Engine, store: &mut dyn Store, docs: Vec<SourceDoc>) {
    let op = e.import(
        ImportRequest {
            location: "/corpus".into(),
            documents: docs,
            strict: false,
        },
        &at(0),
    );
    run(e, store, op).unwrap();
}

fn open(store: &mut dyn Store) -> Engine {
    let mut e = Engine::new(T).unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    e
}

/// Puts the served state's derived record, as a writable host does.
fn put_derived(e: &mut Engine, store: &mut dyn Store) -> (Key, Vec<u8>) {
    put_derived_with(e, store, true)
}

/// Puts the served state's derived record, with the texts or leaving them to the store.
fn put_derived_with(e: &mut Engine, store: &mut dyn Store, texts: bool) -> (Key, Vec<u8>) {
    let s = e.take_derived().expect("due");
    let (key, bytes) = s.derived_record(TODAY, texts).unwrap();
    store.put(T, &key, &bytes).unwrap();
    (key, bytes)
}

/// A store that counts the records it hands out (to see what an open reads).
struct Counting<'a> {
    inner: &'a mut dyn Store,
    sources: usize,
}

impl Store for Counting<'_> {
    fn read_head(
        &mut self,
        t: &str,
    ) -> Result<Option<Vec<u8>>, langonrock_core::engine::StoreError> {
        self.inner.read_head(t)
    }
    fn get_many(
        &mut self,
        t: &str,
        keys: &[Key],
    ) -> Result<Vec<Option<Vec<u8>>>, langonrock_core::engine::StoreError> {
        self.sources += keys.iter().filter(|k| k.kind == Kind::Source).count();
        self.inner.get_many(t, keys)
    }
    fn put(
        &mut self,
        t: &str,
        k: &Key,
        b: &[u8],
    ) -> Result<(), langonrock_core::engine::StoreError> {
        self.inner.put(t, k, b)
    }
    fn swap_head(
        &mut self,
        t: &str,
        e: Option<&[u8]>,
        n: &[u8],
    ) -> langonrock_core::engine::SwapOutcome {
        self.inner.swap_head(t, e, n)
    }
    fn keys(
        &mut self,
        t: &str,
    ) -> Result<Vec<langonrock_core::engine::KeyInfo>, langonrock_core::engine::StoreError> {
        self.inner.keys(t)
    }
    fn remove(
        &mut self,
        t: &str,
        k: &[Key],
        b: u64,
    ) -> Result<Vec<Key>, langonrock_core::engine::StoreError> {
        self.inner.remove(t, k, b)
    }
}

/// Every read, rendered: manifests on two dates, the snapshot, sources, and for every
/// concept `get` whole, by section, with `find`, capped and with `source`, and searches.
fn reads(e: &mut Engine, store: &mut dyn Store) -> String {
    let s = e.read().unwrap();
    let m = s.model();
    let mut out = String::new();
    for day in [TODAY, LATER] {
        out.push_str(&manifest::manifest(m, T, None, day).unwrap());
    }
    if let Some(b) = m.bundles.first() {
        out.push_str(&manifest::manifest(m, T, Some(b), TODAY).unwrap());
    }
    out.push_str(&format!(
        "{} {} {:?}\n",
        s.snapshot_id(),
        s.concepts(),
        s.revision()
    ));
    out.push_str(&serde_json::to_string(&s.list_source()).unwrap());
    for d in m.diagnostics() {
        out.push_str(&format!("{}/{}: {}\n", d.bundle, d.path, d.message));
    }
    let ids: Vec<String> = m.concepts().iter().map(|c| c.id.clone()).collect();
    let op = e.check_sources(Some(ids.clone()));
    run(e, store, op).unwrap();
    for c in m.concepts() {
        let section = c.parsed.sections.last().map(|x| x.name.clone());
        for opts in [
            GetOptions::default(),
            GetOptions {
                section,
                ..GetOptions::default()
            },
            GetOptions {
                find: Some("order".into()),
                ..GetOptions::default()
            },
            GetOptions {
                offset: Some(3),
                limit: Some(40),
                ..GetOptions::default()
            },
            GetOptions {
                source: true,
                limit: Some(200),
                ..GetOptions::default()
            },
        ] {
            out.push_str(&render_cli(&s.get(&[c.id.as_str()], &opts).unwrap()));
        }
    }
    out.push_str(&render_cli(&s.get(&ids, &GetOptions::default()).unwrap()));
    for (q, bundle, day) in [
        ("orders shipments", None, TODAY),
        ("revenue café", None, TODAY),
        ("table refunds", m.bundles.last().cloned(), TODAY),
        ("sessions events users", None, LATER),
        ("orders", None, LATER),
        ("zzz nothing", None, TODAY),
    ] {
        let opts = SearchOptions {
            bundle,
            ..SearchOptions::default()
        };
        out.push_str(&s.search(T, q, &opts, day).unwrap());
    }
    for src in s.list_source().iter().take(25) {
        let op = e.read_source(&src.bundle, &src.path);
        let c = run(e, store, op).unwrap().unwrap();
        out.push_str(&serde_json::to_string(&c).unwrap());
    }
    out
}

fn check_identical(docs: Vec<SourceDoc>, store: &mut dyn Store) {
    let mut e = Engine::new(T).unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    import(&mut e, store, docs);
    // The compiled engine's reads, before its derived record exists.
    let compiled = reads(&mut e, store);
    assert!(!e.read().unwrap().from_derived());
    put_derived(&mut e, store);
    let mut d = open(store);
    assert!(d.read().unwrap().from_derived());
    let served = reads(&mut d, store);
    assert!(
        compiled == served,
        "a derived open reads differently (lengths {} and {})",
        compiled.len(),
        served.len()
    );
    // Reading twice (indexes built, texts checked) changes nothing either.
    assert!(reads(&mut d, store) == compiled);
}

static DIR: AtomicU64 = AtomicU64::new(0);

fn files() -> (Files, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "langonrock-derived-{}-{}",
        std::process::id(),
        DIR.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    (Files::new(&dir), dir)
}

#[test]
fn samples_read_identically_on_the_memory_store() {
    check_identical(samples(), &mut MemoryStore::new());
}

#[test]
fn generated_reads_identically_on_the_memory_store() {
    check_identical(generated(4, 40), &mut MemoryStore::new());
}

#[test]
fn samples_and_generated_read_identically_on_the_files_store() {
    for docs in [samples(), generated(3, 30)] {
        let (mut f, dir) = files();
        check_identical(docs, &mut f);
        assert_eq!(
            std::fs::read_dir(dir.join("tenants").join(T).join("derived"))
                .unwrap()
                .count(),
            1
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A store with one revision and its good derived record, and the compiled reads.
fn prepared() -> (MemoryStore, Key, Vec<u8>, String) {
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    import(&mut e, &mut store, generated(2, 15));
    let want = reads(&mut e, &mut store);
    let (key, bytes) = put_derived(&mut e, &mut store);
    (store, key, bytes, want)
}

/// Opens with `bytes` as the derived record: it must be ignored (compiled, same reads).
fn ignored(bytes: Vec<u8>, what: &str) {
    let (mut store, key, _, want) = prepared();
    store.tamper(T, &key, bytes);
    let mut e = open(&mut store);
    assert!(!e.read().unwrap().from_derived(), "{what} was served");
    assert!(reads(&mut e, &mut store) == want, "{what} changed a read");
}

#[test]
fn a_bad_derived_record_is_ignored() {
    let (store, key, good, _) = prepared();
    drop(store);
    let payload = u64::from_le_bytes(good[108..116].try_into().unwrap()) as usize;
    let mut flipped = good.clone();
    flipped[derived::HEADER + payload / 2] ^= 0x20;
    ignored(flipped, "a flipped payload byte");
    ignored(good[..good.len() / 2].to_vec(), "a truncated record");
    ignored(
        good[..derived::HEADER + payload].to_vec(),
        "a record without its texts",
    );
    let mut longer = good.clone();
    longer.extend_from_slice(b"x");
    ignored(longer, "a record with trailing bytes");
    let mut version = good.clone();
    version[8..12].copy_from_slice(&(u32::MAX).to_le_bytes());
    ignored(version, "another compiler version");
    let mut format = good.clone();
    format[4..8].copy_from_slice(&7u32.to_le_bytes());
    ignored(format, "another format");
    ignored(Vec::new(), "an empty record");
    ignored(b"{\"format\":\"langonrock/derived\"}".to_vec(), "garbage");
    // The record of another snapshot and state under this key.
    let mut other = MemoryStore::new();
    let mut e = open(&mut other);
    import(&mut e, &mut other, generated(1, 5));
    let (other_key, other_bytes) = put_derived(&mut e, &mut other);
    assert_ne!(other_key, key);
    ignored(other_bytes, "another snapshot's record");
}

#[test]
fn a_record_of_another_state_with_the_same_snapshot_is_ignored() {
    // Editing a navigation document keeps the snapshot id, so both revisions share one
    // derived key; the record names the state it was compiled from.
    let (mut store, key, old, _) = prepared();
    let mut e = open(&mut store);
    assert!(e.read().unwrap().from_derived());
    let snapshot = e.read().unwrap().snapshot_id();
    let h = e.read().unwrap().source_hash("dom0", "index.md");
    let op = e.write("dom0", "index.md", "# Changed\n", h.as_deref(), &at(5));
    run(&mut e, &mut store, op).unwrap();
    assert_eq!(e.read().unwrap().snapshot_id(), snapshot);
    assert_eq!(
        derived_key(&langonrock_core::engine::Digest::from_hex(&snapshot).unwrap()),
        key
    );
    // The store still holds the first state's record under that key.
    assert_eq!(store.records(T)[&key], old);
    let want = reads(&mut e, &mut store);
    let mut o = open(&mut store);
    assert!(!o.read().unwrap().from_derived());
    assert!(reads(&mut o, &mut store) == want);
    let op = o.read_source("dom0", "index.md");
    assert_eq!(
        run(&mut o, &mut store, op).unwrap().unwrap().content,
        "# Changed\n"
    );
}

fn source_key(e: &Engine, bundle: &str, path: &str) -> Key {
    let h = e.read().unwrap().source_hash(bundle, path).unwrap();
    Key::new(
        Kind::Source,
        langonrock_core::engine::Digest::from_hex(&h).unwrap(),
    )
}

#[test]
fn sources_are_verified_on_first_use() {
    let (mut store, _, _, _) = prepared();
    let probe = open(&mut store);
    let tampered = source_key(&probe, "dom0", "tables/t1.md");
    let lost = source_key(&probe, "dom1", "tables/t2.md");
    let lost_bytes = store.records(T)[&lost].clone();
    store.tamper(T, &tampered, b"tampered".to_vec());
    store.lose(T, &lost);
    let bad = format!("database corruption: {tampered} does not match its digest");
    let missing = format!("database corruption: {lost} is missing");

    let mut e = open(&mut store);
    let s = e.read().unwrap();
    assert!(s.from_derived());
    // Reads that return no source are served from the record.
    manifest::manifest(s.model(), T, None, TODAY).unwrap();
    s.get(&["dom0/t1"], &GetOptions::default()).unwrap();
    // Every read of a source reads its blob and fails closed.
    let op = e.read_source("dom0", "tables/t1.md");
    assert_eq!(run(&mut e, &mut store, op).unwrap_err().message(), bad);
    let op = e.read_source("dom1", "tables/t2.md");
    assert_eq!(run(&mut e, &mut store, op).unwrap_err().message(), missing);
    let op = e.check_sources(Some(vec!["dom0/t1".into()]));
    assert_eq!(run(&mut e, &mut store, op).unwrap_err().message(), bad);
    let op = e.check_sources(None);
    let err = run(&mut e, &mut store, op).unwrap_err().message();
    assert!(err == bad || err == missing, "{err}");
    // An untouched document reads fine.
    let op = e.read_source("dom0", "tables/t2.md");
    assert!(run(&mut e, &mut store, op).unwrap().is_some());
    // (The memory store refuses any head that reaches a lost record: bring it back.)
    store.put(T, &lost, &lost_bytes).unwrap();
    let op = e.read_source("dom1", "tables/t2.md");
    assert!(run(&mut e, &mut store, op).unwrap().is_some());
    // A commit that rewrites dom0's bundle record keeps t1's blob: it fails closed.
    let op = e.write("dom0", "new.md", "New.\n", None, &at(9));
    assert_eq!(run(&mut e, &mut store, op).unwrap_err().message(), bad);
    // One in another bundle that holds no damaged blob commits.
    let op = e.write("fresh", "new.md", "New.\n", None, &at(10));
    run(&mut e, &mut store, op).unwrap();
    // The new head has no derived record (a host puts it later): opening starts from its
    // parent's record and applies the difference, so the damaged blob is still caught on
    // first use.
    let mut e = Engine::new(T).unwrap();
    let op = e.open();
    run(&mut e, &mut store, op).unwrap();
    let op = e.read_source("dom0", "tables/t1.md");
    assert_eq!(run(&mut e, &mut store, op).unwrap_err().message(), bad);
    // Without any record to start from, opening compiles, reads every blob and fails closed.
    for k in store
        .records(T)
        .into_keys()
        .filter(|k| k.kind == Kind::Derived)
    {
        store.lose(T, &k);
    }
    let mut e = Engine::new(T).unwrap();
    let op = e.open();
    assert_eq!(run(&mut e, &mut store, op).unwrap_err().message(), bad);
}

#[test]
fn opening_never_writes() {
    let (mut store, _, _, _) = prepared();
    let before = store.records(T);
    let mut e = open(&mut store);
    reads(&mut e, &mut store);
    assert!(e.take_derived().is_none(), "served from a record: none due");
    assert_eq!(store.records(T), before);
    // A compiling open makes one due; the engine itself never puts it.
    let key = derived_key(&e.read().unwrap().snapshot_digest());
    store.lose(T, &key);
    let before = store.records(T);
    let mut c = open(&mut store);
    reads(&mut c, &mut store);
    assert_eq!(store.records(T), before);
    assert!(c.take_derived().is_some());
}

// ---------------------------------------------------------------------------------------
// Commits after a derived open equal commits after a compiling open.

const BUNDLES: [&str; 3] = ["dom0", "dom1", "new"];
const PATHS: [&str; 6] = [
    "tables/t0.md",
    "tables/t1.md",
    "tables/t3.md",
    "index.md",
    "tables/x.md",
    "t0.md",
];

fn content(v: u8) -> String {
    match v % 4 {
        0 => format!("---\ntype: table\ndescription: Version {v}.\n---\nRows {v}. See [[t1]] and [t0](tables/t0.md).\n"),
        1 => "# Plain\n\nNo frontmatter; [[t2]].\n".into(),
        2 => format!("---\ntype: note\nstale_after: 2026-01-0{}\n---\n## Part\n\nText {v}.\n", 1 + v % 9),
        _ => "# Nav\n".into(),
    }
}

#[derive(Clone, Debug)]
enum Action {
    Write { b: usize, p: usize, v: u8 },
    Delete { b: usize, p: usize },
    Txn(Vec<(usize, usize, Option<u8>)>),
    DeleteBundle { b: usize },
    Restore,
    Search(u8),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        4 => (0..3usize, 0..6usize, any::<u8>()).prop_map(|(b, p, v)| Action::Write { b, p, v }),
        2 => (0..3usize, 0..6usize).prop_map(|(b, p)| Action::Delete { b, p }),
        2 => prop::collection::vec((0..3usize, 0..6usize, prop::option::of(any::<u8>())), 1..4).prop_map(Action::Txn),
        1 => (0..3usize).prop_map(|b| Action::DeleteBundle { b }),
        1 => Just(Action::Restore),
        1 => any::<u8>().prop_map(Action::Search),
    ]
}

/// Applies `a` to `e`; returns what it answered, rendered.
fn apply(e: &mut Engine, store: &mut MemoryStore, a: &Action, n: u64, first: &str) -> String {
    let hash = |e: &Engine, b: usize, p: usize| e.read().unwrap().source_hash(BUNDLES[b], PATHS[p]);
    let r: Result<String, Error> = match a {
        Action::Write { b, p, v } => {
            let h = hash(e, *b, *p);
            let op = e.write(BUNDLES[*b], PATHS[*p], content(*v), h.as_deref(), &at(n));
            run(e, store, op).map(|w| serde_json::to_string(&w).unwrap())
        }
        Action::Delete { b, p } => {
            let h = hash(e, *b, *p);
            let op = e.delete(BUNDLES[*b], PATHS[*p], h.as_deref(), &at(n));
            run(e, store, op).map(|w| serde_json::to_string(&w).unwrap())
        }
        Action::Txn(list) => {
            let s = e.read().unwrap();
            let changes: Vec<_> = list
                .iter()
                .map(|(b, p, v)| match v {
                    Some(v) => json!({"operation": "write", "bundle": BUNDLES[*b], "path": PATHS[*p], "content": content(*v), "replaces": s.source_hash(BUNDLES[*b], PATHS[*p])}),
                    None => json!({"operation": "delete", "bundle": BUNDLES[*b], "path": PATHS[*p], "replaces": s.source_hash(BUNDLES[*b], PATHS[*p])}),
                })
                .collect();
            match parse_transaction(&json!({ "changes": changes })) {
                Ok(t) => {
                    let op = e.transact(t, &at(n));
                    run(e, store, op).map(|w| serde_json::to_string(&w).unwrap())
                }
                Err(err) => Err(err),
            }
        }
        Action::DeleteBundle { b } => {
            let op = e.delete_bundle(BUNDLES[*b], &at(n));
            run(e, store, op).map(|w| serde_json::to_string(&w).unwrap())
        }
        Action::Restore => {
            let expected = e.read().unwrap().revision().unwrap_or_default();
            let op = e.restore(
                RestoreRequest {
                    revision: first.to_string(),
                    expected_revision: expected,
                },
                &at(n),
            );
            run(e, store, op).map(|w| serde_json::to_string(&w).unwrap())
        }
        Action::Search(v) => {
            let q = ["orders", "rows version", "text part", "plain nav"][usize::from(*v % 4)];
            let day = if v % 2 == 0 { TODAY } else { LATER };
            e.read()
                .unwrap()
                .search(T, q, &SearchOptions::default(), day)
        }
    };
    match r {
        Ok(s) => s,
        Err(err) => format!("error {}", err.message()),
    }
}

/// A store's head and its records other than derived ones.
type Content = (Option<Vec<u8>>, Vec<(Key, Vec<u8>)>);

/// The store's records other than derived ones, and its head.
fn content_of(store: &MemoryStore) -> Content {
    (
        store.head(T),
        store
            .records(T)
            .into_iter()
            .filter(|(k, _)| k.kind != Kind::Derived)
            .collect(),
    )
}

fn same_commits(actions: Vec<Action>) {
    let mut base = MemoryStore::new();
    let mut e = open(&mut base);
    import(&mut e, &mut base, generated(2, 6));
    let first = e.read().unwrap().revision().unwrap();
    let mut with = base.clone();
    put_derived(&mut e, &mut with);
    let mut compiled = open(&mut base);
    let mut derived = open(&mut with);
    assert!(derived.read().unwrap().from_derived());
    assert!(!compiled.read().unwrap().from_derived());
    for (i, a) in actions.iter().enumerate() {
        let n = 100 + i as u64;
        let x = apply(&mut compiled, &mut base, a, n, &first);
        let y = apply(&mut derived, &mut with, a, n, &first);
        assert_eq!(x, y, "step {i}: {a:?}");
        assert_eq!(content_of(&base), content_of(&with), "step {i}: {a:?}");
    }
    assert!(reads(&mut compiled, &mut base) == reads(&mut derived, &mut with));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn commits_after_a_derived_open_equal_commits_after_a_compiling_open(
        actions in prop::collection::vec(action(), 1..10)
    ) {
        same_commits(actions);
    }
}

#[test]
fn a_write_after_a_derived_open_commits_like_after_a_compiling_one() {
    same_commits(vec![
        Action::Search(0),
        Action::Write { b: 0, p: 0, v: 1 },
        Action::Write { b: 2, p: 4, v: 0 },
        Action::Delete { b: 1, p: 1 },
        Action::Restore,
        Action::Search(1),
    ]);
}

#[test]
fn a_bad_text_in_the_record_is_caught_and_compiled_away() {
    let (mut store, key, mut bytes, want) = prepared();
    let probe = open(&mut store);
    let text = probe
        .read()
        .unwrap()
        .read_source("dom0", "tables/t2.md")
        .unwrap()
        .content;
    // Change one byte of that text inside the record: its payload digest still holds.
    let pos = bytes
        .windows(text.len())
        .rposition(|w| w == text.as_bytes())
        .unwrap()
        + text.find("order").unwrap();
    bytes[pos] = b'O';
    store.tamper(T, &key, bytes);
    let clean = {
        let mut c = store.clone();
        c.lose(T, &key);
        c
    };

    // A read that uses the text fails its check; the next operation compiles.
    let mut e = open(&mut store);
    let s = e.read().unwrap();
    assert!(s.from_derived());
    let err = s.get(&["dom0/t2"], &GetOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Corrupt(_)) && s.derived_failed());
    let op = e.refresh();
    run(&mut e, &mut store, op).unwrap();
    assert!(!e.read().unwrap().from_derived());
    assert!(reads(&mut e, &mut store) == want);

    // Reading the source compares it with its blob, and compiles on the spot.
    let mut e = open(&mut store);
    let op = e.read_source("dom0", "tables/t2.md");
    assert_eq!(run(&mut e, &mut store, op).unwrap().unwrap().content, text);
    assert!(!e.read().unwrap().from_derived());

    // A commit checks every text it carries over, and compiles on the spot too.
    let mut e = open(&mut store);
    let mut c = clean.clone();
    let mut compiled = open(&mut c);
    for (eng, st) in [(&mut e, &mut store), (&mut compiled, &mut c)] {
        let op = eng.write("dom0", "tables/n.md", "New.\n", None, &at(7));
        run(eng, st, op).unwrap();
    }
    assert_eq!(content_of(&store), content_of(&c));
    assert!(reads(&mut e, &mut store) == reads(&mut compiled, &mut c));
}

#[test]
fn another_writer_moves_the_head_while_serving_from_a_record() {
    for with_record in [true, false] {
        let (mut store, _, _, _) = prepared();
        let mut a = open(&mut store);
        assert!(a.read().unwrap().from_derived());
        let mut b = open(&mut store);
        let h = b.read().unwrap().source_hash("dom1", "tables/t3.md");
        let op = b.write(
            "dom1",
            "tables/t3.md",
            "---\ntype: note\n---\nRewritten by another writer.\n",
            h.as_deref(),
            &at(11),
        );
        run(&mut b, &mut store, op).unwrap();
        if with_record {
            put_derived(&mut b, &mut store);
        }
        let op = a.refresh();
        assert!(run(&mut a, &mut store, op).unwrap().loaded);
        // A refresh applies the difference (engine.md §8.1), record or not: no decode.
        assert!(!a.read().unwrap().from_derived());
        assert!(reads(&mut a, &mut store) == reads(&mut b, &mut store));
        // And `a` commits on top of it like `b` would.
        let mut c = store.clone();
        let mut b2 = open(&mut c);
        for (e, st) in [(&mut a, &mut store), (&mut b2, &mut c)] {
            let op = e.write("dom0", "tables/z.md", "Zed.\n", None, &at(12));
            run(e, st, op).unwrap();
        }
        assert_eq!(content_of(&store), content_of(&c));
    }
}

/// The derived record of a fixed corpus, paired with the compiler version and the derived
/// record format: a change to the compiler, the search index or the derived record's
/// encoding changes these bytes, and a host would then serve the old bytes of every stored
/// derived record as if they were new. So the digests may only change together with
/// `COMPILER_VERSION` (core/src/engine/mod.rs) or, for a change of the record's own layout,
/// `derived::FORMAT`, both part of every derived record's key: raise one, then rewrite this
/// golden with `UPDATE_GOLDEN=1` (the golden holds both, so they always land together).
#[test]
fn derived_bytes_change_only_with_the_compiler_version() {
    let mut store = MemoryStore::new();
    let mut e = Engine::new(T).unwrap();
    let op = e.open();
    run(&mut e, &mut store, op).unwrap();
    let op = e.import(
        ImportRequest {
            location: "/samples".into(),
            documents: samples(),
            strict: false,
        },
        &at(0),
    );
    run(&mut e, &mut store, op).unwrap();
    let served = e.read().unwrap();
    let (key, bytes) = served
        .derived_record(TODAY, true)
        .expect("a derived record");
    let index = langonrock_core::search::Index::build(served.model(), TODAY).encode();
    let digest = |b: &[u8]| langonrock_core::engine::Digest::of(b).to_hex();
    let actual = format!(
        "compiler version {}, derived format {}\nderived record {}\nsearch index {}\nkey {key}\n",
        langonrock_core::engine::COMPILER_VERSION,
        langonrock_core::engine::derived::FORMAT,
        digest(&bytes),
        digest(&index),
    );
    let path = data_dir().join("golden").join("derived-digest.txt");
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    if update || !path.exists() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    let version = |s: &str| s.lines().next().unwrap_or("").to_string();
    assert!(
        expected == actual,
        "{}\n expected:\n{expected}\n actual:\n{actual}",
        if version(&expected) == version(&actual) {
            "the derived record or the search index encodes differently, but neither COMPILER_VERSION nor the derived format changed: raise one (core/src/engine/mod.rs, core/src/engine/derived.rs), then UPDATE_GOLDEN=1"
        } else {
            "COMPILER_VERSION or the derived format changed: rewrite this golden with UPDATE_GOLDEN=1 and review the diff"
        }
    );
}

// ---------------------------------------------------------------------------------------
// Records that leave the texts to the store, and opens that start from an older record.

#[test]
fn a_record_without_texts_reads_identically_from_the_stores_sources() {
    for files_store in [false, true] {
        let (mut f, dir) = files();
        let mut m = MemoryStore::new();
        let store: &mut dyn Store = if files_store { &mut f } else { &mut m };
        let mut e = open(store);
        import(&mut e, store, generated(3, 30));
        let compiled = reads(&mut e, store);
        let (_, bytes) = put_derived_with(&mut e, store, false);
        let payload = u64::from_le_bytes(bytes[108..116].try_into().unwrap()) as usize;
        assert_eq!(bytes.len(), derived::HEADER + payload, "no texts in it");
        let mut d = open(store);
        assert!(d.read().unwrap().from_derived());
        assert!(reads(&mut d, store) == compiled);
        // Commits on top of it equal commits after a compiling open.
        let mut c = Engine::new(T).unwrap();
        for eng in [&mut d, &mut c] {
            let op = eng.refresh();
            run(eng, store, op).unwrap();
        }
        let h = d.read().unwrap().source_hash("dom0", "tables/t0.md");
        let op = d.write("dom0", "tables/t0.md", "Rewritten.\n", h.as_deref(), &at(3));
        run(&mut d, store, op).unwrap();
        let op = c.refresh();
        run(&mut c, store, op).unwrap();
        assert!(reads(&mut d, store) == reads(&mut c, store));
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_bad_source_handed_out_in_place_fails_closed_naming_it() {
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    import(&mut e, &mut store, generated(2, 15));
    put_derived_with(&mut e, &mut store, false);
    let s = e.read().unwrap();
    let c = s.model().concept("dom0/t1").expect("dom0/t1").clone();
    let hash = s.source_hash("dom0", &c.path).unwrap();
    let key = Key::new(
        Kind::Source,
        langonrock_core::engine::Digest::from_hex(&hash).unwrap(),
    );
    store.tamper(T, &key, c.text.as_bytes().iter().map(|b| b ^ 1).collect());
    let mut d = open(&mut store);
    let ds = d.read().unwrap();
    assert!(ds.from_derived(), "opening reads no text");
    manifest::manifest(ds.model(), T, None, TODAY).unwrap();
    let want = format!("database corruption: source/{hash} does not match its digest");
    let err = ds.get(&["dom0/t1"], &GetOptions::default()).unwrap_err();
    assert_eq!(err.message(), want);
    let op = d.read_source("dom0", &c.path);
    assert_eq!(run(&mut d, &mut store, op).unwrap_err().message(), want);
    // Another concept reads.
    ds.get(&["dom0/t2"], &GetOptions::default()).unwrap();
    // A commit that rewrites its bundle keeps that source: it fails closed too.
    let op = d.write("dom0", "tables/new.md", "New.\n", None, &at(4));
    assert_eq!(run(&mut d, &mut store, op).unwrap_err().message(), want);
}

#[test]
fn opening_starts_from_an_older_record_and_applies_the_difference() {
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    import(&mut e, &mut store, generated(3, 30));
    // (Its texts inside, so that what opening reads is the difference alone.)
    put_derived_with(&mut e, &mut store, true);
    assert!(!e.derived_pays(), "just written");
    // Commits by one-shot hosts that leave no record.
    for i in 0..5u64 {
        let op = e.write(
            "dom1",
            &format!("notes/n{i}.md"),
            format!("Note {i}, see [[t3]].\n"),
            None,
            &at(10 + i),
        );
        run(&mut e, &mut store, op).unwrap();
    }
    assert!(!e.derived_pays(), "5 revisions past its record");
    let want = reads(&mut e, &mut store);
    let mut counting = Counting {
        inner: &mut store,
        sources: 0,
    };
    let mut d = open(&mut counting);
    let read = counting.sources;
    assert!(read <= 5, "opening read {read} sources: it compiled");
    assert!(!d.derived_pays());
    assert!(
        d.derived_due(),
        "the head's record is worth writing when idle"
    );
    assert!(reads(&mut d, &mut store) == want);
    // Far enough past its record, a one-shot host writes the head's.
    for i in 0..langonrock_core::engine::DERIVED_EVERY as u64 {
        let h = d.read().unwrap().source_hash("dom2", "notes/x.md");
        let op = d.write(
            "dom2",
            "notes/x.md",
            format!("Edit {i}.\n"),
            h.as_deref(),
            &at(100 + i),
        );
        run(&mut d, &mut store, op).unwrap();
    }
    assert!(d.derived_pays());
    // Without any record, or beyond how far opening looks back, it compiles.
    for k in store
        .records(T)
        .into_keys()
        .filter(|k| k.kind == Kind::Derived)
    {
        store.lose(T, &k);
    }
    let mut counting = Counting {
        inner: &mut store,
        sources: 0,
    };
    let c = open(&mut counting);
    assert!(counting.sources >= 90);
    assert!(c.derived_pays());
}

#[test]
fn a_record_of_several_chunks_reads_like_the_compiled_state() {
    // 3 × 1,400 concepts: chunks of CHUNK, CHUNK and the rest, decoded apart and joined.
    let per = 1400;
    assert!(3 * per > 2 * derived::CHUNK && 3 * per < 3 * derived::CHUNK);
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    import(&mut e, &mut store, generated(3, per));
    let (_, bytes) = put_derived(&mut e, &mut store);
    let sections = u32::from_le_bytes(
        bytes[derived::HEADER..derived::HEADER + 4]
            .try_into()
            .unwrap(),
    );
    assert_eq!(
        sections,
        1 + 3 + 1,
        "the documents, three chunks, the index"
    );
    let mut d = open(&mut store);
    let (c, s) = (e.read().unwrap(), d.read().unwrap());
    assert!(s.from_derived() && !c.from_derived());
    assert!(s.model() == c.model(), "the models differ");
    assert_eq!(s.snapshot_id(), c.snapshot_id());
    assert_eq!(s.list_source(), c.list_source());
    let opts = SearchOptions::default();
    for q in ["orders shipments", "revenue café", "t1399"] {
        assert_eq!(
            s.search(T, q, &opts, TODAY).unwrap(),
            c.search(T, q, &opts, TODAY).unwrap()
        );
    }
    // A commit on top of it gives what the compiled state gets by applying it.
    let h = s.source_hash("dom2", "tables/t1399.md");
    let op = d.write(
        "dom2",
        "tables/t1399.md",
        "Rewritten [[t0]].\n",
        h.as_deref(),
        &at(1),
    );
    run(&mut d, &mut store, op).unwrap();
    let op = e.refresh();
    run(&mut e, &mut store, op).unwrap();
    assert!(d.read().unwrap().model() == e.read().unwrap().model());
}
