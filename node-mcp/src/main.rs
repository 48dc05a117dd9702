//! The `langonrock` binary: the CLI of cli.md.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    huge_pages();
    if args.first().is_some_and(|a| a == "mcp") {
        std::process::exit(langonrock_node_mcp::cli::mcp_main(args));
    }
    if args.first().is_some_and(|a| a == "serve") {
        std::process::exit(langonrock_node_mcp::cli::serve_main(args));
    }
    use std::io::IsTerminal;
    // stderr stays unlocked: the progress line draws on it from indicatif's ticker thread.
    let mut err = std::io::stderr();
    let tty = err.is_terminal();
    let code = langonrock_node_mcp::cli::run_io(
        args,
        &mut langonrock_node_mcp::cli::Io {
            input: &mut std::io::stdin().lock(),
            out: &mut std::io::stdout().lock(),
            err: &mut err,
            tty,
        },
    );
    std::process::exit(code);
}

/// Opening a large tenant allocates a few hundred megabytes at once (the derived record and
/// the compiled model), and on Linux most of that time goes to the kernel faulting in 4 KiB
/// pages one by one. glibc's `malloc` asks for transparent huge pages when its
/// `glibc.malloc.hugetlb` tunable is 1, which the C library reads only at start: so the
/// process runs itself again once with it set (`exec`, same pid, arguments and streams).
/// `LANGONROCK_HUGE_PAGES=0` keeps the process as it is; so does any failure.
///
/// The same re-exec sets `glibc.malloc.top_pad`: each time an arena's top runs out, glibc
/// then takes that much more at once instead of what the request needs. Without it the
/// threads' arenas grew a few pages at a time, one `mprotect` each: a one-line `write` at
/// 20,000 concepts made 7,376 `mprotect` calls and 12,400 page faults (603 and 2,100 with
/// 16 MiB), and took 168 ms of CPU against 113 (`perf stat`). The pad also decides how much
/// of a thread's arena gets huge pages: glibc maps a thread's arena with the pad at once
/// (one `madvise`, huge pages), but grows it beyond that a page at a time (one `mprotect`
/// and one 4 KiB fault each). `mcp` takes 32 MiB, more than any of the threads that decode
/// a derived record allocates at 20,000 concepts (about 20 MiB each): its cold first search
/// then takes 10,000 -> 600 page faults and 106 -> 79 ms of CPU, for 84 -> 91 MiB of peak
/// RSS (8 MiB, session 6's choice, left the rest of those threads' memory in 4 KiB pages;
/// without the re-exec: 19,000 faults and 129 ms; docs/benchmarks.md, session 8). `compile`
/// and `import` take 64 MiB: their parsing threads allocate most of the peak (about 100
/// MiB at 20,000 concepts: the texts and their parses), and with 16 MiB most of it came in
/// 4 KiB pages: at 20,000 concepts `compile`'s page faults went 13,400 -> 700 and its CPU
/// 413 -> 367 ms (peak RSS 101 -> 105 MiB), `import`'s faults 19,700 -> 2,000 for 18 MiB more
/// peak RSS, its CPU within the noise (docs/benchmarks.md, session 9). `serve` keeps the
/// default (its many arenas live long).
///
/// glibc 2.36 (Debian 12) decides whether the system offers huge pages by comparing what
/// it read from `/sys/kernel/mm/transparent_hugepage/enabled` with the expected text
/// without ending the buffer first, so the answer depends on a stack byte left over from
/// earlier start-up code: in about half the runs it takes no huge pages at all although
/// the tunable is set, and such a run costs what a run without the re-exec costs
/// (docs/benchmarks.md, session 8). So the run that has the tunable checks its own heap
/// (`/proc/self/smaps`: glibc advises huge pages for the heap's first growth, flag `hg`)
/// and, when glibc took none, runs itself once more, up to [`HUGE_PAGE_TRIES`] runs in
/// all; `LANGONROCK_HUGE_PAGES_TRY` counts them.
///
/// The allocator keeps its default of an arena per thread. One arena for all threads
/// (`glibc.malloc.arena_max=1`, so that the threads decoding a derived record's chunks get
/// huge pages too) was measured and dropped: on an idle machine at 20,000 concepts it made
/// the whole-process `compile` 454 -> 595 ms, `import` 1.28 -> 1.54 s, the cold first search
/// 128 -> 155 ms and a one-line `write` no faster (docs/benchmarks.md).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn huge_pages() {
    use std::os::unix::process::CommandExt;
    const HUGE: &str = "glibc.malloc.hugetlb=1";
    const TRY: &str = "LANGONROCK_HUGE_PAGES_TRY";
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if std::env::var_os("LANGONROCK_HUGE_PAGES").is_some_and(|v| v == "0") {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if tunables
        .split(':')
        .any(|t| t.starts_with("glibc.malloc.hugetlb="))
    {
        // Set by an earlier run of this process (the count says so; a tunable the user set
        // is left as it is): once more while glibc took no huge pages.
        let tries = std::env::var(TRY).ok().and_then(|n| n.parse::<u32>().ok());
        if let Some(n) = tries.filter(|&n| n < HUGE_PAGE_TRIES) {
            if heap_has_huge_pages() == Some(false) {
                let _ = std::process::Command::new(exe)
                    .args(std::env::args_os().skip(1))
                    .env(TRY, (n + 1).to_string())
                    .exec();
            }
        }
        return;
    }
    let command = std::env::args_os().nth(1);
    let pad = if command.as_deref().is_some_and(|c| c == "serve")
        || tunables
            .split(':')
            .any(|t| t.starts_with("glibc.malloc.top_pad="))
    {
        ""
    } else if command.as_deref().is_some_and(|c| c == "mcp") {
        ":glibc.malloc.top_pad=33554432"
    } else if command
        .as_deref()
        .is_some_and(|c| c == "compile" || c == "import")
    {
        ":glibc.malloc.top_pad=67108864"
    } else {
        ":glibc.malloc.top_pad=16777216"
    };
    let value = if tunables.is_empty() {
        format!("{HUGE}{pad}")
    } else {
        format!("{tunables}:{HUGE}{pad}")
    };
    // `exec` returns only when it failed; then the process goes on as it is.
    let _ = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("GLIBC_TUNABLES", value)
        .env(TRY, "1")
        .exec();
}

/// How many runs [`huge_pages`] makes at most to get glibc's huge pages (the first one
/// included): each misses about half the time, so 6 leave about 1 run in 64 without.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HUGE_PAGE_TRIES: u32 = 6;

/// Whether glibc advised huge pages for the heap (the `hg` flag of `[heap]` in
/// `/proc/self/smaps`); `None` when there is no heap to look at or the file cannot be read.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_has_huge_pages() -> Option<bool> {
    // The heap grows on the first allocation; make sure there was one.
    std::hint::black_box(Box::new([0u8; 64]));
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut lines = smaps.lines().skip_while(|l| !l.ends_with("[heap]"));
    lines.next()?;
    let flags = lines.find_map(|l| l.strip_prefix("VmFlags:"))?;
    Some(flags.split_whitespace().any(|f| f == "hg"))
}
