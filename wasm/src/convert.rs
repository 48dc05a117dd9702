//! Every conversion between JS values and the core's types, in one place.
//!
//! Results go out through serde-wasm-bindgen's JSON-compatible serializer: plain objects
//! with the docs' field names, `null` where the core says null, absent optional fields left
//! out. Store steps use the shapes of the package's `serveNeed` (pkg/src/host.js), with bytes
//! as `Uint8Array`.

use js_sys::{Array, JsString, Map, Object, Reflect, Uint8Array};
use langonrock_core::engine::{
    Answer, CommitOutcome, Content, Digest, Key, KeyInfo, Need, StoreError, Transaction,
};
use langonrock_core::read::{count_from_number, GetOptions, GetResult};
use langonrock_core::tools::ToolCall;
use langonrock_core::Error;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Sets a property (a failure, on a frozen object, is ignored).
pub fn set(o: &Object, key: &str, v: &JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), v);
}

/// A property of an object, or undefined.
pub fn get(v: &JsValue, key: &str) -> JsValue {
    if v.is_object() {
        Reflect::get(v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// A result as a plain JS value.
pub fn to_js<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, Error> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::Invalid(format!("cannot convert a result to JS: {e}")))
}

/// Any JS value as JSON, for the core's request parsers, as `JSON.stringify` would see it:
/// object properties that are `undefined` (or functions, symbols) are left out, and in arrays
/// they are `null`. Strings with lone surrogates come through lossily; the callers that must
/// refuse them check first ([`transaction`], [`content`]). Numbers that are not finite are
/// `null`; BigInts are their decimal value.
pub fn json(v: &JsValue) -> serde_json::Value {
    json_at(v, 0, &mut Flaws::default()).unwrap_or(serde_json::Value::Null)
}

/// [`json`], with the paths of the strings that held lone surrogates (their JSON copies
/// carry U+FFFD), for `tools::parse_call_with`.
pub fn json_checked(v: &JsValue) -> (serde_json::Value, Vec<langonrock_core::wire::Path>) {
    let mut flaws = Flaws::default();
    let value = json_at(v, 0, &mut flaws).unwrap_or(serde_json::Value::Null);
    (value, flaws.found)
}

/// Where `json_at` stands, and the ill-formed strings it met.
#[derive(Default)]
struct Flaws {
    path: Vec<langonrock_core::wire::Step>,
    found: Vec<langonrock_core::wire::Path>,
}

/// How deep `json` follows nested arrays and objects (a cycle ends there as `null`).
const MAX_DEPTH: usize = 64;

fn json_at(v: &JsValue, depth: usize, flaws: &mut Flaws) -> Option<serde_json::Value> {
    use langonrock_core::wire::Step;
    use serde_json::Value;
    if v.is_undefined() || v.is_function() || v.is_symbol() {
        return None;
    }
    if v.is_null() || depth > MAX_DEPTH {
        return Some(Value::Null);
    }
    if let Some(b) = v.as_bool() {
        return Some(Value::Bool(b));
    }
    if let Some(js) = v.dyn_ref::<JsString>() {
        if !js.is_valid_utf16() && flaws.found.len() < langonrock_core::wire::MAX_FLAWS {
            flaws.found.push(flaws.path.clone());
        }
        return Some(Value::String(String::from(js)));
    }
    if let Some(n) = v.as_f64() {
        return Some(if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
            Value::from(n as i64)
        } else {
            serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
        });
    }
    if v.is_bigint() {
        let s: String = js_sys::BigInt::unchecked_from_js_ref(v)
            .to_string(10)
            .map(String::from)
            .unwrap_or_default();
        return Some(serde_json::from_str(&s).unwrap_or(Value::Null));
    }
    if Array::is_array(v) {
        let mut items = Vec::new();
        for (i, x) in Array::from(v).iter().enumerate() {
            flaws.path.push(Step::Index(i));
            items.push(json_at(&x, depth + 1, flaws).unwrap_or(Value::Null));
            flaws.path.pop();
        }
        return Some(Value::Array(items));
    }
    if let Some(o) = v.dyn_ref::<Object>() {
        let mut map = serde_json::Map::new();
        for entry in Object::entries(o).iter() {
            let pair = Array::from(&entry);
            let Some(k) = pair.get(0).as_string() else {
                continue;
            };
            flaws.path.push(Step::Key(k.clone()));
            if let Some(x) = json_at(&pair.get(1), depth + 1, flaws) {
                map.insert(k, x);
            }
            flaws.path.pop();
        }
        return Some(Value::Object(map));
    }
    Some(Value::Null)
}

