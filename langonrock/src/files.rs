//! The files store (engine.md §9.2 rule 2, docs/records.md "Files layout"): one tenant's
//! records and head generations in `<data>/tenants/<tenant>/`, in the layout core's
//! `layout` and `pack` modules define for both runtimes.
//!
//! - Every file is first written under a unique name in `staging/` and fsynced, then renamed
//!   into place and its folder fsynced. A commit's records (sources, revisions, bundle and
//!   baseline records) are one pack in `packs/`; a derived or recovery record is a file of
//!   its own. Durability never asks for more than the files a commit wrote and the folders
//!   that name them (no `syncfs`).
//! - A file's modification time is the put time of the records it holds; a put of a record
//!   the store holds only refreshes it.
//! - The head is `heads/<g>` with the greatest generation `g`. A swap hard-links the staged
//!   new head to `heads/<g+1>`, so two writers can never both win: the link fails when the
//!   name exists. No lock is needed for correctness.
//! - `heads/floor` holds the lowest generation collection keeps; a link below it lost a race
//!   with collection and is undone. `heads/hint` names a recent generation, so finding the
//!   head probes a few names instead of listing the directory.
//! - `writer.lock` is an OS file lock a process may hold from refresh to swap, so its own
//!   commits queue instead of conflicting.
//! - The one-file-per-record folders of older data roots (`sources/`, `revisions/`,
//!   `records/`) are still read and collected, never written.
//! - Nothing is created for a tenant before its first put, which is part of its first
//!   commit.

mod packs;

use langonrock_core::bytes::Bytes;
use langonrock_core::engine::{Key, KeyInfo, Kind, Store, StoreError, SwapOutcome};
use langonrock_core::pack;
use packs::{PackFile, PackSet};
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use langonrock_core::layout::{
    self, FLOOR, HEADS, HINT, LEGACY_HEAD, PACKS, STAGING, TENANTS, WRITER_LOCK,
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

/// Fsyncs a directory, so a rename, link or new entry inside it is durable. Platforms that
/// cannot open a directory as a file (Windows) skip it.
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The files of one tenant.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
    packs: Arc<Mutex<PackSet>>,
}

/// A held `writer.lock` (none for a tenant that has no directory yet); dropping it releases
/// the lock.
#[derive(Debug)]
pub struct WriterLock {
    _file: Option<File>,
}

impl FileStore {
    /// The store of `tenant` under the data root `data`. Nothing is created.
    pub fn new(data: &Path, tenant: &str) -> FileStore {
        FileStore {
            dir: data.join(TENANTS).join(tenant),
            packs: Arc::default(),
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

    fn packs_dir(&self) -> PathBuf {
        self.dir.join(PACKS)
    }

    /// The path of a record kept in a file of its own: a derived or recovery record, or a
    /// record of the layout before packs.
    pub fn record_path(&self, key: &Key) -> PathBuf {
        self.dir.join(layout::record_path(key))
    }

    /// Creates the directories a commit needs (an existing one is not an error). A directory
    /// it creates is made durable in its parent, up to the first one that existed.
    fn ensure_dirs(&self, sub: &str) -> Result<(), FileError> {
        for d in [self.staging(), self.dir.join(sub)] {
            if d.is_dir() {
                continue;
            }
            let mut missing = Vec::new();
            let mut at = d.as_path();
            while !at.exists() {
                missing.push(at.to_path_buf());
                match at.parent() {
                    Some(p) => at = p,
                    None => break,
                }
            }
            fs::create_dir_all(&d).map_err(|e| io_error("cannot create", &d, &e))?;
            for m in missing.iter().rev() {
                if let Some(parent) = m.parent() {
                    // A relative data root of one component has the empty path as its
                    // parent: the working directory.
                    let parent = if parent.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        parent
                    };
                    sync_dir(parent).map_err(|e| io_error("cannot sync", parent, &e))?;
                }
            }
        }
        Ok(())
    }

    /// Writes `bytes` (given in pieces) to a new file in `staging/` and fsyncs it; returns
    /// its path.
    fn stage(&self, pieces: &[&[u8]], tag: &str, sync: bool) -> Result<PathBuf, FileError> {
        let path = self.staging().join(unique_name(tag));
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io_error("cannot create", &path, &e))?;
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let mut w = BufWriter::with_capacity(total.clamp(1, 1 << 20), f);
        let res = pieces
            .iter()
            .try_for_each(|p| w.write_all(p))
            .and_then(|()| w.into_inner().map_err(|e| e.into_error()))
            .and_then(|f| if sync { f.sync_all() } else { Ok(()) });
        if let Err(e) = res {
            let _ = fs::remove_file(&path);
            return Err(io_error("cannot write", &path, &e));
        }
        Ok(path)
    }

