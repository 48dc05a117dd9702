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
    // A search is running on the published state while a commit publishes the next one:
    // the new state gets a copy, updated to its model, and the running search (and any
    // after it) finds the older index in place instead of building one again.
    let (started, running) = std::sync::mpsc::channel();
    let (finish, finished) = std::sync::mpsc::channel::<()>();
    let search = std::thread::spawn({
        let older = older.clone();
        move || {
            older.with_index("2026-06-01", |_, _| {
                started.send(()).unwrap();
                finished.recv().unwrap();
            })
        }
    });
    running.recv().unwrap();
    let op = e.write("sales", "customers.md", "Customers.\n", None, T0);
    run(&mut e, &mut store, op).unwrap();
    finish.send(()).unwrap();
    search.join().unwrap().unwrap();
    let newer = e.read().unwrap();
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
    // No search is running: the index moves to the next state (a copy would cost every
    // commit), and a search on the older state afterwards still answers, from an index of
    // its own.
    let want = newer
        .search("acme", "customers", &opts, "2026-06-01")
        .unwrap();
    let op = e.write("sales", "returns.md", "Returns.\n", None, T0);
    run(&mut e, &mut store, op).unwrap();
    let newest = e.read().unwrap();
    assert!(matches!(&*newest.index_slot(), IndexSlot::Built(_)));
    assert!(matches!(&*newer.index_slot(), IndexSlot::None));
    assert_eq!(
        newer
            .search("acme", "customers", &opts, "2026-06-01")
            .unwrap(),
        want
    );
    assert!(newest
        .search("acme", "returns", &opts, "2026-06-01")
        .unwrap()
        .contains("returns"));
}

#[test]
fn a_search_on_a_replaced_state_never_builds_an_index() {
    use super::served::{builds_on_this_thread, IndexSlot};
    let day = "2026-06-01";
    let opts = crate::search::SearchOptions::default();
    let fresh = |s: &Served, q: &str| {
        let ix = crate::search::Index::build(s.model(), day);
        let r = crate::search::search_hits(s.model(), &ix, q, &opts, day).unwrap();
        crate::search::render(s.model(), "acme", q, &r, day).unwrap()
    };
    let mut store = MemoryStore::new();
    let mut e = open(&mut store);
    for (path, text) in [
        (
            "orders.md",
            "---\ntype: table\n---\nOrders placed online.\n",
        ),
        ("returns.md", "Returns of orders, by reason.\n"),
    ] {
        let op = e.write("sales", path, text, None, T0);
        run(&mut e, &mut store, op).unwrap();
    }
    let first = e.read().unwrap();
    let want = first.search("acme", "orders", &opts, day).unwrap();
    let builds = builds_on_this_thread();
    // A request picked the published state up and is about to search it (serve's reads
    // hold it from the published slot) when a commit publishes the next state: the commit
    // copies the index, so the request finds the older one in place.
    let request = first.clone();
    let op = e.write("sales", "credits.md", "Orders credited.\n", None, T0);
    run(&mut e, &mut store, op).unwrap();
    let second = e.read().unwrap();
    assert!(matches!(&*first.index_slot(), IndexSlot::Built(_)));
    assert!(matches!(&*second.index_slot(), IndexSlot::Built(_)));
    assert_eq!(request.search("acme", "orders", &opts, day).unwrap(), want);
    drop((request, first));
    // Nobody holds it but the engine and this test: the next commit moves the index on, and
    // a search that still starts on the replaced state copies the newer index back.
    let op = e.write("sales", "refunds.md", "Refunds of orders.\n", None, T0);
    run(&mut e, &mut store, op).unwrap();
    let third = e.read().unwrap();
    assert!(matches!(&*second.index_slot(), IndexSlot::None));
    let got = second.search("acme", "orders", &opts, day).unwrap();
    assert_eq!(got, fresh(&second, "orders"));
    assert!(!got.contains("refunds"));
    assert!(matches!(&*second.index_slot(), IndexSlot::Built(_)));
    let got = third.search("acme", "orders", &opts, day).unwrap();
    assert_eq!(got, fresh(&third, "orders"));
    assert!(got.contains("refunds"));
    // Its derived record encodes the index it holds, without building one either.
    second.derived_record(day, true).unwrap();
    assert_eq!(builds_on_this_thread(), builds);
}
