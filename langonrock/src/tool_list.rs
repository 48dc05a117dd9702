//! The agent tool surface of a connection (docs/mcp.md): which tools a surface offers
//! ([`ToolMode`]), their definitions as the MCP server lists them ([`ToolDefinition`], with
//! the advice sentence computed from the tenant's manifest), so a Rust agent loop can hand
//! them to a model and answer its calls with [`Connection::call_tool`] — the same texts as
//! `langonrock mcp`, with no MCP process in between.

use crate::Connection;
use langonrock_core::tools::{self, Tool};
use serde_json::Value;

/// Which tools a surface offers (agent.md §2, the flags of `langonrock mcp`): the default
/// six (`manifest`, `search`, `get`, `snapshot`, `write`, `delete`); `database_tools` adds
/// `transact`, `history` and `restore`; `read_only` leaves out every tool that writes.
///
/// ```
/// use langonrock::ToolMode;
/// let names = |m: ToolMode| m.tools().iter().map(|t| t.name).collect::<Vec<_>>();
/// assert_eq!(names(ToolMode::default()), ["manifest", "search", "get", "snapshot", "write", "delete"]);
/// assert_eq!(names(ToolMode { database_tools: true, read_only: true }), ["manifest", "search", "get", "snapshot", "history"]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ToolMode {
    /// Adds the database tools `transact`, `history` and `restore` (`--database-tools`).
    pub database_tools: bool,
    /// Leaves out the tools that write (`--read-only`).
    pub read_only: bool,
}

impl ToolMode {
    /// The core table's entries of this mode, in the order a server lists them.
    pub fn tools(self) -> Vec<&'static Tool> {
        tools::tool_set(self.database_tools, self.read_only)
    }

    /// Whether this mode offers the tool `name`.
    ///
    /// ```
    /// use langonrock::ToolMode;
    /// assert!(ToolMode::default().offers("write"));
    /// assert!(!ToolMode { read_only: true, ..ToolMode::default() }.offers("write"));
    /// assert!(!ToolMode::default().offers("transact"));
    /// ```
    pub fn offers(self, name: &str) -> bool {
        self.tools().iter().any(|t| t.name == name)
    }

    /// The definitions of this mode's tools with an advice sentence (`None`: none), as
    /// `tools/list` sends them. [`Connection::tools`] computes the advice from the tenant.
    ///
    /// ```
    /// use langonrock::ToolMode;
    /// let defs = ToolMode::default().definitions(Some("Start with the manifest."));
    /// assert!(defs[0].description().ends_with("\n\nStart with the manifest."));
    /// assert!(!defs[1].description().contains("Start with"));
    /// ```
    pub fn definitions(self, advice: Option<&str>) -> Vec<ToolDefinition> {
        self.tools()
            .into_iter()
            .map(|tool| ToolDefinition {
                tool,
                description: tool.description_with(advice),
                entry: tool.list_entry(advice),
            })
            .collect()
    }
}

/// One tool as the MCP server lists it (`tools/list`): name, title, description (the
/// manifest tool's ends with the advice sentence) and input schema, all from the core's one
/// table (agent.md §1.7).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    tool: &'static Tool,
    description: String,
    entry: Value,
}

impl ToolDefinition {
    /// The tool's name, as [`Connection::call_tool`] takes it.
    pub fn name(&self) -> &'static str {
        self.tool.name
    }

    /// Its title.
    pub fn title(&self) -> &'static str {
        self.tool.title
    }

    /// Its description, advice included for `manifest`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its input schema (a JSON Schema object).
    pub fn input_schema(&self) -> &Value {
        &self.entry["inputSchema"]
    }

    /// The core table's entry: parameters, whether it writes, whether it is a database tool.
    pub fn tool(&self) -> &'static Tool {
        self.tool
    }

    /// The `tools/list` entry as JSON, exactly as `langonrock mcp` sends it:
    /// `{"name", "title", "description", "inputSchema"}`.
    ///
    /// ```
    /// let defs = langonrock::ToolMode::default().definitions(None);
    /// let search = defs[1].to_json();
    /// assert_eq!(search["name"], "search");
    /// assert_eq!(search["inputSchema"]["required"][0], "query");
    /// ```
    pub fn to_json(&self) -> Value {
        self.entry.clone()
    }
}

impl Connection {
    /// The advice sentence of agent.md §7.2 for the tenant's current manifest (how big the
    /// tenant is and how to read it), or `None` when the manifest cannot be read. The MCP
    /// server appends it to the `manifest` tool's description.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// assert_eq!(conn.advice().as_deref(), Some("This tenant holds no concepts yet."));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn advice(&self) -> Option<String> {
        self.advice_sentence()
    }

    /// The tool definitions of `mode`, in order, as `langonrock mcp` lists them for this
    /// tenant: the manifest tool's description ends with the advice sentence computed from
    /// the current manifest ([`Connection::advice`]). Hand them to a model; answer its calls
    /// with [`Connection::call_tool`]. A manifest that cannot be read leaves the advice out;
    /// only a closed connection fails.
    ///
    /// ```
    /// use langonrock::{Connection, ToolMode};
    /// let conn = Connection::memory("acme")?;
    /// let tools = conn.tools(ToolMode::default())?;
    /// assert_eq!(tools.len(), 6);
    /// assert_eq!(tools[0].name(), "manifest");
    /// assert!(tools[0].description().ends_with("This tenant holds no concepts yet."));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn tools(&self, mode: ToolMode) -> Result<Vec<ToolDefinition>, crate::Error> {
        if self.is_closed() {
            return Err(crate::Error::Invalid(crate::CLOSED.into()));
        }
        Ok(mode.definitions(self.advice().as_deref()))
    }
}
