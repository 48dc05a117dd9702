//! On-CPU cost of the search index over the reference corpus: `Index::build`, and one
//! search request (ranking, `pos`, the rendered TSV) for each of the five probes.
//!
//! `cargo run --release -p langonrock-bench --example search_cost -- [build|query|mix] [BUNDLES] [REPS]`
//!
//! `mix` runs, instead of the five probes, 500 queries made as `bench/scripts/serve_load.py`
//! makes them (two words of four or more letters drawn from the concepts' summaries, seeded),
//! so its figure is the core's share of a `serve` search request.
//!
//! BUNDLES of 500 concepts (default 40: 20,000 concepts). Prints the median on-CPU time of
//! REPS runs (`CLOCK_THREAD_CPUTIME_ID`, so a loaded machine inflates it less than the wall
//! clock). Under `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*search_cost::measured*'` (with `SEARCH_COST_NO_CLOCK=1`: valgrind
//! cannot run the vDSO clock) only the measured part counts instructions.

use langonrock_bench::billing::EVAL_DATE;
use langonrock_bench::corpus::{Corpus, Mulberry32};
use langonrock_bench::measure::sched_ns;
use langonrock_core::compile::Model;
use langonrock_core::search::{search, Index, SearchOptions};
use std::hint::black_box;

const PROBES: [&str; 5] = [
    "orders grain join refunds",
    "settled card wallet authorisation",
    "browsing visit anonymous traffic",
    "subscription billing cycle",
    "inventory warehouse stock",
];

/// On-CPU ns; 0 with `SEARCH_COST_NO_CLOCK` set (valgrind cannot run the vDSO clock).
fn cpu_ns() -> u64 {
    if std::env::var_os("SEARCH_COST_NO_CLOCK").is_some() {
        return 0;
    }
    sched_ns().map_or(0, |(c, _)| c)
}

/// 500 queries of two summary words each, as `serve_load.py` draws them.
fn mix_queries(model: &Model) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in &model.concepts {
        let summary = c.parsed.summary.to_lowercase();
        for w in summary.split(|ch: char| !ch.is_ascii_lowercase()) {
            if w.len() >= 4 {
                words.push(w.to_string());
            }
        }
    }
    let mut rng = Mulberry32::new(7);
    (0..500)
        .map(|_| {
            let a = rng.index(words.len());
            let b = rng.index(words.len());
            format!("{} {}", words[a], words[b])
        })
        .collect()
}

#[inline(never)]
fn measured(mode: &str, model: &Model, index: &Index, queries: &[String]) -> usize {
    match mode {
        "build" => Index::build(model, EVAL_DATE).posting_count(),
        _ => queries
            .iter()
            .map(|p| {
                search(
                    model,
                    index,
                    "bench",
                    p,
                    &SearchOptions::default(),
                    EVAL_DATE,
                )
                .map(|s| s.len())
                .unwrap_or(0)
            })
            .sum(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("query", String::as_str).to_string();
    let bundles: usize = args.get(1).map_or(40, |s| s.parse().expect("BUNDLES"));
    let reps: usize = args.get(2).map_or(
        match mode.as_str() {
            "build" => 7,
            "mix" => 5,
            _ => 200,
        },
        |s| s.parse().expect("REPS"),
    );
    let corpus = Corpus::reference(bundles).expect("corpus");
    let model = corpus.model().expect("model");
    let index = Index::build(&model, EVAL_DATE);
    let queries: Vec<String> = if mode == "mix" {
        mix_queries(&model)
    } else {
        PROBES.iter().map(|p| p.to_string()).collect()
    };
    let mut runs: Vec<u64> = Vec::with_capacity(reps);
    let mut sink = 0usize;
    for _ in 0..reps {
        let t = cpu_ns();
        sink += black_box(measured(&mode, &model, &index, &queries));
        runs.push(cpu_ns() - t);
    }
    runs.sort_unstable();
    let per = if mode == "build" { 1 } else { queries.len() } as f64;
    let median = runs[runs.len() / 2] as f64 / per / 1000.0;
    println!(
        "{mode}: {} concepts, {reps} runs, median on-CPU {median:.1} µs{} (checksum {sink})",
        model.concepts.len(),
        if mode == "build" { "" } else { " per search" }
    );
}
