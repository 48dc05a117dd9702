//! The packs of one tenant (docs/records.md "Packs", core's `pack`): which pack holds which
//! record, read from their indexes and kept between calls, and the reading of records out
//! of them.
//!
//! Packs never change once renamed into `packs/`; they are only removed (by collection or
//! when a commit merges them into a larger one). So a reader keeps what it learnt and looks
//! again only when a record is not where it expects it: a record not in any known pack, or
//! a pack gone from the folder.

use super::{io_error, FileError};
use langonrock_core::bytes::Bytes;
use langonrock_core::engine::Key;
use langonrock_core::layout;
use langonrock_core::pack::{self, Entry};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// Reads exactly `buf.len()` bytes at `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut done, mut at) = (0, offset);
        while done < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(file, &mut buf[done..], at)?;
            if n == 0 {
                return Err(io::Error::from(ErrorKind::UnexpectedEof));
            }
            done += n;
            at += n as u64;
        }
        Ok(())
    }
}

/// One pack: its file, open for reading, and its index.
#[derive(Debug)]
pub(crate) struct PackFile {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    file: File,
    pub(crate) len: u64,
    pub(crate) entries: Vec<Entry>,
    /// The whole file, mapped when a record is first handed out in place.
    map: std::sync::OnceLock<Bytes>,
}

/// Maps a whole file (`langonrock_map`: the file is never written again once in place).
pub(crate) fn map_file(file: &File, len: u64, path: &Path) -> Result<Bytes, FileError> {
    let m = langonrock_map::map(file, len).map_err(|e| io_error("cannot map", path, &e))?;
    let m: langonrock_core::bytes::Owner = Arc::new(m);
    Ok(Bytes::from_owner(m))
}

impl PackFile {
    /// Opens the pack `name` in `dir` and checks its index. `Ok(None)`: it is gone.
    pub(crate) fn open(dir: &Path, name: &str) -> Result<Option<PackFile>, FileError> {
        let path = dir.join(name);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("cannot open", &path, &e)),
        };
        let len = file
            .metadata()
            .map_err(|e| io_error("cannot stat", &path, &e))?
            .len();
        let mut header = [0u8; pack::HEADER];
        let got = if len >= pack::HEADER as u64 {
            read_at(&file, &mut header, 0).map_err(|e| io_error("cannot read", &path, &e))?;
            &header[..]
        } else {
            &header[..0]
        };
        let head_len = pack::head_len(name, got, len).map_err(FileError)?;
        let mut head = vec![0u8; head_len];
        read_at(&file, &mut head, 0).map_err(|e| io_error("cannot read", &path, &e))?;
        let entries = pack::index(name, &head, len).map_err(FileError)?;
        Ok(Some(PackFile {
            name: name.to_string(),
            path,
            file,
            len,
            entries,
            map: std::sync::OnceLock::new(),
        }))
    }

    /// The bytes of one of its records.
    pub(crate) fn read(&self, e: &Entry) -> Result<Vec<u8>, FileError> {
        let mut buf = vec![0u8; e.len as usize];
        read_at(&self.file, &mut buf, e.offset)
            .map_err(|err| io_error("cannot read", &self.path, &err))?;
        Ok(buf)
    }

    /// One of its records in place: a range of the mapped file.
    pub(crate) fn shared(&self, e: &Entry) -> Result<Bytes, FileError> {
        let all = match self.map.get() {
            Some(m) => m,
            None => {
                let m = map_file(&self.file, self.len, &self.path)?;
                let _ = self.map.set(m);
                self.map.get().expect("set just now")
            }
        };
        all.slice(e.offset as usize..(e.offset + u64::from(e.len)) as usize)
            .ok_or_else(|| FileError(langonrock_core::pack::corrupt(&self.name, "is truncated")))
    }

    /// Every record it holds, with its bytes (for merging and compaction).
    pub(crate) fn read_all(&self) -> Result<Vec<(Key, Vec<u8>)>, FileError> {
        let Some(first) = self.entries.first() else {
            return Ok(Vec::new());
        };
        let mut data = vec![0u8; (self.len - first.offset) as usize];
        read_at(&self.file, &mut data, first.offset)
            .map_err(|err| io_error("cannot read", &self.path, &err))?;
        let base = first.offset;
        Ok(self
            .entries
            .iter()
            .map(|e| {
                let s = (e.offset - base) as usize;
                (e.key, data[s..s + e.len as usize].to_vec())
            })
            .collect())
    }

    /// Its modification time: the put time of every record it holds.
    pub(crate) fn modified(&self) -> Result<SystemTime, FileError> {
        match fs::metadata(&self.path) {
            Ok(m) => Ok(m.modified().unwrap_or(SystemTime::UNIX_EPOCH)),
            Err(e) => Err(io_error("cannot stat", &self.path, &e)),
        }
    }
}

