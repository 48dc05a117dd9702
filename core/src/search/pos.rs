//! `pos`: where in a body the query's words cluster most densely (search.md §6).

use super::table::Fast;
use crate::text::{is_letter_or_number, Utf16Map};
use std::collections::HashMap;

/// The width of the `pos` window, in UTF-16 units.
pub const WINDOW: usize = 2000;

/// The query words of search.md §6 rule 2: runs of letters and numbers as typed.
pub fn query_words(query: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in query.char_indices() {
        if is_letter_or_number(c) {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push(&query[s..i]);
        }
    }
    if let Some(s) = start {
        out.push(&query[s..]);
    }
    out
}

/// One occurrence: start and end in UTF-16 units, and the word's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Occ {
    start: usize,
    end: usize,
    word: usize,
}

/// The `pos` of `body` for the query `words` (as returned by [`query_words`]), or `None`
/// for `-`.
pub fn pos(body: &str, map: &Utf16Map, words: &[&str]) -> Option<usize> {
    if body.is_empty() || words.is_empty() {
        return None;
    }
    let body_len = map.len16();
    let lowered_words = || dedup(words.iter().map(|w| w.to_lowercase()));
    let (occ, nwords) = if body.is_ascii() {
        // Rule 3: lower-casing an ASCII body keeps its length, so the lower-cased words are
        // looked for in the lower-cased body.
        let words = lowered_words();
        (ascii_occurrences(body.as_bytes(), &words), words.len())
    } else if let Some((occ, n)) = separators_only(body, map, &lowered_words) {
        (occ, n)
    } else {
        // Rule 3: search lower-cased when that keeps the body's length.
        let lowered = body.to_lowercase();
        let (hay, words): (&str, Vec<String>) = if crate::text::utf16_len(&lowered) == body_len {
            (&lowered, lowered_words())
        } else {
            (body, dedup(words.iter().map(|w| w.to_string())))
        };
        (occurrences(hay, &words), words.len())
    };
    place(body, map, &occ, nwords)
}

/// The byte path for a body whose non-ASCII characters are all neither letters nor numbers
/// and lower-case to themselves (dashes, quotes, symbols, emoji): lower-casing it changes
/// only ASCII letters, so its length holds (rule 3), its runs of letters and numbers are
/// ASCII, and a word occurs exactly where [`ascii_occurrences`] finds it in its bytes; the
/// offsets are then turned into UTF-16 units. `None` for any other body, for more than
/// eight words (the run scanner would take those characters for letters), or when a
/// lower-cased word holds a character that is not a letter or number (it might occur in
/// such a body, and is searched for directly by the general path).
fn separators_only(
    body: &str,
    map: &Utf16Map,
    lowered_words: &impl Fn() -> Vec<String>,
) -> Option<(Vec<Occ>, usize)> {
    let bytes = body.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(w) = bytes.get(at..at + 8) {
            let w = <[u8; 8]>::try_from(w).map_or(0, u64::from_le_bytes);
            if w & 0x8080_8080_8080_8080 == 0 {
                at += 8;
                continue;
            }
        }
        if bytes[at] < 0x80 {
            at += 1;
            continue;
        }
        let c = body[at..].chars().next()?;
        let mut lower = c.to_lowercase();
        if is_letter_or_number(c) || lower.next() != Some(c) || lower.next().is_some() {
            return None;
        }
        at += c.len_utf8();
    }
    let words = lowered_words();
    if words.len() > 8 || words.iter().any(|w| !w.chars().all(is_letter_or_number)) {
        return None;
    }
    let mut occ = ascii_occurrences(bytes, &words);
    for o in &mut occ {
        o.start = map.to_u16(body, o.start);
        o.end = map.to_u16(body, o.end);
    }
    Some((occ, words.len()))
}

/// Rules 5 and 6 over the occurrences, sorted by offset.
fn place(body: &str, map: &Utf16Map, occ: &[Occ], words: usize) -> Option<usize> {
    let mut p = window(map, occ, words)?;
    // Never on the second half of a surrogate pair of the body `get` slices.
    let b = map.to_byte(body, p);
    if map.to_u16(body, b) != p {
        p -= 1;
    }
    Some(p)
}

