//! The canonical bytes of an index (docs/search.md, "Encoding"), for a derived record.
//!
//! Equal indexed content gives equal bytes whatever sequence of builds and updates produced
//! the index: documents are written in id order, terms in byte order, pairs in the order of
//! their terms. The `names` field's postings are not written: they follow from each
//! document's name tokens, which are.

use super::index::{Doc, Index, Posting, BODY, DESCRIPTION, FIELDS, META, NAMES};
use super::table::pair_key;
use crate::bytes::Bytes;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

const MAGIC: &[u8; 4] = b"LRSI";
/// The format version: 3 since each posting list gives its length in bytes (2: the
/// per-field ranking; 1: the weighted single bag).
const VERSION: u64 = 3;

/// The fields whose postings are written, in order, and their bits in a unit's mask.
const WRITTEN: [usize; 3] = [DESCRIPTION, META, BODY];

fn corrupt(detail: &str) -> Error {
    Error::corrupt(format!("search index record: {detail}"))
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A string front-coded against the previous one: the shared prefix's length, then the
/// rest.
fn put_front(out: &mut Vec<u8>, prev: &str, s: &str) {
    let mut shared = prev
        .bytes()
        .zip(s.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !s.is_char_boundary(shared) {
        shared -= 1;
    }
    put(out, shared as u64);
    put_str(out, &s[shared..]);
}

/// A posting list: its length, the length in bytes of its postings, then per posting the
/// document number's gap (the first posting: the number itself; later ones: the gap less
/// one) shifted left once, with the low bit set when `tf > 1`, followed by `tf − 2` then.
/// `scratch` holds the postings while their length is measured.
fn put_list(out: &mut Vec<u8>, list: &[(u32, u32)], scratch: &mut Vec<u8>) {
    scratch.clear();
    let mut prev = 0u32;
    for (i, &(r, tf)) in list.iter().enumerate() {
        let gap = if i == 0 { r } else { r - prev - 1 };
        put(scratch, (u64::from(gap) << 1) | u64::from(tf > 1));
        if tf > 1 {
            put(scratch, u64::from(tf - 2));
        }
        prev = r;
    }
    put(out, list.len() as u64);
    put(out, scratch.len() as u64);
    out.extend_from_slice(scratch);
}

impl Index {
    /// The canonical bytes of the index: equal for equal indexed content, whatever
    /// sequence of builds and updates produced it. The layout is in docs/search.md.
    pub fn encode(&self) -> Vec<u8> {
        let mut live: Vec<u32> = (0..self.docs.len() as u32)
            .filter(|&s| self.is_alive(s))
            .collect();
        live.sort_by(|&a, &b| self.docs[a as usize].id.cmp(&self.docs[b as usize].id));
        let mut rank = vec![u32::MAX; self.docs.len()];
        for (i, &s) in live.iter().enumerate() {
            rank[s as usize] = i as u32;
        }
        let mut used: Vec<u32> = live.iter().map(|&s| self.docs[s as usize].bundle).collect();
        used.sort_unstable();
        used.dedup();
        used.sort_by(|&a, &b| self.bundles[a as usize].cmp(&self.bundles[b as usize]));
        let mut bundle_no = vec![0u32; self.bundles.len()];
        for (i, &b) in used.iter().enumerate() {
            bundle_no[b as usize] = i as u32;
        }
        let live_unit = |u: u32| self.df[u as usize].iter().any(|&n| n > 0);
        let mut terms: Vec<(u32, String)> = self
            .vocab
            .terms()
            .into_iter()
            .filter(|(u, _)| live_unit(*u))
            .collect();
        terms.sort_by(|a, b| a.1.cmp(&b.1));
        let mut term_no = vec![u32::MAX; self.df.len()];
        for (i, (u, _)) in terms.iter().enumerate() {
            term_no[*u as usize] = i as u32;
        }
        let mut pairs: Vec<(u32, u32, u32)> = self
            .pairs
            .pairs()
            .filter(|&(u, _, _)| live_unit(u))
            .map(|(u, a, b)| (term_no[a as usize], term_no[b as usize], u))
            .collect();
        pairs.sort_unstable();

        let mut out = Vec::with_capacity(16 + self.live_postings * 2 + self.docs.len() * 32);
        out.extend_from_slice(MAGIC);
        put(&mut out, VERSION);
        put_str(&mut out, &self.today);
        put(&mut out, used.len() as u64);
        for &b in &used {
            put_str(&mut out, &self.bundles[b as usize]);
        }
        put(&mut out, terms.len() as u64);
        let mut prev = "";
        for (_, t) in &terms {
            put_front(&mut out, prev, t);
            prev = t;
        }
        put(&mut out, pairs.len() as u64);
        let (mut pa, mut pb) = (0u32, 0u32);
        for (i, &(a, b, _)) in pairs.iter().enumerate() {
            let da = a - pa;
            put(&mut out, u64::from(da));
            put(
                &mut out,
                u64::from(if i > 0 && da == 0 { b - pb - 1 } else { b }),
            );
            (pa, pb) = (a, b);
        }
        put(&mut out, live.len() as u64);
        let mut prev = "";
        for &s in &live {
            let d = &self.docs[s as usize];
            put_front(&mut out, prev, &d.id);
            prev = &d.id;
            put(&mut out, u64::from(bundle_no[d.bundle as usize]));
            for f in WRITTEN {
                put(&mut out, u64::from(d.len[f]));
            }
            put(&mut out, d.names.len() as u64);
            put(&mut out, u64::from(d.id_len));
            for &t in d.names.iter() {
                put(&mut out, u64::from(term_no[t as usize]));
            }
        }
        let mut list: Vec<(u32, u32)> = Vec::new();
        let mut scratch: Vec<u8> = Vec::new();
        let mut unit_lists = |out: &mut Vec<u8>, u: u32| {
            let mask = WRITTEN
                .iter()
                .enumerate()
                .filter(|(_, &f)| self.df[u as usize][f] > 0)
                .fold(0u64, |m, (i, _)| m | 1 << i);
            put(out, mask);
            for f in WRITTEN {
                if self.df[u as usize][f] == 0 {
                    continue;
                }
                list.clear();
                list.extend(
                    self.postings(u * FIELDS as u32 + f as u32)
                        .filter(|p| self.is_alive(p.slot))
                        .map(|p| (rank[p.slot as usize], p.tf)),
                );
                // A document's rank is unique in a list, so any sort gives one order; the
                // stable one merges the list's ascending runs (one per bundle after a
                // fresh build, whose slots are in (bundle, id) order) instead of
                // partitioning it.
                list.sort_by_key(|&(rank, _)| rank);
                put_list(out, &list, &mut scratch);
            }
        };
        for (u, _) in &terms {
            unit_lists(&mut out, *u);
        }
        for &(_, _, u) in &pairs {
            unit_lists(&mut out, u);
        }
        out
    }

    /// Reads bytes written by [`Index::encode`]. Anything malformed is a `CORRUPT` error
    /// naming the search index record.
    pub fn decode(bytes: &[u8]) -> Result<Index> {
        Index::decode_with(bytes, None)
    }

    /// Reads bytes written by [`Index::encode`] as [`Index::decode`] does, but leaves the
    /// posting lists of the written fields in `bytes` (shared, not copied), unread: each is
    /// decoded and checked when something first reads it (a search, a compaction, an
    /// encode); updates leave them there, and a compaction folds them into the flat array.
    /// A list that fails its check reads as empty and marks the index damaged
    /// ([`Index::damaged`]), so the reader discards what it read. Everything else is
    /// checked here as the full decode checks it, except that the documents' lengths are not
    /// compared with sums over lists it does not read. So a first search after an open from
    /// a derived record pays for the lists it reads, not for all of them.
    pub fn decode_shared(bytes: Bytes) -> Result<Index> {
        // List positions are kept as `u32`s.
        if u32::try_from(bytes.len()).is_err() {
            return Index::decode(&bytes);
        }
        Index::decode_with(&bytes.clone(), Some(bytes))
    }

    /// The decoder of both: with `keep`, the bytes being read, the written lists stay
    /// encoded.
    fn decode_with(bytes: &[u8], keep: Option<Bytes>) -> Result<Index> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.b.len() < 4 || &r.b[..4] != MAGIC {
            return Err(corrupt("missing magic"));
        }
        r.at = 4;
        if r.u64()? != VERSION {
            return Err(corrupt("unknown format version"));
        }
        let today = r.str()?.to_string();
        let mut ix = Index::empty(&today);
        let nb = r.count()?;
        for _ in 0..nb {
            let b = r.str()?;
            if ix.bundles.last().is_some_and(|l| **l >= *b) {
                return Err(corrupt("bundles out of order"));
            }
            ix.bundles.push(b.into());
        }
        let nt = r.count()?;
        let mut text = String::new();
        for t in 0..nt {
            let prev = std::mem::take(&mut text);
            text = r.front(&prev)?;
            if (t > 0 && prev >= text) || text.is_empty() || text.contains('\0') {
                return Err(corrupt("terms out of order"));
            }
            ix.vocab.intern(&text, t as u32);
            ix.df.push([0; FIELDS]);
        }
        // The pairs: unit ids after the terms, in order.
        let np = r.count()?;
        let (mut pa, mut pb) = (0u64, 0u64);
        for i in 0..np {
            let da = r.u64()?;
            let rb = r.u64()?;
            let a = pa + da;
            let b = if i > 0 && da == 0 { pb + rb + 1 } else { rb };
            if a >= nt as u64 || b >= nt as u64 || a == b {
                return Err(corrupt("pair out of range"));
            }
            (pa, pb) = (a, b);
            let u = ix.df.len() as u32;
            ix.pairs.intern(pair_key(a as u32, b as u32), u);
            ix.df.push([0; FIELDS]);
        }
        let units = ix.df.len();
        let nd = r.count()?;
        ix.docs.reserve(nd);
        ix.alive.reserve(nd);
        ix.by_id.reserve(nd);
        let mut id = String::new();
        for _ in 0..nd {
            let prev = std::mem::take(&mut id);
            id = r.front(&prev)?;
            if !ix.docs.is_empty() && prev >= id {
                return Err(corrupt("documents out of order"));
            }
            let bundle = r.u32()?;
            if bundle as usize >= ix.bundles.len() {
                return Err(corrupt("bundle number out of range"));
            }
            let mut len = [0u32; FIELDS];
            for f in WRITTEN {
                len[f] = r.u32()?;
            }
            let nn = r.count()?;
            let id_len = r.u32()?;
            if id_len as usize > nn {
                return Err(corrupt("name tokens out of range"));
            }
            let mut names = Vec::with_capacity(nn);
            for _ in 0..nn {
                let t = r.u32()?;
                if t as usize >= nt {
                    return Err(corrupt("name token out of range"));
                }
                names.push(t);
            }
            len[NAMES] = nn as u32;
            ix.insert_doc(Doc {
                id: id.as_str().into(),
                bundle,
                len,
                names: names.into(),
                id_len,
            });
        }
        // The names field's postings, from the name tokens, grouped by unit.
        let names = names_postings(&ix, units)?;
        // Every unit's lists in unit order, the names list first: the flat array fills in
        // order, with no second pass.
        let mut places = keep
            .as_ref()
            .map(|_| vec![(0u32, 0u32, 0u32); units * FIELDS]);
        // A decoded index owns its flat arrays until it is cloned (`Arc::make_mut` copies
        // nothing here).
        match places {
            Some(_) => Arc::make_mut(&mut ix.base).reserve(names.1.len()),
            None => Arc::make_mut(&mut ix.base).reserve((r.b.len() - r.at) / 2 + names.1.len()),
        }
        Arc::make_mut(&mut ix.base_off).clear();
        // Each document's `tf` sums, one column per field (a list adds to one column); only
        // the full decode reads the lists to sum them.
        let mut sums: [Vec<u64>; FIELDS] =
            std::array::from_fn(|_| vec![0u64; if places.is_some() { 0 } else { nd }]);
        let mut written = 0usize;
        for u in 0..units {
            let len = ix.base.len() as u32;
            Arc::make_mut(&mut ix.base_off).push(len);
            let (lo, hi) = (names.0[u] as usize, names.0[u + 1] as usize);
            Arc::make_mut(&mut ix.base).extend_from_slice(&names.1[lo..hi]);
            ix.df[u][NAMES] = (hi - lo) as u32;
            let sums = (u < nt && places.is_none()).then_some(&mut sums);
            written += r.lists(u, nd, &mut ix, sums, places.as_deref_mut())?;
            if ix.df[u].iter().all(|&n| n == 0) {
                return Err(corrupt("a unit without postings"));
            }
        }
        let len = ix.base.len() as u32;
        Arc::make_mut(&mut ix.base_off).push(len);
        if r.at != r.b.len() {
            return Err(corrupt("trailing bytes"));
        }
        if places.is_none()
            && WRITTEN.iter().any(|&f| {
                sums[f]
                    .iter()
                    .zip(&ix.docs)
                    .any(|(&s, d)| s != u64::from(d.len[f]))
            })
        {
            return Err(corrupt("document lengths do not match the postings"));
        }
        ix.live_postings = ix.base.len() + places.as_ref().map_or(0, |_| written);
        if let (Some(bytes), Some(places)) = (keep, places) {
            ix.encoded = Some(Arc::new(Encoded::new(bytes, places, nd)));
        }
        ix.refresh_norms();
        Ok(ix)
    }
}

/// The names field's postings of every document, as CSR by unit: offsets (`units + 1`) and
/// postings in slot order.
fn names_postings(ix: &Index, units: usize) -> Result<(Vec<u32>, Vec<Posting>)> {
    let mut per_doc: Vec<(u32, u32, u32)> = Vec::new();
    let mut counts: HashMap<u32, u32, super::table::Fast> = HashMap::default();
    // A document's units with their counts, in order of first appearance; looked up by a
    // scan while they are few (nearly every document: an id and a title), in `counts` past
    // that. Either way the same postings in the same order.
    let mut order: Vec<(u32, u32)> = Vec::new();
    const SCAN: usize = 24;
    for (slot, d) in ix.docs.iter().enumerate() {
        counts.clear();
        order.clear();
        let few = d.names.len() * 2 <= SCAN;
        let mut prev = u32::MAX;
        for &t in d.names.iter() {
            let mut note = |u: u32| {
                if few {
                    match order.iter_mut().find(|e| e.0 == u) {
                        Some(e) => e.1 += 1,
                        None => order.push((u, 1)),
                    }
                } else {
                    let c = counts.entry(u).or_insert(0);
                    if *c == 0 {
                        order.push((u, 0));
                    }
                    *c += 1;
                }
            };
            note(t);
            if prev != u32::MAX && prev != t {
                let p = ix
                    .pairs
                    .get(pair_key(prev, t))
                    .ok_or_else(|| corrupt("a pair of the names is missing"))?;
                note(p);
            }
            prev = t;
        }
        per_doc.extend(order.iter().map(|&(u, c)| {
            let tf = if few { c } else { counts[&u] };
            (u, slot as u32, tf)
        }));
    }
    let mut off = vec![0u32; units + 1];
    for &(u, _, _) in &per_doc {
        off[u as usize + 1] += 1;
    }
    for i in 0..units {
        off[i + 1] += off[i];
    }
    let mut cur = off.clone();
    let mut post = vec![Posting::default(); per_doc.len()];
    for &(u, slot, tf) in &per_doc {
        post[cur[u as usize] as usize] = Posting { slot, tf };
        cur[u as usize] += 1;
    }
    Ok((off, post))
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn u64(&mut self) -> Result<u64> {
        // Most numbers of an index (posting gaps, counts) fit in one byte.
        if let Some(&byte) = self.b.get(self.at) {
            if byte < 0x80 {
                self.at += 1;
                return Ok(u64::from(byte));
            }
        }
        self.u64_long()
    }

    #[inline(never)]
    fn u64_long(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.b.get(self.at) else {
                return Err(corrupt("truncated"));
            };
            self.at += 1;
            v |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("bad integer"))
    }

    #[inline(always)]
    fn u32(&mut self) -> Result<u32> {
        u32::try_from(self.u64()?).map_err(|_| corrupt("integer out of range"))
    }

    /// A count, bounded by the remaining bytes so a bad count cannot allocate much.
    fn count(&mut self) -> Result<usize> {
        let n = self.u64()?;
        if n > (self.b.len() - self.at) as u64 {
            return Err(corrupt("count exceeds the record"));
        }
        Ok(n as usize)
    }

    fn str(&mut self) -> Result<&'a str> {
        let n = self.count()?;
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        std::str::from_utf8(s).map_err(|_| corrupt("invalid UTF-8"))
    }

    /// A string front-coded against `prev`.
    fn front(&mut self, prev: &str) -> Result<String> {
        let shared = self.count()?;
        if shared > prev.len() || !prev.is_char_boundary(shared) {
            return Err(corrupt("bad shared prefix"));
        }
        let rest = self.str()?;
        let mut s = String::with_capacity(shared + rest.len());
        s.push_str(&prev[..shared]);
        s.push_str(rest);
        Ok(s)
    }

    /// The written lists of unit `u`: a field mask, then one list per field in it (its
    /// length, its length in bytes, its postings), appended to `ix.base` with their offsets,
    /// or with `places` given left where they are, unread (`places` gets each list's
    /// position, length and end by list key); `sums` adds each document's `tf` per field to
    /// the lists read. Gives the number of postings the lists hold.
    fn lists(
        &mut self,
        u: usize,
        nd: usize,
        ix: &mut Index,
        mut sums: Option<&mut [Vec<u64>; FIELDS]>,
        mut places: Option<&mut [(u32, u32, u32)]>,
    ) -> Result<usize> {
        let mask = self.u64()?;
        if mask >= 1 << WRITTEN.len() {
            return Err(corrupt("bad field mask"));
        }
        let mut read = 0;
        let (base, base_off) = (Arc::make_mut(&mut ix.base), Arc::make_mut(&mut ix.base_off));
        for (i, &f) in WRITTEN.iter().enumerate() {
            base_off.push(base.len() as u32);
            if mask & (1 << i) == 0 {
                continue;
            }
            let n = self.count()?;
            if n == 0 || n > nd {
                return Err(corrupt("bad posting count"));
            }
            let bytes = self.count()?;
            // A posting takes one byte at least, and at most two numbers of ten.
            if bytes < n || bytes > n * 20 {
                return Err(corrupt("bad list length"));
            }
            let end = self.at + bytes;
            read += n;
            ix.df[u][f] = n as u32;
            if let Some(places) = places.as_deref_mut() {
                places[u * FIELDS + f] = (self.at as u32, n as u32, end as u32);
                self.at = end;
                continue;
            }
            let mut doc = 0u64;
            for j in 0..n {
                let tf;
                (doc, tf) = self.posting(j, doc, nd)?;
                if let Some(s) = sums.as_deref_mut() {
                    s[f][doc as usize] += u64::from(tf);
                }
                base.push(Posting {
                    slot: doc as u32,
                    tf,
                });
            }
            if self.at != end {
                return Err(corrupt("bad list length"));
            }
        }
        Ok(read)
    }

    /// Reads the `j`th posting of a list of a tenant of `nd` documents: its document (a gap
    /// after `prev`, the previous posting's) and its term frequency. The one reading of a
    /// posting, for [`Reader::lists`] and [`Encoded::list`] alike.
    fn posting(&mut self, j: usize, prev: u64, nd: usize) -> Result<(u64, u32)> {
        let v = self.u64()?;
        let gap = v >> 1;
        let doc = if j == 0 { gap } else { prev + gap + 1 };
        if doc >= nd as u64 {
            return Err(corrupt("posting out of range"));
        }
        let tf = if v & 1 == 1 {
            self.u32()?
                .checked_add(2)
                .ok_or_else(|| corrupt("integer out of range"))?
        } else {
            1
        };
        Ok((doc, tf))
    }
}

