//! The search tokenizer (docs/search.md, "Tokenizer"): lower-case, NFKD, no combining
//! marks, the runs of letters and numbers, then the plural stemmer.
//!
//! One function serves documents and queries. Pure-ASCII runs take a fast path: the runs
//! are found with word-wide bit masks, and a run of at most 16 bytes reaches the index
//! lower-cased, stemmed and packed in two registers, never copied.

use crate::text::is_letter_or_number;
use unicode_normalization::char::decompose_compatible;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

const LO_BITS: u64 = 0x0101_0101_0101_0101;
const HI_BITS: u64 = 0x8080_8080_8080_8080;

/// For eight bytes, the mask (high bit of each byte) of token bytes: ASCII letters and
/// digits, and every non-ASCII byte.
#[inline(always)]
fn classify(w: u64) -> u64 {
    let high = w & HI_BITS;
    // With the high bits cleared, adding a per-byte constant below 0x80 cannot carry into
    // the next byte: `ge` sets a byte's high bit when it is at least `lo`, `gt` when it is
    // above `hi`.
    let x = w & !HI_BITS;
    let ge = |v: u64, lo: u64| v.wrapping_add((0x80 - lo) * LO_BITS) & HI_BITS;
    let gt = |v: u64, hi: u64| v.wrapping_add((0x7F - hi) * LO_BITS) & HI_BITS;
    let digit = ge(x, 0x30) & !gt(x, 0x39);
    let folded = x | (0x20 * LO_BITS);
    let letter = ge(folded, 0x61) & !gt(folded, 0x7A);
    ((digit | letter) & !high) | high
}

/// A receiver of tokens; the index implements it directly so the hot loop inlines.
pub(crate) trait Sink {
    /// Receives one token.
    fn token(&mut self, t: &str);

    /// Receives an ASCII token of at most [`SHORT`] bytes, lower-cased and packed as by
    /// [`pack16`]; `len` is its length.
    #[inline(always)]
    fn short(&mut self, key: [u64; 2], len: usize) {
        let mut b = [0u8; SHORT];
        b[..8].copy_from_slice(&key[0].to_le_bytes());
        b[8..].copy_from_slice(&key[1].to_le_bytes());
        self.token(std::str::from_utf8(&b[..len]).unwrap_or_default());
    }

    /// [`Sink::short`] for a run straight from the text, whose last byte as written is
    /// `last`.
    #[inline(always)]
    fn short_run(&mut self, key: [u64; 2], len: usize, last: u8) {
        let _ = last;
        self.short(key, len);
    }
}

struct FnSink<F>(F);

impl<F: FnMut(&str)> Sink for FnSink<F> {
    #[inline(always)]
    fn token(&mut self, t: &str) {
        (self.0)(t)
    }
}

/// Calls `f` with every token of `text`, in order, stemmed (docs/search.md, "Tokenizer").
pub fn for_each_token(text: &str, f: impl FnMut(&str)) {
    scan(text, &mut FnSink(f));
}

/// Calls `f` with every run of letters and numbers of `text` after lower-casing, NFKD and
/// mark removal, but before the plural stemmer: the tokens of the ranking before it had
/// one (the retrieval benchmark's baseline scorer uses it).
pub fn for_each_unstemmed_token(text: &str, f: impl FnMut(&str)) {
    scan_runs(text, &mut FnSink(f));
}

/// What the plural stemmer does to a token (docs/search.md, "Plural stemmer").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stem {
    Keep,
    /// Drop the final `s`.
    DropS,
    /// Replace the final `ies` by `y`.
    IesToY,
}

/// The stemmer's decision for a token of `n` bytes whose byte `i` is `at(i)`; `short` is
/// whether the token has fewer than 3 characters. Every suffix the rules test is ASCII, and
/// no byte of a multi-byte UTF-8 character is ASCII, so the tests can look at bytes.
#[inline(always)]
fn stem_rule(n: usize, at: impl Fn(usize) -> u8, short: impl FnOnce() -> bool) -> Stem {
    if n < 3 || at(n - 1) != b's' {
        return Stem::Keep;
    }
    let p = at(n - 2);
    if p == b'u' || p == b's' || short() {
        return Stem::Keep;
    }
    if p == b'e' {
        let q = at(n - 3);
        // `ies` with more than 3 characters: one character precedes it, whose last byte
        // is `at(n - 4)`.
        if q == b'i' && n > 3 {
            let r = at(n - 4);
            if r != b'a' && r != b'e' {
                return Stem::IesToY;
            }
        }
        if matches!(q, b'i' | b'a' | b'o' | b'e') {
            return Stem::Keep;
        }
    }
    Stem::DropS
}

