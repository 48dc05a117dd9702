use super::*;
use crate::hash::source_hash;
use crate::testutil::{check_golden, model, okf_samples};
use proptest::prelude::*;

fn opts() -> GetOptions {
    GetOptions::default()
}

fn one<'a>(r: &'a GetResult<'a>) -> &'a Slice<'a> {
    let v: Vec<_> = r.slices().collect();
    assert_eq!(v.len(), 1, "exactly one slice expected");
    v[0].1
}

/// A document with frontmatter whose body is exactly `body`.
fn doc(body: &str) -> String {
    format!("---\ntype: note\n---\n{body}")
}

#[test]
fn whole_body_without_options() {
    let m = model(&[("b", "a.md", &doc("Hello.\n# Two\nx\n"))]);
    let r = get(&m, &["a"], &opts());
    let s = one(&r);
    assert_eq!(
        (s.text, s.start, s.end, s.total),
        ("Hello.\n# Two\nx\n", 0, 15, 15)
    );
    assert_eq!(s.matches, None);
    assert_eq!(s.match_count, None);
    assert_eq!(render_mcp(&r), "@@ a\nHello.\n# Two\nx\n");
    assert_eq!(render_cli(&r), "@@ a\nHello.\n# Two\nx\n");
}

#[test]
fn offset_and_limit() {
    let m = model(&[("b", "a.md", &doc("0123456789"))]);
    let case = |offset: Option<u64>, limit: Option<u64>| {
        let r = get(
            &m,
            &["a"],
            &GetOptions {
                offset,
                limit,
                ..opts()
            },
        );
        render_mcp(&r)
    };
    assert_eq!(case(Some(2), Some(3)), "@@ a [2..5 of 10]\n234");
    assert_eq!(case(Some(7), None), "@@ a [7..10 of 10]\n789");
    assert_eq!(case(None, Some(4)), "@@ a [0..4 of 10]\n0123");
    // A limit reaching the end: the whole text, so a bare frame.
    assert_eq!(case(Some(0), Some(10)), "@@ a\n0123456789");
    assert_eq!(case(Some(0), Some(11)), "@@ a\n0123456789");
    // Limit 0: an empty slice, no text line.
    assert_eq!(case(Some(3), Some(0)), "@@ a [3..3 of 10]");
    // Offsets beyond the text clamp to its end.
    assert_eq!(case(Some(11), None), "@@ a [10..10 of 10]");
    assert_eq!(case(Some(u64::MAX), Some(u64::MAX)), "@@ a [10..10 of 10]");
    assert_eq!(case(Some(4), Some(u64::MAX)), "@@ a [4..10 of 10]\n456789");
    assert_eq!(case(None, Some(u64::MAX)), "@@ a\n0123456789");
}

#[test]
fn moby_example() {
    // read.md §3.2 and §4.3: 1,216,418 units with a single "call me" at 22.
    let mut body = String::from("Chapter 1. Loomings.\n\nCall me Ishmael. ");
    assert_eq!(body.find("Call me"), Some(22));
    while body.len() < 1_216_418 {
        body.push_str("Some years ago, never mind how long precisely, I thought I would sail.\n");
    }
    body.truncate(1_216_418);
    let m = model(&[("books", "moby.md", &doc(&body))]);
    let r = get(
        &m,
        &["moby"],
        &GetOptions {
            find: Some("call me".into()),
            limit: Some(200),
            ..opts()
        },
    );
    let s = one(&r);
    assert_eq!((s.start, s.end, s.total), (0, 200, 1_216_418));
    assert_eq!(s.matches.as_deref(), Some(&[22][..]));
    assert_eq!(s.match_count, Some(1));
    assert_eq!(s.text, &body[..200]);
    let out = render_mcp(&r);
    assert_eq!(
        out,
        format!(
            "@@ moby [0..200 of 1216418] 1 match at 22\n{}",
            &body[..200]
        )
    );
}

