//! The incremental tenant pass (compile.md §5, §6, §11).
//!
//! A [`Linker`] holds a tenant's documents with their per-document parses, and the indexes
//! that say which concepts depend on which names: the paths their Markdown links reach, the
//! names their wiki links try, and the ids they link to. Applying a change recomputes the
//! local ids of the bundles it touches, the public ids whose prefixing can change, and the
//! links of exactly the concepts whose resolution can differ. Everything else, including the
//! `Arc<Concept>` values of the model, is kept. The result always equals a from-scratch pass
//! over the same documents (a property test checks it).

use super::follow::{wiki_hit, Hit, Names};
use super::{
    full, local_ids, strip_md, underscore_spaces, Ambiguity, Concept, LinkInput, Model, ParsedDoc,
    RawLink, SourceDoc,
};
use crate::bytes::Text;
use crate::error::{Error, Result};
use crate::validate;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A document's key: `(bundle, path)`, shared (clones do not copy the strings).
type Key = Arc<(String, String)>;

fn new_key(bundle: &str, path: &str) -> Key {
    Arc::new((bundle.to_string(), path.to_string()))
}

/// One change to apply: the document at `(bundle, path)` becomes `doc`, or goes away.
#[derive(Debug, Clone)]
pub struct Change {
    /// The bundle, as stored.
    pub bundle: String,
    /// The path, NFC.
    pub path: String,
    /// The new document with its parse (`None` parse for a navigation document), or `None`
    /// to remove it.
    pub doc: Option<LinkInput>,
}

/// What an applied change did to the model.
#[derive(Debug, Clone, Default)]
pub struct LinkDelta {
    /// Concepts that left the model (as they were).
    pub removed: Vec<Arc<Concept>>,
    /// Concepts that are new or changed in any way (id, links, diagnostics, content).
    pub upserted: Vec<Arc<Concept>>,
    /// Concepts that still exist but whose public id changed: `(from, to)`, sorted by `from`.
    pub renamed: Vec<(String, String)>,
    /// The changes that undo this one (apply them to get the previous state back).
    pub undo: Vec<Change>,
}

#[derive(Debug, Clone)]
struct Entry {
    // The key, shared with the indexes.
    key: Key,
    // The document's text (its bundle and path are the key's).
    text: Text,
    // None for a navigation document.
    parsed: Option<Arc<ParsedDoc>>,
    local: String,
    public: String,
    ambiguity_note: Option<String>,
    // Registrations in the dependency indexes, to undo before re-resolving.
    md_keys: Vec<Key>,
    wiki_keys: Vec<String>,
    link_ids: Vec<String>,
    concept: Option<Arc<Concept>>,
}

/// One document [`Linker::restore_held`] takes: its path, text and parse (`None` for a
/// navigation document), borrowed.
#[derive(Debug, Clone, Copy)]
pub struct Held<'a> {
    /// The bundle-relative path.
    pub path: &'a str,
    /// The exact text.
    pub text: &'a Text,
    /// The parse, `None` for a navigation document.
    pub parsed: Option<&'a Arc<ParsedDoc>>,
}

impl Entry {
    /// The document as the tenant pass takes it.
    fn source(&self) -> SourceDoc {
        SourceDoc {
            bundle: self.key.0.clone(),
            path: self.key.1.clone(),
            text: self.text.clone(),
        }
    }
}

/// The incremental tenant pass. See the module documentation.
#[derive(Debug, Clone)]
pub struct Linker {
    ambiguity: Ambiguity,
    docs: BTreeMap<String, BTreeMap<String, Entry>>,
    // Local id -> the concepts holding it.
    local_keys: HashMap<String, BTreeSet<Key>>,
    // Public id -> the concept holding it.
    public: HashMap<String, Key>,
    // (bundle, path) -> concepts whose Markdown links reach that path.
    md_refs: HashMap<Key, BTreeSet<Key>>,
    // A name (path form or id form) -> concepts whose wiki links try it.
    wiki_refs: HashMap<String, BTreeSet<Key>>,
    // Public id -> concepts linking to it.
    backlinks: HashMap<String, BTreeSet<Key>>,
    // Whether the three dependency indexes above (and each entry's `md_keys`, `wiki_keys`
    // and `link_ids`) are kept. A restored linker starts without them: `apply` then finds
    // the concepts that depend on a changed name by one pass over the documents, until
    // `index_dependencies` builds them. The results are the same either way.
    refs: bool,
    model: Model,
    // Whether an empty linker takes the from-scratch pass (tests turn it off to compare).
    use_full_pass: bool,
}

fn remove_ref<K: std::hash::Hash + Eq>(map: &mut HashMap<K, BTreeSet<Key>>, k: &K, v: &Key) {
    if let Some(set) = map.get_mut(k) {
        set.remove(v);
        if set.is_empty() {
            map.remove(k);
        }
    }
}

/// The keys a document's raw links name, each list sorted and without repeats: the
/// Markdown targets through `md_key` (the key of a target path in the document's bundle),
/// the wiki names as `wiki_names` gives them. One rule for the tenant pass and for
/// `Linker::restore`, so both register the same keys.
fn link_keys(links: &[RawLink], md_key: impl Fn(&str) -> Key) -> (Vec<Key>, Vec<String>) {
    let mut md_keys: Vec<Key> = Vec::new();
    let mut wiki_keys: Vec<String> = Vec::new();
    for l in links {
        match l {
            RawLink::Markdown {
                target: Some(t), ..
            } => md_keys.push(md_key(t)),
            RawLink::Markdown { target: None, .. } => {}
            RawLink::Wiki { target, .. } => wiki_keys.extend(wiki_names(target)),
        }
    }
    md_keys.sort_unstable();
    md_keys.dedup();
    wiki_keys.sort_unstable();
    wiki_keys.dedup();
    (md_keys, wiki_keys)
}

