//! The Rust billing model reproduces `billing.py`'s self-test figures.

use langonrock_bench::billing::{
    average, bill, okf_turns, score, tokens, Bill, OkfCosts, OkfRead, Part,
};
use langonrock_bench::corpus::Corpus;
use langonrock_bench::questions::questions;

#[test]
fn okf_navigator_bills_116357_in_30_calls() {
    let corpus = Corpus::reference(1).unwrap();
    let qs = questions(&corpus).unwrap();
    let costs = OkfCosts::from_corpus(&corpus);
    assert_eq!(costs.index_tokens(), 16_575);
    let turns = okf_turns(&qs, &costs).unwrap();
    // 20 index turns, 20 first-target turns, 9 questions with more targets.
    assert_eq!(turns.len(), 49);
    assert_eq!(turns[0], vec![Part::new("okf:index", 16_575)]);
    assert_eq!(
        bill(&turns),
        Bill {
            billed: 116_357,
            calls: 30
        }
    );
}

#[test]
fn corpus_sizes_and_average_file_read() {
    let corpus = Corpus::reference(1).unwrap();
    let qs = questions(&corpus).unwrap();
    assert_eq!(corpus.total_bytes(), 1_125_561);
    let costs = OkfCosts::from_corpus(&corpus);
    let mut concept_tokens = 0;
    for c in &corpus.concepts {
        concept_tokens += costs.file_tokens(&c.bundle, &c.id).unwrap();
    }
    assert_eq!(concept_tokens, 264_744);
    let reads: Vec<u64> = qs
        .iter()
        .flat_map(|q| {
            q.targets
                .iter()
                .map(|t| costs.file_tokens(&q.bundle, t.id()).unwrap())
        })
        .collect();
    assert_eq!(reads.len(), 35);
    assert_eq!(average(&reads), Some(594));
    assert_eq!(average(&[]), None);
    assert_eq!(tokens(&corpus.files[0].text), 16_575);
}

#[test]
fn okf_bill_at_ten_bundles_pays_every_index() {
    // The questions stay in bundle 1; the index turn now costs the ten index files.
    let corpus = Corpus::reference(10).unwrap();
    let qs = questions(&corpus).unwrap();
    assert!(qs.iter().all(|q| q.bundle == "domain1"));
    let costs = OkfCosts::from_corpus(&corpus);
    let index: u64 = corpus
        .files
        .iter()
        .filter(|f| f.path.ends_with("/index.md"))
        .map(|f| tokens(&f.text))
        .sum();
    assert_eq!(costs.index_tokens(), index);
    // billing.py over gen.py's 10-bundle corpus gives the same figure.
    assert_eq!(
        bill(&okf_turns(&qs, &costs).unwrap()),
        Bill {
            billed: 703_775,
            calls: 30
        }
    );
}

#[test]
fn unknown_target_is_an_error() {
    let corpus = Corpus::reference(1).unwrap();
    let mut qs = questions(&corpus).unwrap();
    qs[0].bundle = "nowhere".into();
    let err = okf_turns(&qs, &OkfCosts::from_corpus(&corpus)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown concept \"orders\" in bundle \"nowhere\""
    );
}

/// billing.py's rank tables (re-derived independently of langonrock) score to the published
/// three-decimal figures.
#[test]
fn scores_match_the_published_rank_tables() {
    let corpus = Corpus::reference(1).unwrap();
    let wanted: Vec<String> = questions(&corpus)
        .unwrap()
        .into_iter()
        .map(|q| q.wanted)
        .collect();
    let lists = |ranks: &[Option<usize>]| -> Vec<Vec<String>> {
        ranks
            .iter()
            .zip(&wanted)
            .map(|(r, w)| match r {
                None => Vec::new(),
                Some(r) => {
                    let mut l = vec!["x".to_string(); r - 1];
                    l.push(w.clone());
                    l
                }
            })
            .collect()
    };
    let n = None;
    let s = Some;
    let store = [
        n,
        n,
        s(3),
        s(4),
        s(1),
        s(2),
        s(3),
        s(1),
        s(6),
        s(1),
        s(3),
        s(4),
        s(2),
        n,
        n,
        n,
        n,
        s(1),
        s(1),
        s(1),
    ];
    let mut expanded = store;
    expanded[14] = s(11);
    let raw = [
        n,
        n,
        s(3),
        s(5),
        s(1),
        s(2),
        s(3),
        s(1),
        s(8),
        s(1),
        s(3),
        s(5),
        s(2),
        n,
        n,
        n,
        n,
        s(1),
        s(1),
        s(1),
    ];
    let described = [
        n,
        s(1),
        s(3),
        s(4),
        s(3),
        s(2),
        s(6),
        s(5),
        s(4),
        s(4),
        s(3),
        s(5),
        s(3),
        s(2),
        s(1),
        s(3),
        s(4),
        s(1),
        s(4),
        s(2),
    ];
    let rounded = |ranks: &[Option<usize>]| {
        let sc = score(&lists(ranks), &wanted).unwrap();
        (sc.hit_rate.round() as i64, (sc.mrr * 1000.0).round() as i64)
    };
    assert_eq!(rounded(&store), (70, 433));
    assert_eq!(rounded(&expanded), (75, 438));
    assert_eq!(rounded(&raw), (70, 426));
    assert_eq!(rounded(&described), (95, 399));
}

/// Manifest-first over the core model's bare text (the reference prices its fetch parts on
/// the bare section text) reproduces the published 64,355 / 17 and the read averages.
#[test]
fn manifest_first_over_core_bare_text() {
    use langonrock_bench::billing::manifest_first_turns;
    use langonrock_bench::store::BareCosts;
    let corpus = Corpus::reference(1).unwrap();
    let qs = questions(&corpus).unwrap();
    let costs = BareCosts::compile(&corpus, "bench").unwrap();
    assert_eq!(costs.manifest().encode_utf16().count(), 82_194);
    assert_eq!(tokens(costs.manifest()), 20_549);
    let turns = manifest_first_turns(&qs, &costs).unwrap();
    assert_eq!(
        bill(&turns),
        Bill {
            billed: 64_355,
            calls: 17
        }
    );

    let targets: Vec<_> = qs
        .iter()
        .flat_map(|q| q.targets.iter().map(move |t| (q, t)))
        .collect();
    let whole: Vec<u64> = targets
        .iter()
        .map(|(q, t)| tokens(costs.body(&q.bundle, t.id()).unwrap()))
        .collect();
    assert_eq!(average(&whole), Some(445));
    let section: Vec<u64> = targets
        .iter()
        .map(|(q, t)| tokens(costs.section_text(&q.bundle, t.id(), t.section()).unwrap()))
        .collect();
    assert_eq!(average(&section), Some(213));
    // Q8 reads the joins of its table, then the schema of both linked tables.
    let q8 = &turns
        .iter()
        .filter(|t| t[0].0 != "manifest")
        .nth(7)
        .unwrap();
    let keys: Vec<&str> = q8.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(
        keys,
        [
            "shipments_b1_raw_1#joins",
            "shipments_b1_raw_2#schema",
            "campaigns_b1_daily_2#schema"
        ]
    );
}
