//! Connection policy (docs/engine.md §8, docs/connection.md): what a host does around the
//! engine's operations, as sans-IO code that every host runs — the native `Connection` of the
//! `langonrock` crate and the package's JS `Connection` alike.
//!
//! A library operation is a [`ConnOp`]: a step machine over the engine that owns the rules
//! a connection follows.
//! - **Refresh.** Reads refresh to the store's head first, unless an exclusive operation (a
//!   commit, `gc`, `verify`, `repair`, `import`) is in flight: then they are served from the
//!   last published state (engine.md §8.6). `history` is a read like the others. Commits and
//!   `gc` refresh before they prepare.
//! - **The one retry.** A commit that lost its head swap (the store answered `conflict`,
//!   seen as a flag on the answer, never by message text) is prepared once more when the
//!   request has no `expectedRevision` (engine.md §8.7). A read that met a text of a derived
//!   record that does not match its source runs once more after a refresh, which compiles
//!   (engine.md §9.1 rule 4).
//! - **Read-only.** A read-only connection refuses every change with [`READ_ONLY`] before it
//!   looks at the request, and never writes (a dry-run `gc` is allowed).
//! - **Indeterminate outcomes** are reported once as `INDETERMINATE_COMMIT` carrying the
//!   revision, and never retried; the engine reloads before its next operation. A host that
//!   lost an outcome (its store step threw) calls [`ConnOp::abandon`], which surfaces the
//!   same error.
//! - **Derived records** are written when the commits pause for [`DERIVED_DELAY_MS`]
//!   ([`DerivedTimer`]), and at once when the connection closes.
//!
//! The host keeps what only it can: a lock or queue that runs exclusive operations one at a
//! time ([`ConnOp::exclusive`]), one refresh at a time ([`ConnStep::Refresh`]), a clock
//! ([`ConnStep::Now`]), a timer, and the store ([`ConnStep::Store`]). Reads compute over the
//! served state outside the engine ([`ConnStep::Read`]), so a multi-threaded host runs them
//! in parallel.

pub mod local;
mod timer;

pub use timer::{DerivedTimer, DERIVED_DELAY_MS};

use crate::engine::{
    Answer, CommitOutcome, DeleteResult, Engine, GcOptions, GcResult, HistoryPage, HistoryRequest,
    ImportRequest, ImportResult, Need, Op, PreparedWarm, RepairRequest, RepairResult,
    RestoreRequest, RevisionResult, Served, SourceContent, Step, Transaction, VerifyResult,
    WriteResult,
};
use crate::error::{Error, Result};
use std::sync::Arc;

/// The refusal of a change on a read-only connection.
pub const READ_ONLY: &str = "connection is read-only";

/// The refusal of every call on a connection after `close()` (`INVALID`, js.md §1.2).
pub const CLOSED: &str = "connection is closed";

/// What a [`ConnOp`] asks of its host next.
#[derive(Debug)]
pub enum ConnStep<T> {
    /// Refresh the engine to the store's head: run [`Engine::refresh`] to its end, one
    /// refresh at a time per engine, and answer [`ConnAnswer::Refreshed`]. With
    /// `unless_busy`, a host whose exclusive operation started meanwhile answers
    /// `Refreshed(Ok(false))` without refreshing.
    Refresh {
        /// The refresh is a read's: skip it while an exclusive operation runs.
        unless_busy: bool,
    },
    /// Perform this store step and answer [`ConnAnswer::Store`].
    Store(Need),
    /// Answer [`ConnAnswer::Now`] with the host clock's commit time.
    Now,
    /// Call [`ConnOp::run_read`] with the served state (the engine's, or the host's published
    /// copy of it), outside any engine lock, then answer [`ConnAnswer::Read`].
    Read,
    /// The operation ended.
    Done(Result<T>),
}

