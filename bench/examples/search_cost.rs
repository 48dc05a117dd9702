//! On-CPU cost of the search index over the reference corpus: `Index::build`, a copy of the
//! index (`copy`: what a commit beside a search makes), and one search request (ranking,
//! `pos`, the rendered TSV) for each of the five probes.
//!
//! `cargo run --release -p langonrock-bench --example search_cost -- [build|copy|query|mix] [BUNDLES] [REPS] [TENANTS]`
//!
//! `mix` runs, instead of the five probes, 500 queries made as `bench/scripts/serve_load.py`
//! makes them (two words of four or more letters drawn from the concepts' summaries, seeded),
//! so its figure is the core's share of a `serve` search request. With TENANTS above 1 (the
//! query modes), that many tenants are compiled and indexed, each its own copy of the
//! corpus in memory, and the queries go round them in turn, as `serve_load.py --tenants`
//! spreads its requests: the instructions are the same, the memory a search reads is not.
//!
//! BUNDLES of 500 concepts (default 40: 20,000 concepts). Prints the median on-CPU time of
//! REPS runs (`CLOCK_PROCESS_CPUTIME_ID`, every thread: a build runs on every core; a loaded
//! machine inflates it less than the wall clock) and the median wall time. Under `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*search_cost::measured*'` (with `SEARCH_COST_NO_CLOCK=1`: valgrind
//! cannot run the vDSO clock) only the measured part counts instructions.

use langonrock_bench::billing::EVAL_DATE;
use langonrock_bench::corpus::{Corpus, Mulberry32};
use langonrock_core::compile::Model;
use langonrock_core::search::{search, Index, SearchOptions};
use std::hint::black_box;
use std::time::Instant;

const PROBES: [&str; 5] = [
    "orders grain join refunds",
    "settled card wallet authorisation",
    "browsing visit anonymous traffic",
    "subscription billing cycle",
    "inventory warehouse stock",
];

/// On-CPU ns of the whole process (a build uses every core with the `parallel` feature;
/// the other threads are idle otherwise), and wall ns since `t0`; both 0 with
/// `SEARCH_COST_NO_CLOCK` set (valgrind cannot run the vDSO clock).
fn clocks(t0: Instant) -> (u64, u64) {
    if std::env::var_os("SEARCH_COST_NO_CLOCK").is_some() {
        return (0, 0);
    }
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    let cpu = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
    (cpu, t0.elapsed().as_nanos() as u64)
}

/// 500 queries of two summary words each, as `serve_load.py` draws them.
fn mix_queries(model: &Model) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in model.concepts() {
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
fn measured(mode: &str, tenants: &[(Model, Index)], queries: &[String]) -> usize {
    match mode {
        "build" => Index::build(&tenants[0].0, EVAL_DATE).posting_count(),
        // The copy a commit makes of the index when a read holds the state it replaces
        // (docs/search.md §8 rule 4), without the update that follows it.
        "copy" => tenants[0].1.clone().posting_count(),
        _ => queries
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (model, index) = &tenants[i % tenants.len()];
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
            "build" | "copy" => 7,
            "mix" => 5,
            _ => 200,
        },
        |s| s.parse().expect("REPS"),
    );
    let copies: usize = args.get(3).map_or(1, |s| s.parse().expect("TENANTS"));
    let corpus = Corpus::reference(bundles).expect("corpus");
    let tenants: Vec<(Model, Index)> = (0..copies.max(1))
        .map(|_| {
            let model = corpus.model().expect("model");
            let index = Index::build(&model, EVAL_DATE);
            (model, index)
        })
        .collect();
    let model = &tenants[0].0;
    let queries: Vec<String> = if mode == "mix" {
        mix_queries(model)
    } else {
        PROBES.iter().map(|p| p.to_string()).collect()
    };
    let mut cpu: Vec<u64> = Vec::with_capacity(reps);
    let mut wall: Vec<u64> = Vec::with_capacity(reps);
    let mut sink = 0usize;
    let t0 = Instant::now();
    for _ in 0..reps {
        let (c, w) = clocks(t0);
        sink += black_box(measured(&mode, &tenants, &queries));
        let (c1, w1) = clocks(t0);
        cpu.push(c1 - c);
        wall.push(w1 - w);
    }
    cpu.sort_unstable();
    wall.sort_unstable();
    let whole = mode == "build" || mode == "copy";
    let per = if whole { 1 } else { queries.len() } as f64;
    let median = |v: &[u64]| v[v.len() / 2] as f64 / per / 1000.0;
    println!(
        "{mode}: {} concepts × {} tenants, {reps} runs, median on-CPU {:.1} µs, wall {:.1} µs{} (checksum {sink})",
        model.concepts().len(),
        tenants.len(),
        median(&cpu),
        median(&wall),
        if whole { "" } else { " per search" }
    );
}
