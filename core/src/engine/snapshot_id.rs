//! A placeholder snapshot id until the digest tree of docs/format.md lands (branch `read`).
//!
//! It has the shape engine.md §2.2 asks for: a digest per compiled concept, one per bundle
//! over its name and its concepts' digests in id order, and a root over the sorted bundles.
//! The per-document part (everything `parse_document` yields that reads can return) is
//! hashed once per parse and cached with the parse.

use super::store::Digest;
use crate::compile::{Concept, Model, ParsedDoc};
use sha2::{Digest as _, Sha256};

fn field(h: &mut Sha256, s: &str) {
    h.update((s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

fn finish(h: Sha256) -> Digest {
    let mut d = [0u8; 32];
    d.copy_from_slice(&h.finalize());
    Digest(d)
}

/// The digest of one document's own compiled form: cells, title, `stale_after`, sections
/// and body.
pub(crate) fn parsed_digest(parsed: &ParsedDoc, text: &str) -> Digest {
    let mut h = Sha256::new();
    field(&mut h, "langonrock placeholder concept v1");
    for s in [&parsed.kind, &parsed.status, &parsed.grain, &parsed.summary] {
        field(&mut h, s);
    }
    field(&mut h, parsed.title.as_deref().unwrap_or("\u{0}"));
    field(&mut h, parsed.stale_after.as_deref().unwrap_or("\u{0}"));
    h.update((parsed.sections.len() as u64).to_le_bytes());
    for s in &parsed.sections {
        field(&mut h, &s.name);
        h.update((s.start as u64).to_le_bytes());
        h.update((s.end as u64).to_le_bytes());
    }
    field(&mut h, &text[parsed.body_start..]);
    finish(h)
}

fn concept_digest(c: &Concept, own: &Digest) -> Digest {
    let mut h = Sha256::new();
    field(&mut h, &c.id);
    field(&mut h, &c.bundle);
    h.update((c.links.len() as u64).to_le_bytes());
    for l in &c.links {
        field(&mut h, l);
    }
    h.update(own.0);
    finish(h)
}

/// The snapshot id of `model`; `own(concept)` gives the cached [`parsed_digest`].
pub(crate) fn snapshot_id(model: &Model, own: impl Fn(&Concept) -> Digest) -> Digest {
    let mut root = Sha256::new();
    field(&mut root, "langonrock placeholder snapshot v1");
    for b in &model.bundles {
        let mut bh = Sha256::new();
        field(&mut bh, b);
        for c in model.bundle_concepts(b) {
            bh.update(concept_digest(c, &own(c)).0);
        }
        field(&mut root, b);
        root.update(finish(bh).0);
    }
    finish(root)
}
