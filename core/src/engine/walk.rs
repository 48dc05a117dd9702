//! A walk down the retained revision chain that keeps its place across an op's steps.
//!
//! An op body runs again from its start after every store answer. A loop that walks the
//! chain from the head inside the body would redo every revision it already passed on each
//! run, so an op that needs `n` revisions from the store did `n²/2` revision visits (and
//! `verify`, which also re-checked each passed revision, was cubic). The op keeps a
//! [`ChainWalk`] in its captured state instead: each run resumes at the revision the last
//! one was waiting for, and the walk is linear in what it visits.

use super::records::RevisionRecord;
use super::store::Digest;
use super::{Ctx, Engine, Flowing};
use std::sync::Arc;

/// The retained chain of one head record, newest first: from the head revision down to
/// `retainedFrom` (or the first revision).
#[derive(Clone, Debug)]
pub(crate) struct ChainWalk {
    head: Digest,
    stop: Option<Digest>,
    next: Option<Digest>,
}

impl ChainWalk {
    /// A walk of the chain from `head` down to `retained_from`.
    pub(crate) fn new(head: Digest, retained_from: Option<Digest>) -> ChainWalk {
        ChainWalk {
            head,
            stop: retained_from,
            next: Some(head),
        }
    }

    /// Whether this walk is of the chain that `head` and `retained_from` name (an op whose
    /// head changed between its steps starts a new walk).
    pub(crate) fn is_of(&self, head: Digest, retained_from: Option<Digest>) -> bool {
        self.head == head && self.stop == retained_from
    }

    /// The id the walk will visit next, if any.
    pub(crate) fn peek(&self) -> Option<Digest> {
        self.next
    }

    /// The next retained revision and its record (from the engine's cache or the store), or
    /// `None` after the last one. When the record must be fetched, this returns the need and
    /// the walk stays where it is, so the op's next run asks again and gets it.
    pub(crate) fn step(
        &mut self,
        eng: &mut Engine,
        ctx: &mut Ctx,
    ) -> Flowing<Option<(Digest, Arc<RevisionRecord>)>> {
        let Some(id) = self.next else {
            return Ok(None);
        };
        let rev = eng.fetch_revision(ctx, id)?;
        self.next = if Some(id) == self.stop {
            None
        } else {
            rev.parent
        };
        Ok(Some((id, rev)))
    }

    /// Visits revisions until `found` holds for one (`true`) or the chain ends (`false`).
    pub(crate) fn find(
        &mut self,
        eng: &mut Engine,
        ctx: &mut Ctx,
        mut found: impl FnMut(Digest) -> bool,
    ) -> Flowing<bool> {
        while let Some(id) = self.peek() {
            if found(id) {
                return Ok(true);
            }
            self.step(eng, ctx)?;
        }
        Ok(false)
    }
}
