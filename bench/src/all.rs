//! `langonrock-bench all`: the whole harness. Per size it writes the tree, imports it with
//! the real binary, measures the peak RSS of compiling it in a fresh process, times cold
//! first searches through `langonrock mcp`, and runs the in-process measurements in a child
//! (`size`); then retrieval, the token tax, the MCP cross-check and `billing.py`.

use crate::billing::score;
use crate::binary::{self, find_binary, ColdStart, Mcp};
use crate::corpus::{Corpus, PER_BUNDLE};
use crate::host::{MemHost, TENANT};
use crate::measure::{children_cpu_ms, loadavg, ms, once, sched_ns};
use crate::questions::questions;
use crate::rendered::Rendered;
use crate::report::{All, Machine, McpCheck, PyCheck, RssChild, SizeRun};
use crate::retrieval;
use crate::size::{SizeReport, PROBES};
use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
use langonrock_core::search::Index;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Options of a whole run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The unpacked Django documentation for the retrieval benchmark, when there.
    pub django: Option<std::path::PathBuf>,
    /// The sizes, in concepts.
    pub sizes: Vec<usize>,
    /// Few repetitions.
    pub quick: bool,
    /// Cold-start trials per size.
    pub cold_trials: usize,
    /// `billing.py`, when found.
    pub billing_py: Option<PathBuf>,
    /// The okf-samples folder, when found.
    pub okf_samples: Option<PathBuf>,
}

fn first_line(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The machine this runs on.
pub fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".into(), |(_, v)| v.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok());
    Machine {
        nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_model,
        mem_kb,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or("unknown".into(), |s| s.trim().to_string()),
        rustc: first_line("rustc", &["-V"]),
        commit: commit(),
        started: langonrock::clock::now_iso(),
    }
}

/// The short commit, with `-dirty` when tracked files other than the page this run writes
/// have changes.
fn commit() -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let head = first_line("git", &["-C", root, "rev-parse", "--short", "HEAD"]);
    let dirty = Command::new("git")
        .args([
            "-C",
            root,
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":(exclude)docs/benchmarks.md",
        ])
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    if dirty {
        format!("{head}-dirty")
    } else {
        head
    }
}

/// Runs this executable with `args` and parses its one JSON line.
fn child<T: serde::de::DeserializeOwned>(args: &[&str]) -> Result<T, String> {
    let mut exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    // The inner `cargo build` (build_binary) may have relinked this binary: Linux then names
    // the running one "<path> (deleted)", and the new one at <path> is the same code.
    if let Some(path) = exe.to_str().and_then(|p| p.strip_suffix(" (deleted)")) {
        exe = path.into();
    }
    let out = Command::new(&exe)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {args:?}: {e}"))?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let line = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{args:?} failed ({}): {line}", out.status));
    }
    serde_json::from_str(line.trim()).map_err(|e| format!("{args:?}: bad JSON: {e}: {line}"))
}

/// At 500 concepts: every priced call made against the real server, replies compared.
fn mcp_check(bin: &Path, data: &Path) -> Result<McpCheck, String> {
    let corpus = Corpus::reference(1).map_err(|e| e.to_string())?;
    let qs = questions(&corpus).map_err(|e| e.to_string())?;
    let mut host = MemHost::new().map_err(|e| e.message())?;
    host.import(
        corpus
            .files
            .iter()
            .map(|f| SourceDoc::new(f.bundle(), f.bundle_path(), f.text.as_str()))
            .collect(),
    )
    .map_err(|e| e.message())?;
    let served = host.engine.read().map_err(|e| e.message())?;
    let rendered = Rendered::new(&served, TENANT).map_err(|e| e.to_string())?;
    let calls = rendered.calls(&qs).map_err(|e| e.to_string())?;
    let mut mcp = Mcp::spawn(bin, data, &[])?;
    mcp.initialize()?;
    let mut check = McpCheck::default();
    for c in &calls {
        let (text, is_error) = mcp.call(c.tool, &c.args)?;
        check.calls += 1;
        if !is_error && text == c.text {
            check.equal += 1;
        } else {
            check.mismatches.push(format!(
                "{} {} ({} vs {} chars)",
                c.tool,
                c.args,
                text.len(),
                c.text.len()
            ));
        }
    }
    mcp.finish()?;
    Ok(check)
}

