//! Spec-by-example tests of compile.md, and golden manifests over the okf-samples bundles.

use crate::util::{check_golden, data_dir, diag_lines, docs, model};
use langonrock_core::compile::{compile, Model, SourceDoc, SUMMARY_WIDTH};
use langonrock_core::manifest::{compile_manifest, manifest};
use proptest::prelude::*;

const TODAY: &str = "2026-09-21";

/// Compiles one document `b/<path>` and returns its row cells after the id and bundle
/// (`kind status grain summary links`) and its diagnostics as CLI lines.
fn one(path: &str, text: &str) -> (String, String) {
    let m = model(&[("b", path, text)]);
    let rows = manifest(&m, "t", None, TODAY).unwrap();
    let row = rows
        .lines()
        .nth(3)
        .map(|r| r.splitn(3, '\t').nth(2).unwrap().to_string())
        .unwrap_or_default();
    (row, diag_lines(&m))
}

fn row(text: &str) -> String {
    one("c.md", text).0
}

fn diags(text: &str) -> String {
    one("c.md", text).1
}

fn sections(text: &str) -> Vec<(String, usize, usize)> {
    let m = model(&[("b", "c.md", text)]);
    m.concepts()[0]
        .parsed
        .sections
        .iter()
        .map(|s| (s.name.clone(), s.start, s.end))
        .collect()
}

fn body(text: &str) -> String {
    let m = model(&[("b", "c.md", text)]);
    m.concepts()[0].body().to_string()
}

fn title(text: &str) -> Option<String> {
    let m = model(&[("b", "c.md", text)]);
    m.concepts()[0].parsed.title.clone()
}

fn links(items: &[(&str, &str, &str)], id: &str) -> Vec<String> {
    let m = model(items);
    m.concept(id)
        .unwrap_or_else(|| panic!("no concept {id}"))
        .links
        .clone()
}

fn ids(items: &[(&str, &str, &str)]) -> Vec<String> {
    let m = model(items);
    let mut v: Vec<(String, String)> = m
        .concepts()
        .iter()
        .map(|c| (c.path.clone(), c.id.clone()))
        .collect();
    v.sort();
    v.into_iter().map(|(p, i)| format!("{p}={i}")).collect()
}

