//! The search index (docs/search.md, "Indexed fields" and "Index layout"): four fields per
//! concept, each with its own statistics, over two kinds of unit, terms and pairs of
//! adjacent terms, plus the name sequences.
//!
//! Layout. Terms and pairs share one dense space of `u32` unit ids ([`super::table`]). A
//! posting list is keyed by `unit · 4 + field`; postings `(slot, tf)` live in one flat array
//! in compressed-sparse-row form (`base_off`, `base`), each list sorted by slot. Documents
//! added since the last compaction append to small per-list vectors (`extra`); removed
//! documents are tombstoned (`alive`) and their lists' `n_f(u)` decremented at once, so the
//! scores never see them. A compaction folds both back into the flat array when they grow
//! past a quarter of the live postings ([`super::update`]).
//!
//! Pairs are kept as postings of their own rather than as token positions: a document has
//! at most one pair posting per distinct adjacent pair of a field, fewer than the positions
//! of its tokens, and a query reads a pair's `n_f` and `tf` directly instead of
//! intersecting two position lists.
//!
//! Slots are assigned in insertion order and never reused before a compaction. Search
//! results do not depend on them: every sum runs in query order and the ranking breaks ties
//! by id.

use super::table::{pair_key, Fast, PairTable, Vocab};
use super::tokenize::{scan, Sink};
use crate::compile::{Concept, Model, ParsedDoc};
use crate::manifest::status_for;
use std::collections::HashMap;
use std::sync::Arc;

/// BM25 `k1` (docs/search.md).
pub const K1: f64 = 1.2;
/// BM25 `b` (docs/search.md).
pub const B: f64 = 0.75;

/// The number of indexed fields.
pub const FIELDS: usize = 4;
/// The fields in scoring order: `names`, `description`, `meta`, `body`.
pub const FIELD_NAMES: [&str; FIELDS] = ["names", "description", "meta", "body"];
pub(crate) const NAMES: usize = 0;
pub(crate) const DESCRIPTION: usize = 1;
pub(crate) const META: usize = 2;
pub(crate) const BODY: usize = 3;

/// The longest name sequence (and query run) that can earn a name bonus.
pub const MAX_RUN: usize = 12;

/// No unit (the token before a field's first).
pub(crate) const NONE: u32 = u32::MAX;

/// One posting: a document slot and `tf_f(u, d)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Posting {
    pub(crate) slot: u32,
    pub(crate) tf: u32,
}

/// One indexed document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doc {
    /// The concept's public id.
    pub(crate) id: Arc<str>,
    /// Index into `Index::bundles`.
    pub(crate) bundle: u32,
    /// `len_f(d)` by field.
    pub(crate) len: [u32; FIELDS],
    /// The `names` field's tokens as term ids: the id's, then the title's.
    pub(crate) names: Box<[u32]>,
    /// How many of `names` come from the id.
    pub(crate) id_len: u32,
}

impl Doc {
    /// The name sequences that can match a query run: the id's and the title's tokens,
    /// each when it has 1 to [`MAX_RUN`] tokens, the second only when it differs.
    pub(crate) fn name_seqs(&self) -> impl Iterator<Item = &[u32]> {
        let (id, title) = self.names.split_at(self.id_len as usize);
        let ok = |s: &[u32]| (1..=MAX_RUN).contains(&s.len());
        let first = ok(id).then_some(id);
        let second = (ok(title) && title != id).then_some(title);
        first.into_iter().chain(second)
    }
}

/// The terms a document holds, in order of first appearance, appended without a branch
/// (whether a token is a term's first in its field is unpredictable).
#[derive(Default)]
pub(crate) struct Touched {
    /// Invariant: longer than the number of units noted, so the next write fits.
    ids: Vec<u32>,
    n: usize,
}

impl Touched {
    /// Notes `u`; it is kept only when `first`.
    #[inline(always)]
    fn note(&mut self, u: u32, first: bool) {
        self.ids[self.n] = u;
        self.n += usize::from(first);
    }

    /// Makes room for `units` units.
    #[inline]
    pub(crate) fn fit(&mut self, units: usize) {
        if self.ids.len() <= units {
            self.ids.resize(units + 1, 0);
        }
    }

    fn as_slice(&self) -> &[u32] {
        &self.ids[..self.n]
    }

    fn clear(&mut self) {
        self.n = 0;
    }
}

/// One document's units, counted field by field; reused across documents.
#[derive(Default)]
pub(crate) struct Tally {
    /// The count of each unit in the current field, by unit id (0 outside it).
    pub(crate) counts: Vec<u32>,
    pub(crate) touched: Touched,
    /// `(list key, tf)` of the document so far (`unit · 4 + field`), field by field.
    pub(crate) out: Vec<(u32, u32)>,
    /// `len_f(d)` per field.
    pub(crate) lens: [u32; FIELDS],
    /// The names field's tokens, and how many come from the id.
    pub(crate) names: Vec<u32>,
    pub(crate) id_len: u32,
    len: u32,
    prev: u32,
    field: usize,
    pub(crate) scratch: String,
    /// The `meta` field's text of the current document.
    meta: String,
}

impl Tally {
    /// Makes room for `units` units.
    pub(crate) fn fit(&mut self, units: usize) {
        if self.counts.len() < units {
            self.counts.resize(units, 0);
        }
        self.touched.fit(units);
    }

