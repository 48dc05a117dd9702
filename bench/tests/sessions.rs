//! Sessions priced on our rendered tool output over the engine, and retrieval, at 500
//! concepts: the figures that reproduce the reference's, and the ones that are ours.

use langonrock_bench::billing::{fetch_turns, Bill, SectionRead};
use langonrock_bench::corpus::Corpus;
use langonrock_bench::host::{MemHost, Tenant, TENANT};
use langonrock_bench::questions::questions;
use langonrock_bench::rendered::Rendered;
use langonrock_bench::size::sessions_only;
use langonrock_core::compile::SourceDoc;
use langonrock_core::read::{get_mcp, GetOptions};

fn bill_of(key: &str, sessions: &[langonrock_bench::size::Session]) -> Option<Bill> {
    sessions.iter().find(|s| s.key == key).and_then(|s| s.bill)
}

#[test]
fn sessions_at_500_reproduce_the_reference_where_priced_alike() {
    let s = sessions_only(500).unwrap();
    let b = |k: &str| bill_of(k, &s).unwrap();
    assert_eq!(
        b("okf"),
        Bill {
            billed: 116_357,
            calls: 30
        }
    );
    assert_eq!(
        b("manifest-bare"),
        Bill {
            billed: 64_355,
            calls: 17
        }
    );
    // With bare sections the search-first bill differs from the published 56,928 only by
    // the search TSVs: docs/search.md's ranking returns other rows than the reference's
    // (which ours equalled before it), 9 tokens more per search on average.
    assert_eq!(
        b("search-bare"),
        Bill {
            billed: 57_758,
            calls: 36
        }
    );
    // Our get frames cost more than bare text, never fewer calls.
    assert!(b("manifest").billed > 64_355 && b("manifest").calls == 17);
    assert!(b("search").billed > 57_758 && b("search").calls == 36);
    // One get per section: the 6 join and 3 metric questions take a second call.
    assert_eq!(b("manifest-per-section").calls, 17 + 9);
    assert_eq!(b("search-per-section").calls, 36 + 9);
    // The find window is null on this corpus.
    assert!(bill_of("window", &s).is_none());
    assert!(s.iter().any(|x| x.key == "window" && x.turns.is_none()));
}

fn host_500() -> (Corpus, MemHost) {
    let corpus = Corpus::reference(1).unwrap();
    let mut host = MemHost::new().unwrap();
    host.import(
        corpus
            .files
            .iter()
            .map(|f| SourceDoc::new(f.bundle(), f.bundle_path(), f.text.as_str()))
            .collect(),
    )
    .unwrap();
    (corpus, host)
}

#[test]
fn rendered_reads_are_the_mcp_get_output_and_average_as_published_when_bare() {
    let (corpus, mut host) = host_500();
    let qs = questions(&corpus).unwrap();
    let served = host.served().unwrap();
    let r = Rendered::new(&served, TENANT).unwrap();
    // A section part is exactly the MCP `get` reply for that id and section.
    let q = &qs[7];
    let t = &q.targets[0];
    let reply = get_mcp(
        served.model(),
        &[t.id()],
        &GetOptions {
            section: Some(t.section().into()),
            ..GetOptions::default()
        },
    );
    assert!(reply.starts_with(&format!("@@ {}\n# Joins\n", t.id())));
    assert_eq!(r.section_reply(q, t).unwrap(), reply);
    let (key, tokens) = r.section(q, t).unwrap();
    assert_eq!(key, format!("{}#joins", t.id()));
    assert_eq!(tokens, reply.encode_utf16().count().div_ceil(4) as u64);
    // Per-section fetch: Q8 needs `joins` for one id, `schema` for two.
    let turns = fetch_turns(q, &r, true).unwrap();
    assert_eq!(turns.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(fetch_turns(q, &r, false).unwrap()[0].len(), 3);

    let av = r.averages(&qs).unwrap();
    // Whole and section reads average as published; a search TSV averages 740 tokens (731
    // published): the ranking of docs/search.md returns other rows.
    assert_eq!((av.whole_bare, av.section_bare, av.search), (445, 213, 740));
    assert!(av.whole > av.whole_bare && av.section > av.section_bare);

    // The calls the harness replays against the binary: 1 manifest, 20 searches, 35 section
    // reads, 20 find windows.
    let calls = r.calls(&qs).unwrap();
    assert_eq!(calls.len(), 1 + 20 + 35 + 20);
    assert_eq!(calls[0].text, r.manifest());
    assert!(calls[1].text.starts_with("# tenant: bench\n"));
}

#[test]
fn retrieval_of_the_20_questions() {
    let (runs, samples, n) = langonrock_bench::all::retrieval_runs(Some(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/okf-samples"),
    ))
    .unwrap();
    let got: Vec<(String, f64, String)> = runs
        .iter()
        .map(|r| (r.name.clone(), r.hit_rate, format!("{:.3}", r.mrr)))
        .collect();
    // The reference's (and our ranking's before docs/search.md): named 70 % / 0.433, with
    // expansion 75 % / 0.438, described 95 % / 0.399.
    assert_eq!(
        got,
        vec![
            ("named".into(), 90.0, "0.823".into()),
            ("named + expansion".into(), 90.0, "0.823".into()),
            ("described".into(), 100.0, "0.432".into()),
        ]
    );
    // Q15, found before only through an expanded row at position 11, is a direct hit at 3.
    assert_eq!(runs[1].ranks[14], Some(3));
    assert_eq!(runs[0].ranks[14], Some(3));
    assert!(n > 0 && samples.len() == 3 && samples.iter().all(|r| r.queries > 0));
}
