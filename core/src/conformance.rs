//! The store conformance suite (engine.md §9.3) as data: the cases are one JSON file
//! (`tests/data/conformance.json`), interpreted here, so every store of every host runs the
//! same cases — the Rust suite (memory store, native files store) and the package's (JS
//! memory store, Node files store, IndexedDB in Chromium, through the wasm bindings). A case
//! added to the file runs on all of them.
//!
//! A [`Runner`] plays one case. It owns the engines the case opens and asks its host only for
//! store calls ([`Call`]); the host performs each on the store under test and answers with
//! a [`Reply`]. The runner is replayed from the start with the replies so far on every
//! resume, so the case reads as straight-line code and an asynchronous host (JS) drives it
//! with one `await` per call.
//!
//! The language of a case is documented in the data file itself (its `about`).

use crate::compile::SourceDoc;
use crate::engine::{
    parse_transaction, Answer, CommitOutcome, Digest, Engine, Fault, FaultyStore, GcOptions,
    HistoryRequest, ImportRequest, Key, KeyInfo, Kind, Need, Op, PreparedCommit, RestoreRequest,
    Step, Store, StoreError, SwapFault, SwapOutcome,
};
use crate::error::Error;
use serde_json::{json, Value};

/// A store call the case needs from its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `readHead()` on store handle `store`: answer [`Reply::Head`].
    ReadHead {
        /// The store handle (0: the first store; each reopen adds one).
        store: usize,
    },
    /// `getMany(keys)`: answer [`Reply::Records`].
    GetMany {
        /// The store handle.
        store: usize,
        /// The keys.
        keys: Vec<Key>,
    },
    /// `put(key, bytes)`: answer [`Reply::Done`].
    Put {
        /// The store handle.
        store: usize,
        /// The key.
        key: Key,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// `swapHead(expected, head)`: answer [`Reply::Swap`].
    Swap {
        /// The store handle.
        store: usize,
        /// The expected head.
        expected: Option<Vec<u8>>,
        /// The new head.
        head: Vec<u8>,
    },
    /// Store a prepared commit the host's way (every put, then the swap): answer
    /// [`Reply::Outcome`].
    Commit {
        /// The store handle.
        store: usize,
        /// The commit.
        commit: PreparedCommit,
    },
    /// `keys()`: answer [`Reply::Keys`].
    Keys {
        /// The store handle.
        store: usize,
    },
    /// `remove(keys, before)`: answer [`Reply::Removed`].
    Remove {
        /// The store handle.
        store: usize,
        /// The keys.
        keys: Vec<Key>,
        /// Remove only records put before this.
        before: u64,
    },
    /// Open another store object on the same data root, as another process or page would:
    /// it becomes the next handle. Answer [`Reply::Done`].
    Reopen,
    /// Make the `nth` (1: the next) call at `point` on store handle `store` fail: `put`,
    /// `readHead`, `get`, `keys`, `remove` fail with `STORE`; `swap` fails before anything
    /// and `swap:mid` after the compare (both certainly leave the head); `swap:lost`
    /// answers indeterminate and leaves the head; `swap:after` moves the head, then answers
    /// indeterminate. Answer [`Reply::Done`].
    Fault {
        /// The store handle.
        store: usize,
        /// The point.
        point: String,
        /// Which call from now.
        nth: usize,
    },
    /// Wait `ms` milliseconds (so put times move on a store with a millisecond clock).
    /// Answer [`Reply::Done`].
    Pause {
        /// Milliseconds.
        ms: u64,
    },
}

/// The host's answer to a [`Call`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The call succeeded with nothing to return.
    Done,
    /// The head record, or none.
    Head(Option<Vec<u8>>),
    /// The records, in the order asked.
    Records(Vec<Option<Vec<u8>>>),
    /// A swap's outcome.
    Swap(SwapOutcome),
    /// A commit's outcome.
    Outcome(CommitOutcome),
    /// The listing.
    Keys(Vec<KeyInfo>),
    /// The keys removed.
    Removed(Vec<Key>),
    /// The call failed (`STORE`, `CORRUPT`, …) with this message.
    Failed(StoreError),
}

/// What a [`Runner`] asks next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStep {
    /// Perform this call and resume with its reply.
    Call(Call),
    /// The case passed (`Ok`) or failed with a message naming the step.
    Done(Result<(), String>),
}

