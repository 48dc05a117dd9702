//! The files store (engine.md §9.2 rule 2): one tenant's records and head generations in
//! `<data>/tenants/<tenant>/`.
//!
//! - Every file is first written under a unique name in `staging/` and fsynced. A record is
//!   then renamed into place and its directory fsynced. A put of an existing record only
//!   sets its modification time, which is its put time (§10.6).
//! - The head is `heads/<g>` with the greatest generation `g`. A swap hard-links the staged
//!   new head to `heads/<g+1>`, so two writers can never both win: the link fails when the
//!   name exists. No lock is needed for correctness.
//! - `heads/floor` holds the lowest generation collection keeps; a link below it lost a race
//!   with collection and is undone. `heads/hint` names a recent generation, so finding the
//!   head probes a few names instead of listing the directory.
//! - `writer.lock` is an OS file lock a process may hold from refresh to swap, so its own
//!   commits queue instead of conflicting.
//! - Nothing is created for a tenant before its first put, which is part of its first
//!   commit.

use langonrock_core::engine::{Key, KeyInfo, Kind, Store, StoreError, SwapOutcome};
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use langonrock_core::layout::{
    self, FLOOR, HEADS, HINT, LEGACY_HEAD, STAGING, TENANTS, WRITER_LOCK,
};
pub use langonrock_core::layout::{kind_dir, parse_generation, valid_name, KINDS};

