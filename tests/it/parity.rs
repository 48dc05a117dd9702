//! The native half of the parity golden (the wasm half is `tests/wasm/node.rs`).

#[path = "../parity.rs"]
mod shared;

#[test]
fn native_parity_golden() {
    crate::util::check_golden("parity.txt", &shared::render_all());
}
