//! The compiler: documents in, read model and diagnostics out (compile.md).
//!
//! It runs in two passes. [`parse_document`] depends on one document's text only and is
//! cached by the engine per source hash. [`link`] is the tenant pass: local ids, public ids,
//! link resolution and the diagnostics that depend on other documents.

mod parse;

pub use parse::{
    kind_slug, markdown_options, parse_document, section_slug, split_frontmatter, stale_date,
    ParsedDoc, RawLink, Section,
};

use crate::error::{Error, Result};
use crate::validate;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The default summary width, and the one every stored tenant uses.
pub const SUMMARY_WIDTH: usize = 120;

/// One input document: `(bundle, path, text)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDoc {
    /// The bundle name.
    pub bundle: String,
    /// The bundle-relative path, with `/`.
    pub path: String,
    /// The exact text.
    pub text: Arc<str>,
}

impl SourceDoc {
    /// Builds a document.
    pub fn new(
        bundle: impl Into<String>,
        path: impl Into<String>,
        text: impl Into<Arc<str>>,
    ) -> Self {
        SourceDoc {
            bundle: bundle.into(),
            path: path.into(),
            text: text.into(),
        }
    }
}

/// A diagnostic: always level `warn` (compile.md §9).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// The bundle.
    pub bundle: String,
    /// The bundle-relative path.
    pub path: String,
    /// The exact message.
    pub message: String,
}

impl Diagnostic {
    /// The level, always `warn`.
    pub fn level(&self) -> &'static str {
        "warn"
    }
}

/// One compiled concept of the read model (compile.md §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concept {
    /// The public id.
    pub id: String,
    /// The bundle name.
    pub bundle: String,
    /// The bundle-relative path.
    pub path: String,
    /// The exact stored text.
    pub text: Arc<str>,
    /// The per-document compile result.
    pub parsed: Arc<ParsedDoc>,
    /// Resolved link ids: public ids, de-duplicated and sorted.
    pub links: Vec<String>,
}

impl Concept {
    /// The body: the text after the frontmatter.
    pub fn body(&self) -> &str {
        &self.text[self.parsed.body_start..]
    }
}

/// The compiled read model of a tenant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    /// Every bundle name, sorted, navigation-only bundles included.
    pub bundles: Vec<String>,
    /// Invariant: sorted by (bundle, id) in Rust string order.
    pub concepts: Vec<Concept>,
    /// Public id to index in `concepts`.
    pub by_id: HashMap<String, usize>,
    /// Every diagnostic, by bundle, path, then the order of compile.md §9.
    pub diagnostics: Vec<Diagnostic>,
}

impl Model {
    /// The concept with public id `id`.
    pub fn concept(&self, id: &str) -> Option<&Concept> {
        self.by_id.get(id).map(|&i| &self.concepts[i])
    }

    /// The bundle as stored, for a name given in any case (compile.md §10.2).
    pub fn find_bundle(&self, name: &str) -> Option<&str> {
        self.bundles
            .iter()
            .find(|b| b.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }

    /// The concepts of one bundle (a contiguous run).
    pub fn bundle_concepts(&self, bundle: &str) -> &[Concept] {
        let lo = self
            .concepts
            .partition_point(|c| c.bundle.as_str() < bundle);
        let hi = self
            .concepts
            .partition_point(|c| c.bundle.as_str() <= bundle);
        &self.concepts[lo..hi]
    }
}

/// A document with its per-document parse, or `None` for a navigation document.
pub type LinkInput = (SourceDoc, Option<Arc<ParsedDoc>>);

/// How [`link`] treats two concepts that end with one id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ambiguity {
    /// Refuse with `ambiguous concept id …` (a read or a change).
    Refuse,
    /// Serve the later path under a `~2` id with a diagnostic (opening a stored state).
    Serve,
}

/// Compiles documents in one go: validates names and paths, parses, links.
pub fn compile(docs: &[SourceDoc], width: usize) -> Result<Model> {
    check_names(docs.iter().map(|d| (d.bundle.as_str(), d.path.as_str())))?;
    let parsed: Vec<LinkInput> = docs
        .iter()
        .map(|d| {
            let p = (!validate::is_navigation(&d.path))
                .then(|| Arc::new(parse_document(&d.path, &d.text, width)));
            (d.clone(), p)
        })
        .collect();
    link(parsed, Ambiguity::Refuse)
}

/// Validates bundle names and paths, and their uniqueness ignoring case
/// (compile.md §1.1.4, §10). Paths must already be NFC.
pub fn check_names<'a>(items: impl Iterator<Item = (&'a str, &'a str)>) -> Result<()> {
    let mut bundles: HashMap<String, &str> = HashMap::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (bundle, path) in items {
        validate::bundle_name(bundle)?;
        let norm = validate::document_path(path)?;
        if norm != path {
            return Err(Error::Invalid(format!(
                "invalid path \"{path}\": not in NFC form"
            )));
        }
        let lower = bundle.to_ascii_lowercase();
        match bundles.get(&lower) {
            Some(b) if *b != bundle => return Err(Error::Invalid(validate::CASE_UNIQUE.into())),
            Some(_) => {}
            None => {
                bundles.insert(lower.clone(), bundle);
            }
        }
        if !seen.insert(format!("{lower}/{}", path.to_lowercase())) {
            return Err(Error::Invalid(validate::CASE_UNIQUE.into()));
        }
    }
    Ok(())
}