/// A store failure with the file it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError(pub String);

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn io_error(what: &str, path: &Path, e: &io::Error) -> FileError {
    FileError(format!("{what} {}: {e}", path.display()))
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

fn unique_name(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let unique = format!(
        "{}-{}-{nanos}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    );
    layout::staging_name(tag, &unique)
}

/// Fsyncs a directory, so a rename or link inside it is durable. Platforms that cannot open
/// a directory as a file (Windows) skip it.
fn sync_dir(dir: &Path) -> io::Result<()> {
    if cfg!(windows) {
        return Ok(());
    }
    File::open(dir)?.sync_all()
}

fn read_opt(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The files of one tenant.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

/// A held `writer.lock`; dropping it releases the lock.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl FileStore {
    /// The store of `tenant` under the data root `data`. Nothing is created.
    pub fn new(data: &Path, tenant: &str) -> FileStore {
        FileStore {
            dir: data.join(TENANTS).join(tenant),
        }
    }

    /// The tenant directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn heads(&self) -> PathBuf {
        self.dir.join(HEADS)
    }

    fn staging(&self) -> PathBuf {
        self.dir.join(STAGING)
    }

    /// The path of a record.
    pub fn record_path(&self, kind: Kind, name: &str) -> PathBuf {
        self.dir.join(kind_dir(kind)).join(name)
    }

    fn check_name(name: &str) -> Result<(), FileError> {
        if valid_name(name) {
            Ok(())
        } else {
            Err(FileError(format!("invalid record name \"{name}\"")))
        }
    }

    /// Creates the directories a commit needs (an existing one is not an error).
    fn ensure_dirs(&self, sub: &str) -> Result<(), FileError> {
        for d in [self.staging(), self.dir.join(sub)] {
            fs::create_dir_all(&d).map_err(|e| io_error("cannot create", &d, &e))?;
        }
        Ok(())
    }

    /// Writes `bytes` to a new file in `staging/` and fsyncs it; returns its path.
    fn stage(&self, bytes: &[u8], tag: &str) -> Result<PathBuf, FileError> {
        self.stage_with(bytes, tag, true)
    }

    /// Writes `bytes` to a new file in `staging/`, fsynced when `sync`; returns its path.
    fn stage_with(&self, bytes: &[u8], tag: &str, sync: bool) -> Result<PathBuf, FileError> {
        let path = self.staging().join(unique_name(tag));
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error("cannot create", &path, &e))?;
        let res = f
            .write_all(bytes)
            .and_then(|()| if sync { f.sync_all() } else { Ok(()) });
        if let Err(e) = res {
            let _ = fs::remove_file(&path);
            return Err(io_error("cannot write", &path, &e));
        }
        Ok(path)
    }

    /// Writes a file durably by staging and renaming it (used for records, `floor` and
    /// `hint`).
    fn write_file(&self, target: &Path, bytes: &[u8], tag: &str) -> Result<(), FileError> {
        let staged = self.stage(bytes, tag)?;
        if let Err(e) = fs::rename(&staged, target) {
            let _ = fs::remove_file(&staged);
            return Err(io_error("cannot rename into", target, &e));
        }
        let dir = target.parent().unwrap_or(&self.dir);
        sync_dir(dir).map_err(|e| io_error("cannot sync", dir, &e))
    }

    /// A record's bytes, or `None` when it is absent.
    pub fn get(&self, kind: Kind, name: &str) -> Result<Option<Vec<u8>>, FileError> {
        Self::check_name(name)?;
        let path = self.record_path(kind, name);
        read_opt(&path).map_err(|e| io_error("cannot read", &path, &e))
    }

    /// Stores a record durably. An existing record with the same bytes only gets its
    /// modification time (its put time) refreshed. Different bytes under an existing key
    /// are a corruption error, except for derived records, which are replaced.
    pub fn put(&self, kind: Kind, name: &str, bytes: &[u8]) -> Result<(), FileError> {
        Self::check_name(name)?;
        let path = self.record_path(kind, name);
        if kind != Kind::Derived {
            match read_opt(&path).map_err(|e| io_error("cannot read", &path, &e))? {
                Some(existing) if existing == bytes => {
                    // If collection moved the record aside meanwhile, write it anew.
                    match touch(&path) {
                        Ok(()) if path.exists() => return Ok(()),
                        Ok(()) => {}
                        Err(e) if e.kind() == ErrorKind::NotFound => {}
                        Err(e) => return Err(io_error("cannot touch", &path, &e)),
                    }
                }
                Some(_) => {
                    return Err(FileError(match layout::record_key(kind, name) {
                        Some(k) => layout::different_bytes(&k),
                        None => format!(
                            "database corruption: {}/{name} holds different bytes than its key",
                            kind_dir(kind)
                        ),
                    }))
                }
                None => {}
            }
        }
        self.ensure_dirs(kind_dir(kind))?;
        self.write_file(&path, bytes, "record")
    }

    /// Stores many records durably with one flush: every new record is staged unsynced,
    /// then the staged bytes are made durable together (`syncfs` on Linux, one fsync per file
    /// elsewhere), renamed into place, and each record directory is fsynced once. Existing
    /// records follow [`FileStore::put`]. On error nothing is referenced yet, so what was
    /// renamed is unreachable garbage for collection.
    pub fn put_many(&self, items: &[(Kind, String, &[u8])]) -> Result<(), FileError> {
        let mut fresh: Vec<(Kind, PathBuf, &[u8])> = Vec::new();
        for &(kind, ref name, bytes) in items {
            Self::check_name(name)?;
            let path = self.record_path(kind, name);
            if kind != Kind::Derived && path.exists() {
                // Same checks as a single put (refresh, corruption, collected meanwhile).
                self.put(kind, name, bytes)?;
                continue;
            }
            fresh.push((kind, path, bytes));
        }
        if fresh.is_empty() {
            return Ok(());
        }
        let mut staged: Vec<(PathBuf, PathBuf)> = Vec::with_capacity(fresh.len());
        let cleanup = |staged: &[(PathBuf, PathBuf)]| {
            for (s, _) in staged {
                let _ = fs::remove_file(s);
            }
        };
        for (kind, path, bytes) in &fresh {
            if let Err(e) = self.ensure_dirs(kind_dir(*kind)) {
                cleanup(&staged);
                return Err(e);
            }
            match self.stage_with(bytes, "record", false) {
                Ok(s) => staged.push((s, path.clone())),
                Err(e) => {
                    cleanup(&staged);
                    return Err(e);
                }
            }
        }
        if let Err(e) = self.sync_staged(staged.iter().map(|(s, _)| s.as_path())) {
            cleanup(&staged);
            return Err(e);
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for (i, (s, target)) in staged.iter().enumerate() {
            if let Err(e) = fs::rename(s, target) {
                cleanup(&staged[i..]);
                return Err(io_error("cannot rename into", target, &e));
            }
            let dir = target.parent().unwrap_or(&self.dir).to_path_buf();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        for dir in &dirs {
            sync_dir(dir).map_err(|e| io_error("cannot sync", dir, &e))?;
        }
        Ok(())
    }

    /// Makes staged files durable: one `syncfs` of their file system on Linux, or an fsync
    /// of each file elsewhere.
    fn sync_staged<'a>(&self, files: impl Iterator<Item = &'a Path>) -> Result<(), FileError> {
        #[cfg(target_os = "linux")]
        {
            let _ = files;
            let staging = self.staging();
            let dir = File::open(&staging).map_err(|e| io_error("cannot open", &staging, &e))?;
            rustix::fs::syncfs(&dir)
                .map_err(|e| io_error("cannot sync", &staging, &io::Error::from(e)))
        }
        #[cfg(not(target_os = "linux"))]
        {
            for f in files {
                File::open(f)
                    .and_then(|h| h.sync_all())
                    .map_err(|e| io_error("cannot sync", f, &e))?;
            }
            Ok(())
        }
    }

    /// The generations present in `heads/`, listed.
    fn list_generations(&self) -> Result<Vec<u64>, FileError> {
        let heads = self.heads();
        let rd = match fs::read_dir(&heads) {
            Ok(rd) => rd,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("cannot list", &heads, &e)),
        };
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| io_error("cannot list", &heads, &e))?;
            if let Some(g) = entry.file_name().to_str().and_then(parse_generation) {
                out.push(g);
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    fn read_number(&self, name: &str) -> Result<Option<u64>, FileError> {
        let path = self.heads().join(name);
        Ok(read_opt(&path)
            .map_err(|e| io_error("cannot read", &path, &e))?
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| parse_generation(&s)))
    }

    fn exists(&self, g: u64) -> Result<bool, FileError> {
        let path = self.heads().join(layout::generation_name(g));
        match fs::symlink_metadata(&path) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_error("cannot stat", &path, &e)),
        }
    }

    /// The newest generation, or 0 when there is no head: probe upward from the hint, and
    /// list `heads/` only when the hint is missing or names a collected generation.
    pub fn head_generation(&self) -> Result<u64, FileError> {
        let start = match self.read_number(HINT)? {
            Some(h) if self.exists(h)? => h,
            _ => match self.list_generations()?.last() {
                Some(&g) => g,
                None => return Ok(0),
            },
        };
        let mut g = start;
        while self.exists(layout::next_generation(g))? {
            g = layout::next_generation(g);
        }
        Ok(g)
    }

    /// Whether the head may have moved past generation `g`: every swap after `g` links
    /// `heads/<g+1>` first, so while that name is absent the head is still `g`'s. One
    /// `stat`, for a server that checks before each read (an error counts as moved).
    pub fn moved_past(&self, g: u64) -> bool {
        self.exists(g + 1).unwrap_or(true)
    }

    /// The head record's bytes and its generation, or `None` for a tenant without a head.
    pub fn read_head_at(&self) -> Result<Option<(u64, Vec<u8>)>, FileError> {
        // A generation can be collected between finding and reading it: look again.
        for _ in 0..8 {
            let g = self.head_generation()?;
            if g == 0 {
                return Ok(None);
            }
            let path = self.heads().join(layout::generation_name(g));
            if let Some(b) = read_opt(&path).map_err(|e| io_error("cannot read", &path, &e))? {
                return Ok(Some((g, b)));
            }
        }
        Err(FileError(
            "cannot read the head: generations keep disappearing".into(),
        ))
    }

    /// The head record's bytes, or `None` for a tenant without a head.
    pub fn read_head(&self) -> Result<Option<Vec<u8>>, FileError> {
        Ok(self.read_head_at()?.map(|(_, b)| b))
    }

    /// Replaces the head with `new` if it still equals `expected` (`None`: no head).
    pub fn swap_head(&self, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        let current = match self.read_head_at() {
            Ok(c) => c,
            Err(e) => return SwapOutcome::Failed(e.0),
        };
        let g = match (&current, expected) {
            (None, None) => 0,
            (Some((g, bytes)), Some(exp)) if bytes.as_slice() == exp => *g,
            _ => return SwapOutcome::Conflict,
        };
        if let Err(e) = self.ensure_dirs(HEADS) {
            return SwapOutcome::Failed(e.0);
        }
        let staged = match self.stage(new, "head") {
            Ok(p) => p,
            Err(e) => return SwapOutcome::Failed(e.0),
        };
        let next = layout::next_generation(g);
        let target = self.heads().join(layout::generation_name(next));
        let linked = fs::hard_link(&staged, &target);
        let _ = fs::remove_file(&staged);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => return SwapOutcome::Conflict,
            Err(e) => {
                return SwapOutcome::Indeterminate(format!("cannot link {}: {e}", target.display()))
            }
        }
        if let Err(e) = sync_dir(&self.heads()) {
            return SwapOutcome::Indeterminate(format!(
                "cannot sync {}: {e}",
                self.heads().display()
            ));
        }
        // A name below the floor was free only because collection removed it.
        match self.read_number(FLOOR) {
            Ok(floor) if layout::lost_to_collection(next, floor) => {
                let _ = fs::remove_file(&target);
                return SwapOutcome::Conflict;
            }
            Ok(_) => {}
            Err(e) => return SwapOutcome::Indeterminate(e.0),
        }
        // The hint only speeds up the next lookup; failing to write it changes nothing.
        let _ = self.write_file(
            &self.heads().join(HINT),
            layout::generation_name(next).as_bytes(),
            HINT,
        );
        SwapOutcome::Swapped
    }

    /// Raises `heads/floor` to `floor` (never lowers it), durably.
    pub fn write_floor(&self, floor: u64) -> Result<(), FileError> {
        let Some(floor) = layout::raised_floor(floor, self.read_number(FLOOR)?) else {
            return Ok(());
        };
        self.ensure_dirs(HEADS)?;
        self.write_file(
            &self.heads().join(FLOOR),
            layout::generation_name(floor).as_bytes(),
            FLOOR,
        )
    }

    /// Removes the head generations below `floor` (after [`FileStore::write_floor`]).
    pub fn remove_generations_below(&self, floor: u64) -> Result<usize, FileError> {
        let mut n = 0;
        for g in self.list_generations()? {
            if layout::collectable_generation(g, floor) {
                let path = self.heads().join(layout::generation_name(g));
                match fs::remove_file(&path) {
                    Ok(()) => n += 1,
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(e) => return Err(io_error("cannot remove", &path, &e)),
                }
            }
        }
        Ok(n)
    }

    /// Every record with its put time (modification time) and size.
    pub fn keys(&self) -> Result<Vec<(Kind, String, SystemTime, u64)>, FileError> {
        let mut out = Vec::new();
        for kind in KINDS {
            let dir = self.dir.join(kind_dir(kind));
            let rd = match fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error("cannot list", &dir, &e)),
            };
            for entry in rd {
                let entry = entry.map_err(|e| io_error("cannot list", &dir, &e))?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                if !valid_name(&name) {
                    continue;
                }
                let meta = entry
                    .metadata()
                    .map_err(|e| io_error("cannot stat", &entry.path(), &e))?;
                let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                out.push((kind, name, mtime, meta.len()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes a record if its put time is still before `before`, atomically against a
    /// concurrent put: the record is first moved into `staging/`, its time checked there,
    /// and moved back when a put refreshed it meanwhile. Returns the bytes freed.
    pub fn remove_if_older(
        &self,
        kind: Kind,
        name: &str,
        before: SystemTime,
    ) -> Result<Option<u64>, FileError> {
        Self::check_name(name)?;
        let path = self.record_path(kind, name);
        self.ensure_dirs(kind_dir(kind))?;
        let aside = self.staging().join(unique_name("collect"));
        match fs::rename(&path, &aside) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot move", &path, &e)),
        }
        let meta = fs::metadata(&aside).map_err(|e| io_error("cannot stat", &aside, &e))?;
        let recent = meta.modified().map_or(true, |t| t >= before);
        if recent {
            // A put that ran while the record was aside wrote it anew: keep that one.
            if let Err(e) = hard_link_or_keep(&aside, &path) {
                return Err(io_error("cannot restore", &path, &e));
            }
            let _ = fs::remove_file(&aside);
            return Ok(None);
        }
        fs::remove_file(&aside).map_err(|e| io_error("cannot remove", &aside, &e))?;
        Ok(Some(meta.len()))
    }

    /// Removes leftovers in `staging/` older than `before`; returns (files, bytes).
    pub fn clean_staging(&self, before: SystemTime) -> Result<(usize, u64), FileError> {
        let dir = self.staging();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok((0, 0)),
            Err(e) => return Err(io_error("cannot list", &dir, &e)),
        };
        let (mut n, mut bytes) = (0, 0);
        for entry in rd.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.modified().is_ok_and(|t| t < before) && fs::remove_file(entry.path()).is_ok() {
                n += 1;
                bytes += meta.len();
            }
        }
        Ok((n, bytes))
    }

    /// Takes the OS lock on `writer.lock`, creating the tenant directory if needed. It is
    /// taken only by a process about to commit, so it never creates a read-only tenant.
    pub fn lock_writer(&self) -> Result<WriterLock, FileError> {
        fs::create_dir_all(&self.dir).map_err(|e| io_error("cannot create", &self.dir, &e))?;
        let path = self.dir.join(WRITER_LOCK);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_error("cannot open", &path, &e))?;
        fs4::FileExt::lock(&file).map_err(|e| io_error("cannot lock", &path, &e))?;
        Ok(WriterLock { _file: file })
    }

    /// Whether the tenant directory exists at all.
    pub fn exists_on_disk(&self) -> bool {
        self.dir.is_dir()
    }

    /// Reads a whole file (for tests and verification of files outside the record kinds).
    pub fn read_path(path: &Path) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        File::open(path)?.read_to_end(&mut v)?;
        Ok(v)
    }
}

