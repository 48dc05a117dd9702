//! One rendering of everything a read returns over the okf-samples bundles, computed by the
//! native test binary and by the wasm32 build alike; both compare it with one golden file,
//! which proves the two targets give the same bytes.

use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
use langonrock_core::manifest::manifest;
use langonrock_core::read::{get_mcp, GetOptions};
use langonrock_core::search::{search, search_hits, Index, SearchOptions};

include!(concat!(env!("OUT_DIR"), "/samples.rs"));

/// The samples as documents.
pub(crate) fn sample_docs() -> Vec<SourceDoc> {
    SAMPLES
        .iter()
        .map(|(b, p, t)| SourceDoc::new(*b, *p, *t))
        .collect()
}

/// Every output the parity golden pins, as one text.
pub(crate) fn render_all() -> String {
    let docs = sample_docs();
    let m = compile(&docs, SUMMARY_WIDTH).expect("the samples compile");
    let mut out = String::new();
    for today in ["2026-09-21", "2027-06-01"] {
        out.push_str(&format!("== manifest {today}\n"));
        out.push_str(&manifest(&m, "samples", None, today).expect("manifest"));
    }
    out.push_str("== diagnostics\n");
    for d in m.diagnostics() {
        out.push_str(&format!(
            "{}: {}/{}: {}\n",
            d.level(),
            d.bundle,
            d.path,
            d.message
        ));
    }
    out.push_str(&format!(
        "== snapshot\n{}\n",
        langonrock_core::snapshot::SnapshotTree::build(&m).id()
    ));
    let cases: [(&[&str], GetOptions); 4] = [
        (
            &["orders", "revenue", "nope", "users"],
            GetOptions {
                section: Some("schema".into()),
                ..GetOptions::default()
            },
        ),
        (
            &["posts_questions", "blocks", "events_"],
            GetOptions {
                find: Some("user".into()),
                limit: Some(300),
                ..GetOptions::default()
            },
        ),
        (
            &["run-on-bq", "margin-standard"],
            GetOptions {
                source: true,
                offset: Some(10),
                limit: Some(700),
                ..GetOptions::default()
            },
        ),
        (&["acquired_users", "transactions"], GetOptions::default()),
    ];
    for (ids, opts) in cases {
        out.push_str(&format!("== get {ids:?}\n"));
        out.push_str(&get_mcp(&m, ids, &opts.with_mcp_default()));
        out.push('\n');
    }
    render_search(&m, &mut out);
    out
}

/// Search TSVs, every score's exact bits (`{:?}` of an `f64` round-trips), and the digest
/// of the encoded index, for two dates.
fn render_search(m: &langonrock_core::compile::Model, out: &mut String) {
    let hostile = format!("{}東京 ωμεγα ١٢٣ 2024", "revenue order ".repeat(100));
    let queries: [(&str, SearchOptions); 7] = [
        ("revenue recognition", SearchOptions::default()),
        (
            "Active users événements",
            SearchOptions {
                k: 5,
                bundle: Some("ga4".into()),
                expand: true,
            },
        ),
        (
            "bitcoin transactions inputs outputs stale",
            SearchOptions {
                k: 20,
                bundle: None,
                expand: false,
            },
        ),
        ("accepted answer rate votes", SearchOptions::default()),
        // A title, an id, and a query past the token cap.
        ("Gross margin legacy definitions", SearchOptions::default()),
        (
            "posts_questions answers",
            SearchOptions {
                k: 10,
                bundle: None,
                expand: true,
            },
        ),
        (&hostile, SearchOptions::default()),
    ];
    for today in ["2026-09-21", "2027-06-01"] {
        let ix = Index::build(m, today);
        out.push_str(&format!(
            "== search index {today}\n{}\n",
            langonrock_core::hash::hex(&langonrock_core::hash::sha256(&ix.encode()))
        ));
        for (q, o) in &queries {
            out.push_str(&format!("== search {:?} {today}\n", &q[..q.len().min(80)]));
            out.push_str(&search(m, &ix, "samples", q, o, today).expect("search"));
            for h in search_hits(m, &ix, q, o, today).expect("search").hits {
                if let Some(s) = h.score {
                    out.push_str(&format!("{} {s:?}\n", h.id));
                }
            }
        }
    }
}
