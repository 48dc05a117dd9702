//! Differential tests of the frontmatter fast path against `yaml_serde`.

use super::*;
use crate::compile::{parse_document, parse_document_reference, split_frontmatter};
use crate::testutil::okf_sample_docs;
use proptest::prelude::*;
use std::sync::Arc;

/// The fields through `yaml_serde`, or `Err` with the reason when it gives no mapping.
fn reference(inner: &str) -> Result<Fields<'static>, String> {
    match yaml_serde::from_str::<yaml_serde::Value>(inner) {
        Ok(yaml_serde::Value::Mapping(m)) => Ok(from_yaml(&m)),
        Ok(v) => Err(format!("not a mapping: {v:?}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Checks the fast path against `yaml_serde` on `inner`; returns whether it was taken.
fn agrees(inner: &str) -> bool {
    match fast(inner) {
        None => false,
        Some(f) => {
            assert_eq!(Ok(f), reference(inner), "frontmatter {inner:?}");
            true
        }
    }
}

const CORPUS_FRONTMATTER: &str = "type: BigQuery Table
title: Customers B1 Archive 5
description: One row per registered shopper, churned included, closed periods only.
resource: https://console.cloud.google.com/bigquery?p=domain1&d=warehouse&t=customers_b1_archive_5
tags: [domain1, table, customers]
timestamp: 2026-04-13T14:30:00Z
sources:
  - url: https://wiki.acme.test/data/customers_b1_archive_5
    trust: medium
  - url: https://github.com/acme/warehouse/blob/main/models/customers_b1_archive_5.sql
    trust: medium
generated: 2026-05-20T09:00:00Z
verified: 2026-03-01
status: current
stale_after: 2026-12-01
grain: customers_id";

#[test]
fn the_reference_corpus_shape_takes_the_fast_path() {
    let f = fast(CORPUS_FRONTMATTER).expect("in the subset");
    assert_eq!(f.kind, Some(Field::Str("BigQuery Table".into())));
    assert_eq!(f.title, Some(Field::Str("Customers B1 Archive 5".into())));
    assert_eq!(f.status, Some(Field::Str("current".into())));
    assert_eq!(f.stale_after, Some(Field::Str("2026-12-01".into())));
    assert_eq!(f.grain, Some(Field::Str("customers_id".into())));
    assert!(agrees(CORPUS_FRONTMATTER));
    let crlf = CORPUS_FRONTMATTER.replace('\n', "\r\n");
    assert!(agrees(&crlf));
}

#[test]
fn scalar_forms_match_yaml_serde() {
    let accepted = [
        "type: a b  # note",
        "type: 'it''s'",
        "type: ''",
        "type: \"quoted: yes # no\"",
        "type: \"\"",
        "title: 12",
        "title: 012",
        "title: -0x1F",
        "title: 0x",
        "title: 1e400",
        "title: .inf",
        "title: nan",
        "title: ~",
        "title: True",
        "title: yes",
        "title: 2026-12-01",
        "title: 1_000",
        "title: a]b,c}",
        "title: é 日本 😀",
        "title:\n  - a\n  - 'b'\n",
        "title:\n- a\n- b\ntype: x",
        "title: [a, b c, -d]",
        "title: []",
        "title:\nstatus:   # empty\ngrain: g",
        "a:\n  b:\n    c: d\n  e: [f]\ntype: t",
        "s:\n  - k: v\n    j: w\n  - x\ntype: t",
        "# lead\n\ntype: t\n   # indented comment\n",
        // Colons and hashes that are neither `: ` nor ` #`, before and past 16 bytes.
        "title: https://example.test/a:b#c?d=e:f#g",
        "title: a:b#c",
        "title: a value longer than sixteen bytes  # then a comment: with a colon",
        "title: a value longer than sixteen bytes #: comment",
        // Keys starting like the null and boolean words.
        "nothing: a\nt: b\nFa: c\nnull_key: d\nTrueish: e\ntype: t",
    ];
    for inner in accepted {
        assert!(agrees(inner), "should take the fast path: {inner:?}");
    }
    let refused = [
        "type: &a x",
        "type: *a",
        "type: !t x",
        "type: |\n  x",
        "type: >\n  x",
        "type: \"a\\nb\"",
        "type: a\n  continued",
        "type: a: b",
        "type: a:",
        "type: {a: b}",
        "type: a\ntype: b",
        "s:\n  - k: v\n    k: w",
        "type:\ta",
        "'type': a",
        "\"type\": a",
        "true: a",
        "Null: a",
        "FALSE: a",
        "type: t\nnull: a",
        "1: a",
        "title: a value longer than sixteen bytes: then more",
        "title: a value longer than sixteen bytes:",
        "title: x:",
        "  type: a",
        "- a",
        "type: a\n- b",
        "type: a\u{85}b",
        "type: a\u{2028}b",
        "type: \u{feff}a",
        "type: a\rb",
        "%YAML 1.2\ntype: a",
        "--- x\ntype: a",
        "s:\n  - a\n b: c",
        "s:\n  -\n    a: b",
        "",
        "# only a comment",
    ];
    for inner in refused {
        assert!(fast(inner).is_none(), "should be refused: {inner:?}");
    }
}

#[test]
fn okf_samples_agree_and_parse_the_same() {
    let mut taken = 0;
    let mut with_fm = 0;
    for d in okf_sample_docs() {
        let bomless = d.text.strip_prefix('\u{feff}').unwrap_or(&d.text);
        if let Some((inner, _)) = split_frontmatter(bomless) {
            with_fm += 1;
            if agrees(inner) {
                taken += 1;
            }
        }
        assert_eq!(
            parse_document(&d.path, &d.text, 120),
            parse_document_reference(&d.path, &d.text, 120),
            "{}/{}",
            d.bundle,
            d.path
        );
    }
    assert!(with_fm > 40, "the samples hold frontmatter ({with_fm})");
    assert!(taken > 10, "the fast path serves some samples ({taken})");
}

/// Keys of the subset.
const KEYS: &[&str] = &[
    "type",
    "title",
    "description",
    "grain",
    "status",
    "stale_after",
    "tags",
    "sources",
    "url",
    "a",
    "b",
    "_x",
    "a.b",
    "a-b",
    "Type",
];

/// Keys outside the subset.
const ODD_KEYS: &[&str] = &[
    "null", "true", "1", "x y", "'type'", "\"type\"", "type ", "-a", "é", "? a",
];

/// Values, mostly in the subset.
const VALUES: &[&str] = &[
    "x",
    "hello world",
    "Customers B1",
    "",
    "~",
    "null",
    "NULL",
    "Null",
    "true",
    "False",
    "yes",
    "1",
    "-1",
    "+1",
    "0",
    "012",
    "-012",
    "+012",
    "0x1F",
    "0x",
    "0o17",
    "0b101",
    "-0x1F",
    "+0x1F",
    "0x-1",
    "0x+1",
    "-0x+1",
    "1.5",
    "-1.5",
    "+.5",
    "5.",
    "1e3",
    "1e400",
    ".inf",
    "-.inf",
    "+.inf",
    ".nan",
    "-.nan",
    "nan",
    "inf",
    "-inf",
    "infinity",
    "1_000",
    "2026-12-01",
    "2026-12-01T00:00:00Z",
    "12:30",
    "1:2",
    "https://x.y/z?a=b#c",
    "a #b",
    "a#b",
    "a: b",
    "a:",
    "a :b",
    "'q'",
    "'it''s'",
    "\"d\"",
    "[a, b]",
    "[]",
    "[a b, -c, d#e]",
    "a]",
    "a}",
    "a,b",
    "é",
    "日本",
    "😀",
    "x\u{a0}",
    "a  b",
    "a ",
    "x # c",
    "x #",
    "99999999999999999999999999999999999999999",
    "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456",
    "-170141183460469231731687303715884105728",
    "-170141183460469231731687303715884105729",
    "0xffffffffffffffffffffffffffffffff",
    "0x1ffffffffffffffffffffffffffffffff",
];

/// Values outside the subset or close to its edges.
const ODD_VALUES: &[&str] = &[
    "'a",
    "'a' b",
    "'a'#c",
    "'a' #c",
    "\"a\\nb\"",
    "\"a",
    "\"a\" # c",
    "[a,b,]",
    "[ ]",
    "[a",
    "[a: b]",
    "[a, [b]]",
    "[a, 'b']",
    "[a] x",
    "[a] # c",
    "{a: b}",
    "{}",
    "|",
    ">",
    "|-",
    "&a x",
    "*a",
    "!t x",
    "!!str 1",
    "%x",
    "@x",
    "`x",
    "-x",
    "-.5",
    "- x",
    "-",
    "?x",
    "? x",
    ":x",
    "a\tb",
    "\u{a0}x",
    "\u{85}",
    "\u{2028}",
    "\u{feff}x",
    "\u{7f}",
    "#c",
    "--- x",
    "...",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::sample::select(KEYS).prop_map(str::to_string),
        1 => prop::sample::select(ODD_KEYS).prop_map(str::to_string),
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(VALUES).prop_map(str::to_string),
        2 => prop::sample::select(ODD_VALUES).prop_map(str::to_string),
        1 => "[-+0-9.eExobXaf_:]{1,8}",
    ]
}

/// Keys and values for well-formed documents: rarely odd (mutations add the near misses).
fn tree_key() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => prop::sample::select(KEYS).prop_map(str::to_string),
        1 => prop::sample::select(ODD_KEYS).prop_map(str::to_string),
    ]
}

