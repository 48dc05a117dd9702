//! The native half of `scripts/wasm-bench.sh`: times the core on a folder of OKF bundles
//! in-process, as pkg/bench/node.mjs times the same work through the wasm package in Node.
//! Prints one JSON object of figures (milliseconds; the import's CPU time of every thread
//! beside its wall time, as the core parses on every core here and on one in wasm) and a
//! digest of every search answer, so the two halves can be checked for equal output.
//!
//! Usage: `cargo run --release -p langonrock-bench --example native_bench -- <dir> <queries.json>`

use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
use langonrock_core::engine::{run, Engine, ImportRequest, MemoryStore};
use langonrock_core::search::SearchOptions;
use std::path::Path;
use std::time::Instant;

const TODAY: &str = "2026-09-21";

fn walk(dir: &Path, bundle: &str, rel: &str, out: &mut Vec<SourceDoc>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("a readable folder")
        .map(|e| e.expect("an entry"))
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().into_string().expect("a UTF-8 name");
        if name.starts_with('.') {
            continue;
        }
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if e.file_type().expect("a type").is_dir() {
            walk(&e.path(), bundle, &r, out);
        } else if name.ends_with(".md") {
            let text = std::fs::read_to_string(e.path()).expect("UTF-8 text");
            out.push(SourceDoc::new(bundle, r, text));
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// The process's CPU time so far (every thread), in milliseconds.
fn cpu_ms() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(
        args.get(1)
            .expect("usage: native_bench <dir> <queries.json>"),
    );
    let queries: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(args.get(2).expect("a queries file")).expect("readable"),
    )
    .expect("a JSON list of strings");
    let mut docs = Vec::new();
    let mut bundles: Vec<_> = std::fs::read_dir(dir)
        .expect("a folder")
        .map(|e| e.expect("entry"))
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .collect();
    bundles.sort_by_key(|e| e.file_name());
    for b in bundles {
        let name = b.file_name().into_string().expect("UTF-8");
        walk(&b.path(), &name, "", &mut docs);
    }

    let mut compiles = Vec::new();
    let mut concepts = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let m = compile(&docs, SUMMARY_WIDTH).expect("the corpus compiles");
        compiles.push(ms(t));
        concepts = m.concepts().len();
    }

    let mut imports = Vec::new();
    let mut import_cpus = Vec::new();
    let mut engine = None;
    for _ in 0..3 {
        let mut store = MemoryStore::new();
        let mut e = Engine::new("bench").expect("a tenant");
        let t = Instant::now();
        let c = cpu_ms();
        let op = e.refresh();
        run(&mut e, &mut store, op).expect("open");
        let op = e.import(
            ImportRequest {
                location: "/bench".into(),
                documents: docs.clone(),
                strict: false,
            },
            "2026-09-21T10:00:00.000Z",
        );
        run(&mut e, &mut store, op).expect("the import commits");
        imports.push(ms(t));
        import_cpus.push(cpu_ms() - c);
        engine = Some(e);
    }
    let engine = engine.expect("an engine");
    let served = engine.read().expect("served");
    let opts = SearchOptions::default();
    let t = Instant::now();
    let first = served
        .search("bench", &queries[0], &opts, TODAY)
        .expect("search");
    let first_ms = ms(t);
    let mut digest = String::new();
    let mut per_query = Vec::new();
    for round in 0..20 {
        for q in &queries {
            let t = Instant::now();
            let tsv = served.search("bench", q, &opts, TODAY).expect("search");
            per_query.push(ms(t));
            if round == 0 {
                digest.push_str(&tsv);
            }
        }
    }
    let digest = langonrock_core::hash::source_hash(&digest);
    println!(
        "{}",
        serde_json::json!({
            "documents": docs.len(),
            "concepts": concepts,
            "compileMs": median(compiles),
            "importMs": median(imports),
            "importCpuMs": median(import_cpus),
            "firstSearchMs": first_ms,
            "searchMs": median(per_query),
            "searchDigest": digest,
            "firstSearchLines": first.lines().count(),
        })
    );
}