/// The plural stemmer applied to one token (docs/search.md, "Plural stemmer").
pub fn stem(t: &str) -> std::borrow::Cow<'_, str> {
    let b = t.as_bytes();
    match stem_rule(b.len(), |i| b[i], || t.chars().nth(2).is_none()) {
        Stem::Keep => t.into(),
        Stem::DropS => t[..t.len() - 1].into(),
        Stem::IesToY => format!("{}y", &t[..t.len() - 3]).into(),
    }
}

/// A sink that stems every token before passing it on.
struct Stemmer<'a, S> {
    inner: &'a mut S,
    buf: String,
}

impl<S: Sink> Sink for Stemmer<'_, S> {
    #[inline(always)]
    fn token(&mut self, t: &str) {
        let b = t.as_bytes();
        match stem_rule(b.len(), |i| b[i], || t.chars().nth(2).is_none()) {
            Stem::Keep => self.inner.token(t),
            Stem::DropS => self.inner.token(&t[..t.len() - 1]),
            Stem::IesToY => {
                self.buf.clear();
                self.buf.push_str(&t[..t.len() - 3]);
                self.buf.push('y');
                self.inner.token(&self.buf);
            }
        }
    }

    #[inline(always)]
    fn short_run(&mut self, key: [u64; 2], len: usize, last: u8) {
        // Most tokens do not end in `s`, which their last byte tells (`S` lower-cases to
        // `s` by setting 0x20).
        if len < 3 || last | 0x20 != b's' {
            self.inner.short(key, len);
        } else {
            self.short(key, len);
        }
    }

    #[inline(always)]
    fn short(&mut self, key: [u64; 2], len: usize) {
        // An ASCII token: bytes are characters. Most tokens do not end in `s`, which one
        // shift of the packed key tells. Only 64-bit shifts: on wasm32 a `u128` shift is a
        // call.
        let at = |i: usize| (key[i / 8] >> (8 * (i % 8))) as u8;
        if len < 3 || at(len - 1) != b's' {
            return self.inner.short(key, len);
        }
        // The first `n` bytes (`n` < 16 here).
        let cut = |n: usize| {
            let [m0, m1] = RUN_MASKS[n];
            [key[0] & m0, key[1] & m1]
        };
        match stem_rule(len, at, || false) {
            Stem::Keep => self.inner.short(key, len),
            Stem::DropS => self.inner.short(cut(len - 1), len - 1),
            Stem::IesToY => {
                let mut w = cut(len - 3);
                w[(len - 3) / 8] |= u64::from(b'y') << (8 * ((len - 3) % 8));
                self.inner.short(w, len - 2);
            }
        }
    }
}

/// Packs at most 8 bytes into a `u64`, little-endian, zero-padded.
///
/// Two overlapping loads instead of a copy into a stack buffer, which would stall on
/// store forwarding.
#[inline]
pub(crate) fn pack(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let lo = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let hi = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        lo | (hi << (8 * (n - 4)))
    } else if n >= 2 {
        let lo = u64::from(u16::from_le_bytes([b[0], b[1]]));
        let hi = u64::from(b[n - 1]);
        lo | (hi << (8 * (n - 1)))
    } else if n == 1 {
        u64::from(b[0])
    } else {
        0
    }
}

#[inline(always)]
fn load8(b: &[u8], at: usize) -> u64 {
    // One bounds check and one load (indexing byte by byte compiles to eight).
    <[u8; 8]>::try_from(&b[at..at + 8]).map_or(0, u64::from_le_bytes)
}

/// The 8 bytes at `at`, zero-padded past the end of `b`.
#[inline(always)]
fn load8_padded(b: &[u8], at: usize) -> u64 {
    if at + 8 <= b.len() {
        load8(b, at)
    } else {
        pack(&b[at.min(b.len())..])
    }
}

/// The longest term the index keeps inline, in bytes.
pub(crate) const SHORT: usize = 16;

/// Packs at most [`SHORT`] bytes into two `u64`s, zero-padded. Tokens hold no zero byte,
/// so the packing of a token is unique, and never all zero.
#[inline]
pub(crate) fn pack16(b: &[u8]) -> [u64; 2] {
    let n = b.len();
    if n <= 8 {
        [pack(b), 0]
    } else {
        [load8(b, 0), load8(b, n - 8) >> (8 * (SHORT - n))]
    }
}

/// The bit that lower-cases an ASCII letter, in every byte.
const LOWER: u64 = 0x20 * LO_BITS;

