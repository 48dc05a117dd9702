//! Pack files (docs/records.md "Packs", engine.md §9.2 rule 2): the files layout writes a
//! commit's content-addressed records into one file with its own index, so a commit is one
//! file made durable by one fsync of the file and one of its folder.
//!
//! Both files stores (the native one in `langonrock::files`, the Node one in
//! `pkg/src/stores/files.js` through the wasm bindings) write and read packs with the
//! functions here, so a pack written by one runtime is read by the other.
//!
//! A pack is `<head><data>`. The head is a 12-byte header (`LRPK`, the format `u32`, the
//! record count `u32`) and one 48-byte index entry per record, sorted by key (kind, then
//! digest), without duplicates: the kind (a byte: its position in [`layout::KINDS`]), the
//! codec (a byte, `0`: the bytes as they are), two zero bytes, the record's length (`u32`),
//! its digest (32 bytes) and its offset in the file (`u64`). Integers are little-endian. The
//! data is every record's bytes, in index order, back to back, from the end of the head to
//! the end of the file. The pack's file name is the SHA-256 of its head in hex, so the name
//! checks the index, and the records' digests check the data.

use crate::engine::{Digest, Key, Kind};
use crate::layout;

/// The first bytes of every pack.
pub const MAGIC: &[u8; 4] = b"LRPK";
/// The pack format this code writes and reads.
pub const FORMAT: u32 = 1;
/// The header's length: magic, format, count.
pub const HEADER: usize = 12;
/// The length of one index entry.
pub const ENTRY: usize = 48;
/// The most records one pack holds (its head stays under 64 MiB).
pub const MAX_RECORDS: usize = 1 << 20;

/// Whether records of `kind` go into packs: the content-addressed records of a commit
/// (sources, revisions, bundle and baseline records). Derived records (replaced by a put)
/// and recovery records (written by `repair` alone) stay files of their own.
pub fn packable(kind: Kind) -> bool {
    matches!(kind, Kind::Source | Kind::Revision | Kind::Record)
}

fn kind_byte(kind: Kind) -> u8 {
    layout::KINDS.iter().position(|k| *k == kind).unwrap_or(0) as u8
}

fn kind_of(byte: u8) -> Option<Kind> {
    layout::KINDS.get(usize::from(byte)).copied()
}

/// One record of a pack, as its index names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The record's key.
    pub key: Key,
    /// Where its bytes start in the file.
    pub offset: u64,
    /// How many bytes it has.
    pub len: u32,
}

impl Entry {
    /// The byte range of the record in the file.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.offset..self.offset + u64::from(self.len)
    }
}

/// The head of a pack to write: its file name, its bytes, and the order in which the
/// records' bytes follow it (indexes into the list given to [`head`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The file name: the SHA-256 of `bytes` in hex.
    pub name: String,
    /// The header and the index.
    pub bytes: Vec<u8>,
    /// The records to write after the head, in this order (duplicates of a key left out).
    pub order: Vec<usize>,
    /// Where each record of `order` starts in the file (its index entry's offset), so a host
    /// that wrote the pack knows its index without reading it back.
    pub offsets: Vec<u64>,
    /// The whole file's length.
    pub len: u64,
}

/// The head of a pack holding `records` (key and length each). A key given twice is
/// written once (the first). Fails for a kind that does not go into packs, a record of
/// 4 GiB or more, or more than [`MAX_RECORDS`] records.
pub fn head(records: &[(Key, usize)]) -> Result<Head, String> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| records[i].0);
    order.dedup_by_key(|i| records[*i].0);
    if order.len() > MAX_RECORDS {
        return Err(format!(
            "a pack holds at most {MAX_RECORDS} records, not {}",
            order.len()
        ));
    }
    let start = (HEADER + ENTRY * order.len()) as u64;
    let mut bytes = Vec::with_capacity(start as usize);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&(order.len() as u32).to_le_bytes());
    let mut offset = start;
    let mut offsets = Vec::with_capacity(order.len());
    for &i in &order {
        let (key, len) = records[i];
        if !packable(key.kind) {
            return Err(format!("{key} does not go into a pack"));
        }
        let len32 = u32::try_from(len).map_err(|_| format!("{key} is too large for a pack"))?;
        bytes.push(kind_byte(key.kind));
        bytes.extend_from_slice(&[0, 0, 0]);
        bytes.extend_from_slice(&len32.to_le_bytes());
        bytes.extend_from_slice(&key.digest.0);
        bytes.extend_from_slice(&offset.to_le_bytes());
        offsets.push(offset);
        offset += u64::from(len32);
    }
    Ok(Head {
        name: Digest::of(&bytes).to_hex(),
        bytes,
        order,
        offsets,
        len: offset,
    })
}

/// A whole pack of `records` in memory: its name and bytes (for small packs and tests; a
/// host writing a large pack writes [`head`]'s bytes and then each record's).
pub fn encode(records: &[(Key, &[u8])]) -> Result<(String, Vec<u8>), String> {
    let lens: Vec<(Key, usize)> = records.iter().map(|(k, b)| (*k, b.len())).collect();
    let h = head(&lens)?;
    let mut out = Vec::with_capacity(h.len as usize);
    out.extend_from_slice(&h.bytes);
    for &i in &h.order {
        out.extend_from_slice(records[i].1);
    }
    Ok((h.name, out))
}

