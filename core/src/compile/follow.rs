//! Where a link goes (compile.md §6.2, §6.3): the one rule for the tenant pass, which turns
//! a concept's links into ids, and for a host that follows a link a person clicked (the
//! notes page, through the wasm bindings' `LinkTargets`).
//!
//! [`wiki_hit`] is the lookup order of a wiki target over any set of [`Names`]; the from-
//! scratch pass (`full.rs`), the incremental one (`linker.rs`) and [`LinkTargets`] each
//! answer the three lookups from their own tables. [`LinkTargets::markdown`] and
//! [`LinkTargets::wiki`] take a link as written (a destination, the text between `[[` and
//! `]]`) and say what it names, or which document would resolve it when nothing does.

use super::linker::bundle_local_ids;
use super::parse::{has_scheme, markdown_target};
use super::{strip_md, underscore_spaces, Ambiguity};
use crate::validate;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

/// What a link target names in a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hit<D> {
    /// A concept.
    Concept(D),
    /// A navigation document: the compiler ignores the link (§6.2 rule 7, §6.3 rule 2.1).
    Nav,
    /// Nothing: the link is unresolved.
    Nothing,
}

/// The three lookups a wiki target is tried against (compile.md §6.3 rule 2), all
/// case-sensitive.
pub(super) trait Names {
    /// How a concept is named in the answer.
    type Doc;
    /// The document at `path` in `bundle`.
    fn at_path(&self, bundle: &str, path: &str) -> Hit<Self::Doc>;
    /// The concept whose local id (§5.1) in `bundle` is `id`.
    fn local(&self, bundle: &str, id: &str) -> Option<Self::Doc>;
    /// The concept whose public id (§5.2) is `id`.
    fn public(&self, id: &str) -> Option<Self::Doc>;
}

/// One try of a wiki target (§6.3 rule 2 steps 1–3); `buf` is scratch space.
fn wiki_once<N: Names>(names: &N, bundle: &str, target: &str, buf: &mut String) -> Hit<N::Doc> {
    buf.clear();
    buf.push_str(target);
    if !validate::ends_with_md(target) {
        buf.push_str(".md");
    }
    match names.at_path(bundle, buf) {
        Hit::Nothing => {}
        hit => return hit,
    }
    if let Some(d) = names.local(bundle, target) {
        return Hit::Concept(d);
    }
    match names.public(target) {
        Some(d) => Hit::Concept(d),
        None => Hit::Nothing,
    }
}

/// What the wiki target `target` (already cut at `|` and `#`, in NFC) names from `bundle`:
/// §6.3 rule 2, steps 1–3 and then, when the target holds white space, again with each run
/// of it turned into `_` (step 4).
pub(super) fn wiki_hit<N: Names>(
    names: &N,
    bundle: &str,
    target: &str,
    buf: &mut String,
) -> Hit<N::Doc> {
    match wiki_once(names, bundle, target, buf) {
        Hit::Nothing if target.chars().any(char::is_whitespace) => {
            wiki_once(names, bundle, &underscore_spaces(target), buf)
        }
        hit => hit,
    }
}

/// One document of a tenant, as a host lists it (`listSource`'s entries; other fields are
/// ignored when read from JSON).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LinkDocument {
    /// The bundle.
    pub bundle: String,
    /// The bundle-relative path.
    pub path: String,
    /// The public id; `None` for a navigation document.
    #[serde(default)]
    pub id: Option<String>,
}

/// The document a broken link names: the one whose creation would resolve it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Create {
    /// Its bundle: the linking document's.
    pub bundle: String,
    /// Its bundle-relative path, with `.md`.
    pub path: String,
    /// A title for it: the path's last segment without `.md`.
    pub title: String,
}

/// Where a link goes, for a host that follows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Target {
    /// A destination with a scheme (§6.2 rule 1, §6.3 rule 1): outside the tenant.
    External {
        /// The destination as written.
        href: String,
    },
    /// A place in the linking document itself (`#…`, `[[#…]]`).
    Anchor {
        /// The text after `#`.
        fragment: String,
    },
    /// A concept, by public id.
    Concept {
        /// The public id.
        id: String,
    },
    /// A navigation document (the compiler ignores such a link; a host can still show it).
    Document {
        /// Its bundle.
        bundle: String,
        /// Its path.
        path: String,
    },
    /// Nothing in the tenant: the compiler reports it as an unresolved link.
    Unresolved {
        /// The document that would resolve it; absent when none can (a Markdown link that
        /// climbs out of its bundle, or names no path).
        #[serde(skip_serializing_if = "Option::is_none")]
        create: Option<Create>,
    },
}

/// A tenant's documents, indexed to follow links as the compiler resolves them. Built from
/// the documents a host lists; it holds no text.
#[derive(Debug, Clone, Default)]
pub struct LinkTargets {
    docs: Vec<LinkDocument>,
    /// Bundle → path → index in `docs`.
    paths: HashMap<String, HashMap<String, usize>>,
    /// Bundle → local id → index.
    locals: HashMap<String, HashMap<String, usize>>,
    /// Public id → index.
    public: HashMap<String, usize>,
}

/// Here a hit names any document by its index, navigation documents included (their
/// entries have no id): a host can show those, so step 1's hit on one is kept. The order of
/// the lookups is the same.
impl Names for LinkTargets {
    type Doc = usize;

