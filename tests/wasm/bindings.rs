//! The wasm bindings (`langonrock-wasm`) driven as the JS package drives them: store steps as
//! the JS objects `serveNeed` answers, results and errors as JS values. Each case checks the
//! bindings' answer against the core's own answer for the same documents, computed in the
//! same wasm32 build. Run under Node (`wasm_node`) and in headless Chrome (`wasm_browser`).

use js_sys::{Array, Map, Object, Reflect, Uint8Array};
use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
use langonrock_core::engine::{Digest, Key, Kind, MemoryStore, Store, SwapOutcome};
use langonrock_core::read::{get, GetOptions};
use langonrock_core::search::{search, Index, SearchOptions};
use langonrock_wasm::{WasmConnOp, WasmEngine, WasmOp};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;

include!(concat!(env!("OUT_DIR"), "/samples.rs"));

const TENANT: &str = "samples";
const TODAY: &str = "2026-09-21";
const T0: &str = "2026-09-21T10:00:00.000Z";
const T1: &str = "2026-09-21T11:00:00.000Z";
const T2: &str = "2026-09-21T12:00:00.000Z";

fn field(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).expect("a field")
}

fn text(v: &JsValue, key: &str) -> String {
    field(v, key)
        .as_string()
        .unwrap_or_else(|| panic!("{key} is not a string"))
}

fn set(o: &Object, key: &str, v: &JsValue) {
    Reflect::set(o, &JsValue::from_str(key), v).expect("set");
}

fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        set(&o, k, v);
    }
    o.into()
}

fn bytes_of(v: &JsValue) -> Option<Vec<u8>> {
    if v.is_null() || v.is_undefined() {
        None
    } else {
        Some(v.dyn_ref::<Uint8Array>().expect("Uint8Array").to_vec())
    }
}

fn key_of(v: &JsValue) -> Key {
    Key::new(
        Kind::parse(&text(v, "kind")).expect("a kind"),
        Digest::from_hex(&text(v, "digest")).expect("a digest"),
    )
}

fn u8s(b: &[u8]) -> JsValue {
    Uint8Array::from(b).into()
}

/// Answers one store step (the JS object a `WasmOp` returned) from a core memory store, with
/// the JS answer shape of `serveNeed`.
fn serve(store: &mut MemoryStore, need: &JsValue) -> JsValue {
    match text(need, "need").as_str() {
        "head" => obj(&[(
            "head",
            store
                .read_head(TENANT)
                .expect("read head")
                .map_or(JsValue::NULL, |b| u8s(&b)),
        )]),
        "records" => {
            let keys: Vec<Key> = Array::from(&field(need, "keys"))
                .iter()
                .map(|k| key_of(&k))
                .collect();
            let got = store.get_many(TENANT, &keys).expect("get many");
            let list: Array = got
                .iter()
                .map(|b| b.as_deref().map_or(JsValue::NULL, u8s))
                .collect();
            obj(&[("records", list.into())])
        }
        "commit" => {
            for r in Array::from(&field(need, "records")).iter() {
                let bytes = bytes_of(&field(&r, "bytes")).expect("record bytes");
                store
                    .put(TENANT, &key_of(&field(&r, "key")), &bytes)
                    .expect("put");
            }
            let expected = bytes_of(&field(need, "expected"));
            let head = bytes_of(&field(need, "head")).expect("a head");
            let outcome = match store.swap_head(TENANT, expected.as_deref(), &head) {
                SwapOutcome::Swapped => "committed",
                SwapOutcome::Conflict => "conflict",
                other => panic!("unexpected swap outcome {other:?}"),
            };
            obj(&[("outcome", JsValue::from_str(outcome))])
        }
        other => panic!("unexpected step {other}"),
    }
}

