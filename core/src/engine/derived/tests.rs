//! The derived record codec: a round trip gives the same served state, and every check of
//! the header and payload rejects.

use super::super::served::IndexSlot;
use super::super::{run, Engine, MemoryStore, Store};
use super::*;

const T0: &str = "2026-05-01T09:30:00.000Z";
const TODAY: &str = "2026-06-01";

fn docs() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("sales", "index.md", "# Sales\n\nNavigation only.\n"),
        (
            "sales",
            "orders.md",
            "---\ntype: table\ntitle: Orders\nstale_after: 2026-01-01\nstatus: draft\ngrain: order_id\n---\nOrders placed online. See [customers](customers.md) and [[missing]].\n\n# Schema\n\n| a | b |\n\n# Notes\n\nCafé — naïve “quotes” 🎉.\n",
        ),
        (
            "sales",
            "customers.md",
            "\u{feff}---\ntype: table\nstale_after: soon\n---\r\nCustomers.\r\n\r\n## Keys\r\n\r\nSee [[orders]].\r\n",
        ),
        ("ops", "runbooks/orders.md", "No frontmatter here. [up](../../x.md)\n"),
        ("ops", "notes/orders.md", "---\ntype: note\n---\nSecond orders, tier-1 id.\n"),
        ("ops", "bad.md", "---\ntype: [unclosed\n---\nBroken YAML.\n"),
    ]
}

/// A store holding one revision of `docs()`, and an engine that compiled it.
fn setup() -> (MemoryStore, Engine) {
    setup_with(docs())
}

