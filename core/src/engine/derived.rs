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
//! The documents' texts follow the payload, outside its digest: each is covered by its
//! source hash, which the payload holds, and is checked against it before a read returns it
//! or anything computed from it (`Served` keeps track). So opening hashes the compiled form
//! and the index, not every text.
//!
//! The encoding is binary and canonical: one state gives one byte string. Integers are
//! little-endian `u32` (lengths, counts, offsets) or `u64`; a string is its `u32` byte
//! length and its UTF-8 bytes; an optional string is a `0` byte, or a `1` byte and the
//! string; a digest is its 32 bytes.

use super::records::BundleRef;
use super::state::{BundleState, Doc, TenantState};
use super::store::Digest;
use super::Served;
use crate::compile::{Concept, Model, ParsedDoc, RawLink, Section};
use crate::snapshot::SnapshotTree;
use crate::text::Utf16Map;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The first bytes of every derived record.
pub const MAGIC: &[u8; 4] = b"LRDR";
/// The version of this encoding (not the compiler version, which the header also holds).
pub const FORMAT: u32 = 1;
/// The header's length: magic, format, compiler version, recorded snapshot id, state
/// digest, payload digest, payload length.
pub const HEADER: usize = 4 + 4 + 4 + 32 + 32 + 32 + 8;

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

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: usize) {
        // Lengths and offsets of one document or list; a stored document is far smaller.
        self.0.extend_from_slice(&(v as u32).to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len());
        self.0.extend_from_slice(s.as_bytes());
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
        self.0.extend_from_slice(d);
    }
    fn strs(&mut self, v: &[String]) {
        self.u32(v.len());
        for s in v {
            self.str(s);
        }
    }
}

/// Encodes `s` as the derived record of the revision whose recorded snapshot id is
/// `recorded`. `index` is the encoded search index of `s` (search.md §8), if any.
pub fn encode(s: &Served, recorded: &Digest, index: Option<&[u8]>) -> Vec<u8> {
    let texts: usize = s
        .state
        .bundles
        .values()
        .flat_map(|b| b.docs.values())
        .map(|d| d.text.len())
        .sum();
    let cap = s.model.concepts.len() * 512 + index.map_or(0, <[u8]>::len) + 64;
    let mut w = W(Vec::with_capacity(cap));
    let mut text_bytes: Vec<&str> = Vec::new();

    // Bundles and documents, by name and path; the position of each concept's document.
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
            text_bytes.push(&d.text);
            w.u8(u8::from(d.parsed.is_some()));
            if d.parsed.is_some() {
                at.insert((name.as_str(), path.as_str()), (bi, di));
            }
        }
    }

    // Concepts in model order, each with its snapshot leaf.
    w.u32(s.model.concepts.len());
    for (c, leaf) in s.model.concepts.iter().zip(s.tree.leaves()) {
        let (bi, di) = at
            .get(&(c.bundle.as_str(), c.path.as_str()))
            .copied()
            .unwrap_or((u32::MAX as usize, 0));
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
    w.digest(&s.tree.root());
    match index {
        None => w.u8(0),
        Some(ix) => {
            w.u8(1);
            w.u64(ix.len() as u64);
            w.0.extend_from_slice(ix);
        }
    }
    let payload = w.0;

    let mut out = Vec::with_capacity(HEADER + payload.len() + texts);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&super::COMPILER_VERSION.to_le_bytes());
    out.extend_from_slice(&recorded.0);
    out.extend_from_slice(&served_state(&s.state).0);
    out.extend_from_slice(&Digest::of(&payload).0);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&payload);
    for t in text_bytes {
        out.extend_from_slice(t.as_bytes());
    }
    out
}

// ---------------------------------------------------------------------------------------
// Decoding

/// A decoded derived record: everything a served state holds, the search index still
/// encoded.
pub struct Decoded {
    pub(crate) model: Model,
    pub(crate) tree: SnapshotTree,
    pub(crate) state: TenantState,
    pub(crate) index: Option<Arc<[u8]>>,
}

