//! The snapshot id: the root of a SHA-256 tree over a canonical encoding of the read model
//! (read.md §5, engine.md §2.2). `docs/format.md` defines the encoding byte by byte.
//!
//! The tree has three levels: one digest per concept's compiled form, one per bundle (its
//! name and its concepts' digests in id order), and the root (the sorted bundle names and
//! their digests). [`SnapshotTree::update`] rehashes only the concepts whose compiled form
//! changed, and the bundles that hold them.
//!
//! A concept's digest covers its id, bundle, path, the compiled row cells (status before
//! read-time `stale`), title, `stale_after`, links, section table and body. It leaves out
//! the frontmatter text and the BOM, so editing a key the compiler ignores keeps the id
//! (read.md §5.3); the source hash that `get` with `source: true` returns is therefore
//! covered by the revision id, not by the snapshot id.

use crate::compile::{Concept, Model, ParsedDoc};
use crate::hash::{hex, Digest};
use sha2::{Digest as _, Sha256};
use std::sync::Arc;

/// The snapshot id of the empty model (no bundles), as docs/format.md records it.
pub const EMPTY_SNAPSHOT_ID: &str =
    "aa8e3e55062260f0baa1149637313b38e68891b7fbfaef7725e210f79ba1daaa";

/// Domain tags: the first field of each level's encoding.
const CONCEPT_TAG: &str = "langonrock snapshot concept 1";
const BUNDLE_TAG: &str = "langonrock snapshot bundle 1";
const ROOT_TAG: &str = "langonrock snapshot root 1";

/// The library's `snapshot()` answer (read.md §5.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// The snapshot id, 64 lowercase hex characters.
    pub snapshot: String,
    /// The number of concepts.
    pub concepts: usize,
}

/// The canonical encoder: length-prefixed fields in fixed-width big-endian, so the bytes
/// are the same on every target and no field can run into the next. Small fields gather
/// in a buffer, so the hasher sees few, large updates; with a host's SHA-256
/// (`hash::set_host_sha256`) every field does, and the host hashes the encoding at once.
struct Enc {
    hasher: Option<Sha256>,
    buf: Vec<u8>,
}

/// Fields at least this long go to the hasher directly.
const DIRECT: usize = 256;

impl Enc {
    fn new(tag: &str) -> Enc {
        Enc::sized(tag, 0)
    }
    /// An encoder for about `bytes` of fields (the buffer's size with a host's SHA-256).
    fn sized(tag: &str, bytes: usize) -> Enc {
        let host = crate::hash::host_sha256();
        let mut e = Enc {
            hasher: (!host).then(Sha256::new),
            buf: Vec::with_capacity(if host { bytes + DIRECT } else { DIRECT * 2 }),
        };
        e.str(tag);
        e
    }
    fn bytes(&mut self, b: &[u8]) {
        match &mut self.hasher {
            Some(h) if b.len() >= DIRECT => {
                h.update(&self.buf);
                self.buf.clear();
                h.update(b);
            }
            _ => self.buf.extend_from_slice(b),
        }
    }
    fn u64(&mut self, n: usize) {
        self.bytes(&(n as u64).to_be_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len());
        self.bytes(s.as_bytes());
    }
    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.bytes(&[0]),
            Some(s) => {
                self.bytes(&[1]);
                self.str(s);
            }
        }
    }
    fn digest(&mut self, d: &Digest) {
        self.bytes(d);
    }
    fn finish(self) -> Digest {
        match self.hasher {
            Some(mut h) => {
                h.update(&self.buf);
                h.finalize().into()
            }
            None => crate::hash::sha256(&self.buf),
        }
    }
}

/// The digest of one concept's compiled form.
pub fn concept_digest(c: &Concept) -> Digest {
    let p: &ParsedDoc = &c.parsed;
    let mut e = Enc::sized(
        CONCEPT_TAG,
        c.body().len() + p.summary.len() + 64 * p.sections.len(),
    );
    concept_fields(&mut e, c);
    e.finish()
}

/// The fields of a concept's encoding after its tag.
fn concept_fields(e: &mut Enc, c: &Concept) {
    let p: &ParsedDoc = &c.parsed;
    e.str(&c.id);
    e.str(&c.bundle);
    e.str(&c.path);
    e.str(&p.kind);
    e.str(&p.status);
    e.str(&p.grain);
    e.str(&p.summary);
    e.opt(p.title.as_deref());
    e.opt(p.stale_after.as_deref());
    e.u64(c.links.len());
    for l in &c.links {
        e.str(l);
    }
    e.u64(p.sections.len());
    for s in &p.sections {
        e.str(&s.name);
        e.u64(s.start);
        e.u64(s.end);
    }
    e.str(c.body());
}

