//! JSON text as it arrives from a client, before any parser accepts it (docs/limits.md).
//!
//! `serde_json` refuses two things that are valid JSON by RFC 8259's grammar: a string
//! escape of a lone UTF-16 surrogate (`"\ud83d"`, which JavaScript and Python clients send
//! for a broken emoji) and a number too large for a double (`1e400`). A host that only had
//! `serde_json`'s refusal could not tell which request it was, so the request went
//! unanswered. [`Scanner`] reads the text once, in constant memory per byte, and finds:
//!
//! - the top-level `id` (as its raw JSON text) and `method`, even of a message too long to
//!   keep (the host feeds the bytes it discards), so the error answer can carry the id;
//! - every string holding a lone surrogate and every number out of range, by JSON path;
//!   with [`Scanner::repair`] it also writes a copy of the text where such an escape is
//!   `\ufffd` and such a number is a string of its digits, which `serde_json` accepts.
//!
//! The host then answers from what was found: `tools::parse_call_with` names the argument
//! (`source must contain well-formed Unicode` for document content).

use crate::bounds::quote_within;

/// One step of a path into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A member of an object, by key.
    Key(String),
    /// An element of an array, by index.
    Index(usize),
}

/// A path from the message's root.
pub type Path = Vec<Step>;

/// The path as a reader would write it: `params.arguments.changes[3].content`.
pub fn render(path: &[Step]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&quote_within(k, 64));
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The refusal of a string with a lone surrogate at `path` (docs/limits.md): `query must
/// contain well-formed Unicode`, `ids[1] must …`, `arguments must …` for the root. One
/// message for the MCP tools, the REST routes and the CLI.
pub fn ill_formed_message(path: &[Step]) -> String {
    let what = match render(path) {
        s if s.is_empty() => "arguments".to_string(),
        s => s,
    };
    format!("{what} must contain well-formed Unicode")
}

/// The refusal of a number too large for a double at `path`, `text` its digits as the
/// request sent them (quoted within bounds): `k must be a number a double can hold (at most
/// about 1.8e308), got 1e400`.
pub fn out_of_range_message(path: &[Step], text: &str) -> String {
    let what = match render(path) {
        s if s.is_empty() => "the value".to_string(),
        s => s,
    };
    format!(
        "{what} must be a number a double can hold (at most about 1.8e308), got {}",
        quote_within(text, 64)
    )
}

/// Parses a request's JSON text as `serde_json` does, and past the two things only it
/// refuses: when the text parses only after [`Scanner::repair`] (a lone surrogate escape,
/// a number a double cannot hold), the repaired value and what the scan found; else the
/// value and nothing found. The parser's own error when the text is not JSON either way.
pub fn parse_repairing(text: &[u8]) -> Result<(serde_json::Value, Found), serde_json::Error> {
    match serde_json::from_slice(text) {
        Ok(v) => Ok((v, Found::default())),
        Err(e) => {
            let (fixed, found) = Scanner::repair(text);
            if found.ill_formed.is_empty() && found.out_of_range.is_empty() {
                return Err(e);
            }
            serde_json::from_slice(&fixed)
                .map(|v| (v, found))
                .map_err(|_| e)
        }
    }
}

/// The value at `path` within `value`.
fn at<'a>(value: &'a serde_json::Value, path: &[Step]) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

/// What a request body's flaws (from [`parse_repairing`]) come to, for a host that takes a
/// JSON object of arguments (the REST routes, the CLI's `transact`): with `changes`, the
/// indexes `i` of `changes[i].content` strings holding lone surrogates, which the engine
/// refuses in its order of checks (`source must contain well-formed Unicode`, as
/// `engine::parse_transaction_with` does); any other flaw is the error, named by
/// [`ill_formed_message`] or [`out_of_range_message`].
pub fn refuse_flaws(
    found: &Found,
    value: &serde_json::Value,
    changes: bool,
) -> Result<Vec<usize>, String> {
    let mut contents = Vec::new();
    for p in &found.ill_formed {
        match p.as_slice() {
            [Step::Key(c), Step::Index(i), Step::Key(k)]
                if changes && c == "changes" && k == "content" =>
            {
                contents.push(*i)
            }
            _ => return Err(ill_formed_message(p)),
        }
    }
    if let Some(p) = found.out_of_range.first() {
        let text = at(value, p)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        return Err(out_of_range_message(p, text));
    }
    Ok(contents)
}

