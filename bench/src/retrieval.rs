//! Retrieval scores (agent-session.md §6): hit@8 and MRR of our search over the 20
//! questions, named with and without the link expansion and described, and the same three
//! runs over the okf-samples bundles with queries taken from each concept itself; then the
//! retrieval benchmark of docs/benchmarks.md: sets of questions by kind, scored with the
//! ranking before docs/search.md's (`baseline`) and with the core's.

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
    for c in model.concepts() {
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

// ---------------------------------------------------------------------------------------
// The retrieval benchmark: sets of questions by kind, before (bench/src/baseline.rs) and
// after (the core's search), direct rows only, k = 8.

/// One question of a set: its kind, its text and the public id it wants.
#[derive(Debug, Clone)]
pub struct SetQuery {
    /// `named`, `described`, `passage`, `title`, `summary`, `id`.
    pub kind: String,
    /// The query text.
    pub text: String,
    /// The wanted public id.
    pub wanted: String,
}

/// hit@1, hit@8 and MRR@8 (percent, percent, mean reciprocal rank with misses 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Score3 {
    /// Percent of queries whose wanted id is first.
    pub hit1: f64,
    /// Percent of queries whose wanted id is among the first 8 direct rows.
    pub hit8: f64,
    /// Mean reciprocal rank within the first 8, misses 0.
    pub mrr8: f64,
}

impl Score3 {
    fn of(ranks: &[Option<usize>]) -> Score3 {
        let n = ranks.len().max(1) as f64;
        let hit = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64;
        Score3 {
            hit1: 100.0 * hit(1) / n,
            hit8: 100.0 * hit(K) / n,
            mrr8: ranks
                .iter()
                .map(|r| r.filter(|&r| r <= K).map_or(0.0, |r| 1.0 / r as f64))
                .sum::<f64>()
                / n,
        }
    }
}

/// One kind of one set, before and after.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindScore {
    /// The kind.
    pub kind: String,
    /// The number of questions.
    pub queries: usize,
    /// Today's ranking before docs/search.md's (the baseline scorer).
    pub before: Score3,
    /// The core's search.
    pub after: Score3,
    /// The rank of the wanted id per question, before and after (`None`: not in the 8).
    pub ranks: Vec<(Option<usize>, Option<usize>)>,
}

/// One set: its name, its size and its kinds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetScore {
    /// The set.
    pub name: String,
    /// Concepts in its tenant.
    pub concepts: usize,
    /// Per kind, in the order the kinds first appear.
    pub kinds: Vec<KindScore>,
}

