//! A connection to one tenant of a local data root: the engine driven against the files
//! store (engine.md §8), as the CLI and the MCP server use it.
//!
//! Reads refresh to the store's head first. Commits hold `writer.lock` from refresh to
//! swap, so this process's commits queue instead of conflicting; a commit that still
//! conflicts (another host moved the head without the lock) is prepared once more when the
//! request has no `expectedRevision`, so preconditions are checked afresh and no update is
//! lost (engine.md §8.7).

use crate::clock;
use crate::file_store::{millis, Files};
use langonrock_core::engine::request::Content;
use langonrock_core::engine::{
    self, run, serve, Answer, CommitOutcome, DeleteResult, Engine, GcOptions, GcResult,
    HistoryPage, HistoryRequest, ImportRequest, ImportResult, Need, Op, OpenResult, RepairRequest,
    RepairResult, RestoreRequest, RevisionResult, Served, SourceContent, Step, StoreError,
    Transaction, VerifyResult, WriteResult,
};
use langonrock_core::Error;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The refusal of a write on a read-only connection.
pub const READ_ONLY: &str = "connection is read-only";

/// A connection to one tenant.
pub struct Conn {
    engine: Engine,
    store: Files,
    read_only: bool,
    now: Box<dyn Fn() -> String + Send>,
    /// Puts the head's derived record (engine.md §9.1 rule 4); `None` when read-only.
    derived: Option<DerivedWriter>,
}

/// How long the derived record writer waits for the commits to pause before it encodes the
/// latest state (a closing connection writes at once).
pub const DERIVED_DELAY: Duration = Duration::from_secs(2);

/// Keeps the head's derived record current off the connection's thread: after a
/// recompiling open and after commits, the latest served state is encoded and put once the
/// commits pause for [`DERIVED_DELAY`], and at once when the connection closes. A put that
/// fails is dropped: the next open compiles and tries again.
struct DerivedWriter {
    tx: Option<mpsc::Sender<Arc<Served>>>,
    thread: Option<JoinHandle<()>>,
}

impl DerivedWriter {
    fn start(data: &Path, tenant: &str, delay: Duration) -> DerivedWriter {
        let (tx, rx) = mpsc::channel::<Arc<Served>>();
        let (data, tenant) = (data.to_path_buf(), tenant.to_string());
        let thread = std::thread::Builder::new()
            .name("langonrock-derived".into())
            .spawn(move || {
                let mut store = Files::new(&data);
                while let Ok(mut served) = rx.recv() {
                    // A newer state replaces this one until the commits pause; a closed
                    // channel (the connection ends) writes at once.
                    while let Ok(newer) = rx.recv_timeout(delay) {
                        served = newer;
                    }
                    if let Some((key, bytes)) = served.derived_record(&clock::today()) {
                        drop(served);
                        let _ =
                            langonrock_core::engine::Store::put(&mut store, &tenant, &key, &bytes);
                    }
                }
            })
            .ok();
        DerivedWriter {
            tx: thread.as_ref().map(|_| tx),
            thread,
        }
    }

    fn submit(&self, served: Arc<Served>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(served);
        }
    }

    /// Writes what is pending and stops.
    fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for DerivedWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

fn is_head_conflict(e: &Error) -> bool {
    matches!(e, Error::Conflict { message, reason: None, changes } if message == engine::DATABASE_CHANGED && changes.is_empty())
}

impl Conn {
    /// Opens `tenant` under `data`. A tenant without a head opens empty; nothing is created.
    /// A corrupt store fails closed with its `database corruption: …` error.
    pub fn open(data: &Path, tenant: &str, read_only: bool) -> Result<Conn, Error> {
        Conn::open_with(data, tenant, read_only, DERIVED_DELAY)
    }

    /// [`Conn::open`] with the derived record writer's pause (tests shorten it).
    pub fn open_with(
        data: &Path,
        tenant: &str,
        read_only: bool,
        delay: Duration,
    ) -> Result<Conn, Error> {
        let engine = Engine::new(tenant)?;
        let derived = (!read_only).then(|| DerivedWriter::start(data, engine.tenant(), delay));
        let mut c = Conn {
            engine,
            store: Files::new(data),
            read_only,
            now: Box::new(clock::now_iso),
            derived,
        };
        c.refresh()?;
        Ok(c)
    }

