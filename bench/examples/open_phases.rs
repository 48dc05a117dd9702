//! Times a cold open served from a derived record, phase by phase, as `langonrock mcp`
//! meets them: `open_phases <data> <tenant> [query]`; `<data>` is a files data root or a
//! `postgres://` DSN (docs/postgres.md).
//!
//! Prints the store reads, the header and payload check (the digest), the source records a
//! files store hands out in place, the decode of the model, the index decode, the whole
//! open through the engine, the manifest and advice sentence computed at server start, and
//! the first search, in milliseconds (each by-hand phase the least of a few runs: the
//! machine may be shared).
use langonrock::files::Files;
use langonrock_core::bytes::Bytes;
use langonrock_core::engine::records::{HeadRecord, RevisionRecord};
use langonrock_core::engine::{derived, derived_key, run, Digest, Engine, Key, Kind, Store};
use langonrock_core::search::SearchOptions;
use std::collections::HashMap;
use std::time::Instant;

/// The least time of `runs` runs of `f` (times `OPEN_PHASES_RUNS`, default 1, for a
/// loaded machine), and its last result.
fn least<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let runs = runs
        * std::env::var("OPEN_PHASES_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1usize)
            .max(1);
    let mut best = f64::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
        // Dropping tens of thousands of concepts is not part of any phase.
        if let Some(old) = out.replace(v) {
            std::mem::forget(old);
        }
    }
    (best, out.expect("one run"))
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: open_phases <data> <tenant> [query]");
        std::process::exit(2);
    }
    let tenant = a[2].clone();
    let query = a.get(3).cloned().unwrap_or_else(|| "orders".into());
    let today = "2026-09-21";
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
    let key = derived_key(&rev.snapshot);
    let (read, bytes) = least(3, || {
        store
            .get_shared(&tenant, &[key])
            .unwrap()
            .pop()
            .flatten()
            .expect("a derived record (open the tenant once to write it)")
    });
    let (sha, _) = least(3, || {
        let plen = u64::from_le_bytes(bytes[108..116].try_into().unwrap()) as usize;
        Digest::of(&bytes[derived::HEADER..derived::HEADER + plen])
    });
    let (opened_ms, opened) = least(3, || {
        derived::open(&bytes, &rev.snapshot, &rev.bundles).expect("the record checks out")
    });
    // A files store's derived record leaves the texts to the store's source records.
    let hashes = opened.sources();
    let (sources_ms, sources) = least(3, || {
        let Some(hashes) = &hashes else {
            return HashMap::new();
        };
        let keys: Vec<Key> = hashes.iter().map(|d| Key::new(Kind::Source, *d)).collect();
        let got = store.get_shared(&tenant, &keys).unwrap();
        hashes
            .iter()
            .copied()
            .zip(got)
            .filter_map(|(d, b)| Some((d, b?)))
            .collect::<HashMap<Digest, Bytes>>()
    });
    let source = |_: usize, d: &Digest| sources.get(d).cloned();
    let (decode, dec) = least(4, || {
        opened
            .again()
            .expect("opened by derived::open")
            .decode(&rev.bundles, &source)
            .expect("it decodes (the model)")
    });
    let (beside, both) = least(4, || {
        opened
            .again()
            .expect("opened by derived::open")
            .decode_indexed(&rev.bundles, &source)
            .expect("it decodes (model and index)")
    });
    std::mem::forget(both);
    let ixb = dec.index_bytes().expect("an index section");
    let (index, ix) = least(3, || {
        langonrock_core::search::Index::decode_shared(ixb.clone()).unwrap()
    });
    println!(
        "record {} bytes, index {} bytes, {} concepts, {} source records in place, {} terms, {} postings",
        bytes.len(),
        ixb.len(),
        dec.concepts(),
        sources.len(),
        ix.term_count(),
        ix.posting_count()
    );
    println!(
        "by hand: read {read:.2}, header+digest+table {opened_ms:.2} (digest alone {sha:.2}), sources {sources_ms:.2}, model decode {decode:.2}, model+index beside {beside:.2}, index decode alone {index:.2} ms"
    );
    std::mem::forget((dec, ix, bytes, opened, sources));

    // The engine, as the server runs it.
    let t0 = Instant::now();
    let mut e = Engine::new(&tenant).unwrap();
    e.decode_index_beside(true);
    let op = e.open();
    run(&mut e, store, op).unwrap();
    let open = ms(t0);
    let s = e.read().unwrap();
    assert!(s.from_derived(), "served from the derived record");
    let t = Instant::now();
    let m = langonrock_core::manifest::manifest(s.model(), &tenant, None, today).unwrap();
    let advice = langonrock_core::tools::advice(&m);
    let man = ms(t);
    let t = Instant::now();
    let r = s
        .search(&tenant, &query, &SearchOptions::default(), today)
        .unwrap();
    let search = ms(t);
    println!(
        "engine: open {open:.2} (index beside), manifest+advice {man:.2}, first search {search:.2}, total {:.2} ms (advice {} bytes, answer {} bytes)",
        ms(t0),
        advice.len(),
        r.len()
    );
    std::mem::forget((e, s, m));
}
