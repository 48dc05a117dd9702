//! A connection to one tenant: the engine driven against a store (engine.md §8), as the CLI,
//! the MCP servers and embedding programs use it.
//!
//! Concurrency (docs/engine.md §8.5, §8.6): the connection is `Send + Sync` and every method
//! takes `&self`.
//! - Reads refresh to the store's head first, unless a commit (or `gc`, `verify`, `repair`,
//!   `import`) is in flight: then they answer at once from the last published state. Two
//!   refreshes never run at once.
//! - Commits are serialized: one at a time per connection, and on the files store under
//!   `writer.lock` from refresh to swap, so this process's commits queue instead of
//!   conflicting. A commit that still loses its head swap (another host moved the head
//!   without the lock) is prepared once more when the request has no `expectedRevision`, so
//!   preconditions are checked afresh and no update is lost (engine.md §8.7).
//! - The engine is locked only while an operation takes one step; store IO runs outside.

use crate::clock::{Clock, SystemClock};
use langonrock_core::engine::{
    Answer, CommitOutcome, DeleteResult, Engine, GcOptions, GcResult, HistoryPage, HistoryRequest,
    ImportRequest, ImportResult, Key, MemoryStore, Need, Op, OpenResult, PreparedCommit,
    RepairRequest, RepairResult, RestoreRequest, RevisionResult, Served, SourceContent, Step,
    Store, StoreError, Transaction, VerifyResult, WriteResult,
};
use langonrock_core::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// The refusal of a write on a read-only connection.
pub const READ_ONLY: &str = "connection is read-only";

/// How long the derived record writer waits for the commits to pause before it encodes the
/// latest state (a closing connection writes at once).
pub const DERIVED_DELAY: Duration = Duration::from_secs(2);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

// ---------------------------------------------------------------------------------------
// Stores a connection shares between threads

