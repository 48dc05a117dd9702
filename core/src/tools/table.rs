//! The tool table (agent.md §2, §4): names, titles, descriptions, parameters and the input
//! schemas built from them.

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