/// The corruption message about the pack `name`: `database corruption: packs/<name> <what>`.
pub fn corrupt(name: &str, what: &str) -> String {
    format!("database corruption: {} {what}", layout::pack_path(name))
}

/// The length of a pack's head, from its first [`HEADER`] bytes (a reader reads those, then
/// the rest of the head). Fails, naming the pack, when they are not a pack header of this
/// format or `file_len` cannot hold the head.
pub fn head_len(name: &str, header: &[u8], file_len: u64) -> Result<usize, String> {
    if (file_len as usize) < HEADER || header.len() < HEADER {
        return Err(corrupt(name, "is truncated"));
    }
    if &header[..4] != MAGIC {
        return Err(corrupt(name, "is not a pack"));
    }
    let format = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if format != FORMAT {
        return Err(corrupt(
            name,
            &format!("has pack format {format}, which this langonrock cannot read"),
        ));
    }
    let count = u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize;
    if count > MAX_RECORDS {
        return Err(corrupt(name, "is malformed"));
    }
    let len = HEADER + ENTRY * count;
    if (len as u64) > file_len {
        return Err(corrupt(name, "is truncated"));
    }
    Ok(len)
}

/// The index of the pack `name` from its head (as long as [`head_len`] said) and the file's
/// length. Checks that the head hashes to the name, that the entries are sorted, of kinds
/// that go into packs and of codec 0, and that the records exactly fill the rest of the file.
/// Anything else fails with `database corruption: packs/<name> …`.
pub fn index(name: &str, head: &[u8], file_len: u64) -> Result<Vec<Entry>, String> {
    let len = head_len(name, head, file_len)?;
    if head.len() != len {
        return Err(corrupt(name, "is truncated"));
    }
    if Digest::from_hex(name) != Some(Digest::of(head)) {
        return Err(corrupt(name, "has an index that does not match its name"));
    }
    let count = (len - HEADER) / ENTRY;
    let mut out: Vec<Entry> = Vec::with_capacity(count);
    let mut expect = len as u64;
    for e in head[HEADER..].chunks_exact(ENTRY) {
        let kind = kind_of(e[0])
            .filter(|k| packable(*k))
            .ok_or_else(|| corrupt(name, "is malformed"))?;
        if e[1..4] != [0, 0, 0] {
            return Err(corrupt(name, "is malformed"));
        }
        let rec_len = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
        let mut d = [0u8; 32];
        d.copy_from_slice(&e[8..40]);
        let mut o = [0u8; 8];
        o.copy_from_slice(&e[40..48]);
        let offset = u64::from_le_bytes(o);
        let key = Key::new(kind, Digest(d));
        if offset != expect || out.last().is_some_and(|p| p.key >= key) {
            return Err(corrupt(name, "is malformed"));
        }
        expect = offset + u64::from(rec_len);
        out.push(Entry {
            key,
            offset,
            len: rec_len,
        });
    }
    match expect.cmp(&file_len) {
        std::cmp::Ordering::Equal => Ok(out),
        std::cmp::Ordering::Greater => Err(corrupt(name, "is truncated")),
        std::cmp::Ordering::Less => Err(corrupt(name, "has bytes after its last record")),
    }
}

/// The message for a record of a pack whose bytes do not match its key (the index and the
/// data disagree).
pub fn mismatch(name: &str, key: &Key) -> String {
    corrupt(
        name,
        &format!("holds bytes for {key} that do not match its digest"),
    )
}

/// How packs are merged as commits add them (docs/records.md "Packs"): a pack's tier grows
/// with its size (by eight times per tier from 64 KiB), and a commit merges every pack of
/// the lowest tiers into its own once some tier holds [`MERGE_AT`] packs, so a tenant holds
/// few packs however many commits it took, and each record is copied a few times at most.
pub fn tier(len: u64) -> u32 {
    let mut t = 0;
    let mut limit: u64 = 64 << 10;
    while len >= limit && t < 12 {
        limit = limit.saturating_mul(8);
        t += 1;
    }
    t
}

/// How many packs of one tier make a commit merge them.
pub const MERGE_AT: usize = 8;

