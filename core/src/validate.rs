//! Validators for tenant ids, bundle names and document paths (compile.md §10).

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
    // The stem before the first dot, compared without case and without a copy.
    let stem = segment.split('.').next().unwrap_or("").as_bytes();
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
            "invalid tenant id \"{id}\": expected 1-64 chars of [a-z0-9_-]"
        )));
    }
    if is_device_name(id) {
        return Err(Error::Invalid(format!(
            "invalid tenant id \"{id}\": a reserved device name on Windows"
        )));
    }
    Ok(id.to_ascii_lowercase())
}

/// Validates a bundle name (compile.md §10.2). The case is kept.
pub fn bundle_name(name: &str) -> Result<()> {
    if !name_ok(name) {
        return Err(Error::Invalid(format!(
            "invalid bundle name \"{name}\": expected 1-64 chars of [a-z0-9_-]"
        )));
    }
    if is_device_name(name) {
        return Err(Error::Invalid(format!(
            "invalid bundle name \"{name}\": a reserved device name on Windows"
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

/// Normalises `path` to NFC and validates it (compile.md §10.3); returns the normalised path.
pub fn document_path(path: &str) -> Result<String> {
    let p = nfc(path);
    let fail = |why: String| Err(Error::Invalid(format!("invalid path \"{p}\": {why}")));
    if utf16_len(&p) > 200 {
        return fail("longer than 200 characters".into());
    }
    if p.contains('\0') || p.contains('\\') {
        return fail("use forward slashes only".into());
    }
    if p.starts_with('/') {
        return fail("must be relative to the bundle".into());
    }
    if !ends_with_md(&p) {
        return fail("a concept must be a .md file".into());
    }
    for seg in p.split('/') {
        let bad = seg.is_empty()
            || seg.starts_with('.')
            || seg.ends_with(' ')
            || seg.ends_with('.')
            || seg.chars().any(|c| {
                (c as u32) < 0x20
                    || c == '\u{7f}'
                    || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*')
            });
        if bad {
            return fail(format!(
                "segment \"{seg}\" is empty, starts with a dot, ends with a space or dot, or holds a control character or one of < > : \" | ? *"
            ));
        }
    }
    for seg in p.split('/') {
        if seg.starts_with('#') {
            return fail(format!("segment \"{seg}\" starts with #"));
        }
    }
    for seg in p.split('/') {
        if is_device_name(seg) {
            return fail(format!(
                "segment \"{seg}\" is a reserved device name on Windows"
            ));
        }
    }
    let last = p.rsplit('/').next().unwrap_or("");
    if last.eq_ignore_ascii_case("-.md") {
        return fail("\"-\" cannot name a concept".into());
    }
    Ok(p)
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

    proptest::proptest! {
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
        assert_eq!(msg(document_path("a:b.md")), "invalid path \"a:b.md\": segment \"a:b.md\" is empty, starts with a dot, ends with a space or dot, or holds a control character or one of < > : \" | ? *");
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
        assert_eq!(msg(document_path("../a.md")), "invalid path \"../a.md\": segment \"..\" is empty, starts with a dot, ends with a space or dot, or holds a control character or one of < > : \" | ? *");
        let long = format!("{}.md", "a".repeat(198));
        assert_eq!(
            msg(document_path(&long)),
            format!("invalid path \"{long}\": longer than 200 characters")
        );
    }
}
