//! What the package's JS stores take from the core: the files layout
//! (`langonrock_core::layout`) and the strict memory store's head check
//! (`langonrock_core::engine::reach`), so neither is written again in JS.

use crate::convert;
use crate::error::to_js;
use langonrock_core::engine::reach::HeadCheck;
use langonrock_core::engine::{Digest, Key, Kind};
use langonrock_core::{layout, pack, Error};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The files layout's names (docs/records.md): `{tenants, heads, floor, hint, staging,
/// writerLock, legacyHead, kinds, folders, packs, packHeader, stagingLeftoverMs}`, `folders`
/// mapping each kind to its folder.
#[wasm_bindgen(js_name = filesLayout)]
pub fn files_layout() -> Result<JsValue, JsValue> {
    let folders: serde_json::Map<String, serde_json::Value> = layout::KINDS
        .iter()
        .map(|k| (k.as_str().to_string(), layout::kind_dir(*k).into()))
        .collect();
    let v = serde_json::json!({
        "tenants": layout::TENANTS,
        "heads": layout::HEADS,
        "floor": layout::FLOOR,
        "hint": layout::HINT,
        "staging": layout::STAGING,
        "writerLock": layout::WRITER_LOCK,
        "legacyHead": layout::LEGACY_HEAD,
        "kinds": layout::KINDS.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        "folders": folders,
        "packs": layout::PACKS,
        "packHeader": langonrock_core::pack::HEADER,
        "stagingLeftoverMs": layout::STAGING_LEFTOVER_MS,
    });
    convert::to_js(&v).map_err(|e| to_js(&e))
}

/// A generation from a file name or the text of `floor`/`hint`; 0 when it is not one.
#[wasm_bindgen(js_name = parseGeneration)]
pub fn parse_generation(s: &str) -> f64 {
    layout::parse_generation(s).map_or(0.0, |g| g as f64)
}

/// The generation a swap links after `current` (0: no head).
#[wasm_bindgen(js_name = nextGeneration)]
pub fn next_generation(current: f64) -> f64 {
    layout::next_generation(current as u64) as f64
}

/// Whether a generation just linked lost a race with collection (it is below the floor;
/// `floor` 0: none).
#[wasm_bindgen(js_name = lostToCollection)]
pub fn lost_to_collection(linked: f64, floor: f64) -> bool {
    layout::lost_to_collection(linked as u64, (floor >= 1.0).then_some(floor as u64))
}

/// The floor collection writes before removing old generations, or undefined to leave it
/// (`floor` 0: none).
#[wasm_bindgen(js_name = raisedFloor)]
pub fn raised_floor(current: f64, floor: f64) -> Option<f64> {
    layout::raised_floor(current as u64, (floor >= 1.0).then_some(floor as u64)).map(|g| g as f64)
}

/// Whether collection removes generation `g` once the floor is `floor`.
#[wasm_bindgen(js_name = collectableGeneration)]
pub fn collectable_generation(g: f64, floor: f64) -> bool {
    layout::collectable_generation(g as u64, floor as u64)
}

/// A staged file's name: `<tag>-<unique>`.
#[wasm_bindgen(js_name = stagingName)]
pub fn staging_name(tag: &str, unique: &str) -> String {
    layout::staging_name(tag, unique)
}

fn key(kind: &str, digest: &str) -> Result<Key, Error> {
    match (Kind::parse(kind), Digest::from_hex(digest)) {
        (Some(k), Some(d)) => Ok(Key::new(k, d)),
        _ => Err(Error::Invalid(format!("invalid store key {kind}/{digest}"))),
    }
}

/// A record's file relative to the tenant's folder: `<kind folder>/<hex>`.
#[wasm_bindgen(js_name = recordPath)]
pub fn record_path(kind: &str, digest: &str) -> Result<String, JsValue> {
    key(kind, digest)
        .map(|k| layout::record_path(&k))
        .map_err(|e| to_js(&e))
}

/// The corruption message of different bytes put under an existing record (the native
/// store's words).
#[wasm_bindgen(js_name = differentBytes)]
pub fn different_bytes(kind: &str, digest: &str) -> Result<String, JsValue> {
    key(kind, digest)
        .map(|k| layout::different_bytes(&k))
        .map_err(|e| to_js(&e))
}

