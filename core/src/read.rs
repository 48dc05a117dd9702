//! `get`: batched, sliced reads of concept bodies and sources, and their rendered frames
//! (read.md §3–§4).
//!
//! [`get`] answers one [`GetResult`] that keeps every requested id once, in request order,
//! with its [`Outcome`]: a [`Slice`], a missing section, or no such concept. The library view
//! ([`GetResult::slices`]) leaves the last two out, as read.md §3.1 says; the renderers use
//! them: [`render_mcp`] for the MCP tool (the `no section` and `@@ not found` blocks) and
//! [`render_cli`] for the CLI (found ids only, with [`GetResult::missing`] for the warnings).
//!
//! Every offset is in UTF-16 units of the addressed text. Slices are cut through the
//! concept's [`Utf16Map`], so no call allocates per body, and no
//! slice ever splits a surrogate pair.

use crate::compile::{Concept, Model};
use crate::hash::source_hash;
use crate::text::{utf16_len, Utf16Map};
use crate::validate::nfc;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::HashSet;

/// The find window width when no `limit` is given (read.md §3.2).
pub const FIND_WINDOW: usize = 2_000;

/// The most match offsets a slice reports (the match cap, read.md §3.2).
pub const MATCH_CAP: usize = 20;

/// The MCP `get` tool's default `limit`, applied when the agent gives neither `limit` nor
/// `find` (read.md §3.3). The library and the CLI have no default cap.
pub const MCP_DEFAULT_LIMIT: u64 = 15_000;

/// The options of one `get` call; they apply to every id (read.md §3.1).
///
/// `offset` and `limit` are non-negative by type. A host that receives JS or JSON numbers
/// floors them and maps negatives to 0 before building this; values beyond `usize` clamp.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetOptions {
    /// A section name; absent addresses the whole body.
    pub section: Option<String>,
    /// Start of the slice without `find`; ignored with a non-empty `find`.
    pub offset: Option<u64>,
    /// The slice length, or the find window width.
    pub limit: Option<u64>,
    /// A literal phrase; an empty one counts as none.
    pub find: Option<String>,
    /// Address the whole stored text instead of the body.
    pub source: bool,
}

impl GetOptions {
    /// The non-empty `find` phrase, if any.
    pub fn find_phrase(&self) -> Option<&str> {
        self.find.as_deref().filter(|f| !f.is_empty())
    }

    /// These options with the MCP default `limit` applied: [`MCP_DEFAULT_LIMIT`] when
    /// neither `limit` nor a non-empty `find` is given (read.md §3.3).
    pub fn with_mcp_default(mut self) -> GetOptions {
        if self.limit.is_none() && self.find_phrase().is_none() {
            self.limit = Some(MCP_DEFAULT_LIMIT);
        }
        self
    }
}

/// An `offset` or `limit` from a JS or JSON number, as the library and HTTP read them
/// (read.md §3.1.4): floored, negatives and NaN as 0, values beyond `u64` saturated.
pub fn count_from_number(x: f64) -> u64 {
    // `as` from f64 truncates toward zero, saturates, and maps NaN to 0: for non-negative
    // values truncation is the floor.
    x as u64
}

/// Where a `source: true` slice comes from (read.md §3.1.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRef<'a> {
    /// The bundle name.
    pub bundle: &'a str,
    /// The bundle-relative path.
    pub path: &'a str,
    /// The source hash: SHA-256 of the stored text, 64 lowercase hex characters.
    pub hash: String,
}

/// One slice of an addressed text (read.md §3.2). Offsets are UTF-16 units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice<'a> {
    /// The returned part of the addressed text, verbatim.
    pub text: &'a str,
    /// Start of `text` within the addressed text.
    pub start: usize,
    /// End of `text` within the addressed text.
    pub end: usize,
    /// Length of the addressed text.
    pub total: usize,
    /// With `find` only: the first [`MATCH_CAP`] match offsets.
    pub matches: Option<Vec<usize>>,
    /// With `find` only: the number of all matches.
    pub match_count: Option<usize>,
    /// With `source: true` only: bundle, path and hash.
    pub source: Option<SourceRef<'a>>,
}

