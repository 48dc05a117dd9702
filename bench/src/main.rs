//! The benchmark harness: `cargo run --release -p langonrock-bench -- <command>`.
//!
//! Commands:
//! - `all [--quick] [--sizes 500,5000,20000] [--trials N] [--out FILE] [--json FILE]`: the whole
//!   harness (see `langonrock_bench::all`); writes `docs/benchmarks.md` from the run.
//! - `size <concepts> [--data DIR] [--quick]`: the in-process measurements at one size, one
//!   JSON line (used by `all`).
//! - `rss <DIR>`: peak RSS of reading, compiling and indexing a tree, one JSON line.
//! - `render <JSON> [--out FILE]`: rewrites the page from a run saved with `all --json`.
//! - `retrieval [--django DIR] [--ranks] [--export DIR]`: hit@8 and MRR over the 20 questions and the
//!   okf-samples bundles; then the retrieval benchmark (per set and kind, before and after)
//!   over the reference corpus, okf-samples and the Django documentation (fetched by
//!   `bench/scripts/fetch-django-docs.sh`; skipped when absent).
//! - `compile [--runs N]`: 500, 5,000 and 20,000 concepts, each checked against CHECKSUMS and
//!   timed in its own child process (so peak RSS is per size); prints a table.
//! - `compile-one <concepts> [--runs N]`: one size, one JSON line on stdout (used by `compile`;
//!   also the target to profile).
//! - `compile-phases [concepts] [--runs N]`: times the parts of a compile separately (the
//!   per-document pass, the tenant pass, YAML alone, pulldown-cmark alone), for profiling.
//! - `generate <dir> --bundles B [--per-bundle N] [--seed S]`: writes the tree to `dir`.
//! - `limits [--revisions 1000,5000] [--data DIR]`: bounded work (docs/limits.md): `verify`,
//!   a deep `history` page and `gc --dry-run` on a tenant grown to each number of revisions
//!   without gc, and the compile of hostile documents; prints two tables.
//! - `manifest`: our tenant manifest (core's renderer, clock pinned to 2026-09-21) at the three
//!   sizes, in tokens, next to the reference's published sizes.
//! - `remote-calls <dsn>… [--calls N]`: the latency of library calls through each DSN (an
//!   embedded one next to a `langonrock serve`'s, say), see `langonrock_bench::remote`.
//! - `postgres [--concepts N] [--commits N] [--opens N] [--samples N] [--search-secs S]
//!   [--clients N] [--parts …]`: the
//!   PostgreSQL store against a real server (see `langonrock_bench::postgres`).
//! - `sessions [--concepts N] [--turns KEY]`: the 20-question session bills from our rendered
//!   tool output at one size (default 500); `--turns` dumps one session's turns as JSON, the
//!   input `billing.py`'s `bill` takes.

use langonrock_bench::billing::{tokens, utf16_len, EVAL_DATE};
use langonrock_bench::corpus::{expected_checksum, Corpus, PER_BUNDLE, SEED};
use langonrock_bench::measure::{fmt_mib, fmt_ms, ms, peak_rss_kb, process_self_cpu_ns, sched_ns};
use langonrock_bench::report::{markdown, RssChild, NOTES_MARKER};
use langonrock_core::compile::{
    check_names, compile, link, markdown_options, parse_document, split_frontmatter, Ambiguity,
    LinkInput, SourceDoc, SUMMARY_WIDTH,
};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Instant;

/// The sizes of every published number, in concepts.
const SIZES: [usize; 3] = [500, 5_000, 20_000];
/// The reference's compile figures (compile + snapshot write, median of 2, Apple M1 Pro).
const REFERENCE_MS: [&str; 3] = ["31", "253", "829"];
/// The reference on this machine, at 20,000 concepts, and our target.
const REFERENCE_HERE_20K_MS: f64 = 864.0;
const TARGET_20K_MS: f64 = 86.0;