/// The names under which a wiki target is registered: the path form of step 1 and the id
/// form of steps 2–3, each also with white space turned into `_` (step 4).
fn wiki_names(target: &str) -> Vec<String> {
    let mut v = Vec::with_capacity(4);
    let mut push = |t: &str| {
        v.push(t.to_string());
        if !validate::ends_with_md(t) {
            v.push(format!("{t}.md"));
        }
    };
    push(target);
    if target.chars().any(char::is_whitespace) {
        push(&underscore_spaces(target));
    }
    v.sort();
    v.dedup();
    v
}

/// Whether a wiki link to `target` tries one of `names` (one of [`wiki_names`]'s names),
/// without building them.
fn wiki_tries(target: &str, names: &BTreeSet<String>) -> bool {
    let tries = |t: &str| {
        names.contains(t)
            || (!validate::ends_with_md(t)
                && names
                    .iter()
                    .any(|n| n.len() == t.len() + 3 && n.starts_with(t) && n.ends_with(".md")))
    };
    tries(target) || (target.chars().any(char::is_whitespace) && tries(&underscore_spaces(target)))
}

/// Local ids of one bundle's concept paths (sorted), with the ambiguity note of each
/// (compile.md §5.1): under [`Ambiguity::Refuse`] a repeated id is an error, under
/// [`Ambiguity::Serve`] the later path gets a `~2` id and a note.
pub(super) fn bundle_local_ids(
    paths: &[&str],
    ambiguity: Ambiguity,
) -> Result<(Vec<String>, Vec<Option<String>>)> {
    let mut ids = local_ids(paths);
    let mut notes: Vec<Option<String>> = vec![None; ids.len()];
    // Usually every id is distinct: check that without copying them.
    let mut distinct: HashSet<&str> = HashSet::default();
    distinct.reserve(ids.len());
    if ids.iter().all(|id| distinct.insert(id)) {
        return Ok((ids, notes));
    }
    drop(distinct);
    let mut first: HashMap<String, usize> = HashMap::default();
    for i in 0..ids.len() {
        if let Some(&j) = first.get(&ids[i]) {
            match ambiguity {
                Ambiguity::Refuse => {
                    return Err(Error::Invalid(format!(
                        "ambiguous concept id \"{}\": {} and {}",
                        ids[i], paths[j], paths[i]
                    )))
                }
                Ambiguity::Serve => {
                    let base = underscore_spaces(strip_md(paths[i]));
                    let mut n = 2;
                    let new_id = loop {
                        let cand = format!("{base}~{n}");
                        if !ids.contains(&cand) {
                            break cand;
                        }
                        n += 1;
                    };
                    notes[i] = Some(format!(
                        "ambiguous concept id \"{}\": served as \"{new_id}\"",
                        ids[i]
                    ));
                    ids[i] = new_id;
                }
            }
        }
        first.insert(ids[i].clone(), i);
    }
    Ok((ids, notes))
}

/// The linker's answers to a wiki target's lookups (compile.md §6.3), by document key.
impl Names for Linker {
    type Doc = Key;

    fn at_path(&self, bundle: &str, path: &str) -> Hit<Key> {
        match self.docs.get(bundle).and_then(|b| b.get(path)) {
            Some(e) if e.parsed.is_some() => Hit::Concept(e.key.clone()),
            Some(_) => Hit::Nav,
            None => Hit::Nothing,
        }
    }

    fn local(&self, bundle: &str, id: &str) -> Option<Key> {
        self.local_keys
            .get(id)
            .and_then(|keys| keys.iter().find(|k| k.0 == bundle))
            .cloned()
    }

    fn public(&self, id: &str) -> Option<Key> {
        self.public.get(id).cloned()
    }
}

impl Linker {
    /// An empty linker.
    pub fn new(ambiguity: Ambiguity) -> Linker {
        Linker {
            ambiguity,
            docs: BTreeMap::new(),
            local_keys: HashMap::default(),
            public: HashMap::default(),
            md_refs: HashMap::default(),
            wiki_refs: HashMap::default(),
            backlinks: HashMap::default(),
            refs: true,
            model: Model::default(),
            use_full_pass: true,
        }
    }

    /// A linker that never takes the from-scratch pass, for tests that compare the two.
    #[cfg(test)]
    pub(crate) fn incremental_only(ambiguity: Ambiguity) -> Linker {
        Linker {
            use_full_pass: false,
            ..Linker::new(ambiguity)
        }
    }

