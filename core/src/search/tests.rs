//! Tests of search.md, rule by rule, plus goldens over the okf-samples bundles.

use super::*;
use crate::compile::{
    compile, parse_document, Ambiguity, Change, Linker, SourceDoc, SUMMARY_WIDTH,
};
use crate::testutil::{check_golden, model, okf_samples};
use crate::text::is_letter_or_number;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

const TODAY: &str = "2026-09-21";

fn run(m: &Model, query: &str, opts: &SearchOptions) -> String {
    let ix = Index::build(m, TODAY);
    search(m, &ix, "t", query, opts, TODAY).expect("search")
}

fn opts(k: usize, bundle: Option<&str>, expand: bool) -> SearchOptions {
    SearchOptions {
        k,
        bundle: bundle.map(str::to_string),
        expand,
    }
}

fn ids(m: &Model, query: &str, o: &SearchOptions) -> Vec<String> {
    let ix = Index::build(m, TODAY);
    search_hits(m, &ix, query, o, TODAY)
        .expect("search")
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn doc(body: &str) -> String {
    format!("---\ntype: note\n---\n{body}")
}

// ---- §1 Tokenizer ----

#[test]
fn tokenizer_spec_examples() {
    assert_eq!(tokens("Café au-lait"), ["cafe", "au", "lait"]);
    assert_eq!(tokens("sales/orders"), ["sale", "order"]);
    assert_eq!(tokens("BigQuery_Table"), ["bigquery", "table"]);
}

#[test]
fn tokenizer_keeps_non_latin_scripts_and_folds_compatibility_forms() {
    assert_eq!(tokens("東京 Ωμέγα"), ["東京", "ωμεγα"]);
    assert_eq!(tokens("ﬁne ＡＢＣ ①"), ["fine", "abc", "1"]);
    // A combining mark disappears, so its neighbours join.
    assert_eq!(tokens("e\u{301}x"), ["ex"]);
    // NFKD does not split ß or œ; they stay letters.
    assert_eq!(tokens("Straße Œuvre"), ["straße", "œuvre"]);
    // No stop words; numbers are tokens; plurals fold.
    assert_eq!(tokens("the Orders of 2024"), ["the", "order", "of", "2024"]);
    // Separators of every kind.
    assert_eq!(tokens("a—b…c\u{a0}d|e"), ["a", "b", "c", "d", "e"]);
    assert!(tokens("").is_empty());
    assert!(tokens("!!! --- ...").is_empty());
}

#[test]
fn tokenizer_lower_cases_the_whole_text_with_the_final_sigma() {
    // Lower-casing the whole text turns a word-final capital sigma into ς.
    assert_eq!(tokens("ΟΔΟΣ"), ["οδος"]);
    assert_eq!(tokens("ΟΔΟΣ ΣΑΣ"), ["οδος", "σας"]);
    assert_eq!(tokens("odos ΟΔΟΣ."), ["odo", "οδος"]);
    // İ lower-cases to i plus a combining dot, which is removed.
    assert_eq!(tokens("İstanbul"), ["istanbul"]);
}

#[test]
fn tokenizer_ascii_fast_path_matches_the_rule() {
    // Long runs, upper case across the 8-byte chunks, digits, runs at the very end.
    let text = "ABCDEFGHIJKLMNOPqrstuvwxyz0123456789 a1B2c3D4e5 XYZxyz12345678 end";
    assert_eq!(
        tokens(text),
        [
            "abcdefghijklmnopqrstuvwxyz0123456789",
            "a1b2c3d4e5",
            "xyzxyz12345678",
            "end"
        ]
    );
    assert_eq!(tokens("[`@{"), Vec::<String>::new());
    assert_eq!(tokens("x"), ["x"]);
}

/// The plural stemmer of search.md §1 rule 6, written out on characters.
fn naive_stem(t: &str) -> String {
    let c: Vec<char> = t.chars().collect();
    let n = c.len();
    let ends = |s: &str| t.ends_with(s);
    if n < 3 || !ends("s") || ends("us") || ends("ss") {
        t.to_string()
    } else if ends("ies") && n > 3 && !matches!(c[n - 4], 'a' | 'e') {
        format!("{}y", c[..n - 3].iter().collect::<String>())
    } else if ends("es") && matches!(c[n - 3], 'i' | 'a' | 'o' | 'e') {
        t.to_string()
    } else {
        c[..n - 1].iter().collect()
    }
}

#[test]
fn stemmer_spec_examples() {
    // search.md §1 rule 6, rule by rule, on both tokenizer paths (short ASCII tokens are
    // stemmed in registers, longer or non-ASCII ones as text).
    let cases = [
        // Fewer than 3 characters, or no final `s`: unchanged.
        ("is", "is"),
        ("as", "as"),
        ("s", "s"),
        ("ßs", "ßs"),
        ("table", "table"),
        ("data", "data"),
        // `us` and `ss`: unchanged.
        ("status", "status"),
        ("bus", "bus"),
        ("class", "class"),
        ("address", "address"),
        // `ies` after a character other than `a` or `e`, with more than 3 characters.
        ("queries", "query"),
        ("QUERIES", "query"),
        ("policies", "policy"),
        ("series", "sery"),
        ("ies", "ies"),
        ("aies", "aies"),
        ("eies", "eies"),
        ("東ies", "東y"),
        // `es` after `i`, `a`, `o` or `e`: unchanged.
        ("shoes", "shoes"),
        ("toes", "toes"),
        ("sees", "sees"),
        ("aes", "aes"),
        // Otherwise the final `s` goes.
        ("tables", "table"),
        ("orders", "order"),
        ("analysis", "analysi"),
        ("boxes", "boxe"),
        ("gas", "ga"),
        ("東京s", "東京"),
        ("cafés", "cafe"),
        ("2020s", "2020"),
        // Around the 8- and 16-byte boundaries of the packed fast path.
        ("abcdefgs", "abcdefg"),
        ("abcdefghs", "abcdefgh"),
        ("abcdefies", "abcdefy"),
        ("abcdefghijklmies", "abcdefghijklmy"),
        ("abcdefghijklmnos", "abcdefghijklmno"),
        ("abcdefghijklmnopies", "abcdefghijklmnopy"),
        ("administrativequeries", "administrativequery"),
    ];
    for (t, want) in cases {
        assert_eq!(tokens(t), [want], "{t}");
        assert_eq!(naive_stem(&naive_unstemmed(t)[0]), want, "{t}");
        assert_eq!(stem(&naive_unstemmed(t)[0]), want, "{t}");
    }
    // The stemmer is applied once: a stemmed token that still ends in `s` stays.
    assert_eq!(tokens("glassess"), ["glassess"]);
    assert_eq!(tokens("glasses"), ["glasse"]);
    // Queries fold the same way as documents.
    assert_eq!(query_terms("Policies policy POLICY"), ["policy"]);
}

#[test]
fn query_terms_are_deduplicated_in_order() {
    assert_eq!(
        query_terms("Orders refunds ORDERS orders Café cafe"),
        ["order", "refund", "cafe"]
    );
}

/// The rule of search.md §1 rules 1–3 as a direct, slow composition of whole-text
/// operations.
fn naive_unstemmed(s: &str) -> Vec<String> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    let folded: String = s
        .to_lowercase()
        .nfkd()
        .filter(|c| c.general_category_group() != GeneralCategoryGroup::Mark)
        .collect();
    folded
        .split(|c: char| !is_letter_or_number(c))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// The whole of search.md §1: the runs, then the stemmer.
fn naive_tokens(s: &str) -> Vec<String> {
    naive_unstemmed(s).iter().map(|t| naive_stem(t)).collect()
}

#[test]
fn the_unstemmed_tokenizer_stops_before_the_stemmer() {
    let mut got = Vec::new();
    for_each_unstemmed_token("Orders QUERIES café", |t| got.push(t.to_string()));
    assert_eq!(got, ["orders", "queries", "cafe"]);
}

#[test]
fn every_char_with_a_combining_class_is_a_mark() {
    // The tokenizer decomposes one character at a time. That equals a whole-text NFKD
    // because canonical reordering only moves characters with a non-zero combining class,
    // and those are all marks, which are deleted.
    use unicode_normalization::char::canonical_combining_class;
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    let odd: Vec<char> = (0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| {
            canonical_combining_class(c) != 0
                && c.general_category_group() != GeneralCategoryGroup::Mark
        })
        .collect();
    assert!(odd.is_empty(), "{odd:?}");
}

const ALPHABET: &[char] = &[
    'a', 'Z', 'q', '0', '9', ' ', '-', '_', '.', '\n', '\t', 'é', 'É', '\u{301}', '\u{308}', 'Σ',
    'σ', 'ς', 'Ω', 'İ', 'ß', 'ﬁ', 'Ａ', '①', '東', '—', '\u{a0}', '😀', '𝐀', 'ǅ', 'ﬀ', '\u{1e9e}',
    'Ⅻ', '\'', ':', '\u{200d}', 'ㄱ', '가', 'ᄀ', '\u{1161}',
];

proptest! {
    #[test]
    fn tokenizer_equals_the_naive_rule(chars in proptest::collection::vec(proptest::sample::select(ALPHABET), 0..40)) {
        let s: String = chars.into_iter().collect();
        prop_assert_eq!(tokens(&s), naive_tokens(&s), "{:?}", s);
    }

    #[test]
    fn tokenizer_equals_the_naive_rule_on_any_text(s in "\\PC{0,60}") {
        prop_assert_eq!(tokens(&s), naive_tokens(&s), "{:?}", s);
        let mut raw = Vec::new();
        for_each_unstemmed_token(&s, |t| raw.push(t.to_string()));
        prop_assert_eq!(raw, naive_unstemmed(&s), "{:?}", s);
    }
}

const PIECES: &[&str] = &[
    "orders",
    "queries",
    "QUERIES",
    "status",
    "abcdefghijklmies",
    "ies",
    "shoes",
    "ORDERS",
    "Refunds",
    "x",
    "Q",
    "a1B2c3D4e5F6g7H8",
    "a1B2c3D4e5F6g7H8i",
    "0123456789abcdefg",
    " ",
    "  ",
    "\n",
    "-",
    "_",
    ", ",
    "é",
    "É",
    "Σ",
    "东京",
    "e\u{301}",
    "ﬁ",
    "😀",
    "İ",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
];

fn long_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..90).prop_map(|v| v.concat())
}

