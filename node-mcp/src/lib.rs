//! The native host of langonrock: folder reading, the CLI, the MCP server and the HTTP server.
//!
//! Everything that does IO lives here; the behaviour lives in `langonrock-core`.

pub mod args;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod conn;
pub mod file_store;
pub mod folder;
pub mod mcp;
pub mod serve;

#[cfg(test)]
mod testdir;
