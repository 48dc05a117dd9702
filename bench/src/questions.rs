//! The 20 benchmark questions (reference-corpus.md §7), built over a whole generated corpus.

use crate::corpus::{fill, Corpus, CorpusError, Kind, Tables};
use serde::Serialize;

/// One `(id, section)` pair that must reach the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target(pub String, pub String);

impl Target {
    /// The raw concept id.
    pub fn id(&self) -> &str {
        &self.0
    }

    /// The section slug.
    pub fn section(&self) -> &str {
        &self.1
    }
}

/// One question, serialised exactly as `questions-500.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// 1-based.
    pub number: usize,
    /// `schema`, `join`, `manifest_only` or `metric`.
    pub archetype: String,
    /// The ground-truth raw id.
    pub wanted: String,
    /// The bundle of the wanted concept.
    pub bundle: String,
    /// What must reach the model: the concept's own section, then linked sections.
    pub targets: Vec<Target>,
    /// Whether the manifest row answers it.
    #[serde(rename = "manifestOnly")]
    pub manifest_only: bool,
    /// The query that names the concept.
    pub named: String,
    /// The query that describes it (its description).
    pub described: String,
}

/// Builds the questions over `corpus` with the embedded tables.
pub fn questions(corpus: &Corpus) -> Result<Vec<Question>, CorpusError> {
    questions_with(Tables::embedded()?, corpus)
}

/// Builds the questions over `corpus` with `t`.
pub fn questions_with(t: &Tables, corpus: &Corpus) -> Result<Vec<Question>, CorpusError> {
    let tables: Vec<_> = corpus
        .concepts
        .iter()
        .filter(|c| c.kind == Kind::Table)
        .collect();
    let metrics: Vec<_> = corpus
        .concepts
        .iter()
        .filter(|c| c.kind == Kind::Metric)
        .collect();
    let mut out = Vec::new();
    for archetype in &t.question_order {
        let rule = t.questions.get(archetype).ok_or_else(|| {
            CorpusError::Tables(format!(
                "question_order names unknown archetype {archetype:?}"
            ))
        })?;
        let items = match rule.list.as_str() {
            "tables" => &tables,
            "metrics" => &metrics,
            other => {
                return Err(CorpusError::Tables(format!(
                    "unknown question list {other:?}"
                )))
            }
        };
        if items.is_empty() {
            return Err(CorpusError::EmptyList(if rule.list == "tables" {
                "tables"
            } else {
                "metrics"
            }));
        }
        for k in 0..rule.count {
            let c = items[((k + rule.offset) * rule.stride) % items.len()];
            let mut targets = vec![Target(c.id.clone(), rule.own_section.clone())];
            if let Some(linked) = &rule.linked_section {
                targets.extend(c.links.iter().map(|l| Target(l.clone(), linked.clone())));
            }
            out.push(Question {
                number: out.len() + 1,
                archetype: archetype.clone(),
                wanted: c.id.clone(),
                bundle: c.bundle.clone(),
                targets,
                manifest_only: rule.manifest_only,
                named: fill(&rule.named, &[("id", &c.id), ("root", c.root())])?,
                described: c.description.clone(),
            });
        }
    }
    Ok(out)
}