#[test]
fn first_20_of_57_example() {
    // read.md §4.3: a 3-unit phrase first found at 5000 in 91,000 units, 57 matches. (The
    // docs' `log` would be a navigation document, so the concept is `events`.)
    let mut body = vec![b'.'; 91_000];
    let at: Vec<usize> = (0..57).map(|k| 5000 + 210 * k).collect();
    for &a in &at {
        body[a..a + 3].copy_from_slice(b"err");
    }
    let body = String::from_utf8(body).unwrap();
    let m = model(&[("b", "events.md", &doc(&body))]);
    let r = get(
        &m,
        &["events"],
        &GetOptions {
            find: Some("ERR".into()),
            ..opts()
        },
    );
    let s = one(&r);
    assert_eq!((s.start, s.end, s.total), (4002, 6002, 91_000));
    assert_eq!(s.matches.as_deref(), Some(&at[..20]));
    assert_eq!(s.match_count, Some(57));
    let offsets: Vec<String> = at[..20].iter().map(|a| a.to_string()).collect();
    let frame = format!(
        "@@ events [4002..6002 of 91000] first 20 of 57 matches at {}",
        offsets.join(" ")
    );
    assert_eq!(render_mcp(&r), format!("{frame}\n{}", &body[4002..6002]));
}

#[test]
fn whole_text_in_window_has_no_range() {
    // read.md §4.3: `@@ orders 3 matches at 14 880 1502`.
    let mut body = vec![b'-'; 1600];
    for a in [14, 880, 1502] {
        body[a..a + 5].copy_from_slice(b"order");
    }
    let body = String::from_utf8(body).unwrap();
    let m = model(&[("sales", "orders.md", &doc(&body))]);
    let r = get(
        &m,
        &["orders"],
        &GetOptions {
            find: Some("Order".into()),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ orders 3 matches at 14 880 1502\n{body}")
    );
}

#[test]
fn find_window_rule() {
    let body: String = (0..100).map(|i| if i == 50 { 'X' } else { 'a' }).collect();
    let m = model(&[("b", "w.md", &doc(&body))]);
    let win = |limit: u64, phrase: &str| {
        let r = get(
            &m,
            &["w"],
            &GetOptions {
                find: Some(phrase.into()),
                limit: Some(limit),
                ..opts()
            },
        );
        let s = one(&r);
        (s.start, s.end, s.text.to_string())
    };
    // half = floor((10 − 1) / 2) = 4: end = 46 + 10, start = 46.
    assert_eq!(win(10, "x"), (46, 56, body[46..56].to_string()));
    // half = floor((10 − 3) / 2) = 3: end = 45 + 10.
    assert_eq!(win(10, "aax"), (45, 55, body[45..55].to_string()));
    // A match near the start: the window starts at 0.
    assert_eq!(win(10, "a"), (0, 10, body[..10].to_string()));
    // Near the end, the window sticks to the end.
    assert_eq!(win(98, "x"), (2, 100, body[2..].to_string()));
    // A window narrower than the phrase: half = 0, the window starts at the match.
    assert_eq!(win(2, "xaaa"), (50, 52, "Xa".into()));
    // Limit 0 with find: an empty window at the match.
    let r = get(
        &m,
        &["w"],
        &GetOptions {
            find: Some("x".into()),
            limit: Some(0),
            ..opts()
        },
    );
    assert_eq!(render_mcp(&r), "@@ w [50..50 of 100] 1 match at 50");
    // A huge limit: the whole text.
    let r = get(
        &m,
        &["w"],
        &GetOptions {
            find: Some("x".into()),
            limit: Some(u64::MAX),
            ..opts()
        },
    );
    assert_eq!(render_mcp(&r), format!("@@ w 1 match at 50\n{body}"));
}

#[test]
fn find_ignores_offset() {
    let m = model(&[("b", "w.md", &doc("abc needle def"))]);
    let r = get(
        &m,
        &["w"],
        &GetOptions {
            find: Some("needle".into()),
            offset: Some(9),
            ..opts()
        },
    );
    assert_eq!(render_mcp(&r), "@@ w 1 match at 4\nabc needle def");
}

#[test]
fn no_match() {
    let m = model(&[("b", "w.md", &doc("abc def"))]);
    let r = get(
        &m,
        &["w"],
        &GetOptions {
            find: Some("zzz".into()),
            limit: Some(3),
            offset: Some(2),
            ..opts()
        },
    );
    let s = one(&r);
    assert_eq!((s.text, s.start, s.end, s.total), ("", 0, 0, 7));
    assert_eq!(s.matches.as_deref(), Some(&[][..]));
    assert_eq!(s.match_count, Some(0));
    assert_eq!(render_mcp(&r), "@@ w no match in 7 chars");
    assert_eq!(
        r.to_json(),
        r#"{"w":{"text":"","start":0,"end":0,"total":7,"matches":[],"matchCount":0}}"#
    );
}

#[test]
fn empty_find_is_no_find() {
    let m = model(&[("b", "w.md", &doc("abcdef"))]);
    let r = get(
        &m,
        &["w"],
        &GetOptions {
            find: Some(String::new()),
            offset: Some(2),
            ..opts()
        },
    );
    let s = one(&r);
    assert_eq!((s.text, s.start, s.matches.is_none()), ("cdef", 2, true));
    assert_eq!(render_mcp(&r), "@@ w [2..6 of 6]\ncdef");
    // The MCP default cap treats an empty find as none.
    let o = GetOptions {
        find: Some(String::new()),
        ..opts()
    }
    .with_mcp_default();
    assert_eq!(o.limit, Some(MCP_DEFAULT_LIMIT));
}

#[test]
fn numbers_from_hosts() {
    assert_eq!(count_from_number(12.9), 12);
    assert_eq!(count_from_number(-3.5), 0);
    assert_eq!(count_from_number(-0.0), 0);
    assert_eq!(count_from_number(f64::NAN), 0);
    assert_eq!(count_from_number(1e300), u64::MAX);
    assert_eq!(count_from_number(f64::INFINITY), u64::MAX);
    assert_eq!(count_from_number(9007199254740991.0), 9_007_199_254_740_991);
}

#[test]
fn matches_do_not_overlap() {
    assert_eq!(find_matches("aaaa", "aa"), (vec![0, 2], 2));
    assert_eq!(find_matches("aaaaa", "aa"), (vec![0, 2], 2));
    assert_eq!(find_matches("abab", "bab"), (vec![1], 1));
}

#[test]
fn case_folding_rule() {
    // Lengths kept: case-insensitive, in UTF-16 units.
    assert_eq!(find_matches("Ça va, ÇA VA", "ça va"), (vec![0, 7], 2));
    assert_eq!(
        find_matches("😀 Straße STRASSE straße", "STRAßE"),
        (vec![3, 18], 2)
    );
    // Kelvin sign (3 bytes) lower-cases to `k` (1 byte): offsets stay in units.
    assert_eq!(find_matches("\u{212A}\u{212A} k", "k"), (vec![0, 1, 3], 3));
    // The text's length changes (İ lower-cases to two units): the search is case-sensitive.
    assert_eq!(
        find_matches("İstanbul istanbul ISTANBUL", "istanbul"),
        (vec![9], 1)
    );
    assert_eq!(
        find_matches("İstanbul istanbul ISTANBUL", "Istanbul"),
        (vec![], 0)
    );
    // The phrase's length changes: case-sensitive too.
    assert_eq!(find_matches("i̇ İ", "İ"), (vec![3], 1));
    // Non-Latin text.
    assert_eq!(
        find_matches("Схема ДАННЫХ и данных", "данных"),
        (vec![6, 15], 2)
    );
}

#[test]
fn final_sigma_follows_the_standard_lower_case() {
    // `ΟΔΟΣ` lower-cases to `οδος` with a final sigma, as JavaScript does.
    assert_eq!(find_matches("ΟΔΟΣ ΣΑ", "οδος"), (vec![0], 1));
    assert_eq!(find_matches("ΟΔΟΣ ΣΑ", "σα"), (vec![5], 1));
    assert_eq!(find_matches("ΟΔΟΣ ΣΑ", "οδοσ"), (vec![], 0));
}

#[test]
fn lower_case_never_shortens_a_char() {
    // find_matches relies on this to carry offsets from the lower-cased text.
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let lower: usize = c.to_lowercase().map(char::len_utf16).sum();
        assert!(lower >= c.len_utf16(), "U+{:04X}", c as u32);
    }
}