/// The leaves of `concepts`: with a host's SHA-256, their encodings gathered in one buffer
/// and hashed in few calls to the host (`hash::sha256_many`); else one by one.
fn concept_nodes(concepts: &[Arc<Concept>]) -> Vec<ConceptNode> {
    if !crate::hash::host_sha256() {
        return concepts.iter().map(ConceptNode::new).collect();
    }
    let mut e = Enc {
        hasher: None,
        buf: Vec::new(),
    };
    let mut ends = Vec::with_capacity(concepts.len());
    for c in concepts {
        e.str(CONCEPT_TAG);
        concept_fields(&mut e, c);
        ends.push(e.buf.len());
    }
    let mut start = 0;
    let slices: Vec<&[u8]> = ends
        .iter()
        .map(|&end| {
            let s = &e.buf[start..end];
            start = end;
            s
        })
        .collect();
    let digests = crate::hash::sha256_many(&slices);
    concepts
        .iter()
        .zip(digests)
        .map(|(c, digest)| ConceptNode {
            concept: Arc::clone(c),
            digest,
        })
        .collect()
}

fn bundle_digest(name: &str, concepts: &[ConceptNode]) -> Digest {
    let mut e = Enc::new(BUNDLE_TAG);
    e.str(name);
    e.u64(concepts.len());
    for c in concepts {
        e.digest(&c.digest);
    }
    e.finish()
}

fn root_digest(bundles: &[BundleNode]) -> Digest {
    let mut e = Enc::new(ROOT_TAG);
    e.u64(bundles.len());
    for b in bundles {
        e.str(&b.name);
        e.digest(&b.digest);
    }
    e.finish()
}

/// One concept's leaf. It keeps the `Arc` it was hashed from: holding it prevents a freed
/// allocation from being reused at the same address, so pointer equality in
/// [`SnapshotTree::update`] can never mistake a new concept for the old one.
#[derive(Debug, Clone)]
struct ConceptNode {
    concept: Arc<Concept>,
    digest: Digest,
}

impl ConceptNode {
    fn new(c: &Arc<Concept>) -> ConceptNode {
        ConceptNode {
            concept: Arc::clone(c),
            digest: concept_digest(c),
        }
    }

    /// Whether `c` (of the same bundle) has the compiled form this leaf was hashed from:
    /// the same `Arc` (a concept a commit did not touch), or equal hashed fields (a concept
    /// rebuilt with the same content, or changed only in what is not hashed, such as its
    /// diagnostics).
    fn same_as(&self, c: &Arc<Concept>) -> bool {
        let o = &*self.concept;
        Arc::ptr_eq(&self.concept, c)
            || (o.id == c.id
                && o.path == c.path
                && o.links == c.links
                && (Arc::ptr_eq(&o.parsed, &c.parsed) || *o.parsed == *c.parsed)
                && o.text == c.text)
    }
}

#[derive(Debug, Clone)]
struct BundleNode {
    name: String,
    // Invariant: in id order, as the model holds them.
    concepts: Vec<ConceptNode>,
    digest: Digest,
}

/// The digest tree of one read model. Build it once with [`SnapshotTree::build`], then
/// derive the next model's tree with [`SnapshotTree::update`].
#[derive(Debug, Clone)]
pub struct SnapshotTree {
    // Invariant: sorted by name, every bundle of the model, navigation-only ones included.
    bundles: Vec<BundleNode>,
    root: Digest,
}

impl PartialEq for SnapshotTree {
    /// Trees are equal when every digest and name is.
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
            && self.bundles.len() == other.bundles.len()
            && self.bundles.iter().zip(&other.bundles).all(|(a, b)| {
                a.name == b.name
                    && a.digest == b.digest
                    && a.concepts.len() == b.concepts.len()
                    && a.concepts
                        .iter()
                        .zip(&b.concepts)
                        .all(|(x, y)| x.concept.id == y.concept.id && x.digest == y.digest)
            })
    }
}

impl Eq for SnapshotTree {}

impl SnapshotTree {
    /// Hashes every concept of `model`.
    pub fn build(model: &Model) -> SnapshotTree {
        let bundles = model
            .bundles
            .iter()
            .map(|name| {
                let concepts = concept_nodes(model.bundle_concepts(name));
                let digest = bundle_digest(name, &concepts);
                BundleNode {
                    name: name.clone(),
                    concepts,
                    digest,
                }
            })
            .collect::<Vec<_>>();
        let root = root_digest(&bundles);
        SnapshotTree { bundles, root }
    }