/// A JS string as document content: `IllFormed` when it holds a lone surrogate.
pub fn content(s: &JsString) -> Content {
    if s.is_valid_utf16() {
        Content::Text(String::from(s).into())
    } else {
        Content::IllFormed
    }
}

/// The bundle and path of a `write` or `delete`: both strings, or the change-shape error.
pub fn target(bundle: &JsValue, path: &JsValue) -> Result<(String, String), Error> {
    match (bundle.as_string(), path.as_string()) {
        (Some(b), Some(p)) => Ok((b, p)),
        _ => Err(Error::Invalid(
            langonrock_core::engine::request::CHANGE_SHAPE.into(),
        )),
    }
}

/// A `write`'s content: `None` when it is not a string.
pub fn opt_content(v: &JsValue) -> Option<Content> {
    v.dyn_ref::<JsString>().map(content)
}

/// A `replaces` value: absent or null is none; anything but 64-hex is `invalid hash`.
pub fn hash(v: &JsValue) -> Result<Option<Digest>, Error> {
    if absent(v) {
        return Ok(None);
    }
    langonrock_core::engine::request::parse_json_hash(Some(&json(v)))
}

/// The arguments of `write(bundle, path, content, replaces)`, checked in the order of
/// engine.md §5.2 rule 3 as far as the engine cannot: the bundle and path as given (the
/// engine validates them), the content, and `replaces` as hex.
pub fn write_args(
    bundle: &JsValue,
    path: &JsValue,
    content: &JsValue,
    replaces: &JsValue,
) -> Result<(String, String, Content, Option<String>), Error> {
    use langonrock_core::engine::request::{check_change, CONTENT_NOT_STRING};
    let (bundle, path) = target(bundle, path)?;
    let hash = hash(replaces);
    let content = opt_content(content);
    let (Some(content), Ok(hash)) = (content.clone(), hash.clone()) else {
        return Err(check_change("write", &bundle, &path, content, hash)
            .err()
            .unwrap_or_else(|| Error::Invalid(CONTENT_NOT_STRING.into())));
    };
    Ok((bundle, path, content, hash.map(|h| h.to_hex())))
}

/// The arguments of `delete(bundle, path, replaces)`: the bundle and path as given and the
/// hex `replaces`, which a delete requires.
pub fn delete_args(
    bundle: &JsValue,
    path: &JsValue,
    replaces: &JsValue,
) -> Result<(String, String, Option<String>), Error> {
    let (bundle, path) = target(bundle, path)?;
    let hash = langonrock_core::engine::request::check_change(
        "delete",
        &bundle,
        &path,
        None,
        hash(replaces),
    )?
    .replaces
    .map(|h| h.to_hex());
    Ok((bundle, path, hash))
}

/// A `transact` request: the JSON for the core's parser, with the indexes of changes whose
/// `content` is a JS string with lone surrogates (the JSON copy of those is lossy).
pub fn transaction(v: &JsValue) -> Result<Transaction, Error> {
    let changes = get(v, "changes");
    let mut ill_formed = Vec::new();
    if Array::is_array(&changes) {
        for (i, c) in Array::from(&changes).iter().enumerate() {
            if let Some(s) = get(&c, "content").dyn_ref::<JsString>() {
                if !s.is_valid_utf16() {
                    ill_formed.push(i);
                }
            }
        }
    }
    langonrock_core::engine::parse_transaction_with(&json(v), &ill_formed)
}

fn opt_string(v: &JsValue, key: &str) -> Result<Option<String>, Error> {
    let x = get(v, key);
    if absent(&x) {
        return Ok(None);
    }
    x.as_string()
        .map(Some)
        .ok_or_else(|| Error::Invalid(format!("get option {key} must be a string")))
}

fn opt_count(v: &JsValue, key: &str) -> Result<Option<u64>, Error> {
    let x = get(v, key);
    if absent(&x) {
        return Ok(None);
    }
    x.as_f64()
        .map(|n| Some(count_from_number(n)))
        .ok_or_else(|| Error::Invalid(format!("get option {key} must be a number")))
}

