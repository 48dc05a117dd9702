//! The one `unsafe` operation of langonrock (ARCHITECTURE.md, "The one unsafe block"):
//! mapping a file into memory, so the native files store can serve a pack's or a derived
//! record's bytes in place instead of copying them (docs/records.md "Packs").
//!
//! Mapping is unsafe because the bytes of a mapping change, or disappear, if another
//! process writes to or truncates the file while it is mapped. The files store never does
//! that: every file is written under a unique name in `staging/`, fsynced, and only then
//! renamed into place, and after that it is never opened for writing again (a put of the
//! same record only sets its modification time, which does not touch its bytes; a derived
//! record is replaced by renaming a new file over it, and collection removes files by
//! renaming and unlinking them, which leaves a mapping of the old file intact). So a file
//! this crate maps is immutable for as long as langonrock is the only writer of the data
//! root, which is the files layout's contract (engine.md §9.2). Hand-editing a mapped file
//! while a process serves it can crash that process (SIGBUS on a truncated file) or show
//! it the edited bytes, which the digests then reject.

use std::fs::File;
use std::io;

/// A read-only mapping of a whole file (or the bytes of an empty one).
#[derive(Debug)]
pub struct Map(Inner);

#[derive(Debug)]
enum Inner {
    Mapped(memmap2::Mmap),
    /// An empty file cannot be mapped on every platform.
    Empty,
}

impl AsRef<[u8]> for Map {
    fn as_ref(&self) -> &[u8] {
        match &self.0 {
            Inner::Mapped(m) => m,
            Inner::Empty => &[],
        }
    }
}

/// Maps all of `file`, which is `len` bytes long, read-only.
pub fn map(file: &File, len: u64) -> io::Result<Map> {
    if len == 0 {
        return Ok(Map(Inner::Empty));
    }
    let len = usize::try_from(len).map_err(|_| io::Error::other("file too large to map"))?;
    #[allow(unsafe_code)]
    // SAFETY: the files store maps only files it never writes again once they are in place
    // (see the module documentation); the mapping is read-only and private to us.
    let m = unsafe { memmap2::MmapOptions::new().len(len).map(file)? };
    Ok(Map(Inner::Mapped(m)))
}