proptest! {
    /// Long texts: runs that cross the 64-byte blocks of the scanner, long ASCII tokens,
    /// and the Unicode path in the middle of ASCII.
    #[test]
    fn tokenizer_equals_the_naive_rule_on_long_text(s in long_text()) {
        prop_assert_eq!(tokens(&s), naive_tokens(&s), "{:?}", s);
    }

    /// The index counts exactly the naive rule's tokens and pairs, field by field.
    #[test]
    fn index_counts_equal_the_naive_rule(body in long_text(), title in long_text(), description in long_text()) {
        let clean = |t: &str| t.replace(['\n', ':', '#', '-', '\'', '"', ',', '_', '\\'], " ").trim().to_string();
        let (title, description) = (clean(&title), clean(&description));
        let text = format!("---\ntype: Notes\ntitle: \"{title}\"\ndescription: \"{description}\"\ngrain: Rows per Queries\n---\n{body}");
        let m = model(&[("b", "p.md", &text)]);
        let c = &m.concepts()[0];
        let ix = Index::build(&m, TODAY);
        let p = &c.parsed;
        let fields = [
            naive_tokens(&format!("{} {}", c.id, p.title.as_deref().unwrap_or(""))),
            naive_tokens(p.summary_source.as_deref().unwrap_or(&p.summary)),
            naive_tokens(&format!("{} {} {} {}", c.bundle, p.kind, p.status, p.grain)),
            naive_tokens(c.body()),
        ];
        if !description.is_empty() {
            prop_assert_eq!(&fields[1], &naive_tokens(&description));
        }
        let lens: Vec<u32> = fields.iter().map(|f| f.len() as u32).collect();
        prop_assert_eq!(ix.doc_len("p").map(|l| l.to_vec()), Some(lens));
        let mut terms = std::collections::BTreeSet::new();
        let mut pairs = std::collections::BTreeSet::new();
        for (f, toks) in fields.iter().enumerate() {
            let mut tf: BTreeMap<&str, u32> = BTreeMap::new();
            let mut pf: BTreeMap<(&str, &str), u32> = BTreeMap::new();
            for (i, t) in toks.iter().enumerate() {
                *tf.entry(t.as_str()).or_default() += 1;
                if let Some(u) = toks.get(i + 1).filter(|u| *u != t) {
                    *pf.entry((t.as_str(), u.as_str())).or_default() += 1;
                }
            }
            for (t, n) in &tf {
                prop_assert_eq!(ix.term_postings(f, t), vec![("p", *n)], "{} {:?}", f, t);
                terms.insert(*t);
            }
            for ((a, b), n) in &pf {
                prop_assert_eq!(ix.pair_postings(f, a, b), vec![("p", *n)], "{} {:?}", f, (a, b));
                pairs.insert((*a, *b));
            }
        }
        prop_assert_eq!(ix.term_count(), terms.len());
        prop_assert_eq!(ix.pair_count(), pairs.len());
        let back = Index::decode(&ix.encode()).unwrap();
        prop_assert_eq!(back.encode(), ix.encode());
    }
}

// ---- §2 Indexed fields ----

/// Three concepts whose counts are worked out by hand in the tests below.
fn trio() -> Model {
    model(&[
        (
            "b1",
            "alpha.md",
            "---\ntype: Table\ntitle: Gamma Delta\ngrain: one row\n---\nZeta zeta eta.\n",
        ),
        ("b1", "beta.md", "---\ntype: Table\n---\nEta only.\n"),
        ("b2", "gamma2.md", "---\ntype: Metric\n---\nNothing here.\n"),
    ])
}

const NAMES: usize = 0;
const DESCRIPTION: usize = 1;
const META: usize = 2;
const BODY: usize = 3;

#[test]
fn the_four_fields_are_counted_separately() {
    let m = trio();
    let tsv = crate::manifest::manifest(&m, "t", None, TODAY).unwrap();
    assert!(
        tsv.contains("alpha\tb1\ttable\t-\tone row\tZeta zeta eta.\t-\n"),
        "{tsv}"
    );
    let ix = Index::build(&m, TODAY);
    assert_eq!(FIELD_NAMES, ["names", "description", "meta", "body"]);
    // names "alpha Gamma Delta"; description "Zeta zeta eta."; meta "b1 table - one row"
    // (the `-` status gives nothing); body "Zeta zeta eta.".
    assert_eq!(ix.doc_len("alpha"), Some([3, 3, 4, 3]));
    assert_eq!(ix.doc_len("beta"), Some([1, 2, 2, 2]));
    assert_eq!(ix.doc_len("gamma2"), Some([1, 2, 2, 2]));
    assert_eq!(ix.total_len(), [5, 7, 8, 7]);
    assert_eq!(ix.term_postings(DESCRIPTION, "zeta"), [("alpha", 2)]);
    assert_eq!(ix.term_postings(BODY, "zeta"), [("alpha", 2)]);
    assert!(ix.term_postings(NAMES, "zeta").is_empty());
    assert_eq!(ix.term_postings(BODY, "eta"), [("alpha", 1), ("beta", 1)]);
    assert_eq!(ix.term_postings(NAMES, "gamma"), [("alpha", 1)]);
    assert_eq!(ix.term_postings(META, "b1"), [("alpha", 1), ("beta", 1)]);
    assert_eq!(ix.term_postings(META, "table"), [("alpha", 1), ("beta", 1)]);
    assert!(ix.term_postings(META, "-").is_empty());
    // Pairs: adjacent tokens of one field, never a token with itself, never across fields.
    assert_eq!(ix.pair_postings(NAMES, "alpha", "gamma"), [("alpha", 1)]);
    assert_eq!(ix.pair_postings(NAMES, "gamma", "delta"), [("alpha", 1)]);
    assert_eq!(ix.pair_postings(DESCRIPTION, "zeta", "eta"), [("alpha", 1)]);
    assert!(ix.pair_postings(BODY, "zeta", "zeta").is_empty());
    assert!(ix.pair_postings(NAMES, "delta", "zeta").is_empty());
    assert!(ix.pair_postings(META, "row", "zeta").is_empty());
    assert_eq!(ix.pair_postings(META, "table", "one"), [("alpha", 1)]);
    assert_eq!(ix.len(), 3);
}

#[test]
fn the_description_field_is_the_whole_summary_source() {
    let long = format!("Ledger of {}and finally quasars.", "entries ".repeat(30));
    let m = model(&[
        (
            "b",
            "d.md",
            &format!("---\ntype: t\ndescription: {long}\n---\nBody.\n"),
        ),
        ("b", "s.md", &doc(&format!("{long}\n"))),
        ("b", "e.md", "---\ntype: t\n---\n# Only a heading\n"),
    ]);
    let d = &m.concept("d").unwrap().parsed;
    assert!(d.summary.ends_with('…') && !d.summary.contains("quasar"));
    assert_eq!(d.summary_source.as_deref(), Some(long.as_str()));
    let ix = Index::build(&m, TODAY);
    // Both the frontmatter description and the body's first sentence, uncut.
    assert_eq!(
        ix.term_postings(DESCRIPTION, "quasar"),
        [("d", 1), ("s", 1)]
    );
    assert_eq!(
        ix.term_postings(DESCRIPTION, "entry"),
        [("d", 30), ("s", 30)]
    );
    // No source: an empty field.
    assert_eq!(ix.doc_len("e").unwrap()[DESCRIPTION], 0);
    // s also holds the sentence in its body, so it ranks first.
    assert_eq!(ids(&m, "quasars", &SearchOptions::default()), ["s", "d"]);
}

#[test]
fn links_are_never_indexed() {
    // The links cell holds "ops/orders" and "customers", but only the body's own text is
    // indexed: the link text "see" and the destination words as written.
    let m = model(&[
        ("ops", "orders.md", "---\ntype: runbook\n---\nReplay.\n"),
        (
            "sales",
            "orders.md",
            "---\ntype: table\n---\nSee [x](customers.md) and [[ops/orders]].\n",
        ),
        ("sales", "customers.md", "---\ntype: table\n---\nPeople.\n"),
    ]);
    let c = m.concept("sales/orders").unwrap();
    assert_eq!(c.links, ["customers", "ops/orders"]);
    let ix = Index::build(&m, TODAY);
    // names "sales/orders"; description and body: see x customers md and ops orders
    // (7 tokens); meta "sales table". Indexing the links cell would add tokens to some field.
    assert_eq!(ix.doc_len("sales/orders"), Some([2, 7, 2, 7]));
}

#[test]
fn status_is_indexed_as_rendered_for_today() {
    let m = model(&[
        (
            "b",
            "old.md",
            "---\ntype: table\nstale_after: 2026-06-01\n---\nBody.\n",
        ),
        (
            "b",
            "other.md",
            "---\ntype: table\nstatus: deprecated\nstale_after: 2026-01-01\n---\nBody.\n",
        ),
    ]);
    let before = Index::build(&m, "2026-05-31");
    assert!(before.term_postings(META, "stale").is_empty());
    let on = Index::build(&m, "2026-06-01");
    assert_eq!(on.term_postings(META, "stale"), [("old", 1)]);
    assert_eq!(on.term_postings(META, "deprecated"), [("other", 1)]);
    let o = SearchOptions::default();
    let tsv = search(&m, &on, "t", "stale", &o, "2026-06-01").unwrap();
    assert!(
        tsv.ends_with("pos\nold\tb\ttable\tstale\t-\tBody.\t-\t-\n"),
        "{tsv}"
    );
    let tsv = search(&m, &before, "t", "stale", &o, "2026-05-31").unwrap();
    assert!(
        tsv.ends_with(
            "# hits: 0 direct, 0 linked\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"
        ),
        "{tsv}"
    );
}

// ---- §3 Scoring and ranking ----

/// `bm25_f` of search.md §3 rule 1, written out.
fn bm25(n_total: f64, n: f64, tf: f64, len: f64, avg: f64) -> f64 {
    let idf = libm::log(1.0 + (n_total - n + 0.5) / (n + 0.5));
    let norm = if avg == 0.0 {
        1.0
    } else {
        1.0 - 0.75 + 0.75 * len / avg
    };
    idf * tf * (1.2 + 1.0) / (tf + 1.2 * norm)
}

fn idf(n_total: f64, n: f64) -> f64 {
    libm::log(1.0 + (n_total - n + 0.5) / (n + 0.5))
}

fn scores(m: &Model, q: &str) -> Vec<(String, f64)> {
    let ix = Index::build(m, TODAY);
    search_hits(m, &ix, q, &opts(50, None, false), TODAY)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.id, h.score.unwrap()))
        .collect()
}

