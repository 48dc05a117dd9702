//! How a folder on disk becomes documents (docs/import.md): the one rule for the native
//! `compile` and `import`, the package's `importFolder` and the notes page's folder import.
//!
//! [`plan`] is a pure function of what a host found in the folder: the relative path and
//! kind of every entry, the folder's own name and the `--bundle` option. It decides whether
//! the folder is a folder of bundles or one bundle, says so in one line, maps every
//! document to its `(bundle, path)` and refuses, naming the reason, a folder that has
//! nothing to import. The host walks the folder without following symbolic links and
//! without descending into names for which [`hidden`] holds (it reports those names
//! themselves, so a refusal can say why), then reads the planned files.

use crate::compile::check_sorted_names;
use crate::error::{Error, Result};
use crate::validate;

/// The kind of one entry a host found while walking a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A symbolic link, to anything (never followed).
    Link,
    /// A directory. Hosts may report directories or leave them out: a document's path
    /// implies its folders. A reported directory only tells an empty folder from one that
    /// holds other things.
    Dir,
    /// Anything else (a FIFO, a socket, a device).
    Other,
}

/// One entry of the folder: its path relative to the folder, with `/` between segments,
/// as the file system spells it (before NFC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The relative path.
    pub path: &'a str,
    /// What it is.
    pub kind: EntryKind,
}

/// What the host knows about the folder besides its entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// `--bundle <b>`: the whole folder is bundle `b`.
    pub bundle: Option<&'a str>,
    /// The folder's own name (the last segment of its canonical path), which names the
    /// bundle of a folder that is one bundle. `None` when it has none (a file-system root).
    pub name: Option<&'a str>,
    /// The folder as the user wrote it, for messages.
    pub shown: &'a str,
}

/// How the folder maps to bundles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// Each immediate subfolder that holds documents is one bundle of that name.
    Bundles,
    /// The whole folder is one bundle.
    OneBundle {
        /// The bundle's name.
        bundle: String,
        /// `true` when `--bundle` named it; `false` when the folder's contents decided.
        chosen: bool,
    },
}

/// One document to read: the entry it comes from and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedDoc {
    /// The index of its entry in the host's list.
    pub entry: usize,
    /// The bundle.
    pub bundle: String,
    /// The bundle-relative path, NFC, validated (`validate::document_path`).
    pub path: String,
}

/// The plan for one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The layout decided.
    pub layout: Layout,
    /// The bundles, sorted.
    pub bundles: Vec<String>,
    /// The documents, sorted by bundle, then path.
    pub documents: Vec<PlannedDoc>,
    /// The decision in one line (no final `\n`), for the user to read before the commit:
    /// `reading <folder> as …`.
    pub line: String,
}

/// Whether a host skips an entry of this name while walking: names that start with `.`
/// (`.git`, `.obsidian`, editor files) are never read, at any depth.
pub fn hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// The stems of files that a repository keeps at its root for people, not as knowledge
/// (compared without case, with a `.md` extension). At the root of a folder of bundles
/// they are left out instead of making the folder one bundle; inside a bundle they are
/// documents like any other.
const REPOSITORY_FILES: [&str; 11] = [
    "readme",
    "license",
    "licence",
    "copying",
    "notice",
    "changelog",
    "changes",
    "contributing",
    "code_of_conduct",
    "security",
    "authors",
];

fn repository_file(name: &str) -> bool {
    let stem = &name[..name.len().saturating_sub(3)];
    REPOSITORY_FILES
        .iter()
        .any(|r| stem.eq_ignore_ascii_case(r))
}

