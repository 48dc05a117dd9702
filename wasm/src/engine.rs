//! The engine of one tenant for JS hosts, its operations as step machines, and tool calls.
//!
//! Every method is synchronous. Reads answer from the served state at once; operations that
//! touch the store return a [`WasmOp`], which the host resumes with the answer to each store
//! step (awaited in JS between two calls). No borrow of the engine outlives a call, so JS may
//! read while an operation waits for its store.

use crate::convert;
use crate::error::{from_js, to_js};
use langonrock_core::engine::{
    self, Answer, CommitOutcome, Engine, GcOptions, HistoryRequest, ImportRequest, Op,
    RepairRequest, RestoreRequest, Served, Step,
};
use langonrock_core::read::{self, GetOptions};
use langonrock_core::tools::{self, ToolCall};
use langonrock_core::{manifest, validate, Error};
use std::sync::Arc;
use wasm_bindgen::prelude::*;

type JsResult<T> = Result<T, JsValue>;

fn js<T>(r: Result<T, Error>) -> JsResult<T> {
    r.map_err(|e| to_js(&e))
}

/// One tenant's engine (engine.md).
#[wasm_bindgen]
pub struct WasmEngine {
    engine: Engine,
}

type Finish<T> = Box<dyn FnOnce(T, &Engine) -> Result<JsValue, Error>>;

/// An op of any result type, with the conversion of its result.
trait Resume {
    fn resume(
        &mut self,
        engine: &mut Engine,
        answer: Option<Answer>,
    ) -> Result<Step<JsValue>, Error>;
}

struct Typed<T> {
    op: Op<T>,
    finish: Option<Finish<T>>,
}

impl<T: 'static> Resume for Typed<T> {
    fn resume(
        &mut self,
        engine: &mut Engine,
        answer: Option<Answer>,
    ) -> Result<Step<JsValue>, Error> {
        match self.op.resume(engine, answer)? {
            Step::Need(n) => Ok(Step::Need(n)),
            Step::Done(t) => {
                let finish = self
                    .finish
                    .take()
                    .ok_or_else(|| Error::Invalid("operation already finished".into()))?;
                Ok(Step::Done(finish(t, engine)?))
            }
        }
    }
}

/// An operation over the store (engine.md §8.8). Call `resume(engine)` first, then
/// `resume(engine, answer)` with what `serveNeed` answered for each step, until it returns
/// `{done: value}`. A failure throws the operation's error.
#[wasm_bindgen]
pub struct WasmOp {
    inner: Box<dyn Resume>,
    lost_swap: bool,
}

impl WasmOp {
    fn new<T: serde::Serialize + 'static>(op: Op<T>) -> WasmOp {
        WasmOp::with(op, |t, _| convert::to_js(&t))
    }

    fn with<T: 'static>(
        op: Op<T>,
        finish: impl FnOnce(T, &Engine) -> Result<JsValue, Error> + 'static,
    ) -> WasmOp {
        WasmOp {
            inner: Box::new(Typed {
                op,
                finish: Some(Box::new(finish)),
            }),
            lost_swap: false,
        }
    }

    fn text<T: 'static>(op: Op<T>, finish: impl FnOnce(T, &Engine) -> String + 'static) -> WasmOp {
        WasmOp::with(op, move |t, e| Ok(JsValue::from_str(&finish(t, e))))
    }
}

#[wasm_bindgen]
impl WasmOp {
    /// Advances the operation: `answer` is undefined on the first call, then the answer to
    /// the last step. Returns the next step (`{need: …}`) or `{done: value}`.
    pub fn resume(&mut self, engine: &mut WasmEngine, answer: JsValue) -> JsResult<JsValue> {
        let answer = if answer.is_undefined() {
            None
        } else {
            match convert::answer(&answer) {
                Ok(a) => Some(a),
                Err(e) => {
                    // A commit whose outcome cannot be read is indeterminate.
                    return Err(to_js(&engine.engine.forget_commit().unwrap_or(e)));
                }
            }
        };
        if matches!(answer, Some(Answer::Outcome(CommitOutcome::Conflict))) {
            self.lost_swap = true;
        }
        match js(self.inner.resume(&mut engine.engine, answer))? {
            Step::Need(n) => Ok(convert::need(&n)),
            Step::Done(v) => Ok(convert::done(&v)),
        }
    }

    /// Whether a commit of this operation lost its head swap to another writer (the
    /// `CONFLICT` a host without `expectedRevision` may retry once, engine.md §8.7).
    #[wasm_bindgen(getter, js_name = lostSwap)]
    pub fn lost_swap(&self) -> bool {
        self.lost_swap
    }
}

