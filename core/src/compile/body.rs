//! The body fast path (compile.md §4.1): what the per-document pass needs from
//! pulldown-cmark (§4.2), found without it for bodies written in a small subset of Markdown.
//!
//! The pass reads four things from the parser's events: the top-level headings (level, line
//! start, plain text), the links, the first paragraph's first line (the summary candidate,
//! compile.md §3.2.1) and the first heading's text (§3.1). [`scan`] finds them in one pass
//! over the lines of a body written in this subset:
//!
//! - every line starts at column 0 (no indentation), ends with LF (no CR anywhere) and holds
//!   no tab or control character outside code blocks;
//! - blank lines (empty or spaces only);
//! - ATX headings (`#` to `######`, a space, text) whose text holds none of the bytes the
//!   parser treats specially inline, nor `#`;
//! - paragraph lines starting with a letter, a non-ASCII character, `(`, `"` or `'`, whose
//!   text holds no byte the parser treats specially inline, except `_` between two ASCII
//!   letters or digits (which can neither open nor close emphasis) and inline links
//!   `[text](destination)` with plain text and a destination of URL-safe bytes;
//! - fenced code blocks opened by three or more backticks at column 0 (an info string
//!   without backticks), closed by at least as many at column 0 followed only by spaces, or
//!   running to the end; a line inside that starts (after spaces) with a backtick and is not
//!   such a close is outside the subset;
//! - tables after a blank line (or at the start): a header row and a delimiter row that both
//!   start and end with `|` and have the same number of cells, then rows that start with
//!   `|`, then a blank line or the end; no `[`, `]`, `` ` ``, `\`, `<` or `&` in them.
//!
//! Anything else (lists, block quotes, HTML, reference definitions, footnotes, emphasis,
//! code spans, escapes, entities, images, autolinks, setext headings, thematic breaks,
//! indentation, CRLF, …) makes [`scan`] return `None`, and the caller runs the parser.
//! When [`scan`] returns, it equals what the caller derives from the parser's events for
//! the same body; differential tests check this over generated and real documents.

use super::parse::{first_sentence, markdown_target, section_slug, RawLink};
use crate::text::flatten;

/// What the pass reads from a body's events.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Found {
    /// Top-level headings: (level, byte offset of the line start, base slug).
    pub(super) headings: Vec<(u8, usize, String)>,
    /// Links in order of appearance.
    pub(super) links: Vec<RawLink>,
    /// The first sentence of the first candidate line, when wanted; empty otherwise.
    pub(super) first_sentence: String,
    /// The first heading's flattened text, when wanted.
    pub(super) first_heading: Option<String>,
}

/// Whether pulldown-cmark's inline scan stops at `c` with the compiler's options (`\n`,
/// `\r`, `*`, `_`, `&`, `\`, `[`, `]`, `<`, `!`, `` ` ``, `|`, `~`), or `c` is a tab or
/// control character, which the subset refuses outside code. Comparisons, which vectorise;
/// [`SPECIAL`] is the same set as a table.
const fn special(c: u8) -> bool {
    (c < 0x20)
        | (c == 0x7f)
        | (c == b'*')
        | (c == b'_')
        | (c == b'&')
        | (c == b'\\')
        | (c == b'[')
        | (c == b']')
        | (c == b'<')
        | (c == b'!')
        | (c == b'`')
        | (c == b'|')
        | (c == b'~')
}

/// [`special`] as a table (one load a byte, for the byte-by-byte paths).
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = special(i as u8);
        i += 1;
    }
    t
};

/// What the line before was, for the lines whose meaning depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// A blank line, or the start of the body.
    Blank,
    /// A paragraph line.
    Para,
    /// A heading or the end of a code block.
    Other,
}