#[test]
fn surrogate_pairs_at_start_and_end() {
    // Units: a0 b1 😀2-3 c4 d5.
    let m = model(&[("b", "s.md", &doc("ab😀cd"))]);
    let case = |offset: Option<u64>, limit: Option<u64>| {
        let r = get(
            &m,
            &["s"],
            &GetOptions {
                offset,
                limit,
                ..opts()
            },
        );
        let s = one(&r);
        (s.text.to_string(), s.start, s.end)
    };
    assert_eq!(case(Some(3), None), ("😀cd".into(), 2, 6));
    assert_eq!(case(Some(0), Some(3)), ("ab😀".into(), 0, 4));
    assert_eq!(case(Some(3), Some(0)), ("😀".into(), 2, 4));
    assert_eq!(case(Some(2), Some(2)), ("😀".into(), 2, 4));
    assert_eq!(case(Some(4), Some(1)), ("c".into(), 4, 5));
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            offset: Some(3),
            limit: Some(0),
            ..opts()
        },
    );
    assert_eq!(render_mcp(&r), "@@ s [2..4 of 6]\n😀");

    // Find windows: units 😀0-1 😀2-3 😀4-5 x6 😀7-8 😀9-10 😀11-12.
    let m = model(&[("b", "f.md", &doc("😀😀😀x😀😀😀"))]);
    let win = |limit: u64| {
        let r = get(
            &m,
            &["f"],
            &GetOptions {
                find: Some("x".into()),
                limit: Some(limit),
                ..opts()
            },
        );
        let s = one(&r);
        (s.text.to_string(), s.start, s.end, s.total)
    };
    // end = 8 falls inside a pair and moves forward.
    assert_eq!(win(2), ("x😀".into(), 6, 9, 13));
    // start = 5 falls inside a pair and moves back.
    assert_eq!(win(3), ("😀x😀".into(), 4, 9, 13));
}