    /// [`Linker::apply`] on an empty linker: the from-scratch pass, then the dependency
    /// indexes in bulk. Same results as the incremental pass.
    fn apply_to_empty(&mut self, changes: Vec<Change>) -> Result<LinkDelta> {
        let changes = full::sort_dedup(changes, |c| (c.bundle.as_str(), c.path.as_str()));
        let mut undo = Vec::with_capacity(changes.len());
        let mut items = Vec::with_capacity(changes.len());
        for c in changes {
            undo.push(Change {
                bundle: c.bundle.clone(),
                path: c.path.clone(),
                doc: None,
            });
            if let Some((doc, parsed)) = c.doc {
                items.push(full::Item::keyed(c.bundle, c.path, doc, parsed));
            }
        }
        undo.reverse();
        let full = full::full_pass(items, self.ambiguity)?;
        // With no documents the indexes are empty; start them afresh all the same.
        self.local_keys.clear();
        self.public.clear();
        self.md_refs.clear();
        self.wiki_refs.clear();
        self.backlinks.clear();
        self.refs = true;
        let model = full.model();
        let mut concepts = full.concepts.into_iter().peekable();
        // Every document's key, and where to find it by `(bundle, path)`.
        let keys: Vec<Key> = full
            .items
            .iter()
            .map(|it| new_key(it.bundle(), it.path()))
            .collect();
        let mut key_of: HashMap<(&str, &str), usize> = HashMap::default();
        key_of.reserve(keys.len());
        for (i, k) in keys.iter().enumerate() {
            key_of.insert((k.0.as_str(), k.1.as_str()), i);
        }
        let mut upserted = Vec::new();
        let mut docs: Vec<(String, Vec<(String, Entry)>)> = Vec::new();
        for (i, it) in full.items.into_iter().enumerate() {
            let key: Key = keys[i].clone();
            let mut entry = Entry {
                key: key.clone(),
                text: it.doc.text.clone(),
                parsed: it.parsed,
                local: String::new(),
                public: String::new(),
                ambiguity_note: None,
                md_keys: Vec::new(),
                wiki_keys: Vec::new(),
                link_ids: Vec::new(),
                concept: None,
            };
            if let Some(fc) = concepts.next_if(|c| c.item == i) {
                let parsed = entry.parsed.as_ref().expect("a concept");
                let (md_keys, wiki_keys) =
                    link_keys(&parsed.links, |p| match key_of.get(&(key.0.as_str(), p)) {
                        Some(&t) => keys[t].clone(),
                        None => new_key(&key.0, p),
                    });
                self.register(&key, &md_keys, &wiki_keys, &fc.concept.links);
                self.local_keys
                    .entry(fc.local.clone())
                    .or_default()
                    .insert(key.clone());
                self.public.insert(fc.concept.id.clone(), key.clone());
                entry.local = fc.local;
                entry.public = fc.concept.id.clone();
                entry.ambiguity_note = fc.note;
                entry.md_keys = md_keys;
                entry.wiki_keys = wiki_keys;
                entry.link_ids = fc.concept.links.clone();
                upserted.push(fc.concept.clone());
                entry.concept = Some(fc.concept);
            }
            match docs.last_mut() {
                Some((b, list)) if *b == key.0 => list.push((key.1.clone(), entry)),
                _ => docs.push((key.0.clone(), vec![(key.1.clone(), entry)])),
            }
        }
        self.docs = docs
            .into_iter()
            .map(|(b, list)| (b, list.into_iter().collect()))
            .collect();
        self.model = model;
        Ok(LinkDelta {
            removed: Vec::new(),
            upserted,
            renamed: Vec::new(),
            undo,
        })
    }

    /// A linker holding `docs` (every document of a tenant as changes that add it, the way
    /// [`Linker::apply`] takes them to an empty linker) whose tenant pass is known to give
    /// `model` (a model served from a derived record, linked from exactly these documents):
    /// [`Linker::restore_held`] over them, sorted by bundle and path (a later change of one
    /// key wins, as in `apply`). Fails when the model does not fit the documents (then apply
    /// them instead).
    pub fn restore(ambiguity: Ambiguity, docs: Vec<Change>, model: &Model) -> Result<Linker> {
        let mismatch = || Error::Invalid("the model does not fit the documents".into());
        let mut bundles: BTreeMap<String, BTreeMap<String, LinkInput>> = BTreeMap::new();
        for c in docs {
            let doc = c.doc.ok_or_else(mismatch)?;
            bundles.entry(c.bundle).or_default().insert(c.path, doc);
        }
        Linker::restore_held(
            ambiguity,
            bundles.iter().map(|(b, list)| {
                (
                    b.as_str(),
                    list.iter().map(|(p, (d, parsed))| Held {
                        path: p.as_str(),
                        text: &d.text,
                        parsed: parsed.as_ref(),
                    }),
                )
            }),
            model,
        )
    }

