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
use langonrock_core::connection::{self, local, ConnAnswer, ConnOp, ConnStep, DerivedTimer};
use langonrock_core::engine::{
    Answer, CommitOutcome, DeleteResult, Engine, GcOptions, GcResult, HistoryPage, HistoryRequest,
    ImportRequest, ImportResult, Key, MemoryStore, Need, Op, OpenResult, PreparedCommit,
    RepairRequest, RepairResult, RestoreRequest, RevisionResult, Served, SourceContent, Step,
    Store, StoreError, Transaction, VerifyResult, WriteResult,
};
use langonrock_core::tools::{self, Reply, ToolAnswer, ToolCall, ToolOp, ToolStep};
use langonrock_core::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The refusal of a change on a read-only connection (the core's policy).
pub const READ_ONLY: &str = connection::READ_ONLY;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

// ---------------------------------------------------------------------------------------
// Stores a connection shares between threads

/// A tenant store that threads share: each call is one store step.
pub(crate) trait Backend: Send + Sync {
    /// Performs one step of an operation.
    fn serve(&self, tenant: &str, need: Need) -> Answer;
    /// Puts one record (the derived record).
    fn put(&self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError>;
    /// Takes the store's writer lock, when it has one, for the life of the guard.
    fn lock_writer(&self, tenant: &str) -> Result<Option<Box<dyn Send>>, Error>;
    /// The data root of a files store.
    fn data(&self) -> Option<&Path>;
    /// Whether the store hands its source records out in place (then derived records leave
    /// the texts to it: docs/records.md "Derived record").
    fn in_place_sources(&self) -> bool;
    /// A flag the store sets when `tenant`'s head may have moved (a shared database's change
    /// feed). With one, reads skip reading the head while the flag is clear and the last
    /// read of it is younger than [`HEAD_POLL`]; without, every read reads the head.
    fn watch(&self, _tenant: &str) -> Option<Arc<AtomicBool>> {
        None
    }
    /// Starts following the store's change feed, when it has one.
    fn follow(&self) {}
    /// The store's clock, when its put times come from it (a shared database): `gc`'s
    /// `now`. `None`: the connection's clock.
    fn now_millis(&self) -> Option<Result<u64, Error>> {
        None
    }
}

/// How long a connection over a watched store serves reads without reading the head: half
/// the one second a lost notification may delay visibility (docs/postgres.md), so a busy
/// machine's scheduling delays stay inside it.
pub const HEAD_POLL: Duration = Duration::from_millis(500);

/// When a connection over a watched store last read the head, and whether it must again.
struct Watch {
    stale: Arc<AtomicBool>,
    last: Mutex<Option<Instant>>,
}

impl Watch {
    /// Whether reads may skip reading the head.
    fn fresh(&self) -> bool {
        !self.stale.load(Ordering::Acquire)
            && lock(&self.last).is_some_and(|t| t.elapsed() < HEAD_POLL)
    }
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
    fn in_place_sources(&self) -> bool {
        true
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
    fn in_place_sources(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------------------------------
// Options

/// How to open a connection: read-only or not, loading the tenant or not, the clock.
#[derive(Clone)]
pub struct Options {
    read_only: bool,
    load: bool,
    serves_searches: bool,
    /// The derived record's pause and bound (`DerivedTimer::with_limit`), in milliseconds.
    derived_wait: (u64, u64),
    clock: Arc<dyn Clock>,
    #[cfg(feature = "remote")]
    remote_limits: crate::remote::http::Limits,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            read_only: false,
            load: true,
            serves_searches: false,
            derived_wait: (langonrock_core::connection::DERIVED_DELAY_MS, u64::MAX),
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

    /// For a host that serves searches (an MCP or HTTP server): opening from a derived
    /// record decodes its search index beside the model, on another core, so the first
    /// search does not wait for it. Off by default (a command that does not search never
    /// decodes the index).
    pub fn serves_searches(mut self, on: bool) -> Options {
        self.serves_searches = on;
        self
    }

    /// When the head's derived record is written after commits (engine.md §9.1 rule 4): once
    /// they pause for `delay` milliseconds, and at most `limit` milliseconds after the first
    /// commit it waits for (default: one second's pause, no bound). A server under a steady
    /// stream of commits and searches (`serve`) waits for a longer pause, so the encoding
    /// does not run beside every commit, and bounds the wait so it still writes one.
    pub fn derived_wait(mut self, delay: u64, limit: u64) -> Options {
        self.derived_wait = (delay, limit);
        self
    }

    /// The clock for read dates, commit times and put times (default [`SystemClock`]).
    pub fn clock(mut self, clock: impl Clock + 'static) -> Options {
        self.clock = Arc::new(clock);
        self
    }

    /// Whether connections opened with these options are read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Opens the tenant a DSN names (see [`crate::open`]): a data root, or with the
    /// `remote` feature a `langonrock serve` (docs/remote.md).
    pub fn open(&self, dsn: &str) -> Result<crate::Connection, Error> {
        if langonrock_core::dsn::is_postgres(dsn) {
            #[cfg(feature = "postgres")]
            {
                let d = langonrock_core::dsn::parse_postgres_dsn(dsn)?;
                // A DSN without a tenant is refused before the database is contacted.
                let tenant = d.require_tenant()?;
                let db = crate::postgres::database(&d, self.read_only)?;
                return self.open_postgres(&db, tenant);
            }
            #[cfg(not(feature = "postgres"))]
            return Err(Error::Invalid(format!(
                "dsn \"{}\" names a PostgreSQL store, and this build of langonrock has no \
                 `postgres` feature: turn it on (features = [\"postgres\"])",
                langonrock_core::dsn::redact_dsn(dsn)
            )));
        }
        let home = crate::data_root::home_dir(&crate::data_root::process_env);
        let d = match langonrock_core::dsn::parse_dsn_home(dsn, cfg!(windows), home.as_deref())? {
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
                    "dsn \"{}\" names a remote server, and this build of langonrock has no \
                     `remote` feature: turn it on (features = [\"remote\"])",
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
            "dsn \"{dsn}\" names a files store ({}), and this build of langonrock has no \
             `files` feature: turn it on (features = [\"files\"])",
            data.display()
        )))
    }

    /// Opens `tenant` of the files store under the data root `data`.
    #[cfg(feature = "files")]
    pub fn open_files(&self, data: &Path, tenant: &str) -> Result<crate::Connection, Error> {
        Connection::start(Arc::new(crate::files::Files::new(data)), tenant, self).map(Into::into)
    }

    /// Opens `tenant` of a PostgreSQL database (see [`crate::postgres::database`]).
    #[cfg(feature = "postgres")]
    pub fn open_postgres(
        &self,
        db: &Arc<crate::postgres::Database>,
        tenant: &str,
    ) -> Result<crate::Connection, Error> {
        Connection::start(Arc::new(crate::postgres::Backend(db.clone())), tenant, self)
            .map(Into::into)
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

/// Writes the head's derived record off the connection's threads, when the core's
/// [`DerivedTimer`] says so: after a recompiling open or a run of commits, once the commits
/// pause for `connection::DERIVED_DELAY_MS`, and at once when the connection closes. A put that fails
/// is dropped: the next open compiles and tries again.
struct DerivedWriter {
    wake: Arc<(Mutex<Wake>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Wake {
    /// When to look at the timer next (host milliseconds since the connection started).
    at: Option<u64>,
    stop: bool,
}

impl DerivedWriter {
    fn start(inner: Weak<Inner>) -> DerivedWriter {
        let wake = Arc::new((Mutex::new(Wake::default()), Condvar::new()));
        let w = wake.clone();
        let thread = std::thread::Builder::new()
            .name("langonrock-derived".into())
            .spawn(move || loop {
                let (m, cv) = &*w;
                let mut g = lock(m);
                loop {
                    if g.stop {
                        return;
                    }
                    let Some(inner) = inner.upgrade() else { return };
                    let now = inner.ms();
                    match g.at {
                        Some(at) if now >= at => {
                            g.at = None;
                            drop(g);
                            let fire = lock(&inner.timer).fire(now);
                            if fire {
                                inner.write_derived();
                            } else if let Some(next) = lock(&inner.timer).deadline() {
                                lock(m).at = Some(next);
                            }
                            break;
                        }
                        Some(at) => {
                            drop(inner);
                            g = cv
                                .wait_timeout(g, Duration::from_millis(at - now))
                                .map(|r| r.0)
                                .unwrap_or_else(|p| p.into_inner().0);
                        }
                        None => {
                            drop(inner);
                            g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
                        }
                    }
                }
            })
            .ok();
        DerivedWriter { wake, thread }
    }

    fn arm(&self, at: u64) {
        let (m, cv) = &*self.wake;
        lock(m).at = Some(at);
        cv.notify_all();
    }

    fn stop(&mut self) {
        let (m, cv) = &*self.wake;
        lock(m).stop = true;
        cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

// ---------------------------------------------------------------------------------------
// The connection

/// What reads see without touching the engine: the served state as last published.
struct Published {
    served: Result<Arc<Served>, Error>,
    has_head: bool,
}

/// The state the connection's threads share.
struct Inner {
    tenant: String,
    read_only: bool,
    store: Arc<dyn Backend>,
    clock: Arc<dyn Clock>,
    started: Instant,
    engine: Mutex<Engine>,
    published: Mutex<Published>,
    /// Held by the operation that may change the tenant (commits, gc, verify, repair).
    exclusive: Mutex<()>,
    /// Held while a refresh (or a read's engine op) runs.
    refreshing: Mutex<()>,
    /// Set while an exclusive operation runs: reads then skip their refresh.
    busy: AtomicBool,
    timer: Mutex<DerivedTimer>,
    /// Over a shared database: when the head must be read again.
    watch: Option<Watch>,
}

impl Inner {
    fn ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Takes the due derived record from the engine, encodes it and puts it.
    fn write_derived(&self) {
        let served = lock(&self.engine).take_derived();
        if let Some(s) = served {
            let texts = !self.store.in_place_sources();
            if let Some((key, bytes)) = s.derived_record(&self.clock.today(), texts) {
                drop(s);
                let _ = self.store.put(&self.tenant, &key, &bytes);
            }
        }
    }
}

/// A connection to one tenant. `Send + Sync`; see the module documentation for what runs
/// concurrently.
pub struct Connection {
    inner: Arc<Inner>,
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
        let mut engine = Engine::new(tenant)?;
        engine.decode_index_beside(opts.serves_searches);
        let watch = store.watch(engine.tenant()).map(|stale| Watch {
            stale,
            last: Mutex::new(None),
        });
        let inner = Arc::new(Inner {
            tenant: engine.tenant().to_string(),
            published: Mutex::new(Published {
                served: engine.read(),
                has_head: false,
            }),
            engine: Mutex::new(engine),
            read_only: opts.read_only,
            store,
            clock: opts.clock.clone(),
            started: Instant::now(),
            exclusive: Mutex::new(()),
            refreshing: Mutex::new(()),
            busy: AtomicBool::new(false),
            timer: Mutex::new(DerivedTimer::with_limit(
                opts.read_only,
                opts.derived_wait.0,
                opts.derived_wait.1,
            )),
            watch,
        });
        let derived = (!opts.read_only).then(|| DerivedWriter::start(Arc::downgrade(&inner)));
        let c = Connection {
            inner,
            derived: Mutex::new(derived),
        };
        if opts.load {
            c.refresh()?;
        }
        Ok(c)
    }

    /// The tenant id, lower-cased.
    pub fn tenant(&self) -> &str {
        &self.inner.tenant
    }

    /// Whether the connection never writes.
    pub fn is_read_only(&self) -> bool {
        self.inner.read_only
    }

    /// The data root of a files connection (`None` in memory).
    pub fn data(&self) -> Option<&Path> {
        self.inner.store.data()
    }

    /// The tenant's directory of a files connection (`None` in memory).
    pub fn dir(&self) -> Option<PathBuf> {
        #[cfg(feature = "files")]
        {
            self.data().map(|d| {
                crate::files::FileStore::new(d, self.tenant())
                    .dir()
                    .to_path_buf()
            })
        }
        #[cfg(not(feature = "files"))]
        None
    }

    /// For a host that serves for longer than one command (`serve`, `mcp`): over a shared
    /// database, follow its change feed, so another replica's commit is seen at once rather
    /// than within a second. Nothing to do for other stores.
    pub fn follow_changes(&self) {
        self.inner.store.follow();
    }

    /// Over a shared database: whether a read now would skip reading the head, since the
    /// last read of it is younger than [`HEAD_POLL`], no notification said it moved since,
    /// and the engine is open (docs/postgres.md). `serve` then answers from
    /// [`Connection::served`] without a hop to a blocking thread. Always `false` for other
    /// stores, and while the engine is busy with a step (the caller takes the usual path).
    pub fn head_is_fresh(&self) -> bool {
        self.inner.watch.as_ref().is_some_and(Watch::fresh)
            && self
                .inner
                .engine
                .try_lock()
                .is_ok_and(|e| !e.needs_reload())
    }

    /// The connection's clock.
    pub fn clock(&self) -> &dyn Clock {
        &*self.inner.clock
    }

    /// Whether the tenant has a head (after the last refresh).
    pub fn has_head(&self) -> bool {
        lock(&self.inner.published).has_head
    }

    /// The served state as last published (no refresh), when open.
    pub fn served(&self) -> Option<Arc<Served>> {
        lock(&self.inner.published).served.clone().ok()
    }

    /// Whether the served state was decoded from a derived record.
    pub fn served_from_derived(&self) -> bool {
        self.served().is_some_and(|s| s.from_derived())
    }

    /// Whether `warm` would ready anything (`Served::warm_pays`).
    pub fn warm_pays(&self) -> bool {
        self.served().is_some_and(|s| s.warm_pays())
    }

    fn busy(&self) -> bool {
        self.inner.busy.load(Ordering::Acquire)
    }

    /// Whether an exclusive operation of this connection (a commit, gc, verify, repair) is
    /// running: a read now answers from the published state ([`Connection::served`])
    /// without a refresh, so a host can answer it there itself.
    pub fn is_busy(&self) -> bool {
        self.busy()
    }

    fn publish(&self, engine: &Engine) {
        let mut p = lock(&self.inner.published);
        p.served = engine.read();
        p.has_head = engine.head_bytes().is_some();
    }

    /// One step of the engine under its lock, published at once.
    fn with_engine<R>(&self, f: impl FnOnce(&mut Engine) -> R) -> R {
        let mut e = lock(&self.inner.engine);
        let r = f(&mut e);
        self.publish(&e);
        r
    }

    /// After an operation: tells the derived record timer (engine.md §9.1 rule 4).
    fn after_op(&self, exclusive: bool) {
        let due = lock(&self.inner.engine).derived_due();
        let at = lock(&self.inner.timer).after_op(self.inner.ms(), due, exclusive);
        if let (Some(at), Some(w)) = (at, lock(&self.derived).as_ref()) {
            w.arm(at);
        }
    }

    /// Puts the pending derived record, if any, and waits for it (the connection writes no
    /// more derived records afterwards). Dropping the connection does the same.
    pub fn finish_derived(&self) {
        let w = lock(&self.derived).take();
        if let Some(mut w) = w {
            w.stop();
            // A record due but not scheduled yet (no operation ended since) counts too; a
            // one that would not pay (a few commits past the record opening started from,
            // `Engine::derived_pays`) is left to a host that stays open.
            let pending = lock(&self.inner.timer).close();
            let e = lock(&self.inner.engine);
            let write = (pending || e.derived_due()) && e.derived_pays();
            drop(e);
            if write {
                self.inner.write_derived();
            }
        }
    }

    /// Waits for the exclusive operation in flight (a commit, `gc`, `verify`, `repair`,
    /// `import`), then puts the pending derived record ([`Connection::finish_derived`]).
    /// The caller refuses new calls first.
    pub fn close(&self) {
        drop(lock(&self.inner.exclusive));
        self.finish_derived();
    }

    /// Runs an engine op to its end: each step under the engine lock, store IO outside it.
    fn drive<T: 'static>(&self, op: impl FnOnce(&Engine) -> Op<T>) -> Result<T, Error> {
        let mut op = op(&lock(&self.inner.engine));
        let mut answer = None;
        loop {
            match self.with_engine(|e| op.resume(e, answer.take()))? {
                Step::Done(t) => return Ok(t),
                Step::Need(n) => answer = Some(self.inner.store.serve(&self.inner.tenant, n)),
            }
        }
    }

    /// One refresh at a time. A read's refresh (`unless_busy`) gives way to an exclusive
    /// operation that started meanwhile, and, over a watched store, is skipped while nothing
    /// says the head moved since it was read less than [`HEAD_POLL`] ago.
    fn refresh_once(&self, unless_busy: bool) -> Result<bool, Error> {
        let skip = || {
            unless_busy
                && (self.busy()
                    || (self.inner.watch.as_ref().is_some_and(Watch::fresh)
                        && !lock(&self.inner.engine).needs_reload()))
        };
        if skip() {
            return Ok(false);
        }
        let _r = lock(&self.inner.refreshing);
        if skip() {
            return Ok(false);
        }
        self.read_head().map(|_| true)
    }

    /// The refresh itself (the caller holds `refreshing`). Over a watched store the stale
    /// flag is cleared before the head is read, so a notice arriving meanwhile is kept.
    fn read_head(&self) -> Result<OpenResult, Error> {
        if let Some(w) = &self.inner.watch {
            w.stale.store(false, Ordering::Release);
        }
        let r = self.drive(Engine::refresh);
        if let Some(w) = &self.inner.watch {
            match &r {
                Ok(_) => *lock(&w.last) = Some(Instant::now()),
                Err(_) => w.stale.store(true, Ordering::Release),
            }
        }
        r
    }

    /// Runs a library operation under the core's connection policy: the host supplies the
    /// lock (exclusive ops one at a time, with `writer.lock` on files), the refreshes, the
    /// clock and the store. `on_commit` may answer a commit step instead of the store.
    fn run<T: 'static>(
        &self,
        op: ConnOp<'_, T>,
        on_commit: &mut dyn FnMut(&PreparedCommit) -> Option<Answer>,
    ) -> Result<T, Error> {
        self.run_with(op, &mut || {}, on_commit)
    }

    /// [`Connection::run`] with a hook that runs when the commit time is read, just before
    /// the commit is prepared (compiled).
    fn run_with<T: 'static>(
        &self,
        mut op: ConnOp<'_, T>,
        on_prepare: &mut dyn FnMut(),
        on_commit: &mut dyn FnMut(&PreparedCommit) -> Option<Answer>,
    ) -> Result<T, Error> {
        let exclusive = op.exclusive();
        // An install of what was prepared outside (`warm_prepared`) writes nothing to the
        // store and takes the engine for a moment: it waits for no other process's commit
        // and leaves reads their refresh (docs/connection.md rule 7).
        let quiet = op.quiet();
        let inner = &*self.inner;
        let _x = exclusive.then(|| lock(&inner.exclusive));
        let _w = if exclusive && !quiet && !inner.read_only {
            inner.store.lock_writer(&inner.tenant)?
        } else {
            None
        };
        let _busy = (exclusive && !quiet).then(|| {
            inner.busy.store(true, Ordering::Release);
            Busy(&inner.busy)
        });
        let busy = !exclusive && self.busy();
        if busy {
            // A read while a commit (or verify, gc, …) runs answers from the published state
            // without waiting for the engine, which a commit may hold for a long compile.
            let served = lock(&inner.published).served.clone();
            if let Some(ConnStep::Done(r)) = op.published_read(served.as_ref()) {
                // No `after_op`: it would wait for the engine, and a read arms no timer.
                return r;
            }
        }
        let mut step = self.with_engine(|e| op.begin(e, busy, inner.read_only));
        // A read's engine op reads the store one refresh at a time.
        let mut reading: Option<MutexGuard<'_, ()>> = None;
        loop {
            let answer = match step {
                ConnStep::Done(r) => {
                    drop(reading);
                    drop(_busy);
                    self.after_op(exclusive);
                    return r;
                }
                ConnStep::Refresh { unless_busy } => {
                    reading = None;
                    ConnAnswer::Refreshed(self.refresh_once(unless_busy))
                }
                ConnStep::Store(need) => {
                    if !exclusive && reading.is_none() {
                        reading = Some(lock(&inner.refreshing));
                    }
                    let answer = match need {
                        Need::Commit(p) => match on_commit(&p) {
                            Some(a) => a,
                            None => inner.store.serve(&inner.tenant, Need::Commit(p)),
                        },
                        n => inner.store.serve(&inner.tenant, n),
                    };
                    ConnAnswer::Store(answer)
                }
                ConnStep::Now => {
                    on_prepare();
                    // A shared database's put times come from its clock, so `gc` does too.
                    let millis = match inner.store.now_millis() {
                        Some(Ok(m)) => Ok(m),
                        Some(Err(e)) => Err(e),
                        None => Ok(inner.clock.millis()),
                    };
                    match millis {
                        Ok(millis) => ConnAnswer::Now {
                            commit_time: inner.clock.commit_time(),
                            millis,
                        },
                        Err(e) => {
                            drop(reading);
                            drop(_busy);
                            let e = self.with_engine(|eng| op.abandon(eng, e));
                            self.after_op(exclusive);
                            return Err(e);
                        }
                    }
                }
                ConnStep::Read => {
                    reading = None;
                    let served = lock(&inner.published).served.clone();
                    op.run_read(served.as_ref());
                    ConnAnswer::Read
                }
            };
            step = self.with_engine(|e| op.resume(e, answer));
        }
    }

    /// Reads the store's head and loads it when it moved.
    pub fn refresh(&self) -> Result<OpenResult, Error> {
        let _r = lock(&self.inner.refreshing);
        let r = self.read_head();
        self.after_op(false);
        r
    }

    /// The served state, after a refresh (or, while a commit is in flight, as last
    /// published).
    pub fn read(&self) -> Result<Arc<Served>, Error> {
        self.run(ConnOp::read(|_| Ok(())), &mut |_| None)?;
        lock(&self.inner.published).served.clone()
    }

    /// Runs a read over the served state after a refresh. When the read met a text of a
    /// derived record that does not match its source hash, the engine compiles the state
    /// from the sources and the read runs once more: a bad derived record never fails a
    /// read (engine.md §9.1 rule 4).
    pub fn with_read<T: 'static>(
        &self,
        mut f: impl FnMut(&Served) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.run(ConnOp::read(&mut f), &mut |_| None)
    }

    /// Reads and verifies the source blobs behind a read that returns sources (`get` with
    /// `source` for `ids`, or every document for `None`: export), when the served state came
    /// from a derived record (engine.md §9.1 rule 1).
    pub fn check_sources(&self, ids: Option<Vec<String>>) -> Result<(), Error> {
        self.run(connection::check_sources(ids), &mut |_| None)
    }

    /// The manifest TSV of the tenant or of one bundle (read.md §2), for today.
    pub fn manifest(&self, bundle: Option<&str>) -> Result<String, Error> {
        let today = self.inner.clock.today();
        self.with_read(|s| {
            langonrock_core::manifest::manifest(s.model(), self.tenant(), bundle, &today)
        })
    }

    /// The advice sentence of the whole manifest for today (agent.md §7.2), measured row by
    /// row without building the manifest's text.
    pub fn advice(&self) -> Result<String, Error> {
        let today = self.inner.clock.today();
        self.with_read(|s| {
            Ok(langonrock_core::manifest::advice(
                s.model(),
                self.tenant(),
                &today,
            ))
        })
    }

    /// A search (search.md): the search TSV for today.
    pub fn search(
        &self,
        query: &str,
        opts: &langonrock_core::search::SearchOptions,
    ) -> Result<String, Error> {
        let today = self.inner.clock.today();
        self.with_read(|s| s.search(self.tenant(), query, opts, &today))
    }

    /// One document's exact text and hash (read.md §6.2).
    pub fn read_source(&self, bundle: &str, path: &str) -> Result<Option<SourceContent>, Error> {
        self.run(connection::read_source(bundle, path), &mut |_| None)
    }

    /// A document's current hash, or `None` when it does not exist or the lookup fails
    /// (agent.md §6.3.2: lookup errors are ignored).
    pub fn current_hash(&self, bundle: &str, path: &str) -> Option<String> {
        self.with_read(|s| Ok(s.source_hash(bundle, path)))
            .ok()
            .flatten()
    }

    /// `write` (engine.md §4.1).
    pub fn write(
        &self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        self.run(
            connection::write(bundle, path, content, replaces),
            &mut |_| None,
        )
    }

    /// `delete` (engine.md §4.2).
    pub fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult, Error> {
        self.run(connection::delete(bundle, path, replaces), &mut |_| None)
    }

    /// `deleteBundle` (engine.md §4.4).
    pub fn delete_bundle(&self, bundle: &str) -> Result<RevisionResult, Error> {
        self.run(connection::delete_bundle(bundle), &mut |_| None)
    }

    /// `transact` (engine.md §5).
    pub fn transact(&self, txn: Transaction) -> Result<RevisionResult, Error> {
        self.run(connection::transact(txn), &mut |_| None)
    }

    /// `restore` (engine.md §7).
    pub fn restore(&self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        self.run(connection::restore(req), &mut |_| None)
    }

    /// `import` (cli.md §4). `unchanged` runs after the commit is prepared and before it is
    /// stored: a message from it aborts the commit with that message, nothing stored.
    pub fn import(
        &self,
        req: ImportRequest,
        unchanged: &mut dyn FnMut() -> Option<String>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ImportResult, Error> {
        let n = req.documents.len();
        let progress = std::cell::RefCell::new(progress);
        let mut on_prepare =
            || (progress.borrow_mut())(&format!("import: compiling {n} documents"));
        let mut on_commit = |p: &PreparedCommit| match unchanged() {
            Some(m) => Some(Answer::Outcome(CommitOutcome::Failed(StoreError::Failed(
                m,
            )))),
            None => {
                (progress.borrow_mut())(&format!("import: storing {} records", p.records.len()));
                None
            }
        };
        self.run_with(connection::import(req), &mut on_prepare, &mut on_commit)
    }

    /// `history` (engine.md §6), a read.
    pub fn history(&self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        self.run(connection::history(req), &mut |_| None)
    }

    /// `gc` (engine.md §10) at the clock's time.
    pub fn gc(&self, keep: i64, grace_ms: u64, dry_run: bool) -> Result<GcResult, Error> {
        let opts = GcOptions {
            keep,
            dry_run,
            grace_ms,
            now: 0,
        };
        self.run(connection::gc(opts), &mut |_| None)
    }

    /// `warm` (`Engine::warm`): readies a connection opened from a derived record for
    /// commits; whether there was anything to do.
    ///
    /// The work runs over the published state outside the engine, so reads keep refreshing
    /// (a commit of another process is seen) and commits keep running meanwhile; the
    /// exclusive op only installs it (docs/connection.md, rule 7). A state replaced while
    /// the work ran came from a commit or a refresh, which readied what they need: then
    /// nothing is installed and the answer is false. With no state open, the op itself
    /// answers (the engine's error).
    pub fn warm(&self) -> Result<bool, Error> {
        let Some(served) = self.served() else {
            return self.run(connection::warm(), &mut |_| None);
        };
        // Busy with a step (a commit's compile): assume the linker is still to build.
        let linker = self
            .inner
            .engine
            .try_lock()
            .map_or(true, |e| !e.linker_ready());
        let prepared = langonrock_core::engine::PreparedWarm::new(&served, linker);
        drop(served);
        let installed = self.run(connection::warm_prepared(prepared), &mut |_| None)?;
        Ok(installed.unwrap_or(false))
    }

    /// `verify` (engine.md §11).
    pub fn verify(&self) -> Result<VerifyResult, Error> {
        self.run(connection::verify(), &mut |_| None)
    }

    /// `repair` (engine.md §11.4).
    pub fn repair(&self, req: RepairRequest) -> Result<RepairResult, Error> {
        self.run(connection::repair(req), &mut |_| None)
    }

    /// A tool call as the MCP server answers it (agent.md §6): the arguments checked
    /// against the tool's schema, then the core's tool op over this connection. Every tool
    /// of the table is callable; a server offering a subset checks names first.
    pub fn call_tool(&self, name: &str, args: Option<&serde_json::Value>) -> Reply {
        match tools::parse_call(name, args) {
            Ok(call) => self.tool(call),
            Err(m) => Reply::error(m),
        }
    }

    /// A validated tool call, run by the core's tool op (`ToolOp`): each connection
    /// operation it needs is answered by `connection::local` under the policy.
    pub fn tool(&self, call: ToolCall) -> Reply {
        let mut op = ToolOp::new(call, self.inner.read_only);
        let mut answer = None;
        loop {
            match op.resume(answer.take()) {
                ToolStep::Done(reply) => return reply,
                ToolStep::Need(need) => {
                    let conn_op = local::answer(need, self.tenant(), &self.inner.clock.today());
                    answer = Some(match self.run(conn_op, &mut |_| None) {
                        Ok(a) => a,
                        // Mapped ops always succeed; this is only for safety.
                        Err(e) => ToolAnswer::Text(Err(e)),
                    });
                }
            }
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.finish_derived();
    }
}

#[cfg(test)]
mod tests;