#[test]
fn crlf_bodies_served_verbatim() {
    let text = "---\r\ntype: note\r\n---\r\nIntro.\r\n\r\n# Part One\r\nline\r\n";
    let m = model(&[("b", "c.md", text)]);
    let r = get(&m, &["c"], &opts());
    assert_eq!(render_mcp(&r), "@@ c\nIntro.\r\n\r\n# Part One\r\nline\r\n");
    let r = get(
        &m,
        &["c"],
        &GetOptions {
            section: Some("part_one".into()),
            ..opts()
        },
    );
    let s = one(&r);
    assert_eq!(
        (s.text, s.start, s.end, s.total),
        ("# Part One\r\nline\r\n", 0, 18, 18)
    );
    assert_eq!(render_mcp(&r), "@@ c\n# Part One\r\nline\r\n");
}

#[test]
fn sections_address_their_range() {
    let body = "Intro 😀.\n\n# Alpha\nA text.\n\n## Sub\nsub text\n\n# Beta\nB text.\n";
    let m = model(&[("b", "s.md", &doc(body))]);
    let sec = |name: &str, offset: Option<u64>, limit: Option<u64>| {
        let r = get(
            &m,
            &["s"],
            &GetOptions {
                section: Some(name.into()),
                offset,
                limit,
                ..opts()
            },
        );
        render_mcp(&r)
    };
    assert_eq!(
        sec("alpha", None, None),
        "@@ s\n# Alpha\nA text.\n\n## Sub\nsub text\n\n"
    );
    assert_eq!(sec("sub", None, None), "@@ s\n## Sub\nsub text\n\n");
    assert_eq!(sec("body", None, None), "@@ s\nIntro 😀.\n\n");
    // Offsets are within the section.
    assert_eq!(sec("beta", Some(2), Some(4)), "@@ s [2..6 of 15]\nBeta");
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            section: Some("alpha".into()),
            find: Some("TEXT".into()),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        "@@ s 2 matches at 10 28\n# Alpha\nA text.\n\n## Sub\nsub text\n\n"
    );
}

