//! The one table of agent tools (agent.md §1.7): names, titles, descriptions, parameter
//! descriptions and input schemas, the argument validation against those schemas, the
//! response texts of agent.md §6 and the advice sentence of §7.2.
//!
//! Every host builds its tool surface from this module: the native MCP server registers
//! [`tool_set`] and answers with the renderers below, and the wasm package's JS tool surface
//! does the same, so names and texts cannot drift between them. Nothing here does IO; the
//! hosts run the operation and pass its outcome in.

use crate::engine::request::Content;
use crate::engine::{DeleteResult, DiagnosticInfo, Renamed, RevisionResult, WriteResult};
use crate::error::{ConflictReason, Error};
use crate::text::utf16_len;
use serde_json::{json, Map, Value};

/// The MCP `get` tool's default `limit` when the agent gives neither `limit` nor `find`
/// (read.md §3.3).
pub const GET_DEFAULT_LIMIT: usize = 15_000;

/// The `search` tool's default `k` (search.md §3.6).
pub const SEARCH_DEFAULT_K: usize = 8;

/// The URI of the manifest resource (agent.md §7.1).
pub const MANIFEST_URI: &str = "okf://manifest";
/// The manifest resource's name.
pub const MANIFEST_RESOURCE_NAME: &str = "manifest";
/// The manifest resource's title.
pub const MANIFEST_RESOURCE_TITLE: &str = "Knowledge manifest";
/// The manifest resource's MIME type.
pub const MANIFEST_MIME: &str = "text/tab-separated-values";

/// The pattern of a full digest.
pub const HEX64_PATTERN: &str = "^[a-f0-9]{64}$";

/// The type of one parameter, from which both its schema and its validation derive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// A string, with optional length bounds (UTF-16 units).
    String {
        /// `minLength`.
        min_len: Option<usize>,
        /// `maxLength`.
        max_len: Option<usize>,
    },
    /// An integer within bounds.
    Integer {
        /// `minimum`.
        min: u64,
        /// `maximum`.
        max: Option<u64>,
    },
    /// `true` or `false`.
    Boolean,
    /// An array of strings with at least one item.
    Ids,
    /// A string of 64 lowercase hex characters.
    Hex64,
    /// `transact`'s list of changes (agent.md §3).
    Changes,
}

/// One parameter of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The argument's name.
    pub name: &'static str,
    /// Its description, when it carries a point of agent.md §4.
    pub description: Option<&'static str>,
    /// Its type.
    pub ty: ParamType,
    /// Whether it must be given.
    pub required: bool,
}

/// One tool of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The tool name.
    pub name: &'static str,
    /// The title.
    pub title: &'static str,
    /// The description. The manifest tool's gets the advice sentence appended by hosts
    /// (see [`Tool::description_with`]).
    pub description: &'static str,
    /// The parameters, in schema order.
    pub params: &'static [Param],
    /// Whether the tool changes the tenant (left out under `--read-only`).
    pub writes: bool,
    /// Whether the tool is one of the `--database-tools`.
    pub database: bool,
    /// The MCP tool annotations clients read to decide whether to ask the user first.
    pub hints: Hints,
}

/// A tool's MCP annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`; docs/mcp.md).
///
/// Every tool is idempotent: reads change nothing, and a change names the version it
/// replaces, so the same call made twice is refused the second time and changes nothing more.
/// `openWorldHint` is left out (it would default to true) to keep the token tax within the
/// budget of agent.md §5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// The tool does not change the tenant.
    pub read_only: bool,
    /// The tool may remove or replace what is there (meaningful when not read-only).
    pub destructive: bool,
    /// The same call made twice has no further effect.
    pub idempotent: bool,
}

impl Hints {
    /// A read: read-only and idempotent.
    pub const READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
    };
    /// A change that only creates or replaces a document (its older versions stay in history).
    pub const WRITE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
    };
    /// A change that may remove documents from the served state.
    pub const REMOVE: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: true,
    };

    /// The annotations object of a `tools/list` entry, with only the hints that mean
    /// something for the tool (`destructiveHint` only when it is not read-only).
    pub fn to_json(&self) -> Value {
        if self.read_only {
            json!({"readOnlyHint": true, "idempotentHint": self.idempotent})
        } else {
            json!({"destructiveHint": self.destructive, "idempotentHint": self.idempotent})
        }
    }
}

