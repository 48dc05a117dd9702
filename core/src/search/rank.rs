//! Scoring and ranking (docs/search.md, "Scoring"): per-field BM25 over the query's terms
//! and pairs, the name bonus, the coordination factor, then the top `k`.

use super::index::{Index, FIELDS, K1, MAX_RUN, NAMES, NONE};
use super::table::{pair_key, Fast};
use super::tokenize::{scan, Sink};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;

/// The number of query tokens the ranking considers: the first 128. The terms, the pairs
/// and the runs that may earn a name bonus all come from them, so a query's work is bounded
/// whatever its length (`pos` still reads the whole query).
pub const MAX_QUERY_TOKENS: usize = 128;

/// Which concepts a search may return.
#[derive(Clone, Copy)]
pub(crate) enum Filter {
    All,
    /// Only the bundle with this index number.
    Bundle(u32),
    Nothing,
}

/// A query looked up in one index: its first [`MAX_QUERY_TOKENS`] tokens as term ids.
pub(crate) struct Plan {
    /// The considered tokens' term ids ([`NONE`] for a term the index does not hold).
    tokens: Vec<u32>,
    /// The distinct known terms, in order of first appearance.
    terms: Vec<u32>,
    /// The distinct known pairs, in order of first appearance.
    pairs: Vec<u32>,
}

struct QuerySink<'a> {
    index: &'a Index,
    tokens: Vec<u32>,
    /// Tokens seen, considered or not.
    seen: usize,
}

impl QuerySink<'_> {
    #[inline]
    fn push(&mut self, t: Option<u32>) {
        if self.seen < MAX_QUERY_TOKENS {
            self.tokens.push(t.unwrap_or(NONE));
        }
        self.seen += 1;
    }
}

impl Sink for QuerySink<'_> {
    fn token(&mut self, t: &str) {
        if self.seen < MAX_QUERY_TOKENS {
            let u = self.index.vocab.get(t);
            self.push(u);
        }
    }

    fn short(&mut self, key: [u64; 2], _len: usize) {
        if self.seen < MAX_QUERY_TOKENS {
            let u = self.index.vocab.short.get(key);
            self.push(u);
        }
    }
}

impl Plan {
    pub(crate) fn new(index: &Index, query: &str) -> Plan {
        let mut sink = QuerySink {
            index,
            tokens: Vec::new(),
            seen: 0,
        };
        scan(query, &mut sink);
        let tokens = sink.tokens;
        let mut terms = Vec::new();
        let mut seen: HashSet<u32, Fast> = HashSet::default();
        for &t in &tokens {
            if t != NONE && seen.insert(t) {
                terms.push(t);
            }
        }
        let mut pairs = Vec::new();
        seen.clear();
        for w in tokens.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a == NONE || b == NONE || a == b {
                continue;
            }
            if let Some(p) = index.pairs.get(pair_key(a, b)) {
                if seen.insert(p) {
                    pairs.push(p);
                }
            }
        }
        Plan {
            tokens,
            terms,
            pairs,
        }
    }

    /// The concepts whose id's token sequence equals the whole query: its considered
    /// tokens, 1 to [`MAX_RUN`] of them, each a known term (docs/search.md, "The exact id
    /// first"). Sorted by slot.
    fn exact(&self, index: &Index) -> Vec<u32> {
        let t = &self.tokens;
        if t.is_empty() || t.len() > MAX_RUN {
            return Vec::new();
        }
        let mut out: Vec<u32> = match index.name_seqs.get(t.as_slice()) {
            Some(slots) => slots.clone(),
            None => return Vec::new(),
        };
        out.retain(|&s| {
            let d = index.doc(s);
            d.names[..d.id_len as usize] == *t.as_slice()
        });
        out.sort_unstable();
        out
    }

    /// Calls `f(run, slots)` for each distinct run of 1 to [`MAX_RUN`] tokens equal to some
    /// concept's name sequence, in order of start, then length.
    fn runs<'a>(&'a self, index: &'a Index, mut f: impl FnMut(&'a [u32], &'a [u32])) {
        let mut seen: HashSet<&[u32], Fast> = HashSet::default();
        let t = &self.tokens;
        for s in 0..t.len() {
            for l in 1..=MAX_RUN.min(t.len() - s) {
                if t[s + l - 1] == NONE {
                    break;
                }
                let run = &t[s..s + l];
                if let Some(slots) = index.name_seqs.get(run) {
                    if seen.insert(run) {
                        f(run, slots);
                    }
                }
            }
        }
    }
}

/// `idf_f(u)` for a unit held by `n` of `big_n` concepts.
#[inline]
fn idf(big_n: f64, n: u32) -> f64 {
    let n = f64::from(n);
    libm::log(1.0 + (big_n - n + 0.5) / (n + 0.5))
}

