//! The one table of agent tools (agent.md §1.7): names, titles, descriptions, parameter
//! descriptions and input schemas, the argument validation against those schemas, the
//! response texts of agent.md §6 and the advice sentence of §7.2.
//!
//! Every host builds its tool surface from this module: the native MCP server registers
//! [`tool_set`] and answers with the renderers below, and the wasm package's JS tool surface
//! does the same, so names and texts cannot drift between them. Nothing here does IO; the
//! hosts run the operation and pass its outcome in.
//!
//! - `table.rs`: the tools, their parameters and input schemas, the token estimate;
//! - `args.rs`: validation of a call's arguments into a [`ToolCall`];
//! - `render.rs`: the reply texts of agent.md §6 and the advice sentence of §7.2.

mod args;
mod op;
mod render;
mod table;

pub use args::*;
pub use op::*;
pub use render::*;
pub use table::*;

#[cfg(test)]
mod tests;