const fn string(name: &'static str, description: Option<&'static str>, required: bool) -> Param {
    Param {
        name,
        description,
        ty: ParamType::String {
            min_len: None,
            max_len: None,
        },
        required,
    }
}

/// The nine tools, in registration order (agent.md §2).
pub static TOOLS: [Tool; 9] = [
    Tool {
        name: "manifest",
        title: "Read the knowledge manifest",
        description: "The index of all knowledge: one TSV row per concept (id, bundle, kind, \
status, grain, one-line summary, outgoing links). Call it before anything else whenever you need \
to know what exists. Pick ids from it and fetch them with `get`. Never guess an id. A status \
other than `-` (deprecated, draft, stale) marks a concept that is not current: prefer current ones, and \
say so when you rely on one that is not.",
        params: &[string(
            "bundle",
            Some("Only this bundle's rows. On a large tenant, narrow by bundle or use `search`."),
            false,
        )],
        writes: false,
        hints: Hints::READ,
        database: false,
    },
    Tool {
        name: "search",
        title: "Find concepts by relevance",
        description: "Ranks concepts and returns manifest rows, never bodies. Use it instead of \
the manifest on a large tenant, or when you do not know which concept holds the answer. Rows have \
the manifest's columns plus `pos`, the offset where the query's words cluster densest (`-` when \
no exact word position was found). Follow up with `get` and `{offset: pos, limit: 2000}`, \
without `section`, or with `find` when you have a literal phrase. Results include concepts one link away from the top hits.",
        params: &[
            Param {
                name: "query",
                description: None,
                ty: ParamType::String {
                    min_len: Some(1),
                    max_len: None,
                },
                required: true,
            },
            Param {
                name: "k",
                description: Some("Ranked matches before expansion (default 8)."),
                ty: ParamType::Integer {
                    min: 1,
                    max: Some(50),
                },
                required: false,
            },
            string("bundle", Some("Restricts the ranking."), false),
        ],
        writes: false,
        hints: Hints::READ,
        database: false,
    },
    Tool {
        name: "get",
        title: "Fetch concepts by id",
        description: "Fetches concept text by manifest id. Put every id you need in one call: a \
batch is one round trip. Each concept is capped at `limit` characters, default 15,000; a \
partial slice is framed `@@ id [start..end of total]`: continue with `offset`. Ids not found are \
listed after `@@ not found`.",
        params: &[
            Param {
                name: "ids",
                description: None,
                ty: ParamType::Ids,
                required: true,
            },
            string(
                "section",
                Some("A heading-derived section, lower-case with underscores (e.g. `schema`, \
`joins`), subsections included; offsets are then within it. A concept without it answers with \
its section names."),
                false,
            ),
            Param {
                name: "offset",
                description: None,
                ty: ParamType::Integer { min: 0, max: None },
                required: false,
            },
            Param {
                name: "limit",
                description: None,
                ty: ParamType::Integer { min: 1, max: None },
                required: false,
            },
            Param {
                name: "find",
                description: Some("For where does it say X: a literal, case-insensitive \
phrase. Returns a window around the first match, the offsets of the first 20 matches and their \
total count."),
                ty: ParamType::String {
                    min_len: Some(1),
                    max_len: None,
                },
                required: false,
            },
            Param {
                name: "source",
                description: Some("`true`: the whole stored document, frontmatter included, \
framed with its path and hash."),
                ty: ParamType::Boolean,
                required: false,
            },
        ],
        writes: false,
        hints: Hints::READ,
        database: false,
    },
    Tool {
        name: "snapshot",
        title: "Check the current snapshot",
        description: "Returns the current snapshot digest. Call it to see whether the knowledge \
changed since you read the manifest.",
        params: &[],
        writes: false,
        hints: Hints::READ,
        database: false,
    },
    Tool {
        name: "write",
        title: "Create or replace a concept",
        description: "Creates or replaces one document and recompiles, so the change is visible \
at once. Ids derive from paths, so adding a file can rename others: the answer names the new id \
and every renamed one.",
        params: &[
            string(
                "bundle",
                Some("A new name creates the bundle; a write to an empty tenant starts it."),
                true,
            ),
            string("path", Some("Ends in `.md`, e.g. `tables/orders.md`."), true),
            string(
                "content",
                Some("The whole Markdown document, not a patch, with OKF frontmatter holding \
at least `type`."),
                true,
            ),
            string(
                "replaces",
                Some("Omit to create. To replace, you need not know the hash: write without it \
and the refusal gives the hash to retry with; if it says the concept changed, `get` it \
again before retrying. To edit, `get` it with `source: true`: its frame gives the path and this hash."),
                false,
            ),
        ],
        writes: true,
        hints: Hints::WRITE,
        database: false,
    },
    Tool {
        name: "delete",
        title: "Delete a concept",
        description: "Removes one document and recompiles. Deleting a bundle's last document \
removes the bundle.",
        params: &[
            string("bundle", None, true),
            string("path", None, true),
            string(
                "replaces",
                Some("Needed; calling without it returns the hash to retry with. Recovery as \
for `write`."),
                false,
            ),
        ],
        writes: true,
        hints: Hints::REMOVE,
        database: false,
    },
    Tool {
        name: "transact",
        title: "Commit document changes atomically",
        description: "Up to 1,000 creates, replaces and deletes in one durable revision. Each \
replace or delete needs the document's full hash. No changes commit if any precondition fails.",
        params: &[
            Param {
                name: "changes",
                description: None,
                ty: ParamType::Changes,
                required: true,
            },
            Param {
                name: "expectedRevision",
                description: Some("Guards against any concurrent change."),
                ty: ParamType::Hex64,
                required: false,
            },
        ],
        writes: true,
        hints: Hints::REMOVE,
        database: true,
    },
    Tool {
        name: "history",
        title: "Read retained revisions",
        description: "A bounded page of committed revisions, newest first. Pass `next` as \
`before` to continue.",
        params: &[
            Param {
                name: "before",
                description: None,
                ty: ParamType::String {
                    min_len: None,
                    max_len: Some(512),
                },
                required: false,
            },
            Param {
                name: "limit",
                description: None,
                ty: ParamType::Integer {
                    min: 1,
                    max: Some(100),
                },
                required: false,
            },
        ],
        writes: false,
        hints: Hints::READ,
        database: true,
    },
    Tool {
        name: "restore",
        title: "Restore a retained revision",
        description: "Creates a new revision holding a retained older state. `expectedRevision` \
must equal the current head. History is never rewritten.",
        params: &[
            Param {
                name: "revision",
                description: None,
                ty: ParamType::Hex64,
                required: true,
            },
            Param {
                name: "expectedRevision",
                description: None,
                ty: ParamType::Hex64,
                required: true,
            },
        ],
        writes: true,
        hints: Hints::REMOVE,
        database: true,
    },
];

