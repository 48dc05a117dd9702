//! Derived records (engine.md §9.1 rule 4, docs/records.md "Derived record"): a served
//! state encoded so that opening a tenant needs neither its source blobs nor a compile.
//!
//! A derived record is keyed by the revision's recorded snapshot id and the compiler version
//! ([`derived_key`](super::derived_key)), and names the source state it was compiled from
//! (every bundle's name, bundle record digest and concept count), because two states can
//! share a snapshot id. Its header carries the SHA-256 of its payload, checked on every
//! load. Anything that does not check out (another format or compiler version, another
//! state, a wrong digest, a malformed payload) decodes to `None`: the engine then compiles
//! from the sources, so a derived record can never make a read differ or fail.
//!
//! The payload is stored in sections, each compressed on its own (LZ4 block format) when
//! that makes it smaller: the bundles and documents, the concepts in chunks of [`CHUNK`],
//! and the search index. So the chunks decompress and decode on every core (`par::map`),
//! and the index is decompressed only when it is decoded (beside the model for a host that
//! serves searches, on the first search otherwise, never by a one-shot command). The
//! documents' texts are not in it: a store that can hand out its source records in place
//! (the files stores: they are ranges of a pack) gives them to the engine at open, without a
//! copy, and a record for another store carries them after the payload. Either way each text
//! is covered by its source hash, which the payload holds, and is checked against it before
//! a read returns it or anything computed from it (`Served` keeps track). So opening hashes
//! the (compressed) compiled form and the index, not every text, and touches no text.
//!
//! The encoding is binary and canonical: one state gives one byte string. Integers are
//! little-endian `u32` (lengths, counts, offsets) or `u64`; a string is its `u32` byte
//! length, its UTF-8 bytes kept apart with the section's other strings; an optional string
//! is a `0` byte, or a `1` byte and the string; a digest is its 32 bytes. Each section of
//! the payload (the first, and each chunk of concepts) is the `u64` length of its strings'
//! bytes, those bytes (every string of the section, in the order they are read), then the
//! rest: so a decode checks a section's strings as UTF-8 at once rather than one by one
//! (docs/records.md, "Derived records").

use super::records::BundleRef;
use super::state::{BundleState, Doc, TenantState};
use super::store::Digest;
use super::Served;
use crate::bytes::{Bytes, Text};
use crate::compile::{Concept, Model, ParsedDoc, RawLink, Section};
use crate::lazy_list::LazyList;
use crate::snapshot::SnapshotTree;
use crate::text::Utf16Map;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The first bytes of every derived record.
pub const MAGIC: &[u8; 4] = b"LRDR";
/// The version of this encoding (not the compiler version, which the header also holds).
/// 2: the payload may be compressed, and the texts may be left to the store.
/// 3: the payload is stored in sections compressed one by one (the concepts in chunks of
/// [`CHUNK`], the index on its own).
/// 4: each section's strings are kept together, ahead of the rest of the section.
/// 5: the search index's posting lists give their lengths in bytes (index version 3), so
/// an open reads none of them.
pub const FORMAT: u32 = 5;
/// The header's length: magic, format, compiler version, recorded snapshot id, state
/// digest, stored payload digest, stored payload length, payload length, flags.
pub const HEADER: usize = 4 + 4 + 4 + 32 + 32 + 32 + 8 + 8 + 4;
/// Flag: the documents' texts follow the payload (else the store's source records are the
/// texts).
pub const TEXTS: u32 = 2;
/// How many concepts one chunk of the payload holds (the last one holds the rest).
pub const CHUNK: usize = 2048;
/// A document entry's flag: the document is a concept (not a navigation document).
const DOC_CONCEPT: u8 = 1;
/// A document entry's flag: its text is ASCII (its offset maps need no scan).
const DOC_ASCII: u8 = 2;

const STATE_TAG: &[u8] = b"langonrock derived state 1\n";

/// The digest that names a source state: SHA-256 over a tag and, per bundle in name order,
/// its name (length-prefixed), its bundle record digest and its concept count.
pub fn state_digest<'a>(bundles: impl Iterator<Item = (&'a str, &'a Digest, u64)>) -> Digest {
    let mut h = Sha256::new();
    h.update(STATE_TAG);
    for (name, record, concepts) in bundles {
        h.update((name.len() as u32).to_le_bytes());
        h.update(name.as_bytes());
        h.update(record.0);
        h.update(concepts.to_le_bytes());
    }
    let mut d = [0u8; 32];
    d.copy_from_slice(&h.finalize());
    Digest(d)
}

