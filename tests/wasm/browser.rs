//! The wasm bindings in headless Chrome (`wasm-pack test --headless --chrome`): the same cases
//! as under Node (`bindings.rs`), and the native renderings.
#![cfg(target_arch = "wasm32")]
#![allow(missing_docs)] // A test binary.

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "../parity.rs"]
mod parity;

#[path = "bindings.rs"]
mod bindings;

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn the_browser_renders_the_same_bytes_as_native() {
    assert_eq!(
        parity::render_all(),
        include_str!("../data/golden/parity.txt"),
        "wasm32 in the browser differs from the native golden"
    );
}
