//! Validators for tenant ids, bundle names and document paths (compile.md §10).

use crate::bounds::{self, quote};
use crate::error::{Error, Result};
use crate::text::utf16_len;
use unicode_normalization::UnicodeNormalization;

/// The message for two targets equal ignoring case.
pub const CASE_UNIQUE: &str = "document paths must be unique across case-insensitive filesystems";

fn name_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

fn is_device_name(segment: &str) -> bool {
    is_device_segment(segment.as_bytes())
}

/// [`is_device_name`] of a segment's bytes.
fn is_device_segment(segment: &[u8]) -> bool {
    // The stem before the first dot, compared without case and without a copy.
    let stem = &segment[..segment
        .iter()
        .position(|&c| c == b'.')
        .unwrap_or(segment.len())];
    match stem.len() {
        3 => [b"con", b"prn", b"aux", b"nul"]
            .iter()
            .any(|d| stem.eq_ignore_ascii_case(*d)),
        4 => {
            (stem[..3].eq_ignore_ascii_case(b"com") || stem[..3].eq_ignore_ascii_case(b"lpt"))
                && matches!(stem[3], b'1'..=b'9')
        }
        _ => false,
    }
}

/// Validates a tenant id and returns it lower-cased (compile.md §10.1).
pub fn tenant_id(id: &str) -> Result<String> {
    if !name_ok(id) {
        return Err(Error::Invalid(format!(
            "invalid tenant id \"{}\": expected 1-64 chars of [a-z0-9_-]",
            quote(id)
        )));
    }
    if is_device_name(id) {
        return Err(Error::Invalid(format!(
            "invalid tenant id \"{}\": a reserved device name on Windows",
            quote(id)
        )));
    }
    Ok(id.to_ascii_lowercase())
}

/// Validates a bundle name (compile.md §10.2). The case is kept.
pub fn bundle_name(name: &str) -> Result<()> {
    if !name_ok(name) {
        return Err(Error::Invalid(format!(
            "invalid bundle name \"{}\": expected 1-64 chars of [a-z0-9_-]",
            quote(name)
        )));
    }
    if is_device_name(name) {
        return Err(Error::Invalid(format!(
            "invalid bundle name \"{}\": a reserved device name on Windows",
            quote(name)
        )));
    }
    Ok(())
}

/// Normalises a path to NFC (compile.md §10.3).
pub fn nfc(s: &str) -> String {
    if s.is_ascii() {
        s.to_string()
    } else {
        s.nfc().collect()
    }
}

/// Normalises `path` to NFC and validates it (compile.md §10.3, with the rules that keep a
/// path exportable and unambiguous in docs/limits.md); returns the normalised path. The rules
/// are checked in order and the first failure is the error, each with its own message.
pub fn document_path(path: &str) -> Result<String> {
    // A folder's plan validates every path it reads (20,000 at once): the usual path takes
    // one pass over its bytes, and anything else the rules one by one.
    if plain_path_ok(path) {
        return Ok(path.to_string());
    }
    document_path_by_rules(path)
}

/// [`document_path`] rule by rule.
fn document_path_by_rules(path: &str) -> Result<String> {
    let p = nfc(path);
    let fail = |why: String| {
        Err(Error::Invalid(format!(
            "invalid path \"{}\": {why}",
            quote(&p)
        )))
    };
    if utf16_len(&p) > 200 {
        return fail("longer than 200 characters".into());
    }
    if p.contains('\0') {
        return fail("holds a NUL byte".into());
    }
    if p.contains('\\') {
        return fail("use forward slashes only".into());
    }
    if p.starts_with('/') {
        return fail("must be relative to the bundle".into());
    }
    if !ends_with_md(&p) {
        return fail("a concept must be a .md file".into());
    }
    for seg in p.split('/') {
        if let Some(why) = segment_problem(seg) {
            return fail(why);
        }
    }
    for seg in p.split('/') {
        if seg.starts_with('#') {
            return fail(format!("segment \"{}\" starts with #", quote(seg)));
        }
    }
    for seg in p.split('/') {
        if is_device_name(seg) {
            return fail(format!(
                "segment \"{}\" is a reserved device name on Windows",
                quote(seg)
            ));
        }
    }
    let last = p.rsplit('/').next().unwrap_or("");
    if last.eq_ignore_ascii_case("-.md") {
        return fail("\"-\" cannot name a concept".into());
    }
    Ok(p)
}

