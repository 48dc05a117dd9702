//! The `langonrock` binary: the CLI of cli.md.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "mcp") {
        std::process::exit(langonrock_node_mcp::cli::mcp_main(args));
    }
    let code = langonrock_node_mcp::cli::run(
        args,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(code);
}
