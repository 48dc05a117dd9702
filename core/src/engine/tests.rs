//! Unit tests of the engine against the memory store.

use super::*;

const T0: &str = "2026-05-01T09:30:00.000Z";

fn open(store: &mut MemoryStore) -> Engine {
    let mut e = Engine::new("acme").unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    e
}

#[test]
fn write_then_reopen() {
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    let op = e.write(
        "sales",
        "orders.md",
        "---\ntype: table\n---\nOrders placed online.\n",
        None,
        T0,
    );
    let w = run(&mut e, &mut store, op).unwrap();
    assert_eq!(w.id.as_deref(), Some("orders"));
    assert_eq!(w.concepts, 1);
    let served = e.read().unwrap();
    assert_eq!(served.revision().unwrap(), w.revision);
    let again = open(&mut store);
    let s2 = again.read().unwrap();
    assert_eq!(s2.snapshot_id(), served.snapshot_id());
    assert_eq!(s2.list_source(), served.list_source());
}

#[test]
fn a_commit_leaves_the_older_state_its_search_index() {
    use super::served::IndexSlot;
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    let doc = "---\ntype: table\n---\nOrders placed online.\n";
    let op = e.write("sales", "orders.md", doc, None, T0);
    run(&mut e, &mut store, op).unwrap();
    let older = e.read().unwrap();
    let opts = crate::search::SearchOptions::default();
    let want = older.search("acme", "orders", &opts, "2026-06-01").unwrap();
    assert!(matches!(&*older.index_slot(), IndexSlot::Built(_)));
    let op = e.write("sales", "customers.md", "Customers.\n", None, T0);
    run(&mut e, &mut store, op).unwrap();
    let newer = e.read().unwrap();
    // The new state got an index updated to its model; a search still running on the
    // older state (published until the commit) finds the older index in place instead of
    // building one again.
    assert!(matches!(&*newer.index_slot(), IndexSlot::Built(_)));
    assert!(matches!(&*older.index_slot(), IndexSlot::Built(_)));
    assert_eq!(
        older.search("acme", "orders", &opts, "2026-06-01").unwrap(),
        want
    );
    assert!(newer
        .search("acme", "customers", &opts, "2026-06-01")
        .unwrap()
        .contains("customers"));
}