/// The host's answer to a [`ConnStep`].
#[derive(Debug)]
pub enum ConnAnswer {
    /// The refresh ran (`true`), was skipped (`false`), or failed.
    Refreshed(Result<bool>),
    /// The store's answer.
    Store(Answer),
    /// The clock: the commit time (ISO-8601 UTC with milliseconds) and the same instant in
    /// milliseconds since the epoch (for `gc`).
    Now {
        /// `YYYY-MM-DDTHH:MM:SS.sssZ`.
        commit_time: String,
        /// Milliseconds since the Unix epoch, in the store's put-time unit.
        millis: u64,
    },
    /// [`ConnOp::run_read`] ran.
    Read,
}

type ReadFn<'a, T> = Box<dyn FnMut(&Served) -> Result<T> + 'a>;
type MakeOp<'a, T> = Box<dyn FnMut(&Engine, &str, u64) -> Op<T> + 'a>;
type ReadOp<'a, T> = Box<dyn FnMut(&Engine) -> Op<T> + 'a>;

enum Body<'a, T> {
    /// A read of the served state, after an optional engine op (e.g. `checkSources`).
    Read {
        pre: Option<ReadOp<'a, ()>>,
        f: ReadFn<'a, T>,
    },
    /// An engine op that reads the store (`history`, `readSource`), after a refresh.
    EngineRead(ReadOp<'a, T>),
    /// A change refused before it ran (its request did not validate): after the read-only
    /// check, which comes first.
    Refused { error: Error, writes: bool },
    /// An exclusive engine op, prepared from the clock.
    Exclusive {
        make: MakeOp<'a, T>,
        /// Refresh before preparing.
        refresh: bool,
        /// Prepared once more after a lost head swap.
        retry: bool,
        /// Refused on a read-only connection.
        writes: bool,
        /// Only installs what was prepared outside the engine (`warm_prepared`): it takes
        /// no store lock and reads meanwhile refresh as usual (connection.md rule 7).
        quiet: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Refreshing,
    WaitingNow,
    /// An engine op is running (`pre` for a read, the op itself otherwise).
    Running,
    Reading,
    Finished,
}

/// One library operation under the connection policy (see the module documentation).
/// Start it with [`ConnOp::begin`], then resume it with the answer to each [`ConnStep`].
pub struct ConnOp<'a, T> {
    inner: Box<dyn Machine<T> + 'a>,
}

/// What a [`ConnOp`] runs: the policy over one operation, or a mapped one.
trait Machine<T> {
    fn exclusive(&self) -> bool;
    fn quiet(&self) -> bool;
    fn begin(&mut self, engine: &mut Engine, busy: bool, read_only: bool) -> ConnStep<T>;
    fn run_read(&mut self, served: std::result::Result<&Arc<Served>, &Error>);
    fn resume(&mut self, engine: &mut Engine, answer: ConnAnswer) -> ConnStep<T>;
    fn abandon(&mut self, engine: &mut Engine, error: Error) -> Error;
    fn published_read(
        &mut self,
        served: std::result::Result<&Arc<Served>, &Error>,
    ) -> Option<ConnStep<T>>;
}

struct Mapped<'a, T, U> {
    inner: Box<dyn Machine<T> + 'a>,
    f: Option<Box<dyn FnOnce(Result<T>) -> U + 'a>>,
}

impl<T, U> Mapped<'_, T, U> {
    fn map(&mut self, step: ConnStep<T>) -> ConnStep<U> {
        match step {
            ConnStep::Refresh { unless_busy } => ConnStep::Refresh { unless_busy },
            ConnStep::Store(n) => ConnStep::Store(n),
            ConnStep::Now => ConnStep::Now,
            ConnStep::Read => ConnStep::Read,
            ConnStep::Done(r) => match self.f.take() {
                Some(f) => ConnStep::Done(Ok(f(r))),
                None => ConnStep::Done(Err(Error::Invalid("operation already finished".into()))),
            },
        }
    }
}