    #[inline(always)]
    fn note(&mut self, u: u32) {
        let c = &mut self.counts[u as usize];
        self.touched.note(u, *c == 0);
        *c += 1;
    }

    /// Whether the token `t` closes a pair with the previous one.
    #[inline(always)]
    fn pairs_with(&self, t: u32) -> bool {
        self.prev != NONE && self.prev != t
    }

    /// One token of the current field, as the term `t`, and the unit of the pair it closes
    /// with the previous token ([`NONE`] when there is none).
    #[inline(always)]
    fn token(&mut self, t: u32, pair: u32) {
        self.note(t);
        if pair != NONE {
            self.note(pair);
        }
        self.advance(t);
    }

    /// Moves past the token `t`, its units noted.
    #[inline(always)]
    fn advance(&mut self, t: u32) {
        self.prev = t;
        self.len += 1;
        if self.field == NAMES {
            self.names.push(t);
        }
    }

    /// A token whose term is unknown (a lookup only): it counts for the length and breaks
    /// the pair chain.
    fn unknown(&mut self) {
        self.prev = NONE;
        self.len += 1;
    }

    fn begin(&mut self, f: usize) {
        self.field = f;
        self.len = 0;
        self.prev = NONE;
        if f == NAMES {
            self.out.clear();
            self.names.clear();
        }
    }

    fn end(&mut self, f: usize) {
        let fk = f as u32;
        let counts = &mut self.counts;
        self.out.extend(self.touched.as_slice().iter().map(|&u| {
            let c = std::mem::take(&mut counts[u as usize]);
            (u * FIELDS as u32 + fk, c)
        }));
        self.touched.clear();
        self.lens[f] = self.len;
    }

    /// The number of postings counted over all fields.
    pub(crate) fn postings(&self) -> usize {
        self.out.len()
    }
}

/// A token receiver that also hears where fields begin and end.
pub(crate) trait DocSink: Sink {
    fn tally(&mut self) -> &mut Tally;
}

/// Trailing NUL bytes (separators) let the scanner load whole words past every token.
const PAD: &str = "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

/// Scans `text` padded, through the scratch buffer.
fn scan_padded<S: DocSink>(text: &str, sink: &mut S) {
    let mut scratch = std::mem::take(&mut sink.tally().scratch);
    scratch.clear();
    scratch.push_str(text);
    scratch.push_str(PAD);
    scan(&scratch, sink);
    sink.tally().scratch = scratch;
}

/// The `description` field's text: the summary's source before truncation.
pub(crate) fn description(p: &ParsedDoc) -> &str {
    p.summary_source.as_deref().unwrap_or(&p.summary)
}

/// Scans the four fields of a concept into `sink` (docs/search.md, "Indexed fields").
pub(crate) fn doc_tokens<S: DocSink>(c: &Concept, today: &str, sink: &mut S) {
    let p = &c.parsed;
    sink.tally().begin(NAMES);
    scan_padded(&c.id, sink);
    let t = sink.tally();
    t.id_len = t.len;
    if let Some(title) = &p.title {
        // The field is `<id> <title>`: the space ends the id's last token, and the pair
        // across it counts.
        scan_padded(title, sink);
    }
    sink.tally().end(NAMES);

    sink.tally().begin(DESCRIPTION);
    scan_padded(description(p), sink);
    sink.tally().end(DESCRIPTION);

    sink.tally().begin(META);
    let mut meta = std::mem::take(&mut sink.tally().meta);
    meta.clear();
    for cell in [c.bundle.as_str(), &p.kind, status_for(c, today), &p.grain] {
        // A `-` cell yields no tokens; the tokenizer drops it anyway.
        if cell != "-" {
            meta.push_str(cell);
        }
        meta.push(' ');
    }
    scan_padded(&meta, sink);
    sink.tally().meta = meta;
    sink.tally().end(META);

    sink.tally().begin(BODY);
    scan(c.body(), sink);
    sink.tally().end(BODY);
}

/// Interns tokens and pairs (adding new units) and counts them into a [`Tally`].
pub(crate) struct Interner<'a> {
    pub(crate) vocab: &'a mut Vocab,
    pub(crate) pairs: &'a mut PairTable,
    pub(crate) df: &'a mut Vec<[u32; FIELDS]>,
    pub(crate) tally: &'a mut Tally,
}

impl Interner<'_> {
    /// Makes room for the unit just added (its id is the old `df.len()`).
    #[inline(always)]
    fn grow(df: &mut Vec<[u32; FIELDS]>, tally: &mut Tally) {
        df.push([0; FIELDS]);
        tally.counts.push(0);
        tally.touched.fit(tally.counts.len());
    }

    /// One token as the term `t`, already interned (with room made for it).
    #[inline(always)]
    fn term(&mut self, t: u32) {
        self.tally.note(t);
        if self.tally.pairs_with(t) {
            let key = pair_key(self.tally.prev, t);
            let next = self.df.len() as u32;
            let (df, tally) = (&mut *self.df, &mut *self.tally);
            let pair = self.pairs.intern_with(key, next, || Self::grow(df, tally));
            self.tally.note(pair);
        }
        self.tally.advance(t);
    }
}

