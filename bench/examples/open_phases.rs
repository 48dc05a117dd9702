//! Times a cold open served from a derived record, phase by phase, as `langonrock mcp`
//! meets them: `open_phases <data> <tenant> [query]`; `<data>` is a files data root or a
//! `postgres://` DSN (docs/postgres.md).
//!
//! Prints the store reads, the payload digest, the decode, the whole open through the
//! engine, the manifest and advice sentence computed at server start, and the first search
//! (which decodes the index), in milliseconds.
use langonrock::files::Files;
use langonrock_core::engine::records::{HeadRecord, RevisionRecord};
use langonrock_core::engine::{derived, derived_key, run, Digest, Engine, Key, Kind, Store};
use langonrock_core::search::SearchOptions;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: open_phases <data> <tenant> [query]");
        std::process::exit(2);
    }
    let tenant = a[2].clone();
    let query = a.get(3).cloned().unwrap_or_else(|| "foo".into());
    let ms = |a: Instant| a.elapsed().as_secs_f64() * 1000.0;
    let mut store: Box<dyn Store> = if langonrock_core::dsn::is_postgres(&a[1]) {
        let dsn = langonrock_core::dsn::parse_postgres_dsn(&a[1]).expect("a postgres dsn");
        let options = langonrock_postgres::Options {
            create: false,
            ..Default::default()
        };
        Box::new(langonrock_postgres::PgStore::connect(&dsn, &options).expect("it connects"))
    } else {
        Box::new(Files::new(std::path::Path::new(&a[1])))
    };
    let store = &mut *store;

    // The parts, by hand.
    let head = store.read_head(&tenant).unwrap().expect("a head");
    let h = HeadRecord::decode(&head).unwrap().expect("our format");
    let rb = store
        .get(&tenant, &Key::new(Kind::Revision, h.revision))
        .unwrap()
        .expect("the revision");
    let rev = RevisionRecord::decode(&rb, "revision").unwrap();
    let t = Instant::now();
    let bytes = store
        .get(&tenant, &derived_key(&rev.snapshot))
        .unwrap()
        .expect("a derived record");
    let read = ms(t);
    let plen = u64::from_le_bytes(bytes[108..116].try_into().unwrap()) as usize;
    let t = Instant::now();
    let _ = Digest::of(&bytes[derived::HEADER..derived::HEADER + plen]);
    let sha = ms(t);
    // The least of a few runs: the machine may be shared.
    let mut decode = f64::MAX;
    for _ in 0..4 {
        let t = Instant::now();
        let d = derived::decode(&bytes, &rev.snapshot, &rev.bundles).expect("it decodes");
        decode = decode.min(ms(t));
        std::mem::forget(d);
    }
    let dec = derived::decode(&bytes, &rev.snapshot, &rev.bundles).expect("it decodes");
    let t = Instant::now();
    let ix = langonrock_core::search::Index::decode(&dec.index_bytes().unwrap()).unwrap();
    let index = ms(t);
    println!(
        "record {} bytes (payload {plen}, index {}), {} concepts, {} terms, {} postings",
        bytes.len(),
        dec.index_bytes().map_or(0, |b| b.len()),
        dec.concepts(),
        ix.term_count(),
        ix.posting_count()
    );
    std::mem::forget((dec, ix, bytes));

    // The engine, as the server runs it.
    let t0 = Instant::now();
    let mut e = Engine::new(&tenant).unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    let open = ms(t0);
    let s = e.read().unwrap();
    assert!(s.from_derived(), "served from the derived record");
    let t = Instant::now();
    let m = langonrock_core::manifest::manifest(s.model(), &tenant, None, "2026-06-01").unwrap();
    let advice = langonrock_core::tools::advice(&m);
    let man = ms(t);
    let t = Instant::now();
    let r = s
        .search(&tenant, &query, &SearchOptions::default(), "2026-06-01")
        .unwrap();
    let search = ms(t);
    println!(
        "read {read:.1}, sha256 {sha:.1}, decode {decode:.1} (incl. sha256), index decode {index:.1} | engine open {open:.1}, manifest+advice {man:.1}, first search {search:.1}, total {:.1} ms ({} {} bytes)",
        ms(t0),
        advice.len(),
        r.len()
    );
    std::mem::forget(e);
}