impl<T, U> Machine<U> for Mapped<'_, T, U> {
    fn exclusive(&self) -> bool {
        self.inner.exclusive()
    }
    fn quiet(&self) -> bool {
        self.inner.quiet()
    }
    fn begin(&mut self, engine: &mut Engine, busy: bool, read_only: bool) -> ConnStep<U> {
        let s = self.inner.begin(engine, busy, read_only);
        self.map(s)
    }
    fn run_read(&mut self, served: std::result::Result<&Arc<Served>, &Error>) {
        self.inner.run_read(served)
    }
    fn resume(&mut self, engine: &mut Engine, answer: ConnAnswer) -> ConnStep<U> {
        let s = self.inner.resume(engine, answer);
        self.map(s)
    }
    fn abandon(&mut self, engine: &mut Engine, error: Error) -> Error {
        self.inner.abandon(engine, error)
    }
    fn published_read(
        &mut self,
        served: std::result::Result<&Arc<Served>, &Error>,
    ) -> Option<ConnStep<U>> {
        let s = self.inner.published_read(served)?;
        Some(self.map(s))
    }
}

impl<'a, T: 'static> ConnOp<'a, T> {
    fn new(body: Body<'a, T>) -> ConnOp<'a, T> {
        ConnOp {
            inner: Box::new(Policy::new(body)),
        }
    }

    /// An op whose result (success or error) is mapped by `f`; the mapped op always
    /// succeeds with `f`'s value.
    pub fn map<U: 'static>(self, f: impl FnOnce(Result<T>) -> U + 'a) -> ConnOp<'a, U> {
        ConnOp {
            inner: Box::new(Mapped {
                inner: self.inner,
                f: Some(Box::new(f)),
            }),
        }
    }

    /// Whether the op must run alone (after earlier exclusive ops, before later ones), with
    /// reads meanwhile served from the published state.
    pub fn exclusive(&self) -> bool {
        self.inner.exclusive()
    }

    /// Whether an exclusive op only installs what was prepared outside the engine
    /// (`warm_prepared`): a host runs it after earlier exclusive ops and before later ones,
    /// but without the store's writer lock and without making reads skip their refresh, so
    /// a read meanwhile still sees another process's commit (connection.md rule 7).
    pub fn quiet(&self) -> bool {
        self.inner.quiet()
    }

    /// Starts the op. `busy`: an exclusive operation of this connection is in flight (for a
    /// read: serve the published state, no refresh). `read_only`: the connection refuses
    /// changes.
    pub fn begin(&mut self, engine: &mut Engine, busy: bool, read_only: bool) -> ConnStep<T> {
        self.inner.begin(engine, busy, read_only)
    }

    /// Runs the read of a [`ConnStep::Read`] over `served` (the engine's served state or
    /// its error). Call it outside any engine lock; then resume with [`ConnAnswer::Read`].
    pub fn run_read(&mut self, served: std::result::Result<&Arc<Served>, &Error>) {
        self.inner.run_read(served)
    }

    /// Advances the op with the answer to its last step.
    pub fn resume(&mut self, engine: &mut Engine, answer: ConnAnswer) -> ConnStep<T> {
        self.inner.resume(engine, answer)
    }

    /// For a host that cannot answer the last step (its store call threw): ends the op.
    /// A commit whose outcome was lost is indeterminate (the engine reloads before its next
    /// operation); anything else fails with `error`.
    pub fn abandon(&mut self, engine: &mut Engine, error: Error) -> Error {
        self.inner.abandon(engine, error)
    }

    /// While an exclusive operation is in flight (`busy`), a plain read needs no engine: it
    /// answers from the published state. This runs such an op to its end over `served` and
    /// returns its [`ConnStep::Done`], without taking the engine, so a host whose engine is
    /// held by a long commit step (compiling a large document) keeps answering reads. Any
    /// other op is left untouched (`None`): the host starts it with [`ConnOp::begin`].
    pub fn published_read(
        &mut self,
        served: std::result::Result<&Arc<Served>, &Error>,
    ) -> Option<ConnStep<T>> {
        self.inner.published_read(served)
    }
}