/// The state digest of a revision's bundle list.
pub fn revision_state(bundles: &[BundleRef]) -> Digest {
    state_digest(
        bundles
            .iter()
            .map(|b| (b.name.as_str(), &b.record, b.concepts)),
    )
}

fn served_state(state: &TenantState) -> Digest {
    state_digest(
        state
            .bundles
            .iter()
            .map(|(n, b)| (n.as_str(), &b.record, b.concepts)),
    )
}

// ---------------------------------------------------------------------------------------
// Encoding

/// A section's writer: its strings' bytes in one run (`s`, after 8 bytes kept for their
/// length), everything else in another (`b`); [`W::finish`] gives the section.
struct W {
    b: Vec<u8>,
    s: Vec<u8>,
}

impl W {
    fn with_capacity(n: usize) -> W {
        let mut s = Vec::with_capacity(n);
        s.extend_from_slice(&[0; 8]);
        W {
            b: Vec::with_capacity(n / 2),
            s,
        }
    }
    /// The section: the strings' length, the strings, the rest (appended to the strings'
    /// run, so only the rest is copied).
    fn finish(self) -> Vec<u8> {
        let W { b, mut s } = self;
        let n = (s.len() - 8) as u64;
        s[..8].copy_from_slice(&n.to_le_bytes());
        s.extend_from_slice(&b);
        s
    }
    fn u8(&mut self, v: u8) {
        self.b.push(v);
    }
    fn u32(&mut self, v: usize) {
        // Lengths and offsets of one document or list; a stored document is far smaller.
        self.b.extend_from_slice(&(v as u32).to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.b.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len());
        self.s.extend_from_slice(s.as_bytes());
    }
    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    fn digest(&mut self, d: &[u8; 32]) {
        self.b.extend_from_slice(d);
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len());
        for s in v {
            self.str(s);
        }
    }
}

/// Encodes `s` as the derived record of the revision whose recorded snapshot id is
/// `recorded`. `index` is the encoded search index of `s` (search.md §8), if any. With
/// `texts`, the documents' texts follow the payload; without, opening asks the store for the
/// source records (a store that hands them out in place: docs/records.md).
pub fn encode(s: &Served, recorded: &Digest, index: Option<&[u8]>, texts: bool) -> Vec<u8> {
    let mut w = W::with_capacity(s.model.concepts().len() * 96 + 64);
    let mut text_bytes: Vec<&[u8]> = Vec::new();

    // The first section: the concept count, the snapshot root, whether an index follows,
    // then the bundles and documents, by name and path.
    w.u32(s.model.concepts().len());
    w.digest(&s.tree.root());
    w.u8(u8::from(index.is_some()));
    let mut at: rustc_hash::FxHashMap<(&str, &str), (usize, usize)> = Default::default();
    w.u32(s.state.bundles.len());
    for (bi, (name, b)) in s.state.bundles.iter().enumerate() {
        w.str(name);
        w.digest(&b.record.0);
        w.u64(b.concepts);
        w.u32(b.docs.len());
        for (di, (path, d)) in b.docs.iter().enumerate() {
            w.str(path);
            w.digest(&d.hash.0);
            w.u32(d.text.len());
            if texts {
                text_bytes.push(d.text.as_bytes());
            }
            let ascii = match &d.parsed {
                Some(p) => p.source_map.is_ascii(),
                None => d.text.as_bytes().is_ascii(),
            };
            w.u8(if d.parsed.is_some() { DOC_CONCEPT } else { 0 }
                | if ascii { DOC_ASCII } else { 0 });
            if d.parsed.is_some() {
                at.insert((name.as_str(), path.as_str()), (bi, di));
            }
        }
    }
    let mut sections: Vec<Vec<u8>> = vec![w.finish()];

    // The concepts in model order, each with its snapshot leaf, in chunks of CHUNK.
    let concepts: Vec<(&Arc<Concept>, &[u8; 32])> =
        s.model.concepts().iter().zip(s.tree.leaves()).collect();
    for chunk in concepts.chunks(CHUNK) {
        let mut w = W::with_capacity(chunk.len() * 512);
        for (c, leaf) in chunk {
            let (bi, di) = at
                .get(&(c.bundle.as_str(), c.path.as_str()))
                .copied()
                .unwrap_or((u32::MAX as usize, 0));
            encode_concept(&mut w, c, leaf, bi, di);
        }
        sections.push(w.finish());
    }

    // Each section compressed on its own when that makes it smaller (in parallel: each
    // result depends on its section alone).
    let mut parts: Vec<&[u8]> = sections.iter().map(Vec::as_slice).collect();
    parts.extend(index);
    let packed: Vec<Option<Vec<u8>>> = crate::par::map(&parts, |raw| {
        let p = lz4_flex::block::compress(raw);
        (p.len() < raw.len()).then_some(p)
    });
    let mut stored = Vec::with_capacity(4 + parts.len() * 16);
    stored.extend_from_slice(&(parts.len() as u32).to_le_bytes());
    let mut raw_total = 0u64;
    for (raw, p) in parts.iter().zip(&packed) {
        raw_total += raw.len() as u64;
        stored.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        let len = p.as_ref().map_or(raw.len(), Vec::len);
        stored.extend_from_slice(&(len as u64).to_le_bytes());
    }
    for (raw, p) in parts.iter().zip(&packed) {
        stored.extend_from_slice(p.as_deref().unwrap_or(raw));
    }
    let flags = if texts { TEXTS } else { 0 };

    let total: usize = text_bytes.iter().map(|t| t.len()).sum();
    let mut out = Vec::with_capacity(HEADER + stored.len() + total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&super::COMPILER_VERSION.to_le_bytes());
    out.extend_from_slice(&recorded.0);
    out.extend_from_slice(&served_state(&s.state).0);
    out.extend_from_slice(&Digest::of(&stored).0);
    out.extend_from_slice(&(stored.len() as u64).to_le_bytes());
    out.extend_from_slice(&raw_total.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&stored);
    for t in text_bytes {
        out.extend_from_slice(t);
    }
    out
}

