//! What a head reaches (engine.md §9.2 rule 1): the retained revisions (from the head down to
//! `retainedFrom`), their bundle records and sources, and the import baselines. The strict
//! memory stores refuse a head that reaches a record never put — the core's [`MemoryStore`]
//! and, through the wasm bindings, the package's JS memory store — with this one check, so
//! the records are decoded in one place only.
//!
//! [`MemoryStore`]: super::MemoryStore

use super::records::{BaselineRecord, BundleRecord, HeadRecord, RevisionRecord};
use super::store::{Digest, Key, Kind};
use std::collections::{HashMap, HashSet};

/// The head check of one tenant, with what earlier checks found complete. Records are
/// immutable under their keys, so that holds until one of them is removed
/// ([`HeadCheck::forget`]).
#[derive(Debug, Clone, Default)]
pub struct HeadCheck {
    /// Bundle and baseline records whose closure was found complete.
    complete: HashSet<Key>,
    /// Revisions whose closure was found complete, with their parents.
    known: HashMap<Digest, Option<Digest>>,
}

impl HeadCheck {
    /// A check that knows nothing yet.
    pub fn new() -> HeadCheck {
        HeadCheck::default()
    }

    /// Checks that every record `head` reaches was put (`get` gives a record's bytes) and
    /// decodes, and remembers what it found complete. The error is the refusal's text:
    /// `new head is not a head record`, `head references <key>, which was never put`, or a
    /// record's decoding error.
    pub fn check<B: AsRef<[u8]>>(
        &mut self,
        head: &[u8],
        mut get: impl FnMut(&Key) -> Option<B>,
    ) -> Result<(), String> {
        let mut fetch = |k: Key| -> Result<B, String> {
            get(&k).ok_or_else(|| format!("head references {k}, which was never put"))
        };
        let head = HeadRecord::decode(head)
            .map_err(|e| e.message())?
            .ok_or_else(|| "new head is not a head record".to_string())?;
        let mut complete = Vec::new();
        let mut known = Vec::new();
        let mut cur = Some(head.revision);
        while let Some(id) = cur {
            let parent = match self.known.get(&id) {
                Some(p) => *p,
                None => {
                    let rkey = Key::new(Kind::Revision, id);
                    let rev = RevisionRecord::decode(fetch(rkey)?.as_ref(), &rkey.to_string())
                        .map_err(|e| e.message())?;
                    for b in &rev.bundles {
                        let bkey = Key::new(Kind::Record, b.record);
                        if self.complete.contains(&bkey) || complete.contains(&bkey) {
                            continue;
                        }
                        let rec = BundleRecord::decode(fetch(bkey)?.as_ref(), &bkey.to_string())
                            .map_err(|e| e.message())?;
                        for (_, h) in &rec.documents {
                            fetch(Key::new(Kind::Source, *h))?;
                        }
                        complete.push(bkey);
                    }
                    known.push((id, rev.parent));
                    rev.parent
                }
            };
            if Some(id) == head.retained_from {
                break;
            }
            cur = parent;
        }
        for (_, b) in &head.baselines {
            let k = Key::new(Kind::Record, *b);
            if self.complete.contains(&k) {
                continue;
            }
            BaselineRecord::decode(fetch(k)?.as_ref(), &k.to_string()).map_err(|e| e.message())?;
            complete.push(k);
        }
        self.complete.extend(complete);
        self.known.extend(known);
        Ok(())
    }

    /// Forgets what earlier checks found (after a record was removed or changed).
    pub fn forget(&mut self) {
        self.complete.clear();
        self.known.clear();
    }
}
