//! Command-line parsing (cli.md §1.2, §2, §3, §5): every command's arguments into a typed
//! [`Command`], with the exact error texts, the data root and the DSN grammar.
//!
//! Parsing reads no environment itself: the caller passes a lookup for variables, so tests
//! can pin `LANGONROCK_DATA`, `XDG_DATA_HOME` and `HOME`.

use langonrock::Root;
use langonrock_core::validate;
use lexopt::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;

/// A parse failure: the message printed after `error: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError(pub String);

impl From<lexopt::Error> for ArgError {
    fn from(e: lexopt::Error) -> Self {
        match e {
            lexopt::Error::UnexpectedOption(f) => ArgError(format!("unknown flag \"{f}\"")),
            lexopt::Error::MissingValue { option: Some(f) } => {
                ArgError(format!("missing value for {f}"))
            }
            lexopt::Error::UnexpectedValue { option, .. } => {
                ArgError(format!("{option} takes no value"))
            }
            other => ArgError(other.to_string()),
        }
    }
}

impl From<langonrock_core::Error> for ArgError {
    fn from(e: langonrock_core::Error) -> Self {
        ArgError(e.message())
    }
}

fn err<T>(m: impl Into<String>) -> Result<T, ArgError> {
    Err(ArgError(m.into()))
}

/// The environment lookup parsing uses: `LANGONROCK_DATA`, `XDG_DATA_HOME`, `HOME`,
/// `LOCALAPPDATA`, `USERPROFILE`.
pub type Env<'a> = langonrock::data_root::Env<'a>;

/// The process environment, for [`Env`].
pub use langonrock::data_root::process_env;

/// The platform data directory of cli.md §2.
pub fn platform_data_dir(env: Env<'_>) -> Result<PathBuf, ArgError> {
    Ok(langonrock::data_root::platform_dir(env)?)
}

/// The default data root: `$LANGONROCK_DATA` when set and non-empty, else the platform
/// data directory.
pub fn default_data_root(env: Env<'_>) -> Result<PathBuf, ArgError> {
    Ok(langonrock::data_root::default_root(env)?)
}

/// A data root and a tenant: what every tenant command opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The data root: a directory, or a `postgres://` database (docs/postgres.md).
    pub data: Root,
    /// The tenant id, validated and lower-cased.
    pub tenant: String,
}

/// How `write` treats the current document (cli.md §3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteMode {
    /// `--create`: the precondition "new".
    Create,
    /// `--replaces <hash>`.
    Replaces(String),
    /// `--force`: replace whatever is there, or create.
    Force,
}

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // The fields are the flags of cli.md §3, named alike.
pub enum Command {
    Help,
    Version,
    Compile {
        dir: PathBuf,
        bundle: Option<String>,
        tenant: Option<String>,
        summary_width: Option<usize>,
        strict: bool,
    },
    Import {
        target: Target,
        dir: PathBuf,
        bundle: Option<String>,
        strict: bool,
    },
    Export {
        target: Target,
        dir: PathBuf,
    },
    Manifest {
        target: Target,
        bundle: Option<String>,
    },
    Get {
        target: Target,
        ids: Vec<String>,
        section: Option<String>,
        offset: Option<usize>,
        limit: Option<usize>,
        find: Option<String>,
        source: bool,
    },
    Search {
        target: Target,
        query: String,
        k: Option<usize>,
        bundle: Option<String>,
        expand: bool,
    },
    Snapshot {
        target: Target,
    },
    Source {
        target: Target,
    },
    Read {
        target: Target,
        bundle: String,
        path: String,
    },
    Write {
        target: Target,
        bundle: String,
        path: String,
        mode: WriteMode,
        from: Option<PathBuf>,
    },
    Delete {
        target: Target,
        bundle: String,
        path: String,
        /// `Some(hash)` for `--replaces`, `None` for `--force`.
        replaces: Option<String>,
    },
    DeleteBundle {
        target: Target,
        bundle: String,
    },
    Transact {
        target: Target,
        from: Option<PathBuf>,
    },
    History {
        target: Target,
        before: Option<String>,
        limit: Option<usize>,
    },
    Restore {
        target: Target,
        revision: String,
        expected_revision: String,
    },
    Gc {
        data: Root,
        tenant: Option<String>,
        keep: Option<usize>,
        grace_ms: Option<u64>,
        dry_run: bool,
    },
    Verify {
        data: Root,
        tenant: Option<String>,
    },
    Repair {
        target: Target,
        revision: String,
        /// `None` for `missing`.
        expected_head: Option<String>,
    },
    Mcp {
        dsn: String,
        /// The data root and tenant of an embedded DSN; `None` for a remote one.
        target: Option<Target>,
        database_tools: bool,
        read_only: bool,
    },
    /// `query <dsn> <verb> …` (docs/remote.md): `verb` is the data command as parsed
    /// locally, its own target unused.
    Query {
        dsn: String,
        verb: Box<Command>,
    },
    Serve(crate::serve::ServeOptions),
    Token {
        data: PathBuf,
        tenant: String,
        write: bool,
    },
}

