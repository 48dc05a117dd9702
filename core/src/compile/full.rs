//! The from-scratch tenant pass (compile.md §5, §6): local ids, public ids, link resolution
//! and the concepts, over a whole set of documents at once.
//!
//! [`link`](super::link) uses it directly, and a [`Linker`](super::Linker) uses it when it
//! starts empty. It computes what the incremental pass computes, without the dependency
//! closure: every concept is new, so every id is computed once and every link resolved once,
//! with borrowed keys into hash maps. The incremental pass's property test compares the two.

use super::follow::{wiki_hit, Hit, Names};
use super::linker::bundle_local_ids;
use super::{Ambiguity, Concept, LinkInput, Model, ParsedDoc, RawLink, SourceDoc};
use crate::error::Result;
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::sync::Arc;

/// A document with its key `(bundle, path)`.
pub(super) struct Item<'a> {
    /// The key when it differs from the document's own bundle and path.
    key: Option<(String, String)>,
    /// The document: borrowed by `compile`, owned by `link` and the linker.
    pub(super) doc: Cow<'a, SourceDoc>,
    /// `None` for a navigation document.
    pub(super) parsed: Option<Arc<ParsedDoc>>,
}

impl<'a> Item<'a> {
    /// An item keyed by the document's own bundle and path.
    pub(super) fn from_input((doc, parsed): LinkInput) -> Item<'a> {
        Item {
            key: None,
            doc: Cow::Owned(doc),
            parsed,
        }
    }

    /// An item borrowing its document, keyed by the document's own bundle and path.
    pub(super) fn borrowed(doc: &'a SourceDoc, parsed: Option<Arc<ParsedDoc>>) -> Item<'a> {
        Item {
            key: None,
            doc: Cow::Borrowed(doc),
            parsed,
        }
    }

    /// An item under the key `(bundle, path)`.
    pub(super) fn keyed(
        bundle: String,
        path: String,
        doc: SourceDoc,
        parsed: Option<Arc<ParsedDoc>>,
    ) -> Item<'a> {
        let key = (bundle != doc.bundle || path != doc.path).then_some((bundle, path));
        Item {
            key,
            doc: Cow::Owned(doc),
            parsed,
        }
    }

    pub(super) fn key(&self) -> (&str, &str) {
        match &self.key {
            Some((b, p)) => (b, p),
            None => (&self.doc.bundle, &self.doc.path),
        }
    }

    pub(super) fn bundle(&self) -> &str {
        self.key().0
    }

    pub(super) fn path(&self) -> &str {
        self.key().1
    }
}

/// One compiled concept of the pass.
pub(super) struct FullConcept {
    /// Index of its item.
    pub(super) item: usize,
    pub(super) local: String,
    pub(super) note: Option<String>,
    pub(super) concept: Arc<Concept>,
}

/// The result of the pass.
pub(super) struct Full<'a> {
    /// The documents, sorted by `(bundle, path)`, one per key.
    pub(super) items: Vec<Item<'a>>,
    /// The concepts, in the order of their items.
    pub(super) concepts: Vec<FullConcept>,
}

/// Sorts values by key, keeping the last of values with one key.
pub(super) fn sort_dedup<T>(values: Vec<T>, key: impl Fn(&T) -> (&str, &str)) -> Vec<T> {
    if values.windows(2).all(|w| key(&w[0]) < key(&w[1])) {
        return values;
    }
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_unstable_by(|&a, &b| key(&values[a]).cmp(&key(&values[b])).then(b.cmp(&a)));
    order.dedup_by(|a, b| key(&values[*a]) == key(&values[*b]));
    let mut slots: Vec<Option<T>> = values.into_iter().map(Some).collect();
    order
        .into_iter()
        .map(|i| slots[i].take().expect("each index once"))
        .collect()
}

/// Lookups over the whole tenant, borrowing from the items.
struct Tables<'a> {
    /// `(bundle, path)` -> concept index, or `None` for a navigation document.
    paths: HashMap<(&'a str, &'a str), Option<usize>>,
    /// `(bundle, local id)` -> concept index.
    locals: HashMap<(&'a str, &'a str), usize>,
    /// Public id -> concept index.
    public: HashMap<&'a str, usize>,
}

