//! MCP over Streamable HTTP at `/mcp` (docs/mcp.md, docs/http.md "MCP over Streamable
//! HTTP"): rmcp's transport, with the server's auth in front and the stdio server's tool
//! surface ([`McpServer`]) behind, so tool texts, replies and the `okf://manifest` resource
//! are the same bytes as over stdio.
//!
//! Every request is authorized on its own (its token, its `?tenant=` and `?tools=`), and
//! what it may do travels with it to the handler as a request extension: the handler holds
//! no tenant of its own, so a session is only a channel and never carries a grant over from
//! another request.

use super::api::{on_tenant_arc, refused};
use super::reply::{body_error, read_body, refuse, Reply, MAX_BODY};
use super::route::{authorize, bearer, query_param, Refusal};
use super::tenants::Tenant;
use super::State;
use crate::mcp::{self, McpServer, Mode};
use bytes::Bytes;
use http::request::Parts;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use langonrock_core::wire;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The `/mcp` endpoint: rmcp's service and its sessions.
pub(crate) struct Mcp {
    service: StreamableHttpService<HttpMcp, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    /// Held from the session count check of an `initialize` until its session exists.
    opening: tokio::sync::Mutex<()>,
    max_sessions: usize,
    cancel: CancellationToken,
}

impl Mcp {
    /// The endpoint with at most `max_sessions` live sessions, each ended after `idle`
    /// without a message.
    pub(crate) fn new(max_sessions: usize, idle: Duration) -> Mcp {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(idle);
        let sessions = Arc::new(manager);
        let cancel = CancellationToken::new();
        // No Host check: the listener is a unix socket (no browser reaches it) or TCP, which
        // needs a token that a page rebinding a name cannot know.
        let config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_max_request_body_bytes(MAX_BODY)
            .with_cancellation_token(cancel.clone());
        Mcp {
            service: StreamableHttpService::new(|| Ok(HttpMcp), sessions.clone(), config),
            sessions,
            opening: tokio::sync::Mutex::new(()),
            max_sessions,
            cancel,
        }
    }

    /// Ends every session (at shutdown).
    pub(crate) fn close(&self) {
        self.cancel.cancel();
    }
}

/// What one request may do, as the handler finds it in the request's extensions.
#[derive(Clone)]
struct Grant {
    tenant: Arc<Tenant>,
    mode: Mode,
}

const TOOLS_VALUES: &str = "expected read-only or database";

/// Serves one request to `/mcp`.
pub(crate) async fn handle(state: &Arc<State>, mut parts: Parts, body: Incoming) -> Reply {
    let query = parts.uri.query().map(str::to_string);
    let token = bearer(parts.headers.get(http::header::AUTHORIZATION)).map(str::to_string);
    let tenant = query_param(query.as_deref(), "tenant").filter(|t| !t.is_empty());
    let access = match authorize(&state.tokens, tenant.as_deref(), token.as_deref()) {
        Ok(a) => a,
        Err(r) => return refused(state, r, body).await,
    };
    let asked = match query_param(query.as_deref(), "tools").as_deref() {
        None | Some("") => Mode::default(),
        Some("read-only") => Mode {
            read_only: true,
            database_tools: false,
        },
        Some("database") => Mode {
            read_only: false,
            database_tools: true,
        },
        Some(other) => {
            let m = format!(
                "unknown tools \"{}\": {TOOLS_VALUES}",
                other.chars().take(64).collect::<String>()
            );
            return refused(state, Refusal(StatusCode::BAD_REQUEST, "INVALID", m), body).await;
        }
    };
    // A read grant or a read-only server gets the four read tools whatever is asked.
    let mode = if access.write && !state.read_only {
        asked
    } else {
        Mode {
            read_only: true,
            database_tools: false,
        }
    };
    let bytes = if parts.method == Method::POST {
        match read_body(body, MAX_BODY, state.limits.body_timeout).await {
            Ok(b) => b,
            Err(e) => return body_error(e),
        }
    } else {
        let _ = super::reply::drain(body, state.limits.body_timeout).await;
        Bytes::new()
    };
    let bytes = match wire_rule(bytes) {
        Ok(b) => b,
        // A JSON-RPC error answer, sent as rmcp sends a JSON (not an event stream) reply.
        Err(message) => return super::reply::reply(StatusCode::OK, "application/json", message),
    };
    let mut _opening = None;
    if parts.method == Method::POST
        && !parts.headers.contains_key("mcp-session-id")
        && is_initialize(&bytes)
    {
        let guard = state.mcp.opening.lock().await;
        if state.mcp.sessions.sessions.read().await.len() >= state.mcp.max_sessions {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "UNAVAILABLE",
                "too many MCP sessions",
            );
        }
        _opening = Some(guard);
    }
    if parts.method == Method::POST {
        let tenant = match on_tenant_arc(state, &access.tenant).await {
            Ok(t) => t,
            Err(r) => return r,
        };
        parts.extensions.insert(Grant { tenant, mode });
    }
    let ending = parts.method == Method::DELETE;
    let request = Request::from_parts(parts, Full::new(bytes));
    let mut reply = state.mcp.service.handle(request).await.map(|b| b.boxed());
    // rmcp acknowledges an ended session with 202; the SDKs expect 200 or 204.
    if ending && reply.status() == StatusCode::ACCEPTED {
        *reply.status_mut() = StatusCode::NO_CONTENT;
        *reply.body_mut() = super::reply::full(Bytes::new());
    }
    reply
}