    /// Writes a file durably by staging and renaming it, then fsyncing its folder when
    /// `durable` (a hint needs neither fsync: it only speeds up finding the head).
    fn write_file(
        &self,
        target: &Path,
        bytes: &[u8],
        tag: &str,
        durable: bool,
    ) -> Result<(), FileError> {
        let staged = self.stage(&[bytes], tag, durable)?;
        if let Err(e) = fs::rename(&staged, target) {
            let _ = fs::remove_file(&staged);
            return Err(io_error("cannot rename into", target, &e));
        }
        if !durable {
            return Ok(());
        }
        let dir = target.parent().unwrap_or(&self.dir);
        sync_dir(dir).map_err(|e| io_error("cannot sync", dir, &e))
    }

    fn pack_set(&self) -> Result<MutexGuard<'_, PackSet>, FileError> {
        let mut set = lock(&self.packs);
        set.ensure(&self.packs_dir())?;
        Ok(set)
    }

    /// Writes `records` as one pack, durably (the file, then `packs/`), and returns it.
    fn write_pack(&self, records: &[(Key, &[u8])]) -> Result<PackFile, FileError> {
        let lens: Vec<(Key, usize)> = records.iter().map(|(k, b)| (*k, b.len())).collect();
        let head = pack::head(&lens).map_err(FileError)?;
        self.ensure_dirs(PACKS)?;
        let mut pieces: Vec<&[u8]> = Vec::with_capacity(head.order.len() + 1);
        pieces.push(&head.bytes);
        pieces.extend(head.order.iter().map(|&i| records[i].1));
        let staged = self.stage(&pieces, "pack", true)?;
        let target = self.packs_dir().join(&head.name);
        if let Err(e) = fs::rename(&staged, &target) {
            let _ = fs::remove_file(&staged);
            return Err(io_error("cannot rename into", &target, &e));
        }
        let dir = self.packs_dir();
        sync_dir(&dir).map_err(|e| io_error("cannot sync", &dir, &e))?;
        PackFile::open(&dir, &head.name)?
            .ok_or_else(|| FileError(format!("{} vanished", target.display())))
    }

    /// A record's bytes, or `None` when it is absent.
    pub fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, FileError> {
        Ok(self.get_many(std::slice::from_ref(key))?.pop().flatten())
    }

    /// The bytes of each record, `None` for an absent one. A record not found where the
    /// store expected it makes it list `packs/` again before it says absent; when a pack
    /// failed its checks, an absent record of a pack's kind is reported as that corruption
    /// (the record may be in it).
    pub fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, FileError> {
        let mut set = self.pack_set()?;
        let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(keys.len());
        let mut missing: Vec<usize> = Vec::new();
        let mut legacy = Legacy::new(&self.dir);
        let found = set.find_many(keys);
        for (i, k) in keys.iter().enumerate() {
            if pack::packable(k.kind) {
                if let Some((p, e)) = found[i] {
                    out.push(Some(p.read(e)?));
                    continue;
                }
                if !legacy.has(k.kind) {
                    out.push(None);
                    missing.push(i);
                    continue;
                }
            }
            let path = self.record_path(k);
            match read_opt(&path).map_err(|e| io_error("cannot read", &path, &e))? {
                Some(b) => out.push(Some(b)),
                None => {
                    out.push(None);
                    if pack::packable(k.kind) {
                        missing.push(i);
                    }
                }
            }
        }
        if !missing.is_empty() {
            set.rescan(&self.packs_dir())?;
            for i in missing {
                match set.find(&keys[i]) {
                    Some((p, e)) => out[i] = Some(p.read(e)?),
                    None => {
                        if let Some(bad) = set.bad() {
                            return Err(FileError(bad.to_string()));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// [`FileStore::get_many`], handing the records out in place: a record of a pack is a
    /// range of the mapped pack, a record of its own file the mapped file (both are never
    /// written again once in place, so the mapping stays what it was).
    pub fn get_shared(&self, keys: &[Key]) -> Result<Vec<Option<Bytes>>, FileError> {
        let mut set = self.pack_set()?;
        let mut out: Vec<Option<Bytes>> = Vec::with_capacity(keys.len());
        let mut missing: Vec<usize> = Vec::new();
        let mut legacy = Legacy::new(&self.dir);
        let found = set.find_many(keys);
        for (i, k) in keys.iter().enumerate() {
            if pack::packable(k.kind) {
                if let Some((p, e)) = found[i] {
                    out.push(Some(p.shared(e)?));
                    continue;
                }
                if !legacy.has(k.kind) {
                    out.push(None);
                    missing.push(i);
                    continue;
                }
            }
            let got = map_opt(&self.record_path(k))?;
            if got.is_none() && pack::packable(k.kind) {
                missing.push(i);
            }
            out.push(got);
        }
        if !missing.is_empty() {
            set.rescan(&self.packs_dir())?;
            for i in missing {
                match set.find(&keys[i]) {
                    Some((p, e)) => out[i] = Some(p.shared(e)?),
                    None => {
                        if let Some(bad) = set.bad() {
                            return Err(FileError(bad.to_string()));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Stores a record durably (see [`FileStore::put_many`]).
    pub fn put(&self, key: &Key, bytes: &[u8]) -> Result<(), FileError> {
        self.put_many(&[(*key, bytes)])
    }

    /// Stores records durably. Sources, revisions and bundle records that the store does
    /// not hold yet become one new pack: staged, fsynced, renamed into `packs/`, `packs/`
    /// fsynced. A record it holds only gets the put time of its file refreshed (a record
    /// whose file was collected meanwhile is written anew). Different bytes under an existing
    /// key are a corruption error, except for derived records, which are replaced (each a
    /// file of its own, as recovery records are). When some tier of small packs is full, the
    /// new pack takes in their records and they are removed (`pack::to_merge`). On error
    /// nothing is referenced yet, so what was written is unreachable garbage for collection.
    pub fn put_many(&self, items: &[(Key, &[u8])]) -> Result<(), FileError> {
        let mut fresh: Vec<usize> = Vec::new();
        let mut touch: BTreeMap<String, (PathBuf, Vec<usize>)> = BTreeMap::new();
        let mut single: Vec<usize> = Vec::new();
        {
            let set = self.pack_set()?;
            let mut legacy = Legacy::new(&self.dir);
            for (i, (k, b)) in items.iter().enumerate() {
                if !pack::packable(k.kind) {
                    single.push(i);
                    continue;
                }
                if let Some((p, e)) = set.find(k) {
                    if p.read(e)? != *b {
                        return Err(FileError(layout::different_bytes(k)));
                    }
                    touch
                        .entry(p.name.clone())
                        .or_insert_with(|| (p.path.clone(), Vec::new()))
                        .1
                        .push(i);
                    continue;
                }
                if !legacy.has(k.kind) {
                    fresh.push(i);
                    continue;
                }
                // A record of the layout before packs.
                let path = self.record_path(k);
                match read_opt(&path).map_err(|e| io_error("cannot read", &path, &e))? {
                    Some(existing) if existing == *b => {
                        if !refreshed(&path)? {
                            fresh.push(i);
                        }
                    }
                    Some(_) => return Err(FileError(layout::different_bytes(k))),
                    None => fresh.push(i),
                }
            }
        }
        for (path, idxs) in touch.values() {
            if !refreshed(path)? {
                fresh.extend(idxs);
            }
        }
        if !fresh.is_empty() {
            self.add_pack(items, &fresh)?;
        }
        for i in single {
            self.put_single(&items[i].0, items[i].1)?;
        }
        Ok(())
    }

    /// Writes the records `items[fresh]` as a new pack, merging the small packs a full tier
    /// holds into it.
    fn add_pack(&self, items: &[(Key, &[u8])], fresh: &[usize]) -> Result<(), FileError> {
        let mut set = self.pack_set()?;
        let new_len: u64 = fresh
            .iter()
            .map(|&i| (pack::ENTRY + items[i].1.len()) as u64)
            .sum::<u64>()
            + pack::HEADER as u64;
        let known: Vec<Arc<PackFile>> = set.packs().cloned().collect();
        let lens: Vec<u64> = known.iter().map(|p| p.len).collect();
        let merging: Vec<Arc<PackFile>> = pack::to_merge(&lens, new_len)
            .into_iter()
            .map(|i| known[i].clone())
            .collect();
        let mut carried: Vec<(Key, Vec<u8>)> = Vec::new();
        let mut merged: Vec<&PackFile> = Vec::new();
        for p in &merging {
            // A pack removed meanwhile (collection) is simply not merged.
            match p.read_all() {
                Ok(r) => {
                    carried.extend(r);
                    merged.push(p);
                }
                Err(_) if !p.path.exists() => {}
                Err(e) => return Err(e),
            }
        }
        let mut all: Vec<(Key, &[u8])> = fresh.iter().map(|&i| items[i]).collect();
        all.extend(carried.iter().map(|(k, b)| (*k, b.as_slice())));
        let written = self.write_pack(&all)?;
        let name = written.name.clone();
        set.add(written);
        for p in merged {
            if p.name == name {
                continue;
            }
            // Its records are durable in the new pack; a removal lost to a crash leaves a
            // duplicate, never a gap.
            match fs::remove_file(&p.path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("cannot remove", &p.path, &e)),
            }
            set.forget(&p.name);
        }
        Ok(())
    }

    /// Puts a derived or recovery record: a file of its own, staged and renamed.
    fn put_single(&self, key: &Key, bytes: &[u8]) -> Result<(), FileError> {
        let path = self.record_path(key);
        if key.kind.is_content_addressed() {
            match read_opt(&path).map_err(|e| io_error("cannot read", &path, &e))? {
                Some(existing) if existing == bytes && refreshed(&path)? => return Ok(()),
                Some(existing) if existing != bytes => {
                    return Err(FileError(layout::different_bytes(key)))
                }
                _ => {}
            }
        }
        self.ensure_dirs(kind_dir(key.kind))?;
        self.write_file(&path, bytes, "record", true)
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
        let staged = match self.stage(&[new], "head", true) {
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
            false,
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
            true,
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

    /// Every record with its put time (the modification time of the file holding it; the
    /// latest when several packs hold it) and size, sorted by key. A pack that fails its
    /// checks fails the listing, so collection never works from a partial view.
    pub fn keys(&self) -> Result<Vec<(Key, SystemTime, u64)>, FileError> {
        let mut found: HashMap<Key, (SystemTime, u64)> = HashMap::new();
        {
            let mut set = lock(&self.packs);
            set.rescan(&self.packs_dir())?;
            if let Some(bad) = set.bad() {
                return Err(FileError(bad.to_string()));
            }
            for p in set.packs() {
                let mtime = match p.modified() {
                    Ok(t) => t,
                    Err(_) if !p.path.exists() => continue,
                    Err(e) => return Err(e),
                };
                for e in &p.entries {
                    let slot = found.entry(e.key).or_insert((mtime, u64::from(e.len)));
                    slot.0 = slot.0.max(mtime);
                }
            }
        }
        for kind in KINDS {
            let dir = self.dir.join(kind_dir(kind));
            let rd = match fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error("cannot list", &dir, &e)),
            };
            for entry in rd {
                let entry = entry.map_err(|e| io_error("cannot list", &dir, &e))?;
                let Some(key) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| layout::record_key(kind, n))
                else {
                    continue;
                };
                let meta = match entry.metadata() {
                    Ok(m) => m,
                    Err(e) if e.kind() == ErrorKind::NotFound => continue,
                    Err(e) => return Err(io_error("cannot stat", &entry.path(), &e)),
                };
                let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                let slot = found.entry(key).or_insert((mtime, meta.len()));
                slot.0 = slot.0.max(mtime);
            }
        }
        let mut out: Vec<(Key, SystemTime, u64)> =
            found.into_iter().map(|(k, (t, s))| (k, t, s)).collect();
        out.sort_by_key(|a| a.0);
        Ok(out)
    }

    /// Removes a file if its modification time is still before `before`, atomically against
    /// a concurrent put that refreshes it: the file is first moved into `staging/`, its time
    /// checked there, and moved back when a put refreshed it meanwhile. Returns its size
    /// when it was removed.
    fn remove_file_if_older(
        &self,
        path: &Path,
        before: SystemTime,
    ) -> Result<Option<u64>, FileError> {
        self.ensure_dirs(STAGING)?;
        let aside = self.staging().join(unique_name("collect"));
        match fs::rename(path, &aside) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot move", path, &e)),
        }
        let meta = fs::metadata(&aside).map_err(|e| io_error("cannot stat", &aside, &e))?;
        let recent = meta.modified().map_or(true, |t| t >= before);
        if recent {
            // A put that ran while the file was aside wrote it anew: keep that one.
            if let Err(e) = hard_link_or_keep(&aside, path) {
                return Err(io_error("cannot restore", path, &e));
            }
            let _ = fs::remove_file(&aside);
            return Ok(None);
        }
        fs::remove_file(&aside).map_err(|e| io_error("cannot remove", &aside, &e))?;
        Ok(Some(meta.len()))
    }

    /// Removes the records `keys` whose put time is still before `before`, atomically
    /// against concurrent puts. A record of its own file is removed with
    /// `FileStore::remove_file_if_older`. A pack holding records to remove is compacted:
    /// the records it keeps are first written as a new pack, then the old pack is removed in
    /// the same way (so a put that refreshed it keeps all of it). Returns the keys no file
    /// holds any more.
    pub fn remove(&self, keys: &[Key], before: SystemTime) -> Result<Vec<Key>, FileError> {
        let wanted: std::collections::HashSet<Key> = keys
            .iter()
            .filter(|k| k.kind != Kind::Recovery)
            .copied()
            .collect();
        let mut removed_from: HashMap<Key, bool> = HashMap::new();
        let candidates: Vec<Arc<PackFile>> = {
            let mut set = lock(&self.packs);
            set.rescan(&self.packs_dir())?;
            if let Some(bad) = set.bad() {
                return Err(FileError(bad.to_string()));
            }
            set.packs()
                .filter(|p| p.entries.iter().any(|e| wanted.contains(&e.key)))
                .cloned()
                .collect()
        };
        for p in candidates {
            let mtime = match p.modified() {
                Ok(t) => t,
                Err(_) if !p.path.exists() => continue,
                Err(e) => return Err(e),
            };
            let going: Vec<Key> = p
                .entries
                .iter()
                .filter(|e| wanted.contains(&e.key))
                .map(|e| e.key)
                .collect();
            if mtime >= before {
                for k in going {
                    removed_from.insert(k, false);
                }
                continue;
            }
            let kept: Vec<(Key, Vec<u8>)> = p
                .read_all()?
                .into_iter()
                .filter(|(k, _)| !wanted.contains(k))
                .collect();
            if !kept.is_empty() {
                let refs: Vec<(Key, &[u8])> =
                    kept.iter().map(|(k, b)| (*k, b.as_slice())).collect();
                let written = self.write_pack(&refs)?;
                lock(&self.packs).add(written);
            }
            let gone = self.remove_file_if_older(&p.path, before)?.is_some();
            lock(&self.packs).forget(&p.name);
            for k in going {
                let all = removed_from.entry(k).or_insert(true);
                *all &= gone;
            }
        }
        let dir = self.packs_dir();
        if dir.is_dir() {
            sync_dir(&dir).map_err(|e| io_error("cannot sync", &dir, &e))?;
        }
        // Records of their own files.
        for k in &wanted {
            let path = self.record_path(k);
            if path.exists() {
                let gone = self.remove_file_if_older(&path, before)?.is_some();
                let all = removed_from.entry(*k).or_insert(true);
                *all &= gone;
            }
        }
        // A pack not compacted (recent) still holds it; so may a pack written meanwhile.
        let set = {
            let mut set = lock(&self.packs);
            set.rescan(&self.packs_dir())?;
            set
        };
        let mut out: Vec<Key> = removed_from
            .into_iter()
            .filter(|(k, all)| *all && set.find(k).is_none() && !self.record_path(k).exists())
            .map(|(k, _)| k)
            .collect();
        out.sort();
        Ok(out)
    }

    /// Removes leftovers in `staging/` (`layout::collectable_staging`); returns (files,
    /// bytes).
    pub fn clean_staging(&self, before: SystemTime) -> Result<(usize, u64), FileError> {
        let dir = self.staging();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok((0, 0)),
            Err(e) => return Err(io_error("cannot list", &dir, &e)),
        };
        let (now, before) = (millis(SystemTime::now()), millis(before));
        let (mut n, mut bytes) = (0, 0);
        for entry in rd.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let name = entry.file_name();
            let modified = meta.modified().map_or(now, millis);
            if layout::collectable_staging(&name.to_string_lossy(), modified, before, now)
                && fs::remove_file(entry.path()).is_ok()
            {
                n += 1;
                bytes += meta.len();
            }
        }
        Ok((n, bytes))
    }

    /// Takes the OS lock on `writer.lock` when the tenant's directory exists (a tenant
    /// without one has had no commit, and its first creates the directory). It is taken only
    /// by a process about to commit.
    pub fn lock_writer(&self) -> Result<WriterLock, FileError> {
        // Nothing is created for a tenant before its first commit (engine.md §9.2), not even
        // the lock: a tenant without a directory is committed to unlocked, which is safe
        // because the head swap decides, never the lock.
        if !self.dir.is_dir() {
            return Ok(WriterLock { _file: None });
        }
        let path = self.dir.join(WRITER_LOCK);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_error("cannot open", &path, &e))?;
        fs4::FileExt::lock(&file).map_err(|e| io_error("cannot lock", &path, &e))?;
        Ok(WriterLock { _file: Some(file) })
    }

    /// Whether the tenant directory exists at all.
    pub fn exists_on_disk(&self) -> bool {
        self.dir.is_dir()
    }

    /// Forgets which packs it knows, so the next read lists `packs/` again.
    pub fn forget_packs(&self) {
        lock(&self.packs).invalidate();
    }

    /// Reads a whole file (for tests and verification of files outside the record kinds).
    pub fn read_path(path: &Path) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        File::open(path)?.read_to_end(&mut v)?;
        Ok(v)
    }
}

/// A whole file, mapped, or `None` when it does not exist.
fn map_opt(path: &Path) -> Result<Option<Bytes>, FileError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("cannot open", path, &e)),
    };
    let len = file
        .metadata()
        .map_err(|e| io_error("cannot stat", path, &e))?
        .len();
    packs::map_file(&file, len, path).map(Some)
}

/// Which folders of the layout before packs a tenant has (looked at once per call, so a
/// tenant without them costs no lookup per record).
struct Legacy<'a> {
    dir: &'a Path,
    seen: [Option<bool>; 5],
}