/// The tool named `name`, if the table has it.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The tools a host registers, in order (agent.md §2): the default six, `--database-tools`
/// adds `transact`, `history`, `restore`, and `--read-only` leaves out every tool that writes.
pub fn tool_set(database_tools: bool, read_only: bool) -> Vec<&'static Tool> {
    TOOLS
        .iter()
        .filter(|t| (database_tools || !t.database) && !(read_only && t.writes))
        .collect()
}

fn hex64_schema() -> Value {
    json!({"type": "string", "pattern": HEX64_PATTERN})
}

fn change_schema(write: bool) -> Value {
    let mut props = Map::new();
    props.insert(
        "operation".into(),
        json!({"const": if write { "write" } else { "delete" }}),
    );
    props.insert("bundle".into(), json!({"type": "string"}));
    props.insert("path".into(), json!({"type": "string"}));
    if write {
        props.insert("content".into(), json!({"type": "string"}));
    }
    props.insert("replaces".into(), hex64_schema());
    let required = if write {
        json!(["operation", "bundle", "path", "content"])
    } else {
        json!(["operation", "bundle", "path", "replaces"])
    };
    json!({
        "type": "object",
        "properties": Value::Object(props),
        "required": required,
        "additionalProperties": false,
    })
}

impl Param {
    /// The parameter's JSON Schema.
    pub fn schema(&self) -> Value {
        let mut s = match self.ty {
            ParamType::String { min_len, max_len } => {
                let mut s = json!({"type": "string"});
                if let Some(n) = min_len {
                    s["minLength"] = json!(n);
                }
                if let Some(n) = max_len {
                    s["maxLength"] = json!(n);
                }
                s
            }
            ParamType::Integer { min, max } => {
                let mut s = json!({"type": "integer", "minimum": min});
                if let Some(m) = max {
                    s["maximum"] = json!(m);
                }
                s
            }
            ParamType::Boolean => json!({"type": "boolean"}),
            ParamType::Ids => json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
            ParamType::Hex64 => hex64_schema(),
            ParamType::Changes => json!({
                "type": "array",
                "minItems": 1,
                "maxItems": 1000,
                "items": {"oneOf": [change_schema(true), change_schema(false)]},
            }),
        };
        if let Some(d) = self.description {
            s["description"] = json!(d);
        }
        s
    }
}

