//! Search (docs/search.md): the tokenizer, the per-field BM25 index, ranking, one-hop link
//! expansion, `pos` and the search TSV.
//!
//! [`Index::build`] indexes a [`Model`] for a read date and [`Index::update`] keeps it
//! current across commits. [`search`] renders the TSV an agent reads; [`search_hits`]
//! returns the same ranking as data.
//!
//! ```
//! use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
//! use langonrock_core::search::{search, Index, SearchOptions};
//! let docs = vec![
//!     SourceDoc::new("ops", "orders.md", "---\ntype: runbook\n---\nHow to replay a failed order export.\n\nSee [orders](../sales/orders.md).\n"),
//!     SourceDoc::new("sales", "customers.md", "Registered customers.\n"),
//! ];
//! let model = compile(&docs, SUMMARY_WIDTH).unwrap();
//! let index = Index::build(&model, "2026-01-01");
//! let tsv = search(&model, &index, "acme", "replay export", &SearchOptions::default(), "2026-01-01").unwrap();
//! assert_eq!(tsv, "# tenant: acme\n# bundles: ops sales\n# query: replay export\n# hits: 1 direct, 0 linked\n\
//!     id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n\
//!     orders\tops\trunbook\t-\t-\tHow to replay a failed order export.\t-\t0\n");
//! ```

mod codec;
mod index;
mod pos;
mod rank;
mod table;
mod tokenize;
mod update;

#[cfg(test)]
mod tests;

pub use index::{Index, B, FIELDS, FIELD_NAMES, K1, MAX_RUN};
pub use pos::{pos, query_words, WINDOW};
pub use rank::MAX_QUERY_TOKENS;
pub use tokenize::{for_each_token, for_each_unstemmed_token, query_terms, stem, tokens};

use crate::compile::{Concept, Model};
use crate::error::{Error, Result};
use crate::manifest::{preamble, push_row, resolve_bundle, COLUMNS};
use rank::{rank, Filter};
use std::collections::HashMap;
use table::Fast;

/// The default number of direct hits (search.md §3.6).
pub const DEFAULT_K: usize = 8;

/// Options of a search (search.md §3–§4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOptions {
    /// The number of direct hits to keep, and the cap on linked ones. `0` gives no hits.
    pub k: usize,
    /// Only concepts of this bundle (any case); an unknown bundle is `NOT_FOUND`.
    pub bundle: Option<String>,
    /// Whether to add the one-hop link expansion.
    pub expand: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            k: DEFAULT_K,
            bundle: None,
            expand: true,
        }
    }
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The concept's public id.
    pub id: String,
    /// The BM25 score of a direct hit; `None` for a linked one.
    pub score: Option<f64>,
    /// The `pos` of a direct hit (`None` prints `-`); always `None` for a linked one.
    pub pos: Option<usize>,
    /// Whether the row comes from the link expansion.
    pub linked: bool,
}

/// The result of a search as data: the resolved bundle filter and the rows in output
/// order, direct hits first.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// The bundle filter as stored, when one was given.
    pub bundle: Option<String>,
    /// Direct hits in rank order, then linked hits in expansion order.
    pub hits: Vec<Hit>,
}

impl SearchResult {
    /// The number of direct hits.
    pub fn direct(&self) -> usize {
        self.hits.iter().filter(|h| !h.linked).count()
    }
}

/// Ranks `model`'s concepts for `query` and returns the rows as data.
///
/// `index` must be the index of `model`. When its date is not `today`, a corrected copy is
/// used for this call (the engine should keep the date current with [`Index::update`]).
pub fn search_hits(
    model: &Model,
    index: &Index,
    query: &str,
    opts: &SearchOptions,
    today: &str,
) -> Result<SearchResult> {
    find(model, index, query, opts, today).map(|f| f.result)
}

/// A [`SearchResult`] with the concept of each hit, looked up once: the hosts' search
/// (`Served::search`) checks the direct hits' texts and renders the rows from these,
/// instead of finding each concept by id again for each.
pub(crate) struct Found<'m> {
    pub(crate) result: SearchResult,
    /// The concept of each hit, in the order of `result.hits`: always there for a direct
    /// hit; `None` for a linked id the model does not hold (rendering it is an error).
    pub(crate) concepts: Vec<Option<&'m Concept>>,
}

impl<'m> Found<'m> {
    /// The direct hits' concepts.
    pub(crate) fn direct(&self) -> impl Iterator<Item = &'m Concept> + '_ {
        self.result
            .hits
            .iter()
            .zip(&self.concepts)
            .filter(|(h, _)| !h.linked)
            .filter_map(|(_, c)| *c)
    }
}

