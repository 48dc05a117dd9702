//! The engine of one tenant for JS hosts, its operations as step machines, and tool calls.
//!
//! Every method is synchronous. Reads answer from the served state at once; operations that
//! touch the store return a [`WasmOp`], which the host resumes with the answer to each store
//! step (awaited in JS between two calls). No borrow of the engine outlives a call, so JS may
//! read while an operation waits for its store.

use crate::convert;
use crate::error::{from_js, to_js};
use langonrock_core::connection::{self, local, ConnAnswer, ConnOp, ConnStep, DerivedTimer};
use langonrock_core::engine::{
    self, Answer, Engine, GcOptions, ImportRequest, Op, RepairRequest, RestoreRequest, Served, Step,
};
use langonrock_core::tools::{self, Reply, ToolAnswer, ToolCall, ToolOp, ToolStep};
use langonrock_core::{manifest, Error};
use std::cell::RefCell;
use std::rc::Rc;
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
        }
    }
}

#[wasm_bindgen]
impl WasmOp {
    /// Advances the operation: `answer` is undefined on the first call, then the answer to
    /// the last step. Returns the next step (`{need: …}`) or `{done: value}`.
    pub fn resume(&mut self, engine: &mut WasmEngine, answer: JsValue) -> JsResult<JsValue> {
        crate::heap::step();
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
        match js(self.inner.resume(&mut engine.engine, answer))? {
            Step::Need(n) => Ok(convert::need(&n)),
            Step::Done(v) => Ok(convert::done(&v)),
        }
    }
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

    /// The manifest as data (see core's `rows`): `{tenant, bundles, rows: [{id, bundle,
    /// path, kind, status, grain, summary, title, links}]}`, the TSV's rows in its order.
    #[wasm_bindgen(js_name = manifestRows)]
    pub fn manifest_rows(&self, bundle: Option<String>, today: &str) -> JsResult<JsValue> {
        let s = self.served()?;
        js(langonrock_core::rows::manifest_rows(
            s.model(),
            self.engine.tenant(),
            bundle.as_deref(),
            today,
        )
        .and_then(|r| convert::to_js(&r)))
    }

    /// A search as data: `{query, bundle, direct, linked, hits: [row + {pos, linked}]}`, the
    /// search TSV's rows in its order.
    #[wasm_bindgen(js_name = searchRows)]
    pub fn search_rows(&self, query: JsValue, options: JsValue, today: &str) -> JsResult<JsValue> {
        let query = query
            .as_string()
            .ok_or_else(|| to_js(&Error::Invalid("search query must be a string".into())))?;
        let opts = js(convert::search_options(&options))?;
        let s = self.served()?;
        js(s.search_rows(&query, &opts, today)
            .and_then(|r| convert::to_js(&r)))
    }

