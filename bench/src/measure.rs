//! Timing and memory helpers: wall clock, on-CPU time from Linux schedstat, peak RSS, the
//! load average, and the median / p95 summaries of the published tables.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Milliseconds of a duration.
pub fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// This thread's (on-CPU, waiting-for-CPU) time in ns. On-CPU time is
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, exact to the nanosecond; the wait is the
/// second field of `/proc/thread-self/schedstat` (whose first field only advances at
/// scheduler events, too coarse for short operations).
pub fn sched_ns() -> Option<(u64, u64)> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let cpu = u64::try_from(t.tv_sec).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec).ok()?;
    let wait = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| parse_schedstat(&s))
        .map_or(0, |(_, w)| w);
    Some((cpu, wait))
}

/// `(on-CPU ns, waiting ns)` from a schedstat line.
pub fn parse_schedstat(s: &str) -> Option<(u64, u64)> {
    let mut it = s.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((it.next()??, it.next()??))
}

/// The summed on-CPU time in ns of every thread of process `pid`
/// (`/proc/<pid>/task/*/schedstat`).
pub fn process_cpu_ns(pid: u32) -> Option<u64> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0;
    for entry in dir.flatten() {
        let s = std::fs::read_to_string(entry.path().join("schedstat")).ok()?;
        total += parse_schedstat(&s)?.0;
    }
    Some(total)
}

/// A `/proc/<pid>/status` field in KiB (`VmHWM`, `VmRSS`); `pid` `None` is this process.
pub fn status_kb(pid: Option<u32>, field: &str) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak resident set (`VmHWM`) of this process, in KiB.
pub fn peak_rss_kb() -> Option<u64> {
    status_kb(None, "VmHWM")
}

/// The 1-minute load average.
pub fn loadavg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The CPU time (user + system) of this process's waited-for children, in ms
/// (`/proc/self/stat` fields 16 and 17, in clock ticks of 10 ms).
pub fn children_cpu_ms() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); cutime is field 16, cstime field 17.
    let cutime: f64 = f.get(13)?.parse().ok()?;
    let cstime: f64 = f.get(14)?.parse().ok()?;
    Some((cutime + cstime) * 10.0)
}

/// The samples of one measured operation.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Wall-clock time of each timed run, in ms, in run order.
    pub wall: Vec<f64>,
    /// On-CPU time of each timed run, in ms, when measured per run (slow operations).
    pub cpu: Vec<f64>,
    /// On-CPU time of all timed runs together, in ms.
    pub cpu_total: f64,
    /// Time spent waiting for a CPU during all timed runs, in ms.
    pub wait_total: f64,
}

/// The element at `floor(n/2)` of the sorted samples, as the reference takes its median.
pub fn median_of(samples: &[f64]) -> Option<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// The nearest-rank 95th percentile: the element at `ceil(0.95 n) − 1` of the sorted samples.
pub fn p95_of(samples: &[f64]) -> Option<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return None;
    }
    Some(v[(n * 95).div_ceil(100).max(1) - 1])
}

impl Stats {
    /// The number of timed runs.
    pub fn n(&self) -> usize {
        self.wall.len()
    }

    /// The wall-clock median.
    pub fn median(&self) -> f64 {
        median_of(&self.wall).unwrap_or(f64::NAN)
    }

    /// The wall-clock p95.
    pub fn p95(&self) -> f64 {
        p95_of(&self.wall).unwrap_or(f64::NAN)
    }

    /// The on-CPU median per run, or the mean when CPU time was taken over the whole batch.
    pub fn cpu_median(&self) -> f64 {
        median_of(&self.cpu).unwrap_or_else(|| self.cpu_total / self.n().max(1) as f64)
    }

    /// The wait for a CPU per run, mean.
    pub fn wait_mean(&self) -> f64 {
        self.wait_total / self.n().max(1) as f64
    }
}

/// How to time an operation.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Untimed runs first.
    pub warmup: usize,
    /// Timed runs.
    pub runs: usize,
    /// Take on-CPU time around each run (for operations of a millisecond or more; reading
    /// schedstat costs some microseconds, which would swamp a faster operation).
    pub per_run_cpu: bool,
}

impl Plan {
    /// `runs` timed runs with on-CPU time per run, no warm-up (slow operations).
    pub fn slow(runs: usize) -> Plan {
        Plan {
            warmup: 0,
            runs,
            per_run_cpu: true,
        }
    }

    /// 10 warm-up and 100 timed runs, CPU time over the batch (agent-session.md §9.2).
    pub fn warm() -> Plan {
        Plan {
            warmup: 10,
            runs: 100,
            per_run_cpu: false,
        }
    }
}

/// Runs `f(i)` for warm-up then timed runs (`i` counts every call from 0). The first error
/// stops it.
pub fn run<E>(plan: Plan, mut f: impl FnMut(usize) -> Result<(), E>) -> Result<Stats, E> {
    run_with(plan, |_| Ok(()), |i, ()| f(i))
}

