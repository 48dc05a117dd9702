//! The engine (engine.md): turns requests into revisions, holds the head revision's compiled
//! state in memory, and reads and writes the store only through step machines.
//!
//! - [`store`] is the persistence contract: record keys, the [`Store`] trait, the step types
//!   and the [`run`] driver.
//! - [`Engine`] holds one tenant: the served state ([`Served`]: model, snapshot id, sources),
//!   the loaded head, and at most one commit in flight.
//! - Every operation that touches the store is an [`Op`]. Resume it with the answers to its
//!   [`Need`]s until it is done. A commit is one [`Need::Commit`] step: the host puts the
//!   records, swaps the head, and answers with the [`CommitOutcome`]; only then does the
//!   engine publish.
//! - [`MemoryStore`] is the strict reference store, with failure injection.
//!
//! An op is a function of the engine and what it has fetched so far. When it lacks a record
//! it stops with a `Need`; once the host answers, it runs again from the start with more in
//! hand, so a wasm host never awaits inside the core.
//!
//! Files: `step.rs` the step machinery ([`Op`] and what an op has fetched), `served.rs` the
//! served state ([`Served`]), this file the [`Engine`]: open, refresh, load, publish.

mod commit;
pub mod derived;
mod history;
mod maintain;
mod memory;
pub mod reach;
pub mod records;
pub mod request;
pub mod results;
mod served;
mod state;
mod step;
pub mod store;
mod walk;
mod warm;

pub use commit::{ImportRequest, NOT_RETAINED};
pub use history::{decode_cursor, encode_cursor, CURSOR_EXPIRED};
pub use maintain::{derived_key, HEAD_CHANGED};
pub use memory::{Fault, FaultPlan, FaultyStore, MemoryStore, SwapFault};
pub use request::{
    parse_history_request, parse_restore_request, parse_transaction, parse_transaction_with,
    Change, Content, GcOptions, GcRequest, HistoryRequest, Operation, RepairRequest,
    RestoreRequest, Transaction,
};
pub use results::{
    DeleteResult, DiagnosticInfo, GcResult, HistoryPage, ImportResult, Issue, OpenResult, Renamed,
    RepairResult, RevisionInfo, RevisionResult, SourceContent, SourceEntry, VerifyResult,
    WriteResult,
};
pub use store::{
    run, serve, Answer, CommitOutcome, Digest, Key, KeyInfo, Kind, Need, PreparedCommit, Step,
    Store, StoreError, SwapOutcome,
};

pub use served::Served;
pub use step::Op;
pub(crate) use step::{Ctx, Flow, Flowing, Progress};
pub use warm::PreparedWarm;

use crate::compile::{Ambiguity, Change as LinkChange, Linker, Model};
use crate::error::{Error, Result};
use crate::snapshot::SnapshotTree;
use records::{HeadRecord, RevisionRecord};
use state::{BundleState, Doc, TenantState};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The compiler and index version (engine.md §2.5), part of every derived record's key.
/// 2: a document without frontmatter has the `info` diagnostic `NO_FRONTMATTER`.
/// 3: search's per-field index (docs/search.md) and the summary source in the parse.
/// 4: frontmatter nested too deep or with aliases that expand too far is a diagnostic
/// before the YAML parser runs (compile/guard.rs, docs/limits.md).
pub const COMPILER_VERSION: u32 = 4;

/// How many revisions before the head opening looks back for a derived record to start from.
pub const DERIVED_ANCESTORS: usize = 64;

/// How many revisions past its derived record a state must be before a one-shot host (one
/// that closes right after its commit, like a CLI write) writes the head's record: the
/// record costs a pass over the whole tenant and bytes in proportion to it, so it is written
/// only when it pays (docs/records.md "Writing it").
pub const DERIVED_EVERY: u32 = 32;

/// `CONFLICT` after a stale expected revision or a lost head swap.
pub const DATABASE_CHANGED: &str = "database changed: re-read the revision and document hashes";

/// A host prepared a second commit before the first one's outcome (engine.md §8.5).
pub const IN_FLIGHT: &str = "a commit is already in flight; prepare the next one after its outcome";