/// The verbs `query <dsn> <verb>` runs, in the order its error lists them.
pub const QUERY_VERBS: [&str; 12] = [
    "manifest",
    "snapshot",
    "search",
    "get",
    "source",
    "read",
    "write",
    "delete",
    "delete-bundle",
    "transact",
    "history",
    "restore",
];

/// Parses a strictly decimal positive integer flag value (cli.md §1.2).
pub fn positive(flag: &str, v: &str) -> Result<usize, ArgError> {
    match digits(v) {
        Some(n) if n > 0 => Ok(n),
        _ => err(format!("{flag} must be a positive integer, got \"{v}\"")),
    }
}

/// Parses a strictly decimal non-negative integer flag value (cli.md §1.2).
pub fn non_negative(flag: &str, v: &str) -> Result<usize, ArgError> {
    digits(v).ok_or_else(|| {
        ArgError(format!(
            "{flag} must be a non-negative integer, got \"{v}\""
        ))
    })
}

/// Plain decimal digits in full; values beyond `usize` saturate (they mean "all").
fn digits(v: &str) -> Option<usize> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(v.parse::<usize>().unwrap_or(usize::MAX))
}

/// The flags one command accepts; each flag's kind decides how it is read.
#[derive(Default)]
struct Flags {
    data: Option<String>,
    tenant: Option<String>,
    values: Vec<(&'static str, String)>,
    switches: Vec<&'static str>,
    positionals: Vec<String>,
}

impl Flags {
    fn value(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
    fn switch(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }
}

fn to_string(v: OsString) -> Result<String, ArgError> {
    v.into_string().map_err(|v| {
        ArgError(format!(
            "argument is not valid UTF-8: {}",
            v.to_string_lossy()
        ))
    })
}

/// Reads the flags and positionals of one command. `values` and `switches` list the long
/// flags (without `--`) the command takes besides `--data` and `--tenant` (when `common`).
fn read_flags(
    args: Vec<OsString>,
    common: bool,
    values: &[&'static str],
    switches: &[&'static str],
) -> Result<Flags, ArgError> {
    let mut p = lexopt::Parser::from_args(args);
    let mut f = Flags::default();
    while let Some(arg) = p.next()? {
        match arg {
            Long("data") if common => f.data = Some(to_string(p.value()?)?),
            Long("tenant") if common => f.tenant = Some(to_string(p.value()?)?),
            Long(name) => {
                if let Some(n) = values.iter().find(|n| **n == name) {
                    let v = to_string(p.value()?)?;
                    f.values.push((n, v));
                } else if let Some(n) = switches.iter().find(|n| **n == name) {
                    if let Some(v) = p.optional_value() {
                        return err(format!(
                            "--{n} takes no value, got \"{}\"",
                            v.to_string_lossy()
                        ));
                    }
                    f.switches.push(n);
                } else {
                    return err(format!("unknown flag \"--{name}\""));
                }
            }
            Short(c) => return err(format!("unknown flag \"-{c}\"")),
            Value(v) => f.positionals.push(to_string(v)?),
        }
    }
    Ok(f)
}

fn target(f: &Flags, env: Env<'_>) -> Result<Target, ArgError> {
    let data = data_root(f, env)?;
    let tenant = match (&f.tenant, data.tenant()) {
        (Some(t), _) => validate::tenant_id(t)?,
        // A postgres DSN may name the tenant itself.
        (None, Some(t)) => t.to_string(),
        (None, None) => return err("--tenant is required"),
    };
    Ok(Target { data, tenant })
}

/// `--tenant`, else the tenant a postgres DSN given as `--data` names (for `gc` and
/// `verify`, which act on every tenant when there is neither).
fn tenant_of(f: &Flags, data: &Root) -> Result<Option<String>, ArgError> {
    match &f.tenant {
        Some(t) => Ok(Some(validate::tenant_id(t)?)),
        None => Ok(data.tenant().map(str::to_string)),
    }
}

/// `--data`: a directory or a `postgres://` DSN; else the default data root.
fn data_root(f: &Flags, env: Env<'_>) -> Result<Root, ArgError> {
    match &f.data {
        Some(d) if !d.is_empty() => Ok(Root::from_data(d)?),
        Some(_) => err("--data needs a directory"),
        None => Ok(Root::Files(default_data_root(env)?)),
    }
}

/// The directory of a files data root: `serve` and `token` keep `tokens.json` (and the
/// socket) in it, so a database root is refused.
fn files_root(root: Root, command: &str) -> Result<PathBuf, ArgError> {
    let hint = if command == "serve" {
        ": serve the database's tenants with --store <dsn>"
    } else {
        ""
    };
    match root.files() {
        Some(p) => Ok(p.to_path_buf()),
        None => err(format!(
            "{command} needs a data directory (it keeps tokens.json there), not the database {root}{hint}"
        )),
    }
}

/// `serve --store`: a PostgreSQL database whose every tenant the server serves, so its DSN
/// names no tenant (docs/postgres.md).
fn store_root(value: &str) -> Result<Root, ArgError> {
    if !langonrock_core::dsn::is_postgres(value) {
        return err(format!(
            "--store takes a postgres:// dsn, got \"{}\"; a files data root is --data <dir>",
            langonrock_core::dsn::redact_dsn(value)
        ));
    }
    let root = Root::from_data(value)?;
    if root.tenant().is_some() {
        return err(format!(
            "serve --store serves every tenant of the database: drop ?tenant= from {}",
            langonrock_core::dsn::redact_dsn(value)
        ));
    }
    Ok(root)
}

fn positional(f: &Flags, i: usize, what: &str) -> Result<String, ArgError> {
    f.positionals
        .get(i)
        .cloned()
        .ok_or_else(|| ArgError(format!("missing {what}")))
}

fn at_most(f: &Flags, n: usize) -> Result<(), ArgError> {
    match f.positionals.get(n) {
        Some(v) => err(format!("unexpected argument \"{v}\"")),
        None => Ok(()),
    }
}

fn opt_positive(f: &Flags, name: &str) -> Result<Option<usize>, ArgError> {
    f.value(name)
        .map(|v| positive(&format!("--{name}"), v))
        .transpose()
}

fn opt_non_negative(f: &Flags, name: &str) -> Result<Option<usize>, ArgError> {
    f.value(name)
        .map(|v| non_negative(&format!("--{name}"), v))
        .transpose()
}

fn opt(f: &Flags, name: &str) -> Option<String> {
    f.value(name).map(str::to_string)
}

/// The usage text.
pub const USAGE: &str = "usage: langonrock <command> [args] [--data <dir>] [--tenant <id>]

commands:
  compile <dir> [--bundle b] [--tenant t] [--summary-width n] [--strict]
  import <dir> [--bundle b] [--strict]
  export <new-dir>
  manifest [--bundle b]
  get <id...> [--section s] [--offset n] [--limit n] [--find text] [--source]
  search <words...> [--k n] [--bundle b] [--no-expand]
  snapshot
  source
  read <bundle> <path>
  write <bundle> <path> (--create | --replaces <hash> | --force) [--from file]
  delete <bundle> <path> (--replaces <hash> | --force)
  delete-bundle <bundle>
  transact [--from file]
  history [--before cursor] [--limit n]
  restore <revision> --expected-revision <revision>
  gc [--keep n] [--grace ms] [--dry-run]
  verify
  repair <revision> --expected-head <digest|missing>
  mcp <dsn> [--database-tools] [--read-only]
  serve [--store <postgres dsn>] [--socket <path> | --host <h> --port <n>] [--tls-cert <file> --tls-key <file>] [--read-only]
  token --tenant <t> [--write]

The data root is --data, else $LANGONROCK_DATA, else the platform data directory.
A DSN is okf:///<absolute path>?tenant=<id>, okf://~/<path under your home>?tenant=<id>
or okf://?tenant=<id> (the default data root).

flags:
  -h, --help       print this help (also: langonrock help)
  -v, --version    print the version
";

/// Parses the arguments after the program name. An empty list is not parsed (the caller
/// prints usage to stderr and exits 1).
pub fn parse(args: Vec<OsString>, env: Env<'_>) -> Result<Command, ArgError> {
    let Some(first) = args.first() else {
        return Ok(Command::Help);
    };
    let first = first.to_string_lossy().to_string();
    let rest = args[1..].to_vec();
    let c = match first.as_str() {
        "-h" | "--help" | "help" => Command::Help,
        "-v" | "--version" => Command::Version,
        "compile" => {
            // `compile` touches no store: `--data` is not one of its flags.
            let f = read_flags(
                rest,
                false,
                &["bundle", "tenant", "summary-width"],
                &["strict"],
            )?;
            at_most(&f, 1)?;
            let dir = positional(&f, 0, "directory")?;
            let tenant = f.value("tenant").map(validate::tenant_id).transpose()?;
            Command::Compile {
                dir: dir.into(),
                bundle: opt(&f, "bundle"),
                tenant,
                summary_width: opt_positive(&f, "summary-width")?,
                strict: f.switch("strict"),
            }
        }
        "import" => {
            let f = read_flags(rest, true, &["bundle"], &["strict"])?;
            at_most(&f, 1)?;
            let dir = positional(&f, 0, "directory")?;
            Command::Import {
                target: target(&f, env)?,
                dir: dir.into(),
                bundle: opt(&f, "bundle"),
                strict: f.switch("strict"),
            }
        }
        "export" => {
            let f = read_flags(rest, true, &[], &[])?;
            at_most(&f, 1)?;
            let dir = positional(&f, 0, "directory")?;
            Command::Export {
                target: target(&f, env)?,
                dir: dir.into(),
            }
        }
        "manifest" => {
            let f = read_flags(rest, true, &["bundle"], &[])?;
            at_most(&f, 0)?;
            Command::Manifest {
                target: target(&f, env)?,
                bundle: opt(&f, "bundle"),
            }
        }
        "get" => {
            let f = read_flags(
                rest,
                true,
                &["section", "offset", "limit", "find"],
                &["source"],
            )?;
            if f.positionals.is_empty() {
                return err("get requires at least one concept id");
            }
            let offset = opt_non_negative(&f, "offset")?;
            let limit = opt_non_negative(&f, "limit")?;
            Command::Get {
                target: target(&f, env)?,
                ids: f.positionals.clone(),
                section: opt(&f, "section"),
                offset,
                limit,
                find: opt(&f, "find"),
                source: f.switch("source"),
            }
        }
        "search" => {
            let f = read_flags(rest, true, &["k", "bundle"], &["no-expand"])?;
            let query = f.positionals.join(" ");
            if query.is_empty() {
                return err("search requires a query");
            }
            let k = opt_positive(&f, "k")?;
            Command::Search {
                target: target(&f, env)?,
                query,
                k,
                bundle: opt(&f, "bundle"),
                expand: !f.switch("no-expand"),
            }
        }
        "snapshot" | "source" | "verify" => {
            let f = read_flags(rest, true, &[], &[])?;
            at_most(&f, 0)?;
            match first.as_str() {
                "snapshot" => Command::Snapshot {
                    target: target(&f, env)?,
                },
                "source" => Command::Source {
                    target: target(&f, env)?,
                },
                _ => {
                    let data = data_root(&f, env)?;
                    Command::Verify {
                        tenant: tenant_of(&f, &data)?,
                        data,
                    }
                }
            }
        }
        "read" => {
            let f = read_flags(rest, true, &[], &[])?;
            at_most(&f, 2)?;
            let bundle = positional(&f, 0, "bundle")?;
            let path = positional(&f, 1, "path")?;
            Command::Read {
                target: target(&f, env)?,
                bundle,
                path,
            }
        }
        "write" => {
            let f = read_flags(rest, true, &["replaces", "from"], &["create", "force"])?;
            at_most(&f, 2)?;
            let bundle = positional(&f, 0, "bundle")?;
            let path = positional(&f, 1, "path")?;
            let replaces = f.values.iter().filter(|(n, _)| *n == "replaces").count();
            let modes = replaces + usize::from(f.switch("create")) + usize::from(f.switch("force"));
            if modes != 1 {
                return err("a write needs --replaces <hash> to update, --create for a new concept, or --force to overwrite whatever is there");
            }
            let mode = if f.switch("create") {
                WriteMode::Create
            } else if f.switch("force") {
                WriteMode::Force
            } else {
                WriteMode::Replaces(opt(&f, "replaces").unwrap_or_default())
            };
            Command::Write {
                target: target(&f, env)?,
                bundle,
                path,
                mode,
                from: f.value("from").map(PathBuf::from),
            }
        }
        "delete" => {
            let f = read_flags(rest, true, &["replaces"], &["force"])?;
            at_most(&f, 2)?;
            let bundle = positional(&f, 0, "bundle")?;
            let path = positional(&f, 1, "path")?;
            let replaces = f.values.iter().filter(|(n, _)| *n == "replaces").count();
            if replaces + usize::from(f.switch("force")) != 1 {
                return err("delete needs --replaces <hash> or --force");
            }
            Command::Delete {
                target: target(&f, env)?,
                bundle,
                path,
                replaces: opt(&f, "replaces"),
            }
        }
        "delete-bundle" => {
            let f = read_flags(rest, true, &[], &[])?;
            at_most(&f, 1)?;
            let bundle = positional(&f, 0, "bundle")?;
            Command::DeleteBundle {
                target: target(&f, env)?,
                bundle,
            }
        }
        "transact" => {
            let f = read_flags(rest, true, &["from"], &[])?;
            at_most(&f, 0)?;
            Command::Transact {
                target: target(&f, env)?,
                from: f.value("from").map(PathBuf::from),
            }
        }
        "history" => {
            let f = read_flags(rest, true, &["before", "limit"], &[])?;
            at_most(&f, 0)?;
            let limit = opt_non_negative(&f, "limit")?;
            Command::History {
                target: target(&f, env)?,
                before: opt(&f, "before"),
                limit,
            }
        }
        "restore" => {
            let f = read_flags(rest, true, &["expected-revision"], &[])?;
            at_most(&f, 1)?;
            let (Some(revision), Some(expected)) =
                (f.positionals.first(), f.value("expected-revision"))
            else {
                return err(
                    "restore requires a revision and --expected-revision <current revision>",
                );
            };
            Command::Restore {
                target: target(&f, env)?,
                revision: revision.clone(),
                expected_revision: expected.to_string(),
            }
        }
        "gc" => {
            let f = read_flags(rest, true, &["keep", "grace"], &["dry-run"])?;
            at_most(&f, 0)?;
            let keep = opt_positive(&f, "keep")?;
            let grace_ms = opt_non_negative(&f, "grace")?.map(|n| n as u64);
            let data = data_root(&f, env)?;
            Command::Gc {
                tenant: tenant_of(&f, &data)?,
                data,
                keep,
                grace_ms,
                dry_run: f.switch("dry-run"),
            }
        }
        "repair" => {
            let f = read_flags(rest, true, &["expected-head"], &[])?;
            at_most(&f, 1)?;
            let (Some(revision), Some(head)) = (f.positionals.first(), f.value("expected-head"))
            else {
                return err("repair requires a revision and --expected-head <digest|missing>");
            };
            Command::Repair {
                target: target(&f, env)?,
                revision: revision.clone(),
                expected_head: (head != "missing").then(|| head.to_string()),
            }
        }
        "mcp" => {
            let f = read_flags(rest, false, &[], &["database-tools", "read-only"])?;
            at_most(&f, 1)?;
            let dsn = positional(&f, 0, "dsn")?;
            // A remote DSN has no target here: the server opens it (docs/remote.md).
            let target = if langonrock_core::dsn::is_postgres(&dsn) {
                let tenant = langonrock_core::dsn::parse_postgres_dsn(&dsn)?
                    .require_tenant()?
                    .to_string();
                Some(Target {
                    data: Root::from_data(&dsn)?,
                    tenant,
                })
            } else {
                match parse_dsn_env(&dsn, env)? {
                    Some(parsed) => Some(Target {
                        data: Root::Files(match parsed.data {
                            Some(d) => d,
                            None => default_data_root(env)?,
                        }),
                        tenant: parsed.tenant,
                    }),
                    None => None,
                }
            };
            Command::Mcp {
                target,
                dsn,
                database_tools: f.switch("database-tools"),
                read_only: f.switch("read-only"),
            }
        }
        "query" => parse_query(rest, env)?,
        "serve" => {
            let f = read_flags(
                rest,
                true,
                &["socket", "host", "port", "tls-cert", "tls-key", "store"],
                &["read-only"],
            )?;
            at_most(&f, 0)?;
            if f.tenant.is_some() {
                return err("unknown flag \"--tenant\"");
            }
            let store = f.value("store").map(store_root).transpose()?;
            let port = f
                .value("port")
                .map(|v| {
                    digits(v)
                        .and_then(|n| u16::try_from(n).ok())
                        .ok_or_else(|| {
                            ArgError(format!(
                                "--port must be an integer from 0 to 65535, got \"{v}\""
                            ))
                        })
                })
                .transpose()?;
            Command::Serve(crate::serve::ServeOptions {
                data: files_root(data_root(&f, env)?, "serve")?,
                store,
                socket: f.value("socket").map(PathBuf::from),
                host: opt(&f, "host"),
                port,
                tls_cert: f.value("tls-cert").map(PathBuf::from),
                tls_key: f.value("tls-key").map(PathBuf::from),
                read_only: f.switch("read-only"),
            })
        }
        "token" => {
            let f = read_flags(rest, true, &[], &["write"])?;
            at_most(&f, 0)?;
            let target = target(&f, env)?;
            Command::Token {
                data: files_root(target.data, "token")?,
                tenant: target.tenant,
                write: f.switch("write"),
            }
        }
        f if f.starts_with('-') => return err(format!("unknown flag \"{f}\"")),
        other => return err(format!("unknown command \"{other}\"")),
    };
    Ok(c)
}

// ---------------------------------------------------------------------------------------
// DSN (cli.md §5)
// ---------------------------------------------------------------------------------------

/// A parsed embedded DSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dsn {
    /// The data root, or `None` for the default (`okf://?tenant=…`).
    pub data: Option<PathBuf>,
    /// The tenant, validated and lower-cased.
    pub tenant: String,
}

/// Parses a DSN (docs/remote.md), with no home directory for `okf://~/…`: `Some` for an
/// embedded one, `None` for a remote one.
pub fn parse_dsn(dsn: &str) -> Result<Option<Dsn>, ArgError> {
    parse_dsn_env(dsn, &|_| None)
}

/// [`parse_dsn`], `~` in `okf://~/…` standing for `$HOME` (`%USERPROFILE%` on Windows).
pub fn parse_dsn_env(dsn: &str, env: Env<'_>) -> Result<Option<Dsn>, ArgError> {
    let home = langonrock::data_root::home_dir(env);
    Ok(
        match langonrock_core::dsn::parse_dsn_home(dsn, cfg!(windows), home.as_deref())? {
            langonrock_core::dsn::Dsn::Embedded(d) => Some(Dsn {
                data: d.data.map(PathBuf::from),
                tenant: d.tenant,
            }),
            langonrock_core::dsn::Dsn::Remote(_) => None,
        },
    )
}

/// `query <dsn> <verb> [the verb's flags]`: the verb is parsed as the local command is,
/// with the DSN in place of `--data` and `--tenant` (which it refuses).
fn parse_query(rest: Vec<OsString>, env: Env<'_>) -> Result<Command, ArgError> {
    let mut rest = rest.into_iter();
    let dsn = match rest.next() {
        Some(d) => to_string(d)?,
        None => return err("missing dsn"),
    };
    if langonrock_core::dsn::is_postgres(&dsn) {
        langonrock_core::dsn::parse_postgres_dsn(&dsn)?.require_tenant()?;
    } else {
        parse_dsn_env(&dsn, env)?;
    }
    let verb = match rest.next() {
        Some(v) => to_string(v)?,
        None => return err("missing verb"),
    };
    if !QUERY_VERBS.contains(&verb.as_str()) {
        return err(format!(
            "unknown verb \"{verb}\": expected one of {}",
            QUERY_VERBS.join(", ")
        ));
    }
    let mut args: Vec<OsString> = vec![verb.into()];
    for a in rest {
        let s = a.to_string_lossy();
        let name = s.split('=').next().unwrap_or_default();
        if name == "--data" || name == "--tenant" {
            return err(format!("unknown flag \"{name}\""));
        }
        args.push(a);
    }
    // The verb's own parser needs a target; the DSN replaces it when the query runs.
    args.extend(["--tenant".into(), "query".into()]);
    args.extend(["--data".into(), "/".into()]);
    let verb = parse(args, env)?;
    Ok(Command::Query {
        dsn,
        verb: Box::new(verb),
    })
}

/// The DSN as shown in the startup banner: the value of every `token` parameter as `***`
/// (agent.md §1.1).
pub fn redact_dsn(dsn: &str) -> String {
    langonrock_core::dsn::redact_dsn(dsn)
}

#[cfg(test)]
mod tests;
