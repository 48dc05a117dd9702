//! A tenant's source state in memory: documents by bundle, each with its cached parse.
//!
//! Bundles are shared between states behind `Arc`s, so a commit copies only the bundles it
//! touches, and a document keeps its parse for as long as its (path, source hash) stays.

use super::records::BundleRecord;
use super::store::Digest;
use crate::bytes::Text;
use crate::compile::{parse_document, Change, ParsedDoc, SourceDoc, SUMMARY_WIDTH};
use crate::error::{Error, Result};
use crate::validate;
use rustc_hash::FxHashSet;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// One stored document with its compile cache.
#[derive(Clone, Debug)]
pub(crate) struct Doc {
    pub(crate) hash: Digest,
    pub(crate) text: Text,
    /// The parse; `None` for a navigation document.
    pub(crate) parsed: Option<Arc<ParsedDoc>>,
}

impl Doc {
    /// Parses a document (nothing for navigation documents). `hash` may be given when known.
    pub(crate) fn new(path: &str, text: Text, hash: Option<Digest>) -> Doc {
        let hash = hash.unwrap_or_else(|| Digest::of(text.as_bytes()));
        if validate::is_navigation(path) {
            return Doc {
                hash,
                text,
                parsed: None,
            };
        }
        let parsed = parse_document(path, &text, SUMMARY_WIDTH);
        Doc {
            hash,
            text,
            parsed: Some(Arc::new(parsed)),
        }
    }
}

/// One bundle's documents, by path, and its bundle record's digest.
#[derive(Clone, Debug, Default)]
pub(crate) struct BundleState {
    pub(crate) docs: BTreeMap<String, Doc>,
    pub(crate) record: Digest,
    pub(crate) concepts: u64,
}

impl BundleState {
    pub(crate) fn record(&self) -> BundleRecord {
        BundleRecord {
            documents: self.docs.iter().map(|(p, d)| (p.clone(), d.hash)).collect(),
        }
    }
}

/// A tenant's documents: bundles by name (as created).
#[derive(Clone, Debug, Default)]
pub(crate) struct TenantState {
    pub(crate) bundles: BTreeMap<String, Arc<BundleState>>,
}