/// The cases of a conformance file: `(name, case)`, in file order, for a store that is
/// `strict` (the memory stores' extra checks) or not.
pub fn cases(file: &str, strict: bool) -> Result<Vec<(String, Value)>, String> {
    let v: Value = serde_json::from_str(file).map_err(|e| format!("conformance file: {e}"))?;
    let list = v["cases"]
        .as_array()
        .ok_or("conformance file: no \"cases\" array")?;
    Ok(list
        .iter()
        .filter(|c| strict || c["strictOnly"].as_bool() != Some(true))
        .map(|c| (c["name"].as_str().unwrap_or("").to_string(), c.clone()))
        .collect())
}

/// Plays one case (see the module documentation).
pub struct Runner {
    case: Value,
    tenant: String,
    replies: Vec<Reply>,
    done: bool,
}

impl Runner {
    /// A runner of `case` (one element of the file's `cases`) on `tenant`.
    pub fn new(case: Value, tenant: &str) -> Runner {
        Runner {
            case,
            tenant: tenant.to_string(),
            replies: Vec::new(),
            done: false,
        }
    }

    /// Advances the case: `None` first, then the reply to the last call.
    pub fn resume(&mut self, reply: Option<Reply>) -> RunStep {
        if self.done {
            return RunStep::Done(Err("the case already ended".into()));
        }
        if let Some(r) = reply {
            self.replies.push(r);
        }
        let mut play = Play {
            tenant: &self.tenant,
            replies: &self.replies,
            at: 0,
            engines: Vec::new(),
            held: Vec::new(),
            seen: Vec::new(),
            stores: 1,
            marks: Vec::new(),
            last_gc: None,
        };
        let r = play.case(&self.case);
        match r {
            Err(Stop::Call(c)) => RunStep::Call(c),
            Err(Stop::Fail(m)) => {
                self.done = true;
                RunStep::Done(Err(m))
            }
            Ok(()) => {
                self.done = true;
                RunStep::Done(Ok(()))
            }
        }
    }
}

enum Stop {
    /// The next call the host must answer.
    Call(Call),
    /// The case failed.
    Fail(String),
}

type Go<T> = std::result::Result<T, Stop>;

fn fail<T>(m: impl Into<String>) -> Go<T> {
    Err(Stop::Fail(m.into()))
}

/// One replay of a case.
struct Play<'a> {
    tenant: &'a str,
    replies: &'a [Reply],
    at: usize,
    engines: Vec<(String, Engine, usize)>,
    held: Vec<(String, Op<Value>, PreparedCommit, usize)>,
    seen: Vec<(String, String)>,
    stores: usize,
    marks: Vec<(String, u64)>,
    last_gc: Option<Value>,
}

