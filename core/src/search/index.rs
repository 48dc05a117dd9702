//! The search index (search.md §2, §8): one weighted document per concept, interned terms,
//! compact postings, incremental updates and a canonical byte encoding.
//!
//! Layout. Terms are interned to dense `u32` ids: terms of at most 16 bytes are keyed by
//! their bytes packed into two `u64`s, longer ones by their text. Postings `(slot, f)` live in
//! one flat array in compressed-sparse-row form (`base_off`, `base`), grouped by term and
//! sorted by slot. Documents added since the last compaction append to small per-term
//! lists (`extra`); removed documents are tombstoned (`alive`) and their terms' `n(t)`
//! decremented at once, so the scores never see them. A compaction folds both back into
//! the flat array when they grow past a quarter of the live postings.
//!
//! Slots are assigned in insertion order and never reused before a compaction. Search
//! results do not depend on them: every sum runs in query-term order and the ranking breaks
//! ties by id.

use super::tokenize::{pack16, scan, Sink, SHORT};
use crate::compile::{Concept, Model};
use crate::error::{Error, Result};
use crate::manifest::status_for;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

/// BM25 `k1` (search.md §3).
pub const K1: f64 = 1.2;
/// BM25 `b` (search.md §3).
pub const B: f64 = 0.75;

/// Weight of the `body` field.
pub const W_BODY: u32 = 1;
/// Weight of the `fields` field.
pub const W_FIELDS: u32 = 2;
/// Weight of the `names` field.
pub const W_NAMES: u32 = 4;

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
const MUL2: u64 = 0xD6E8_FEB8_6659_FD93;

/// The hasher of the index's maps: deterministic, no random seed, same on every target.
pub(crate) type Fast = rustc_hash::FxBuildHasher;

/// An open-addressing table from packed terms of up to [`SHORT`] bytes to ids: one
/// probe, usually one cache line, no string comparison.
#[derive(Debug, Clone, Default)]
struct ShortTable {
    /// `(packed term, id)`; a first word of 0 marks an empty entry.
    entries: Vec<([u64; 2], u32)>,
    len: usize,
    /// Grow before `len` reaches this (a load factor of 7/8).
    grow_at: usize,
}

impl ShortTable {
    #[inline]
    fn slot_of(key: [u64; 2], mask: usize) -> usize {
        let fold = |x: u64, m: u64| {
            let p = u128::from(x) * u128::from(m);
            (p as u64) ^ ((p >> 64) as u64)
        };
        (fold(fold(key[0], MUL) ^ key[1], MUL2) as usize) & mask
    }