const USAGE: &str = "usage: langonrock-bench <command>
  all [--quick] [--sizes 500,5000,20000] [--trials N] [--out FILE] [--json FILE]
                                      the whole harness; writes docs/benchmarks.md
  size <concepts> [--data DIR] [--quick]   one size in process, one JSON line
  rss <DIR>                           peak RSS of read + compile + index, one JSON line
  retrieval [--django DIR] [--ranks] [--export DIR]
                                      hit@8 and MRR, before and after, per set and kind
                                      (--export: each set as JSON for retrieval-peers.sh)
  render <JSON> [--out FILE]          rewrite the page from a saved `all --json` run
  compile [--runs N]                  compile at 500, 5,000 and 20,000 concepts (default 5 runs)
  compile-one <concepts> [--runs N]   one size, one JSON line (multiple of 500)
  compile-phases [concepts] [--runs N]  time the parts of compile (default 20000)
  generate <dir> --bundles B [--per-bundle N] [--seed S]
  limits [--revisions 1000,5000] [--data DIR]
                                      verify/history/gc at N revisions; hostile documents
  manifest                            our manifest size at 500, 5,000 and 20,000 concepts
  sessions [--concepts N] [--turns KEY]  session bills from our tool output (default 500)
  remote-calls <dsn>... [--calls N]   call latency through each DSN (default 2000 calls)
  postgres [--concepts N] [--commits N] [--opens N] [--samples N] [--search-secs S]
           [--clients N] [--parts cold,commit,visibility,throughput]
                                      the PostgreSQL store (default 20000 concepts)";

fn cmd_remote_calls(args: &[String]) -> Result<ExitCode, String> {
    let mut dsns = Vec::new();
    let mut calls = 2_000;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--calls" => {
                calls = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n >= 4)
                    .ok_or("--calls needs a number of at least 4")?
            }
            dsn => dsns.push(dsn.to_string()),
        }
    }
    if dsns.is_empty() {
        return Err(USAGE.to_string());
    }
    print!("{}", langonrock_bench::remote::run(&dsns, calls)?);
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("all") => cmd_all(&args[1..]),
        Some("size") => cmd_size(&args[1..]),
        Some("rss") => cmd_rss(&args[1..]),
        Some("retrieval") => cmd_retrieval(&args[1..]),
        Some("render") => cmd_render(&args[1..]),
        Some("compile") => cmd_compile(&args[1..]),
        Some("compile-one") => cmd_compile_one(&args[1..]),
        Some("compile-phases") => cmd_compile_phases(&args[1..]),
        Some("generate") => cmd_generate(&args[1..]),
        Some("sessions") => cmd_sessions(&args[1..]),
        Some("manifest") => cmd_manifest(),
        Some("limits") => cmd_limits(&args[1..]),
        Some("remote-calls") => cmd_remote_calls(&args[1..]),
        Some("postgres") => cmd_postgres(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// `limits`: the tables of docs/limits.md's measurements.
fn cmd_limits(args: &[String]) -> Result<ExitCode, String> {
    use langonrock_bench::limits;
    let sizes: Vec<usize> = match flag::<String>(args, "--revisions")? {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().parse().map_err(|_| format!("bad size {s:?}")))
            .collect::<Result<_, _>>()?,
        None => vec![1000, 5000],
    };
    let data = match flag::<PathBuf>(args, "--data")? {
        Some(d) => d,
        None => std::env::temp_dir().join(format!("langonrock-limits-{}", std::process::id())),
    };
    let _ = std::fs::remove_dir_all(&data);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.trim());
    println!("| revisions | verify wall / cpu ms | deep history page wall / cpu ms | gc --dry-run wall / cpu ms |");
    println!("|---:|---:|---:|---:|");
    let rows = limits::history(&data, &sizes);
    let _ = std::fs::remove_dir_all(&data);
    for r in rows? {
        println!(
            "| {} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} |",
            r.revisions,
            r.verify.wall_ms,
            r.verify.cpu_ms,
            r.history_deep.wall_ms,
            r.history_deep.cpu_ms,
            r.gc_dry.wall_ms,
            r.gc_dry.cpu_ms
        );
    }
    println!();
    println!("| document | bytes | compile wall / cpu ms | outcome |");
    println!("|---|---:|---:|---|");
    for d in limits::documents() {
        println!(
            "| {} | {} | {:.0} / {:.0} | {} |",
            d.name, d.bytes, d.compile.wall_ms, d.compile.cpu_ms, d.outcome
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("\nload average after: {}", load.trim());
    Ok(ExitCode::SUCCESS)
}

/// `--name value` from `args`, parsed.
fn flag<T: std::str::FromStr>(args: &[String], name: &str) -> Result<Option<T>, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(None),
        Some(i) => {
            let v = args
                .get(i + 1)
                .ok_or_else(|| format!("{name} needs a value"))?;
            v.parse()
                .map(Some)
                .map_err(|_| format!("{name}: not a number: {v}"))
        }
    }
}