/// One slot's running sums during a ranking.
#[derive(Clone, Copy, Default)]
struct Acc {
    /// `S(d)` so far.
    sum: f64,
    /// The number of the last term that matched (0: none yet, not a candidate).
    stamp: u32,
    /// `C(d)` so far.
    matched: u32,
}

/// The per-slot sums of the rankings run on one thread, kept so that a query neither
/// allocates nor zeroes an array of the tenant's size: a ranking zeroes again the entries it
/// touched (its candidates) before it returns. 16 bytes per slot of the largest index
/// ranked on the thread.
#[derive(Default)]
struct Scratch {
    acc: Vec<Acc>,
    cands: Vec<u32>,
    /// Set while a ranking runs: a ranking that finds it set (an earlier one panicked
    /// midway) zeroes the whole array first.
    busy: bool,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The top `k` concepts for `query` as `(slot, score)`, by score descending and id
/// ascending (docs/search.md, "Scoring").
pub(crate) fn rank(index: &Index, query: &str, filter: Filter, k: usize) -> Vec<(u32, f64)> {
    if k == 0 || matches!(filter, Filter::Nothing) || index.is_empty() {
        return Vec::new();
    }
    let plan = Plan::new(index, query);
    by_unit(index, &plan, filter, k)
}

/// The term-at-a-time ranking, over the thread's scratch.
fn by_unit(index: &Index, plan: &Plan, filter: Filter, k: usize) -> Vec<(u32, f64)> {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => rank_in(index, plan, filter, k, &mut scratch),
        // Only a ranking inside a ranking on this thread gets here.
        Err(_) => rank_in(index, plan, filter, k, &mut Scratch::default()),
    })
}

fn rank_in(
    index: &Index,
    plan: &Plan,
    filter: Filter,
    k: usize,
    scratch: &mut Scratch,
) -> Vec<(u32, f64)> {
    let slots = index.slots();
    if scratch.busy {
        scratch.acc.fill(Acc::default());
    }
    if scratch.acc.len() < slots {
        scratch.acc.resize(slots, Acc::default());
    }
    scratch.busy = true;
    // A local vector keeps its length in a register in the hot loop.
    let mut cands = std::mem::take(&mut scratch.cands);
    cands.clear();
    let acc = &mut scratch.acc[..slots];
    let alive = &index.alive[..slots];
    // One loop per kind of filter, so an index without tombstones and without a bundle
    // filter tests nothing per posting.
    match filter {
        // The bundle filter applies before the cut.
        Filter::Bundle(b) => accumulate(index, plan, acc, &mut cands, |i| {
            alive[i] && index.docs[i].bundle == b
        }),
        _ if index.len() == slots => accumulate(index, plan, acc, &mut cands, |_| true),
        _ => accumulate(index, plan, acc, &mut cands, |i| alive[i]),
    }
    let exact = plan.exact(index);
    // Each candidate's record is read and zeroed in one pass.
    let top = top_k(
        index,
        cands.iter().map(|&s| {
            let a = std::mem::take(&mut acc[s as usize]);
            Scored {
                slot: s,
                score: f64::from(a.matched) * a.sum,
                first: !exact.is_empty() && exact.binary_search(&s).is_ok(),
            }
        }),
        k,
    );
    scratch.cands = cands;
    scratch.busy = false;
    top
}

/// Adds every unit's BM25 terms and the name bonuses into `acc`, noting candidates in
/// `cands` in order of first match. `keep` says whether a slot may be returned.
#[inline(always)]
// `f` keys a posting list and a column of `knorm` alike.
#[allow(clippy::needless_range_loop)]
fn accumulate(
    index: &Index,
    plan: &Plan,
    acc: &mut [Acc],
    cands: &mut Vec<u32>,
    keep: impl Fn(usize) -> bool,
) {
    let big_n = index.len() as f64;
    let n = acc.len();
    // Each as long as `acc`, so one comparison bounds every access of a posting.
    let knorm: [&[f64]; FIELDS] = std::array::from_fn(|f| &index.knorm[f][..n]);
    // Each unit's lists are read field by field, so every S(d) adds its terms in query
    // order, each over names, description, meta and body, then its pairs the same way.
    for (ti, &u) in plan.terms.iter().enumerate() {
        let mark = ti as u32 + 1;
        // The term's first list is the first to reach each of its postings' records with
        // this mark, and the query's first list finds every record zero.
        let mut seen = false;
        for f in 0..FIELDS {
            let df = index.df[u as usize][f];
            if df == 0 {
                continue;
            }
            let idf = idf(big_n, df);
            let parts = index.posting_parts(u * FIELDS as u32 + f as u32);
            let l = List {
                idf,
                mark,
                knorm: knorm[f],
            };
            match (seen, ti) {
                (false, 0) => l.score::<true, true>(parts, acc, cands, &keep),
                (false, _) => l.score::<true, false>(parts, acc, cands, &keep),
                _ => l.score::<false, false>(parts, acc, cands, &keep),
            }
            seen = true;
        }
    }
    // A pair's postings and a name sequence's slots hold the pair's or the run's terms,
    // so they are candidates already; the stamp check keeps the scratch clean regardless.
    for &u in &plan.pairs {
        for f in 0..FIELDS {
            let df = index.df[u as usize][f];
            if df == 0 {
                continue;
            }
            let idf = idf(big_n, df);
            let knorm = knorm[f];
            for part in index.posting_parts(u * FIELDS as u32 + f as u32) {
                for p in part {
                    let i = p.slot as usize;
                    if i >= n || !keep(i) {
                        continue;
                    }
                    let tf = f64::from(p.tf);
                    let s = idf * tf * (K1 + 1.0) / (tf + knorm[i]);
                    let a = &mut acc[i];
                    if a.stamp != 0 {
                        a.sum += s;
                    }
                }
            }
        }
    }
    plan.runs(index, |run, list| {
        let mut bonus = 0.0;
        for &t in run {
            bonus += idf(big_n, index.df[t as usize][NAMES]);
        }
        for &slot in list {
            let i = slot as usize;
            if i < n && keep(i) && acc[i].stamp != 0 {
                acc[i].sum += bonus;
            }
        }
    });
}