/// [`search_hits`], keeping each hit's concept.
pub(crate) fn find<'m>(
    model: &'m Model,
    index: &Index,
    query: &str,
    opts: &SearchOptions,
    today: &str,
) -> Result<Found<'m>> {
    let bundle = resolve_bundle(model, opts.bundle.as_deref())?;
    let fixed;
    let index = if index.today() == today {
        index
    } else {
        let mut copy = index.clone();
        copy.update(model, model, today);
        fixed = copy;
        &fixed
    };
    let filter = match bundle {
        None => Filter::All,
        Some(b) => index
            .bundle_index(b)
            .map_or(Filter::Nothing, Filter::Bundle),
    };
    let ranked = rank(index, query, filter, opts.k);
    let words = query_words(query);
    let mut hits = Vec::with_capacity(ranked.len() * 2);
    let mut concepts = Vec::with_capacity(ranked.len() * 2);
    for &(slot, score) in &ranked {
        let id = &index.doc(slot).id;
        let c = model.concept(id).ok_or_else(|| mismatch(id))?;
        let p = pos::pos_of(c, &words);
        hits.push(Hit {
            id: id.to_string(),
            score: Some(score),
            pos: p,
            linked: false,
        });
        concepts.push(Some(c));
    }
    if opts.expand {
        let direct: Vec<&Concept> = concepts.iter().flatten().copied().collect();
        let linked = expand(model, &direct, bundle, opts.k);
        for id in linked {
            concepts.push(model.concept(id));
            hits.push(Hit {
                id: id.to_string(),
                score: None,
                pos: None,
                linked: true,
            });
        }
    }
    Ok(Found {
        result: SearchResult {
            bundle: bundle.map(str::to_string),
            hits,
        },
        concepts,
    })
}

/// The search TSV of search.md §5.
pub fn search(
    model: &Model,
    index: &Index,
    tenant: &str,
    query: &str,
    opts: &SearchOptions,
    today: &str,
) -> Result<String> {
    let found = find(model, index, query, opts, today)?;
    render_found(model, tenant, query, &found.result, &found.concepts, today)
}

/// Renders a [`SearchResult`] as the search TSV (search.md §5).
pub fn render(
    model: &Model,
    tenant: &str,
    query: &str,
    result: &SearchResult,
    today: &str,
) -> Result<String> {
    let concepts: Vec<Option<&Concept>> =
        result.hits.iter().map(|h| model.concept(&h.id)).collect();
    render_found(model, tenant, query, result, &concepts, today)
}

/// [`render`] from the concepts [`find`] kept (`concepts`: one per hit of `result`).
pub(crate) fn render_found(
    model: &Model,
    tenant: &str,
    query: &str,
    result: &SearchResult,
    concepts: &[Option<&Concept>],
    today: &str,
) -> Result<String> {
    let mut out = String::with_capacity(256 + result.hits.len() * 200);
    preamble(&mut out, tenant, model);
    if let Some(b) = &result.bundle {
        out.push_str("# bundle: ");
        out.push_str(b);
        out.push('\n');
    }
    out.push_str("# query:");
    if !query.is_empty() {
        out.push(' ');
        out.extend(query.chars().map(|c| {
            if matches!(c, '\r' | '\n' | '\t') {
                ' '
            } else {
                c
            }
        }));
    }
    let direct = result.direct();
    out.push_str(&format!(
        "\n# hits: {direct} direct, {} linked\n",
        result.hits.len() - direct
    ));
    out.push_str(COLUMNS);
    out.push_str("\tpos\n");
    for (h, c) in result.hits.iter().zip(concepts) {
        let c = c.ok_or_else(|| mismatch(&h.id))?;
        push_row(&mut out, c, today);
        out.push('\t');
        match h.pos {
            Some(p) => out.push_str(&p.to_string()),
            None => out.push('-'),
        }
        out.push('\n');
    }
    Ok(out)
}

fn mismatch(id: &str) -> Error {
    Error::Invalid(format!(
        "search index does not match the model: no concept \"{id}\""
    ))
}

/// The one-hop expansion (search.md §4): ids linked from the direct hits (`direct`, their
/// concepts in rank order), by inbound count, then the rank of the first hit pointing at
/// them, then id; at most `k`.
fn expand<'m>(
    model: &Model,
    direct: &[&'m Concept],
    bundle: Option<&str>,
    k: usize,
) -> Vec<&'m str> {
    let is_direct: HashMap<&str, (), Fast> = direct.iter().map(|c| (c.id.as_str(), ())).collect();
    let mut found: HashMap<&str, (usize, usize), Fast> = HashMap::default();
    let mut order: Vec<&'m str> = Vec::new();
    for (rank, &c) in direct.iter().enumerate() {
        for l in &c.links {
            if is_direct.contains_key(l.as_str()) {
                continue;
            }
            if let Some(b) = bundle {
                if model.concept(l).is_none_or(|t| t.bundle != b) {
                    continue;
                }
            }
            found
                .entry(l.as_str())
                .and_modify(|e| e.0 += 1)
                .or_insert_with(|| {
                    order.push(l.as_str());
                    (1, rank)
                });
        }
    }
    order.sort_by(|a, b| {
        let (ca, ra) = found[a];
        let (cb, rb) = found[b];
        cb.cmp(&ca).then(ra.cmp(&rb)).then_with(|| a.cmp(b))
    });
    order.truncate(k);
    order
}
