//! The hash tables of the index: terms to unit ids and pairs of unit ids to unit ids.
//!
//! Both are one open-addressing table ([`OpenTable`]) with a fixed multiplicative hash (the
//! slot is the product's top bits): no random seed, the same probes on every target, and only
//! 64-bit arithmetic, which wasm32 has (its 64×64→128-bit multiply is a call). Terms of at most [`SHORT`] bytes are keyed
//! by their bytes packed into two `u64`s (one probe, usually one cache line, no string
//! comparison); longer terms live in a map keyed by their text. Pairs are keyed by their two
//! term ids packed into one `u64`.

use super::tokenize::{pack16, SHORT};
use std::collections::HashMap;

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
const MUL2: u64 = 0xD6E8_FEB8_6659_FD93;

/// The hasher of the index's maps: deterministic, no random seed, same on every target.
pub(crate) type Fast = rustc_hash::FxBuildHasher;

/// A key of an [`OpenTable`]: one value is reserved to mark empty entries.
pub(crate) trait Key: Copy + PartialEq {
    /// The key no entry ever has.
    const EMPTY: Self;
    /// The key's hash, whose top bits pick its slot: a product by an odd constant, so every
    /// bit of the key reaches them.
    fn hash(self) -> u64;
}

/// A packed term: tokens hold no zero byte, so a packing is never all zero.
impl Key for [u64; 2] {
    const EMPTY: Self = [0, 0];
    #[inline(always)]
    fn hash(self) -> u64 {
        // Most terms fit the first word; the second is spread by a multiply of its own first.
        (self[0] ^ self[1].wrapping_mul(MUL2)).wrapping_mul(MUL)
    }
}

/// A pair of term ids: `u64::MAX` would be a term paired with itself, never a pair.
impl Key for u64 {
    const EMPTY: Self = u64::MAX;
    #[inline(always)]
    fn hash(self) -> u64 {
        self.wrapping_mul(MUL)
    }
}

/// An open-addressing table from keys to `u32` ids, linear probing, a load factor of 7/8.
///
/// It starts with one empty entry and grows on its first insertion, so a probe never
/// checks for an empty table. A key's first slot is the top `log2(capacity)` bits of its
/// hash (at most 32: ids are `u32`).
#[derive(Debug, Clone)]
pub(crate) struct OpenTable<K> {
    entries: Vec<(K, u32)>,
    len: usize,
    grow_at: usize,
    /// `32 - log2(capacity)`: the slot is `(hash >> 32) >> shift`.
    shift: u32,
}

impl<K: Key> Default for OpenTable<K> {
    fn default() -> Self {
        OpenTable {
            entries: vec![(K::EMPTY, 0)],
            len: 0,
            grow_at: 0,
            shift: 32,
        }
    }
}

impl<K: Key> OpenTable<K> {
    /// The first slot a key of hash `h` is looked for in.
    #[inline(always)]
    fn slot(&self, h: u64) -> usize {
        ((h >> 32) >> self.shift) as usize
    }