fn text_of(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

fn split_target(t: &str) -> (String, String) {
    match t.split_once('/') {
        Some((b, p)) => (b.to_string(), p.to_string()),
        None => (String::new(), t.to_string()),
    }
}

/// A record a step names: `{"source": "<text>"}`, `{"revision"|"record"|"recovery": "<text>"}`
/// (keyed by the text's SHA-256), or `{"derived": "<name>", "text": "<bytes>"}`.
fn record_of(v: &Value) -> Option<(Key, Vec<u8>)> {
    for kind in ["source", "revision", "record", "recovery"] {
        if let Some(t) = v.get(kind).and_then(Value::as_str) {
            return Some((
                Key::of(Kind::parse(kind)?, t.as_bytes()),
                t.as_bytes().to_vec(),
            ));
        }
    }
    let name = v.get("derived").and_then(Value::as_str)?;
    let key = Key::new(
        Kind::Derived,
        Digest::of(format!("derived {name}").as_bytes()),
    );
    Some((key, text_of(&v["text"]).into_bytes()))
}

/// Whether an error matches an expectation `CODE` or `CODE: message prefix`.
fn matches_error(e: &Error, want: &str) -> bool {
    match want.split_once(": ") {
        Some((code, msg)) => e.code() == code && e.message().starts_with(msg),
        None => e.code() == want,
    }
}

fn store_code(e: &StoreError) -> (&'static str, &str) {
    match e {
        StoreError::Failed(m) => ("STORE", m),
        StoreError::Corrupt(m) => ("CORRUPT", m),
    }
}

impl Play<'_> {
    /// Asks the host for `call`, or takes its logged reply.
    fn call(&mut self, call: Call) -> Go<Reply> {
        match self.replies.get(self.at) {
            Some(r) => {
                self.at += 1;
                Ok(r.clone())
            }
            None => Err(Stop::Call(call)),
        }
    }

    fn engine_index(&self, name: &str) -> Go<usize> {
        match self.engines.iter().position(|e| e.0 == name) {
            Some(i) => Ok(i),
            None => fail(format!("no engine \"{name}\"")),
        }
    }

    /// Runs an engine op to its end; `Err` is the op's error.
    fn run<T: 'static>(&mut self, i: usize, mut op: Op<T>) -> Go<Result<T, Error>> {
        let mut answer = None;
        loop {
            let step = op.resume(&mut self.engines[i].1, answer.take());
            match step {
                Err(e) => return Ok(Err(e)),
                Ok(Step::Done(t)) => return Ok(Ok(t)),
                Ok(Step::Need(n)) => answer = Some(self.serve(self.engines[i].2, n)?),
            }
        }
    }

    /// One engine step as a store call.
    fn serve(&mut self, store: usize, need: Need) -> Go<Answer> {
        let reply = match need {
            Need::Head => self.call(Call::ReadHead { store })?,
            Need::Records(keys) => self.call(Call::GetMany { store, keys })?,
            Need::Commit(commit) => self.call(Call::Commit { store, commit })?,
            Need::Keys => self.call(Call::Keys { store })?,
            Need::Remove { keys, before } => self.call(Call::Remove {
                store,
                keys,
                before,
            })?,
        };
        Ok(match reply {
            Reply::Head(h) => Answer::Head(h),
            Reply::Records(r) => Answer::Records(r),
            Reply::Outcome(o) => Answer::Outcome(o),
            Reply::Keys(k) => Answer::Keys(k),
            Reply::Removed(k) => Answer::Removed(k),
            Reply::Failed(e) => Answer::Failed(e),
            other => return fail(format!("unexpected reply {other:?}")),
        })
    }

    fn open_engine(&mut self, name: &str, store: usize) -> Go<()> {
        let e = match Engine::new(self.tenant) {
            Ok(e) => e,
            Err(e) => return fail(e.message()),
        };
        self.engines.retain(|x| x.0 != name);
        self.engines.push((name.to_string(), e, store));
        let i = self.engines.len() - 1;
        let op = self.engines[i].1.open();
        if let Err(e) = self.run(i, op)? {
            return fail(format!("open {name}: {}", e.message()));
        }
        Ok(())
    }

    fn current_hash(&self, i: usize, bundle: &str, path: &str) -> Option<String> {
        self.engines[i].1.read().ok()?.source_hash(bundle, path)
    }

    /// Everything a reader can observe, as text: manifest, snapshot, sources, the whole
    /// history.
    fn observe(&mut self, i: usize) -> Go<String> {
        let s = match self.engines[i].1.read() {
            Ok(s) => s,
            Err(e) => return fail(format!("observe: {}", e.message())),
        };
        let mut out = crate::manifest::manifest(s.model(), self.tenant, None, "2026-06-01")
            .unwrap_or_default();
        out.push_str(&format!(
            "snapshot {}\nrevision {:?}\n",
            s.snapshot_id(),
            s.revision()
        ));
        for src in s.list_source() {
            let c = s.read_source(&src.bundle, &src.path);
            out.push_str(&serde_json::to_string(&src).unwrap_or_default());
            out.push_str(&serde_json::to_string(&c).unwrap_or_default());
            out.push('\n');
        }
        drop(s);
        let mut before = None;
        loop {
            let op = self.engines[i].1.history(HistoryRequest {
                before: before.clone(),
                limit: Some(100),
            });
            let page = match self.run(i, op)? {
                Ok(p) => p,
                Err(e) => return fail(format!("observe history: {}", e.message())),
            };
            out.push_str(&serde_json::to_string(&page.revisions).unwrap_or_default());
            match page.next {
                Some(n) => before = Some(n),
                None => break,
            }
        }
        Ok(out)
    }

    fn expect_result(&self, what: &str, r: Result<Value, Error>, step: &Value) -> Go<Value> {
        let want = step.get("expect").and_then(Value::as_str).unwrap_or("ok");
        match r {
            Ok(v) if want == "ok" => Ok(v),
            Ok(v) if want == "any" => Ok(v),
            Ok(_) => fail(format!("{what}: succeeded, expected {want}")),
            Err(e) if want == "any" => Ok(json!({"error": e.code()})),
            Err(e) if matches_error(&e, want) => Ok(json!({"error": e.code()})),
            Err(e) => fail(format!(
                "{what}: {} {}, expected {want}",
                e.code(),
                e.message()
            )),
        }
    }

    fn max_put_time(&mut self, store: usize) -> Go<u64> {
        match self.call(Call::Keys { store })? {
            Reply::Keys(k) => Ok(k.iter().map(|k| k.put_time).max().unwrap_or(0)),
            other => fail(format!("keys: {other:?}")),
        }
    }

    fn case(&mut self, case: &Value) -> Go<()> {
        let steps = match case["steps"].as_array() {
            Some(s) => s.clone(),
            None => return fail("a case needs \"steps\""),
        };
        self.open_engine("a", 0)?;
        let mut cur = 0usize;
        for (n, step) in steps.iter().enumerate() {
            let at = |m: String| Stop::Fail(format!("step {n} {step}: {m}"));
            if let Some(name) = step.get("on").and_then(Value::as_str) {
                cur = self
                    .engine_index(name)
                    .map_err(|_| at("no such engine".into()))?;
            }
            match self.step(cur, step) {
                Err(Stop::Fail(m)) => return Err(at(m)),
                Err(s) => return Err(s),
                Ok(Some(next)) => cur = next,
                Ok(None) => {}
            }
        }
        Ok(())
    }

    /// One step; `Some(i)` makes engine `i` the current one.
    fn step(&mut self, i: usize, step: &Value) -> Go<Option<usize>> {
        let store = self.engines[i].2;
        let verb = step
            .as_object()
            .and_then(|o| {
                o.keys().find(|k| {
                    !matches!(
                        k.as_str(),
                        "on" | "expect" | "as" | "text" | "bytes" | "create" | "nth" | "before"
                    )
                })
            })
            .cloned()
            .unwrap_or_default();
        let arg = &step[verb.as_str()];
        match verb.as_str() {
            "open" => {
                let name = text_of(arg);
                self.open_engine(&name, store)?;
                return self.engine_index(&name).map(Some);
            }
            "reopen" => {
                self.call(Call::Reopen)?;
                let handle = self.stores;
                self.stores += 1;
                let name = text_of(arg);
                self.open_engine(&name, handle)?;
                return self.engine_index(&name).map(Some);
            }
            "refresh" => {
                let op = self.engines[i].1.refresh();
                let r = self.run(i, op)?.map(|_| Value::Null);
                self.expect_result("refresh", r, step)?;
            }
            "write" => {
                let (b, p) = split_target(&text_of(arg));
                let replaces = if step.get("create").and_then(Value::as_bool) == Some(true) {
                    None
                } else {
                    self.current_hash(i, &b, &p)
                };
                let op = self.engines[i].1.write(
                    &b,
                    &p,
                    text_of(&step["text"]).as_str(),
                    replaces.as_deref(),
                    &commit_time(self.at),
                );
                let r = self.run(i, op)?.map(|w| json!(w.revision));
                self.expect_result("write", r, step)?;
            }
            "transact" => {
                let mut changes = Vec::new();
                for c in arg.as_array().into_iter().flatten() {
                    let (b, p) = split_target(&text_of(&c[0]));
                    let replaces = self.current_hash(i, &b, &p);
                    changes.push(json!({"operation": "write", "bundle": b, "path": p,
                        "content": text_of(&c[1]), "replaces": replaces}));
                }
                let txn = match parse_transaction(&json!({ "changes": changes })) {
                    Ok(t) => t,
                    Err(e) => return fail(e.message()),
                };
                let op = self.engines[i].1.transact(txn, &commit_time(self.at));
                let r = self.run(i, op)?.map(|r| json!(r.revision));
                self.expect_result("transact", r, step)?;
            }
            "import" => {
                let docs: Vec<SourceDoc> = arg
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|d| {
                        let (b, p) = split_target(&text_of(&d[0]));
                        SourceDoc::new(b, p, text_of(&d[1]))
                    })
                    .collect();
                let op = self.engines[i].1.import(
                    ImportRequest {
                        location: "/data/folder".into(),
                        documents: docs,
                        strict: false,
                    },
                    &commit_time(self.at),
                );
                let r = self.run(i, op)?.map(|r| json!(r.committed));
                self.expect_result("import", r, step)?;
            }
            "observe" => {
                let o = self.observe(i)?;
                let name = text_of(arg);
                self.seen.retain(|s| s.0 != name);
                self.seen.push((name, o));
            }
            "same" | "differs" => {
                let o = self.observe(i)?;
                let name = text_of(arg);
                let Some((_, seen)) = self.seen.iter().find(|s| s.0 == name) else {
                    return fail(format!("nothing observed as \"{name}\""));
                };
                if (verb == "same") != (*seen == o) {
                    return fail(format!("the observation {verb} \"{name}\" does not hold"));
                }
            }
            "paths" => {
                let paths: Vec<String> = match self.engines[i].1.read() {
                    Ok(s) => s.list_source().into_iter().map(|s| s.path).collect(),
                    Err(e) => return fail(e.message()),
                };
                let want: Vec<String> = arg.as_array().into_iter().flatten().map(text_of).collect();
                if paths != want {
                    return fail(format!("paths {paths:?}, expected {want:?}"));
                }
            }
            "revisions" => {
                let op = self.engines[i].1.history(HistoryRequest {
                    before: None,
                    limit: Some(100),
                });
                let page = match self.run(i, op)? {
                    Ok(p) => p,
                    Err(e) => return fail(e.message()),
                };
                if arg.as_u64() != Some(page.revisions.len() as u64) {
                    return fail(format!(
                        "{} revisions, expected {arg}",
                        page.revisions.len()
                    ));
                }
            }
            "readFails" => {
                // Reads are refused until the engine reloads (after an indeterminate outcome).
                match self.engines[i].1.read() {
                    Err(e) if matches_error(&e, arg.as_str().unwrap_or("")) => {}
                    Err(e) => return fail(format!("read failed with {}", e.code())),
                    Ok(_) => return fail("the read succeeded"),
                }
            }
            "ensure" => {
                // Writes the document unless it is there (after a refresh): a host's retry
                // of a commit whose outcome was a conflict.
                let op = self.engines[i].1.refresh();
                if let Err(e) = self.run(i, op)? {
                    return fail(e.message());
                }
                let (b, p) = split_target(&text_of(arg));
                if self.current_hash(i, &b, &p).is_none() {
                    let op = self.engines[i].1.write(
                        &b,
                        &p,
                        text_of(&step["text"]).as_str(),
                        None,
                        &commit_time(self.at),
                    );
                    if let Err(e) = self.run(i, op)? {
                        return fail(e.message());
                    }
                }
            }
            "has" => {
                let (b, p) = split_target(&text_of(arg));
                if self.current_hash(i, &b, &p).is_none() {
                    return fail(format!("{b}/{p} is not there"));
                }
            }
            "noHead" => match self.call(Call::ReadHead { store })? {
                Reply::Head(None) => {}
                other => return fail(format!("a head: {other:?}")),
            },
            "prepare" => {
                let (b, p) = split_target(&text_of(&arg["write"]));
                let name = text_of(&step["as"]);
                let mut op = self.engines[i]
                    .1
                    .write(
                        &b,
                        &p,
                        text_of(&arg["text"]).as_str(),
                        None,
                        &commit_time(self.at),
                    )
                    .map(|w| json!(w.revision));
                let mut answer = None;
                let prepared = loop {
                    match op.resume(&mut self.engines[i].1, answer.take()) {
                        Ok(Step::Need(Need::Commit(p))) => break p,
                        Ok(Step::Need(n)) => answer = Some(self.serve(store, n)?),
                        Ok(Step::Done(_)) => return fail("the op finished without a commit"),
                        Err(e) => return fail(e.message()),
                    }
                };
                self.held.push((name, op, prepared, i));
            }
            "sameExpected" => {
                let names: Vec<String> =
                    arg.as_array().into_iter().flatten().map(text_of).collect();
                let heads: Vec<&Option<Vec<u8>>> = names
                    .iter()
                    .filter_map(|n| self.held.iter().find(|h| &h.0 == n).map(|h| &h.2.expected))
                    .collect();
                if heads.len() != names.len() || heads.windows(2).any(|w| w[0] != w[1]) {
                    return fail("the held commits expect different heads");
                }
            }
            "putRecords" => {
                let name = text_of(arg);
                let Some(pos) = self.held.iter().position(|h| h.0 == name) else {
                    return fail(format!("no held commit \"{name}\""));
                };
                let records = self.held[pos].2.records.clone();
                let s = self.engines[self.held[pos].3].2;
                for (key, bytes) in records {
                    match self.call(Call::Put {
                        store: s,
                        key,
                        bytes,
                    })? {
                        Reply::Done => {}
                        other => return fail(format!("put: {other:?}")),
                    }
                }
            }
            "finish" | "swapHeld" => {
                let name = text_of(arg);
                let Some(pos) = self.held.iter().position(|h| h.0 == name) else {
                    return fail(format!("no held commit \"{name}\""));
                };
                let (_, mut op, prepared, e) = self.held.remove(pos);
                let s = self.engines[e].2;
                let outcome = if verb == "finish" {
                    match self.call(Call::Commit {
                        store: s,
                        commit: prepared,
                    })? {
                        Reply::Outcome(o) => o,
                        other => return fail(format!("commit: {other:?}")),
                    }
                } else {
                    match self.call(Call::Swap {
                        store: s,
                        expected: prepared.expected.clone(),
                        head: prepared.head.clone(),
                    })? {
                        Reply::Swap(o) => o.into(),
                        other => return fail(format!("swap: {other:?}")),
                    }
                };
                let r = match op.resume(&mut self.engines[e].1, Some(Answer::Outcome(outcome))) {
                    Ok(Step::Done(v)) => Ok(v),
                    Ok(Step::Need(n)) => return fail(format!("unexpected need {n:?}")),
                    Err(err) => Err(err),
                };
                self.expect_result(&verb, r, step)?;
            }
            "fault" => {
                self.call(Call::Fault {
                    store,
                    point: text_of(arg),
                    nth: step.get("nth").and_then(Value::as_u64).unwrap_or(1) as usize,
                })?;
            }
            "pause" => {
                self.call(Call::Pause {
                    ms: arg.as_u64().unwrap_or(2),
                })?;
            }
            "mark" => {
                let t = self.max_put_time(store)?;
                let name = text_of(arg);
                self.marks.push((name, t));
            }
            "gc" => {
                let now = match arg.get("now").and_then(Value::as_str) {
                    Some("afterPuts") => self.max_put_time(store)? + 1,
                    _ => u64::MAX,
                };
                let grace_ms = match arg.get("graceFrom").and_then(Value::as_str) {
                    Some(m) => match self.marks.iter().find(|x| x.0 == m) {
                        Some((_, t)) => now - t,
                        None => return fail(format!("no mark \"{m}\"")),
                    },
                    None => arg.get("graceMs").and_then(Value::as_u64).unwrap_or(0),
                };
                let opts = GcOptions {
                    keep: arg.get("keep").and_then(Value::as_i64).unwrap_or(10),
                    dry_run: arg.get("dryRun").and_then(Value::as_bool).unwrap_or(false),
                    grace_ms,
                    now,
                };
                let op = self.engines[i].1.gc(opts);
                let r = match self.run(i, op)? {
                    Ok(g) => g,
                    Err(e) => return fail(e.message()),
                };
                let got = json!({"kept": r.kept.len(), "removedRevisions": r.removed_revisions,
                    "removedSome": r.removed_records > 0 && r.bytes_freed > 0});
                for (k, v) in step
                    .get("expect")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    if got[k] != *v {
                        return fail(format!("gc {k} = {}, expected {v}", got[k]));
                    }
                }
                if let Some(prev) = &self.last_gc {
                    if arg.get("sameAsDryRun").and_then(Value::as_bool) == Some(true)
                        && (prev["kept"] != json!(r.kept)
                            || prev["records"] != json!(r.removed_records)
                            || prev["bytes"] != json!(r.bytes_freed))
                    {
                        return fail("the collection differs from its dry run");
                    }
                }
                self.last_gc = Some(json!({"kept": r.kept, "records": r.removed_records,
                    "bytes": r.bytes_freed}));
            }
            "verify" => {
                let op = self.engines[i].1.verify();
                let v = match self.run(i, op)? {
                    Ok(v) => v,
                    Err(e) => return fail(e.message()),
                };
                if !v.ok {
                    return fail(format!("verify found {:?}", v.issues));
                }
                if let Some(prev) = &self.last_gc {
                    if arg.as_str() == Some("kept") && prev["kept"] != json!(v.verified_revisions) {
                        return fail("verify checked other revisions than gc kept");
                    }
                }
            }
            "historyIsKept" => {
                let op = self.engines[i].1.history(HistoryRequest::default());
                let page = match self.run(i, op)? {
                    Ok(p) => p,
                    Err(e) => return fail(e.message()),
                };
                let ids: Vec<String> = page.revisions.into_iter().map(|r| r.revision).collect();
                if self.last_gc.as_ref().map(|g| g["kept"].clone()) != Some(json!(ids)) {
                    return fail("history is not the retained window");
                }
            }
            "restoreOldestKept" => {
                let kept: Vec<String> = self
                    .last_gc
                    .as_ref()
                    .and_then(|g| serde_json::from_value(g["kept"].clone()).ok())
                    .unwrap_or_default();
                let (Some(oldest), Some(head)) = (kept.last(), kept.first()) else {
                    return fail("no collection to restore from");
                };
                let op = self.engines[i].1.restore(
                    RestoreRequest {
                        revision: oldest.clone(),
                        expected_revision: head.clone(),
                    },
                    &commit_time(self.at),
                );
                let r = self.run(i, op)?.map(|r| json!(r.revision));
                self.expect_result("restore", r, step)?;
            }
            "put" | "putAgain" => {
                let Some((key, bytes)) = record_of(arg) else {
                    return fail("put needs a record");
                };
                let bytes = match step.get("bytes").and_then(Value::as_str) {
                    Some(b) => b.as_bytes().to_vec(),
                    None => bytes,
                };
                let r = match self.call(Call::Put { store, key, bytes })? {
                    Reply::Done => Ok(Value::Null),
                    Reply::Failed(e) => {
                        let (code, m) = store_code(&e);
                        Err(if code == "CORRUPT" {
                            Error::Corrupt(m.to_string())
                        } else {
                            Error::Store(m.to_string())
                        })
                    }
                    other => return fail(format!("put: {other:?}")),
                };
                self.expect_result("put", r, step)?;
            }
            "get" => {
                let recs: Vec<(Key, Vec<u8>)> = arg
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(record_of)
                    .collect();
                let keys: Vec<Key> = recs.iter().map(|r| r.0).collect();
                let got = match self.call(Call::GetMany { store, keys })? {
                    Reply::Records(r) => r,
                    other => return fail(format!("get: {other:?}")),
                };
                let want: Vec<Option<Vec<u8>>> = step["expect"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|v| v.as_str().map(|s| s.as_bytes().to_vec()))
                    .collect();
                if got != want {
                    return fail(format!(
                        "get gave {:?}",
                        got.iter()
                            .map(|b| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                            .collect::<Vec<_>>()
                    ));
                }
            }
            "keys" => {
                let k = match self.call(Call::Keys { store })? {
                    Reply::Keys(k) => k,
                    other => return fail(format!("keys: {other:?}")),
                };
                if arg.as_u64() != Some(k.len() as u64) {
                    return fail(format!("{} keys, expected {arg}", k.len()));
                }
            }
            "putTimeMoves" => {
                // An identical put refreshes the put time.
                let Some((key, bytes)) = record_of(arg) else {
                    return fail("putTimeMoves needs a record");
                };
                let before = self.put_time(store, &key)?;
                // Longer than a clock tick: a file's modification time comes from the
                // kernel's coarse clock, which moves on in steps of 1-10 ms.
                self.call(Call::Pause { ms: 25 })?;
                match self.call(Call::Put { store, key, bytes })? {
                    Reply::Done => {}
                    other => return fail(format!("put: {other:?}")),
                }
                let after = self.put_time(store, &key)?;
                if after <= before {
                    return fail(format!("put time {before} -> {after}"));
                }
            }
            "remove" => {
                let recs: Vec<Key> = arg
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(record_of)
                    .map(|r| r.0)
                    .collect();
                // `before`: "max", or a record whose put time it is.
                let before = match step.get("before") {
                    None => u64::MAX,
                    Some(Value::String(m)) if m == "max" => u64::MAX,
                    Some(r) => match record_of(r) {
                        Some((k, _)) => self.put_time(store, &k)?,
                        None => return fail("remove: bad `before`"),
                    },
                };
                let got = match self.call(Call::Remove {
                    store,
                    keys: recs,
                    before,
                })? {
                    Reply::Removed(k) => k,
                    other => return fail(format!("remove: {other:?}")),
                };
                let want: Vec<Key> = step["expect"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(record_of)
                    .map(|r| r.0)
                    .collect();
                if got != want {
                    return fail(format!("removed {got:?}, expected {want:?}"));
                }
            }
            "swapStale" => {
                // A stale expectation conflicts; so does "no head" against a head.
                let head = match self.call(Call::ReadHead { store })? {
                    Reply::Head(Some(h)) => h,
                    other => return fail(format!("read head: {other:?}")),
                };
                for expected in [Some(b"not the head".to_vec()), None] {
                    match self.call(Call::Swap {
                        store,
                        expected,
                        head: head.clone(),
                    })? {
                        Reply::Swap(SwapOutcome::Conflict) => {}
                        other => return fail(format!("a stale swap gave {other:?}")),
                    }
                }
            }
            "" => return fail("an empty step"),
            other => return fail(format!("unknown step \"{other}\"")),
        }
        Ok(None)
    }

    fn put_time(&mut self, store: usize, key: &Key) -> Go<u64> {
        match self.call(Call::Keys { store })? {
            Reply::Keys(k) => match k.iter().find(|k| k.key == *key) {
                Some(k) => Ok(k.put_time),
                None => fail(format!("{key} is not listed")),
            },
            other => fail(format!("keys: {other:?}")),
        }
    }
}