struct Policy<'a, T> {
    body: Body<'a, T>,
    phase: Phase,
    busy: bool,
    read_only: bool,
    op: Option<Op<T>>,
    pre: Option<Op<()>>,
    attempts: u8,
    lost_swap: bool,
    read_again: bool,
    read_result: Option<Result<T>>,
    /// Whether this read already ran once more after a bad derived record.
    reread: bool,
}

impl<'a, T: 'static> Policy<'a, T> {
    fn new(body: Body<'a, T>) -> Policy<'a, T> {
        Policy {
            body,
            phase: Phase::Start,
            busy: false,
            read_only: false,
            op: None,
            pre: None,
            attempts: 0,
            lost_swap: false,
            read_again: false,
            read_result: None,
            reread: false,
        }
    }

    fn exclusive(&self) -> bool {
        matches!(self.body, Body::Exclusive { .. } | Body::Refused { .. })
    }

    fn quiet(&self) -> bool {
        matches!(self.body, Body::Exclusive { quiet: true, .. })
    }

    /// Starts the op. `busy`: an exclusive operation of this connection is in flight (for a
    /// read: serve the published state, no refresh). `read_only`: the connection refuses
    /// changes.
    fn begin(&mut self, engine: &mut Engine, busy: bool, read_only: bool) -> ConnStep<T> {
        self.busy = busy;
        self.read_only = read_only;
        if self.phase != Phase::Start {
            return self.fail(Error::Invalid("operation already started".into()));
        }
        match &self.body {
            Body::Exclusive { writes: true, .. } | Body::Refused { writes: true, .. }
                if read_only =>
            {
                self.fail(Error::Invalid(READ_ONLY.into()))
            }
            Body::Refused { error, .. } => {
                let e = error.clone();
                self.fail(e)
            }
            Body::Exclusive { retry, .. } => {
                self.attempts = if *retry { 2 } else { 1 };
                self.start_attempt()
            }
            _ if busy => self.proceed(engine),
            _ => {
                self.phase = Phase::Refreshing;
                ConnStep::Refresh { unless_busy: true }
            }
        }
    }

    fn fail(&mut self, e: Error) -> ConnStep<T> {
        self.phase = Phase::Finished;
        ConnStep::Done(Err(e))
    }

    fn start_attempt(&mut self) -> ConnStep<T> {
        self.attempts -= 1;
        self.lost_swap = false;
        match &self.body {
            Body::Exclusive { refresh: true, .. } => {
                self.phase = Phase::Refreshing;
                ConnStep::Refresh { unless_busy: false }
            }
            _ => {
                self.phase = Phase::WaitingNow;
                ConnStep::Now
            }
        }
    }

    /// What follows the refresh (or takes its place while busy).
    fn proceed(&mut self, engine: &mut Engine) -> ConnStep<T> {
        if self.reread {
            self.phase = Phase::Reading;
            return ConnStep::Read;
        }
        self.phase = Phase::Running;
        match &mut self.body {
            Body::Exclusive { .. } | Body::Refused { .. } => {
                self.phase = Phase::WaitingNow;
                ConnStep::Now
            }
            Body::Read { pre: None, .. } => {
                self.phase = Phase::Reading;
                ConnStep::Read
            }
            Body::Read { pre: Some(pre), .. } => {
                self.pre = Some(pre(engine));
                self.step_op(engine, None)
            }
            Body::EngineRead(make) => {
                self.op = Some(make(engine));
                self.step_op(engine, None)
            }
        }
    }

    /// Runs the read of a [`ConnStep::Read`] over `served` (the engine's served state or
    /// its error). Call it outside any engine lock; then resume with [`ConnAnswer::Read`].
    fn run_read(&mut self, served: std::result::Result<&Arc<Served>, &Error>) {
        let Body::Read { f, .. } = &mut self.body else {
            return;
        };
        let r = match served {
            Ok(s) => {
                let r = f(s);
                // A bad derived record never fails a read: once more on a compiled state.
                self.read_again = r.is_err() && s.derived_failed() && !self.busy && !self.reread;
                r
            }
            Err(e) => Err(e.clone()),
        };
        self.read_result = Some(r);
    }

    /// Advances the op with the answer to its last step.
    fn resume(&mut self, engine: &mut Engine, answer: ConnAnswer) -> ConnStep<T> {
        match (self.phase, answer) {
            (Phase::Refreshing, ConnAnswer::Refreshed(Err(e))) => self.fail(e),
            (Phase::Refreshing, ConnAnswer::Refreshed(Ok(_))) => self.proceed(engine),
            (
                Phase::WaitingNow,
                ConnAnswer::Now {
                    commit_time,
                    millis,
                },
            ) => {
                let Body::Exclusive { make, .. } = &mut self.body else {
                    return self.fail(Error::Invalid("unexpected clock answer".into()));
                };
                self.op = Some(make(engine, &commit_time, millis));
                self.phase = Phase::Running;
                self.step_op(engine, None)
            }
            (Phase::Running, ConnAnswer::Store(a)) => {
                if matches!(a, Answer::Outcome(CommitOutcome::Conflict)) {
                    self.lost_swap = true;
                }
                self.step_op(engine, Some(a))
            }
            (Phase::Reading, ConnAnswer::Read) => {
                let r = self
                    .read_result
                    .take()
                    .unwrap_or_else(|| Err(Error::Invalid("the read did not run".into())));
                if std::mem::take(&mut self.read_again) {
                    self.reread = true;
                    self.phase = Phase::Refreshing;
                    return ConnStep::Refresh { unless_busy: true };
                }
                self.phase = Phase::Finished;
                ConnStep::Done(r)
            }
            (Phase::Finished, _) => {
                ConnStep::Done(Err(Error::Invalid("operation already finished".into())))
            }
            _ => {
                let e = engine
                    .forget_commit()
                    .unwrap_or_else(|| Error::Invalid("answer does not match the step".into()));
                self.fail(e)
            }
        }
    }

    /// Resumes the running engine op (or a read's `pre` op).
    fn step_op(&mut self, engine: &mut Engine, answer: Option<Answer>) -> ConnStep<T> {
        if let Some(pre) = &mut self.pre {
            return match pre.resume(engine, answer) {
                Ok(Step::Need(n)) => ConnStep::Store(n),
                Ok(Step::Done(())) => {
                    self.pre = None;
                    self.phase = Phase::Reading;
                    ConnStep::Read
                }
                Err(e) => self.fail(e),
            };
        }
        let Some(op) = &mut self.op else {
            return self.fail(Error::Invalid("no engine op to run".into()));
        };
        match op.resume(engine, answer) {
            Ok(Step::Need(n)) => ConnStep::Store(n),
            Ok(Step::Done(t)) => {
                self.op = None;
                self.phase = Phase::Finished;
                ConnStep::Done(Ok(t))
            }
            Err(e) => {
                self.op = None;
                if self.lost_swap && self.attempts > 0 {
                    return self.start_attempt();
                }
                self.fail(e)
            }
        }
    }

    /// For a host that cannot answer the last step (its store call threw): ends the op.
    /// A commit whose outcome was lost is indeterminate (the engine reloads before its next
    /// operation); anything else fails with `error`.
    fn abandon(&mut self, engine: &mut Engine, error: Error) -> Error {
        self.phase = Phase::Finished;
        self.op = None;
        self.pre = None;
        engine.forget_commit().unwrap_or(error)
    }
}

