//! Readying a state decoded from a derived record for commits, ahead of the first one.
//!
//! A connection that opened from a derived record (engine.md §9.1 rule 4) serves reads at
//! once but has no incremental linker yet: its first commit checks every served text and
//! builds the linker from the decoded parses ("the first edit after opening",
//! docs/benchmarks.md). `warm` does that work when the host chooses (a page's worker when it
//! is idle after opening), so the first commit costs what every later one does. The search
//! index needs nothing: its posting lists stay encoded until read, through updates too
//! (docs/search.md §10, "Updates").
//!
//! A host with threads does the work in two parts (docs/connection.md, rule 7): it prepares
//! it over the published state outside the engine ([`PreparedWarm::new`]), while reads keep
//! refreshing and commits keep running, then installs the result in one short exclusive op
//! ([`Engine::warm_prepared_op`]), only while that state is still the served one.

use super::step::{Op, Progress};
use super::{Engine, Served};
use crate::compile::Linker;
use std::sync::Arc;

/// `warm`'s work over one served state, done outside the engine: the texts checked (kept
/// in the state itself) and, for a state decoded from a derived record, the linker built.
/// [`Engine::warm_prepared_op`] installs it.
pub struct PreparedWarm {
    served: Arc<Served>,
    /// The linker, for a state decoded from a derived record.
    linker: Option<Linker>,
    /// Whether the texts needed the work.
    did: bool,
    /// A served text failed its check (kept in the state; the next read or commit reports it).
    failed: bool,
}

impl PreparedWarm {
    /// Does `warm`'s work over `served` (see [`Engine::warm`]), touching no engine; the
    /// linker only when `linker` (the engine has none yet, [`Engine::linker_ready`]).
    pub fn new(served: &Arc<Served>, linker: bool) -> PreparedWarm {
        let texts = served.unchecked_texts();
        let failed = texts && served.check_all_texts().is_err();
        let linker = (linker && !failed && served.from_derived())
            .then(|| super::linker_of(served).ok())
            .flatten()
            .map(|mut linker| {
                linker.index_dependencies();
                linker
            });
        PreparedWarm {
            served: served.clone(),
            linker,
            did: texts,
            failed,
        }
    }
}

impl Engine {
    /// Checks the served texts and builds the incremental linker as the first commit after
    /// a derived-record open would (see `advance`), with its dependency indexes. Returns
    /// whether it did anything: false when both are ready already, or when a served text
    /// fails its check (that failure is kept, and the next read or commit reports it as it
    /// would have).
    pub fn warm(&mut self) -> bool {
        let served = self.served.clone();
        // The texts are checked even when the linker is ready (an open from an older
        // derived record applied the commits since with it): until every text is, each
        // read checks those it returns, one lookup apiece (docs/http.md §7).
        let texts = served.unchecked_texts();
        if texts && served.check_all_texts().is_err() {
            return false;
        }
        if self.linker_ready {
            return texts;
        }
        let Ok(mut linker) = super::linker_of(&served) else {
            return false;
        };
        // A host that stays open keeps committing: its linker keeps the dependency indexes
        // (a one-shot command's first commit leaves them out, crate::compile::Linker).
        linker.index_dependencies();
        self.linker = linker;
        self.linker_ready = true;
        true
    }

    /// `warm` as an engine op, for the connection policy (`connection::warm`): it touches no
    /// store and answers whether there was anything to do.
    pub fn warm_op(&self) -> Op<bool> {
        Op::new(|eng, _ctx| Ok(Progress::Done(eng.warm())))
    }

    /// Installs `prepared` (the engine op of `connection::warm_prepared`): `Some` of whether
    /// there was anything to do when its state is still the served one, `None` when a
    /// commit or a refresh replaced that state meanwhile (it readied what it needs). It
    /// touches no store and never does the work itself.
    pub fn warm_prepared_op(&self, prepared: Option<PreparedWarm>) -> Op<Option<bool>> {
        let mut prepared = prepared;
        Op::new(move |eng, _ctx| {
            let r = prepared.take().and_then(|p| eng.install_warm(p));
            Ok(Progress::Done(r))
        })
    }

    fn install_warm(&mut self, p: PreparedWarm) -> Option<bool> {
        if !Arc::ptr_eq(&p.served, &self.served) {
            return None;
        }
        if p.failed {
            return Some(false);
        }
        if self.linker_ready {
            return Some(p.did);
        }
        let linker = p.linker?;
        self.linker = linker;
        self.linker_ready = true;
        Some(true)
    }
}

#[cfg(test)]
mod tests;
