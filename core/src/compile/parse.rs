//! The per-document pass: frontmatter, fields, summary, title, sections and raw links.
//!
//! Everything here depends on one document's own text only, so the engine caches it by
//! source hash and a commit re-parses only the documents it changes (compile.md §11).

use super::body::Found;
use super::front::{self, Field, Fields};
use crate::lazy_list::LazyList;
use crate::text::{flatten, is_letter_or_number, truncate_summary, utf16_len, Utf16Map};
use pulldown_cmark::{Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

/// A section of a body: a name and a range in UTF-16 units of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The unique slug (`body`, `schema`, `schema_2`, …).
    pub name: String,
    /// Start offset in the body, in UTF-16 units.
    pub start: usize,
    /// End offset in the body, in UTF-16 units.
    pub end: usize,
}

/// A link as written, before the tenant pass resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawLink {
    /// A Markdown link (inline, reference-style): the destination as reported, and the
    /// bundle path it resolves to (`None` when `..` climbs above the bundle root).
    Markdown {
        /// The destination as the parser reported it.
        dest: String,
        /// The bundle-relative path with `.md`, or `None` when it left the bundle.
        target: Option<String>,
    },
    /// A wiki link: the text before `|`, and the target cut at `#` and NFC-normalised.
    Wiki {
        /// The text before `|`, for the diagnostic.
        text: String,
        /// The literal target.
        target: String,
    },
}

/// What one document compiles to on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedDoc {
    /// The `kind` cell.
    pub kind: String,
    /// The compiled `status` cell (before read-time `stale`).
    pub status: String,
    /// The `grain` cell.
    pub grain: String,
    /// The `summary` cell.
    pub summary: String,
    /// The flattened summary source (compile.md §3.2 rules 1–2) when the `summary` cell is
    /// a cut of it; `None` when the cell holds it whole or is `-`. Search indexes it as the
    /// `description` field (docs/search.md).
    pub summary_source: Option<String>,
    /// The title, if any.
    pub title: Option<String>,
    /// The `stale_after` date, if usable.
    pub stale_after: Option<String>,
    /// Sections in document order, `body` first.
    pub sections: LazyList<Section>,
    /// Byte offset of the body in the source text.
    pub body_start: usize,
    /// UTF-16 offset of the body in the source text.
    pub body_start16: usize,
    /// Offset map of the body.
    pub body_map: Utf16Map,
    /// Offset map of the whole source text (for `get` with `source`).
    pub source_map: Utf16Map,
    /// Links in order of appearance (unresolved form).
    pub links: LazyList<RawLink>,
    /// Diagnostics that precede the link diagnostics, in order.
    pub head_diagnostics: Vec<String>,
    /// Whether the `stale_after` diagnostic applies.
    pub stale_after_diagnostic: bool,
}

/// The parser options of compile.md §4.1, and nothing else.
pub fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
}

/// Splits off frontmatter (compile.md §2): returns `(inner yaml, body byte offset)` of the
/// BOM-less text, or `None` when there is no frontmatter block.
pub fn split_frontmatter(text: &str) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    let open_end = fence_line(b, 0)?;
    // Shortest run, then a line break, then a closing fence line.
    let mut q = open_end;
    while let Some(off) = memchr::memchr(b'\n', &b[q..]) {
        let nl = q + off;
        let run_end = if nl > open_end && b[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        if let Some(close_end) = closing_fence(b, nl + 1) {
            return Some((&text[open_end..run_end], close_end));
        }
        q = nl + 1;
    }
    None
}

/// A `---[ \t]*` line starting at `at`, ended by a line break; returns the offset after it.
fn fence_line(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at;
    if !b[i..].starts_with(b"---") {
        return None;
    }
    i += 3;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if b[i..].starts_with(b"\r\n") {
        Some(i + 2)
    } else if b[i..].starts_with(b"\n") {
        Some(i + 1)
    } else {
        None
    }
}

/// A closing `---[ \t]*` line at `at`, ended by a line break or the end of the text.
fn closing_fence(b: &[u8], at: usize) -> Option<usize> {
    if at > b.len() || !b[at..].starts_with(b"---") {
        return None;
    }
    let mut i = at + 3;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if i == b.len() {
        Some(i)
    } else if b[i..].starts_with(b"\r\n") {
        Some(i + 2)
    } else if b[i] == b'\n' {
        Some(i + 1)
    } else {
        None
    }
}