impl<T: 'static> Machine<T> for Policy<'_, T> {
    fn exclusive(&self) -> bool {
        Policy::exclusive(self)
    }
    fn quiet(&self) -> bool {
        Policy::quiet(self)
    }
    fn begin(&mut self, engine: &mut Engine, busy: bool, read_only: bool) -> ConnStep<T> {
        Policy::begin(self, engine, busy, read_only)
    }
    fn run_read(&mut self, served: std::result::Result<&Arc<Served>, &Error>) {
        Policy::run_read(self, served)
    }
    fn resume(&mut self, engine: &mut Engine, answer: ConnAnswer) -> ConnStep<T> {
        Policy::resume(self, engine, answer)
    }
    fn abandon(&mut self, engine: &mut Engine, error: Error) -> Error {
        Policy::abandon(self, engine, error)
    }
    fn published_read(
        &mut self,
        served: std::result::Result<&Arc<Served>, &Error>,
    ) -> Option<ConnStep<T>> {
        // The path `begin` takes for a plain read while busy, which never uses the engine:
        // no refresh, one read, no second read after a bad derived record.
        if self.phase != Phase::Start || !matches!(self.body, Body::Read { pre: None, .. }) {
            return None;
        }
        self.busy = true;
        self.phase = Phase::Reading;
        self.run_read(served);
        self.read_again = false;
        self.phase = Phase::Finished;
        let r = self
            .read_result
            .take()
            .unwrap_or_else(|| Err(Error::Invalid("the read did not run".into())));
        Some(ConnStep::Done(r))
    }
}