impl Tool {
    /// The input schema: a JSON Schema object, built deterministically from the table.
    pub fn input_schema(&self) -> Value {
        let mut props = Map::new();
        for p in self.params {
            props.insert(p.name.to_string(), p.schema());
        }
        let mut s = json!({"type": "object", "properties": Value::Object(props)});
        let required: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name)
            .collect();
        if !required.is_empty() {
            s["required"] = json!(required);
        }
        s
    }

    /// The description, with the advice sentence appended after a blank line for the
    /// manifest tool (agent.md §7.2.6). Other tools ignore `advice`.
    pub fn description_with(&self, advice: Option<&str>) -> String {
        match advice {
            Some(a) if self.name == "manifest" => format!("{}\n\n{a}", self.description),
            _ => self.description.to_string(),
        }
    }

    /// The `tools/list` entry `{name, title, description, inputSchema, annotations}` as a
    /// host sends it.
    pub fn list_entry(&self, advice: Option<&str>) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description_with(advice),
            "inputSchema": self.input_schema(),
            "annotations": self.hints.to_json(),
        })
    }
}

/// The token estimate of a set of tool definitions (agent.md §5.1): the compact JSON of
/// their `tools/list` entries without advice, `(characters, ceil(characters / 4))`.
pub fn token_tax(tools: &[&Tool]) -> (usize, usize) {
    let chars: usize = tools
        .iter()
        .map(|t| utf16_len(&t.list_entry(None).to_string()))
        .sum();
    (chars, chars.div_ceil(4))
}

// ---------------------------------------------------------------------------------------
// Argument validation
// ---------------------------------------------------------------------------------------

/// One change of a `transact` call, as validated against the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeArg {
    /// `true` for `write`, `false` for `delete`.
    pub write: bool,
    /// The bundle name as given.
    pub bundle: String,
    /// The path as given.
    pub path: String,
    /// The content of a write.
    pub content: Option<String>,
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
        /// The changes, 1–1,000.
        changes: Vec<ChangeArg>,
        /// The expected head revision.
        expected_revision: Option<String>,
        /// The indexes of changes whose content held lone surrogates (pass them to
        /// `engine::parse_transaction_with`).
        ill_formed: Vec<usize>,
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

/// The tool error for a tool name outside the served set.
pub fn unknown_tool(name: &str) -> String {
    format!("unknown tool \"{}\"", crate::bounds::quote(name))
}

/// The JSON-RPC error message for a resource URI other than the manifest's.
pub fn no_resource(uri: &str) -> String {
    format!("no resource \"{}\"", crate::bounds::quote(uri))
}

fn integer_message(name: &str, min: u64, max: Option<u64>) -> String {
    match (min, max) {
        (_, Some(max)) => format!("{name} must be an integer from {min} to {max}"),
        (0, None) => format!("{name} must be a non-negative integer"),
        (1, None) => format!("{name} must be a positive integer"),
        (min, None) => format!("{name} must be an integer of at least {min}"),
    }
}