    #[inline]
    fn get(&self, key: [u64; 2]) -> Option<u32> {
        if self.entries.is_empty() {
            return None;
        }
        let mask = self.entries.len() - 1;
        let mut i = Self::slot_of(key, mask);
        loop {
            let (k, id) = self.entries[i];
            if k == key {
                return Some(id);
            }
            if k[0] == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `key`, inserting `next` when absent.
    #[inline(always)]
    fn intern(&mut self, key: [u64; 2], next: u32) -> u32 {
        if self.len >= self.grow_at {
            self.grow();
        }
        let mask = self.entries.len() - 1;
        let mut i = Self::slot_of(key, mask);
        loop {
            let (k, id) = self.entries[i];
            if k == key {
                return id;
            }
            if k[0] == 0 {
                self.entries[i] = (key, next);
                self.len += 1;
                return next;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.entries.len() * 2).max(1024);
        self.grow_at = cap / 8 * 7;
        let old = std::mem::replace(&mut self.entries, vec![([0, 0], 0); cap]);
        let mask = cap - 1;
        for (k, id) in old {
            if k[0] != 0 {
                let mut i = Self::slot_of(k, mask);
                while self.entries[i].0[0] != 0 {
                    i = (i + 1) & mask;
                }
                self.entries[i] = (k, id);
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = ([u64; 2], u32)> + '_ {
        self.entries.iter().copied().filter(|e| e.0[0] != 0)
    }
}

/// The interned vocabulary: term text to dense id.
#[derive(Debug, Clone, Default)]
struct Vocab {
    short: ShortTable,
    long: HashMap<Box<str>, u32, Fast>,
}

impl Vocab {
    #[inline]
    fn get(&self, t: &str) -> Option<u32> {
        if t.len() <= SHORT {
            self.short.get(pack16(t.as_bytes()))
        } else {
            self.long.get(t).copied()
        }
    }

    /// The id of `t`, adding it with id `next` when new.
    #[inline(always)]
    fn intern(&mut self, t: &str, next: u32) -> u32 {
        if t.len() <= SHORT {
            self.short.intern(pack16(t.as_bytes()), next)
        } else {
            self.intern_long(t, next)
        }
    }

    #[inline(never)]
    fn intern_long(&mut self, t: &str, next: u32) -> u32 {
        if let Some(&id) = self.long.get(t) {
            id
        } else {
            self.long.insert(t.into(), next);
            next
        }
    }

    /// Every term's text by id.
    fn texts(&self, count: usize) -> Vec<String> {
        let mut out = vec![String::new(); count];
        for (k, id) in self.short.iter() {
            let mut bytes = [0u8; SHORT];
            bytes[..8].copy_from_slice(&k[0].to_le_bytes());
            bytes[8..].copy_from_slice(&k[1].to_le_bytes());
            let len = bytes.iter().position(|&b| b == 0).unwrap_or(SHORT);
            out[id as usize] = String::from_utf8_lossy(&bytes[..len]).into_owned();
        }
        for (k, &id) in &self.long {
            out[id as usize] = k.to_string();
        }
        out
    }

    fn heap_bytes(&self) -> usize {
        self.short.entries.capacity() * std::mem::size_of::<([u64; 2], u32)>()
            + self.long.capacity() * 21
            + self.long.keys().map(|k| k.len()).sum::<usize>()
    }
}

/// One posting: a document slot and the weighted count `f(t, d)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Posting {
    pub(crate) slot: u32,
    pub(crate) f: u32,
}

/// One indexed document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doc {
    /// The concept's public id.
    pub(crate) id: Box<str>,
    /// Index into `Index::bundles`.
    pub(crate) bundle: u32,
    /// `len(d)`: the weighted token count.
    pub(crate) len: u32,
}

/// Per-document term counts, reused across documents.
#[derive(Default)]
struct Counter {
    counts: Vec<u32>,
    touched: Touched,
    len: u64,
    scratch: String,
}

/// The terms a document holds, in order of first appearance, appended without a branch
/// (whether a token is a term's first in its document is unpredictable).
#[derive(Default)]
struct Touched {
    /// Invariant: longer than the number of terms noted, so the next write fits.
    ids: Vec<u32>,
    n: usize,
}

impl Touched {
    /// Notes `t`; it is kept only when `first`.
    #[inline(always)]
    fn note(&mut self, t: u32, first: bool) {
        self.ids[self.n] = t;
        self.n += usize::from(first);
    }

    /// Makes room for a vocabulary of `terms` terms.
    #[inline]
    fn fit(&mut self, terms: usize) {
        if self.ids.len() <= terms {
            self.ids.resize(terms + 1, 0);
        }
    }

    fn as_slice(&self) -> &[u32] {
        &self.ids[..self.n]
    }

    fn clear(&mut self) {
        self.n = 0;
    }
}

/// The search index of one tenant for one `today` (search.md §2, §8).
///
/// Build it with [`Index::build`]; keep it current with [`Index::update`] on every commit
/// and whenever the read date changes. [`Index::encode`] gives canonical bytes for a
/// derived record and [`Index::decode`] reads them back.
#[derive(Debug, Clone)]
pub struct Index {
    today: String,
    vocab: Vocab,
    /// `n(t)` by term id, over live documents.
    df: Vec<u32>,
    /// CSR offsets into `base`, one more than the terms known at the last compaction.
    base_off: Vec<u32>,
    /// Invariant: the postings of each term are sorted by slot.
    base: Vec<Posting>,
    /// Postings added since the last compaction, by term; slots above every base slot.
    extra: HashMap<u32, Vec<Posting>, Fast>,
    extra_postings: usize,
    docs: Vec<Doc>,
    alive: Vec<bool>,
    /// `k1 · norm(d)` by slot, refreshed whenever `avg` changes.
    knorm: Vec<f64>,
    by_id: HashMap<Box<str>, u32, Fast>,
    bundles: Vec<Box<str>>,
    live: u32,
    /// Σ `len(d)` over live documents, an integer so updates cannot drift.
    total_len: u64,
    live_postings: usize,
    dead_postings: usize,
}

const PAD: &str = "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

/// A token receiver that also takes the weight of the field being scanned.
trait DocSink: Sink {
    fn weight(&mut self, w: u32);
}

/// Scans a concept's indexed document into `sink`: names ×4, fields ×2, body ×1
/// (search.md §2).
fn doc_tokens<S: DocSink>(c: &Concept, today: &str, scratch: &mut String, sink: &mut S) {
    let p = &c.parsed;
    scratch.clear();
    scratch.push_str(&c.id);
    if let Some(t) = &p.title {
        scratch.push(' ');
        scratch.push_str(t);
    }
    // Trailing NUL bytes (separators) let the scanner load whole words past every token.
    scratch.push_str(PAD);
    sink.weight(W_NAMES);
    scan(scratch, sink);
    scratch.clear();
    for (i, cell) in [
        c.bundle.as_str(),
        &p.kind,
        status_for(c, today),
        &p.grain,
        &p.summary,
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            scratch.push(' ');
        }
        // A `-` cell yields no tokens; the tokenizer drops it anyway, this saves the scan.
        if cell != "-" {
            scratch.push_str(cell);
        }
    }
    scratch.push_str(PAD);
    sink.weight(W_FIELDS);
    scan(scratch, sink);
    sink.weight(W_BODY);
    scan(c.body(), sink);
}

/// Interns tokens and counts them into a [`Counter`].
struct Interner<'a> {
    vocab: &'a mut Vocab,
    df: &'a mut Vec<u32>,
    counts: &'a mut Vec<u32>,
    touched: &'a mut Touched,
    len: u64,
    w: u32,
}

impl Interner<'_> {
    /// Counts one occurrence of term `t`; `next` is the id a new term would have had.
    #[inline(always)]
    fn count(&mut self, t: u32, next: u32) {
        if t == next {
            self.df.push(0);
            self.counts.push(0);
            self.touched.fit(self.counts.len());
        }
        let slot = &mut self.counts[t as usize];
        self.touched.note(t, *slot == 0);
        *slot += self.w;
        self.len += u64::from(self.w);
    }
}

