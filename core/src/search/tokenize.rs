//! The search tokenizer (search.md §1): lower-case, NFKD, no combining marks, then the runs
//! of letters and numbers.
//!
//! One function serves documents and queries. Pure-ASCII stretches take a fast path that
//! hands out slices of the input without copying when they hold no upper-case letter.

use crate::text::is_letter_or_number;
use unicode_normalization::char::decompose_compatible;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// Byte classes of the fast path: bit 0 marks a letter or digit, bit 1 an upper-case
/// letter, bit 2 a non-ASCII byte (which leaves the fast path).
const LOW: u8 = 1;
const UP: u8 = 2 | LOW;
const HIGH: u8 = 4 | LOW;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c >= 0x80 {
            t[b] = HIGH;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            t[b] = LOW;
        } else if c.is_ascii_uppercase() {
            t[b] = UP;
        }
        b += 1;
    }
    t
};

const LO_BITS: u64 = 0x0101_0101_0101_0101;
const HI_BITS: u64 = 0x8080_8080_8080_8080;

/// For eight bytes, the masks (high bit of each byte) of token bytes (ASCII letters and
/// digits, and every non-ASCII byte), ASCII upper-case letters and non-ASCII bytes.
#[inline(always)]
fn classify(w: u64) -> (u64, u64, u64) {
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
    let upper = ge(x, 0x41) & !gt(x, 0x5A);
    (((digit | letter) & !high) | high, upper & !high, high)
}

/// The class bits of [`CLASS`] seen in the masks of [`classify`].
#[inline(always)]
fn flags(upper: u64, high: u64) -> u8 {
    LOW | if upper != 0 { UP } else { 0 } | if high != 0 { HIGH } else { 0 }
}

/// A receiver of tokens; the index implements it directly so the hot loop inlines.
pub(crate) trait Sink {
    /// Receives one token.
    fn token(&mut self, t: &str);
}

struct FnSink<F>(F);

impl<F: FnMut(&str)> Sink for FnSink<F> {
    #[inline(always)]
    fn token(&mut self, t: &str) {
        (self.0)(t)
    }
}

/// Calls `f` with every token of `text`, in order (search.md §1).
pub fn for_each_token(text: &str, f: impl FnMut(&str)) {
    scan(text, &mut FnSink(f));
}

/// The tokenizer proper. Runs of bytes between ASCII separators are scanned one by one:
/// a separator always ends a token and is unchanged by lower-casing and NFKD, so each run
/// tokenizes on its own. A pure-ASCII run is a token as it stands; a run with other
/// characters goes through the Unicode path.
#[inline]
pub(crate) fn scan<S: Sink>(text: &str, sink: &mut S) {
    let mut buf = String::new();
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    let mut sigma_checked = false;
    loop {
        while i < n && CLASS[bytes[i] as usize] == 0 {
            i += 1;
        }
        if i == n {
            return;
        }
        let start = i;
        let mut seen = 0u8;
        // Eight bytes at a time while they are all token bytes, then byte by byte.
        while i + 8 <= n {
            let chunk: [u8; 8] = bytes[i..i + 8].try_into().unwrap_or([0; 8]);
            let (token, upper, high) = classify(u64::from_le_bytes(chunk));
            let sep = !token & HI_BITS;
            if sep == 0 {
                seen |= flags(upper, high);
                i += 8;
            } else {
                let k = sep.trailing_zeros() / 8;
                let below = (1u64 << (8 * k)) - 1;
                seen |= flags(upper & below, high & below);
                i += k as usize;
                break;
            }
        }
        if i + 8 > n {
            while i < n {
                let c = CLASS[bytes[i] as usize];
                if c == 0 {
                    break;
                }
                seen |= c;
                i += 1;
            }
        }
        let run = &text[start..i];
        if seen & HIGH == HIGH {
            // Lower-casing is per character except for the final sigma, whose context may
            // reach across separators; a text with a capital sigma is lower-cased whole
            // once. Everything before `start` is ASCII, so offsets agree in both.
            if !sigma_checked {
                sigma_checked = true;
                if text[start..].contains('\u{3A3}') {
                    let lowered = text.to_lowercase();
                    lowered_runs(&lowered[start..], &mut buf, sink);
                    return;
                }
            }
            unicode_run(run, false, &mut buf, sink);
        } else if seen & UP == UP {
            buf.clear();
            buf.push_str(run);
            buf.make_ascii_lowercase();
            sink.token(&buf);
        } else {
            sink.token(run);
        }
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
        push(' ', buf);
    }
}

/// The tokens of `text`, in order.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

/// The distinct tokens of a query, in order of first appearance (search.md §1).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for_each_token(query, |t| {
        if seen.insert(t.to_string()) {
            out.push(t.to_string());
        }
    });
    out
}
