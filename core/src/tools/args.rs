//! Argument validation (agent.md §1.5): a call's JSON arguments checked against the tool's
//! input schema and turned into a typed [`ToolCall`].

use super::table::{tool, Param, ParamType, GET_DEFAULT_LIMIT, SEARCH_DEFAULT_K};
use crate::engine::request::{check_change, finish_transaction, parse_hash, Content};
use crate::engine::Transaction;
use crate::error::Error;
use crate::text::utf16_len;
use serde_json::{Map, Value};

/// The engine's `transact` request of validated tool changes: each change through the
/// engine's own checks (engine.md §5.2 rule 3; the schema already checked shapes and hash
/// forms), then the rules that follow. A failure tied to a change names its index.
pub fn transaction(changes: &[ChangeArg], expected: Option<&str>) -> Result<Transaction, Error> {
    let mut out = Vec::with_capacity(changes.len());
    for (index, c) in changes.iter().enumerate() {
        let change = check_change(
            if c.write { "write" } else { "delete" },
            &c.bundle,
            &c.path,
            c.content.clone(),
            c.replaces.as_deref().map(parse_hash).transpose(),
        )
        .map_err(|e| Error::InvalidChange {
            message: e.message(),
            index,
        })?;
        out.push(change);
    }
    finish_transaction(out, expected.map(parse_hash).transpose())
}

/// One change of a `transact` call, as validated against the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeArg {
    /// `true` for `write`, `false` for `delete`.
    pub write: bool,
    /// The bundle name as given.
    pub bundle: String,
    /// The path as given.
    pub path: String,
    /// The content of a write (`IllFormed` when the client sent lone surrogates in it).
    pub content: Option<Content>,
    /// The hash replaced (required for a delete).
    pub replaces: Option<String>,
}

/// A tool call whose arguments satisfy the tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// `manifest`.
    Manifest {
        /// The bundle filter.
        bundle: Option<String>,
    },
    /// `search` (always expanded).
    Search {
        /// The query, at least one character.
        query: String,
        /// The number of ranked matches, 1–50, default 8.
        k: usize,
        /// The bundle filter.
        bundle: Option<String>,
    },
    /// `get`.
    Get {
        /// The ids, in request order.
        ids: Vec<String>,
        /// The section.
        section: Option<String>,
        /// The offset.
        offset: Option<usize>,
        /// The limit: as given, or [`GET_DEFAULT_LIMIT`] when neither `limit` nor `find`
        /// was given (read.md §3.3).
        limit: Option<usize>,
        /// The literal phrase.
        find: Option<String>,
        /// Whether to address the stored source.
        source: bool,
    },
    /// `snapshot`.
    Snapshot,
    /// `write`.
    Write {
        /// The bundle name.
        bundle: String,
        /// The path.
        path: String,
        /// The whole document (`IllFormed` when the client sent lone surrogates: the engine
        /// refuses it in its order of checks).
        content: Content,
        /// The hash replaced, as given (the engine checks its form).
        replaces: Option<String>,
    },
    /// `delete`.
    Delete {
        /// The bundle name.
        bundle: String,
        /// The path.
        path: String,
        /// The hash removed; without it nothing changes (agent.md §6.4.2).
        replaces: Option<String>,
    },
    /// `transact`.
    Transact {
        /// The changes, 1–1,000, as given (their targets name the changes of a refusal).
        changes: Vec<ChangeArg>,
        /// The expected head revision.
        expected_revision: Option<String>,
        /// The engine's request, validated by the engine's rules (engine.md §5.2) from the
        /// changes above; a refusal here is the tool's error (agent.md §6.5.2).
        request: Result<Transaction, Error>,
    },
    /// `history`.
    History {
        /// The cursor.
        before: Option<String>,
        /// The page size, 1–100.
        limit: Option<usize>,
    },
    /// `restore`.
    Restore {
        /// The revision to restore.
        revision: String,
        /// The current head.
        expected_revision: String,
    },
}

/// Whether `s` is 64 lowercase hex characters.
pub fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn invalid_hash(arg: &str, v: &str) -> String {
    format!(
        "{arg}: invalid hash \"{}\": expected 64 lowercase hex characters",
        crate::bounds::quote(v)
    )
}

/// The tool error for a tool name outside the served set.
pub fn unknown_tool(name: &str) -> String {
    format!("unknown tool \"{}\"", crate::bounds::quote(name))
}