impl Sink for Interner<'_> {
    #[inline(always)]
    fn token(&mut self, tok: &str) {
        let next = self.df.len() as u32;
        let t = self.vocab.intern(tok, next);
        self.count(t, next);
    }

    #[inline(always)]
    fn short(&mut self, key: [u64; 2], _len: usize) {
        let next = self.df.len() as u32;
        let t = self.vocab.short.intern(key, next);
        self.count(t, next);
    }
}

impl DocSink for Interner<'_> {
    fn weight(&mut self, w: u32) {
        self.w = w;
    }
}

/// Counts the tokens of a document already in the vocabulary, noting unknown ones.
struct Lookup<'a> {
    vocab: &'a Vocab,
    counts: &'a mut Vec<u32>,
    touched: &'a mut Touched,
    len: u64,
    w: u32,
    known: bool,
}

impl Lookup<'_> {
    fn count(&mut self, t: Option<u32>) {
        self.len += u64::from(self.w);
        match t {
            Some(t) => {
                let t = t as usize;
                if self.counts.len() <= t {
                    self.counts.resize(t + 1, 0);
                    self.touched.fit(t + 1);
                }
                self.touched.note(t as u32, self.counts[t] == 0);
                self.counts[t] += self.w;
            }
            None => self.known = false,
        }
    }
}