    /// A linker holding the documents `bundles` lists (each bundle's name with its documents;
    /// bundles in name order, documents in path order, each once) whose tenant pass is known
    /// to give `model`: the names (local and public ids) are taken from the model without
    /// resolving any link again, and the model's concepts are kept as they are. The
    /// documents are borrowed (a served state's, with no list of changes built first) and
    /// each is copied once, into its entry. The dependency indexes are left out until
    /// [`Linker::index_dependencies`] (a one-shot command applies one or two changes, which
    /// find their dependents by a pass over the documents instead). The result equals a
    /// linker that applied the documents to an empty one (a test holds them equal). Fails
    /// when the model does not fit the documents, or they are out of order.
    pub fn restore_held<'a, D>(
        ambiguity: Ambiguity,
        bundles: impl IntoIterator<Item = (&'a str, D)>,
        model: &Model,
    ) -> Result<Linker>
    where
        D: IntoIterator<Item = Held<'a>>,
    {
        let mismatch = || Error::Invalid("the model does not fit the documents".into());
        let mut by_place: HashMap<(&str, &str), &Arc<Concept>> = HashMap::default();
        by_place.reserve(model.concepts.len());
        for c in &model.concepts {
            by_place.insert((c.bundle.as_str(), c.path.as_str()), c);
        }
        let mut linker = Linker::new(ambiguity);
        linker.refs = false;
        linker.local_keys.reserve(model.concepts.len());
        linker.public.reserve(model.concepts.len());
        let mut concepts = 0usize;
        let mut last_bundle: Option<&str> = None;
        let mut docs: Vec<(String, BTreeMap<String, Entry>)> = Vec::new();
        let mut list: Vec<Held<'a>> = Vec::new();
        let mut paths: Vec<&str> = Vec::new();
        for (bundle, held) in bundles {
            if last_bundle.is_some_and(|b| b >= bundle) {
                return Err(mismatch());
            }
            last_bundle = Some(bundle);
            list.clear();
            list.extend(held);
            if list.is_empty() {
                // A bundle without documents holds nothing to link (as `apply` leaves it).
                continue;
            }
            if !list.windows(2).all(|w| w[0].path < w[1].path) {
                return Err(mismatch());
            }
            paths.clear();
            paths.extend(list.iter().filter(|d| d.parsed.is_some()).map(|d| d.path));
            let (ids, notes) = bundle_local_ids(&paths, Ambiguity::Serve)?;
            let mut locals = ids.into_iter().zip(notes);
            let mut entries: Vec<(String, Entry)> = Vec::with_capacity(list.len());
            for d in &list {
                let key = new_key(bundle, d.path);
                let mut entry = Entry {
                    key: key.clone(),
                    text: d.text.clone(),
                    parsed: d.parsed.cloned(),
                    local: String::new(),
                    public: String::new(),
                    ambiguity_note: None,
                    md_keys: Vec::new(),
                    wiki_keys: Vec::new(),
                    link_ids: Vec::new(),
                    concept: None,
                };
                if let Some(p) = d.parsed {
                    let (local, note) = locals.next().ok_or_else(mismatch)?;
                    let c = *by_place.get(&(bundle, d.path)).ok_or_else(mismatch)?;
                    if !Arc::ptr_eq(&c.parsed, p) && c.parsed != *p {
                        return Err(mismatch());
                    }
                    if linker.public.insert(c.id.clone(), key.clone()).is_some() {
                        return Err(mismatch());
                    }
                    match linker.local_keys.get_mut(local.as_str()) {
                        Some(set) => {
                            set.insert(key);
                        }
                        None => {
                            linker
                                .local_keys
                                .insert(local.clone(), BTreeSet::from([key]));
                        }
                    }
                    entry.local = local;
                    entry.public = c.id.clone();
                    entry.ambiguity_note = note;
                    entry.concept = Some(c.clone());
                    concepts += 1;
                }
                entries.push((d.path.to_string(), entry));
            }
            // In path order already: a bulk build.
            docs.push((bundle.to_string(), entries.into_iter().collect()));
        }
        if concepts != model.concepts.len() || docs.iter().map(|d| &d.0).ne(model.bundles.iter()) {
            return Err(mismatch());
        }
        linker.docs = docs.into_iter().collect();
        linker.model = model.clone();
        Ok(linker)
    }

    /// Builds the dependency indexes that [`Linker::restore`] leaves out (a linker that
    /// keeps serving commits finds a change's dependents faster with them). Nothing it
    /// answers changes.
    pub fn index_dependencies(&mut self) {
        if self.refs {
            return;
        }
        let mut regs = Vec::with_capacity(self.model.concepts.len());
        for (bundle, list) in &self.docs {
            for e in list.values() {
                let (Some(p), Some(c)) = (&e.parsed, &e.concept) else {
                    continue;
                };
                let (md_keys, wiki_keys) = link_keys(&p.links, |t| match list.get(t) {
                    Some(x) => x.key.clone(),
                    None => new_key(bundle, t),
                });
                regs.push((e.key.clone(), md_keys, wiki_keys, c.links.clone()));
            }
        }
        self.refs = true;
        for (key, md_keys, wiki_keys, links) in regs {
            self.register(&key, &md_keys, &wiki_keys, &links);
            if let Some(e) = self.entry_mut(&key) {
                e.md_keys = md_keys;
                e.wiki_keys = wiki_keys;
                e.link_ids = links;
            }
        }
    }

    /// Whether the dependency indexes are kept (for tests).
    #[cfg(test)]
    pub(crate) fn has_dependency_indexes(&self) -> bool {
        self.refs
    }

    /// The concepts whose links can resolve differently when the documents at `paths`
    /// come or go, the names `names` change holders, or the public ids `ids` change: from
    /// the dependency indexes, or, without them, by one pass over the documents (the same
    /// concepts: those whose Markdown links reach one of `paths` in their bundle, whose wiki
    /// links try one of `names`, or that link to one of `ids`).
    fn dependents(
        &self,
        paths: &[Key],
        names: &BTreeSet<String>,
        ids: &HashSet<&str>,
        out: &mut BTreeSet<Key>,
    ) {
        if self.refs {
            for k in paths {
                if let Some(set) = self.md_refs.get(k) {
                    out.extend(set.iter().cloned());
                }
            }
            for name in names {
                if let Some(set) = self.wiki_refs.get(name) {
                    out.extend(set.iter().cloned());
                }
            }
            for id in ids {
                if let Some(set) = self.backlinks.get(*id) {
                    out.extend(set.iter().cloned());
                }
            }
            return;
        }
        if paths.is_empty() && names.is_empty() && ids.is_empty() {
            return;
        }
        for (bundle, list) in &self.docs {
            let here: Vec<&str> = paths
                .iter()
                .filter(|k| k.0 == *bundle)
                .map(|k| k.1.as_str())
                .collect();
            for e in list.values() {
                let Some(p) = &e.parsed else { continue };
                let hit = p.links.iter().any(|l| match l {
                    RawLink::Markdown {
                        target: Some(t), ..
                    } => here.contains(&t.as_str()),
                    RawLink::Markdown { target: None, .. } => false,
                    RawLink::Wiki { target, .. } => !names.is_empty() && wiki_tries(target, names),
                }) || e
                    .concept
                    .as_ref()
                    .is_some_and(|c| c.links.iter().any(|l| ids.contains(l.as_str())));
                if hit {
                    out.insert(e.key.clone());
                }
            }
        }
    }