/// Retrieval at 500 concepts and over the okf-samples bundles.
pub fn retrieval_runs(
    okf_samples: Option<&Path>,
) -> Result<(Vec<retrieval::Run>, Vec<retrieval::Run>, usize), String> {
    let corpus = Corpus::reference(1).map_err(|e| e.to_string())?;
    let qs = questions(&corpus).map_err(|e| e.to_string())?;
    let model = corpus.model()?;
    let index = Index::build(&model, crate::billing::EVAL_DATE);
    let runs = retrieval::questions_runs(&model, &index, &qs).map_err(|e| e.to_string())?;
    let (samples, n) = match okf_samples {
        Some(dir) => {
            let read =
                langonrock_node_mcp::folder::read_folder(dir, None).map_err(|e| e.message())?;
            let docs: Vec<SourceDoc> = read.docs.into_iter().map(|d| d.doc).collect();
            let model = compile(&docs, SUMMARY_WIDTH).map_err(|e| e.message())?;
            let index = Index::build(&model, crate::billing::EVAL_DATE);
            (
                retrieval::self_query_runs(&model, &index).map_err(|e| e.to_string())?,
                model.concepts().len(),
            )
        }
        None => (Vec::new(), 0),
    };
    Ok((runs, samples, n))
}

/// The retrieval benchmark's sets: the reference corpus, the okf-samples bundles when
/// given, the Django documentation when given.
pub fn retrieval_sets(
    okf_samples: Option<&Path>,
    django: Option<&Path>,
) -> Result<Vec<retrieval::SetScore>, String> {
    let mut sets = vec![retrieval::reference_set()?];
    if let Some(dir) = okf_samples {
        let read = langonrock_node_mcp::folder::read_folder(dir, None).map_err(|e| e.message())?;
        let docs: Vec<SourceDoc> = read.docs.into_iter().map(|d| d.doc).collect();
        let model = compile(&docs, SUMMARY_WIDTH).map_err(|e| e.message())?;
        sets.push(retrieval::okf_samples_set(&model)?);
    }
    if let Some(dir) = django {
        sets.push(retrieval::django_set(
            dir,
            include_str!("../data/django-questions.json"),
        )?);
    }
    Ok(sets)
}

/// The ranked lists of the 20 questions at 500 concepts, per run, with the wanted ids (for
/// `billing.py`'s scorer).
/// A retrieval run's name, its ranked id lists and the wanted ids.
type RankedRun = (String, Vec<Vec<String>>, Vec<String>);

fn ranked_lists() -> Result<Vec<RankedRun>, String> {
    let corpus = Corpus::reference(1).map_err(|e| e.to_string())?;
    let qs = questions(&corpus).map_err(|e| e.to_string())?;
    let model = corpus.model()?;
    let index = Index::build(&model, crate::billing::EVAL_DATE);
    let ids = crate::store::RawIds::of(&model);
    let mut out = Vec::new();
    for (name, described, expand) in [
        ("named", false, false),
        ("named + expansion", false, true),
        ("described", true, false),
    ] {
        let mut lists = Vec::new();
        let mut wanted = Vec::new();
        for q in &qs {
            let text = if described { &q.described } else { &q.named };
            lists.push(retrieval::ranked(&model, &index, text, expand).map_err(|e| e.to_string())?);
            wanted.push(
                ids.concept(&model, &q.bundle, &q.wanted)
                    .map_err(|e| e.to_string())?
                    .id
                    .clone(),
            );
        }
        out.push((name.to_string(), lists, wanted));
    }
    Ok(out)
}

const PY_CHECK: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import billing
data = json.load(sys.stdin)
out = {"bills": {k: billing.bill([[tuple(p) for p in t] for t in turns]) for k, turns in data["sessions"].items()},
       "scores": {k: billing.score(v["ranked"], v["wanted"]) for k, v in data["scores"].items()}}
