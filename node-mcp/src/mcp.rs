//! The MCP server of agent.md on rmcp: tools and texts from the one table in core
//! (`langonrock_core::tools`), the `okf://manifest` resource, every failure a tool result
//! with `isError: true`.
//!
//! The `Tool` values are built by hand from the table, and `list_tools`, `call_tool`,
//! `list_resources` and `read_resource` are implemented here, so no name, description or
//! schema comes from anywhere else. The operations themselves run in a [`Backend`].

use langonrock_core::tools::{self, Reply, ToolCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

/// What the server needs from a tenant connection. Implementations refresh to the store's
/// head before each call (agent.md §1.4), never write in read-only mode, and read the date
/// from their own clock.
pub trait Backend: Send + Sync + 'static {
    /// Runs one validated tool call: the reply text and whether it is an error.
    fn call(&self, call: ToolCall) -> Reply;
    /// The whole tenant manifest for today (the `okf://manifest` resource).
    fn manifest(&self) -> Result<String, String>;
}

/// Which tools the server registers (agent.md §2): the library's [`langonrock::ToolMode`].
pub type Mode = langonrock::ToolMode;

/// The rmcp `Tool` values of a mode, built from the core table, in its order.
pub fn rmcp_tools(mode: Mode, advice: Option<&str>) -> Vec<Tool> {
    mode.tools()
        .into_iter()
        .map(|t| {
            let schema = match t.input_schema() {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            let hints = if t.hints.read_only {
                ToolAnnotations::new()
                    .read_only(true)
                    .idempotent(t.hints.idempotent)
            } else {
                ToolAnnotations::new()
                    .destructive(t.hints.destructive)
                    .idempotent(t.hints.idempotent)
            };
            Tool::new(t.name, t.description_with(advice), Arc::new(schema))
                .with_title(t.title)
                .with_annotations(hints)
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
    mode: Mode,
    /// The tool list and the resource, which carry the advice sentence: given, or worked
    /// out once by [`McpServer::listing`] from `advice`.
    listing: Arc<std::sync::OnceLock<Listing>>,
    advice: Arc<dyn Fn() -> Option<String> + Send + Sync>,
}

/// What `tools/list` and `resources/list` answer.
struct Listing {
    tools: Vec<Tool>,
    resource: Resource,
}

impl Listing {
    fn new(mode: Mode, advice: Option<&str>) -> Listing {
        Listing {
            tools: rmcp_tools(mode, advice),
            resource: manifest_resource(advice),
        }
    }
}

impl McpServer {
    /// A server over `backend` in `mode` with the advice sentence (`None`: no advice).
    pub fn new(backend: Arc<dyn Backend>, mode: Mode, advice: Option<String>) -> McpServer {
        let server = McpServer::deferred(backend, mode, move || advice.clone());
        server.prepare();
        server
    }

    /// A server whose advice sentence `advice` works out when the tool list or the
    /// resource is first needed, or when [`McpServer::listing`] is called ahead (on a
    /// thread of its own at start-up, so that a first `tools/call` does not wait for the
    /// whole manifest: agent.md §1.1). Calls never need it.
    pub fn deferred(
        backend: Arc<dyn Backend>,
        mode: Mode,
        advice: impl Fn() -> Option<String> + Send + Sync + 'static,
    ) -> McpServer {
        McpServer {
            backend,
            names: mode.tools().iter().map(|t| t.name).collect(),
            mode,
            listing: Arc::new(std::sync::OnceLock::new()),
            advice: Arc::new(advice),
        }
    }

    /// Works out the tool list and the resource once (waiting when another thread is
    /// doing so).
    fn listing(&self) -> &Listing {
        self.listing.get_or_init(|| {
            let advice = (self.advice)();
            Listing::new(self.mode, advice.as_deref())
        })
    }

    /// [`McpServer::listing`] ahead of the first list request.
    pub fn prepare(&self) {
        self.listing();
    }

    /// The listing, on the blocking pool when it is not worked out yet.
    async fn listing_async<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Listing) -> T + Send + 'static,
    ) -> T {
        if let Some(l) = self.listing.get() {
            return f(l);
        }
        let server = self.clone();
        match tokio::task::spawn_blocking(move || f(server.listing())).await {
            Ok(v) => v,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// Runs one call as `tools/call` does: the reply text and whether it is an error.
    pub fn call(&self, name: &str, args: Option<&serde_json::Value>) -> (String, bool) {
        self.call_with(name, args, &[])
    }

    /// [`McpServer::call`] for arguments in which the transport found strings with lone
    /// surrogates (`ill_formed`, paths within the arguments).
    pub fn call_with(
        &self,
        name: &str,
        args: Option<&serde_json::Value>,
        ill_formed: &[langonrock_core::wire::Path],
    ) -> (String, bool) {
        if !self.names.contains(&name) {
            return (tools::unknown_tool(name), true);
        }
        match tools::parse_call_with(name, args, ill_formed) {
            Ok(call) => {
                let r = self.backend.call(call);
                (r.text, r.is_error)
            }
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

/// The server's identity and capabilities (agent.md §1.3): name `langonrock`, the package
/// version, tools and resources. The same over stdio and Streamable HTTP.
pub(crate) fn server_config() -> ServerConfig {
    ServerConfig::new(
        ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build(),
    )
    .with_server_info(Implementation::new("langonrock", env!("CARGO_PKG_VERSION")))
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        server_config()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.listing_async(|l| l.tools.clone()).await,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // What the transport found on the wire (crate::stdio::WIRE_META): arguments that
        // are not an object, strings with lone surrogates.
        let wire = context.meta.get(crate::stdio::WIRE_META).cloned();
        let args = match wire.as_ref().and_then(|w| w.get("arguments")) {
            Some(a) => Some(a.clone()),
            None => request.arguments.map(serde_json::Value::Object),
        };
        let ill_formed = wire
            .as_ref()
            .and_then(|w| w.get("illFormed"))
            .map(crate::stdio::paths_from_json)
            .unwrap_or_default();
        // The call blocks (a commit waits for its store): it runs on the blocking pool, so
        // the session goes on answering other requests meanwhile (reads of the published
        // state while a commit is in flight).
        let server = self.clone();
        let name = request.name.to_string();
        let (text, is_error) = tokio::task::spawn_blocking(move || {
            server.call_with(&name, args.as_ref(), &ill_formed)
        })
        .await
        .unwrap_or_else(|_| ("the tool call failed unexpectedly".into(), true));
        Ok(text_result(text, is_error).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            self.listing_async(|l| l.resource.clone()).await,
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != tools::MANIFEST_URI {
            return Err(ErrorData::resource_not_found(
                tools::no_resource(&request.uri),
                Some(serde_json::json!({"uri": request.uri})),
            ));
        }
        let server = self.clone();
        let manifest = tokio::task::spawn_blocking(move || server.backend.manifest())
            .await
            .unwrap_or_else(|_| Err("the manifest read failed unexpectedly".into()));
        match manifest {
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

#[cfg(test)]
mod tests;

/// Serves MCP over `reader`/`writer` until the transport closes, through the framing of
/// [`crate::stdio`]. A client that closes before any session (or before the first request
/// of protocol 2026-07-28, which has no `initialize`) is a clean end, not a failure.
pub async fn serve<R, W>(server: McpServer, reader: R, writer: W) -> Result<(), String>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (transport, written) = crate::stdio::StdioTransport::new(reader, writer);
    let outcome = match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP session failed: {e}")),
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(format!("cannot start the MCP session: {e}")),
    };
    // Every answer queued before the end goes out before the process exits.
    let _ = written.await;
    outcome
}

// ---------------------------------------------------------------------------------------
// The backend over a tenant connection
// ---------------------------------------------------------------------------------------

use langonrock::Connection as Conn;

/// How long after start-up a writable `mcp` session readies its linker for commits
/// (docs/mcp.md "Start-up time"), in milliseconds.
pub const WARM_AFTER_MS: u64 = 300;

/// The MCP backend over one tenant connection of the files store.
pub struct TenantBackend {
    conn: Arc<Conn>,
}

impl TenantBackend {
    /// A backend over `conn`.
    pub fn new(conn: Conn) -> TenantBackend {
        TenantBackend {
            conn: Arc::new(conn),
        }
    }

    /// A backend over a connection the caller shares (`serve` holds one per tenant).
    pub fn new_shared(conn: Arc<Conn>) -> TenantBackend {
        TenantBackend { conn }
    }

    /// Puts the pending derived record, if any (when the session ends).
    pub fn finish(&self) {
        self.conn.finish_derived();
    }
}

impl Backend for TenantBackend {
    fn call(&self, call: ToolCall) -> Reply {
        self.conn.tool(call)
    }

    fn manifest(&self) -> Result<String, String> {
        self.conn.manifest(None).map_err(|e| e.message())
    }
}

/// Builds the server of `langonrock mcp` for a connection: computes the advice sentence
/// once from the whole manifest (none if that fails).
pub fn server_for(conn: Conn, mode: Mode) -> McpServer {
    server_over(Arc::new(TenantBackend::new(conn)), mode)
}

/// [`server_for`] over a backend the caller keeps (to finish it when the session ends).
/// The advice sentence is worked out on a thread of its own, started here, from the whole
/// manifest, read right after the open; `tools/list` and `resources/list`
/// wait for it, calls do not (agent.md §1.1, §7.2).
pub fn server_over(backend: Arc<TenantBackend>, mode: Mode) -> McpServer {
    let conn = backend.conn.clone();
    let server = McpServer::deferred(backend, mode, move || conn.advice());
    let ahead = server.clone();
    if std::thread::Builder::new()
        .name("langonrock-advice".into())
        .spawn(move || ahead.prepare())
        .is_err()
    {
        server.prepare();
    }
    server
}

/// The advice sentence of a tenant (agent.md §7.2), from its whole manifest for today;
/// `None` when that cannot be read.
pub fn advice_for(conn: &Conn) -> Option<String> {
    conn.advice()
}

/// `langonrock mcp`: the startup lines on stderr (agent.md §1.1), then MCP over
/// `reader`/`writer` until the transport closes. Returns the exit code.
pub fn run_mcp<R, W>(
    dsn: &str,
    target: Option<&crate::args::Target>,
    mode: Mode,
    reader: R,
    writer: W,
    err: &mut dyn std::io::Write,
) -> i32
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let _ = writeln!(
        err,
        "langonrock mcp serving {} over stdio",
        crate::args::redact_dsn(dsn)
    );
    let opened = match target {
        Some(t) => langonrock::Options::default()
            .read_only(mode.read_only)
            .serves_searches(true)
            .open_root(&t.data, &t.tenant),
        // A remote DSN: the same server over a remote connection (docs/remote.md).
        None => langonrock::Options::default()
            .read_only(mode.read_only)
            .open(dsn),
    };
    let conn = match opened {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(err, "error: {}", e.message());
            return 1;
        }
    };
    if let (false, Some(t)) = (conn.has_head(), target) {
        let _ = writeln!(err, "{}", crate::commands::no_revisions(&t.tenant, &t.data));
    }
    conn.follow_changes();
    let conn = Arc::new(conn);
    // The first search needs the index: decode (or build) it on another thread while the
    // session starts. A writable session opened from a derived record then readies itself
    // for commits on the same thread once the start-up has passed (docs/mcp.md "Start-up time"),
    // so the first write does not build the linker: the wait leaves the cold first search
    // its cores, and a write that comes sooner builds it as before.
    if let Some(s) = conn.served() {
        // Only a state without a linker: warming one that has it (its texts still
        // unchecked) would hold a write that arrives meanwhile for the whole text check,
        // which reads do piecemeal instead (an edit took 49.5 ms against 5-9).
        let warm = (!mode.read_only && conn.served_from_derived()).then(|| conn.clone());
        let _ = std::thread::Builder::new()
            .name("langonrock-index".into())
            .spawn(move || {
                s.warm_index(&langonrock::clock::today());
                drop(s);
                if let Some(c) = warm {
                    std::thread::sleep(std::time::Duration::from_millis(WARM_AFTER_MS));
                    let _ = c.warm();
                }
            });
    }
    let backend = Arc::new(TenantBackend::new_shared(conn));
    let server = server_over(backend.clone(), mode);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "error: cannot start the runtime: {e}");
            return 1;
        }
    };
    let code = match rt.block_on(serve(server, reader, writer)) {
        Ok(()) => 0,
        Err(m) => {
            let _ = writeln!(err, "error: {m}");
            1
        }
    };
    backend.finish();
    code
}
