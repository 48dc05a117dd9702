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

mod commit;
mod history;
mod maintain;
mod memory;
pub mod records;
pub mod request;
pub mod results;
mod state;
pub mod store;

pub use commit::{ImportRequest, NOT_RETAINED};
pub use history::{decode_cursor, encode_cursor, CURSOR_EXPIRED};
pub use maintain::{derived_key, HEAD_CHANGED};
pub use memory::{Fault, FaultPlan, FaultyStore, MemoryStore, SwapFault};
pub use request::{
    parse_history_request, parse_restore_request, parse_transaction, parse_transaction_with,
    Change, Content, GcOptions, HistoryRequest, Operation, RepairRequest, RestoreRequest,
    Transaction,
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

use crate::compile::{Ambiguity, Change as LinkChange, Linker, Model};
use crate::error::{Error, Result};
use crate::snapshot::SnapshotTree;
use records::{HeadRecord, RevisionRecord};
use state::{BundleState, Doc, TenantState};
use std::collections::HashMap;
use std::sync::Arc;

/// The compiler and index version (engine.md §2.5), part of every derived record's key.
pub const COMPILER_VERSION: u32 = 1;

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

// ---------------------------------------------------------------------------------------
// Step machinery

/// Why an op body stopped: it needs the store, or it failed.
pub(crate) enum Flow {
    Need(Need),
    Fail(Error),
}

impl From<Error> for Flow {
    fn from(e: Error) -> Flow {
        Flow::Fail(e)
    }
}

pub(crate) type Flowing<T> = std::result::Result<T, Flow>;

/// What an op body produced.
pub(crate) enum Progress<T> {
    Done(T),
    /// A prepared commit, with the result to return once it is committed. Without one, the
    /// body runs again after the commit (with `Ctx::commits` raised) to go on.
    Commit(PreparedCommit, Option<T>),
}

#[derive(Clone, Debug)]
enum Fetched {
    Ok(Arc<Vec<u8>>),
    Missing,
    Mismatch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asked {
    Nothing,
    Head,
    Records,
    Commit,
    Keys,
    Remove,
}

/// What an op has fetched so far.
pub(crate) struct Ctx {
    head: Option<Option<Vec<u8>>>,
    records: HashMap<Key, Fetched>,
    keys: Option<Vec<KeyInfo>>,
    removed: Option<Vec<Key>>,
    /// How many of this op's commits were acknowledged as committed.
    commits: usize,
    retried: bool,
    asked: Asked,
    asked_keys: Vec<Key>,
}

impl Ctx {
    fn new() -> Ctx {
        Ctx {
            head: None,
            records: HashMap::new(),
            keys: None,
            removed: None,
            commits: 0,
            retried: false,
            asked: Asked::Nothing,
            asked_keys: Vec::new(),
        }
    }

    /// The store's head as this op read it.
    pub(crate) fn head(&self) -> Flowing<Option<Vec<u8>>> {
        match &self.head {
            Some(h) => Ok(h.clone()),
            None => Err(Flow::Need(Need::Head)),
        }
    }

    /// Forgets the head, so that the op reads it again.
    pub(crate) fn forget_head(&mut self) {
        self.head = None;
    }

    fn absent(&self, keys: &[Key]) -> Vec<Key> {
        let mut out: Vec<Key> = keys
            .iter()
            .filter(|k| !self.records.contains_key(k))
            .copied()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Ensures every key is fetched and verified. A missing record makes the op re-read the
    /// head and run again once (engine.md §9.1 rule 2) before it is reported as corruption.
    pub(crate) fn need(&mut self, keys: &[Key]) -> Flowing<()> {
        let absent = self.absent(keys);
        if !absent.is_empty() {
            return Err(Flow::Need(Need::Records(absent)));
        }
        for k in keys {
            match &self.records[k] {
                Fetched::Ok(_) => {}
                Fetched::Mismatch => {
                    return Err(Error::corrupt(format!("{k} does not match its digest")).into())
                }
                Fetched::Missing => {
                    if !self.retried {
                        self.retried = true;
                        self.head = None;
                        self.records.retain(|_, v| !matches!(v, Fetched::Missing));
                        return Err(Flow::Need(Need::Head));
                    }
                    return Err(Error::corrupt(format!("{k} is missing")).into());
                }
            }
        }
        Ok(())
    }

    /// Ensures every key is fetched, without judging what came back.
    pub(crate) fn need_lenient(&mut self, keys: &[Key]) -> Flowing<()> {
        let absent = self.absent(keys);
        if absent.is_empty() {
            Ok(())
        } else {
            Err(Flow::Need(Need::Records(absent)))
        }
    }

    /// A fetched record's bytes (after [`Ctx::need`]).
    pub(crate) fn bytes(&self, key: &Key) -> &[u8] {
        match self.records.get(key) {
            Some(Fetched::Ok(b)) => b,
            _ => &[],
        }
    }

    /// A fetched record's state: `Ok(bytes)`, or the corruption message naming it.
    pub(crate) fn check(&self, key: &Key) -> std::result::Result<&[u8], String> {
        match self.records.get(key) {
            Some(Fetched::Ok(b)) => Ok(b),
            Some(Fetched::Mismatch) => Err(format!(
                "database corruption: {key} does not match its digest"
            )),
            _ => Err(format!("database corruption: {key} is missing")),
        }
    }

    pub(crate) fn keys(&self) -> Flowing<&[KeyInfo]> {
        match &self.keys {
            Some(k) => Ok(k),
            None => Err(Flow::Need(Need::Keys)),
        }
    }

    pub(crate) fn removed(&self, keys: Vec<Key>, before: u64) -> Flowing<&[Key]> {
        match &self.removed {
            Some(k) => Ok(k),
            None => Err(Flow::Need(Need::Remove { keys, before })),
        }
    }
}

type Body<T> = Box<dyn FnMut(&mut Engine, &mut Ctx) -> Flowing<Progress<T>>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum OpState {
    Fresh,
    Waiting,
    Finished,
}

/// An operation: a step machine over the store. Start it with `resume(engine, None)`, then
/// resume it with the [`Answer`] to each [`Need`] until it returns [`Step::Done`] or an
/// error. Ops do not borrow the engine between steps, so reads from memory go on while an op
/// waits; a commit's effects are published only when its outcome is acknowledged.
pub struct Op<T> {
    body: Body<T>,
    ctx: Ctx,
    state: OpState,
    pending: Option<T>,
}

impl<T: 'static> Op<T> {
    pub(crate) fn new(
        body: impl FnMut(&mut Engine, &mut Ctx) -> Flowing<Progress<T>> + 'static,
    ) -> Op<T> {
        Op {
            body: Box::new(body),
            ctx: Ctx::new(),
            state: OpState::Fresh,
            pending: None,
        }
    }

    /// Advances the op. `answer` is `None` on the first call and the answer to the last
    /// [`Need`] afterwards.
    pub fn resume(&mut self, engine: &mut Engine, answer: Option<Answer>) -> Result<Step<T>> {
        match (self.state, answer) {
            (OpState::Finished, _) => {
                return Err(Error::Invalid("operation already finished".into()))
            }
            (OpState::Fresh, None) => {}
            (OpState::Waiting, Some(a)) => {
                if let Err(e) = self.apply(engine, a) {
                    self.state = OpState::Finished;
                    self.pending = None;
                    return Err(e);
                }
                if let Some(t) = self.pending.take() {
                    self.state = OpState::Finished;
                    return Ok(Step::Done(t));
                }
            }
            (_, _) => {
                if self.ctx.asked == Asked::Commit {
                    let _ = engine.acknowledge(CommitOutcome::Indeterminate);
                }
                self.state = OpState::Finished;
                return Err(Error::Invalid(
                    "answer does not match the operation's need".into(),
                ));
            }
        }
        match (self.body)(engine, &mut self.ctx) {
            Ok(Progress::Done(t)) => {
                self.state = OpState::Finished;
                Ok(Step::Done(t))
            }
            Ok(Progress::Commit(p, pending)) => {
                self.state = OpState::Waiting;
                self.ctx.asked = Asked::Commit;
                self.pending = pending;
                Ok(Step::Need(Need::Commit(p)))
            }
            Err(Flow::Need(n)) => {
                self.state = OpState::Waiting;
                self.ctx.asked = match &n {
                    Need::Head => Asked::Head,
                    Need::Records(k) => {
                        self.ctx.asked_keys = k.clone();
                        Asked::Records
                    }
                    Need::Commit(_) => Asked::Commit,
                    Need::Keys => Asked::Keys,
                    Need::Remove { .. } => Asked::Remove,
                };
                Ok(Step::Need(n))
            }
            Err(Flow::Fail(e)) => {
                self.state = OpState::Finished;
                Err(e)
            }
        }
    }

    fn apply(&mut self, engine: &mut Engine, answer: Answer) -> Result<()> {
        let ctx = &mut self.ctx;
        let asked = std::mem::replace(&mut ctx.asked, Asked::Nothing);
        match (asked, answer) {
            (Asked::Commit, Answer::Outcome(o)) => {
                engine.acknowledge(o)?;
                ctx.commits += 1;
            }
            (Asked::Commit, Answer::Failed(e)) => {
                engine.acknowledge(CommitOutcome::Failed(e))?;
                return Err(Error::Invalid("no commit is in flight".into()));
            }
            (Asked::Commit, _) => {
                engine.acknowledge(CommitOutcome::Indeterminate)?;
                return Err(Error::Invalid("no commit is in flight".into()));
            }
            (_, Answer::Failed(e)) => return Err(e.into()),
            (Asked::Head, Answer::Head(h)) => ctx.head = Some(h),
            (Asked::Records, Answer::Records(v)) if v.len() == ctx.asked_keys.len() => {
                for (k, b) in std::mem::take(&mut ctx.asked_keys).into_iter().zip(v) {
                    let f = match b {
                        None => Fetched::Missing,
                        Some(b) if k.verifies(&b) => Fetched::Ok(Arc::new(b)),
                        Some(_) => Fetched::Mismatch,
                    };
                    ctx.records.insert(k, f);
                }
            }
            (Asked::Keys, Answer::Keys(k)) => ctx.keys = Some(k),
            (Asked::Remove, Answer::Removed(k)) => ctx.removed = Some(k),
            _ => {
                return Err(Error::Invalid(
                    "answer does not match the operation's need".into(),
                ))
            }
        }
        Ok(())
    }

    /// The result the op will return once its commit is acknowledged, while it waits for
    /// that outcome (engine.md §8.2 "the result to report").
    pub fn pending_result(&self) -> Option<&T> {
        self.pending.as_ref()
    }

    /// An op whose result is mapped by `f`.
    pub fn map<U: 'static>(self, mut f: impl FnMut(T) -> U + 'static) -> Op<U> {
        let mut body = self.body;
        Op {
            body: Box::new(move |e, c| {
                Ok(match body(e, c)? {
                    Progress::Done(t) => Progress::Done(f(t)),
                    Progress::Commit(p, t) => Progress::Commit(p, t.map(&mut f)),
                })
            }),
            ctx: self.ctx,
            state: self.state,
            pending: None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Served state

/// The state reads are served from: one revision's compiled model, snapshot id and sources.
/// It is immutable and swapped whole when a commit is published, so a read that holds it
/// sees one revision from start to end (read.md §7).
#[derive(Debug)]
pub struct Served {
    model: Model,
    tree: SnapshotTree,
    revision: Option<Digest>,
    state: TenantState,
}

impl Served {
    fn empty() -> Served {
        let model = Model::default();
        Served {
            tree: SnapshotTree::build(&model),
            model,
            revision: None,
            state: TenantState::default(),
        }
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
        self.model.concepts.len()
    }

    /// Every document, navigation documents included, sorted by bundle then path
    /// (read.md §6.1).
    pub fn list_source(&self) -> Vec<SourceEntry> {
        let mut ids: HashMap<(&str, &str), &str> =
            HashMap::with_capacity(self.model.concepts.len());
        for c in &self.model.concepts {
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
    pub fn documents(&self) -> impl Iterator<Item = (&str, &str, &Arc<str>)> {
        self.state.bundles.iter().flat_map(|(b, s)| {
            s.docs
                .iter()
                .map(move |(p, d)| (b.as_str(), p.as_str(), &d.text))
        })
    }
}

// ---------------------------------------------------------------------------------------
// The engine

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
    /// flight, over the pending one).
    linker: Linker,
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
        })
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

    /// `readSource` (read.md §6.2). A step machine so that a host serving from a derived
    /// record can load the source on first use; it completes at once today.
    pub fn read_source(&self, bundle: &str, path: &str) -> Op<Option<SourceContent>> {
        let (bundle, path) = (bundle.to_string(), path.to_string());
        Op::new(move |eng, _| Ok(Progress::Done(eng.read()?.read_source(&bundle, &path))))
    }

    /// Reports a commit's outcome (engine.md §8.4). Called by [`Op::resume`]; hosts answer
    /// the op instead of calling this.
    fn acknowledge(&mut self, outcome: CommitOutcome) -> Result<()> {
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
                        self.served = s;
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
        let changes = old.state.diff(state);
        self.linker.set_ambiguity(ambiguity);
        let delta = self.linker.apply(changes);
        self.linker.set_ambiguity(Ambiguity::Serve);
        let delta = delta?;
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
                                let text: Arc<str> = match by_hash.get(&hash) {
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

    fn load(&mut self, ctx: &mut Ctx, head: Option<Vec<u8>>) -> Flowing<()> {
        let Some(bytes) = head else {
            self.served = Arc::new(Served::empty());
            self.linker = Linker::new(Ambiguity::Serve);
            self.head = None;
            self.status = Status::Open;
            return Ok(());
        };
        let record = HeadRecord::decode(&bytes)?.ok_or_else(|| foreign_format(&self.tenant))?;
        let rev = self.fetch_revision(ctx, record.revision)?;
        if !matches!(self.status, Status::Open) {
            self.served = Arc::new(Served::empty());
            self.linker = Linker::new(Ambiguity::Serve);
        }
        let base = self.served.state.clone();
        let state = self.load_state(ctx, record.revision, &rev, &base)?;
        let (model, tree, _) = self.advance(&state, Ambiguity::Serve)?;
        self.served = Arc::new(Served {
            model,
            tree,
            revision: Some(record.revision),
            state,
        });
        self.head = Some(Loaded { bytes, record });
        self.status = Status::Open;
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

#[cfg(test)]
mod tests;