/// The library's `get` options (read.md §3.1): numbers floored, negatives as 0.
pub fn get_options(v: &JsValue) -> Result<GetOptions, Error> {
    if absent(v) {
        return Ok(GetOptions::default());
    }
    if !v.is_object() {
        return Err(Error::Invalid("get options must be an object".into()));
    }
    Ok(GetOptions {
        section: opt_string(v, "section")?,
        offset: opt_count(v, "offset")?,
        limit: opt_count(v, "limit")?,
        find: opt_string(v, "find")?,
        source: get(v, "source").as_bool().unwrap_or(false),
    })
}

/// The library's `search` options (search.md §3): `k` any non-negative number (floored,
/// default 8), `bundle`, `expand` (default true).
pub fn search_options(v: &JsValue) -> Result<langonrock_core::search::SearchOptions, Error> {
    let mut o = langonrock_core::search::SearchOptions::default();
    if absent(v) {
        return Ok(o);
    }
    if !v.is_object() {
        return Err(Error::Invalid("search options must be an object".into()));
    }
    let k = get(v, "k");
    if !absent(&k) {
        o.k = k
            .as_f64()
            .map(|n| count_from_number(n) as usize)
            .ok_or_else(|| Error::Invalid("search option k must be a number".into()))?;
    }
    let bundle = get(v, "bundle");
    if !absent(&bundle) {
        o.bundle = Some(
            bundle
                .as_string()
                .ok_or_else(|| Error::Invalid("search option bundle must be a string".into()))?,
        );
    }
    if let Some(e) = get(v, "expand").as_bool() {
        o.expand = e;
    }
    Ok(o)
}

/// The ids of a `get` call: an array of strings.
pub fn ids(v: &JsValue) -> Result<Vec<String>, Error> {
    let bad = || Error::Invalid("get ids must be an array of strings".into());
    if !Array::is_array(v) {
        return Err(bad());
    }
    Array::from(v)
        .iter()
        .map(|x| x.as_string().ok_or_else(bad))
        .collect()
}

/// A `get` result as a `Map` from public id to slice, in result order (js.md §3.1).
pub fn slices(r: &GetResult<'_>) -> Result<Map, Error> {
    let map = Map::new();
    for (id, slice) in r.slices() {
        map.set(&JsValue::from_str(id), &to_js(slice)?);
    }
    Ok(map)
}

