//! The frontmatter fields the compiler reads, with a fast path for the common YAML subset.
//!
//! The compiler reads six top-level keys of the frontmatter (`type`, `title`, `description`,
//! `grain`, `status`, `stale_after`) and only needs to know, for each, whether it is absent,
//! a string (and which), or something else. [`fast`] answers that without building a YAML
//! tree for frontmatter written in a small subset of YAML:
//!
//! - a block mapping at column 0 of plain keys (`[A-Za-z_][A-Za-z0-9_.-]*` resolving to a
//!   string), without duplicates at any level and with at most 64 keys in one mapping;
//! - values on the key's line: plain scalars, single-quoted scalars, double-quoted scalars
//!   without escapes, flow sequences of plain scalars;
//! - values on the following lines: block sequences (indented or not) of such scalars or of
//!   mappings of the same form, and nested block mappings;
//! - blank lines and comments, LF or CRLF line ends.
//!
//! Anything else (anchors, aliases, tags, multi-line and block scalars, escapes, flow
//! mappings, tabs, control characters, unusual indentation, …) makes [`fast`] return `None`,
//! and the caller parses with `yaml_serde`. When [`fast`] returns fields, they equal what
//! [`from_yaml`] gives for the `yaml_serde` parse of the same text, which then succeeds with a
//! mapping; differential tests check this over generated and real frontmatter.

use std::borrow::Cow;

/// A frontmatter value as the compiler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Field<'a> {
    /// A string.
    Str(Cow<'a, str>),
    /// Any other value: null, a boolean, a number, a sequence, a mapping, a tagged value.
    Other,
}

impl Field<'_> {
    /// The string, if the value is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Other => None,
        }
    }
}

/// The six keys the compiler reads; `None` for an absent key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields<'a> {
    pub(crate) kind: Option<Field<'a>>,
    pub(crate) title: Option<Field<'a>>,
    pub(crate) description: Option<Field<'a>>,
    pub(crate) grain: Option<Field<'a>>,
    pub(crate) status: Option<Field<'a>>,
    pub(crate) stale_after: Option<Field<'a>>,
}

impl<'a> Fields<'a> {
    fn slot(&mut self, key: &str) -> Option<&mut Option<Field<'a>>> {
        match key {
            "type" => Some(&mut self.kind),
            "title" => Some(&mut self.title),
            "description" => Some(&mut self.description),
            "grain" => Some(&mut self.grain),
            "status" => Some(&mut self.status),
            "stale_after" => Some(&mut self.stale_after),
            _ => None,
        }
    }
}

/// The fields of a mapping parsed by `yaml_serde`.
pub(crate) fn from_yaml(map: &yaml_serde::Mapping) -> Fields<'static> {
    let get = |key: &str| {
        map.get(key).map(|v| match v {
            yaml_serde::Value::String(s) => Field::Str(Cow::Owned(s.clone())),
            _ => Field::Other,
        })
    };
    Fields {
        kind: get("type"),
        title: get("title"),
        description: get("description"),
        grain: get("grain"),
        status: get("status"),
        stale_after: get("stale_after"),
    }
}

/// The fields of frontmatter in the subset described in the module documentation, or
/// `None` when the text is outside it (or holds no key at all).
pub(crate) fn fast(inner: &str) -> Option<Fields<'_>> {
    // One pass over the whole text settles the characters when it is printable ASCII with
    // LF line ends, the usual case; otherwise each line is checked.
    let clean = inner.bytes().fold(true, |ok, b| {
        ok & (b.wrapping_sub(0x20) < 0x5f || b == b'\n')
    });
    let mut p = Parser {
        rest: inner,
        clean,
        peeked: None,
        keys: Vec::with_capacity(24),
        depth: 0,
    };
    let mut fields = Fields::default();
    match p.peek()? {
        Some(l) if l.indent == 0 => {}
        _ => return None,
    }
    p.mapping(0, None, Some(&mut fields))?;
    if p.peek()?.is_some() {
        return None;
    }
    Some(fields)
}

/// The deepest nesting the fast path accepts.
const MAX_DEPTH: usize = 8;
/// The most keys of one mapping the fast path accepts.
const MAX_KEYS: usize = 64;
/// The longest key the fast path accepts (libyaml limits simple keys to 1024 characters).
const MAX_KEY: usize = 128;

/// A content line: neither blank nor a comment.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    indent: usize,
    /// The text after the indentation, without the line end.
    text: &'a str,
}

struct Parser<'a> {
    rest: &'a str,
    /// Whether the whole text is printable ASCII and LF line ends.
    clean: bool,
    peeked: Option<Line<'a>>,
    /// The keys of the mappings being read, innermost last (for duplicate checks).
    keys: Vec<&'a str>,
    depth: usize,
}