/// Whether collection removes the staging file `name` (core's `layout::collectable_staging`;
/// times in milliseconds since the epoch).
#[wasm_bindgen(js_name = collectableStaging)]
pub fn collectable_staging(name: &str, modified: f64, before: f64, now: f64) -> bool {
    layout::collectable_staging(name, modified as u64, before as u64, now as u64)
}

/// Whether a file name in `packs/` names a pack.
#[wasm_bindgen(js_name = isPackName)]
pub fn is_pack_name(name: &str) -> bool {
    layout::is_pack_name(name)
}

/// Whether records of `kind` go into packs (sources, revisions, records).
#[wasm_bindgen]
pub fn packable(kind: &str) -> bool {
    Kind::parse(kind).is_some_and(pack::packable)
}

fn corrupt(m: String) -> JsValue {
    to_js(&Error::Corrupt(m))
}

/// The head of a pack of the records whose keys are `keys`, each `<kind>/<digest>` ended by
/// a newline (one string: no value per record crosses), with the byte lengths `lens[i]`:
/// `{name, head: Uint8Array, order: Uint32Array, offsets: Float64Array, len}`. Write `head`,
/// then the bytes of record `order[0]`, `order[1]`, …, which start at `offsets[0]`,
/// `offsets[1]`, …; the file is `len` bytes long and named `name`.
#[wasm_bindgen(js_name = packHead)]
pub fn pack_head(keys: &str, lens: Vec<f64>) -> Result<JsValue, JsValue> {
    let mut recs: Vec<(Key, usize)> = Vec::with_capacity(lens.len());
    let mut rest = keys;
    for &len in &lens {
        let Some((k, after)) = rest.split_once('\n') else {
            break;
        };
        rest = after;
        let (kind, digest) = k.split_once('/').unwrap_or((k, ""));
        recs.push((key(kind, digest).map_err(|e| to_js(&e))?, len as usize));
    }
    if recs.len() != lens.len() || !rest.is_empty() {
        return Err(to_js(&Error::Invalid(
            "packHead: one newline-ended key per length".into(),
        )));
    }
    let h = pack::head(&recs).map_err(|m| to_js(&Error::Invalid(m)))?;
    let o = js_sys::Object::new();
    set(&o, "name", &JsValue::from_str(&h.name));
    set(
        &o,
        "head",
        &js_sys::Uint8Array::from(h.bytes.as_slice()).into(),
    );
    let order: Vec<u32> = h.order.iter().map(|&i| i as u32).collect();
    set(
        &o,
        "order",
        &js_sys::Uint32Array::from(order.as_slice()).into(),
    );
    let offsets: Vec<f64> = h.offsets.iter().map(|&n| n as f64).collect();
    set(
        &o,
        "offsets",
        &js_sys::Float64Array::from(offsets.as_slice()).into(),
    );
    set(&o, "len", &JsValue::from_f64(h.len as f64));
    Ok(o.into())
}

/// The length of the head of the pack `name`, from its first `packHeader` bytes and the
/// file's length; throws CORRUPT naming the pack when they are not a pack's.
#[wasm_bindgen(js_name = packHeadLength)]
pub fn pack_head_length(name: &str, header: &[u8], file_len: f64) -> Result<f64, JsValue> {
    pack::head_len(name, header, file_len as u64)
        .map(|n| n as f64)
        .map_err(corrupt)
}

/// The index of the pack `name` from its head and the file's length: `{kinds: string[],
/// digests: string[], offsets: number[], lens: number[]}`, sorted by key; throws CORRUPT
/// naming the pack when it fails a check.
#[wasm_bindgen(js_name = packIndex)]
pub fn pack_index(name: &str, head: &[u8], file_len: f64) -> Result<JsValue, JsValue> {
    let entries = pack::index(name, head, file_len as u64).map_err(corrupt)?;
    let (kinds, digests, offsets, lens) = (
        js_sys::Array::new(),
        js_sys::Array::new(),
        js_sys::Array::new(),
        js_sys::Array::new(),
    );
    for e in entries {
        kinds.push(&JsValue::from_str(e.key.kind.as_str()));
        digests.push(&JsValue::from_str(&e.key.digest.to_hex()));
        offsets.push(&JsValue::from_f64(e.offset as f64));
        lens.push(&JsValue::from_f64(f64::from(e.len)));
    }
    let o = js_sys::Object::new();
    set(&o, "kinds", &kinds.into());
    set(&o, "digests", &digests.into());
    set(&o, "offsets", &offsets.into());
    set(&o, "lens", &lens.into());
    Ok(o.into())
}

