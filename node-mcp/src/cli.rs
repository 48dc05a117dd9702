//! The command line (cli.md): argument parsing with exact error texts, and the commands.

use crate::args::{self, ArgError, Command, USAGE};
use crate::folder::read_folder_then;
use langonrock_core::compile::{
    link_leaving, parse_source, Ambiguity, NO_FRONTMATTER, SUMMARY_WIDTH,
};
use langonrock_core::folder::Layout;
use langonrock_core::text::utf16_len;
use langonrock_core::{manifest, Error};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;

/// A command-line failure: the message printed after `error: `.
#[derive(Debug)]
pub struct CliError(pub String);

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError(e.message())
    }
}

impl From<ArgError> for CliError {
    fn from(e: ArgError) -> Self {
        CliError(e.0)
    }
}

/// The streams of one run.
pub struct Io<'a> {
    /// stdin: the content of `write` and the request of `transact`.
    pub input: &'a mut dyn Read,
    /// stdout: data only.
    pub out: &'a mut dyn Write,
    /// stderr: everything else.
    pub err: &'a mut dyn Write,
    /// Whether stderr is a terminal: progress lines are drawn only then.
    pub tty: bool,
}

/// Runs the CLI on `args` (without the program name); returns the exit code.
pub fn run(
    args: Vec<OsString>,
    input: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    run_io(
        args,
        &mut Io {
            input,
            out,
            err,
            tty: false,
        },
    )
}

/// [`run`] on the given streams; `io.tty` turns progress lines on.
pub fn run_io(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    if args.is_empty() {
        let _ = io.err.write_all(USAGE.as_bytes());
        return 1;
    }
    match dispatch(args, io) {
        Ok(code) => code,
        Err(CliError(m)) => {
            let _ = writeln!(io.err, "error: {m}");
            1
        }
    }
}

fn dispatch(args: Vec<OsString>, io: &mut Io<'_>) -> Result<i32, CliError> {
    match args::parse(args, &args::process_env)? {
        Command::Help => {
            io.out.write_all(USAGE.as_bytes()).map_err(write_err)?;
            Ok(0)
        }
        Command::Version => {
            writeln!(io.out, "langonrock {}", env!("CARGO_PKG_VERSION")).map_err(write_err)?;
            Ok(0)
        }
        Command::Compile {
            dir,
            bundle,
            tenant,
            summary_width,
            strict,
        } => compile(
            &dir,
            bundle.as_deref(),
            tenant.as_deref(),
            summary_width.unwrap_or(SUMMARY_WIDTH),
            strict,
            io,
        ),
        Command::Token {
            data,
            tenant,
            write,
        } => Ok(crate::serve::token(&data, &tenant, write, io.out, io.err)),
        other => crate::commands::run(other, io),
    }
}

pub(crate) fn write_err(e: std::io::Error) -> CliError {
    CliError(format!("cannot write output: {e}"))
}

/// `<n> <noun>`, with the singular noun when `n` is 1 (`1 concept`, `2 concepts`).
pub fn count(n: usize, singular: &str, plural: &str) -> String {
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {plural}")
    }
}

/// Writes the stats line of docs/cli.md: `<n> concepts, <bytes> bytes, ~<tokens> tokens`.
pub fn stats(io: &mut Io<'_>, n: usize, stdout_text: &str) -> Result<(), CliError> {
    writeln!(
        io.err,
        "{}, {}, ~{}",
        count(n, "concept", "concepts"),
        count(stdout_text.len(), "byte", "bytes"),
        count(utf16_len(stdout_text).div_ceil(4), "token", "tokens")
    )
    .map_err(write_err)
}