/// The message for a tenant written by another format (engine.md §9.1 rule 1).
pub fn foreign_format(tenant: &str) -> Error {
    Error::Invalid(format!(
        "tenant \"{tenant}\" was written by another langonrock format: export it there and import it here"
    ))
}

#[derive(Clone, Debug)]
enum Status {
    /// Not loaded yet (or reloading after a repair).
    Closed,
    Open,
    /// Loading failed closed; reads report this error until a refresh succeeds.
    Failed(Error),
    /// A commit's outcome is indeterminate; reload before anything else.
    Reload(Digest),
}

#[derive(Clone, Debug)]
pub(crate) struct Loaded {
    bytes: Vec<u8>,
    record: HeadRecord,
}

pub(crate) struct Pending {
    head: Loaded,
    served: Option<Arc<Served>>,
    revision: Digest,
    record: Option<Arc<RevisionRecord>>,
    reload: bool,
    /// The linker changes that take it back to the served state if the commit is discarded.
    undo: Vec<LinkChange>,
}

/// One tenant's engine.
pub struct Engine {
    tenant: String,
    status: Status,
    head: Option<Loaded>,
    served: Arc<Served>,
    in_flight: Option<Pending>,
    revisions: HashMap<Digest, Arc<RevisionRecord>>,
    /// The incremental tenant pass over the served state (or, while a commit is in
    /// flight, over the pending one). Not built while `linker_ready` is false: a state
    /// decoded from a derived record builds it on its first commit.
    linker: Linker,
    linker_ready: bool,
    /// Whether the served documents' texts came from a derived record, so that their
    /// source blobs are read and verified on first use (engine.md §9.1 rule 1).
    lazy_sources: bool,
    /// Source hashes read and verified since the served state came from a derived record.
    verified: HashSet<Digest>,
    /// Whether the served state's derived record should be put (after a recompiling open
    /// and after commits) and has not been handed to the host yet.
    derived_due: bool,
    /// A derived record that disagreed with a verified source blob: never served again.
    distrusted: Option<Key>,
    /// How many revisions the served state is past the newest derived record it came from
    /// (`None`: it was compiled, or no record is near).
    derived_behind: Option<u32>,
    /// Whether a state decoded from a derived record gets its search index decoded beside
    /// the model (for a host whose first request may be a search), rather than on first use.
    index_beside: bool,
}

impl Engine {
    /// An engine for `tenant` (validated and lower-cased, compile.md §10.1). It serves
    /// nothing until [`Engine::open`] has run.
    pub fn new(tenant: &str) -> Result<Engine> {
        Ok(Engine {
            tenant: crate::validate::tenant_id(tenant)?,
            status: Status::Closed,
            head: None,
            served: Arc::new(Served::empty()),
            in_flight: None,
            revisions: HashMap::new(),
            linker: Linker::new(Ambiguity::Serve),
            linker_ready: true,
            lazy_sources: false,
            verified: HashSet::new(),
            derived_due: false,
            distrusted: None,
            derived_behind: None,
            index_beside: false,
        })
    }

    /// Decode the search index of a derived record beside its model when the tenant opens
    /// (on another core with the `parallel` feature), so that the first search finds it
    /// ready: for a host that serves searches (`mcp`, `serve`). Off by default: a one-shot
    /// command that does not search never decodes the index.
    pub fn decode_index_beside(&mut self, on: bool) {
        self.index_beside = on;
    }

    /// The tenant id.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The served state, for reads. Fails while the tenant is not open, failed closed, or
    /// must be reloaded after an indeterminate commit.
    pub fn read(&self) -> Result<Arc<Served>> {
        match &self.status {
            Status::Open => Ok(self.served.clone()),
            Status::Failed(e) => Err(e.clone()),
            Status::Reload(r) => Err(Error::IndeterminateCommit {
                revision: r.to_hex(),
            }),
            Status::Closed => Err(Error::Invalid(format!(
                "tenant \"{}\" is not open",
                self.tenant
            ))),
        }
    }

    /// The loaded head record's bytes (`None`: empty tenant or not open).
    pub fn head_bytes(&self) -> Option<&[u8]> {
        self.head.as_ref().map(|h| h.bytes.as_slice())
    }