/// The window's start of rules 5 and 6, before the surrogate rule (which an ASCII body,
/// one UTF-16 unit per byte, never needs).
fn window(map: &Utf16Map, occ: &[Occ], words: usize) -> Option<usize> {
    if occ.is_empty() {
        return None;
    }
    let body_len = map.len16();
    let (start, end) = densest(occ, words);
    // Rule 6.
    let len = end - start;
    let lead = WINDOW.saturating_sub(len) / 2;
    Some(
        start
            .saturating_sub(lead)
            .min(body_len.saturating_sub(WINDOW)),
    )
}

/// [`pos`] of a concept's body (search.md §6). An ASCII body is read as its bytes, as
/// [`pos`] reads it: a text a store handed out in place (`crate::bytes::Text`) reads as
/// `str` only after a UTF-8 check of the whole text, which bytes that are all ASCII do not
/// need. Any other body goes to [`pos`].
pub(crate) fn pos_of(c: &crate::compile::Concept, words: &[&str]) -> Option<usize> {
    let map = &c.parsed.body_map;
    let Some(body) = c.text.as_bytes().get(c.parsed.body_start..) else {
        return pos(c.body(), map, words);
    };
    if !body.is_ascii() {
        return pos(c.body(), map, words);
    }
    if body.is_empty() || words.is_empty() {
        return None;
    }
    let words = dedup(words.iter().map(|w| w.to_lowercase()));
    window(map, &ascii_occurrences(body, &words), words.len())
}

/// [`occurrences`] for an ASCII body and lower-cased `words`: the body is lower-cased as
/// bytes and its runs of letters and digits (bytes are characters and UTF-16 units here)
/// come from word-wide bit masks, so no character is decoded. A word with a non-ASCII
/// character cannot occur in an ASCII body; every other word is letters and digits (the
/// lower-case mapping of a letter or digit that reaches ASCII is one).
fn ascii_occurrences(body: &[u8], words: &[String]) -> Vec<Occ> {
    let mut out = Vec::new();
    let mut hay = body.to_vec();
    hay.make_ascii_lowercase();
    let wanted: Vec<(usize, &[u8])> = words
        .iter()
        .enumerate()
        .filter(|(_, w)| w.bytes().all(|b| b.is_ascii_alphanumeric()))
        .map(|(i, w)| (i, w.as_bytes()))
        .collect();
    if wanted.is_empty() {
        return out;
    }
    if wanted.len() <= 8 {
        // Few words: each is looked for with a vectorised substring search, and a match
        // counts when it is a whole run (rule 4). Matches of one word never overlap a whole
        // run of it, so the leftmost-first search misses none.
        let alnum = |at: usize| hay.get(at).is_some_and(u8::is_ascii_alphanumeric);
        for &(i, w) in &wanted {
            for s in memchr::memmem::find_iter(&hay, w) {
                let e = s + w.len();
                if !(alnum(e) || s > 0 && alnum(s - 1)) {
                    out.push(Occ {
                        start: s,
                        end: e,
                        word: i,
                    });
                }
            }
        }
        if wanted.len() > 1 {
            out.sort_unstable();
        }
        return out;
    }
    // Many words: one pass over the runs, one hash look-up per run of a wanted length.
    let mut lens = 0u64;
    let mut long = false;
    for (_, w) in &wanted {
        if w.len() < 64 {
            lens |= 1 << w.len();
        } else {
            long = true;
        }
    }
    let by_text: HashMap<&[u8], usize, Fast> = wanted.iter().map(|&(i, w)| (w, i)).collect();
    super::tokenize::token_runs(&hay, |s, e| {
        let n = e - s;
        if if n < 64 { lens >> n & 1 == 0 } else { !long } {
            return;
        }
        if let Some(&word) = by_text.get(&hay[s..e]) {
            out.push(Occ {
                start: s,
                end: e,
                word,
            });
        }
    });
    out
}

/// The occurrences of the general path, for tests comparing it with the ASCII one.
#[cfg(test)]
pub(crate) fn pos_unicode(body: &str, map: &Utf16Map, words: &[&str]) -> Option<usize> {
    if body.is_empty() || words.is_empty() {
        return None;
    }
    let lowered = body.to_lowercase();
    let (hay, words): (&str, Vec<String>) = if crate::text::utf16_len(&lowered) == map.len16() {
        (&lowered, dedup(words.iter().map(|w| w.to_lowercase())))
    } else {
        (body, dedup(words.iter().map(|w| w.to_string())))
    };
    let occ = occurrences(hay, &words);
    place(body, map, &occ, words.len())
}