/// Like [`run`], with an untimed `prep(i)` before each call whose result `f` takes.
pub fn run_with<P, E>(
    plan: Plan,
    mut prep: impl FnMut(usize) -> Result<P, E>,
    mut f: impl FnMut(usize, P) -> Result<(), E>,
) -> Result<Stats, E> {
    let mut i = 0;
    for _ in 0..plan.warmup {
        let p = prep(i)?;
        f(i, p)?;
        i += 1;
    }
    let mut st = Stats::default();
    let (mut cpu, mut wait) = (0u64, 0u64);
    // Without per-run CPU time, schedstat is read around the whole batch only (its reads
    // would swamp a microsecond operation); the batch then includes the preps.
    let batch0 = if plan.per_run_cpu { None } else { sched_ns() };
    for _ in 0..plan.runs {
        let p = prep(i)?;
        let s0 = if plan.per_run_cpu { sched_ns() } else { None };
        let t = Instant::now();
        f(i, p)?;
        st.wall.push(ms(t.elapsed()));
        if let (Some((c0, w0)), Some((c1, w1))) = (s0, s0.and_then(|_| sched_ns())) {
            cpu += c1 - c0;
            wait += w1 - w0;
            st.cpu.push((c1 - c0) as f64 / 1e6);
        }
        i += 1;
    }
    if let (Some((c0, w0)), Some((c1, w1))) = (batch0, batch0.and_then(|_| sched_ns())) {
        cpu = c1 - c0;
        wait = w1 - w0;
    }
    st.cpu_total = cpu as f64 / 1e6;
    st.wait_total = wait as f64 / 1e6;
    Ok(st)
}

/// This process's on-CPU time in ns, every thread together
/// (`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`).
pub fn process_self_cpu_ns() -> Option<u64> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Some(u64::try_from(t.tv_sec).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec).ok()?)
}

/// `runs` timed runs of `f` (no warm-up) with the on-CPU time of the whole process per run,
/// for an operation that spreads over every core (the search index build, docs/search.md
/// §10): a thread's own time would miss the other cores' share. No wait time is taken.
pub fn run_all_threads<E>(
    runs: usize,
    mut f: impl FnMut(usize) -> Result<(), E>,
) -> Result<Stats, E> {
    let mut st = Stats::default();
    for i in 0..runs {
        let c0 = process_self_cpu_ns();
        let t = Instant::now();
        f(i)?;
        st.wall.push(ms(t.elapsed()));
        if let (Some(c0), Some(c1)) = (c0, process_self_cpu_ns()) {
            st.cpu.push((c1 - c0) as f64 / 1e6);
            st.cpu_total += (c1 - c0) as f64 / 1e6;
        }
    }
    Ok(st)
}

/// Times one call: `(result, wall ms, on-CPU ms)`.
pub fn once<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let s0 = sched_ns();
    let t = Instant::now();
    let out = f();
    let wall = ms(t.elapsed());
    let cpu = match (s0, sched_ns()) {
        (Some((a, _)), Some((b, _))) => (b - a) as f64 / 1e6,
        _ => f64::NAN,
    };
    (out, wall, cpu)
}

/// [`once`] with the on-CPU time of the whole process, every thread together, for an
/// operation that spreads over every core (an import parses and hashes there).
pub fn once_all_threads<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let c0 = process_self_cpu_ns();
    let t = Instant::now();
    let out = f();
    let wall = ms(t.elapsed());
    let cpu = match (c0, process_self_cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e6,
        _ => f64::NAN,
    };
    (out, wall, cpu)
}

/// A duration in ms for a table: three significant figures or so.
pub fn fmt_ms(x: f64) -> String {
    if x.is_nan() {
        "n/a".to_string()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else if x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

/// KiB as MiB with one decimal.
pub fn fmt_mib(kb: Option<u64>) -> String {
    kb.map_or("n/a".to_string(), |k| format!("{:.1}", k as f64 / 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_is_the_upper_middle_and_p95_the_nearest_rank() {
        assert_eq!(median_of(&[3.0, 1.0, 2.0, 4.0]), Some(3.0));
        assert_eq!(median_of(&[5.0]), Some(5.0));
        assert_eq!(median_of(&[]), None);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(p95_of(&v), Some(95.0));
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(p95_of(&v), Some(10.0));
        assert_eq!(p95_of(&[2.0]), Some(2.0));
    }

    #[test]
    fn schedstat_and_status_parse() {
        assert_eq!(parse_schedstat("123 45 6\n"), Some((123, 45)));
        assert_eq!(parse_schedstat("x"), None);
        assert!(peak_rss_kb().is_some_and(|k| k > 0));
        assert!(sched_ns().is_some());
        assert!(children_cpu_ms().is_some());
    }

    #[test]
    fn run_counts_warmup_and_timed_calls() {
        let mut calls = Vec::new();
        let st = run(
            Plan {
                warmup: 2,
                runs: 3,
                per_run_cpu: true,
            },
            |i| {
                calls.push(i);
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(calls, vec![0, 1, 2, 3, 4]);
        assert_eq!(st.n(), 3);
        assert_eq!(st.cpu.len(), 3);
        assert_eq!(
            run(Plan::slow(1), |_| Err::<(), _>("no")).unwrap_err(),
            "no"
        );
    }
}