    /// Whether a commit waits for its outcome.
    pub fn commit_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// For a host that lost a commit's outcome (its op was dropped while the commit was out):
    /// treats the commit as indeterminate, so the engine reloads before its next operation.
    /// Returns the `INDETERMINATE_COMMIT` error to report, or `None` when no commit was in
    /// flight.
    pub fn forget_commit(&mut self) -> Option<Error> {
        self.in_flight.as_ref()?;
        self.acknowledge(CommitOutcome::Indeterminate).err()
    }

    /// Whether the served state has its incremental linker (false after an open from a
    /// derived record, until the first commit or `warm`).
    pub fn linker_ready(&self) -> bool {
        self.linker_ready
    }

    /// Whether the engine must reload before its next operation.
    pub fn needs_reload(&self) -> bool {
        !matches!(self.status, Status::Open)
    }

    /// Opens the tenant: reads the head and loads its revision, failing closed on corruption.
    /// The same as [`Engine::refresh`].
    pub fn open(&self) -> Op<OpenResult> {
        self.refresh()
    }

    /// Reads the store's head and, when it moved, loads the new revision (incrementally:
    /// unchanged bundles and documents keep their compiled form).
    pub fn refresh(&self) -> Op<OpenResult> {
        Op::new(|eng, ctx| {
            let loaded = ensure_current(eng, ctx)?;
            let s = &eng.served;
            Ok(Progress::Done(OpenResult {
                revision: s.revision(),
                snapshot: s.snapshot_id(),
                concepts: s.concepts(),
                loaded,
            }))
        })
    }

    /// `listSource` (read.md §6.1), from memory.
    pub fn list_source(&self) -> Result<Vec<SourceEntry>> {
        Ok(self.read()?.list_source())
    }

    /// `readSource` (read.md §6.2). When the served state came from a derived record, the
    /// document's source blob is read and verified first (engine.md §9.1 rule 1).
    pub fn read_source(&self, bundle: &str, path: &str) -> Op<Option<SourceContent>> {
        let (bundle, path) = (bundle.to_string(), path.to_string());
        Op::new(move |eng, ctx| {
            reopen_if_closed(eng, ctx)?;
            let s = eng.read()?;
            let doc = s
                .state
                .find_bundle(&bundle)
                .and_then(|b| s.state.doc(b, &crate::validate::nfc(&path)))
                .map(|d| (d.hash, d.text.clone()));
            eng.verify_docs(ctx, doc.into_iter().collect())?;
            Ok(Progress::Done(s.read_source(&bundle, &path)))
        })
    }

    /// Reads and verifies the source blobs behind what a read is about to return from
    /// memory, when the served state came from a derived record and they were not verified
    /// yet (engine.md §9.1 rule 1): the documents of the concepts `ids` (as `get` takes
    /// them, so `get` with `source` can run next), or every document when `ids` is `None`
    /// (export). Completes at once for a compiled state. A blob that is missing or does
    /// not match its hash fails closed with `database corruption: …`.
    pub fn check_sources(&self, ids: Option<Vec<String>>) -> Op<()> {
        Op::new(move |eng, ctx| {
            reopen_if_closed(eng, ctx)?;
            if !eng.lazy_sources {
                return Ok(Progress::Done(()));
            }
            let s = eng.read()?;
            let docs: Vec<(Digest, crate::bytes::Text)> = match &ids {
                None => s
                    .state
                    .bundles
                    .values()
                    .flat_map(|b| b.docs.values())
                    .map(|d| (d.hash, d.text.clone()))
                    .collect(),
                Some(ids) => ids
                    .iter()
                    .filter_map(|id| s.model.concept(&crate::validate::nfc(id)))
                    .filter_map(|c| s.state.doc(&c.bundle, &c.path))
                    .map(|d| (d.hash, d.text.clone()))
                    .collect(),
            };
            eng.verify_docs(ctx, docs)?;
            Ok(Progress::Done(()))
        })
    }

    /// Whether the served state's derived record is due and not handed out yet (see
    /// [`Engine::take_derived`]).
    pub fn derived_due(&self) -> bool {
        self.derived_due && matches!(self.status, Status::Open) && self.in_flight.is_none()
    }