/// One slice of a `get` answer, owned: what the library's `get` returns for every
/// connection, local or remote. The fields of read.md §3.2 in the spec's order; the source
/// reference is flattened into `bundle`, `path` and `hash` (set with `source: true`). Its
/// JSON is the same as [`Slice`]'s.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnedSlice {
    /// The returned part of the addressed text.
    pub text: String,
    /// Its start within the addressed text, in UTF-16 units.
    pub start: usize,
    /// Its end.
    pub end: usize,
    /// The addressed text's length.
    pub total: usize,
    /// With `find`: the first match offsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<usize>>,
    /// With `find`: the number of matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_count: Option<usize>,
    /// With `source`: the bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// With `source`: the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// With `source`: the source hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

impl From<&Slice<'_>> for OwnedSlice {
    fn from(s: &Slice<'_>) -> OwnedSlice {
        OwnedSlice {
            text: s.text.to_string(),
            start: s.start,
            end: s.end,
            total: s.total,
            matches: s.matches.clone(),
            match_count: s.matches.as_ref().map(|m| s.match_count.unwrap_or(m.len())),
            bundle: s.source.as_ref().map(|r| r.bundle.to_string()),
            path: s.source.as_ref().map(|r| r.path.to_string()),
            hash: s.source.as_ref().map(|r| r.hash.clone()),
        }
    }
}

impl OwnedSlice {
    /// The slice as [`Slice`], borrowing this one's text, for the renderers.
    pub fn as_slice(&self) -> Slice<'_> {
        Slice {
            text: &self.text,
            start: self.start,
            end: self.end,
            total: self.total,
            matches: self.matches.clone(),
            match_count: self.match_count,
            source: self.source_ref(),
        }
    }

    /// The source reference of a slice read with `source: true` (all three fields set).
    pub(crate) fn source_ref(&self) -> Option<SourceRef<'_>> {
        match (&self.bundle, &self.path, &self.hash) {
            (Some(bundle), Some(path), Some(hash)) => Some(SourceRef {
                bundle,
                path,
                hash: hash.clone(),
            }),
            _ => None,
        }
    }
}

impl Slice<'_> {
    /// Whether the slice is a part of the addressed text (`start > 0` or `end < total`).
    pub fn is_partial(&self) -> bool {
        self.start > 0 || self.end < self.total
    }
}

impl Serialize for Slice<'_> {
    /// The JSON form, keys in the docs' order: `text`, `start`, `end`, `total`, then
    /// `matches` and `matchCount` with `find`, then `bundle`, `path`, `hash` with `source`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n =
            4 + 2 * usize::from(self.matches.is_some()) + 3 * usize::from(self.source.is_some());
        let mut m = s.serialize_map(Some(n))?;
        m.serialize_entry("text", self.text)?;
        m.serialize_entry("start", &self.start)?;
        m.serialize_entry("end", &self.end)?;
        m.serialize_entry("total", &self.total)?;
        if let Some(matches) = &self.matches {
            m.serialize_entry("matches", matches)?;
            m.serialize_entry("matchCount", &self.match_count.unwrap_or(matches.len()))?;
        }
        if let Some(src) = &self.source {
            m.serialize_entry("bundle", src.bundle)?;
            m.serialize_entry("path", src.path)?;
            m.serialize_entry("hash", &src.hash)?;
        }
        m.end()
    }
}

/// What one requested id came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// The concept exists and has the addressed text.
    Found(Slice<'a>),
    /// The concept exists but has no section of the requested name.
    NoSection {
        /// The concept's section names, in table order.
        sections: Vec<&'a str>,
        /// With `source: true`: bundle, path and hash, for the frame.
        source: Option<SourceRef<'a>>,
    },
    /// No concept has this id.
    NotFound,
}

/// One distinct requested id and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The id, NFC-normalised.
    pub id: String,
    /// What it came to.
    pub outcome: Outcome<'a>,
}