/// Which packs (by length) a commit writing a pack of `new_len` bytes merges into it
/// (core's `pack::to_merge`): their indexes.
#[wasm_bindgen(js_name = packsToMerge)]
pub fn packs_to_merge(lens: Vec<f64>, new_len: f64) -> Vec<f64> {
    let lens: Vec<u64> = lens.iter().map(|l| *l as u64).collect();
    pack::to_merge(&lens, new_len as u64)
        .into_iter()
        .map(|i| i as f64)
        .collect()
}

/// A pack's file relative to the tenant's folder: `packs/<name>`.
#[wasm_bindgen(js_name = packPath)]
pub fn pack_path(name: &str) -> String {
    layout::pack_path(name)
}

/// The strict memory store's head check of one tenant (the core's `HeadCheck`).
#[wasm_bindgen]
pub struct WasmHeadCheck {
    check: HeadCheck,
}

impl Default for WasmHeadCheck {
    fn default() -> Self {
        WasmHeadCheck::new()
    }
}

#[wasm_bindgen]
impl WasmHeadCheck {
    /// A check that knows nothing yet.
    #[wasm_bindgen(constructor)]
    pub fn new() -> WasmHeadCheck {
        WasmHeadCheck {
            check: HeadCheck::new(),
        }
    }

    /// Why `head` cannot be swapped in, or undefined: it is not a head record, or it
    /// reaches a record `lookup("<kind>/<hex>")` does not give (a `Uint8Array`, or
    /// undefined/null). On success, what it found complete is remembered.
    pub fn check(&mut self, head: &[u8], lookup: &js_sys::Function) -> Option<String> {
        self.check
            .check(head, |k| {
                let v = lookup
                    .call1(&JsValue::NULL, &JsValue::from_str(&k.to_string()))
                    .ok()?;
                v.dyn_ref::<js_sys::Uint8Array>().map(|a| a.to_vec())
            })
            .err()
    }

    /// Forgets what earlier checks found (after a record was removed).
    pub fn forget(&mut self) {
        self.check.forget();
    }
}

// ---------------------------------------------------------------------------------------
// The conformance suite (the core's interpreter of tests/data/conformance.json)

/// The cases of a conformance file, for a store that is `strict` (a memory store) or not:
/// `[{name, case}]`, `case` as JSON text for [`WasmConformance`].
#[wasm_bindgen(js_name = conformanceCases)]
pub fn conformance_cases(file: &str, strict: bool) -> Result<JsValue, JsValue> {
    let cases =
        langonrock_core::conformance::cases(file, strict).map_err(|m| to_js(&Error::Invalid(m)))?;
    let list: Vec<serde_json::Value> = cases
        .into_iter()
        .map(|(name, case)| serde_json::json!({"name": name, "case": case.to_string()}))
        .collect();
    convert::to_js(&list).map_err(|e| to_js(&e))
}

/// One conformance case, played by the core: `resume(reply)` gives the next store call
/// (`{call: "readHead"|"getMany"|"put"|"swap"|"commit"|"keys"|"remove"|"reopen"|"fault"|"pause",
/// store, …}`; the engine-like calls carry the fields of a `serveNeed` step and take its
/// answers), then `{done: true}`, or throws the failure's message.
#[wasm_bindgen]
pub struct WasmConformance {
    runner: langonrock_core::conformance::Runner,
    last: Option<langonrock_core::conformance::Call>,
}

use convert::{get, has, set};

#[wasm_bindgen]
impl WasmConformance {
    /// A runner of one case (its JSON text) on `tenant`.
    #[wasm_bindgen(constructor)]
    pub fn new(case: &str, tenant: &str) -> Result<WasmConformance, JsValue> {
        let case: serde_json::Value = serde_json::from_str(case)
            .map_err(|e| to_js(&Error::Invalid(format!("conformance case: {e}"))))?;
        Ok(WasmConformance {
            runner: langonrock_core::conformance::Runner::new(case, tenant),
            last: None,
        })
    }

