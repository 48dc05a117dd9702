//! The core built for wasm32, run in Node: the same renderings as the native build, and the
//! wasm bindings driven as the JS package drives them (`bindings.rs`).
#![cfg(target_arch = "wasm32")]
#![allow(missing_docs)] // A test binary.

#[path = "../parity.rs"]
mod parity;

#[path = "bindings.rs"]
mod bindings;

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn wasm_renders_the_same_bytes_as_native() {
    let golden = include_str!("../data/golden/parity.txt");
    let actual = parity::render_all();
    if actual != golden {
        let line = golden
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "wasm32 output differs from the native golden at line {}: {:?} vs {:?}",
            line + 1,
            golden.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}