impl<'a, T: 'static> ConnOp<'a, T> {
    /// A read over the served state.
    pub fn read(f: impl FnMut(&Served) -> Result<T> + 'a) -> ConnOp<'a, T> {
        ConnOp::new(Body::Read {
            pre: None,
            f: Box::new(f),
        })
    }

    /// A read over the served state after an engine op that checks what it will read (the
    /// source blobs behind `get` with `source`, engine.md §9.1 rule 1).
    pub fn read_after(
        pre: impl FnMut(&Engine) -> Op<()> + 'a,
        f: impl FnMut(&Served) -> Result<T> + 'a,
    ) -> ConnOp<'a, T> {
        ConnOp::new(Body::Read {
            pre: Some(Box::new(pre)),
            f: Box::new(f),
        })
    }

    /// A read that runs an engine op over the store after the refresh.
    pub fn engine_read(make: impl FnMut(&Engine) -> Op<T> + 'a) -> ConnOp<'a, T> {
        ConnOp::new(Body::EngineRead(Box::new(make)))
    }

    /// A commit, prepared by `make(engine, commit_time)` after a refresh, prepared once more
    /// after a lost head swap when `retry` (the request has no expected revision).
    pub fn commit(retry: bool, mut make: impl FnMut(&Engine, &str) -> Op<T> + 'a) -> ConnOp<'a, T> {
        ConnOp::new(Body::Exclusive {
            make: Box::new(move |e, t, _| make(e, t)),
            refresh: true,
            retry,
            writes: true,
            quiet: false,
        })
    }

    /// A change whose request failed validation before it could be prepared: queued like the
    /// change it stands for, refused `READ_ONLY` first on a read-only connection (when
    /// `writes`), else with `error`.
    pub fn refused(error: Error, writes: bool) -> ConnOp<'a, T> {
        ConnOp::new(Body::Refused { error, writes })
    }

    /// An exclusive maintenance op (`gc`, `verify`, `repair`): `make(engine, millis)`, after a
    /// refresh when `refresh`; refused on a read-only connection when `writes`.
    pub fn maintain(
        refresh: bool,
        writes: bool,
        mut make: impl FnMut(&Engine, u64) -> Op<T> + 'a,
    ) -> ConnOp<'a, T> {
        ConnOp::new(Body::Exclusive {
            make: Box::new(move |e, _, ms| make(e, ms)),
            refresh,
            retry: false,
            writes,
            quiet: false,
        })
    }
}

// ---------------------------------------------------------------------------------------
// The library operations (js.md §3, docs/README.md §2.5), as connection ops

/// `history` (engine.md §6): a read.
pub fn history(req: HistoryRequest) -> ConnOp<'static, HistoryPage> {
    ConnOp::engine_read(move |e| e.history(req.clone()))
}

/// `readSource` (read.md §6.2): a read.
pub fn read_source(bundle: &str, path: &str) -> ConnOp<'static, Option<SourceContent>> {
    let (b, p) = (bundle.to_string(), path.to_string());
    ConnOp::engine_read(move |e| e.read_source(&b, &p))
}

