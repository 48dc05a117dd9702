//! Reading a folder of Markdown documents for `compile` and `import` (docs/import.md): the
//! walk and the file reads. What the folder means — a folder of bundles or one bundle, which
//! file is which document — is core's `folder::plan`, which the package and the notes page
//! call too.

use langonrock_core::compile::SourceDoc;
use langonrock_core::folder::{self, Entry, EntryKind, Layout, Options, WalkProblem};
use langonrock_core::Error;
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

/// What reading a folder gave.
#[derive(Debug)]
pub struct FolderRead {
    /// The documents, sorted by bundle, then path.
    pub docs: Vec<ReadDoc>,
    /// How the folder was read.
    pub layout: Layout,
    /// The decision in one line, for stderr (without its final `\n`).
    pub line: String,
}

/// An IO error's text for a message: lower-case, without the `(os error N)` tail.
pub fn io_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => s,
    }
}

fn cannot_read(p: &Path, e: &std::io::Error) -> Error {
    folder::walk_error(
        WalkProblem::Unreadable,
        &p.display().to_string(),
        &io_text(e),
    )
}

/// Checks that `dir` is a folder, with an error that names it and says what is wrong.
pub fn check_folder(dir: &Path) -> Result<(), Error> {
    let shown = dir.display().to_string();
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(folder::walk_error(WalkProblem::NotAFolder, &shown, "")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(folder::walk_error(WalkProblem::NotFound, &shown, ""))
        }
        Err(e) => Err(cannot_read(dir, &e)),
    }
}

/// How many files [`read_folder_with`] reads at once.
const READ_CHUNK: usize = 512;

/// One entry found by the walk: its relative path and kind. Its file is `dir` joined with
/// the path (built by the thread that reads it).
struct Found {
    rel: String,
    kind: EntryKind,
}

/// Lists every entry under `dir` (symbolic links not followed, hidden names skipped),
/// depth-first without recursion: a folder's entries, then each of its subfolders' in the
/// reverse of the order they were listed in. The root's subfolders are walked on every core
/// (core's `par`), each one's list in that same order, so the list is the same either way.
fn walk(dir: &Path) -> Result<Vec<Found>, Error> {
    let mut found = Vec::new();
    let mut subfolders = Vec::new();
    list(dir, String::new(), &mut found, &mut subfolders)?;
    subfolders.reverse();
    let below = langonrock_core::par::map(&subfolders, |(d, prefix)| {
        walk_below(d.clone(), prefix.clone())
    });
    for b in below {
        found.extend(b?);
    }
    Ok(found)
}

/// The entries below the folder `d` (whose relative path is `prefix`), in [`walk`]'s order.
fn walk_below(d: PathBuf, prefix: String) -> Result<Vec<Found>, Error> {
    let mut found = Vec::new();
    let mut stack = vec![(d, prefix)];
    let mut subfolders = Vec::new();
    while let Some((d, prefix)) = stack.pop() {
        list(&d, prefix, &mut found, &mut subfolders)?;
        stack.append(&mut subfolders);
    }
    Ok(found)
}

/// Appends the entries of the folder `d` (relative path `prefix`) to `found`, and its
/// subfolders, in the order listed, to `subfolders`.
fn list(
    d: &Path,
    prefix: String,
    found: &mut Vec<Found>,
    subfolders: &mut Vec<(PathBuf, String)>,
) -> Result<(), Error> {
    let entries = fs::read_dir(d).map_err(|e| cannot_read(d, &e))?;
    let rel_of = |name: &str| {
        let mut rel = String::with_capacity(prefix.len() + 1 + name.len());
        if !prefix.is_empty() {
            rel.push_str(&prefix);
            rel.push('/');
        }
        rel.push_str(name);
        rel
    };
    for e in entries {
        let e = e.map_err(|e| cannot_read(d, &e))?;
        let os = e.file_name();
        let lossy = os.to_string_lossy();
        if folder::hidden(&lossy) {
            // Reported, never entered: the plan leaves it out, and names it when the
            // folder holds nothing else.
            found.push(Found {
                rel: rel_of(&lossy),
                kind: EntryKind::Other,
            });
            continue;
        }
        let name = os.to_str().ok_or_else(|| {
            Error::Invalid(format!(
                "{}: file name is not valid UTF-8",
                e.path().display()
            ))
        })?;
        let rel = rel_of(name);
        // file_type() does not traverse a symbolic link.
        let ft = e.file_type().map_err(|err| cannot_read(&e.path(), &err))?;
        let kind = if ft.is_dir() {
            subfolders.push((e.path(), rel.clone()));
            EntryKind::Dir
        } else if ft.is_file() {
            EntryKind::File
        } else if ft.is_symlink() {
            EntryKind::Link
        } else {
            EntryKind::Other
        };
        found.push(Found { rel, kind });
    }
    Ok(())
}