fn dedup(words: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = rustc_hash::FxHashSet::default();
    words.filter(|w| seen.insert(w.clone())).collect()
}

/// Every occurrence of every word whose neighbours are not letters or numbers, sorted by
/// offset (rule 4).
fn occurrences(hay: &str, words: &[String]) -> Vec<Occ> {
    let mut out = Vec::new();
    // A word made of letters and numbers only occurs exactly where a maximal run of them
    // equals it, so one pass over the runs finds all of them. Words with other characters
    // (a lower-case mapping can add a combining mark) are searched for directly.
    let mut by_text: HashMap<&str, usize, Fast> = HashMap::default();
    let mut odd: Vec<usize> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if w.chars().all(is_letter_or_number) {
            by_text.insert(w.as_str(), i);
        } else {
            odd.push(i);
        }
    }
    if !by_text.is_empty() {
        let mut units = 0usize;
        let mut run: Option<(usize, usize)> = None; // (byte, unit) of the run's start
        for (b, c) in hay.char_indices() {
            if is_letter_or_number(c) {
                run.get_or_insert((b, units));
            } else if let Some((rb, ru)) = run.take() {
                if let Some(&w) = by_text.get(&hay[rb..b]) {
                    out.push(Occ {
                        start: ru,
                        end: units,
                        word: w,
                    });
                }
            }
            units += c.len_utf16();
        }
        if let Some((rb, ru)) = run {
            if let Some(&w) = by_text.get(&hay[rb..]) {
                out.push(Occ {
                    start: ru,
                    end: units,
                    word: w,
                });
            }
        }
    }
    if !odd.is_empty() {
        let map = Utf16Map::new(hay);
        for &i in &odd {
            let w = words[i].as_str();
            let mut from = 0;
            while let Some(found) = hay[from..].find(w) {
                let s = from + found;
                let e = s + w.len();
                let before = hay[..s].chars().next_back();
                let after = hay[e..].chars().next();
                if !before.is_some_and(is_letter_or_number)
                    && !after.is_some_and(is_letter_or_number)
                {
                    out.push(Occ {
                        start: map.to_u16(hay, s),
                        end: map.to_u16(hay, e),
                        word: i,
                    });
                }
                from = s + hay[s..].chars().next().map_or(1, char::len_utf8);
            }
        }
        out.sort_unstable();
    }
    out
}

/// The densest window (rule 5): returns the cluster's start and end.
fn densest(occ: &[Occ], words: usize) -> (usize, usize) {
    // The window of anchor i holds i and every later occurrence ending at or before
    // `start(i) + WINDOW`. Limits only grow with i, so a pointer over the occurrences
    // sorted by end adds each one once; one whose index is not above the current anchor
    // never belongs to a later window either.
    let mut by_end: Vec<usize> = (0..occ.len()).collect();
    by_end.sort_by_key(|&j| (occ[j].end, j));
    let mut count = vec![0u32; words];
    let mut in_set = vec![false; occ.len()];
    let mut distinct = 0usize;
    let mut p = 0;
    let mut best: Option<(usize, usize)> = None; // (distinct, anchor)
    for i in 0..occ.len() {
        if in_set[i] {
            in_set[i] = false;
            count[occ[i].word] -= 1;
            if count[occ[i].word] == 0 {
                distinct -= 1;
            }
        }
        let limit = occ[i].start + WINDOW;
        while p < by_end.len() && occ[by_end[p]].end <= limit {
            let j = by_end[p];
            if j > i {
                in_set[j] = true;
                if count[occ[j].word] == 0 {
                    distinct += 1;
                }
                count[occ[j].word] += 1;
            }
            p += 1;
        }
        let here = distinct + usize::from(count[occ[i].word] == 0);
        if best.is_none_or(|(d, _)| here > d) {
            best = Some((here, i));
        }
    }
    let anchor = best.map_or(0, |(_, a)| a);
    let limit = occ[anchor].start + WINDOW;
    let mut end = occ[anchor].end;
    for o in &occ[anchor + 1..] {
        if o.start > limit {
            break;
        }
        if o.end <= limit {
            end = o.end;
        }
    }
    (occ[anchor].start, end)
}
