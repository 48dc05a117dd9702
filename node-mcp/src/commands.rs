//! The CLI commands that open a tenant (cli.md §3), over the files store or a PostgreSQL
//! database (docs/postgres.md).

use crate::args::{Command, Target, WriteMode};
use crate::cli::{count, print_diagnostics, stats, strict_failure, write_err, CliError, Io};
use crate::progress::Progress;
use langonrock::{Connection as Conn, Options, Root};
use langonrock_core::engine::{
    parse_transaction_with, HistoryRequest, RepairRequest, RestoreRequest, Transaction,
};
use langonrock_core::http_api::RemoteGet;
use langonrock_core::{validate, Error};

use std::path::Path;

/// `tenant "<t>" has no revisions in <data root>; the first write creates it`.
pub fn no_revisions(tenant: &str, data: &Root) -> String {
    format!("tenant \"{tenant}\" has no revisions in {data}; the first write creates it")
}

/// Opens a tenant for a command that only reads, announcing an empty tenant on stderr.
fn open_read(target: &Target, io: &mut Io<'_>) -> Result<Conn, CliError> {
    let conn = Options::default()
        .read_only(true)
        .open_root(&target.data, &target.tenant)?;
    if !conn.has_head() {
        writeln!(io.err, "{}", no_revisions(&target.tenant, &target.data)).map_err(write_err)?;
    }
    Ok(conn)
}

/// Ends a command's connection (after its derived record, if one is due and pays) without
/// freeing its served state: the process exits next, and freeing tens of thousands of
/// compiled concepts one by one would only delay it.
fn leave(conn: Conn) {
    conn.finish_derived();
    std::mem::forget(conn);
}

fn open_write(target: &Target) -> Result<Conn, CliError> {
    Ok(Options::default().open_root(&target.data, &target.tenant)?)
}

/// Prefixes `<bundle>/<path>: ` to a message about one file that does not name it
/// (cli.md §1.2).
fn about_file(e: Error, bundle: &str, path: &str) -> CliError {
    let m = e.message();
    if m.contains(path) {
        CliError(m)
    } else {
        CliError(format!("{bundle}/{path}: {m}"))
    }
}

fn out_line(io: &mut Io<'_>, text: &str) -> Result<(), CliError> {
    io.out.write_all(text.as_bytes()).map_err(write_err)?;
    io.out.write_all(b"\n").map_err(write_err)
}

fn json_line<T: serde::Serialize>(io: &mut Io<'_>, v: &T) -> Result<(), CliError> {
    let text = serde_json::to_string(v).map_err(|e| CliError(e.to_string()))?;
    out_line(io, &text)
}