/// Whether [`document_path`] accepts `path` as it is, decided in one pass for the usual
/// path: ASCII (so NFC already), at most 200 bytes, printable, none of `\\` and the
/// characters Windows file names cannot hold, each segment non-empty, not starting with
/// `.` or `#`, not ending with a space or a dot, no device name, ending in `.md` and not
/// naming `-`. `false` leaves the path to the rules one by one (which may still accept it);
/// a test holds that `true` is never wrong.
fn plain_path_ok(path: &str) -> bool {
    let b = path.as_bytes();
    if b.len() > 200 || !ends_with_md(path) {
        return false;
    }
    let mut ok = true;
    let mut seg_start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'/' {
            ok &= segment_plain(&b[seg_start..i]);
            seg_start = i + 1;
        } else {
            ok &= (0x20..0x7f).contains(&c)
                && !matches!(c, b'\\' | b'<' | b'>' | b':' | b'"' | b'|' | b'?' | b'*');
        }
    }
    let last = &b[seg_start..];
    ok && segment_plain(last) && !last.eq_ignore_ascii_case(b"-.md")
}

/// One segment of [`plain_path_ok`]'s path, whose bytes are checked already: non-empty, not
/// starting with `.` or `#`, not ending with a space or a dot, not a device name.
fn segment_plain(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(f), Some(l)) => {
            !matches!(f, b'.' | b'#') && !matches!(l, b' ' | b'.') && !is_device_segment(s)
        }
        _ => false,
    }
}