fn hash_of(served: &Served, bundle: &str, path: &str) -> Option<String> {
    served.source_hash(bundle, path)
}

#[wasm_bindgen]
impl WasmEngine {
    /// An engine for `tenant` (validated and lower-cased); it serves nothing until `open`.
    #[wasm_bindgen(constructor)]
    pub fn new(tenant: &str) -> JsResult<WasmEngine> {
        Ok(WasmEngine {
            engine: js(Engine::new(tenant))?,
        })
    }

    /// The tenant id, lower-cased.
    #[wasm_bindgen(getter)]
    pub fn tenant(&self) -> String {
        self.engine.tenant().to_string()
    }

    /// Whether a commit waits for its outcome.
    #[wasm_bindgen(js_name = commitInFlight)]
    pub fn commit_in_flight(&self) -> bool {
        self.engine.commit_in_flight()
    }

    /// Whether the tenant has a head (as last loaded).
    #[wasm_bindgen(js_name = hasHead)]
    pub fn has_head(&self) -> bool {
        self.engine.head_bytes().is_some()
    }

    fn served(&self) -> JsResult<Arc<Served>> {
        js(self.engine.read())
    }

    // -----------------------------------------------------------------------------------
    // Reads of the served state

    /// The manifest TSV of the tenant or of one bundle (read.md §2), for the read date.
    pub fn manifest(&self, bundle: Option<String>, today: &str) -> JsResult<String> {
        let s = self.served()?;
        js(manifest::manifest(
            s.model(),
            self.engine.tenant(),
            bundle.as_deref(),
            today,
        ))
    }

    /// `get` (read.md §3): a `Map` from public id to slice.
    pub fn get(&self, ids: JsValue, options: JsValue) -> JsResult<js_sys::Map> {
        let ids = js(convert::ids(&ids))?;
        let opts = js(convert::get_options(&options))?;
        let s = self.served()?;
        js(s.get(&ids, &opts).and_then(|r| convert::slices(&r)))
    }

    /// `search(query, {k?, bundle?, expand?})` (search.md): the search TSV for the read date.
    pub fn search(&self, query: JsValue, options: JsValue, today: &str) -> JsResult<String> {
        let query = query
            .as_string()
            .ok_or_else(|| to_js(&Error::Invalid("search query must be a string".into())))?;
        let opts = js(convert::search_options(&options))?;
        let s = self.served()?;
        js(s.search(self.engine.tenant(), &query, &opts, today))
    }

    /// `snapshot()` (read.md §5): `{snapshot, concepts}`.
    pub fn snapshot(&self) -> JsResult<JsValue> {
        Ok(convert::snapshot(&self.served()?.snapshot()))
    }

    /// `listSource()` (read.md §6.1).
    #[wasm_bindgen(js_name = listSource)]
    pub fn list_source(&self) -> JsResult<JsValue> {
        js(convert::to_js(&self.served()?.list_source()))
    }

    /// The served state's derived record when it is due (after a recompiling open or a
    /// commit, engine.md §9.1 rule 4), once: `{key, bytes}` for a writable host to put, or
    /// undefined.
    #[wasm_bindgen(js_name = takeDerived)]
    pub fn take_derived(&mut self, today: &str) -> Option<js_sys::Object> {
        let (key, bytes) = self.engine.take_derived()?.derived_record(today)?;
        Some(convert::record(&key, &bytes))
    }

    /// Whether a read failed because a text decoded from a derived record did not match its
    /// source: the engine compiles on its next refresh, and the read should run again then.
    #[wasm_bindgen(js_name = derivedFailed)]
    pub fn derived_failed(&self) -> bool {
        self.engine.read().is_ok_and(|s| s.derived_failed())
    }

    /// Reads and verifies the source blobs behind a read that returns sources, when the
    /// served state came from a derived record (engine.md §9.1 rule 1): the documents of the
    /// concepts `ids` (`get` with `source`), or every document when `ids` is undefined
    /// (export).
    #[wasm_bindgen(js_name = checkSources)]
    pub fn check_sources(&self, ids: JsValue) -> JsResult<WasmOp> {
        let ids = if ids.is_undefined() || ids.is_null() {
            None
        } else {
            Some(js(convert::ids(&ids))?)
        };
        Ok(WasmOp::new(self.engine.check_sources(ids)))
    }