impl TenantState {
    /// The stored name of a bundle given in any case.
    pub(crate) fn find_bundle(&self, name: &str) -> Option<&str> {
        if let Some((k, _)) = self.bundles.get_key_value(name) {
            return Some(k);
        }
        self.bundles
            .keys()
            .find(|b| b.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }

    /// A document by stored bundle name and exact path.
    pub(crate) fn doc(&self, bundle: &str, path: &str) -> Option<&Doc> {
        self.bundles.get(bundle)?.docs.get(path)
    }

    /// Whether both states hold the same documents (same bundles, same bundle records).
    pub(crate) fn same_sources(&self, other: &TenantState) -> bool {
        self.bundles.len() == other.bundles.len()
            && self
                .bundles
                .iter()
                .zip(&other.bundles)
                .all(|(a, b)| a.0 == b.0 && a.1.record == b.1.record)
    }

    /// The linker changes that turn this state into `new`: every document added, changed
    /// or removed, in bundles whose record differs.
    pub(crate) fn diff(&self, new: &TenantState) -> Vec<Change> {
        let mut out = Vec::new();
        let empty = BTreeMap::new();
        let names: BTreeSet<&String> = self.bundles.keys().chain(new.bundles.keys()).collect();
        for name in names {
            let (a, b) = (self.bundles.get(name), new.bundles.get(name));
            if let (Some(a), Some(b)) = (a, b) {
                if Arc::ptr_eq(a, b) || a.record == b.record {
                    continue;
                }
            }
            let old_docs = a.map(|a| &a.docs).unwrap_or(&empty);
            let new_docs = b.map(|b| &b.docs).unwrap_or(&empty);
            for path in old_docs.keys() {
                if !new_docs.contains_key(path) {
                    out.push(Change {
                        bundle: name.clone(),
                        path: path.clone(),
                        doc: None,
                    });
                }
            }
            for (path, d) in new_docs {
                if old_docs.get(path).is_some_and(|o| o.hash == d.hash) {
                    continue;
                }
                let source = SourceDoc {
                    bundle: name.clone(),
                    path: path.clone(),
                    text: d.text.clone(),
                };
                out.push(Change {
                    bundle: name.clone(),
                    path: path.clone(),
                    doc: Some((source, d.parsed.clone())),
                });
            }
        }
        out
    }
}

/// The bundles of `new` whose record differs from the same bundle's in `old`, each with the
/// hashes of the documents that bundle held in `old` (none for a bundle `old` lacks): what
/// a commit or a refresh changed, bundle by bundle.
pub(crate) fn changed_bundles<'a>(
    old: &'a TenantState,
    new: &'a TenantState,
) -> impl Iterator<Item = (&'a BundleState, FxHashSet<Digest>)> + 'a {
    new.bundles.iter().filter_map(move |(name, b)| {
        let before = old.bundles.get(name);
        if before.is_some_and(|o| Arc::ptr_eq(o, b) || o.record == b.record) {
            return None;
        }
        let held = before
            .map(|o| o.docs.values().map(|d| d.hash).collect())
            .unwrap_or_default();
        Some((&**b, held))
    })
}

/// The source hashes of `new`'s documents that `old` does not hold (the texts a commit wrote
/// or a refresh read), in bundle and path order. Only the bundles that changed are looked
/// at: their documents are compared with the same bundle's in `old`, and the few hashes left
/// are then looked for in every bundle of `old` (one pass without a set of all its hashes,
/// which a refresh of a large tenant used to build for every commit).
pub(crate) fn new_hashes(old: &TenantState, new: &TenantState) -> Vec<Digest> {
    let mut fresh: Vec<Digest> = Vec::new();
    for (b, same) in changed_bundles(old, new) {
        fresh.extend(
            b.docs
                .values()
                .map(|d| d.hash)
                .filter(|h| !same.contains(h)),
        );
    }
    if fresh.is_empty() {
        return fresh;
    }
    let wanted: FxHashSet<Digest> = fresh.iter().copied().collect();
    let held: FxHashSet<Digest> = old
        .bundles
        .values()
        .flat_map(|o| o.docs.values().map(|d| d.hash))
        .filter(|h| wanted.contains(h))
        .collect();
    fresh.retain(|h| !held.contains(h));
    fresh
}

/// Changes a copy of a state, bundle by bundle.
pub(crate) struct Editor {
    state: TenantState,
    touched: BTreeSet<String>,
}

impl Editor {
    pub(crate) fn new(base: &TenantState) -> Editor {
        Editor {
            state: base.clone(),
            touched: BTreeSet::new(),
        }
    }

    pub(crate) fn state(&self) -> &TenantState {
        &self.state
    }

    /// Puts a document into a bundle (stored name; created when new).
    pub(crate) fn put(&mut self, bundle: &str, path: String, doc: Doc) {
        self.touched.insert(bundle.to_string());
        let b = Arc::make_mut(self.state.bundles.entry(bundle.to_string()).or_default());
        b.docs.insert(path, doc);
    }

    /// Removes a document; returns it.
    pub(crate) fn remove(&mut self, bundle: &str, path: &str) -> Option<Doc> {
        let b = Arc::make_mut(self.state.bundles.get_mut(bundle)?);
        let old = b.docs.remove(path)?;
        self.touched.insert(bundle.to_string());
        Some(old)
    }

    /// Removes a whole bundle.
    pub(crate) fn remove_bundle(&mut self, bundle: &str) {
        self.state.bundles.remove(bundle);
        self.touched.remove(bundle);
    }

    /// The touched bundles, with their paths lower-cased, must not hold two documents that
    /// differ only in case (engine.md §5.3.3).
    pub(crate) fn check_case_unique(&self) -> Result<()> {
        for name in &self.touched {
            if let Some(b) = self.state.bundles.get(name) {
                let mut seen = HashSet::with_capacity(b.docs.len());
                for p in b.docs.keys() {
                    if !seen.insert(p.to_lowercase()) {
                        return Err(Error::Invalid(validate::CASE_UNIQUE.into()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Seals the touched bundles (drops empty ones, computes their records) and returns the
    /// state with the encoded bundle records by digest.
    pub(crate) fn finish(mut self) -> (TenantState, HashMap<Digest, Vec<u8>>) {
        let mut sealed = HashMap::new();
        for name in &self.touched {
            let Some(b) = self.state.bundles.get_mut(name) else {
                continue;
            };
            if b.docs.is_empty() {
                self.state.bundles.remove(name);
                continue;
            }
            let b = Arc::make_mut(b);
            let bytes = b.record().encode();
            b.record = Digest::of(&bytes);
            b.concepts = b.docs.values().filter(|d| d.parsed.is_some()).count() as u64;
            sealed.insert(b.record, bytes);
        }
        (self.state, sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(record: u8, docs: &[(&str, u8)]) -> Arc<BundleState> {
        Arc::new(BundleState {
            docs: docs
                .iter()
                .map(|(p, h)| {
                    let doc = Doc {
                        hash: Digest([*h; 32]),
                        text: Text::from(*p),
                        parsed: None,
                    };
                    (p.to_string(), doc)
                })
                .collect(),
            record: Digest([record; 32]),
            concepts: 0,
        })
    }

    /// The definition: every hash of a changed bundle of `new` that no bundle of `old` holds.
    fn by_definition(old: &TenantState, new: &TenantState) -> Vec<Digest> {
        let held: HashSet<Digest> = old
            .bundles
            .values()
            .flat_map(|o| o.docs.values().map(|d| d.hash))
            .collect();
        new.bundles
            .iter()
            .filter(|(n, b)| old.bundles.get(*n).is_none_or(|o| o.record != b.record))
            .flat_map(|(_, b)| b.docs.values().map(|d| d.hash))
            .filter(|h| !held.contains(h))
            .collect()
    }

    /// New texts, a text moved from another bundle (held: not new), a text that stayed,
    /// a new bundle, an unchanged bundle holding a hash the changed one lost.
    #[test]
    fn new_hashes_are_those_no_bundle_of_the_old_state_holds() {
        let shared = bundle(9, &[("s.md", 7)]);
        let mut old = TenantState::default();
        old.bundles
            .insert("a".into(), bundle(1, &[("x.md", 1), ("y.md", 2)]));
        old.bundles.insert("b".into(), bundle(2, &[("z.md", 3)]));
        old.bundles.insert("s".into(), shared.clone());
        let mut new = TenantState::default();
        new.bundles.insert(
            "a".into(),
            bundle(3, &[("x.md", 1), ("y.md", 4), ("w.md", 3), ("v.md", 7)]),
        );
        new.bundles.insert("b".into(), bundle(2, &[("z.md", 3)]));
        new.bundles
            .insert("c".into(), bundle(5, &[("n.md", 5), ("m.md", 2)]));
        new.bundles.insert("s".into(), shared);
        let got = new_hashes(&old, &new);
        assert_eq!(got, by_definition(&old, &new));
        assert_eq!(got, vec![Digest([4; 32]), Digest([5; 32])]);
        assert!(new_hashes(&new, &new).is_empty());
        assert_eq!(
            new_hashes(&TenantState::default(), &new),
            by_definition(&TenantState::default(), &new)
        );
    }
}