    /// Hands the served state to the derived record writer when its record is due.
    fn keep_derived(&mut self) {
        if let Some(w) = &self.derived {
            if let Some(s) = self.engine.take_derived() {
                w.submit(s);
            }
        }
    }

    /// Puts the pending derived record, if any, and waits for it (the connection writes no
    /// more derived records afterwards). Dropping the connection does the same.
    pub fn finish_derived(&mut self) {
        if let Some(mut w) = self.derived.take() {
            w.finish();
        }
    }

    /// The served state as last loaded (no refresh), when open.
    pub fn served(&self) -> Option<Arc<Served>> {
        self.engine.read().ok()
    }

    /// Whether the served state was decoded from a derived record.
    pub fn served_from_derived(&self) -> bool {
        self.engine.read().is_ok_and(|s| s.from_derived())
    }

    /// Replaces the commit clock (tests pin commit times).
    pub fn with_clock(mut self, now: impl Fn() -> String + Send + 'static) -> Conn {
        self.now = Box::new(now);
        self
    }

    /// The tenant id.
    pub fn tenant(&self) -> &str {
        self.engine.tenant()
    }

    /// The data root.
    pub fn data(&self) -> &Path {
        self.store.data()
    }

    /// The tenant's directory.
    pub fn dir(&self) -> PathBuf {
        self.store.tenant(self.engine.tenant()).dir().to_path_buf()
    }

    /// Whether the tenant has a head (after the last refresh).
    pub fn has_head(&self) -> bool {
        self.engine.head_bytes().is_some()
    }