/// Reads `--from <file>` or stdin as bytes.
fn input_bytes(from: Option<&Path>, io: &mut Io<'_>) -> Result<Vec<u8>, CliError> {
    match from {
        Some(p) => {
            std::fs::read(p).map_err(|e| CliError(format!("cannot read {}: {e}", p.display())))
        }
        None => {
            let mut v = Vec::new();
            io.input
                .read_to_end(&mut v)
                .map_err(|e| CliError(format!("cannot read stdin: {e}")))?;
            Ok(v)
        }
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The `gc` line (docs/records.md "What gc reports"): what left retained history, what left
/// the disk, and what stays on disk until its grace period ends.
fn gc_line(r: &langonrock_core::engine::GcResult) -> String {
    let kept = plural(r.kept.len() as u64, "revision");
    let removed = format!(
        "{} and {}",
        plural(r.removed_revisions, "revision"),
        plural(r.removed_records, "record")
    );
    let mut line = if r.dry_run {
        format!(
            "{}: would keep {kept} and drop {} from history; would remove {removed} from disk, free {}",
            r.tenant,
            r.dropped_revisions,
            plural(r.bytes_freed, "byte")
        )
    } else {
        format!(
            "{}: kept {kept}, dropped {} from history; removed {removed} from disk, freed {}",
            r.tenant,
            r.dropped_revisions,
            plural(r.bytes_freed, "byte")
        )
    };
    if let Some(until) = r.pending_until {
        line.push_str(&format!(
            "; {} ({}) written within the grace period {} until a gc after {}",
            plural(r.pending_records, "record"),
            plural(r.pending_bytes, "byte"),
            if r.dry_run { "would stay" } else { "stay" },
            langonrock::clock::iso_of_millis(i64::try_from(until).unwrap_or(i64::MAX)),
        ));
    }
    line
}

/// Runs a tenant command.
pub fn run(cmd: Command, io: &mut Io<'_>) -> Result<i32, CliError> {
    match cmd {
        Command::Query { dsn, verb } => {
            // A query changes the tenant only with a verb that writes.
            let writes = is_change(&verb);
            let request = transaction_of(&verb, io)?;
            let conn = Options::default().read_only(!writes).open(&dsn)?;
            if let (false, Some(data)) = (writes || conn.has_head(), conn.data()) {
                let root = Root::Files(data.to_path_buf());
                writeln!(io.err, "{}", no_revisions(conn.tenant(), &root)).map_err(write_err)?;
            }
            let code = match request {
                Some(r) => transact(&conn, &r, io)?,
                None => data_verb(&conn, *verb, io, Surface::Query)?,
            };
            leave(conn);
            Ok(code)
        }
        c if is_data_verb(&c) => {
            // A transaction is read and checked before the tenant is opened.
            let request = transaction_of(&c, io)?;
            if is_change(&c) {
                let conn = open_write(target_of(&c))?;
                let code = match request {
                    Some(r) => transact(&conn, &r, io),
                    None => data_verb(&conn, c, io, Surface::Local),
                };
                leave(conn);
                return code;
            }
            let conn = open_read(target_of(&c), io)?;
            let code = data_verb(&conn, c, io, Surface::Local)?;
            leave(conn);
            Ok(code)
        }
        Command::Export { target, dir } => {
            let conn = open_read(&target, io)?;
            export(&conn, &dir, io)
        }
        Command::Gc {
            data,
            tenant,
            keep,
            grace_ms,
            dry_run,
        } => {
            let tenants = tenants_of(&data, tenant)?;
            for t in tenants {
                // A dry run changes nothing, not even a derived record.
                let conn = Options::default().read_only(dry_run).open_root(&data, &t)?;
                let defaults = langonrock::GcRequest::default();
                let keep = keep.map_or(defaults.keep, |k| i64::try_from(k).unwrap_or(i64::MAX));
                let r = conn.gc(langonrock::GcRequest {
                    keep,
                    dry_run,
                    grace_ms: grace_ms.unwrap_or(defaults.grace_ms),
                })?;
                writeln!(io.err, "{}", gc_line(&r)).map_err(write_err)?;
            }
            Ok(0)
        }
        Command::Verify { data, tenant } => {
            let mut code = 0;
            for t in tenants_of(&data, tenant)? {
                let r = Options::default()
                    .read_only(true)
                    .unloaded()
                    .open_root(&data, &t)?
                    .verify()?;
                if !r.ok {
                    code = 1;
                }
                json_line(io, &r)?;
            }
            Ok(code)
        }
        Command::Repair {
            target,
            revision,
            expected_head,
        } => {
            let r = Options::default()
                .unloaded()
                .open_root(&target.data, &target.tenant)?
                .repair(RepairRequest {
                    revision,
                    expected_head,
                })?;
            json_line(io, &r)?;
            Ok(0)
        }
        Command::Import {
            target,
            dir,
            bundle,
            strict,
        } => import(&target, &dir, bundle.as_deref(), strict, io),
        _ => Err(CliError(
            "internal error: command routed to the store".into(),
        )),
    }
}

/// Where a data verb runs: a local command, or `query <dsn> <verb>`, whose `get` exits 1 on
/// a missing id without warnings (docs/remote.md).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Surface {
    Local,
    Query,
}

/// One `<level>: <bundle>/<path>: <message>` line per diagnostic on stderr (cli.md §1.3).
fn diagnostic_lines(
    io: &mut Io<'_>,
    diagnostics: &[langonrock_core::engine::DiagnosticInfo],
) -> Result<(), CliError> {
    for d in diagnostics {
        writeln!(
            io.err,
            "{}: {}/{}: {}",
            d.level, d.bundle, d.path, d.message
        )
        .map_err(write_err)?;
    }
    Ok(())
}

/// Whether a command is one of the data verbs (the verbs `query` runs).
fn is_data_verb(c: &Command) -> bool {
    is_change(c)
        || matches!(
            c,
            Command::Manifest { .. }
                | Command::Search { .. }
                | Command::Get { .. }
                | Command::Snapshot { .. }
                | Command::Source { .. }
                | Command::Read { .. }
                | Command::History { .. }
        )
}

/// Whether a data verb changes the tenant.
fn is_change(c: &Command) -> bool {
    matches!(
        c,
        Command::Write { .. }
            | Command::Delete { .. }
            | Command::DeleteBundle { .. }
            | Command::Transact { .. }
            | Command::Restore { .. }
    )
}

/// The request of a `transact` verb, read and checked; `None` for any other command.
fn transaction_of(
    c: &Command,
    io: &mut Io<'_>,
) -> Result<Option<(serde_json::Value, Transaction)>, CliError> {
    match c {
        Command::Transact { from, .. } => transaction_input(from.as_deref(), io).map(Some),
        _ => Ok(None),
    }
}

/// The target of a local data command.
fn target_of(c: &Command) -> &Target {
    match c {
        Command::Manifest { target, .. }
        | Command::Search { target, .. }
        | Command::Get { target, .. }
        | Command::Snapshot { target }
        | Command::Source { target }
        | Command::Read { target, .. }
        | Command::History { target, .. }
        | Command::Write { target, .. }
        | Command::Delete { target, .. }
        | Command::DeleteBundle { target, .. }
        | Command::Transact { target, .. }
        | Command::Restore { target, .. }
        | Command::Import { target, .. }
        | Command::Export { target, .. }
        | Command::Repair { target, .. } => target,
        _ => unreachable!("not a tenant command"),
    }
}

/// The request of `transact`: the JSON of `--from` or stdin, parsed and checked.
fn transaction_input(
    from: Option<&Path>,
    io: &mut Io<'_>,
) -> Result<(serde_json::Value, Transaction), CliError> {
    let bytes = input_bytes(from, io)?;
    // A lone surrogate or a number a double cannot hold is named as over REST and MCP
    // (docs/limits.md); one in a change's content is the engine's refusal.
    let (value, found) = langonrock_core::wire::parse_repairing(&bytes)
        .map_err(|_| CliError("transaction must be valid JSON".into()))?;
    let contents = langonrock_core::wire::refuse_flaws(&found, &value, true).map_err(CliError)?;
    let txn = parse_transaction_with(&value, &contents).map_err(|e| change_error(e, &value))?;
    Ok((value, txn))
}

fn transact(
    conn: &Conn,
    (value, txn): &(serde_json::Value, Transaction),
    io: &mut Io<'_>,
) -> Result<i32, CliError> {
    let r = conn
        .transact(txn.clone())
        .map_err(|e| change_error(e, value))?;
    json_line(io, &r)?;
    Ok(0)
}

/// Runs one data verb of cli.md §3 on a connection, local or remote: the same operations,
/// so the same output.
fn data_verb(
    conn: &Conn,
    cmd: Command,
    io: &mut Io<'_>,
    surface: Surface,
) -> Result<i32, CliError> {
    match cmd {
        Command::Manifest { bundle, .. } => {
            let text = conn.manifest(bundle.as_deref())?;
            io.out.write_all(text.as_bytes()).map_err(write_err)?;
            let rows = text.lines().count().saturating_sub(3);
            stats(io, rows, &text)?;
            Ok(0)
        }
        Command::Search {
            query,
            k,
            bundle,
            expand,
            ..
        } => {
            let opts = langonrock_core::search::SearchOptions {
                k: k.unwrap_or(8),
                bundle,
                expand,
            };
            let text = conn.search(&query, &opts)?;
            io.out.write_all(text.as_bytes()).map_err(write_err)?;
            // Rows: every line after the preamble, the hits line and the columns line.
            let rows = text
                .lines()
                .filter(|l| !l.starts_with('#'))
                .count()
                .saturating_sub(1);
            stats(io, rows, &text)?;
            Ok(0)
        }
        Command::Get {
            ids,
            section,
            offset,
            limit,
            find,
            source,
            ..
        } => {
            let opts = langonrock_core::read::GetOptions {
                section,
                offset: offset.map(|n| n as u64),
                limit: limit.map(|n| n as u64),
                find,
                source,
            };
            let found = conn.get(&ids, &opts)?;
            let slices = found.len();
            let got = RemoteGet::new(&ids, &opts, found, None);
            let mut text = langonrock_core::read::render_cli(&got.result());
            if !text.is_empty() {
                text.push('\n');
            }
            io.out.write_all(text.as_bytes()).map_err(write_err)?;
            let missing: Vec<String> = got.result().missing().map(str::to_string).collect();
            // A missing id fails the command (exit 1): locally an error line each, after
            // the stats of what was found; a query names none (docs/remote.md).
            stats(io, slices, &text)?;
            if surface == Surface::Local {
                for id in &missing {
                    writeln!(io.err, "error: no such concept or section: {id}")
                        .map_err(write_err)?;
                }
            }
            Ok(i32::from(!missing.is_empty()))
        }
        Command::Snapshot { .. } => {
            let s = conn.snapshot()?;
            out_line(io, &s.snapshot)?;
            writeln!(io.err, "{}", count(s.concepts, "concept", "concepts")).map_err(write_err)?;
            Ok(0)
        }
        Command::Source { .. } => {
            let list = conn.list_source()?;
            let mut text = String::new();
            for e in &list {
                text.push_str(&format!(
                    "{}\t{}\t{}/{}\t{}\n",
                    e.hash,
                    e.bytes,
                    e.bundle,
                    e.path,
                    e.id.as_deref().unwrap_or("-")
                ));
            }
            io.out.write_all(text.as_bytes()).map_err(write_err)?;
            writeln!(io.err, "{}", plural(list.len() as u64, "file")).map_err(write_err)?;
            Ok(0)
        }
        Command::Read { bundle, path, .. } => match conn.read_source(&bundle, &path)? {
            Some(src) => {
                io.out
                    .write_all(src.content.as_bytes())
                    .map_err(write_err)?;
                writeln!(io.err, "{}", src.hash).map_err(write_err)?;
                Ok(0)
            }
            None => {
                let list = conn.list_source()?;
                Err(CliError(no_document(&list, conn.tenant(), &bundle, &path)))
            }
        },
        Command::Write {
            bundle,
            path,
            mode,
            from,
            ..
        } => {
            let bytes = input_bytes(from.as_deref(), io)?;
            let content = String::from_utf8(bytes).map_err(|_| {
                CliError(format!("{bundle}/{path}: source must contain valid UTF-8"))
            })?;
            let result = match &mode {
                WriteMode::Create => conn.write(&bundle, &path, &content, None),
                WriteMode::Replaces(h) => conn.write(&bundle, &path, &content, Some(h)),
                WriteMode::Force => force(conn, &bundle, &path, |c, cur| {
                    c.write(&bundle, &path, &content, cur.as_deref())
                }),
            }
            .map_err(|e| about_file(e, &bundle, &path))?;
            let shown_bundle = conn.stored_bundle(&bundle).unwrap_or(bundle.clone());
            let shown_path = validate::nfc(&path);
            writeln!(io.err, "wrote {shown_bundle}/{shown_path} {}", result.hash)
                .map_err(write_err)?;
            diagnostic_lines(io, &result.diagnostics)?;
            Ok(0)
        }
        Command::Delete {
            bundle,
            path,
            replaces,
            ..
        } => {
            let shown_bundle = conn.stored_bundle(&bundle).unwrap_or(bundle.clone());
            match &replaces {
                Some(h) => conn.delete(&bundle, &path, Some(h)),
                None => force(conn, &bundle, &path, |c, cur| match cur {
                    Some(h) => c.delete(&bundle, &path, Some(&h)),
                    None => Err(Error::NotFound("no such concept".into())),
                }),
            }
            .map_err(|e| about_file(e, &bundle, &path))?;
            writeln!(io.err, "deleted {shown_bundle}/{}", validate::nfc(&path))
                .map_err(write_err)?;
            Ok(0)
        }
        Command::DeleteBundle { bundle, .. } => {
            let shown = conn.stored_bundle(&bundle).unwrap_or(bundle.clone());
            conn.delete_bundle(&bundle)?;
            writeln!(io.err, "deleted bundle {shown}").map_err(write_err)?;
            Ok(0)
        }
        Command::History { before, limit, .. } => {
            let page = conn.history(HistoryRequest {
                before,
                limit: limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
            })?;
            json_line(io, &page)?;
            Ok(0)
        }
        Command::Restore {
            revision,
            expected_revision,
            ..
        } => {
            let r = conn.restore(RestoreRequest {
                revision,
                expected_revision,
            })?;
            json_line(io, &r)?;
            Ok(0)
        }
        _ => Err(CliError("internal error: not a data verb".into())),
    }
}

/// The error of `read` for a document that does not exist (docs/cli.md): it names the path
/// as a path, and says what exists instead: the bundles, or a document of that name or id.
fn no_document(
    list: &[langonrock_core::engine::SourceEntry],
    tenant: &str,
    bundle: &str,
    path: &str,
) -> String {
    let in_bundle: Vec<_> = list
        .iter()
        .filter(|e| e.bundle.eq_ignore_ascii_case(bundle))
        .collect();
    if in_bundle.is_empty() {
        let mut bundles: Vec<&str> = list.iter().map(|e| e.bundle.as_str()).collect();
        bundles.dedup();
        return if bundles.is_empty() {
            format!("no bundle \"{bundle}\": tenant \"{tenant}\" holds no documents")
        } else {
            format!(
                "no bundle \"{bundle}\" in tenant \"{tenant}\"; its bundles: {}",
                bundles.join(", ")
            )
        };
    }
    let shown = format!("{}/{}", in_bundle[0].bundle, validate::nfc(path));
    let last = path.rsplit('/').next().unwrap_or(path);
    let stem = last.strip_suffix(".md").unwrap_or(last);
    let near = in_bundle.iter().find(|e| {
        e.path.rsplit('/').next() == Some(last)
            || e.path.rsplit('/').next() == Some(&format!("{stem}.md"))
            || e.id.as_deref() == Some(path)
    });
    match near {
        Some(e) => format!(
            "no document {shown}: paths are relative to the bundle; did you mean {}/{}?",
            e.bundle, e.path
        ),
        None => format!(
            "no document {shown}: paths are relative to the bundle (`langonrock source` lists them)"
        ),
    }
}

/// Runs a change with the document's current hash as its precondition, looked up afresh
/// and retried when another writer slips in between (`--force`).
fn force<T>(
    conn: &Conn,
    bundle: &str,
    path: &str,
    mut f: impl FnMut(&Conn, Option<String>) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut tries = 0;
    loop {
        tries += 1;
        let current = conn.current_hash(bundle, path);
        match f(conn, current) {
            Err(Error::Conflict {
                reason: Some(_), ..
            }) if tries < 5 => continue,
            other => return other,
        }
    }
}

/// Names the change an error is about (`<bundle>/<path>: `), when it names one.
fn change_error(e: Error, request: &serde_json::Value) -> CliError {
    let index = match &e {
        Error::InvalidChange { index, .. } => Some(*index),
        Error::Conflict { changes, .. } => changes.first().map(|c| c.index),
        _ => None,
    };
    let target = index.and_then(|i| {
        let c = request.get("changes")?.get(i)?;
        Some((c.get("bundle")?.as_str()?, c.get("path")?.as_str()?))
    });
    match target {
        Some((b, p)) => about_file(e, b, p),
        None => CliError(e.message()),
    }
}

fn tenants_of(data: &Root, tenant: Option<String>) -> Result<Vec<String>, CliError> {
    match tenant {
        Some(t) => Ok(vec![t]),
        None => Ok(data.tenants()?),
    }
}

fn export(conn: &Conn, dir: &Path, io: &mut Io<'_>) -> Result<i32, CliError> {
    if dir.exists() || std::fs::symlink_metadata(dir).is_ok() {
        return Err(CliError(format!(
            "export destination already exists: {}",
            dir.display()
        )));
    }
    let s = conn.read()?;
    conn.check_sources(None)?;
    let mut n = 0usize;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError(format!("cannot create {}: {e}", dir.display())))?;
    let total = s.documents().count();
    let docs = s.documents();
    let mut bar = Progress::new(io.tty);
    for (bundle, path, text) in docs {
        let file = dir.join(bundle).join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CliError(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&file, text.as_bytes())
            .map_err(|e| CliError(format!("cannot write {}: {e}", file.display())))?;
        n += 1;
        bar.files("writing", n, total);
    }
    bar.clear();
    writeln!(io.err, "exported {}", plural(n as u64, "file")).map_err(write_err)?;
    Ok(0)
}