    #[inline]
    pub(crate) fn get(&self, key: K) -> Option<u32> {
        let mask = self.entries.len() - 1;
        let mut i = self.slot(key.hash());
        loop {
            let (k, id) = self.entries[i];
            if k == key {
                return Some(id);
            }
            if k == K::EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `key`, inserting `next` when absent.
    #[inline(always)]
    pub(crate) fn intern(&mut self, key: K, next: u32) -> u32 {
        self.intern_with(key, next, || {})
    }

    /// The id of `key`, inserting `next` and calling `on_new` when absent.
    #[inline(always)]
    pub(crate) fn intern_with(&mut self, key: K, next: u32, on_new: impl FnOnce()) -> u32 {
        let mask = self.entries.len() - 1;
        let mut i = self.slot(key.hash());
        loop {
            let (k, id) = self.entries[i];
            if k == key {
                return id;
            }
            if k == K::EMPTY {
                self.insert_at(i, key, next);
                on_new();
                return next;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(never)]
    fn insert_at(&mut self, i: usize, key: K, id: u32) {
        self.entries[i] = (key, id);
        self.len += 1;
        if self.len > self.grow_at {
            self.grow();
        }
    }

    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.entries.len() * 2).max(1024);
        debug_assert!(self.len < cap / 8 * 7);
        self.grow_at = cap / 8 * 7;
        let old = std::mem::replace(&mut self.entries, vec![(K::EMPTY, 0); cap]);
        self.shift = 32 - cap.trailing_zeros();
        let mask = cap - 1;
        for (k, id) in old {
            if k != K::EMPTY {
                let mut i = self.slot(k.hash());
                while self.entries[i].0 != K::EMPTY {
                    i = (i + 1) & mask;
                }
                self.entries[i] = (k, id);
            }
        }
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (K, u32)> + '_ {
        self.entries.iter().copied().filter(|e| e.0 != K::EMPTY)
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(K, u32)>()
    }
}

/// The interned vocabulary: term text to unit id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vocab {
    pub(crate) short: OpenTable<[u64; 2]>,
    long: HashMap<Box<str>, u32, Fast>,
}

impl Vocab {
    #[inline]
    pub(crate) fn get(&self, t: &str) -> Option<u32> {
        if t.len() <= SHORT {
            self.short.get(pack16(t.as_bytes()))
        } else {
            self.long.get(t).copied()
        }
    }

    /// The id of `t`, adding it with id `next` when new.
    #[inline(always)]
    pub(crate) fn intern(&mut self, t: &str, next: u32) -> u32 {
        if t.len() <= SHORT {
            self.short.intern(pack16(t.as_bytes()), next)
        } else {
            self.intern_long(t, next)
        }
    }

    #[inline(never)]
    fn intern_long(&mut self, t: &str, next: u32) -> u32 {
        if let Some(&id) = self.long.get(t) {
            id
        } else {
            self.long.insert(t.into(), next);
            next
        }
    }

    /// Every term as `(unit id, text)`, in no particular order.
    pub(crate) fn terms(&self) -> Vec<(u32, String)> {
        let mut out = Vec::with_capacity(self.long.len() + 64);
        for (k, id) in self.short.iter() {
            let mut bytes = [0u8; SHORT];
            bytes[..8].copy_from_slice(&k[0].to_le_bytes());
            bytes[8..].copy_from_slice(&k[1].to_le_bytes());
            let len = bytes.iter().position(|&b| b == 0).unwrap_or(SHORT);
            out.push((id, String::from_utf8_lossy(&bytes[..len]).into_owned()));
        }
        for (k, &id) in &self.long {
            out.push((id, k.to_string()));
        }
        out
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.short.heap_bytes()
            + self.long.capacity() * 21
            + self.long.keys().map(|k| k.len()).sum::<usize>()
    }
}

/// The key of the pair `(a, b)` of unit ids.
#[inline(always)]
pub(crate) fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// Pairs of term ids ([`pair_key`]) to unit ids.
#[derive(Debug, Clone, Default)]
pub(crate) struct PairTable(OpenTable<u64>);

impl PairTable {
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        self.0.get(key)
    }

    /// The id of `key`, inserting `next` when absent.
    #[inline(always)]
    pub(crate) fn intern(&mut self, key: u64, next: u32) -> u32 {
        self.0.intern(key, next)
    }

    /// The id of `key`, inserting `next` and calling `on_new` when absent.
    #[inline(always)]
    pub(crate) fn intern_with(&mut self, key: u64, next: u32, on_new: impl FnOnce()) -> u32 {
        self.0.intern_with(key, next, on_new)
    }

    /// Every pair as `(unit id, first term id, second term id)`, in no particular order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.0
            .iter()
            .map(|(k, id)| (id, (k >> 32) as u32, k as u32))
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}
