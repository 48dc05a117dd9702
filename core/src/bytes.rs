//! Shared, immutable bytes: what a store hands the engine when it can share a buffer instead
//! of copying (a native files store hands out ranges of a mapped pack; docs/records.md
//! "Packs"), and what a document's text is made of when it came that way.
//!
//! [`Bytes`] is a range of a buffer that any number of holders share; [`Text`] is a
//! document's exact text, either an `Arc<str>` or such a range, read as `str`.

use std::ops::{Deref, Range};
use std::sync::Arc;

/// Any buffer a [`Bytes`] can share: a `Vec<u8>`, an `Arc<[u8]>`, a host's mapped file.
pub type Owner = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A range of a shared, immutable buffer. Cloning and slicing never copy.
#[derive(Clone)]
pub struct Bytes {
    owner: Owner,
    start: usize,
    end: usize,
}

impl Bytes {
    /// All of `owner`'s bytes.
    pub fn from_owner(owner: Owner) -> Bytes {
        let end = (*owner).as_ref().len();
        Bytes {
            owner,
            start: 0,
            end,
        }
    }

    /// The bytes `range` of these (relative to their start), or `None` when it does not lie
    /// within them.
    pub fn slice(&self, range: Range<usize>) -> Option<Bytes> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        Some(Bytes {
            owner: self.owner.clone(),
            start: self.start + range.start,
            end: self.start + range.end,
        })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &(*self.owner).as_ref()[self.start..self.end]
    }

    /// How many bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes::from_owner(Arc::new(v))
    }
}

impl From<&[u8]> for Bytes {
    fn from(v: &[u8]) -> Bytes {
        Bytes::from(v.to_vec())
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Bytes {}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} bytes)", self.len())
    }
}

#[derive(Clone)]
enum Repr {
    Str(Arc<str>),
    /// UTF-8 bytes of a shared buffer. Checked as UTF-8 on every read as `str` (a safe
    /// `&str` of foreign bytes needs the check); the engine checks them against their
    /// source hash before it serves them, and a stored source is always UTF-8, so the
    /// check passes.
    Bytes(Bytes),
}

/// A document's exact text: an `Arc<str>`, or UTF-8 bytes of a shared buffer (a text a store
/// handed out in place). Reads as `str`; cloning never copies.
#[derive(Clone)]
pub struct Text(Repr);

impl Text {
    /// A text made of `bytes` as they are. Reading it as `str` gives the empty string if
    /// they are not UTF-8 (check with [`Text::is_utf8`] first).
    pub fn from_bytes(bytes: Bytes) -> Text {
        Text(Repr::Bytes(bytes))
    }

    /// The text's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Str(s) => s.as_bytes(),
            Repr::Bytes(b) => b.as_slice(),
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Str(s) => s,
            Repr::Bytes(b) => std::str::from_utf8(b.as_slice()).unwrap_or_default(),
        }
    }

    /// Whether the bytes are UTF-8 (always, for a text made from a `str`).
    pub fn is_utf8(&self) -> bool {
        match &self.0 {
            Repr::Str(_) => true,
            Repr::Bytes(b) => std::str::from_utf8(b.as_slice()).is_ok(),
        }
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether both are the same shared text (a cheap test before comparing contents).
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        match (&a.0, &b.0) {
            (Repr::Str(x), Repr::Str(y)) => Arc::ptr_eq(x, y),
            (Repr::Bytes(x), Repr::Bytes(y)) => {
                Arc::ptr_eq(&x.owner, &y.owner) && x.start == y.start && x.end == y.end
            }
            _ => false,
        }
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<Arc<str>> for Text {
    fn from(s: Arc<str>) -> Text {
        Text(Repr::Str(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Repr::Str(s.into()))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Repr::Str(s.into()))
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Text {
        Text(Repr::Str(s.into()))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::from(s.as_str())
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::from("")
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        Text::ptr_eq(self, other) || self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_share_and_read_as_text() {
        let b = Bytes::from(b"hello world".to_vec());
        let w = b.slice(6..11).unwrap();
        assert_eq!(w.as_slice(), b"world");
        assert_eq!(w.slice(1..3).unwrap().as_slice(), b"or");
        assert!(w.slice(3..9).is_none());
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = w.slice(4..3);
        assert!(backwards.is_none());
        let t = Text::from_bytes(w.clone());
        assert_eq!(&*t, "world");
        assert!(t.is_utf8());
        assert_eq!(t, Text::from("world"));
        assert!(Text::ptr_eq(&t, &Text::from_bytes(w)));
        let bad = Text::from_bytes(Bytes::from(vec![0xff, 0xfe]));
        assert!(!bad.is_utf8());
        assert_eq!(&*bad, "");
        assert_eq!(bad.len(), 2);
    }
}
