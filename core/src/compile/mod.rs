//! The compiler: documents in, read model and diagnostics out (compile.md).
//!
//! It runs in two passes. [`parse_document`] depends on one document's text only and is
//! cached by the engine per source hash. [`link`] is the tenant pass: local ids, public ids,
//! link resolution and the diagnostics that depend on other documents.

mod body;
mod follow;
mod front;
mod full;
mod guard;
mod linker;
mod parse;

pub use follow::{Create, LinkDocument, LinkTargets, Target};
pub use linker::{Change, Held, LinkDelta, Linker};

pub use parse::{
    frontmatter_description, kind_slug, markdown_options, parse_document, parse_document_reference,
    section_slug, split_frontmatter, stale_date, ParsedDoc, RawLink, Section,
};

use crate::bytes::Text;
use crate::error::{Error, Result};
use crate::validate;
use rustc_hash::FxHashMap as HashMap;
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
    pub text: Text,
}

impl SourceDoc {
    /// Builds a document.
    pub fn new(bundle: impl Into<String>, path: impl Into<String>, text: impl Into<Text>) -> Self {
        SourceDoc {
            bundle: bundle.into(),
            path: path.into(),
            text: text.into(),
        }
    }
}

/// The one informational diagnostic (docs/import.md, "Notes without frontmatter"): a
/// document without frontmatter is a plain Markdown concept, which is normal, not a fault.
pub const NO_FRONTMATTER: &str =
    "no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF";

/// A diagnostic: level `warn`, or `info` for [`NO_FRONTMATTER`] (compile.md §9).
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
    /// The level: `info` for a document without frontmatter, else `warn`.
    pub fn level(&self) -> &'static str {
        level_of(&self.message)
    }
}

/// The level of a diagnostic message: `info` for [`NO_FRONTMATTER`], else `warn`.
pub fn level_of(message: &str) -> &'static str {
    if message == NO_FRONTMATTER {
        "info"
    } else {
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
    pub text: Text,
    /// The per-document compile result.
    pub parsed: Arc<ParsedDoc>,
    /// Resolved link ids: public ids, de-duplicated and sorted.
    pub links: Vec<String>,
    /// This document's diagnostic messages, in the order of compile.md §9.
    pub diagnostics: Vec<String>,
}

impl Concept {
    /// The body: the text after the frontmatter.
    pub fn body(&self) -> &str {
        &self.text[self.parsed.body_start..]
    }

    /// Where the concept sorts in a model: by bundle, then id ([`Model::concepts`]).
    pub fn place(&self) -> (&str, &str) {
        (&self.bundle, &self.id)
    }
}

/// The compiled read model of a tenant.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Every bundle name, sorted, navigation-only bundles included.
    pub bundles: Vec<String>,
    /// Invariant: sorted by (bundle, id) in Rust string order, every id once. Concepts that
    /// a commit does not touch are shared (the same `Arc`) between the old and the new model.
    /// Read-only outside the compiler: the id index below is built from it.
    concepts: Vec<Arc<Concept>>,
    /// Public id to position in `concepts`.
    by_id: Arc<IdIndex>,
}

/// Two models are equal when their bundles and concepts are: the id index is a function of
/// the concepts.
impl PartialEq for Model {
    fn eq(&self, other: &Model) -> bool {
        self.bundles == other.bundles && self.concepts == other.concepts
    }
}

impl Eq for Model {}

impl Model {
    /// A model of these bundles and concepts (sorted by (bundle, id)); `None` when two
    /// concepts have the same public id.
    pub fn new(bundles: Vec<String>, concepts: Vec<Arc<Concept>>) -> Option<Model> {
        let by_id = Arc::new(IdIndex::build(&concepts)?);
        Some(Model {
            bundles,
            concepts,
            by_id,
        })
    }

    /// The concepts, sorted by (bundle, id).
    pub fn concepts(&self) -> &[Arc<Concept>] {
        &self.concepts
    }

    /// This model with the concept at each position replaced by one with the same id, bundle
    /// and path (a commit that only changed documents' content): the id index is shared.
    pub(crate) fn with_replaced(
        &self,
        bundles: Vec<String>,
        replaced: impl IntoIterator<Item = (usize, Arc<Concept>)>,
    ) -> Model {
        let mut concepts = self.concepts.clone();
        for (i, c) in replaced {
            debug_assert!(concepts[i].id == c.id && concepts[i].path == c.path);
            concepts[i] = c;
        }
        Model {
            bundles,
            concepts,
            by_id: self.by_id.clone(),
        }
    }