    /// Whether writing the due derived record pays for a host that is about to close (a
    /// one-shot command): the served state was compiled (no record to start from), or is
    /// [`DERIVED_EVERY`] or more revisions past the record it came from. A long-lived host
    /// writes it when idle whatever this says.
    pub fn derived_pays(&self) -> bool {
        self.derived_behind.is_none_or(|b| b >= DERIVED_EVERY)
    }

    /// The served state when its derived record is due (after a recompiling open or a
    /// commit, engine.md §9.1 rule 4), once: a writable host encodes it with
    /// [`Served::derived_record`] and puts it, when convenient (it may defer and batch, and
    /// encode off the engine's thread). A read-only host never calls this.
    pub fn take_derived(&mut self) -> Option<Arc<Served>> {
        if !self.derived_due || !matches!(self.status, Status::Open) || self.in_flight.is_some() {
            return None;
        }
        self.derived_due = false;
        self.derived_behind = Some(0);
        self.served.recorded.map(|_| self.served.clone())
    }

    /// Reads and verifies the source blobs of `docs` (hash and the text served for it) that
    /// came from a derived record and were not verified yet. A blob that verifies but
    /// differs from the served text means the derived record is wrong: it is distrusted,
    /// the engine reloads by compiling, and this read fails closed.
    pub(crate) fn verify_docs(
        &mut self,
        ctx: &mut Ctx,
        docs: Vec<(Digest, crate::bytes::Text)>,
    ) -> Flowing<()> {
        if !self.lazy_sources {
            return Ok(());
        }
        if self.served.external_texts() {
            // The texts are the store's own source records: checking one is hashing it.
            for (hash, text) in &docs {
                self.served.check_text(*hash, text)?;
            }
            return Ok(());
        }
        let mut todo: Vec<(Key, crate::bytes::Text)> = docs
            .into_iter()
            .filter(|(h, _)| !self.verified.contains(h))
            .map(|(h, t)| (Key::new(Kind::Source, h), t))
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        todo.sort_by_key(|a| a.0);
        todo.dedup_by(|a, b| a.0 == b.0);
        let keys: Vec<Key> = todo.iter().map(|t| t.0).collect();
        ctx.need(&keys)?;
        for (key, text) in &todo {
            if ctx.bytes(key) != text.as_bytes() {
                return Err(self.drop_derived(ctx));
            }
            self.verified.insert(key.digest);
        }
        Ok(())
    }

    /// The served state's derived record disagrees with a verified source: never serve it
    /// again, and make the op read the head and run again, now compiling (a bad derived
    /// record never fails an operation).
    fn drop_derived(&mut self, ctx: &mut Ctx) -> Flow {
        self.distrusted = self.served.recorded.map(|r| derived_key(&r));
        self.status = Status::Closed;
        self.head = None;
        ctx.forget_head();
        Flow::Need(Need::Head)
    }

    /// Reports a commit's outcome (engine.md §8.4). Called by [`Op::resume`]; hosts answer
    /// the op instead of calling this.
    pub(super) fn acknowledge(&mut self, outcome: CommitOutcome) -> Result<()> {
        let p = self
            .in_flight
            .take()
            .ok_or_else(|| Error::Invalid("no commit is in flight".into()))?;
        match outcome {
            CommitOutcome::Committed => {
                if let Some(r) = p.record {
                    self.revisions.insert(p.revision, r);
                }
                if p.reload {
                    self.status = Status::Closed;
                    self.head = None;
                } else {
                    self.head = Some(p.head);
                    if let Some(s) = p.served {
                        s.inherit_index(&self.served);
                        self.served = s;
                        self.derived_due = true;
                        self.derived_behind = self.derived_behind.map(|b| b.saturating_add(1));
                    }
                }
                Ok(())
            }
            CommitOutcome::Conflict => {
                self.undo(p.undo);
                Err(Error::conflict(DATABASE_CHANGED))
            }
            CommitOutcome::Failed(e) => {
                self.undo(p.undo);
                Err(e.into())
            }
            CommitOutcome::Indeterminate => {
                self.status = Status::Reload(p.revision);
                Err(Error::IndeterminateCommit {
                    revision: p.revision.to_hex(),
                })
            }
        }
    }