/// The most flaws of each kind a scan records (a message full of them needs only a few
/// named in its answer).
pub const MAX_FLAWS: usize = 64;
/// The longest top-level `id` text a scan keeps; a longer id is answered as `null`.
pub const MAX_ID: usize = 1024;
/// The longest top-level `method` a scan keeps.
pub const MAX_METHOD: usize = 256;
/// The longest object key a scan keeps in a path (longer ones are cut).
const MAX_KEY: usize = 256;
/// Deeper nesting than this is not tracked (`serde_json` refuses beyond 128 levels anyway).
const MAX_DEPTH: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

#[derive(Clone, Debug)]
struct Frame {
    kind: Container,
    /// The member key being read or last read (object), as bytes, cut at [`MAX_KEY`].
    key: Vec<u8>,
    /// The element index (array).
    index: usize,
    /// Whether the next string in an object is a key.
    expect_key: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lex {
    /// Between tokens.
    Between,
    /// In a string; `key` when it is an object key.
    Str { key: bool },
    /// After a backslash in a string.
    Escape { key: bool },
    /// Inside `\uXXXX`: the digits so far and their value.
    Unicode { key: bool, digits: u8, value: u16 },
    /// In a number.
    Number,
    /// In a bare word (`true`, `false`, `null`, or garbage).
    Word,
}

/// What a scan found. Paths are from the message's root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The raw JSON text of the top-level `id`, when there is one of at most [`MAX_ID`]
    /// bytes.
    pub id: Option<String>,
    /// Whether the top-level object has an `id` member at all.
    pub has_id: bool,
    /// The top-level `method`, when it is a string of at most [`MAX_METHOD`] bytes.
    pub method: Option<String>,
    /// Whether the top-level object has a `result` or an `error` member (a response).
    pub response: bool,
    /// Strings (values, or object keys: their path ends at the member) with lone surrogates.
    pub ill_formed: Vec<Path>,
    /// Numbers a double cannot hold.
    pub out_of_range: Vec<Path>,
    /// Whether the top level is an array (a batch).
    pub batch: bool,
    /// Whether the top-level value ended, and only white space followed it: the text may
    /// be JSON (a scan does not check everything a parser does).
    pub whole: bool,
}

/// Which top-level member's value is being captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Capture {
    None,
    Id { started: bool },
    Method,
}

/// The shape of the number being read, enough to tell whether a double holds it.
#[derive(Clone, Copy, Debug, Default)]
struct NumberShape {
    int_nonzero: bool,
    int_digits: u64,
    in_fraction: bool,
    fraction_nonzero: bool,
    leading_fraction_zeros: u64,
    in_exponent: bool,
    exp_negative: bool,
    exponent: u64,
}

impl NumberShape {
    fn byte(&mut self, b: u8) {
        match b {
            b'.' => self.in_fraction = true,
            b'e' | b'E' => self.in_exponent = true,
            b'-' if self.in_exponent => self.exp_negative = true,
            b'0'..=b'9' => {
                let d = u64::from(b - b'0');
                if self.in_exponent {
                    self.exponent = self.exponent.saturating_mul(10).saturating_add(d);
                } else if self.in_fraction {
                    if !self.fraction_nonzero {
                        if d == 0 {
                            self.leading_fraction_zeros += 1;
                        } else {
                            self.fraction_nonzero = true;
                        }
                    }
                } else if self.int_nonzero || d != 0 {
                    self.int_nonzero = true;
                    self.int_digits += 1;
                }
            }
            _ => {}
        }
    }

    /// Whether the number's magnitude is beyond a double's (about 1.8e308). `text` is the
    /// number when it was short enough to keep whole.
    fn overflows(&self, text: Option<&str>) -> bool {
        if let Some(v) = text.and_then(|t| t.parse::<f64>().ok()) {
            return v.is_infinite();
        }
        let exp = self.exponent.min(1 << 40) as i128;
        let exp = if self.exp_negative { -exp } else { exp };
        let magnitude = if self.int_nonzero {
            self.int_digits as i128 - 1 + exp
        } else if self.fraction_nonzero {
            exp - self.leading_fraction_zeros as i128 - 1
        } else {
            return false;
        };
        magnitude > 308
    }
}