    /// Advances the case with the reply to the last call (undefined first).
    pub fn resume(&mut self, reply: JsValue) -> Result<JsValue, JsValue> {
        use langonrock_core::conformance::{Call, Reply, RunStep};
        use langonrock_core::engine::{Answer, Need, StoreError, SwapOutcome};
        let reply = match self.last.take() {
            None => None,
            Some(call) => Some(if has(&reply, "failed") {
                let f = get(&reply, "failed");
                let m = get(&f, "message").as_string().unwrap_or_default();
                Reply::Failed(
                    if get(&f, "kind").as_string().as_deref() == Some("corrupt") {
                        StoreError::Corrupt(m)
                    } else {
                        StoreError::Failed(m)
                    },
                )
            } else {
                match call {
                    Call::Put { .. } | Call::Reopen | Call::Fault { .. } | Call::Pause { .. } => {
                        Reply::Done
                    }
                    Call::Swap { .. } => {
                        Reply::Swap(match get(&reply, "swap").as_string().as_deref() {
                            Some("swapped") => SwapOutcome::Swapped,
                            Some("conflict") => SwapOutcome::Conflict,
                            Some("indeterminate") => {
                                SwapOutcome::Indeterminate("indeterminate".into())
                            }
                            _ => SwapOutcome::Failed("the swap failed".into()),
                        })
                    }
                    _ => match convert::answer(&reply).map_err(|e| to_js(&e))? {
                        Answer::Head(h) => Reply::Head(h),
                        Answer::Records(r) => Reply::Records(r),
                        Answer::Shared(r) => {
                            Reply::Records(r.into_iter().map(|b| b.map(|b| b.to_vec())).collect())
                        }
                        Answer::Outcome(o) => Reply::Outcome(o),
                        Answer::Keys(k) => Reply::Keys(k),
                        Answer::Removed(k) => Reply::Removed(k),
                        Answer::Failed(e) => Reply::Failed(e),
                    },
                }
            }),
        };
        let call = match self.runner.resume(reply) {
            RunStep::Done(Ok(())) => {
                let o = js_sys::Object::new();
                set(&o, "done", &JsValue::TRUE);
                return Ok(o.into());
            }
            RunStep::Done(Err(m)) => return Err(JsValue::from_str(&m)),
            RunStep::Call(c) => c,
        };
        let (name, store, v): (&str, usize, JsValue) = match &call {
            Call::ReadHead { store } => ("readHead", *store, convert::need(&Need::Head)),
            Call::GetMany { store, keys } => (
                "getMany",
                *store,
                convert::need(&Need::Records(keys.clone())),
            ),
            Call::Commit { store, commit } => (
                "commit",
                *store,
                convert::need(&Need::Commit(commit.clone())),
            ),
            Call::Keys { store } => ("keys", *store, convert::need(&Need::Keys)),
            Call::Remove {
                store,
                keys,
                before,
            } => (
                "remove",
                *store,
                convert::need(&Need::Remove {
                    keys: keys.clone(),
                    before: *before,
                }),
            ),
            Call::Put { store, key, bytes } => ("put", *store, convert::record(key, bytes).into()),
            Call::Swap {
                store,
                expected,
                head,
            } => {
                let o = js_sys::Object::new();
                set(
                    &o,
                    "expected",
                    &expected
                        .as_deref()
                        .map_or(JsValue::NULL, |b| js_sys::Uint8Array::from(b).into()),
                );
                set(
                    &o,
                    "head",
                    &js_sys::Uint8Array::from(head.as_slice()).into(),
                );
                ("swap", *store, o.into())
            }
            Call::Reopen => ("reopen", 0, js_sys::Object::new().into()),
            Call::Fault { store, point, nth } => {
                let o = js_sys::Object::new();
                set(&o, "point", &JsValue::from_str(point));
                set(&o, "nth", &JsValue::from_f64(*nth as f64));
                ("fault", *store, o.into())
            }
            Call::Pause { ms } => {
                let o = js_sys::Object::new();
                set(&o, "ms", &JsValue::from_f64(*ms as f64));
                ("pause", 0, o.into())
            }
        };
        let o: js_sys::Object = v.unchecked_into();
        set(&o, "call", &JsValue::from_str(name));
        set(&o, "store", &JsValue::from_f64(store as f64));
        self.last = Some(call);
        Ok(o.into())
    }
}