/// Runs an op to its end; `Err` is the thrown JS error.
fn run(
    engine: &mut WasmEngine,
    store: &mut MemoryStore,
    mut op: WasmOp,
) -> Result<JsValue, JsValue> {
    let mut step = op.resume(engine, JsValue::UNDEFINED)?;
    loop {
        if Reflect::has(&step, &JsValue::from_str("done")).expect("has") {
            return Ok(field(&step, "done"));
        }
        let answer = serve(store, &step);
        step = op.resume(engine, answer)?;
    }
}

fn has(v: &JsValue, key: &str) -> bool {
    Reflect::has(v, &JsValue::from_str(key)).expect("has")
}

/// Runs a connection op to its end as the JS connection does, on a connection that is not
/// busy and not read-only: refresh steps run the engine's refresh, the clock answers `at`.
fn run_conn(
    engine: &mut WasmEngine,
    store: &mut MemoryStore,
    mut op: WasmConnOp,
    at: &str,
) -> Result<JsValue, JsValue> {
    let mut step = op.begin(engine, false, false)?;
    loop {
        if has(&step, "done") {
            return Ok(field(&step, "done"));
        }
        let answer = if has(&step, "refresh") {
            let r = engine.refresh();
            match run(engine, store, r) {
                Ok(_) => obj(&[("refreshed", true.into())]),
                Err(e) => obj(&[("refreshError", e)]),
            }
        } else if has(&step, "now") {
            obj(&[(
                "now",
                obj(&[
                    ("commitTime", at.into()),
                    ("millis", JsValue::from_f64(0.0)),
                ]),
            )])
        } else {
            serve(store, &step)
        };
        step = op.resume(engine, answer)?;
    }
}

fn write_change(b: &str, p: &str, t: &str) -> JsValue {
    obj(&[
        ("operation", "write".into()),
        ("bundle", b.into()),
        ("path", p.into()),
        ("content", t.into()),
    ])
}

fn samples() -> Vec<SourceDoc> {
    SAMPLES
        .iter()
        .map(|(b, p, t)| SourceDoc::new(*b, *p, *t))
        .collect()
}

/// An engine holding every sample, committed in one transaction at `T0`.
fn loaded() -> (WasmEngine, MemoryStore) {
    let mut store = MemoryStore::new();
    let mut engine = WasmEngine::new("Samples").expect("a tenant");
    let op = engine.refresh();
    run(&mut engine, &mut store, op).expect("open");
    let changes: Array = SAMPLES
        .iter()
        .map(|(b, p, t)| write_change(b, p, t))
        .collect();
    let op = engine.transact(obj(&[("changes", changes.into())]));
    run_conn(&mut engine, &mut store, op, T0).expect("the samples commit");
    (engine, store)
}

fn js_error(e: &JsValue) -> (String, String) {
    assert!(e.is_instance_of::<js_sys::Error>(), "a real JS Error");
    (text(e, "code"), text(e, "message"))
}

#[wasm_bindgen_test]
fn compile_through_the_bindings_gives_the_core_manifest() {
    let (engine, _) = loaded();
    assert_eq!(engine.tenant(), "samples");
    let model = compile(&samples(), SUMMARY_WIDTH).expect("the samples compile");
    let expected =
        langonrock_core::manifest::manifest(&model, TENANT, None, TODAY).expect("manifest");
    assert_eq!(engine.manifest(None, TODAY).expect("manifest"), expected);
    assert!(expected.lines().count() > 20, "the samples hold concepts");
    let snap = engine.snapshot().expect("snapshot");
    assert_eq!(
        field(&snap, "concepts").as_f64(),
        Some(model.concepts().len() as f64)
    );
    assert_eq!(
        text(&snap, "snapshot"),
        langonrock_core::snapshot::snapshot_id(&model)
    );
}