fn bytes(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

/// The property names of a record and its key, and the kinds' names, as JS strings made
/// once: a commit of an import sets them on every one of its records.
struct RecordNames {
    key: JsValue,
    bytes: JsValue,
    kind: JsValue,
    digest: JsValue,
    kinds: [(langonrock_core::engine::Kind, JsValue); 5],
}

thread_local! {
    static NAMES: RecordNames = {
        use langonrock_core::engine::Kind;
        RecordNames {
            key: JsValue::from_str("key"),
            bytes: JsValue::from_str("bytes"),
            kind: JsValue::from_str("kind"),
            digest: JsValue::from_str("digest"),
            kinds: [Kind::Source, Kind::Revision, Kind::Record, Kind::Derived, Kind::Recovery]
                .map(|k| (k, JsValue::from_str(k.as_str()))),
        }
    };
}

fn key_with(names: &RecordNames, k: &Key) -> JsValue {
    let o = Object::new();
    let kind = names
        .kinds
        .iter()
        .find(|(n, _)| *n == k.kind)
        .map_or_else(|| JsValue::from_str(k.kind.as_str()), |(_, v)| v.clone());
    let _ = Reflect::set(&o, &names.kind, &kind);
    let _ = Reflect::set(&o, &names.digest, &JsValue::from_str(&k.digest.to_hex()));
    o.into()
}

fn key(k: &Key) -> JsValue {
    NAMES.with(|names| key_with(names, k))
}

fn keys(ks: &[Key]) -> Array {
    ks.iter().map(key).collect()
}

/// A record to put: `{key: {kind, digest}, bytes}`.
pub fn record(k: &Key, b: &[u8]) -> Object {
    let o = Object::new();
    set(&o, "key", &key(k));
    set(&o, "bytes", &bytes(b));
    o
}

/// A store step as the object `serveNeed` answers.
pub fn need(n: &Need) -> JsValue {
    let o = Object::new();
    let name = match n {
        Need::Head => "head",
        Need::Records(ks) => {
            set(&o, "keys", &keys(ks));
            "records"
        }
        Need::Commit(p) => {
            set(
                &o,
                "expected",
                &p.expected.as_deref().map_or(JsValue::NULL, bytes),
            );
            set(&o, "head", &bytes(&p.head));
            // One copy out of the module for all the records' bytes (a commit of an import
            // holds every document), each record's bytes a view of it.
            let total: usize = p.records.iter().map(|(_, b)| b.len()).sum();
            let all = Uint8Array::new_with_length(total as u32);
            let mut at = 0u32;
            let records: Array = NAMES.with(|names| {
                p.records
                    .iter()
                    .map(|(k, b)| {
                        let end = at + b.len() as u32;
                        let view = all.subarray(at, end);
                        view.copy_from(b);
                        let o = Object::new();
                        let _ = Reflect::set(&o, &names.key, &key_with(names, k));
                        let _ = Reflect::set(&o, &names.bytes, &view);
                        at = end;
                        JsValue::from(o)
                    })
                    .collect()
            });
            set(&o, "records", &records);
            set(&o, "revision", &JsValue::from_str(&p.revision.to_hex()));
            "commit"
        }
        Need::Keys => "keys",
        Need::Remove { keys: ks, before } => {
            set(&o, "keys", &keys(ks));
            set(&o, "before", &JsValue::from_f64(*before as f64));
            "remove"
        }
    };
    set(&o, "need", &JsValue::from_str(name));
    o.into()
}

fn malformed(what: &str) -> Error {
    Error::Invalid(format!("malformed store answer: {what}"))
}

fn opt_bytes(v: &JsValue) -> Result<Option<Vec<u8>>, Error> {
    if absent(v) {
        Ok(None)
    } else if let Some(a) = v.dyn_ref::<Uint8Array>() {
        Ok(Some(a.to_vec()))
    } else {
        Err(malformed("bytes must be a Uint8Array or null"))
    }
}

fn store_error(v: &JsValue) -> StoreError {
    let message = get(v, "message")
        .as_string()
        .unwrap_or_else(|| "store failure".into());
    match get(v, "kind").as_string().as_deref() {
        Some("corrupt") => StoreError::Corrupt(message),
        _ => StoreError::Failed(message),
    }
}

/// Whether an object has a property.
pub fn has(v: &JsValue, key: &str) -> bool {
    v.is_object() && Reflect::has(v, &JsValue::from_str(key)).unwrap_or(false)
}

/// The answer to a store step, from the object `serveNeed` resolved to.
pub fn answer(v: &JsValue) -> Result<Answer, Error> {
    if has(v, "failed") {
        return Ok(Answer::Failed(store_error(&get(v, "failed"))));
    }
    if has(v, "head") {
        return Ok(Answer::Head(opt_bytes(&get(v, "head"))?));
    }
    if has(v, "records") {
        let r = get(v, "records");
        if !Array::is_array(&r) {
            return Err(malformed("records must be an array"));
        }
        return Ok(Answer::Records(
            Array::from(&r)
                .iter()
                .map(|b| opt_bytes(&b))
                .collect::<Result<_, _>>()?,
        ));
    }
    if has(v, "outcome") {
        let o = get(v, "outcome");
        let outcome = match o.as_string().as_deref() {
            Some("committed") => CommitOutcome::Committed,
            Some("conflict") => CommitOutcome::Conflict,
            Some("indeterminate") => CommitOutcome::Indeterminate,
            Some(_) => return Err(malformed("unknown commit outcome")),
            None if has(&o, "failed") => CommitOutcome::Failed(store_error(&get(&o, "failed"))),
            None => return Err(malformed("unknown commit outcome")),
        };
        return Ok(Answer::Outcome(outcome));
    }
    if has(v, "keys") {
        let k: Vec<KeyInfo> = serde_wasm_bindgen::from_value(get(v, "keys"))
            .map_err(|e| malformed(&format!("keys: {e}")))?;
        return Ok(Answer::Keys(k));
    }
    if has(v, "removed") {
        let k: Vec<Key> = serde_wasm_bindgen::from_value(get(v, "removed"))
            .map_err(|e| malformed(&format!("removed: {e}")))?;
        return Ok(Answer::Removed(k));
    }
    Err(malformed("no known field"))
}

/// `{done: value}`, the last step of an operation.
pub fn done(v: &JsValue) -> JsValue {
    let o = Object::new();
    set(&o, "done", v);
    o.into()
}

/// `{text, isError}`, a tool answer (js.md §5.2).
pub fn tool_answer(text: &str, is_error: bool) -> JsValue {
    let o = Object::new();
    set(&o, "text", &JsValue::from_str(text));
    set(&o, "isError", &JsValue::from_bool(is_error));
    o.into()
}

/// `{snapshot, concepts}` (read.md §5).
pub fn snapshot(s: &langonrock_core::snapshot::Snapshot) -> JsValue {
    let o = Object::new();
    set(&o, "snapshot", &JsValue::from_str(&s.snapshot));
    set(&o, "concepts", &JsValue::from_f64(s.concepts as f64));
    o.into()
}

#[wasm_bindgen]
extern "C" {
    /// One entry of a documents list for import, read through its own properties: no key
    /// string made per read, as [`get`] makes one.
    type DocumentIn;
    #[wasm_bindgen(method, getter, catch)]
    fn bundle(this: &DocumentIn) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn path(this: &DocumentIn) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, catch)]
    fn content(this: &DocumentIn) -> Result<JsValue, JsValue>;

    /// The runtime's `TextEncoder` (a global of Node and of browsers).
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    /// `encodeInto`: writes `s` as UTF-8 into `dest` (here a view of the module's own
    /// memory, so nothing is allocated in JS and nothing is copied twice).
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &TextEncoder, s: &JsString, dest: &mut [u8]) -> EncodedInto;

    /// What `encodeInto` answers: `{read, written}`.
    type EncodedInto;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodedInto) -> u32;
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
}

