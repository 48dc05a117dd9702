//! The agent-session billing model of `agent-session.md` §2, ported from `billing.py`,
//! with the scorer (§6) and the strategy turn builders (§4).
//!
//! A strategy becomes a list of [`Turn`]s; [`bill`] prices them. The builders take the token
//! cost of each read from the caller, so each side prices the exact text it delivers: the
//! OKF navigator prices raw files ([`OkfCosts`]); manifest-first, search-first and the find
//! window price a store's reads through [`ManifestRead`], [`SectionRead`] and [`SearchRead`],
//! which the harness implements over our rendered tool output.

use crate::corpus::{Corpus, CorpusError};
use crate::questions::{Question, Target};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// The prompt-cache re-read rate, paid on the whole context once per counted call.
pub const CACHE_RATE: f64 = 0.10;
/// The pinned evaluation date (agent-session.md §8).
pub const EVAL_DATE: &str = "2026-09-21";
/// Results per search.
pub const K: usize = 8;

/// What can go wrong while building turns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BillingError {
    /// A target names a concept the costs do not know.
    UnknownConcept {
        /// The bundle searched.
        bundle: String,
        /// The raw id.
        id: String,
    },
    /// Two lists that must pair up differ in length.
    LengthMismatch {
        /// What was compared.
        what: &'static str,
        /// One length.
        left: usize,
        /// The other.
        right: usize,
    },
    /// The corpus could not be used.
    Corpus(CorpusError),
    /// A tool call failed (its error text).
    Tool(String),
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BillingError::UnknownConcept { bundle, id } => {
                write!(f, "unknown concept \"{id}\" in bundle \"{bundle}\"")
            }
            BillingError::LengthMismatch { what, left, right } => {
                write!(f, "{what}: {left} and {right} entries do not pair up")
            }
            BillingError::Corpus(e) => write!(f, "{e}"),
            BillingError::Tool(m) => write!(f, "tool call failed: {m}"),
        }
    }
}

impl std::error::Error for BillingError {}

impl From<CorpusError> for BillingError {
    fn from(e: CorpusError) -> Self {
        BillingError::Corpus(e)
    }
}

/// Length in UTF-16 code units (JavaScript `string.length`).
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// `ceil(utf16_len / 4)`: the token estimate of every published figure.
pub fn tokens(text: &str) -> u64 {
    utf16_len(text).div_ceil(4) as u64
}

/// JavaScript `Math.round`: halves go towards +infinity.
pub fn js_round(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

/// One piece of delivered content: a key that stays in the conversation, and its tokens.
/// Serialises as `[key, tokens]`, the shape `billing.py` takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part(pub String, pub u64);

impl Part {
    /// A part.
    pub fn new(key: impl Into<String>, tokens: u64) -> Self {
        Part(key.into(), tokens)
    }
}

/// One tool call: one or more parts.
pub type Turn = Vec<Part>;

/// The result of billing a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bill {
    /// Billed tokens, rounded half-up.
    pub billed: i64,
    /// Counted calls.
    pub calls: usize,
}

/// Bills a session at [`CACHE_RATE`] (agent-session.md §2).
pub fn bill(turns: &[Turn]) -> Bill {
    bill_at(turns, CACHE_RATE)
}

/// Bills a session. A turn whose keys are all known is skipped; otherwise it counts one
/// call, pays `rate × context`, then pays each new part. The arithmetic is the reference's
/// own (IEEE doubles, in the same order), so the rounding agrees with it exactly.
pub fn bill_at(turns: &[Turn], rate: f64) -> Bill {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut context: u64 = 0;
    let mut billed = 0.0f64;
    let mut calls = 0;
    for turn in turns {
        if turn.iter().all(|p| seen.contains(p.0.as_str())) {
            continue;
        }
        calls += 1;
        billed += context as f64 * rate;
        for Part(key, tokens) in turn {
            if seen.insert(key.as_str()) {
                billed += *tokens as f64;
                context += tokens;
            }
        }
    }
    Bill {
        billed: js_round(billed),
        calls,
    }
}

/// Hit rate (percent) and MRR over a set of ranked lists.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Score {
    /// `100 × hits / n`.
    #[serde(rename = "hitRate")]
    pub hit_rate: f64,
    /// `Σ 1/rank / n`, misses counting 0.
    pub mrr: f64,
}

/// Scores ranked id lists against the wanted ids: a hit is the wanted id anywhere in its
/// list (1-based rank = first position).
pub fn score<S: AsRef<str>, W: AsRef<str>>(
    ranked: &[Vec<S>],
    wanted: &[W],
) -> Result<Score, BillingError> {
    if ranked.len() != wanted.len() {
        return Err(BillingError::LengthMismatch {
            what: "ranked lists and wanted ids",
            left: ranked.len(),
            right: wanted.len(),
        });
    }
    if ranked.is_empty() {
        return Ok(Score {
            hit_rate: 0.0,
            mrr: 0.0,
        });
    }
    let mut hits = 0usize;
    let mut reciprocal = 0.0f64;
    for (ids, want) in ranked.iter().zip(wanted) {
        if let Some(pos) = ids.iter().position(|id| id.as_ref() == want.as_ref()) {
            hits += 1;
            reciprocal += 1.0 / (pos + 1) as f64;
        }
    }
    let n = ranked.len() as f64;
    Ok(Score {
        hit_rate: 100.0 * hits as f64 / n,
        mrr: reciprocal / n,
    })
}