impl<'a> Legacy<'a> {
    fn new(dir: &'a Path) -> Legacy<'a> {
        Legacy {
            dir,
            seen: [None; 5],
        }
    }

    fn has(&mut self, kind: Kind) -> bool {
        let i = KINDS.iter().position(|k| *k == kind).unwrap_or(0);
        *self.seen[i].get_or_insert_with(|| self.dir.join(kind_dir(kind)).is_dir())
    }
}

/// Refreshes a file's modification time (a put of a record it holds). `Ok(false)`: the file
/// is gone (collection moved it away meanwhile), so the record must be written anew.
fn refreshed(path: &Path) -> Result<bool, FileError> {
    match touch(path) {
        Ok(()) => Ok(path.exists()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error("cannot touch", path, &e)),
    }
}

/// Milliseconds since the Unix epoch (the files store's time unit for put times).
pub use crate::clock::millis;

fn from_millis(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

fn to_store_error(e: FileError) -> StoreError {
    if e.0.starts_with("database corruption: ") {
        StoreError::Corrupt(e.0)
    } else {
        StoreError::Failed(e.0)
    }
}

/// The files store of one data root: the engine's [`Store`] over
/// `<data>/tenants/<tenant>/` (engine.md §9.2 rule 2). Clones share what they learnt about
/// each tenant's packs.
#[derive(Debug, Clone)]
pub struct Files {
    data: PathBuf,
    tenants: Arc<Mutex<HashMap<String, Arc<Mutex<PackSet>>>>>,
}

impl Files {
    /// The store of the data root `data`. Nothing is created.
    pub fn new(data: impl Into<PathBuf>) -> Files {
        Files {
            data: data.into(),
            tenants: Arc::default(),
        }
    }

    /// The data root.
    pub fn data(&self) -> &Path {
        &self.data
    }

    /// One tenant's files.
    pub fn tenant(&self, tenant: &str) -> FileStore {
        let packs = lock(&self.tenants)
            .entry(tenant.to_string())
            .or_default()
            .clone();
        FileStore {
            dir: self.data.join(TENANTS).join(tenant),
            packs,
        }
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
        self.tenant(tenant).get_many(keys).map_err(to_store_error)
    }

    fn get_shared(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Bytes>>, StoreError> {
        self.tenant(tenant).get_shared(keys).map_err(to_store_error)
    }

    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        self.tenant(tenant).put(key, bytes).map_err(to_store_error)
    }

    fn put_many(&mut self, tenant: &str, records: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        let items: Vec<(Key, &[u8])> = records.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        self.tenant(tenant).put_many(&items).map_err(to_store_error)
    }

    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        self.tenant(tenant).swap_head(expected, new)
    }

    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError> {
        let list = self.tenant(tenant).keys().map_err(to_store_error)?;
        Ok(list
            .into_iter()
            .map(|(key, mtime, size)| KeyInfo {
                key,
                put_time: millis(mtime),
                size,
            })
            .collect())
    }

    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        let t = self.tenant(tenant);
        if !t.exists_on_disk() {
            return Ok(Vec::new());
        }
        let before_t = from_millis(before);
        let removed = t.remove(keys, before_t).map_err(to_store_error)?;
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

/// Moves a file back from staging unless a concurrent put already wrote it anew.
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