/// The entries of a documents list (none when it is not an array; an entry that is not an
/// object reads as undefined in every field).
fn document_entries(v: &JsValue) -> Option<impl Iterator<Item = Option<DocumentIn>>> {
    if !Array::is_array(v) {
        return None;
    }
    Some(
        Array::from(v)
            .into_iter()
            .map(|d| d.is_object().then(|| d.unchecked_into::<DocumentIn>())),
    )
}

/// The total length of the contents of a documents list for import, in UTF-16 units (0
/// when it is not one).
pub fn documents_len(v: &JsValue) -> usize {
    let Some(entries) = document_entries(v) else {
        return 0;
    };
    entries
        .filter_map(|d| d?.content().ok()?.dyn_into::<JsString>().ok())
        .map(|s| s.length() as usize)
        .sum()
}

/// A document's text from a JS string: encoded by the runtime's `TextEncoder` (its native
/// encoder; wasm-bindgen's string conversion runs a JS loop over every ASCII character
/// first) straight into `buf`, in the module's memory, then copied once into the text's own
/// allocation. `encode` made a JS array of every text, which was copied in and then copied
/// again (docs/benchmarks.md, session 15). `buf` is the caller's, reused from text to text:
/// grown to three times the longest text so far, so it is cleared once per growth.
fn text_of(s: &JsString, buf: &mut Vec<u8>) -> Option<std::sync::Arc<str>> {
    // At most three UTF-8 bytes per UTF-16 unit (a surrogate pair is two units, four bytes).
    let most = 3 * s.length() as usize;
    if buf.len() < most {
        buf.resize(most, 0);
    }
    let written = ENCODER
        .with(|e| e.encode_into(s, &mut buf[..most]))
        .written() as usize;
    // A `TextEncoder` writes UTF-8 (a lone surrogate as U+FFFD, as the string conversion
    // does), so the check never fails; a count past the buffer is refused.
    let text = std::str::from_utf8(buf.get(..written)?).ok()?;
    Some(std::sync::Arc::from(text))
}

/// A documents list for import: `[{bundle, path, content}]`, contents as read from files.
pub fn documents(v: &JsValue) -> Result<Vec<langonrock_core::compile::SourceDoc>, Error> {
    let bad =
        || Error::Invalid("import documents must be an array of {bundle, path, content}".into());
    let mut buf = Vec::new();
    document_entries(v)
        .ok_or_else(bad)?
        .map(|d| {
            let d = d.ok_or_else(bad)?;
            let field = |v: Result<JsValue, JsValue>| v.ok().ok_or_else(bad);
            let bundle = field(d.bundle())?.as_string().ok_or_else(bad)?;
            let path = field(d.path())?.as_string().ok_or_else(bad)?;
            let content = field(d.content())?
                .dyn_into::<JsString>()
                .map_err(|_| bad())?;
            let text = text_of(&content, &mut buf).ok_or_else(bad)?;
            Ok(langonrock_core::compile::SourceDoc::new(bundle, path, text))
        })
        .collect()
}

