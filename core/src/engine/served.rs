//! The served state: one revision's compiled model, snapshot tree, sources and search
//! index, immutable once published (read.md §7), with the checks of texts that came from a
//! derived record (engine.md §9.1 rules 1 and 4).

use super::results::{SourceContent, SourceEntry};
use super::state::{Doc, TenantState};
use super::store::{Digest, Key};
use super::{derived, derived_key};
use crate::compile::{Concept, Model};
use crate::error::{Error, Result};
use crate::snapshot::SnapshotTree;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The state reads are served from: one revision's compiled model, snapshot id and sources.
/// It is immutable and swapped whole when a commit is published, so a read that holds it
/// sees one revision from start to end (read.md §7).
#[derive(Debug)]
pub struct Served {
    pub(super) model: Model,
    pub(super) tree: SnapshotTree,
    pub(super) revision: Option<Digest>,
    /// The snapshot id the revision record holds (the key of its derived record); it can
    /// differ from the served one when the revision was committed by another compiler.
    pub(super) recorded: Option<Digest>,
    pub(super) state: TenantState,
    /// Whether this state was decoded from a derived record.
    from_derived: bool,
    /// When some texts came from a derived record, or from the store unchecked: which of
    /// them were checked against their source hashes so far. Every read checks the texts it
    /// returns, or computes from, first (`None`: all texts were compiled from verified
    /// sources, or checked). A state a commit or a refresh makes from this one keeps what
    /// was checked.
    texts: Option<TextCheck>,
    // The search index of `model`: still encoded when the state came from a derived
    // record, built on the first search otherwise, and carried over, updated
    // incrementally, when a newer state is published (search.md §8). Searches share it
    // under the read lock once it is built for their date; building, decoding, re-dating
    // and handing it to a newer state take the write lock.
    index: std::sync::RwLock<IndexSlot>,
    /// How many searches are running on this state right now (inside `with_index`). A
    /// newer state takes this one's index when none is, and copies it otherwise.
    searching: std::sync::atomic::AtomicUsize,
    /// Set when a newer state took this one's index (moved, not copied): a search that
    /// starts here afterwards copies the newer state's index and updates it back to this
    /// model instead of building one (docs/search.md §8 rule 4).
    moved_to: std::sync::OnceLock<std::sync::Weak<Served>>,
}