/// Whether every char of `s` is one the fast path accepts: printable for libyaml, not a
/// line break, not a tab, not a byte-order mark.
fn chars_ok(s: &str) -> bool {
    // Without an early exit the compiler vectorises this.
    if s.bytes()
        .fold(true, |ok, b| ok & (b.wrapping_sub(0x20) < 0x5f))
    {
        return true;
    }
    s.chars().all(|c| match c as u32 {
        0x20..=0x7e => true,
        0xa0..=0xd7ff => c != '\u{2028}' && c != '\u{2029}',
        0xe000..=0xfffd => c != '\u{feff}',
        0x10000.. => true,
        _ => false,
    })
}

impl<'a> Parser<'a> {
    /// The next content line, without consuming it; `Err`-like `None` outside the subset.
    fn peek(&mut self) -> Option<Option<Line<'a>>> {
        if self.peeked.is_some() {
            return Some(self.peeked);
        }
        while !self.rest.is_empty() {
            let (raw, rest) = match memchr::memchr(b'\n', self.rest.as_bytes()) {
                Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
                None => (self.rest, ""),
            };
            self.rest = rest;
            let raw = if self.clean {
                raw
            } else {
                let raw = raw.strip_suffix('\r').unwrap_or(raw);
                if !chars_ok(raw) {
                    return None;
                }
                raw
            };
            let text = raw.trim_start_matches(' ');
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            self.peeked = Some(Line {
                indent: raw.len() - text.len(),
                text,
            });
            return Some(self.peeked);
        }
        Some(None)
    }

    fn take(&mut self) {
        self.peeked = None;
    }

    /// A block mapping whose keys sit at `indent`. `first` is the rest of a sequence item's
    /// line when the mapping starts there. `fields` collects the six keys (top level only).
    fn mapping(
        &mut self,
        indent: usize,
        mut first: Option<&'a str>,
        mut fields: Option<&mut Fields<'a>>,
    ) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let base = self.keys.len();
        loop {
            let text = match first.take() {
                Some(t) => t,
                None => match self.peek()? {
                    Some(l) if l.indent == indent => {
                        self.take();
                        l.text
                    }
                    Some(l) if l.indent > indent => return None,
                    _ => break,
                },
            };
            let (key, value) = split_key(text)?;
            // The duplicate check is linear in the keys before, so a long mapping goes to
            // yaml_serde, whose check is not.
            if self.keys.len() - base >= MAX_KEYS
                || self.keys[base..].iter().any(|k| same_key(k, key))
            {
                return None;
            }
            self.keys.push(key);
            let field = if value.is_empty() || value.starts_with('#') {
                self.children(indent)?
            } else {
                inline_value(value)?
            };
            if let Some(f) = fields.as_deref_mut() {
                if let Some(slot) = f.slot(key) {
                    *slot = Some(field);
                }
            }
        }
        self.keys.truncate(base);
        self.depth -= 1;
        Some(())
    }

    /// The value of a key at `indent` with nothing after its colon: a block node on the
    /// following lines, or null.
    fn children(&mut self, indent: usize) -> Option<Field<'a>> {
        match self.peek()? {
            Some(l) if l.indent > indent => {
                if is_item(l.text) {
                    self.sequence(l.indent, false)?;
                } else {
                    self.mapping(l.indent, None, None)?;
                }
            }
            Some(l) if l.indent == indent && is_item(l.text) => self.sequence(indent, true)?,
            _ => {}
        }
        // Null, a sequence and a mapping are all "not a string".
        Some(Field::Other)
    }

    /// A block sequence whose `-` sit at `indent`; `indentless` when it sits at its parent
    /// key's indentation.
    fn sequence(&mut self, indent: usize, indentless: bool) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        loop {
            match self.peek()? {
                Some(l) if l.indent == indent && is_item(l.text) => {
                    self.take();
                    let after = &l.text[1..];
                    let content = after.trim_start_matches(' ');
                    if content.is_empty() || content.starts_with('#') || is_item(content) {
                        return None;
                    }
                    let column = indent + l.text.len() - content.len();
                    if starts_with_key(content) {
                        self.mapping(column, Some(content), None)?;
                    } else {
                        inline_value(content)?;
                    }
                }
                Some(l) if l.indent > indent => return None,
                Some(l) if l.indent == indent && !indentless => return None,
                _ => break,
            }
        }
        self.depth -= 1;
        Some(())
    }
}

/// Key equality, testing length and first byte before the bytes.
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes()[0] == b.as_bytes()[0] && a == b
}

/// Whether a line's text is a block sequence entry (`-` then a space; a lone `-` is one too
/// and is refused by the caller).
fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

fn is_key_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// The bytes of a key after its first: `[A-Za-z0-9_.-]`, as a table (one load a byte).
static KEY_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
        b += 1;
    }
    t
};