/// A one-pass scanner of JSON text; feed it bytes in order, then [`Scanner::finish`].
#[derive(Debug)]
pub struct Scanner {
    stack: Vec<Frame>,
    /// Containers beyond [`MAX_DEPTH`], only counted.
    untracked: usize,
    lex: Lex,
    /// A high surrogate escape waiting for its low half: where its escape starts in the
    /// repaired copy (to rewrite it when no low half follows).
    pending_high: Option<usize>,
    /// Whether the current string already recorded a flaw.
    string_flawed: bool,
    /// The current number's or method's text while short enough to keep.
    token: Vec<u8>,
    token_cut: bool,
    num: NumberShape,
    /// Where the current number starts in the repaired copy.
    num_start: usize,
    capture: Capture,
    id_text: Vec<u8>,
    found: Found,
    /// The repaired copy, when repairing.
    out: Option<Vec<u8>>,
    /// Whether the top-level container closed.
    closed: bool,
    /// Whether anything but one container came at the top level.
    trailing: bool,
}

impl Default for Scanner {
    fn default() -> Scanner {
        Scanner::new()
    }
}

impl Scanner {
    /// A scanner that only looks.
    pub fn new() -> Scanner {
        Scanner {
            stack: Vec::new(),
            untracked: 0,
            lex: Lex::Between,
            pending_high: None,
            string_flawed: false,
            token: Vec::new(),
            token_cut: false,
            num: NumberShape::default(),
            num_start: 0,
            capture: Capture::None,
            id_text: Vec::new(),
            found: Found::default(),
            out: None,
            closed: false,
            trailing: false,
        }
    }

    /// Scans `text` whole and repairs it: the repaired copy and what was found.
    pub fn repair(text: &[u8]) -> (Vec<u8>, Found) {
        let mut s = Scanner::new();
        s.out = Some(Vec::with_capacity(text.len() + 16));
        s.feed(text);
        let out = s.out.take().unwrap_or_default();
        (out, s.finish())
    }

    /// Scans `text` whole without a copy.
    pub fn scan(text: &[u8]) -> Found {
        let mut s = Scanner::new();
        s.feed(text);
        s.finish()
    }

    /// Feeds the next bytes of the text.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            // The bulk of a long message is the inside of its strings (document content):
            // skip to the next quote or backslash at once, copying the run.
            if matches!(self.lex, Lex::Str { key: false })
                && self.pending_high.is_none()
                && self.capture == Capture::None
            {
                let run = memchr::memchr2(b'"', b'\\', &bytes[i..]).unwrap_or(bytes.len() - i);
                if run > 0 {
                    if let Some(o) = self.out.as_mut() {
                        o.extend_from_slice(&bytes[i..i + run]);
                    }
                    i += run;
                    continue;
                }
            }
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// Ends the scan and returns what was found.
    pub fn finish(mut self) -> Found {
        match self.lex {
            Lex::Number => self.end_number(),
            Lex::Word => self.end_value(),
            _ => {}
        }
        self.found
    }

    fn path(&self) -> Path {
        self.stack
            .iter()
            .map(|f| match f.kind {
                Container::Object => Step::Key(String::from_utf8_lossy(&f.key).into_owned()),
                Container::Array => Step::Index(f.index),
            })
            .collect()
    }

    fn depth(&self) -> usize {
        self.stack.len() + self.untracked
    }

    fn emit(&mut self, b: u8) {
        if let Some(o) = self.out.as_mut() {
            o.push(b);
        }
    }

    fn keep(&mut self, b: u8, limit: usize) {
        if self.token.len() < limit {
            self.token.push(b);
        } else {
            self.token_cut = true;
        }
    }