#[test]
fn bm25_per_field_matches_a_hand_computed_score() {
    let m = trio();
    // N = 3. Σ len by field: names 5, description 7, meta 8, body 7.
    let (names, desc, body) = (5.0 / 3.0, 7.0 / 3.0, 7.0 / 3.0);
    let _ = names;
    // alpha: zeta in description (n 1, tf 2, len 3) and body (n 1, tf 2, len 3); eta in
    // description and body (n 2, tf 1); the pair (zeta, eta) in description and body
    // (n 1, tf 1). Two distinct terms matched: C = 2.
    let s_alpha = 0.0
        + bm25(3.0, 1.0, 2.0, 3.0, desc)
        + bm25(3.0, 1.0, 2.0, 3.0, body)
        + bm25(3.0, 2.0, 1.0, 3.0, desc)
        + bm25(3.0, 2.0, 1.0, 3.0, body)
        + bm25(3.0, 1.0, 1.0, 3.0, desc)
        + bm25(3.0, 1.0, 1.0, 3.0, body);
    // beta: eta only, in description and body (len 2); C = 1.
    let s_beta = 0.0 + bm25(3.0, 2.0, 1.0, 2.0, desc) + bm25(3.0, 2.0, 1.0, 2.0, body);
    assert_eq!(
        scores(&m, "zeta eta"),
        [
            ("alpha".to_string(), 2.0 * s_alpha),
            ("beta".to_string(), s_beta)
        ]
    );
    // The same figures, worked out independently to 12 places.
    assert_eq!(
        format!("{:.12} {:.12}", 2.0 * s_alpha, s_beta),
        "10.189318697244 0.998352536605"
    );
}

#[test]
fn the_sum_runs_terms_then_pairs_then_bonuses_in_query_order() {
    // search.md §3 rule 4: terms in query order, each over names, description, meta,
    // body; then pairs the same way; then the name bonuses. Floating-point addition is not
    // associative, so only this order gives these exact bits.
    let m = trio();
    let (names, desc, body) = (5.0 / 3.0, 7.0 / 3.0, 7.0 / 3.0);
    let z = [
        bm25(3.0, 1.0, 2.0, 3.0, desc),
        bm25(3.0, 1.0, 2.0, 3.0, body),
    ];
    let e = [
        bm25(3.0, 2.0, 1.0, 3.0, desc),
        bm25(3.0, 2.0, 1.0, 3.0, body),
    ];
    let ze = [
        bm25(3.0, 1.0, 1.0, 3.0, desc),
        bm25(3.0, 1.0, 1.0, 3.0, body),
    ];
    let ez = bm25(3.0, 1.0, 1.0, 3.0, desc);
    let a = scores(&m, "zeta eta");
    assert_eq!(
        a[0].1,
        2.0 * (0.0 + z[0] + z[1] + e[0] + e[1] + ze[0] + ze[1])
    );
    // Reordered terms: eta first, and the pairs (eta, zeta) (absent) then (zeta, eta).
    let b = scores(&m, "eta zeta eta");
    assert_eq!(
        b[0].1,
        2.0 * (0.0 + e[0] + e[1] + z[0] + z[1] + ze[0] + ze[1])
    );
    let _ = ez;
    // A name bonus comes last: alpha's title "Gamma Delta" as the query. gamma and delta
    // are in names only (n 1, tf 1, len 3), and so is the pair; the run "gamma delta"
    // equals the title's sequence.
    let g = bm25(3.0, 1.0, 1.0, 3.0, names);
    let bonus = 0.0 + idf(3.0, 1.0) + idf(3.0, 1.0);
    let c = scores(&m, "Gamma Delta");
    assert_eq!(c, [("alpha".to_string(), 2.0 * (0.0 + g + g + g + bonus))]);
}

#[test]
fn pairs_are_adjacent_distinct_tokens_in_order() {
    // "a a b" has the pair (a, b) once; "b a" and "a b" are different pairs.
    let m = model(&[
        ("b", "ab.md", &doc("alpha beta\n")),
        ("b", "ba.md", &doc("beta alpha\n")),
        ("b", "aab.md", &doc("alpha alpha beta\n")),
    ]);
    let ix = Index::build(&m, TODAY);
    assert_eq!(
        ix.pair_postings(BODY, "alpha", "beta"),
        [("aab", 1), ("ab", 1)]
    );
    assert_eq!(ix.pair_postings(BODY, "beta", "alpha"), [("ba", 1)]);
    assert!(ix.pair_postings(BODY, "alpha", "alpha").is_empty());
    // The query "alpha beta" rewards the two concepts with the phrase over "beta alpha".
    let r = scores(&m, "alpha beta");
    assert_eq!(r[2].0, "ba");
    assert!(r[0].1 > r[2].1 && r[1].1 > r[2].1, "{r:?}");
    // A query of one repeated word has no pair; repeats change nothing.
    assert_eq!(scores(&m, "alpha alpha alpha"), scores(&m, "alpha"));
    // Plurals fold before pairing.
    assert_eq!(scores(&m, "Alphas betas"), scores(&m, "alpha beta"));
}

#[test]
fn the_name_bonus_needs_a_whole_name_sequence() {
    let m = model(&[
        (
            "sales",
            "orders.md",
            "---\ntype: table\ntitle: Customer Orders\n---\nRows.\n",
        ),
        (
            "sales",
            "refunds.md",
            "---\ntype: table\ntitle: Refunds\n---\nCustomer orders returned.\n",
        ),
    ]);
    let ix = Index::build(&m, TODAY);
    let c = m.concept("orders").unwrap();
    assert_eq!(c.id, "orders");
    // The name sequences of `orders`: [order] (the id) and [customer, order] (the title).
    // "customer orders": the runs "customer", "customer orders" and "orders"; the second
    // equals the title, the third the id: two bonuses.
    let n_total = 2.0;
    let names_avg = (3.0 + 2.0) / 2.0;
    let desc_avg = (1.0 + 3.0) / 2.0;
    let body_avg = desc_avg;
    let s_orders = 0.0
        // customer: names (n 1, tf 1, len 3)
        + bm25(n_total, 1.0, 1.0, 3.0, names_avg)
        // order: names (n 1, tf 2)
        + bm25(n_total, 1.0, 2.0, 3.0, names_avg)
        // the pair (customer, order): names
        + bm25(n_total, 1.0, 1.0, 3.0, names_avg)
        // bonuses: "customer orders", then "orders"
        + (0.0 + idf(n_total, 1.0) + idf(n_total, 1.0))
        + (0.0 + idf(n_total, 1.0));
    let s_refunds = 0.0
        + bm25(n_total, 1.0, 1.0, 3.0, desc_avg)
        + bm25(n_total, 1.0, 1.0, 3.0, body_avg)
        + bm25(n_total, 1.0, 1.0, 3.0, desc_avg)
        + bm25(n_total, 1.0, 1.0, 3.0, body_avg)
        + bm25(n_total, 1.0, 1.0, 3.0, desc_avg)
        + bm25(n_total, 1.0, 1.0, 3.0, body_avg);
    let r = search_hits(&m, &ix, "customer orders", &opts(8, None, false), TODAY).unwrap();
    let got: Vec<(&str, f64)> = r
        .hits
        .iter()
        .map(|h| (h.id.as_str(), h.score.unwrap()))
        .collect();
    assert_eq!(
        got,
        [("orders", 2.0 * s_orders), ("refunds", 2.0 * s_refunds)]
    );
    // A part of a name earns nothing: "customer" alone is no name sequence.
    let one = scores(&m, "customer");
    let orders = one.iter().find(|x| x.0 == "orders").unwrap().1;
    assert_eq!(orders, 0.0 + bm25(n_total, 1.0, 1.0, 3.0, names_avg));
}

#[test]
fn the_exact_id_ranks_first() {
    // `gross-margin` holds every query word, in its names, description and body, so it
    // outscores `gross-margin-period`; the query is the latter's id, which ranks first.
    let strong = "Gross margin per period. The gross margin of a period, period by period.";
    let m = model(&[
        (
            "fin",
            "gross-margin.md",
            &format!(
                "---\ntype: metric\ntitle: Gross Margin\ndescription: {strong}\n---\n{strong}\n"
            ),
        ),
        ("fin", "gross-margin-period.md", &doc("x\n")),
        ("ops", "other.md", &doc("gross margin period\n")),
    ]);
    let ix = Index::build(&m, TODAY);
    let hits = |q: &str, bundle: Option<&str>| -> Vec<(String, f64)> {
        search_hits(&m, &ix, q, &opts(8, bundle, false), TODAY)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| (h.id, h.score.unwrap()))
            .collect()
    };
    let got = hits("gross-margin-period", None);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].0, "gross-margin-period");
    let margin = got.iter().find(|h| h.0 == "gross-margin").unwrap().1;
    assert!(
        got[0].1 < margin,
        "the rule, not the score, put it first: {got:?}"
    );
    // The others follow by score.
    assert!(got[1].1 >= got[2].1, "{got:?}");
    // The query is the id after tokenizing: case, separators and plurals fold alike.
    assert_eq!(
        hits("Gross Margin Periods", None)[0].0,
        "gross-margin-period"
    );
    // A query with one more word, or only part of the id, is ranked by score alone.
    assert_eq!(hits("gross margin period of", None)[0].0, "gross-margin");
    // The bundle filter still applies.
    let ops: Vec<String> = hits("gross-margin-period", Some("ops"))
        .into_iter()
        .map(|h| h.0)
        .collect();
    assert_eq!(ops, ["other"]);
    // A prefixed id is the whole sequence: `b/orders` is [b, order], `orders` neither.
    let m = model(&[
        (
            "a",
            "orders.md",
            "---\ntype: t\n---\norders orders orders b\n",
        ),
        ("b", "orders.md", &doc("x\n")),
    ]);
    assert_eq!(
        ids(&m, "b/orders", &opts(8, None, false)),
        ["b/orders", "a/orders"]
    );
    assert_eq!(ids(&m, "orders", &opts(8, None, false))[0], "a/orders");
}

#[test]
fn a_run_counts_once_per_concept() {
    // The id and the title are one sequence, [order]: one bonus, not two. A repeated run
    // in the query also counts once.
    let m = model(&[
        ("b", "orders.md", "---\ntype: t\ntitle: Orders\n---\nx\n"),
        ("b", "other.md", &doc("orders\n")),
    ]);
    let n_total = 2.0;
    let names_avg = (2.0 + 1.0) / 2.0;
    let want = 0.0 + bm25(n_total, 1.0, 2.0, 2.0, names_avg) + (0.0 + idf(n_total, 1.0));
    for q in ["orders", "Orders orders ORDERS"] {
        assert_eq!(scores(&m, q)[0], ("orders".to_string(), want), "{q}");
    }
}