    /// Drops a prepared commit that will not be stored.
    pub(crate) fn discard(&mut self) {
        if let Some(p) = self.in_flight.take() {
            self.undo(p.undo);
        }
    }

    /// Takes the linker back to the served state after a discarded commit.
    fn undo(&mut self, undo: Vec<LinkChange>) {
        if undo.is_empty() {
            return;
        }
        self.linker.set_ambiguity(Ambiguity::Serve);
        if self.linker.apply(undo).is_err() {
            // Cannot happen when serving; reload to be safe.
            self.status = Status::Closed;
        }
    }

    /// Moves the linker from the served state to `state` and compiles it: the model and its
    /// snapshot tree, both derived incrementally, and the linker changes that undo it. On
    /// error (an ambiguous id under `Refuse`) nothing changes.
    pub(crate) fn advance(
        &mut self,
        state: &TenantState,
        ambiguity: Ambiguity,
    ) -> Result<(Model, SnapshotTree, crate::compile::LinkDelta)> {
        let old = self.served.clone();
        if !self.linker_ready {
            self.linker = linker_of(&old)?;
            self.linker_ready = true;
        }
        let changes = old.state.diff(state);
        self.linker.set_ambiguity(ambiguity);
        let delta = self.linker.apply(changes);
        self.linker.set_ambiguity(Ambiguity::Serve);
        let delta = delta?;
        // The snapshot leaves and the index of the concepts that changed are computed from
        // their texts: those that came unchecked (from a derived record, or from the store
        // in place) are checked first.
        if old.unchecked_texts() {
            for c in &delta.upserted {
                let Some(d) = state.doc(&c.bundle, &c.path) else {
                    continue;
                };
                if let Err(e) = old.check_text(d.hash, &c.text) {
                    self.undo(delta.undo.clone());
                    return Err(e);
                }
            }
        }
        let model = self.linker.model().clone();
        let tree = old.tree.update(&model);
        Ok((model, tree, delta))
    }

    /// A revision record, from the cache or the store.
    pub(crate) fn fetch_revision(
        &mut self,
        ctx: &mut Ctx,
        id: Digest,
    ) -> Flowing<Arc<RevisionRecord>> {
        if let Some(r) = self.revisions.get(&id) {
            return Ok(r.clone());
        }
        let key = Key::new(Kind::Revision, id);
        ctx.need(&[key])?;
        let rec = Arc::new(RevisionRecord::decode(ctx.bytes(&key), &key.to_string())?);
        self.revisions.insert(id, rec.clone());
        Ok(rec)
    }