/// For a run of `n` bytes (`n` ≤ [`SHORT`]), the masks of its bytes in two words.
static RUN_MASKS: [[u64; 2]; SHORT + 1] = run_masks();

const fn run_masks() -> [[u64; 2]; SHORT + 1] {
    let mut out = [[0u64; 2]; SHORT + 1];
    let mut n = 1;
    while n <= SHORT {
        let lo = if n >= 8 { 8 } else { n };
        out[n][0] = u64::MAX >> (64 - 8 * lo);
        if n > 8 {
            out[n][1] = u64::MAX >> (64 - 8 * (n - 8));
        }
        n += 1;
    }
    out
}

/// One bit per byte: bit `j` is the high bit of byte `j` (a SWAR move-mask).
#[inline(always)]
fn movemask(m: u64) -> u64 {
    (((m >> 7) & LO_BITS).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The tokenizer proper: the runs of letters and numbers, stemmed.
#[inline]
pub(crate) fn scan<S: Sink>(text: &str, sink: &mut S) {
    scan_runs(
        text,
        &mut Stemmer {
            inner: sink,
            buf: String::new(),
        },
    );
}

/// The runs of letters and numbers, before the stemmer.
///
/// Runs of bytes between ASCII separators are scanned one by one: a separator always ends
/// a token and is unchanged by lower-casing and NFKD, so each run tokenizes on its own. The
/// runs come from a bit mask of "letter, digit or non-ASCII" built 64 bytes at a time, so
/// finding them costs no per-byte branches. A pure-ASCII run is a token as it stands
/// (lower-cased in registers when it is short); a run with other characters goes through
/// the Unicode path.
#[inline]
fn scan_runs<S: Sink>(text: &str, sink: &mut S) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut st = ScanState {
        buf: String::new(),
        sigma_checked: false,
    };
    // The start of a run that continues into the next block.
    let mut open: Option<usize> = None;
    let mut base = 0;
    while base < n {
        let mut bits = 0u64;
        if let Some(block) = bytes.get(base..base + 64) {
            for (c, w) in block.chunks_exact(8).enumerate() {
                let w = <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes);
                bits |= movemask(classify(w)) << (8 * c);
            }
        } else {
            // The last, partial block: zero bytes are separators.
            let mut tail = [0u8; 64];
            tail[..n - base].copy_from_slice(&bytes[base..]);
            for (c, w) in tail.chunks_exact(8).enumerate() {
                let w = <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes);
                bits |= movemask(classify(w)) << (8 * c);
            }
        }
        if let Some(s) = open {
            let ones = bits.trailing_ones() as usize;
            if ones == 64 {
                base += 64;
                continue;
            }
            open = None;
            if st.run(text, s, base + ones, sink) {
                return;
            }
            bits &= !((1u64 << ones) - 1);
        }
        while bits != 0 {
            let s = bits.trailing_zeros() as usize;
            let len = (bits >> s).trailing_ones() as usize;
            if s + len == 64 {
                open = Some(base + s);
                break;
            }
            if st.run(text, base + s, base + s + len, sink) {
                return;
            }
            // Clear the lowest run of ones (it does not reach bit 63).
            bits &= bits.wrapping_add(bits & bits.wrapping_neg());
        }
        base += 64;
    }
    if let Some(s) = open {
        st.run(text, s, n, sink);
    }
}

/// Calls `f(start, end)` for every maximal run of token bytes (ASCII letters and digits,
/// and non-ASCII bytes) of `bytes`, in order, found 64 bytes at a time as [`scan_runs`]
/// finds them.
pub(crate) fn token_runs(bytes: &[u8], mut f: impl FnMut(usize, usize)) {
    let n = bytes.len();
    let mut open: Option<usize> = None;
    let mut base = 0;
    while base < n {
        let mut bits = 0u64;
        if let Some(block) = bytes.get(base..base + 64) {
            for (c, w) in block.chunks_exact(8).enumerate() {
                let w = <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes);
                bits |= movemask(classify(w)) << (8 * c);
            }
        } else {
            let mut tail = [0u8; 64];
            tail[..n - base].copy_from_slice(&bytes[base..]);
            for (c, w) in tail.chunks_exact(8).enumerate() {
                let w = <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes);
                bits |= movemask(classify(w)) << (8 * c);
            }
        }
        if let Some(s) = open {
            let ones = bits.trailing_ones() as usize;
            if ones == 64 {
                base += 64;
                continue;
            }
            open = None;
            f(s, base + ones);
            bits &= !((1u64 << ones) - 1);
        }
        while bits != 0 {
            let s = bits.trailing_zeros() as usize;
            let len = (bits >> s).trailing_ones() as usize;
            if s + len == 64 {
                open = Some(base + s);
                break;
            }
            f(base + s, base + s + len);
            bits &= bits.wrapping_add(bits & bits.wrapping_neg());
        }
        base += 64;
    }
    if let Some(s) = open {
        f(s, n);
    }
}

