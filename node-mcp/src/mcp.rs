//! The MCP server of agent.md on rmcp: tools and texts from the one table in core
//! (`langonrock_core::tools`), the `okf://manifest` resource, every failure a tool result
//! with `isError: true`.
//!
//! The `Tool` values are built by hand from the table, and `list_tools`, `call_tool`,
//! `list_resources` and `read_resource` are implemented here, so no name, description or
//! schema comes from anywhere else. The operations themselves run in a [`Backend`].

use langonrock_core::tools::{self, ToolCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

/// What the server needs from a tenant connection. Implementations refresh to the store's
/// head before each call (agent.md §1.4) and never write in read-only mode.
pub trait Backend: Send + Sync + 'static {
    /// Runs one validated tool call for the read date `today`; returns the reply text and
    /// whether it is an error.
    fn call(&self, call: ToolCall, today: &str) -> (String, bool);
    /// The whole tenant manifest rendered for `today` (the `okf://manifest` resource).
    fn manifest(&self, today: &str) -> Result<String, String>;
}

/// Which tools the server registers (agent.md §2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mode {
    /// `--database-tools`.
    pub database_tools: bool,
    /// `--read-only`.
    pub read_only: bool,
}

/// The rmcp `Tool` values of a mode, built from the core table, in its order.
pub fn rmcp_tools(mode: Mode, advice: Option<&str>) -> Vec<Tool> {
    tools::tool_set(mode.database_tools, mode.read_only)
        .into_iter()
        .map(|t| {
            let schema = match t.input_schema() {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            Tool::new(t.name, t.description_with(advice), Arc::new(schema)).with_title(t.title)
        })
        .collect()
}

/// The `okf://manifest` resource (agent.md §7.1).
pub fn manifest_resource(advice: Option<&str>) -> Resource {
    let description = tools::tool("manifest")
        .map(|t| t.description_with(advice))
        .unwrap_or_default();
    Resource::new(tools::MANIFEST_URI, tools::MANIFEST_RESOURCE_NAME)
        .with_title(tools::MANIFEST_RESOURCE_TITLE)
        .with_description(description)
        .with_mime_type(tools::MANIFEST_MIME)
}

/// The server: one backend, one mode, the advice fixed at startup.
#[derive(Clone)]
pub struct McpServer {
    backend: Arc<dyn Backend>,
    names: Vec<&'static str>,
    tools: Vec<Tool>,
    resource: Resource,
    today: Arc<dyn Fn() -> String + Send + Sync>,
}

impl McpServer {
    /// A server over `backend` in `mode` with the advice sentence (`None`: no advice).
    /// `today` gives the read date before each call.
    pub fn new(
        backend: Arc<dyn Backend>,
        mode: Mode,
        advice: Option<String>,
        today: Arc<dyn Fn() -> String + Send + Sync>,
    ) -> McpServer {
        McpServer {
            backend,
            names: tools::tool_set(mode.database_tools, mode.read_only)
                .iter()
                .map(|t| t.name)
                .collect(),
            tools: rmcp_tools(mode, advice.as_deref()),
            resource: manifest_resource(advice.as_deref()),
            today,
        }
    }

    /// Runs one call as `tools/call` does: the reply text and whether it is an error.
    pub fn call(&self, name: &str, args: Option<&serde_json::Value>) -> (String, bool) {
        if !self.names.contains(&name) {
            return (format!("unknown tool \"{name}\""), true);
        }
        match tools::parse_call(name, args) {
            Ok(call) => self.backend.call(call, &(self.today)()),
            Err(m) => (m, true),
        }
    }
}

fn text_result(text: String, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("langonrock", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(serde_json::Value::Object);
        let (text, is_error) = self.call(&request.name, args.as_ref());
        Ok(text_result(text, is_error).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![self
            .resource
            .clone()]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != tools::MANIFEST_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource \"{}\"", request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        }
        match self.backend.manifest(&(self.today)()) {
            Ok(text) => Ok(ReadResourceResult::new(vec![ResourceContents::text(
                text,
                tools::MANIFEST_URI,
            )
            .with_mime_type(tools::MANIFEST_MIME)])
            .into()),
            Err(m) => Err(ErrorData::internal_error(m, None)),
        }
    }
}

/// Serves MCP over `reader`/`writer` until the transport closes.
pub async fn serve<R, W>(server: McpServer, reader: R, writer: W) -> Result<(), String>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = server
        .serve((reader, writer))
        .await
        .map_err(|e| format!("cannot start the MCP session: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("the MCP session failed: {e}"))?;
    Ok(())
}