/// The name of a parsed tool call (`write`, `get`, …).
pub fn tool_name(c: &ToolCall) -> &'static str {
    match c {
        ToolCall::Manifest { .. } => "manifest",
        ToolCall::Search { .. } => "search",
        ToolCall::Get { .. } => "get",
        ToolCall::Snapshot => "snapshot",
        ToolCall::Write { .. } => "write",
        ToolCall::Delete { .. } => "delete",
        ToolCall::Transact { .. } => "transact",
        ToolCall::History { .. } => "history",
        ToolCall::Restore { .. } => "restore",
    }
}

/// A folder's entries for `planFolder`: `[{path, kind}]`, `kind` one of `file`, `link`,
/// `dir`, `other`.
pub fn folder_entries(
    v: &JsValue,
) -> Result<Vec<(String, langonrock_core::folder::EntryKind)>, Error> {
    use langonrock_core::folder::EntryKind;
    let bad = || {
        Error::Invalid(
            "folder entries must be an array of {path, kind: \"file\" | \"link\" | \"dir\" | \"other\"}"
                .into(),
        )
    };
    if !Array::is_array(v) {
        return Err(bad());
    }
    Array::from(v)
        .iter()
        .map(|e| {
            let path = get(&e, "path").as_string().ok_or_else(bad)?;
            let kind = match get(&e, "kind").as_string().as_deref() {
                Some("file") => EntryKind::File,
                Some("link") => EntryKind::Link,
                Some("dir") => EntryKind::Dir,
                Some("other") => EntryKind::Other,
                _ => return Err(bad()),
            };
            Ok((path, kind))
        })
        .collect()
}

/// `planFolder`'s options `{bundle?, name?, shown}`: `(bundle, name, shown)`.
pub fn folder_options(v: &JsValue) -> (Option<String>, Option<String>, String) {
    let text = |key: &str| get(v, key).as_string();
    (
        text("bundle"),
        text("name"),
        text("shown").unwrap_or_default(),
    )
}

/// The plan of a folder's `list` with the options of `v` ([`folder_options`]).
pub fn plan_with_options(
    list: &[langonrock_core::folder::Entry<'_>],
    v: &JsValue,
) -> Result<langonrock_core::folder::Plan, Error> {
    let (bundle, name, shown) = folder_options(v);
    langonrock_core::folder::plan(
        list,
        &langonrock_core::folder::Options {
            bundle: bundle.as_deref(),
            name: name.as_deref(),
            shown: &shown,
        },
    )
}

/// A plan's layout as JS names it: `"bundles"` or `"one"`.
pub fn layout_name(layout: &langonrock_core::folder::Layout) -> &'static str {
    match layout {
        langonrock_core::folder::Layout::Bundles => "bundles",
        langonrock_core::folder::Layout::OneBundle { .. } => "one",
    }
}

/// A folder plan as `{layout: "bundles" | "one", bundle?, chosen?, bundles, documents:
/// [{entry, bundle, path}], line}`.
pub fn folder_plan(p: &langonrock_core::folder::Plan) -> Result<JsValue, Error> {
    use langonrock_core::folder::Layout;
    let documents: Vec<serde_json::Value> = p
        .documents
        .iter()
        .map(|d| serde_json::json!({"entry": d.entry, "bundle": d.bundle, "path": d.path}))
        .collect();
    let mut v = serde_json::json!({
        "layout": layout_name(&p.layout),
        "bundles": p.bundles,
        "documents": documents,
        "line": p.line,
    });
    if let Layout::OneBundle { bundle, chosen } = &p.layout {
        v["bundle"] = serde_json::json!(bundle);
        v["chosen"] = serde_json::json!(chosen);
    }
    to_js(&v)
}

/// `listSource`'s entries (`[{bundle, path, id?}]`, other fields ignored) as the documents
/// links are followed among, from the JSON text of them (one string across the boundary: a
/// field-by-field read of 20,000 entries took hundreds of milliseconds); throws `INVALID`
/// naming the shape.
pub fn link_documents(json: &str) -> Result<Vec<langonrock_core::compile::LinkDocument>, Error> {
    serde_json::from_str(json).map_err(|_| {
        Error::Invalid(
            "link targets take listSource's entries: an array of {bundle, path, id?}".into(),
        )
    })
}