fn check_changes(v: &Value) -> Result<Vec<ChangeArg>, String> {
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
            Some(text("content")?.ok_or_else(|| format!("changes[{i}].content is required"))?)
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

fn check_param(p: &Param, v: &Value) -> Result<Arg, String> {
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
        ParamType::Changes => check_changes(v).map(Arg::Changes),
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
            _ => {
                let what = match crate::wire::render(p) {
                    s if s.is_empty() => "arguments".to_string(),
                    s => s,
                };
                return Err(format!("{what} must contain well-formed Unicode"));
            }
        }
    }
    let mut call = parse_call_args(tool, args)?;
    match &mut call {
        ToolCall::Write { content: c, .. } if content => *c = Content::IllFormed,
        ToolCall::Transact { ill_formed, .. } => *ill_formed = changes,
        _ => {}
    }
    Ok(call)
}

fn parse_call_args(tool: &'static Tool, args: Option<&Value>) -> Result<ToolCall, String> {
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
            Some(v) => checked.0.push((p.name, check_param(p, v)?)),
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
            content: Content::from(a.str("content").unwrap_or_default()),
            replaces: a.str("replaces"),
        },
        "delete" => ToolCall::Delete {
            bundle: a.str("bundle").unwrap_or_default(),
            path: a.str("path").unwrap_or_default(),
            replaces: a.str("replaces"),
        },
        "transact" => ToolCall::Transact {
            changes: match a.take("changes") {
                Some(Arg::Changes(c)) => c,
                _ => Vec::new(),
            },
            expected_revision: a.str("expectedRevision"),
            ill_formed: Vec::new(),
        },
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

// ---------------------------------------------------------------------------------------
// Responses (agent.md §6)
// ---------------------------------------------------------------------------------------

/// The line given for a navigation document instead of `id <id>` (agent.md §6.2).
pub const NAVIGATION_NOTE: &str =
    "note: index.md and log.md are navigation documents: stored, never listed or searched";

/// The next step after an indeterminate `write` (agent.md §6.3.1).
pub const WRITE_INDETERMINATE_STEP: &str =
    "get the concept and check whether it holds your content before writing again";

/// The next step after an indeterminate `delete` (agent.md §6.3.1).
pub const DELETE_INDETERMINATE_STEP: &str =
    "get the concept and check whether it is gone before deleting again";

fn push_renamed(out: &mut String, renamed: &[Renamed]) {
    for r in renamed {
        out.push_str("\nrenamed ");
        out.push_str(&r.from);
        out.push(' ');
        out.push_str(&r.to);
    }
}

/// The text of a successful `write` (agent.md §6.2). `bundle` and `path` name the document
/// as stored.
pub fn write_success(bundle: &str, path: &str, r: &WriteResult) -> String {
    let mut out = format!(
        "wrote {bundle}/{path} (hash {}), snapshot {}, {} concepts\n",
        r.hash, r.snapshot, r.concepts
    );
    match &r.id {
        Some(id) => {
            out.push_str("id ");
            out.push_str(id);
        }
        None => out.push_str(NAVIGATION_NOTE),
    }
    push_renamed(&mut out, &r.renamed);
    for d in &r.diagnostics {
        out.push('\n');
        out.push_str(&d.level);
        out.push(' ');
        out.push_str(&d.path);
        out.push_str(": ");
        out.push_str(&d.message);
    }
    out
}

fn retry_line(hash: &str) -> String {
    format!("\nretry with replaces: \"{hash}\"")
}

/// The text of a failed `write` (agent.md §6.3). `current` is the written document's hash
/// looked up after the failure (`None` when it does not exist or the lookup failed).
pub fn write_failure(err: &Error, current: Option<&str>) -> String {
    let mut out = err.message();
    match err {
        Error::IndeterminateCommit { .. } => {
            out.push('\n');
            out.push_str(WRITE_INDETERMINATE_STEP);
        }
        Error::Conflict {
            reason: Some(ConflictReason::Missing),
            ..
        } => out.push_str("\nomit replaces to create it"),
        _ => {
            if let Some(h) = current {
                out.push_str(&retry_line(h));
            }
        }
    }
    out
}

/// The text of a failed `delete` that was given `replaces` (agent.md §6.3, §6.4.3).
pub fn delete_failure(err: &Error, current: Option<&str>) -> String {
    let mut out = err.message();
    match err {
        Error::IndeterminateCommit { .. } => {
            out.push('\n');
            out.push_str(DELETE_INDETERMINATE_STEP);
        }
        _ => {
            if let Some(h) = current {
                out.push_str(&retry_line(h));
            }
        }
    }
    out
}

