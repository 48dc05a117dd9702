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
/// without the re-exec: 19,000 faults and 129 ms; docs/benchmarks.md, session 8). `serve`
/// keeps the default (its many arenas live long). In about half the runs of some builds,
/// glibc takes no huge pages at all although the tunable is set (the same session; cause
/// not found): those runs cost what a run without the re-exec costs.
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
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if std::env::var_os("LANGONROCK_HUGE_PAGES").is_some_and(|v| v == "0")
        || tunables
            .split(':')
            .any(|t| t.starts_with("glibc.malloc.hugetlb="))
    {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let command = std::env::args_os().nth(1);
    let pad = if command.as_deref().is_some_and(|c| c == "serve")
        || tunables
            .split(':')
            .any(|t| t.starts_with("glibc.malloc.top_pad="))
    {
        ""
    } else if command.as_deref().is_some_and(|c| c == "mcp") {
        ":glibc.malloc.top_pad=33554432"
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
        .exec();
}