#[test]
fn name_sequences_longer_than_12_tokens_earn_no_bonus() {
    let twelve = "a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12";
    let thirteen = format!("{twelve} a13");
    let m = model(&[
        (
            "b",
            "p.md",
            &format!("---\ntype: t\ntitle: {twelve}\n---\nx\n"),
        ),
        (
            "b",
            "q.md",
            &format!("---\ntype: t\ntitle: {thirteen}\n---\nx\n"),
        ),
    ]);
    let ix = Index::build(&m, TODAY);
    let with = search_hits(&m, &ix, twelve, &opts(8, None, false), TODAY).unwrap();
    let without = search_hits(&m, &ix, &thirteen, &opts(8, None, false), TODAY).unwrap();
    // p's title is a run of the query: its score is above q's for the twelve-token query;
    // q's thirteen-token title never is.
    assert_eq!(with.hits[0].id, "p");
    let q_score = without
        .hits
        .iter()
        .find(|h| h.id == "q")
        .unwrap()
        .score
        .unwrap();
    let p_score = without
        .hits
        .iter()
        .find(|h| h.id == "p")
        .unwrap()
        .score
        .unwrap();
    // For the thirteen-token query, p still has its twelve-token run; q has none, and
    // its extra term a13 is worth less than p's bonus.
    assert!(p_score > q_score, "{p_score} {q_score}");
}

#[test]
fn the_coordination_factor_counts_distinct_matched_terms() {
    let m = model(&[
        ("b", "one.md", &doc("alpha alpha alpha alpha\n")),
        ("b", "two.md", &doc("alpha beta filler filler\n")),
        ("b", "none.md", &doc("filler\n")),
    ]);
    let avg = (4.0 + 4.0 + 1.0) / 3.0;
    let r = scores(&m, "alpha beta gamma");
    let one = bm25(3.0, 2.0, 4.0, 4.0, avg) + bm25(3.0, 2.0, 4.0, 4.0, avg);
    let two = (bm25(3.0, 2.0, 1.0, 4.0, avg) + bm25(3.0, 2.0, 1.0, 4.0, avg))
        + (bm25(3.0, 1.0, 1.0, 4.0, avg) + bm25(3.0, 1.0, 1.0, 4.0, avg));
    // Description and body both hold the text (the body's first sentence is the
    // description): each term counts in both fields. `two` matches 2 terms, `one` 1.
    let _ = (one, two);
    assert_eq!(
        r.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["two", "one"]
    );
    let raw = |id: &str| r.iter().find(|x| x.0 == id).unwrap().1;
    // C = 1 for `one`: its score is its sum.
    let s_one = 0.0 + bm25(3.0, 2.0, 4.0, 4.0, avg) + bm25(3.0, 2.0, 4.0, 4.0, avg);
    assert_eq!(raw("one"), s_one);
    let s_two = 0.0
        + bm25(3.0, 2.0, 1.0, 4.0, avg)
        + bm25(3.0, 2.0, 1.0, 4.0, avg)
        + bm25(3.0, 1.0, 1.0, 4.0, avg)
        + bm25(3.0, 1.0, 1.0, 4.0, avg)
        + bm25(3.0, 1.0, 1.0, 4.0, avg)
        + bm25(3.0, 1.0, 1.0, 4.0, avg);
    assert_eq!(raw("two"), 2.0 * s_two);
}

/// The tenant of the worked example in docs/search.md.
fn worked_example() -> Model {
    model(&[
        (
            "shop",
            "orders.md",
            "---\ntype: table\ntitle: Orders\ndescription: One row per order placed online.\n---\nEach order has a status.\n",
        ),
        (
            "shop",
            "refunds.md",
            "---\ntype: table\ntitle: Refunds\n---\nA refund reverses an order.\n",
        ),
        (
            "shop",
            "export.md",
            "---\ntype: runbook\ntitle: Order export\n---\nRun the order export nightly.\n",
        ),
    ])
}

#[test]
fn the_worked_example_of_docs_search_md() {
    let m = worked_example();
    let ix = Index::build(&m, TODAY);
    assert_eq!(ix.doc_len("orders"), Some([2, 6, 2, 5]));
    assert_eq!(ix.doc_len("refunds"), Some([2, 5, 2, 5]));
    assert_eq!(ix.doc_len("export"), Some([3, 5, 2, 5]));
    assert_eq!(
        tokens("Each order has a status."),
        ["each", "order", "ha", "a", "status"]
    );
    let n = 3.0;
    let (an, ad, ab) = (7.0 / 3.0, 16.0 / 3.0, 15.0 / 3.0);
    let f4 = |x: f64| format!("{x:.4}");
    // idf for n = 1, 2, 3 of N = 3.
    assert_eq!(
        [idf(n, 1.0), idf(n, 2.0), idf(n, 3.0)].map(f4),
        ["0.9808", "0.4700", "0.1335"]
    );
    // export: order in names (n 2, tf 1, len 3), description and body (n 3, tf 1, len 5);
    // export in names (n 1, tf 2), description and body (n 1, tf 1); the pair in names,
    // description and body (n 1, tf 1); bonuses "order export" and "export".
    let e = [
        bm25(n, 2.0, 1.0, 3.0, an),
        bm25(n, 3.0, 1.0, 5.0, ad),
        bm25(n, 3.0, 1.0, 5.0, ab),
        bm25(n, 1.0, 2.0, 3.0, an),
        bm25(n, 1.0, 1.0, 5.0, ad),
        bm25(n, 1.0, 1.0, 5.0, ab),
        bm25(n, 1.0, 1.0, 3.0, an),
        bm25(n, 1.0, 1.0, 5.0, ad),
        bm25(n, 1.0, 1.0, 5.0, ab),
    ];
    assert_eq!(
        e.map(f4),
        [
            "0.4208", "0.1370", "0.1335", "1.2483", "1.0066", "0.9808", "0.8782", "1.0066",
            "0.9808"
        ]
    );
    let b1 = 0.0 + idf(n, 2.0) + idf(n, 1.0);
    let b2 = 0.0 + idf(n, 1.0);
    let s_export = e.iter().fold(0.0, |s, x| s + x) + b1 + b2;
    // orders: order in names (tf 2, len 2), description (len 6), body (len 5); bonus
    // "order". refunds: order in description and body (len 5). One term each.
    let o = [
        bm25(n, 2.0, 2.0, 2.0, an),
        bm25(n, 3.0, 1.0, 6.0, ad),
        bm25(n, 3.0, 1.0, 5.0, ab),
    ];
    assert_eq!(o.map(f4), ["0.6733", "0.1270", "0.1335"]);
    let s_orders = o.iter().fold(0.0, |s, x| s + x) + (0.0 + idf(n, 2.0));
    let r = [bm25(n, 3.0, 1.0, 5.0, ad), bm25(n, 3.0, 1.0, 5.0, ab)];
    let s_refunds = 0.0 + r[0] + r[1];
    let got = scores(&m, "order export");
    assert_eq!(
        got,
        [
            ("export".to_string(), 2.0 * s_export),
            ("orders".to_string(), s_orders),
            ("refunds".to_string(), s_refunds),
        ]
    );
    assert_eq!(
        got.iter().map(|g| f4(g.1)).collect::<Vec<_>>(),
        ["18.4487", "1.4039", "0.2706"]
    );
}

#[test]
fn only_matching_concepts_are_candidates() {
    let m = trio();
    assert_eq!(ids(&m, "nothing", &SearchOptions::default()), ["gamma2"]);
    assert!(ids(&m, "unknownword", &SearchOptions::default()).is_empty());
}

#[test]
fn ties_break_by_id_in_every_selection_path() {
    // Identical concepts: same length, same counts, so the same score.
    let mut docs: Vec<(String, String)> = Vec::new();
    for i in (0..70).rev() {
        docs.push((format!("e{i:02}.md"), doc("same words here\n")));
    }
    let docs: Vec<(&str, &str, &str)> = docs
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    let m = model(&docs);
    let all: Vec<String> = (0..70).map(|i| format!("e{i:02}")).collect();
    // Everything fits, a bounded top-k, and a selection for large k.
    for k in [100, 70, 3, 8, 64, 65, 69] {
        assert_eq!(
            ids(&m, "words", &opts(k, None, false)),
            all[..k.min(70)].to_vec(),
            "k = {k}"
        );
    }
    // Prefixed ids across bundles compare as whole strings.
    let m = model(&[
        ("b", "same.md", &doc("words\n")),
        ("a", "same.md", &doc("words\n")),
    ]);
    assert_eq!(
        ids(&m, "words", &SearchOptions::default()),
        ["a/same", "b/same"]
    );
}

#[test]
fn top_k_keeps_the_best_scores_in_order() {
    // Distinct scores: concept i holds the query word i + 1 times in a body of equal length.
    let mut texts = Vec::new();
    for i in 0..40usize {
        let body: Vec<&str> = (0..40)
            .map(|j| if j <= i { "needle" } else { "hay" })
            .collect();
        texts.push((format!("d{:02}.md", (i * 7) % 40), doc(&body.join(" "))));
    }
    let docs: Vec<(&str, &str, &str)> = texts
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    let m = model(&docs);
    let ix = Index::build(&m, TODAY);
    let full = search_hits(&m, &ix, "needle", &opts(40, None, false), TODAY).unwrap();
    let scores: Vec<f64> = full.hits.iter().map(|h| h.score.unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] > w[1]), "{scores:?}");
    for k in [1, 5, 8, 39] {
        let part = search_hits(&m, &ix, "needle", &opts(k, None, false), TODAY).unwrap();
        assert_eq!(part.hits, full.hits[..k].to_vec(), "k = {k}");
    }
}

#[test]
fn the_bundle_filter_applies_before_the_cut() {
    let m = model(&[
        (
            "a",
            "top.md",
            "---\ntype: t\ntitle: Needle Needle\n---\nneedle needle needle\n",
        ),
        ("b", "low.md", &doc("needle and other words\n")),
        ("b", "none.md", &doc("nothing\n")),
    ]);
    assert_eq!(ids(&m, "needle", &opts(1, None, false)), ["top"]);
    assert_eq!(ids(&m, "needle", &opts(1, Some("b"), false)), ["low"]);
    // A bundle named in another case is the same bundle, printed as stored.
    let ix = Index::build(&m, TODAY);
    let tsv = search(&m, &ix, "acme", "needle", &opts(1, Some("B"), true), TODAY).unwrap();
    assert_eq!(
        tsv,
        "# tenant: acme\n# bundles: a b\n# bundle: b\n# query: needle\n# hits: 1 direct, 0 linked\n\
         id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n\
         low\tb\tnote\t-\t-\tneedle and other words\t-\t0\n"
    );
    // N counts the whole tenant, so the filter does not change scores.
    let all = search_hits(&m, &ix, "needle", &opts(8, None, false), TODAY).unwrap();
    let only = search_hits(&m, &ix, "needle", &opts(8, Some("b"), false), TODAY).unwrap();
    assert_eq!(all.hits[1], only.hits[0]);
}