impl Names for Tables<'_> {
    /// A concept's index in the concepts.
    type Doc = usize;

    fn at_path(&self, bundle: &str, path: &str) -> Hit<usize> {
        match self.paths.get(&(bundle, path)) {
            Some(Some(c)) => Hit::Concept(*c),
            Some(None) => Hit::Nav,
            None => Hit::Nothing,
        }
    }

    fn local(&self, bundle: &str, id: &str) -> Option<usize> {
        self.locals.get(&(bundle, id)).copied()
    }

    fn public(&self, id: &str) -> Option<usize> {
        self.public.get(id).copied()
    }
}

/// Runs the pass. Fails only with an ambiguous id under [`Ambiguity::Refuse`], with the
/// error the incremental pass gives for the same documents.
pub(super) fn full_pass(items: Vec<Item<'_>>, ambiguity: Ambiguity) -> Result<Full<'_>> {
    let items = sort_dedup(items, Item::key);

    // Concepts in key order, and local ids bundle by bundle.
    let mut item_of: Vec<usize> = Vec::with_capacity(items.len());
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < items.len() {
        let bundle = items[start].bundle();
        let end = start + items[start..].partition_point(|it| it.bundle() == bundle);
        let first = item_of.len();
        item_of.extend((start..end).filter(|&i| items[i].parsed.is_some()));
        runs.push((first, item_of.len()));
        start = end;
    }
    // Each bundle's local ids depend on its own paths alone: the bundles on every core
    // (docs/compile.md §12), the first refusal in bundle order.
    let per_bundle = crate::par::map(&runs, |&(first, end)| {
        let paths: Vec<&str> = item_of[first..end]
            .iter()
            .map(|&i| items[i].path())
            .collect();
        bundle_local_ids(&paths, ambiguity)
    });
    let mut locals: Vec<String> = Vec::with_capacity(item_of.len());
    let mut notes: Vec<Option<String>> = Vec::with_capacity(item_of.len());
    for r in per_bundle {
        let (ids, ns) = r?;
        locals.extend(ids);
        notes.extend(ns);
    }
    let n = item_of.len();

    // The paths' and local ids' tables depend on the keys and local ids alone: built beside
    // the public ids (compile.md §12).
    let locals_ref = &locals;
    let tables_of_keys = || {
        let mut paths: HashMap<(&str, &str), Option<usize>> = HashMap::default();
        let mut local_table: HashMap<(&str, &str), usize> = HashMap::default();
        paths.reserve(items.len());
        local_table.reserve(n);
        let mut c = 0;
        for (i, it) in items.iter().enumerate() {
            let concept = (c < n && item_of[c] == i).then_some(c);
            paths.insert(it.key(), concept);
            if concept.is_some() {
                c += 1;
            }
        }
        for c in 0..n {
            local_table
                .entry((items[item_of[c]].bundle(), locals_ref[c].as_str()))
                .or_insert(c);
        }
        (paths, local_table)
    };
    let (public, (paths, local_table)) =
        crate::par::beside(|| public_ids(&items, &item_of, locals_ref), tables_of_keys);
    let mut tables = Tables {
        paths,
        locals: local_table,
        public: HashMap::default(),
    };
    tables.public.reserve(n);
    for (c, id) in public.iter().enumerate() {
        tables.public.insert(id.as_str(), c);
    }

    // Resolution and concepts: each concept's links depend on the tables alone, so they are
    // resolved on every core with the `parallel` feature (compile.md §12), in order.
    let order: Vec<usize> = (0..n).collect();
    let out: Vec<Arc<Concept>> = crate::par::map(&order, |&c| {
        let mut buf = String::new();
        let mut ids: Vec<&str> = Vec::new();
        let mut unresolved: Vec<&str> = Vec::new();
        let it = &items[item_of[c]];
        let parsed = it.parsed.as_ref().expect("a concept");
        let bundle = it.bundle();
        for l in &parsed.links {
            let found = match l {
                RawLink::Markdown { target: None, .. } => Hit::Nothing,
                RawLink::Markdown {
                    target: Some(p), ..
                } => tables.at_path(bundle, p),
                RawLink::Wiki { target, .. } => wiki_hit(&tables, bundle, target, &mut buf),
            };
            match found {
                Hit::Concept(k) if k != c => ids.push(public[k].as_str()),
                Hit::Concept(_) | Hit::Nav => {}
                Hit::Nothing => unresolved.push(match l {
                    RawLink::Markdown { dest, .. } => dest.as_str(),
                    RawLink::Wiki { text, .. } => text.as_str(),
                }),
            }
        }
        ids.sort_unstable();
        ids.dedup();
        unresolved.sort_unstable();
        unresolved.dedup();
        let mut diagnostics = parsed.head_diagnostics.clone();
        diagnostics.extend(
            unresolved
                .iter()
                .map(|u| format!("unresolved link \"{u}\"")),
        );
        if parsed.stale_after_diagnostic {
            diagnostics.push("stale_after is not a date (YYYY-MM-DD), ignored".to_string());
        }
        if let Some(note) = &notes[c] {
            diagnostics.push(note.clone());
        }
        Arc::new(Concept {
            id: public[c].clone(),
            bundle: it.bundle().to_string(),
            path: it.path().to_string(),
            text: it.doc.text.clone(),
            parsed: parsed.clone(),
            links: ids.iter().map(|s| s.to_string()).collect(),
            diagnostics,
        })
    });
    drop(tables);

    let concepts = out
        .into_iter()
        .zip(item_of)
        .zip(locals.into_iter().zip(notes))
        .map(|((concept, item), (local, note))| FullConcept {
            item,
            local,
            note,
            concept,
        })
        .collect();
    Ok(Full { items, concepts })
}

/// The public ids of the concepts (compile.md §5.2), concept `c` being item `item_of[c]` with
/// local id `locals[c]`: prefix a local id held in two bundles, then prefix every id that two
/// concepts would share, until none does.
fn public_ids(items: &[Item<'_>], item_of: &[usize], locals: &[String]) -> Vec<String> {
    let n = locals.len();
    let mut prefixed = vec![false; n];
    {
        let mut seen: HashMap<&str, (&str, bool)> = HashMap::default();
        seen.reserve(n);
        for (c, local) in locals.iter().enumerate() {
            let bundle = items[item_of[c]].bundle();
            seen.entry(local)
                .and_modify(|(b, multi)| *multi |= *b != bundle)
                .or_insert((bundle, false));
        }
        for (c, local) in locals.iter().enumerate() {
            prefixed[c] = seen[local.as_str()].1;
        }
    }
    let public_of = |c: usize, prefixed: bool| -> String {
        if prefixed {
            format!("{}/{}", items[item_of[c]].bundle(), locals[c])
        } else {
            locals[c].clone()
        }
    };
    let mut public: Vec<String> = (0..n).map(|c| public_of(c, prefixed[c])).collect();
    loop {
        let mut holder: HashMap<&str, usize> = HashMap::default();
        holder.reserve(n);
        let mut collide: Vec<usize> = Vec::new();
        for (c, id) in public.iter().enumerate() {
            if let Some(&other) = holder.get(id.as_str()) {
                collide.push(other);
                collide.push(c);
            } else {
                holder.insert(id, c);
            }
        }
        let mut newly: Vec<usize> = Vec::new();
        for c in collide {
            if !prefixed[c] {
                prefixed[c] = true;
                newly.push(c);
            }
        }
        if newly.is_empty() {
            break;
        }
        for c in newly {
            public[c] = public_of(c, true);
        }
    }
    public
}

impl Full<'_> {
    /// The model of the pass: every bundle, the concepts sorted by `(bundle, id)`.
    pub(super) fn model(&self) -> Model {
        model_of(self.bundles(), self.concepts())
    }

    /// [`Full::model`], the pass itself dropped beside the model's sort: the documents,
    /// local ids and notes of 20,000 concepts are as many frees, which would otherwise
    /// run on the calling thread alone (docs/compile.md §12).
    pub(super) fn into_model(self) -> Model {
        let (bundles, concepts) = (self.bundles(), self.concepts());
        crate::par::beside(|| model_of(bundles, concepts), move || drop(self)).0
    }

    fn bundles(&self) -> Vec<String> {
        let mut bundles: Vec<String> = Vec::new();
        for it in &self.items {
            if bundles.last().map(String::as_str) != Some(it.bundle()) {
                bundles.push(it.bundle().to_string());
            }
        }
        bundles
    }

    fn concepts(&self) -> Vec<Arc<Concept>> {
        self.concepts.iter().map(|c| c.concept.clone()).collect()
    }
}

/// The model of these bundles and concepts, which are sorted by bundle.
fn model_of(bundles: Vec<String>, mut concepts: Vec<Arc<Concept>>) -> Model {
    // Already sorted by bundle; sort each bundle's run by id, on every core (ids are
    // unique, so the order is one; docs/compile.md §12).
    crate::par::sort_unstable_by(&mut concepts, |a, b| a.place().cmp(&b.place()));
    Model::new(bundles, concepts).expect("the full pass gives every concept its own id")
}

#[cfg(test)]
mod tests;
