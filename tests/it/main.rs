//! The one native integration test binary of langonrock.
#![cfg(not(target_arch = "wasm32"))]
#![allow(missing_docs)] // Test modules document themselves with their names.
#![allow(unreachable_pub)] // A test binary exports nothing; `pub` marks the helpers modules share.

/// The compiler: spec-by-example rules of compile.md and golden manifests.
mod compile;
/// The golden that the wasm32 build must reproduce byte for byte.
mod parity;
/// Helpers: golden files, test data paths.
mod util;