/// The answer to one `get` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetResult<'a> {
    /// Every distinct requested id (after NFC), in request order.
    pub entries: Vec<Entry<'a>>,
    /// The requested section, for the `no section` frames.
    pub section: Option<String>,
}

impl<'a> GetResult<'a> {
    /// The library result: found ids and their slices, in request order.
    pub fn slices(&self) -> impl Iterator<Item = (&str, &Slice<'a>)> {
        self.entries.iter().filter_map(|e| match &e.outcome {
            Outcome::Found(s) => Some((e.id.as_str(), s)),
            _ => None,
        })
    }

    /// The ids no concept has, in request order, each once (for `@@ not found`).
    pub fn not_found(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| e.outcome == Outcome::NotFound)
            .map(|e| e.id.as_str())
    }

    /// The ids without a slice, for whatever reason, in request order: the CLI's
    /// `warn: no such concept or section: <id>` lines (read.md §4.5).
    pub fn missing(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| !matches!(e.outcome, Outcome::Found(_)))
            .map(|e| e.id.as_str())
    }

    /// The number of slices.
    pub fn found(&self) -> usize {
        self.slices().count()
    }

    /// The JSON object id → slice of the library and HTTP (read.md §3.2), compact, in
    /// result order.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for GetResult<'_> {
    /// A map from id to slice, found ids only, in result order.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.found()))?;
        for (id, slice) in self.slices() {
            m.serialize_entry(id, slice)?;
        }
        m.end()
    }
}

/// Fetches slices of many concepts (read.md §3). Never fails: unknown ids and missing
/// sections are reported in the result, never as errors.
pub fn get<'a, S: AsRef<str>>(model: &'a Model, ids: &[S], opts: &GetOptions) -> GetResult<'a> {
    let mut seen: HashSet<String> = HashSet::with_capacity(ids.len());
    let mut entries = Vec::with_capacity(ids.len());
    for raw in ids {
        let id = nfc(raw.as_ref());
        if seen.contains(&id) {
            continue;
        }
        seen.insert(id.clone());
        let outcome = match model.concept(&id) {
            None => Outcome::NotFound,
            Some(c) => get_one(c, opts),
        };
        entries.push(Entry { id, outcome });
    }
    GetResult {
        entries,
        section: opts.section.clone(),
    }
}

fn source_ref<'a>(c: &'a Concept, opts: &GetOptions) -> Option<SourceRef<'a>> {
    opts.source.then(|| SourceRef {
        bundle: &c.bundle,
        path: &c.path,
        hash: source_hash(&c.text),
    })
}

fn clamp(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

fn get_one<'a>(c: &'a Concept, opts: &GetOptions) -> Outcome<'a> {
    let p = &*c.parsed;
    let (full, map, shift): (&str, &Utf16Map, usize) = if opts.source {
        (&c.text, &p.source_map, p.body_start16)
    } else {
        (c.body(), &p.body_map, 0)
    };
    let (u0, u1) = match &opts.section {
        None => (0, map.len16()),
        Some(name) => match p.sections.iter().find(|s| &s.name == name) {
            Some(s) => (s.start + shift, s.end + shift),
            None => {
                return Outcome::NoSection {
                    sections: p.sections.iter().map(|s| s.name.as_str()).collect(),
                    source: source_ref(c, opts),
                }
            }
        },
    };
    let b0 = map.to_byte(full, u0);
    let b1 = map.to_byte(full, u1);
    let addr = Addressed {
        full,
        map,
        u0,
        b0,
        text: &full[b0..b1],
        total: u1.saturating_sub(u0),
    };
    let mut slice = match opts.find_phrase() {
        None => {
            let start = clamp(opts.offset.unwrap_or(0)).min(addr.total);
            let end = match opts.limit {
                None => addr.total,
                Some(l) => addr.total.min(start.saturating_add(clamp(l))),
            };
            addr.slice(start, end)
        }
        Some(phrase) => {
            let (matches, count) = find_matches(addr.text, phrase);
            match matches.first() {
                None => Slice {
                    text: "",
                    start: 0,
                    end: 0,
                    total: addr.total,
                    matches: Some(Vec::new()),
                    match_count: Some(0),
                    source: None,
                },
                Some(&m) => {
                    let w = opts.limit.map_or(FIND_WINDOW, clamp);
                    let half = w.saturating_sub(utf16_len(phrase)) / 2;
                    let end = addr.total.min(m.saturating_sub(half).saturating_add(w));
                    let start = end.saturating_sub(w);
                    let mut s = addr.slice(start, end);
                    s.matches = Some(matches);
                    s.match_count = Some(count);
                    s
                }
            }
        }
    };
    slice.source = source_ref(c, opts);
    Outcome::Found(slice)
}

