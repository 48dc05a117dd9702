//! Readying a state decoded from a derived record for commits, ahead of the first one.
//!
//! A connection that opened from a derived record (engine.md §9.1 rule 4) serves reads at
//! once but has no incremental linker yet: its first commit checks every served text and
//! builds the linker from the decoded parses ("the first edit after opening",
//! docs/benchmarks.md), and its search index, whose posting lists stay encoded until read,
//! decodes all of them before its first update. `warm` does that work when the host chooses
//! (a page's worker when it is idle after opening), so the first commit costs what every
//! later one does.

use super::step::{Op, Progress};
use super::Engine;

impl Engine {
    /// Checks the served texts and builds the incremental linker as the first commit after
    /// a derived-record open would (see `advance`), with its dependency indexes, and decodes the posting
    /// lists of a search index the derived record left encoded, which the first update of
    /// the index would (`Served::materialize_index`). Returns whether it did anything:
    /// false when both are ready already, or when a served text fails its check (that
    /// failure is kept, and the next read or commit reports it as it would have).
    pub fn warm(&mut self) -> bool {
        let index = self.served.materialize_index();
        let served = self.served.clone();
        // The texts are checked even when the linker is ready (an open from an older
        // derived record applied the commits since with it): until every text is, each
        // read checks those it returns, one lookup apiece (docs/http.md §7).
        let texts = served.unchecked_texts();
        if texts && served.check_all_texts().is_err() {
            return false;
        }
        if self.linker_ready {
            return index || texts;
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
}

#[cfg(test)]
mod tests;