fn yaml_is_blank(inner: &str) -> bool {
    inner.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    })
}

/// The `type` slug: lower-case, runs outside `[a-z0-9]` become `_`, `_` trimmed.
pub fn kind_slug(s: &str) -> String {
    if s.is_ascii() {
        return ascii_slug(s, "-");
    }
    slug(s, |c| c.is_ascii_lowercase() || c.is_ascii_digit(), "-")
}

/// A section slug (compile.md §7.2): lower-case, runs outside `[\p{L}\p{N}]` become `_`.
pub fn section_slug(s: &str) -> String {
    if s.is_ascii() {
        return ascii_slug(s, "body");
    }
    slug(s, is_letter_or_number, "body")
}

/// Lower-cases `s` and keeps the chars `keep` accepts, each run of others becoming one `_`
/// between kept ones; `empty` when nothing is kept.
fn slug(s: &str, keep: fn(char) -> bool, empty: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending = false;
    for c in s.chars().flat_map(char::to_lowercase) {
        if keep(c) {
            if pending && !out.is_empty() {
                out.push('_');
            }
            pending = false;
            out.push(c);
        } else {
            pending = true;
        }
    }
    if out.is_empty() {
        empty.to_string()
    } else {
        out
    }
}

/// [`kind_slug`] and [`section_slug`] of ASCII text, where both keep `[a-z0-9]` after
/// lower-casing; `empty` when nothing is kept.
fn ascii_slug(s: &str, empty: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending = false;
    for &b in s.as_bytes() {
        let c = b.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if pending && !out.is_empty() {
                out.push('_');
            }
            pending = false;
            out.push(char::from(c));
        } else {
            pending = true;
        }
    }
    if out.is_empty() {
        empty.to_string()
    } else {
        out
    }
}

/// Whether a trimmed `stale_after` value is usable (compile.md §3.3); returns its date.
pub fn stale_date(v: &str) -> Option<String> {
    let b = v.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if b.len() < 10
        || !digits(&b[0..4])
        || b[4] != b'-'
        || !digits(&b[5..7])
        || b[7] != b'-'
        || !digits(&b[8..10])
    {
        return None;
    }
    let date = &v[..10];
    let rest = &b[10..];
    if rest.is_empty() {
        return Some(date.to_string());
    }
    if !matches!(rest[0], b'T' | b't' | b' ') {
        return None;
    }
    let t = &rest[1..];
    // HH:MM
    if t.len() < 5 || !digits(&t[0..2]) || t[2] != b':' || !digits(&t[3..5]) {
        return None;
    }
    let mut i = 5;
    if i < t.len() && t[i] == b':' {
        if t.len() < i + 3 || !digits(&t[i + 1..i + 3]) {
            return None;
        }
        i += 3;
        if i < t.len() && t[i] == b'.' {
            let start = i + 1;
            let mut j = start;
            while j < t.len() && t[j].is_ascii_digit() {
                j += 1;
            }
            if j == start {
                return None;
            }
            i = j;
        }
    }
    let zone = &t[i..];
    let ok = zone.is_empty()
        || zone == b"Z"
        || (zone.len() == 6
            && matches!(zone[0], b'+' | b'-')
            && digits(&zone[1..3])
            && zone[3] == b':'
            && digits(&zone[4..6]));
    ok.then(|| date.to_string())
}

/// Percent-decodes `s`; `None` when the result is not valid UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

pub(super) fn has_scheme(dest: &str) -> bool {
    let b = dest.as_bytes();
    if b.is_empty() || !b[0].is_ascii_alphabetic() {
        return false;
    }
    for &c in &b[1..] {
        if c == b':' {
            return true;
        }
        if !(c.is_ascii_alphanumeric() || c == b'+' || c == b'.' || c == b'-') {
            return false;
        }
    }
    false
}

