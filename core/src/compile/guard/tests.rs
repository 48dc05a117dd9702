use super::*;
use std::time::Instant;

fn refused(yaml: &str) -> bool {
    check(yaml).is_some()
}

#[test]
fn deep_flow_nesting_is_refused_at_once() {
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        let deep = format!("a: {}{}", open.repeat(100_000), close.repeat(100_000));
        let t = Instant::now();
        let d = check(&deep).expect("refused");
        // Stops at the 129th level (the column below): a parser that descended 100,000
        // levels would take far longer or overflow its stack. The bound is loose on purpose,
        // so that a loaded machine never fails it.
        assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
        assert!(
            d.starts_with("invalid YAML frontmatter: flow collections nested deeper than 128 levels at line 1 column "),
            "{d}"
        );
    }
    let at = |d: usize| format!("a: {}{}", "[".repeat(d), "]".repeat(d));
    assert!(!refused(&at(128)));
    assert_eq!(
        check(&at(129)).unwrap(),
        "invalid YAML frontmatter: flow collections nested deeper than 128 levels at line 1 column 132"
    );
    // Across lines, and after a multi-byte character (columns count characters).
    let d = check(&format!("é: x\nb: {}", "[".repeat(200))).unwrap();
    assert!(d.ends_with("at line 2 column 132"), "{d}");
}

#[test]
fn brackets_that_are_text_do_not_count() {
    let many = "[".repeat(500);
    for yaml in [
        format!("title: \"{many}\""),
        format!("title: '{many}'"),
        format!("title: x{many}"),
        format!("title: x # {many}"),
        format!("# {many}\ntitle: x"),
        format!("description: |\n  {many}\n  *alias &anchor\ntype: t"),
        format!("description: >-\n  {many}\n\n  more {many}\ntype: t"),
        format!("description: a long line\n  {many} wrapped\ntype: t"),
        format!("title: \"multi\n  line {many}\"\ntype: t"),
    ] {
        assert!(!refused(&yaml), "{yaml}");
    }
}

/// The classic "billion laughs": nine levels of nine aliases each.
fn laughs(levels: usize) -> String {
    let mut y = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let mut prev = "a".to_string();
    for l in 0..levels {
        let n = format!("l{l}");
        let refs = vec![format!("*{prev}"); 9].join(",");
        y.push_str(&format!("{n}: &{n} [{refs}]\n"));
        prev = n;
    }
    y
}

#[test]
fn alias_bombs_are_refused() {
    assert!(!refused(&laughs(2)));
    let d = check(&laughs(9)).expect("refused");
    assert_eq!(
        d,
        "invalid YAML frontmatter: aliases expand to more than 100,000 nodes"
    );
    // One big anchor repeated: quadratic in the text's length.
    let items = vec!["1"; 2000].join(", ");
    let refs = vec!["*x"; 2000].join(", ");
    assert!(refused(&format!("a: &x [{items}]\nb: [{refs}]\n")));
    // The same in block style.
    let items: String = (0..2000).map(|i| format!("  - {i}\n")).collect();
    let refs: String = (0..2000).map(|_| "  - *x\n").collect();
    assert!(refused(&format!("a: &x\n{items}b:\n{refs}")));
    let items: String = (0..2000).map(|i| format!("  k{i}: v\n")).collect();
    assert!(refused(&format!("a: &x\n{items}b:\n{refs}")));
    // An anchored sequence entry's block node.
    let items: String = (0..2000).map(|i| format!("    k{i}: v\n")).collect();
    assert!(refused(&format!("a:\n  - &x\n{items}b:\n{refs}")));
    // A recursive alias grows what it repeats.
    assert!(refused(&format!(
        "a: &x [{}]\n",
        vec!["*x"; 100_001].join(",")
    )));
}

#[test]
fn ordinary_aliases_pass() {
    for yaml in [
        "base: &b {a: 1, b: 2}\nx: *b\ny: *b\n",
        "defaults: &d\n  adapter: pg\n  host: localhost\ndev:\n  <<: *d\n  database: dev\ntest:\n  <<: *d\n",
        "list:\n- &first one\n- two\n- *first\n",
        "tags: &t [a, b, c]\nmore: [*t, *t, *t]\n",
    ] {
        assert!(!refused(yaml), "{yaml}");
        assert!(yaml_serde::from_str::<yaml_serde::Value>(yaml).is_ok(), "{yaml}");
    }
    // Many small aliases of one small anchor stay under the bound: 30,000 × 3 nodes.
    let refs = vec!["*t"; 30_000].join(", ");
    assert!(!refused(&format!("t: &t [a, b]\nu: [{refs}]\n")));
}

#[test]
fn anchored_block_nodes_end_where_their_indentation_does() {
    // The anchor covers only its own two entries, so 20,000 aliases of it add 60,000 nodes
    // (under the bound); counting the sibling keys too would refuse it.
    let siblings: String = (0..5_000).map(|i| format!("s{i}: v\n")).collect();
    let refs = vec!["*x"; 20_000].join(", ");
    let yaml = format!("a: &x\n  k: v\n  j: w\n{siblings}b: [{refs}]\n");
    assert!(!refused(&yaml));
    let items: String = (0..5_000).map(|i| format!("- i{i}\n")).collect();
    let yaml = format!("l:\n- &x\n  k: v\n{items}b: [{refs}]\n");
    assert!(!refused(&yaml));
}

proptest::proptest! {
    /// Nested flow collections of a known depth: refused exactly beyond the bound.
    #[test]
    fn flow_depth_is_measured(depth in 1usize..200, map in proptest::bool::ANY, pad in "[a-z ]{0,5}") {
        let (o, c) = if map { ("{k: ", "}") } else { ("[", "]") };
        let yaml = format!("t: {}{pad}x{}\n", o.repeat(depth), c.repeat(depth));
        proptest::prop_assert_eq!(refused(&yaml), depth > YAML_FLOW_DEPTH);
    }

    /// An anchor of `size` scalars aliased `refs` times: refused exactly when the aliases add
    /// more than the bound (each alias adds the anchor's collection node and its scalars).
    #[test]
    fn alias_expansion_is_measured(size in 1usize..400, refs in 1usize..600, block in proptest::bool::ANY) {
        let anchored = if block {
            format!("a: &x\n{}", (0..size).map(|i| format!("  - v{i}\n")).collect::<String>())
        } else {
            format!("a: &x [{}]\n", (0..size).map(|i| format!("v{i}")).collect::<Vec<_>>().join(", "))
        };
        let yaml = format!("{anchored}b: [{}]\n", vec!["*x"; refs].join(", "));
        let per = if block { 2 * size } else { size + 1 };
        let added = per * refs;
        proptest::prop_assert_eq!(refused(&yaml), added > YAML_ALIAS_NODES, "{} added", added);
    }
}
