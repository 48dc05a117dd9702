//! `warm` readies a derived-record open for commits, and the commits after it give exactly
//! what they give without it.

use super::super::{run, Engine, MemoryStore, Store};

const T0: &str = "2026-05-01T09:30:00.000Z";
const T1: &str = "2026-05-01T09:31:00.000Z";
const TODAY: &str = "2026-06-01";

fn docs() -> serde_json::Value {
    serde_json::json!({"changes": [
        {"operation": "write", "bundle": "sales", "path": "orders.md", "content": "---\ntype: table\ntitle: Orders\n---\nOrders, see [[customers]].\n"},
        {"operation": "write", "bundle": "sales", "path": "customers.md", "content": "---\ntype: table\n---\nCustomers.\n"},
        {"operation": "write", "bundle": "ops", "path": "orders.md", "content": "---\ntype: runbook\n---\nReplay [[sales/orders]].\n"},
    ]})
}

/// A store with one revision and its derived record, as a writable connection leaves it.
fn stored() -> MemoryStore {
    stored_with(&docs())
}

/// An engine that compiled `docs` (no derived record), with the store it wrote.
fn compiled(docs: &serde_json::Value) -> (Engine, MemoryStore) {
    let mut store = MemoryStore::new();
    let mut e = Engine::new("acme").unwrap();
    let op = e.open();
    run(&mut e, &mut store, op).unwrap();
    let txn = super::super::parse_transaction(docs).unwrap();
    let op = e.transact(txn, T0);
    run(&mut e, &mut store, op).unwrap();
    (e, store)
}

fn stored_with(docs: &serde_json::Value) -> MemoryStore {
    let (mut e, mut store) = compiled(docs);
    let s = e.take_derived().unwrap();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    store.put("acme", &key, &bytes).unwrap();
    store
}

fn open(store: &mut MemoryStore) -> Engine {
    let mut e = Engine::new("acme").unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    e
}

/// The manifest and snapshot after writing a new customers text.
fn after_edit(e: &mut Engine, store: &mut MemoryStore) -> (String, String) {
    let hash = e
        .read()
        .unwrap()
        .state
        .doc("sales", "customers.md")
        .unwrap()
        .hash
        .to_string();
    let op = e.write(
        "sales",
        "customers.md",
        "---\ntype: table\n---\nCustomers, linking [[orders]].\n",
        Some(&hash),
        T1,
    );
    run(e, store, op).unwrap();
    let s = e.read().unwrap();
    (
        crate::manifest::manifest(&s.model, "acme", None, TODAY).unwrap(),
        s.snapshot_id(),
    )
}

#[test]
fn warm_builds_the_linker_once_and_commits_agree_with_a_cold_first_commit() {
    let mut cold_store = stored();
    let mut warm_store = cold_store.clone();

    let mut cold = open(&mut cold_store);
    assert!(cold.read().unwrap().from_derived());
    let mut warm = open(&mut warm_store);
    assert!(warm.read().unwrap().from_derived());
    assert!(warm.warm(), "a derived open has a linker to build");
    assert!(!warm.warm(), "once");
    // Reads are unchanged by it.
    assert!(warm.read().unwrap().from_derived());

    assert_eq!(
        after_edit(&mut warm, &mut warm_store),
        after_edit(&mut cold, &mut cold_store)
    );
}

#[test]
fn a_compiled_state_has_nothing_to_warm() {
    let mut store = MemoryStore::new();
    let mut e = Engine::new("acme").unwrap();
    let op = e.open();
    run(&mut e, &mut store, op).unwrap();
    let txn = super::super::parse_transaction(&docs()).unwrap();
    let op = e.transact(txn, T0);
    run(&mut e, &mut store, op).unwrap();
    assert!(!e.warm());
}

/// Whether the served state's search index still holds posting lists encoded.
fn index_encoded(e: &Engine) -> Option<bool> {
    let s = e.read().unwrap();
    let slot = s.index_slot();
    match &*slot {
        super::super::served::IndexSlot::None => None,
        super::super::served::IndexSlot::Built(ix) => Some(ix.has_encoded()),
        // The record's bytes, not decoded yet.
        _ => Some(true),
    }
}

#[test]
fn warm_leaves_the_index_a_derived_record_left_encoded_and_searches_agree() {
    let mut cold_store = stored();
    let mut warm_store = cold_store.clone();
    let mut cold = open(&mut cold_store);
    let mut warm = open(&mut warm_store);
    assert_eq!(
        index_encoded(&warm),
        Some(true),
        "served from the record's index bytes"
    );
    let query = "orders customers";
    let opts = crate::search::SearchOptions::default();
    let before = warm
        .read()
        .unwrap()
        .search("acme", query, &opts, TODAY)
        .unwrap();
    assert_eq!(
        index_encoded(&warm),
        Some(true),
        "a search decodes only what it reads"
    );
    assert!(warm.warm());
    assert_eq!(
        index_encoded(&warm),
        Some(true),
        "the lists stay the record's: no update needs them decoded"
    );
    assert!(!warm.warm(), "once");
    let search = |e: &Engine| {
        e.read()
            .unwrap()
            .search("acme", query, &opts, TODAY)
            .unwrap()
    };
    assert_eq!(search(&warm), before);
    assert_eq!(search(&warm), search(&cold));
    // The first commit after it updates the index as a cold first commit does.
    assert_eq!(
        after_edit(&mut warm, &mut warm_store),
        after_edit(&mut cold, &mut cold_store)
    );
    assert_eq!(search(&warm), search(&cold));
}