/// Reads a POST body as the stdio server reads a line (docs/limits.md), so `/mcp` answers
/// what `serde_json` alone refuses as stdio does instead of rmcp's bare 415: a lone
/// surrogate escape or a number a double cannot hold is repaired (the number becomes its
/// digits, which the tool's schema check then names), a lone surrogate within a
/// `tools/call`'s arguments goes to the tool, which names it (`query must contain
/// well-formed Unicode`; content: `source must contain well-formed Unicode`), and one
/// anywhere else, or a flawed id, is answered here as a JSON-RPC error. A `tools/call`
/// whose arguments are not an object reaches the tool too (`arguments must be an object`).
/// A client's own `_meta` entry of the wire findings is dropped. Anything else (not JSON,
/// a batch, a well-formed message) goes to rmcp as it came. `Err` is the answer's body.
fn wire_rule(bytes: Bytes) -> Result<Bytes, Vec<u8>> {
    use crate::stdio::{self as rule, WIRE_META};
    use serde_json::Value;
    let Ok((mut v, found)) = wire::parse_repairing(&bytes) else {
        return Ok(bytes);
    };
    let Some(obj) = v.as_object_mut() else {
        return Ok(bytes);
    };
    let flawed = !found.ill_formed.is_empty() || !found.out_of_range.is_empty();
    let id = obj
        .get("id")
        .filter(|i| rule::valid_id(i) && !rule::id_flawed(&found))
        .cloned();
    if !obj.contains_key("id") {
        // A notification is never answered: rmcp gets it repaired.
        return Ok(if flawed {
            serde_json::to_vec(&v).map_or(bytes, Bytes::from)
        } else {
            bytes
        });
    }
    if flawed && id.is_none() {
        return Err(rule::error_message(
            None,
            rule::INVALID_REQUEST,
            rule::BAD_ID,
        ));
    }
    let method = obj
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let ill_formed = match rule::argument_flaws(&method, &found) {
        Ok(paths) => paths,
        Err(m) => return Err(rule::error_message(id.as_ref(), rule::INVALID_PARAMS, &m)),
    };
    let mut changed = flawed;
    if let Some(Value::Object(params)) = obj.get_mut("params") {
        if let Some(Value::Object(meta)) = params.get_mut("_meta") {
            changed |= meta.remove(WIRE_META).is_some();
        }
        if method == "tools/call" && params.get("name").is_some_and(Value::is_string) {
            changed |= rule::mark_call(params, &ill_formed);
        }
    }
    if !changed {
        return Ok(bytes);
    }
    Ok(serde_json::to_vec(&v).map_or(bytes, Bytes::from))
}

/// Whether a message (or a batch) is an `initialize` request.
fn is_initialize(bytes: &[u8]) -> bool {
    let is_init =
        |v: &serde_json::Value| v.get("method").and_then(|m| m.as_str()) == Some("initialize");
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Array(items)) => items.iter().any(is_init),
        Ok(v) => is_init(&v),
        Err(_) => false,
    }
}

fn grant(ctx: &RequestContext<RoleServer>) -> Result<Grant, ErrorData> {
    ctx.extensions
        .get::<Parts>()
        .and_then(|p| p.extensions.get::<Grant>())
        .cloned()
        .ok_or_else(|| ErrorData::internal_error("the request carries no grant", None))
}

/// The stdio server's surface for the request's tenant and mode (built on the blocking
/// pool the first time: it reads the manifest for the advice sentence).
async fn server(ctx: &RequestContext<RoleServer>) -> Result<McpServer, ErrorData> {
    let g = grant(ctx)?;
    tokio::task::spawn_blocking(move || g.tenant.mcp_server(g.mode))
        .await
        .map_err(|_| ErrorData::internal_error("the request's worker failed", None))
}

/// The handler rmcp runs for each session: stateless, every answer from the request's
/// grant.
#[derive(Clone)]
pub(crate) struct HttpMcp;

impl ServerHandler for HttpMcp {
    fn get_info(&self) -> ServerConfig {
        mcp::server_config()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        server(&context).await?.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        server(&context).await?.call_tool(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        server(&context)
            .await?
            .list_resources(request, context)
            .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        server(&context)
            .await?
            .read_resource(request, context)
            .await
    }
}