/// The bundle path of a destination (cut at `#` and `?`) that needs no decoding and no
/// normalisation: non-empty ASCII without `%`, from a document whose folder has no empty,
/// `.` or `..` segment. `Some(None)` when `..` climbs out of the bundle; `None` sends the
/// destination the long way, which gives the same result for these.
fn plain_target(cut: &str, doc_path: &str) -> Option<Option<String>> {
    if cut.is_empty() || !cut.is_ascii() || cut.contains('%') {
        return None;
    }
    let dir = match doc_path.rsplit_once('/') {
        _ if cut.starts_with('/') => "",
        None => "",
        Some((dir, _)) => {
            if segments(dir).any(|seg| matches!(seg, b"" | b"." | b"..")) {
                return None;
            }
            dir
        }
    };
    // The folder, then each segment: `..` drops the last one, empty and `.` ones are skipped.
    let mut path = String::with_capacity(dir.len() + cut.len() + 4);
    path.push_str(dir);
    for seg in segments(cut) {
        match seg {
            b"" | b"." => {}
            b".." => {
                if path.is_empty() {
                    return Some(None);
                }
                let last = path.bytes().rposition(|c| c == b'/').unwrap_or(0);
                path.truncate(last);
            }
            s => {
                if !path.is_empty() {
                    path.push('/');
                }
                // ASCII (checked above), so any byte range is a str.
                path.push_str(std::str::from_utf8(s).unwrap_or_default());
            }
        }
    }
    if path.is_empty() {
        return Some(None);
    }
    if !crate::validate::ends_with_md(&path) {
        path.push_str(".md");
    }
    Some(Some(path))
}

/// The `/`-separated segments of an ASCII path, as bytes (a plain loop: the paths are a
/// few dozen bytes, too short for a searcher's setup to pay).
fn segments(s: &str) -> impl Iterator<Item = &[u8]> {
    s.as_bytes().split(|&c| c == b'/')
}

/// Resolves a Markdown destination against the linking document (compile.md §6.2 rules
/// 3–6). `None` means the link is skipped; `Some(None)` means it climbed out of the bundle.
pub(super) fn markdown_target(dest: &str, doc_path: &str) -> Option<Option<String>> {
    if has_scheme(dest) || dest.starts_with('#') {
        return None;
    }
    // Cut at the first `#`, then at the first `?`: at the first of either.
    let cut = &dest[..dest
        .bytes()
        .position(|c| c == b'#' || c == b'?')
        .unwrap_or(dest.len())];
    if let Some(target) = plain_target(cut, doc_path) {
        return Some(target);
    }
    let decoded = percent_decode(cut).unwrap_or_else(|| cut.to_string());
    if decoded.is_empty() {
        return None;
    }
    let decoded = crate::validate::nfc(&decoded);
    let mut segs: Vec<&str> = Vec::new();
    if !decoded.starts_with('/') {
        if let Some((dir, _)) = doc_path.rsplit_once('/') {
            segs.extend(dir.split('/'));
        }
    }
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if segs.pop().is_none() {
                    return Some(None);
                }
            }
            s => segs.push(s),
        }
    }
    if segs.is_empty() {
        return Some(None);
    }
    let mut path = segs.join("/");
    if !crate::validate::ends_with_md(&path) {
        path.push_str(".md");
    }
    Some(Some(path))
}

/// Parses one document on its own. `text` is the exact stored text; `width` the summary
/// width (120 for stored tenants).
pub fn parse_document(path: &str, text: &str, width: usize) -> ParsedDoc {
    parse_with(path, text, width, true)
}

/// The same pass as [`parse_document`] without its fast paths: every frontmatter parsed by
/// `yaml_serde`, every body by pulldown-cmark. It exists for differential tests and
/// benchmarks; the results are equal.
#[doc(hidden)]
pub fn parse_document_reference(path: &str, text: &str, width: usize) -> ParsedDoc {
    parse_with(path, text, width, false)
}

/// The frontmatter `description` of a document as the compiler reads it (flattened; `None`
/// when absent or empty): the full text the `summary` cell is cut from.
pub fn frontmatter_description(text: &str) -> Option<String> {
    let bomless = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (inner, _) = split_frontmatter(bomless)?;
    let fields = match front::fast(inner) {
        Some(f) => f,
        None => yaml_fields(inner, &mut Vec::new()),
    };
    field_str(&fields.description)
        .filter(|d| !d.is_empty())
        .map(flatten)
}