/// The mean, rounded half-up; `None` for no values.
pub fn average(values: &[u64]) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    Some(js_round(
        values.iter().sum::<u64>() as f64 / values.len() as f64,
    ))
}

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

/// What the OKF navigator pays: the index files, and whole raw files.
pub trait OkfRead {
    /// Tokens of every bundle's `index.md`, summed.
    fn index_tokens(&self) -> u64;
    /// Tokens of the raw file of concept `id` in `bundle`.
    fn file_tokens(&self, bundle: &str, id: &str) -> Result<u64, BillingError>;
}

/// The manifest read of a store.
pub trait ManifestRead {
    /// Tokens of the whole tenant manifest.
    fn manifest_tokens(&self) -> Result<u64, BillingError>;
}

/// Section reads of a store: price the exact text the store's `get` returns.
pub trait SectionRead {
    /// The key (`<store id>#<section>`) and tokens of the read of `target` for `q`.
    fn section(&self, q: &Question, target: &Target) -> Result<(String, u64), BillingError>;
}

/// Search reads of a store: price the rendered tool output.
pub trait SearchRead {
    /// Tokens of the rendered search output for `q` (named query, k = 8, default expansion).
    fn search_tokens(&self, q: &Question) -> Result<u64, BillingError>;
    /// Tokens of the rendered find window `get(id, {section, find: named})` for `q`, or
    /// `None` when the query does not locate.
    fn window_tokens(&self, q: &Question) -> Result<Option<u64>, BillingError>;
}

/// Raw-file costs of a generated corpus.
#[derive(Debug, Clone)]
pub struct OkfCosts {
    index: u64,
    files: HashMap<(String, String), u64>,
}

impl OkfCosts {
    /// Prices every file of `corpus` with [`tokens`].
    pub fn from_corpus(corpus: &Corpus) -> Self {
        let index = corpus
            .files
            .iter()
            .filter(|f| f.bundle_path() == "index.md")
            .map(|f| tokens(&f.text))
            .sum();
        let by_path: HashMap<&str, &str> = corpus
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.text.as_str()))
            .collect();
        let files = corpus
            .concepts
            .iter()
            .filter_map(|c| {
                by_path
                    .get(c.path.as_str())
                    .map(|t| ((c.bundle.clone(), c.id.clone()), tokens(t)))
            })
            .collect();
        OkfCosts { index, files }
    }
}

impl OkfRead for OkfCosts {
    fn index_tokens(&self) -> u64 {
        self.index
    }

    fn file_tokens(&self, bundle: &str, id: &str) -> Result<u64, BillingError> {
        self.files
            .get(&(bundle.to_string(), id.to_string()))
            .copied()
            .ok_or_else(|| BillingError::UnknownConcept {
                bundle: bundle.to_string(),
                id: id.to_string(),
            })
    }
}

/// The OKF navigator (agent-session.md §4): per question, the index, the first target's
/// file, then one turn with the other targets' files. Every read is the whole raw file.
pub fn okf_turns(questions: &[Question], costs: &impl OkfRead) -> Result<Vec<Turn>, BillingError> {
    let mut turns = Vec::new();
    for q in questions {
        turns.push(vec![Part::new("okf:index", costs.index_tokens())]);
        let Some((head, rest)) = q.targets.split_first() else {
            continue;
        };
        turns.push(vec![Part::new(
            format!("okf:{}", head.id()),
            costs.file_tokens(&q.bundle, head.id())?,
        )]);
        if !rest.is_empty() {
            let turn = rest
                .iter()
                .map(|t| {
                    Ok(Part::new(
                        format!("okf:{}", t.id()),
                        costs.file_tokens(&q.bundle, t.id())?,
                    ))
                })
                .collect::<Result<Turn, BillingError>>()?;
            turns.push(turn);
        }
    }
    Ok(turns)
}

/// One batched fetch: a part per target.
pub fn fetch_turn(q: &Question, costs: &impl SectionRead) -> Result<Turn, BillingError> {
    q.targets
        .iter()
        .map(|t| {
            let (key, tokens) = costs.section(q, t)?;
            Ok(Part(key, tokens))
        })
        .collect()
}

