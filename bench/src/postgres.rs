//! `langonrock-bench postgres`: the PostgreSQL store at one size (docs/postgres.md,
//! docs/benchmarks.md "PostgreSQL"), against a real server on loopback (the one
//! `scripts/postgres.sh run` started, else a throwaway one).
//!
//! - import of the generated tree with the release binary, into PostgreSQL and into files;
//! - cold open of a replica from the derived record in the database: spawn `langonrock mcp
//!   <postgres dsn>`, `initialize`, first search answered (and the same on files), and spawn
//!   `langonrock serve --store <dsn>`, first search answered over its socket;
//! - commit latency: single-document writes through one in-process connection, p50/p99,
//!   PostgreSQL and files;
//! - write-to-search visibility between two `serve --store` replicas, with notifications
//!   and with polling alone (`LANGONROCK_POSTGRES_LISTEN=0`), p50/p99;
//! - search throughput through 1 and 3 `serve --store` replicas, `--clients` keep-alive
//!   HTTP clients each (default 1).

use crate::binary::{find_binary, Mcp};
use crate::corpus::{Corpus, PER_BUNDLE, SEED};
use crate::measure::{loadavg, ms};
use langonrock::{Options, Root};
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::{Child, Stdio};
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
    /// HTTP clients per replica in the throughput part.
    pub clients: usize,
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

/// A `langonrock serve --store <dsn>` replica on a unix socket in its own directory.
struct Replica {
    child: Child,
    sock: PathBuf,
    spawned: Instant,
}

impl Replica {
    /// Spawns a replica and waits for its banner.
    fn spawn(bin: &Path, dsn: &str, dir: &Path, env: &[(&str, &str)]) -> Result<Replica, String> {
        let _ = std::fs::remove_dir_all(dir);
        let spawned = Instant::now();
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--store", dsn, "--data"])
            .arg(dir)
            .env("LANGONROCK_TODAY", crate::billing::EVAL_DATE)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot spawn serve: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let mut lines = BufReader::new(stderr);
        let mut banner = String::new();
        lines
            .read_line(&mut banner)
            .map_err(|e| format!("serve: {e}"))?;
        if !banner.starts_with("langonrock serving ") {
            let _ = child.kill();
            return Err(format!("serve did not start: {banner}"));
        }
        // The request log: drained so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = lines.read_to_end(&mut sink);
        });
        Ok(Replica {
            child,
            sock: dir.join("langonrock.sock"),
            spawned,
        })
    }

    fn client(&self) -> Result<Http, String> {
        Http::connect(&self.sock)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        // SIGTERM: pending derived records are put before the exit.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTP/1.1 connection to a replica's socket.
struct Http {
    r: BufReader<UnixStream>,
}

impl Http {
    fn connect(sock: &Path) -> Result<Http, String> {
        let s = UnixStream::connect(sock).map_err(|e| format!("{}: {e}", sock.display()))?;
        Ok(Http {
            r: BufReader::new(s),
        })
    }

    /// One request; the status and the body.
    fn call(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(u16, String), String> {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: langonrock\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let io = |e: std::io::Error| format!("http: {e}");
        let s = self.r.get_mut();
        s.write_all(head.as_bytes()).map_err(io)?;
        s.write_all(body).map_err(io)?;
        let mut line = String::new();
        self.r.read_line(&mut line).map_err(io)?;
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("http: bad status line {line:?}"))?;
        let mut length = 0usize;
        loop {
            line.clear();
            self.r.read_line(&mut line).map_err(io)?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().map_err(|_| "http: bad content-length")?;
                }
            }
        }
        let mut buf = vec![0; length];
        self.r.read_exact(&mut buf).map_err(io)?;
        Ok((status, String::from_utf8_lossy(&buf).into_owned()))
    }

    fn search(&mut self, q: &str) -> Result<String, String> {
        let body = json!({ "q": q }).to_string();
        let (status, text) = self.call(
            "POST",
            &format!("/v1/{TENANT}/search"),
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )?;
        if status != 200 {
            return Err(format!("search: {status} {text}"));
        }
        Ok(text)
    }
}

