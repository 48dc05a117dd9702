//! The command line (cli.md): argument parsing with exact error texts, and the commands.

use crate::args::{self, ArgError, Command, USAGE};
use crate::folder::read_folder;
use langonrock_core::compile::{link, parse_document, Ambiguity, SUMMARY_WIDTH};
use langonrock_core::text::utf16_len;
use langonrock_core::{manifest, validate, Error};
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
}

/// Runs the CLI on `args` (without the program name); returns the exit code.
pub fn run(
    args: Vec<OsString>,
    input: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut io = Io { input, out, err };
    if args.is_empty() {
        let _ = io.err.write_all(USAGE.as_bytes());
        return 1;
    }
    match dispatch(args, &mut io) {
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
        other => crate::commands::run(other, io),
    }
}

pub(crate) fn write_err(e: std::io::Error) -> CliError {
    CliError(format!("cannot write output: {e}"))
}

/// Writes the stats line of cli.md §1.4.
pub fn stats(io: &mut Io<'_>, n: usize, stdout_text: &str) -> Result<(), CliError> {
    writeln!(
        io.err,
        "{n} concepts, {} bytes, ~{} tokens",
        stdout_text.len(),
        utf16_len(stdout_text).div_ceil(4)
    )
    .map_err(write_err)
}

fn compile(
    dir: &Path,
    bundle: Option<&str>,
    tenant: Option<&str>,
    width: usize,
    strict: bool,
    io: &mut Io<'_>,
) -> Result<i32, CliError> {
    let tenant = tenant.unwrap_or("-");
    let read = read_folder(dir, bundle)?;
    for w in &read.warnings {
        writeln!(io.err, "{w}").map_err(write_err)?;
    }
    let docs = read
        .docs
        .into_iter()
        .map(|r| {
            let parsed = (!validate::is_navigation(&r.doc.path))
                .then(|| std::sync::Arc::new(parse_document(&r.doc.path, &r.doc.text, width)));
            (r.doc, parsed)
        })
        .collect();
    let model = link(docs, Ambiguity::Refuse)?;
    let today = langonrock::clock::today();
    let text = match bundle {
        Some(b) => manifest::compile_manifest(&model, b, &today),
        None => manifest::manifest(&model, tenant, None, &today)?,
    };
    io.out.write_all(text.as_bytes()).map_err(write_err)?;
    let diagnostics = model.diagnostics();
    for d in &diagnostics {
        writeln!(
            io.err,
            "{}: {}/{}: {}",
            d.level(),
            d.bundle,
            d.path,
            d.message
        )
        .map_err(write_err)?;
    }
    stats(io, model.concepts.len(), &text)?;
    Ok(if strict && !diagnostics.is_empty() {
        1
    } else {
        0
    })
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