impl Sink for Interner<'_> {
    #[inline(always)]
    fn token(&mut self, tok: &str) {
        let next = self.df.len() as u32;
        let t = self.vocab.intern(tok, next);
        if t == next {
            Self::grow(self.df, self.tally);
        }
        self.term(t);
    }

    #[inline(always)]
    fn short(&mut self, key: [u64; 2], _len: usize) {
        let next = self.df.len() as u32;
        let (df, tally) = (&mut *self.df, &mut *self.tally);
        let t = self
            .vocab
            .short
            .intern_with(key, next, || Self::grow(df, tally));
        self.term(t);
    }
}

impl DocSink for Interner<'_> {
    fn tally(&mut self) -> &mut Tally {
        self.tally
    }
}

/// Counts the units of a document already in the index, noting unknown ones.
pub(crate) struct Lookup<'a> {
    pub(crate) vocab: &'a Vocab,
    pub(crate) pairs: &'a PairTable,
    pub(crate) tally: &'a mut Tally,
    pub(crate) known: bool,
}

impl Lookup<'_> {
    fn term(&mut self, t: Option<u32>) {
        match t {
            Some(t) => {
                let mut pair = NONE;
                if self.tally.pairs_with(t) {
                    match self.pairs.get(pair_key(self.tally.prev, t)) {
                        Some(p) => pair = p,
                        None => self.known = false,
                    }
                }
                self.tally.token(t, pair);
            }
            None => {
                self.known = false;
                self.tally.unknown();
            }
        }
    }
}

impl Sink for Lookup<'_> {
    fn token(&mut self, tok: &str) {
        let t = self.vocab.get(tok);
        self.term(t);
    }

    fn short(&mut self, key: [u64; 2], _len: usize) {
        let t = self.vocab.short.get(key);
        self.term(t);
    }
}

impl DocSink for Lookup<'_> {
    fn tally(&mut self) -> &mut Tally {
        self.tally
    }
}

/// A build's forward postings, document after document: the list keys, and `tf` in one
/// byte (255 and above in `big`, by position, which is rare). Five bytes a posting instead
/// of eight, so fewer fresh pages for a build to fault in.
#[derive(Default)]
struct Forward {
    keys: Vec<u32>,
    tf: Vec<u8>,
    /// `(position, tf)` of the postings whose `tf` byte is [`Forward::BIG`], in order.
    big: Vec<(u32, u32)>,
}

impl Forward {
    const BIG: u8 = u8::MAX;

    fn with_capacity(n: usize) -> Forward {
        Forward {
            keys: Vec::with_capacity(n),
            tf: Vec::with_capacity(n),
            big: Vec::new(),
        }
    }

    /// Appends one document's postings.
    #[inline]
    fn extend(&mut self, out: &[(u32, u32)]) {
        let at = self.keys.len();
        self.keys.extend(out.iter().map(|p| p.0));
        self.tf
            .extend(out.iter().map(|p| p.1.min(u32::from(Self::BIG)) as u8));
        for (i, p) in out.iter().enumerate() {
            if p.1 >= u32::from(Self::BIG) {
                self.big.push(((at + i) as u32, p.1));
            }
        }
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

/// The fewest documents a range of a build on several cores holds: below that, threads
/// cost more than they save.
const MIN_PART: usize = 1024;

/// A document's lengths and name tokens as counted, before it has a slot.
struct Counted {
    lens: [u32; FIELDS],
    names: Box<[u32]>,
    id_len: u32,
}

impl Counted {
    fn of(tally: &Tally) -> Counted {
        Counted {
            lens: tally.lens,
            names: tally.names.as_slice().into(),
            id_len: tally.id_len,
        }
    }
}

/// A range of documents tokenized on its own: its units numbered by their first
/// appearance in the range (`units`: the tables and `n_f`), its forward postings with each
/// document's end, and its documents as counted.
struct Part {
    units: Index,
    fwd: Forward,
    ends: Vec<u32>,
    docs: Vec<Counted>,
}

impl Part {
    fn tokenize(concepts: &[&Concept], today: &str) -> Part {
        let mut units = Index::empty(today);
        let mut tally = Tally::default();
        // Room for every posting at once: a field of `L` tokens gives at most `2L` postings
        // and a token takes at least 2 bytes with its separator, so a quarter of the text's
        // bytes is rarely exceeded. Pages never written are never touched.
        let bytes: usize = concepts.iter().map(|c| c.text.len()).sum();
        let mut fwd = Forward::with_capacity(bytes / 4 + 1024);
        let mut ends: Vec<u32> = Vec::with_capacity(concepts.len());
        let mut docs: Vec<Counted> = Vec::with_capacity(concepts.len());
        for c in concepts {
            units.count(c, today, &mut tally);
            let df = units.df.as_flattened_mut();
            for &(key, _) in &tally.out {
                df[key as usize] += 1;
            }
            fwd.extend(&tally.out);
            docs.push(Counted::of(&tally));
            ends.push(fwd.len() as u32);
        }
        Part {
            units,
            fwd,
            ends,
            docs,
        }
    }
}

/// `parts` consecutive ranges of `concepts` (at least one, possibly empty) of about equal
/// text bytes.
fn split_by_text(concepts: &[&Concept], parts: usize) -> Vec<std::ops::Range<usize>> {
    let total: usize = concepts.iter().map(|c| c.text.len()).sum();
    let mut out = Vec::with_capacity(parts);
    let (mut start, mut acc, mut i) = (0usize, 0usize, 0usize);
    for k in 1..parts {
        let want = total as u64 * k as u64 / parts as u64;
        while i < concepts.len() && (acc as u64) < want {
            acc += concepts[i].text.len();
            i += 1;
        }
        out.push(start..i);
        start = i;
    }
    out.push(start..concepts.len());
    out
}

/// One range of posting lists being filled, list keys `lo .. lo + width`, from forward
/// postings document after document.
struct Fill<'a> {
    lo: u32,
    width: u32,
    /// The next free index in `out` by list, from `lo`, and a last entry that stays 0 (for
    /// the postings of other ranges).
    cur: &'a mut [u32],
    /// Not empty.
    out: &'a mut [Posting],
    /// Where the postings of other ranges go: selecting it is cheaper than a branch, which
    /// the lists' order makes unpredictable.
    trash: Posting,
    /// The slot of the next document.
    slot: u32,
}

impl Fill<'_> {
    /// The postings of `fwd` (documents ending at `ends`) whose list key, through `key`,
    /// falls in this range; `ALL` when every list is in it (one range: no test).
    #[inline(always)]
    fn part<const ALL: bool>(&mut self, fwd: &Forward, ends: &[u32], key: impl Fn(u32) -> u32) {
        let mut start = 0usize;
        let mut big = fwd.big.iter();
        for &end in ends {
            let end = end as usize;
            for (i, (&k, &tf)) in fwd.keys[start..end]
                .iter()
                .zip(&fwd.tf[start..end])
                .enumerate()
            {
                let tf = if tf == Forward::BIG {
                    big.next().map_or(0, |&(at, tf)| {
                        debug_assert_eq!(at as usize, start + i);
                        tf
                    })
                } else {
                    u32::from(tf)
                };
                let posting = Posting {
                    slot: self.slot,
                    tf,
                };
                if ALL {
                    let at = &mut self.cur[key(k) as usize];
                    self.out[*at as usize] = posting;
                    *at += 1;
                    continue;
                }
                let r = key(k).wrapping_sub(self.lo);
                let mine = r < self.width;
                let r = if mine { r } else { self.width } as usize;
                let at = self.cur[r];
                let here = &mut self.out[at as usize];
                let dst = if mine { here } else { &mut self.trash };
                *dst = posting;
                self.cur[r] += u32::from(mine);
            }
            self.slot += 1;
            start = end;
        }
    }
}