fn tree_value() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => prop::sample::select(VALUES).prop_map(str::to_string),
        1 => prop::sample::select(ODD_VALUES).prop_map(str::to_string),
        2 => "[-+0-9.eExobXaf_:]{1,8}",
    ]
}

fn indent() -> impl Strategy<Value = usize> {
    prop::sample::select(&[0usize, 0, 0, 0, 1, 2, 2, 2, 3, 4, 4, 6][..])
}

/// One line of a "line soup": an indentation and a line form.
fn line() -> impl Strategy<Value = String> {
    let form = prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| format!("{k}: {v}")),
        2 => key().prop_map(|k| format!("{k}:")),
        2 => value().prop_map(|v| format!("- {v}")),
        2 => (key(), value()).prop_map(|(k, v)| format!("- {k}: {v}")),
        1 => Just("-".to_string()),
        1 => Just("# comment".to_string()),
        1 => Just(String::new()),
        1 => (key(), value()).prop_map(|(k, v)| format!("{k}:{v}")),
        1 => (key(), value()).prop_map(|(k, v)| format!("{k}:  {v}  ")),
    ];
    (indent(), form).prop_map(|(n, f)| format!("{}{f}", " ".repeat(n)))
}

/// A well-formed document of the subset, to be mutated.
#[derive(Debug, Clone)]
enum Node {
    Scalar(String),
    Map(Vec<(String, Node)>),
    Seq(Vec<Node>),
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = tree_value().prop_map(Node::Scalar);
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((tree_key(), inner.clone()), 1..4).prop_map(Node::Map),
            prop::collection::vec(inner, 1..4).prop_map(Node::Seq),
        ]
    })
}

