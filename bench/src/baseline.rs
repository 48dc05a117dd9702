//! The ranking before docs/search.md's per-field BM25, kept here (and only here) so the
//! retrieval benchmark can print "before" next to "after" on any set.
//!
//! One weighted bag per concept: the names (`<id> <title>`) ×4, the row cells (`bundle kind
//! status grain summary`, a `-` cell empty, `status` as rendered for the date) ×2 and the
//! body ×1, over the tokens without the plural stemmer. BM25 with `k1 = 1.2`, `b = 0.75` on
//! the weighted counts and the weighted length, summed over the distinct query terms in
//! query order; score descending, then id ascending. It reproduces the published figures
//! of that ranking (a test in `bench/tests/retrieval.rs` holds it to them).

use langonrock_core::compile::Model;
use langonrock_core::manifest::status_for;
use langonrock_core::search::for_each_unstemmed_token;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The old index of one model for one date.
pub struct Baseline {
    ids: Vec<String>,
    /// `k1 · norm(d)` by document.
    knorm: Vec<f64>,
    /// Postings `(document, weighted count)` by term, documents ascending.
    postings: HashMap<String, Vec<(u32, u32)>>,
}

impl Baseline {
    /// Indexes `model` for `today`.
    pub fn build(model: &Model, today: &str) -> Baseline {
        let mut ids = Vec::with_capacity(model.concepts().len());
        let mut lens = Vec::with_capacity(model.concepts().len());
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        for (d, c) in model.concepts().iter().enumerate() {
            let p = &c.parsed;
            let mut counts: HashMap<String, u32> = HashMap::new();
            let mut len = 0u32;
            let mut add = |text: &str, w: u32| {
                for_each_unstemmed_token(text, |t| {
                    *counts.entry(t.to_string()).or_default() += w;
                    len += w;
                })
            };
            let names = match &p.title {
                Some(t) => format!("{} {t}", c.id),
                None => c.id.clone(),
            };
            add(&names, 4);
            let cells: Vec<&str> = [
                c.bundle.as_str(),
                &p.kind,
                status_for(c, today),
                &p.grain,
                &p.summary,
            ]
            .into_iter()
            .map(|x| if x == "-" { "" } else { x })
            .collect();
            add(&cells.join(" "), 2);
            add(c.body(), 1);
            for (t, f) in counts {
                postings.entry(t).or_default().push((d as u32, f));
            }
            ids.push(c.id.clone());
            lens.push(len);
        }
        let n = ids.len();
        let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        let avg = if n == 0 { 0.0 } else { total as f64 / n as f64 };
        let knorm = lens
            .iter()
            .map(|&l| {
                let norm = if avg == 0.0 {
                    1.0
                } else {
                    1.0 - B + B * f64::from(l) / avg
                };
                K1 * norm
            })
            .collect();
        Baseline {
            ids,
            knorm,
            postings,
        }
    }

    /// The ids of the first `k` concepts for `query` (direct hits only).
    pub fn rank(&self, query: &str, k: usize) -> Vec<String> {
        let mut terms: Vec<String> = Vec::new();
        for_each_unstemmed_token(query, |t| {
            if !terms.iter().any(|x| x == t) {
                terms.push(t.to_string());
            }
        });
        let n = self.ids.len() as f64;
        let mut acc: HashMap<u32, f64> = HashMap::new();
        for t in &terms {
            let Some(list) = self.postings.get(t) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = libm::log(1.0 + (n - df + 0.5) / (df + 0.5));
            for &(d, f) in list {
                let f = f64::from(f);
                *acc.entry(d).or_insert(0.0) += idf * f * (K1 + 1.0) / (f + self.knorm[d as usize]);
            }
        }
        let mut all: Vec<(u32, f64)> = acc.into_iter().collect();
        all.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.ids[a.0 as usize].cmp(&self.ids[b.0 as usize]))
        });
        all.truncate(k);
        all.into_iter()
            .map(|(d, _)| self.ids[d as usize].clone())
            .collect()
    }
}