/// One concept of a chunk: the positions of its bundle and document, its id and snapshot
/// leaf, its parse, its resolved links and its diagnostics.
fn encode_concept(w: &mut W, c: &Concept, leaf: &[u8; 32], bi: usize, di: usize) {
    w.u32(bi);
    w.u32(di);
    w.str(&c.id);
    w.digest(leaf);
    let p = &*c.parsed;
    w.str(&p.kind);
    w.str(&p.status);
    w.str(&p.grain);
    w.str(&p.summary);
    w.opt(p.summary_source.as_deref());
    w.opt(p.title.as_deref());
    w.opt(p.stale_after.as_deref());
    w.u32(p.sections.len());
    for sec in &p.sections {
        w.str(&sec.name);
        w.u32(sec.start);
        w.u32(sec.end);
    }
    w.u32(p.body_start);
    w.u32(p.links.len());
    for l in &p.links {
        match l {
            RawLink::Markdown { dest, target } => {
                w.u8(0);
                w.str(dest);
                w.opt(target.as_deref());
            }
            RawLink::Wiki { text, target } => {
                w.u8(1);
                w.str(text);
                w.str(target);
            }
        }
    }
    w.strs(&p.head_diagnostics);
    w.u8(u8::from(p.stale_after_diagnostic));
    w.strs(&c.links);
    w.strs(&c.diagnostics);
}

// ---------------------------------------------------------------------------------------
// Decoding

/// A decoded derived record: everything a served state holds, the search index still
/// encoded.
pub struct Decoded {
    pub(crate) model: Model,
    pub(crate) tree: SnapshotTree,
    pub(crate) state: TenantState,
    /// The index's section, not decompressed yet.
    pub(crate) index: Option<Packed>,
    /// The index, already decoded ([`Opened::decode_indexed`]).
    pub(crate) built: Option<Box<crate::search::Index>>,
    /// Whether the texts came from the store's source records (not from the record).
    pub(crate) external: bool,
}

impl Decoded {
    /// The encoded search index the record carries, if any (decompressed here).
    pub fn index_bytes(&self) -> Option<Bytes> {
        self.index.as_ref()?.unpack()
    }

    /// The number of concepts.
    pub fn concepts(&self) -> usize {
        self.model.concepts().len()
    }
}

/// One section of a derived record's payload as stored: LZ4-compressed when it is shorter
/// than the section, else the section itself (a range of the record).
#[derive(Clone, Debug)]
pub struct Packed {
    stored: Bytes,
    raw: usize,
}

impl Packed {
    /// The section's bytes: decompressed, or the stored range itself. `None` when they do
    /// not decompress to exactly the section's length.
    pub fn unpack(&self) -> Option<Bytes> {
        if self.stored.len() == self.raw {
            return Some(self.stored.clone());
        }
        let v = lz4_flex::block::decompress(&self.stored, self.raw).ok()?;
        (v.len() == self.raw).then(|| Bytes::from(v))
    }
}

/// A reader of a section (or of the header and the table, which hold no strings): `b` the
/// bytes other than the strings, `s` the section's strings, checked as UTF-8 at once.
struct R<'a> {
    b: &'a [u8],
    at: usize,
    s: &'a str,
    s_at: usize,
}

