//! The native binary `langonrock`: the CLI (`cli`, `args`, `commands`), the MCP server over
//! stdio (`mcp`), the HTTP server (`serve`: the REST API and MCP over Streamable HTTP) and
//! folder reading (`folder`).
//!
//! Tenants are opened through the `langonrock` library crate (its `Connection` over the
//! files store); the behaviour lives in `langonrock-core`.

pub mod args;
pub mod cli;
pub mod commands;
pub mod folder;
pub mod mcp;
pub mod progress;
pub mod serve;
pub mod stdio;