fn render_map(entries: &[(String, Node)], indent: usize, out: &mut Vec<String>, first: bool) {
    for (i, (k, v)) in entries.iter().enumerate() {
        let pad = if first && i == 0 {
            String::new()
        } else {
            " ".repeat(indent)
        };
        match v {
            Node::Scalar(s) => out.push(format!("{pad}{k}: {s}")),
            Node::Map(m) => {
                out.push(format!("{pad}{k}:"));
                render_map(m, indent + 2, out, false);
            }
            Node::Seq(s) => {
                out.push(format!("{pad}{k}:"));
                render_seq(s, indent + 2, out);
            }
        }
    }
}

fn render_seq(items: &[Node], indent: usize, out: &mut Vec<String>) {
    for item in items {
        let pad = " ".repeat(indent);
        match item {
            Node::Scalar(s) => out.push(format!("{pad}- {s}")),
            Node::Map(m) => {
                let mut sub = Vec::new();
                render_map(m, indent + 2, &mut sub, true);
                sub[0] = format!("{pad}- {}", sub[0]);
                out.extend(sub);
            }
            Node::Seq(s) => {
                out.push(format!("{pad}-"));
                render_seq(s, indent + 2, out);
            }
        }
    }
}

/// A mutation of a rendered document: (kind, line index, position, byte).
type Mutation = (u8, usize, usize, char);

fn mutate(lines: &mut Vec<String>, (kind, li, pos, ch): Mutation) {
    if lines.is_empty() {
        return;
    }
    let li = li % lines.len();
    let line = &mut lines[li];
    let at = |s: &str, pos: usize| {
        let cuts: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
        cuts[pos % cuts.len()]
    };
    match kind % 5 {
        0 => {
            let i = at(line, pos);
            line.insert(i, ch);
        }
        1 => {
            let i = at(line, pos);
            if i < line.len() {
                line.remove(i);
            }
        }
        2 => line.insert(0, ' '),
        3 => {
            if line.starts_with(' ') {
                line.remove(0);
            }
        }
        _ => {
            let copy = line.clone();
            lines.insert(li, copy);
        }
    }
}