impl<'a> R<'a> {
    /// A reader of bytes that hold no strings.
    fn new(b: &'a [u8]) -> R<'a> {
        R {
            b,
            at: 0,
            s: "",
            s_at: 0,
        }
    }
    /// A reader of a section; `None` when its strings are not UTF-8 or are cut short.
    fn section(bytes: &'a [u8]) -> Option<R<'a>> {
        let mut r = R::new(bytes);
        let n = usize::try_from(r.u64()?).ok()?;
        let s = std::str::from_utf8(r.take(n)?).ok()?;
        Some(R {
            b: &bytes[r.at..],
            at: 0,
            s,
            s_at: 0,
        })
    }
    /// Whether every byte and every string of the section was read.
    fn done(&self) -> bool {
        self.at == self.b.len() && self.s_at == self.s.len()
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.at)?;
        self.at += 1;
        Some(v)
    }
    fn flag(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u32(&mut self) -> Option<usize> {
        let s = self.take(4)?;
        Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
    }
    fn u64(&mut self) -> Option<u64> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Some(u64::from_le_bytes(a))
    }
    /// A count of items of at least `min` bytes each, bounded by what is left.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.u32()?;
        (n.saturating_mul(min) <= self.b.len() - self.at).then_some(n)
    }
    fn str(&mut self) -> Option<&'a str> {
        let n = self.u32()?;
        let end = self.s_at.checked_add(n)?;
        // `get` refuses a range that does not start and end on characters.
        let v = self.s.get(self.s_at..end)?;
        self.s_at = end;
        Some(v)
    }
    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_string)
    }
    fn opt(&mut self) -> Option<Option<String>> {
        Some(if self.flag()? {
            Some(self.string()?)
        } else {
            None
        })
    }
    fn digest(&mut self) -> Option<[u8; 32]> {
        let mut d = [0u8; 32];
        d.copy_from_slice(self.take(32)?);
        Some(d)
    }
    /// A list read by `read` (checked, kept nowhere), left in `section` (the bytes this
    /// reader reads) to be decoded by `later` when first used.
    fn lazy<T>(
        &mut self,
        section: &Bytes,
        read: fn(&mut R<'a>, bool) -> Option<Vec<T>>,
        later: fn(&[u8], [u32; 3]) -> Vec<T>,
    ) -> Option<LazyList<T>> {
        let (at, s_at) = (u32::try_from(self.at).ok()?, u32::try_from(self.s_at).ok()?);
        read(self, false)?;
        let s_end = u32::try_from(self.s_at).ok()?;
        Some(LazyList::later(section.clone(), [at, s_at, s_end], later))
    }

    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.count(4)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.string()?);
        }
        Some(v)
    }
}

/// A derived record whose header and payload digest check out for a revision, its first
/// section decompressed: decode it with [`Opened::decode`], first fetching
/// [`Opened::sources`] when the texts are the store's.
#[derive(Debug)]
pub struct Opened {
    /// The first section: the concept count, the snapshot root, the index flag, the
    /// bundles and documents.
    head: Bytes,
    /// The concepts' chunks, as stored.
    chunks: Vec<Packed>,
    /// How many concepts the record holds.
    concepts: usize,
    index: Option<Packed>,
    texts: Option<Bytes>,
    /// From [`open_ahead`]: the payload digest's check and the index's decode, started
    /// at open, taken when the decode ends.
    ahead: Option<Ahead>,
}

/// What [`open_ahead`] starts beside the rest of an open: whether the stored payload's
/// digest holds, and the index decoded (when asked for and the digest holds).
type Ahead = crate::par::Later<(bool, Option<crate::search::Index>)>;

/// The length of the first section's fixed start: the concept count, the snapshot root and
/// the index flag.
const HEAD_START: usize = 4 + 32 + 1;

/// Checks a derived record against the revision it should serve (the format, the compiler
/// version, the recorded snapshot id, the source state, the stored payload's digest and
/// length, its table of sections) and decompresses its first section. `None` when anything
/// does not check out.
pub fn open(bytes: &Bytes, recorded: &Digest, bundles: &[BundleRef]) -> Option<Opened> {
    open_with(bytes, recorded, bundles, None)
}

/// [`open`], with the stored payload's digest checked on another core (native builds)
/// while the open goes on, and, with `index`, the search index decompressed and decoded
/// there after it: the store hands out the texts and the model decodes meanwhile. A digest
/// that does not hold makes the decode `None`, as [`open`] would have made the open: the
/// sections are only read before that, through the same checks as ever, and nothing they
/// give is served until the digest held (docs/records.md "Reading it").
pub fn open_ahead(
    bytes: &Bytes,
    recorded: &Digest,
    bundles: &[BundleRef],
    index: bool,
) -> Option<Opened> {
    open_with(bytes, recorded, bundles, Some(index))
}