#[wasm_bindgen_test]
fn get_answers_a_map_in_result_order_with_the_core_slices() {
    let (engine, _) = loaded();
    let model = compile(&samples(), SUMMARY_WIDTH).expect("compile");
    let ids: Vec<String> = model
        .concepts()
        .iter()
        .rev()
        .take(3)
        .map(|c| c.id.clone())
        .chain(["no-such-id".to_string()])
        .collect();
    let js_ids: Array = ids.iter().map(|s| JsValue::from_str(s)).collect();
    let opts = obj(&[
        ("limit", JsValue::from_f64(120.7)),
        ("offset", JsValue::from_f64(-3.0)),
    ]);
    let map: Map = engine.get(js_ids.into(), opts).expect("get");
    let core = get(
        &model,
        &ids,
        &GetOptions {
            limit: Some(120),
            offset: Some(0),
            ..GetOptions::default()
        },
    );
    let expected: serde_json::Value = serde_json::from_str(&core.to_json()).expect("json");
    let keys: Vec<String> = map
        .keys()
        .into_iter()
        .map(|k| k.unwrap().as_string().unwrap())
        .collect();
    assert_eq!(keys, ids[..3].to_vec(), "found ids in request order");
    for id in &keys {
        let slice = map.get(&JsValue::from_str(id));
        let want = &expected[id];
        assert_eq!(text(&slice, "text"), want["text"].as_str().unwrap());
        for k in ["start", "end", "total"] {
            assert_eq!(field(&slice, k).as_f64(), want[k].as_f64(), "{id} {k}");
        }
        assert!(
            field(&slice, "matches").is_undefined(),
            "no find, no matches"
        );
    }
    let found = engine
        .get(
            Array::of1(&JsValue::from_str(&ids[0])).into(),
            obj(&[("find", "the".into()), ("source", true.into())]),
        )
        .expect("get with find");
    let s = found.get(&JsValue::from_str(&ids[0]));
    assert!(Array::is_array(&field(&s, "matches")));
    assert_eq!(text(&s, "hash").len(), 64);
}

#[wasm_bindgen_test]
fn search_through_the_bindings_equals_the_core_search() {
    let (engine, _) = loaded();
    let model = compile(&samples(), SUMMARY_WIDTH).expect("compile");
    let index = Index::build(&model, TODAY);
    for (query, k) in [
        ("revenue recognition", 8.0),
        ("bitcoin transaction inputs", 3.0),
    ] {
        let opts = SearchOptions {
            k: k as usize,
            ..SearchOptions::default()
        };
        let want = search(&model, &index, TENANT, query, &opts, TODAY).expect("search");
        let got = engine
            .search(query.into(), obj(&[("k", JsValue::from_f64(k))]), TODAY)
            .expect("search");
        assert_eq!(got, want, "query {query:?}");
        assert!(want.contains("direct"), "{want}");
    }
    let e = engine
        .search("x".into(), obj(&[("bundle", "nope".into())]), TODAY)
        .unwrap_err();
    assert_eq!(js_error(&e).0, "NOT_FOUND");
}

#[wasm_bindgen_test]
fn write_then_read_source_and_a_conflicting_write() {
    let (mut engine, mut store) = loaded();
    let body = "---\ntype: note\n---\n# Idea\n\nA new idea.\n";
    let op = engine.write(
        "inbox".into(),
        "idea.md".into(),
        body.into(),
        JsValue::UNDEFINED,
    );
    let r = run_conn(&mut engine, &mut store, op, T1).expect("the write commits");
    let hash = text(&r, "hash");
    assert_eq!(hash, langonrock_core::hash::source_hash(body));
    assert_eq!(text(&r, "id"), "idea");
    assert!(Array::is_array(&field(&r, "renamed")));
    let op = engine.read_source("inbox", "idea.md");
    let src = run_conn(&mut engine, &mut store, op, T1).expect("read");
    assert_eq!(text(&src, "content"), body);
    let op = engine.read_source("inbox", "nope.md");
    let none = run_conn(&mut engine, &mut store, op, T1).expect("read");
    assert!(none.is_null());
    // No `replaces` on an existing document: a CONFLICT with the reason as data.
    let op = engine.write("inbox".into(), "idea.md".into(), "x".into(), JsValue::NULL);
    let e = run_conn(&mut engine, &mut store, op, T2).unwrap_err();
    assert_eq!(
        js_error(&e),
        (
            "CONFLICT".to_string(),
            "concept already exists: re-read the concept and retry with its new hash".to_string()
        )
    );
    assert_eq!(text(&e, "reason"), "exists");
    // A content that is not a string is refused before anything is prepared.
    let op = engine.write(
        "inbox".into(),
        "idea.md".into(),
        JsValue::from_f64(1.0),
        JsValue::NULL,
    );
    let e = run_conn(&mut engine, &mut store, op, T2).unwrap_err();
    assert_eq!(js_error(&e).1, "document content must be a string");
    // On a read-only connection the refusal is READ_ONLY, before the request is looked at.
    let mut op = engine.write(
        "inbox".into(),
        "idea.md".into(),
        JsValue::from_f64(1.0),
        JsValue::NULL,
    );
    let e = op.begin(&mut engine, false, true).unwrap_err();
    assert_eq!(js_error(&e).1, "connection is read-only");
}