/// A tenant store that threads share: each call is one store step.
trait Backend: Send + Sync {
    /// Performs one step of an operation.
    fn serve(&self, tenant: &str, need: Need) -> Answer;
    /// Puts one record (the derived record).
    fn put(&self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError>;
    /// Takes the store's writer lock, when it has one, for the life of the guard.
    fn lock_writer(&self, tenant: &str) -> Result<Option<Box<dyn Send>>, Error>;
    /// The data root of a files store.
    fn data(&self) -> Option<&Path>;
}

#[cfg(feature = "files")]
impl Backend for crate::files::Files {
    fn serve(&self, tenant: &str, need: Need) -> Answer {
        // The files store keeps no state between calls: every step gets its own handle.
        langonrock_core::engine::serve(&mut self.clone(), tenant, need)
    }
    fn put(&self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        Store::put(&mut self.clone(), tenant, key, bytes)
    }
    fn lock_writer(&self, tenant: &str) -> Result<Option<Box<dyn Send>>, Error> {
        let guard = self
            .tenant(tenant)
            .lock_writer()
            .map_err(|e| Error::Store(e.0))?;
        Ok(Some(Box::new(guard)))
    }
    fn data(&self) -> Option<&Path> {
        Some(crate::files::Files::data(self))
    }
}

/// Any store behind a mutex (the memory store, test stores): one step at a time.
struct Shared<S>(Arc<Mutex<S>>);

impl<S: Store + Send + 'static> Backend for Shared<S> {
    fn serve(&self, tenant: &str, need: Need) -> Answer {
        langonrock_core::engine::serve(&mut *lock(&self.0), tenant, need)
    }
    fn put(&self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        lock(&self.0).put(tenant, key, bytes)
    }
    fn lock_writer(&self, _tenant: &str) -> Result<Option<Box<dyn Send>>, Error> {
        Ok(None)
    }
    fn data(&self) -> Option<&Path> {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Options

/// How to open a connection: read-only or not, loading the tenant or not, the clock.
#[derive(Clone)]
pub struct Options {
    read_only: bool,
    load: bool,
    derived_delay: Duration,
    clock: Arc<dyn Clock>,
    #[cfg(feature = "remote")]
    remote_limits: crate::remote::http::Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            read_only: false,
            load: true,
            derived_delay: DERIVED_DELAY,
            clock: Arc::new(SystemClock),
            #[cfg(feature = "remote")]
            remote_limits: crate::remote::http::Limits::default(),
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("read_only", &self.read_only)
            .field("load", &self.load)
            .field("derived_delay", &self.derived_delay)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// A read-only connection refuses every change with `connection is read-only` and never
    /// writes to the store (no derived records either).
    pub fn read_only(mut self, read_only: bool) -> Options {
        self.read_only = read_only;
        self
    }

    /// Opens without reading the tenant: for `verify` and `repair`, which must run on a
    /// store that fails closed. Reads load it on first use.
    pub fn unloaded(mut self) -> Options {
        self.load = false;
        self
    }

    /// How long commits must pause before the head's derived record is written (default
    /// [`DERIVED_DELAY`]).
    pub fn derived_delay(mut self, delay: Duration) -> Options {
        self.derived_delay = delay;
        self
    }

    /// The clock for read dates, commit times and put times (default [`SystemClock`]).
    pub fn clock(mut self, clock: impl Clock + 'static) -> Options {
        self.clock = Arc::new(clock);
        self
    }

    /// Opens the tenant a DSN names (see [`crate::open`]): a data root, or with the
    /// `remote` feature a `langonrock serve` (docs/remote.md).
    pub fn open(&self, dsn: &str) -> Result<crate::Connection, Error> {
        let d = match langonrock_core::dsn::parse_dsn(dsn, cfg!(windows))? {
            langonrock_core::dsn::Dsn::Embedded(d) => d,
            #[cfg(feature = "remote")]
            langonrock_core::dsn::Dsn::Remote(r) => {
                return crate::Connection::remote(
                    &r,
                    self.read_only,
                    self.remote_limits,
                    self.clock.clone(),
                )
            }
            #[cfg(not(feature = "remote"))]
            langonrock_core::dsn::Dsn::Remote(_) => {
                return Err(Error::Invalid(format!(
                    "dsn \"{}\" names a remote server, and this build has no `remote` feature",
                    langonrock_core::dsn::redact_dsn(dsn)
                )))
            }
        };
        let data = match d.data {
            Some(p) => PathBuf::from(p),
            None => crate::data_root::default_root(&crate::data_root::process_env)?,
        };
        #[cfg(feature = "files")]
        return self.open_files(&data, &d.tenant);
        #[cfg(not(feature = "files"))]
        Err(Error::Invalid(format!(
            "dsn \"{dsn}\" names a files store ({}), and this build has no `files` feature",
            data.display()
        )))
    }

    /// Opens `tenant` of the files store under the data root `data`.
    #[cfg(feature = "files")]
    pub fn open_files(&self, data: &Path, tenant: &str) -> Result<crate::Connection, Error> {
        Connection::start(Arc::new(crate::files::Files::new(data)), tenant, self).map(Into::into)
    }

    /// Opens `tenant` of a store shared with other connections (a memory store, a test
    /// store); the connection takes one step at a time on it.
    pub fn open_store<S: Store + Send + 'static>(
        &self,
        store: Arc<Mutex<S>>,
        tenant: &str,
    ) -> Result<crate::Connection, Error> {
        Connection::start(Arc::new(Shared(store)), tenant, self).map(Into::into)
    }

    /// How long a remote connection waits and how much it reads (default
    /// [`crate::remote::http::Limits::default`]).
    #[cfg(feature = "remote")]
    pub fn remote_limits(mut self, limits: crate::remote::http::Limits) -> Options {
        self.remote_limits = limits;
        self
    }
}

// ---------------------------------------------------------------------------------------
// The derived record writer

/// Keeps the head's derived record current off the connection's threads: after a
/// recompiling open and after commits, the latest served state is encoded and put once the
/// commits pause for the delay, and at once when the connection closes. A put that fails is
/// dropped: the next open compiles and tries again.
struct DerivedWriter {
    tx: Option<mpsc::Sender<Arc<Served>>>,
    thread: Option<JoinHandle<()>>,
}

impl DerivedWriter {
    fn start(
        store: Arc<dyn Backend>,
        tenant: &str,
        delay: Duration,
        clock: Arc<dyn Clock>,
    ) -> DerivedWriter {
        let (tx, rx) = mpsc::channel::<Arc<Served>>();
        let tenant = tenant.to_string();
        let thread = std::thread::Builder::new()
            .name("langonrock-derived".into())
            .spawn(move || {
                while let Ok(mut served) = rx.recv() {
                    // A newer state replaces this one until the commits pause; a closed
                    // channel (the connection ends) writes at once.
                    while let Ok(newer) = rx.recv_timeout(delay) {
                        served = newer;
                    }
                    if let Some((key, bytes)) = served.derived_record(&clock.today()) {
                        drop(served);
                        let _ = store.put(&tenant, &key, &bytes);
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

// ---------------------------------------------------------------------------------------
// The connection

/// What reads see without touching the engine: the served state as last published.
struct Published {
    served: Result<Arc<Served>, Error>,
    has_head: bool,
}

/// A connection to one tenant. `Send + Sync`; see the module documentation for what runs
/// concurrently.
pub struct Connection {
    tenant: String,
    read_only: bool,
    store: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    engine: Mutex<Engine>,
    published: Mutex<Published>,
    /// Held by the operation that may change the tenant (commits, gc, verify, repair).
    exclusive: Mutex<()>,
    /// Held while a refresh runs.
    refreshing: Mutex<()>,
    /// Set while an exclusive operation runs: reads then skip their refresh.
    busy: AtomicBool,
    /// Puts the head's derived record (engine.md §9.1 rule 4); `None` when read-only.
    derived: Mutex<Option<DerivedWriter>>,
}

/// Clears the busy flag when an exclusive operation ends, however it ends.
struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Connection {
    /// Opens `tenant` under the data root `data` (see [`Options`] for read-only and
    /// unloaded connections). A tenant without a head opens empty; nothing is created. A
    /// corrupt store fails closed with its `database corruption: …` error.
    #[cfg(feature = "files")]
    pub fn open(data: &Path, tenant: &str, read_only: bool) -> Result<Connection, Error> {
        let opts = Options::default().read_only(read_only);
        Connection::start(Arc::new(crate::files::Files::new(data)), tenant, &opts)
    }

    /// A connection to `tenant` in a fresh memory store (the core's strict store): nothing
    /// outlives it. For tests and examples.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("sales", "orders.md", "---\ntype: table\n---\nOrders.\n", None)?;
    /// assert!(conn.manifest(None)?.contains("orders\tsales\ttable"));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn memory(tenant: &str) -> Result<Connection, Error> {
        let store = Arc::new(Shared(Arc::new(Mutex::new(MemoryStore::new()))));
        Connection::start(store, tenant, &Options::default())
    }

    fn start(store: Arc<dyn Backend>, tenant: &str, opts: &Options) -> Result<Connection, Error> {
        let engine = Engine::new(tenant)?;
        let tenant = engine.tenant().to_string();
        let derived = (!opts.read_only).then(|| {
            DerivedWriter::start(
                store.clone(),
                &tenant,
                opts.derived_delay,
                opts.clock.clone(),
            )
        });
        let c = Connection {
            published: Mutex::new(Published {
                served: engine.read(),
                has_head: false,
            }),
            engine: Mutex::new(engine),
            tenant,
            read_only: opts.read_only,
            store,
            clock: opts.clock.clone(),
            exclusive: Mutex::new(()),
            refreshing: Mutex::new(()),
            busy: AtomicBool::new(false),
            derived: Mutex::new(derived),
        };
        if opts.load {
            c.refresh()?;
        }
        Ok(c)
    }

    /// The tenant id, lower-cased.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// Whether the connection never writes.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The data root of a files connection (`None` in memory).
    pub fn data(&self) -> Option<&Path> {
        self.store.data()
    }

    /// The tenant's directory of a files connection (`None` in memory).
    pub fn dir(&self) -> Option<PathBuf> {
        #[cfg(feature = "files")]
        {
            self.data().map(|d| {
                crate::files::FileStore::new(d, &self.tenant)
                    .dir()
                    .to_path_buf()
            })
        }
        #[cfg(not(feature = "files"))]
        None
    }

    /// The connection's clock.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// Whether the tenant has a head (after the last refresh).
    pub fn has_head(&self) -> bool {
        lock(&self.published).has_head
    }

    /// The served state as last published (no refresh), when open.
    pub fn served(&self) -> Option<Arc<Served>> {
        lock(&self.published).served.clone().ok()
    }

    /// Whether the served state was decoded from a derived record.
    pub fn served_from_derived(&self) -> bool {
        self.served().is_some_and(|s| s.from_derived())
    }

    fn busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    fn publish(&self, engine: &Engine) {
        let mut p = lock(&self.published);
        p.served = engine.read();
        p.has_head = engine.head_bytes().is_some();
    }

    /// Hands the served state to the derived record writer when its record is due.
    fn keep_derived(&self) {
        let writer = lock(&self.derived);
        if let Some(w) = writer.as_ref() {
            if let Some(s) = lock(&self.engine).take_derived() {
                w.submit(s);
            }
        }
    }

    /// Puts the pending derived record, if any, and waits for it (the connection writes no
    /// more derived records afterwards). Dropping the connection does the same.
    pub fn finish_derived(&self) {
        let w = lock(&self.derived).take();
        if let Some(mut w) = w {
            w.finish();
        }
    }

    /// Runs one operation to its end: each step under the engine lock, store IO outside it.
    /// `on_commit` may answer a commit step instead of the store. Returns the result and
    /// whether a commit of the op lost its head swap.
    fn drive<T: 'static>(
        &self,
        op: impl FnOnce(&Engine) -> Op<T>,
        on_commit: &mut dyn FnMut(&PreparedCommit) -> Option<Answer>,
    ) -> (Result<T, Error>, bool) {
        let mut op = op(&lock(&self.engine));
        let mut answer = None;
        let mut lost_swap = false;
        loop {
            if matches!(answer, Some(Answer::Outcome(CommitOutcome::Conflict))) {
                lost_swap = true;
            }
            let step = {
                let mut engine = lock(&self.engine);
                let step = op.resume(&mut engine, answer.take());
                self.publish(&engine);
                step
            };
            match step {
                Err(e) => return (Err(e), lost_swap),
                Ok(Step::Done(t)) => return (Ok(t), lost_swap),
                Ok(Step::Need(Need::Commit(p))) => {
                    answer = Some(match on_commit(&p) {
                        Some(a) => a,
                        None => self.store.serve(&self.tenant, Need::Commit(p)),
                    })
                }
                Ok(Step::Need(n)) => answer = Some(self.store.serve(&self.tenant, n)),
            }
        }
    }

    fn run<T: 'static>(&self, op: impl FnOnce(&Engine) -> Op<T>) -> Result<T, Error> {
        let r = self.drive(op, &mut |_| None).0;
        self.keep_derived();
        r
    }

    /// Reads the store's head and loads it when it moved.
    pub fn refresh(&self) -> Result<OpenResult, Error> {
        let _r = lock(&self.refreshing);
        self.run(Engine::refresh)
    }

    /// Before a read: refresh, unless an exclusive operation is in flight, whose reads see
    /// the last published revision (engine.md §8.6).
    fn before_read(&self) -> Result<(), Error> {
        if self.busy() {
            return Ok(());
        }
        let _r = lock(&self.refreshing);
        if self.busy() {
            return Ok(());
        }
        self.run(Engine::refresh).map(|_| ())
    }

    /// The served state after a refresh.
    pub fn read(&self) -> Result<Arc<Served>, Error> {
        self.before_read()?;
        lock(&self.published).served.clone()
    }

    /// Runs a read over the served state after a refresh. When the read met a text of a
    /// derived record that does not match its source hash, the engine compiles the state
    /// from the sources and the read runs once more: a bad derived record never fails a
    /// read (engine.md §9.1 rule 4).
    pub fn with_read<T>(&self, f: impl Fn(&Served) -> Result<T, Error>) -> Result<T, Error> {
        let s = self.read()?;
        match f(&s) {
            Err(_) if s.derived_failed() && !self.busy() => {
                drop(s);
                let s = self.read()?;
                f(&s)
            }
            r => r,
        }
    }

    /// Reads and verifies the source blobs behind a read that returns sources (`get` with
    /// `source` for `ids`, or every document for `None`: export), when the served state came
    /// from a derived record (engine.md §9.1 rule 1). Run it after [`Connection::read`].
    pub fn check_sources(&self, ids: Option<Vec<String>>) -> Result<(), Error> {
        let _r = lock(&self.refreshing);
        self.run(move |e| e.check_sources(ids))
    }

    /// The manifest TSV of the tenant or of one bundle (read.md §2), for today.
    pub fn manifest(&self, bundle: Option<&str>) -> Result<String, Error> {
        let s = self.read()?;
        langonrock_core::manifest::manifest(s.model(), &self.tenant, bundle, &self.clock.today())
    }

    /// A search (search.md): the search TSV for today.
    pub fn search(
        &self,
        query: &str,
        opts: &langonrock_core::search::SearchOptions,
    ) -> Result<String, Error> {
        let today = self.clock.today();
        self.with_read(|s| s.search(&self.tenant, query, opts, &today))
    }

    /// One document's exact text and hash (read.md §6.2).
    pub fn read_source(&self, bundle: &str, path: &str) -> Result<Option<SourceContent>, Error> {
        self.before_read()?;
        let _r = lock(&self.refreshing);
        self.run(|e| e.read_source(bundle, path))
    }

    /// A document's current hash, or `None` when it does not exist or the lookup fails
    /// (agent.md §6.3.2: lookup errors are ignored).
    pub fn current_hash(&self, bundle: &str, path: &str) -> Option<String> {
        self.read().ok()?.source_hash(bundle, path)
    }

    /// Runs `body` as the one exclusive operation of the connection: after earlier ones,
    /// with reads served from the published state meanwhile.
    fn exclusive<T>(
        &self,
        writer_lock: bool,
        body: impl FnOnce() -> Result<T, Error>,
    ) -> Result<T, Error> {
        let _x = lock(&self.exclusive);
        let _w = if writer_lock {
            self.store.lock_writer(&self.tenant)?
        } else {
            None
        };
        self.busy.store(true, Ordering::Release);
        let _busy = Busy(&self.busy);
        let r = body();
        drop(_busy);
        self.keep_derived();
        r
    }

    /// Runs a commit: takes the writer lock, refreshes, prepares with `make`, stores and
    /// acknowledges. A lost head swap is prepared once more when `retry` (no expected
    /// revision).
    fn commit<T: 'static>(
        &self,
        retry: bool,
        make: impl Fn(&Engine, &str) -> Op<T>,
    ) -> Result<T, Error> {
        if self.read_only {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        self.exclusive(true, || {
            let mut attempts = if retry { 2 } else { 1 };
            loop {
                attempts -= 1;
                self.refresh()?;
                let created = self.clock.commit_time();
                match self.drive(|e| make(e, &created), &mut |_| None) {
                    (Err(_), true) if attempts > 0 => continue,
                    (r, _) => return r,
                }
            }
        })
    }

    /// `write` (engine.md §4.1).
    pub fn write(
        &self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        self.commit(true, |e, t| e.write(bundle, path, content, replaces, t))
    }

    /// `delete` (engine.md §4.2).
    pub fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult, Error> {
        self.commit(true, |e, t| e.delete(bundle, path, replaces, t))
    }

    /// `deleteBundle` (engine.md §4.4).
    pub fn delete_bundle(&self, bundle: &str) -> Result<RevisionResult, Error> {
        self.commit(true, |e, t| e.delete_bundle(bundle, t))
    }

    /// `transact` (engine.md §5).
    pub fn transact(&self, txn: Transaction) -> Result<RevisionResult, Error> {
        let retry = txn.expected_revision.is_none();
        self.commit(retry, |e, t| e.transact(txn.clone(), t))
    }

    /// `restore` (engine.md §7).
    pub fn restore(&self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        self.commit(false, |e, t| e.restore(req.clone(), t))
    }

    /// `import` (cli.md §4). `unchanged` runs after the commit is prepared and before it is
    /// stored: a message from it aborts the commit with that message, nothing stored.
    pub fn import(
        &self,
        req: ImportRequest,
        unchanged: &mut dyn FnMut() -> Option<String>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ImportResult, Error> {
        if self.read_only {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        self.exclusive(true, || {
            self.refresh()?;
            let created = self.clock.commit_time();
            progress(&format!(
                "import: compiling {} documents",
                req.documents.len()
            ));
            let mut on_commit = |p: &PreparedCommit| match unchanged() {
                Some(m) => Some(Answer::Outcome(CommitOutcome::Failed(StoreError::Failed(
                    m,
                )))),
                None => {
                    progress(&format!("import: storing {} records", p.records.len()));
                    None
                }
            };
            self.drive(move |e| e.import(req, &created), &mut on_commit)
                .0
        })
    }

    /// `history` (engine.md §6), after a refresh like every read.
    pub fn history(&self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        self.before_read()?;
        self.run(move |e| e.history(req))
    }

    /// `gc` (engine.md §10) at the current time.
    pub fn gc(&self, keep: i64, grace_ms: u64, dry_run: bool) -> Result<GcResult, Error> {
        if self.read_only && !dry_run {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        self.exclusive(false, || {
            self.refresh()?;
            let opts = GcOptions {
                keep,
                dry_run,
                grace_ms,
                now: self.clock.millis(),
            };
            self.run(move |e| e.gc(opts))
        })
    }

    /// `verify` (engine.md §11).
    pub fn verify(&self) -> Result<VerifyResult, Error> {
        self.exclusive(false, || self.run(Engine::verify))
    }

    /// `repair` (engine.md §11.4).
    pub fn repair(&self, req: RepairRequest) -> Result<RepairResult, Error> {
        if self.read_only {
            return Err(Error::Invalid(READ_ONLY.into()));
        }
        self.exclusive(false, || self.run(move |e| e.repair(req)))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.finish_derived();
    }
}

#[cfg(test)]
mod tests;