    /// Loads the state of revision `rev`, reusing what `base` already holds.
    pub(crate) fn load_state(
        &mut self,
        ctx: &mut Ctx,
        id: Digest,
        rev: &RevisionRecord,
        base: &TenantState,
    ) -> Flowing<TenantState> {
        let mut need = Vec::new();
        for b in &rev.bundles {
            if base
                .bundles
                .get(&b.name)
                .is_none_or(|s| s.record != b.record)
            {
                need.push(Key::new(Kind::Record, b.record));
            }
        }
        ctx.need(&need)?;
        let mut lists = Vec::new();
        let mut sources = Vec::new();
        for b in &rev.bundles {
            if let Some(s) = base.bundles.get(&b.name).filter(|s| s.record == b.record) {
                lists.push((b, None, Some(s.clone())));
                continue;
            }
            let key = Key::new(Kind::Record, b.record);
            let list = records::BundleRecord::decode(ctx.bytes(&key), &key.to_string())?;
            let old = base.bundles.get(&b.name);
            let by_hash: HashMap<Digest, &Doc> = old
                .map(|s| s.docs.values().map(|d| (d.hash, d)).collect())
                .unwrap_or_default();
            for (path, hash) in &list.documents {
                let reusable = old
                    .and_then(|s| s.docs.get(path))
                    .is_some_and(|d| d.hash == *hash);
                if !reusable && !by_hash.contains_key(hash) {
                    sources.push(Key::new(Kind::Source, *hash));
                }
            }
            lists.push((b, Some(list), None));
        }
        ctx.need(&sources)?;
        if self.lazy_sources {
            self.verified.extend(sources.iter().map(|k| k.digest));
        }
        let mut state = TenantState::default();
        for (b, list, reuse) in lists {
            let bundle = match (reuse, list) {
                (Some(s), _) => s,
                (None, Some(list)) => {
                    let old = base.bundles.get(&b.name);
                    let by_hash: HashMap<Digest, &Doc> = old
                        .map(|s| s.docs.values().map(|d| (d.hash, d)).collect())
                        .unwrap_or_default();
                    let mut bs = BundleState {
                        record: b.record,
                        ..BundleState::default()
                    };
                    for (path, hash) in list.documents {
                        let doc = match old
                            .and_then(|s| s.docs.get(&path))
                            .filter(|d| d.hash == hash)
                        {
                            Some(d) => d.clone(),
                            None => {
                                let text: crate::bytes::Text = match by_hash.get(&hash) {
                                    Some(d) => d.text.clone(),
                                    None => {
                                        let key = Key::new(Kind::Source, hash);
                                        std::str::from_utf8(ctx.bytes(&key))
                                            .map_err(|_| {
                                                Error::corrupt(format!("{key} is not valid UTF-8"))
                                            })?
                                            .into()
                                    }
                                };
                                Doc::new(&path, text, Some(hash))
                            }
                        };
                        bs.docs.insert(path, doc);
                    }
                    bs.concepts = bs.docs.values().filter(|d| d.parsed.is_some()).count() as u64;
                    Arc::new(bs)
                }
                (None, None) => {
                    return Err(
                        Error::corrupt(format!("revision/{id} lost a bundle record")).into(),
                    )
                }
            };
            if bundle.concepts != b.concepts {
                return Err(Error::corrupt(format!(
                    "revision/{id} does not match its bundle records"
                ))
                .into());
            }
            state.bundles.insert(b.name.clone(), bundle);
        }
        Ok(state)
    }

    /// Starts over from the empty state, with the sources compiled (not derived).
    fn reset(&mut self) {
        self.served = Arc::new(Served::empty());
        self.linker = Linker::new(Ambiguity::Serve);
        self.linker_ready = true;
        self.lazy_sources = false;
        self.verified.clear();
    }

    /// The derived record of `rev` (engine.md §9.1 rule 4), decoded, when the store holds
    /// one that serves exactly this revision's state and passes every check. Anything else
    /// (missing, another compiler, another state, corrupt) is `None`: the caller compiles.
    fn try_derived(
        &mut self,
        ctx: &mut Ctx,
        rev: &RevisionRecord,
    ) -> Flowing<Option<derived::Decoded>> {
        let key = derived_key(&rev.snapshot);
        if self.distrusted == Some(key) || ctx.derived_tried.contains(&key) {
            return Ok(None);
        }
        if ctx.derived_open.as_ref().map(|o| o.0) != Some(key) {
            ctx.need_lenient(&[key])?;
            let opened = match ctx.check_shared(&key) {
                // The digest checked (and the index decoded, for a host that serves
                // searches) on another core while the texts are fetched and the model decodes.
                Ok(bytes) => {
                    derived::open_ahead(&bytes, &rev.snapshot, &rev.bundles, self.index_beside)
                }
                Err(_) => None,
            };
            // Its bytes are not needed any more (the opened payload is kept).
            ctx.records.remove(&key);
            match opened {
                Some(o) => {
                    ctx.derived_open = Some((key, o));
                    ctx.sources = None;
                }
                None => {
                    ctx.derived_tried.insert(key);
                    return Ok(None);
                }
            }
        }
        let hashes = match &ctx.derived_open {
            Some((_, o)) => o.sources(),
            None => return Ok(None),
        };
        if let Some(hashes) = hashes {
            // The texts are the store's source records, handed out in place and checked on
            // first use like a record's own texts.
            ctx.need_sources(&hashes)?;
        }
        // Taken, not copied: the decode frees the opened sections as it is done with them.
        let Some((_, opened)) = ctx.derived_open.take() else {
            return Ok(None);
        };
        let sources = ctx.sources.take();
        let source = |i: usize, h: &Digest| sources.as_ref()?.get(i, h);
        let decoded = if self.index_beside {
            opened.decode_indexed(&rev.bundles, &source)
        } else {
            opened.decode(&rev.bundles, &source)
        };
        ctx.derived_tried.insert(key);
        Ok(decoded)
    }