fn check_doc(lines: &[String], crlf: bool) -> bool {
    let inner = lines.join(if crlf { "\r\n" } else { "\n" });
    agrees(&inner)
}

/// Cases per property: 2000, or `FRONTMATTER_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("FRONTMATTER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn line_soup_agrees(lines in prop::collection::vec(line(), 1..8), crlf in any::<bool>()) {
        check_doc(&lines, crlf);
    }

    #[test]
    fn mutated_documents_agree(
        entries in prop::collection::vec((tree_key(), node()), 1..6),
        mutations in prop::collection::vec(
            (any::<u8>(), any::<usize>(), any::<usize>(), prop::sample::select(
                &[' ', ' ', '-', ':', '#', '\'', '"', '[', ']', ',', '{', '&', '!', '|', '\t', '\r', 'x', '0', '.', 'é'][..]
            )),
            0..3,
        ),
        crlf in any::<bool>(),
    ) {
        let mut lines = Vec::new();
        render_map(&entries, 0, &mut lines, false);
        for m in mutations {
            mutate(&mut lines, m);
        }
        check_doc(&lines, crlf);
    }

    #[test]
    fn plain_scalar_resolution_agrees(v in "[-+0-9.eExobXaAfFiInNyY_:~ulLtrs ]{1,10}") {
        resolution_agrees(&v);
    }

    /// Signs inside number-like scalars (dates, exponents, `0x`): the shortcut that calls
    /// a scalar with a sign after its first byte, not after an `e`, a string.
    #[test]
    fn signs_inside_plain_scalars_agree(v in "[-+]?[0-9.][-+0-9eE.xob]{0,10}") {
        resolution_agrees(&v);
    }
}

fn resolution_agrees(v: &str) {
    let inner = format!("type: {v}");
    if let (Some(plain), Ok(fields)) = (plain(v), reference(&inner)) {
        let expected = fields.kind.expect("present");
        let got = match resolve_plain(plain) {
            Plain::Str => Field::Str(plain.into()),
            Plain::Other => Field::Other,
            Plain::Refused => panic!("{v:?} is refused by yaml_serde"),
        };
        assert_eq!(got, expected, "{v:?}");
    }
    agrees(&inner);
}

/// The generators must reach the fast path often enough to test it.
#[test]
fn generators_exercise_the_fast_path() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (
        prop::collection::vec((tree_key(), node()), 1..6),
        any::<bool>(),
    );
    let mut taken = 0;
    for _ in 0..500 {
        let (entries, crlf) = strategy.new_tree(&mut runner).unwrap().current();
        let mut lines = Vec::new();
        render_map(&entries, 0, &mut lines, false);
        if check_doc(&lines, crlf) {
            taken += 1;
        }
    }
    assert!(taken > 100, "fast path taken {taken} times of 500");
    let soup = (prop::collection::vec(line(), 1..8), any::<bool>());
    let mut taken = 0;
    for _ in 0..2000 {
        let (lines, crlf) = soup.new_tree(&mut runner).unwrap().current();
        if check_doc(&lines, crlf) {
            taken += 1;
        }
    }
    assert!(taken > 30, "fast path taken {taken} times of 2000 soups");
}

#[test]
fn parse_document_equals_reference_on_edge_documents() {
    let docs = [
        "---\ntype: a\n---\nBody.\n",
        "---\ntype: a\ntype: b\n---\nBody.\n",
        "---\n- a\n---\nBody.\n",
        "---\n# nothing\n---\nBody.\n",
        "---\nstale_after: 2026-01-01\n---\nx",
        "---\nstale_after: ~\n---\nx",
        "---\nstale_after: 20260101\n---\nx",
        "---\nstale_after: '2026-01-01T10:00:00Z'\n---\nx",
        "---\ntitle: 'A title'\ndescription: \"Desc.\"\nstatus: Current\ngrain: [a]\n---\nx",
        "\u{feff}---\r\ntype: a\r\ndescription: d\r\n---\r\nx",
    ];
    for t in docs {
        let text: Arc<str> = Arc::from(t);
        assert_eq!(
            parse_document("a.md", &text, 120),
            parse_document_reference("a.md", &text, 120),
            "{t:?}"
        );
    }
}
