//! The `langonrock` binary: the CLI of cli.md.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    huge_pages(args.first().is_none_or(|a| a != "serve"));
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
/// With `one_arena` (every command but `serve`) the allocator also keeps one arena for all
/// threads (`glibc.malloc.arena_max=1`): the threads that decode a derived record's chunks
/// at open would otherwise each get an arena of their own, which glibc does not back with
/// huge pages (4 KiB faults again: 12,700 instead of 3,200 for a one-line `write` at 20,000
/// concepts, docs/benchmarks.md). `serve` keeps an arena per thread for its concurrent
/// requests.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn huge_pages(one_arena: bool) {
    use std::os::unix::process::CommandExt;
    const HUGE: &str = "glibc.malloc.hugetlb=1";
    const ONE_ARENA: &str = "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1";
    let tunable = if one_arena { ONE_ARENA } else { HUGE };
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
    let value = if tunables.is_empty() {
        tunable.to_string()
    } else {
        format!("{tunables}:{tunable}")
    };
    // `exec` returns only when it failed; then the process goes on as it is.
    let _ = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("GLIBC_TUNABLES", value)
        .exec();
}