print(json.dumps(out))
"#;

/// Bills every session and scores every ranked list with `billing.py`, and compares.
fn py_check(py: &Path, sizes: &[SizeRun]) -> PyCheck {
    let dir = py.parent().unwrap_or(Path::new("."));
    let mut sessions = serde_json::Map::new();
    let mut ours = Vec::new();
    for s in sizes {
        for sess in &s.report.sessions {
            if let (Some(turns), Some(b)) = (&sess.turns, sess.bill) {
                let key = format!("{} {}", s.concepts, sess.key);
                sessions.insert(key.clone(), json!(turns));
                ours.push((key, b));
            }
        }
    }
    let lists = match ranked_lists() {
        Ok(l) => l,
        Err(e) => {
            return PyCheck {
                skipped: Some(e),
                ..PyCheck::default()
            }
        }
    };
    let mut scores = serde_json::Map::new();
    for (name, ranked, wanted) in &lists {
        scores.insert(name.clone(), json!({"ranked": ranked, "wanted": wanted}));
    }
    let input = json!({"sessions": sessions, "scores": scores}).to_string();
    let run = || -> Result<Value, String> {
        use std::io::Write;
        let mut c = Command::new("python3")
            .arg("-c")
            .arg(PY_CHECK)
            .arg(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run python3: {e}"))?;
        c.stdin
            .take()
            .ok_or("no stdin")?
            .write_all(input.as_bytes())
            .map_err(|e| e.to_string())?;
        let out = c.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "billing.py failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
    };
    let v = match run() {
        Ok(v) => v,
        Err(e) => {
            return PyCheck {
                skipped: Some(e),
                ..PyCheck::default()
            }
        }
    };
    let mut check = PyCheck {
        sessions: ours.len(),
        scores: lists.len(),
        ..PyCheck::default()
    };
    for (key, b) in &ours {
        let py = &v["bills"][key];
        if py["billed"] != json!(b.billed) || py["calls"] != json!(b.calls) {
            check.disagreements.push(format!(
                "{key}: ours {} / {}, billing.py {py}",
                b.billed, b.calls
            ));
        }
    }
    for (name, ranked, wanted) in &lists {
        let ours = match score(ranked, wanted) {
            Ok(s) => s,
            Err(e) => {
                check.disagreements.push(format!("{name}: {e}"));
                continue;
            }
        };
        let py = &v["scores"][name];
        let (ph, pm) = (
            py["hitRate"].as_f64().unwrap_or(f64::NAN),
            py["mrr"].as_f64().unwrap_or(f64::NAN),
        );
        if ph != ours.hit_rate || (pm - ours.mrr).abs() > 1e-12 {
            check.disagreements.push(format!(
                "{name}: ours {} / {}, billing.py {py}",
                ours.hit_rate, ours.mrr
            ));
        }
    }
    check
}

/// Builds the binary with cargo when run under `cargo run` (a no-op when it is current).
fn build_binary() -> Result<(), String> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    eprintln!("cargo build --release -p langonrock-node-mcp …");
    let status = Command::new(cargo)
        // With the bench selected too, features unify as under `cargo run -p
        // langonrock-bench`, so neither build invalidates the other's artifacts.
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "langonrock-node-mcp",
            "-p",
            "langonrock-bench",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo build failed: {status}"))
    }
}