/// What a tenant's reader knows of its packs.
#[derive(Debug, Default)]
pub(crate) struct PackSet {
    scanned: bool,
    packs: BTreeMap<String, Arc<PackFile>>,
    /// Packs that failed their checks, with the corruption message naming each.
    bad: BTreeMap<String, String>,
}

impl PackSet {
    /// Lists `dir` (the tenant's `packs/`) when not done yet.
    pub(crate) fn ensure(&mut self, dir: &Path) -> Result<(), FileError> {
        if self.scanned {
            Ok(())
        } else {
            self.rescan(dir)
        }
    }

    /// Forgets what it knows, so the next read lists the folder again.
    pub(crate) fn invalidate(&mut self) {
        self.scanned = false;
    }

    /// Lists `dir` again: opens the packs it does not know, forgets those that are gone.
    pub(crate) fn rescan(&mut self, dir: &Path) -> Result<(), FileError> {
        let names: Vec<String> = match fs::read_dir(dir) {
            Ok(rd) => {
                let mut v = Vec::new();
                for entry in rd {
                    let entry = entry.map_err(|e| io_error("cannot list", dir, &e))?;
                    if let Some(n) = entry.file_name().to_str() {
                        if layout::is_pack_name(n) {
                            v.push(n.to_string());
                        }
                    }
                }
                v
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_error("cannot list", dir, &e)),
        };
        let gone: Vec<String> = self
            .packs
            .keys()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect();
        for n in gone {
            self.forget(&n);
        }
        self.bad.retain(|n, _| names.contains(n));
        for n in names {
            if self.packs.contains_key(&n) {
                continue;
            }
            match PackFile::open(dir, &n) {
                Ok(Some(p)) => self.add(p),
                Ok(None) => {}
                Err(e) if e.0.starts_with("database corruption: ") => {
                    self.bad.insert(n, e.0);
                }
                Err(e) => return Err(e),
            }
        }
        self.scanned = true;
        Ok(())
    }

    /// Adds a pack (one just written, or found by a listing). Its entries are found where
    /// they are, sorted by key in its index (docs/records.md "Packs"): no table of every
    /// key is built, which at 20,000 records took a cold open's main thread milliseconds
    /// before the first record could be read.
    pub(crate) fn add(&mut self, p: PackFile) {
        let p = Arc::new(p);
        self.bad.remove(&p.name);
        self.packs.insert(p.name.clone(), p);
    }

    /// Forgets a pack (removed, or merged into another).
    pub(crate) fn forget(&mut self, name: &str) {
        self.packs.remove(name);
    }

    /// The pack holding `key`, with the record's entry (a binary search of each pack's
    /// entries; the first pack by name that holds it: a key names one content).
    pub(crate) fn find(&self, key: &Key) -> Option<(&Arc<PackFile>, &Entry)> {
        self.packs.values().find_map(|p| {
            p.entries
                .binary_search_by(|e| e.key.cmp(key))
                .ok()
                .map(|i| (p, &p.entries[i]))
        })
    }

    /// [`PackSet::find`] of each key, in the keys' order. Keys in key order (as the engine
    /// asks for records, docs/engine.md §9.1) are matched against each pack's sorted
    /// entries in one walk when they are many; otherwise each is searched for.
    pub(crate) fn find_many(&self, keys: &[Key]) -> Vec<Option<(&Arc<PackFile>, &Entry)>> {
        let mut out: Vec<Option<(&Arc<PackFile>, &Entry)>> = vec![None; keys.len()];
        let sorted = keys.windows(2).all(|w| w[0] <= w[1]);
        for p in self.packs.values() {
            let entries = &p.entries;
            if sorted && keys.len().saturating_mul(16) >= entries.len() {
                let mut j = 0;
                for (i, k) in keys.iter().enumerate() {
                    while j < entries.len() && entries[j].key < *k {
                        j += 1;
                    }
                    let Some(e) = entries.get(j) else { break };
                    if out[i].is_none() && e.key == *k {
                        out[i] = Some((p, e));
                    }
                }
            } else {
                for (i, k) in keys.iter().enumerate() {
                    if out[i].is_none() {
                        if let Ok(at) = entries.binary_search_by(|e| e.key.cmp(k)) {
                            out[i] = Some((p, &entries[at]));
                        }
                    }
                }
            }
        }
        out
    }

    /// Every known pack.
    pub(crate) fn packs(&self) -> impl Iterator<Item = &Arc<PackFile>> {
        self.packs.values()
    }

    /// The first corruption message of a pack that failed its checks, if any.
    pub(crate) fn bad(&self) -> Option<&str> {
        self.bad.values().next().map(String::as_str)
    }
}