/// The addressed text of one concept: `text` is `full[b0..]` from unit `u0` on.
struct Addressed<'a> {
    full: &'a str,
    map: &'a Utf16Map,
    u0: usize,
    b0: usize,
    text: &'a str,
    total: usize,
}

impl<'a> Addressed<'a> {
    /// The char boundary at or before unit `u` of the addressed text, as `(unit, byte)`.
    fn floor(&self, u: usize) -> (usize, usize) {
        let b = self.map.to_byte(self.full, self.u0 + u);
        let back = self.map.to_u16(self.full, b) - self.u0;
        (back, b - self.b0)
    }

    /// The slice `[start, end)`, with `start` moved back and `end` moved forward off the
    /// second half of a surrogate pair (read.md §3.2). Requires `start <= end <= total`.
    fn slice(&self, start: usize, end: usize) -> Slice<'a> {
        let (start, bs) = self.floor(start);
        let (mut end16, mut be) = self.floor(end);
        if end16 < end {
            // `end` fell inside a pair: the pair's char is 2 units and 4 bytes.
            end16 += 2;
            be += 4;
        }
        Slice {
            text: &self.text[bs..be],
            start,
            end: end16,
            total: self.total,
            matches: None,
            match_count: None,
            source: None,
        }
    }
}

/// The first [`MATCH_CAP`] match offsets (UTF-16 units) of `phrase` in `text`, and the number
/// of all non-overlapping matches (read.md §3.2 rules 2–3). `phrase` must not be empty.
pub fn find_matches(text: &str, phrase: &str) -> (Vec<usize>, usize) {
    if let Some(needle) = lower_same_length(phrase) {
        if let Some(hay) = lower_same_length(text) {
            return collect_matches(&hay, &needle);
        }
    }
    collect_matches(text, phrase)
}