impl Sink for Lookup<'_> {
    fn token(&mut self, tok: &str) {
        let t = self.vocab.get(tok);
        self.count(t);
    }

    fn short(&mut self, key: [u64; 2], _len: usize) {
        let t = self.vocab.short.get(key);
        self.count(t);
    }
}

impl DocSink for Lookup<'_> {
    fn weight(&mut self, w: u32) {
        self.w = w;
    }
}

/// Whether two concepts of one id index identically on any date.
fn same_indexed(a: &Concept, b: &Concept) -> bool {
    if a.bundle != b.bundle {
        return false;
    }
    let text_same = a.text == b.text;
    if Arc::ptr_eq(&a.parsed, &b.parsed) {
        return text_same;
    }
    let (p, q) = (&a.parsed, &b.parsed);
    text_same
        && p.body_start == q.body_start
        && p.title == q.title
        && p.kind == q.kind
        && p.status == q.status
        && p.grain == q.grain
        && p.summary == q.summary
        && p.stale_after == q.stale_after
}

impl Index {
    fn empty(today: &str) -> Index {
        Index {
            today: today.to_string(),
            vocab: Vocab::default(),
            df: Vec::new(),
            base_off: vec![0],
            base: Vec::new(),
            extra: HashMap::default(),
            extra_postings: 0,
            docs: Vec::new(),
            alive: Vec::new(),
            knorm: Vec::new(),
            by_id: HashMap::default(),
            bundles: Vec::new(),
            live: 0,
            total_len: 0,
            live_postings: 0,
            dead_postings: 0,
        }
    }

    /// Builds the index of `model` for the read date `today`.
    pub fn build(model: &Model, today: &str) -> Index {
        let mut ix = Index::empty(today);
        let mut counter = Counter::default();
        // Forward postings (term, f), then each document's end in it.
        let mut fwd: Vec<(u32, u32)> = Vec::with_capacity(model.concepts.len() * 64);
        let mut ends: Vec<usize> = Vec::with_capacity(model.concepts.len());
        ix.docs.reserve(model.concepts.len());
        for c in &model.concepts {
            ix.count(c, today, &mut counter);
            for &t in counter.touched.as_slice() {
                fwd.push((t, counter.counts[t as usize]));
                counter.counts[t as usize] = 0;
                ix.df[t as usize] += 1;
            }
            counter.touched.clear();
            ix.push_doc(c, counter.len);
            ends.push(fwd.len());
        }
        let terms = ix.df.len();
        let mut off = Vec::with_capacity(terms + 1);
        let mut acc = 0u32;
        off.push(0);
        for &d in &ix.df {
            acc += d;
            off.push(acc);
        }
        let mut cur: Vec<u32> = off[..terms].to_vec();
        let mut base = vec![Posting::default(); fwd.len()];
        let mut start = 0;
        for (slot, &end) in ends.iter().enumerate() {
            for &(t, f) in &fwd[start..end] {
                let at = &mut cur[t as usize];
                base[*at as usize] = Posting {
                    slot: slot as u32,
                    f,
                };
                *at += 1;
            }
            start = end;
        }
        drop(fwd);
        ix.live_postings = base.len();
        ix.base_off = off;
        ix.base = base;
        ix.refresh_norms();
        ix
    }

    /// Tokenizes one concept into `counter` (interning new terms) and sets its `len`.
    fn count(&mut self, c: &Concept, today: &str, counter: &mut Counter) {
        let Counter {
            counts,
            touched,
            len,
            scratch,
        } = counter;
        let mut sink = Interner {
            vocab: &mut self.vocab,
            df: &mut self.df,
            counts,
            touched,
            len: 0,
            w: 0,
        };
        doc_tokens(c, today, scratch, &mut sink);
        *len = sink.len;
    }

    fn push_doc(&mut self, c: &Concept, len: u64) {
        let bundle = match self.bundles.iter().position(|b| **b == *c.bundle) {
            Some(i) => i as u32,
            None => {
                self.bundles.push(c.bundle.as_str().into());
                (self.bundles.len() - 1) as u32
            }
        };
        let slot = self.docs.len() as u32;
        let len32 = u32::try_from(len).unwrap_or(u32::MAX);
        self.docs.push(Doc {
            id: c.id.as_str().into(),
            bundle,
            len: len32,
        });
        self.alive.push(true);
        self.by_id.insert(c.id.as_str().into(), slot);
        self.live += 1;
        self.total_len += u64::from(len32);
    }

