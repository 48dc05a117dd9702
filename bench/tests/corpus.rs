//! The ported generator reproduces the reference corpus and its questions.

use langonrock_bench::corpus::{expected_checksum, Corpus, Kind};
use langonrock_bench::questions::questions;

const QUESTIONS_500: &str = include_str!("../data/questions-500.json");

#[test]
fn reference_500_matches_checksums() {
    let corpus = Corpus::reference(1).unwrap();
    let expected = expected_checksum(500).expect("CHECKSUMS lists 500");
    assert_eq!(corpus.checksum_line(), expected);
    assert_eq!(corpus.files.len(), 501);
    assert_eq!(corpus.total_bytes(), 1_125_561);
}

#[test]
fn reference_500_draws_and_content_checks() {
    let corpus = Corpus::reference(1).unwrap();
    // reference-corpus.md §2: bundle 1 of 500 consumes 14,512 draws and leaves this state.
    assert_eq!(corpus.rng.draws, 14_512);
    assert_eq!(corpus.rng.state, 0x9091_7077);
    // reference-corpus.md §6.
    assert_eq!(corpus.concepts[16].id, "orders_b1_daily");
    let tokens = |s: &str| s.encode_utf16().count().div_ceil(4);
    let concept_tokens: usize = corpus
        .files
        .iter()
        .filter(|f| !f.path.ends_with("/index.md"))
        .map(|f| tokens(&f.text))
        .sum();
    assert_eq!(concept_tokens, 264_744);
    let index = corpus.file("warehouse/index.md").unwrap();
    assert_eq!(index.text.encode_utf16().count(), 66_297);
    assert_eq!(tokens(&index.text), 16_575);
    assert!(!index.text.ends_with('\n'));
    let count = |s: &str| {
        corpus
            .files
            .iter()
            .filter(|f| f.text.contains(&format!("\nstatus: {s}\n")))
            .count()
    };
    assert_eq!(
        (count("current"), count("draft"), count("deprecated")),
        (333, 79, 88)
    );
    let tables = corpus
        .concepts
        .iter()
        .filter(|c| c.kind == Kind::Table)
        .count();
    assert_eq!((tables, corpus.concepts.len() - tables), (375, 125));
    assert_eq!(corpus.dirs, ["warehouse/tables", "warehouse/metrics"]);
}

#[test]
fn questions_equal_questions_500_json() {
    let corpus = Corpus::reference(1).unwrap();
    let got = serde_json::to_value(questions(&corpus).unwrap()).unwrap();
    let want: serde_json::Value = serde_json::from_str(QUESTIONS_500).unwrap();
    assert_eq!(got, want);
}

#[test]
fn same_input_same_bytes_and_written_tree_matches() {
    let a = Corpus::generate(2, 40, 11).unwrap();
    let b = Corpus::generate(2, 40, 11).unwrap();
    assert_eq!(a, b);
    assert_ne!(
        a.fixture_hash(),
        Corpus::generate(2, 40, 12).unwrap().fixture_hash()
    );
    assert_eq!(a.bundles, ["domain1", "domain2"]);

    let dir = std::env::temp_dir().join(format!("langonrock-bench-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    a.write_to(&dir).unwrap();
    for f in &a.files {
        assert_eq!(
            std::fs::read(dir.join(&f.path)).unwrap(),
            f.text.as_bytes(),
            "{}",
            f.path
        );
    }
    for d in &a.dirs {
        assert!(dir.join(d).is_dir(), "{d}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tiny_and_empty_corpora_do_not_panic() {
    for n in 0..12 {
        let c = Corpus::generate(1, n, 7).unwrap();
        assert_eq!(c.concepts.len(), n);
        assert_eq!(c.files.len(), n + 1);
    }
    let empty = Corpus::generate(0, 500, 7).unwrap();
    assert!(empty.files.is_empty());
    // Questions need tables and metrics: a clear error, not a panic.
    let err = questions(&Corpus::generate(1, 3, 7).unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "cannot pick from an empty list: metrics");
}