/// The frontmatter fields through `yaml_serde`, pushing the diagnostic of a frontmatter
/// that is not a mapping or not valid YAML.
fn yaml_fields(inner: &str, head_diagnostics: &mut Vec<String>) -> Fields<'static> {
    if yaml_is_blank(inner) {
        return Fields::default();
    }
    // Nesting and aliases that would make the parser's work unbounded end here, at once.
    if let Some(d) = super::guard::check(inner) {
        head_diagnostics.push(d);
        return Fields::default();
    }
    match yaml_serde::from_str::<yaml_serde::Value>(inner) {
        Ok(yaml_serde::Value::Mapping(m)) => return front::from_yaml(&m),
        Ok(yaml_serde::Value::Tagged(t)) => {
            if let yaml_serde::Value::Mapping(m) = t.value {
                return front::from_yaml(&m);
            }
            head_diagnostics.push("frontmatter is not a mapping".to_string());
        }
        Ok(_) => head_diagnostics.push("frontmatter is not a mapping".to_string()),
        Err(e) => head_diagnostics.push(format!(
            "invalid YAML frontmatter: {}",
            flatten(&e.to_string())
        )),
    }
    Fields::default()
}

fn field_str<'a>(f: &'a Option<Field<'_>>) -> Option<&'a str> {
    f.as_ref().and_then(Field::as_str)
}

fn parse_with(path: &str, text: &str, width: usize, fast_path: bool) -> ParsedDoc {
    let bomless_start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let bomless = &text[bomless_start..];
    let mut head_diagnostics = Vec::new();
    let mut fields = Fields::default();
    let (has_fm, body_start) = match split_frontmatter(bomless) {
        Some((inner, body_off)) => {
            fields = match fast_path.then(|| front::fast(inner)).flatten() {
                Some(f) => f,
                None => yaml_fields(inner, &mut head_diagnostics),
            };
            (true, bomless_start + body_off)
        }
        None => (false, bomless_start),
    };
    let body = &text[body_start..];

    let kind = field_str(&fields.kind)
        .map(kind_slug)
        .unwrap_or_else(|| "-".into());
    if !has_fm {
        head_diagnostics.push(super::NO_FRONTMATTER.to_string());
    } else if kind == "-" {
        head_diagnostics.push("missing required frontmatter field \"type\"".to_string());
    }
    let cell = |f: &Option<Field<'_>>| -> String {
        let v = field_str(f).map(flatten).unwrap_or_default();
        if v.is_empty() {
            "-".into()
        } else {
            v
        }
    };
    let grain = cell(&fields.grain);
    let mut status = cell(&fields.status);
    if status.eq_ignore_ascii_case("current") || status.eq_ignore_ascii_case("stable") {
        status = "-".into();
    }
    let fm_title = field_str(&fields.title)
        .map(flatten)
        .filter(|t| !t.is_empty());
    let (stale_after, stale_after_diagnostic) = match &fields.stale_after {
        None => (None, false),
        Some(Field::Str(s)) => match stale_date(s.trim()) {
            Some(d) => (Some(d), false),
            None => (None, true),
        },
        Some(Field::Other) => (None, true),
    };
    let description = field_str(&fields.description).filter(|d| !d.is_empty());

    // The whole text's map first: when the text is ASCII, so is its body, without a second
    // pass over it.
    let source_map = Utf16Map::new(text);
    let body_map = if source_map.is_ascii() {
        Utf16Map::ascii(body.len())
    } else {
        Utf16Map::new(body)
    };
    let scan = scan_body(
        body,
        path,
        &body_map,
        !has_fm,
        description.is_none(),
        fast_path,
    );
    let summary_src = match description {
        Some(d) => flatten(d),
        None => flatten(&scan.first_sentence),
    };
    let (summary, summary_source) = if summary_src.is_empty() {
        ("-".to_string(), None)
    } else if utf16_len(&summary_src) <= width {
        (summary_src, None)
    } else {
        (truncate_summary(&summary_src, width), Some(summary_src))
    };
    let title = if has_fm {
        fm_title
    } else {
        scan.first_heading.filter(|t| !t.is_empty())
    };
    let body_start16 = source_map.to_u16(text, body_start);

    ParsedDoc {
        kind,
        status,
        grain,
        summary,
        summary_source,
        title,
        stale_after,
        sections: scan.sections.into(),
        body_start,
        body_start16,
        body_map,
        source_map,
        links: scan.links.into(),
        head_diagnostics,
        stale_after_diagnostic,
    }
}

