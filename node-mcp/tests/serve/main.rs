//! End-to-end tests of `langonrock serve` (docs/http.md): the real binary on a temporary
//! data root, driven by curl, raw sockets and the official MCP Python SDK.

#[path = "../common/mod.rs"]
mod common;
mod util;

mod concurrency; // reads during commits, other tenants, other writers, --read-only
mod crash; // SIGKILL during commits
mod limits; // body and header caps, timeouts, idle connections
mod mcp; // MCP over Streamable HTTP (Python SDK) and /mcp's auth and session bounds
mod replicas; // serve --store: replicas sharing one PostgreSQL database
mod routes; // every route and error over the unix socket
mod security; // tokens over TCP, path tricks, grants
mod startup; // refusals, banner, tokens file, TLS
