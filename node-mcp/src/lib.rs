//! The native host of langonrock: folder reading, the CLI and (later) the MCP server.
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
pub mod stdio;

#[cfg(test)]
mod testdir;
