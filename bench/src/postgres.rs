//! `langonrock-bench postgres`: the PostgreSQL store at one size (docs/postgres.md,
//! docs/benchmarks.md "PostgreSQL"), against a real server on loopback (the one
//! `scripts/postgres.sh run` started, else a throwaway one).
//!
//! - import of the generated tree with the release binary, into PostgreSQL and into files;
//! - cold open of a replica from the derived record in the database: spawn `langonrock mcp
//!   <postgres dsn>`, `initialize`, first search answered (and the same on files);
//! - commit latency: single-document writes through one in-process connection, p50/p99,
//!   PostgreSQL and files;
//! - write-to-search visibility between two replica processes, with notifications and with
//!   polling alone (`LANGONROCK_POSTGRES_LISTEN=0`), p50/p99;
//! - search throughput through 1 and 3 replica processes, one client each.

use crate::binary::{find_binary, Mcp};
use crate::corpus::{Corpus, PER_BUNDLE, SEED};
use crate::measure::{loadavg, ms};
use langonrock::{Options, Root};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const TENANT: &str = "bench";

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Concepts in the tree (a multiple of 500).
    pub concepts: usize,
    /// Commits timed per store.
    pub commits: usize,
    /// Cold opens per store.
    pub opens: usize,
    /// Visibility samples per mode.
    pub samples: usize,
    /// Seconds of searching per replica count.
    pub search_secs: f64,
    /// Which parts to run: `cold`, `commit`, `visibility`, `throughput` (the import always
    /// runs).
    pub parts: Vec<String>,
}

impl Plan {
    fn wants(&self, part: &str) -> bool {
        self.parts.iter().any(|p| p == part || p == "all")
    }
}

/// The `p`-th percentile (0–100) of `v`, nearest rank.
fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let i = ((p / 100.0) * s.len() as f64).ceil() as usize;
    s[i.clamp(1, s.len()) - 1]
}

fn line(what: &str, v: &[f64]) -> String {
    format!(
        "{what}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (n = {})",
        pct(v, 50.0),
        pct(v, 99.0),
        pct(v, 100.0),
        v.len()
    )
}