/// What is wrong with one `/`-segment of a path, as the tail of the message.
fn segment_problem(seg: &str) -> Option<String> {
    let shown = || quote(seg);
    if seg.is_empty() {
        return Some("has an empty segment (two slashes in a row)".into());
    }
    if seg.starts_with('.') {
        return Some(format!("segment \"{}\" starts with a dot", shown()));
    }
    if seg.ends_with(' ') {
        return Some(format!("segment \"{}\" ends with a space", shown()));
    }
    if seg.ends_with('.') {
        return Some(format!("segment \"{}\" ends with a dot", shown()));
    }
    if let Some(c) = seg.chars().find(|&c| (c as u32) < 0x20 || c == '\u{7f}') {
        return Some(format!(
            "segment \"{}\" holds the control character U+{:04X}",
            shown(),
            c as u32
        ));
    }
    if let Some(c) = seg
        .chars()
        .find(|c| matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*'))
    {
        return Some(format!(
            "segment \"{}\" holds \"{c}\", which Windows file names cannot hold",
            shown()
        ));
    }
    // No ASCII character is a bidirectional control or invisible (bounds.rs): an ASCII
    // segment, the usual case, skips both scans.
    if seg.is_ascii() {
        return long(seg);
    }
    if let Some(c) = seg.chars().find(|&c| bounds::is_bidi_control(c)) {
        return Some(format!(
            "segment \"{}\" holds U+{:04X}, a bidirectional control that can make one path look like another",
            shown(),
            c as u32
        ));
    }
    if let Some(c) = invisible_in(seg) {
        return Some(format!(
            "segment \"{}\" holds U+{:04X}, an invisible character that can make one path look like another",
            shown(),
            c as u32
        ));
    }
    long(seg)
}

/// The last rule of [`segment_problem`]: a segment's length in bytes.
fn long(seg: &str) -> Option<String> {
    (seg.len() > bounds::SEGMENT_BYTES).then(|| {
        format!(
            "segment \"{}\" is longer than {} bytes in UTF-8",
            quote(seg),
            bounds::SEGMENT_BYTES
        )
    })
}

/// The first invisible character of a segment that is refused. Zero-width joiner and
/// non-joiner (U+200D, U+200C) are part of the spelling of Persian, Arabic and Indic words
/// and of emoji sequences, so they pass between two visible non-ASCII characters; anywhere
/// else (beside ASCII, at an end, in a run) they are refused like the others.
fn invisible_in(seg: &str) -> Option<char> {
    let chars: Vec<char> = seg.chars().collect();
    let visible_non_ascii = |c: Option<&char>| {
        c.is_some_and(|&c| !c.is_ascii() && !bounds::is_invisible(c) && !c.is_control())
    };
    chars.iter().enumerate().find_map(|(i, &c)| {
        if !bounds::is_invisible(c) {
            return None;
        }
        let joiner = matches!(c, '\u{200c}' | '\u{200d}');
        let between =
            i > 0 && visible_non_ascii(chars.get(i - 1)) && visible_non_ascii(chars.get(i + 1));
        (!joiner || !between).then_some(c)
    })
}

/// Whether `s` ends in `.md`, ignoring ASCII case.
pub fn ends_with_md(s: &str) -> bool {
    s.len() >= 3 && s.as_bytes()[s.len() - 3..].eq_ignore_ascii_case(b".md")
}

/// Whether a path names a navigation document (`index.md` or `log.md`, any case, any depth).
pub fn is_navigation(path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or(path);
    last.eq_ignore_ascii_case("index.md") || last.eq_ignore_ascii_case("log.md")
}

#[cfg(test)]
mod tests {
    /// The device-name rule with a lower-cased copy, to check [`is_device_name`] against.
    fn is_device_name_plain(segment: &str) -> bool {
        let stem = segment.split('.').next().unwrap_or("").to_ascii_lowercase();
        matches!(stem.as_str(), "con" | "prn" | "aux" | "nul")
            || ((stem.starts_with("com") || stem.starts_with("lpt"))
                && stem.len() == 4
                && matches!(stem.as_bytes()[3], b'1'..=b'9'))
    }

    /// `segment_problem` skips the bidirectional-control and invisible-character scans of
    /// an ASCII segment: that holds only while no ASCII character is either.
    #[test]
    fn no_ascii_character_is_bidi_or_invisible() {
        for c in (0u8..0x80).map(char::from) {
            assert!(!crate::bounds::is_bidi_control(c), "{c:?}");
            assert!(!crate::bounds::is_invisible(c), "{c:?}");
        }
    }

    #[test]
    fn plain_path_examples() {
        for ok in [
            "a.md",
            "tables/orders_b1_raw_1.md",
            "A b/C-d.MD",
            "x/con1.md",
        ] {
            assert!(super::plain_path_ok(ok), "{ok}");
            assert_eq!(super::document_path(ok).unwrap(), ok);
        }
        for not in [
            "", "a", "/a.md", "a//b.md", ".a/b.md", "a./b.md", "a /b.md", "#a.md", "con.md",
            "x/-.md", "a\\b.md", "a:b.md", "a\tb.md", "é.md",
        ] {
            assert!(!super::plain_path_ok(not), "{not:?}");
        }
    }

    proptest::proptest! {
        /// The one-pass check of the usual path never accepts what the rules refuse or
        /// would change, and accepts the plain paths they accept.
        #[test]
        fn plain_paths_agree_with_the_rules(
            p in "(([a-zA-Z0-9 ._#<:*\\\\|-]|é){0,6}/){0,3}([a-zA-Z0-9 ._#-]|é){0,5}(\\.md|\\.MD|\\.txt)?"
        ) {
            let rules = super::document_path_by_rules(&p);
            if super::plain_path_ok(&p) {
                proptest::prop_assert_eq!(rules.ok(), Some(p.clone()));
            } else if p.is_ascii() {
                proptest::prop_assert!(rules.is_err(), "{p:?} is accepted but not by the plain check");
            }
        }

        #[test]
        fn device_names_match_the_rule(s in "[cCoOmMnNlLpPtTuUxXaArR0-9.é]{0,6}") {
            proptest::prop_assert_eq!(super::is_device_name(&s), is_device_name_plain(&s));
        }
    }
    use super::*;

    fn msg(r: Result<String>) -> String {
        r.unwrap_err().message()
    }

    #[test]
    fn tenant_ids() {
        assert_eq!(tenant_id("Acme").unwrap(), "acme");
        assert_eq!(
            msg(tenant_id("-x")),
            "invalid tenant id \"-x\": expected 1-64 chars of [a-z0-9_-]"
        );
        assert_eq!(
            msg(tenant_id("COM1")),
            "invalid tenant id \"COM1\": a reserved device name on Windows"
        );
    }

    #[test]
    fn paths() {
        assert_eq!(document_path("My Note.md").unwrap(), "My Note.md");
        assert_eq!(
            document_path("Notes/Cafe\u{301}.md").unwrap(),
            "Notes/Caf\u{e9}.md"
        );
        assert_eq!(
            msg(document_path("a:b.md")),
            "invalid path \"a:b.md\": segment \"a:b.md\" holds \":\", which Windows file names cannot hold"
        );
        assert_eq!(
            msg(document_path("a\\b.md")),
            "invalid path \"a\\b.md\": use forward slashes only"
        );
        assert_eq!(
            msg(document_path("/a.md")),
            "invalid path \"/a.md\": must be relative to the bundle"
        );
        assert_eq!(
            msg(document_path("a.txt")),
            "invalid path \"a.txt\": a concept must be a .md file"
        );
        assert_eq!(
            msg(document_path("x/#a.md")),
            "invalid path \"x/#a.md\": segment \"#a.md\" starts with #"
        );
        assert_eq!(
            msg(document_path("con.md")),
            "invalid path \"con.md\": segment \"con.md\" is a reserved device name on Windows"
        );
        assert_eq!(
            msg(document_path("x/-.MD")),
            "invalid path \"x/-.MD\": \"-\" cannot name a concept"
        );
        assert_eq!(
            msg(document_path("../a.md")),
            "invalid path \"../a.md\": segment \"..\" starts with a dot"
        );
        let long = format!("{}.md", "a".repeat(198));
        assert_eq!(
            msg(document_path(&long)),
            format!(
                "invalid path \"{}…\": longer than 200 characters",
                "a".repeat(120)
            )
        );
    }

    #[test]
    fn each_segment_rule_has_its_own_message() {
        let cases = [
            ("a//b.md", "has an empty segment (two slashes in a row)"),
            ("x/.hidden.md", "segment \".hidden.md\" starts with a dot"),
            ("x /a.md", "segment \"x \" ends with a space"),
            ("x./a.md", "segment \"x.\" ends with a dot"),
            (
                "a\tb.md",
                "segment \"a\\u0009b.md\" holds the control character U+0009",
            ),
            (
                "a\u{7f}.md",
                "segment \"a\\u007f.md\" holds the control character U+007F",
            ),
            (
                "what?.md",
                "segment \"what?.md\" holds \"?\", which Windows file names cannot hold",
            ),
            (
                "x\u{202e}dm.txt.md",
                "segment \"x\\u202edm.txt.md\" holds U+202E, a bidirectional control that can make one path look like another",
            ),
            (
                "in\u{200b}voice.md",
                "segment \"in\\u200bvoice.md\" holds U+200B, an invisible character that can make one path look like another",
            ),
            (
                "a\u{200d}b.md",
                "segment \"a\\u200db.md\" holds U+200D, an invisible character that can make one path look like another",
            ),
        ];
        for (path, why) in cases {
            let shown = quote(path);
            assert_eq!(
                msg(document_path(path)),
                format!("invalid path \"{shown}\": {why}"),
                "{path:?}"
            );
        }
        // A NUL byte is reported as what it is.
        assert_eq!(
            msg(document_path("a\0b.md")),
            "invalid path \"a\\u0000b.md\": holds a NUL byte"
        );
    }

    #[test]
    fn segments_fit_in_255_bytes() {
        // 130 × é is 130 UTF-16 units (under 200) but 263 bytes with ".md".
        let seg = format!("{}.md", "é".repeat(130));
        assert_eq!(
            msg(document_path(&seg)),
            format!(
                "invalid path \"{}…\": segment \"{}…\" is longer than 255 bytes in UTF-8",
                "é".repeat(120),
                "é".repeat(120)
            )
        );
        let fits = format!("{}.md", "é".repeat(126)); // 252 + 3 bytes
        assert_eq!(document_path(&fits).unwrap(), fits);
        let cjk = format!("notes/{}.md", "東".repeat(84)); // 252 + 3 bytes
        assert!(document_path(&cjk).is_ok());
        assert!(document_path(&format!("notes/{}.md", "東".repeat(85))).is_err());
    }

    #[test]
    fn joiners_pass_inside_words_only() {
        // Persian "نیم‌فاصله" spells a ZWNJ between two letters; an emoji family joins with ZWJ.
        assert!(document_path(
            "\u{646}\u{6cc}\u{645}\u{200c}\u{641}\u{627}\u{635}\u{644}\u{647}.md"
        )
        .is_ok());
        assert!(document_path("\u{1f468}\u{200d}\u{1f469}.md").is_ok());
        assert!(document_path("\u{200c}\u{646}.md").is_err());
        assert!(document_path("\u{646}\u{200c}\u{200c}\u{646}.md").is_err());
        assert!(document_path("\u{feff}a.md").is_err());
    }

    proptest::proptest! {
        /// A valid path, under its bundle, always fits the file systems `export` writes to:
        /// every segment within 255 bytes and the whole relative path within 665 bytes.
        #[test]
        fn valid_paths_are_exportable(s in "[a-zé東😀 ._/-]{1,80}\\.md") {
            if let Ok(p) = document_path(&s) {
                proptest::prop_assert!(p.split('/').all(|seg| seg.len() <= 255));
                proptest::prop_assert!(64 + 1 + p.len() <= 665);
            }
        }
    }
}