/// The Unicode lower case of `s` (as `str::to_lowercase`, final sigma included), or `None`
/// when it is not as long as `s` in UTF-16 units.
///
/// No char's lower case is shorter than the char (a test checks every char), so the length
/// is kept exactly when every char keeps its own: offsets then carry over from the
/// lower-cased text to `s`, and the first char that grows ends the scan.
fn lower_same_length(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let at = out.len();
        out.push_str(&rest[..ascii]);
        out[at..].make_ascii_lowercase();
        rest = &rest[ascii..];
        let Some(c) = rest.chars().next() else { break };
        if c == '\u{3A3}' {
            // Capital sigma depends on its context: leave it to the standard library.
            let lower = s.to_lowercase();
            return (utf16_len(&lower) == utf16_len(s)).then_some(lower);
        }
        let mut units = 0;
        for l in c.to_lowercase() {
            units += l.len_utf16();
            out.push(l);
        }
        if units != c.len_utf16() {
            return None;
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

fn collect_matches(hay: &str, needle: &str) -> (Vec<usize>, usize) {
    let mut offsets = Vec::new();
    let mut count = 0usize;
    let (mut last_b, mut last_u) = (0usize, 0usize);
    for (b, _) in hay.match_indices(needle) {
        if count < MATCH_CAP {
            last_u += utf16_len(&hay[last_b..b]);
            last_b = b;
            offsets.push(last_u);
        }
        count += 1;
    }
    (offsets, count)
}

/// Appends `@@ <id>` and, with `source`, ` <bundle>/<path> hash <hash>` (read.md §4.7).
fn push_frame_head(out: &mut String, id: &str, source: Option<&SourceRef<'_>>) {
    out.push_str("@@ ");
    out.push_str(id);
    if let Some(s) = source {
        out.push(' ');
        out.push_str(s.bundle);
        out.push('/');
        out.push_str(s.path);
        out.push_str(" hash ");
        out.push_str(&s.hash);
    }
}

fn push_range(out: &mut String, s: &Slice<'_>) {
    use std::fmt::Write as _;
    if s.is_partial() {
        let _ = write!(out, " [{}..{} of {}]", s.start, s.end, s.total);
    }
}

/// Appends one found id's block: its frame line, then `\n` and the text when not empty
/// (read.md §4.1–§4.3, §4.7).
pub fn push_slice_block(out: &mut String, id: &str, s: &Slice<'_>) {
    use std::fmt::Write as _;
    push_frame_head(out, id, s.source.as_ref());
    match &s.matches {
        None => push_range(out, s),
        Some(matches) => {
            let n = s.match_count.unwrap_or(matches.len());
            if n == 0 {
                let _ = write!(out, " no match in {} chars", s.total);
            } else {
                push_range(out, s);
                if n > matches.len() {
                    let _ = write!(out, " first {} of {n}", matches.len());
                } else {
                    let _ = write!(out, " {n}");
                }
                out.push_str(if n == 1 { " match at" } else { " matches at" });
                for m in matches {
                    let _ = write!(out, " {m}");
                }
            }
        }
    }
    if !s.text.is_empty() {
        out.push('\n');
        out.push_str(s.text);
    }
}

/// Appends `@@ <id> no section "<s>": <names>` (read.md §4.6).
fn push_no_section(
    out: &mut String,
    id: &str,
    section: &str,
    names: &[&str],
    source: Option<&SourceRef<'_>>,
) {
    push_frame_head(out, id, source);
    out.push_str(" no section \"");
    let spaced: String = section
        .chars()
        .map(|c| {
            if matches!(c, '\r' | '\n' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    out.push_str(&crate::bounds::quote(&spaced));
    out.push_str("\":");
    if names.is_empty() {
        out.push_str(" -");
    }
    for n in names {
        out.push(' ');
        out.push_str(n);
    }
}

/// The MCP `get` reply (read.md §4, agent.md §6.1): a block per found id and per id without
/// the section, in request order, then `@@ not found` with the unknown ids. Blocks are joined
/// by `\n`; there is no final `\n`. The caller applies the default cap when slicing (see
/// [`GetOptions::with_mcp_default`] and [`get_mcp`]).
pub fn render_mcp(result: &GetResult<'_>) -> String {
    let mut out = String::new();
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push('\n');
        }
    };
    for e in &result.entries {
        match &e.outcome {
            Outcome::Found(s) => {
                sep(&mut out);
                push_slice_block(&mut out, &e.id, s);
            }
            Outcome::NoSection { sections, source } => {
                sep(&mut out);
                let section = result.section.as_deref().unwrap_or_default();
                push_no_section(&mut out, &e.id, section, sections, source.as_ref());
            }
            Outcome::NotFound => {}
        }
    }
    let mut missing = result.not_found().peekable();
    if missing.peek().is_some() {
        sep(&mut out);
        out.push_str("@@ not found\n");
        for (i, id) in missing.enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&crate::bounds::quote(id));
        }
    }
    out
}

/// The CLI `get` output (read.md §4.5): found ids only, blocks joined by `\n`, no final
/// `\n` (the CLI adds one when the text is not empty). The caller warns about each id of
/// [`GetResult::missing`] and exits 1 when there is any.
pub fn render_cli(result: &GetResult<'_>) -> String {
    let mut out = String::new();
    for (i, (id, s)) in result.slices().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_slice_block(&mut out, id, s);
    }
    out
}

/// The whole MCP `get` tool over a model: the default cap, slicing and rendering.
pub fn get_mcp<S: AsRef<str>>(model: &Model, ids: &[S], opts: &GetOptions) -> String {
    render_mcp(&get(model, ids, &opts.clone().with_mcp_default()))
}

#[cfg(test)]
mod tests;