fn run_ok(cmd: &mut Command) -> Result<(f64, String), String> {
    let t = Instant::now();
    let out = cmd.output().map_err(|e| format!("cannot run: {e}"))?;
    let wall = ms(t.elapsed());
    if !out.status.success() {
        return Err(format!("failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok((wall, String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// One cold start of `langonrock mcp <dsn>`: spawn to the first search's answer, ms.
fn cold(bin: &Path, dsn: &str, query: &str) -> Result<f64, String> {
    let mut mcp = Mcp::spawn_dsn(bin, dsn, &[], &[])?;
    mcp.initialize()?;
    let (text, err) = mcp.call("search", &json!({"query": query}))?;
    let t = ms(mcp.spawned.elapsed());
    if err {
        return Err(format!("the first search failed: {text}"));
    }
    mcp.finish()?;
    Ok(t)
}

fn note(n: usize, word: &str) -> String {
    format!("---\ntype: note\ndescription: Probe {n}.\n---\n# Probe {n}\n\nThe word {word}.\n")
}

/// Runs the plan and prints one line per figure.
pub fn run(plan: &Plan) -> Result<(), String> {
    let bin = find_binary()?;
    let server = langonrock_postgres::test_server::server();
    let schema = format!("bench_{}", std::process::id());
    let pg_base = server.dsn_with(&format!("schema={schema}"));
    let pg = format!("{pg_base}&tenant={TENANT}");
    let tmp = std::env::temp_dir().join(format!("langonrock-pgbench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let tree = tmp.join("tree");
    let files = tmp.join("data");
    println!(
        "postgres bench: {} concepts, load {:.2} at start",
        plan.concepts,
        loadavg().unwrap_or(f64::NAN)
    );
    let corpus = Corpus::generate(plan.concepts / PER_BUNDLE, PER_BUNDLE, SEED)
        .map_err(|e| e.to_string())?;
    corpus.write_to(&tree).map_err(|e| e.to_string())?;
    drop(corpus);
    let tree_s = tree.display().to_string();
    let files_s = files.display().to_string();

    // Import.
    let (wall, status) = run_ok(
        Command::new(&bin)
            .args(["import", &tree_s, "--data", &pg_base, "--tenant", TENANT])
            .env("LANGONROCK_TODAY", crate::billing::EVAL_DATE),
    )?;
    println!("import into PostgreSQL: {wall:.0} ms ({})", status.trim());
    let (wall, _) = run_ok(
        Command::new(&bin)
            .args(["import", &tree_s, "--data", &files_s, "--tenant", TENANT])
            .env("LANGONROCK_TODAY", crate::billing::EVAL_DATE),
    )?;
    println!("import into files: {wall:.0} ms");

    // Cold open from the derived record, and the first search.
    let files_dsn = format!("okf://{files_s}?tenant={TENANT}");
    let cold_stores = if plan.wants("cold") { 2 } else { 0 };
    for (name, dsn) in [("PostgreSQL", pg.as_str()), ("files", files_dsn.as_str())]
        .into_iter()
        .take(cold_stores)
    {
        let _ = cold(&bin, dsn, "revenue")?; // warms the OS caches and the server
        let v: Vec<f64> = (0..plan.opens)
            .map(|_| cold(&bin, dsn, "revenue"))
            .collect::<Result<_, _>>()?;
        println!("{}", line(&format!("cold open + first search, {name}"), &v));
    }

    // Commit latency through one connection.
    for (name, root) in [
        (
            "PostgreSQL",
            Root::from_data(&pg_base).map_err(|e| e.message())?,
        ),
        ("files", Root::Files(files.clone())),
    ] {
        let conn = Options::default()
            .open_root(&root, TENANT)
            .map_err(|e| e.message())?;
        let mut v = Vec::with_capacity(plan.commits);
        for n in 0..plan.commits {
            let replaces = conn.current_hash("probe", "latency.md");
            let t = Instant::now();
            conn.write(
                "probe",
                "latency.md",
                &note(n, "latency"),
                replaces.as_deref(),
            )
            .map_err(|e| e.message())?;
            v.push(ms(t.elapsed()));
        }
        println!("{}", line(&format!("commit (one document), {name}"), &v));
        conn.finish_derived();
    }

    // Visibility between two replicas.
    let modes = if plan.wants("visibility") { 2 } else { 0 };
    for (mode, env) in [
        ("with notifications", &[][..]),
        ("polling only", &[("LANGONROCK_POSTGRES_LISTEN", "0")][..]),
    ]
    .into_iter()
    .take(modes)
    {
        let mut a = Mcp::spawn_dsn(&bin, &pg, &[], env)?;
        a.initialize()?;
        let mut b = Mcp::spawn_dsn(&bin, &pg, &[], env)?;
        b.initialize()?;
        let mut v = Vec::with_capacity(plan.samples);
        for n in 0..plan.samples {
            let word = format!("zq{}x{n}", mode.len());
            let path = format!("seen{}-{n}.md", mode.len());
            // b has served a read since a's previous commit.
            b.call("search", &json!({"query": "revenue"}))?;
            let (t, err) = a.call(
                "write",
                &json!({"bundle": "probe", "path": path, "content": note(n, &word)}),
            )?;
            if err {
                return Err(format!("write failed: {t}"));
            }
            let acked = Instant::now();
            loop {
                let (t, _) = b.call("search", &json!({"query": word}))?;
                // A row names the document's id (the query line names only the word).
                let id = path.trim_end_matches(".md");
                if t.lines().any(|l| l.starts_with(&format!("{id}\t"))) {
                    break;
                }
                if acked.elapsed() > Duration::from_secs(5) {
                    return Err(format!("{mode}: a commit not visible after 5 s"));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            v.push(ms(acked.elapsed()));
            // Spread the writes over the polling period.
            std::thread::sleep(Duration::from_millis(37));
        }
        println!(
            "{}",
            line(
                &format!("write through one replica, seen by a search through another, {mode}"),
                &v
            )
        );
        a.finish()?;
        b.finish()?;
    }

    // Search throughput through 1 and 3 replicas, one client thread each.
    let queries = [
        "revenue",
        "orders",
        "customer churn",
        "margin",
        "sessions",
        "events",
        "daily",
        "refund",
    ];
    let counts: &[usize] = if plan.wants("throughput") {
        &[1, 3]
    } else {
        &[]
    };
    for &replicas in counts {
        let mut procs = Vec::new();
        for _ in 0..replicas {
            let mut m = Mcp::spawn_dsn(&bin, &pg, &[], &[])?;
            m.initialize()?;
            m.call("search", &json!({"query": "warm"}))?;
            procs.push(m);
        }
        let secs = plan.search_secs;
        let started = Instant::now();
        let handles: Vec<_> = procs
            .into_iter()
            .map(|mut m| {
                std::thread::spawn(move || -> Result<(usize, Mcp), String> {
                    let mut n = 0;
                    let t = Instant::now();
                    while t.elapsed().as_secs_f64() < secs {
                        m.call("search", &json!({"query": queries[n % queries.len()]}))?;
                        n += 1;
                    }
                    Ok((n, m))
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            let (n, m) = h.join().map_err(|_| "a client panicked")??;
            total += n;
            m.finish()?;
        }
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "search throughput through {replicas} replica(s): {:.0} searches/s ({total} in {elapsed:.1} s), load {:.2}",
            total as f64 / elapsed,
            loadavg().unwrap_or(f64::NAN)
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let mut admin = server.admin();
    let _ = admin.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"));
    Ok(())
}