/// The length of the key at the start of `text`, when a `:` and then a space or the end
/// follow it.
fn key_len(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    if b.is_empty() || !is_key_start(b[0]) {
        return None;
    }
    let n = b
        .iter()
        .position(|&c| !KEY_BYTE[c as usize])
        .unwrap_or(b.len());
    if n > MAX_KEY || b.get(n) != Some(&b':') || !matches!(b.get(n + 1), None | Some(b' ')) {
        return None;
    }
    Some(n)
}

fn starts_with_key(text: &str) -> bool {
    key_len(text).is_some()
}

/// Splits `key: value` into the key and the value with leading spaces removed; `None` when
/// the line is not a key line of the subset or the key does not resolve to a string.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let n = key_len(text)?;
    let key = &text[..n];
    if resolve_plain(key) != Plain::Str {
        return None;
    }
    Some((key, text[n + 1..].trim_start_matches(' ')))
}

/// Whether what follows a quoted scalar or a flow sequence is only spaces and a comment.
fn tail_ok(tail: &str) -> bool {
    let t = tail.trim_start_matches(' ');
    t.is_empty() || (t.starts_with('#') && t.len() < tail.len())
}

/// A value written on its key's line (non-empty, not a comment).
fn inline_value(v: &str) -> Option<Field<'_>> {
    let b = v.as_bytes();
    match b[0] {
        b'\'' => {
            // Single-quoted: `''` is a quote; the scalar ends at a lone `'`.
            let mut i = 1;
            let mut has_escape = false;
            loop {
                let j = i + v[i..].find('\'')?;
                if b.get(j + 1) == Some(&b'\'') {
                    has_escape = true;
                    i = j + 2;
                    continue;
                }
                if !tail_ok(&v[j + 1..]) {
                    return None;
                }
                let s = &v[1..j];
                return Some(Field::Str(if has_escape {
                    Cow::Owned(s.replace("''", "'"))
                } else {
                    Cow::Borrowed(s)
                }));
            }
        }
        b'"' => {
            let j = 1 + v[1..].find(['"', '\\'])?;
            if b[j] != b'"' || !tail_ok(&v[j + 1..]) {
                return None;
            }
            Some(Field::Str(Cow::Borrowed(&v[1..j])))
        }
        b'[' => {
            let j = v.find(']')?;
            if !tail_ok(&v[j + 1..]) {
                return None;
            }
            let items = v[1..j].trim_matches(' ');
            if !items.is_empty() {
                for item in items.split(',') {
                    let item = item.trim_matches(' ');
                    if item.is_empty() || !flow_item_ok(item) {
                        return None;
                    }
                }
            }
            Some(Field::Other)
        }
        _ => {
            let s = plain(v)?;
            match resolve_plain(s) {
                Plain::Str => Some(Field::Str(Cow::Borrowed(s))),
                Plain::Other => Some(Field::Other),
                Plain::Refused => None,
            }
        }
    }
}

/// A plain scalar in a flow sequence: no indicators, no `:` and no `#` at all.
fn flow_item_ok(item: &str) -> bool {
    let b = item.as_bytes();
    plain_start_ok(b)
        && !b
            .iter()
            .any(|c| matches!(c, b':' | b'#' | b'[' | b']' | b'{' | b'}' | b'\'' | b'"'))
}

/// Whether a plain scalar may start with these bytes (conservatively: no indicator, and
/// `-` only before a letter, digit or `.`).
fn plain_start_ok(b: &[u8]) -> bool {
    match b.first() {
        None => false,
        Some(b'-') => b
            .get(1)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.'),
        Some(c) => !matches!(
            c,
            b'?' | b':'
                | b','
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'#'
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'\''
                | b'"'
                | b'%'
                | b'@'
                | b'`'
                | b' '
        ),
    }
}

/// A single-line plain scalar in block context: the value without a trailing comment and
/// trailing spaces, or `None` when it holds `: ` or ends with `:`.
fn plain(v: &str) -> Option<&str> {
    let b = v.as_bytes();
    if !plain_start_ok(b) {
        return None;
    }
    // The usual value holds no comment and no `: `: one pass over byte pairs (a fold without
    // an early exit, which the compiler vectorises) settles that; otherwise a plain loop
    // finds which comes first.
    let marked = b.last() == Some(&b':')
        || b.iter().zip(&b[1..]).fold(false, |a, (&x, &y)| {
            a | ((x == b':') & (y == b' ')) | ((x == b' ') & (y == b'#'))
        });
    if !marked {
        return Some(v.trim_end_matches(' '));
    }
    let mut end = b.len();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'#' if i > 0 && b[i - 1] == b' ' => {
                end = i;
                break;
            }
            b':' if matches!(b.get(i + 1), None | Some(b' ')) => return None,
            _ => {}
        }
    }
    Some(v[..end].trim_end_matches(' '))
}

