//! [`LazyList`]: a list of a document's parse that a served state holds either as it is or
//! still encoded in a derived record's bytes, decoded the first time something reads it
//! (docs/records.md, "Reading it"). It reads as a slice either way, so the code that reads
//! a parse's sections or raw links does not know which. Opening from a derived record then
//! allocates nothing for the lists a read never looks at (the raw links are read by the
//! linker alone), and the ones it does look at cost their decode once.

use crate::bytes::Bytes;
use std::sync::OnceLock;

/// A list held as it is, or encoded in a derived record's bytes and decoded on first use.
pub struct LazyList<T>(Repr<T>);

enum Repr<T> {
    Ready(Vec<T>),
    Later(Box<Later<T>>),
}

/// An encoded list: the bytes it is in, where it stands in them, and the decoder, which
/// reads exactly what the record's decode checked when it skipped the list.
struct Later<T> {
    list: OnceLock<Vec<T>>,
    source: Bytes,
    at: [u32; 3],
    decode: fn(&[u8], [u32; 3]) -> Vec<T>,
}

impl<T> LazyList<T> {
    /// A list still encoded in `source` at `at`, which `decode` reads when the list is first
    /// read.
    pub fn later(source: Bytes, at: [u32; 3], decode: fn(&[u8], [u32; 3]) -> Vec<T>) -> Self {
        LazyList(Repr::Later(Box::new(Later {
            list: OnceLock::new(),
            source,
            at,
            decode,
        })))
    }

    /// The list (decoded now if it was still encoded).
    pub fn as_slice(&self) -> &[T] {
        match &self.0 {
            Repr::Ready(v) => v,
            Repr::Later(l) => l.list.get_or_init(|| (l.decode)(&l.source, l.at)),
        }
    }

    /// Whether the list is still encoded (for tests).
    pub fn is_encoded(&self) -> bool {
        matches!(&self.0, Repr::Later(l) if l.list.get().is_none())
    }
}

impl<T> LazyList<T> {
    /// The list as a vector.
    pub fn into_vec(self) -> Vec<T> {
        match self.0 {
            Repr::Ready(v) => v,
            Repr::Later(l) => {
                let Later {
                    list,
                    source,
                    at,
                    decode,
                } = *l;
                list.into_inner().unwrap_or_else(|| decode(&source, at))
            }
        }
    }
}

impl<T> std::ops::Deref for LazyList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> From<Vec<T>> for LazyList<T> {
    fn from(v: Vec<T>) -> Self {
        LazyList(Repr::Ready(v))
    }
}

impl<T> Default for LazyList<T> {
    fn default() -> Self {
        LazyList(Repr::Ready(Vec::new()))
    }
}

impl<T: Clone> Clone for LazyList<T> {
    fn clone(&self) -> Self {
        match &self.0 {
            Repr::Ready(v) => LazyList(Repr::Ready(v.clone())),
            Repr::Later(l) => match l.list.get() {
                Some(v) => LazyList(Repr::Ready(v.clone())),
                None => LazyList::later(l.source.clone(), l.at, l.decode),
            },
        }
    }
}

impl<T: PartialEq> PartialEq for LazyList<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq> Eq for LazyList<T> {}

impl<T: std::fmt::Debug> std::fmt::Debug for LazyList<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<'a, T> IntoIterator for &'a LazyList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T> IntoIterator for LazyList<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::LazyList;
    use crate::bytes::Bytes;

    fn digits(b: &[u8], at: [u32; 3]) -> Vec<u8> {
        b[at[0] as usize..at[1] as usize].to_vec()
    }

    #[test]
    fn an_encoded_list_reads_as_the_decoded_one() {
        let src = Bytes::from(vec![1u8, 2, 3, 4, 5]);
        let l = LazyList::later(src, [1, 4, 0], digits);
        assert!(l.is_encoded());
        let c = l.clone();
        assert_eq!(&*l, &[2, 3, 4]);
        assert!(!l.is_encoded());
        assert!(
            c.is_encoded(),
            "a copy made before the read is still encoded"
        );
        assert_eq!(c, LazyList::from(vec![2, 3, 4]));
        assert_eq!(format!("{c:?}"), format!("{:?}", vec![2u8, 3, 4]));
        assert_eq!(c.clone().into_vec(), vec![2, 3, 4]);
        assert_eq!(l.into_iter().collect::<Vec<_>>(), vec![2, 3, 4]);
        assert!(LazyList::<u8>::default().is_empty());
    }
}