struct BodyScan {
    sections: Vec<Section>,
    links: Vec<RawLink>,
    first_sentence: String,
    first_heading: Option<String>,
}

/// The first sentence of a candidate line (compile.md §3.2.1).
pub(super) fn first_sentence(line: &str) -> &str {
    let mut it = line.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if matches!(c, '.' | '!' | '?') {
            match it.peek() {
                None => return line[..i + 1].trim(),
                Some((_, n)) if n.is_whitespace() => return line[..i + 1].trim(),
                _ => {}
            }
        }
    }
    line.trim()
}

fn line_start(body: &str, at: usize) -> usize {
    body.as_bytes()[..at]
        .iter()
        .rposition(|&c| c == b'\n' || c == b'\r')
        .map_or(0, |p| p + 1)
}

fn level_num(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Scans the body: sections, links, and (when `want_heading_title`) the first heading's
/// text, and (when `want_sentence`) the first sentence for the summary. With `fast_path`,
/// a body in the subset of [`super::body`] is read without the parser, to the same result.
fn scan_body(
    body: &str,
    doc_path: &str,
    map: &Utf16Map,
    want_heading_title: bool,
    want_sentence: bool,
    fast_path: bool,
) -> BodyScan {
    let found = fast_path
        .then(|| super::body::scan(body, doc_path, want_heading_title, want_sentence))
        .flatten()
        .unwrap_or_else(|| scan_events(body, doc_path, want_heading_title, want_sentence));
    BodyScan {
        sections: build_sections(body, map, found.headings),
        links: found.links,
        first_sentence: found.first_sentence,
        first_heading: found.first_heading,
    }
}

/// What [`scan_body`] reads, from pulldown-cmark's events.
pub(super) fn scan_events(
    body: &str,
    doc_path: &str,
    want_heading_title: bool,
    want_sentence: bool,
) -> Found {
    // Containers that hide headings and summary lines.
    let mut quote_depth = 0usize; // block quotes and footnote definitions
    let mut item_depth = 0usize;
    let mut image_depth = 0usize;
    let mut para_open = false;
    // Heading being read: (level, byte line start, top-level?); its plain text.
    let mut heading: Option<(u8, usize, bool)> = None;
    let mut heading_text = String::new();
    // Top-level headings: (level, byte line start, base slug).
    let mut headings: Vec<(u8, usize, String)> = Vec::new();
    let mut first_heading: Option<String> = None;
    let mut links = Vec::new();
    // Already "found" when not wanted: no paragraph becomes a candidate.
    let mut first_sentence_text: Option<String> = (!want_sentence).then(String::new);
    // Current candidate paragraph: byte start and end of its inline text.
    let mut cand: Option<(usize, usize)> = None;

    let try_candidate = |range: (usize, usize), found: &mut Option<String>| {
        if found.is_some() {
            return;
        }
        for line in body[range.0..range.1].split(['\n', '\r']) {
            let t = line.trim();
            if t.is_empty() || t.starts_with("![") || t.starts_with('|') {
                continue;
            }
            *found = Some(first_sentence(line).to_string());
            return;
        }
    };

    for (event, range) in Parser::new_ext(body, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_)) | Event::Start(Tag::FootnoteDefinition(_)) => {
                quote_depth += 1
            }
            Event::End(TagEnd::BlockQuote(_)) | Event::End(TagEnd::FootnoteDefinition) => {
                quote_depth -= 1
            }
            Event::Start(Tag::Item) => item_depth += 1,
            Event::End(TagEnd::Item) => {
                if let Some(c) = cand.take() {
                    try_candidate(c, &mut first_sentence_text);
                }
                item_depth -= 1
            }
            Event::Start(Tag::Paragraph) => {
                para_open = true;
                if quote_depth == 0 && first_sentence_text.is_none() {
                    cand = Some((range.start, range.end));
                }
            }
            Event::End(TagEnd::Paragraph) => {
                para_open = false;
                if let Some(c) = cand.take() {
                    try_candidate(c, &mut first_sentence_text);
                }
            }
            Event::Start(Tag::Heading { level, .. }) => {
                let top = quote_depth == 0 && item_depth == 0;
                heading = Some((level_num(level), line_start(body, range.start), top));
                heading_text.clear();
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, top)) = heading.take() {
                    if top {
                        if first_heading.is_none() && want_heading_title {
                            first_heading = Some(flatten(&heading_text));
                        }
                        headings.push((level, start, section_slug(&heading_text)));
                    }
                }
            }
            Event::Start(Tag::Image { .. }) => image_depth += 1,
            Event::End(TagEnd::Image) => image_depth -= 1,
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) if image_depth == 0 => match link_type {
                LinkType::Autolink | LinkType::Email => {}
                LinkType::WikiLink { .. } => {
                    let text = dest_url.to_string();
                    let target = text.split('#').next().unwrap_or("");
                    if !target.is_empty() && !has_scheme(target) {
                        links.push(RawLink::Wiki {
                            target: crate::validate::nfc(target),
                            text,
                        });
                    }
                }
                _ => {
                    if let Some(target) = markdown_target(&dest_url, doc_path) {
                        links.push(RawLink::Markdown {
                            dest: dest_url.to_string(),
                            target,
                        });
                    }
                }
            },
            Event::Text(t) | Event::Code(t) => {
                if heading.is_some() {
                    heading_text.push_str(&t);
                }
                if !para_open && item_depth > 0 && quote_depth == 0 && heading.is_none() {
                    // Tight list items hold their text without a paragraph.
                    match cand.as_mut() {
                        Some(c) => c.1 = range.end,
                        None if first_sentence_text.is_none() => {
                            cand = Some((range.start, range.end))
                        }
                        None => {}
                    }
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if heading.is_some() {
                    heading_text.push(' ');
                }
                if !para_open {
                    if let Some(c) = cand.as_mut() {
                        c.1 = range.end;
                    }
                }
            }
            Event::Start(Tag::List(_))
            | Event::Start(Tag::CodeBlock(_))
            | Event::Start(Tag::Table(_))
            | Event::Start(Tag::HtmlBlock) => {
                // A block inside a tight item ends the item's own text.
                if !para_open {
                    if let Some(c) = cand.take() {
                        try_candidate(c, &mut first_sentence_text);
                    }
                }
            }
            _ => {
                // Inline markup inside a tight item's text extends the candidate.
                if !para_open && item_depth > 0 && heading.is_none() {
                    if let Some(c) = cand.as_mut() {
                        if range.end > c.1 && range.start >= c.0 {
                            c.1 = range.end;
                        }
                    }
                }
            }
        }
    }
    if let Some(c) = cand.take() {
        try_candidate(c, &mut first_sentence_text);
    }

    Found {
        headings,
        links,
        first_sentence: first_sentence_text.unwrap_or_default(),
        first_heading,
    }
}