/// The error text of a `delete` without `replaces` (agent.md §6.4.2): nothing is changed.
pub fn delete_needs_hash(current: Option<&str>) -> String {
    match current {
        None => "concept does not exist".to_string(),
        Some(h) => format!(
            "deleting needs the hash of the version being removed{}",
            retry_line(h)
        ),
    }
}

/// The text of a successful `delete` (agent.md §6.4.1).
pub fn delete_success(bundle: &str, path: &str, r: &DeleteResult) -> String {
    let mut out = format!(
        "deleted {bundle}/{path}, snapshot {}, {} concepts",
        r.snapshot, r.concepts
    );
    push_renamed(&mut out, &r.renamed);
    out
}

/// Appends `s` as a JSON string.
fn push_json<T: serde::Serialize + ?Sized>(out: &mut String, v: &T) {
    out.push_str(&serde_json::to_string(v).unwrap_or_default());
}

/// The MCP answer of `transact` and `restore` (agent.md §6.5.1): compact JSON
/// `{revision, snapshot, concepts, bundles, diagnostics, diagnosticCount}`, where
/// `diagnostics` is `request` (the diagnostics of the documents the request wrote; none for
/// `restore`) and `diagnosticCount` counts the tenant's.
pub fn revision_answer(r: &RevisionResult, request: &[DiagnosticInfo]) -> String {
    let mut out = String::from("{\"revision\":");
    push_json(&mut out, &r.revision);
    out.push_str(",\"snapshot\":");
    push_json(&mut out, &r.snapshot);
    out.push_str(",\"concepts\":");
    out.push_str(&r.concepts.to_string());
    out.push_str(",\"bundles\":");
    push_json(&mut out, &r.bundles);
    out.push_str(",\"diagnostics\":");
    push_json(&mut out, request);
    out.push_str(",\"diagnosticCount\":");
    out.push_str(&r.diagnostics.len().to_string());
    out.push('}');
    out
}

/// The diagnostics of the documents a request wrote: those whose lower-cased
/// `bundle/path` equals a written target's (bundle names match ignoring case).
pub fn request_diagnostics(
    all: &[DiagnosticInfo],
    written: &[(&str, &str)],
) -> Vec<DiagnosticInfo> {
    let keys: Vec<(String, String)> = written
        .iter()
        .map(|(b, p)| (b.to_lowercase(), p.to_lowercase()))
        .collect();
    all.iter()
        .filter(|d| {
            let k = (d.bundle.to_lowercase(), d.path.to_lowercase());
            keys.contains(&k)
        })
        .cloned()
        .collect()
}

/// The bundle name as stored (bundles match ignoring case), or as given when `model` has
/// no such bundle: the name the `write` and `delete` answers print.
pub fn stored_bundle(model: &crate::compile::Model, bundle: &str) -> String {
    model
        .find_bundle(bundle)
        .map_or_else(|| bundle.to_string(), str::to_string)
}

/// The `transact` request of validated tool arguments, as JSON for the engine's own
/// validation ([`parse_transaction`](crate::engine::parse_transaction)).
pub fn transaction_request(changes: &[ChangeArg], expected: Option<&str>) -> Value {
    let list: Vec<Value> = changes
        .iter()
        .map(|c| {
            let mut o = Map::new();
            o.insert(
                "operation".into(),
                (if c.write { "write" } else { "delete" }).into(),
            );
            o.insert("bundle".into(), c.bundle.clone().into());
            o.insert("path".into(), c.path.clone().into());
            if let Some(t) = &c.content {
                o.insert("content".into(), t.clone().into());
            }
            if let Some(h) = &c.replaces {
                o.insert("replaces".into(), h.clone().into());
            }
            Value::Object(o)
        })
        .collect();
    let mut req = Map::new();
    req.insert("changes".into(), list.into());
    if let Some(e) = expected {
        req.insert("expectedRevision".into(), e.into());
    }
    Value::Object(req)
}

/// The text of a successful `transact` (agent.md §6.5.1): [`revision_answer`] with the
/// diagnostics of the documents the request wrote.
pub fn transact_success(r: &RevisionResult, changes: &[ChangeArg]) -> String {
    let written: Vec<(&str, &str)> = changes
        .iter()
        .filter(|c| c.write)
        .map(|c| (c.bundle.as_str(), c.path.as_str()))
        .collect();
    revision_answer(r, &request_diagnostics(&r.diagnostics, &written))
}