    /// Every document it holds, as the changes that add it to an empty linker.
    #[cfg(test)]
    pub(crate) fn held(&self) -> Vec<Change> {
        self.docs
            .iter()
            .flat_map(|(b, m)| {
                m.iter().map(move |(p, e)| Change {
                    bundle: b.clone(),
                    path: p.clone(),
                    doc: Some((e.source(), e.parsed.clone())),
                })
            })
            .collect()
    }

    /// A canonical dump of everything the linker holds (for tests that compare two).
    #[cfg(test)]
    pub(crate) fn dump(&self) -> String {
        if !self.refs {
            let mut indexed = self.clone();
            indexed.index_dependencies();
            return indexed.dump();
        }
        fn sets<K: std::fmt::Debug + Ord>(m: &HashMap<K, BTreeSet<Key>>) -> Vec<String> {
            let mut v: Vec<(&K, &BTreeSet<Key>)> = m.iter().collect();
            v.sort_by(|a, b| a.0.cmp(b.0));
            v.iter().map(|(k, s)| format!("{k:?} {s:?}")).collect()
        }
        let mut public: Vec<(&String, &Key)> = self.public.iter().collect();
        public.sort();
        let entries: Vec<String> = self
            .docs
            .iter()
            .flat_map(|(b, m)| {
                m.iter().map(move |(p, e)| {
                    format!(
                        "{b} {p} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                        e.key,
                        e.local,
                        e.public,
                        e.ambiguity_note,
                        e.md_keys,
                        e.wiki_keys,
                        e.link_ids,
                        e.concept
                    )
                })
            })
            .collect();
        format!(
            "{entries:#?}\n{:?}\n{public:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            sets(&self.local_keys),
            sets(&self.md_refs),
            sets(&self.wiki_refs),
            sets(&self.backlinks),
            self.model
        )
    }

    /// Sets how later changes treat two concepts that end with one id. The engine serves a
    /// stored state (`Serve`) and refuses a change that would make one (`Refuse`).
    pub fn set_ambiguity(&mut self, ambiguity: Ambiguity) {
        self.ambiguity = ambiguity;
    }

    /// The current model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Every document with its parse, sorted by bundle and path.
    pub fn documents(&self) -> impl Iterator<Item = (SourceDoc, Option<&Arc<ParsedDoc>>)> {
        self.docs
            .values()
            .flat_map(|b| b.values().map(|e| (e.source(), e.parsed.as_ref())))
    }

    /// The document at `(bundle, path)`, if any.
    pub fn document(&self, bundle: &str, path: &str) -> Option<SourceDoc> {
        self.docs
            .get(bundle)
            .and_then(|b| b.get(path))
            .map(Entry::source)
    }