fn file_stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

fn import(
    target: &Target,
    dir: &Path,
    bundle: Option<&str>,
    strict: bool,
    io: &mut Io<'_>,
) -> Result<i32, CliError> {
    let mut bar = Progress::new(io.tty);
    let read = crate::folder::read_folder_with(dir, bundle, &mut |done, total| {
        bar.files("reading", done, total)
    })?;
    bar.clear();
    // The decision, before anything is committed.
    writeln!(io.err, "{}", read.line).map_err(write_err)?;
    let stamps: Vec<_> = read
        .docs
        .iter()
        .map(|d| (d.file.clone(), file_stamp(&d.file)))
        .collect();
    let canonical =
        std::fs::canonicalize(dir).map_err(|e| CliError(format!("{}: {e}", dir.display())))?;
    let location = match bundle {
        Some(b) => format!("{}?bundle={b}", canonical.display()),
        None => canonical.display().to_string(),
    };
    let req = langonrock_core::engine::ImportRequest {
        location,
        documents: read.docs.into_iter().map(|d| d.doc).collect(),
        strict,
    };
    let conn = open_write(target)?;
    let mut unchanged = || {
        stamps
            .iter()
            .find(|(f, s)| file_stamp(f) != *s)
            .map(|(f, _)| {
                format!(
                    "folder changed during import: {}; scan it again",
                    f.display()
                )
            })
    };
    let mut progress = |line: &str| bar.phase(line.strip_prefix("import: ").unwrap_or(line));
    let r = conn.import(req, &mut unchanged, &mut progress)?;
    bar.clear();
    print_diagnostics(
        io,
        r.diagnostics.iter().map(|d| {
            (
                d.level.as_str(),
                d.bundle.as_str(),
                d.path.as_str(),
                d.message.as_str(),
            )
        }),
    )?;
    if strict && !r.diagnostics.is_empty() {
        return Err(CliError(strict_failure(r.diagnostics.len(), true)));
    }
    let n = r.bundles.len();
    writeln!(
        io.err,
        "snapshot {} ({}), {} ({}), {}",
        &r.snapshot[..12.min(r.snapshot.len())],
        if r.reused { "reused" } else { "new" },
        count(n, "bundle", "bundles"),
        r.bundles.join(", "),
        count(r.concepts, "concept", "concepts")
    )
    .map_err(write_err)?;
    leave(conn);
    Ok(0)
}