fn setup_with(docs: Vec<(&'static str, &'static str, &'static str)>) -> (MemoryStore, Engine) {
    let mut store = MemoryStore::new();
    let mut e = Engine::new("acme").unwrap();
    let op = e.open();
    run(&mut e, &mut store, op).unwrap();
    let changes: Vec<_> = docs
        .into_iter()
        .map(|(b, p, t)| {
            serde_json::json!({"operation": "write", "bundle": b, "path": p, "content": t})
        })
        .collect();
    let txn = super::super::parse_transaction(&serde_json::json!({ "changes": changes })).unwrap();
    let op = e.transact(txn, T0);
    run(&mut e, &mut store, op).unwrap();
    (store, e)
}

fn open(store: &mut MemoryStore) -> Engine {
    let mut e = Engine::new("acme").unwrap();
    let op = e.open();
    run(&mut e, store, op).unwrap();
    e
}

#[test]
fn round_trip_gives_the_same_state() {
    let (mut store, mut e) = setup();
    let s = e.take_derived().expect("due after a commit");
    assert!(e.take_derived().is_none(), "handed out once");
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    assert_eq!(key, super::super::derived_key(&s.recorded.unwrap()));
    // Canonical: the same state encodes to the same bytes.
    assert_eq!(s.derived_record(TODAY, true).unwrap().1, bytes);
    store.put("acme", &key, &bytes).unwrap();

    let o = open(&mut store);
    let d = o.read().unwrap();
    assert!(d.from_derived() && !s.from_derived());
    // The parses' sections and raw links stay in the record's bytes until they are read,
    // and then read as the compiled ones.
    for c in d.model.concepts() {
        assert!(c.parsed.sections.is_encoded() && c.parsed.links.is_encoded());
    }
    assert!(d
        .model
        .concepts()
        .iter()
        .any(|c| !c.parsed.links.is_empty()));
    assert_eq!(d.model, s.model);
    assert!(d
        .model
        .concepts()
        .iter()
        .all(|c| !c.parsed.links.is_encoded()));
    assert_eq!(d.tree, s.tree);
    assert_eq!(d.snapshot_id(), s.snapshot_id());
    assert_eq!(d.list_source(), s.list_source());
    assert_eq!(d.model.diagnostics(), s.model.diagnostics());
    for (name, b) in &s.state.bundles {
        let db = &d.state.bundles[name];
        assert_eq!((db.record, db.concepts), (b.record, b.concepts));
        assert_eq!(
            db.docs
                .iter()
                .map(|(p, x)| (p, x.hash, &x.text, &x.parsed))
                .collect::<Vec<_>>(),
            b.docs
                .iter()
                .map(|(p, x)| (p, x.hash, &x.text, &x.parsed))
                .collect::<Vec<_>>()
        );
    }
    // Concepts share their text and parse with the documents, as a compile gives them.
    for c in d.model.concepts() {
        let doc = d.state.doc(&c.bundle, &c.path).unwrap();
        assert!(crate::bytes::Text::ptr_eq(&doc.text, &c.text));
        assert!(Arc::ptr_eq(doc.parsed.as_ref().unwrap(), &c.parsed));
    }
    // The decoded state encodes to the same record again.
    assert_eq!(d.derived_record(TODAY, true).unwrap().1, bytes);
    // Its linker is rebuilt from the decoded model without resolving again, and holds
    // what the compile's linker holds.
    let docs = super::super::TenantState::default().diff(&d.state);
    let restored =
        crate::compile::Linker::restore(crate::compile::Ambiguity::Serve, docs, &d.model)
            .expect("the decoded model fits its documents");
    assert_eq!(restored.dump(), e.linker.dump());
    // So does the engine's restore, which borrows the served state's documents.
    let held = super::super::linker_of(&d).expect("restored");
    assert!(!held.has_dependency_indexes(), "restored, not applied");
    assert_eq!(held.dump(), e.linker.dump());
    // An open from a derived record does not make one due.
    let mut o = o;
    assert!(o.take_derived().is_none());
}

/// [`decode`], checked to agree with an open ahead ([`open_ahead`], with and without the
/// index: the digest checked on another thread) on whether the record serves.
fn decode_both(bytes: &[u8], recorded: &Digest, bundles: &[BundleRef]) -> Option<Decoded> {
    let plain = decode(bytes, recorded, bundles);
    for index in [false, true] {
        let b = crate::bytes::Bytes::from(bytes);
        let ahead = open_ahead(&b, recorded, bundles, index)
            .filter(|o| o.texts.is_some())
            .and_then(|o| o.decode_indexed(bundles, &|_, _| None));
        assert_eq!(ahead.is_some(), plain.is_some(), "ahead (index {index})");
        // Only a record opened without the thread can be copied to decode again.
        let b = crate::bytes::Bytes::from(bytes);
        if let Some(o) = open_ahead(&b, recorded, bundles, index) {
            assert!(o.again().is_none());
        }
        if let Some(o) = super::open(&b, recorded, bundles) {
            assert!(o.again().is_some());
        }
        if let (Some(a), Some(p)) = (&ahead, &plain) {
            assert_eq!(a.model.concepts(), p.model.concepts());
            assert_eq!(a.tree.root(), p.tree.root());
            assert_eq!(a.built.is_some(), index && p.index.is_some());
        }
    }
    plain
}

/// The bundle list of `s`'s revision, as its revision record names it.
fn bundle_refs(s: &Served) -> Vec<BundleRef> {
    s.state
        .bundles
        .iter()
        .map(|(n, b)| BundleRef {
            name: n.clone(),
            record: b.record,
            concepts: b.concepts,
        })
        .collect()
}

#[test]
fn every_check_rejects() {
    let (_, e) = setup();
    let s = e.read().unwrap();
    let recorded = s.recorded.unwrap();
    let bundles = bundle_refs(&s);
    let (_, bytes) = s.derived_record(TODAY, true).unwrap();
    assert!(decode_both(&bytes, &recorded, &bundles).is_some());

    // Truncated anywhere, or extended.
    for cut in [
        0,
        3,
        HEADER - 1,
        HEADER,
        HEADER + 1,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        assert!(
            decode_both(&bytes[..cut], &recorded, &bundles).is_none(),
            "cut {cut}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(decode_both(&longer, &recorded, &bundles).is_none());
    // Any flipped byte, in the header or the payload.
    let payload_len = u64::from_le_bytes(bytes[108..116].try_into().unwrap()) as usize;
    for at in [
        0,
        4,
        8,
        12,
        44,
        76,
        108,
        116,
        124,
        HEADER,
        HEADER + 40,
        HEADER + payload_len - 1,
    ] {
        let mut b = bytes.clone();
        b[at] ^= 1;
        assert!(decode_both(&b, &recorded, &bundles).is_none(), "flip {at}");
    }
    // The texts follow the payload, outside its digest: a flipped text byte still decodes,
    // even one that breaks UTF-8 in an ASCII text (opening touches no text: its source hash
    // catches it when a read uses it, see `a_bad_text_fails_closed`).
    let mut b = bytes.clone();
    b[HEADER + payload_len] ^= 1;
    assert!(decode_both(&b, &recorded, &bundles).is_some());
    b[HEADER + payload_len] = 0xFF;
    assert!(decode_both(&b, &recorded, &bundles).is_some());
    // The texts follow, and the record says so; unknown flags are refused (format 2's
    // "compressed" bit among them).
    let flags = u32::from_le_bytes(bytes[124..128].try_into().unwrap());
    assert_eq!(flags, TEXTS);
    let mut b = bytes.clone();
    b[124] |= 1;
    assert!(decode_both(&b, &recorded, &bundles).is_none());
    // The table: the first section (bundles and documents), one chunk of concepts, the
    // index; each section's stored length at most its length.
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    assert_eq!(
        u32::from_le_bytes(bytes[HEADER..HEADER + 4].try_into().unwrap()),
        3
    );
    for i in 0..3 {
        let (raw, kept) = (word(HEADER + 4 + i * 16), word(HEADER + 12 + i * 16));
        assert!(kept <= raw && kept > 0, "section {i}: {kept} of {raw}");
    }
    let mut b = bytes.clone();
    b[124] |= 8;
    assert!(decode_both(&b, &recorded, &bundles).is_none());
    // A payload length the LZ4 block cannot have.
    let mut b = bytes.clone();
    b[116..124].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(decode_both(&b, &recorded, &bundles).is_none());
    // Another recorded snapshot id, or another source state.
    assert!(decode_both(&bytes, &Digest([7; 32]), &bundles).is_none());
    let mut other = bundles.clone();
    other[0].record = Digest([9; 32]);
    assert!(decode_both(&bytes, &recorded, &other).is_none());
    // A payload that is malformed but carries its correct digest is still refused.
    let mut forged = bytes[..HEADER].to_vec();
    let payload = b"\x02\x00\x00\x00garbage";
    forged[76..108].copy_from_slice(&Digest::of(payload).0);
    forged[108..116].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    forged.extend_from_slice(payload);
    assert!(decode_both(&forged, &recorded, &bundles).is_none());
    // So is a table that does not fit its sections, with its correct digest: a section
    // longer than LZ4 can expand, sections that end before the payload does, none at all.
    let stored = &bytes[HEADER..HEADER + payload_len];
    let mut long = stored.to_vec();
    long[4..12].copy_from_slice(&(word(HEADER + 12) * 256).to_le_bytes());
    let mut short = stored.to_vec();
    short.push(0);
    for (what, payload) in [
        ("a section longer than LZ4 expands", long),
        ("a byte after the sections", short),
        ("no sections", vec![0, 0, 0, 0]),
    ] {
        let mut forged = bytes[..HEADER].to_vec();
        forged[76..108].copy_from_slice(&Digest::of(&payload).0);
        forged[108..116].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        forged.extend_from_slice(&payload);
        forged.extend_from_slice(&bytes[HEADER + payload_len..]);
        assert!(
            decode_both(&forged, &recorded, &bundles).is_none(),
            "{what}"
        );
    }
}

#[test]
fn the_index_travels_encoded_and_searches_the_same() {
    let (mut store, mut e) = setup();
    let s = e.take_derived().unwrap();
    let opts = crate::search::SearchOptions::default();
    let want = s.search("acme", "orders customers", &opts, TODAY).unwrap();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    store.put("acme", &key, &bytes).unwrap();
    let o = open(&mut store);
    let d = o.read().unwrap();
    assert!(matches!(&*d.index_slot(), IndexSlot::Encoded(_)));
    assert_eq!(
        d.search("acme", "orders customers", &opts, TODAY).unwrap(),
        want
    );
    assert!(matches!(&*d.index_slot(), IndexSlot::Built(_)));
    // Another day re-dates it: `orders` went stale on 2026-01-01.
    let before = s.search("acme", "orders", &opts, "2025-12-01").unwrap();
    assert_eq!(
        d.search("acme", "orders", &opts, "2025-12-01").unwrap(),
        before
    );
}

#[test]
fn a_searching_host_gets_the_index_decoded_at_open_and_the_same_answers() {
    let (mut store, mut e) = setup();
    let s = e.take_derived().unwrap();
    let opts = crate::search::SearchOptions::default();
    let want = s.search("acme", "orders customers", &opts, TODAY).unwrap();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    store.put("acme", &key, &bytes).unwrap();
    let mut o = Engine::new("acme").unwrap();
    o.decode_index_beside(true);
    let op = o.open();
    run(&mut o, &mut store, op).unwrap();
    let d = o.read().unwrap();
    assert!(d.from_derived());
    assert!(matches!(&*d.index_slot(), IndexSlot::Built(_)));
    assert_eq!(
        d.search("acme", "orders customers", &opts, TODAY).unwrap(),
        want
    );
    // A record without an index decodes with none.
    let recorded = s.recorded.unwrap();
    let bundles = bundle_refs(&s);
    let bare = encode(&s, &recorded, None, true);
    let opened = super::open(&crate::bytes::Bytes::from(bare), &recorded, &bundles).unwrap();
    let decoded = opened.decode_indexed(&bundles, &|_, _| None).unwrap();
    assert!(decoded.built.is_none() && decoded.index.is_none());
    let opened = super::open(&crate::bytes::Bytes::from(bytes), &recorded, &bundles).unwrap();
    let decoded = opened.decode_indexed(&bundles, &|_, _| None).unwrap();
    let (plain, built) = (decoded.index_bytes().unwrap(), decoded.built.unwrap());
    assert_eq!(built.encode(), plain.as_slice());
}

#[test]
fn commits_after_a_derived_open_leave_the_index_encoded_until_a_search() {
    let (mut store, mut e) = setup();
    let s = e.take_derived().unwrap();
    // `e` goes on compiled, on a store without the derived record.
    let mut plain = store.clone();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    store.put("acme", &key, &bytes).unwrap();
    let mut o = open(&mut store);
    assert!(matches!(
        &*o.read().unwrap().index_slot(),
        IndexSlot::Encoded(_)
    ));
    // Two commits on both: a new concept, then one that replaces a text the index holds.
    let old = o
        .read()
        .unwrap()
        .state
        .doc("ops", "notes/orders.md")
        .unwrap()
        .hash;
    for (eng, st) in [(&mut o, &mut store), (&mut e, &mut plain)] {
        let op = eng.write("sales", "returns.md", "Returns of orders.\n", None, T0);
        run(eng, st, op).unwrap();
        let op = eng.write(
            "ops",
            "notes/orders.md",
            "---\ntype: note\n---\nRefunds now.\n",
            Some(&old.to_string()),
            T0,
        );
        run(eng, st, op).unwrap();
    }
    let d = o.read().unwrap();
    assert!(matches!(&*d.index_slot(), IndexSlot::Behind { .. }));
    // The same answers (and derived record) as the compiled state.
    let c = e.read().unwrap();
    assert!(!c.from_derived());
    assert_eq!(d.snapshot_id(), c.snapshot_id());
    let opts = crate::search::SearchOptions::default();
    for q in ["orders", "refunds", "returns", "second tier"] {
        assert_eq!(
            d.search("acme", q, &opts, TODAY).unwrap(),
            c.search("acme", q, &opts, TODAY).unwrap(),
            "{q}"
        );
    }
    assert!(matches!(&*d.index_slot(), IndexSlot::Built(_)));
    assert_eq!(
        d.derived_record(TODAY, true).unwrap(),
        c.derived_record(TODAY, true).unwrap()
    );
}

#[test]
fn a_bad_text_fails_closed_and_the_engine_compiles_instead() {
    let (mut store, mut e) = setup();
    let s = e.take_derived().unwrap();
    let want = s
        .get(&["orders"], &crate::read::GetOptions::default())
        .map(|r| crate::read::render_cli(&r))
        .unwrap();
    let (key, mut bytes) = s.derived_record(TODAY, true).unwrap();
    // Change one letter of the text of `sales/orders.md` (the payload digest still holds).
    let text = s.state.doc("sales", "orders.md").unwrap().text.clone();
    let at = bytes
        .windows(text.len())
        .rposition(|w| w == text.as_bytes())
        .unwrap()
        + text.find("placed").unwrap();
    bytes[at] = b'P';
    store.put("acme", &key, &bytes).unwrap();

    let mut o = open(&mut store);
    let d = o.read().unwrap();
    assert!(d.from_derived());
    // A text nobody reads is not checked; the manifest needs none.
    crate::manifest::manifest(&d.model, "acme", None, TODAY).unwrap();
    let msg = format!(
        "database corruption: {key} does not match source/{}",
        s.state.doc("sales", "orders.md").unwrap().hash
    );
    let err = d
        .get(&["orders"], &crate::read::GetOptions::default())
        .err()
        .unwrap();
    assert_eq!(err.message(), msg);
    // A search whose direct hits include it fails the same way.
    let opts = crate::search::SearchOptions::default();
    assert_eq!(
        d.search("acme", "placed", &opts, TODAY)
            .unwrap_err()
            .message(),
        msg
    );
    // The next operation compiles from the sources and never serves that record again.
    let op = o.refresh();
    run(&mut o, &mut store, op).unwrap();
    let c = o.read().unwrap();
    assert!(!c.from_derived());
    let got = c
        .get(&["orders"], &crate::read::GetOptions::default())
        .map(|r| crate::read::render_cli(&r))
        .unwrap();
    assert_eq!(got, want);
    let again = open(&mut store);
    assert!(
        again.read().unwrap().from_derived(),
        "a fresh engine tries it again"
    );
}

#[test]
fn a_damaged_index_list_fails_its_search_and_the_engine_compiles_instead() {
    let (mut store, mut e) = setup();
    let s = e.take_derived().unwrap();
    let opts = crate::search::SearchOptions::default();
    let want = s.search("acme", "orders", &opts, TODAY).unwrap();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    let mut sections = raw_sections(&bytes);
    // A byte of the index (the last section) whose damage the open does not see, since it
    // reads no posting list, but a search for "orders" does when it reads its list.
    let ix = sections.len() - 1;
    let damaged = (0..sections[ix].len())
        .rev()
        .map(|at| {
            let mut b = sections[ix].clone();
            b[at] = 0xFF;
            b
        })
        .find(|b| {
            crate::search::Index::decode_shared(b.clone().into()).is_ok_and(|i| {
                let _ = crate::search::search(&s.model, &i, "acme", "orders", &opts, TODAY);
                i.damaged()
            })
        })
        .expect("a byte of a list that search reads");
    sections[ix] = damaged;
    store
        .put("acme", &key, &repacked(&bytes, &sections))
        .unwrap();

    let mut o = open(&mut store);
    let d = o.read().unwrap();
    assert!(d.from_derived() && !d.derived_failed());
    let err = d.search("acme", "orders", &opts, TODAY).unwrap_err();
    assert_eq!(
        err.message(),
        format!("database corruption: {key} holds a search index that does not decode")
    );
    // The read runs again once the engine compiled (the connection does so), and the index
    // read is dropped, never written into a record.
    assert!(d.derived_failed());
    assert!(matches!(&*d.index_slot(), IndexSlot::None));
    let op = o.refresh();
    run(&mut o, &mut store, op).unwrap();
    let c = o.read().unwrap();
    assert!(!c.from_derived());
    assert_eq!(c.search("acme", "orders", &opts, TODAY).unwrap(), want);
}

#[test]
fn an_ascii_tenant_round_trips_too() {
    // All texts ASCII: the offset maps are made without scanning.
    let ascii: Vec<_> = docs().into_iter().filter(|d| d.2.is_ascii()).collect();
    assert!(ascii.len() >= 3);
    let (mut store, mut e) = setup_with(ascii);
    let s = e.take_derived().unwrap();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();
    store.put("acme", &key, &bytes).unwrap();
    let o = open(&mut store);
    let d = o.read().unwrap();
    assert!(d.from_derived());
    assert_eq!(d.model, s.model);
    assert_eq!(d.tree, s.tree);
}

#[test]
fn checking_every_text_goes_batch_by_batch_and_finds_a_bad_one_in_the_last() {
    // More documents than a few batches of the check hold.
    let n = super::super::served::CHECK_BATCH * 2 + 9;
    let docs: Vec<(&'static str, &'static str, &'static str)> = (0..n)
        .map(|i| {
            let path: &'static str = Box::leak(format!("doc-{i:03}.md").into_boxed_str());
            let text: &'static str = Box::leak(
                format!("---\ntitle: Doc {i}\n---\nBody of document number {i}.\n")
                    .into_boxed_str(),
            );
            ("many", path, text)
        })
        .collect();
    let (mut store, mut e) = setup_with(docs);
    let s = e.take_derived().unwrap();
    let (key, bytes) = s.derived_record(TODAY, true).unwrap();

    store.put("acme", &key, &bytes).unwrap();
    let d = open(&mut store).read().unwrap();
    assert!(d.from_derived() && d.unchecked_texts());
    d.check_all_texts().unwrap();
    assert!(!d.unchecked_texts());

    // The last document's text changed in the record (the payload digest still holds).
    let last = format!("doc-{:03}.md", n - 1);
    let text = s.state.doc("many", &last).unwrap().text.clone();
    let at = bytes
        .windows(text.len())
        .rposition(|w| w == text.as_bytes())
        .unwrap()
        + text.find("Body").unwrap();
    let mut bad = bytes.clone();
    bad[at] = b'b';
    store.put("acme", &key, &bad).unwrap();
    let d = open(&mut store).read().unwrap();
    assert!(d.from_derived());
    let err = d.check_all_texts().unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "database corruption: {key} does not match source/{}",
            s.state.doc("many", &last).unwrap().hash
        )
    );
    assert!(d.poisoned() && d.unchecked_texts());
}

/// `bytes` (a record from `derived_record`) with its payload replaced by `sections`, each
/// stored as it is, under a correct payload digest: what a forger who knows the format
/// writes.
fn repacked(bytes: &[u8], sections: &[Vec<u8>]) -> Vec<u8> {
    let payload_len = u64::from_le_bytes(bytes[108..116].try_into().unwrap()) as usize;
    let mut stored = (sections.len() as u32).to_le_bytes().to_vec();
    for s in sections {
        stored.extend_from_slice(&(s.len() as u64).to_le_bytes());
        stored.extend_from_slice(&(s.len() as u64).to_le_bytes());
    }
    let raw: usize = sections.iter().map(Vec::len).sum();
    for s in sections {
        stored.extend_from_slice(s);
    }
    let mut out = bytes[..HEADER].to_vec();
    out[76..108].copy_from_slice(&Digest::of(&stored).0);
    out[108..116].copy_from_slice(&(stored.len() as u64).to_le_bytes());
    out[116..124].copy_from_slice(&(raw as u64).to_le_bytes());
    out.extend_from_slice(&stored);
    out.extend_from_slice(&bytes[HEADER + payload_len..]);
    out
}

/// The sections of a record's payload, decompressed, in order.
fn raw_sections(bytes: &[u8]) -> Vec<Vec<u8>> {
    let payload = &bytes[HEADER..];
    let word = |at: usize| u64::from_le_bytes(payload[at..at + 8].try_into().unwrap()) as usize;
    let n = u32::from_le_bytes(payload[..4].try_into().unwrap()) as usize;
    let mut at = 4 + n * 16;
    (0..n)
        .map(|i| {
            let (raw, kept) = (word(4 + i * 16), word(12 + i * 16));
            let s = &payload[at..at + kept];
            at += kept;
            if kept == raw {
                s.to_vec()
            } else {
                lz4_flex::block::decompress(s, raw).unwrap()
            }
        })
        .collect()
}

#[test]
fn a_section_keeps_its_strings_apart_and_each_must_be_read_exactly() {
    let (_, e) = setup();
    let s = e.read().unwrap();
    let recorded = s.recorded.unwrap();
    let bundles = bundle_refs(&s);
    let (_, bytes) = s.derived_record(TODAY, true).unwrap();
    let o = super::open(&Bytes::from(&bytes[..]), &recorded, &bundles).unwrap();
    let mut sections = vec![o.head.to_vec()];
    sections.extend(o.chunks.iter().map(|c| c.unpack().unwrap().to_vec()));
    sections.extend(o.index.iter().map(|c| c.unpack().unwrap().to_vec()));
    assert_eq!(sections.len(), 3, "head, one chunk, the index");
    // Stored uncompressed, the same sections decode.
    assert!(decode_both(&repacked(&bytes, &sections), &recorded, &bundles).is_some());

    // Each of the head and the chunk: the strings' length, the strings (the first is the
    // first bundle's name, "ops"), then the rest.
    let strings = |sec: &[u8]| u64::from_le_bytes(sec[..8].try_into().unwrap()) as usize;
    assert_eq!(&sections[0][8..11], b"ops");
    for at in [0usize, 1] {
        let sec = &sections[at];
        let n = strings(sec);
        assert!(std::str::from_utf8(&sec[8..8 + n]).is_ok());
        let forged = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut all = sections.clone();
            f(&mut all[at]);
            decode_both(&repacked(&bytes, &all), &recorded, &bundles)
        };
        // Strings that are not UTF-8.
        assert!(
            forged(&|s| s[8] = 0xFF).is_none(),
            "section {at}: not UTF-8"
        );
        // A string left unread at the end of the strings.
        assert!(
            forged(&|s| {
                s.insert(8 + n, b'x');
                s[..8].copy_from_slice(&(n as u64 + 1).to_le_bytes());
            })
            .is_none(),
            "section {at}: a string left over"
        );
        // A strings' length past the section's end, or one byte short.
        assert!(
            forged(&|s| {
                let past = s.len() as u64;
                s[..8].copy_from_slice(&past.to_le_bytes());
            })
            .is_none(),
            "section {at}: strings past the end"
        );
        assert!(
            forged(&|s| s[..8].copy_from_slice(&(n as u64 - 1).to_le_bytes())).is_none(),
            "section {at}: strings one byte short"
        );
    }
    // A string that ends inside a character: "é" (two bytes) after the head's first string,
    // whose length then takes one of them.
    let mut all = sections.clone();
    let head = &mut all[0];
    let n = strings(head);
    head.splice(11..11, "é".bytes());
    head[..8].copy_from_slice(&(n as u64 + 2).to_le_bytes());
    let first_len = 8 + n + 2 + 4 + 32 + 1 + 4;
    let len = u32::from_le_bytes(head[first_len..first_len + 4].try_into().unwrap());
    assert_eq!(len, 3, "the first string's length, where it stands");
    head[first_len..first_len + 4].copy_from_slice(&4u32.to_le_bytes());
    assert!(decode_both(&repacked(&bytes, &all), &recorded, &bundles).is_none());
    // With the whole character the name reads "opsé", which no bundle is called.
    all[0][first_len..first_len + 4].copy_from_slice(&5u32.to_le_bytes());
    assert!(decode_both(&repacked(&bytes, &all), &recorded, &bundles).is_none());
}