/// What `compile-one` measures at one size.
#[derive(Debug, Serialize, Deserialize)]
struct CompileOne {
    concepts: usize,
    bundles: usize,
    files: usize,
    bytes: usize,
    checksum: String,
    expected: Option<String>,
    generate_ms: f64,
    runs_ms: Vec<f64>,
    /// On-CPU time of each run (Linux schedstat), which contention from other processes
    /// inflates far less than the wall clock.
    cpu_ms: Vec<f64>,
    /// Time spent waiting for a CPU during each run.
    wait_ms: Vec<f64>,
    model_concepts: usize,
    diagnostics: usize,
    rss_before_kb: Option<u64>,
    peak_rss_kb: Option<u64>,
}

impl CompileOne {
    fn checksum_status(&self) -> &'static str {
        match &self.expected {
            Some(e) if *e == self.checksum => "OK",
            Some(_) => "MISMATCH",
            None => "UNLISTED",
        }
    }
}

/// The element at `floor(n/2)` of the sorted samples, as the reference takes its median.
fn median(sorted: &[f64]) -> f64 {
    sorted[sorted.len() / 2]
}

fn cmd_compile_one(args: &[String]) -> Result<ExitCode, String> {
    let concepts: usize = args
        .first()
        .and_then(|a| a.parse::<usize>().ok())
        .filter(|n| n.is_multiple_of(PER_BUNDLE) && *n > 0)
        .ok_or_else(|| format!("compile-one needs a concept count, a multiple of {PER_BUNDLE}"))?;
    let runs: usize = flag(args, "--runs")?.unwrap_or(5).max(1);
    let bundles = concepts / PER_BUNDLE;

    let t = Instant::now();
    let corpus = Corpus::reference(bundles).map_err(|e| e.to_string())?;
    let generate_ms = ms(t.elapsed());
    let checksum = corpus.checksum_line();
    let (files, bytes) = (corpus.files.len(), corpus.total_bytes());
    // Move the texts into the compiler's input and drop the rest of the corpus, so the
    // baseline holds only what a caller of `compile` must hold.
    let docs: Vec<SourceDoc> = corpus
        .files
        .into_iter()
        .map(|f| {
            let (bundle, path) = f
                .path
                .split_once('/')
                .map(|(b, p)| (b.to_string(), p.to_string()))
                .unwrap_or_default();
            SourceDoc {
                bundle,
                path,
                text: f.text.into(),
            }
        })
        .collect();
    let rss_before_kb = peak_rss_kb();

    let mut runs_ms = Vec::with_capacity(runs);
    let mut cpu_ms = Vec::with_capacity(runs);
    let mut wait_ms = Vec::with_capacity(runs);
    let mut model_concepts = 0;
    let mut diagnostics = 0;
    for _ in 0..runs {
        // `compile` parses on every core (docs/compile.md §12): the CPU time is the whole
        // process's, the wait this thread's.
        let s0 = sched_ns();
        let p0 = process_self_cpu_ns();
        let t = Instant::now();
        let model = compile(&docs, SUMMARY_WIDTH)
            .map_err(|e| format!("compile failed: {}", e.message()))?;
        runs_ms.push(ms(t.elapsed()));
        if let (Some(c0), Some(c1)) = (p0, process_self_cpu_ns()) {
            cpu_ms.push((c1 - c0) as f64 / 1e6);
        }
        if let (Some((_, w0)), Some((_, w1))) = (s0, sched_ns()) {
            wait_ms.push((w1 - w0) as f64 / 1e6);
        }
        model_concepts = model.concepts().len();
        diagnostics = model.diagnostics().len();
        drop(model);
    }
    let out = CompileOne {
        concepts,
        bundles,
        files,
        bytes,
        expected: expected_checksum(concepts).map(str::to_string),
        checksum,
        generate_ms,
        runs_ms,
        cpu_ms,
        wait_ms,
        model_concepts,
        diagnostics,
        rss_before_kb,
        peak_rss_kb: peak_rss_kb(),
    };
    println!(
        "{}",
        serde_json::to_string(&out).map_err(|e| e.to_string())?
    );
    Ok(if out.checksum_status() == "MISMATCH" {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn cmd_compile(args: &[String]) -> Result<ExitCode, String> {
    let runs: usize = flag(args, "--runs")?.unwrap_or(5).max(1);
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut results = Vec::new();
    for size in SIZES {
        eprintln!("compile-one {size} --runs {runs} …");
        let out = Command::new(&exe)
            .args([
                "compile-one",
                &size.to_string(),
                "--runs",
                &runs.to_string(),
            ])
            .output()
            .map_err(|e| format!("cannot run compile-one: {e}"))?;
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout);
        let r: CompileOne = serde_json::from_str(line.trim())
            .map_err(|e| format!("compile-one {size} failed ({}): {e}: {line}", out.status))?;
        results.push(r);
    }

    println!("Reference corpus, seed {SEED}, {PER_BUNDLE} concepts per bundle: CHECKSUMS");
    for r in &results {
        println!(
            "  {:>6} concepts  {:<8}  {}",
            r.concepts,
            r.checksum_status(),
            r.checksum
        );
        if r.checksum_status() == "MISMATCH" {
            println!(
                "  {:>6} expected            {}",
                "",
                r.expected.as_deref().unwrap_or("")
            );
        }
    }
    println!();
    println!(
        "langonrock_core::compile::compile (summary width {SUMMARY_WIDTH}), {runs} runs per size, one process per size"
    );
    println!(
        "{:>8} {:>7} {:>6} {:>10} {:>8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10} {:>11}",
        "concepts",
        "bundles",
        "files",
        "bytes",
        "gen ms",
        "median ms",
        "min ms",
        "max ms",
        "CPU ms",
        "wait ms",
        "RSS0 MiB",
        "peak MiB",
        "ref ms (M1)"
    );
    for (r, reference) in results.iter().zip(REFERENCE_MS) {
        let mut s = r.runs_ms.clone();
        s.sort_by(f64::total_cmp);
        let sorted_median = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            if v.is_empty() {
                "n/a".to_string()
            } else {
                fmt_ms(median(&v))
            }
        };
        println!(
            "{:>8} {:>7} {:>6} {:>10} {:>8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>10} {:>11}",
            r.concepts,
            r.bundles,
            r.files,
            r.bytes,
            fmt_ms(r.generate_ms),
            fmt_ms(median(&s)),
            fmt_ms(s[0]),
            fmt_ms(s[s.len() - 1]),
            sorted_median(&r.cpu_ms),
            sorted_median(&r.wait_ms),
            fmt_mib(r.rss_before_kb),
            fmt_mib(r.peak_rss_kb),
            reference,
        );
    }
    if let Some(r) = results.iter().find(|r| r.concepts == 20_000) {
        let mut s = r.runs_ms.clone();
        s.sort_by(f64::total_cmp);
        let m = median(&s);
        println!();
        println!(
            "20,000 concepts: {} ms; target <= {TARGET_20K_MS} ms ({}); the reference takes {REFERENCE_HERE_20K_MS} ms on this machine ({:.1}x)",
            fmt_ms(m),
            if m <= TARGET_20K_MS { "met" } else { "not met" },
            REFERENCE_HERE_20K_MS / m
        );
    }
    println!("model concepts / diagnostics: {}", {
        results
            .iter()
            .map(|r| format!("{} / {}", r.model_concepts, r.diagnostics))
            .collect::<Vec<_>>()
            .join(", ")
    });
    println!("median/min/max: wall clock per run; CPU / wait: median on-CPU and waiting-for-CPU time per run (schedstat).");
    println!("RSS0 = peak RSS after generating the corpus, before compiling; peak = VmHWM after the runs.");
    println!("ref = the reference's compile + snapshot write (median of 2, Apple M1 Pro, agent-session.md §9.1).");
    let bad = results.iter().any(|r| r.checksum_status() != "OK");
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn cmd_generate(args: &[String]) -> Result<ExitCode, String> {
    let dir = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .ok_or("generate needs an output folder")?;
    let bundles: usize = flag(args, "--bundles")?.ok_or("generate needs --bundles B")?;
    let per_bundle: usize = flag(args, "--per-bundle")?.unwrap_or(PER_BUNDLE);
    let seed: u32 = flag(args, "--seed")?.unwrap_or(SEED);
    let corpus = Corpus::generate(bundles, per_bundle, seed).map_err(|e| e.to_string())?;
    corpus
        .write_to(&PathBuf::from(dir))
        .map_err(|e| format!("cannot write {dir}: {e}"))?;
    let line = corpus.checksum_line();
    println!("{line}");
    if seed == SEED && per_bundle == PER_BUNDLE {
        match expected_checksum(corpus.concepts.len()) {
            Some(e) if e == line => println!("OK: matches CHECKSUMS"),
            Some(e) => {
                println!("MISMATCH: expected {e}");
                return Ok(ExitCode::FAILURE);
            }
            None => println!("no CHECKSUMS line for this size"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_sessions(args: &[String]) -> Result<ExitCode, String> {
    let concepts: usize = flag(args, "--concepts")?.unwrap_or(500);
    if concepts == 0 || !concepts.is_multiple_of(PER_BUNDLE) {
        return Err(format!("--concepts: a positive multiple of {PER_BUNDLE}"));
    }
    let report = langonrock_bench::size::sessions_only(concepts)?;
    if let Some(which) = flag::<String>(args, "--turns")? {
        let s = report.iter().find(|s| s.key == which).ok_or_else(|| {
            format!(
                "--turns: one of {}",
                report
                    .iter()
                    .map(|s| s.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        println!(
            "{}",
            serde_json::to_string(&s.turns).map_err(|e| e.to_string())?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("20-question agent session at {concepts} concepts (agent-session.md §2, §4), clock {EVAL_DATE}");
    println!("{:<24} {:>16}", "session", "billed / calls");
    for s in &report {
        let cell = s.bill.map_or("null".to_string(), |b| {
            format!("{} / {}", b.billed, b.calls)
        });
        println!("{:<24} {cell:>16}", s.key);
    }
    println!("published, 500 concepts: okf 116357 / 30, manifest 64355 / 17, search 56928 / 36");
    Ok(ExitCode::SUCCESS)
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cmd_all(args: &[String]) -> Result<ExitCode, String> {
    let quick = args.iter().any(|a| a == "--quick");
    let sizes: Vec<usize> = match flag::<String>(args, "--sizes")? {
        None => SIZES.to_vec(),
        Some(list) => list
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .map_err(|_| format!("--sizes: not a number: {x}"))
            })
            .collect::<Result<_, _>>()?,
    };
    let trials: usize = flag(args, "--trials")?.unwrap_or(if quick { 2 } else { 20 });
    let out = flag::<String>(args, "--out")?
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../docs/benchmarks.md"));
    let billing_py = std::env::var_os("BILLING_PY")
        .map(PathBuf::from)
        .or_else(|| Some(manifest_dir().join("../../shared/bench/billing.py")))
        .filter(|p| p.is_file());
    let okf_samples = Some(manifest_dir().join("../tests/data/okf-samples")).filter(|p| p.is_dir());
    let opts = langonrock_bench::all::Options {
        sizes,
        quick,
        cold_trials: trials.max(1),
        billing_py,
        okf_samples,
        django: django_docs(args)?,
    };
    let all = langonrock_bench::all::run(&opts)?;
    if let Some(json) = flag::<String>(args, "--json")? {
        std::fs::write(
            &json,
            serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?,
        )
        .map_err(|e| format!("cannot write {json}: {e}"))?;
    }
    let md = write_page(&all, &out)?;
    print!("{}", &md[..md.find(NOTES_MARKER).unwrap_or(md.len())]);
    println!(
        "wrote {}; total {:.1} s wall clock, {:.1} s on-CPU",
        out.display(),
        all.total_ms / 1000.0,
        all.cpu_ms / 1000.0
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes the page for `all` to `out`, keeping its notes; returns the text.
fn write_page(
    all: &langonrock_bench::report::All,
    out: &std::path::Path,
) -> Result<String, String> {
    let old = std::fs::read_to_string(out).unwrap_or_default();
    let notes = match old.find(NOTES_MARKER) {
        Some(at) => old[at..].to_string(),
        None => format!("{NOTES_MARKER}\n"),
    };
    let md = markdown(all, &notes);
    std::fs::write(out, &md).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(md)
}

fn cmd_render(args: &[String]) -> Result<ExitCode, String> {
    let json = args.first().ok_or("render needs the JSON of a run")?;
    let text = std::fs::read_to_string(json).map_err(|e| format!("cannot read {json}: {e}"))?;
    let all: langonrock_bench::report::All =
        serde_json::from_str(&text).map_err(|e| format!("{json}: {e}"))?;
    let out = flag::<String>(args, "--out")?
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../docs/benchmarks.md"));
    write_page(&all, &out)?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

fn cmd_size(args: &[String]) -> Result<ExitCode, String> {
    let concepts: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .filter(|n: &usize| *n > 0 && n.is_multiple_of(PER_BUNDLE))
        .ok_or_else(|| format!("size needs a concept count, a multiple of {PER_BUNDLE}"))?;
    let data = flag::<String>(args, "--data")?.map(PathBuf::from);
    let quick = args.iter().any(|a| a == "--quick");
    let r = langonrock_bench::size::measure(concepts, data.as_deref(), quick)?;
    println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
    Ok(ExitCode::SUCCESS)
}

fn cmd_rss(args: &[String]) -> Result<ExitCode, String> {
    let dir = args.first().ok_or("rss needs a folder")?;
    let (after_read_kb, peak_kb, concepts) =
        langonrock_bench::size::rss_compile_index(&PathBuf::from(dir))?;
    let r = RssChild {
        after_read_kb,
        peak_kb,
        concepts,
    };
    println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
    Ok(ExitCode::SUCCESS)
}

/// The unpacked Django documentation: `--django DIR`, else where
/// `bench/scripts/fetch-django-docs.sh` leaves it, when it is there.
fn django_docs(args: &[String]) -> Result<Option<PathBuf>, String> {
    match flag::<String>(args, "--django")? {
        Some(d) => Ok(Some(PathBuf::from(d))),
        None => Ok(Some(manifest_dir().join(format!(
            "../target/bench-data/django-{}/docs",
            langonrock_bench::docset::DJANGO_VERSION
        )))
        .filter(|p| p.is_dir())),
    }
}

fn cmd_retrieval(args: &[String]) -> Result<ExitCode, String> {
    if let Some(dir) = flag::<String>(args, "--export")? {
        let _ = langonrock_bench::retrieval::EXPORT.set(PathBuf::from(dir));
    }
    let samples = manifest_dir().join("../tests/data/okf-samples");
    let (runs, okf, n) =
        langonrock_bench::all::retrieval_runs(Some(samples.as_path()).filter(|p| p.is_dir()))?;
    println!("Retrieval, 20 questions at 500 concepts, k = 8 (reference: named 70% / 0.433, named + expansion 75% / 0.438, described 95% / 0.399)");
    for r in &runs {
        println!(
            "  {:<20} {:>5.0}%  MRR {:.3}  ranks {:?}",
            r.name, r.hit_rate, r.mrr, r.ranks
        );
    }
    println!("okf-samples, {n} concepts, each concept's own title / summary as the query");
    for r in &okf {
        println!(
            "  {:<20} {:>5.0}%  MRR {:.3}  ({} queries)",
            r.name, r.hit_rate, r.mrr, r.queries
        );
    }
    let sets = langonrock_bench::all::retrieval_sets(
        Some(samples.as_path()).filter(|p| p.is_dir()),
        django_docs(args)?.as_deref(),
    )?;
    println!(
        "\nThe retrieval benchmark, direct rows, k = 8, before and after (docs/benchmarks.md):\n"
    );
    print!("{}", langonrock_bench::retrieval::sets_table(&sets));
    if args.iter().any(|a| a == "--ranks") {
        for s in &sets {
            for k in &s.kinds {
                println!("{} / {}: {:?}", s.name, k.kind, k.ranks);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_manifest() -> Result<ExitCode, String> {
    // agent-session.md §7: tenant `bench`; the bundle slice is the first bundle.
    const PUBLISHED: [(u64, Option<u64>); 3] = [
        (20_549, None),
        (205_851, Some(20_419)),
        (835_922, Some(20_486)),
    ];
    println!(
        "Tenant manifest (langonrock_core::manifest::manifest, tenant bench, today {EVAL_DATE})"
    );
    println!(
        "{:>8} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "concepts", "chars", "tokens", "ref tokens", "slice tok", "ref slice"
    );
    for (size, (published, published_slice)) in SIZES.into_iter().zip(PUBLISHED) {
        let corpus = Corpus::reference(size / PER_BUNDLE).map_err(|e| e.to_string())?;
        let model = corpus.model()?;
        let whole = langonrock_core::manifest::manifest(&model, "bench", None, EVAL_DATE)
            .map_err(|e| e.message())?;
        let slice = if corpus.bundles.len() > 1 {
            let s = langonrock_core::manifest::manifest(
                &model,
                "bench",
                Some(&corpus.bundles[0]),
                EVAL_DATE,
            )
            .map_err(|e| e.message())?;
            tokens(&s).to_string()
        } else {
            "-".to_string()
        };
        println!(
            "{size:>8} {:>10} {:>10} {:>12} {:>12} {:>12}",
            utf16_len(&whole),
            tokens(&whole),
            published,
            slice,
            published_slice.map_or("-".to_string(), |s| s.to_string())
        );
    }
    println!("reference at 500: 82194 chars (agent-session.md §4)");
    Ok(ExitCode::SUCCESS)
}

/// Runs `f` `runs` times; returns (median, min, max) in ms, and the last result.
fn time_runs(runs: usize, mut f: impl FnMut() -> usize) -> (f64, f64, f64, usize) {
    let mut samples = Vec::with_capacity(runs);
    let mut check = 0;
    for _ in 0..runs {
        let t = Instant::now();
        check = std::hint::black_box(f());
        samples.push(ms(t.elapsed()));
    }
    samples.sort_by(f64::total_cmp);
    (
        median(&samples),
        samples[0],
        samples[samples.len() - 1],
        check,
    )
}

fn cmd_compile_phases(args: &[String]) -> Result<ExitCode, String> {
    let concepts: usize = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse().map_err(|_| format!("not a concept count: {a}")))
        .transpose()?
        .unwrap_or(20_000);
    if concepts == 0 || !concepts.is_multiple_of(PER_BUNDLE) {
        return Err(format!(
            "the concept count must be a positive multiple of {PER_BUNDLE}"
        ));
    }
    let runs: usize = flag(args, "--runs")?.unwrap_or(5).max(1);
    let corpus = Corpus::reference(concepts / PER_BUNDLE).map_err(|e| e.to_string())?;
    let docs: Vec<SourceDoc> = corpus
        .files
        .iter()
        .map(|f| SourceDoc::new(f.bundle(), f.bundle_path(), f.text.as_str()))
        .collect();
    let concept_docs: Vec<&SourceDoc> = docs
        .iter()
        .filter(|d| !d.path.ends_with("index.md"))
        .collect();
    let parsed: Vec<LinkInput> = docs
        .iter()
        .map(|d| {
            let p = (!d.path.ends_with("index.md"))
                .then(|| Arc::new(parse_document(&d.path, &d.text, SUMMARY_WIDTH)));
            (d.clone(), p)
        })
        .collect();
    let body = |d: &SourceDoc| -> usize { split_frontmatter(&d.text).map_or(0, |(_, at)| at) };

    println!("compile phases at {concepts} concepts, {runs} runs each (median / min / max ms)");
    let row = |name: &str, (m, lo, hi, _): (f64, f64, f64, usize)| {
        println!(
            "  {name:<58} {:>8} {:>8} {:>8}",
            fmt_ms(m),
            fmt_ms(lo),
            fmt_ms(hi)
        );
    };
    row(
        "compile (whole)",
        time_runs(runs, || {
            compile(&docs, SUMMARY_WIDTH).map_or(0, |m| m.concepts().len())
        }),
    );
    row(
        "check_names (bundle and path validation)",
        time_runs(runs, || {
            usize::from(
                check_names(docs.iter().map(|d| (d.bundle.as_str(), d.path.as_str()))).is_ok(),
            )
        }),
    );
    row(
        "parse_document, every concept",
        time_runs(runs, || {
            concept_docs
                .iter()
                .map(|d| {
                    parse_document(&d.path, &d.text, SUMMARY_WIDTH)
                        .sections
                        .len()
                })
                .sum()
        }),
    );
    row(
        "link (tenant pass, parsed docs given)",
        time_runs(runs, || {
            link(parsed.clone(), Ambiguity::Refuse).map_or(0, |m| m.concepts().len())
        }),
    );
    row(
        "  of which: cloning its input",
        time_runs(runs, || parsed.clone().len()),
    );
    row(
        "split_frontmatter + yaml_serde::from_str::<Value>",
        time_runs(runs, || {
            concept_docs
                .iter()
                .filter_map(|d| split_frontmatter(&d.text))
                .map(
                    |(inner, _)| match yaml_serde::from_str::<yaml_serde::Value>(inner) {
                        Ok(yaml_serde::Value::Mapping(m)) => m.len(),
                        _ => 0,
                    },
                )
                .sum()
        }),
    );
    row(
        "split_frontmatter + a flat `key: value` line scan (floor)",
        time_runs(runs, || {
            concept_docs
                .iter()
                .filter_map(|d| split_frontmatter(&d.text))
                .map(|(inner, _)| {
                    inner
                        .lines()
                        .filter(|l| !l.starts_with(' '))
                        .filter_map(|l| l.split_once(": "))
                        .filter(|(k, _)| {
                            matches!(
                                *k,
                                "type"
                                    | "title"
                                    | "description"
                                    | "status"
                                    | "grain"
                                    | "stale_after"
                            )
                        })
                        .count()
                })
                .sum()
        }),
    );
    row(
        "pulldown-cmark events with offsets over every body",
        time_runs(runs, || {
            concept_docs
                .iter()
                .map(|d| {
                    let b = &d.text[body(d)..];
                    pulldown_cmark::Parser::new_ext(b, markdown_options())
                        .into_offset_iter()
                        .count()
                })
                .sum()
        }),
    );
    row(
        "str::is_ascii + line count of every text (memory floor)",
        time_runs(runs, || {
            concept_docs
                .iter()
                .map(|d| usize::from(d.text.is_ascii()) + d.text.lines().count())
                .sum()
        }),
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_postgres(args: &[String]) -> Result<ExitCode, String> {
    let plan = langonrock_bench::postgres::Plan {
        concepts: flag(args, "--concepts")?.unwrap_or(20_000),
        commits: flag(args, "--commits")?.unwrap_or(200),
        opens: flag(args, "--opens")?.unwrap_or(11),
        samples: flag(args, "--samples")?.unwrap_or(100),
        search_secs: flag(args, "--search-secs")?.unwrap_or(10.0),
        clients: flag(args, "--clients")?.unwrap_or(1),
        parts: flag::<String>(args, "--parts")?
            .unwrap_or_else(|| "all".into())
            .split(',')
            .map(str::to_string)
            .collect(),
    };
    langonrock_bench::postgres::run(&plan)?;
    Ok(ExitCode::SUCCESS)
}