/// [`open`] (`ahead` `None`) or [`open_ahead`] (`Some(index)`).
fn open_with(
    bytes: &Bytes,
    recorded: &Digest,
    bundles: &[BundleRef],
    ahead: Option<bool>,
) -> Option<Opened> {
    let b = bytes.as_slice();
    let mut r = R::new(b);
    if r.take(4)? != MAGIC
        || r.u32()? != FORMAT as usize
        || r.u32()? != super::COMPILER_VERSION as usize
        || r.digest()? != recorded.0
        || r.digest()? != revision_state(bundles).0
    {
        return None;
    }
    let digest = r.digest()?;
    let stored_len = usize::try_from(r.u64()?).ok()?;
    let raw_len = r.u64()?;
    let flags = r.u32()? as u32;
    if r.at != HEADER || flags & !TEXTS != 0 || b.len() - HEADER < stored_len {
        return None;
    }
    let stored = bytes.slice(HEADER..HEADER + stored_len)?;
    if ahead.is_none() && Digest::of(&stored).0 != digest {
        return None;
    }
    // The table: each section's length and stored length, then the sections.
    let mut t = R::new(stored.as_slice());
    let n = t.count(16)?;
    let mut sizes = Vec::with_capacity(n);
    for _ in 0..n {
        let raw = usize::try_from(t.u64()?).ok()?;
        let kept = usize::try_from(t.u64()?).ok()?;
        // LZ4 expands at most 255 times; a stored section is never longer than itself.
        if kept > raw || raw > kept.saturating_mul(255) {
            return None;
        }
        sizes.push((raw, kept));
    }
    let mut at = t.at;
    let mut total = 0u64;
    let mut sections = Vec::with_capacity(n);
    for (raw, kept) in sizes {
        let end = at.checked_add(kept)?;
        sections.push(Packed {
            stored: stored.slice(at..end)?,
            raw,
        });
        at = end;
        total += raw as u64;
    }
    if at != stored.len() || total != raw_len || sections.is_empty() {
        return None;
    }
    let mut sections = sections.into_iter();
    let head = sections.next()?.unpack()?;
    let mut h = R::section(&head)?;
    let concepts = h.u32()?;
    h.digest()?;
    let indexed = h.flag()?;
    let mut chunks: Vec<Packed> = sections.collect();
    let index = if indexed { chunks.pop() } else { None };
    if chunks.len() != concepts.div_ceil(CHUNK) || indexed != index.is_some() {
        return None;
    }
    let texts = if flags & TEXTS != 0 {
        Some(bytes.slice(HEADER + stored_len..b.len())?)
    } else if b.len() != HEADER + stored_len {
        return None;
    } else {
        None
    };
    let ahead = ahead.map(|with_index| {
        let index = index.as_ref().filter(|_| with_index).cloned();
        crate::par::Later::start(move || {
            if Digest::of(&stored).0 != digest {
                return (false, None);
            }
            (true, decode_index(index))
        })
    });
    Some(Opened {
        head,
        chunks,
        concepts,
        index,
        texts,
        ahead,
    })
}

/// A record's index section decompressed and decoded; `None` without one, or when it does
/// not decode (the section then stays as stored, and the first search builds an index).
fn decode_index(index: Option<Packed>) -> Option<crate::search::Index> {
    crate::search::Index::decode_shared(index?.unpack()?).ok()
}

impl Opened {
    /// A copy to decode once more (a benchmark decodes one record many times); `None` for a
    /// record from [`open_ahead`], whose digest check runs once, beside its one decode.
    pub fn again(&self) -> Option<Opened> {
        if self.ahead.is_some() {
            return None;
        }
        Some(Opened {
            head: self.head.clone(),
            chunks: self.chunks.clone(),
            concepts: self.concepts,
            index: self.index.clone(),
            texts: self.texts.clone(),
            ahead: None,
        })
    }

    /// The source hashes of every document when the texts are the store's source records
    /// (fetch them, then [`Opened::decode`]); `None` when the record carries them, or when
    /// the list does not decode (then decoding fails too).
    pub fn sources(&self) -> Option<Vec<Digest>> {
        if self.texts.is_some() {
            return None;
        }
        let mut r = R::section(&self.head)?;
        r.at = HEAD_START;
        let nb = r.count(4 + 32 + 8 + 4)?;
        let mut out = Vec::new();
        for _ in 0..nb {
            r.str()?;
            r.digest()?;
            r.u64()?;
            let nd = r.count(4 + 32 + 4 + 1)?;
            for _ in 0..nd {
                r.str()?;
                out.push(Digest(r.digest()?));
                r.u32()?;
                r.u8()?;
            }
        }
        Some(out)
    }