    fn byte(&mut self, b: u8) {
        if let Capture::Id { started } = self.capture {
            if started || !(b.is_ascii_whitespace() || b == b':') {
                self.capture = Capture::Id { started: true };
                if self.id_text.len() <= MAX_ID {
                    self.id_text.push(b);
                }
            }
        }
        match self.lex {
            Lex::Between => self.between(b),
            Lex::Str { key } => self.in_string(b, key),
            Lex::Escape { key } => self.in_escape(b, key),
            Lex::Unicode { key, digits, value } => self.in_unicode(b, key, digits, value),
            Lex::Number => {
                if matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    self.emit(b);
                    self.keep(b, 64);
                    self.num.byte(b);
                } else {
                    self.unkeep_delimiter();
                    self.end_number();
                    self.between(b);
                }
            }
            Lex::Word => {
                if b.is_ascii_alphanumeric() {
                    self.emit(b);
                } else {
                    self.unkeep_delimiter();
                    self.end_value();
                    self.between(b);
                }
            }
        }
    }

    /// The byte that ended a number or word came into the id's text with it; it is not
    /// part of the value.
    fn unkeep_delimiter(&mut self) {
        if matches!(self.capture, Capture::Id { .. }) && self.depth() == 1 {
            self.id_text.pop();
        }
    }

    fn between(&mut self, b: u8) {
        self.lex = Lex::Between;
        self.emit(b);
        if self.depth() == 0 && !b.is_ascii_whitespace() {
            if self.closed {
                self.found.whole = false;
                self.trailing = true;
            }
            if !matches!(b, b'{' | b'[') {
                self.trailing = true;
            }
        }
        // A `method` that is not a string is no method.
        if self.capture == Capture::Method
            && self.depth() == 1
            && (b.is_ascii_alphanumeric() || matches!(b, b'-' | b'{' | b'['))
        {
            self.capture = Capture::None;
        }
        match b {
            b'{' | b'[' => {
                if self.depth() == 0 {
                    self.found.batch = b == b'[';
                }
                if self.untracked == 0 && self.stack.len() < MAX_DEPTH {
                    self.stack.push(Frame {
                        kind: if b == b'{' {
                            Container::Object
                        } else {
                            Container::Array
                        },
                        key: Vec::new(),
                        index: 0,
                        expect_key: b == b'{',
                    });
                } else {
                    self.untracked += 1;
                }
            }
            b'}' | b']' => {
                if self.untracked > 0 {
                    self.untracked -= 1;
                } else {
                    self.stack.pop();
                }
                if self.depth() == 0 {
                    self.closed = true;
                    self.found.whole = !self.trailing;
                }
                self.end_value();
            }
            b',' if self.untracked == 0 => {
                if let Some(f) = self.stack.last_mut() {
                    match f.kind {
                        Container::Object => f.expect_key = true,
                        Container::Array => f.index += 1,
                    }
                }
            }
            b'"' => {
                let key = self.untracked == 0
                    && self
                        .stack
                        .last()
                        .is_some_and(|f| f.kind == Container::Object && f.expect_key);
                if key {
                    if let Some(f) = self.stack.last_mut() {
                        f.expect_key = false;
                        f.key.clear();
                    }
                }
                self.string_flawed = false;
                self.lex = Lex::Str { key };
            }
            b'-' | b'0'..=b'9' => {
                self.token.clear();
                self.token_cut = false;
                self.num = NumberShape::default();
                self.num.byte(b);
                self.keep(b, 64);
                self.num_start = self.out.as_ref().map_or(0, |o| o.len() - 1);
                self.lex = Lex::Number;
            }
            b if b.is_ascii_alphabetic() => self.lex = Lex::Word,
            _ => {}
        }
    }

    fn end_number(&mut self) {
        let text = (!self.token_cut)
            .then(|| std::str::from_utf8(&self.token).ok())
            .flatten();
        if self.num.overflows(text) {
            if self.found.out_of_range.len() < MAX_FLAWS {
                let p = self.path();
                self.found.out_of_range.push(p);
            }
            // The repaired copy holds the number's text as a string.
            if let Some(o) = self.out.as_mut() {
                let digits = o.split_off(self.num_start);
                o.push(b'"');
                o.extend_from_slice(&digits);
                o.push(b'"');
            }
        }
        self.end_value();
    }

    /// A value ended (a scalar, or a container closed).
    fn end_value(&mut self) {
        if self.depth() != 1 {
            return;
        }
        match std::mem::replace(&mut self.capture, Capture::None) {
            Capture::Id { .. } => {
                while self.id_text.last().is_some_and(u8::is_ascii_whitespace) {
                    self.id_text.pop();
                }
                if self.id_text.len() <= MAX_ID {
                    self.found.id = String::from_utf8(std::mem::take(&mut self.id_text)).ok();
                }
            }
            Capture::Method => {
                if !self.token_cut {
                    self.found.method = String::from_utf8(std::mem::take(&mut self.token)).ok();
                }
            }
            Capture::None => {}
        }
    }

    fn in_string(&mut self, b: u8, key: bool) {
        match b {
            b'"' => {
                self.flush_high();
                self.emit(b);
                self.lex = Lex::Between;
                if key {
                    self.key_ended();
                } else {
                    self.end_value();
                }
            }
            b'\\' => {
                self.emit(b);
                self.lex = Lex::Escape { key };
            }
            _ => {
                self.flush_high();
                self.emit(b);
                self.string_byte(b, key);
            }
        }
    }

    /// One byte of a string's decoded text.
    fn string_byte(&mut self, b: u8, key: bool) {
        if key {
            if let Some(f) = self.stack.last_mut() {
                if f.key.len() < MAX_KEY {
                    f.key.push(b);
                }
            }
        } else if self.capture == Capture::Method && self.depth() == 1 {
            self.keep(b, MAX_METHOD);
        }
    }

    fn key_ended(&mut self) {
        if self.stack.len() != 1 || self.untracked != 0 {
            return;
        }
        let Some(f) = self.stack.last() else {
            return;
        };
        self.capture = match f.key.as_slice() {
            b"id" => {
                self.found.has_id = true;
                self.id_text.clear();
                Capture::Id { started: false }
            }
            b"method" => {
                self.token.clear();
                self.token_cut = false;
                Capture::Method
            }
            b"result" | b"error" => {
                self.found.response = true;
                Capture::None
            }
            _ => Capture::None,
        };
    }

    fn in_escape(&mut self, b: u8, key: bool) {
        self.emit(b);
        if b == b'u' {
            self.lex = Lex::Unicode {
                key,
                digits: 0,
                value: 0,
            };
            return;
        }
        self.lex = Lex::Str { key };
        self.flush_high();
        let c = match b {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 8,
            b'f' => 12,
            other => other,
        };
        self.string_byte(c, key);
    }

    fn in_unicode(&mut self, b: u8, key: bool, digits: u8, value: u16) {
        self.emit(b);
        let Some(d) = (b as char).to_digit(16) else {
            // Not an escape after all: serde_json refuses the text.
            self.lex = Lex::Str { key };
            return;
        };
        let value = (value << 4) | d as u16;
        if digits < 3 {
            self.lex = Lex::Unicode {
                key,
                digits: digits + 1,
                value,
            };
            return;
        }
        self.lex = Lex::Str { key };
        let at = self.out.as_ref().map_or(0, |o| o.len().saturating_sub(6));
        match value {
            0xd800..=0xdbff => {
                self.flush_high();
                self.pending_high = Some(at);
            }
            0xdc00..=0xdfff => {
                if self.pending_high.take().is_none() {
                    self.flaw(at);
                }
            }
            v => {
                self.flush_high();
                if let Some(c) = char::from_u32(u32::from(v)) {
                    let mut buf = [0; 4];
                    for &x in c.encode_utf8(&mut buf).as_bytes() {
                        self.string_byte(x, key);
                    }
                }
            }
        }
    }

    /// A high surrogate not followed by a low one is a flaw.
    fn flush_high(&mut self) {
        if let Some(at) = self.pending_high.take() {
            self.flaw(at);
        }
    }

    /// Records the current string as ill-formed and rewrites the escape at `at` (in the
    /// repaired copy) as `\ufffd`.
    fn flaw(&mut self, at: usize) {
        if let Some(o) = self.out.as_mut() {
            if o.len() >= at + 6 {
                o[at..at + 6].copy_from_slice(b"\\ufffd");
            }
        }
        if !self.string_flawed && self.found.ill_formed.len() < MAX_FLAWS {
            self.string_flawed = true;
            let p = self.path();
            self.found.ill_formed.push(p);
        }
    }
}

#[cfg(test)]
mod tests;