    /// Recomputes `k1 · norm(d)` for every slot (search.md §3.1).
    fn refresh_norms(&mut self) {
        let avg = if self.live == 0 {
            0.0
        } else {
            self.total_len as f64 / f64::from(self.live)
        };
        self.knorm.clear();
        self.knorm.extend(self.docs.iter().map(|d| {
            let norm = if avg == 0.0 {
                1.0
            } else {
                1.0 - B + B * f64::from(d.len) / avg
            };
            K1 * norm
        }));
    }

    /// The read date the index was built or last updated for.
    pub fn today(&self) -> &str {
        &self.today
    }

    /// `N`: the number of indexed concepts.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// Whether no concept is indexed.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The number of distinct terms of live documents.
    pub fn term_count(&self) -> usize {
        self.df.iter().filter(|&&d| d > 0).count()
    }

    /// The number of live postings.
    pub fn posting_count(&self) -> usize {
        self.live_postings
    }

    /// Σ `len(d)` over all concepts, the integer behind `avg`.
    pub fn total_len(&self) -> u64 {
        self.total_len
    }

    /// An estimate of the heap bytes the index holds (for benchmarks).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map_entry = |k: usize| k + 4 + 1;
        self.vocab.heap_bytes()
            + self.df.capacity() * 4
            + self.base_off.capacity() * 4
            + self.base.capacity() * size_of::<Posting>()
            + self
                .extra
                .values()
                .map(|v| v.capacity() * size_of::<Posting>() + 32)
                .sum::<usize>()
            + self.docs.capacity() * size_of::<Doc>()
            + self.docs.iter().map(|d| d.id.len() * 2).sum::<usize>()
            + self.alive.capacity()
            + self.knorm.capacity() * 8
            + self.by_id.capacity() * map_entry(16)
    }

    /// `len(d)` of the concept `id`, when it is indexed.
    pub fn doc_len(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).map(|&s| self.docs[s as usize].len)
    }

    /// The postings of a term as `(id, f(t, d))`, sorted by id; empty for an unknown term.
    pub fn term_postings(&self, term: &str) -> Vec<(&str, u32)> {
        let Some((t, _)) = self.term(term) else {
            return Vec::new();
        };
        let mut out: Vec<(&str, u32)> = self
            .postings(t)
            .filter(|p| self.is_alive(p.slot))
            .map(|p| (&*self.docs[p.slot as usize].id, p.f))
            .collect();
        out.sort_unstable();
        out
    }

    /// Whether `slot` is a live document.
    #[inline]
    pub(crate) fn is_alive(&self, slot: u32) -> bool {
        self.alive[slot as usize]
    }

    /// The document of a slot.
    #[inline]
    pub(crate) fn doc(&self, slot: u32) -> &Doc {
        &self.docs[slot as usize]
    }

    /// The slot count (live and dead).
    pub(crate) fn slots(&self) -> usize {
        self.docs.len()
    }

    /// The index of a bundle name among the indexed bundles.
    pub(crate) fn bundle_index(&self, name: &str) -> Option<u32> {
        self.bundles
            .iter()
            .position(|b| **b == *name)
            .map(|i| i as u32)
    }

    /// `k1 · norm(d)` of a slot.
    #[inline]
    pub(crate) fn knorm(&self, slot: u32) -> f64 {
        self.knorm[slot as usize]
    }

    /// A term's id and `n(t)`, when some live document holds it.
    pub(crate) fn term(&self, text: &str) -> Option<(u32, u32)> {
        let t = self.vocab.get(text)?;
        let df = self.df[t as usize];
        (df > 0).then_some((t, df))
    }

    /// Every posting of a term, dead slots included.
    pub(crate) fn postings(&self, t: u32) -> impl Iterator<Item = Posting> + '_ {
        let t = t as usize;
        let base: &[Posting] = if t + 1 < self.base_off.len() {
            &self.base[self.base_off[t] as usize..self.base_off[t + 1] as usize]
        } else {
            &[]
        };
        let extra: &[Posting] = self
            .extra
            .get(&(t as u32))
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        base.iter().chain(extra.iter()).copied()
    }

    /// Brings the index from `old` (the model it was built or last updated for) to `new`
    /// on the date `today` (search.md §8).
    ///
    /// Only concepts whose indexed content changed are re-tokenized. Both models list
    /// their concepts by (bundle, id), so one side-by-side walk pairs each concept with its
    /// old self; a pair is unchanged when it is the same `Arc` (the linker shares untouched
    /// concepts), or else when text, title and row cells are equal. When `today` differs from the index's date,
    /// the concepts whose rendered `status` flips between `-` and `stale` are re-indexed
    /// too; only concepts with a `stale_after` date can flip.
    ///
    /// The index is rebuilt from `new` instead when more than about a quarter of the
    /// concepts change, or when `old` turns out not to be the indexed model. Either way
    /// the result equals [`Index::build`]`(new, today)`.
    pub fn update(&mut self, old: &Model, new: &Model, today: &str) {
        if !self.try_update(old, new, today) {
            // Drop the old postings before building the new ones.
            *self = Index::empty(today);
            *self = Index::build(new, today);
            return;
        }
        self.today = today.to_string();
        if (self.extra_postings + self.dead_postings) * 4 > self.live_postings.max(64) {
            self.compact();
        }
        self.refresh_norms();
    }

    fn try_update(&mut self, old: &Model, new: &Model, today: &str) -> bool {
        if old.concepts.len() != self.live as usize {
            return false;
        }
        let date_changed = self.today != today;
        // Both concept lists are sorted by (bundle, id): walk them side by side.
        let flips = |a: &Concept, b: &Concept| {
            date_changed
                && b.parsed.stale_after.is_some()
                && status_for(a, &self.today) != status_for(b, today)
        };
        let mut gone: Vec<&Concept> = Vec::new();
        let mut added: Vec<&Concept> = Vec::new();
        let (mut i, mut j) = (0, 0);
        loop {
            match (old.concepts.get(i), new.concepts.get(j)) {
                (None, None) => break,
                (Some(a), None) => {
                    gone.push(a);
                    i += 1;
                }
                (None, Some(b)) => {
                    added.push(b);
                    j += 1;
                }
                (Some(a), Some(b)) => match if Arc::ptr_eq(a, b) {
                    Ordering::Equal
                } else {
                    (a.bundle.as_str(), a.id.as_str()).cmp(&(b.bundle.as_str(), b.id.as_str()))
                } {
                    Ordering::Less => {
                        gone.push(a);
                        i += 1;
                    }
                    Ordering::Greater => {
                        added.push(b);
                        j += 1;
                    }
                    Ordering::Equal => {
                        if !(Arc::ptr_eq(a, b) || same_indexed(a, b)) || flips(a, b) {
                            gone.push(a);
                            added.push(b);
                        }
                        i += 1;
                        j += 1;
                    }
                },
            }
        }
        // Re-indexing most of the tenant (a date that turns everything stale, a bulk
        // import) is cheaper as a fresh build.
        if (gone.len() + added.len()) * 4 > 2 * old.concepts.len() + 64 {
            return false;
        }
        let old_today = std::mem::take(&mut self.today);
        let mut counter = Counter::default();
        for c in gone {
            if !self.remove(c, &old_today, &mut counter) {
                return false;
            }
        }
        for c in added {
            if self.by_id.contains_key(c.id.as_str()) {
                return false;
            }
            self.add(c, today, &mut counter);
        }
        self.live as usize == new.concepts.len()
    }

    /// Tombstones the document of `c`, re-tokenizing it to find its terms. Returns false
    /// when `c` is not what the index holds.
    fn remove(&mut self, c: &Concept, today: &str, counter: &mut Counter) -> bool {
        let Some(&slot) = self.by_id.get(c.id.as_str()) else {
            return false;
        };
        let Counter {
            counts,
            touched,
            len,
            scratch,
        } = counter;
        let mut sink = Lookup {
            vocab: &self.vocab,
            counts,
            touched,
            len: 0,
            w: 0,
            known: true,
        };
        doc_tokens(c, today, scratch, &mut sink);
        let (known, doc_len) = (sink.known, sink.len);
        *len = doc_len;
        let ok = known
            && u64::from(self.docs[slot as usize].len) == *len
            && touched.as_slice().iter().all(|&t| self.df[t as usize] > 0);
        for &t in touched.as_slice() {
            counts[t as usize] = 0;
            if ok {
                self.df[t as usize] -= 1;
            }
        }
        let distinct = touched.as_slice().len();
        touched.clear();
        if !ok {
            return false;
        }
        self.by_id.remove(c.id.as_str());
        self.alive[slot as usize] = false;
        self.live -= 1;
        self.total_len -= u64::from(self.docs[slot as usize].len);
        self.live_postings -= distinct;
        self.dead_postings += distinct;
        true
    }

    /// Indexes `c` under a new slot, its postings going to `extra`.
    fn add(&mut self, c: &Concept, today: &str, counter: &mut Counter) {
        if counter.counts.len() < self.df.len() {
            counter.counts.resize(self.df.len(), 0);
        }
        counter.touched.fit(counter.counts.len());
        self.count(c, today, counter);
        let slot = self.docs.len() as u32;
        for &t in counter.touched.as_slice() {
            let f = counter.counts[t as usize];
            counter.counts[t as usize] = 0;
            self.df[t as usize] += 1;
            self.extra.entry(t).or_default().push(Posting { slot, f });
        }
        let n = counter.touched.as_slice().len();
        counter.touched.clear();
        self.extra_postings += n;
        self.live_postings += n;
        self.push_doc(c, counter.len);
    }

    /// Folds `extra` into the flat postings and drops dead slots, renumbering the live
    /// ones in slot order.
    fn compact(&mut self) {
        let mut remap = vec![u32::MAX; self.docs.len()];
        let mut next = 0u32;
        for (slot, &a) in self.alive.iter().enumerate() {
            if a {
                remap[slot] = next;
                next += 1;
            }
        }
        let terms = self.df.len();
        let mut off = Vec::with_capacity(terms + 1);
        let mut base = Vec::with_capacity(self.live_postings);
        off.push(0u32);
        for t in 0..terms {
            for p in self.postings(t as u32) {
                let s = remap[p.slot as usize];
                if s != u32::MAX {
                    base.push(Posting { slot: s, f: p.f });
                }
            }
            off.push(base.len() as u32);
        }
        let docs = std::mem::take(&mut self.docs);
        self.docs = docs
            .into_iter()
            .zip(self.alive.iter())
            .filter(|(_, &a)| a)
            .map(|(d, _)| d)
            .collect();
        for s in self.by_id.values_mut() {
            *s = remap[*s as usize];
        }
        self.alive = vec![true; self.docs.len()];
        self.base_off = off;
        self.base = base;
        self.extra = HashMap::default();
        self.extra_postings = 0;
        self.dead_postings = 0;
        debug_assert_eq!(self.base.len(), self.live_postings);
    }

    /// The canonical bytes of the index: equal for equal indexed content, whatever
    /// sequence of builds and updates produced it.
    ///
    /// Layout (all integers LEB128): the magic `LRSI`, format version 1, `today`; the
    /// bundles in name order; the documents in id order, each its id, bundle number and
    /// `len`; then the terms in byte order, each its text, `n(t)` and its postings as
    /// (document number delta, `f`). Strings are a length then UTF-8 bytes.
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
        let texts = self.vocab.texts(self.df.len());
        let mut terms: Vec<u32> = (0..self.df.len() as u32)
            .filter(|&t| self.df[t as usize] > 0)
            .collect();
        terms.sort_by(|&a, &b| texts[a as usize].cmp(&texts[b as usize]));

        let mut out = Vec::with_capacity(16 + self.live_postings * 3 + self.docs.len() * 24);
        out.extend_from_slice(MAGIC);
        put(&mut out, VERSION);
        put_str(&mut out, &self.today);
        put(&mut out, used.len() as u64);
        for &b in &used {
            put_str(&mut out, &self.bundles[b as usize]);
        }
        put(&mut out, live.len() as u64);
        for &s in &live {
            let d = &self.docs[s as usize];
            put_str(&mut out, &d.id);
            put(&mut out, u64::from(bundle_no[d.bundle as usize]));
            put(&mut out, u64::from(d.len));
        }
        put(&mut out, terms.len() as u64);
        let mut list: Vec<(u32, u32)> = Vec::new();
        for &t in &terms {
            put_str(&mut out, &texts[t as usize]);
            list.clear();
            list.extend(
                self.postings(t)
                    .filter(|p| self.is_alive(p.slot))
                    .map(|p| (rank[p.slot as usize], p.f)),
            );
            list.sort_unstable();
            put(&mut out, list.len() as u64);
            let mut prev = 0u32;
            for (i, &(r, f)) in list.iter().enumerate() {
                put(&mut out, u64::from(if i == 0 { r } else { r - prev }));
                put(&mut out, u64::from(f));
                prev = r;
            }
        }
        out
    }

    /// Reads bytes written by [`Index::encode`]. Anything malformed is a `CORRUPT` error
    /// naming the search index record.
    pub fn decode(bytes: &[u8]) -> Result<Index> {
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
        let nd = r.count()?;
        ix.docs.reserve(nd);
        for _ in 0..nd {
            let id = r.str()?;
            let bundle = r.u32()?;
            let len = r.u32()?;
            if bundle as usize >= ix.bundles.len() {
                return Err(corrupt("bundle number out of range"));
            }
            if ix.docs.last().is_some_and(|l| *l.id >= *id) {
                return Err(corrupt("documents out of order"));
            }
            ix.by_id.insert(id.into(), ix.docs.len() as u32);
            ix.docs.push(Doc {
                id: id.into(),
                bundle,
                len,
            });
            ix.total_len += u64::from(len);
        }
        ix.alive = vec![true; nd];
        ix.live = u32::try_from(nd).map_err(|_| corrupt("too many documents"))?;
        let nt = r.count()?;
        let mut prev_term: Option<&str> = None;
        let mut sums = vec![0u64; nd];
        // A posting takes two bytes or more: room for all of them at once.
        ix.base.reserve((r.b.len() - r.at) / 2);
        for t in 0..nt {
            let text = r.str()?;
            if prev_term.is_some_and(|p| p >= text) || text.is_empty() || text.contains('\0') {
                return Err(corrupt("terms out of order"));
            }
            prev_term = Some(text);
            ix.vocab.intern(text, t as u32);
            let df = r.count()?;
            if df == 0 || df > nd {
                return Err(corrupt("bad posting count"));
            }
            let mut doc = 0u64;
            for i in 0..df {
                let delta = r.u64()?;
                if i > 0 && delta == 0 {
                    return Err(corrupt("postings out of order"));
                }
                doc += delta;
                if doc >= nd as u64 {
                    return Err(corrupt("posting out of range"));
                }
                let f = r.u32()?;
                if f == 0 {
                    return Err(corrupt("empty posting"));
                }
                sums[doc as usize] += u64::from(f);
                ix.base.push(Posting {
                    slot: doc as u32,
                    f,
                });
            }
            ix.df.push(df as u32);
            ix.base_off.push(ix.base.len() as u32);
        }
        if r.at != r.b.len() {
            return Err(corrupt("trailing bytes"));
        }
        if sums
            .iter()
            .zip(&ix.docs)
            .any(|(&s, d)| s != u64::from(d.len))
        {
            return Err(corrupt("document lengths do not match the postings"));
        }
        ix.live_postings = ix.base.len();
        ix.refresh_norms();
        Ok(ix)
    }
}

const MAGIC: &[u8; 4] = b"LRSI";
const VERSION: u64 = 1;

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
}