#[test]
fn unknown_ids_and_sections() {
    let m = model(&[
        ("b", "a.md", &doc("# Schema\nx\n# Notes\ny\n")),
        ("b", "e.md", &doc("")),
        ("b", "z.md", &doc("# Other\nz\n")),
    ]);
    let ids = ["nope", "a", "e", "gone", "nope", "z"];
    let o = GetOptions {
        section: Some("sche\tma\r\n".into()),
        ..opts()
    };
    let r = get(&m, &ids, &o);
    assert_eq!(r.found(), 0);
    assert_eq!(r.not_found().collect::<Vec<_>>(), ["nope", "gone"]);
    assert_eq!(
        r.missing().collect::<Vec<_>>(),
        ["nope", "a", "e", "gone", "z"]
    );
    assert_eq!(
        render_mcp(&r),
        "@@ a no section \"sche ma  \": schema notes\n@@ e no section \"sche ma  \": -\n@@ z no section \"sche ma  \": other\n@@ not found\nnope gone"
    );
    assert_eq!(render_cli(&r), "");
    assert_eq!(r.to_json(), "{}");

    let o = GetOptions {
        section: Some("schema".into()),
        ..opts()
    };
    let r = get(&m, &ids, &o);
    assert_eq!(r.slices().map(|(id, _)| id).collect::<Vec<_>>(), ["a"]);
    assert_eq!(
        render_mcp(&r),
        "@@ a\n# Schema\nx\n\n@@ e no section \"schema\": -\n@@ z no section \"schema\": other\n@@ not found\nnope gone"
    );
    assert_eq!(render_cli(&r), "@@ a\n# Schema\nx\n");
    assert_eq!(r.missing().collect::<Vec<_>>(), ["nope", "e", "gone", "z"]);

    // Only unknown ids.
    let r = get(&m, &["x", "y", "x"], &opts());
    assert_eq!(render_mcp(&r), "@@ not found\nx y");
}

#[test]
fn duplicate_and_nfc_ids() {
    let m = model(&[
        ("b", "café.md", &doc("Crème.")),
        ("b", "b.md", &doc("Bee.")),
    ]);
    // The decomposed form of the id normalises to the stored NFC id.
    let r = get(&m, &["cafe\u{301}", "b", "café", "b"], &opts());
    assert_eq!(r.entries.len(), 2);
    assert_eq!(render_mcp(&r), "@@ café\nCrème.\n@@ b\nBee.");
    assert_eq!(
        r.to_json(),
        r#"{"café":{"text":"Crème.","start":0,"end":6,"total":6},"b":{"text":"Bee.","start":0,"end":4,"total":4}}"#
    );
    // Unknown ids are listed once, in request order, NFC-normalised.
    let r = get(&m, &["zoe\u{308}", "q", "zoë"], &opts());
    assert_eq!(render_mcp(&r), "@@ not found\nzoë q");
}