    /// Decodes the payload for the revision with bundle list `bundles` (the chunks of
    /// concepts on every core with the `parallel` feature). When the texts are the store's,
    /// `source` gives each document's source record by its position in
    /// [`Opened::sources`] and its hash (as the store handed it out, not yet checked: the
    /// engine checks a text before it serves it). `None` when anything
    /// does not decode exactly. The index stays as stored.
    pub fn decode(
        self,
        bundles: &[BundleRef],
        source: &dyn Fn(usize, &Digest) -> Option<Bytes>,
    ) -> Option<Decoded> {
        decode_payload(self, bundles, source)
    }

    /// [`Opened::decode`], with the search index decompressed and decoded beside it (on
    /// another core with the `parallel` feature), for a host whose first request may be a
    /// search. An index that does not decode to one of the model's size is left as
    /// stored (the first search then builds one).
    pub fn decode_indexed(
        self,
        bundles: &[BundleRef],
        source: &dyn Fn(usize, &Digest) -> Option<Bytes>,
    ) -> Option<Decoded> {
        // Opened ahead, the index is decoded there (when it was asked for); opened by
        // [`open`], whose digest held already, only the index is left to start beside.
        let mut o = self;
        if o.ahead.is_none() {
            let index = o.index.clone();
            o.ahead = Some(crate::par::Later::start(move || {
                (true, decode_index(index))
            }));
        }
        o.decode(bundles, source)
    }
}

/// Decodes a derived record that carries its texts, for the revision with `recorded`
/// snapshot id and bundle list `bundles`. `None` when it does not serve that revision or
/// fails any check.
pub fn decode(bytes: &[u8], recorded: &Digest, bundles: &[BundleRef]) -> Option<Decoded> {
    let o = open(&Bytes::from(bytes), recorded, bundles)?;
    o.texts.as_ref()?;
    o.decode(bundles, &|_, _| None)
}

/// A document as the first section gives it: its path and entry (its parse still `None`;
/// the chunks fill it in), whether its text is ASCII, whether it is a concept. Owned, so the
/// first section is freed before the chunks decode, and moved into its bundle's state at the
/// end (not copied).
struct DocIn {
    path: String,
    doc: Doc,
    ascii: bool,
    concept: bool,
}

/// A concept as its chunk gives it: its bundle's and document's positions, its snapshot
/// leaf, and the concept itself.
struct ConceptIn {
    bi: usize,
    di: usize,
    leaf: [u8; 32],
    concept: Arc<Concept>,
}

/// The first section's snapshot root, bundles and documents, checked against the revision's
/// bundle list (and, when the record carries the texts, against their total length): each
/// bundle's name and document list.
fn decode_head(
    head: &[u8],
    want: usize,
    bundles: &[BundleRef],
    texts: Option<&Bytes>,
    source: &dyn Fn(usize, &Digest) -> Option<Bytes>,
) -> Option<(Digest, Vec<String>, Vec<Vec<DocIn>>)> {
    let mut r = R::section(head)?;
    let nc = r.u32()?;
    let root = Digest(r.digest()?);
    r.flag()?;
    let mut t_at = 0usize;
    let nb = r.count(4 + 32 + 8 + 4)?;
    if nb != bundles.len() || nc != want {
        return None;
    }
    let mut docs: Vec<Vec<DocIn>> = Vec::with_capacity(nb);
    let mut names: Vec<String> = Vec::with_capacity(nb);
    let mut want_concepts = 0usize;
    // Each document's position in `Opened::sources`.
    let mut at = 0usize;
    for b in bundles {
        let name = r.str()?;
        let record = Digest(r.digest()?);
        let concepts = r.u64()?;
        if name != b.name || record != b.record || concepts != b.concepts {
            return None;
        }
        let nd = r.count(4 + 32 + 4 + 1)?;
        if nd == 0 {
            return None;
        }
        let mut list: Vec<DocIn> = Vec::with_capacity(nd);
        let mut in_bundle = 0u64;
        for _ in 0..nd {
            let path = r.str()?;
            if list.last().is_some_and(|d| d.path.as_str() >= path) {
                return None;
            }
            let hash = Digest(r.digest()?);
            let n = r.u32()?;
            let bytes = match texts {
                Some(t) => {
                    let b = t.slice(t_at..t_at.checked_add(n)?)?;
                    t_at += n;
                    b
                }
                None => source(at, &hash).filter(|b| b.len() == n)?,
            };
            at += 1;
            let flags = r.u8()?;
            if flags & !(DOC_CONCEPT | DOC_ASCII) != 0 {
                return None;
            }
            let concept = flags & DOC_CONCEPT != 0;
            in_bundle += u64::from(concept);
            list.push(DocIn {
                path: path.to_string(),
                doc: Doc {
                    hash,
                    text: Text::from_bytes(bytes),
                    parsed: None,
                },
                ascii: flags & DOC_ASCII != 0,
                concept,
            });
        }
        if in_bundle != concepts {
            return None;
        }
        want_concepts += in_bundle as usize;
        names.push(name.to_string());
        docs.push(list);
    }
    if !r.done() || nc != want_concepts || texts.is_some_and(|t| t_at != t.len()) {
        return None;
    }
    Some((root, names, docs))
}

