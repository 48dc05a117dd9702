//! WebAssembly bindings of langonrock's core: thin, with no behaviour of their own.

use wasm_bindgen::prelude::*;

/// The package version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