/// An integer value as a `u64` (a JSON number with no fraction counts: `5.0` is 5), with
/// values beyond `u64` saturating, or `None` when it is not an integer.
fn as_integer(v: &Value) -> Option<Option<u64>> {
    if let Some(n) = v.as_u64() {
        return Some(Some(n));
    }
    if v.as_i64().is_some() {
        return Some(None); // a negative integer
    }
    let f = v.as_f64()?;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    if f < 0.0 {
        Some(None)
    } else {
        Some(Some(if f >= u64::MAX as f64 {
            u64::MAX
        } else {
            f as u64
        }))
    }
}

fn integer_message(name: &str, min: u64, max: Option<u64>) -> String {
    match (min, max) {
        (_, Some(max)) => format!("{name} must be an integer from {min} to {max}"),
        (0, None) => format!("{name} must be a non-negative integer"),
        (1, None) => format!("{name} must be a positive integer"),
        (min, None) => format!("{name} must be an integer of at least {min}"),
    }
}

fn check_changes(v: &Value, ill_formed: &[usize]) -> Result<Vec<ChangeArg>, String> {
    let items = match v.as_array() {
        Some(a) if !a.is_empty() && a.len() <= 1000 => a,
        _ => return Err("changes must be an array of 1 to 1000 changes".into()),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let obj = item
            .as_object()
            .ok_or_else(|| format!("changes[{i}] must be an object"))?;
        let write = match obj.get("operation").and_then(Value::as_str) {
            Some("write") => true,
            Some("delete") => false,
            _ => {
                return Err(format!(
                    "changes[{i}].operation must be \"write\" or \"delete\""
                ))
            }
        };
        let allowed: &[&str] = if write {
            &["operation", "bundle", "path", "content", "replaces"]
        } else {
            &["operation", "bundle", "path", "replaces"]
        };
        if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!(
                "changes[{i}] has an unexpected key \"{}\" for a{}",
                crate::bounds::quote(k),
                if write { " write" } else { " delete" }
            ));
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match obj.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("changes[{i}].{key} must be a string")),
            }
        };
        let bundle = text("bundle")?.ok_or_else(|| format!("changes[{i}].bundle is required"))?;
        let path = text("path")?.ok_or_else(|| format!("changes[{i}].path is required"))?;
        let content = if write {
            let text =
                text("content")?.ok_or_else(|| format!("changes[{i}].content is required"))?;
            Some(if ill_formed.contains(&i) {
                Content::IllFormed
            } else {
                Content::from(text)
            })
        } else {
            None
        };
        let replaces = text("replaces")?;
        match &replaces {
            Some(h) if !is_hex64(h) => {
                return Err(invalid_hash(&format!("changes[{i}].replaces"), h))
            }
            None if !write => {
                return Err(format!("changes[{i}].replaces is required for a delete"))
            }
            _ => {}
        }
        out.push(ChangeArg {
            write,
            bundle,
            path,
            content,
            replaces,
        });
    }
    Ok(out)
}

/// A validated argument value.
enum Arg {
    Str(String),
    Int(u64),
    Bool(bool),
    Ids(Vec<String>),
    Changes(Vec<ChangeArg>),
}

fn check_param(p: &Param, v: &Value, ill_formed: &[usize]) -> Result<Arg, String> {
    let name = p.name;
    match p.ty {
        ParamType::String { min_len, max_len } => {
            let s = v
                .as_str()
                .ok_or_else(|| format!("{name} must be a string"))?;
            let len = utf16_len(s);
            if min_len.is_some_and(|m| len < m) {
                return Err(format!("{name} must be a non-empty string"));
            }
            if let Some(m) = max_len.filter(|&m| len > m) {
                return Err(format!("{name} must be a string of at most {m} characters"));
            }
            Ok(Arg::Str(s.to_string()))
        }
        ParamType::Integer { min, max } => match as_integer(v) {
            Some(Some(n)) if n >= min && max.is_none_or(|m| n <= m) => Ok(Arg::Int(n)),
            _ => Err(integer_message(name, min, max)),
        },
        ParamType::Boolean => v
            .as_bool()
            .map(Arg::Bool)
            .ok_or_else(|| format!("{name} must be true or false")),
        ParamType::Ids => match v.as_array() {
            Some(a) if !a.is_empty() && a.iter().all(Value::is_string) => Ok(Arg::Ids(
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect(),
            )),
            _ => Err(format!("{name} must be a non-empty array of strings")),
        },
        ParamType::Hex64 => match v.as_str() {
            Some(s) if is_hex64(s) => Ok(Arg::Str(s.to_string())),
            Some(s) => Err(invalid_hash(name, s)),
            None => Err(invalid_hash(name, &v.to_string())),
        },
        ParamType::Changes => check_changes(v, ill_formed).map(Arg::Changes),
    }
}