fn decode_payload(
    o: Opened,
    bundles: &[BundleRef],
    source: &dyn Fn(usize, &Digest) -> Option<Bytes>,
) -> Option<Decoded> {
    let Opened {
        head,
        chunks,
        concepts: nc,
        index,
        texts,
        ahead,
    } = o;
    let (root, names, mut docs) = decode_head(&head, nc, bundles, texts.as_ref(), source)?;
    // Everything the first section held is copied out: free it before the chunks decode.
    drop(head);

    // The chunks, each decompressed and decoded on its own (on every core with the
    // `parallel` feature), then joined in order with the checks that span them.
    let chunks: Vec<(usize, Packed)> = chunks
        .into_iter()
        .enumerate()
        .map(|(j, p)| (CHUNK.min(nc - j * CHUNK), p))
        .collect();
    let decoded = crate::par::map(&chunks, |(n, p)| decode_chunk(p, *n, &docs, &names));
    drop(chunks);
    let mut concepts: Vec<Arc<Concept>> = Vec::with_capacity(nc);
    let mut leaves: Vec<[u8; 32]> = Vec::with_capacity(nc);
    let mut prev_bundle = 0usize;
    for chunk in decoded {
        for c in chunk? {
            if concepts
                .last()
                .is_some_and(|p| (prev_bundle, p.id.as_str()) >= (c.bi, c.concept.id.as_str()))
            {
                return None;
            }
            prev_bundle = c.bi;
            let doc = &mut docs[c.bi][c.di].doc;
            if doc.parsed.is_some() {
                return None;
            }
            doc.parsed = Some(c.concept.parsed.clone());
            leaves.push(c.leaf);
            concepts.push(c.concept);
        }
    }
    if concepts.len() != nc {
        return None;
    }

    // The bundles' states: each document list moved into its map, and freed as it goes.
    let mut state = TenantState::default();
    for ((name, b), list) in names.iter().zip(bundles).zip(docs) {
        let docs: BTreeMap<String, Doc> = list.into_iter().map(|d| (d.path, d.doc)).collect();
        state.bundles.insert(
            name.clone(),
            Arc::new(BundleState {
                docs,
                record: b.record,
                concepts: b.concepts,
            }),
        );
    }
    // A record naming one id twice is not one this compiler wrote.
    let model = Model::new(names, concepts)?;
    let tree = SnapshotTree::from_leaves(&model, &leaves)?;
    if tree.root() != root.0 {
        return None;
    }
    // Opened ahead: nothing is served unless the payload's digest held.
    let built = match ahead.map(crate::par::Later::take) {
        Some((false, _)) => return None,
        Some((true, ix)) => ix
            .filter(|ix| ix.len() == model.concepts().len())
            .map(Box::new),
        None => None,
    };
    Some(Decoded {
        model,
        tree,
        state,
        index,
        built,
        external: texts.is_none(),
    })
}

/// The `n` concepts of one chunk, each checked against the document it names (a concept,
/// in range); `None` when the chunk does not decode to exactly them.
fn decode_chunk(
    p: &Packed,
    n: usize,
    docs: &[Vec<DocIn>],
    names: &[String],
) -> Option<Vec<ConceptIn>> {
    let bytes = p.unpack()?;
    let mut r = R::section(&bytes)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let bi = r.u32()?;
        let di = r.u32()?;
        let id = r.string()?;
        let leaf = r.digest()?;
        let doc = docs.get(bi)?.get(di)?;
        if !doc.concept {
            return None;
        }
        let text = &doc.doc.text;
        let parsed = Arc::new(decode_parsed(&mut r, &bytes, text, doc.ascii)?);
        let links = r.strs()?;
        let diagnostics = r.strs()?;
        out.push(ConceptIn {
            bi,
            di,
            leaf,
            concept: Arc::new(Concept {
                id,
                bundle: names[bi].clone(),
                path: doc.path.clone(),
                text: text.clone(),
                parsed,
                links,
                diagnostics,
            }),
        });
    }
    r.done().then_some(out)
}