    /// Whether the served state was decoded from a derived record rather than compiled.
    #[wasm_bindgen(js_name = servedFromDerived)]
    pub fn served_from_derived(&self) -> bool {
        self.engine.read().is_ok_and(|s| s.from_derived())
    }

    /// Every document as `[bundle, path, text]`, sorted by bundle then path (for export).
    pub fn documents(&self) -> JsResult<js_sys::Array> {
        let s = self.served()?;
        Ok(s.documents()
            .map(|(b, p, t)| {
                JsValue::from(js_sys::Array::of3(
                    &JsValue::from_str(b),
                    &JsValue::from_str(p),
                    &JsValue::from_str(t),
                ))
            })
            .collect())
    }

    // -----------------------------------------------------------------------------------
    // Operations over the store

    /// Reads the store's head and loads it when it moved (also the first open).
    pub fn refresh(&self) -> WasmOp {
        WasmOp::new(self.engine.refresh())
    }

    /// `readSource(bundle, path)` (read.md §6.2): `{content, hash}` or null.
    #[wasm_bindgen(js_name = readSource)]
    pub fn read_source(&self, bundle: &str, path: &str) -> WasmOp {
        WasmOp::new(self.engine.read_source(bundle, path))
    }

    /// `write` (engine.md §4.1); `created` is the commit time. Arguments are checked in
    /// the order of engine.md §5.2 rule 3.
    pub fn write(
        &self,
        bundle: JsValue,
        path: JsValue,
        content: JsValue,
        replaces: JsValue,
        created: &str,
    ) -> JsResult<WasmOp> {
        let (bundle, path, content, replaces) =
            js(convert::write_args(&bundle, &path, &content, &replaces))?;
        Ok(WasmOp::new(self.engine.write(
            &bundle,
            &path,
            content,
            replaces.as_deref(),
            created,
        )))
    }

    /// `delete` (engine.md §4.2).
    pub fn delete(
        &self,
        bundle: JsValue,
        path: JsValue,
        replaces: JsValue,
        created: &str,
    ) -> JsResult<WasmOp> {
        let (bundle, path, hash) = js(convert::delete_args(&bundle, &path, &replaces))?;
        Ok(WasmOp::new(self.engine.delete(
            &bundle,
            &path,
            hash.as_deref(),
            created,
        )))
    }

    /// `deleteBundle` (engine.md §4.4).
    #[wasm_bindgen(js_name = deleteBundle)]
    pub fn delete_bundle(&self, bundle: &str, created: &str) -> WasmOp {
        WasmOp::new(self.engine.delete_bundle(bundle, created))
    }

    /// `transact({changes, expectedRevision?})` (engine.md §5); the request is validated here.
    pub fn transact(&self, request: JsValue, created: &str) -> JsResult<WasmOp> {
        let txn = js(convert::transaction(&request))?;
        Ok(WasmOp::new(self.engine.transact(txn, created)))
    }

    /// `history({before?, limit?})` (engine.md §6).
    pub fn history(&self, options: JsValue) -> JsResult<WasmOp> {
        let req = js(engine::parse_history_request(&convert::json(&options)))?;
        Ok(WasmOp::new(self.engine.history(req)))
    }

    /// `restore({revision, expectedRevision})` (engine.md §7).
    pub fn restore(&self, request: JsValue, created: &str) -> JsResult<WasmOp> {
        let v = convert::json(&request);
        js(engine::parse_restore_request(&v))?;
        let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let req = RestoreRequest {
            revision: field("revision"),
            expected_revision: field("expectedRevision"),
        };
        Ok(WasmOp::new(self.engine.restore(req, created)))
    }

    /// `gc({keep?, dryRun?, graceMs?})` (engine.md §10) at `now`, milliseconds since the epoch.
    pub fn gc(&self, options: JsValue, now: f64) -> JsResult<WasmOp> {
        let mut opts = GcOptions::at(now as u64);
        let v = convert::json(&options);
        match v.get("keep") {
            None | Some(serde_json::Value::Null) => {}
            Some(k) => opts.keep = k.as_i64().unwrap_or(0),
        }
        if let Some(d) = v.get("dryRun").and_then(|d| d.as_bool()) {
            opts.dry_run = d;
        }
        match v.get("graceMs") {
            None | Some(serde_json::Value::Null) => {}
            Some(g) => {
                opts.grace_ms = g.as_f64().filter(|g| *g >= 0.0).ok_or_else(|| {
                    to_js(&Error::Invalid(
                        "database gc graceMs must be a non-negative number".into(),
                    ))
                })? as u64
            }
        }
        Ok(WasmOp::new(self.engine.gc(opts)))
    }