/// Strips a final `.md` (any case).
fn strip_md(path: &str) -> &str {
    if validate::ends_with_md(path) {
        &path[..path.len() - 3]
    } else {
        path
    }
}

/// Turns each run of white space into one `_` (compile.md §5.1.5).
pub fn underscore_spaces(s: &str) -> String {
    if !s.chars().any(char::is_whitespace) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push('_');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

/// Local ids of one bundle's concept paths (compile.md §5.1), in the input order.
pub fn local_ids(paths: &[&str]) -> Vec<String> {
    let cands: Vec<[String; 3]> = paths
        .iter()
        .map(|p| {
            let full = underscore_spaces(strip_md(p));
            let segs: Vec<&str> = full.split('/').collect();
            let last = segs[segs.len() - 1].to_string();
            let t1 = if segs.len() >= 2 {
                format!("{}/{}", segs[segs.len() - 2], last)
            } else {
                last.clone()
            };
            [last, t1, full]
        })
        .collect();
    let mut counts: [HashMap<&str, usize>; 2] = [HashMap::new(), HashMap::new()];
    for c in &cands {
        for t in 0..2 {
            *counts[t].entry(c[t].as_str()).or_default() += 1;
        }
    }
    cands
        .iter()
        .map(|c| {
            if counts[0][c[0].as_str()] == 1 {
                c[0].clone()
            } else if counts[1][c[1].as_str()] == 1 {
                c[1].clone()
            } else {
                c[2].clone()
            }
        })
        .collect()
}

/// The tenant pass: ids, prefixing, links and diagnostics. Each entry carries its parsed
/// form, or `None` for a navigation document.
pub fn link(docs: Vec<LinkInput>, ambiguity: Ambiguity) -> Result<Model> {
    // Group by bundle, paths sorted.
    let mut by_bundle: BTreeMap<String, Vec<LinkInput>> = BTreeMap::new();
    for d in docs {
        by_bundle.entry(d.0.bundle.clone()).or_default().push(d);
    }
    for list in by_bundle.values_mut() {
        list.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    }
    let bundles: Vec<String> = by_bundle.keys().cloned().collect();

    // Local ids per bundle; then ambiguity.
    struct Item {
        doc: SourceDoc,
        parsed: Arc<ParsedDoc>,
        local: String,
        public: String,
    }
    let mut items: Vec<Item> = Vec::new();
    let mut extra_diags: Vec<Diagnostic> = Vec::new();
    // Per bundle: path -> Some(item index) for concepts, None for navigation.
    let mut paths: HashMap<&str, HashMap<&str, Option<usize>>> = HashMap::new();
    for (bundle, list) in &by_bundle {
        let concept_paths: Vec<&str> = list
            .iter()
            .filter(|d| d.1.is_some())
            .map(|d| d.0.path.as_str())
            .collect();
        let mut ids = local_ids(&concept_paths);
        // Two concepts with one id (compile.md §5.1.6, engine.md §2.5).
        let mut first_path: HashMap<String, usize> = HashMap::new();
        for i in 0..ids.len() {
            if let Some(&j) = first_path.get(&ids[i]) {
                match ambiguity {
                    Ambiguity::Refuse => {
                        return Err(Error::Invalid(format!(
                            "ambiguous concept id \"{}\": {} and {}",
                            ids[i], concept_paths[j], concept_paths[i]
                        )))
                    }
                    Ambiguity::Serve => {
                        let base = underscore_spaces(strip_md(concept_paths[i]));
                        let mut n = 2;
                        let new_id = loop {
                            let cand = format!("{base}~{n}");
                            if !ids.contains(&cand) {
                                break cand;
                            }
                            n += 1;
                        };
                        extra_diags.push(Diagnostic {
                            bundle: bundle.clone(),
                            path: concept_paths[i].to_string(),
                            message: format!(
                                "ambiguous concept id \"{}\": served as \"{new_id}\"",
                                ids[i]
                            ),
                        });
                        ids[i] = new_id;
                    }
                }
            }
            first_path.insert(ids[i].clone(), i);
        }
        let mut k = 0;
        for d in list {
            if let Some(p) = &d.1 {
                items.push(Item {
                    doc: d.0.clone(),
                    parsed: p.clone(),
                    local: ids[k].clone(),
                    public: ids[k].clone(),
                });
                k += 1;
            }
        }
    }
    // Path tables (after items are fixed).
    let mut k = 0;
    for (bundle, list) in &by_bundle {
        let table = paths.entry(bundle.as_str()).or_default();
        for d in list {
            if d.1.is_some() {
                table.insert(d.0.path.as_str(), Some(k));
                k += 1;
            } else {
                table.insert(d.0.path.as_str(), None);
            }
        }
    }

    // Public ids (compile.md §5.2).
    let mut local_bundles: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for it in &items {
        local_bundles
            .entry(it.local.as_str())
            .or_default()
            .insert(it.doc.bundle.as_str());
    }
    let mut prefixed = vec![false; items.len()];
    for (i, it) in items.iter().enumerate() {
        if local_bundles[it.local.as_str()].len() > 1 {
            prefixed[i] = true;
        }
    }
    loop {
        let mut holders: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, it) in items.iter().enumerate() {
            let id = if prefixed[i] {
                format!("{}/{}", it.doc.bundle, it.local)
            } else {
                it.local.clone()
            };
            holders.entry(id).or_default().push(i);
        }
        let mut changed = false;
        for list in holders.values() {
            if list.len() > 1 {
                for &i in list {
                    if !prefixed[i] {
                        prefixed[i] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (i, it) in items.iter_mut().enumerate() {
        if prefixed[i] {
            it.public = format!("{}/{}", it.doc.bundle, it.local);
        }
    }

    // Lookup tables for wiki links.
    let mut local_index: HashMap<(&str, &str), usize> = HashMap::new();
    let mut public_index: HashMap<&str, usize> = HashMap::new();
    for (i, it) in items.iter().enumerate() {
        local_index.insert((it.doc.bundle.as_str(), it.local.as_str()), i);
        public_index.insert(it.public.as_str(), i);
    }

    enum Found {
        Concept(usize),
        Nav,
        Nothing,
    }
    let find_path = |bundle: &str, path: &str| -> Found {
        match paths.get(bundle).and_then(|t| t.get(path)) {
            Some(Some(i)) => Found::Concept(*i),
            Some(None) => Found::Nav,
            None => Found::Nothing,
        }
    };
    let wiki_once = |bundle: &str, target: &str| -> Found {
        let mut p = target.to_string();
        if !validate::ends_with_md(&p) {
            p.push_str(".md");
        }
        match find_path(bundle, &p) {
            Found::Nothing => {}
            f => return f,
        }
        if let Some(&i) = local_index.get(&(bundle, target)) {
            return Found::Concept(i);
        }
        if let Some(&i) = public_index.get(target) {
            return Found::Concept(i);
        }
        Found::Nothing
    };

    let mut concepts: Vec<Concept> = Vec::with_capacity(items.len());
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let bundle = it.doc.bundle.as_str();
        let mut ids: BTreeSet<&str> = BTreeSet::new();
        let mut unresolved: BTreeSet<&str> = BTreeSet::new();
        for l in &it.parsed.links {
            let found = match l {
                RawLink::Markdown { target: None, .. } => Found::Nothing,
                RawLink::Markdown {
                    target: Some(p), ..
                } => find_path(bundle, p),
                RawLink::Wiki { target, .. } => match wiki_once(bundle, target) {
                    Found::Nothing if target.chars().any(char::is_whitespace) => {
                        wiki_once(bundle, &underscore_spaces(target))
                    }
                    f => f,
                },
            };
            match found {
                Found::Concept(j) if j != i => {
                    ids.insert(items[j].public.as_str());
                }
                Found::Concept(_) | Found::Nav => {}
                Found::Nothing => {
                    unresolved.insert(match l {
                        RawLink::Markdown { dest, .. } => dest.as_str(),
                        RawLink::Wiki { text, .. } => text.as_str(),
                    });
                }
            }
        }
        let path = it.doc.path.as_str();
        for m in &it.parsed.head_diagnostics {
            diagnostics.push(diag(bundle, path, m.clone()));
        }
        for u in &unresolved {
            diagnostics.push(diag(bundle, path, format!("unresolved link \"{u}\"")));
        }
        if it.parsed.stale_after_diagnostic {
            diagnostics.push(diag(
                bundle,
                path,
                "stale_after is not a date (YYYY-MM-DD), ignored".into(),
            ));
        }
        concepts.push(Concept {
            id: it.public.clone(),
            bundle: bundle.to_string(),
            path: path.to_string(),
            text: it.doc.text.clone(),
            parsed: it.parsed.clone(),
            links: ids.into_iter().map(str::to_string).collect(),
        });
    }
    diagnostics.extend(extra_diags);
    // Stable sort by (bundle, path) keeps the per-document order.
    diagnostics.sort_by(|a, b| {
        (a.bundle.as_str(), a.path.as_str()).cmp(&(b.bundle.as_str(), b.path.as_str()))
    });
    concepts.sort_by(|a, b| {
        (a.bundle.as_str(), a.id.as_str()).cmp(&(b.bundle.as_str(), b.id.as_str()))
    });
    let by_id = concepts
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.clone(), i))
        .collect();
    Ok(Model {
        bundles,
        concepts,
        by_id,
        diagnostics,
    })
}

fn diag(bundle: &str, path: &str, message: String) -> Diagnostic {
    Diagnostic {
        bundle: bundle.to_string(),
        path: path.to_string(),
        message,
    }
}