/// Which of the packs (by length) a commit should merge into the one it writes: the indexes
/// of every pack in the tiers up to the highest one holding at least [`MERGE_AT`] packs
/// (counting the new one, of length `new_len`), or none.
pub fn to_merge(lens: &[u64], new_len: u64) -> Vec<usize> {
    let mut counts = [0usize; 13];
    counts[tier(new_len) as usize] += 1;
    for &l in lens {
        counts[tier(l) as usize] += 1;
    }
    // A tier full enough merges, and with it every lower one (so the merged pack is larger
    // than any it replaces, and its records climb a tier).
    let Some(top) = (0..counts.len()).rev().find(|&t| counts[t] >= MERGE_AT) else {
        return Vec::new();
    };
    (0..lens.len())
        .filter(|&i| tier(lens[i]) as usize <= top)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs() -> Vec<(Key, Vec<u8>)> {
        vec![
            (Key::of(Kind::Source, b"b"), b"b".to_vec()),
            (Key::of(Kind::Revision, b"rev"), b"rev".to_vec()),
            (Key::of(Kind::Source, b"a"), b"a".to_vec()),
            (Key::of(Kind::Source, b"a"), b"a".to_vec()),
        ]
    }

    #[test]
    fn round_trip() {
        let r = recs();
        let refs: Vec<(Key, &[u8])> = r.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        let (name, bytes) = encode(&refs).unwrap();
        assert_eq!(name, Digest::of(&bytes[..HEADER + 3 * ENTRY]).to_hex());
        let hl = head_len(&name, &bytes[..HEADER], bytes.len() as u64).unwrap();
        assert_eq!(hl, HEADER + 3 * ENTRY);
        let ix = index(&name, &bytes[..hl], bytes.len() as u64).unwrap();
        assert_eq!(ix.len(), 3);
        for e in &ix {
            let b = &bytes[e.range().start as usize..e.range().end as usize];
            assert!(e.key.verifies(b));
        }
        assert!(ix.windows(2).all(|w| w[0].key < w[1].key));
        // Same records, any order: same pack.
        let mut rev = refs.clone();
        rev.reverse();
        assert_eq!(encode(&rev).unwrap(), (name, bytes));
    }

    /// The head's offsets are where the index read back puts each record of `order`.
    #[test]
    fn a_heads_offsets_are_its_index_entries() {
        let r = recs();
        let lens: Vec<(Key, usize)> = r.iter().map(|(k, b)| (*k, b.len())).collect();
        let h = head(&lens).unwrap();
        let refs: Vec<(Key, &[u8])> = r.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        let (name, bytes) = encode(&refs).unwrap();
        let ix = index(&name, &bytes[..h.bytes.len()], h.len).unwrap();
        assert_eq!(h.offsets.len(), h.order.len());
        for (j, &i) in h.order.iter().enumerate() {
            let e = ix.iter().find(|e| e.key == r[i].0).unwrap();
            assert_eq!(h.offsets[j], e.offset, "record {i}");
        }
    }

    #[test]
    fn bad_packs_name_the_file() {
        let r = recs();
        let refs: Vec<(Key, &[u8])> = r.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        let (name, bytes) = encode(&refs).unwrap();
        let hl = HEADER + 3 * ENTRY;
        let n = bytes.len() as u64;
        let truncated = index(&name, &bytes[..hl], n - 1).unwrap_err();
        assert_eq!(
            truncated,
            format!("database corruption: packs/{name} is truncated")
        );
        assert!(head_len(&name, &bytes[..4], 4)
            .unwrap_err()
            .ends_with("is truncated"));
        assert!(index(&name, &bytes[..hl], n + 1)
            .unwrap_err()
            .ends_with("has bytes after its last record"));
        let mut flipped = bytes[..hl].to_vec();
        flipped[HEADER + 45] ^= 1;
        assert!(index(&name, &flipped, n)
            .unwrap_err()
            .ends_with("has an index that does not match its name"));
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(head_len(&name, &magic, n)
            .unwrap_err()
            .ends_with("is not a pack"));
        let mut fmt = bytes.clone();
        fmt[4] = 9;
        assert!(head_len(&name, &fmt, n)
            .unwrap_err()
            .contains("pack format 9"));
        assert!(mismatch(&name, &r[0].0).starts_with("database corruption: packs/"));
    }

    #[test]
    fn only_commit_records_go_into_packs() {
        let d = Key::new(Kind::Derived, Digest::of(b"x"));
        assert!(head(&[(d, 1)]).is_err());
        assert!(!packable(Kind::Recovery) && packable(Kind::Record));
    }

    #[test]
    fn merging_keeps_the_count_low() {
        assert_eq!(tier(0), 0);
        assert_eq!(tier((64 << 10) - 1), 0);
        assert_eq!(tier(64 << 10), 1);
        assert_eq!(tier(512 << 10), 2);
        assert!(to_merge(&[100; 6], 100).is_empty());
        assert_eq!(to_merge(&[100; 7], 100), (0..7).collect::<Vec<_>>());
        // A big pack is left alone while small ones merge.
        assert_eq!(
            to_merge(&[50 << 20, 1, 2, 3, 4, 5, 6, 7], 8),
            (1..8).collect::<Vec<_>>()
        );
        // Simulate many commits: the pack count stays bounded.
        let mut packs: Vec<u64> = Vec::new();
        for _ in 0..5000 {
            let new = 2000u64;
            let m = to_merge(&packs, new);
            let merged: u64 = m.iter().map(|&i| packs[i]).sum::<u64>() + new;
            let mut keep: Vec<u64> = packs
                .iter()
                .enumerate()
                .filter(|(i, _)| !m.contains(i))
                .map(|(_, l)| *l)
                .collect();
            keep.push(merged);
            packs = keep;
            assert!(packs.len() < 8 * 7, "{}", packs.len());
        }
    }
}