fn is_hidden_path(path: &str) -> bool {
    path.split('/').any(hidden)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A list of names for a message: the first three, then how many more.
fn some_of(names: &[&str]) -> String {
    let mut s = names.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    if names.len() > 3 {
        s.push_str(&format!(" and {} more", names.len() - 3));
    }
    s
}

/// The bundle name for a folder that is one bundle: its own name when that is a valid
/// bundle name, else that name with each run of other characters turned into `-` (cut to
/// 64 characters), so `My Notes` gives `My-Notes`.
pub fn bundle_name_for(folder: &str) -> Option<String> {
    if validate::bundle_name(folder).is_ok() {
        return Some(folder.to_string());
    }
    let mut s = String::new();
    for c in folder.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            s.push(c);
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches(|c| c == '-' || c == '_');
    let s: String = s.chars().take(64).collect();
    let s = s.trim_end_matches(['-', '_']).to_string();
    validate::bundle_name(&s).is_ok().then_some(s)
}

/// Decides how the folder maps to bundles and plans its documents (docs/import.md):
///
/// 1. With `--bundle <b>`, the folder is bundle `b`.
/// 2. A folder with Markdown at its root (`index.md` included) is one bundle, named after
///    the folder. Repository files at the root (`README.md`, `LICENSE.md`, …) do not count
///    for this when subfolders hold documents.
/// 3. A folder whose subfolders hold documents, every one of them named as a bundle can
///    be, is a folder of bundles; repository files at its root are left out, and named in
///    the line. When a subfolder's name is not a bundle name, the folder is one bundle.
/// 4. A folder with nothing to import is refused, with the reason.
///
/// Every document path and bundle name must be valid (`validate`), and paths unique ignoring
/// case; the first failure refuses the whole folder.
pub fn plan<'e>(entries: &[Entry<'e>], opts: &Options<'_>) -> Result<Plan> {
    let shown = opts.shown;
    // The documents: `.md` files outside hidden names; (entry, path) in input order.
    let docs: Vec<(usize, &str)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.kind == EntryKind::File && validate::ends_with_md(e.path) && !is_hidden_path(e.path)
        })
        .map(|(i, e)| (i, e.path))
        .collect();
    if docs.is_empty() {
        return Err(nothing_to_import(entries, opts));
    }
    let links = sorted_paths(entries, |e| {
        e.kind == EntryKind::Link && !is_hidden_path(e.path)
    });
    let at_root = |p: &str| !p.contains('/');
    let mut root_docs: Vec<&str> = docs.iter().map(|d| d.1).filter(|p| at_root(p)).collect();
    root_docs.sort_unstable();
    let sub_docs = docs.len() - root_docs.len();
    let root_notes: Vec<&str> = root_docs
        .iter()
        .copied()
        .filter(|p| !repository_file(p))
        .collect();
    let top = |p: &'e str| p.split('/').next().unwrap_or(p);
    let mut subfolders: Vec<&str> = docs
        .iter()
        .filter(|d| !at_root(d.1))
        .map(|d| top(d.1))
        .collect();
    subfolders.sort_unstable();
    subfolders.dedup();
    let bad_subfolder = subfolders
        .iter()
        .find(|s| validate::bundle_name(s).is_err());

    // The decision, and why.
    let (layout, why) = if let Some(b) = opts.bundle {
        validate::bundle_name(b)?;
        (
            Layout::OneBundle {
                bundle: b.to_string(),
                chosen: true,
            },
            " (--bundle)".to_string(),
        )
    } else {
        let nav = root_docs.iter().find(|p| validate::is_navigation(p));
        let why = if let Some(nav) = nav {
            Some(format!("it has {nav} at its root"))
        } else if !root_notes.is_empty() || sub_docs == 0 {
            Some(format!(
                "it has Markdown files at its root ({})",
                some_of(&root_docs)
            ))
        } else {
            bad_subfolder.map(|s| {
                format!("its subfolder \"{s}\" is not a bundle name, so it is no folder of bundles")
            })
        };
        match why {
            Some(why) => {
                let name = opts.name.ok_or_else(|| {
                    Error::Invalid(format!(
                        "{shown} has no name to give its bundle: import it with --bundle <name>"
                    ))
                })?;
                let bundle = bundle_name_for(name).ok_or_else(|| {
                    Error::Invalid(format!(
                        "cannot name a bundle after the folder \"{name}\": import it with --bundle <name>"
                    ))
                })?;
                let renamed = if bundle == name {
                    String::new()
                } else {
                    format!(" (named after \"{name}\")")
                };
                (
                    Layout::OneBundle {
                        bundle,
                        chosen: false,
                    },
                    format!("{renamed}: {why}; --bundle <name> names it"),
                )
            }
            None => (Layout::Bundles, String::new()),
        }
    };

    // Each document's bundle and path depend on its own path alone: on every core
    // (docs/compile.md §12), the first refusal in the walk's order.
    let planned = crate::par::map(&docs, |&(entry, p)| {
        let (bundle, rel) = match &layout {
            Layout::OneBundle { bundle, .. } => (bundle.clone(), p),
            Layout::Bundles => match p.split_once('/') {
                Some((b, rest)) => (b.to_string(), rest),
                None => return Ok(None),
            },
        };
        let path = validate::document_path(rel)?;
        Ok::<_, Error>(Some(PlannedDoc {
            entry,
            bundle,
            path,
        }))
    });
    let mut documents = Vec::with_capacity(docs.len());
    let mut left_out: Vec<&str> = Vec::new();
    for (d, &(_, p)) in planned.into_iter().zip(&docs) {
        match d? {
            Some(d) => documents.push(d),
            None => left_out.push(p),
        }
    }
    // On every core, unstable: two documents with one key are refused just below whatever
    // their order (docs/compile.md §12).
    crate::par::sort_unstable_by(&mut documents, |a, b| {
        (&a.bundle, &a.path).cmp(&(&b.bundle, &b.path))
    });
    // Every path came out of `document_path` above, and they are sorted.
    let names: Vec<(&str, &str)> = documents
        .iter()
        .map(|d| (d.bundle.as_str(), d.path.as_str()))
        .collect();
    check_sorted_names(&names)?;
    let mut bundles: Vec<String> = Vec::new();
    for d in &documents {
        if bundles.last() != Some(&d.bundle) {
            bundles.push(d.bundle.clone());
        }
    }

    left_out.sort_unstable();
    let mut line = match &layout {
        Layout::OneBundle { bundle, .. } => {
            format!("reading {shown} as one bundle \"{bundle}\"{why}")
        }
        Layout::Bundles => format!(
            "reading {shown} as {}, one per subfolder",
            plural(bundles.len(), "bundle", "bundles")
        ),
    };
    if !left_out.is_empty() {
        line.push_str(&format!("; left out at its root: {}", some_of(&left_out)));
    }
    if !links.is_empty() {
        line.push_str(&format!(
            "; {} not followed: {}",
            plural(links.len(), "symbolic link", "symbolic links"),
            some_of(&links)
        ));
    }
    Ok(Plan {
        layout,
        bundles,
        documents,
        line,
    })
}