    /// A model of `concepts`, which is this model's list without the concepts at the sorted
    /// positions `removed` and with new ones at the sorted positions `inserted` (positions in
    /// the new list). The id index is carried over: positions shift by counting, and only the
    /// removed and inserted ids are hashed. `None` when an inserted id is already there.
    pub(crate) fn with_changes(
        &self,
        bundles: Vec<String>,
        concepts: Vec<Arc<Concept>>,
        removed: &[usize],
        inserted: &[usize],
    ) -> Option<Model> {
        let by_id = self
            .by_id
            .shifted(&self.concepts, &concepts, removed, inserted)?;
        Some(Model {
            bundles,
            concepts,
            by_id: Arc::new(by_id),
        })
    }

    /// The position in `concepts` of the concept with public id `id`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.by_id.get(&self.concepts, id)
    }

    /// The concept with public id `id`.
    pub fn concept(&self, id: &str) -> Option<&Concept> {
        self.position(id).map(|i| &*self.concepts[i])
    }

    /// Every diagnostic, by bundle, then path, then the order of compile.md §9.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut with: Vec<&Concept> = self
            .concepts
            .iter()
            .filter(|c| !c.diagnostics.is_empty())
            .map(|c| &**c)
            .collect();
        with.sort_by(|a, b| {
            (a.bundle.as_str(), a.path.as_str()).cmp(&(b.bundle.as_str(), b.path.as_str()))
        });
        with.iter()
            .flat_map(|c| {
                c.diagnostics
                    .iter()
                    .map(|m| diag(&c.bundle, &c.path, m.clone()))
            })
            .collect()
    }

    /// The diagnostics of one document.
    pub fn diagnostics_of(&self, bundle: &str, path: &str) -> Vec<Diagnostic> {
        self.concepts
            .iter()
            .filter(|c| c.bundle == bundle && c.path == path)
            .flat_map(|c| {
                c.diagnostics
                    .iter()
                    .map(|m| diag(&c.bundle, &c.path, m.clone()))
            })
            .collect()
    }

    /// The bundle as stored, for a name given in any case (compile.md §10.2).
    pub fn find_bundle(&self, name: &str) -> Option<&str> {
        self.bundles
            .iter()
            .find(|b| b.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }

    /// The concepts of one bundle (a contiguous run).
    pub fn bundle_concepts(&self, bundle: &str) -> &[Arc<Concept>] {
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
    // `link` over the parsed documents, borrowing them rather than copying.
    let items = docs
        .iter()
        .zip(parse_all(docs, width))
        .map(|(d, p)| full::Item::borrowed(d, p))
        .collect();
    Ok(full::full_pass(items, Ambiguity::Refuse)?.model())
}

/// The per-document pass of every document (`None` for a navigation document), in their
/// order; on every core with the `parallel` feature ([`crate::par`]), the same parses either
/// way.
pub fn parse_all(docs: &[SourceDoc], width: usize) -> Vec<Option<Arc<ParsedDoc>>> {
    crate::par::map(docs, |d| parse_source(&d.path, &d.text, width))
}

/// The per-document pass of one document as [`parse_all`] runs it: `None` for a navigation
/// document. For a host that parses each document where it read it.
pub fn parse_source(path: &str, text: &str, width: usize) -> Option<Arc<ParsedDoc>> {
    (!validate::is_navigation(path)).then(|| Arc::new(parse_document(path, text, width)))
}

/// Validates bundle names and paths, and their uniqueness ignoring case
/// (compile.md §1.1.4, §10). Paths must already be NFC.
pub fn check_names<'a>(items: impl Iterator<Item = (&'a str, &'a str)>) -> Result<()> {
    let mut bundles: HashMap<String, &str> = HashMap::default();
    let mut seen: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
    seen.reserve(items.size_hint().0);
    let mut last: Option<(&str, String)> = None;
    for (bundle, path) in items {
        validate::bundle_name(bundle)?;
        let norm = validate::document_path(path)?;
        if norm != path {
            return Err(Error::Invalid(format!(
                "invalid path \"{}\": not in NFC form",
                crate::bounds::quote(path)
            )));
        }
        // Documents come grouped by bundle: the previous bundle's lower-case form is reused.
        if last.as_ref().is_none_or(|(b, _)| *b != bundle) {
            let lower = bundle.to_ascii_lowercase();
            match bundles.get(&lower) {
                Some(b) if *b != bundle => {
                    return Err(Error::Invalid(validate::CASE_UNIQUE.into()))
                }
                Some(_) => {}
                None => {
                    bundles.insert(lower.clone(), bundle);
                }
            }
            last = Some((bundle, lower));
        }
        let lower = &last.as_ref().expect("set above").1;
        let mut key = String::with_capacity(lower.len() + 1 + path.len());
        key.push_str(lower);
        key.push('/');
        if path.is_ascii() {
            key.extend(path.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            key.push_str(&path.to_lowercase());
        }
        if !seen.insert(key) {
            return Err(Error::Invalid(validate::CASE_UNIQUE.into()));
        }
    }
    Ok(())
}

/// [`check_names`] for a folder's plan: valid bundle names, paths that came out of
/// [`validate::document_path`] already, sorted by `(bundle, path)`. The same result, with a
/// lower-cased copy only of the paths that are not lower-case ASCII already: such a path
/// can only clash with another ignoring case through one that is not (found in the sorted
/// list by its lower-case form) or one that is not either (found in a set of those).
pub(crate) fn check_sorted_names(items: &[(&str, &str)]) -> Result<()> {
    let clash = || Err(Error::Invalid(validate::CASE_UNIQUE.into()));
    let mut bundles: HashMap<String, &str> = HashMap::default();
    let mut folded: rustc_hash::FxHashSet<(&str, String)> = rustc_hash::FxHashSet::default();
    let mut last: Option<&str> = None;
    for (i, &(bundle, path)) in items.iter().enumerate() {
        if last != Some(bundle) {
            validate::bundle_name(bundle)?;
            match bundles.entry(bundle.to_ascii_lowercase()) {
                std::collections::hash_map::Entry::Occupied(b) if *b.get() != bundle => {
                    return clash()
                }
                std::collections::hash_map::Entry::Occupied(_) => {}
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(bundle);
                }
            }
            last = Some(bundle);
        }
        if i > 0 && items[i - 1] == (bundle, path) {
            return clash();
        }
        if path
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            continue;
        }
        let lower = if path.is_ascii() {
            path.to_ascii_lowercase()
        } else {
            path.to_lowercase()
        };
        if lower != path && items.binary_search(&(bundle, lower.as_str())).is_ok() {
            return clash();
        }
        if !folded.insert((bundle, lower)) {
            return clash();
        }
    }
    Ok(())
}