    /// Applies changes (at most one per key; a later one wins) and returns what changed.
    /// On error (an ambiguous id under [`Ambiguity::Refuse`]) nothing changes.
    pub fn apply(&mut self, changes: Vec<Change>) -> Result<LinkDelta> {
        if self.docs.is_empty() && self.use_full_pass {
            return self.apply_to_empty(changes);
        }
        // Deduplicate by key, keeping the last change.
        let mut by_bundle: BTreeMap<String, BTreeMap<String, Option<LinkInput>>> = BTreeMap::new();
        for c in changes {
            by_bundle.entry(c.bundle).or_default().insert(c.path, c.doc);
        }

        // Phase 1, pure: the new local ids of every touched bundle, and ambiguity.
        let mut new_locals: HashMap<String, HashMap<String, (String, Option<String>)>> =
            HashMap::default();
        for (bundle, ch) in &by_bundle {
            let mut paths: BTreeSet<&str> = BTreeSet::new();
            if let Some(existing) = self.docs.get(bundle) {
                for (p, e) in existing {
                    if e.parsed.is_some() && !ch.contains_key(p) {
                        paths.insert(p.as_str());
                    }
                }
            }
            for (p, d) in ch {
                if let Some((_, Some(_))) = d {
                    paths.insert(p.as_str());
                }
            }
            let paths: Vec<&str> = paths.into_iter().collect();
            let (ids, notes) = bundle_local_ids(&paths, self.ambiguity)?;
            let table = paths
                .iter()
                .zip(ids)
                .zip(notes)
                .map(|((p, id), note)| (p.to_string(), (id, note)))
                .collect();
            new_locals.insert(bundle.clone(), table);
        }

        // Phase 2: apply documents and local ids.
        let mut delta = LinkDelta::default();
        let mut touched_locals: BTreeSet<String> = BTreeSet::new();
        let mut old_public: HashMap<Key, String> = HashMap::default();
        let mut content_changed: BTreeSet<Key> = BTreeSet::new();
        let mut path_changes: Vec<Key> = Vec::new();
        let mut names_changed: BTreeSet<String> = BTreeSet::new();
        let mut to_resolve: BTreeSet<Key> = BTreeSet::new();
        let mut removed_concepts: Vec<Arc<Concept>> = Vec::new();

        for (bundle, ch) in by_bundle {
            let mut locals = new_locals.remove(&bundle).unwrap_or_default();
            for (path, new_doc) in ch {
                let old = self.docs.get_mut(&bundle).and_then(|b| b.remove(&path));
                let key: Key = match &old {
                    Some(e) => e.key.clone(),
                    None => new_key(&bundle, &path),
                };
                delta.undo.push(Change {
                    bundle: bundle.clone(),
                    path: path.clone(),
                    doc: old.as_ref().map(|e| (e.source(), e.parsed.clone())),
                });
                let existed = old.is_some();
                let replacing =
                    matches!((&old, &new_doc), (Some(e), Some((_, Some(_)))) if e.parsed.is_some());
                if replacing {
                    // Same path, new content: the names stay; only this concept's own links
                    // and cells change.
                    let e = old.expect("replacing");
                    let (doc, parsed) = new_doc.expect("replacing");
                    let entry = Entry {
                        text: doc.text,
                        parsed,
                        ..e
                    };
                    self.docs
                        .entry(bundle.clone())
                        .or_default()
                        .insert(path.clone(), entry);
                    content_changed.insert(key.clone());
                    to_resolve.insert(key);
                    continue;
                }
                if let Some(e) = old {
                    self.unregister(&key, &e);
                    if e.parsed.is_some() {
                        remove_ref(&mut self.local_keys, &e.local, &key);
                        if self.public.get(&e.public) == Some(&key) {
                            self.public.remove(&e.public);
                        }
                        touched_locals.insert(e.local.clone());
                        old_public.insert(key.clone(), e.public.clone());
                        names_changed.insert(e.local.clone());
                        names_changed.insert(e.public.clone());
                        if let Some(c) = e.concept {
                            removed_concepts.push(c);
                        }
                    }
                }
                match new_doc {
                    Some((doc, parsed)) => {
                        if !existed {
                            path_changes.push(key.clone());
                        }
                        let is_concept = parsed.is_some();
                        let entry = Entry {
                            key: key.clone(),
                            text: doc.text,
                            parsed,
                            local: String::new(),
                            public: String::new(),
                            ambiguity_note: None,
                            md_keys: Vec::new(),
                            wiki_keys: Vec::new(),
                            link_ids: Vec::new(),
                            concept: None,
                        };
                        self.docs
                            .entry(bundle.clone())
                            .or_default()
                            .insert(path.clone(), entry);
                        if is_concept {
                            content_changed.insert(key.clone());
                            to_resolve.insert(key.clone());
                        }
                    }
                    None => {
                        if existed {
                            path_changes.push(key.clone());
                        }
                    }
                }
            }
            // Local ids of the whole bundle.
            if let Some(b) = self.docs.get_mut(&bundle) {
                for (path, e) in b.iter_mut() {
                    if e.parsed.is_none() {
                        continue;
                    }
                    let (id, note) = locals
                        .remove(path)
                        .expect("every concept of a touched bundle has a local id");
                    let key: Key = e.key.clone();
                    e.ambiguity_note = note;
                    if e.local != id {
                        if !e.local.is_empty() {
                            remove_ref(&mut self.local_keys, &e.local, &key);
                            touched_locals.insert(e.local.clone());
                            names_changed.insert(e.local.clone());
                        }
                        touched_locals.insert(id.clone());
                        names_changed.insert(id.clone());
                        self.local_keys
                            .entry(id.clone())
                            .or_default()
                            .insert(key.clone());
                        e.local = id;
                        to_resolve.insert(key);
                    }
                }
                if b.is_empty() {
                    self.docs.remove(&bundle);
                }
            }
        }
        for k in &path_changes {
            names_changed.insert(k.1.clone());
            names_changed.insert(strip_md(&k.1).to_string());
        }

        // Phase 3: public ids of every concept whose prefixing can change.
        let renamed_keys = self.recompute_public(&touched_locals, &old_public, &mut names_changed);
        for (key, old) in &renamed_keys {
            if !old.is_empty() {
                delta.renamed.push((
                    old.clone(),
                    self.entry(key).expect("renamed").public.clone(),
                ));
            }
        }

        // Phase 4: which concepts must resolve their links again.
        let old_ids: HashSet<&str> = old_public
            .values()
            .chain(renamed_keys.iter().map(|(_, old)| old))
            .map(String::as_str)
            .collect();
        self.dependents(&path_changes, &names_changed, &old_ids, &mut to_resolve);
        to_resolve.extend(renamed_keys.iter().map(|(k, _)| k.clone()));
        to_resolve.retain(|k| self.entry(k).is_some_and(|e| e.parsed.is_some()));

        // Phase 5: resolve, and build the changed concepts.
        for key in &to_resolve {
            self.unregister_key(key);
            let (links, unresolved, md_keys, wiki_keys) = self.resolve(key);
            let e = self.entry(key).expect("retained above");
            let parsed = e.parsed.clone().expect("a concept");
            let mut diagnostics = parsed.head_diagnostics.clone();
            diagnostics.extend(
                unresolved
                    .iter()
                    .map(|u| format!("unresolved link \"{u}\"")),
            );
            if parsed.stale_after_diagnostic {
                diagnostics.push("stale_after is not a date (YYYY-MM-DD), ignored".to_string());
            }
            if let Some(n) = &e.ambiguity_note {
                diagnostics.push(n.clone());
            }
            let concept = Arc::new(Concept {
                id: e.public.clone(),
                bundle: key.0.clone(),
                path: key.1.clone(),
                text: e.text.clone(),
                parsed,
                links: links.clone(),
                diagnostics,
            });
            let refs = self.refs;
            if refs {
                self.register(key, &md_keys, &wiki_keys, &links);
            }
            let e = self.entry_mut(key).expect("retained above");
            if refs {
                e.md_keys = md_keys;
                e.wiki_keys = wiki_keys;
                e.link_ids = links;
            }
            let unchanged = e.concept.as_ref().is_some_and(|c| **c == *concept);
            if !unchanged {
                if let Some(old) = e.concept.replace(concept.clone()) {
                    removed_concepts.push(old);
                }
                delta.upserted.push(concept);
            }
        }
        delta.renamed.sort();
        delta.renamed.dedup();

        // Phase 6: the model.
        self.rebuild_model(&removed_concepts, &delta.upserted);
        delta.removed = removed_concepts;
        delta.undo.reverse();
        Ok(delta)
    }

