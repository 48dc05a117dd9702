//! Bounds on frontmatter before the YAML parser sees it (docs/limits.md).
//!
//! Two kinds of YAML make `yaml_serde` work far beyond the size of its input: flow
//! collections nested many levels deep (its scanner revisits every open level for each
//! token, so 100,000 levels in 200 KB took half a minute) and aliases that repeat large
//! anchored nodes (nine lines can ask for a billion copies). [`check`] measures both in one
//! linear pass over the text, without building anything, and returns the diagnostic when a
//! bound is exceeded, so the parser never runs on such text.
//!
//! The pass knows enough YAML to find structure: quoted scalars, block scalars, comments,
//! flow brackets, anchors, aliases, and the indentation that ends a block node. Where it
//! cannot tell (an unusual plain scalar), it errs towards counting more, never less: the
//! depth it reports is at least the real one, and an anchor's size includes at least its
//! node. Ordinary frontmatter stays far below both bounds.

use crate::bounds::{YAML_ALIAS_NODES, YAML_FLOW_DEPTH};
use std::collections::HashMap;

/// The diagnostic for frontmatter beyond a bound, or `None` when the parser may run.
pub(crate) fn check(yaml: &str) -> Option<String> {
    let mut s = Scan::new(yaml);
    s.run().err()
}

/// How an open anchor's node ends.
#[derive(Clone, Copy, Debug)]
enum Close {
    /// A flow collection: when the flow depth drops back to this.
    Flow(usize),
    /// A block node after a mapping key at this indentation: at the first content line
    /// indented less, or as much without starting a sequence entry.
    AfterKey(usize),
    /// A block node of a sequence entry whose `-` sits at this column: at the first content
    /// line indented as much or less.
    AfterDash(usize),
    /// A block node whose anchor starts its line at this indentation: at the first content
    /// line indented less.
    Below(usize),
}

/// What an anchor name stands for so far.
#[derive(Clone, Copy, Debug)]
enum Def {
    /// A node still being read, from this node count on.
    Open(u64),
    /// A finished node of this many nodes (aliases inside counted as their anchors).
    Done(u64),
}

struct Open<'a> {
    name: &'a str,
    start: u64,
    close: Close,
}

/// Where the scanner stands in the text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum At {
    /// Where a node may start (after indentation, `- `, `? `, `: `, `[`, `{`, `,`, or node
    /// properties).
    Node,
    /// Inside or after a scalar, until the next indicator.
    Scalar,
}

struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    line: usize,
    line_start: usize,
    flow: usize,
    /// Nodes seen so far, aliases counted as the size of their anchors.
    nodes: u64,
    /// Nodes added by aliases so far.
    added: u64,
    /// The latest definition of each anchor name.
    defs: HashMap<&'a str, Def>,
    open: Vec<Open<'a>>,
    /// An anchor whose node has not started yet: `(name, close if it turns out to be a
    /// block node)`.
    pending: Option<(&'a str, Close)>,
    /// The indentation of the current line and how its node started.
    indent: usize,
    /// The indentation below which a block scalar's body ends, while in one.
    block_scalar: Option<usize>,
    /// A plain scalar in block context that may continue on more indented lines: the
    /// indentation it must exceed.
    plain_continues: Option<usize>,
    /// The line and byte column of the last block sequence `-`.
    last_dash: Option<(usize, usize)>,
    /// Whether the current line has had a mapping value indicator.
    key_on_line: bool,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Scan<'a> {
        Scan {
            text,
            b: text.as_bytes(),
            i: 0,
            line: 1,
            line_start: 0,
            flow: 0,
            nodes: 0,
            added: 0,
            defs: HashMap::new(),
            open: Vec::new(),
            pending: None,
            indent: 0,
            block_scalar: None,
            plain_continues: None,
            last_dash: None,
            key_on_line: false,
        }
    }

    fn run(&mut self) -> Result<(), String> {
        while self.i < self.b.len() {
            self.line_begin()?;
        }
        self.close_all();
        Ok(())
    }

    /// One line from its first byte: indentation, then its content.
    fn line_begin(&mut self) -> Result<(), String> {
        let start = self.i;
        let mut j = start;
        while j < self.b.len() && self.b[j] == b' ' {
            j += 1;
        }
        let indent = j - start;
        let blank = j >= self.b.len()
            || matches!(self.b[j], b'\n' | b'\r')
            || (self.b[j] == b'#' && self.flow == 0);
        if let Some(min) = self.block_scalar {
            if blank || indent > min {
                return self.skip_line();
            }
            self.block_scalar = None;
        }
        if blank {
            return self.skip_line();
        }
        if self.flow == 0 {
            if let Some(min) = self.plain_continues {
                if indent > min {
                    return self.skip_line();
                }
            }
            self.plain_continues = None;
            let dash = self.b[j..].starts_with(b"- ")
                || self.b[j..].starts_with(b"-\n")
                || &self.b[j..] == b"-";
            self.close_block(indent, dash);
            self.indent = indent;
            self.key_on_line = false;
        }
        self.i = j;
        self.content(At::Node)
    }

    fn skip_line(&mut self) -> Result<(), String> {
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
        self.newline();
        Ok(())
    }

    fn newline(&mut self) {
        if self.i < self.b.len() {
            self.i += 1;
            self.line += 1;
            self.line_start = self.i;
        }
    }

    /// The rest of a line (and more, for quoted scalars and flow collections spanning lines).
    fn content(&mut self, mut at: At) -> Result<(), String> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            let next = self.b.get(self.i + 1).copied();
            let spaced = |n: Option<u8>| matches!(n, None | Some(b' ' | b'\t' | b'\n' | b'\r'));
            match c {
                b'\n' => {
                    if self.flow == 0 {
                        if at == At::Scalar && self.pending_block().is_none() {
                            self.plain_continues.get_or_insert(self.indent);
                        }
                        self.block_pending_anchor();
                        self.newline();
                        return Ok(());
                    }
                    self.newline();
                    // Inside a flow collection, line breaks are white space.
                    while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t') {
                        self.i += 1;
                    }
                }
                b' ' | b'\t' | b'\r' => {
                    self.i += 1;
                    if self.b.get(self.i) == Some(&b'#') {
                        self.skip_comment();
                    }
                }
                b'#' if at == At::Node => self.skip_comment(),
                b'[' | b'{' if at == At::Node || self.flow > 0 => {
                    self.node_starts(Some(Close::Flow(self.flow)));
                    self.flow += 1;
                    if self.flow > YAML_FLOW_DEPTH {
                        return Err(format!(
                            "invalid YAML frontmatter: flow collections nested deeper than {YAML_FLOW_DEPTH} levels at line {} column {}",
                            self.line,
                            self.column()
                        ));
                    }
                    self.i += 1;
                    at = At::Node;
                }
                b']' | b'}' if self.flow > 0 => {
                    self.flow -= 1;
                    self.i += 1;
                    self.close_flow();
                    at = At::Scalar;
                }
                b',' if self.flow > 0 => {
                    self.i += 1;
                    at = At::Node;
                }
                b'-' | b'?' | b':' if at == At::Node && self.flow == 0 && spaced(next) => {
                    if c == b'-' {
                        self.nodes += 1;
                        self.last_dash = Some((self.line, self.i - self.line_start));
                    }
                    self.i += 1;
                }
                b':' if at == At::Scalar && (spaced(next) || self.flow > 0) => {
                    // A mapping value follows its key. (In a flow collection a `:` inside a
                    // plain scalar such as a URL counts as one too: that only counts more.)
                    self.i += 1;
                    at = At::Node;
                    if self.flow == 0 {
                        self.plain_continues = None;
                        self.key_on_line = true;
                    }
                }
                b'?' | b':' if at == At::Node && self.flow > 0 => {
                    self.i += 1;
                }
                b'&' if at == At::Node => {
                    let name = self.name();
                    let close = if self.flow > 0 {
                        Close::Flow(self.flow)
                    } else if self.key_on_line {
                        Close::AfterKey(self.indent)
                    } else if let Some((_, column)) =
                        self.last_dash.filter(|&(line, _)| line == self.line)
                    {
                        Close::AfterDash(column)
                    } else {
                        Close::Below(self.indent)
                    };
                    self.pending = Some((name, close));
                }
                b'!' if at == At::Node => {
                    self.name();
                }
                b'*' if at == At::Node => {
                    let name = self.name();
                    // An alias of an anchor still open (recursive) repeats what it holds so
                    // far; an unknown one is an error the parser reports.
                    let size = match self.defs.get(name) {
                        Some(Def::Done(n)) => *n,
                        Some(Def::Open(start)) => self.nodes - start,
                        None => 0,
                    };
                    self.scalar_node();
                    self.nodes = self.nodes.saturating_add(size);
                    self.added = self.added.saturating_add(size);
                    if self.added > YAML_ALIAS_NODES as u64 {
                        return Err(format!(
                            "invalid YAML frontmatter: aliases expand to more than {} nodes",
                            thousands(YAML_ALIAS_NODES)
                        ));
                    }
                    at = At::Scalar;
                }
                b'\'' | b'"' if at == At::Node => {
                    self.scalar_node();
                    self.quoted(c);
                    at = At::Scalar;
                }
                b'|' | b'>' if at == At::Node && self.flow == 0 => {
                    self.scalar_node();
                    // The body is every following line indented more than this node's
                    // parent; the header's own line ends here.
                    self.block_scalar = Some(self.indent);
                    self.skip_comment();
                }
                _ => {
                    if at == At::Node {
                        self.scalar_node();
                        at = At::Scalar;
                    }
                    self.i += 1;
                }
            }
        }
        self.block_pending_anchor();
        Ok(())
    }

    fn column(&self) -> usize {
        self.text[self.line_start..self.i].chars().count() + 1
    }

    fn skip_comment(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
    }

    /// An anchor, alias or tag name after its indicator.
    fn name(&mut self) -> &'a str {
        let start = self.i + 1;
        let mut j = start;
        while j < self.b.len()
            && !matches!(
                self.b[j],
                b' ' | b'\t' | b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}'
            )
        {
            j += 1;
        }
        self.i = j;
        // Indicators are ASCII, so the cut is on a char boundary.
        self.text.get(start..j).unwrap_or("")
    }

    /// A quoted scalar from its opening quote; it may span lines.
    fn quoted(&mut self, q: u8) {
        self.i += 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c == b'\n' {
                self.newline();
                continue;
            }
            if q == b'"' && c == b'\\' {
                self.i += 2;
                continue;
            }
            self.i += 1;
            if c == q {
                if q == b'\'' && self.b.get(self.i) == Some(&b'\'') {
                    self.i += 1;
                    continue;
                }
                return;
            }
        }
    }

    /// A node starts: a collection (with how it closes) or a scalar (`None`).
    fn node_starts(&mut self, flow_close: Option<Close>) {
        self.nodes += 1;
        if let Some((name, _)) = self.pending.take() {
            match flow_close {
                Some(close) => self.push_open(name, self.nodes - 1, close),
                None => {
                    self.defs.insert(name, Def::Done(1));
                }
            }
        }
    }

    fn scalar_node(&mut self) {
        // A pending anchor on a scalar (or alias) names that one node.
        let pending = self.pending.take();
        self.nodes += 1;
        if let Some((name, _)) = pending {
            self.defs.insert(name, Def::Done(1));
        }
    }

    fn pending_block(&self) -> Option<Close> {
        self.pending.map(|(_, c)| c)
    }

    fn push_open(&mut self, name: &'a str, start: u64, close: Close) {
        self.defs.insert(name, Def::Open(start));
        self.open.push(Open { name, start, close });
    }

    /// An anchor left pending at the end of its line names the block node below.
    fn block_pending_anchor(&mut self) {
        if self.flow == 0 {
            if let Some((name, close)) = self.pending.take() {
                self.push_open(name, self.nodes, close);
            }
        }
    }

    /// Closes the block anchors a content line at `indent` ends.
    fn close_block(&mut self, indent: usize, dash: bool) {
        while let Some(top) = self.open.last() {
            let ends = match top.close {
                Close::AfterKey(n) => indent < n || (indent == n && !dash),
                Close::AfterDash(c) => indent <= c,
                Close::Below(n) => indent < n,
                Close::Flow(_) => false,
            };
            if !ends {
                break;
            }
            self.finish_top();
        }
    }

    /// Closes the flow anchors whose collection just ended.
    fn close_flow(&mut self) {
        while let Some(top) = self.open.last() {
            match top.close {
                Close::Flow(d) if d >= self.flow => self.finish_top(),
                _ => break,
            }
        }
    }

    fn finish_top(&mut self) {
        if let Some(o) = self.open.pop() {
            // A later anchor of the same name may have replaced this one meanwhile.
            if matches!(self.defs.get(o.name), Some(Def::Open(s)) if *s == o.start) {
                self.defs.insert(o.name, Def::Done(self.nodes - o.start));
            }
        }
    }

    fn close_all(&mut self) {
        while !self.open.is_empty() {
            self.finish_top();
        }
    }
}

/// `100000` as `100,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