/// Where [`score_set`] also writes each set's documents and questions as JSON, for peer
/// search libraries to rank (`bench/scripts/retrieval-peers.sh`); set once by the
/// `retrieval --export DIR` command.
pub static EXPORT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Writes `name`'s documents (id, title, description, body, as the index reads them) and
/// questions to `dir/<n>-<name>.json`, `n` counting the sets from 1.
fn export_set(
    dir: &std::path::Path,
    name: &str,
    model: &Model,
    queries: &[SetQuery],
) -> Result<(), String> {
    let docs: Vec<serde_json::Value> = model
        .concepts()
        .iter()
        .map(|c| {
            let p = &c.parsed;
            serde_json::json!({
                "id": c.id,
                "title": p.title.as_deref().unwrap_or(""),
                "description": p.summary_source.as_deref().unwrap_or(&p.summary),
                "body": c.body(),
            })
        })
        .collect();
    let qs: Vec<serde_json::Value> = queries
        .iter()
        .map(|q| serde_json::json!({"kind": q.kind, "query": q.text, "wanted": q.wanted}))
        .collect();
    let file: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    // Numbered in the order the sets are scored, so the peers' table keeps ours.
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{seq}-{file}.json"));
    let body = serde_json::json!({"name": name, "docs": docs, "questions": qs});
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, body.to_string()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Scores `queries` over `model` with both rankings.
pub fn score_set(name: &str, model: &Model, queries: &[SetQuery]) -> Result<SetScore, String> {
    if let Some(dir) = EXPORT.get() {
        export_set(dir, name, model, queries)?;
    }
    let index = Index::build(model, EVAL_DATE);
    let base = crate::baseline::Baseline::build(model, EVAL_DATE);
    let mut kinds: Vec<KindScore> = Vec::new();
    for q in queries {
        if model.concept(&q.wanted).is_none() {
            return Err(format!(
                "{name}: no concept {:?} for {:?}",
                q.wanted, q.text
            ));
        }
        let after = ranked(model, &index, &q.text, false).map_err(|e| e.to_string())?;
        let before = base.rank(&q.text, K);
        let rank = |ids: &[String]| ids.iter().position(|id| *id == q.wanted).map(|p| p + 1);
        let pair = (rank(&before), rank(&after));
        match kinds.iter_mut().find(|k| k.kind == q.kind) {
            Some(k) => k.ranks.push(pair),
            None => kinds.push(KindScore {
                kind: q.kind.clone(),
                ranks: vec![pair],
                ..KindScore::default()
            }),
        }
    }
    for k in &mut kinds {
        k.queries = k.ranks.len();
        let b: Vec<Option<usize>> = k.ranks.iter().map(|r| r.0).collect();
        let a: Vec<Option<usize>> = k.ranks.iter().map(|r| r.1).collect();
        k.before = Score3::of(&b);
        k.after = Score3::of(&a);
    }
    Ok(SetScore {
        name: name.to_string(),
        concepts: model.concepts().len(),
        kinds,
    })
}

/// The reference corpus at 500 concepts with its 20 questions, named and described.
pub fn reference_set() -> Result<SetScore, String> {
    use crate::corpus::Corpus;
    let corpus = Corpus::reference(1).map_err(|e| e.to_string())?;
    let qs = crate::questions::questions(&corpus).map_err(|e| e.to_string())?;
    let model = corpus.model()?;
    let ids = RawIds::of(&model);
    let mut queries = Vec::new();
    for (kind, described) in [("named", false), ("described", true)] {
        for q in &qs {
            let wanted = ids
                .concept(&model, &q.bundle, &q.wanted)
                .map_err(|e| e.to_string())?
                .id
                .clone();
            let text = if described { &q.described } else { &q.named };
            queries.push(SetQuery {
                kind: kind.into(),
                text: text.clone(),
                wanted,
            });
        }
    }
    score_set("reference corpus, 500 concepts", &model, &queries)
}

/// The okf-samples bundles, each concept querying for itself: its title (its id when it has
/// none), its manifest summary, and its id.
pub fn okf_samples_set(model: &Model) -> Result<SetScore, String> {
    let mut queries = Vec::new();
    for c in model.concepts() {
        let title = c.parsed.title.clone().unwrap_or_else(|| c.id.clone());
        queries.push(SetQuery {
            kind: "title".into(),
            text: title,
            wanted: c.id.clone(),
        });
    }
    for c in model.concepts() {
        if c.parsed.summary != "-" {
            queries.push(SetQuery {
                kind: "summary".into(),
                text: c.parsed.summary.clone(),
                wanted: c.id.clone(),
            });
        }
    }
    for c in model.concepts() {
        queries.push(SetQuery {
            kind: "id".into(),
            text: c.id.clone(),
            wanted: c.id.clone(),
        });
    }
    score_set("okf-samples", model, &queries)
}

#[derive(Deserialize)]
struct QuestionFile {
    questions: Vec<FileQuestion>,
}

#[derive(Deserialize)]
struct FileQuestion {
    kind: String,
    query: String,
    wanted: String,
}

/// The Django documentation (`docs` unpacked by `bench/scripts/fetch-django-docs.sh`) with
/// the questions of `bench/data/django-questions.json`.
pub fn django_set(docs: &std::path::Path, questions_json: &str) -> Result<SetScore, String> {
    use langonrock_core::compile::{compile, SUMMARY_WIDTH};
    let sources = crate::docset::read_django_docs(docs)?;
    let model = compile(&sources, SUMMARY_WIDTH).map_err(|e| e.message())?;
    let file: QuestionFile =
        serde_json::from_str(questions_json).map_err(|e| format!("questions: {e}"))?;
    let mut queries = Vec::new();
    for q in file.questions {
        let (bundle, path) = q
            .wanted
            .split_once('/')
            .ok_or_else(|| format!("bad wanted page {:?}", q.wanted))?;
        let path = crate::docset::page_path(&format!("{path}.txt"));
        let c = model
            .concepts()
            .iter()
            .find(|c| c.bundle == bundle && c.path == path)
            .ok_or_else(|| format!("no page {:?} in {}", q.wanted, docs.display()))?;
        queries.push(SetQuery {
            kind: q.kind,
            text: q.query,
            wanted: c.id.clone(),
        });
    }
    score_set(
        &format!("Django {} documentation", crate::docset::DJANGO_VERSION),
        &model,
        &queries,
    )
}

/// The sets' table in Markdown: per set and kind, before and after.
pub fn sets_table(sets: &[SetScore]) -> String {
    use std::fmt::Write;
    let mut w = String::new();
    let _ = writeln!(
        w,
        "| Set | Concepts | Kind | Questions | Before hit@8 / MRR@8 | After hit@8 / MRR@8 | Before / after hit@1 |\n|---|---:|---|---:|---:|---:|---:|"
    );
    for s in sets {
        for k in &s.kinds {
            let _ = writeln!(
                w,
                "| {} | {} | {} | {} | {:.1} % / {:.3} | {:.1} % / {:.3} | {:.1} % / {:.1} % |",
                s.name,
                s.concepts,
                k.kind,
                k.queries,
                k.before.hit8,
                k.before.mrr8,
                k.after.hit8,
                k.after.mrr8,
                k.before.hit1,
                k.after.hit1
            );
        }
    }
    w
}