/// What a host's walk can fail on, for [`walk_error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkProblem {
    /// The folder does not exist.
    NotFound,
    /// The path names a file.
    NotAFolder,
    /// A folder or file could not be read; the detail is the system's reason.
    Unreadable,
}

/// The host's walk errors, worded once for every host: `no such folder: <p>`, `<p> is a
/// file, not a folder: import the folder that holds it`, `cannot read <p>: <reason>`.
pub fn walk_error(problem: WalkProblem, path: &str, reason: &str) -> Error {
    Error::Invalid(match problem {
        WalkProblem::NotFound => format!("no such folder: {path}"),
        WalkProblem::NotAFolder => {
            format!("{path} is a file, not a folder: import the folder that holds it")
        }
        WalkProblem::Unreadable => format!("cannot read {path}: {reason}"),
    })
}

/// A planned document's bytes as its text, or the refusal of a file that is not UTF-8,
/// worded once for every host (docs/import.md): `<bundle>/<path>: source must contain
/// valid UTF-8`.
pub fn source_text<'a>(bundle: &str, path: &str, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes)
        .map_err(|_| Error::Invalid(format!("{bundle}/{path}: source must contain valid UTF-8")))
}

/// The paths of the entries that `keep` holds for, sorted (messages list them in order).
fn sorted_paths<'a>(entries: &[Entry<'a>], keep: impl Fn(&Entry<'a>) -> bool) -> Vec<&'a str> {
    let mut v: Vec<&str> = entries.iter().filter(|e| keep(e)).map(|e| e.path).collect();
    v.sort_unstable();
    v
}

/// The error for a folder without a document, naming why.
fn nothing_to_import(entries: &[Entry<'_>], opts: &Options<'_>) -> Error {
    let visible_of = |kind| move |e: &Entry<'_>| e.kind == kind && !is_hidden_path(e.path);
    let files = sorted_paths(entries, visible_of(EntryKind::File));
    let links = sorted_paths(entries, visible_of(EntryKind::Link));
    let hidden = sorted_paths(entries, |e| is_hidden_path(e.path));
    let why = if !files.is_empty() {
        format!(
            "{} and none ends in .md ({})",
            plural(files.len(), "file", "files"),
            some_of(&files)
        )
    } else if !links.is_empty() {
        format!(
            "only symbolic links, which import does not follow ({})",
            some_of(&links)
        )
    } else if !hidden.is_empty() {
        format!(
            "it holds only names starting with \".\", which import skips ({})",
            some_of(&hidden)
        )
    } else if entries.is_empty() {
        "the folder is empty".into()
    } else {
        "it holds no files".into()
    };
    Error::Invalid(format!("nothing to import in {}: {why}", opts.shown))
}

#[cfg(test)]
mod tests;