#[wasm_bindgen_test]
fn transact_refusals_carry_every_failed_change() {
    let (mut engine, mut store) = loaded();
    let (b, p, _) = SAMPLES[0];
    let changes = Array::of2(
        &write_change(b, p, "a"),
        &write_change("inbox", "new.md", "b"),
    );
    let op = engine.transact(obj(&[("changes", changes.into())]));
    let e = run_conn(&mut engine, &mut store, op, T1).unwrap_err();
    assert_eq!(js_error(&e).0, "CONFLICT");
    let failed = Array::from(&field(&e, "changes"));
    assert_eq!(failed.length(), 1);
    assert_eq!(field(&failed.get(0), "index").as_f64(), Some(0.0));
    assert_eq!(text(&failed.get(0), "reason"), "exists");
    // Validation runs before anything is prepared, with the docs' texts.
    let op = engine.transact(obj(&[("changes", Array::new().into())]));
    let e = run_conn(&mut engine, &mut store, op, T1).unwrap_err();
    assert_eq!(
        js_error(&e),
        (
            "INVALID".to_string(),
            "transaction needs between 1 and 1000 changes".to_string()
        )
    );
    let lone = JsValue::from(js_sys::JsString::from_char_code1(0xD800));
    let c = write_change("inbox", "x.md", "");
    set(c.unchecked_ref(), "content", &lone);
    let op = engine.transact(obj(&[("changes", Array::of1(&c).into())]));
    let e = run_conn(&mut engine, &mut store, op, T1).unwrap_err();
    assert_eq!(js_error(&e).1, "source must contain well-formed Unicode");
}