#[test]
fn source_slices() {
    // A BOM and non-ASCII frontmatter make the unit shift differ from the byte shift.
    let text = "\u{feff}---\ntype: note\ntitle: Ünïcödé 😀\n---\nIntro.\n# Part\nP 😀 text.\n";
    let m = model(&[("notes", "dir/s.md", text)]);
    let hash = source_hash(text);
    let body_start16 = m.concept("s").unwrap().parsed.body_start16;
    assert_eq!(body_start16, 1 + 4 + 11 + 18 + 4);

    let r = get(
        &m,
        &["s"],
        &GetOptions {
            source: true,
            ..opts()
        },
    );
    let s = one(&r);
    assert_eq!((s.text, s.start, s.end, s.total), (text, 0, 63, 63));
    let src = s.source.as_ref().unwrap();
    assert_eq!(
        (src.bundle, src.path, src.hash.as_str()),
        ("notes", "dir/s.md", hash.as_str())
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ s notes/dir/s.md hash {hash}\n{text}")
    );
    assert_eq!(
        r.to_json(),
        format!(
            r#"{{"s":{{"text":{},"start":0,"end":63,"total":63,"bundle":"notes","path":"dir/s.md","hash":"{hash}"}}}}"#,
            serde_json::to_string(text).unwrap()
        )
    );

    // A section is shifted by the body's start; offsets count within it.
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            source: true,
            section: Some("part".into()),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ s notes/dir/s.md hash {hash}\n# Part\nP 😀 text.\n")
    );
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            source: true,
            section: Some("part".into()),
            offset: Some(10),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ s notes/dir/s.md hash {hash} [9..18 of 18]\n😀 text.\n")
    );

    // Find and limit apply to the whole text, frontmatter included.
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            source: true,
            find: Some("ünïcödé".into()),
            limit: Some(10),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ s notes/dir/s.md hash {hash} [22..33 of 63] 1 match at 23\n Ünïcödé 😀")
    );
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            source: true,
            find: Some("zzz".into()),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ s notes/dir/s.md hash {hash} no match in 63 chars")
    );
    let r = get(
        &m,
        &["s", "t"],
        &GetOptions {
            source: true,
            section: Some("nope".into()),
            ..opts()
        },
    );
    assert_eq!(
        render_mcp(&r),
        format!("@@ s notes/dir/s.md hash {hash} no section \"nope\": body part\n@@ not found\nt")
    );
    // The BOM is the first unit of the source.
    let r = get(
        &m,
        &["s"],
        &GetOptions {
            source: true,
            limit: Some(1),
            ..opts()
        },
    );
    assert_eq!(one(&r).text, "\u{feff}");
}

#[test]
fn mcp_default_cap() {
    let body = "abcdefghij".repeat(1_600);
    let m = model(&[
        ("b", "big.md", &doc(&body)),
        ("b", "small.md", &doc("tiny")),
    ]);
    let out = get_mcp(&m, &["big", "small"], &opts());
    assert_eq!(
        out,
        format!(
            "@@ big [0..15000 of 16000]\n{}\n@@ small\ntiny",
            &body[..15_000]
        )
    );
    // Continue with offset: the cap still applies.
    let out = get_mcp(
        &m,
        &["big"],
        &GetOptions {
            offset: Some(15_000),
            ..opts()
        },
    );
    assert_eq!(
        out,
        format!("@@ big [15000..16000 of 16000]\n{}", &body[15_000..])
    );
    // An explicit limit is honoured, a larger one included.
    let out = get_mcp(
        &m,
        &["big"],
        &GetOptions {
            limit: Some(20_000),
            ..opts()
        },
    );
    assert_eq!(out, format!("@@ big\n{body}"));
    // With find, the window rules, not the cap.
    let out = get_mcp(
        &m,
        &["big"],
        &GetOptions {
            find: Some("j".into()),
            ..opts()
        },
    );
    assert!(
        out.starts_with("@@ big [0..2000 of 16000] first 20 of 1600 matches at 9 19 29 "),
        "{out}"
    );
    // The library and the CLI do not cap.
    let r = get(&m, &["big"], &opts());
    assert_eq!(one(&r).end, 16_000);
    assert_eq!(render_cli(&r), format!("@@ big\n{body}"));
}