impl Decoded {
    /// The encoded search index the record carries, if any.
    pub fn index_bytes(&self) -> Option<&[u8]> {
        self.index.as_deref()
    }

    /// The number of concepts.
    pub fn concepts(&self) -> usize {
        self.model.concepts.len()
    }
}

struct R<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> R<'a> {
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
        std::str::from_utf8(self.take(n)?).ok()
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
    fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.count(4)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.string()?);
        }
        Some(v)
    }
}

/// Checks the header of a derived record against the revision it should serve: the format,
/// the compiler version, the recorded snapshot id and the source state. Cheap: the payload
/// is not read.
fn header_matches(bytes: &[u8], recorded: &Digest, bundles: &[BundleRef]) -> Option<usize> {
    let mut r = R { b: bytes, at: 0 };
    if r.take(4)? != MAGIC
        || r.u32()? != FORMAT as usize
        || r.u32()? != super::COMPILER_VERSION as usize
        || r.digest()? != recorded.0
        || r.digest()? != revision_state(bundles).0
    {
        return None;
    }
    Some(r.at)
}

/// Decodes a derived record for the revision with `recorded` snapshot id and bundle list
/// `bundles`. `None` when it does not serve that revision or fails any check.
pub fn decode(bytes: &[u8], recorded: &Digest, bundles: &[BundleRef]) -> Option<Decoded> {
    let at = header_matches(bytes, recorded, bundles)?;
    let mut r = R { b: bytes, at };
    let digest = r.digest()?;
    let len = usize::try_from(r.u64()?).ok()?;
    if r.at != HEADER || bytes.len() - HEADER < len {
        return None;
    }
    let payload = &bytes[HEADER..HEADER + len];
    if Digest::of(payload).0 != digest {
        return None;
    }
    decode_payload(payload, &bytes[HEADER + len..], bundles)
}

struct DocIn<'a> {
    path: &'a str,
    hash: Digest,
    text: Arc<str>,
    parsed: Option<Arc<ParsedDoc>>,
    concept: bool,
}