    /// The newest derived record among the revisions before `rev` (at most
    /// [`DERIVED_ANCESTORS`], none older than the retained ones), decoded: the revision's id,
    /// its record, the decoded state and how many revisions back it is. Opening then applies
    /// the difference from there (engine.md §8.1), which costs what the commits since
    /// changed, not a compile of the tenant.
    #[allow(clippy::type_complexity)]
    fn ancestor_derived(
        &mut self,
        ctx: &mut Ctx,
        rev: &RevisionRecord,
        retained_from: Option<Digest>,
    ) -> Flowing<Option<(Digest, Arc<RevisionRecord>, derived::Decoded, u32)>> {
        let mut chain: Vec<(Digest, Arc<RevisionRecord>)> = Vec::new();
        let mut cur = rev.parent;
        while let Some(id) = cur {
            if chain.len() >= DERIVED_ANCESTORS {
                break;
            }
            let r = match self.revisions.get(&id) {
                Some(r) => r.clone(),
                None => {
                    let key = Key::new(Kind::Revision, id);
                    ctx.need_lenient(&[key])?;
                    let Ok(bytes) = ctx.check(&key) else { break };
                    let Ok(r) = RevisionRecord::decode(bytes, &key.to_string()) else {
                        break;
                    };
                    let r = Arc::new(r);
                    self.revisions.insert(id, r.clone());
                    r
                }
            };
            chain.push((id, r.clone()));
            if Some(id) == retained_from {
                break;
            }
            cur = r.parent;
        }
        // Look for their records a few at a time, nearest first.
        for group in chain.chunks(8) {
            let keys: Vec<Key> = group
                .iter()
                .map(|(_, r)| derived_key(&r.snapshot))
                .filter(|k| self.distrusted != Some(*k) && !ctx.derived_tried.contains(k))
                .collect();
            if ctx.derived_open.is_none() {
                ctx.need_lenient(&keys)?;
            }
            for (i, (id, r)) in group.iter().enumerate() {
                let key = derived_key(&r.snapshot);
                let open = ctx.derived_open.as_ref().is_some_and(|o| o.0 == key);
                if !open && ctx.check(&key).is_err() {
                    ctx.records.remove(&key);
                    ctx.derived_tried.insert(key);
                    continue;
                }
                if let Some(d) = self.try_derived(ctx, r)? {
                    let back = chain.iter().position(|c| c.0 == *id).unwrap_or(i) as u32 + 1;
                    return Ok(Some((*id, r.clone(), d, back)));
                }
            }
        }
        Ok(None)
    }