/// Checks the source blobs behind a read that returns sources (engine.md §9.1 rule 1): a
/// read.
pub fn check_sources(ids: Option<Vec<String>>) -> ConnOp<'static, ()> {
    ConnOp::engine_read(move |e| e.check_sources(ids.clone()))
}

/// `write` (engine.md §4.1).
pub fn write(
    bundle: &str,
    path: &str,
    content: impl Into<crate::engine::Content>,
    replaces: Option<&str>,
) -> ConnOp<'static, WriteResult> {
    let (b, p, r) = (
        bundle.to_string(),
        path.to_string(),
        replaces.map(str::to_string),
    );
    let content = content.into();
    ConnOp::commit(true, move |e, t| {
        e.write(&b, &p, content.clone(), r.as_deref(), t)
    })
}

/// `delete` (engine.md §4.2).
pub fn delete(bundle: &str, path: &str, replaces: Option<&str>) -> ConnOp<'static, DeleteResult> {
    let (b, p, r) = (
        bundle.to_string(),
        path.to_string(),
        replaces.map(str::to_string),
    );
    ConnOp::commit(true, move |e, t| e.delete(&b, &p, r.as_deref(), t))
}

/// `deleteBundle` (engine.md §4.4).
pub fn delete_bundle(bundle: &str) -> ConnOp<'static, RevisionResult> {
    let b = bundle.to_string();
    ConnOp::commit(true, move |e, t| e.delete_bundle(&b, t))
}

/// `transact` (engine.md §5): retried after a lost swap only without `expectedRevision`.
pub fn transact(txn: Transaction) -> ConnOp<'static, RevisionResult> {
    let retry = txn.expected_revision.is_none();
    ConnOp::commit(retry, move |e, t| e.transact(txn.clone(), t))
}

/// `restore` (engine.md §7): never retried (it names the expected head).
pub fn restore(req: RestoreRequest) -> ConnOp<'static, RevisionResult> {
    ConnOp::commit(false, move |e, t| e.restore(req.clone(), t))
}

/// `import` (cli.md §4): never retried.
pub fn import(req: ImportRequest) -> ConnOp<'static, ImportResult> {
    let mut req = Some(req);
    ConnOp::commit(false, move |e, t| {
        e.import(
            req.take().unwrap_or_else(|| ImportRequest {
                location: String::new(),
                documents: Vec::new(),
                strict: false,
            }),
            t,
        )
    })
}

/// `gc` (engine.md §10) at the clock's time (`opts.now` is replaced); a dry run is allowed
/// on a read-only connection.
pub fn gc(opts: GcOptions) -> ConnOp<'static, GcResult> {
    ConnOp::maintain(true, !opts.dry_run, move |e, now| {
        e.gc(GcOptions { now, ..opts })
    })
}

/// `verify` (engine.md §11): exclusive, no refresh (it reads the store itself).
pub fn verify() -> ConnOp<'static, VerifyResult> {
    ConnOp::maintain(false, false, |e, _| e.verify())
}

/// `warm` (`Engine::warm`): exclusive, like a commit, so that it never runs while one is in
/// flight; no refresh and no store access.
pub fn warm() -> ConnOp<'static, bool> {
    ConnOp::maintain(false, false, |e, _| e.warm_op())
}

/// `warm` for a host with threads, its work prepared outside the engine
/// (docs/connection.md, rule 7): exclusive, but only to install `prepared`; `None` when the
/// state it was prepared over is no longer the served one.
pub fn warm_prepared(prepared: PreparedWarm) -> ConnOp<'static, Option<bool>> {
    let mut prepared = Some(prepared);
    ConnOp::new(Body::Exclusive {
        make: Box::new(move |e, _, _| e.warm_prepared_op(prepared.take())),
        refresh: false,
        retry: false,
        writes: false,
        quiet: true,
    })
}

/// `repair` (engine.md §11.4): exclusive, no refresh (it runs on a tenant that fails
/// closed).
pub fn repair(req: RepairRequest) -> ConnOp<'static, RepairResult> {
    ConnOp::maintain(false, true, move |e, _| e.repair(req.clone()))
}

#[cfg(test)]
mod tests;