    fn entry(&self, key: &Key) -> Option<&Entry> {
        self.docs.get(&key.0).and_then(|b| b.get(&key.1))
    }

    fn entry_mut(&mut self, key: &Key) -> Option<&mut Entry> {
        self.docs.get_mut(&key.0).and_then(|b| b.get_mut(&key.1))
    }

    /// Records a concept in the dependency indexes: the paths its Markdown links reach, the
    /// names its wiki links try, and the ids it links to (the inverse of `unregister_key`).
    fn register(&mut self, key: &Key, md_keys: &[Key], wiki_keys: &[String], links: &[String]) {
        for k in md_keys {
            self.md_refs
                .entry(k.clone())
                .or_default()
                .insert(key.clone());
        }
        for n in wiki_keys {
            self.wiki_refs
                .entry(n.clone())
                .or_default()
                .insert(key.clone());
        }
        for id in links {
            self.backlinks
                .entry(id.clone())
                .or_default()
                .insert(key.clone());
        }
    }

    fn unregister_key(&mut self, key: &Key) {
        let Some(e) = self.entry_mut(key) else { return };
        let md_keys = std::mem::take(&mut e.md_keys);
        let wiki_keys = std::mem::take(&mut e.wiki_keys);
        let link_ids = std::mem::take(&mut e.link_ids);
        for k in &md_keys {
            remove_ref(&mut self.md_refs, k, key);
        }
        for n in &wiki_keys {
            remove_ref(&mut self.wiki_refs, n, key);
        }
        for id in &link_ids {
            remove_ref(&mut self.backlinks, id, key);
        }
    }

    fn unregister(&mut self, key: &Key, e: &Entry) {
        for k in &e.md_keys {
            remove_ref(&mut self.md_refs, k, key);
        }
        for n in &e.wiki_keys {
            remove_ref(&mut self.wiki_refs, n, key);
        }
        for id in &e.link_ids {
            remove_ref(&mut self.backlinks, id, key);
        }
        if let Some(entry) = self.entry_mut(key) {
            entry.md_keys.clear();
            entry.wiki_keys.clear();
            entry.link_ids.clear();
        }
    }