/// Turns forward postings (document-major, each document's end in `ends`) into CSR
/// lists sorted by slot, given `n_f` by unit (`df`): `first`'s documents, keyed by the
/// index's list keys, then each of `rest` in order, whose keys map through its third
/// vector. The lists are cut into ranges of about equal postings, each filled on its own
/// (on every core with the `parallel` feature) from every document.
fn scatter(
    df: &[[u32; FIELDS]],
    first: &(Forward, Vec<u32>),
    rest: &[(Forward, Vec<u32>, Vec<u32>)],
) -> (Vec<u32>, Vec<Posting>) {
    let lists = df.len() * FIELDS;
    let mut off = Vec::with_capacity(lists + 1);
    let mut acc = 0u32;
    off.push(0);
    for d in df {
        for &n in d {
            acc += n;
            off.push(acc);
        }
    }
    let mut base = vec![Posting::default(); acc as usize];
    let chunks = if rest.is_empty() {
        1
    } else {
        crate::par::threads()
    };
    // List boundaries of the chunks, by postings.
    let mut bounds = vec![0usize];
    for i in 1..chunks {
        let want = (acc as u64 * i as u64 / chunks as u64) as u32;
        let k = off.partition_point(|&o| o < want).min(lists);
        bounds.push(k.max(*bounds.last().unwrap_or(&0)));
    }
    bounds.push(lists);
    let mut jobs: Vec<(usize, usize, &mut [Posting])> = Vec::with_capacity(chunks);
    let mut tail: &mut [Posting] = &mut base;
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let (chunk, more) = tail.split_at_mut((off[hi] - off[lo]) as usize);
        jobs.push((lo, hi, chunk));
        tail = more;
    }
    crate::par::for_each_mut(&mut jobs, |(lo, hi, chunk)| {
        let (lo, hi) = (*lo, *hi);
        if chunk.is_empty() {
            return;
        }
        let mut cur: Vec<u32> = off[lo..=hi].iter().map(|&o| o - off[lo]).collect();
        cur[hi - lo] = 0;
        let mut fill = Fill {
            lo: lo as u32,
            width: (hi - lo) as u32,
            cur: &mut cur,
            out: chunk,
            trash: Posting::default(),
            slot: 0,
        };
        if rest.is_empty() && lo == 0 && hi == lists {
            fill.part::<true>(&first.0, &first.1, |k| k);
            return;
        }
        fill.part::<false>(&first.0, &first.1, |k| k);
        for (fwd, ends, keys) in rest {
            fill.part::<false>(fwd, ends, |k| keys[k as usize]);
        }
    });
    (off, base)
}