/// A concept's parse from its chunk (`section`, the chunk decompressed, which `r` reads).
/// Its sections and raw links are checked here as they are read, and left in `section`
/// ([`LazyList`]): they are decoded when something first reads them.
fn decode_parsed(r: &mut R<'_>, section: &Bytes, text: &Text, ascii: bool) -> Option<ParsedDoc> {
    let kind = r.string()?;
    let status = r.string()?;
    let grain = r.string()?;
    let summary = r.string()?;
    let summary_source = r.opt()?;
    let title = r.opt()?;
    let stale_after = r.opt()?;
    let sections = r.lazy(section, read_sections, later_sections)?;
    let body_start = r.u32()?;
    let links = r.lazy(section, read_links, later_links)?;
    let head_diagnostics = r.strs()?;
    let stale_after_diagnostic = r.flag()?;
    let len = text.len();
    if body_start > len {
        return None;
    }
    // An ASCII text's maps need no look at it (so opening touches no text); any other text
    // is read here (it must be UTF-8, and the body must start on a char boundary).
    let (source_map, body_map, body_start16) = if ascii {
        (
            Utf16Map::ascii(len),
            Utf16Map::ascii(len - body_start),
            body_start,
        )
    } else {
        let t = std::str::from_utf8(text.as_bytes()).ok()?;
        if !t.is_char_boundary(body_start) {
            return None;
        }
        let source_map = Utf16Map::new(t);
        let body_map = Utf16Map::new(&t[body_start..]);
        let body_start16 = source_map.to_u16(t, body_start);
        (source_map, body_map, body_start16)
    };
    Some(ParsedDoc {
        kind,
        status,
        grain,
        summary,
        summary_source,
        title,
        stale_after,
        sections,
        body_start,
        body_start16,
        body_map,
        source_map,
        links,
        head_diagnostics,
        stale_after_diagnostic,
    })
}

/// A concept's sections (`keep`: as a list; otherwise only checked, allocating nothing).
fn read_sections(r: &mut R<'_>, keep: bool) -> Option<Vec<Section>> {
    let ns = r.count(12)?;
    let mut sections = Vec::with_capacity(if keep { ns } else { 0 });
    for _ in 0..ns {
        let name = r.str()?;
        let (start, end) = (r.u32()?, r.u32()?);
        if keep {
            sections.push(Section {
                name: name.to_string(),
                start,
                end,
            });
        }
    }
    Some(sections)
}

/// A concept's raw links (`keep`: as a list; otherwise only checked, allocating nothing).
fn read_links(r: &mut R<'_>, keep: bool) -> Option<Vec<RawLink>> {
    let nl = r.count(5)?;
    let mut links = Vec::with_capacity(if keep { nl } else { 0 });
    for _ in 0..nl {
        let link = match r.u8()? {
            0 => {
                let dest = r.str()?;
                let target = if r.flag()? { Some(r.str()?) } else { None };
                keep.then(|| RawLink::Markdown {
                    dest: dest.to_string(),
                    target: target.map(str::to_string),
                })
            }
            1 => {
                let (text, target) = (r.str()?, r.str()?);
                keep.then(|| RawLink::Wiki {
                    text: text.to_string(),
                    target: target.to_string(),
                })
            }
            _ => return None,
        };
        links.extend(link);
    }
    Some(links)
}

/// A reader of a list [`R::lazy`] left in a section: the section's bytes, the list's place
/// among the rest (`at[0]`) and its strings (`at[1]..at[2]`). Only the list's own strings
/// are checked as UTF-8 here (the whole section's were, when it was opened).
fn later_reader(section: &[u8], at: [u32; 3]) -> Option<R<'_>> {
    let n = usize::try_from(u64::from_le_bytes(section.get(..8)?.try_into().ok()?)).ok()?;
    let strings = section.get(8..8usize.checked_add(n)?)?;
    let s = std::str::from_utf8(strings.get(at[1] as usize..at[2] as usize)?).ok()?;
    Some(R {
        b: section.get(8 + n..)?,
        at: at[0] as usize,
        s,
        s_at: 0,
    })
}

/// A concept's sections, decoded from where [`decode_parsed`] left them (checked then, so
/// this reads them whole).
fn later_sections(section: &[u8], at: [u32; 3]) -> Vec<Section> {
    later_reader(section, at)
        .and_then(|mut r| read_sections(&mut r, true))
        .unwrap_or_default()
}

/// A concept's raw links, decoded from where [`decode_parsed`] left them.
fn later_links(section: &[u8], at: [u32; 3]) -> Vec<RawLink> {
    later_reader(section, at)
        .and_then(|mut r| read_links(&mut r, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
