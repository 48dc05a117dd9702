//! The one native integration test binary of langonrock.
#![cfg(not(target_arch = "wasm32"))]
#![allow(missing_docs)] // Test modules document themselves with their names.
#![allow(unreachable_pub)] // A test binary exports nothing; `pub` marks the helpers modules share.

/// The calls table every DSN kind answers alike (tests/data/sessions/calls.json).
mod calls;
/// The compiler: spec-by-example rules of compile.md and golden manifests.
mod compile;
/// The store conformance suite of engine.md §9.3, reusable by every Rust store.
mod conformance;
/// Derived records: opening from one reads like compiling; bad ones are ignored.
mod derived;
/// The engine against the memory store: refusals, results, lifecycle.
mod engine;
/// Property tests of the engine: random commits with injected failures.
mod engine_props;
/// The native files store against the conformance suite.
mod files_store;
/// The `langonrock` library's public surface: threads, async tasks, tools, refusals.
mod library;
/// The golden that the wasm32 build must reproduce byte for byte.
mod parity;
/// A real PostgreSQL server for the tests, and a proxy that cuts connections.
mod pg;
/// The PostgreSQL store against the conformance suite, faults and bad input.
mod postgres_store;
/// The tool session's placeholders, shared with node-mcp's remote tests.
mod session;
/// A tool session through the native MCP call path, against a golden the JS suite shares.
mod tool_session;
/// Helpers: golden files, test data paths.
mod util;