#[wasm_bindgen_test]
fn history_and_restore_through_the_bindings() {
    let (mut engine, mut store) = loaded();
    let first = engine.manifest(None, TODAY).expect("manifest");
    let &(b, p, t) = SAMPLES
        .iter()
        .find(|(_, p, _)| !p.ends_with("index.md") && !p.ends_with("log.md"))
        .expect("a concept");
    let h = langonrock_core::hash::source_hash(t);
    let op = engine.delete(b.into(), p.into(), h.as_str().into());
    run_conn(&mut engine, &mut store, op, T1).expect("the delete commits");
    let after = engine.manifest(None, TODAY).unwrap();
    assert!(
        after.lines().count() + 1 == first.lines().count(),
        "one row fewer"
    );
    let op = engine.history(JsValue::UNDEFINED).unwrap();
    let page = run_conn(&mut engine, &mut store, op, T1).unwrap();
    let revisions = Array::from(&field(&page, "revisions"));
    assert_eq!(revisions.length(), 2);
    let newest = revisions.get(0);
    let oldest = revisions.get(1);
    assert!(
        field(&oldest, "parent").is_null(),
        "the first revision has a null parent"
    );
    assert_eq!(text(&newest, "parent"), text(&oldest, "revision"));
    assert_eq!(text(&oldest, "created"), T0);
    assert!(field(&page, "next").is_undefined(), "no further page");
    let op = engine
        .history(obj(&[("limit", JsValue::from_f64(1.0))]))
        .unwrap();
    let one = run_conn(&mut engine, &mut store, op, T1).unwrap();
    assert_eq!(Array::from(&field(&one, "revisions")).length(), 1);
    assert!(field(&one, "next").as_string().is_some());
    let op = engine.restore(obj(&[
        ("revision", text(&oldest, "revision").into()),
        ("expectedRevision", text(&newest, "revision").into()),
    ]));
    let r = run_conn(&mut engine, &mut store, op, T2).expect("restore commits");
    assert!(
        engine.manifest(None, TODAY).unwrap() == first,
        "the first state again"
    );
    assert_ne!(
        text(&r, "revision"),
        text(&oldest, "revision"),
        "a new revision"
    );
    let op = engine.restore(obj(&[("revision", "abc".into())]));
    let e = run_conn(&mut engine, &mut store, op, T2).unwrap_err();
    assert_eq!(
        js_error(&e).1,
        "invalid hash \"abc\": expected 64 lowercase hex characters"
    );
}

#[wasm_bindgen_test]
fn import_documents_cross_as_the_core_reads_them() {
    // The samples, one document with text beyond ASCII, and one whose JS string holds a
    // lone surrogate, which crosses as U+FFFD (the documents list is text as read, lossily).
    let mut docs = samples();
    docs.push(SourceDoc::new(
        "inbox",
        "beyond.md",
        "# Café Ωmega\n\nNaïve façade, 東京, emoji 🙂 and a Σ.\n",
    ));
    docs.push(SourceDoc::new(
        "inbox",
        "lone.md",
        "# Lone\n\nhalf \u{FFFD} a pair\n",
    ));
    let entry = |b: &str, p: &str, content: JsValue| {
        obj(&[
            ("bundle", b.into()),
            ("path", p.into()),
            ("content", content),
        ])
    };
    let list: Array = docs[..docs.len() - 1]
        .iter()
        .map(|d| entry(&d.bundle, &d.path, d.text.as_str().into()))
        .collect();
    let lone = js_sys::JsString::from("# Lone\n\nhalf ")
        .concat(&js_sys::JsString::from_char_code1(0xD800))
        .concat(&" a pair\n".into());
    list.push(&entry("inbox", "lone.md", lone.into()));

    let mut store = MemoryStore::new();
    let mut engine = WasmEngine::new("Samples").expect("a tenant");
    let op = engine.refresh();
    run(&mut engine, &mut store, op).expect("open");
    let op = engine.import("/samples".into(), list.into(), false);
    run_conn(&mut engine, &mut store, op, T0).expect("the import commits");
    let model = compile(&docs, SUMMARY_WIDTH).expect("the documents compile");
    let snap = engine.snapshot().expect("snapshot");
    assert_eq!(
        text(&snap, "snapshot"),
        langonrock_core::snapshot::snapshot_id(&model)
    );

    // Lists of the wrong shape are refused with one message, before any step.
    let refusal = "import documents must be an array of {bundle, path, content}";
    let not_object = Array::of1(&JsValue::NULL);
    let number_content = Array::of1(&entry("inbox", "n.md", JsValue::from_f64(1.0)));
    let no_path = Array::of1(&obj(&[("bundle", "inbox".into()), ("content", "x".into())]));
    for bad in [
        JsValue::from_str("not a list"),
        not_object.into(),
        number_content.into(),
        no_path.into(),
    ] {
        let op = engine.import("/samples".into(), bad, false);
        let e = run_conn(&mut engine, &mut store, op, T1).unwrap_err();
        assert_eq!(js_error(&e), ("INVALID".to_string(), refusal.to_string()));
    }
}