#[test]
fn single_match_word() {
    let m = model(&[("b", "a.md", &doc("one two two"))]);
    let r = get(
        &m,
        &["a"],
        &GetOptions {
            find: Some("one".into()),
            ..opts()
        },
    );
    assert_eq!(render_mcp(&r), "@@ a 1 match at 0\none two two");
    let r = get(
        &m,
        &["a"],
        &GetOptions {
            find: Some("two".into()),
            ..opts()
        },
    );
    assert_eq!(render_mcp(&r), "@@ a 2 matches at 4 8\none two two");
}

#[test]
fn blocks_join_with_one_newline() {
    let m = model(&[
        ("b", "a.md", &doc("A\n")),
        ("b", "e.md", &doc("")),
        ("b", "z.md", &doc("Z")),
    ]);
    let r = get(&m, &["a", "e", "z"], &opts());
    // A text ending in `\n` is followed by the separator; an empty text has no text line.
    assert_eq!(render_mcp(&r), "@@ a\nA\n\n@@ e\n@@ z\nZ");
    assert_eq!(render_cli(&r), "@@ a\nA\n\n@@ e\n@@ z\nZ");
}

// Golden renderings over the okf-samples bundles.

#[test]
fn golden_batch_sections() {
    let m = okf_samples();
    let ids = [
        "orders",
        "revenue",
        "nope",
        "users",
        "orders",
        "gross-margin",
    ];
    let o = GetOptions {
        section: Some("schema".into()),
        ..opts()
    };
    check_golden("get/batch_schema.mcp.txt", &get_mcp(&m, &ids, &o));
    let r = get(&m, &ids, &o);
    // The CLI's stdout: found ids only, then one `\n`; the missing ones go to stderr.
    check_golden("get/batch_schema.cli.txt", &format!("{}\n", render_cli(&r)));
    assert_eq!(
        r.missing().collect::<Vec<_>>(),
        ["revenue", "nope", "gross-margin"]
    );
    check_golden("get/batch_schema.json", &r.to_json());
}

#[test]
fn golden_find() {
    let m = okf_samples();
    let ids = [
        "orders",
        "revenue",
        "revenue-recognition",
        "gross-margin-legacy",
        "posts_questions",
        "blocks",
    ];
    let o = GetOptions {
        find: Some("Revenue".into()),
        limit: Some(240),
        ..opts()
    };
    check_golden("get/find_revenue.mcp.txt", &get_mcp(&m, &ids, &o));
    let o = GetOptions {
        find: Some("score".into()),
        ..opts()
    };
    check_golden(
        "get/find_score.mcp.txt",
        &get_mcp(&m, &["posts_questions", "posts_answers", "comments"], &o),
    );
}

#[test]
fn golden_source() {
    let m = okf_samples();
    let o = GetOptions {
        source: true,
        limit: Some(400),
        ..opts()
    };
    check_golden(
        "get/source_head.mcp.txt",
        &get_mcp(&m, &["orders", "run-on-bq", "missing-one"], &o),
    );
    let o = GetOptions {
        source: true,
        section: Some("definition".into()),
        ..opts()
    };
    check_golden(
        "get/source_definition.mcp.txt",
        &get_mcp(&m, &["revenue", "gross-margin", "orders"], &o),
    );
}

#[test]
fn golden_slices() {
    let m = okf_samples();
    let o = GetOptions {
        offset: Some(300),
        limit: Some(500),
        ..opts()
    };
    check_golden(
        "get/offset_limit.mcp.txt",
        &get_mcp(&m, &["events_", "transactions", "stackoverflow"], &o),
    );
    check_golden(
        "get/whole.mcp.txt",
        &get_mcp(&m, &["events_", "acquired_users"], &opts()),
    );
}