#[test]
fn an_unknown_bundle_is_not_found() {
    let m = trio();
    let ix = Index::build(&m, TODAY);
    let e = search(&m, &ix, "t", "eta", &opts(8, Some("zzz"), true), TODAY).unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND");
    assert_eq!(
        e.message(),
        "no bundle \"zzz\" in this tenant: found b1, b2"
    );
}

#[test]
fn a_bundle_with_only_navigation_documents_filters_to_nothing() {
    let m = model(&[
        ("a", "x.md", &doc("needle\n")),
        ("nav", "index.md", "# Index\n\nneedle\n"),
    ]);
    assert_eq!(m.bundles, ["a", "nav"]);
    assert!(ids(&m, "needle", &opts(8, Some("nav"), true)).is_empty());
}

#[test]
fn k_defaults_to_8_and_zero_gives_no_hits() {
    assert_eq!(
        SearchOptions::default(),
        SearchOptions {
            k: 8,
            bundle: None,
            expand: true
        }
    );
    let texts: Vec<(String, String)> = (0..12)
        .map(|i| (format!("n{i:02}.md"), doc("needle [[n00]]\n")))
        .collect();
    let docs: Vec<(&str, &str, &str)> = texts
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    let m = model(&docs);
    let r = ids(&m, "needle", &SearchOptions::default());
    assert_eq!(r.len(), 8);
    let tsv = run(&m, "needle", &opts(0, None, true));
    assert_eq!(
        tsv,
        "# tenant: t\n# bundles: b\n# query: needle\n# hits: 0 direct, 0 linked\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"
    );
}

// ---- §4 Expansion ----

fn hub() -> Model {
    model(&[
        (
            "b",
            "h1.md",
            &doc("needle needle needle [[w]] [[z]] [[h2]]\n"),
        ),
        ("b", "h2.md", &doc("needle needle [[x]] [[y]] filler\n")),
        (
            "b",
            "h3.md",
            &doc("needle [[x]] [[o]] filler filler filler\n"),
        ),
        ("b", "w.md", &doc("w\n")),
        ("b", "x.md", &doc("x\n")),
        ("b", "y.md", &doc("y\n")),
        ("b", "z.md", &doc("z\n")),
        ("c", "o.md", &doc("o\n")),
    ])
}

#[test]
fn expansion_orders_by_inbound_then_first_rank_then_id() {
    let m = hub();
    // x: 2 inbound (first from rank 1); w and z: 1 from rank 0; y: 1 from rank 1; o: 1 from
    // rank 2. h2 is itself a direct hit and is skipped.
    assert_eq!(
        ids(&m, "needle", &SearchOptions::default()),
        ["h1", "h2", "h3", "x", "w", "z", "y", "o"]
    );
    // Capped at k.
    assert_eq!(
        ids(&m, "needle", &opts(3, None, true)),
        ["h1", "h2", "h3", "x", "w", "z"]
    );
    // The bundle filter also applies to linked concepts.
    assert_eq!(
        ids(&m, "needle", &opts(8, Some("b"), true)),
        ["h1", "h2", "h3", "x", "w", "z", "y"]
    );
    // Only the direct hits' links count: with k = 1, h1 alone is direct, so its link to h2
    // counts, and h2, w and z tie on one inbound link from rank 0.
    assert_eq!(ids(&m, "needle", &opts(1, None, true)), ["h1", "h2"]);
    assert_eq!(ids(&m, "needle", &opts(8, None, false)), ["h1", "h2", "h3"]);
}

#[test]
fn linked_rows_print_without_pos() {
    let m = hub();
    let tsv = run(&m, "needle", &opts(1, None, true));
    assert_eq!(
        tsv,
        "# tenant: t\n# bundles: b c\n# query: needle\n# hits: 1 direct, 1 linked\n\
         id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n\
         h1\tb\tnote\t-\t-\tneedle needle needle [[w]] [[z]] [[h2]]\th2 w z\t0\n\
         h2\tb\tnote\t-\t-\tneedle needle [[x]] [[y]] filler\tx y\t-\n"
    );
}

// ---- §5 Output ----

#[test]
fn query_echo_turns_line_breaks_and_tabs_into_spaces() {
    let m = trio();
    let tsv = run(&m, "eta\tzeta\r\nx", &opts(8, None, true));
    assert!(
        tsv.contains("\n# query: eta zeta  x\n# hits: 2 direct, 0 linked\n"),
        "{tsv}"
    );
    let tsv = run(&m, " ", &opts(8, None, true));
    assert!(tsv.contains("\n# query:  \n"), "{tsv}");
}

#[test]
fn the_spec_example_renders_byte_for_byte() {
    let long = "x ".repeat(1000);
    let m = model(&[
        (
            "ops",
            "orders.md",
            &format!("---\ntype: runbook\ndescription: How to replay a failed order export.\n---\n{long}{long}replay the export [[sales/orders]]\n{long}"),
        ),
        (
            "sales",
            "orders.md",
            "---\ntype: table\nstatus: deprecated\ngrain: one row per order\ndescription: Orders placed online.\n---\nSee [[customers]].\n",
        ),
        ("sales", "customers.md", &doc("Registered customers.\n")),
    ]);
    let tsv = run(&m, "replay export", &SearchOptions::default());
    // "replay" at 4000, "export" ends at 4017: the cluster is 17 long, so pos = 4000 − 991.
    assert_eq!(
        tsv,
        "# tenant: t\n# bundles: ops sales\n# query: replay export\n# hits: 1 direct, 1 linked\n\
         id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n\
         ops/orders\tops\trunbook\t-\t-\tHow to replay a failed order export.\tsales/orders\t3009\n\
         sales/orders\tsales\ttable\tdeprecated\tone row per order\tOrders placed online.\tcustomers\t-\n"
    );
}

// ---- §6 pos ----

fn pos_of(body: &str, query: &str) -> Option<usize> {
    let m = model(&[("b", "p.md", &doc(body))]);
    let ix = Index::build(&m, TODAY);
    let r = search_hits(&m, &ix, query, &SearchOptions::default(), TODAY).unwrap();
    assert_eq!(r.hits.len(), 1, "the concept must be a hit for {query:?}");
    r.hits[0].pos
}

#[test]
fn pos_short_body_is_zero() {
    assert_eq!(pos_of("alpha beta gamma", "beta"), Some(0));
}

#[test]
fn pos_centres_the_densest_window() {
    let body = format!("alpha{} alpha beta{}", " x".repeat(2000), " y".repeat(2000));
    // alpha at 0 counts one word; alpha at 4006 with beta (4012..4016) counts two.
    assert_eq!(pos_of(&body, "alpha beta"), Some(4006 - (2000 - 10) / 2));
}

#[test]
fn pos_ties_go_to_the_earliest_anchor() {
    let body = format!(
        "{} alpha{} alpha{}",
        " x".repeat(1500),
        " x".repeat(2000),
        " x".repeat(1500)
    );
    assert_eq!(pos_of(&body, "alpha"), Some(3001 - 997));
}

#[test]
fn pos_window_includes_an_occurrence_ending_exactly_at_the_limit() {
    // alpha at 3001, beta ends at 5001 = 3001 + 2000: the cluster is 2000 long, no lead.
    let body = format!("{} alpha{} beta", " x".repeat(1500), " x".repeat(995));
    assert_eq!(pos_of(&body, "alpha beta"), Some(3001));
}

#[test]
fn pos_counts_only_whole_words() {
    let body = format!(
        "preorders{} orders2{} orders_x{}",
        " x".repeat(1500),
        " x".repeat(1500),
        " y".repeat(1500)
    );
    assert_eq!(pos_of(&body, "orders"), Some(6018 - 997));
}

#[test]
fn pos_searches_lower_cased_when_the_length_holds() {
    let body = format!("{} ORDERS{}", " x".repeat(1500), " x".repeat(1500));
    assert_eq!(pos_of(&body, "Orders"), Some(3001 - 997));
}

#[test]
fn pos_is_case_sensitive_when_lower_casing_changes_the_length() {
    // İ lower-cases to two characters, so the body is searched as written.
    let body = format!(
        "İ{} Orders{} orders{}",
        " x".repeat(1500),
        " x".repeat(1500),
        " x".repeat(1000)
    );
    assert_eq!(pos_of(&body, "orders"), Some(6009 - 997));
    assert_eq!(pos_of(&body, "Orders"), Some(3002 - 997));
    assert_eq!(pos_of(&body, "ORDERS"), None);
}

#[test]
fn pos_is_clamped_to_the_last_window() {
    let body = format!("{} alpha", " x".repeat(2000));
    assert_eq!(pos_of(&body, "alpha"), Some(4006 - 2000));
}

#[test]
fn pos_counts_utf16_units() {
    let body = format!("{} word{}", "é".repeat(3000), " é".repeat(1000));
    assert_eq!(pos_of(&body, "word"), Some(3001 - 998));
}

#[test]
fn pos_never_lands_inside_a_surrogate_pair() {
    let body = format!("{} word {}", "😀".repeat(1500), "😀".repeat(1500));
    // 3001 − 998 = 2003 is the second half of the pair at 2002.
    assert_eq!(pos_of(&body, "word"), Some(2002));
}

#[test]
fn pos_is_dash_without_an_occurrence_in_the_body() {
    // Only accent folding matched.
    assert_eq!(pos_of("Un café noir.", "cafe"), None);
    assert_eq!(pos_of("Un café noir.", "Café"), Some(0));
    // Only the row matched: the title is not in the body.
    let m = model(&[(
        "b",
        "p.md",
        "---\ntype: note\ntitle: Quasar\n---\nNothing else.\n",
    )]);
    let ix = Index::build(&m, TODAY);
    let r = search_hits(&m, &ix, "quasar", &SearchOptions::default(), TODAY).unwrap();
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.hits[0].pos, None);
    // An empty body.
    let m = model(&[("b", "p.md", "---\ntype: note\ntitle: Quasar\n---\n")]);
    let tsv = run(&m, "quasar", &SearchOptions::default());
    assert!(
        tsv.ends_with("\tquasar\t-\t-\n") || tsv.ends_with("\t-\t-\n"),
        "{tsv}"
    );
}