/// A derived record read on a later day (docs/search.md §8 rule 6): when no status changes
/// between the two dates the index only takes the new date, and its lists stay in the
/// record's bytes; when one does, the index is updated. Either way a search answers as on a
/// state compiled afresh and searched that day.
#[test]
fn a_derived_index_serves_a_later_day() {
    const LATER: &str = "2026-08-01";
    let query = "orders customers";
    let opts = crate::search::SearchOptions::default();
    let search = |e: &Engine, today: &str| {
        e.read()
            .unwrap()
            .search("acme", query, &opts, today)
            .unwrap()
    };

    let mut store = stored();
    let derived = open(&mut store);
    let (fresh, _) = compiled(&docs());
    assert_eq!(search(&derived, LATER), search(&fresh, LATER));
    assert_eq!(
        index_encoded(&derived),
        Some(true),
        "no status changed: the lists are still the record's bytes"
    );
    assert_eq!(search(&derived, TODAY), search(&fresh, TODAY), "and back");

    // A note that goes stale between the two dates.
    let mut with_stale = docs();
    with_stale["changes"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"operation": "write", "bundle": "sales", "path": "refunds.md",
            "content": "---\ntype: table\nstale_after: 2026-07-01\n---\nRefunds of orders, by customers.\n"}));
    let mut store = stored_with(&with_stale);
    let derived = open(&mut store);
    assert!(derived.read().unwrap().from_derived());
    let (fresh, _) = compiled(&with_stale);
    let later = search(&derived, LATER);
    assert!(later.contains("stale"), "{later}");
    assert_eq!(later, search(&fresh, LATER));
    assert_eq!(search(&derived, TODAY), search(&fresh, TODAY));
}

/// An open from an older derived record applies the commits since with the linker it
/// builds, so the linker is ready at once; `warm` still checks every served text, after
/// which reads check none (until then each read looked up every text it returned).
#[test]
fn warm_checks_the_texts_of_an_open_from_an_older_derived_record() {
    let mut store = stored();
    let mut writer = open(&mut store);
    let edited = after_edit(&mut writer, &mut store);
    let mut e = open(&mut store);
    let s = e.read().unwrap();
    assert!(s.unchecked_texts(), "served from the older derived record");
    assert_eq!(
        (
            crate::manifest::manifest(&s.model, "acme", None, TODAY).unwrap(),
            s.snapshot_id()
        ),
        edited
    );
    drop(s);
    assert!(e.warm(), "the texts were left to check");
    assert!(!e.read().unwrap().unchecked_texts());
    assert!(!e.warm(), "once");
}

/// Installs `p` as `connection::warm_prepared` does.
fn install(e: &mut Engine, store: &mut MemoryStore, p: super::PreparedWarm) -> Option<bool> {
    let op = e.warm_prepared_op(Some(p));
    run(e, store, op).unwrap()
}

#[test]
fn a_warm_prepared_outside_the_engine_installs_a_linker_commits_agree_with() {
    let mut cold_store = stored();
    let mut warm_store = cold_store.clone();
    let mut cold = open(&mut cold_store);
    let mut warm = open(&mut warm_store);
    assert!(!warm.linker_ready());
    let p = super::PreparedWarm::new(&warm.read().unwrap(), true);
    assert_eq!(install(&mut warm, &mut warm_store, p), Some(true));
    assert!(warm.linker_ready());
    // Prepared again: nothing left to do, and no linker built for it.
    let p = super::PreparedWarm::new(&warm.read().unwrap(), !warm.linker_ready());
    assert_eq!(install(&mut warm, &mut warm_store, p), Some(false));
    assert_eq!(
        after_edit(&mut warm, &mut warm_store),
        after_edit(&mut cold, &mut cold_store)
    );
}

#[test]
fn a_warm_prepared_over_a_state_since_replaced_is_not_installed() {
    let mut store = stored();
    let mut e = open(&mut store);
    let mut cold_store = store.clone();
    let mut cold = open(&mut cold_store);
    let p = super::PreparedWarm::new(&e.read().unwrap(), true);
    // A commit replaces the served state (and builds its own linker) before the install.
    let edited = after_edit(&mut e, &mut store);
    assert_eq!(install(&mut e, &mut store, p), None);
    assert_eq!(edited, after_edit(&mut cold, &mut cold_store));
    // The engine goes on from the commit's state, not the prepared one.
    let p = super::PreparedWarm::new(&e.read().unwrap(), !e.linker_ready());
    assert_eq!(install(&mut e, &mut store, p), Some(false));
}

#[test]
fn a_warm_prepared_without_the_linker_the_engine_lacks_is_not_installed() {
    let mut store = stored();
    let mut e = open(&mut store);
    // Prepared as if the engine had a linker (it read the flag of a state since replaced).
    let p = super::PreparedWarm::new(&e.read().unwrap(), false);
    assert_eq!(install(&mut e, &mut store, p), None);
    assert!(!e.linker_ready());
}
