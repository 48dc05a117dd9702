//! Scoring and ranking (docs/search.md, "Scoring"): per-field BM25 over the query's terms
//! and pairs, the name bonus, the coordination factor, then the top `k`.

use super::index::{Index, FIELDS, K1, MAX_RUN, NAMES, NONE};
use super::table::{pair_key, Fast};
use super::tokenize::{scan, Sink};
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

/// The top `k` concepts for `query` as `(slot, score)`, by score descending and id
/// ascending (docs/search.md, "Scoring").
pub(crate) fn rank(index: &Index, query: &str, filter: Filter, k: usize) -> Vec<(u32, f64)> {
    if k == 0 || matches!(filter, Filter::Nothing) || index.is_empty() {
        return Vec::new();
    }
    let plan = Plan::new(index, query);
    let big_n = index.len() as f64;
    let slots = index.slots();
    // S(d), the number of the last term that matched d (0: none yet), and C(d).
    let mut acc = vec![0f64; slots];
    let mut stamp = vec![0u32; slots];
    let mut matched = vec![0u32; slots];
    let mut cands: Vec<u32> = Vec::new();
    let keep = |slot: u32| {
        index.is_alive(slot)
            && match filter {
                // The bundle filter applies before the cut.
                Filter::Bundle(b) => index.doc(slot).bundle == b,
                _ => true,
            }
    };
    // Each unit's lists are read field by field, so every S(d) adds its terms in query
    // order, each over names, description, meta and body, then its pairs the same way.
    let bm25 = |u: u32, f: usize, on: &mut dyn FnMut(usize, f64)| {
        let n = index.df[u as usize][f];
        if n == 0 {
            return;
        }
        let idf = idf(big_n, n);
        for p in index.postings(u * FIELDS as u32 + f as u32) {
            if !keep(p.slot) {
                continue;
            }
            let i = p.slot as usize;
            let tf = f64::from(p.tf);
            let s = idf * tf * (K1 + 1.0) / (tf + index.knorm[i][f]);
            on(i, s);
        }
    };
    for (ti, &u) in plan.terms.iter().enumerate() {
        let mark = ti as u32 + 1;
        for f in 0..FIELDS {
            bm25(u, f, &mut |i, s| {
                if stamp[i] != mark {
                    if stamp[i] == 0 {
                        cands.push(i as u32);
                    }
                    stamp[i] = mark;
                    matched[i] += 1;
                }
                acc[i] += s;
            });
        }
    }
    for &u in &plan.pairs {
        for f in 0..FIELDS {
            bm25(u, f, &mut |i, s| acc[i] += s);
        }
    }
    plan.runs(index, |run, list| {
        let mut bonus = 0.0;
        for &t in run {
            bonus += idf(big_n, index.df[t as usize][NAMES]);
        }
        for &slot in list {
            if keep(slot) {
                acc[slot as usize] += bonus;
            }
        }
    });
    let score = |s: u32| f64::from(matched[s as usize]) * acc[s as usize];
    top_k(index, cands.into_iter().map(|s| (s, score(s))), k)
}

/// The first `k` of `scored` by score descending, then id ascending.
fn top_k(index: &Index, scored: impl Iterator<Item = (u32, f64)>, k: usize) -> Vec<(u32, f64)> {
    let cmp = |a: &(u32, f64), b: &(u32, f64)| -> Ordering {
        b.1.total_cmp(&a.1)
            .then_with(|| index.doc(a.0).id.cmp(&index.doc(b.0).id))
    };
    let all: Vec<(u32, f64)> = scored.collect();
    let mut top: Vec<(u32, f64)>;
    if all.len() <= k {
        top = all;
        top.sort_by(cmp);
    } else if k <= 64 {
        // A bounded insertion: most candidates lose to the current k-th on score alone.
        top = Vec::with_capacity(k + 1);
        for c in all {
            if top.len() == k {
                let last = top[k - 1];
                if c.1 < last.1 || cmp(&c, &last) != Ordering::Less {
                    continue;
                }
            }
            let at = top.partition_point(|x| cmp(x, &c) == Ordering::Less);
            top.insert(at, c);
            top.truncate(k);
        }
    } else {
        top = all;
        top.select_nth_unstable_by(k - 1, cmp);
        top.truncate(k);
        top.sort_by(cmp);
    }
    top
}