/// The four things of the module documentation for a body in the subset, or `None`.
pub(super) fn scan(
    body: &str,
    doc_path: &str,
    want_heading_title: bool,
    want_sentence: bool,
) -> Option<Found> {
    let b = body.as_bytes();
    if memchr::memchr(b'\r', b).is_some() {
        return None;
    }
    let mut found = Found::default();
    let mut sentence_done = !want_sentence;
    let mut heading_done = !want_heading_title;
    let mut prev = Prev::Blank;
    let mut at = 0;
    while at < b.len() {
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |k| at + k);
        let line = &b[at..end];
        let next = (end + 1).min(b.len());
        match line.first().copied() {
            None => prev = Prev::Blank,
            Some(b' ') => {
                if !line.iter().all(|&c| c == b' ') {
                    return None;
                }
                prev = Prev::Blank;
            }
            Some(b'#') => {
                let level = line.iter().take_while(|&&c| c == b'#').count();
                if level > 6 || line.get(level) != Some(&b' ') {
                    return None;
                }
                // Only bytes the parser passes through, so its text is the line's.
                let text = body[at + level + 1..end].trim_matches(' ');
                if text.is_empty()
                    || text
                        .bytes()
                        .any(|c| SPECIAL[c as usize] && c != b'!' || c == b'#')
                {
                    return None;
                }
                if !heading_done {
                    found.first_heading = Some(flatten(text));
                    heading_done = true;
                }
                found.headings.push((level as u8, at, section_slug(text)));
                prev = Prev::Other;
            }
            Some(b'`') => {
                let n = line.iter().take_while(|&&c| c == b'`').count();
                if n < 3 || line[n..].contains(&b'`') {
                    return None;
                }
                // The content, up to a closing fence or the end of the body.
                let mut p = next;
                loop {
                    if p >= b.len() {
                        at = b.len();
                        break;
                    }
                    let e = memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |k| p + k);
                    let l = &b[p..e];
                    let lead = l.iter().take_while(|&&c| c == b' ').count();
                    if l.get(lead) == Some(&b'`') {
                        let m = l.iter().take_while(|&&c| c == b'`').count();
                        if lead > 0 || m < n || !l[m..].iter().all(|&c| c == b' ') {
                            return None;
                        }
                        at = (e + 1).min(b.len());
                        break;
                    }
                    p = (e + 1).min(b.len());
                }
                prev = Prev::Other;
                continue;
            }
            Some(b'|') => {
                if prev != Prev::Blank {
                    return None;
                }
                at = table(b, at, end)?;
                // A table ends at a blank line or the end of the body.
                prev = Prev::Other;
                continue;
            }
            Some(c) if c.is_ascii_alphabetic() || c >= 0x80 || matches!(c, b'(' | b'"' | b'\'') => {
                paragraph_line(body, at, end, doc_path, &mut found.links)?;
                // The first paragraph line that is not blank once trimmed (white space
                // beyond ASCII makes no blank line for the parser, but trims away here).
                if !sentence_done && !body[at..end].trim().is_empty() {
                    found.first_sentence = first_sentence(&body[at..end]).to_string();
                    sentence_done = true;
                }
                prev = Prev::Para;
            }
            Some(_) => return None,
        }
        at = next;
    }
    Some(found)
}

fn is_alnum(b: Option<&u8>) -> bool {
    b.is_some_and(u8::is_ascii_alphanumeric)
}

/// Checks a paragraph line `body[start..end]` and collects its inline links.
fn paragraph_line(
    body: &str,
    start: usize,
    end: usize,
    doc_path: &str,
    links: &mut Vec<RawLink>,
) -> Option<()> {
    let line = &body.as_bytes()[start..end];
    let mut k = 0;
    while k < line.len() {
        // Plain bytes 16 at a time (a fold the compiler vectorises), then one at a time.
        if k + 16 <= line.len() && !line[k..k + 16].iter().fold(false, |a, &c| a | special(c)) {
            k += 16;
            continue;
        }
        let c = line[k];
        if !SPECIAL[c as usize] {
            k += 1;
            continue;
        }
        match c {
            b'_' if k > 0 && is_alnum(line.get(k - 1)) && is_alnum(line.get(k + 1)) => k += 1,
            b'!' if line.get(k + 1) != Some(&b'[') => k += 1,
            b'[' => {
                let (dest, after) = inline_link(line, k)?;
                let dest = &body[start + dest.0..start + dest.1];
                if let Some(target) = markdown_target(dest, doc_path) {
                    links.push(RawLink::Markdown {
                        dest: dest.to_string(),
                        target,
                    });
                }
                k = after;
            }
            _ => return None,
        }
    }
    Some(())
}

