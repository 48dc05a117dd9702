//! Times the phases of a cold open from a derived record: `open_phases <data> <tenant>`.
use langonrock_core::engine::{
    derived, derived_key,
    records::{HeadRecord, RevisionRecord},
    Key, Kind, Store,
};
use langonrock_node_mcp::file_store::Files;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (data, tenant) = (std::path::PathBuf::from(&a[1]), a[2].clone());
    let mut store = Files::new(&data);
    let t0 = Instant::now();
    let head = store.read_head(&tenant).unwrap().unwrap();
    let h = HeadRecord::decode(&head).unwrap().unwrap();
    let rb = store
        .get(&tenant, &Key::new(Kind::Revision, h.revision))
        .unwrap()
        .unwrap();
    let rev = RevisionRecord::decode(&rb, "r").unwrap();
    let t1 = Instant::now();
    let bytes = store
        .get(&tenant, &derived_key(&rev.snapshot))
        .unwrap()
        .unwrap();
    let t2 = Instant::now();
    let plen = u64::from_le_bytes(bytes[108..116].try_into().unwrap()) as usize;
    let d = langonrock_core::engine::Digest::of(&bytes[derived::HEADER..derived::HEADER + plen]);
    let t3 = Instant::now();
    let dec = derived::decode(&bytes, &rev.snapshot, &rev.bundles).expect("decodes");
    let t4 = Instant::now();
    let ix = langonrock_core::search::Index::decode(dec.index_bytes().unwrap()).unwrap();
    let t5 = Instant::now();
    drop(ix);
    drop(dec);
    let t6 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
    println!("head+revision {:.1} ms, read derived {:.1} ms ({} bytes, payload {}), sha256 {:.1} ms, decode (incl. sha) {:.1} ms, index decode {:.1} ms, drop {:.1} ms  [{}]",
        ms(t0, t1), ms(t1, t2), bytes.len(), plen, ms(t2, t3), ms(t3, t4), ms(t4, t5), ms(t5, t6), d.0[0]);
}