    /// `verify()` (engine.md §11).
    pub fn verify(&self) -> WasmOp {
        WasmOp::new(self.engine.verify())
    }

    /// `repair({revision, expectedHead})` (engine.md §11.4).
    pub fn repair(&self, request: JsValue) -> JsResult<WasmOp> {
        let v = convert::json(&request);
        let revision = v
            .get("revision")
            .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string))
            .unwrap_or_default();
        let expected_head = match v.get("expectedHead") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        Ok(WasmOp::new(self.engine.repair(RepairRequest {
            revision,
            expected_head,
        })))
    }

    /// `import` (cli.md §4): `documents` is `[{bundle, path, content}]` as read from the
    /// folder, `location` its key.
    pub fn import(
        &self,
        location: String,
        documents: JsValue,
        strict: bool,
        created: &str,
    ) -> JsResult<WasmOp> {
        let documents = js(convert::documents(&documents))?;
        Ok(WasmOp::new(self.engine.import(
            ImportRequest {
                location,
                documents,
                strict,
            },
            created,
        )))
    }

    /// For a host that lost a commit's outcome: treats it as indeterminate. Returns the
    /// error to report, or undefined when no commit was in flight.
    #[wasm_bindgen(js_name = forgetCommit)]
    pub fn forget_commit(&mut self) -> JsValue {
        self.engine
            .forget_commit()
            .map_or(JsValue::UNDEFINED, |e| to_js(&e))
    }
}

// ---------------------------------------------------------------------------------------
// Tool calls (agent.md §6), run the way the native MCP server runs them.

/// A tool call whose arguments passed the tool's input schema (agent.md §1.5).
#[wasm_bindgen]
pub struct WasmToolCall {
    call: ToolCall,
}

impl WasmToolCall {
    /// Validates `args` for the tool `name`; the error is the tool error text.
    pub fn parse(name: &str, args: &JsValue) -> Result<WasmToolCall, String> {
        let args = if args.is_undefined() {
            None
        } else {
            Some(convert::json(args))
        };
        tools::parse_call(name, args.as_ref()).map(|call| WasmToolCall { call })
    }
}

fn lookup(engine: &Engine, bundle: &str, path: &str) -> Option<String> {
    engine.read().ok().and_then(|s| hash_of(&s, bundle, path))
}

fn get_options(call: &ToolCall) -> GetOptions {
    match call {
        ToolCall::Get {
            section,
            offset,
            limit,
            find,
            source,
            ..
        } => GetOptions {
            section: section.clone(),
            offset: offset.map(|n| n as u64),
            limit: limit.map(|n| n as u64),
            find: find.clone(),
            source: *source,
        },
        _ => GetOptions::default(),
    }
}

#[wasm_bindgen]
impl WasmToolCall {
    /// The tool's name.
    #[wasm_bindgen(getter)]
    pub fn tool(&self) -> String {
        convert::tool_name(&self.call).to_string()
    }

    /// How the host runs it: `read` (refresh, then `answer`), `op` (run `op` against the
    /// store) or `commit` (run `op` as a commit: queued, retried once after a lost swap when
    /// `retry`).
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> String {
        match &self.call {
            ToolCall::History { .. } => "op",
            ToolCall::Write { .. }
            | ToolCall::Delete {
                replaces: Some(_), ..
            }
            | ToolCall::Transact { .. }
            | ToolCall::Restore { .. } => "commit",
            _ => "read",
        }
        .to_string()
    }

    /// For `get` with `source: true`: the ids whose source blobs the host checks first
    /// (`checkSources`); otherwise undefined.
    #[wasm_bindgen(getter, js_name = sourceIds)]
    pub fn source_ids(&self) -> Option<Vec<String>> {
        match &self.call {
            ToolCall::Get {
                ids, source: true, ..
            } => Some(ids.clone()),
            _ => None,
        }
    }

    /// Whether a commit that lost its head swap is prepared once more (no expected revision).
    #[wasm_bindgen(getter)]
    pub fn retry(&self) -> bool {
        match &self.call {
            ToolCall::Transact {
                expected_revision, ..
            } => expected_revision.is_none(),
            ToolCall::Restore { .. } => false,
            _ => true,
        }
    }