    fn load(&mut self, ctx: &mut Ctx, head: Option<Vec<u8>>) -> Flowing<()> {
        let Some(bytes) = head else {
            self.reset();
            self.head = None;
            self.status = Status::Open;
            self.derived_due = false;
            return Ok(());
        };
        let record = HeadRecord::decode(&bytes)?.ok_or_else(|| foreign_format(&self.tenant))?;
        let rev = self.fetch_revision(ctx, record.revision)?;
        let mut fresh = !matches!(self.status, Status::Open) && !ctx.base_loaded;
        if fresh {
            if let Some(d) = self.try_derived(ctx, &rev)? {
                self.reset();
                self.served = Arc::new(Served::from_decoded(d, record.revision, rev.snapshot));
                self.linker_ready = false;
                self.lazy_sources = true;
                self.derived_due = false;
                self.derived_behind = Some(0);
                self.head = Some(Loaded { bytes, record });
                self.status = Status::Open;
                return Ok(());
            }
            if let Some((id, r, d, back)) =
                self.ancestor_derived(ctx, &rev, record.retained_from)?
            {
                // Serve from there once the difference is applied (below, incrementally).
                self.reset();
                self.served = Arc::new(Served::from_decoded(d, id, r.snapshot));
                self.linker_ready = false;
                self.lazy_sources = true;
                self.derived_behind = Some(back);
                ctx.base_loaded = true;
                fresh = false;
            }
        }
        if fresh {
            self.reset();
            self.derived_behind = None;
        } else if ctx.base_loaded {
            fresh = false;
        }
        let base = self.served.state.clone();
        let state = self.load_state(ctx, record.revision, &rev, &base)?;
        let (model, tree, _) = match self.advance(&state, Ambiguity::Serve) {
            // A text of the derived record did not match its source: compile instead.
            Err(_) if self.served.poisoned() => return Err(self.drop_derived(ctx)),
            r => r?,
        };
        let mut served = Served::new(
            model,
            tree,
            Some(record.revision),
            Some(rev.snapshot),
            state,
        );
        served.carry_checks(
            &self.served,
            state::new_hashes(&base, &served.state).into_iter(),
        );
        let served = Arc::new(served);
        served.inherit_index(&self.served);
        let was = self.served.revision;
        self.served = served;
        self.head = Some(Loaded { bytes, record });
        self.status = Status::Open;
        if fresh {
            self.derived_due = true;
        } else if ctx.base_loaded {
            // Opened from an ancestor's record: the head's is worth writing when convenient.
            self.derived_due = true;
        } else if was != self.served.revision {
            // Another process's commits, applied: they count as commits since the record.
            self.derived_behind = self.derived_behind.map(|b| b.saturating_add(1));
        }
        Ok(())
    }
}

/// Reads the store's head (once per op) and loads it when it is not the loaded one. Returns
/// whether it loaded. A commit in flight refuses: hosts queue commits (engine.md §8.5).
pub(crate) fn ensure_current(eng: &mut Engine, ctx: &mut Ctx) -> Flowing<bool> {
    let head = ctx.head()?;
    if eng.in_flight.is_some() {
        return Err(Error::Invalid(IN_FLIGHT.into()).into());
    }
    if eng.served.poisoned() {
        // A text of the derived record did not match its source: compile instead.
        eng.distrusted = eng.served.recorded.map(|r| derived_key(&r));
        eng.status = Status::Closed;
    }
    if matches!(eng.status, Status::Open) && eng.head_bytes() == head.as_deref() {
        return Ok(false);
    }
    match eng.load(ctx, head) {
        Ok(()) => Ok(true),
        Err(Flow::Fail(e)) => {
            eng.status = Status::Failed(e.clone());
            Err(Flow::Fail(e))
        }
        Err(need) => Err(need),
    }
}

/// Loads the head again when an earlier step of this op dropped the served state (its
/// derived record disagreed with a source).
fn reopen_if_closed(eng: &mut Engine, ctx: &mut Ctx) -> Flowing<()> {
    if matches!(eng.status, Status::Closed) && eng.distrusted.is_some() {
        ensure_current(eng, ctx)?;
    }
    Ok(())
}

/// Checks a host-supplied commit time.
pub(crate) fn check_created(created: &str) -> Result<()> {
    if records::is_commit_time(created) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "invalid commit time \"{created}\": expected YYYY-MM-DDTHH:MM:SS.sssZ"
        )))
    }
}

/// The incremental linker of a state decoded from a derived record: rebuilt from its decoded
/// parses and model without resolving links again; should the model not fit the parses, the
/// tenant pass over them gives it. Used by the first commit after such an open and by
/// [`Engine::warm`].
pub(crate) fn linker_of(served: &Served) -> Result<Linker> {
    let held = served.state.bundles.iter().map(|(name, b)| {
        (
            name.as_str(),
            b.docs.iter().map(|(path, d)| crate::compile::Held {
                path: path.as_str(),
                text: &d.text,
                parsed: d.parsed.as_ref(),
            }),
        )
    });
    match Linker::restore_held(Ambiguity::Serve, held, &served.model) {
        Ok(linker) => Ok(linker),
        Err(_) => {
            let mut linker = Linker::new(Ambiguity::Serve);
            linker.apply(TenantState::default().diff(&served.state))?;
            Ok(linker)
        }
    }
}

#[cfg(test)]
mod tests;
