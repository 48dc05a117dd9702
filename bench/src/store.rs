//! Store-side read costs over the compiled read model of `langonrock-core`.
//!
//! [`BareCosts`] prices the bare text of the core model: the tenant manifest and the bare
//! section text of a `get`, with no frame around it. That is how the reference prices its
//! fetch parts (agent-session.md §4), so it is the like-for-like figure. The framed figure
//! (our rendered MCP tool output) and search-first need the tool renderers, and plug in
//! through the same traits.

use crate::billing::{tokens, BillingError, ManifestRead, SectionRead, EVAL_DATE};
use crate::corpus::Corpus;
use crate::questions::{Question, Target};
use langonrock_core::compile::{Concept, Model};
use std::collections::HashMap;

/// Read costs of the compiled model, bare text.
#[derive(Debug)]
pub struct BareCosts {
    model: Model,
    manifest: String,
    raw: RawIds,
}

/// The raw id of a concept: its file name without `.md`.
pub fn raw_id(c: &Concept) -> &str {
    let name = c.path.rsplit('/').next().unwrap_or(&c.path);
    name.strip_suffix(".md").unwrap_or(name)
}

/// The concepts of a model by `(bundle, raw id)`: the questions name raw ids, the store
/// serves public ids (which may differ, e.g. `bundle/id` when an id repeats).
#[derive(Debug, Clone, Default)]
pub struct RawIds(HashMap<(String, String), usize>);

impl RawIds {
    /// Indexes `model`'s concepts.
    pub fn of(model: &Model) -> RawIds {
        RawIds(
            model
                .concepts()
                .iter()
                .enumerate()
                .map(|(i, c)| ((c.bundle.clone(), raw_id(c).to_string()), i))
                .collect(),
        )
    }

    /// The concept of `model` a question names.
    pub fn concept<'m>(
        &self,
        model: &'m Model,
        bundle: &str,
        raw: &str,
    ) -> Result<&'m Concept, BillingError> {
        self.0
            .get(&(bundle.to_string(), raw.to_string()))
            .and_then(|&i| model.concepts().get(i))
            .map(|c| &**c)
            .ok_or_else(|| BillingError::UnknownConcept {
                bundle: bundle.to_string(),
                id: raw.to_string(),
            })
    }
}

impl BareCosts {
    /// Compiles `corpus` and renders the manifest of tenant `tenant` on [`EVAL_DATE`].
    pub fn compile(corpus: &Corpus, tenant: &str) -> Result<Self, String> {
        let model = corpus.model()?;
        BareCosts::from_model(model, tenant)
    }

    /// Wraps a compiled model and renders the manifest of tenant `tenant` on [`EVAL_DATE`].
    pub fn from_model(model: Model, tenant: &str) -> Result<Self, String> {
        let manifest = langonrock_core::manifest::manifest(&model, tenant, None, EVAL_DATE)
            .map_err(|e| e.message())?;
        let raw = RawIds::of(&model);
        Ok(BareCosts {
            model,
            manifest,
            raw,
        })
    }

    /// The compiled model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The rendered tenant manifest.
    pub fn manifest(&self) -> &str {
        &self.manifest
    }

    /// The concept a question's target names (its raw id in the question's bundle).
    pub fn concept(&self, bundle: &str, raw: &str) -> Result<&Concept, BillingError> {
        self.raw.concept(&self.model, bundle, raw)
    }

    /// The body (`get(id)` without frame).
    pub fn body<'a>(&'a self, bundle: &str, raw: &str) -> Result<&'a str, BillingError> {
        Ok(self.concept(bundle, raw)?.body())
    }

    /// The bare text of `section`, or the whole body when the concept has no such section.
    pub fn section_text<'a>(
        &'a self,
        bundle: &str,
        raw: &str,
        section: &str,
    ) -> Result<&'a str, BillingError> {
        Ok(crate::rendered::bare_section(
            self.concept(bundle, raw)?,
            section,
        ))
    }
}

impl ManifestRead for BareCosts {
    fn manifest_tokens(&self) -> Result<u64, BillingError> {
        Ok(tokens(&self.manifest))
    }
}

impl SectionRead for BareCosts {
    fn section(&self, q: &Question, target: &Target) -> Result<(String, u64), BillingError> {
        let c = self.concept(&q.bundle, target.id())?;
        let text = self.section_text(&q.bundle, target.id(), target.section())?;
        Ok((format!("{}#{}", c.id, target.section()), tokens(text)))
    }
}