fn decode_payload(payload: &[u8], texts: &[u8], bundles: &[BundleRef]) -> Option<Decoded> {
    let mut r = R { b: payload, at: 0 };
    // The texts are checked as UTF-8 in one pass (each must then start and end on a char
    // boundary); when they are all ASCII, so is each, and no offset map needs a scan.
    let all = std::str::from_utf8(texts).ok()?;
    let ascii = all.is_ascii();
    let mut t_at = 0usize;
    let nb = r.count(4 + 32 + 8 + 4)?;
    if nb != bundles.len() {
        return None;
    }
    let mut docs: Vec<Vec<DocIn<'_>>> = Vec::with_capacity(nb);
    let mut names: Vec<&str> = Vec::with_capacity(nb);
    let mut want_concepts = 0usize;
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
        let mut list: Vec<DocIn<'_>> = Vec::with_capacity(nd);
        let mut in_bundle = 0u64;
        for _ in 0..nd {
            let path = r.str()?;
            if list.last().is_some_and(|d| d.path >= path) {
                return None;
            }
            let hash = Digest(r.digest()?);
            let n = r.u32()?;
            let text: Arc<str> = Arc::from(all.get(t_at..t_at.checked_add(n)?)?);
            t_at += n;
            let concept = r.flag()?;
            in_bundle += u64::from(concept);
            list.push(DocIn {
                path,
                hash,
                text,
                parsed: None,
                concept,
            });
        }
        if in_bundle != concepts {
            return None;
        }
        want_concepts += in_bundle as usize;
        names.push(name);
        docs.push(list);
    }

    let nc = r.count(4 + 4 + 4 + 32)?;
    if nc != want_concepts {
        return None;
    }
    let mut concepts: Vec<Arc<Concept>> = Vec::with_capacity(nc);
    let mut leaves: Vec<[u8; 32]> = Vec::with_capacity(nc);
    let mut by_id: rustc_hash::FxHashMap<String, usize> = Default::default();
    by_id.reserve(nc);
    let mut prev: Option<(usize, &str)> = None;
    for i in 0..nc {
        let bi = r.u32()?;
        let di = r.u32()?;
        let id = r.str()?;
        if prev.is_some_and(|p| p >= (bi, id)) {
            return None;
        }
        prev = Some((bi, id));
        leaves.push(r.digest()?);
        let doc = docs.get_mut(bi)?.get_mut(di)?;
        if !doc.concept || doc.parsed.is_some() {
            return None;
        }
        let parsed = Arc::new(decode_parsed(&mut r, &doc.text, ascii)?);
        doc.parsed = Some(parsed.clone());
        let links = r.strs()?;
        let diagnostics = r.strs()?;
        by_id.insert(id.to_string(), i);
        concepts.push(Arc::new(Concept {
            id: id.to_string(),
            bundle: names[bi].to_string(),
            path: doc.path.to_string(),
            text: doc.text.clone(),
            parsed,
            links,
            diagnostics,
        }));
    }
    let root = r.digest()?;
    let index: Option<Arc<[u8]>> = if r.flag()? {
        let n = usize::try_from(r.u64()?).ok()?;
        Some(Arc::from(r.take(n)?))
    } else {
        None
    };
    if r.at != payload.len() || t_at != texts.len() {
        return None;
    }

    let mut state = TenantState::default();
    for ((b, name), list) in bundles.iter().zip(&names).zip(docs) {
        let mut map = BTreeMap::new();
        for d in list {
            map.insert(
                d.path.to_string(),
                Doc {
                    hash: d.hash,
                    text: d.text,
                    parsed: d.parsed,
                },
            );
        }
        state.bundles.insert(
            (*name).to_string(),
            Arc::new(BundleState {
                docs: map,
                record: b.record,
                concepts: b.concepts,
            }),
        );
    }
    let model = Model {
        bundles: names.iter().map(|n| n.to_string()).collect(),
        concepts,
        by_id: Arc::new(by_id),
    };
    let tree = SnapshotTree::from_leaves(&model, &leaves)?;
    if tree.root() != root {
        return None;
    }
    Some(Decoded {
        model,
        tree,
        state,
        index,
    })
}

fn decode_parsed(r: &mut R<'_>, text: &str, ascii: bool) -> Option<ParsedDoc> {
    let kind = r.string()?;
    let status = r.string()?;
    let grain = r.string()?;
    let summary = r.string()?;
    let summary_source = r.opt()?;
    let title = r.opt()?;
    let stale_after = r.opt()?;
    let ns = r.count(12)?;
    let mut sections = Vec::with_capacity(ns);
    for _ in 0..ns {
        sections.push(Section {
            name: r.string()?,
            start: r.u32()?,
            end: r.u32()?,
        });
    }
    let body_start = r.u32()?;
    if !text.is_char_boundary(body_start) {
        return None;
    }
    let nl = r.count(5)?;
    let mut links = Vec::with_capacity(nl);
    for _ in 0..nl {
        links.push(match r.u8()? {
            0 => RawLink::Markdown {
                dest: r.string()?,
                target: r.opt()?,
            },
            1 => RawLink::Wiki {
                text: r.string()?,
                target: r.string()?,
            },
            _ => return None,
        });
    }
    let head_diagnostics = r.strs()?;
    let stale_after_diagnostic = r.flag()?;
    let source_map = if ascii {
        Utf16Map::ascii(text.len())
    } else {
        Utf16Map::new(text)
    };
    let body_map = if source_map.is_ascii() {
        Utf16Map::ascii(text.len() - body_start)
    } else {
        Utf16Map::new(&text[body_start..])
    };
    let body_start16 = source_map.to_u16(text, body_start);
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

#[cfg(test)]
mod tests;