/// An inline link `[text](dest)` at `line[open]`: the destination's range in the line and
/// the offset after the `)`. The text is plain (no special byte at all, not empty), the
/// destination non-empty URL-safe bytes with `_` only between letters or digits.
fn inline_link(line: &[u8], open: usize) -> Option<((usize, usize), usize)> {
    let mut k = open + 1;
    // `^` first would be a footnote reference's; none at all, to be plain.
    while k < line.len() && !SPECIAL[line[k] as usize] && line[k] != b'^' {
        k += 1;
    }
    if k == open + 1 || line.get(k) != Some(&b']') || line.get(k + 1) != Some(&b'(') {
        return None;
    }
    let d0 = k + 2;
    let mut d = d0;
    while d < line.len() {
        let c = line[d];
        let ok = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.' | b'/' | b'#' | b'?' | b'=' | b'%' | b'+' | b':' | b';' | b',' | b'@'
            )
            || (c == b'_' && is_alnum(line.get(d - 1)) && is_alnum(line.get(d + 1)));
        if !ok {
            break;
        }
        d += 1;
    }
    if d == d0 || line.get(d) != Some(&b')') {
        return None;
    }
    Some(((d0, d), d + 1))
}

/// Whether a table line's bytes are in the subset: no `[`, `]`, `` ` ``, `\`, `<`, `&`,
/// tab or control character (what the cells hold is otherwise never read).
fn table_bytes_ok(line: &[u8]) -> bool {
    // Without an early exit the compiler vectorises this.
    !line.iter().fold(false, |bad, &c| {
        bad | (c < 0x20)
            | (c == 0x7f)
            | (c == b'[')
            | (c == b']')
            | (c == b'`')
            | (c == b'\\')
            | (c == b'<')
            | (c == b'&')
    })
}