#[cfg(test)]
thread_local! {
    /// Whole index builds on this thread (`Index::build` from a served state), for tests.
    static BUILDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many whole search indexes served states built on this thread so far (tests only).
#[cfg(test)]
pub(crate) fn builds_on_this_thread() -> usize {
    BUILDS.with(|b| b.get())
}

/// A whole index build from a served state (counted for the tests).
fn build_index(model: &Model, today: &str) -> crate::search::Index {
    #[cfg(test)]
    BUILDS.with(|b| b.set(b.get() + 1));
    crate::search::Index::build(model, today)
}

/// The texts of a state decoded from a derived record, checked on first use.
#[derive(Debug)]
struct TextCheck {
    /// What the states derived from one decoded record share.
    shared: Arc<SharedCheck>,
    /// Set once every text of this state was checked.
    all: std::sync::atomic::AtomicBool,
}

#[derive(Debug)]
struct SharedCheck {
    /// The derived record the unchecked texts came from.
    key: Key,
    /// Whether they are the store's source records (handed out in place) rather than texts
    /// the record carried.
    external: bool,
    /// The source hashes whose texts were checked (or came from a checked source).
    checked: std::sync::Mutex<HashSet<Digest>>,
    /// Set when a text the record carried did not match: the engine reloads by compiling.
    poisoned: std::sync::atomic::AtomicBool,
}

impl TextCheck {
    fn poison(&self, hash: Digest) -> Error {
        let s = &self.shared;
        if s.external {
            // The store's own source record is bad: compiling would read the same bytes.
            return Error::corrupt(format!("source/{hash} does not match its digest"));
        }
        s.poisoned.store(true, std::sync::atomic::Ordering::Relaxed);
        Error::corrupt(format!("{} does not match source/{hash}", s.key))
    }

    /// The record's search index had a posting list that failed its check as it was read
    /// (`Index::damaged`): the record is not served again either.
    fn poison_index(&self) -> Error {
        let s = &self.shared;
        s.poisoned.store(true, std::sync::atomic::Ordering::Relaxed);
        Error::corrupt(format!(
            "{} holds a search index that does not decode",
            s.key
        ))
    }

    fn checked(&self) -> std::sync::MutexGuard<'_, HashSet<Digest>> {
        self.shared
            .checked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

/// How many documents [`Served::check_all_texts`] hashes between two looks at the set of
/// checked texts (about 150 KB of text at the reference corpus's sizes).
pub(super) const CHECK_BATCH: usize = 64;

/// Where a served state's search index stands.
#[derive(Debug)]
pub(super) enum IndexSlot {
    None,
    /// The bytes of [`crate::search::Index::encode`], from a derived record (its section as
    /// stored: decompressed when decoded).
    Encoded(derived::Packed),
    Built(Box<crate::search::Index>),
    /// The encoded index of an older model (`base`, the state a derived record was decoded
    /// into), not decoded yet: decoded and updated to this state's model when a search or
    /// a derived record first needs it. A commit or refresh after a derived open then costs
    /// no index work, so a one-shot writer never decodes the index (docs/search.md §8).
    Behind {
        bytes: derived::Packed,
        base: Model,
    },
}

impl IndexSlot {
    /// The encoded index this slot holds or can encode as it is (`None` for no index, one
    /// still behind its model, or a section that fails to decompress).
    fn encoded(&self) -> Option<crate::bytes::Bytes> {
        match self {
            IndexSlot::Encoded(b) => b.unpack(),
            // An index with a list that failed its check is not written anywhere.
            IndexSlot::Built(ix) => Some(ix.encode()).filter(|_| !ix.damaged()).map(Into::into),
            IndexSlot::None | IndexSlot::Behind { .. } => None,
        }
    }

    /// The index of `model` if there is one, decoding it when still encoded (its posting
    /// lists are read when first used: `Index::decode_shared`). Bytes that do not decode to
    /// an index of `model`'s size give none (it is built instead).
    fn take_built(&mut self, model: &Model) -> Option<crate::search::Index> {
        match std::mem::replace(self, IndexSlot::None) {
            IndexSlot::None => None,
            IndexSlot::Built(ix) => Some(*ix),
            IndexSlot::Encoded(b) => crate::search::Index::decode_shared(b.unpack()?)
                .ok()
                .filter(|ix| ix.len() == model.concepts().len()),
            IndexSlot::Behind { bytes, base } => {
                crate::search::Index::decode_shared(bytes.unpack()?)
                    .ok()
                    .filter(|ix| ix.len() == base.concepts().len())
                    .map(|mut ix| {
                        let today = ix.today().to_string();
                        ix.update(&base, model, &today);
                        ix
                    })
            }
        }
    }

    /// What a newer state keeps of this slot without decoding it: the encoded bytes and
    /// the model they index, when the index is still encoded (`model` is this slot's).
    fn behind(&self, model: &Model) -> Option<IndexSlot> {
        match self {
            IndexSlot::Encoded(b) => Some(IndexSlot::Behind {
                bytes: b.clone(),
                base: model.clone(),
            }),
            IndexSlot::Behind { bytes, base } => Some(IndexSlot::Behind {
                bytes: bytes.clone(),
                base: base.clone(),
            }),
            IndexSlot::None | IndexSlot::Built(_) => None,
        }
    }
}

impl Served {
    pub(super) fn empty() -> Served {
        let model = Model::default();
        Served {
            tree: SnapshotTree::build(&model),
            model,
            revision: None,
            recorded: None,
            state: TenantState::default(),
            from_derived: false,
            texts: None,
            searching: std::sync::atomic::AtomicUsize::new(0),
            moved_to: std::sync::OnceLock::new(),
            index: std::sync::RwLock::new(IndexSlot::None),
        }
    }

    /// Builds a served state around a model (the index comes later). `recorded` is the
    /// snapshot id of the revision record.
    pub(crate) fn new(
        model: Model,
        tree: SnapshotTree,
        revision: Option<Digest>,
        recorded: Option<Digest>,
        state: TenantState,
    ) -> Served {
        Served {
            model,
            tree,
            revision,
            recorded,
            state,
            from_derived: false,
            texts: None,
            searching: std::sync::atomic::AtomicUsize::new(0),
            moved_to: std::sync::OnceLock::new(),
            index: std::sync::RwLock::new(IndexSlot::None),
        }
    }

    pub(super) fn from_decoded(d: derived::Decoded, revision: Digest, recorded: Digest) -> Served {
        Served {
            model: d.model,
            tree: d.tree,
            revision: Some(revision),
            recorded: Some(recorded),
            state: d.state,
            from_derived: true,
            texts: Some(TextCheck {
                shared: Arc::new(SharedCheck {
                    key: derived_key(&recorded),
                    external: d.external,
                    checked: std::sync::Mutex::new(HashSet::new()),
                    poisoned: std::sync::atomic::AtomicBool::new(false),
                }),
                all: std::sync::atomic::AtomicBool::new(false),
            }),
            searching: std::sync::atomic::AtomicUsize::new(0),
            moved_to: std::sync::OnceLock::new(),
            index: std::sync::RwLock::new(match (d.built, d.index) {
                (Some(ix), _) => IndexSlot::Built(ix),
                (None, Some(b)) => IndexSlot::Encoded(b),
                (None, None) => IndexSlot::None,
            }),
        }
    }

    /// Checks the texts of `concepts` against their source hashes, when they came from a
    /// derived record and were not checked yet. A mismatch fails closed (`CORRUPT`, naming
    /// the derived record) and makes the engine reload by compiling.
    fn check_texts<'a>(&self, concepts: impl IntoIterator<Item = &'a Concept>) -> Result<()> {
        let Some(tc) = self
            .texts
            .as_ref()
            .filter(|t| !t.all.load(std::sync::atomic::Ordering::Acquire))
        else {
            return Ok(());
        };
        let mut checked = tc.checked();
        for c in concepts {
            let Some(d) = self.state.doc(&c.bundle, &c.path) else {
                continue;
            };
            if checked.contains(&d.hash) {
                continue;
            }
            if Digest::of(c.text.as_bytes()) != d.hash {
                return Err(tc.poison(d.hash));
            }
            checked.insert(d.hash);
        }
        Ok(())
    }

    /// Checks every text (before work that reads them all).
    pub(super) fn check_all_texts(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        let Some(tc) = self
            .texts
            .as_ref()
            .filter(|t| !t.all.load(Ordering::Acquire))
        else {
            return Ok(());
        };
        // A few documents at a time, hashed with the set unlocked: a read or a commit that
        // checks the texts it needs (`check_texts`, `check_text`) waits for one batch at
        // most, not for the whole pass (at 20,000 concepts the pass hashes 45 MB; an edit
        // that met it under one lock took 46-67 ms instead of 4-5, docs/benchmarks.md). A
        // text both check at once is hashed twice, and either way it is checked.
        let docs: Vec<&Doc> = self
            .state
            .bundles
            .values()
            .flat_map(|b| b.docs.values())
            .collect();
        for batch in docs.chunks(CHECK_BATCH) {
            let todo: Vec<&Doc> = {
                let checked = tc.checked();
                batch
                    .iter()
                    .filter(|d| !checked.contains(&d.hash))
                    .copied()
                    .collect()
            };
            for d in &todo {
                if Digest::of(d.text.as_bytes()) != d.hash {
                    return Err(tc.poison(d.hash));
                }
            }
            tc.checked().extend(todo.iter().map(|d| d.hash));
        }
        tc.all.store(true, Ordering::Release);
        Ok(())
    }

    /// Whether a text decoded from a derived record failed its check against its source
    /// hash, or a posting list of its search index failed its check as it was read. The
    /// engine then compiles the state on its next operation, and a read that
    /// failed for it should run again on the new state (a bad derived record must never
    /// fail a read).
    pub fn derived_failed(&self) -> bool {
        self.poisoned()
    }

    pub(super) fn poisoned(&self) -> bool {
        self.texts
            .as_ref()
            .is_some_and(|t| t.shared.poisoned.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Whether some texts of this state may not be checked yet.
    pub(super) fn unchecked_texts(&self) -> bool {
        self.texts
            .as_ref()
            .is_some_and(|t| !t.all.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Whether the unchecked texts are the store's source records, handed out in place.
    pub(super) fn external_texts(&self) -> bool {
        self.texts.as_ref().is_some_and(|t| t.shared.external)
    }

    /// Carries what `older` knows about unchecked texts into this state (a commit's or a
    /// refresh's successor of it): texts it shares with `older` stay checked on first use;
    /// `fresh` are the source hashes of texts that came verified (written by the commit, or
    /// read and verified by the refresh).
    pub(super) fn carry_checks(&mut self, older: &Served, fresh: impl Iterator<Item = Digest>) {
        let Some(tc) = older.texts.as_ref().filter(|_| older.unchecked_texts()) else {
            return;
        };
        tc.checked().extend(fresh);
        self.texts = Some(TextCheck {
            shared: tc.shared.clone(),
            all: std::sync::atomic::AtomicBool::new(false),
        });
    }

    /// Checks one document's text against its source hash, when it is unchecked: `Ok` when
    /// it matches (or needs no check).
    pub(super) fn check_text(&self, hash: Digest, text: &crate::bytes::Text) -> Result<()> {
        let Some(tc) = self.texts.as_ref().filter(|_| self.unchecked_texts()) else {
            return Ok(());
        };
        let mut checked = tc.checked();
        if !checked.contains(&hash) {
            if Digest::of(text.as_bytes()) != hash {
                return Err(tc.poison(hash));
            }
            checked.insert(hash);
        }
        Ok(())
    }

    /// `get` (read.md §3) over this state: [`crate::read::get`], after the texts it returns
    /// are checked (a state decoded from a derived record checks them on first use).
    pub fn get<'a, S: AsRef<str>>(
        &'a self,
        ids: &[S],
        opts: &crate::read::GetOptions,
    ) -> Result<crate::read::GetResult<'a>> {
        self.check_texts(
            ids.iter()
                .filter_map(|id| self.model.concept(&crate::validate::nfc(id.as_ref()))),
        )?;
        Ok(crate::read::get(&self.model, ids, opts))
    }

    pub(super) fn index_slot(&self) -> std::sync::RwLockWriteGuard<'_, IndexSlot> {
        self.index.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives this state the search index of `older`, updated to this model, when `older`
    /// has one. Called when this state is published.
    ///
    /// `older` was the published state until now, so reads that picked it up a moment ago
    /// may still search it. When one is searching, or holds `older` to search it (more
    /// holders than the engine and its host's published slot, [`INDEX_HOLDERS`]), `older`
    /// keeps its index and this state gets a copy, made here on the committing thread:
    /// taking the index from under them made each such search build a whole index while
    /// holding `older`'s slot, and every search queued behind it waited (docs/http.md §7:
    /// reads never wait for a commit). When none is, the index is moved, as a copy costs
    /// about 30 ms at 20,000 concepts on every commit (docs/search.md §8 rule 4), and a
    /// search that still starts on `older` copies this state's index back instead of
    /// building one.
    ///
    /// An index `older` still holds encoded stays so: this state keeps the bytes and the
    /// model they index, and the update waits for the first search (`IndexSlot::Behind`).
    pub(crate) fn inherit_index(self: &Arc<Served>, older: &Arc<Served>) {
        use std::sync::atomic::Ordering;
        let behind = older
            .index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .behind(&older.model);
        if let Some(slot) = behind {
            *self.index_slot() = slot;
            return;
        }
        let copy = |slot: &IndexSlot| match slot {
            IndexSlot::Built(ix) => Some((**ix).clone()),
            // Still encoded: handled above (a search may have decoded it since).
            IndexSlot::None | IndexSlot::Encoded(_) | IndexSlot::Behind { .. } => None,
        };
        let wanted = |older: &Arc<Served>| {
            older.searching.load(Ordering::SeqCst) > 0 || Arc::strong_count(older) > INDEX_HOLDERS
        };
        // This state's slot is locked before the index leaves `older`'s and until it is
        // in place (always in that order: older, then newer), so a search that starts on
        // `older` just after the move finds it here, waiting for the update at most.
        let (mut mine, copied) = if wanted(older) {
            // Beside the running searches, under the shared lock.
            let slot = older.index.read().unwrap_or_else(|p| p.into_inner());
            (self.index_slot(), copy(&slot))
        } else {
            let mut slot = older.index_slot();
            let mine = self.index_slot();
            // A search counted now waits for this lock: it keeps the index too.
            if wanted(older) {
                (mine, copy(&slot))
            } else {
                let taken = slot.take_built(&older.model);
                if taken.is_some() {
                    let _ = older.moved_to.set(Arc::downgrade(self));
                }
                (mine, taken)
            }
        };
        if let Some(mut index) = copied {
            let today = index.today().to_string();
            index.update(&older.model, &self.model, &today);
            *mine = IndexSlot::Built(Box::new(index));
        }
    }

    /// For a search that starts on this state after a newer one took its index
    /// ([`Served::inherit_index`]): a copy of the nearest newer state's index, updated
    /// back to this model (the texts that update reads are checked first). `None` when
    /// the index was not moved, or every newer state that held it is gone.
    fn index_from_newer(&self) -> Option<Result<crate::search::Index>> {
        let mut next = self.moved_to.get()?.upgrade()?;
        loop {
            let copied = match &*next.index.read().unwrap_or_else(|p| p.into_inner()) {
                IndexSlot::Built(ix) => Some((**ix).clone()),
                _ => None,
            };
            if let Some(mut index) = copied {
                let changed = self.model.concepts().iter().filter(|c| {
                    next.model
                        .concept(&c.id)
                        .is_none_or(|n| !std::ptr::eq(n, &***c))
                });
                if let Err(e) = self.check_texts(changed.map(|c| &**c)) {
                    return Some(Err(e));
                }
                let today = index.today().to_string();
                index.update(&next.model, &self.model, &today);
                return Some(Ok(index));
            }
            next = next.moved_to.get()?.upgrade()?;
        }
    }

    /// Whether this state was decoded from a derived record rather than compiled.
    pub fn from_derived(&self) -> bool {
        self.from_derived
    }

    /// Whether `warm` would do work a later read or commit would otherwise do: this state
    /// was decoded from a derived record (no incremental linker yet), or some of its texts
    /// are still unchecked (an open from an older record with the commits since applied).
    /// A host with idle time warms such a state (docs/mcp.md "Start-up time",
    /// docs/http.md §7).
    pub fn warm_pays(&self) -> bool {
        self.from_derived || self.unchecked_texts()
    }

    /// The derived record of this state (engine.md §9.1 rule 4): its key and bytes, with
    /// the search index (built for `today` when this state has none yet; an index already
    /// built keeps its own date, and a search re-dates it), and the documents' texts when
    /// `texts` (for a store that cannot hand its source records out in place; the files
    /// stores can, docs/records.md). `None` for an empty tenant.
    pub fn derived_record(&self, today: &str, texts: bool) -> Option<(Key, Vec<u8>)> {
        let recorded = self.recorded?;
        // An index built (or still encoded) is encoded under the shared lock, beside the
        // searches: the exclusive lock made every search wait for the encoding.
        let shared = self
            .index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .encoded();
        let index: crate::bytes::Bytes = match shared {
            Some(bytes) => bytes,
            None => {
                let mut slot = self.index_slot();
                if matches!(&*slot, IndexSlot::Behind { .. }) {
                    if let Some(ix) = slot.take_built(&self.model) {
                        *slot = IndexSlot::Built(Box::new(ix));
                    }
                }
                match slot.encoded() {
                    Some(bytes) => bytes,
                    None => {
                        let ix = match self.index_from_newer() {
                            Some(r) => r.ok()?,
                            None => {
                                self.check_all_texts().ok()?;
                                build_index(&self.model, today)
                            }
                        };
                        let bytes: crate::bytes::Bytes = ix.encode().into();
                        *slot = IndexSlot::Built(Box::new(ix));
                        bytes
                    }
                }
            }
        };
        let bytes = derived::encode(self, &recorded, Some(&index), texts);
        Some((derived_key(&recorded), bytes))
    }

    /// Runs a search (search.md) over this state for `today`, building or re-dating the
    /// index in place when needed.
    pub fn search(
        &self,
        tenant: &str,
        query: &str,
        opts: &crate::search::SearchOptions,
        today: &str,
    ) -> Result<String> {
        self.with_hits(query, opts, today, |model, found| {
            crate::search::render_found(model, tenant, query, &found.result, &found.concepts, today)
        })?
    }

    /// [`Served::search`] as data: the rows of the search TSV (see [`crate::rows`]).
    pub fn search_rows(
        &self,
        query: &str,
        opts: &crate::search::SearchOptions,
        today: &str,
    ) -> Result<crate::rows::SearchRows> {
        self.with_hits(query, opts, today, |model, found| {
            crate::rows::search_rows(model, query, &found.result, today)
        })
    }

    /// Ranks for `query` and hands the result to `f`, after the texts the ranking read are
    /// checked.
    fn with_hits<T>(
        &self,
        query: &str,
        opts: &crate::search::SearchOptions,
        today: &str,
        f: impl FnOnce(&Model, &crate::search::Found<'_>) -> T,
    ) -> Result<T> {
        self.with_index(today, |model, index| {
            let found = crate::search::find(model, index, query, opts, today)?;
            // The direct hits' bodies gave their `pos`.
            self.check_texts(found.direct())?;
            Ok(f(model, &found))
        })?
    }

    /// The compiled fields of one concept (see [`crate::rows::concept_info`]), after its
    /// text is checked.
    pub fn concept_info(&self, id: &str, today: &str) -> Result<Option<crate::rows::ConceptInfo>> {
        let c = self.model.concept(&crate::validate::nfc(id));
        self.check_texts(c)?;
        Ok(crate::rows::concept_info(&self.model, id, today))
    }

    /// Builds (or decodes, or re-dates) the search index for `today` ahead of the first
    /// search, for a host that can do it on another thread while it answers other requests.
    pub fn warm_index(&self, today: &str) {
        let _ = self.with_index(today, |_, _| ());
    }

    /// The error for a read that met a search index whose posting list failed its check
    /// (`Index::damaged`, an index from a derived record): what it read is not served, the
    /// record is not served again (the engine compiles, and the read runs again:
    /// [`Served::derived_failed`]), and the index is dropped by the caller.
    fn index_damaged(&self) -> Error {
        match &self.texts {
            Some(tc) => tc.poison_index(),
            None => Error::corrupt("a derived record holds a search index that does not decode"),
        }
    }

    /// Runs `f` with the model and its search index dated `today`. Fails only when a text
    /// decoded from a derived record that the index must read fails its check, or a posting
    /// list it left encoded does (docs/search.md §10, "Encoding").
    pub fn with_index<T>(
        &self,
        today: &str,
        f: impl FnOnce(&Model, &crate::search::Index) -> T,
    ) -> Result<T> {
        let _running = Running::on(&self.searching);
        // The usual case, an index built for `today`: concurrent searches read it side by
        // side under the shared lock.
        {
            let shared = self.index.read().unwrap_or_else(|p| p.into_inner());
            if let IndexSlot::Built(index) = &*shared {
                if index.today() == today {
                    let out = f(&self.model, index);
                    if !index.damaged() {
                        return Ok(out);
                    }
                    drop(shared);
                    let mut slot = self.index_slot();
                    if matches!(&*slot, IndexSlot::Built(ix) if ix.damaged()) {
                        *slot = IndexSlot::None;
                    }
                    return Err(self.index_damaged());
                }
            }
        }
        let mut guard = self.index_slot();
        let taken = match guard.take_built(&self.model) {
            Some(index) => Some(index),
            // A newer state took the index: a copy of its index, updated back.
            None => match self.index_from_newer() {
                Some(Ok(index)) => Some(index),
                Some(Err(e)) => return Err(e),
                None => None,
            },
        };
        let index = match taken {
            Some(mut index) => {
                if index.today() != today {
                    // Re-dating re-reads the concepts whose status changes with the date.
                    let was = index.today().to_string();
                    let dated: Vec<&Concept> = self
                        .model
                        .concepts()
                        .iter()
                        .filter(|c| {
                            c.parsed.stale_after.is_some()
                                && crate::manifest::status_for(c, &was)
                                    != crate::manifest::status_for(c, today)
                        })
                        .map(|c| &**c)
                        .collect();
                    if dated.is_empty() {
                        // No status changes with the date, so no posting does: the index
                        // is the new date's as it is, and lists still in a derived record's
                        // bytes stay there (docs/search.md §8 rule 6).
                        index.today = today.to_string();
                    } else {
                        if let Err(e) = self.check_texts(dated) {
                            *guard = IndexSlot::Built(Box::new(index));
                            return Err(e);
                        }
                        index.update(&self.model, &self.model, today);
                    }
                }
                index
            }
            None => {
                self.check_all_texts()?;
                build_index(&self.model, today)
            }
        };
        let out = f(&self.model, &index);
        if index.damaged() {
            return Err(self.index_damaged());
        }
        *guard = IndexSlot::Built(Box::new(index));
        Ok(out)
    }

    /// The compiled read model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The snapshot id (64 lowercase hex).
    pub fn snapshot_id(&self) -> String {
        self.tree.id()
    }

    /// The snapshot id as a digest.
    pub fn snapshot_digest(&self) -> Digest {
        Digest(self.tree.root())
    }

    /// The library's `snapshot()` answer: `{snapshot, concepts}` (read.md §5).
    pub fn snapshot(&self) -> crate::snapshot::Snapshot {
        self.tree.snapshot()
    }

    /// The digest tree of the model (for incremental updates by readers).
    pub fn snapshot_tree(&self) -> &SnapshotTree {
        &self.tree
    }

    /// The revision id, or `None` for an empty tenant.
    pub fn revision(&self) -> Option<String> {
        self.revision.map(|r| r.to_hex())
    }

    /// The revision id as a digest.
    pub fn revision_digest(&self) -> Option<Digest> {
        self.revision
    }

    /// The concept count.
    pub fn concepts(&self) -> usize {
        self.model.concepts().len()
    }

    /// Every document, navigation documents included, sorted by bundle then path
    /// (read.md §6.1).
    pub fn list_source(&self) -> Vec<SourceEntry> {
        let mut ids: HashMap<(&str, &str), &str> =
            HashMap::with_capacity(self.model.concepts().len());
        for c in self.model.concepts() {
            ids.insert((c.bundle.as_str(), c.path.as_str()), c.id.as_str());
        }
        let mut out = Vec::new();
        for (bundle, b) in &self.state.bundles {
            for (path, d) in &b.docs {
                out.push(SourceEntry {
                    bundle: bundle.clone(),
                    path: path.clone(),
                    hash: d.hash.to_hex(),
                    bytes: d.text.len(),
                    id: ids
                        .get(&(bundle.as_str(), path.as_str()))
                        .map(|s| s.to_string()),
                });
            }
        }
        out
    }

    /// One document's exact text and hash (read.md §6.2); the bundle matches ignoring case
    /// and the path is normalised to NFC.
    pub fn read_source(&self, bundle: &str, path: &str) -> Option<SourceContent> {
        let b = self.state.find_bundle(bundle)?;
        let d = self.state.doc(b, &crate::validate::nfc(path))?;
        Some(SourceContent {
            content: d.text.to_string(),
            hash: d.hash.to_hex(),
        })
    }

    /// A document's current source hash, if it exists.
    pub fn source_hash(&self, bundle: &str, path: &str) -> Option<String> {
        let b = self.state.find_bundle(bundle)?;
        self.state
            .doc(b, &crate::validate::nfc(path))
            .map(|d| d.hash.to_hex())
    }

    /// Every document as `(bundle, path, text)`, sorted by bundle then path (for export).
    pub fn documents(&self) -> impl Iterator<Item = (&str, &str, &crate::bytes::Text)> {
        self.state.bundles.iter().flat_map(|(b, s)| {
            s.docs
                .iter()
                .map(move |(p, d)| (b.as_str(), p.as_str(), &d.text))
        })
    }
}

/// How many holders of a served state are not about to search it: the engine, and its
/// host's published slot (`langonrock::Connection`). More, and a read holds it: a commit
/// copies its index rather than moving it (`Served::inherit_index`).
pub(crate) const INDEX_HOLDERS: usize = 2;

/// Counts a search as running on a state while it lives (`Served::inherit_index`).
struct Running<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Running<'a> {
    fn on(count: &'a std::sync::atomic::AtomicUsize) -> Running<'a> {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Running(count)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