/// Sections from the top-level headings `(level, byte line start, base slug)`: the `body`
/// section before the first one when it holds text, then one per heading, running to the
/// next heading of the same or a higher level; repeated slugs get `_2`, `_3`, ….
fn build_sections(body: &str, map: &Utf16Map, headings: Vec<(u8, usize, String)>) -> Vec<Section> {
    let ends: Vec<usize> = (0..headings.len())
        .map(|i| {
            headings[i + 1..]
                .iter()
                .find(|h| h.0 <= headings[i].0)
                .map_or(body.len(), |h| h.1)
        })
        .collect();
    let mut out: Vec<Section> = Vec::with_capacity(headings.len() + 1);
    // Names taken so far ("body" always is); a set only for many headings.
    let mut big: Option<rustc_hash::FxHashSet<String>> = (headings.len() > 32).then(|| {
        let mut set = rustc_hash::FxHashSet::default();
        set.insert("body".to_string());
        set
    });
    let mut next_suffix: rustc_hash::FxHashMap<String, usize> = rustc_hash::FxHashMap::default();
    let first = headings.first().map_or(body.len(), |h| h.1);
    if !body[..first].trim().is_empty() {
        out.push(Section {
            name: "body".into(),
            start: 0,
            end: map.to_u16(body, first),
        });
    }
    for ((_, start, base), end) in headings.into_iter().zip(ends) {
        let used =
            |out: &[Section], big: &Option<rustc_hash::FxHashSet<String>>, name: &str| match big {
                Some(set) => set.contains(name),
                None => name == "body" || out.iter().any(|s| s.name == name),
            };
        let name = if used(&out, &big, &base) {
            // The suffixes below the last one given to this base are all taken (names are
            // never freed), so the search resumes there: 100,000 equal headings stay linear.
            let mut n = next_suffix.get(&base).copied().unwrap_or(2);
            loop {
                let cand = format!("{base}_{n}");
                if !used(&out, &big, &cand) {
                    next_suffix.insert(base.clone(), n + 1);
                    break cand;
                }
                n += 1;
            }
        } else {
            base
        };
        if let Some(set) = big.as_mut() {
            set.insert(name.clone());
        }
        out.push(Section {
            name,
            start: map.to_u16(body, start),
            end: map.to_u16(body, end),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_target_examples() {
        let t = |cut: &str, doc: &str| plain_target(cut, doc);
        let some = |p: &str| Some(Some(p.to_string()));
        assert_eq!(t("a/b.md", "x/d.md"), some("x/a/b.md"));
        assert_eq!(t("a/b", "d.md"), some("a/b.md"));
        assert_eq!(t("/a", "x/d.md"), some("a.md"));
        assert_eq!(t("../a.md", "x/y/d.md"), some("x/a.md"));
        assert_eq!(t("./a.md", "x/d.md"), some("x/a.md"));
        assert_eq!(t("a//b.md", "x/d.md"), some("x/a/b.md"));
        assert_eq!(t("../../a.md", "x/d.md"), Some(None));
        assert_eq!(t("..", "x/d.md"), Some(None));
        assert_eq!(t("/", "x/d.md"), Some(None));
        assert_eq!(t("a%20b.md", "x/d.md"), None);
        assert_eq!(t("é.md", "x/d.md"), None);
        assert_eq!(t("a.md", "x/../d.md"), None);
        assert_eq!(t("a.md", "/d.md"), None);
        assert_eq!(t("", "x/d.md"), None);
    }

    proptest! {
        #[test]
        fn ascii_slugs_match_the_general_ones(s in "[ -~]{0,16}") {
            prop_assert_eq!(
                ascii_slug(&s, "-"),
                slug(&s, |c| c.is_ascii_lowercase() || c.is_ascii_digit(), "-")
            );
            prop_assert_eq!(ascii_slug(&s, "body"), slug(&s, is_letter_or_number, "body"));
        }

        #[test]
        fn plain_targets_match_the_long_way(
            dest in "(/|\\./|\\.\\./)?([a-zA-Z_.%2]{0,3}/){0,3}[a-zA-Z_.%]{0,4}(\\.md)?",
            doc in "(/?)([ab.]{0,2}/){0,2}d\\.md",
        ) {
            if let Some(fast) = plain_target(&dest, &doc) {
                // The long way: decode, normalise, walk the segments.
                let decoded = percent_decode(&dest).unwrap_or_else(|| dest.clone());
                let decoded = crate::validate::nfc(&decoded);
                let mut segs: Vec<&str> = Vec::new();
                if !decoded.starts_with('/') {
                    if let Some((dir, _)) = doc.rsplit_once('/') {
                        segs.extend(dir.split('/'));
                    }
                }
                let mut out = false;
                for seg in decoded.split('/') {
                    match seg {
                        "" | "." => {}
                        ".." => {
                            if segs.pop().is_none() {
                                out = true;
                                break;
                            }
                        }
                        s => segs.push(s),
                    }
                }
                let want = if out || segs.is_empty() {
                    None
                } else {
                    let mut path = segs.join("/");
                    if !crate::validate::ends_with_md(&path) {
                        path.push_str(".md");
                    }
                    Some(path)
                };
                prop_assert_eq!(fast, want);
            }
        }
    }
}