/// What a plain scalar resolves to under `yaml_serde`'s rules (the YAML 1.2 core schema as
/// yaml_serde 0.10 applies it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plain {
    /// A string.
    Str,
    /// Null, a boolean, an integer that fits 64 bits, or a float.
    Other,
    /// An integer that needs 128 bits: yaml_serde's `Value` refuses it with an error.
    Refused,
}

/// Resolves a plain scalar: empty and the null words are null, then booleans, integers
/// (decimal, `0x`, `0o`, `0b`, signed; digits with a leading zero are a string), floats.
#[inline]
pub(crate) fn resolve_plain(v: &str) -> Plain {
    // Inlined, the first byte settles the usual string (a word, a URL) without a call.
    match v.as_bytes().first() {
        None => Plain::Other,
        Some(b'~' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'0'..=b'9' | b'+' | b'-' | b'.') => {
            resolve_word_or_number(v)
        }
        Some(_) => Plain::Str,
    }
}

/// [`resolve_plain`] of a non-empty scalar whose first byte may start a null or boolean word
/// or a number.
#[inline(never)]
fn resolve_word_or_number(v: &str) -> Plain {
    let first = v.as_bytes()[0];
    match first {
        b'~' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' => {
            return match v {
                "~" | "null" | "Null" | "NULL" | "true" | "True" | "TRUE" | "false" | "False"
                | "FALSE" => Plain::Other,
                _ => Plain::Str,
            };
        }
        // Integers start with a digit or a sign; floats with a digit, a sign or `.`,
        // except `inf`, `infinity` and `nan` in any case, which Rust parses but yaml_serde
        // refuses as not finite. Anything else is a string.
        b'0'..=b'9' | b'+' | b'-' | b'.' => {}
        _ => return Plain::Str,
    }
    if matches!(
        v,
        ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
    ) {
        return Plain::Other;
    }
    // Otherwise numbers use digits, hexadecimal digits (with `e`, `E`, `b` of exponents and
    // prefixes), `x`, `o`, signs and `.` only: a date with a time, for one, is a string.
    if !v
        .bytes()
        .all(|b| b.is_ascii_hexdigit() || matches!(b, b'x' | b'o' | b'+' | b'-' | b'.'))
    {
        return Plain::Str;
    }
    // A sign after the first byte, other than an exponent's: no integer and no float has
    // one (Rust's parsers take a sign first, and a float's exponent after its `e`), so a
    // date such as `2026-03-01` is a string without trying the parsers.
    let b = v.as_bytes();
    if (1..b.len()).any(|i| matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E')) {
        return Plain::Str;
    }
    if yaml_unsigned(v, u64::from_str_radix) || yaml_negative(v, i64::from_str_radix) {
        return Plain::Other;
    }
    if yaml_unsigned(v, u128::from_str_radix) || yaml_negative(v, i128::from_str_radix) {
        return Plain::Refused;
    }
    if !zero_led_digits(v) && yaml_float(v) {
        return Plain::Other;
    }
    Plain::Str
}

/// Digits with a leading zero (after an optional sign): a string in YAML 1.2.
fn zero_led_digits(v: &str) -> bool {
    let s = v.strip_prefix(['-', '+']).unwrap_or(v);
    s.len() > 1 && s.starts_with('0') && s.bytes().skip(1).all(|b| b.is_ascii_digit())
}

/// An integer without a minus sign, as yaml_serde reads one into an integer type whose
/// `from_str_radix` is given.
fn yaml_unsigned<T, E>(v: &str, parse: fn(&str, u32) -> Result<T, E>) -> bool {
    let u = v.strip_prefix('+').unwrap_or(v);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = u.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return false;
            }
            if parse(rest, radix).is_ok() {
                return true;
            }
        }
    }
    if u.starts_with(['+', '-']) || zero_led_digits(v) {
        return false;
    }
    parse(u, 10).is_ok()
}

/// A negative integer (or a decimal with a sign), as yaml_serde reads one into a signed
/// integer type whose `from_str_radix` is given.
fn yaml_negative<T, E>(v: &str, parse: fn(&str, u32) -> Result<T, E>) -> bool {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = v.strip_prefix(prefix) {
            if parse(&format!("-{rest}"), radix).is_ok() {
                return true;
            }
        }
    }
    !zero_led_digits(v) && parse(v, 10).is_ok()
}

/// A float, as yaml_serde reads one: `.inf`, `.nan` and finite decimal forms.
fn yaml_float(v: &str) -> bool {
    let u = match v.strip_prefix('+') {
        Some(u) if u.starts_with(['+', '-']) => return false,
        Some(u) => u,
        None => v,
    };
    matches!(u, ".inf" | ".Inf" | ".INF")
        || matches!(v, "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN")
        || u.parse::<f64>().is_ok_and(f64::is_finite)
}

#[cfg(test)]
mod tests;