    /// One concept's compiled fields (its row, the full `description`, `frontmatter`,
    /// `bodyStart`, `sections`, `diagnostics`), or null for an unknown id.
    #[wasm_bindgen(js_name = conceptInfo)]
    pub fn concept_info(&self, id: &str, today: &str) -> JsResult<JsValue> {
        let s = self.served()?;
        match js(s.concept_info(id, today))? {
            Some(c) => js(convert::to_js(&c)),
            None => Ok(JsValue::NULL),
        }
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
    /// undefined. With `texts` it carries the documents' texts (for a store that cannot hand
    /// its source records out in place: every store but the files store).
    #[wasm_bindgen(js_name = takeDerived)]
    pub fn take_derived(&mut self, today: &str, texts: bool) -> Option<js_sys::Object> {
        crate::heap::step();
        let (key, bytes) = self.engine.take_derived()?.derived_record(today, texts)?;
        Some(convert::record(&key, &bytes))
    }

    /// Whether writing the due derived record pays for a connection about to close (the
    /// core's `Engine::derived_pays`).
    #[wasm_bindgen(js_name = derivedPays)]
    pub fn derived_pays(&self) -> bool {
        self.engine.derived_pays()
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

    /// Reads the store's head and loads it when it moved (also the first open): the raw
    /// engine op a host runs when a connection op asks it to refresh.
    pub fn refresh(&self) -> WasmOp {
        WasmOp::new(self.engine.refresh())
    }

    /// Whether the served state's derived record is due (for the host's derived timer).
    #[wasm_bindgen(js_name = derivedDue)]
    pub fn derived_due(&self) -> bool {
        self.engine.derived_due()
    }

    /// `readSource(bundle, path)` (read.md §6.2): `{content, hash}` or null. A read.
    #[wasm_bindgen(js_name = readSource)]
    pub fn read_source(&self, bundle: &str, path: &str) -> WasmConnOp {
        WasmConnOp::js(connection::read_source(bundle, path))
    }

    /// A read under the connection policy: refresh unless busy, then a `{read: true}` step
    /// where the host reads the served state synchronously (through this engine's read
    /// methods) and answers `{read: {value}}` or `{read: {error}}`; a read that met a bad
    /// derived record is asked once more after a refresh. `check` names the sources the
    /// read returns, verified first (engine.md §9.1 rule 1): an array of concept ids (`get`
    /// with `source`), `true` for every document (export), undefined for none.
    #[wasm_bindgen(js_name = readOp)]
    pub fn read_op(&self, check: JsValue) -> JsResult<WasmConnOp> {
        let slot: Slot = Rc::new(RefCell::new(None));
        let s = slot.clone();
        let f = move |_: &Served| {
            s.borrow_mut()
                .take()
                .unwrap_or_else(|| Err(Error::Invalid("the host did not read".into())))
        };
        let op = if check.is_undefined() || check.is_null() {
            ConnOp::read(f)
        } else {
            let ids = if check.as_bool() == Some(true) {
                None
            } else {
                Some(js(convert::ids(&check))?)
            };
            ConnOp::read_after(move |e| e.check_sources(ids.clone()), f)
        };
        Ok(WasmConnOp {
            held: Held::Read(op, slot),
        })
    }

    /// `write` (engine.md §4.1), a commit. Arguments are checked in the order of engine.md
    /// §5.2 rule 3.
    pub fn write(
        &self,
        bundle: JsValue,
        path: JsValue,
        content: JsValue,
        replaces: JsValue,
    ) -> WasmConnOp {
        refusing(true, || {
            let (bundle, path, content, replaces) =
                convert::write_args(&bundle, &path, &content, &replaces)?;
            Ok(WasmConnOp::js(connection::write(
                &bundle,
                &path,
                content,
                replaces.as_deref(),
            )))
        })
    }

    /// `delete` (engine.md §4.2), a commit.
    pub fn delete(&self, bundle: JsValue, path: JsValue, replaces: JsValue) -> WasmConnOp {
        refusing(true, || {
            let (bundle, path, hash) = convert::delete_args(&bundle, &path, &replaces)?;
            Ok(WasmConnOp::js(connection::delete(
                &bundle,
                &path,
                hash.as_deref(),
            )))
        })
    }

    /// `deleteBundle` (engine.md §4.4), a commit.
    #[wasm_bindgen(js_name = deleteBundle)]
    pub fn delete_bundle(&self, bundle: &str) -> WasmConnOp {
        WasmConnOp::js(connection::delete_bundle(bundle))
    }

    /// `transact({changes, expectedRevision?})` (engine.md §5), a commit; the request is
    /// validated here.
    pub fn transact(&self, request: JsValue) -> WasmConnOp {
        refusing(true, || {
            let txn = convert::transaction(&request)?;
            Ok(WasmConnOp::js(connection::transact(txn)))
        })
    }

    /// `history({before?, limit?})` (engine.md §6), a read.
    pub fn history(&self, options: JsValue) -> JsResult<WasmConnOp> {
        let req = js(engine::parse_history_request(&convert::json(&options)))?;
        Ok(WasmConnOp::js(connection::history(req)))
    }

    /// `restore({revision, expectedRevision})` (engine.md §7), a commit.
    pub fn restore(&self, request: JsValue) -> WasmConnOp {
        refusing(true, || {
            let v = convert::json(&request);
            engine::parse_restore_request(&v)?;
            let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
            let req = RestoreRequest {
                revision: field("revision"),
                expected_revision: field("expectedRevision"),
            };
            Ok(WasmConnOp::js(connection::restore(req)))
        })
    }

    /// `gc({keep?, dryRun?, graceMs?})` (engine.md §10) at the clock's time, exclusive.
    pub fn gc(&self, options: JsValue) -> WasmConnOp {
        let mut opts = GcOptions::at(0);
        let v = convert::json(&options);
        if let Some(d) = v.get("dryRun").and_then(|d| d.as_bool()) {
            opts.dry_run = d;
        }
        refusing(!opts.dry_run, || {
            match v.get("keep") {
                None | Some(serde_json::Value::Null) => {}
                Some(k) => opts.keep = k.as_i64().unwrap_or(0),
            }
            match v.get("graceMs") {
                None | Some(serde_json::Value::Null) => {}
                Some(g) => {
                    opts.grace_ms = g.as_f64().filter(|g| *g >= 0.0).ok_or_else(|| {
                        Error::Invalid("database gc graceMs must be a non-negative number".into())
                    })? as u64
                }
            }
            Ok(WasmConnOp::js(connection::gc(opts)))
        })
    }

    /// `verify()` (engine.md §11), exclusive.
    pub fn verify(&self) -> WasmConnOp {
        WasmConnOp::js(connection::verify())
    }

    /// `warm()`: readies a state decoded from a derived record for commits, the work its
    /// first commit would do otherwise (`Engine::warm`); exclusive. Done: whether there was
    /// any.
    pub fn warm(&self) -> WasmConnOp {
        WasmConnOp::js(connection::warm())
    }

    /// `repair({revision, expectedHead})` (engine.md §11.4), exclusive.
    pub fn repair(&self, request: JsValue) -> JsResult<WasmConnOp> {
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
        Ok(WasmConnOp::js(connection::repair(RepairRequest {
            revision,
            expected_head,
        })))
    }

    /// `import` (cli.md §4), a commit: `documents` is `[{bundle, path, content}]` as read
    /// from the folder, `location` its key.
    pub fn import(&self, location: String, documents: JsValue, strict: bool) -> WasmConnOp {
        // The texts arrive as UTF-16 strings: about their length in UTF-8 bytes, copied in
        // once, then about three times that for the compile, the index and the records.
        crate::heap::expect(4 * convert::documents_len(&documents));
        refusing(true, || {
            let documents = convert::documents(&documents)?;
            Ok(WasmConnOp::js(connection::import(ImportRequest {
                location,
                documents,
                strict,
            })))
        })
    }

    /// `import` of a folder's documents as a host read them into a `WasmSources` (which
    /// this empties): one crossing of their bytes instead of one string per document.
    #[wasm_bindgen(js_name = importSources)]
    pub fn import_sources(
        &self,
        location: String,
        sources: &mut WasmSources,
        strict: bool,
    ) -> WasmConnOp {
        let documents = std::mem::take(&mut sources.docs);
        sources.planned.clear();
        // The compile, the index and the commit's records take about three times the text.
        crate::heap::expect(3 * std::mem::take(&mut sources.bytes));
        refusing(true, || {
            Ok(WasmConnOp::js(connection::import(ImportRequest {
                location,
                documents,
                strict,
            })))
        })
    }
}

/// A folder's plan (docs/import.md, `folder::plan`) kept in the module for a host that reads
/// the planned files into a [`WasmSources`]: the walk's paths cross in one string and the
/// plan's documents stay here, so no object per entry or document crosses either way.
#[wasm_bindgen]
pub struct WasmFolderPlan {
    plan: langonrock_core::folder::Plan,
}

#[wasm_bindgen]
impl WasmFolderPlan {
    /// Plans a folder as `planFolder` does: `paths` holds the walk's relative paths, each
    /// ended by a NUL (no path holds one), `kinds[i]` the kind of the i-th (0 file, 1 link,
    /// 2 dir, 3 other), `options` `{bundle?, name?, shown}`. Throws `INVALID` as `planFolder`.
    #[wasm_bindgen(constructor)]
    pub fn new(paths: &str, kinds: &[u8], options: JsValue) -> JsResult<WasmFolderPlan> {
        use langonrock_core::folder::{self, EntryKind};
        let mut list = Vec::with_capacity(kinds.len());
        let mut rest = paths;
        for &k in kinds {
            let Some((path, after)) = rest.split_once('\0') else {
                break;
            };
            rest = after;
            let kind = match k {
                0 => EntryKind::File,
                1 => EntryKind::Link,
                2 => EntryKind::Dir,
                _ => EntryKind::Other,
            };
            list.push(folder::Entry { path, kind });
        }
        if list.len() != kinds.len() || !rest.is_empty() {
            return Err(to_js(&Error::Invalid(
                "folder plan: one NUL-ended path per kind".into(),
            )));
        }
        let plan = convert::plan_with_options(&list, &options);
        js(plan.map(|plan| WasmFolderPlan { plan }))
    }

    /// The planned documents' entries (indexes into the walk's list), in the plan's order
    /// (bundle, then path): the files to read, in the order [`WasmSources::push`] takes them.
    #[wasm_bindgen(getter)]
    pub fn entries(&self) -> Vec<u32> {
        self.plan.documents.iter().map(|d| d.entry as u32).collect()
    }

    /// The plan as `planFolder` returns it (`convert::folder_plan`).
    #[wasm_bindgen(js_name = toJs)]
    pub fn to_js(&self) -> JsResult<JsValue> {
        js(convert::folder_plan(&self.plan))
    }

    /// The decision in one line.
    #[wasm_bindgen(getter)]
    pub fn line(&self) -> String {
        self.plan.line.clone()
    }

    /// `"bundles"` or `"one"`.
    #[wasm_bindgen(getter)]
    pub fn layout(&self) -> String {
        convert::layout_name(&self.plan.layout).into()
    }

    /// The one bundle's name of the layout `"one"`.
    #[wasm_bindgen(getter)]
    pub fn bundle(&self) -> Option<String> {
        match &self.plan.layout {
            langonrock_core::folder::Layout::Bundles => None,
            langonrock_core::folder::Layout::OneBundle { bundle, .. } => Some(bundle.clone()),
        }
    }
}

/// A folder's documents as a host read them, held in the module for an import: the plan's
/// documents, whose bytes the host pushes in the plan's order, a run of them at a time,
/// each checked as UTF-8 as it comes in (docs/import.md: the first document in their order
/// that is not UTF-8 is the error).
#[wasm_bindgen]
pub struct WasmSources {
    planned: Vec<(String, String)>,
    docs: Vec<langonrock_core::compile::SourceDoc>,
    bytes: usize,
}

#[wasm_bindgen]
impl WasmSources {
    /// Sources for `plan`'s documents, none read yet.
    #[wasm_bindgen(constructor)]
    pub fn new(plan: &WasmFolderPlan) -> WasmSources {
        WasmSources {
            planned: plan
                .plan
                .documents
                .iter()
                .map(|d| (d.bundle.clone(), d.path.clone()))
                .collect(),
            docs: Vec::with_capacity(plan.plan.documents.len()),
            bytes: 0,
        }
    }

    /// The next `lens.len()` documents of the plan: the i-th is the next `lens[i]` bytes of
    /// `bytes`. Throws `INVALID` naming the first that is not UTF-8.
    pub fn push(&mut self, bytes: &[u8], lens: &[u32]) -> JsResult<()> {
        js(self.read(bytes, lens))
    }

    /// How many documents it holds.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.docs.len()
    }
}

impl WasmSources {
    fn read(&mut self, bytes: &[u8], lens: &[u32]) -> Result<(), Error> {
        let total: u64 = lens.iter().map(|&n| u64::from(n)).sum();
        if self.docs.len() + lens.len() > self.planned.len() || total != bytes.len() as u64 {
            return Err(Error::Invalid(
                "import sources: at most the plan's documents, the lengths adding up to the \
                 bytes"
                    .into(),
            ));
        }
        if self.docs.is_empty() && !lens.is_empty() {
            // The first run tells about how large the documents are: headroom for all their
            // texts and the import's compile, index and records (about three times the
            // texts), grown at once rather than a step at a time (each growth of the memory
            // costs V8 a full garbage collection).
            let whole = bytes.len() / lens.len() * self.planned.len();
            crate::heap::expect(4 * whole);
        } else {
            crate::heap::step();
        }
        let mut at = 0;
        for &n in lens {
            let (bundle, path) = std::mem::take(&mut self.planned[self.docs.len()]);
            let end = at + n as usize;
            let text = langonrock_core::folder::source_text(&bundle, &path, &bytes[at..end])?;
            self.docs.push(langonrock_core::compile::SourceDoc::new(
                bundle,
                path,
                Arc::<str>::from(text),
            ));
            at = end;
        }
        self.bytes += bytes.len();
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Connection ops (the core's connection policy)

/// What a host's read put for the op to return.
type Slot = Rc<RefCell<Option<Result<JsValue, Error>>>>;

enum Held {
    /// A library op; its result is converted to JS.
    Js(ConnOp<'static, Result<JsValue, Error>>),
    /// A read the host does (`readOp`); the value it read comes through the slot.
    Read(ConnOp<'static, JsValue>, Slot),
    /// A tool call's need; its answer stays here for the tool call.
    Tool(ConnOp<'static, ToolAnswer>, Option<ToolAnswer>),
}

/// A library operation under the core's connection policy (docs/connection.md). Call
/// `begin(engine, busy, readOnly)`, then `resume(engine, answer)` with the answer to each
/// step, until a step is `{done: value}`; a failure throws the operation's error. Steps:
/// `{refresh: {unlessBusy}}` (run one refresh; answer `{refreshed: bool}` or
/// `{refreshError: error}`), `{now: true}` (answer `{now: {commitTime, millis}}`), or a store
/// step as `serveNeed` takes it. Run it alone, queued behind earlier ones, when `exclusive`.
#[wasm_bindgen]
pub struct WasmConnOp {
    held: Held,
}

/// A change's op, or, when its request does not validate, an op that refuses it after the
/// read-only check (so a read-only connection answers `connection is read-only` first).
fn refusing(writes: bool, make: impl FnOnce() -> Result<WasmConnOp, Error>) -> WasmConnOp {
    make().unwrap_or_else(|e| WasmConnOp::js(ConnOp::<'static, ()>::refused(e, writes)))
}

impl WasmConnOp {
    fn js<T: serde::Serialize + 'static>(op: ConnOp<'static, T>) -> WasmConnOp {
        WasmConnOp {
            held: Held::Js(op.map(|r| r.and_then(|t| convert::to_js(&t)))),
        }
    }

    /// Runs the read steps of ops whose reads are the core's (all but `Read`) at once: JS
    /// reads are synchronous.
    fn settle<T: 'static>(
        engine: &mut Engine,
        op: &mut ConnOp<'static, T>,
        mut step: ConnStep<T>,
    ) -> ConnStep<T> {
        while matches!(step, ConnStep::Read) {
            let served = engine.read();
            op.run_read(served.as_ref());
            step = op.resume(engine, ConnAnswer::Read);
        }
        step
    }

    fn advance(
        &mut self,
        engine: &mut Engine,
        answer: Option<ConnAnswer>,
        busy: bool,
        read_only: bool,
    ) -> JsResult<JsValue> {
        match &mut self.held {
            Held::Js(op) => {
                let s = match answer {
                    None => op.begin(engine, busy, read_only),
                    Some(a) => op.resume(engine, a),
                };
                match WasmConnOp::settle(engine, op, s) {
                    ConnStep::Done(Ok(Ok(v))) => Ok(convert::done(&v)),
                    ConnStep::Done(Ok(Err(e)) | Err(e)) => Err(to_js(&e)),
                    s => Ok(step_js(&s)),
                }
            }
            Held::Tool(op, out) => {
                let s = match answer {
                    None => op.begin(engine, busy, read_only),
                    Some(a) => op.resume(engine, a),
                };
                match WasmConnOp::settle(engine, op, s) {
                    ConnStep::Done(r) => {
                        *out = Some(r.unwrap_or_else(|e| ToolAnswer::Text(Err(e))));
                        Ok(convert::done(&JsValue::UNDEFINED))
                    }
                    s => Ok(step_js(&s)),
                }
            }
            Held::Read(op, _) => {
                let s = match answer {
                    None => op.begin(engine, busy, read_only),
                    Some(a) => op.resume(engine, a),
                };
                match s {
                    ConnStep::Done(Ok(v)) => Ok(convert::done(&v)),
                    ConnStep::Done(Err(e)) => Err(to_js(&e)),
                    s => Ok(step_js(&s)),
                }
            }
        }
    }
}

fn step_js<T>(s: &ConnStep<T>) -> JsValue {
    let o = js_sys::Object::new();
    let set = convert::set;
    match s {
        ConnStep::Refresh { unless_busy } => {
            let r = js_sys::Object::new();
            set(&r, "unlessBusy", &JsValue::from_bool(*unless_busy));
            set(&o, "refresh", &r);
        }
        ConnStep::Now => set(&o, "now", &JsValue::TRUE),
        ConnStep::Read => set(&o, "read", &JsValue::TRUE),
        ConnStep::Store(n) => return convert::need(n),
        ConnStep::Done(_) => set(&o, "done", &JsValue::UNDEFINED),
    }
    o.into()
}

use convert::{get, has};

#[wasm_bindgen]
impl WasmConnOp {
    /// Whether the op must run alone, after earlier exclusive ops (commits, gc, verify,
    /// repair, import); reads meanwhile pass `busy`.
    #[wasm_bindgen(getter)]
    pub fn exclusive(&self) -> bool {
        match &self.held {
            Held::Js(op) => op.exclusive(),
            Held::Tool(op, _) => op.exclusive(),
            Held::Read(op, _) => op.exclusive(),
        }
    }

    /// Starts the op: `busy`, an exclusive op of the connection is in flight (a read then
    /// serves the published state); `readOnly`, the connection refuses changes.
    pub fn begin(
        &mut self,
        engine: &mut WasmEngine,
        busy: bool,
        read_only: bool,
    ) -> JsResult<JsValue> {
        crate::heap::step();
        self.advance(&mut engine.engine, None, busy, read_only)
    }

    /// Advances the op with the answer to its last step.
    pub fn resume(&mut self, engine: &mut WasmEngine, answer: JsValue) -> JsResult<JsValue> {
        crate::heap::step();
        let e = &mut engine.engine;
        let a = if has(&answer, "refreshed") {
            ConnAnswer::Refreshed(Ok(get(&answer, "refreshed").is_truthy()))
        } else if has(&answer, "refreshError") {
            ConnAnswer::Refreshed(Err(from_js(&get(&answer, "refreshError"))))
        } else if has(&answer, "now") {
            let now = get(&answer, "now");
            ConnAnswer::Now {
                commit_time: get(&now, "commitTime").as_string().unwrap_or_default(),
                millis: get(&now, "millis").as_f64().unwrap_or(0.0) as u64,
            }
        } else if has(&answer, "read") {
            let read = get(&answer, "read");
            let value = if has(&read, "error") {
                Err(from_js(&get(&read, "error")))
            } else {
                Ok(get(&read, "value"))
            };
            if let Held::Read(op, slot) = &mut self.held {
                *slot.borrow_mut() = Some(value);
                let served = e.read();
                op.run_read(served.as_ref());
            }
            ConnAnswer::Read
        } else {
            match convert::answer(&answer) {
                Ok(a) => ConnAnswer::Store(a),
                Err(err) => return Err(to_js(&self.abandon_with(e, err))),
            }
        };
        self.advance(e, Some(a), false, false)
    }

    fn abandon_with(&mut self, engine: &mut Engine, error: Error) -> Error {
        match &mut self.held {
            Held::Js(op) => op.abandon(engine, error),
            Held::Read(op, _) => op.abandon(engine, error),
            Held::Tool(op, out) => {
                let e = op.abandon(engine, error);
                *out = Some(ToolAnswer::Text(Err(e.clone())));
                e
            }
        }
    }

    /// For a host whose step threw: ends the op and returns the error to report (a commit
    /// whose outcome was lost is `INDETERMINATE_COMMIT`).
    pub fn abandon(&mut self, engine: &mut WasmEngine, error: JsValue) -> JsValue {
        to_js(&self.abandon_with(&mut engine.engine, from_js(&error)))
    }
}

/// The derived record schedule of a connection (the core's `DerivedTimer`): after each op,
/// `afterOp(now, due, exclusive)` gives the time to (re)arm the timer at, or undefined; when
/// it fires, `fire(now)` says whether to write the record now (else re-arm at `deadline`);
/// `close()` whether a pending one is written at close.
#[wasm_bindgen]
pub struct WasmDerivedTimer {
    timer: DerivedTimer,
}

#[wasm_bindgen]
impl WasmDerivedTimer {
    /// A schedule; a read-only connection's never fires. `delay_ms`: the host's pause
    /// before the record is written, when not the core's default.
    #[wasm_bindgen(constructor)]
    pub fn new(read_only: bool, delay_ms: Option<f64>) -> WasmDerivedTimer {
        WasmDerivedTimer {
            timer: match delay_ms {
                Some(d) => DerivedTimer::with_delay(read_only, d as u64),
                None => DerivedTimer::new(read_only),
            },
        }
    }

    /// After an operation at `now` (milliseconds).
    #[wasm_bindgen(js_name = afterOp)]
    pub fn after_op(&mut self, now: f64, due: bool, exclusive: bool) -> Option<f64> {
        self.timer
            .after_op(now as u64, due, exclusive)
            .map(|t| t as f64)
    }

    /// The timer fired at `now`: whether to write the record now.
    pub fn fire(&mut self, now: f64) -> bool {
        self.timer.fire(now as u64)
    }

    /// When the pending record is due, if one is pending.
    #[wasm_bindgen(getter)]
    pub fn deadline(&self) -> Option<f64> {
        self.timer.deadline().map(|t| t as f64)
    }

    /// The connection closes: whether a pending record is written now.
    pub fn close(&mut self) -> bool {
        self.timer.close()
    }
}

// ---------------------------------------------------------------------------------------
// Tool calls (agent.md §6): the core's tool op; the host runs each need's op.

/// A tool call whose arguments passed the tool's input schema (agent.md §1.5), run by the
/// core's tool op: `start(readOnly, today)` gives `{done: {text, isError}}` or `{op}`, a
/// `WasmConnOp` to run as any other; then `answer(op)` with that op once it is done (or
/// `answer(op, error)` when running it threw), until done.
#[wasm_bindgen]
pub struct WasmToolCall {
    call: Option<ToolCall>,
    op: Option<ToolOp>,
    tenant: String,
    today: String,
}

impl WasmToolCall {
    /// Validates `args` for the tool `name`; the error is the tool error text.
    pub fn parse(name: &str, args: &JsValue) -> Result<WasmToolCall, String> {
        let (args, ill_formed) = if args.is_undefined() {
            (None, Vec::new())
        } else {
            let (v, flaws) = convert::json_checked(args);
            (Some(v), flaws)
        };
        tools::parse_call_with(name, args.as_ref(), &ill_formed).map(|call| WasmToolCall {
            call: Some(call),
            op: None,
            tenant: String::new(),
            today: String::new(),
        })
    }

    fn step(&mut self, step: ToolStep) -> JsValue {
        let o = js_sys::Object::new();
        match step {
            ToolStep::Done(r) => {
                let _ = js_sys::Reflect::set(
                    &o,
                    &JsValue::from_str("done"),
                    &convert::tool_answer(&r.text, r.is_error),
                );
            }
            ToolStep::Need(n) => {
                let op = WasmConnOp {
                    held: Held::Tool(local::answer(n, &self.tenant, &self.today), None),
                };
                let _ = js_sys::Reflect::set(&o, &JsValue::from_str("op"), &JsValue::from(op));
            }
        }
        o.into()
    }
}

#[wasm_bindgen]
impl WasmToolCall {
    /// The tool's name.
    #[wasm_bindgen(getter)]
    pub fn tool(&self) -> String {
        self.op
            .as_ref()
            .map(|o| o.call())
            .or(self.call.as_ref())
            .map_or("", convert::tool_name)
            .to_string()
    }

    /// Starts the call on a connection to `engine`'s tenant, reads dated `today`.
    pub fn start(&mut self, engine: &WasmEngine, read_only: bool, today: &str) -> JsValue {
        self.tenant = engine.engine.tenant().to_string();
        self.today = today.to_string();
        let Some(call) = self.call.take() else {
            return self.step(ToolStep::Done(Reply::error(
                "the tool call already started".into(),
            )));
        };
        let mut op = ToolOp::new(call, read_only);
        let step = op.resume(None);
        self.op = Some(op);
        self.step(step)
    }

    /// Goes on with the answer `op` (the last step's op, done) holds; `error` when running
    /// it threw.
    pub fn answer(&mut self, op: &mut WasmConnOp, error: JsValue) -> JsValue {
        let answer = match &mut op.held {
            Held::Tool(_, a) => a.take(),
            _ => None,
        }
        .unwrap_or_else(|| {
            ToolAnswer::Text(Err(if error.is_undefined() {
                Error::Invalid("the tool op did not finish".into())
            } else {
                from_js(&error)
            }))
        });
        let step = match &mut self.op {
            Some(t) => t.resume(Some(answer)),
            None => ToolStep::Done(Reply::error("the tool call has not started".into())),
        };
        self.step(step)
    }
}
