//! Text helpers: UTF-16 lengths and offset maps, flattening and summary truncation.
//!
//! Every public offset is in UTF-16 code units (docs/README.md §4.1), while the core keeps `str`
//! internally. [`Utf16Map`] converts between the two for one text.

/// The length of `s` in UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    // ASCII, the usual case, is one unit a byte (and `is_ascii` reads a word at a time).
    if s.is_ascii() {
        return s.len();
    }
    // Every char starts with a non-continuation byte; chars of four bytes take two units.
    s.as_bytes()
        .iter()
        .map(|&b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// Replaces every run of Unicode white space with one space, then trims (compile.md §3).
pub fn flatten(s: &str) -> String {
    if is_flat_ascii(s) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    out
}

/// Whether `s` is ASCII and already flat: no white space but single spaces between other
/// characters (so [`flatten`] returns it unchanged).
fn is_flat_ascii(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() == Some(&b' ') || b.last() == Some(&b' ') {
        return false;
    }
    // No control white space (`\t`, `\n`, VT, FF, `\r`), no non-ASCII, no double space.
    let mut ok = true;
    let mut prev_space = false;
    for &c in b {
        let space = c == b' ';
        ok &= (0x20..0x80).contains(&c) && !(space && prev_space);
        prev_space = space;
    }
    ok
}

/// Truncates a flattened summary to `width` UTF-16 units (compile.md §3.2.3).
pub fn truncate_summary(s: &str, width: usize) -> String {
    if utf16_len(s) <= width {
        return s.to_string();
    }
    // Byte index of the cut at `width` units, one unit earlier when it would split a pair.
    let mut units = 0;
    let mut cut = 0;
    for (i, c) in s.char_indices() {
        let next = units + c.len_utf16();
        if next > width {
            cut = i;
            break;
        }
        units = next;
        cut = i + c.len_utf8();
    }
    let head = &s[..cut];
    // The last space of the cut, in units; cut there when it lies beyond width/2.
    let mut cut_at = head.len();
    if let Some(space) = head.rfind(' ') {
        let space_units = utf16_len(&head[..space]);
        if space_units * 2 > width {
            cut_at = space;
        }
    }
    let mut out = head[..cut_at].trim_end().to_string();
    out.push('\u{2026}');
    out
}

/// Converts offsets between UTF-8 bytes and UTF-16 units for one text.
///
/// Pure-ASCII texts convert by identity; others keep a `(unit, byte)` checkpoint at a char
/// start about every 64 units and count from the nearest one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Utf16Map {
    len16: usize,
    // Invariant: empty for ASCII text; otherwise sorted (unit, byte) pairs of char starts,
    // beginning with (0, 0).
    checkpoints: Vec<(u32, u32)>,
}

const STEP: usize = 64;

impl Utf16Map {
    /// Builds the map of `text`.
    pub fn new(text: &str) -> Utf16Map {
        if text.is_ascii() {
            return Utf16Map {
                len16: text.len(),
                checkpoints: Vec::new(),
            };
        }
        let mut checkpoints = Vec::with_capacity(text.len() / STEP + 1);
        let mut units = 0usize;
        let mut next_mark = 0usize;
        for (i, c) in text.char_indices() {
            if units >= next_mark {
                checkpoints.push((units as u32, i as u32));
                next_mark = units + STEP;
            }
            units += c.len_utf16();
        }
        if checkpoints.is_empty() {
            checkpoints.push((0, 0));
        }
        Utf16Map {
            len16: units,
            checkpoints,
        }
    }

    /// The map of an ASCII text of `len` bytes (the caller knows it is ASCII).
    pub(crate) fn ascii(len: usize) -> Utf16Map {
        Utf16Map {
            len16: len,
            checkpoints: Vec::new(),
        }
    }

    /// The length in UTF-16 units.
    pub fn len16(&self) -> usize {
        self.len16
    }

    /// Whether the text is pure ASCII.
    pub fn is_ascii(&self) -> bool {
        self.checkpoints.is_empty()
    }

    /// The byte offset of unit offset `u`, clamped to the text. An offset on the second
    /// half of a surrogate pair maps to the start of that char.
    pub fn to_byte(&self, text: &str, u: usize) -> usize {
        if self.checkpoints.is_empty() {
            return u.min(text.len());
        }
        let u = u.min(self.len16);
        let idx = self
            .checkpoints
            .partition_point(|&(cu, _)| cu as usize <= u)
            - 1;
        let (units, byte) = self.checkpoints[idx];
        let mut byte = byte as usize;
        let mut units = units as usize;
        for c in text[byte..].chars() {
            let w = c.len_utf16();
            if units + w > u {
                break;
            }
            units += w;
            byte += c.len_utf8();
        }
        byte
    }

    /// The unit offset of byte offset `b`, which must lie on a char boundary.
    pub fn to_u16(&self, text: &str, b: usize) -> usize {
        if self.checkpoints.is_empty() {
            return b.min(text.len());
        }
        let b = b.min(text.len());
        let idx = self
            .checkpoints
            .partition_point(|&(_, cb)| cb as usize <= b)
            - 1;
        let (units, byte) = self.checkpoints[idx];
        units as usize + utf16_len(&text[byte as usize..b])
    }
}

/// Whether `c` is a letter or a number in the sense of `[\p{L}\p{N}]`.
pub fn is_letter_or_number(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    matches!(
        c.general_category_group(),
        GeneralCategoryGroup::Letter | GeneralCategoryGroup::Number
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_counts_pairs() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("a😀é—"), 5);
    }

    #[test]
    fn map_round_trips() {
        let text: String = (0..500)
            .map(|i| match i % 5 {
                0 => 'a',
                1 => 'é',
                2 => '😀',
                3 => '東',
                _ => '\n',
            })
            .collect();
        let map = Utf16Map::new(&text);
        let mut units = 0;
        for (b, c) in text.char_indices() {
            assert_eq!(map.to_u16(&text, b), units, "byte {b}");
            assert_eq!(map.to_byte(&text, units), b, "unit {units}");
            if c.len_utf16() == 2 {
                assert_eq!(map.to_byte(&text, units + 1), b, "mid-pair unit");
            }
            units += c.len_utf16();
        }
        assert_eq!(map.len16(), units);
        assert_eq!(map.to_u16(&text, text.len()), units);
        assert_eq!(map.to_byte(&text, units), text.len());
    }

    #[test]
    fn truncation_examples() {
        assert_eq!(
            truncate_summary("Registered customers, including churned.", 12),
            "Registered…"
        );
        assert_eq!(truncate_summary("short", 12), "short");
        // A cut that would split a pair cuts one unit earlier.
        assert_eq!(truncate_summary("abcdefghijk😀xyz", 12), "abcdefghijk…");
    }

    #[test]
    fn flatten_runs() {
        assert_eq!(flatten("  a \t\r\n b\u{2003}c  "), "a b c");
        assert_eq!(flatten("a b"), "a b");
        assert_eq!(flatten("a  b"), "a b");
        assert_eq!(flatten("a\u{b}b\u{c}c"), "a b c");
    }

    /// [`flatten`] as compile.md §3 words it, char by char.
    fn flatten_plain(s: &str) -> String {
        s.split(char::is_whitespace)
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    proptest::proptest! {
        #[test]
        fn flatten_matches_the_rule(s in "[ a\t\n\r\u{b}\u{c}\u{85}\u{a0}\u{2003}é~\u{7f}]{0,12}") {
            proptest::prop_assert_eq!(flatten(&s), flatten_plain(&s));
        }
    }
}