#[test]
fn pos_unit_rules() {
    let map = |s: &str| crate::text::Utf16Map::new(s);
    assert_eq!(
        query_words("Orders, refunds—ORDERS ünd 2024"),
        ["Orders", "refunds", "ORDERS", "ünd", "2024"]
    );
    let body = "aa bb";
    assert_eq!(pos(body, &map(body), &[]), None);
    assert_eq!(pos("", &map(""), &["x"]), None);
    assert_eq!(pos(body, &map(body), &["bb", "BB"]), Some(0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// An ASCII body takes the byte path of `pos`; it must place every query exactly as
    /// the general path does (words with other characters, repeats, case, few and many
    /// words, bodies longer than a window).
    #[test]
    fn pos_of_an_ascii_body_equals_the_general_path(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("Orders"), Just("orders"), Just("ORDERS"), Just("x"), Just("a1"),
                Just("refund"), Just(" "), Just(", "), Just("-"), Just("\n"), Just("_"),
                Just("2024"), Just("ordersx"), Just("xorders"),
            ],
            0..400,
        ),
        filler in 0usize..3000,
        query in proptest::collection::vec(
            prop_oneof![
                Just("orders"), Just("Orders"), Just("x"), Just("refund"), Just("2024"),
                Just("café"), Just("İ"), Just("a1"), Just("\u{212A}"), Just("zz"),
            ],
            0..12,
        ),
        many in any::<bool>(),
    ) {
        let mut body = parts.concat();
        body.insert_str(body.len() / 2, &" x".repeat(filler));
        let mut q = query.join(" ");
        if many {
            // More than eight distinct words: the hash look-up.
            for i in 0..10 {
                q.push_str(&format!(" w{i}"));
            }
            body.push_str(" w3 w7");
        }
        let words = query_words(&q);
        let map = crate::text::Utf16Map::new(&body);
        prop_assert_eq!(pos(&body, &map, &words), pos::pos_unicode(&body, &map, &words));
        prop_assert_eq!(concept_pos(&body, &words), pos::pos_unicode(&body, &map, &words));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A body whose other characters are separators that lower-case to themselves takes
    /// the byte path too; bodies with non-ASCII letters, with characters whose lower case
    /// differs (`Ⓐ`, `Σ`, `İ`) or with a lone combining mark fall back to the general path.
    /// Either way `pos` must equal the general path's.
    #[test]
    fn pos_of_a_body_with_non_ascii_separators_equals_the_general_path(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("Orders"), Just("orders"), Just("x"), Just("refund"), Just(" "),
                Just("—"), Just("’"), Just("“"), Just("😀"), Just("\u{a0}"), Just("·"),
                Just("i"), Just("2024"), Just("-"),
            ],
            0..400,
        ),
        spoil in proptest::option::of(proptest::sample::select(
            &["é", "Ⓐ", "Σ", "İ", "\u{307}", "Ω"][..],
        )),
        filler in 0usize..3000,
        query in proptest::collection::vec(
            prop_oneof![
                Just("orders"), Just("Orders"), Just("x"), Just("refund"), Just("2024"),
                Just("café"), Just("İ"), Just("i"), Just("ⓐ"), Just("σ"),
            ],
            0..6,
        ),
    ) {
        let mut body = parts.concat();
        let mid = (0..=body.len() / 2).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
        body.insert_str(mid, &" —x".repeat(filler));
        if let Some(c) = spoil {
            body.insert_str(mid, c);
        }
        let q = query.join(" ");
        let words = query_words(&q);
        let map = crate::text::Utf16Map::new(&body);
        prop_assert_eq!(pos(&body, &map, &words), pos::pos_unicode(&body, &map, &words));
        prop_assert_eq!(concept_pos(&body, &words), pos::pos_unicode(&body, &map, &words));
    }
}

/// `pos` as a search computes it, from a compiled concept (`pos::pos_of`, which reads an
/// ASCII body as bytes), for the body `body` (checked to be the concept's body).
fn concept_pos(body: &str, words: &[&str]) -> Option<usize> {
    let m = model(&[("b", "p.md", &doc(body))]);
    let c = &m.concepts()[0];
    assert_eq!(c.body(), body);
    pos::pos_of(c, words)
}

// ---- §7 Empty and wordless queries ----

#[test]
fn empty_and_wordless_queries_return_the_header_only() {
    let m = trio();
    for (q, echo) in [("", "# query:\n"), ("!!! -- ¿?", "# query: !!! -- ¿?\n")] {
        let tsv = run(&m, q, &SearchOptions::default());
        assert_eq!(
            tsv,
            format!(
                "# tenant: t\n# bundles: b1 b2\n{echo}# hits: 0 direct, 0 linked\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"
            )
        );
    }
}

// ---- Bad input ----

#[test]
fn bad_queries_never_panic() {
    let m = trio();
    let ix = Index::build(&m, TODAY);
    let long: String = (0..10_000).map(|i| format!("w{i} ")).collect();
    let tsv = search(&m, &ix, "t", &long, &SearchOptions::default(), TODAY).unwrap();
    assert!(tsv.contains("# hits: 0 direct, 0 linked\n"));
    // Only the first MAX_QUERY_TOKENS tokens count: eta first, then fillers.
    let long: String = (0..10_000)
        .map(|i| if i % 100 == 0 { "eta " } else { "zeta " })
        .collect();
    let r = search_hits(&m, &ix, &long, &opts(usize::MAX, None, true), TODAY).unwrap();
    assert_eq!(
        r.hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["alpha", "beta"]
    );
    // 10,000 distinct words that all occur: every direct hit computes `pos` over them.
    let words: Vec<String> = (0..10_000).map(|i| format!("w{i}")).collect();
    let m2 = model(&[
        ("b", "big.md", &doc(&words.join(" "))),
        ("b", "small.md", &doc("w1 w2\n")),
    ]);
    let ix2 = Index::build(&m2, TODAY);
    let r = search_hits(
        &m2,
        &ix2,
        &words.join(" "),
        &SearchOptions::default(),
        TODAY,
    )
    .unwrap();
    let got: Vec<(&str, Option<usize>)> = r.hits.iter().map(|h| (h.id.as_str(), h.pos)).collect();
    assert_eq!(got, [("big", Some(0)), ("small", Some(0))]);
    for q in [
        "\0",
        "\u{301}\u{308}",
        "😀",
        "-".repeat(100_000).as_str(),
        "\r\n\t",
    ] {
        let tsv = search(&m, &ix, "t", q, &opts(50, Some("B1"), true), TODAY).unwrap();
        assert!(tsv.contains("# hits: 0 direct, 0 linked\n"), "{q:?}");
    }
}

#[test]
fn hostile_queries_are_bounded_by_the_token_cap() {
    // The ranking reads the first MAX_QUERY_TOKENS tokens: a word after them is ignored.
    assert_eq!(MAX_QUERY_TOKENS, 128);
    let m = trio();
    let fill = "filler ".repeat(MAX_QUERY_TOKENS);
    assert!(ids(&m, &format!("{fill}zeta"), &opts(8, None, false)).is_empty());
    let fill = "filler ".repeat(MAX_QUERY_TOKENS - 1);
    assert_eq!(
        ids(&m, &format!("{fill}zeta"), &opts(8, None, false)),
        ["alpha"]
    );
    // A tenant whose names, descriptions and bodies hold every word of the hostile
    // queries, so each of them does all the work it can.
    let mut texts: Vec<(String, String)> = Vec::new();
    for i in 0..40 {
        let words: Vec<String> = (0..200)
            .map(|j| format!("w{}", (i * 7 + j) % 300))
            .collect();
        texts.push((
            format!("c{i:02}.md"),
            format!(
                "---\ntype: note\ntitle: w{i} w{}\n---\n{} 東京 ωμεγα ١٢٣ 2024 2025\n",
                i + 1,
                words.join(" ")
            ),
        ));
    }
    let docs: Vec<(&str, &str, &str)> = texts
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    let m = model(&docs);
    let ix = Index::build(&m, TODAY);
    let hostile: Vec<String> = vec![
        // 100,000 characters of distinct known words.
        (0..30_000)
            .map(|i| format!("w{} ", i % 300))
            .collect::<String>()[..100_000]
            .to_string(),
        // 10,000 repetitions of one word, and of a two-word name.
        "w1 ".repeat(10_000),
        "w1 w2 ".repeat(5_000),
        // Only pairs of one word.
        "w3 w3 w4 w4 w5 w5 ".repeat(2_000),
        // Only non-Latin scripts, only digits.
        "東京 ωμεγα ١٢٣ ".repeat(3_000),
        "2024 2025 ".repeat(5_000),
        String::new(),
    ];
    for q in &hostile {
        let a = search(&m, &ix, "t", q, &SearchOptions::default(), TODAY).unwrap();
        // Only the first tokens count: the query cut after them gives the same ranking.
        let mut cut = Vec::new();
        for_each_token(q, |t| cut.push(t.to_string()));
        cut.truncate(MAX_QUERY_TOKENS);
        let b = search_hits(&m, &ix, &cut.join(" "), &SearchOptions::default(), TODAY).unwrap();
        let a_ids = search_hits(&m, &ix, q, &SearchOptions::default(), TODAY).unwrap();
        let strip = |r: &SearchResult| {
            r.hits
                .iter()
                .map(|h| (h.id.clone(), h.score))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&a_ids), strip(&b), "{}", &q[..q.len().min(40)]);
        assert!(a.contains("# hits: "));
    }
    // An empty tenant.
    let empty = Model::default();
    let ix = Index::build(&empty, TODAY);
    for q in &hostile {
        let tsv = search(&empty, &ix, "t", q, &SearchOptions::default(), TODAY).unwrap();
        assert!(tsv.ends_with(
            "# hits: 0 direct, 0 linked\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"
        ));
    }
}

#[test]
fn a_stale_index_date_is_corrected_for_the_call() {
    let m = model(&[(
        "b",
        "old.md",
        "---\ntype: table\nstale_after: 2026-06-01\n---\nBody.\n",
    )]);
    let ix = Index::build(&m, "2026-05-01");
    let fresh = Index::build(&m, "2026-07-01");
    let o = SearchOptions::default();
    assert_eq!(
        search(&m, &ix, "t", "stale", &o, "2026-07-01").unwrap(),
        search(&m, &fresh, "t", "stale", &o, "2026-07-01").unwrap()
    );
    assert_eq!(ix.today(), "2026-05-01");
}

// ---- §8 Index lifetime: incremental updates and the encoding ----

#[test]
fn update_after_edits_equals_a_fresh_build() {
    let a = trio();
    let b = model(&[
        (
            "b1",
            "alpha.md",
            "---\ntype: Table\ntitle: Gamma Delta\ngrain: one row\n---\nZeta zeta eta.\n",
        ),
        (
            "b1",
            "beta.md",
            "---\ntype: Table\n---\nEta only, now with zeta.\n",
        ),
        ("b3", "new.md", &doc("fresh zeta\n")),
    ]);
    let mut ix = Index::build(&a, TODAY);
    ix.update(&a, &b, TODAY);
    assert_eq!(ix.encode(), Index::build(&b, TODAY).encode());
    assert_eq!(
        search(&b, &ix, "t", "zeta eta", &SearchOptions::default(), TODAY).unwrap(),
        run(&b, "zeta eta", &SearchOptions::default())
    );
    assert_eq!(ix.len(), 3);
}