/// The diagnostics of documents named `a.md` only.
fn a_diags(m: &Model) -> String {
    diag_lines(m)
        .lines()
        .filter(|l| l.contains("/a.md: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

const NO_FM: &str =
    "info: b/c.md: no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF\n";
const NO_TYPE: &str = "warn: b/c.md: missing required frontmatter field \"type\"\n";

// ---- §2 frontmatter ----

#[test]
fn frontmatter_basic_and_body() {
    assert_eq!(
        row("---\ntype: table\n---\nOrders placed online.\n"),
        "table\t-\t-\tOrders placed online.\t-"
    );
    assert_eq!(body("---\ntype: table\n---\nOrders.\n"), "Orders.\n");
    assert_eq!(diags("---\ntype: table\n---\nx\n"), "");
}

#[test]
fn frontmatter_bom_is_removed_but_stored() {
    let text = "\u{feff}---\ntype: t\n---\nBody.\n";
    assert_eq!(row(text), "t\t-\t-\tBody.\t-");
    let m = model(&[("b", "c.md", text)]);
    assert!(m.concepts()[0].text.starts_with('\u{feff}'));
    assert_eq!(m.concepts()[0].body(), "Body.\n");
    assert_eq!(m.concepts()[0].parsed.body_start16, 1 + 16);
}

#[test]
fn frontmatter_crlf() {
    let text = "---\r\ntype: t\r\ndescription: Desc.\r\n---\r\nBody\r\n# H\r\nx\r\n";
    assert_eq!(row(text), "t\t-\t-\tDesc.\t-");
    assert_eq!(body(text), "Body\r\n# H\r\nx\r\n");
    // Offsets count the \r characters.
    assert_eq!(
        sections(text),
        vec![("body".into(), 0, 6), ("h".into(), 6, 14)]
    );
}

#[test]
fn frontmatter_fence_with_trailing_blanks_and_end_of_text() {
    assert_eq!(row("--- \t\ntype: t\n---  "), "t\t-\t-\t-\t-");
    assert_eq!(body("---\ntype: t\n---"), "");
}

#[test]
fn frontmatter_without_closing_fence_is_plain_markdown() {
    let text = "---\ntype: t\nBody text";
    assert_eq!(diags(text), NO_FM);
    assert_eq!(row(text), "-\t-\t-\ttype: t\t-");
}

#[test]
fn frontmatter_empty_fences() {
    // No line between the fences: plain Markdown.
    assert_eq!(diags("---\n---\nBody.\n"), NO_FM);
    // An empty line between them: empty YAML, only the type warning.
    assert_eq!(diags("---\n\n---\nBody.\n"), NO_TYPE);
    assert_eq!(body("---\n\n---\nBody.\n"), "Body.\n");
    // Comments only: an empty mapping.
    assert_eq!(diags("---\n# just a comment\n---\nBody.\n"), NO_TYPE);
}

#[test]
fn frontmatter_invalid_yaml() {
    let d = diags("---\ntype: [a\n---\nBody.\n");
    let lines: Vec<&str> = d.lines().collect();
    assert_eq!(lines.len(), 2, "{d}");
    assert!(
        lines[0].starts_with("warn: b/c.md: invalid YAML frontmatter: "),
        "{d}"
    );
    assert!(!lines[0]["warn: b/c.md: invalid YAML frontmatter: ".len()..].contains('\n'));
    assert_eq!(lines[1], NO_TYPE.trim_end());
    // The body is the post-frontmatter text.
    assert_eq!(body("---\ntype: [a\n---\nBody.\n"), "Body.\n");
    // A duplicate key is a parse error.
    assert!(diags("---\ntype: a\ntype: b\n---\n")
        .starts_with("warn: b/c.md: invalid YAML frontmatter: "));
}

#[test]
fn frontmatter_not_a_mapping() {
    for yaml in ["- a\n- b", "just a string", "~", "42"] {
        let text = format!("---\n{yaml}\n---\nBody.\n");
        assert_eq!(
            diags(&text),
            format!("warn: b/c.md: frontmatter is not a mapping\n{NO_TYPE}"),
            "{yaml}"
        );
        assert_eq!(body(&text), "Body.\n");
    }
}

#[test]
fn yaml_bomb_and_deep_nesting_give_diagnostics_not_panics() {
    let mut bomb = String::from("---\ntype: t\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    let names = ["b", "c", "d", "e", "f", "g", "h", "i", "j"];
    let mut prev = "a";
    for n in names {
        bomb.push_str(&format!(
            "{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
        ));
        prev = n;
    }
    bomb.push_str("---\nBody.\n");
    let d = diags(&bomb);
    assert!(
        d.starts_with("warn: b/c.md: invalid YAML frontmatter: "),
        "{d}"
    );
    let deep = format!(
        "---\ntype: t\nx: {}{}\n---\nBody.\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(diags(&deep).starts_with("warn: b/c.md: invalid YAML frontmatter: "));
    // Deeply nested Markdown compiles.
    let md = format!(
        "---\ntype: t\n---\n{}x\n{}",
        "> ".repeat(5_000),
        "- ".repeat(5_000)
    );
    assert_eq!(model(&[("b", "c.md", &md)]).concepts().len(), 1);
}

// ---- §3 fields ----

#[test]
fn kind_is_a_slug_of_string_types() {
    assert_eq!(
        row("---\ntype: BigQuery Table\n---\n"),
        "bigquery_table\t-\t-\t-\t-"
    );
    assert_eq!(
        row("---\ntype: \"  --Déjà vu!! \"\n---\n"),
        "d_j_vu\t-\t-\t-\t-"
    );
    assert_eq!(row("---\ntype: 42\n---\n"), "-\t-\t-\t-\t-");
    assert_eq!(diags("---\ntype: 42\n---\n"), NO_TYPE);
    assert_eq!(row("---\ntype: '!!!'\n---\n"), "-\t-\t-\t-\t-");
}

#[test]
fn status_and_grain() {
    for (v, cell) in [
        ("current", "-"),
        ("STABLE", "-"),
        ("Stable", "-"),
        ("Deprecated", "Deprecated"),
        ("'  draft \n  now'", "draft now"),
        ("''", "-"),
        ("3", "-"),
    ] {
        assert_eq!(
            row(&format!("---\ntype: t\nstatus: {v}\n---\n")),
            format!("t\t{cell}\t-\t-\t-"),
            "{v}"
        );
    }
    assert_eq!(
        row("---\ntype: t\ngrain: \"one row\\tper   order\"\n---\n"),
        "t\t-\tone row per order\t-\t-"
    );
}

#[test]
fn titles() {
    assert_eq!(
        title("---\ntype: t\ntitle: \"  Orders\n  DB \"\n---\n# Heading\n"),
        Some("Orders DB".into())
    );
    // With frontmatter and no title key, there is no title even with a heading.
    assert_eq!(title("---\ntype: t\n---\n# Heading\n"), None);
    // Without frontmatter: the first heading not inside a quote or list, any level.
    assert_eq!(
        title("> # Quoted\n\n- # Listed\n\n### The `orders` [table](t.md)\n# Later\n"),
        Some("The orders table".into())
    );
    assert_eq!(title("Just text.\n"), None);
}

#[test]
fn summary_from_description_or_first_sentence() {
    assert_eq!(
        row("---\ntype: t\ndescription: \"  Registered\\n customers.  \"\n---\nBody.\n"),
        "t\t-\t-\tRegistered customers.\t-"
    );
    assert_eq!(
        row("---\ntype: t\ndescription: ''\n---\nFirst one. Second.\n"),
        "t\t-\t-\tFirst one.\t-"
    );
    assert_eq!(
        row("---\ntype: t\ndescription: 5\n---\nWhy? Because.\n"),
        "t\t-\t-\tWhy?\t-"
    );
    assert_eq!(row("---\ntype: t\n---\nWow! Yes\n"), "t\t-\t-\tWow!\t-");
    // A mark not followed by white space does not end the sentence.
    assert_eq!(
        row("---\ntype: t\n---\nSee v1.2 and e.g.x\n"),
        "t\t-\t-\tSee v1.2 and e.g.x\t-"
    );
    assert_eq!(
        row("---\ntype: t\n---\nEnds here.\n"),
        "t\t-\t-\tEnds here.\t-"
    );
    assert_eq!(row("---\ntype: t\n---\n"), "t\t-\t-\t-\t-");
}

#[test]
fn summary_skips_non_paragraph_blocks() {
    let text = "---\ntype: t\n---\n# Heading.\n\nSetext heading.\n---\n\n```\nfenced. code\n```\n\n~~~\ntilde. code\n~~~\n\n    indented. code\n\n<div>\nhtml. block\n</div>\n\n| a. | b |\n|---|---|\n| c. | d |\n\n> quoted. text\n\n[^n]: footnote. text\n\n***\n\n![img](x.png) and text.\n|pipe. line\n\n- Item text. More\n";
    assert_eq!(row(text), "t\t-\t-\tItem text.\t-");
}

#[test]
fn summary_list_marker_and_loose_items() {
    assert_eq!(
        row("---\ntype: t\n---\n1. First item. x\n2. Second.\n"),
        "t\t-\t-\tFirst item.\t-"
    );
    assert_eq!(
        row("---\ntype: t\n---\n- Loose item. x\n\n- Second.\n"),
        "t\t-\t-\tLoose item.\t-"
    );
    // The second line of a paragraph is a candidate when the first is an image.
    assert_eq!(
        row("---\ntype: t\n---\n![a](b.png)\nCaption here. x\n"),
        "t\t-\t-\tCaption here.\t-"
    );
}

#[test]
fn summary_truncation() {
    let d = "Registered customers, including churned.";
    let m = compile(
        &docs(&[(
            "b",
            "c.md",
            &format!("---\ntype: t\ndescription: {d}\n---\n"),
        )]),
        12,
    )
    .unwrap();
    assert_eq!(m.concepts()[0].parsed.summary, "Registered…");
    // 120 units: kept whole; 121: cut at the last space beyond 60, plus an ellipsis.
    let exact = "a".repeat(120);
    assert_eq!(
        row(&format!("---\ntype: t\ndescription: {exact}\n---\n")),
        format!("t\t-\t-\t{exact}\t-")
    );
    let words = format!("{} {}", "w".repeat(70), "x".repeat(60));
    assert_eq!(
        row(&format!("---\ntype: t\ndescription: {words}\n---\n")),
        format!("t\t-\t-\t{}…\t-", "w".repeat(70))
    );
    // A space at or before W/2 is not used.
    let early = format!("{} {}", "w".repeat(50), "x".repeat(80));
    assert_eq!(
        row(&format!("---\ntype: t\ndescription: {early}\n---\n")),
        format!("t\t-\t-\t{}…\t-", &early[..120])
    );
    // Non-ASCII counts in UTF-16 units.
    let accents = "é".repeat(130);
    assert_eq!(
        row(&format!("---\ntype: t\ndescription: {accents}\n---\n")),
        format!("t\t-\t-\t{}…\t-", "é".repeat(120))
    );
    // An astral character across the cut moves the cut one unit earlier.
    let astral = format!("{}😀{}", "a".repeat(119), "b".repeat(10));
    assert_eq!(
        row(&format!("---\ntype: t\ndescription: {astral}\n---\n")),
        format!("t\t-\t-\t{}…\t-", "a".repeat(119))
    );
}

#[test]
fn stale_after_values() {
    let ok = [
        "2026-12-31",
        "'2026-12-31'",
        "2026-12-31T00:00:00Z",
        "2026-12-31 10:30",
        "2026-12-31t10:30:59.123+02:00",
        "2027-13-45",
    ];
    for v in ok {
        let m = model(&[(
            "b",
            "c.md",
            &format!("---\ntype: t\nstale_after: {v}\n---\n"),
        )]);
        assert!(m.diagnostics().is_empty(), "{v}");
        assert!(m.concepts()[0].parsed.stale_after.is_some(), "{v}");
    }
    let m = model(&[(
        "b",
        "c.md",
        "---\ntype: t\nstale_after: 2026-12-31T23:59:00-05:00\n---\n",
    )]);
    assert_eq!(
        m.concepts()[0].parsed.stale_after.as_deref(),
        Some("2026-12-31")
    );
    for v in [
        "~",
        "tomorrow",
        "20261231",
        "2026-12-31T25",
        "2026-12-31X",
        "[2026-12-31]",
        "2026-1-01",
        "2026-12-31T10:30+0200",
    ] {
        assert_eq!(
            diags(&format!("---\ntype: t\nstale_after: {v}\n---\n")),
            "warn: b/c.md: stale_after is not a date (YYYY-MM-DD), ignored\n",
            "{v}"
        );
    }
}

#[test]
fn read_time_stale_status() {
    let text = "---\ntype: t\nstale_after: 2026-12-31T00:00:00Z\n---\n";
    let m = model(&[
        ("b", "c.md", text),
        (
            "b",
            "d.md",
            "---\ntype: t\nstatus: draft\nstale_after: 2020-01-01\n---\n",
        ),
    ]);
    let status = |today: &str| -> Vec<String> {
        manifest(&m, "t", None, today)
            .unwrap()
            .lines()
            .skip(3)
            .map(|l| l.split('\t').nth(3).unwrap().to_string())
            .collect()
    };
    assert_eq!(status("2026-12-30"), vec!["-", "draft"]);
    assert_eq!(status("2026-12-31"), vec!["stale", "draft"]);
    assert_eq!(status("2027-06-01"), vec!["stale", "draft"]);
}

// ---- §5 ids ----

#[test]
fn id_tiers() {
    assert_eq!(
        ids(&[
            ("b", "tables/orders.md", ""),
            ("b", "tables/customers.md", "")
        ]),
        vec!["tables/customers.md=customers", "tables/orders.md=orders"]
    );
    assert_eq!(
        ids(&[("b", "y.md", ""), ("b", "x/y.md", "")]),
        vec!["x/y.md=x/y", "y.md=y"]
    );
    assert_eq!(
        ids(&[("b", "a/x/y.md", ""), ("b", "b/x/y.md", "")]),
        vec!["a/x/y.md=a/x/y", "b/x/y.md=b/x/y"]
    );
    // Case matters, and a final .md is stripped in any case.
    assert_eq!(
        ids(&[("b", "a/Y.MD", ""), ("b", "b/y.md", "")]),
        vec!["a/Y.MD=Y", "b/y.md=y"]
    );
    // Whitespace runs become one underscore.
    assert_eq!(
        ids(&[("b", "notes/My  Note.md", "")]),
        vec!["notes/My  Note.md=My_Note"]
    );
    // Navigation documents take no id and no row.
    let m = model(&[
        ("b", "index.md", "# x"),
        ("b", "sub/LOG.md", ""),
        ("b", "a.md", ""),
    ]);
    assert_eq!(m.concepts().len(), 1);
}

#[test]
fn ambiguous_ids_are_refused() {
    let err = compile(
        &docs(&[("b", "My Note.md", ""), ("b", "My_Note.md", "")]),
        SUMMARY_WIDTH,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "ambiguous concept id \"My_Note\": My Note.md and My_Note.md"
    );
    assert_eq!(err.code(), "INVALID");
}

#[test]
fn cross_bundle_prefixing() {
    let items = [
        ("sales", "orders.md", ""),
        ("sales", "customers.md", ""),
        ("ops", "orders.md", ""),
    ];
    let m = model(&items);
    let got: Vec<&str> = m.concepts().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(got, vec!["ops/orders", "customers", "sales/orders"]);
    // A bare id equal to another bundle's prefixed id is prefixed too.
    let items = [
        ("ops", "sales/orders.md", ""),
        ("ops", "orders.md", ""),
        ("sales", "orders.md", ""),
    ];
    let m = model(&items);
    let got: Vec<(&str, &str)> = m
        .concepts()
        .iter()
        .map(|c| (c.path.as_str(), c.id.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("orders.md", "ops/orders"),
            ("sales/orders.md", "ops/sales/orders"),
            ("orders.md", "sales/orders")
        ]
    );
}

// ---- §6 links ----

#[test]
fn markdown_link_forms() {
    let a = "---\ntype: t\n---\n[rel](b.md) [noext](sub/c) [root](/sub/d.md) [up](../e.md) [ref][r] [coll][] [short]\n\n[r]: f.md\n[coll]: g.md\n[short]: h.md\n";
    let items = [
        ("x", "sub/a.md", a),
        ("x", "sub/b.md", ""),
        ("x", "sub/sub/c.md", ""),
        ("x", "sub/d.md", ""),
        ("x", "e.md", ""),
        ("x", "sub/f.md", ""),
        ("x", "sub/g.md", ""),
        ("x", "sub/h.md", ""),
    ];
    assert_eq!(links(&items, "a"), vec!["b", "c", "d", "e", "f", "g", "h"]);
    assert_eq!(a_diags(&model(&items)), "");
}

#[test]
fn markdown_targets_anchors_queries_and_encoding() {
    let a = "---\ntype: t\n---\n[anchor](#top) [q](b.md?x=1#y) [hash](b.md#sec) [enc](My%20Note.md) [pct](c%23d.md) [bad](%FF.md) [empty](?x)\n";
    let items = [
        ("x", "a.md", a),
        ("x", "b.md", ""),
        ("x", "My Note.md", ""),
        ("x", "c#d.md", ""),
    ];
    // `c#d.md` is not a valid path, so check the decode-after-cut rule through a diagnostic.
    let items_valid = [items[0], items[1], items[2]];
    let m = model(&items_valid);
    assert_eq!(m.concept("a").unwrap().links, vec!["My_Note", "b"]);
    assert_eq!(
        a_diags(&m),
        "warn: x/a.md: unresolved link \"%FF.md\"\nwarn: x/a.md: unresolved link \"c%23d.md\"\n"
    );
}

#[test]
fn external_links_images_code_and_self_links_do_not_count() {
    let a = "---\ntype: t\n---\n[w](https://x.org/b.md) [m](mailto:a@b) [c](C:b.md) <http://x/b.md> ![img](b.md) ![[b]] `[code](b.md)` [self](a.md) [[a]]\n\n```\n[fenced](b.md) [[b]]\n```\n\n    [indented](b.md)\n";
    let items = [("x", "a.md", a), ("x", "b.md", "")];
    assert_eq!(links(&items, "a"), Vec::<String>::new());
    assert_eq!(a_diags(&model(&items)), "");
}

#[test]
fn unresolved_links_and_navigation_targets() {
    let a = "---\ntype: t\n---\n[d](diagram.png) [i](index.md) [l](sub/log.md) [up](../../out.md) [z](zz.md) [z2](zz.md) [[Nowhere|label]]\n";
    let items = [
        ("x", "a.md", a),
        ("x", "index.md", ""),
        ("x", "sub/log.md", ""),
    ];
    let m = model(&items);
    assert_eq!(m.concept("a").unwrap().links, Vec::<String>::new());
    assert_eq!(
        diag_lines(&m),
        "warn: x/a.md: unresolved link \"../../out.md\"\nwarn: x/a.md: unresolved link \"Nowhere\"\nwarn: x/a.md: unresolved link \"diagram.png\"\nwarn: x/a.md: unresolved link \"zz.md\"\n"
    );
}

#[test]
fn wiki_links() {
    let a = "---\ntype: t\n---\n[[tables/orders]] [[customers|Customers]] [[runbook#Steps]] [[ops/runbook]] [[#Heading]] [[My Note]] [[http://x]]\n";
    let items = [
        ("sales", "notes/a.md", a),
        ("sales", "tables/orders.md", ""),
        ("sales", "customers.md", ""),
        ("sales", "My Note.md", ""),
        ("ops", "runbook.md", ""),
        ("ops", "orders.md", ""),
    ];
    assert_eq!(
        links(&items, "a"),
        vec!["My_Note", "customers", "runbook", "sales/orders"]
    );
    // `ops/runbook` is no path, local id or public id from sales: the bare id is `runbook`.
    assert_eq!(
        a_diags(&model(&items)),
        "warn: sales/notes/a.md: unresolved link \"ops/runbook\"\n"
    );
    // [[orders]] from sales finds its own orders through the local id, after prefixing.
    let items2 = [
        ("sales", "a.md", "[[orders]]"),
        ("sales", "orders.md", ""),
        ("ops", "orders.md", ""),
    ];
    assert_eq!(links(&items2, "a"), vec!["sales/orders"]);
    // From ops, the same text finds ops's own.
    let items3 = [
        ("ops", "a.md", "[[orders]]"),
        ("sales", "orders.md", ""),
        ("ops", "orders.md", ""),
    ];
    assert_eq!(links(&items3, "a"), vec!["ops/orders"]);
    // A public id of another bundle.
    let items4 = [
        ("ops", "a.md", "[[sales/orders]]"),
        ("sales", "orders.md", ""),
        ("ops", "orders.md", ""),
    ];
    assert_eq!(links(&items4, "a"), vec!["sales/orders"]);
    // A wiki link to a navigation document is skipped without a diagnostic.
    let m = model(&[
        ("b", "a.md", "---\ntype: t\n---\n[[index]]"),
        ("b", "index.md", ""),
    ]);
    assert_eq!(diag_lines(&m), "");
}

#[test]
fn links_are_sorted_and_deduplicated() {
    let a = "---\ntype: t\n---\n[z](z.md) [b](b.md) [[z]] [again](./z.md)\n";
    assert_eq!(
        links(
            &[("x", "a.md", a), ("x", "b.md", ""), ("x", "z.md", "")],
            "a"
        ),
        vec!["b", "z"]
    );
}

// ---- §7 sections ----

#[test]
fn sections_nest() {
    let text = "Intro.\n# Orders\n## Schema\n### Keys\n## Joins\n# History\n";
    let got = sections(text);
    let names: Vec<&str> = got.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names,
        vec!["body", "orders", "schema", "keys", "joins", "history"]
    );
    let at = |needle: &str| text.find(needle).unwrap();
    assert_eq!(got[0], ("body".into(), 0, at("# Orders")));
    assert_eq!(got[1], ("orders".into(), at("# Orders"), at("# History")));
    assert_eq!(got[2], ("schema".into(), at("## Schema"), at("## Joins")));
    assert_eq!(got[3], ("keys".into(), at("### Keys"), at("## Joins")));
    assert_eq!(got[4], ("joins".into(), at("## Joins"), at("# History")));
    assert_eq!(got[5], ("history".into(), at("# History"), text.len()));
}

#[test]
fn sections_setext_fences_and_containers() {
    let text = "Title\n=====\n\n```\n# not a heading\n```\n~~~\n# nor this\n~~~\n> # quoted\n\n- # listed\n\nSub\n---\ntext\n  # Indented\n";
    let names: Vec<String> = sections(text).into_iter().map(|s| s.0).collect();
    assert_eq!(names, vec!["title", "sub", "indented"]);
    // The section starts at its line, indentation included.
    let s = sections(text);
    assert_eq!(s[2].1, text.find("  # Indented").unwrap());
}

#[test]
fn section_names() {
    let text =
        "# Body\n# ?!\n# Dup\n# Dup\n# dup_2\n## The `orders` [table](t.md)\n# Схема данных\n";
    let names: Vec<String> = sections(text).into_iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        vec![
            "body_2",
            "body_3",
            "dup",
            "dup_2",
            "dup_2_2",
            "the_orders_table",
            "схема_данных"
        ]
    );
    // No body section when the text before the first heading is blank.
    assert_eq!(sections("  \n\n# A\n")[0].0, "a");
    assert_eq!(sections("")[..], []);
    assert_eq!(sections("Just text")[0], ("body".into(), 0, 9));
}

#[test]
fn section_offsets_are_utf16() {
    let text = "😀é\n# Next\nx";
    let s = sections(text);
    assert_eq!(s[0], ("body".into(), 0, 4));
    assert_eq!(s[1], ("next".into(), 4, 12));
}

// ---- §9 diagnostics, §10 validation ----

#[test]
fn diagnostics_order() {
    let items = [
        ("b", "z.md", "no frontmatter [x](missing.md)"),
        (
            "a",
            "m.md",
            "---\ntype: [\nstale_after: x\n---\n[[q]] [p](p.md)",
        ),
        ("a", "c.md", "---\nstale_after: nope\n---\n"),
    ];
    let m = model(&items);
    let lines = diag_lines(&m);
    assert_eq!(lines.lines().count(), 8, "{lines}");
    let want_order = [
        "warn: a/c.md: missing required frontmatter field \"type\"",
        "warn: a/c.md: stale_after is not a date (YYYY-MM-DD), ignored",
        "warn: a/m.md: invalid YAML frontmatter: ",
        "warn: a/m.md: missing required frontmatter field \"type\"",
        "warn: a/m.md: unresolved link \"p.md\"",
        "warn: a/m.md: unresolved link \"q\"",
        "info: b/z.md: no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF",
        "warn: b/z.md: unresolved link \"missing.md\"",
    ];
    for (line, want) in lines.lines().zip(want_order) {
        assert!(line.starts_with(want), "{line} vs {want}");
    }
}

#[test]
fn validation_errors() {
    let err =
        |items: &[(&str, &str, &str)]| compile(&docs(items), SUMMARY_WIDTH).unwrap_err().message();
    assert_eq!(
        err(&[("Bad Name", "a.md", "")]),
        "invalid bundle name \"Bad Name\": expected 1-64 chars of [a-z0-9_-]"
    );
    assert_eq!(
        err(&[("nul", "a.md", "")]),
        "invalid bundle name \"nul\": a reserved device name on Windows"
    );
    assert_eq!(
        err(&[("b", "a.md", ""), ("b", "A.md", "")]),
        "document paths must be unique across case-insensitive filesystems"
    );
    assert_eq!(
        err(&[("b", "a.md", ""), ("B", "c.md", "")]),
        "document paths must be unique across case-insensitive filesystems"
    );
    assert_eq!(
        err(&[("b", "x/../a.md", "")]),
        "invalid path \"x/../a.md\": segment \"..\" starts with a dot"
    );
}

#[test]
fn navigation_only_bundle_is_listed() {
    let m = model(&[
        ("nav", "index.md", "# Nav"),
        ("b", "a.md", "---\ntype: t\n---\n"),
    ]);
    assert_eq!(manifest(&m, "t", None, TODAY).unwrap(), "# tenant: t\n# bundles: b nav\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\na\tb\tt\t-\t-\t-\t-\n");
    let empty = Model::default();
    assert_eq!(
        manifest(&empty, "t", None, TODAY).unwrap(),
        "# tenant: t\n# bundles:\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n"
    );
}

#[test]
fn manifest_bundle_slice_and_errors() {
    let m = model(&[("sales", "orders.md", ""), ("ops", "run.md", "")]);
    let slice = manifest(&m, "t", Some("SALES"), TODAY).unwrap();
    assert_eq!(slice.lines().count(), 4);
    assert!(slice.starts_with("# tenant: t\n# bundles: ops sales\n"));
    assert_eq!(
        manifest(&m, "t", Some("x"), TODAY).unwrap_err().message(),
        "no bundle \"x\" in this tenant: found ops, sales"
    );
    assert_eq!(
        manifest(&Model::default(), "t", Some("x"), TODAY)
            .unwrap_err()
            .message(),
        "no bundle \"x\" in this tenant: found none"
    );
}

// ---- golden files over the okf-samples bundles ----

fn samples() -> Vec<SourceDoc> {
    let read =
        langonrock_node_mcp::folder::read_folder(&data_dir().join("okf-samples"), None).unwrap();
    read.docs.into_iter().map(|r| r.doc).collect()
}

#[test]
fn golden_okf_samples() {
    let docs = samples();
    let m = compile(&docs, SUMMARY_WIDTH).unwrap();
    check_golden(
        "okf-samples.manifest",
        &manifest(&m, "okf-samples", None, TODAY).unwrap(),
    );
    // After the acme_retail stale_after dates, those concepts read as stale.
    check_golden(
        "okf-samples.2027-06-01.manifest",
        &manifest(&m, "okf-samples", None, "2027-06-01").unwrap(),
    );
    check_golden("okf-samples.diagnostics", &diag_lines(&m));
    for bundle in &m.bundles {
        let one: Vec<SourceDoc> = docs
            .iter()
            .filter(|d| &d.bundle == bundle)
            .cloned()
            .collect();
        let mb = compile(&one, SUMMARY_WIDTH).unwrap();
        check_golden(
            &format!("okf-samples.{bundle}.bundle-manifest"),
            &compile_manifest(&mb, bundle, TODAY),
        );
    }
    let narrow = compile(&docs, 40).unwrap();
    check_golden(
        "okf-samples.width40.manifest",
        &manifest(&narrow, "okf-samples", None, TODAY).unwrap(),
    );
    let mut sections = String::new();
    for c in m.concepts() {
        let names: Vec<String> = c
            .parsed
            .sections
            .iter()
            .map(|s| format!("{}[{}..{}]", s.name, s.start, s.end))
            .collect();
        sections.push_str(&format!(
            "{}\t{}\t{}\n",
            c.id,
            c.parsed.title.as_deref().unwrap_or("-"),
            names.join(" ")
        ));
    }
    check_golden("okf-samples.sections", &sections);
}

// ---- determinism and robustness ----

fn fuzz_cases() -> u32 {
    std::env::var("LANGONROCK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    // LANGONROCK_FUZZ_CASES raises the case count for a long fuzzing run.
    #![proptest_config(ProptestConfig::with_cases(fuzz_cases()))]

    #[test]
    fn input_order_never_changes_output(seed in any::<u64>()) {
        let docs = samples();
        let base = compile(&docs, SUMMARY_WIDTH).unwrap();
        let mut shuffled = docs.clone();
        // A deterministic Fisher-Yates driven by the proptest seed.
        let mut s = seed | 1;
        for i in (1..shuffled.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            shuffled.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let again = compile(&shuffled, SUMMARY_WIDTH).unwrap();
        prop_assert_eq!(manifest(&base, "t", None, TODAY).unwrap(), manifest(&again, "t", None, TODAY).unwrap());
        prop_assert_eq!(diag_lines(&base), diag_lines(&again));
    }

    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,400}", tail in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut t = text;
        t.push_str(&String::from_utf8_lossy(&tail));
        for prefix in ["", "---\n", "---\ntype: x\n---\n", "\u{feff}---\r\n"] {
            let doc = format!("{prefix}{t}");
            let m = compile(&[SourceDoc::new("b", "a/c.md", doc.as_str()), SourceDoc::new("b", "d.md", "[[c]] [x](a/c.md)")], SUMMARY_WIDTH).unwrap();
            for c in m.concepts() {
                let len = langonrock_core::text::utf16_len(c.body());
                for s in &c.parsed.sections {
                    prop_assert!(s.start <= s.end && s.end <= len);
                }
                prop_assert!(!c.parsed.summary.contains(['\t', '\n', '\r']));
            }
            let _ = manifest(&m, "t", None, TODAY).unwrap();
        }
    }

    #[test]
    fn markdown_shapes_never_panic(parts in proptest::collection::vec(prop_oneof![
        Just("# H\n"), Just("## S\n"), Just("Text. more\n"), Just("```\n"), Just("~~~\n"), Just("> "), Just("- "),
        Just("[l](x.md)"), Just("[[w]]"), Just("![i](y)"), Just("\n"), Just("---\n"), Just("===\n"), Just("    code\n"),
        Just("😀"), Just("é"), Just("\r\n"), Just("|a|b|\n|-|-|\n"), Just("[^1]: f\n"), Just("<div>\n"),
    ], 0..60)) {
        let text: String = parts.concat();
        let m = compile(&[SourceDoc::new("b", "c.md", text.as_str()), SourceDoc::new("b", "x.md", "")], SUMMARY_WIDTH).unwrap();
        prop_assert_eq!(m.concepts().len(), 2);
    }
}

// ---- incremental linking equals a full pass (compile.md §11) ----

mod incremental {
    use super::*;
    use langonrock_core::compile::{link, parse_document, Ambiguity, Change, Linker};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    // A small universe that collides a lot: shared names across bundles, bundle-named
    // folders (prefix cascades), navigation documents, and links of every kind.
    const BUNDLES: [&str; 3] = ["ops", "sales", "x"];
    const PATHS: [&str; 10] = [
        "orders.md",
        "a/orders.md",
        "sales/orders.md",
        "b/a/orders.md",
        "ops/x.md",
        "x.md",
        "My Note.md",
        "index.md",
        "a/index.md",
        "c.md",
    ];
    const BODIES: [&str; 8] = [
        "---\ntype: t\n---\nPlain.\n",
        "---\ntype: t\n---\n[o](orders.md) [up](../orders.md) [root](/a/orders.md)\n",
        "[[orders]] [[sales/orders]] [[My Note]] [[x]]\n",
        "---\ntype: t\n---\n[[ops/x]] [[a/orders]] [i](index.md) [m](My%20Note.md)\n",
        "# Title\n[[c]] [[orders|label]] [nowhere](zz.md)\n",
        "---\ntype: t\ndescription: d\n---\n[[sales/orders]] [[ops/orders]] [[x/orders]]\n",
        "---\nstale_after: nope\n---\n[self](c.md)\n",
        "",
    ];

    fn change(op: (usize, usize, Option<usize>)) -> Change {
        let (b, p, body) = op;
        let bundle = BUNDLES[b].to_string();
        let path = PATHS[p].to_string();
        Change {
            doc: body.map(|i| {
                let text: langonrock_core::bytes::Text = BODIES[i].into();
                let parsed = (!langonrock_core::validate::is_navigation(&path))
                    .then(|| Arc::new(parse_document(&path, &text, SUMMARY_WIDTH)));
                (
                    SourceDoc {
                        bundle: bundle.clone(),
                        path: path.clone(),
                        text,
                    },
                    parsed,
                )
            }),
            bundle,
            path,
        }
    }

    fn full(state: &BTreeMap<(usize, usize), usize>) -> Model {
        let docs = state
            .iter()
            .map(|(&(b, p), &i)| change((b, p, Some(i))).doc.unwrap())
            .collect();
        link(docs, Ambiguity::Serve).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn incremental_equals_full(steps in proptest::collection::vec(
            proptest::collection::vec((0..3usize, 0..10usize, proptest::option::weighted(0.7, 0..8usize)), 1..6),
            1..12,
        )) {
            let mut linker = Linker::new(Ambiguity::Serve);
            let mut state: BTreeMap<(usize, usize), usize> = BTreeMap::new();
            for step in steps {
                let before = linker.model().clone();
                let before_state = state.clone();
                let delta = linker.apply(step.iter().map(|&op| change(op)).collect()).unwrap();
                for &(b, p, body) in &step {
                    match body {
                        Some(i) => { state.insert((b, p), i); }
                        None => { state.remove(&(b, p)); }
                    }
                }
                let want = full(&state);
                prop_assert_eq!(manifest(linker.model(), "t", None, TODAY).unwrap(), manifest(&want, "t", None, TODAY).unwrap());
                prop_assert_eq!(linker.model().diagnostics(), want.diagnostics());
                prop_assert_eq!(linker.model(), &want);
                // The id index, carried over or rebuilt, finds every concept where it is.
                for (i, c) in linker.model().concepts().iter().enumerate() {
                    prop_assert_eq!(linker.model().position(&c.id), Some(i), "{}", c.id);
                }
                prop_assert_eq!(linker.model().position("no/such-id"), None);
                // Every concept the delta does not name is the same Arc as before.
                for c in linker.model().concepts() {
                    let touched = delta.upserted.iter().any(|u| Arc::ptr_eq(u, c));
                    if !touched {
                        let old = before.concept(&c.id);
                        prop_assert!(old.is_some_and(|o| std::ptr::eq(o, &**c)), "{} changed without a delta", c.id);
                    }
                }
                // Undo gives the previous model back, then redo.
                let redo: Vec<Change> = step.iter().map(|&op| change(op)).collect();
                linker.apply(delta.undo).unwrap();
                prop_assert_eq!(linker.model(), &full(&before_state));
                for (i, c) in linker.model().concepts().iter().enumerate() {
                    prop_assert_eq!(linker.model().position(&c.id), Some(i), "{}", c.id);
                }
                linker.apply(redo).unwrap();
                prop_assert_eq!(linker.model(), &want);
            }
        }
    }
}