/// Strips a final `.md` (any case).
pub(crate) fn strip_md(path: &str) -> &str {
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
    // The full id of each path; its tier-0 and tier-1 ids are suffixes of it (the last
    // segment, and the last two), kept as their start offsets.
    let fulls: Vec<std::borrow::Cow<'_, str>> = paths
        .iter()
        .map(|p| {
            let s = strip_md(p);
            if s.chars().any(char::is_whitespace) {
                std::borrow::Cow::Owned(underscore_spaces(s))
            } else {
                std::borrow::Cow::Borrowed(s)
            }
        })
        .collect();
    let starts: Vec<[usize; 2]> = fulls
        .iter()
        .map(|f| {
            let mut slashes = f.rmatch_indices('/').map(|(i, _)| i + 1);
            let last = slashes.next().unwrap_or(0);
            let t1 = slashes.next().unwrap_or(0);
            [last, t1]
        })
        .collect();
    let mut counts: [HashMap<&str, usize>; 2] = [HashMap::default(), HashMap::default()];
    for t in 0..2 {
        counts[t].reserve(paths.len());
        for (f, st) in fulls.iter().zip(&starts) {
            *counts[t].entry(&f[st[t]..]).or_default() += 1;
        }
    }
    fulls
        .iter()
        .zip(&starts)
        .map(|(f, st)| {
            if counts[0][&f[st[0]..]] == 1 {
                f[st[0]..].to_string()
            } else if counts[1][&f[st[1]..]] == 1 {
                f[st[1]..].to_string()
            } else {
                f.to_string()
            }
        })
        .collect()
}