    fn run<T: 'static>(&mut self, op: Op<T>) -> Result<T, Error> {
        let r = run(&mut self.engine, &mut self.store, op);
        self.keep_derived();
        r
    }

    /// Reads and verifies the source blobs behind a read that returns sources (`get` with
    /// `source` for `ids`, or every document for `None`: export), when the served state came
    /// from a derived record (engine.md §9.1 rule 1). Run it after [`Conn::read`].
    pub fn check_sources(&mut self, ids: Option<Vec<String>>) -> Result<(), Error> {
        let op = self.engine.check_sources(ids);
        self.run(op)
    }

    /// Reads the store's head and loads it when it moved.
    pub fn refresh(&mut self) -> Result<OpenResult, Error> {
        let op = self.engine.refresh();
        self.run(op)
    }

    /// The served state after a refresh.
    pub fn read(&mut self) -> Result<Arc<Served>, Error> {
        self.refresh()?;
        self.engine.read()
    }

    /// Runs a read over the served state after a refresh. When the read met a text of a
    /// derived record that does not match its source hash, the engine compiles the state
    /// from the sources and the read runs once more: a bad derived record never fails a
    /// read (engine.md §9.1 rule 4).
    pub fn with_read<T>(&mut self, f: impl Fn(&Served) -> Result<T, Error>) -> Result<T, Error> {
        let s = self.read()?;
        match f(&s) {
            Err(_) if s.derived_failed() => {
                drop(s);
                let s = self.read()?;
                f(&s)
            }
            r => r,
        }
    }

    /// One document's exact text and hash.
    pub fn read_source(
        &mut self,
        bundle: &str,
        path: &str,
    ) -> Result<Option<SourceContent>, Error> {
        self.refresh()?;
        let op = self.engine.read_source(bundle, path);
        self.run(op)
    }

    /// A document's current hash, or `None` when it does not exist or the lookup fails
    /// (agent.md §6.3.2: lookup errors are ignored).
    pub fn current_hash(&mut self, bundle: &str, path: &str) -> Option<String> {
        self.read().ok()?.source_hash(bundle, path)
    }

    /// Runs a commit: takes `writer.lock`, refreshes, prepares with `make`, stores and
    /// acknowledges. A head conflict is retried once when `retry` (no expected revision).
    fn commit<T: 'static>(
        &mut self,
        retry: bool,
        make: impl Fn(&Engine, &str) -> Op<T>,
    ) -> Result<T, Error> {
        if self.read_only {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        let _lock = self
            .store
            .tenant(self.engine.tenant())
            .lock_writer()
            .map_err(|e| Error::Store(e.0))?;
        let mut attempts = if retry { 2 } else { 1 };
        loop {
            attempts -= 1;
            self.refresh()?;
            let created = (self.now)();
            let op = make(&self.engine, &created);
            match self.run(op) {
                Err(e) if attempts > 0 && is_head_conflict(&e) => continue,
                other => return other,
            }
        }
    }

    /// `write` (engine.md §4.1).
    pub fn write(
        &mut self,
        bundle: &str,
        path: &str,
        content: impl Into<Content>,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        let content = content.into();
        self.commit(true, |e, t| {
            e.write(bundle, path, content.clone(), replaces, t)
        })
    }

    /// `delete` (engine.md §4.2).
    pub fn delete(
        &mut self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult, Error> {
        self.commit(true, |e, t| e.delete(bundle, path, replaces, t))
    }

    /// `deleteBundle` (engine.md §4.4).
    pub fn delete_bundle(&mut self, bundle: &str) -> Result<RevisionResult, Error> {
        self.commit(true, |e, t| e.delete_bundle(bundle, t))
    }

    /// `transact` (engine.md §5).
    pub fn transact(&mut self, txn: Transaction) -> Result<RevisionResult, Error> {
        let retry = txn.expected_revision.is_none();
        self.commit(retry, |e, t| e.transact(txn.clone(), t))
    }

    /// `restore` (engine.md §7).
    pub fn restore(&mut self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        self.commit(false, |e, t| e.restore(req.clone(), t))
    }

    /// `import` (cli.md §4). `unchanged` runs after the commit is prepared and before it is
    /// stored: a message from it aborts the commit with that message, nothing stored.
    pub fn import(
        &mut self,
        req: ImportRequest,
        unchanged: &mut dyn FnMut() -> Option<String>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ImportResult, Error> {
        if self.read_only {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        let _lock = self
            .store
            .tenant(self.engine.tenant())
            .lock_writer()
            .map_err(|e| Error::Store(e.0))?;
        self.refresh()?;
        let created = (self.now)();
        progress(&format!(
            "import: compiling {} documents",
            req.documents.len()
        ));
        let mut op = self.engine.import(req, &created);
        let tenant = self.engine.tenant().to_string();
        let mut answer = None;
        loop {
            match op.resume(&mut self.engine, answer.take())? {
                Step::Done(t) => {
                    self.keep_derived();
                    return Ok(t);
                }
                Step::Need(Need::Commit(p)) => {
                    answer = Some(match unchanged() {
                        Some(m) => Answer::Outcome(CommitOutcome::Failed(StoreError::Failed(m))),
                        None => {
                            progress(&format!("import: storing {} records", p.records.len()));
                            serve(&mut self.store, &tenant, Need::Commit(p))
                        }
                    });
                }
                Step::Need(n) => answer = Some(serve(&mut self.store, &tenant, n)),
            }
        }
    }

    /// `history` (engine.md §6).
    pub fn history(&mut self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        self.refresh()?;
        let op = self.engine.history(req);
        self.run(op)
    }

    /// `gc` (engine.md §10) at the current time.
    pub fn gc(&mut self, keep: i64, grace_ms: u64, dry_run: bool) -> Result<GcResult, Error> {
        if self.read_only && !dry_run {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        self.refresh()?;
        let opts = GcOptions {
            keep,
            dry_run,
            grace_ms,
            now: millis(std::time::SystemTime::now()),
        };
        let op = self.engine.gc(opts);
        self.run(op)
    }

    /// `verify` (engine.md §11).
    pub fn verify(&mut self) -> Result<VerifyResult, Error> {
        let op = self.engine.verify();
        self.run(op)
    }

    /// `repair` (engine.md §11.4).
    pub fn repair(&mut self, req: RepairRequest) -> Result<RepairResult, Error> {
        if self.read_only {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        let op = self.engine.repair(req);
        self.run(op)
    }
}

/// Opens a connection for `verify` without loading the tenant: a corrupt store must still
/// be verifiable, so this never fails for what it would report.
pub fn for_verify(data: &Path, tenant: &str) -> Result<Conn, Error> {
    Ok(Conn {
        engine: Engine::new(tenant)?,
        store: Files::new(data),
        read_only: true,
        now: Box::new(clock::now_iso),
        derived: None,
    })
}

/// Like [`for_verify`], writable: `repair` runs on a store that fails closed.
pub fn for_repair(data: &Path, tenant: &str) -> Result<Conn, Error> {
    let engine = Engine::new(tenant)?;
    let derived = Some(DerivedWriter::start(data, engine.tenant(), DERIVED_DELAY));
    Ok(Conn {
        engine,
        store: Files::new(data),
        read_only: false,
        now: Box::new(clock::now_iso),
        derived,
    })
}
