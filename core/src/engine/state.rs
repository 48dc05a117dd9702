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

/// The source hashes of `new`'s documents that `old` does not hold (the texts a commit wrote
/// or a refresh read).
pub(crate) fn new_hashes(old: &TenantState, new: &TenantState) -> Vec<Digest> {
    let changed: Vec<&BundleState> = new
        .bundles
        .iter()
        .filter(|(name, b)| {
            old.bundles
                .get(*name)
                .is_none_or(|o| !Arc::ptr_eq(o, b) && o.record != b.record)
        })
        .map(|(_, b)| &**b)
        .collect();
    if changed.is_empty() {
        return Vec::new();
    }
    let held: HashSet<Digest> = old
        .bundles
        .values()
        .flat_map(|o| o.docs.values().map(|d| d.hash))
        .collect();
    changed
        .iter()
        .flat_map(|b| b.docs.values().map(|d| d.hash))
        .filter(|h| !held.contains(h))
        .collect()
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