    /// The answer of a `read` call from the served state: `{text, isError}`.
    pub fn answer(&self, engine: &WasmEngine, today: &str) -> JsValue {
        let eng = &engine.engine;
        let r: Result<String, Error> = match &self.call {
            ToolCall::Manifest { bundle } => eng.read().and_then(|s| {
                manifest::manifest(s.model(), eng.tenant(), bundle.as_deref(), today)
            }),
            ToolCall::Snapshot => eng.read().map(|s| s.snapshot_id()),
            ToolCall::Get { ids, .. } => eng.read().and_then(|s| {
                s.get(ids, &get_options(&self.call))
                    .map(|r| read::render_mcp(&r))
            }),
            ToolCall::Search { query, k, bundle } => eng.read().and_then(|s| {
                let opts = langonrock_core::search::SearchOptions {
                    k: *k,
                    bundle: bundle.clone(),
                    expand: true,
                };
                s.search(eng.tenant(), query, &opts, today)
            }),
            ToolCall::Delete {
                bundle,
                path,
                replaces: None,
            } => {
                let current = lookup(eng, bundle, path);
                return convert::tool_answer(&tools::delete_needs_hash(current.as_deref()), true);
            }
            _ => Err(Error::Invalid(format!(
                "tool {} is not a read",
                convert::tool_name(&self.call)
            ))),
        };
        match r {
            Ok(t) => convert::tool_answer(&t, false),
            Err(e) => convert::tool_answer(&e.message(), true),
        }
    }

    /// The operation of an `op` or `commit` call; its done value is the answer text.
    pub fn op(&self, engine: &WasmEngine, created: &str) -> JsResult<WasmOp> {
        let eng = &engine.engine;
        Ok(match self.call.clone() {
            ToolCall::Write {
                bundle,
                path,
                content,
                replaces,
            } => WasmOp::text(
                eng.write(
                    &bundle,
                    &path,
                    content.as_str(),
                    replaces.as_deref(),
                    created,
                ),
                move |r, e| {
                    let b = e.read().map_or_else(
                        |_| bundle.clone(),
                        |s| tools::stored_bundle(s.model(), &bundle),
                    );
                    tools::write_success(&b, &validate::nfc(&path), &r)
                },
            ),
            ToolCall::Delete {
                bundle,
                path,
                replaces: Some(h),
            } => {
                let b = eng.read().map_or_else(
                    |_| bundle.clone(),
                    |s| tools::stored_bundle(s.model(), &bundle),
                );
                WasmOp::text(
                    eng.delete(&bundle, &path, Some(&h), created),
                    move |r, _| tools::delete_success(&b, &validate::nfc(&path), &r),
                )
            }
            ToolCall::Transact {
                changes,
                expected_revision,
            } => {
                let request = tools::transaction_request(&changes, expected_revision.as_deref());
                let txn = js(engine::parse_transaction(&request))?;
                WasmOp::text(eng.transact(txn, created), move |r, _| {
                    tools::transact_success(&r, &changes)
                })
            }
            ToolCall::Restore {
                revision,
                expected_revision,
            } => WasmOp::text(
                eng.restore(
                    RestoreRequest {
                        revision,
                        expected_revision,
                    },
                    created,
                ),
                |r, _| tools::revision_answer(&r, &[]),
            ),
            ToolCall::History { before, limit } => WasmOp::text(
                eng.history(HistoryRequest {
                    before,
                    limit: limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                }),
                |page, _| serde_json::to_string(&page).unwrap_or_default(),
            ),
            _ => {
                return Err(to_js(&Error::Invalid(format!(
                    "tool {} is not an operation",
                    convert::tool_name(&self.call)
                ))))
            }
        })
    }

    /// The error text of a failed `op` or `commit` call (agent.md §6.3–§6.5), with the retry
    /// lines looked up in the served state (refresh first; lookup failures count as absent).
    pub fn failure(&self, engine: &WasmEngine, error: JsValue) -> String {
        let e = from_js(&error);
        let eng = &engine.engine;
        match &self.call {
            ToolCall::Write { bundle, path, .. } => {
                let current = tools::looks_up_after(&e)
                    .then(|| lookup(eng, bundle, path))
                    .flatten();
                tools::write_failure(&e, current.as_deref())
            }
            ToolCall::Delete { bundle, path, .. } => {
                let current = tools::looks_up_after(&e)
                    .then(|| lookup(eng, bundle, path))
                    .flatten();
                tools::delete_failure(&e, current.as_deref())
            }
            ToolCall::Transact { changes, .. } => {
                let tied = tools::tied_changes(&e, changes, |b, p| lookup(eng, b, p));
                tools::transact_failure(&e, &tied)
            }
            _ => e.message(),
        }
    }
}