#[test]
fn okf_samples_slices_agree_with_sections() {
    // Every section of every sample, fetched by name, is the body's range.
    let m = okf_samples();
    for c in m.concepts() {
        let body: Vec<u16> = c.body().encode_utf16().collect();
        for sec in &c.parsed.sections {
            let r = get(
                &m,
                &[c.id.as_str()],
                &GetOptions {
                    section: Some(sec.name.clone()),
                    ..opts()
                },
            );
            let s = one(&r);
            assert_eq!(
                s.text.encode_utf16().collect::<Vec<_>>(),
                &body[sec.start..sec.end],
                "{} {}",
                c.id,
                sec.name
            );
            let r = get(
                &m,
                &[c.id.as_str()],
                &GetOptions {
                    section: Some(sec.name.clone()),
                    source: true,
                    ..opts()
                },
            );
            assert_eq!(one(&r).text, s.text);
        }
    }
}

fn arb_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof!["a", "B", "é", "😀", "\n", "ab", "İ", "K", "x😀y"],
        0..60,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lower_same_length_is_the_standard_lower_case(s in "(\\PC|Σ|İ|K){0,40}") {
        let lower = s.to_lowercase();
        let kept = utf16_len(&lower) == utf16_len(&s);
        prop_assert_eq!(lower_same_length(&s), kept.then_some(lower));
    }

    #[test]
    fn slices_never_split_characters(
        body in arb_text(),
        offset in proptest::option::of(0u64..80),
        limit in proptest::option::of(prop_oneof![0u64..80, Just(u64::MAX)]),
        find in proptest::option::of(prop_oneof!["a", "😀", "b", "x😀", "", "zz", "i"]),
        source in any::<bool>(),
    ) {
        let text = doc(&body);
        let m = model(&[("b", "p.md", &text)]);
        let o = GetOptions { offset, limit, find: find.clone(), source, ..opts() };
        let r = get(&m, &["p"], &o);
        let s = one(&r);
        let addressed: &str = if source { &text } else { &body };
        let units: Vec<u16> = addressed.encode_utf16().collect();
        prop_assert_eq!(s.total, units.len());
        prop_assert!(s.start <= s.end && s.end <= s.total);
        // The text is exactly the unit range, and both ends are char boundaries.
        prop_assert_eq!(s.text.encode_utf16().collect::<Vec<_>>(), &units[s.start..s.end]);
        prop_assert!(s.start == s.total || !(0xDC00..0xE000).contains(&units[s.start]));
        prop_assert!(s.end == s.total || !(0xDC00..0xE000).contains(&units[s.end]));
        match find.as_deref().filter(|f| !f.is_empty()) {
            None => {
                let want_start = offset.map_or(0, |o| o as usize).min(s.total);
                prop_assert!(s.start == want_start || s.start + 1 == want_start);
                prop_assert_eq!(s.matches.clone(), None);
            }
            Some(f) => {
                let count = s.match_count.unwrap();
                let matches = s.matches.clone().unwrap();
                prop_assert_eq!(matches.len(), count.min(MATCH_CAP));
                for &mo in &matches {
                    // Each match is the phrase, ignoring case when lengths allow.
                    let got = String::from_utf16(&units[mo..mo + utf16_len(f)]).unwrap();
                    prop_assert!(got == f || got.to_lowercase() == f.to_lowercase(), "{} at {}", got, mo);
                }
                if let Some(&first) = matches.first() {
                    let w = limit.map_or(FIND_WINDOW, |l| usize::try_from(l).unwrap_or(usize::MAX));
                    // The window holds the match's start unless it is narrower than the phrase.
                    prop_assert!(s.start <= first);
                    prop_assert!(s.end - s.start <= w.saturating_add(2));
                } else {
                    prop_assert_eq!((s.start, s.end, s.text), (0, 0, ""));
                }
            }
        }
    }
}