/// Reads `dir` as core's folder plan decides, or as the one bundle `bundle`.
pub fn read_folder(dir: &Path, bundle: Option<&str>) -> Result<FolderRead, Error> {
    read_folder_with(dir, bundle, &mut |_, _| {})
}

/// What [`read_folder_then`] gives: the documents, each with what `then` made of it, in the
/// documents' order (sorted by bundle, then path), and how the folder was read.
#[derive(Debug)]
pub struct FolderDocs<T> {
    /// The documents and their results.
    pub docs: Vec<(SourceDoc, T)>,
    /// How the folder was read.
    pub layout: Layout,
    /// The decision in one line, for stderr (without its final `\n`).
    pub line: String,
}

/// [`read_folder`], giving each
/// document to `then(path, text)` on the thread that read it, while its bytes are fresh in
/// that core's cache (`compile` parses there); each result beside its document. The files'
/// paths are not kept (a path is built only for an error).
pub fn read_folder_then<T: Send>(
    dir: &Path,
    bundle: Option<&str>,
    then: impl Fn(&str, &str) -> T + Sync + Send,
) -> Result<FolderDocs<T>, Error> {
    let mut docs = Vec::new();
    // Nothing shows progress here: the files in one go, without a pause between chunks.
    let (layout, line) = read_folder_each(dir, bundle, None, &then, &mut |doc, _, done| {
        docs.push((doc, done))
    })?;
    Ok(FolderDocs { docs, layout, line })
}