/// The validated arguments of one call, by parameter name.
struct Args(Vec<(&'static str, Arg)>);

impl Args {
    fn take(&mut self, name: &str) -> Option<Arg> {
        let i = self.0.iter().position(|(n, _)| *n == name)?;
        Some(self.0.swap_remove(i).1)
    }
    fn str(&mut self, name: &str) -> Option<String> {
        match self.take(name) {
            Some(Arg::Str(s)) => Some(s),
            _ => None,
        }
    }
    fn int(&mut self, name: &str) -> Option<usize> {
        match self.take(name) {
            Some(Arg::Int(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => None,
        }
    }
    fn bool(&mut self, name: &str) -> bool {
        matches!(self.take(name), Some(Arg::Bool(true)))
    }
}

/// Validates a call's arguments against the named tool's input schema and returns the typed
/// call. `args` is the JSON-RPC `arguments` value, `None` when absent. Unknown top-level keys
/// are ignored (the schemas do not close the argument objects); nothing is floored or clamped.
/// The error is the text of the tool error result: `unknown tool "<name>"`, or a message
/// naming the argument (`k must be an integer from 1 to 50`).
pub fn parse_call(name: &str, args: Option<&Value>) -> Result<ToolCall, String> {
    parse_call_with(name, args, &[])
}

/// [`parse_call`] for arguments in which the host found strings holding lone surrogates
/// (`ill_formed`: their paths within `arguments`, as `wire::Scanner` reports them; the
/// strings themselves carry U+FFFD there). Document content is refused by the engine with
/// `source must contain well-formed Unicode`, in its order of checks, so the reply is a
/// write failure like any other; any other argument is refused here, named:
/// `query must contain well-formed Unicode`.
pub fn parse_call_with(
    name: &str,
    args: Option<&Value>,
    ill_formed: &[crate::wire::Path],
) -> Result<ToolCall, String> {
    use crate::wire::Step;
    let tool = tool(name).ok_or_else(|| unknown_tool(name))?;
    let mut content = false;
    let mut changes = Vec::new();
    for p in ill_formed {
        match (tool.name, p.as_slice()) {
            ("write", [Step::Key(k)]) if k == "content" => content = true,
            ("transact", [Step::Key(c), Step::Index(i), Step::Key(k)])
                if c == "changes" && k == "content" =>
            {
                changes.push(*i)
            }
            _ => return Err(crate::wire::ill_formed_message(p)),
        }
    }
    let empty = Map::new();
    let obj = match args {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err("arguments must be an object".into()),
    };
    let mut checked = Args(Vec::new());
    for p in tool.params {
        match obj.get(p.name) {
            None if p.required => return Err(format!("{} is required", p.name)),
            None => {}
            Some(v) => checked.0.push((p.name, check_param(p, v, &changes)?)),
        }
    }
    let mut a = checked;
    Ok(match tool.name {
        "manifest" => ToolCall::Manifest {
            bundle: a.str("bundle"),
        },
        "search" => ToolCall::Search {
            query: a.str("query").unwrap_or_default(),
            k: a.int("k").unwrap_or(SEARCH_DEFAULT_K),
            bundle: a.str("bundle"),
        },
        "get" => {
            let ids = match a.take("ids") {
                Some(Arg::Ids(v)) => v,
                _ => Vec::new(),
            };
            let find = a.str("find");
            let limit = a.int("limit");
            ToolCall::Get {
                ids,
                section: a.str("section"),
                offset: a.int("offset"),
                limit: if limit.is_none() && find.is_none() {
                    Some(GET_DEFAULT_LIMIT)
                } else {
                    limit
                },
                find,
                source: a.bool("source"),
            }
        }
        "snapshot" => ToolCall::Snapshot,
        "write" => ToolCall::Write {
            bundle: a.str("bundle").unwrap_or_default(),
            path: a.str("path").unwrap_or_default(),
            content: if content {
                Content::IllFormed
            } else {
                Content::from(a.str("content").unwrap_or_default())
            },
            replaces: a.str("replaces"),
        },
        "delete" => ToolCall::Delete {
            bundle: a.str("bundle").unwrap_or_default(),
            path: a.str("path").unwrap_or_default(),
            replaces: a.str("replaces"),
        },
        "transact" => {
            let changes = match a.take("changes") {
                Some(Arg::Changes(c)) => c,
                _ => Vec::new(),
            };
            let expected_revision = a.str("expectedRevision");
            let request = transaction(&changes, expected_revision.as_deref());
            ToolCall::Transact {
                changes,
                expected_revision,
                request,
            }
        }
        "history" => ToolCall::History {
            before: a.str("before"),
            limit: a.int("limit"),
        },
        _ => ToolCall::Restore {
            revision: a.str("revision").unwrap_or_default(),
            expected_revision: a.str("expectedRevision").unwrap_or_default(),
        },
    })
}
