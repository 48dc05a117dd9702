//! The command line (cli.md): argument parsing with exact error texts, and the commands.

use crate::folder::read_folder;
use langonrock_core::compile::{link, parse_document, Ambiguity, SUMMARY_WIDTH};
use langonrock_core::text::utf16_len;
use langonrock_core::{manifest, validate, Error};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// The usage text.
pub const USAGE: &str = "usage: langonrock <command> [args]

commands:
  compile <dir> [--bundle b] [--tenant t] [--summary-width n] [--strict]
      compile a folder of OKF documents and print the manifest

flags:
  -h, --help       print this help
  -v, --version    print the version
";

/// A command-line failure: the message printed after `error: `.
#[derive(Debug)]
pub struct CliError(pub String);

impl From<Error> for CliError {
    fn from(e: Error) -> Self {
        CliError(e.message())
    }
}

impl From<lexopt::Error> for CliError {
    fn from(e: lexopt::Error) -> Self {
        match e {
            lexopt::Error::UnexpectedOption(f) => CliError(format!("unknown flag \"{f}\"")),
            lexopt::Error::MissingValue { option: Some(f) } => {
                CliError(format!("missing value for {f}"))
            }
            other => CliError(other.to_string()),
        }
    }
}

/// Output streams of one run.
pub struct Io<'a> {
    /// stdout: data only.
    pub out: &'a mut dyn Write,
    /// stderr: everything else.
    pub err: &'a mut dyn Write,
}

/// Runs the CLI on `args` (without the program name); returns the exit code.
pub fn run(args: Vec<OsString>, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut io = Io { out, err };
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
    let first = args[0].to_string_lossy().to_string();
    let rest = args[1..].to_vec();
    match first.as_str() {
        "-h" | "--help" => {
            io.out.write_all(USAGE.as_bytes()).map_err(write_err)?;
            Ok(0)
        }
        "-v" | "--version" => {
            writeln!(io.out, "langonrock {}", env!("CARGO_PKG_VERSION")).map_err(write_err)?;
            Ok(0)
        }
        "compile" => compile(rest, io),
        f if f.starts_with('-') => Err(CliError(format!("unknown flag \"{f}\""))),
        other => Err(CliError(format!("unknown command \"{other}\""))),
    }
}

fn write_err(e: std::io::Error) -> CliError {
    CliError(format!("cannot write output: {e}"))
}

/// Parses a strictly decimal positive integer flag value.
pub fn positive(flag: &str, v: &str) -> Result<usize, CliError> {
    match non_negative(flag, v) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(CliError(format!(
            "{flag} must be a positive integer, got \"{v}\""
        ))),
    }
}

/// Parses a strictly decimal non-negative integer flag value.
pub fn non_negative(flag: &str, v: &str) -> Result<usize, CliError> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CliError(format!(
            "{flag} must be a non-negative integer, got \"{v}\""
        )));
    }
    v.parse::<usize>().map_err(|_| {
        CliError(format!(
            "{flag} must be a non-negative integer, got \"{v}\""
        ))
    })
}

fn value(p: &mut lexopt::Parser) -> Result<String, CliError> {
    Ok(p.value()?.to_string_lossy().to_string())
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

fn compile(args: Vec<OsString>, io: &mut Io<'_>) -> Result<i32, CliError> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut dir: Option<PathBuf> = None;
    let mut bundle: Option<String> = None;
    let mut tenant: Option<String> = None;
    let mut width = SUMMARY_WIDTH;
    let mut strict = false;
    while let Some(arg) = p.next()? {
        match arg {
            Long("bundle") => bundle = Some(value(&mut p)?),
            Long("tenant") => tenant = Some(value(&mut p)?),
            Long("summary-width") => width = positive("--summary-width", &value(&mut p)?)?,
            Long("strict") => strict = true,
            Value(v) if dir.is_none() => dir = Some(PathBuf::from(v)),
            Value(v) => {
                return Err(CliError(format!(
                    "unexpected argument \"{}\"",
                    v.to_string_lossy()
                )))
            }
            Short(c) => return Err(CliError(format!("unknown flag \"-{c}\""))),
            Long(f) => return Err(CliError(format!("unknown flag \"--{f}\""))),
        }
    }
    let dir = dir.ok_or_else(|| CliError("missing directory".into()))?;
    let tenant = match tenant {
        Some(t) => validate::tenant_id(&t)?,
        None => "-".to_string(),
    };
    let read = read_folder(&dir, bundle.as_deref())?;
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
    let today = crate::clock::today();
    let text = match &bundle {
        Some(b) => manifest::compile_manifest(&model, b, &today),
        None => manifest::manifest(&model, &tenant, None, &today)?,
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
