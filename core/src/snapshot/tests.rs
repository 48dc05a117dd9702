use super::*;
use crate::compile::{link, parse_document, Ambiguity, Change, Linker, SourceDoc, SUMMARY_WIDTH};
use crate::hash::sha256;
use crate::testutil::{model, okf_sample_docs, okf_samples};
use proptest::prelude::*;
use std::collections::HashMap;

/// An encoder written from docs/format.md alone, to check the code against the document.
#[derive(Default)]
struct Bytes(Vec<u8>);

impl Bytes {
    fn u64(mut self, n: u64) -> Self {
        self.0.extend_from_slice(&n.to_be_bytes());
        self
    }
    fn str(self, s: &str) -> Self {
        let mut b = self.u64(s.len() as u64);
        b.0.extend_from_slice(s.as_bytes());
        b
    }
    fn absent(mut self) -> Self {
        self.0.push(0);
        self
    }
    fn present(mut self, s: &str) -> Self {
        self.0.push(1);
        self.str(s)
    }
    fn raw(mut self, d: &[u8]) -> Self {
        self.0.extend_from_slice(d);
        self
    }
}

const FORMAT_MD: &str = include_str!("../../../docs/format.md");

#[test]
fn empty_model_constant() {
    let expected = hex(&sha256(
        &Bytes::default().str("langonrock snapshot root 1").u64(0).0,
    ));
    assert_eq!(expected, EMPTY_SNAPSHOT_ID);
    assert_eq!(snapshot_id(&Model::default()), EMPTY_SNAPSHOT_ID);
    let tree = SnapshotTree::build(&Model::default());
    assert_eq!(
        tree.snapshot(),
        Snapshot {
            snapshot: EMPTY_SNAPSHOT_ID.into(),
            concepts: 0
        }
    );
    assert!(
        FORMAT_MD.contains(&format!("`{EMPTY_SNAPSHOT_ID}`")),
        "docs/format.md records the constant"
    );
}

/// The worked example of docs/format.md.
fn example() -> Model {
    model(&[
        ("ops", "index.md", "# Ops\n"),
        (
            "sales",
            "tables/orders.md",
            "---\ntype: table\ntitle: Orders\nstale_after: 2026-12-31\nowner: ana\n---\nOrders placed online. See [[customers]].\n\n# Schema\nid, total\n",
        ),
        ("sales", "customers.md", "---\ntype: table\n---\nRegistered customers.\n"),
    ])
}

#[test]
fn worked_example_matches_docs() {
    let m = example();
    let orders = m.concept("orders").unwrap();
    let body = "Orders placed online. See [[customers]].\n\n# Schema\nid, total\n";
    assert_eq!(orders.body(), body);
    let enc = Bytes::default()
        .str("langonrock snapshot concept 1")
        .str("orders")
        .str("sales")
        .str("tables/orders.md")
        .str("table")
        .str("-")
        .str("-")
        .str("Orders placed online.")
        .present("Orders")
        .present("2026-12-31")
        .u64(1)
        .str("customers")
        .u64(2)
        .str("body")
        .u64(0)
        .u64(42)
        .str("schema")
        .u64(42)
        .u64(61)
        .str(body);
    let orders_digest = sha256(&enc.0);
    assert_eq!(concept_digest(orders), orders_digest);

    let customers = m.concept("customers").unwrap();
    let enc = Bytes::default()
        .str("langonrock snapshot concept 1")
        .str("customers")
        .str("sales")
        .str("customers.md")
        .str("table")
        .str("-")
        .str("-")
        .str("Registered customers.")
        .absent()
        .absent()
        .u64(0)
        .u64(1)
        .str("body")
        .u64(0)
        .u64(22)
        .str("Registered customers.\n");
    let customers_digest = sha256(&enc.0);
    assert_eq!(concept_digest(customers), customers_digest);
    assert_eq!(doc_hexdump(), enc.0, "the hexdump of docs/format.md §2.7");

    let sales = sha256(
        &Bytes::default()
            .str("langonrock snapshot bundle 1")
            .str("sales")
            .u64(2)
            .raw(&customers_digest)
            .raw(&orders_digest)
            .0,
    );
    let ops = sha256(
        &Bytes::default()
            .str("langonrock snapshot bundle 1")
            .str("ops")
            .u64(0)
            .0,
    );
    let root = sha256(
        &Bytes::default()
            .str("langonrock snapshot root 1")
            .u64(2)
            .str("ops")
            .raw(&ops)
            .str("sales")
            .raw(&sales)
            .0,
    );
    let tree = SnapshotTree::build(&m);
    assert_eq!(tree.bundle_digest("sales"), Some(sales));
    assert_eq!(tree.bundle_digest("ops"), Some(ops));
    assert_eq!(tree.root(), root);
    for (name, d) in [
        ("orders", orders_digest),
        ("customers", customers_digest),
        ("sales", sales),
        ("ops", ops),
        ("root", root),
    ] {
        assert!(
            FORMAT_MD.contains(&hex(&d)),
            "docs/format.md lists the {name} digest {}",
            hex(&d)
        );
    }
}