/// A table whose header row is `b[start..end]`: the offset of the line after its last row
/// (a blank line, or the end of the body).
fn table(b: &[u8], start: usize, end: usize) -> Option<usize> {
    let header = &b[start..end];
    if header.len() < 2 || header.last() != Some(&b'|') || !table_bytes_ok(header) {
        return None;
    }
    let cells = header.iter().filter(|&&c| c == b'|').count() - 1;
    // The delimiter row: the same number of cells, each of spaces, `:` and at least one `-`.
    let d0 = (end + 1).min(b.len());
    let d1 = memchr::memchr(b'\n', &b[d0..]).map_or(b.len(), |k| d0 + k);
    let delim = &b[d0..d1];
    if delim.len() < 2 || delim[0] != b'|' || delim.last() != Some(&b'|') {
        return None;
    }
    let inner = &delim[1..delim.len() - 1];
    let mut cols = 0;
    for cell in inner.split(|&c| c == b'|') {
        if !cell.contains(&b'-') || !cell.iter().all(|&c| matches!(c, b' ' | b'-' | b':')) {
            return None;
        }
        cols += 1;
    }
    if cols != cells {
        return None;
    }
    // Rows: lines starting with `|` and holding a cell, up to a blank line or the end.
    let mut p = (d1 + 1).min(b.len());
    while p < b.len() {
        let e = memchr::memchr(b'\n', &b[p..]).map_or(b.len(), |k| p + k);
        let row = &b[p..e];
        match row.first() {
            Some(b'|') => {
                if row[1..].iter().all(|&c| c == b' ') || !table_bytes_ok(row) {
                    return None;
                }
            }
            None | Some(b' ') => {
                if !row.iter().all(|&c| c == b' ') {
                    return None;
                }
                return Some(p);
            }
            Some(_) => return None,
        }
        p = (e + 1).min(b.len());
    }
    Some(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::parse::scan_events;
    use crate::compile::split_frontmatter;
    use crate::testutil::okf_sample_docs;
    use proptest::prelude::*;

    /// Checks [`scan`] against the parser's events on `body` with every pair of wants;
    /// returns whether the fast path was taken.
    fn agrees(body: &str, path: &str) -> bool {
        let mut taken = false;
        for (title, sentence) in [(false, false), (false, true), (true, false), (true, true)] {
            if let Some(fast) = scan(body, path, title, sentence) {
                assert_eq!(
                    fast,
                    scan_events(body, path, title, sentence),
                    "body {body:?} at {path}, wants {title} {sentence}"
                );
                taken = true;
            }
        }
        taken
    }

    /// A document of the reference corpus's shape (docs/reference-corpus.md).
    const CORPUS_BODY: &str = "
One row per paid marketing effort and its spend. It is backfilled to 2019 from the warehouse that preceded the migration, and it is the table people mean when they talk about campaigns in the domain1 domain.

# Schema

| column | type | description |
| --- | --- | --- |
| campaigns_id | STRING | Primary key, surrogate, generated at ingest time. |
| coupons_ref | TIMESTAMP | Populated by the nightly load; null before the 2024 backfill. |

The grain is campaigns_id, meaning one row per campaigns.

# Common query patterns

```sql
-- # daily volume, partition pruned
SELECT DATE(created_at) AS day, COUNT(*) AS n
FROM `acme.warehouse.campaigns`
GROUP BY day
```

Always filter on the partition column first; a full scan is expensive.

# Joins

Joined with [Customers B1 Daily](../tables/customers_b1_daily.md) on the shared surrogate key, and with [Products B1 Curated](../tables/products_b1_curated.md) when you need the monetary side of the record.

# Caveats

Rows are soft deleted rather than removed. Backfilled to 2019 from the warehouse that preceded the migration.
";

    #[test]
    fn the_reference_corpus_shape_takes_the_fast_path() {
        let f = scan(CORPUS_BODY, "tables/campaigns.md", true, true).expect("in the subset");
        assert_eq!(f.headings.len(), 4);
        assert_eq!(f.links.len(), 2);
        assert!(f.first_sentence.starts_with("One row per paid"));
        assert_eq!(f.first_heading.as_deref(), Some("Schema"));
        assert!(agrees(CORPUS_BODY, "tables/campaigns.md"));
        // The metric shape, and the same without its leading blank line.
        let metric = "Net revenue recognised. This is the definition.\n\n# Definition\n\n\
            Computed over the window, sourced from [Orders](../tables/orders.md).\n\n# Owner\n\n\
            Owned by the analytics guild; changes need review.\n";
        assert!(agrees(metric, "metrics/revenue.md"));
        assert!(agrees(CORPUS_BODY.trim_start(), "tables/campaigns.md"));
    }

    #[test]
    fn forms_outside_the_subset_are_refused() {
        let refused = [
            "a\r\nb",
            "  indented",
            "\tTab",
            "1. one",
            "- item",
            "> quote",
            "---",
            "<div>",
            "~~~",
            "``",
            "``` x`y",
            "# *x*",
            "# a_b",
            "# Foo #",
            "#",
            "####### Seven",
            "Text *star*",
            "Text `code`",
            "Text &amp;",
            "Text \\* esc",
            "_a_ b",
            "Image ![a](b.png)",
            "Link [a](b c)",
            "Link [a]()",
            "Link [](x)",
            "Ref [a][b]",
            "Short [a]",
            "[a]: /url",
            "Foot [^1]",
            "Link [^a](b.md)",
            "Wiki [[Orders]]",
            "Auto <http://x>",
            "Pipe a | b",
            "a\n| a |\n| - |",
            "| a | b |\n| - |",
            "| a |\n| - |\ntext",
            "| a |\n| - |\n|",
            "```\n  ```",
            "```\n``",
            "Dest [a](/_x.md)",
        ];
        for body in refused {
            assert!(
                scan(body, "d.md", true, true).is_none(),
                "should be refused: {body:?}"
            );
        }
    }

    #[test]
    fn okf_samples_agree() {
        let mut taken = 0;
        for d in okf_sample_docs() {
            let bomless = d.text.strip_prefix('\u{feff}').unwrap_or(&d.text);
            let body = split_frontmatter(bomless).map_or(bomless, |(_, at)| &bomless[at..]);
            if agrees(body, &d.path) {
                taken += 1;
            }
        }
        // Real bodies use lists, code spans and emphasis: few are in the subset.
        let _ = taken;
    }

    /// Lines near the subset's edges, in and out of it.
    const LINES: &[&str] = &[
        "",
        "  ",
        "# Schema",
        "## Common query patterns",
        "###### Six",
        "####### Seven",
        "#",
        "# ",
        "#Foo",
        "# Foo #",
        "# Foo  ",
        "#  Lead",
        "# a_b",
        "# *x*",
        "# [t](a.md)",
        "# Ünïcode Ĥeading!",
        "# 😀 x, (y)",
        "Plain paragraph. Second sentence.",
        "Joined with [Orders](../tables/orders.md) on key.",
        "[Lead](x.md) starts",
        "a_b c",
        "_a_ b",
        "x __y__",
        "Text with *star*",
        "Text ~~strike~~",
        "Text `code`",
        "Text <b>",
        "Text &amp;",
        "Text \\* esc",
        "Image ![a](b.png)",
        "Bang! yes? no.",
        "Link [a](b c)",
        "Link [a]()",
        "Link [](x)",
        "Link [a] (x)",
        "Ref [a][b]",
        "Short [a]",
        "[a]: /url",
        "[^1]: note",
        "Foot [^1]",
        "Link [^a](b.md)",
        "Wiki [[Orders]]",
        "Auto <http://x>",
        "Pipe a | b",
        "(paren) start",
        "\"quoted\" start",
        "'single' start",
        "Über alles",
        "  indented",
        "    code",
        "\tTab",
        "1. one",
        "2) two",
        "- item",
        "* item",
        "+ item",
        "> quote",
        "---",
        "===",
        "***",
        "___",
        "<div>",
        "~~~",
        "```",
        "```sql",
        "````",
        "``` x`y",
        "`` x",
        "  ```",
        "| a | b |",
        "| --- | --- |",
        "|---|:-:|",
        "| --- |",
        "| :-- |",
        "| x | y |",
        "| x |",
        "|",
        "| ",
        "|a|",
        "||",
        "a | b",
        "| a [l](x.md) |",
        "| a `c` |",
        "| a \\| b |",
        "| a *b* _c_ ! |",
        "Trailing spaces  ",
        "Dest [a](../t/x_y.md#h?q=1) ok",
        "Dest [a](http://e.com) ext",
        "Dest [a](%41.md)",
        "Dest [a](/_x.md)",
        "Dest [a](a__b.md)",
        "Dest [a](#top)",
        "Dest [a](../../../up.md)",
        "x\u{a0}",
        "\u{a0}",
        "\u{3000}\u{2003}",
        "\u{0}nul",
        "Line\\",
        "Two [a](a.md) and [b](b.md).",
    ];

    /// Blocks of the subset (and a few near it): joined by blank lines or not at all.
    const BLOCKS: &[&str] = &[
        "# Schema",
        "## Joins and keys",
        "### Ünïcode (x)",
        "Plain paragraph. Second sentence.",
        "Joined with [Orders](../tables/orders.md) on key_id.\nAnd a second line!",
        "Two [a](a.md) and [b](./b/c.md#x).",
        "Bang! yes? no.",
        "\u{3000}\nAfter a wide space. Yes.",
        "\u{a0}",
        "Up [u](../../u.md) and out [o](http://e.com/x).",
        "| a | b |\n| --- | --- |\n| x | y |\n| z |",
        "| a |\n| :-: |",
        "| a | b |\n| --- |",
        "```sql\nSELECT 1\n# not a heading\n| not | a table |\n```",
        "````\n```\n````",
        "```\nunclosed",
        "  ",
    ];

    fn body_of(picks: &[usize], lines: &[&str], newline_at_end: bool) -> String {
        let mut s = picks
            .iter()
            .map(|&i| lines[i % lines.len()])
            .collect::<Vec<_>>()
            .join("\n");
        if newline_at_end {
            s.push('\n');
        }
        s
    }

    fn blocks_of(picks: &[(usize, bool)]) -> String {
        let mut s = String::new();
        for (i, &(p, blank)) in picks.iter().enumerate() {
            if i > 0 {
                s.push_str(if blank { "\n\n" } else { "\n" });
            }
            s.push_str(BLOCKS[p % BLOCKS.len()]);
        }
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_lines_agree(
            picks in prop::collection::vec(0usize..1000, 0..8),
            end in any::<bool>(),
            nested in any::<bool>(),
        ) {
            let body = body_of(&picks, LINES, end);
            agrees(&body, if nested { "x/y/d.md" } else { "d.md" });
        }

        #[test]
        fn subset_blocks_agree(
            picks in prop::collection::vec((0usize..1000, prop::bool::weighted(0.8)), 0..16),
        ) {
            agrees(&blocks_of(&picks), "x/d.md");
        }
    }

    #[test]
    fn generated_subset_bodies_take_the_fast_path() {
        // Deterministic sequences over the accepted lines: most are in the subset.
        let mut taken = 0;
        let mut state = 7u32;
        for _ in 0..500 {
            let mut picks = Vec::new();
            for _ in 0..6 {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                picks.push((
                    (state >> 8) as usize,
                    state & 0x100_0000 != 0 || state & 3 != 0,
                ));
            }
            if agrees(&blocks_of(&picks), "x/d.md") {
                taken += 1;
            }
        }
        assert!(taken > 50, "the subset is exercised ({taken} of 500)");
    }
}