/// Whether a failed `write`, `delete` or `transact` looks up the current hashes for its
/// retry lines (agent.md §6.3): on every failure except an indeterminate commit.
pub fn looks_up_after(err: &Error) -> bool {
    !matches!(err, Error::IndeterminateCommit { .. })
}

/// One change a transact failure is tied to (agent.md §6.5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TiedChange {
    /// Zero-based index in the request.
    pub index: usize,
    /// The change's bundle and path, when both were strings.
    pub target: Option<(String, String)>,
    /// For a failed precondition on an existing document: its current hash.
    pub retry_hash: Option<String>,
}

/// The changes a `transact` failure is tied to (agent.md §6.5.2): the one change of a
/// validation failure, or every failed precondition in request order, each with the
/// document's current hash when it exists (`current(bundle, path)`, a lookup whose errors
/// count as absent). Other failures, an indeterminate commit included, tie none.
pub fn tied_changes(
    err: &Error,
    changes: &[ChangeArg],
    mut current: impl FnMut(&str, &str) -> Option<String>,
) -> Vec<TiedChange> {
    let target = |i: usize| changes.get(i).map(|c| (c.bundle.clone(), c.path.clone()));
    match err {
        Error::InvalidChange { index, .. } => vec![TiedChange {
            index: *index,
            target: target(*index),
            retry_hash: None,
        }],
        Error::Conflict {
            changes: failed, ..
        } => failed
            .iter()
            .map(|f| TiedChange {
                index: f.index,
                target: target(f.index),
                retry_hash: changes
                    .get(f.index)
                    .and_then(|c| current(&c.bundle, &c.path)),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The text of a failed `transact` (agent.md §6.5.2): the message, then for each tied
/// change `changes[<i>]: <bundle>/<path>` and, when it has one, its retry line. An
/// indeterminate commit adds nothing, whatever `tied` holds.
pub fn transact_failure(err: &Error, tied: &[TiedChange]) -> String {
    let mut out = err.message();
    if matches!(err, Error::IndeterminateCommit { .. }) {
        return out;
    }
    for t in tied {
        out.push_str(&format!("\nchanges[{}]", t.index));
        if let Some((b, p)) = &t.target {
            out.push_str(&format!(": {b}/{p}"));
        }
        if let Some(h) = &t.retry_hash {
            out.push_str(&retry_line(h));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Advice (agent.md §7.2)
// ---------------------------------------------------------------------------------------

/// The sentence for a tenant without concepts.
pub const EMPTY_ADVICE: &str = "This tenant holds no concepts yet.";

/// `n` rounded to two significant digits (half up), with `,` as the thousands separator:
/// 20,549 → `21,000`, 1,234 → `1,200`, 7 → `7`.
pub fn advice_label(n: usize) -> String {
    let mut p = 1usize;
    while n / p >= 100 {
        p *= 10;
    }
    let rounded = if p == 1 { n } else { (n + p / 2) / p * p };
    let digits = rounded.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The advice sentence for a whole tenant manifest (agent.md §7.2). All lengths are UTF-16
/// units.
pub fn advice(manifest: &str) -> String {
    let mut columns = 0usize;
    let mut rows = 0usize;
    let mut row_chars = 0usize;
    for line in manifest.split('\n') {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("id\t") {
            columns = utf16_len(line);
            continue;
        }
        rows += 1;
        row_chars += utf16_len(line) + 1;
    }
    if rows == 0 {
        return EMPTY_ADVICE.to_string();
    }
    let len = utf16_len(manifest);
    let mean_row = row_chars as f64 / rows as f64;
    let result_chars = 120.0 + columns as f64 + mean_row * rows.min(16) as f64;
    let label = advice_label(len.div_ceil(4));
    if len as f64 > 20.0 * result_chars {
        format!(
            "This tenant's manifest measures ~{label} tokens; prefer \"search\" over reading it whole."
        )
    } else {
        format!(
            "This tenant's manifest measures ~{label} tokens; reading it whole is cheaper than searching."
        )
    }
}

#[cfg(test)]
mod tests;