/// The bytes of the ```hexdump block of docs/format.md: the hex columns of each line.
fn doc_hexdump() -> Vec<u8> {
    let block = FORMAT_MD
        .split("```hexdump\n")
        .nth(1)
        .expect("a hexdump block")
        .split("```")
        .next()
        .unwrap();
    block
        .lines()
        .flat_map(|l| {
            l.get(..47)
                .unwrap_or(l)
                .split_whitespace()
                .map(|h| u8::from_str_radix(h, 16).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn stable_across_input_order() {
    let docs = okf_sample_docs();
    let want = snapshot_id(&okf_samples());
    let mut reversed = docs.clone();
    reversed.reverse();
    assert_eq!(
        snapshot_id(&crate::compile::compile(&reversed, SUMMARY_WIDTH).unwrap()),
        want
    );
    for k in [1, 17, 40] {
        let mut rotated = docs.clone();
        rotated.rotate_left(k);
        assert_eq!(
            snapshot_id(&crate::compile::compile(&rotated, SUMMARY_WIDTH).unwrap()),
            want
        );
    }
}

const BASE_ORDERS: &str = "---\ntype: table\ntitle: Orders\nstatus: draft\ngrain: one row per order\nstale_after: 2026-12-31\ntags: [a]\n---\nOrders placed online. See [[customers]].\n\n# Schema\nid, total\n";

fn base(orders: &str) -> Vec<(&'static str, String, String)> {
    vec![
        ("ops", "index.md".into(), "# Ops\n".into()),
        (
            "ops",
            "runbooks/replay.md".into(),
            "---\ntype: runbook\n---\nReplay a failed export.\n".into(),
        ),
        ("sales", "index.md".into(), "# Sales\n".into()),
        (
            "sales",
            "customers.md".into(),
            "---\ntype: table\n---\nRegistered customers.\n".into(),
        ),
        ("sales", "orders.md".into(), orders.into()),
    ]
}

fn id_of(docs: &[(&str, String, String)]) -> String {
    let d: Vec<(&str, &str, &str)> = docs
        .iter()
        .map(|(b, p, t)| (*b, p.as_str(), t.as_str()))
        .collect();
    snapshot_id(&model(&d))
}

#[test]
fn changes_that_change_the_id() {
    let want = id_of(&base(BASE_ORDERS));
    let edits: [(&str, &str, &str); 9] = [
        ("body", "placed online.", "placed on the web."),
        ("title", "title: Orders", "title: Orders table"),
        ("section", "# Schema", "# Columns"),
        ("link", "See [[customers]].", "See customers."),
        ("status", "status: draft", "status: deprecated"),
        ("grain", "one row per order", "one row per order line"),
        ("stale_after", "2026-12-31", "2027-01-31"),
        ("kind", "type: table", "type: view"),
        ("crlf", "id, total\n", "id, total\r\n"),
    ];
    for (what, from, to) in edits {
        assert!(BASE_ORDERS.contains(from), "{what}");
        let id = id_of(&base(&BASE_ORDERS.replacen(from, to, 1)));
        assert_ne!(id, want, "{what} must change the snapshot id");
    }
    // A move that keeps the id still changes the path `get` with `source` returns.
    let mut moved = base(BASE_ORDERS);
    moved[4].1 = "tables/orders.md".into();
    assert_eq!(model_ids(&moved), model_ids(&base(BASE_ORDERS)));
    assert_ne!(id_of(&moved), want, "path");
    // A new bundle that holds only a navigation document appears in `# bundles:`.
    let mut more = base(BASE_ORDERS);
    more.push(("zeta", "index.md".into(), "# Zeta\n".into()));
    assert_ne!(id_of(&more), want, "navigation-only bundle");
    // A concept's rename (another one's arrival) changes its public id.
    let mut clash = base(BASE_ORDERS);
    clash.push((
        "ops",
        "customers.md".into(),
        "---\ntype: note\n---\nOps customers.\n".into(),
    ));
    assert_ne!(id_of(&clash), want, "new concept");
}

fn model_ids(docs: &[(&str, String, String)]) -> Vec<String> {
    let d: Vec<(&str, &str, &str)> = docs
        .iter()
        .map(|(b, p, t)| (*b, p.as_str(), t.as_str()))
        .collect();
    model(&d).concepts().iter().map(|c| c.id.clone()).collect()
}

#[test]
fn changes_that_keep_the_id() {
    let want = id_of(&base(BASE_ORDERS));
    let same: [(&str, &str, &str); 5] = [
        ("ignored key", "tags: [a]", "tags: [a, b]\nowner: ana"),
        (
            "key order",
            "title: Orders\nstatus: draft",
            "status: draft\ntitle: Orders",
        ),
        ("frontmatter spacing", "title: Orders", "title:    Orders"),
        ("quoted value", "title: Orders", "title: \"Orders\""),
        (
            "stale_after as datetime",
            "2026-12-31",
            "2026-12-31T08:00:00Z",
        ),
    ];
    for (what, from, to) in same {
        assert!(BASE_ORDERS.contains(from), "{what}");
        assert_eq!(
            id_of(&base(&BASE_ORDERS.replacen(from, to, 1))),
            want,
            "{what} must keep the snapshot id"
        );
    }
    // A BOM is outside the body.
    assert_eq!(id_of(&base(&format!("\u{feff}{BASE_ORDERS}"))), want, "BOM");
    // Navigation documents are not part of the model.
    let mut nav = base(BASE_ORDERS);
    nav[0].2 = "# Ops\n\nNow with a [link](runbooks/replay.md).\n".into();
    nav.push(("sales", "tables/log.md".into(), "# Log\n".into()));
    assert_eq!(id_of(&nav), want, "navigation documents");
    // `status: current` and `stable` compile to the same cell as no status.
    let plain = "---\ntype: table\n---\nRegistered customers.\n";
    for s in ["current", "stable"] {
        let mut docs = base(BASE_ORDERS);
        docs[3].2 = plain.replace("type: table\n", &format!("type: table\nstatus: {s}\n"));
        assert_eq!(id_of(&docs), want, "status {s}");
    }
}

#[test]
fn update_reuses_unchanged_digests() {
    let docs: Vec<SourceDoc> = base(BASE_ORDERS)
        .into_iter()
        .map(|(b, p, t)| SourceDoc::new(b, p, t))
        .collect();
    let m1 = crate::compile::compile(&docs, SUMMARY_WIDTH).unwrap();
    let mut tree = SnapshotTree::build(&m1);
    // Mark every leaf: a reused leaf keeps the mark, a rehashed one loses it.
    for b in &mut tree.bundles {
        for c in &mut b.concepts {
            c.digest = [7; 32];
        }
    }
    // The same model (same Arcs): every leaf is reused.
    let same = tree.update(&m1);
    assert!(same
        .bundles
        .iter()
        .flat_map(|b| &b.concepts)
        .all(|c| c.digest == [7; 32]));
    // Only the edited concept is rehashed; equal content in new Arcs is reused too.
    let mut docs2 = docs.clone();
    docs2[3] = SourceDoc::new(
        "sales",
        "customers.md",
        "---\ntype: table\n---\nAll customers.\n",
    );
    let m2 = crate::compile::compile(&docs2, SUMMARY_WIDTH).unwrap();
    let next = tree.update(&m2);
    let marks: Vec<(&str, bool)> = next
        .bundles
        .iter()
        .flat_map(|b| &b.concepts)
        .map(|c| (c.concept.id.as_str(), c.digest == [7; 32]))
        .collect();
    assert_eq!(
        marks,
        [("replay", true), ("customers", false), ("orders", true)]
    );
    // The unchanged bundle keeps its digest, the changed one is recomputed.
    assert_eq!(next.bundle_digest("ops"), tree.bundle_digest("ops"));
    assert_ne!(next.bundle_digest("sales"), tree.bundle_digest("sales"));
}

/// Documents of the random edit sequences: a few bundles and paths, bodies with links.
fn arb_doc() -> impl Strategy<Value = (usize, usize, usize)> {
    (0..3usize, 0..7usize, 0..6usize)
}

const BUNDLES: [&str; 3] = ["a", "b", "c"];
const PATHS: [&str; 7] = [
    "x.md", "y.md", "d/x.md", "z.md", "index.md", "n/log.md", "d/w.md",
];

fn text_variant(n: usize) -> crate::bytes::Text {
    let t = match n {
        0 => "---\ntype: t\ntitle: One\n---\nFirst [[x]].\n# H\nbody\n",
        1 => "---\ntype: t\ntitle: One\ntags: [q]\n---\nFirst [[x]].\n# H\nbody\n",
        2 => "---\ntype: u\n---\nSecond [y](y.md) and [[b/z]].\n",
        3 => "No frontmatter [[y]].\n## Sub\ntext\n",
        4 => "---\ntype: t\nstale_after: 2026-01-01\n---\nThird 😀 [w](d/w.md).\n",
        _ => "---\ntype: t\n---\n",
    };
    t.into()
}

/// The engine's path: a [`Linker`] fed one change at a time, sharing text and parse `Arc`s
/// through caches, so untouched concepts keep their `Arc<Concept>`.
struct Engine {
    linker: Linker,
    texts: HashMap<usize, crate::bytes::Text>,
    parsed: HashMap<(usize, usize), Arc<ParsedDoc>>,
}

impl Engine {
    fn change(&mut self, b: usize, p: usize, t: Option<usize>) -> Change {
        let doc = t.map(|t| {
            let text = self
                .texts
                .entry(t)
                .or_insert_with(|| text_variant(t))
                .clone();
            let nav = crate::validate::is_navigation(PATHS[p]);
            let pd = (!nav).then(|| {
                self.parsed
                    .entry((p, t))
                    .or_insert_with(|| Arc::new(parse_document(PATHS[p], &text, SUMMARY_WIDTH)))
                    .clone()
            });
            (
                SourceDoc {
                    bundle: BUNDLES[b].into(),
                    path: PATHS[p].into(),
                    text,
                },
                pd,
            )
        });
        Change {
            bundle: BUNDLES[b].into(),
            path: PATHS[p].into(),
            doc,
        }
    }

    /// The same documents linked from scratch: new `Arc<Concept>`s, shared texts and parses.
    fn scratch(&self) -> Model {
        let docs = self
            .linker
            .documents()
            .map(|(d, p)| (d, p.cloned()))
            .collect();
        link(docs, Ambiguity::Serve).unwrap()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn update_equals_build(
        start in proptest::collection::vec(arb_doc(), 0..10),
        edits in proptest::collection::vec((arb_doc(), any::<bool>()), 1..12),
    ) {
        let mut e = Engine { linker: Linker::new(Ambiguity::Serve), texts: HashMap::new(), parsed: HashMap::new() };
        let first: Vec<Change> = start.into_iter().map(|(b, p, t)| e.change(b, p, Some(t))).collect();
        e.linker.apply(first).unwrap();
        let mut tree = SnapshotTree::build(e.linker.model());
        prop_assert_eq!(tree.concepts(), e.linker.model().concepts().len());
        for ((b, p, t), delete) in edits {
            let change = e.change(b, p, (!delete).then_some(t));
            e.linker.apply(vec![change]).unwrap();
            let m = e.linker.model();
            let fresh = SnapshotTree::build(m);
            let updated = tree.update(m);
            prop_assert_eq!(&updated, &fresh);
            prop_assert_eq!(updated.id(), snapshot_id(m));
            // A model rebuilt from scratch (no shared concepts) gives the same tree too.
            let scratch = e.scratch();
            prop_assert_eq!(&tree.update(&scratch), &fresh);
            prop_assert_eq!(SnapshotTree::build(&scratch), fresh);
            tree = updated;
        }
    }

    #[test]
    fn shuffled_input_same_id(docs in Just(okf_sample_docs()).prop_shuffle()) {
        static WANT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let want = WANT.get_or_init(|| snapshot_id(&okf_samples()));
        let m = crate::compile::compile(&docs, SUMMARY_WIDTH).unwrap();
        prop_assert_eq!(&snapshot_id(&m), want);
    }
}

/// With a host's SHA-256, a concept's encoding is buffered and hashed by the host, a
/// bundle's concepts many per call: the same digests as the streaming encoder (which the
/// worked example holds to docs/format.md).
#[test]
fn a_host_sha256_gives_the_same_tree() {
    crate::hash::use_test_host();
    let long = format!(
        "---\ntype: table\n---\n{}",
        "Rows of orders, one per line. ".repeat(40)
    );
    let m = model(&[
        ("sales", "orders.md", long.as_str()),
        ("sales", "customers.md", "Registered customers.\n"),
        ("ops", "index.md", "# Ops\n"),
    ]);
    let streamed = |c: &Concept| {
        let mut e = Enc {
            hasher: Some(Sha256::new()),
            buf: Vec::new(),
        };
        e.str(CONCEPT_TAG);
        concept_fields(&mut e, c);
        e.finish()
    };
    let tree = SnapshotTree::build(&m);
    let sales = &tree
        .bundles
        .iter()
        .find(|b| b.name == "sales")
        .unwrap()
        .concepts;
    assert_eq!(sales.len(), 2);
    for node in sales {
        assert_eq!(node.digest, streamed(&node.concept), "{}", node.concept.id);
        assert_eq!(node.digest, concept_digest(&node.concept));
    }
    assert_eq!(tree, SnapshotTree::build(&Model::default()).update(&m));
}