    /// Recomputes the public ids that can change (compile.md §5.2). Returns the keys whose
    /// public id changed or that are new, with the old id (empty for a new concept), and adds
    /// the old and new ids to `names`.
    fn recompute_public(
        &mut self,
        touched: &BTreeSet<String>,
        old_public: &HashMap<Key, String>,
        names: &mut BTreeSet<String>,
    ) -> Vec<(Key, String)> {
        // The closure of concepts whose id can depend on a touched local id.
        let mut set: BTreeSet<Key> = BTreeSet::new();
        let mut queue: Vec<String> = touched.iter().cloned().collect();
        queue.extend(old_public.values().cloned());
        let mut seen_names: HashSet<String> = HashSet::default();
        while let Some(name) = queue.pop() {
            if !seen_names.insert(name.clone()) {
                continue;
            }
            // Concepts holding `name` as their local id.
            if let Some(keys) = self.local_keys.get(&name) {
                for k in keys {
                    if set.insert(k.clone()) {
                        queue.push(format!("{}/{}", k.0, name));
                        if let Some(e) = self.entry(k) {
                            queue.push(e.public.clone());
                        }
                    }
                }
            }
            // A prefixed id `b/l` depends on the concepts with local id `l` in bundle `b`.
            if let Some((b, l)) = name.split_once('/') {
                if let Some(keys) = self.local_keys.get(l) {
                    for k in keys {
                        if k.0 == b && set.insert(k.clone()) {
                            queue.push(l.to_string());
                            queue.push(format!("{}/{}", k.0, l));
                        }
                    }
                }
            }
            if let Some(k) = self.public.get(&name) {
                if set.insert(k.clone()) {
                    if let Some(e) = self.entry(k) {
                        queue.push(e.local.clone());
                        queue.push(format!("{}/{}", k.0, e.local));
                    }
                }
            }
        }
        // Fixed point over the set, other concepts' ids fixed.
        let keys: Vec<Key> = set.into_iter().collect();
        let mut prefixed: Vec<bool> = keys
            .iter()
            .map(|k| {
                let local = &self.entry(k).expect("in the index").local;
                let holders = &self.local_keys[local];
                holders.iter().any(|h| h.0 != k.0)
            })
            .collect();
        let in_set: HashSet<&Key> = keys.iter().collect();
        loop {
            let mut ids: HashMap<String, Vec<usize>> = HashMap::default();
            for (i, k) in keys.iter().enumerate() {
                let local = &self.entry(k).expect("in the index").local;
                let id = if prefixed[i] {
                    format!("{}/{local}", k.0)
                } else {
                    local.clone()
                };
                ids.entry(id).or_default().push(i);
            }
            let mut changed = false;
            for (id, holders) in &ids {
                let outside = self.public.get(id).is_some_and(|k| !in_set.contains(k));
                if holders.len() > 1 || outside {
                    for &i in holders {
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
        let mut renamed = Vec::new();
        for k in &keys {
            let current = self.entry(k).map(|e| e.public.clone()).unwrap_or_default();
            if self.public.get(&current) == Some(k) {
                self.public.remove(&current);
            }
        }
        for (i, k) in keys.iter().enumerate() {
            let e = self.entry_mut(k).expect("in the index");
            let id = if prefixed[i] {
                format!("{}/{}", k.0, e.local)
            } else {
                e.local.clone()
            };
            if e.public != id {
                if !e.public.is_empty() {
                    names.insert(e.public.clone());
                }
                names.insert(id.clone());
                let old = std::mem::replace(&mut e.public, id.clone());
                renamed.push((k.clone(), old));
            }
            self.public.insert(id, k.clone());
        }
        renamed
    }

    /// Resolves one concept's links: (sorted link ids, sorted unresolved texts, Markdown
    /// keys, wiki names).
    fn resolve(&self, key: &Key) -> (Vec<String>, Vec<String>, Vec<Key>, Vec<String>) {
        let e = self.entry(key).expect("a concept");
        let parsed = e.parsed.as_ref().expect("a concept");
        let bundle = key.0.as_str();
        let mut ids: BTreeSet<&str> = BTreeSet::new();
        let mut unresolved: BTreeSet<&str> = BTreeSet::new();
        let mut md_keys: BTreeSet<Key> = BTreeSet::new();
        let mut wiki_keys: BTreeSet<String> = BTreeSet::new();
        let mut buf = String::new();
        for l in &parsed.links {
            let found = match l {
                RawLink::Markdown { target: None, .. } => Hit::Nothing,
                RawLink::Markdown {
                    target: Some(p), ..
                } => {
                    // The target document's own key when there is one.
                    let target = self.docs.get(bundle).and_then(|b| b.get(p.as_str()));
                    md_keys.insert(target.map_or_else(|| new_key(bundle, p), |e| e.key.clone()));
                    match target {
                        Some(e) if e.parsed.is_some() => Hit::Concept(e.key.clone()),
                        Some(_) => Hit::Nav,
                        None => Hit::Nothing,
                    }
                }
                RawLink::Wiki { target, .. } => {
                    wiki_keys.extend(wiki_names(target));
                    wiki_hit(self, bundle, target, &mut buf)
                }
            };
            match found {
                Hit::Concept(k) if &k != key => {
                    let target = self.entry(&k).expect("found");
                    ids.insert(target.public.as_str());
                }
                Hit::Concept(_) | Hit::Nav => {}
                Hit::Nothing => {
                    unresolved.insert(match l {
                        RawLink::Markdown { dest, .. } => dest.as_str(),
                        RawLink::Wiki { text, .. } => text.as_str(),
                    });
                }
            }
        }
        (
            ids.into_iter().map(str::to_string).collect(),
            unresolved.into_iter().map(str::to_string).collect(),
            md_keys.into_iter().collect(),
            wiki_keys.into_iter().collect(),
        )
    }

    /// The model without `removed` and with `upserted`, its id index carried over
    /// ([`Model::with_changes`]); `None` if a removed concept is not in the model.
    fn model_with_changes(
        &self,
        bundles: Vec<String>,
        removed: &[Arc<Concept>],
        upserted: &[Arc<Concept>],
    ) -> Option<Model> {
        let old = &self.model;
        let mut gone: Vec<usize> = removed
            .iter()
            .map(|c| {
                old.position(&c.id)
                    .filter(|&i| Arc::ptr_eq(&old.concepts()[i], c))
            })
            .collect::<Option<_>>()?;
        gone.sort_unstable();
        gone.dedup();
        if gone.len() != removed.len() {
            return None;
        }
        let mut concepts: Vec<Arc<Concept>> =
            Vec::with_capacity(old.concepts().len() + upserted.len());
        let mut from = 0;
        for &g in &gone {
            concepts.extend_from_slice(&old.concepts()[from..g]);
            from = g + 1;
        }
        concepts.extend_from_slice(&old.concepts()[from..]);
        let mut fresh: Vec<Arc<Concept>> = upserted.to_vec();
        fresh.sort_by(|a, b| a.place().cmp(&b.place()));
        let mut places = Vec::with_capacity(fresh.len());
        for c in fresh {
            let at = concepts.partition_point(|x| x.place() < c.place());
            concepts.insert(at, c);
            places.push(at);
        }
        old.with_changes(bundles, concepts, &gone, &places)
    }

    fn rebuild_model(&mut self, removed: &[Arc<Concept>], upserted: &[Arc<Concept>]) {
        let bundles: Vec<String> = self.docs.keys().cloned().collect();
        let old = &self.model;
        // Fast path: the same ids in the same places; swap the changed concepts in.
        let places: Option<Vec<usize>> = (removed.len() == upserted.len())
            .then(|| {
                upserted
                    .iter()
                    .map(|c| {
                        old.position(&c.id).filter(|&i| {
                            let o = &old.concepts()[i];
                            o.path == c.path && o.bundle == c.bundle
                        })
                    })
                    .collect()
            })
            .flatten();
        if let Some(places) = places.filter(|_| bundles == old.bundles) {
            self.model =
                old.with_replaced(bundles, places.into_iter().zip(upserted.iter().cloned()));
            return;
        }
        // A few concepts in or out (a usual commit): carry the id index over.
        if removed.len() <= 64 && upserted.len() <= 64 {
            if let Some(model) = self.model_with_changes(bundles.clone(), removed, upserted) {
                self.model = model;
                return;
            }
        }
        let gone: HashSet<*const Concept> = removed.iter().map(Arc::as_ptr).collect();
        let mut concepts: Vec<Arc<Concept>> = old
            .concepts()
            .iter()
            .filter(|c| !gone.contains(&Arc::as_ptr(c)))
            .cloned()
            .collect();
        // Many concepts in or out: one sort of the whole list, and a new id index.
        concepts.extend(upserted.iter().cloned());
        concepts.sort_unstable_by(|a, b| a.place().cmp(&b.place()));
        self.model =
            Model::new(bundles, concepts).expect("the linker gives every concept its own id");
    }
}