/// One term's posting list in one field, as the ranking reads it.
struct List<'a> {
    idf: f64,
    mark: u32,
    /// The field's `k1 · norm_f(d)` by slot.
    knorm: &'a [f64],
}

impl List<'_> {
    /// Adds the list's BM25 terms. `FIRST`: no earlier list of this term reached these
    /// records; `FRESH`: no earlier list at all did (every record is zero).
    #[inline(always)]
    fn score<const FIRST: bool, const FRESH: bool>(
        &self,
        parts: [&[super::index::Posting]; 2],
        acc: &mut [Acc],
        cands: &mut Vec<u32>,
        keep: &impl Fn(usize) -> bool,
    ) {
        let n = acc.len();
        let knorm = &self.knorm[..n];
        let (idf, mark) = (self.idf, self.mark);
        for part in parts {
            for p in part {
                let i = p.slot as usize;
                if i >= n || !keep(i) {
                    continue;
                }
                let tf = f64::from(p.tf);
                let s = idf * tf * (K1 + 1.0) / (tf + knorm[i]);
                let a = &mut acc[i];
                if FRESH {
                    cands.push(i as u32);
                    *a = Acc {
                        sum: 0.0 + s,
                        stamp: mark,
                        matched: 1,
                    };
                    continue;
                }
                if FIRST || a.stamp != mark {
                    if a.stamp == 0 {
                        cands.push(i as u32);
                    }
                    a.stamp = mark;
                    a.matched += 1;
                }
                a.sum += s;
            }
        }
    }
}

/// A candidate's place in the order: the exact id first, then score, then id.
#[derive(Clone, Copy)]
pub(crate) struct Scored {
    pub(crate) slot: u32,
    pub(crate) score: f64,
    /// Whether the query is the concept's id (docs/search.md, "The exact id first").
    pub(crate) first: bool,
}

/// The first `k` of `scored`: exact ids first, then by score descending, then id
/// ascending.
fn top_k(index: &Index, scored: impl Iterator<Item = Scored>, k: usize) -> Vec<(u32, f64)> {
    let cmp = |a: &Scored, b: &Scored| -> Ordering {
        b.first
            .cmp(&a.first)
            .then_with(|| b.score.total_cmp(&a.score))
            .then_with(|| index.doc(a.slot).id.cmp(&index.doc(b.slot).id))
    };
    let mut top: Vec<Scored>;
    if k <= 64 {
        // A bounded insertion: most candidates lose to the current k-th on score alone.
        top = Vec::with_capacity(k + 1);
        // Once `top` is full, a candidate that is not an exact id and scores below `bar`
        // (the k-th's score, or infinity when the k-th is an exact id) cannot enter.
        let mut bar = f64::NEG_INFINITY;
        for c in scored {
            if c.score < bar && !c.first {
                continue;
            }
            if top.len() == k {
                let last = top[k - 1];
                if !c.first && last.first {
                    continue;
                }
                if cmp(&c, &last) != Ordering::Less {
                    continue;
                }
            }
            let at = top.partition_point(|x| cmp(x, &c) == Ordering::Less);
            top.insert(at, c);
            top.truncate(k);
            if top.len() == k {
                let last = top[k - 1];
                bar = if last.first {
                    f64::INFINITY
                } else {
                    last.score
                };
            }
        }
    } else {
        top = scored.collect();
        if top.len() > k {
            top.select_nth_unstable_by(k - 1, cmp);
            top.truncate(k);
        }
        top.sort_by(cmp);
    }
    top.into_iter().map(|c| (c.slot, c.score)).collect()
}