/// One cold start of a `serve --store` replica: spawn to the first search's answer, ms.
fn cold_serve(bin: &Path, dsn: &str, dir: &Path, query: &str) -> Result<f64, String> {
    let r = Replica::spawn(bin, dsn, dir, &[])?;
    r.client()?.search(query)?;
    Ok(ms(r.spawned.elapsed()))
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
    if plan.wants("cold") {
        let dir = tmp.join("cold");
        let _ = cold_serve(&bin, &pg_base, &dir, "revenue")?;
        let v: Vec<f64> = (0..plan.opens)
            .map(|_| cold_serve(&bin, &pg_base, &dir, "revenue"))
            .collect::<Result<_, _>>()?;
        println!(
            "{}",
            line("cold open + first search, serve --store (PostgreSQL)", &v)
        );
    }

    // Commit latency through one connection.
    for (name, root) in [
        (
            "PostgreSQL",
            Root::from_data(&pg_base).map_err(|e| e.message())?,
        ),
        ("files", Root::Files(files.clone())),
    ]
    .into_iter()
    .take(if plan.wants("commit") { 2 } else { 0 })
    {
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
        let ra = Replica::spawn(&bin, &pg_base, &tmp.join("vis-a"), env)?;
        let rb = Replica::spawn(&bin, &pg_base, &tmp.join("vis-b"), env)?;
        let (mut a, mut b) = (ra.client()?, rb.client()?);
        b.search("revenue")?;
        std::thread::sleep(Duration::from_millis(300)); // b's listener connects
        let mut v = Vec::with_capacity(plan.samples);
        for n in 0..plan.samples {
            let word = format!("zq{}x{n}", mode.len());
            let id = format!("seen{}-{n}", mode.len());
            // b has served a read since a's previous commit.
            b.search("revenue")?;
            let (status, t) = a.call(
                "PUT",
                &format!("/v1/{TENANT}/source/probe/{id}.md"),
                &[("If-None-Match", "*"), ("Content-Type", "text/markdown")],
                note(n, &word).as_bytes(),
            )?;
            if status != 200 {
                return Err(format!("write failed: {status} {t}"));
            }
            let acked = Instant::now();
            loop {
                let t = b.search(&word)?;
                // A row names the document's id (the query line names only the word).
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
        // Where the slow samples fall (the first one follows the replica's cold open).
        let slow: Vec<String> = v
            .iter()
            .enumerate()
            .filter(|(_, d)| **d > 50.0)
            .map(|(i, d)| format!("#{i} {d:.0} ms"))
            .collect();
        println!(
            "{}; over 50 ms: {}",
            line(
                &format!(
                    "write through one serve replica, seen by a search through another, {mode}"
                ),
                &v
            ),
            if slow.is_empty() {
                "none".to_string()
            } else {
                slow.join(", ")
            }
        );
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
        for i in 0..replicas {
            let r = Replica::spawn(&bin, &pg_base, &tmp.join(format!("r{i}")), &[])?;
            r.client()?.search("warm")?;
            procs.push(r);
        }
        let secs = plan.search_secs;
        let started = Instant::now();
        let mut handles = Vec::new();
        for r in &procs {
            for c in 0..plan.clients {
                let mut http = r.client()?;
                handles.push(std::thread::spawn(move || -> Result<usize, String> {
                    let mut n = c;
                    let t = Instant::now();
                    while t.elapsed().as_secs_f64() < secs {
                        http.search(queries[n % queries.len()])?;
                        n += 1;
                    }
                    Ok(n - c)
                }));
            }
        }
        let mut total = 0;
        for h in handles {
            total += h.join().map_err(|_| "a client panicked")??;
        }
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "search throughput through {replicas} serve replica(s), {} keep-alive client(s) each: {:.0} searches/s ({total} in {elapsed:.1} s), load {:.2}",
            plan.clients,
            total as f64 / elapsed,
            loadavg().unwrap_or(f64::NAN)
        );
        drop(procs);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let mut admin = server.admin();
    let _ = admin.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"));
    Ok(())
}
