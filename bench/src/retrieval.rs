//! Retrieval scores (agent-session.md §6): hit@8 and MRR of our search over the 20
//! questions, named with and without the link expansion and described, and the same three
//! runs over the okf-samples bundles with queries taken from each concept itself.

use crate::billing::{score, BillingError, EVAL_DATE, K};
use crate::questions::Question;
use crate::store::RawIds;
use langonrock_core::compile::Model;
use langonrock_core::search::{search_hits, Index, SearchOptions};
use serde::{Deserialize, Serialize};

/// One scored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// What was run.
    pub name: String,
    /// The number of queries.
    pub queries: usize,
    /// Percent of queries whose wanted id is in the list.
    pub hit_rate: f64,
    /// Mean reciprocal rank, misses 0.
    pub mrr: f64,
    /// The 1-based rank of the wanted id per query (`None`: missed).
    pub ranks: Vec<Option<usize>>,
}

/// A query and the public id it should find.
#[derive(Debug, Clone)]
pub struct Query {
    /// The query text.
    pub text: String,
    /// The wanted public id.
    pub wanted: String,
}

/// The ranked id list of one query: direct hits, then linked ones with `expand`.
pub fn ranked(
    model: &Model,
    index: &Index,
    query: &str,
    expand: bool,
) -> Result<Vec<String>, BillingError> {
    let opts = SearchOptions {
        k: K,
        bundle: None,
        expand,
    };
    let r = search_hits(model, index, query, &opts, EVAL_DATE)
        .map_err(|e| BillingError::Tool(e.message()))?;
    Ok(r.hits.into_iter().map(|h| h.id).collect())
}

/// Scores `queries` with or without expansion.
pub fn run(
    name: &str,
    model: &Model,
    index: &Index,
    queries: &[Query],
    expand: bool,
) -> Result<Run, BillingError> {
    let mut lists = Vec::with_capacity(queries.len());
    let mut ranks = Vec::with_capacity(queries.len());
    for q in queries {
        let ids = ranked(model, index, &q.text, expand)?;
        ranks.push(ids.iter().position(|id| *id == q.wanted).map(|p| p + 1));
        lists.push(ids);
    }
    let wanted: Vec<&str> = queries.iter().map(|q| q.wanted.as_str()).collect();
    let s = score(&lists, &wanted)?;
    Ok(Run {
        name: name.to_string(),
        queries: queries.len(),
        hit_rate: s.hit_rate,
        mrr: s.mrr,
        ranks,
    })
}

/// The three runs of the reference over the 20 questions: named, named with expansion,
/// described.
pub fn questions_runs(
    model: &Model,
    index: &Index,
    questions: &[Question],
) -> Result<Vec<Run>, BillingError> {
    let ids = RawIds::of(model);
    let mut named = Vec::new();
    let mut described = Vec::new();
    for q in questions {
        let wanted = ids.concept(model, &q.bundle, &q.wanted)?.id.clone();
        named.push(Query {
            text: q.named.clone(),
            wanted: wanted.clone(),
        });
        described.push(Query {
            text: q.described.clone(),
            wanted,
        });
    }
    Ok(vec![
        run("named", model, index, &named, false)?,
        run("named + expansion", model, index, &named, true)?,
        run("described", model, index, &described, false)?,
    ])
}

/// The okf-samples runs: for every concept, its title (its id when it has none) as the
/// named query and its manifest summary as the described query, wanting that concept.
pub fn self_query_runs(model: &Model, index: &Index) -> Result<Vec<Run>, BillingError> {
    let mut named = Vec::new();
    let mut described = Vec::new();
    for c in &model.concepts {
        let title = c.parsed.title.clone().unwrap_or_else(|| c.id.clone());
        named.push(Query {
            text: title,
            wanted: c.id.clone(),
        });
        if !c.parsed.summary.trim().is_empty() {
            described.push(Query {
                text: c.parsed.summary.clone(),
                wanted: c.id.clone(),
            });
        }
    }
    Ok(vec![
        run("title", model, index, &named, false)?,
        run("title + expansion", model, index, &named, true)?,
        run("summary", model, index, &described, false)?,
    ])
}
