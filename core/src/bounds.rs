//! The limits that keep the work a request causes bounded, and the one way an error quotes
//! a value it was given (docs/limits.md).
//!
//! Every host reads requests through these numbers: the stdio MCP server frames lines by
//! [`MESSAGE_BYTES`], the engine refuses more than [`CONTENT_BYTES`] of written content, the
//! compiler refuses YAML beyond [`YAML_FLOW_DEPTH`] and [`YAML_ALIAS_NODES`] before its
//! parser runs, and the path validator keeps segments within [`SEGMENT_BYTES`]. Every error
//! message that echoes a value passes it through [`quote`], so a megabyte of bad input comes
//! back as a short prefix.

use crate::text::utf16_len;
use std::borrow::Cow;

/// The most written content one request may carry, in UTF-8 bytes of the decoded strings
/// (engine.md §5.2 rule 6).
pub const CONTENT_BYTES: usize = 16 * 1024 * 1024;

/// The longest JSON-RPC message a host reads, in bytes (100 MiB). A JSON encoder may write
/// a content byte as a six-character `\u00XX` escape, so a request at the content limit can
/// take six times [`CONTENT_BYTES`]; 4 MiB more hold the rest of the largest `transact`
/// (1,000 paths, bundles, hashes and keys, each escaped the same way).
pub const MESSAGE_BYTES: usize = 6 * CONTENT_BYTES + 4 * 1024 * 1024;

/// The most UTF-16 units of an echoed value an error message quotes before `…`.
pub const QUOTE_UNITS: usize = 120;

/// The longest path segment, in UTF-8 bytes: what ext4, APFS, btrfs and most other file
/// systems allow in one file name.
pub const SEGMENT_BYTES: usize = 255;

/// The deepest nesting of YAML flow collections (`[`, `{`) the compiler hands to its YAML
/// parser. The parser's work per token grows with this depth, and `yaml_serde` refuses
/// anything nested deeper than 128 levels anyway.
pub const YAML_FLOW_DEPTH: usize = 128;

/// The most YAML nodes that aliases (`*name`) may add by repeating their anchored nodes.
/// Each alias costs the size of its anchor, so a few lines can otherwise ask for billions.
pub const YAML_ALIAS_NODES: usize = 100_000;

/// Whether `c` is shown escaped when an error quotes it: C0 and C1 controls, DEL, line and
/// paragraph separators, and the invisible characters of [`is_invisible`].
fn shown_escaped(c: char) -> bool {
    matches!(c as u32, 0..=0x1f | 0x7f..=0x9f | 0x2028 | 0x2029) || is_invisible(c)
}

/// Bidirectional controls and characters that have no width or ink: in a name they make one
/// name look like another (U+202E reverses the text after it, U+200B shows as nothing).
pub fn is_invisible(c: char) -> bool {
    is_bidi_control(c)
        || matches!(
            c as u32,
            0x00ad | 0x034f | 0x115f | 0x1160 | 0x180e | 0x200b..=0x200d | 0x2060..=0x2064
                | 0x206a..=0x206f | 0x3164 | 0xfeff | 0xffa0
        )
}

/// The bidirectional formatting characters (Unicode's `Bidi_Control` property).
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c as u32,
        0x061c | 0x200e | 0x200f | 0x202a..=0x202e | 0x2066..=0x2069
    )
}

/// A value as an error message quotes it: at most [`QUOTE_UNITS`] UTF-16 units of it
/// (never half a surrogate pair), then `…` when it was longer; controls and invisible
/// characters written as `\uXXXX`, as JSON would, so the message shows what was sent. A
/// short, plain value comes back unchanged.
pub fn quote(value: &str) -> Cow<'_, str> {
    quote_within(value, QUOTE_UNITS)
}

/// [`quote`] with another limit.
pub fn quote_within(value: &str, units: usize) -> Cow<'_, str> {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    if plain && value.len() <= units {
        return Cow::Borrowed(value);
    }
    if !plain && utf16_len(value) <= units && !value.chars().any(shown_escaped) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(units.min(value.len()) + 8);
    let mut taken = 0;
    let mut cut = false;
    for c in value.chars() {
        let n = c.len_utf16();
        if taken + n > units {
            cut = true;
            break;
        }
        taken += n;
        if shown_escaped(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    if cut {
        out.push('…');
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_unchanged() {
        assert!(matches!(quote("tables/orders.md"), Cow::Borrowed(_)));
        assert!(matches!(quote("Café/naïve.md"), Cow::Borrowed(_)));
        assert_eq!(quote(""), "");
        let exact = "a".repeat(QUOTE_UNITS);
        assert_eq!(quote(&exact), exact);
    }

    #[test]
    fn long_values_are_cut_with_an_ellipsis() {
        let long = "a".repeat(1_000_000);
        let q = quote(&long);
        assert_eq!(q, format!("{}…", "a".repeat(QUOTE_UNITS)));
        // Never half a surrogate pair: the emoji that would straddle the limit is left out.
        let emoji = format!("{}😀tail", "b".repeat(QUOTE_UNITS - 1));
        assert_eq!(quote(&emoji), format!("{}…", "b".repeat(QUOTE_UNITS - 1)));
        assert_eq!(utf16_len(&quote(&"é".repeat(500))), QUOTE_UNITS + 1);
    }

    #[test]
    fn controls_and_invisible_characters_are_escaped() {
        assert_eq!(quote("a\0b.md"), "a\\u0000b.md");
        assert_eq!(quote("a\tb"), "a\\u0009b");
        assert_eq!(quote("x\u{202e}gpj.md"), "x\\u202egpj.md");
        assert_eq!(quote("a\u{200b}b"), "a\\u200bb");
        assert_eq!(quote("\u{7f}\u{85}"), "\\u007f\\u0085");
        // The limit counts what was sent, not the escapes.
        let many = "\0".repeat(200);
        assert_eq!(quote(&many), format!("{}…", "\\u0000".repeat(QUOTE_UNITS)));
    }

    /// The message limit holds the content limit escaped, with 1,000 changes' paths beside.
    const _: () = assert!(MESSAGE_BYTES >= 6 * CONTENT_BYTES + 1000 * 2_500);
}