/// The tenant pass over a whole set of documents: ids, prefixing, links and diagnostics.
/// Each entry carries its parsed form, or `None` for a navigation document.
pub fn link(docs: Vec<LinkInput>, ambiguity: Ambiguity) -> Result<Model> {
    let items = docs.into_iter().map(full::Item::from_input).collect();
    Ok(full::full_pass(items, ambiguity)?.into_model())
}

/// What [`link_leaving`] leaves: the pass's documents, local ids and notes, for the caller to
/// drop when it suits it (or never, in a process about to exit).
pub struct Leftover {
    _full: full::Full<'static>,
}

/// [`link`], the pass's own data handed back instead of freed: the same model, without the
/// tens of thousands of frees that would run beside its sort (docs/compile.md §12).
pub fn link_leaving(docs: Vec<LinkInput>, ambiguity: Ambiguity) -> Result<(Model, Leftover)> {
    let items = docs.into_iter().map(full::Item::from_input).collect();
    let full = full::full_pass(items, ambiguity)?;
    Ok((full.model(), Leftover { _full: full }))
}

fn diag(bundle: &str, path: &str, message: String) -> Diagnostic {
    Diagnostic {
        bundle: bundle.to_string(),
        path: path.to_string(),
        message,
    }
}

/// Public ids to positions in a model's concept list, keyed by the concepts' own ids: the
/// table holds positions only, so building it copies no string and dropping it frees one
/// allocation. A commit that adds or removes a few documents carries it over
/// ([`IdIndex::shifted`]), a larger one rebuilds it (docs/compile.md §11 rule 4).
#[derive(Clone, Default)]
struct IdIndex {
    table: hashbrown::HashTable<u32>,
}

fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

impl IdIndex {
    /// The index of `concepts`; `None` when an id repeats (or there are more than
    /// `u32::MAX` concepts).
    fn build(concepts: &[Arc<Concept>]) -> Option<IdIndex> {
        u32::try_from(concepts.len()).ok()?;
        let mut index = IdIndex {
            table: hashbrown::HashTable::with_capacity(concepts.len()),
        };
        for i in 0..concepts.len() {
            index.insert(concepts, i)?;
        }
        Some(index)
    }

    /// Adds the concept at position `p` of `concepts`, whose other entries the table holds
    /// already; `None` when its id is there.
    fn insert(&mut self, concepts: &[Arc<Concept>], p: usize) -> Option<()> {
        let c = concepts.get(p)?;
        match self.table.entry(
            id_hash(&c.id),
            |&j: &u32| concepts[j as usize].id == c.id,
            |&j: &u32| id_hash(&concepts[j as usize].id),
        ) {
            hashbrown::hash_table::Entry::Occupied(_) => None,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(p as u32);
                Some(())
            }
        }
    }

    /// The index of `new`, made from this index of `old` (see [`Model::with_changes`]).
    fn shifted(
        &self,
        old: &[Arc<Concept>],
        new: &[Arc<Concept>],
        removed: &[usize],
        inserted: &[usize],
    ) -> Option<IdIndex> {
        debug_assert!(old.len() - removed.len() + inserted.len() == new.len());
        u32::try_from(new.len()).ok()?;
        let mut index = self.clone();
        let table = &mut index.table;
        for &q in removed {
            let entry = table
                .find_entry(id_hash(&old.get(q)?.id), |&j| j as usize == q)
                .ok()?;
            entry.remove();
        }
        // A kept concept's rank among the kept is its old position less the removed before
        // it; the inserted concept j (0-based) has `inserted[j] - j` kept ones before it.
        let before: Vec<usize> = inserted.iter().enumerate().map(|(j, &p)| p - j).collect();
        for j in table.iter_mut() {
            let q = *j as usize;
            let rank = q - removed.partition_point(|&r| r < q);
            *j = (rank + before.partition_point(|&c| c <= rank)) as u32;
        }
        for &p in inserted {
            index.insert(new, p)?;
        }
        Some(index)
    }

    fn get(&self, concepts: &[Arc<Concept>], id: &str) -> Option<usize> {
        self.table
            .find(id_hash(id), |&j| concepts[j as usize].id == id)
            .map(|&j| j as usize)
    }
}

impl std::fmt::Debug for IdIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IdIndex({} ids)", self.table.len())
    }
}