/// [`read_folder_then`] with nothing to do per document, calling `progress(done, total)`
/// after each file read. No file is read when the plan refuses the folder.
pub fn read_folder_with(
    dir: &Path,
    bundle: Option<&str>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<FolderRead, Error> {
    let mut docs = Vec::new();
    let (layout, line) = read_folder_each(
        dir,
        bundle,
        Some(progress),
        &|_, _| (),
        &mut |doc, file, ()| docs.push(ReadDoc { doc, file: file() }),
    )?;
    Ok(FolderRead { docs, layout, line })
}

thread_local! {
    /// Each reading thread's buffer, kept from file to file.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The whole of `file`, given to `f` from the calling thread's buffer: one `open`, `read`s
/// until the end of the file, one `close`. (`fs::read` also asks the size of every file
/// first and allocates a buffer per file, which the text is then copied out of.)
fn with_file<T>(
    open: impl FnOnce() -> std::io::Result<fs::File>,
    f: impl FnOnce(&[u8]) -> T,
) -> std::io::Result<T> {
    use std::io::Read;
    let read = |buf: &mut Vec<u8>| -> std::io::Result<usize> {
        let mut handle = open()?;
        let mut n = 0;
        loop {
            if n == buf.len() {
                let more = buf.len().max(64 * 1024);
                buf.resize(buf.len() + more, 0);
            }
            match handle.read(&mut buf[n..]) {
                Ok(0) => return Ok(n),
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    };
    READ_BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let n = read(&mut buf)?;
            Ok(f(&buf[..n]))
        }
        // Only if `f` itself read a file on this thread: a buffer of its own.
        Err(_) => {
            let mut buf = Vec::new();
            let n = read(&mut buf)?;
            Ok(f(&buf[..n]))
        }
    })
}

/// The folders of a walk, each opened once (Linux, `O_PATH`), so that a file is opened
/// relative to its folder: the kernel then looks up one name per file instead of every
/// folder on its path (20,040 files at 20,000 concepts). A folder that cannot be opened so,
/// and any failure opening a file in it, fall back to opening the file by its path: an error
/// is always the one that open gives. Closed when dropped.
struct Folders {
    #[cfg(target_os = "linux")]
    fds: std::collections::HashMap<String, std::os::fd::OwnedFd>,
}

impl Folders {
    #[cfg(target_os = "linux")]
    fn new(dir: &Path, found: &[Found]) -> Folders {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut fds = std::collections::HashMap::new();
        let mut add = |rel: &str, path: &Path| {
            if let Ok(fd) = rustix::fs::open(path, flags, Mode::empty()) {
                fds.insert(rel.to_string(), fd);
            }
        };
        add("", dir);
        for f in found.iter().filter(|f| f.kind == EntryKind::Dir) {
            add(&f.rel, &dir.join(&f.rel));
        }
        Folders { fds }
    }

    #[cfg(not(target_os = "linux"))]
    fn new(_dir: &Path, _found: &[Found]) -> Folders {
        Folders {}
    }

    /// Opens the file `file`, whose path relative to the walked folder is `rel`.
    #[cfg(target_os = "linux")]
    fn open(&self, rel: &str, file: &Path) -> std::io::Result<fs::File> {
        use rustix::fs::{Mode, OFlags};
        let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if let Some(fd) = self.fds.get(folder) {
            let flags = OFlags::RDONLY | OFlags::CLOEXEC;
            if let Ok(f) = rustix::fs::openat(fd, name, flags, Mode::empty()) {
                return Ok(fs::File::from(f));
            }
        }
        fs::File::open(file)
    }

    #[cfg(not(target_os = "linux"))]
    fn open(&self, _rel: &str, file: &Path) -> std::io::Result<fs::File> {
        fs::File::open(file)
    }
}

/// How [`read_folder_each`] hands a caller a document's path on disk: built only when called.
type FileOf<'a> = &'a dyn Fn() -> PathBuf;

/// Walks `dir`, plans it and reads the plan's documents, giving each to `keep(document,
/// file, result of then)` in the plan's order; `file()` builds the document's path on disk
/// (only the callers that keep it pay for it).
fn read_folder_each<T: Send>(
    dir: &Path,
    bundle: Option<&str>,
    mut progress: Option<&mut dyn FnMut(usize, usize)>,
    then: &(dyn Fn(&str, &str) -> T + Sync),
    keep: &mut dyn FnMut(SourceDoc, FileOf<'_>, T),
) -> Result<(Layout, String), Error> {
    check_folder(dir)?;
    let found = walk(dir)?;
    let canonical = fs::canonicalize(dir).map_err(|e| cannot_read(dir, &e))?;
    let name = canonical.file_name().and_then(|n| n.to_str());
    let entries: Vec<Entry<'_>> = found
        .iter()
        .map(|f| Entry {
            path: &f.rel,
            kind: f.kind,
        })
        .collect();
    let shown = dir.display().to_string();
    let plan = folder::plan(
        &entries,
        &Options {
            bundle,
            name,
            shown: &shown,
        },
    )?;
    drop(entries);
    let total = plan.documents.len();
    let folders = Folders::new(dir, &found);
    // Files are read a chunk at a time, the chunk's files on every core (core's `par`), so
    // progress still moves while a large folder is read (all of them as one chunk when no
    // progress is shown); the first failure in the plan's order is the one reported, as
    // when reading one file after another.
    let chunk_len = if progress.is_some() {
        READ_CHUNK
    } else {
        total.max(1)
    };
    let mut planned = plan.documents.into_iter();
    let mut done = 0;
    loop {
        let chunk: Vec<_> = planned.by_ref().take(chunk_len).collect();
        if chunk.is_empty() {
            break;
        }
        let texts = langonrock_core::par::map(&chunk, |d| {
            let rel = &found[d.entry].rel;
            let text = with_file(
                || folders.open(rel, &dir.join(rel)),
                |bytes| folder::source_text(&d.bundle, &d.path, bytes).map(Arc::<str>::from),
            )
            .map_err(|e| cannot_read(&dir.join(rel), &e))??;
            let result = then(&d.path, &text);
            Ok::<_, Error>((text, result))
        });
        for (d, text) in chunk.into_iter().zip(texts) {
            let (text, result) = text?;
            let entry = d.entry;
            keep(
                SourceDoc::new(d.bundle, d.path, text),
                &|| dir.join(&found[entry].rel),
                result,
            );
            done += 1;
            if let Some(progress) = progress.as_mut() {
                progress(done, total);
            }
        }
    }
    // The walk's list (a path a file, allocated on the reading threads) is freed beside
    // what the caller does next, not before it.
    // (Without a thread for it, here.)
    #[cfg(feature = "parallel")]
    let _ = std::thread::Builder::new().spawn(move || drop(found));
    Ok((plan.layout, plan.line))
}