struct ScanState {
    buf: String,
    sigma_checked: bool,
}

impl ScanState {
    /// Tokenizes the run `text[s..e]`. Returns true when the rest of the text, from `s` on,
    /// has been handled (the final-sigma path).
    #[inline(always)]
    fn run<S: Sink>(&mut self, text: &str, s: usize, e: usize, sink: &mut S) -> bool {
        let bytes = text.as_bytes();
        let len = e - s;
        if len <= SHORT {
            let (w0, w1) = match bytes[s..].first_chunk::<16>() {
                Some(c) => {
                    let v = u128::from_le_bytes(*c);
                    (v as u64, (v >> 64) as u64)
                }
                None => (load8_padded(bytes, s), load8_padded(bytes, s + 8)),
            };
            let [m0, m1] = RUN_MASKS[len];
            let (k0, k1) = (w0 & m0, w1 & m1);
            if (k0 | k1) & HI_BITS == 0 {
                // An ASCII run holds only letters and digits, and every digit has the
                // bit 0x20 set already: setting it in each byte lower-cases the run.
                sink.short_run([k0 | (m0 & LOWER), k1 | (m1 & LOWER)], len, bytes[e - 1]);
                return false;
            }
        }
        let run = &text[s..e];
        if run.is_ascii() {
            if run.bytes().any(|b| b.is_ascii_uppercase()) {
                self.buf.clear();
                self.buf.push_str(run);
                self.buf.make_ascii_lowercase();
                sink.token(&self.buf);
            } else {
                sink.token(run);
            }
            return false;
        }
        // Lower-casing is per character except for the final sigma, whose context may
        // reach across separators; a text with a capital sigma is lower-cased whole once.
        // Everything before the first non-ASCII run is ASCII, so offsets agree in both.
        if !self.sigma_checked {
            self.sigma_checked = true;
            if text[s..].contains('\u{3A3}') {
                let lowered = text.to_lowercase();
                lowered_runs(&lowered[s..], &mut self.buf, sink);
                return true;
            }
        }
        unicode_run(run, false, &mut self.buf, sink);
        false
    }
}

/// Tokenizes an already lower-cased text run by run.
fn lowered_runs<S: Sink>(text: &str, buf: &mut String, sink: &mut S) {
    for run in text.split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric()) {
        if !run.is_empty() {
            unicode_run(run, true, buf, sink);
        }
    }
}

/// One run between ASCII separators, through lower-casing (unless `lowered`), NFKD, mark
/// removal and the letter-or-number split.
fn unicode_run<S: Sink>(run: &str, lowered: bool, buf: &mut String, sink: &mut S) {
    buf.clear();
    let mut push = |c: char, buf: &mut String| {
        // NFKD of one character; every character with a non-zero combining class is a
        // mark, so the canonical reordering of a whole-text NFKD only moves marks, which
        // are dropped anyway.
        decompose_compatible(c, |d| {
            if d.is_ascii() {
                if d.is_ascii_alphanumeric() {
                    buf.push(d);
                } else if !buf.is_empty() {
                    sink.token(buf);
                    buf.clear();
                }
            } else if d.general_category_group() == GeneralCategoryGroup::Mark {
            } else if is_letter_or_number(d) {
                buf.push(d);
            } else if !buf.is_empty() {
                sink.token(buf);
                buf.clear();
            }
        });
    };
    for c in run.chars() {
        if c.is_ascii() {
            buf.push(c.to_ascii_lowercase());
        } else if lowered {
            push(c, buf);
        } else {
            for l in c.to_lowercase() {
                push(l, buf);
            }
        }
    }
    if !buf.is_empty() {
        sink.token(buf);
    }
}

/// The tokens of `text`, in order, stemmed.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

/// The distinct tokens of a query, in order of first appearance (docs/search.md), from the
/// whole query (the ranking itself considers only the first [`MAX_QUERY_TOKENS`](super::MAX_QUERY_TOKENS)).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    for_each_token(query, |t| {
        if seen.insert(t.to_string()) {
            out.push(t.to_string());
        }
    });
    out
}