/// The fetch calls of one question: one batched turn with a part per target (the
/// reference's model), or, with `per_section`, one turn per distinct section in order of
/// first appearance (a `get` call applies one `section` to all its ids, so a question
/// whose targets need two sections takes two calls with our tool).
pub fn fetch_turns(
    q: &Question,
    costs: &impl SectionRead,
    per_section: bool,
) -> Result<Vec<Turn>, BillingError> {
    if !per_section {
        return Ok(vec![fetch_turn(q, costs)?]);
    }
    let mut sections: Vec<&str> = Vec::new();
    for t in &q.targets {
        if !sections.contains(&t.section()) {
            sections.push(t.section());
        }
    }
    sections
        .into_iter()
        .map(|s| {
            q.targets
                .iter()
                .filter(|t| t.section() == s)
                .map(|t| {
                    let (key, tokens) = costs.section(q, t)?;
                    Ok(Part(key, tokens))
                })
                .collect()
        })
        .collect()
}

/// Manifest-first: the manifest (paid once), then a fetch unless the manifest answers it.
pub fn manifest_first_turns(
    questions: &[Question],
    costs: &(impl ManifestRead + SectionRead),
) -> Result<Vec<Turn>, BillingError> {
    manifest_first_turns_with(questions, costs, false)
}

/// [`manifest_first_turns`], with the fetch split per section when `per_section`.
pub fn manifest_first_turns_with(
    questions: &[Question],
    costs: &(impl ManifestRead + SectionRead),
    per_section: bool,
) -> Result<Vec<Turn>, BillingError> {
    let manifest = costs.manifest_tokens()?;
    let mut turns = Vec::new();
    for q in questions {
        turns.push(vec![Part::new("manifest", manifest)]);
        if !q.manifest_only {
            turns.extend(fetch_turns(q, costs, per_section)?);
        }
    }
    Ok(turns)
}

/// Search-first: one new search per question, then the same fetch as manifest-first.
pub fn search_first_turns(
    questions: &[Question],
    costs: &(impl SearchRead + SectionRead),
) -> Result<Vec<Turn>, BillingError> {
    search_first_turns_with(questions, costs, false)
}

/// [`search_first_turns`], with the fetch split per section when `per_section`.
pub fn search_first_turns_with(
    questions: &[Question],
    costs: &(impl SearchRead + SectionRead),
    per_section: bool,
) -> Result<Vec<Turn>, BillingError> {
    let mut turns = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        turns.push(vec![Part::new(
            format!("search:{i}"),
            costs.search_tokens(q)?,
        )]);
        if !q.manifest_only {
            turns.extend(fetch_turns(q, costs, per_section)?);
        }
    }
    Ok(turns)
}

/// Find window: search, then one window read; `None` unless every question that needs a
/// read has a single target and a located window.
pub fn find_window_turns(
    questions: &[Question],
    costs: &impl SearchRead,
) -> Result<Option<Vec<Turn>>, BillingError> {
    let mut turns = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        turns.push(vec![Part::new(
            format!("search:{i}"),
            costs.search_tokens(q)?,
        )]);
        if q.manifest_only {
            continue;
        }
        if q.targets.len() != 1 {
            return Ok(None);
        }
        match costs.window_tokens(q)? {
            Some(t) => turns.push(vec![Part::new(format!("window:{i}"), t)]),
            None => return Ok(None),
        }
    }
    Ok(Some(turns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(parts: &[(&str, u64)]) -> Turn {
        parts.iter().map(|(k, t)| Part::new(*k, *t)).collect()
    }

    #[test]
    fn bill_skips_known_turns_and_rereads_context() {
        let turns = vec![
            turn(&[("a", 100)]),
            turn(&[("a", 100)]),            // skipped
            turn(&[("a", 100), ("b", 50)]), // 10 re-read + 50
            turn(&[("c", 5)]),              // 15 re-read + 5
        ];
        assert_eq!(
            bill(&turns),
            Bill {
                billed: 180,
                calls: 3
            }
        );
        assert_eq!(
            bill(&[]),
            Bill {
                billed: 0,
                calls: 0
            }
        );
    }

    #[test]
    fn bill_rounds_half_up() {
        // 1 + 0.1 × 1 + 4 = 5.1; then 0.1 × 5 = 0.5 more, so 5.6 → 6.
        let turns = vec![turn(&[("a", 1)]), turn(&[("b", 4)]), turn(&[("c", 0)])];
        assert_eq!(bill(&turns).billed, 6);
        assert_eq!(js_round(2.5), 3);
        assert_eq!(js_round(2.4999), 2);
    }

    #[test]
    fn tokens_count_utf16_units() {
        assert_eq!(tokens(""), 0);
        assert_eq!(tokens("abcd"), 1);
        assert_eq!(tokens("abcde"), 2);
        assert_eq!(utf16_len("—"), 1);
        assert_eq!(utf16_len("𝄞"), 2);
    }

    #[test]
    fn score_rejects_unpaired_lists() {
        let err = score(&[vec!["a"]], &["a", "b"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ranked lists and wanted ids: 1 and 2 entries do not pair up"
        );
    }
}