/// Milliseconds since the Unix epoch (the files store's time unit for put times).
pub use crate::clock::millis;

fn from_millis(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(ms)
}

fn to_store_error(e: FileError) -> StoreError {
    if e.0.starts_with("database corruption: ") {
        StoreError::Corrupt(e.0)
    } else {
        StoreError::Failed(e.0)
    }
}

/// The files store of one data root: the engine's [`Store`] over
/// `<data>/tenants/<tenant>/` (engine.md §9.2 rule 2).
#[derive(Debug, Clone)]
pub struct Files {
    data: PathBuf,
}

impl Files {
    /// The store of the data root `data`. Nothing is created.
    pub fn new(data: impl Into<PathBuf>) -> Files {
        Files { data: data.into() }
    }

    /// The data root.
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// One tenant's files.
    pub fn tenant(&self, tenant: &str) -> FileStore {
        FileStore::new(&self.data, tenant)
    }

    /// The tenants that have a directory under `<data>/tenants/`, sorted.
    pub fn tenants(&self) -> Result<Vec<String>, StoreError> {
        let dir = self.data.join(TENANTS);
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::Failed(io_error("cannot list", &dir, &e).0)),
        };
        let mut out = Vec::new();
        for entry in rd {
            let entry =
                entry.map_err(|e| StoreError::Failed(io_error("cannot list", &dir, &e).0))?;
            if let Some(name) = entry.file_name().to_str() {
                if entry.path().is_dir()
                    && langonrock_core::validate::tenant_id(name).as_deref() == Ok(name)
                {
                    out.push(name.to_string());
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

impl Store for Files {
    fn read_head(&mut self, tenant: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let t = self.tenant(tenant);
        match t.read_head().map_err(to_store_error)? {
            Some(h) => Ok(Some(h)),
            // The reference kept its head in `HEAD`: hand its bytes to the engine, which
            // refuses any head that is not its own format.
            None => read_opt(&t.dir().join(LEGACY_HEAD)).map_err(|e| {
                StoreError::Failed(io_error("cannot read", &t.dir().join(LEGACY_HEAD), &e).0)
            }),
        }
    }

    fn get_many(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let t = self.tenant(tenant);
        keys.iter()
            .map(|k| t.get(k.kind, &k.digest.to_hex()).map_err(to_store_error))
            .collect()
    }

    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        self.tenant(tenant)
            .put(key.kind, &key.digest.to_hex(), bytes)
            .map_err(to_store_error)
    }

    fn put_many(&mut self, tenant: &str, records: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        let items: Vec<(Kind, String, &[u8])> = records
            .iter()
            .map(|(k, b)| (k.kind, k.digest.to_hex(), b.as_slice()))
            .collect();
        self.tenant(tenant).put_many(&items).map_err(to_store_error)
    }

    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        self.tenant(tenant).swap_head(expected, new)
    }

    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError> {
        let list = self.tenant(tenant).keys().map_err(to_store_error)?;
        Ok(list
            .into_iter()
            .filter_map(|(kind, name, mtime, size)| {
                Some(KeyInfo {
                    key: layout::record_key(kind, &name)?,
                    put_time: millis(mtime),
                    size,
                })
            })
            .collect())
    }

    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        let t = self.tenant(tenant);
        if !t.exists_on_disk() {
            return Ok(Vec::new());
        }
        let before_t = from_millis(before);
        let mut removed = Vec::new();
        for k in keys {
            if k.kind == Kind::Recovery {
                continue;
            }
            if t.remove_if_older(k.kind, &k.digest.to_hex(), before_t)
                .map_err(to_store_error)?
                .is_some()
            {
                removed.push(*k);
            }
        }
        // Older head generations: raise the floor to the current one first, so a writer
        // that links a collected name notices (engine.md §9.2 rule 2).
        let g = t.head_generation().map_err(to_store_error)?;
        if g > 1 {
            t.write_floor(g).map_err(to_store_error)?;
            t.remove_generations_below(g).map_err(to_store_error)?;
        }
        t.clean_staging(before_t).map_err(to_store_error)?;
        Ok(removed)
    }
}

/// Moves a record back from staging unless a concurrent put already wrote it anew.
fn hard_link_or_keep(from: &Path, to: &Path) -> io::Result<()> {
    match fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

fn touch(path: &Path) -> io::Result<()> {
    let f = OpenOptions::new().write(true).open(path)?;
    f.set_modified(SystemTime::now())
}

#[cfg(test)]
mod tests;