/// The commit time of the commit prepared at replay position `n` (unique per commit, so
/// revisions differ).
fn commit_time(n: usize) -> String {
    let n = n as u64;
    format!(
        "2026-05-01T{:02}:{:02}:{:02}.{:03}Z",
        (n / 3600) % 24,
        (n / 60) % 60,
        n % 60,
        n % 1000
    )
}

/// Performs one call against a synchronous store wrapped for fault injection, as a Rust
/// host does: `Fault` arms the wrapper's plan. `Reopen` and `Pause` are the host's own
/// (a new handle, a sleep): this answers them [`Reply::Done`] and does nothing.
pub fn serve<S: Store>(store: &mut FaultyStore<S>, tenant: &str, call: Call) -> Reply {
    let t = tenant;
    match call {
        Call::ReadHead { .. } => match store.read_head(t) {
            Ok(h) => Reply::Head(h),
            Err(e) => Reply::Failed(e),
        },
        Call::GetMany { keys, .. } => match store.get_many(t, &keys) {
            Ok(r) => Reply::Records(r),
            Err(e) => Reply::Failed(e),
        },
        Call::Put { key, bytes, .. } => match store.put(t, &key, &bytes) {
            Ok(()) => Reply::Done,
            Err(e) => Reply::Failed(e),
        },
        Call::Swap { expected, head, .. } => {
            Reply::Swap(store.swap_head(t, expected.as_deref(), &head))
        }
        Call::Commit { commit, .. } => match crate::engine::serve(store, t, Need::Commit(commit)) {
            Answer::Outcome(o) => Reply::Outcome(o),
            other => Reply::Failed(StoreError::Failed(format!("{other:?}"))),
        },
        Call::Keys { .. } => match store.keys(t) {
            Ok(k) => Reply::Keys(k),
            Err(e) => Reply::Failed(e),
        },
        Call::Remove { keys, before, .. } => match store.remove(t, &keys, before) {
            Ok(k) => Reply::Removed(k),
            Err(e) => Reply::Failed(e),
        },
        Call::Reopen | Call::Pause { .. } => Reply::Done,
        Call::Fault { point, nth, .. } => {
            let f = match point.as_str() {
                "put" => Fault::Put(nth.saturating_sub(1)),
                "swap" | "swap:mid" => Fault::Swap(SwapFault::Fail),
                "swap:lost" => Fault::Swap(SwapFault::IndeterminateBefore),
                "swap:after" => Fault::Swap(SwapFault::IndeterminateAfter),
                "readHead" => Fault::ReadHead,
                "get" => Fault::Get,
                "keys" => Fault::Keys,
                _ => Fault::Remove,
            };
            store.faults.inject(f);
            Reply::Done
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MemoryStore;

    /// Runs a case on one memory store (every handle is the same store object).
    fn run_on_memory(case: &Value) -> Result<(), String> {
        let mut store = FaultyStore::new(MemoryStore::new());
        let mut r = Runner::new(case.clone(), "conf");
        let mut reply = None;
        loop {
            match r.resume(reply.take()) {
                RunStep::Done(res) => return res,
                RunStep::Call(c) => reply = Some(serve(&mut store, "conf", c)),
            }
        }
    }

    /// The suite of `tests/data/conformance.json` on the core's memory store.
    #[test]
    fn the_conformance_file_passes_on_the_memory_store() {
        let file = include_str!("../../tests/data/conformance.json");
        let cases = cases(file, true).unwrap();
        assert!(cases.len() >= 8, "{} cases", cases.len());
        for (name, case) in cases {
            run_on_memory(&case).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// A case whose expectation does not hold fails, naming the step.
    #[test]
    fn a_failing_case_fails() {
        let case = json!({"name": "x", "steps": [
            {"write": "notes/a.md", "text": "# A\n"},
            {"paths": ["b.md"]}
        ]});
        let e = run_on_memory(&case).unwrap_err();
        assert!(e.starts_with("step 1 "), "{e}");
        assert!(e.contains("paths [\"a.md\"], expected [\"b.md\"]"), "{e}");
    }
}