#[test]
fn update_with_the_wrong_old_model_rebuilds() {
    let a = trio();
    let b = model(&[("x", "y.md", &doc("other words\n"))]);
    let mut ix = Index::build(&a, TODAY);
    // `b` is not what the index holds.
    ix.update(&b, &b, TODAY);
    assert_eq!(ix.encode(), Index::build(&b, TODAY).encode());
}

#[test]
fn a_date_change_refreshes_only_stale_tokens() {
    let m = model(&[
        (
            "b",
            "old.md",
            "---\ntype: table\nstale_after: 2026-06-01\n---\nBody.\n",
        ),
        (
            "b",
            "new.md",
            "---\ntype: table\nstale_after: 2027-06-01\n---\nBody.\n",
        ),
        ("b", "plain.md", &doc("Body.\n")),
    ]);
    for (from, to) in [
        ("2026-05-01", "2026-06-01"),
        ("2027-07-01", "2026-01-01"),
        ("2026-06-01", "2026-06-02"),
    ] {
        let mut ix = Index::build(&m, from);
        ix.update(&m, &m, to);
        assert_eq!(ix.today(), to);
        assert_eq!(ix.encode(), Index::build(&m, to).encode(), "{from} → {to}");
    }
}

#[test]
fn a_bulk_change_rebuilds_and_still_equals_a_fresh_build() {
    let texts: Vec<(String, String)> = (0..100)
        .map(|i| {
            (
                format!("c{i:03}.md"),
                format!(
                    "---\ntype: table\nstale_after: 2026-06-{:02}\n---\nBody {i}.\n",
                    1 + i % 28
                ),
            )
        })
        .collect();
    let docs: Vec<(&str, &str, &str)> = texts
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    let m = model(&docs);
    // Every concept turns stale: more than a quarter changes, so the update rebuilds.
    let mut ix = Index::build(&m, "2026-01-01");
    ix.update(&m, &m, "2026-12-01");
    assert_eq!(ix.encode(), Index::build(&m, "2026-12-01").encode());
    assert_eq!(ix.term_postings(META, "stale").len(), 100);
    // A few turn stale: the incremental path.
    let mut ix = Index::build(&m, "2026-06-01");
    ix.update(&m, &m, "2026-06-03");
    assert_eq!(ix.encode(), Index::build(&m, "2026-06-03").encode());
    assert_eq!(ix.term_postings(META, "stale").len(), 12);
}

#[test]
fn encode_round_trips_and_is_canonical() {
    let m = hub();
    let ix = Index::build(&m, TODAY);
    let bytes = ix.encode();
    let back = Index::decode(&bytes).unwrap();
    assert_eq!(back.encode(), bytes);
    assert_eq!(back.today(), TODAY);
    for q in ["needle", "x w", "filler needle"] {
        assert_eq!(
            search(&m, &back, "t", q, &SearchOptions::default(), TODAY).unwrap(),
            search(&m, &ix, "t", q, &SearchOptions::default(), TODAY).unwrap()
        );
    }
    // A decoded index updates like any other.
    let mut back = back;
    let m2 = model(&[("b", "h1.md", &doc("needle\n"))]);
    back.update(&m, &m2, TODAY);
    assert_eq!(back.encode(), Index::build(&m2, TODAY).encode());
}

#[test]
fn a_shared_decode_reads_lists_on_first_use_and_equals_the_full_one() {
    let m = hub();
    let ix = Index::build(&m, TODAY);
    let bytes = ix.encode();
    let full = Index::decode(&bytes).unwrap();
    let shared = Index::decode_shared(bytes.clone().into()).unwrap();
    assert!(shared.encoded.is_some() && full.encoded.is_none());
    // Only the names lists are decoded up front.
    assert!(shared.base.len() < full.base.len());
    assert_eq!(shared.posting_count(), full.posting_count());
    assert_eq!(shared.total_len(), full.total_len());
    assert_eq!(shared.state_dump(), full.state_dump());
    for q in ["needle", "x w", "filler needle", "nothing here"] {
        assert_eq!(
            search(&m, &shared, "t", q, &SearchOptions::default(), TODAY).unwrap(),
            search(&m, &full, "t", q, &SearchOptions::default(), TODAY).unwrap()
        );
    }
    assert_eq!(shared.encode(), bytes);
    // An update leaves the lists encoded (reads take a list's encoded part, then what was
    // appended to it) until a compaction folds them all into the flat array; either way
    // the index is a fresh build's.
    let m2 = model(&[("b", "h1.md", &doc("needle\n"))]);
    for mut ix in [shared.clone(), full.clone()] {
        ix.update(&m, &m2, TODAY);
        assert_eq!(ix.encode(), Index::build(&m2, TODAY).encode());
    }
    let mut ix = shared;
    ix.update(&m, &m, "2027-01-01");
    let mut other = full;
    other.update(&m, &m, "2027-01-01");
    assert_eq!(ix.state_dump(), other.state_dump());
    assert_eq!(ix.encode(), other.encode());
    for q in ["needle", "x w", "filler needle"] {
        assert_eq!(
            search(&m, &ix, "t", q, &SearchOptions::default(), "2027-01-01").unwrap(),
            search(&m, &other, "t", q, &SearchOptions::default(), "2027-01-01").unwrap()
        );
    }
}

#[test]
fn an_update_of_a_shared_decode_keeps_its_lists_encoded_until_a_compaction() {
    // Enough documents that one edit stays under the compaction threshold.
    let files: Vec<(String, String)> = (0..200)
        .map(|i| {
            (
                format!("n{i:03}.md"),
                doc(&format!("needle orders number{i}\n")),
            )
        })
        .collect();
    let refs: Vec<(&str, &str, &str)> = files
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    let m = model(&refs);
    let bytes = Index::build(&m, TODAY).encode();
    let mut ix = Index::decode_shared(bytes.into()).unwrap();
    let mut current = m;
    for i in 0..60 {
        let mut next: Vec<(&str, &str, String)> = files
            .iter()
            .map(|(p, t)| ("b", p.as_str(), t.clone()))
            .collect();
        for (j, (_, _, t)) in next.iter_mut().enumerate().take(i + 1) {
            *t = doc(&format!("needle refunds edited{j}\n"));
        }
        let refs: Vec<(&str, &str, &str)> =
            next.iter().map(|(b, p, t)| (*b, *p, t.as_str())).collect();
        let m2 = model(&refs);
        ix.update(&current, &m2, TODAY);
        let built = Index::build(&m2, TODAY);
        assert_eq!(ix.encode(), built.encode(), "edit {i}");
        assert_eq!(ix.state_dump(), built.state_dump(), "edit {i}");
        for q in ["needle", "refunds edited3", "orders number150"] {
            assert_eq!(
                search(&m2, &ix, "t", q, &SearchOptions::default(), TODAY).unwrap(),
                search(&m2, &built, "t", q, &SearchOptions::default(), TODAY).unwrap(),
                "edit {i}, {q}"
            );
        }
        if i == 0 {
            assert!(ix.encoded.is_some(), "one edit decodes no list");
        }
        current = m2;
    }
    assert!(ix.encoded.is_none(), "a compaction folded the lists");
}

#[test]
fn decode_refuses_damaged_records() {
    let m = hub();
    let bytes = Index::build(&m, TODAY).encode();
    for cut in [0, 3, 4, 10, bytes.len() / 2, bytes.len() - 1] {
        let e = Index::decode(&bytes[..cut]).unwrap_err();
        // A shared decode finds every list's end without reading it, so a cut short record
        // fails there too.
        let shared = Index::decode_shared(bytes[..cut].to_vec().into()).unwrap_err();
        assert_eq!(shared.message(), e.message());
        assert_eq!(e.code(), "CORRUPT");
        assert!(
            e.message()
                .starts_with("database corruption: search index record: "),
            "{}",
            e.message()
        );
    }
    let mut extra = bytes.clone();
    extra.push(0);
    assert_eq!(
        Index::decode(&extra).unwrap_err().message(),
        "database corruption: search index record: trailing bytes"
    );
    assert_eq!(
        Index::decode(b"XXXX").unwrap_err().message(),
        "database corruption: search index record: missing magic"
    );
}

/// A tenant whose posting lists hold numbers of one byte and of more: a term in every
/// document (gaps of 0), one in every 70th (gaps over 63 take two bytes), `tf`s of 2 (one
/// byte) and of 300 (two).
fn wide() -> Model {
    let docs: Vec<(String, String)> = (0..150)
        .map(|i| {
            let mut body = String::from("common ");
            if i % 70 == 5 {
                body.push_str("rare ");
            }
            if i % 3 == 0 {
                body.push_str("twice twice ");
            }
            if i % 100 == 7 {
                body.push_str(&"many ".repeat(300));
            }
            (format!("d{i:03}.md"), doc(&format!("{body}\n")))
        })
        .collect();
    let docs: Vec<(&str, &str, &str)> = docs
        .iter()
        .map(|(p, t)| ("b", p.as_str(), t.as_str()))
        .collect();
    model(&docs)
}