/// The posting lists an index decoded by [`Index::decode_shared`] left encoded: the bytes,
/// where each list starts, how many postings it has and where it ends (by list key; none:
/// `(0, 0, 0)`), how many documents the index had, each list once decoded, and whether a
/// list failed its check.
#[derive(Debug)]
pub(crate) struct Encoded {
    bytes: Bytes,
    places: Vec<(u32, u32, u32)>,
    docs: usize,
    decoded: Vec<OnceLock<Box<[Posting]>>>,
    damaged: AtomicBool,
}

impl Encoded {
    fn new(bytes: Bytes, places: Vec<(u32, u32, u32)>, docs: usize) -> Encoded {
        let decoded = (0..places.len()).map(|_| OnceLock::new()).collect();
        Encoded {
            bytes,
            places,
            docs,
            decoded,
            damaged: AtomicBool::new(false),
        }
    }

    /// The postings of list `key`, decoded and checked on first use (every posting in range
    /// and in order, the list exactly its bytes); `None` when the list is not one left
    /// encoded (a names list, or a list it does not know). A list that fails its check is
    /// empty, and marks these lists damaged.
    pub(crate) fn list(&self, key: u32) -> Option<&[Posting]> {
        let k = key as usize;
        if k % FIELDS == NAMES || k >= self.places.len() {
            return None;
        }
        Some(self.decoded[k].get_or_init(|| {
            let (at, n, end) = self.places[k];
            let mut r = Reader {
                b: self.bytes.get(..end as usize).unwrap_or_default(),
                at: at as usize,
            };
            let mut out = Vec::with_capacity(n as usize);
            let mut doc = 0u64;
            for j in 0..n as usize {
                match r.posting(j, doc, self.docs) {
                    Ok((d, tf)) => {
                        doc = d;
                        out.push(Posting { slot: d as u32, tf });
                    }
                    Err(_) => break,
                }
            }
            if out.len() != n as usize || r.at != r.b.len() {
                self.damaged.store(true, Ordering::Relaxed);
                out.clear();
            }
            out.into_boxed_slice()
        }))
    }

    /// Whether a list failed its check when it was read.
    pub(crate) fn damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    /// The bytes it keeps (for benchmarks).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.len()
            + self.places.capacity() * 12
            + self
                .decoded
                .iter()
                .filter_map(|d| d.get())
                .map(|l| l.len() * std::mem::size_of::<Posting>() + 16)
                .sum::<usize>()
            + self.decoded.capacity() * 16
    }
}