/// The search index of one tenant for one `today` (docs/search.md).
///
/// Build it with [`Index::build`]; keep it current with [`Index::update`] on every commit
/// and whenever the read date changes. [`Index::encode`] gives canonical bytes for a
/// derived record and [`Index::decode`] reads them back.
#[derive(Debug, Clone)]
pub struct Index {
    pub(crate) today: String,
    pub(crate) vocab: Vocab,
    pub(crate) pairs: PairTable,
    /// `n_f(u)` by unit id, over live documents.
    pub(crate) df: Vec<[u32; FIELDS]>,
    /// CSR offsets into `base` by list key (`unit · 4 + field`), one more than the lists
    /// known at the last compaction. Shared with the index's clones, like `base`: only a
    /// compaction or a decode writes them, always into new arrays (docs/search.md §8
    /// rule 4: a commit's copy of the index shares them).
    pub(crate) base_off: Arc<Vec<u32>>,
    /// Invariant: the postings of each list are sorted by slot.
    pub(crate) base: Arc<Vec<Posting>>,
    /// Postings added since the last compaction, by list key; slots above every base slot.
    pub(crate) extra: HashMap<u32, Vec<Posting>, Fast>,
    pub(crate) extra_postings: usize,
    pub(crate) docs: Vec<Doc>,
    pub(crate) alive: Vec<bool>,
    /// `k1 · norm_f(d)` by field, then slot, refreshed whenever an `avg_f` changes. One
    /// array per field: a posting list of field `f` reads only `knorm[f]`, so the memory a
    /// ranking walks is a quarter of what slot-major records would make it
    /// (docs/search.md §10, "A query's working memory").
    pub(crate) knorm: [Vec<f64>; FIELDS],
    pub(crate) by_id: HashMap<Arc<str>, u32, Fast>,
    pub(crate) bundles: Vec<Box<str>>,
    /// The live slots by name sequence (term ids), each slot once per sequence.
    pub(crate) name_seqs: HashMap<Box<[u32]>, Vec<u32>, Fast>,
    pub(crate) live: u32,
    /// Σ `len_f(d)` over live documents, integers so updates cannot drift.
    pub(crate) total_len: [u64; FIELDS],
    pub(crate) live_postings: usize,
    pub(crate) dead_postings: usize,
    /// The posting lists of the written fields still encoded, when decoded from a derived
    /// record by [`Index::decode_shared`]; `base` then holds only the names lists. Kept
    /// through updates (a list's postings are its encoded part, then its `extra`) and
    /// folded into `base` by a compaction. Shared with the index's clones (a list is
    /// decoded once, for all of them).
    pub(crate) encoded: Option<Arc<super::codec::Encoded>>,
}

impl Index {
    pub(crate) fn empty(today: &str) -> Index {
        Index {
            today: today.to_string(),
            vocab: Vocab::default(),
            pairs: PairTable::default(),
            df: Vec::new(),
            base_off: Arc::new(vec![0]),
            base: Arc::default(),
            extra: HashMap::default(),
            extra_postings: 0,
            docs: Vec::new(),
            alive: Vec::new(),
            knorm: Default::default(),
            by_id: HashMap::default(),
            bundles: Vec::new(),
            name_seqs: HashMap::default(),
            live: 0,
            total_len: [0; FIELDS],
            live_postings: 0,
            dead_postings: 0,
            encoded: None,
        }
    }

    /// Builds the index of `model` for the read date `today`.
    ///
    /// With the `parallel` feature the documents are tokenized in ranges, one per core,
    /// and merged (`build_in`, docs/search.md §10); the index is the same either way.
    pub fn build(model: &Model, today: &str) -> Index {
        let parts = crate::par::threads()
            .min(model.concepts().len() / MIN_PART)
            .max(1);
        Index::build_in(model, today, parts)
    }

    /// [`Index::build`] with the documents tokenized in `parts` ranges of about equal text
    /// (on every core with the `parallel` feature), each numbering its units by their first
    /// appearance in the range. The ranges are merged in order: a range's unit that an
    /// earlier one has keeps the earlier id, and its new units get the next ids in their
    /// own order, which is the order a single pass over all documents meets them in. So the
    /// unit ids, the tables, the posting lists and the documents equal those of one pass
    /// (docs/search.md §10, "The build on every core").
    pub(crate) fn build_in(model: &Model, today: &str, parts: usize) -> Index {
        // Slots in id order, the order a decoded index has (the codec ranks documents by
        // id): the encode's posting lists are then in rank order as they stand, instead of
        // one run per bundle to merge (docs/search.md §10, "Slots").
        let mut order: Vec<&Concept> = model.concepts().iter().map(|c| &**c).collect();
        order.sort_by(|a, b| a.id.cmp(&b.id));
        let ranges = split_by_text(&order, parts);
        let mut parts = crate::par::map(&ranges, |r| Part::tokenize(&order[r.clone()], today));
        let mut ix = Index::empty(today);
        let first = parts.remove(0);
        ix.vocab = first.units.vocab;
        ix.pairs = first.units.pairs;
        ix.df = first.units.df;
        let mut docs: Vec<Vec<Counted>> = vec![first.docs];
        let mut rest: Vec<(Forward, Vec<u32>, Vec<u32>)> = Vec::with_capacity(parts.len());
        for part in parts {
            let map = ix.absorb(&part.units);
            let mut counted = part.docs;
            for d in &mut counted {
                for t in d.names.iter_mut() {
                    *t = map[*t as usize];
                }
            }
            docs.push(counted);
            let keys = (0..part.units.df.len() * FIELDS)
                .map(|k| map[k / FIELDS] * FIELDS as u32 + (k % FIELDS) as u32)
                .collect();
            rest.push((part.fwd, part.ends, keys));
        }
        // The documents' slots, ids and name sequences beside the posting lists, which
        // need only the `n_f`.
        let df = std::mem::take(&mut ix.df);
        let first = (first.fwd, first.ends);
        let ((), (off, base)) = crate::par::beside(
            || {
                for (c, d) in order.iter().zip(docs.into_iter().flatten()) {
                    ix.push_counted(c, d);
                }
            },
            || scatter(&df, &first, &rest),
        );
        drop(rest);
        ix.df = df;
        ix.live_postings = base.len();
        ix.base_off = Arc::new(off);
        ix.base = Arc::new(base);
        ix.refresh_norms();
        ix
    }