    fn at_path(&self, bundle: &str, path: &str) -> Hit<usize> {
        match self.paths.get(bundle).and_then(|b| b.get(path)) {
            Some(&i) => Hit::Concept(i),
            None => Hit::Nothing,
        }
    }

    fn local(&self, bundle: &str, id: &str) -> Option<usize> {
        self.locals.get(bundle).and_then(|b| b.get(id)).copied()
    }

    fn public(&self, id: &str) -> Option<usize> {
        self.public.get(id).copied()
    }
}

impl LinkTargets {
    /// Indexes `docs`. The local ids are worked out from the concepts' paths, bundle by
    /// bundle (§5.1; a repeated id is served as `~2` rather than refused, as a stored tenant
    /// that only a newer compiler finds ambiguous is).
    pub fn new(docs: Vec<LinkDocument>) -> LinkTargets {
        let mut t = LinkTargets {
            paths: HashMap::default(),
            locals: HashMap::default(),
            public: HashMap::default(),
            docs,
        };
        let mut concepts: Vec<usize> = (0..t.docs.len())
            .filter(|&i| t.docs[i].id.is_some())
            .collect();
        concepts.sort_by(|&a, &b| {
            let (a, b) = (&t.docs[a], &t.docs[b]);
            (a.bundle.as_str(), a.path.as_str()).cmp(&(b.bundle.as_str(), b.path.as_str()))
        });
        let mut start = 0;
        while start < concepts.len() {
            let bundle = t.docs[concepts[start]].bundle.clone();
            let end = start + concepts[start..].partition_point(|&i| t.docs[i].bundle == bundle);
            let paths: Vec<&str> = concepts[start..end]
                .iter()
                .map(|&i| t.docs[i].path.as_str())
                .collect();
            if let Ok((ids, _)) = bundle_local_ids(&paths, Ambiguity::Serve) {
                let locals = t.locals.entry(bundle).or_default();
                locals.reserve(ids.len());
                for (&i, local) in concepts[start..end].iter().zip(ids) {
                    locals.entry(local).or_insert(i);
                }
            }
            start = end;
        }
        t.public.reserve(concepts.len());
        for (i, d) in t.docs.iter().enumerate() {
            match t.paths.get_mut(&d.bundle) {
                Some(paths) => {
                    paths.insert(d.path.clone(), i);
                }
                None => {
                    let mut paths = HashMap::default();
                    paths.insert(d.path.clone(), i);
                    t.paths.insert(d.bundle.clone(), paths);
                }
            }
            if let Some(id) = &d.id {
                t.public.insert(id.clone(), i);
            }
        }
        t
    }

    /// Where the Markdown link destination `destination`, written in `bundle`/`path`, goes
    /// (§6.2).
    pub fn markdown(&self, bundle: &str, path: &str, destination: &str) -> Target {
        if has_scheme(destination) {
            return Target::External {
                href: destination.to_string(),
            };
        }
        if let Some(fragment) = destination.strip_prefix('#') {
            return Target::Anchor {
                fragment: fragment.to_string(),
            };
        }
        let Some(Some(to)) = markdown_target(destination, path) else {
            return Target::Unresolved { create: None };
        };
        match self.at_path(bundle, &to) {
            Hit::Concept(i) => self.doc(i),
            Hit::Nav => Target::Unresolved { create: None },
            Hit::Nothing => Target::Unresolved {
                create: Some(create(bundle, &to)),
            },
        }
    }

    /// Where the wiki link whose text between `[[` and `]]` is `inner`, written in
    /// `bundle`, goes (§6.3).
    pub fn wiki(&self, bundle: &str, inner: &str) -> Target {
        let text = inner.split('|').next().unwrap_or("");
        let (cut, fragment) = match text.split_once('#') {
            Some((t, f)) => (t, f),
            None => (text, ""),
        };
        if cut.is_empty() {
            return Target::Anchor {
                fragment: fragment.to_string(),
            };
        }
        if has_scheme(cut) {
            return Target::External {
                href: cut.to_string(),
            };
        }
        let target = validate::nfc(cut);
        let mut buf = String::new();
        match wiki_hit(self, bundle, &target, &mut buf) {
            Hit::Concept(i) => self.doc(i),
            Hit::Nav => Target::Unresolved { create: None },
            Hit::Nothing => {
                let bare = target.trim_start_matches('/');
                let mut p = bare.to_string();
                if !validate::ends_with_md(&p) {
                    p.push_str(".md");
                }
                Target::Unresolved {
                    create: (!bare.is_empty()).then(|| create(bundle, &p)),
                }
            }
        }
    }

    /// The document at index `i`: a concept by its id, a navigation document by its path.
    fn doc(&self, i: usize) -> Target {
        let d = &self.docs[i];
        match &d.id {
            Some(id) => Target::Concept { id: id.clone() },
            None => Target::Document {
                bundle: d.bundle.clone(),
                path: d.path.clone(),
            },
        }
    }
}

/// The note that would resolve a link to `path` in `bundle`.
fn create(bundle: &str, path: &str) -> Create {
    let last = path.rsplit('/').next().unwrap_or(path);
    Create {
        bundle: bundle.to_string(),
        path: path.to_string(),
        title: strip_md(last).to_string(),
    }
}

#[cfg(test)]
mod tests;