/// The whole run.
pub fn run(opts: &Options) -> Result<All, String> {
    let started = Instant::now();
    let cpu0 = sched_ns().map_or(0.0, |(c, _)| c as f64 / 1e6) + children_cpu_ms().unwrap_or(0.0);
    let mut all = All {
        machine: machine(),
        quick: opts.quick,
        ..All::default()
    };
    all.load.extend(loadavg());
    let phase = Instant::now();
    build_binary()?;
    all.build_ms = ms(phase.elapsed());
    let bin = find_binary()?;
    all.binary_bytes = std::fs::metadata(&bin).map_or(0, |m| m.len());
    let root = std::env::temp_dir().join(format!("langonrock-bench-{}", std::process::id()));
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let result = (|| -> Result<(), String> {
        for &size in &opts.sizes {
            if size == 0 || !size.is_multiple_of(PER_BUNDLE) {
                return Err(format!("{size}: not a positive multiple of {PER_BUNDLE}"));
            }
            let tree = root.join(format!("tree-{size}"));
            let data = root.join(format!("data-{size}"));
            eprintln!("{size} concepts: generating and writing the tree …");
            let (written, write_tree_ms, _) = once(|| {
                Corpus::reference(size / PER_BUNDLE)
                    .map_err(|e| e.to_string())
                    .and_then(|c| c.write_to(&tree).map_err(|e| e.to_string()))
            });
            written?;
            eprintln!(
                "{size}: langonrock import … ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
            let import = binary::import(&bin, &tree, &data)?;
            let phase = Instant::now();
            all.load.extend(loadavg());
            eprintln!("{size}: peak RSS of compile + index in a fresh process …");
            let rss: RssChild = child(&["rss", tree.to_str().ok_or("path not UTF-8")?])?;
            let rss_ms = ms(phase.elapsed());
            if size == 500 {
                eprintln!("{size}: token tax in three modes, MCP cross-check …");
                for flags in [&[][..], &["--read-only"][..], &["--database-tools"][..]] {
                    all.taxes.push(binary::tax(&bin, &data, flags)?);
                }
                all.mcp_check = mcp_check(&bin, &data)?;
            }
            eprintln!(
                "{size}: {} cold first searches through the binary … ({:.0} s)",
                opts.cold_trials,
                started.elapsed().as_secs_f64()
            );
            let phase = Instant::now();
            let mut cold: Vec<ColdStart> = Vec::new();
            for i in 0..opts.cold_trials {
                cold.push(binary::cold_first_search(
                    &bin,
                    &data,
                    PROBES[i % PROBES.len()],
                )?);
            }
            let cold_ms = ms(phase.elapsed());
            all.load.extend(loadavg());
            eprintln!(
                "{size}: in-process measurements … ({:.0} s)",
                started.elapsed().as_secs_f64()
            );
            let phase = Instant::now();
            let mut args = vec![
                "size".to_string(),
                size.to_string(),
                "--data".into(),
                data.to_str().ok_or("path not UTF-8")?.to_string(),
            ];
            if opts.quick {
                args.push("--quick".into());
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let report: SizeReport = child(&argv)?;
            let in_process_ms = ms(phase.elapsed());
            all.load.extend(report.load.iter().copied());
            all.sizes.push(SizeRun {
                concepts: size,
                write_tree_ms,
                import,
                rss,
                cold,
                report,
                phases: crate::report::Phases {
                    rss_ms,
                    cold_ms,
                    in_process_ms,
                },
            });
        }
        Ok(())
    })();
    // Deleting 20,000-file trees takes tens of seconds on this disk: done once, after every
    // measurement, so it never competes with one.
    eprintln!("deleting {} …", root.display());
    let phase = Instant::now();
    let _ = std::fs::remove_dir_all(&root);
    all.cleanup_ms = ms(phase.elapsed());
    result?;
    eprintln!("retrieval …");
    let (runs, samples, n) = retrieval_runs(opts.okf_samples.as_deref())?;
    all.retrieval = runs;
    all.okf_samples = samples;
    all.okf_samples_concepts = n;
    all.retrieval_sets = retrieval_sets(opts.okf_samples.as_deref(), opts.django.as_deref())?;
    all.billing_py = match &opts.billing_py {
        Some(p) => {
            eprintln!("billing.py …");
            py_check(p, &all.sizes)
        }
        None => PyCheck {
            skipped: Some("billing.py not found (set BILLING_PY)".into()),
            ..PyCheck::default()
        },
    };
    all.load.extend(loadavg());
    all.total_ms = ms(started.elapsed());
    all.cpu_ms =
        sched_ns().map_or(0.0, |(c, _)| c as f64 / 1e6) + children_cpu_ms().unwrap_or(0.0) - cpu0;
    Ok(all)
}
