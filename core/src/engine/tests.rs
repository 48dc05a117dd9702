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
