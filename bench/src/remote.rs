//! `remote-calls <dsn>…`: the latency of library calls through each DSN given — an embedded
//! data root and a `langonrock serve` over its socket or TCP, say — one after another on one
//! thread, then the same `get` from four threads at once. It prints a table; nothing is
//! asserted (docs/remote.md). The tenant should hold the okf-samples bundles (ids `orders`,
//! `customers`), e.g. `langonrock import tests/data/okf-samples --tenant t`.

use langonrock::Connection;
use langonrock_core::read::GetOptions;
use langonrock_core::search::SearchOptions;
use std::time::{Duration, Instant};

/// Percentiles of one series of call times.
struct Series {
    n: usize,
    total: Duration,
    p50: Duration,
    p99: Duration,
}

fn series(mut times: Vec<Duration>) -> Series {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    Series {
        n: times.len(),
        total: times.iter().sum(),
        p50: at(0.5),
        p99: at(0.99),
    }
}

fn times(n: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Vec<Duration>, String> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    Ok(times)
}

fn timed(n: usize, f: impl FnMut() -> Result<(), String>) -> Result<Series, String> {
    times(n, f).map(series)
}

fn us(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1e6)
}

fn row(dsn: &str, call: &str, s: &Series) -> String {
    format!(
        "| {} | {call} | {} | {} | {} | {:.0} |",
        langonrock_core::dsn::redact_dsn(dsn),
        s.n,
        us(s.p50),
        us(s.p99),
        s.n as f64 / s.total.as_secs_f64()
    )
}

/// Runs the calls through each DSN; `calls` per series.
pub fn run(dsns: &[String], calls: usize) -> Result<String, String> {
    let mut out = String::from(
        "| dsn | call | calls | p50 µs | p99 µs | calls/s |\n|---|---|---|---|---|---|\n",
    );
    let e = |e: langonrock::Error| e.message();
    for dsn in dsns {
        let conn = langonrock::Options::default()
            .read_only(true)
            .open(dsn)
            .map_err(e)?;
        let get = GetOptions {
            limit: Some(2_000),
            ..GetOptions::default()
        };
        let search = SearchOptions {
            k: 8,
            bundle: None,
            expand: true,
        };
        let s = timed(calls, || conn.snapshot().map(|_| ()).map_err(e))?;
        out.push_str(&row(dsn, "snapshot", &s));
        out.push('\n');
        let s = timed(calls, || conn.manifest(None).map(|_| ()).map_err(e))?;
        out.push_str(&row(dsn, "manifest (remote: 304)", &s));
        out.push('\n');
        let s = timed(calls, || {
            conn.get(&["orders", "customers"], &get)
                .map(|_| ())
                .map_err(e)
        })?;
        out.push_str(&row(dsn, "get 2 ids", &s));
        out.push('\n');
        let s = timed(calls, || {
            conn.search("orders revenue by customer", &search)
                .map(|_| ())
                .map_err(e)
        })?;
        out.push_str(&row(dsn, "search", &s));
        out.push('\n');
        let args = serde_json::json!({"ids": ["orders"], "section": "nosuch"});
        let s = timed(calls, || {
            let _ = conn.call_tool("get", Some(&args));
            Ok(())
        })?;
        out.push_str(&row(dsn, "tool get, missing section", &s));
        out.push('\n');
        out.push_str(&row(
            dsn,
            "get 2 ids, 4 threads",
            &threaded(&conn, calls, &get)?,
        ));
        out.push('\n');
    }
    Ok(out)
}

/// The same `get` from four threads on one connection: each call's time.
fn threaded(conn: &Connection, calls: usize, get: &GetOptions) -> Result<Series, String> {
    let start = Instant::now();
    let times: Result<Vec<Vec<Duration>>, String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    times(calls / 4, || {
                        conn.get(&["orders", "customers"], get)
                            .map(|_| ())
                            .map_err(|e| e.message())
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a thread panicked".to_string())?)
            .collect()
    });
    let all: Vec<Duration> = times?.into_iter().flatten().collect();
    let n = all.len();
    let mut s = series(all);
    // Throughput over the wall time of the four threads together.
    s.total = start.elapsed();
    s.n = n;
    Ok(s)
}