    /// Adds the units of a range tokenized on its own (`part`, ids by its own first
    /// appearance) that this index lacks, in the range's id order, and their `n_f`. Returns
    /// the range's unit ids as ids of this index.
    fn absorb(&mut self, part: &Index) -> Vec<u32> {
        enum Unit {
            None,
            Term(String),
            Pair(u32, u32),
        }
        let n = part.df.len();
        let mut units: Vec<Unit> = (0..n).map(|_| Unit::None).collect();
        for (u, t) in part.vocab.terms() {
            units[u as usize] = Unit::Term(t);
        }
        for (u, a, b) in part.pairs.pairs() {
            units[u as usize] = Unit::Pair(a, b);
        }
        let mut map: Vec<u32> = Vec::with_capacity(n);
        for (unit, df) in units.iter().zip(&part.df) {
            let next = self.df.len() as u32;
            // A pair is interned after both its terms, so theirs are mapped already.
            let g = match unit {
                Unit::Term(t) => self.vocab.intern(t, next),
                Unit::Pair(a, b) => self
                    .pairs
                    .intern(pair_key(map[*a as usize], map[*b as usize]), next),
                Unit::None => next,
            };
            if g == next {
                self.df.push([0; FIELDS]);
            }
            for (s, d) in self.df[g as usize].iter_mut().zip(df) {
                *s += d;
            }
            map.push(g);
        }
        map
    }

    /// Tokenizes one concept into `tally`, interning new units.
    pub(crate) fn count(&mut self, c: &Concept, today: &str, tally: &mut Tally) {
        tally.fit(self.df.len());
        let mut sink = Interner {
            vocab: &mut self.vocab,
            pairs: &mut self.pairs,
            df: &mut self.df,
            tally,
        };
        doc_tokens(c, today, &mut sink);
    }

    /// Appends the document of `c` as counted in `tally` under a new slot (its postings
    /// are the caller's business).
    pub(crate) fn push_doc(&mut self, c: &Concept, tally: &Tally) {
        self.push_counted(c, Counted::of(tally));
    }

    /// Appends the document of `c`, its lengths and name tokens counted, under a new slot.
    fn push_counted(&mut self, c: &Concept, counted: Counted) {
        let bundle = match self.bundles.iter().position(|b| **b == *c.bundle) {
            Some(i) => i as u32,
            None => {
                self.bundles.push(c.bundle.as_str().into());
                (self.bundles.len() - 1) as u32
            }
        };
        let doc = Doc {
            id: c.id.as_str().into(),
            bundle,
            len: counted.lens,
            names: counted.names,
            id_len: counted.id_len,
        };
        self.insert_doc(doc);
    }

    /// Appends a document under a new slot: its lengths, its id and its name sequences.
    pub(crate) fn insert_doc(&mut self, doc: Doc) {
        let slot = self.docs.len() as u32;
        for (t, &l) in self.total_len.iter_mut().zip(&doc.len) {
            *t += u64::from(l);
        }
        for s in doc.name_seqs() {
            self.name_seqs.entry(s.into()).or_default().push(slot);
        }
        self.by_id.insert(doc.id.clone(), slot);
        self.docs.push(doc);
        self.alive.push(true);
        self.live += 1;
    }

    /// Recomputes `k1 · norm_f(d)` for every slot and field (docs/search.md, "Scoring").
    pub(crate) fn refresh_norms(&mut self) {
        let n = f64::from(self.live);
        let avg: [f64; FIELDS] = std::array::from_fn(|f| {
            if self.live == 0 {
                0.0
            } else {
                self.total_len[f] as f64 / n
            }
        });
        for (f, knorm) in self.knorm.iter_mut().enumerate() {
            knorm.clear();
            knorm.extend(self.docs.iter().map(|d| {
                let norm = if avg[f] == 0.0 {
                    1.0
                } else {
                    1.0 - B + B * f64::from(d.len[f]) / avg[f]
                };
                K1 * norm
            }));
        }
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
        self.vocab
            .terms()
            .iter()
            .filter(|(u, _)| self.df[*u as usize].iter().any(|&n| n > 0))
            .count()
    }