/// Prints diagnostics on stderr (docs/cli.md, "Diagnostics"): one `<level>: <bundle>/<path>:
/// <message>` line each, except the informational note of documents without frontmatter,
/// which is one line for all of them when more than [`NOTES_SHOWN`] have it.
pub fn print_diagnostics<'d>(
    io: &mut Io<'_>,
    diagnostics: impl Iterator<Item = (&'d str, &'d str, &'d str, &'d str)>,
) -> Result<(), CliError> {
    let mut plain: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for (level, bundle, path, message) in diagnostics {
        if message == NO_FRONTMATTER {
            plain.push(format!("{bundle}/{path}"));
        }
        lines.push(format!("{level}: {bundle}/{path}: {message}"));
    }
    if plain.len() > NOTES_SHOWN {
        lines.retain(|l| !l.ends_with(NO_FRONTMATTER));
        let mut names = plain[..3].join(", ");
        names.push_str(&format!(" and {} more", plain.len() - 3));
        lines.insert(
            0,
            format!(
                "info: {} have no frontmatter: plain Markdown concepts ({names})",
                count(plain.len(), "document", "documents")
            ),
        );
    }
    for l in lines {
        writeln!(io.err, "{l}").map_err(write_err)?;
    }
    Ok(())
}

/// The error of `--strict` when there were diagnostics (docs/cli.md).
pub fn strict_failure(n: usize, import: bool) -> String {
    format!(
        "--strict: {}{}",
        count(n, "diagnostic", "diagnostics"),
        if import { "; nothing was imported" } else { "" }
    )
}

/// Up to this many documents without frontmatter get one line each.
pub const NOTES_SHOWN: usize = 5;

fn compile(
    dir: &Path,
    bundle: Option<&str>,
    tenant: Option<&str>,
    width: usize,
    strict: bool,
    io: &mut Io<'_>,
) -> Result<i32, CliError> {
    let tenant = tenant.unwrap_or("-");
    // Each document is parsed on the thread that read it (docs/compile.md §12).
    let read = read_folder_then(dir, bundle, |path, text| parse_source(path, text, width))?;
    writeln!(io.err, "{}", read.line).map_err(write_err)?;
    let (model, rest) = link_leaving(read.docs, Ambiguity::Refuse)?;
    // What the tenant pass leaves (documents, local ids: tens of thousands of frees) is left
    // to the exit, as the model is below.
    std::mem::forget(rest);
    let today = langonrock::clock::today();
    // A folder that is one bundle prints the single-bundle form, as with --bundle.
    let text = match &read.layout {
        Layout::OneBundle { bundle, .. } => manifest::compile_manifest(&model, bundle, &today),
        Layout::Bundles => manifest::manifest(&model, tenant, None, &today)?,
    };
    io.out.write_all(text.as_bytes()).map_err(write_err)?;
    let diagnostics = model.diagnostics();
    print_diagnostics(
        io,
        diagnostics.iter().map(|d| {
            (
                d.level(),
                d.bundle.as_str(),
                d.path.as_str(),
                d.message.as_str(),
            )
        }),
    )?;
    stats(io, model.concepts().len(), &text)?;
    // The process exits next: freeing tens of thousands of compiled concepts one by one
    // (many of them allocated on the reading threads) would only delay it.
    std::mem::forget(model);
    if strict && !diagnostics.is_empty() {
        return Err(CliError(strict_failure(diagnostics.len(), false)));
    }
    Ok(0)
}

/// The entry of `langonrock mcp …`: it owns the process's stdin and stdout (JSON-RPC only),
/// so it runs without the locks the other commands take.
pub fn mcp_main(args: Vec<OsString>) -> i32 {
    let mut err = std::io::stderr();
    match args::parse(args, &args::process_env) {
        Ok(Command::Mcp {
            dsn,
            target,
            database_tools,
            read_only,
        }) => crate::mcp::run_mcp(
            &dsn,
            target.as_ref(),
            crate::mcp::Mode {
                database_tools,
                read_only,
            },
            tokio::io::stdin(),
            tokio::io::stdout(),
            &mut err,
        ),
        Ok(_) => {
            let _ = writeln!(err, "error: internal error: not an mcp command");
            1
        }
        Err(ArgError(m)) => {
            let _ = writeln!(err, "error: {m}");
            1
        }
    }
}

/// The entry of `langonrock serve …`: it logs every request to stderr from many threads,
/// so it runs without the stream locks the other commands take.
pub fn serve_main(args: Vec<OsString>) -> i32 {
    let mut err = std::io::stderr();
    match args::parse(args, &args::process_env) {
        Ok(Command::Serve(o)) => crate::serve::run(o, &mut err),
        Ok(_) => {
            let _ = writeln!(err, "error: internal error: not a serve command");
            1
        }
        Err(ArgError(m)) => {
            let _ = writeln!(err, "error: {m}");
            1
        }
    }
}