#[test]
fn a_shared_decode_reads_long_numbers_and_damage_as_the_full_one_does() {
    let m = wide();
    let bytes = Index::build(&m, TODAY).encode();
    let full = Index::decode(&bytes).unwrap();
    let shared = Index::decode_shared(bytes.clone().into()).unwrap();
    assert_eq!(shared.state_dump(), full.state_dump());
    for q in ["rare", "many", "twice common"] {
        assert_eq!(
            search(&m, &shared, "t", q, &SearchOptions::default(), TODAY).unwrap(),
            search(&m, &full, "t", q, &SearchOptions::default(), TODAY).unwrap()
        );
    }
    // Every byte damaged in turn (and every cut): both decodes fail alike or read alike, or
    // the damage is in a posting list, which the shared decode reads only when it is used:
    // read, the list marks the index damaged (or, when it still reads as a list, the full
    // decode only found the documents' lengths disagreeing with its sums).
    let mut failed = 0;
    let mut lazily = 0;
    for at in 0..bytes.len() {
        for damaged in [
            {
                let mut b = bytes.clone();
                b[at] ^= 0x80;
                b
            },
            {
                let mut b = bytes.clone();
                b[at] = b[at].wrapping_add(1);
                b
            },
            bytes[..at].to_vec(),
        ] {
            let a = Index::decode(&damaged);
            let b = Index::decode_shared(damaged.into());
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.state_dump(), b.state_dump(), "at {at}");
                    assert!(!b.damaged(), "at {at}");
                }
                (Err(a), Err(b)) => {
                    // Both refuse it, the shared decode perhaps further on (it skipped the
                    // damaged list).
                    for e in [&a, &b] {
                        assert_eq!(e.code(), "CORRUPT", "at {at}");
                        assert!(
                            e.message()
                                .starts_with("database corruption: search index record: "),
                            "at {at}: {}",
                            e.message()
                        );
                    }
                    failed += 1;
                }
                (Err(a), Ok(b)) => {
                    b.read_every_list();
                    assert!(
                        b.damaged()
                            || a.message()
                                == "database corruption: search index record: document lengths do not match the postings",
                        "at {at}: {}",
                        a.message()
                    );
                    lazily += 1;
                }
                (Ok(_), Err(b)) => panic!("at {at}: only the shared decode fails: {b:?}"),
            }
        }
    }
    assert!(
        failed + lazily > bytes.len(),
        "most damage is caught: {failed} at once, {lazily} when read"
    );
    assert!(
        lazily > 0 && failed > 0,
        "{failed} at once, {lazily} when read"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), flip in any::<(usize, u8)>()) {
        let _ = Index::decode(&bytes);
        let _ = Index::decode_shared(bytes.into());
        let mut good = Index::build(&trio(), TODAY).encode();
        let at = flip.0 % good.len();
        good[at] ^= flip.1 | 1;
        let shared = Index::decode_shared(good.clone().into());
        let m = trio();
        match Index::decode(&good) {
            Ok(ix) => {
                // Whatever decodes must search without panicking, and a shared decode of
                // the same bytes reads the same.
                let a = search_hits(&m, &ix, "zeta eta", &SearchOptions::default(), TODAY);
                let shared = shared.expect("decodes shared too");
                let b = search_hits(&m, &shared, "zeta eta", &SearchOptions::default(), TODAY);
                prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
                prop_assert_eq!(shared.encode(), ix.encode());
                prop_assert!(!shared.damaged());
            }
            Err(e) => {
                // The shared decode refuses it too, or reads the damage when it reads the
                // list (searching meanwhile, without panicking).
                if let Ok(shared) = shared {
                    let _ = search_hits(&m, &shared, "zeta eta", &SearchOptions::default(), TODAY);
                    shared.read_every_list();
                    prop_assert!(
                        shared.damaged() || e.message().ends_with("document lengths do not match the postings"),
                        "{}", e.message()
                    );
                }
            }
        }
    }
}

/// One edit of the property test.
#[derive(Debug, Clone)]
enum Edit {
    Write {
        bundle: u8,
        path: u8,
        words: Vec<u8>,
        title: Option<u8>,
        stale: Option<u8>,
        status: Option<u8>,
    },
    Delete {
        bundle: u8,
        path: u8,
    },
    Today(u8),
}

const WORDS: &[&str] = &[
    "orders", "refunds", "grain", "join", "Café", "stale", "ΟΔΟΣ", "x", "needle", "wallet", "東京",
];
const PATHS: &[&str] = &[
    "a.md",
    "b.md",
    "sub/a.md",
    "deep/sub/b.md",
    "c.md",
    "index.md",
];
const DATES: &[&str] = &["2026-01-01", "2026-06-01", "2026-12-31", "2027-06-01"];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (0..3u8, 0..6u8, proptest::collection::vec(0..14u8, 0..12), proptest::option::of(0..11u8), proptest::option::of(0..4u8), proptest::option::of(0..3u8))
            .prop_map(|(bundle, path, words, title, stale, status)| Edit::Write { bundle, path, words, title, stale, status }),
        2 => (0..3u8, 0..6u8).prop_map(|(bundle, path)| Edit::Delete { bundle, path }),
        1 => (0..4u8).prop_map(Edit::Today),
    ]
}

fn render_doc(words: &[u8], title: Option<u8>, stale: Option<u8>, status: Option<u8>) -> String {
    let mut fm = String::from("type: note\n");
    if let Some(t) = title {
        fm.push_str(&format!("title: {}\n", WORDS[t as usize]));
    }
    if let Some(s) = stale {
        fm.push_str(&format!("stale_after: {}\n", DATES[s as usize]));
    }
    if let Some(s) = status {
        fm.push_str(&format!(
            "status: {}\n",
            ["current", "draft", "deprecated"][s as usize]
        ));
    }
    let body: Vec<String> = words
        .iter()
        .map(|&w| match w {
            11 => "[[a]]".to_string(),
            12 => "[b](b.md)".to_string(),
            13 => "\n# Head\n".to_string(),
            w => WORDS[w as usize].to_string(),
        })
        .collect();
    format!("---\n{fm}---\n{}\n", body.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random writes, deletes (which also change other concepts' ids) and date changes,
    /// through the incremental linker (untouched concepts keep their `Arc`) or a fresh
    /// compile (nothing shared), must leave the index equal to a fresh build; so must an
    /// update of the index as a derived record gives it back (`reload`: its lists still
    /// encoded, read on first use).
    #[test]
    fn incremental_update_equals_a_fresh_build(edits in proptest::collection::vec((edit(), any::<bool>(), any::<bool>()), 1..30)) {
        let mut linker = Linker::new(Ambiguity::Refuse);
        let mut docs: BTreeMap<(String, String), crate::bytes::Text> = BTreeMap::new();
        let mut today = DATES[0].to_string();
        let mut current = Model::default();
        let mut ix = Index::build(&current, &today);
        let queries = ["orders", "stale", "cafe Café", "οδος", "a b x", "needle grain join", "東京", "note", "orders refunds", "sub a", "b1 deep sub b", "grain join needle", "refunds refunds"];
        for (e, fresh, reload) in edits {
            if reload {
                ix = Index::decode_shared(ix.encode().into()).unwrap();
            }
            let change = match e {
                Edit::Write { bundle, path, words, title, stale, status } => {
                    let (b, p) = (format!("b{bundle}"), PATHS[path as usize].to_string());
                    let text: crate::bytes::Text = render_doc(&words, title, stale, status).into();
                    let parsed = (!crate::validate::is_navigation(&p)).then(|| Arc::new(parse_document(&p, &text, SUMMARY_WIDTH)));
                    Some((b.clone(), p.clone(), Some((SourceDoc { bundle: b, path: p, text }, parsed))))
                }
                Edit::Delete { bundle, path } => Some((format!("b{bundle}"), PATHS[path as usize].to_string(), None)),
                Edit::Today(d) => {
                    today = DATES[d as usize].to_string();
                    None
                }
            };
            if let Some((bundle, path, doc)) = change {
                let text = doc.as_ref().map(|d| d.0.text.clone());
                if linker.apply(vec![Change { bundle: bundle.clone(), path: path.clone(), doc }]).is_err() {
                    continue;
                }
                match text {
                    Some(t) => docs.insert((bundle, path), t),
                    None => docs.remove(&(bundle, path)),
                };
            }
            let next = if fresh {
                let all: Vec<SourceDoc> = docs.iter().map(|((b, p), t)| SourceDoc { bundle: b.clone(), path: p.clone(), text: t.clone() }).collect();
                compile(&all, SUMMARY_WIDTH).expect("the linker accepted it")
            } else {
                linker.model().clone()
            };
            ix.update(&current, &next, &today);
            let built = Index::build(&next, &today);
            prop_assert_eq!(ix.encode(), built.encode());
            // The statistics, pairs and name sequences themselves, not only their bytes.
            prop_assert_eq!(ix.state_dump(), built.state_dump());
            prop_assert_eq!(ix.len(), next.concepts().len());
            for q in queries {
                for o in [SearchOptions::default(), opts(2, Some("b1"), true), opts(3, None, false)] {
                    let a = search(&next, &ix, "t", q, &o, &today);
                    let b = search(&next, &built, "t", q, &o, &today);
                    prop_assert_eq!(a, b);
                }
            }
            current = next;
        }
    }
}

// ---- Goldens over the okf-samples bundles ----

#[test]
fn golden_search_over_okf_samples() {
    let m = okf_samples();
    let cases: [(&str, &str, SearchOptions, &str); 7] = [
        (
            "revenue_recognition.tsv",
            "revenue recognition",
            SearchOptions::default(),
            TODAY,
        ),
        (
            "bitcoin_inputs_outputs.tsv",
            "bitcoin transactions inputs outputs",
            SearchOptions::default(),
            TODAY,
        ),
        (
            "active_users_ga4.tsv",
            "active users",
            opts(5, Some("ga4"), true),
            TODAY,
        ),
        (
            "accepted_answer_no_expand.tsv",
            "accepted answer rate",
            opts(8, None, false),
            TODAY,
        ),
        (
            "gross_margin_k3.tsv",
            "Gross margin",
            opts(3, None, true),
            TODAY,
        ),
        (
            "stale_2027.tsv",
            "stale revenue",
            SearchOptions::default(),
            "2027-01-15",
        ),
        ("wordless.tsv", "?!", SearchOptions::default(), TODAY),
    ];
    for (name, q, o, today) in cases {
        let ix = Index::build(&m, today);
        let tsv = search(&m, &ix, "samples", q, &o, today).unwrap();
        check_golden(&format!("search/{name}"), &tsv);
        // The same bytes from an index that went through its encoding.
        let back = Index::decode(&ix.encode()).unwrap();
        assert_eq!(search(&m, &back, "samples", q, &o, today).unwrap(), tsv);
        let back = Index::decode_shared(ix.encode().into()).unwrap();
        assert_eq!(search(&m, &back, "samples", q, &o, today).unwrap(), tsv);
    }
}

#[test]
fn a_fresh_build_numbers_its_documents_in_id_order_as_a_decode_does() {
    // Two bundles whose ids interleave: the model lists them by bundle, then id.
    let m = model(&[
        ("a", "x1.md", "# X1\nshared words here\n"),
        ("a", "z3.md", "# Z3\nshared words again\n"),
        ("b", "w0.md", "# W0\nshared words too\n"),
        ("b", "y2.md", "# Y2\nother words\n"),
    ]);
    let by_model: Vec<&str> = m.concepts().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        by_model,
        ["x1", "z3", "w0", "y2"],
        "the model's order is by bundle"
    );
    let ix = Index::build(&m, "2026-01-01");
    let slots: Vec<&str> = ix.docs.iter().map(|d| &*d.id).collect();
    assert_eq!(slots, ["w0", "x1", "y2", "z3"]);
    // Every posting list is then in slot order and in rank (id) order at once.
    for w in ix.base_off.windows(2) {
        let list = &ix.base[w[0] as usize..w[1] as usize];
        assert!(list.windows(2).all(|p| p[0].slot < p[1].slot));
    }
    let back = Index::decode(&ix.encode()).unwrap();
    let decoded: Vec<&str> = back.docs.iter().map(|d| &*d.id).collect();
    assert_eq!(decoded, slots, "a decoded index has the same slots");
    for parts in 1..=4 {
        assert_eq!(
            Index::build_in(&m, "2026-01-01", parts).encode(),
            ix.encode(),
            "{parts} ranges"
        );
    }
}