    /// The number of distinct pairs of live documents.
    pub fn pair_count(&self) -> usize {
        self.pairs
            .pairs()
            .filter(|(u, _, _)| self.df[*u as usize].iter().any(|&n| n > 0))
            .count()
    }

    /// The number of live pair postings over all fields (the rest of
    /// [`Index::posting_count`] are term postings).
    pub fn pair_posting_count(&self) -> usize {
        self.pairs
            .pairs()
            .map(|(u, _, _)| {
                self.df[u as usize]
                    .iter()
                    .map(|&n| n as usize)
                    .sum::<usize>()
            })
            .sum()
    }

    /// The number of live postings, terms and pairs, over all fields.
    pub fn posting_count(&self) -> usize {
        self.live_postings
    }

    /// Σ `len_f(d)` over all concepts by field, the integers behind `avg_f`.
    pub fn total_len(&self) -> [u64; FIELDS] {
        self.total_len
    }

    /// An estimate of the heap bytes the index holds (for benchmarks).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let map_entry = |k: usize| k + 4 + 1;
        self.vocab.heap_bytes()
            + self.pairs.heap_bytes()
            + self.df.capacity() * size_of::<[u32; FIELDS]>()
            + self.base_off.capacity() * 4
            + self.base.capacity() * size_of::<Posting>()
            + self.encoded.as_ref().map_or(0, |e| e.heap_bytes())
            + self
                .extra
                .values()
                .map(|v| v.capacity() * size_of::<Posting>() + 32)
                .sum::<usize>()
            + self.docs.capacity() * size_of::<Doc>()
            + self
                .docs
                .iter()
                .map(|d| d.id.len() * 2 + d.names.len() * 4)
                .sum::<usize>()
            + self.alive.capacity()
            + self.knorm.iter().map(|k| k.capacity() * 8).sum::<usize>()
            + self.by_id.capacity() * map_entry(16)
            + self
                .name_seqs
                .iter()
                .map(|(k, v)| k.len() * 4 + v.capacity() * 4 + 40)
                .sum::<usize>()
    }

    /// `len_f(d)` of the concept `id` by field, when it is indexed.
    pub fn doc_len(&self, id: &str) -> Option<[u32; FIELDS]> {
        self.by_id.get(id).map(|&s| self.docs[s as usize].len)
    }

    /// The postings of a term in field `field` (see [`FIELD_NAMES`]) as `(id, tf)`,
    /// sorted by id; empty for an unknown term.
    pub fn term_postings(&self, field: usize, term: &str) -> Vec<(&str, u32)> {
        self.vocab
            .get(term)
            .map_or_else(Vec::new, |u| self.unit_postings(u, field))
    }

    /// The postings of the pair `(a, b)` of terms in field `field` as `(id, tf)`, sorted by
    /// id; empty for an unknown pair.
    pub fn pair_postings(&self, field: usize, a: &str, b: &str) -> Vec<(&str, u32)> {
        let unit = match (self.vocab.get(a), self.vocab.get(b)) {
            (Some(a), Some(b)) => self.pairs.get(pair_key(a, b)),
            _ => None,
        };
        unit.map_or_else(Vec::new, |u| self.unit_postings(u, field))
    }

    fn unit_postings(&self, unit: u32, field: usize) -> Vec<(&str, u32)> {
        let mut out: Vec<(&str, u32)> = self
            .postings(unit * FIELDS as u32 + field as u32)
            .filter(|p| self.is_alive(p.slot))
            .map(|p| (&*self.docs[p.slot as usize].id, p.tf))
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

    /// Every posting of a list (`unit · 4 + field`), dead slots included.
    pub(crate) fn postings(&self, key: u32) -> impl Iterator<Item = Posting> + '_ {
        let [base, extra] = self.posting_parts(key);
        base.iter().chain(extra.iter()).copied()
    }

    /// The postings of a list as its compacted part and the part added since.
    #[inline]
    pub(crate) fn posting_parts(&self, key: u32) -> [&[Posting]; 2] {
        let k = key as usize;
        let encoded = self.encoded.as_ref().and_then(|e| e.list(key));
        let base: &[Posting] = if let Some(list) = encoded {
            list
        } else if k + 1 < self.base_off.len() {
            &self.base[self.base_off[k] as usize..self.base_off[k + 1] as usize]
        } else {
            &[]
        };
        let extra: &[Posting] = if self.extra.is_empty() {
            &[]
        } else {
            self.extra.get(&key).map_or(&[], Vec::as_slice)
        };
        [base, extra]
    }

    /// Whether a posting list left encoded by [`Index::decode_shared`] failed its check when
    /// it was read (it then read as empty): what was read from this index is not to be
    /// served, and the index is not to be kept (docs/search.md §10, "Encoding").
    pub fn damaged(&self) -> bool {
        self.encoded.as_ref().is_some_and(|e| e.damaged())
    }

    /// Reads every posting list (a list left encoded is checked as it is read) and tells
    /// whether the index is damaged.
    #[cfg(test)]
    pub(crate) fn read_every_list(&self) -> bool {
        for key in 0..(self.df.len() * FIELDS) as u32 {
            let _ = self.postings(key).count();
        }
        self.damaged()
    }

    /// Whether some posting lists are still encoded (an index from `decode_shared`).
    #[cfg(test)]
    pub(crate) fn has_encoded(&self) -> bool {
        self.encoded.is_some()
    }

    /// Every statistic of the index by term text and id, for tests that compare an updated
    /// index with a fresh build beyond its encoding.
    #[cfg(test)]
    pub(crate) fn state_dump(&self) -> String {
        use std::fmt::Write;
        let texts: HashMap<u32, String> = self.vocab.terms().into_iter().collect();
        let mut out = String::new();
        let _ = writeln!(out, "N {} totals {:?}", self.live, self.total_len);
        let mut rows: Vec<String> = Vec::new();
        for (u, t) in &texts {
            let d = self.df[*u as usize];
            if d.iter().any(|&n| n > 0) {
                rows.push(format!("term {t} {d:?}"));
            }
        }
        for (u, a, b) in self.pairs.pairs() {
            let d = self.df[u as usize];
            if d.iter().any(|&n| n > 0) {
                rows.push(format!("pair {} {} {d:?}", texts[&a], texts[&b]));
            }
        }
        for (seq, slots) in &self.name_seqs {
            let words: Vec<&str> = seq.iter().map(|u| texts[u].as_str()).collect();
            let mut ids: Vec<&str> = slots.iter().map(|&s| &*self.docs[s as usize].id).collect();
            ids.sort_unstable();
            rows.push(format!("names {words:?} {ids:?}"));
        }
        for (slot, d) in self.docs.iter().enumerate() {
            if self.alive[slot] {
                let names: Vec<&str> = d.names.iter().map(|u| texts[u].as_str()).collect();
                let bits: [u64; FIELDS] = std::array::from_fn(|f| self.knorm[f][slot].to_bits());
                rows.push(format!(
                    "doc {} {:?} {} {names:?} {bits:?}",
                    d.id, d.len, d.id_len
                ));
            }
        }
        rows.sort();
        for r in rows {
            out.push_str(&r);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod forward_tests {
    use super::*;
    use crate::testutil::model;

    #[test]
    fn forward_postings_keep_large_tfs_aside() {
        let mut f = Forward::default();
        f.extend(&[(0, 1), (5, 254), (5, 255)]);
        f.extend(&[(u32::MAX, u32::MAX), (7, 2)]);
        assert_eq!(f.keys, [0, 5, 5, u32::MAX, 7]);
        assert_eq!(f.tf, [1, 254, 255, 255, 2]);
        assert_eq!(f.big, [(2, 255), (3, u32::MAX)]);
    }

    #[test]
    fn a_build_keeps_term_frequencies_past_one_byte() {
        let body = format!("{}end.\n", "zeta eta ".repeat(300));
        let text = format!("Zeta first.\n\n{body}");
        let m = model(&[("b", "p.md", &text), ("b", "q.md", "Zeta once.\n")]);
        let ix = Index::build(&m, "2026-01-01");
        assert_eq!(ix.term_postings(BODY, "zeta"), [("p", 301), ("q", 1)]);
        assert_eq!(ix.term_postings(BODY, "eta"), [("p", 300)]);
        assert_eq!(ix.pair_postings(BODY, "zeta", "eta"), [("p", 300)]);
        assert_eq!(ix.pair_postings(BODY, "eta", "zeta"), [("p", 299)]);
        assert_eq!(ix.term_postings(BODY, "once"), [("q", 1)]);
    }

    /// A build in ranges equals one pass, whatever the ranges: the ids, the tables'
    /// layout, the lists, the documents (all of `Debug`) and the bytes.
    fn assert_ranges_build_alike(m: &Model) {
        let one = Index::build_in(m, "2026-01-01", 1);
        let (dump, bytes) = (format!("{one:?}"), one.encode());
        for parts in [2, 3, 5, m.concepts().len() + 2] {
            let ix = Index::build_in(m, "2026-01-01", parts);
            assert_eq!(format!("{ix:?}"), dump, "{parts} ranges");
            assert_eq!(ix.encode(), bytes, "{parts} ranges");
        }
        assert_eq!(format!("{:?}", Index::build(m, "2026-01-01")), dump);
    }

    #[test]
    fn a_build_in_ranges_equals_one_pass() {
        assert_ranges_build_alike(&crate::testutil::okf_samples());
        let long = "x".repeat(40);
        let texts: Vec<String> = (0..40)
            .map(|i| {
                let w = [
                    "zeta", "eta", "Café", "οδος", "東京", &long, "queries", "orders",
                ];
                let body: Vec<&str> = (0..(i * 7 % 23 + 1))
                    .map(|j| w[(i * 3 + j * j) % w.len()])
                    .collect();
                format!(
                    "---\ntitle: {} {}\n---\nFirst {}.\n\n{}\n",
                    w[i % w.len()],
                    w[(i + 5) % w.len()],
                    w[(i + 1) % w.len()],
                    body.join(" ").repeat(if i == 7 { 300 } else { 1 })
                )
            })
            .collect();
        let paths: Vec<String> = (0..40).map(|i| format!("p{i}.md")).collect();
        let docs: Vec<(&str, &str, &str)> = (0..40)
            .map(|i| (["a", "b", "c"][i % 3], paths[i].as_str(), texts[i].as_str()))
            .collect();
        assert_ranges_build_alike(&model(&docs));
        assert_ranges_build_alike(&Model::default());
    }
}