    /// The tree of `model`, reusing this tree's digests for every concept whose id, path,
    /// links, text and parsed form are unchanged (the `Arc`s compared by pointer first), and
    /// for every bundle whose concept digests are unchanged. Equal to
    /// [`SnapshotTree::build`]`(model)`.
    pub fn update(&self, model: &Model) -> SnapshotTree {
        let mut old_bundles = self.bundles.iter().peekable();
        let mut bundles = Vec::with_capacity(model.bundles.len());
        for name in &model.bundles {
            while old_bundles.peek().is_some_and(|b| b.name < *name) {
                old_bundles.next();
            }
            let old = old_bundles.peek().filter(|b| b.name == *name).copied();
            let fresh = model.bundle_concepts(name);
            let Some(old) = old else {
                let concepts = concept_nodes(fresh);
                let digest = bundle_digest(name, &concepts);
                bundles.push(BundleNode {
                    name: name.clone(),
                    concepts,
                    digest,
                });
                continue;
            };
            // Both runs are in id order: walk them together.
            let mut olds = old.concepts.iter().peekable();
            let concepts: Vec<ConceptNode> = fresh
                .iter()
                .map(|c| {
                    // The common case, an untouched concept, costs one pointer comparison.
                    if let Some(o) = olds.next_if(|o| Arc::ptr_eq(&o.concept, c)) {
                        return o.clone();
                    }
                    while olds.peek().is_some_and(|o| o.concept.id < c.id) {
                        olds.next();
                    }
                    match olds.next_if(|o| o.same_as(c)) {
                        Some(o) => ConceptNode {
                            concept: Arc::clone(c),
                            digest: o.digest,
                        },
                        None => ConceptNode::new(c),
                    }
                })
                .collect();
            let unchanged = concepts.len() == old.concepts.len()
                && concepts
                    .iter()
                    .zip(&old.concepts)
                    .all(|(a, b)| a.digest == b.digest);
            let digest = if unchanged {
                old.digest
            } else {
                bundle_digest(name, &concepts)
            };
            bundles.push(BundleNode {
                name: name.clone(),
                concepts,
                digest,
            });
        }
        let root = root_digest(&bundles);
        SnapshotTree { bundles, root }
    }

    /// The tree of `model` from its concepts' digests in model order (as [`leaves`] gives
    /// them), for a model decoded from a derived record: only the bundle digests and the
    /// root are computed. `None` when the counts differ.
    ///
    /// [`leaves`]: SnapshotTree::leaves
    pub(crate) fn from_leaves(model: &Model, leaves: &[Digest]) -> Option<SnapshotTree> {
        if leaves.len() != model.concepts().len() {
            return None;
        }
        let mut next = 0;
        let mut bundles = Vec::with_capacity(model.bundles.len());
        for name in &model.bundles {
            let run = model.bundle_concepts(name);
            let digests = leaves.get(next..next + run.len())?;
            let concepts: Vec<ConceptNode> = run
                .iter()
                .zip(digests)
                .map(|(c, d)| ConceptNode {
                    concept: Arc::clone(c),
                    digest: *d,
                })
                .collect();
            next += run.len();
            let digest = bundle_digest(name, &concepts);
            bundles.push(BundleNode {
                name: name.clone(),
                concepts,
                digest,
            });
        }
        if next != leaves.len() {
            return None;
        }
        let root = root_digest(&bundles);
        Some(SnapshotTree { bundles, root })
    }

    /// Every concept's digest, in model order (bundle, then id).
    pub(crate) fn leaves(&self) -> impl Iterator<Item = &Digest> {
        self.bundles
            .iter()
            .flat_map(|b| b.concepts.iter().map(|c| &c.digest))
    }

    /// The root digest.
    pub fn root(&self) -> Digest {
        self.root
    }

    /// The snapshot id: the root as 64 lowercase hex characters.
    pub fn id(&self) -> String {
        hex(&self.root)
    }

    /// The number of concepts.
    pub fn concepts(&self) -> usize {
        self.bundles.iter().map(|b| b.concepts.len()).sum()
    }

    /// The digest of one bundle, if the model has it.
    pub fn bundle_digest(&self, name: &str) -> Option<Digest> {
        self.bundles
            .iter()
            .find(|b| b.name == name)
            .map(|b| b.digest)
    }

    /// The library's `snapshot()` answer.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            snapshot: self.id(),
            concepts: self.concepts(),
        }
    }
}

/// The library's `snapshot()` answer for `model`, built from scratch.
pub fn snapshot(model: &Model) -> Snapshot {
    SnapshotTree::build(model).snapshot()
}

/// The snapshot id of `model`, built from scratch.
pub fn snapshot_id(model: &Model) -> String {
    SnapshotTree::build(model).id()
}

#[cfg(test)]
mod tests;
