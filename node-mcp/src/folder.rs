//! Reading a folder of OKF documents (compile.md §1.1), shared by `compile` and `import`.

use langonrock_core::compile::{check_names, SourceDoc};
use langonrock_core::{validate, Error};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One document read from disk, with the file it came from.
#[derive(Debug, Clone)]
pub struct ReadDoc {
    /// The document.
    pub doc: SourceDoc,
    /// The file on disk.
    pub file: PathBuf,
}

/// What reading a folder gave: documents (sorted by bundle, path) and warnings for stderr.
#[derive(Debug, Default)]
pub struct FolderRead {
    /// The documents.
    pub docs: Vec<ReadDoc>,
    /// Lines to print on stderr, each without its final `\n`.
    pub warnings: Vec<String>,
}

fn os_name(p: &Path) -> Result<String, Error> {
    p.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| Error::Invalid(format!("{}: file name is not valid UTF-8", p.display())))
}

fn io_err(p: &Path, e: std::io::Error) -> Error {
    Error::Invalid(format!("{}: {e}", p.display()))
}

/// Reads `dir` as a tenant of bundles, or as the one bundle `bundle`.
pub fn read_folder(dir: &Path, bundle: Option<&str>) -> Result<FolderRead, Error> {
    let meta = fs::metadata(dir).map_err(|e| io_err(dir, e))?;
    if !meta.is_dir() {
        return Err(Error::Invalid(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let mut out = FolderRead::default();
    match bundle {
        Some(b) => {
            validate::bundle_name(b)?;
            read_bundle(dir, b, &mut out)?;
        }
        None => {
            let mut entries = list(dir)?;
            entries.sort();
            for (name, path, kind) in entries {
                if name.starts_with('.') {
                    continue;
                }
                match kind {
                    Kind::Dir => {
                        if !holds_documents(&path)? {
                            continue;
                        }
                        if let Err(e) = validate::bundle_name(&name) {
                            return Err(Error::Invalid(format!(
                                "{} (import the folder with --bundle to use it as one bundle)",
                                e.message()
                            )));
                        }
                        read_bundle(&path, &name, &mut out)?;
                    }
                    Kind::File if validate::ends_with_md(&name) => out.warnings.push(format!(
                        "warn: {name}: not inside a bundle folder, ignored (use --bundle)"
                    )),
                    _ => {}
                }
            }
        }
    }
    check_names(
        out.docs
            .iter()
            .map(|d| (d.doc.bundle.as_str(), d.doc.path.as_str())),
    )?;
    out.docs
        .sort_by(|a, b| (&a.doc.bundle, &a.doc.path).cmp(&(&b.doc.bundle, &b.doc.path)));
    Ok(out)
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Dir,
    File,
    Other,
}

fn list(dir: &Path) -> Result<Vec<(String, PathBuf, Kind)>, Error> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir).map_err(|e| io_err(dir, e))? {
        let e = e.map_err(|e| io_err(dir, e))?;
        let path = e.path();
        let name = os_name(&path)?;
        // Symbolic links are not followed: file_type() does not traverse them.
        let ft = e.file_type().map_err(|e| io_err(&path, e))?;
        let kind = if ft.is_dir() {
            Kind::Dir
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        v.push((name, path, kind));
    }
    Ok(v)
}

/// Whether a folder holds any `.md` file outside dot-folders (for the bundle-name check).
fn holds_documents(dir: &Path) -> Result<bool, Error> {
    for (name, path, kind) in list(dir)? {
        if name.starts_with('.') {
            continue;
        }
        match kind {
            Kind::Dir if holds_documents(&path)? => return Ok(true),
            Kind::File if validate::ends_with_md(&name) => return Ok(true),
            _ => {}
        }
    }
    Ok(false)
}

fn read_bundle(dir: &Path, bundle: &str, out: &mut FolderRead) -> Result<(), Error> {
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, prefix)) = stack.pop() {
        for (name, path, kind) in list(&d)? {
            if name.starts_with('.') {
                continue;
            }
            let name = validate::nfc(&name);
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            match kind {
                Kind::Dir => stack.push((path, rel)),
                Kind::File if validate::ends_with_md(&name) => {
                    let rel = validate::document_path(&rel)?;
                    let bytes = fs::read(&path).map_err(|e| io_err(&path, e))?;
                    let text = String::from_utf8(bytes).map_err(|_| {
                        Error::Invalid(format!("{bundle}/{rel}: source must contain valid UTF-8"))
                    })?;
                    out.docs.push(ReadDoc {
                        doc: SourceDoc::new(bundle, rel, Arc::<str>::from(text)),
                        file: path,
                    });
                }
                _ => {}
            }
        }
    }
    Ok(())
}
