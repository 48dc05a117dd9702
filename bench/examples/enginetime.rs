//! Times the engine on synthetic tenants against the memory store: cold open, edit to
//! visible, a transaction creating 25 documents, one replacing 25, a history page and a
//! restore. Usage: `cargo run --release -p langonrock-bench --example enginetime -- 500 5000`.
use langonrock_core::compile::SourceDoc;
use langonrock_core::engine::{
    parse_transaction, run, Engine, HistoryRequest, ImportRequest, MemoryStore, Op, RestoreRequest,
};
use serde_json::json;
use std::time::Instant;

fn doc(i: usize, version: usize) -> String {
    let b = i / 500;
    format!(
        "---\ntype: table\ndescription: Table number {i} of the synthetic corpus, version {version}.\ngrain: one row per thing\n---\n# Table {i}\n\nThis table holds rows about topic {t}. See [[t{a}]] and [[t{c}]] for related data, and \
         [the runbook](t{d}.md).\n\n## Schema\n\n| column | type |\n|---|---|\n| id | int |\n| name | text |\n| created | date |\n\n## Joins\n\nJoin on `id` with t{a}. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do \
         eiusmod tempor incididunt ut labore et dolore magna aliqua.\n\n## History\n\nCreated for bundle b{b}. Version {version}.\n",
        t = i % 97,
        a = (i + 1) % 500 + b * 500,
        c = (i + 7) % 500 + b * 500,
        d = (i + 13) % 500 + b * 500,
    )
}

fn at(n: usize) -> String {
    format!(
        "2026-05-01T{:02}:{:02}:{:02}.000Z",
        n / 3600 % 24,
        n / 60 % 60,
        n % 60
    )
}

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time<T: 'static>(e: &mut Engine, s: &mut MemoryStore, op: Op<T>) -> (T, f64) {
    let t = Instant::now();
    let r = run(e, s, op).unwrap();
    (r, t.elapsed().as_secs_f64() * 1e3)
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    for n in sizes {
        let docs: Vec<SourceDoc> = (0..n)
            .map(|i| SourceDoc::new(format!("b{}", i / 500), format!("t{i}.md"), doc(i, 0)))
            .collect();
        let mut store = MemoryStore::new();
        let mut e = Engine::new("bench").unwrap();
        let op = e.open();
        run(&mut e, &mut store, op).unwrap();
        let mut clock = 0;
        let mut tick = || {
            clock += 1;
            at(clock)
        };
        let op = e.import(
            ImportRequest {
                location: "/bench".into(),
                documents: docs,
                strict: false,
            },
            &tick(),
        );
        let (_, import_ms) = time(&mut e, &mut store, op);

        let mut open_ms = Vec::new();
        for _ in 0..3 {
            let mut fresh = Engine::new("bench").unwrap();
            let op = fresh.open();
            open_ms.push(time(&mut fresh, &mut store, op).1);
        }

        let mut edit = Vec::new();
        for k in 0..21 {
            let i = (k * 37) % n;
            let (b, p) = (format!("b{}", i / 500), format!("t{i}.md"));
            let hash = e.read().unwrap().source_hash(&b, &p).unwrap();
            let t = Instant::now();
            let op = e.write(&b, &p, doc(i, k + 1), Some(&hash), &tick());
            run(&mut e, &mut store, op).unwrap();
            let visible = e.read().unwrap().read_source(&b, &p).unwrap().content == doc(i, k + 1);
            assert!(visible);
            edit.push(t.elapsed().as_secs_f64() * 1e3);
        }

        let mut create = Vec::new();
        let mut replace = Vec::new();
        for round in 0..5 {
            let changes: Vec<_> = (0..25)
                .map(|j| json!({"operation": "write", "bundle": "b0", "path": format!("new/r{round}_{j}.md"), "content": doc(j, round)}))
                .collect();
            let op = e.transact(
                parse_transaction(&json!({ "changes": changes })).unwrap(),
                &tick(),
            );
            create.push(time(&mut e, &mut store, op).1);
            let s = e.read().unwrap();
            let changes: Vec<_> = (0..25)
                .map(|j| {
                    let i = (round * 25 + j * 11) % n;
                    let (b, p) = (format!("b{}", i / 500), format!("t{i}.md"));
                    json!({"operation": "write", "bundle": b, "path": p, "content": doc(i, 100 + round), "replaces": s.source_hash(&b, &p)})
                })
                .collect();
            let op = e.transact(
                parse_transaction(&json!({ "changes": changes })).unwrap(),
                &tick(),
            );
            replace.push(time(&mut e, &mut store, op).1);
        }

        let mut history = Vec::new();
        for _ in 0..5 {
            let mut fresh = Engine::new("bench").unwrap();
            let op = fresh.open();
            run(&mut fresh, &mut store, op).unwrap();
            let op = fresh.history(HistoryRequest::default());
            let (page, ms) = time(&mut fresh, &mut store, op);
            assert_eq!(page.revisions.len(), 20);
            history.push(ms);
        }

        let mut warm = Vec::new();
        for _ in 0..5 {
            let op = e.history(HistoryRequest::default());
            warm.push(time(&mut e, &mut store, op).1);
        }
        let mut restore = Vec::new();
        for _ in 0..5 {
            let op = e.history(HistoryRequest {
                before: None,
                limit: Some(12),
            });
            let page = run(&mut e, &mut store, op).unwrap();
            let target = page.revisions[11].revision.clone();
            let head = page.revisions[0].revision.clone();
            let op = e.restore(
                RestoreRequest {
                    revision: target,
                    expected_revision: head,
                },
                &tick(),
            );
            restore.push(time(&mut e, &mut store, op).1);
        }
        println!(
            "{n} concepts: import {import_ms:.1} ms, cold open {:.1} ms, edit to visible {:.2} ms, create 25 {:.2} ms, replace 25 {:.2} ms, history page {:.2} ms (cold engine) {:.2} ms (warm), restore {:.2} ms, peak RSS {} MiB",
            median(open_ms),
            median(edit),
            median(create),
            median(replace),
            median(history),
            median(warm),
            median(restore),
            rss_kb() / 1024
        );
    }
}
