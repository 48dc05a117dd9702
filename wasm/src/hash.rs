//! A host's SHA-256 for the core (`langonrock_core::hash::set_host_sha256`, docs/js.md
//! §1.4). The Node entry passes one built on `crypto`, which uses the CPU's SHA
//! instructions; WebAssembly has none, so the module's own SHA-256 is several times slower.
//! The core still decides what is hashed: the host is handed the inputs as ranges of the
//! module's memory and answers their digests. Browsers pass none and keep the module's.

use js_sys::{Function, Uint32Array, Uint8Array};
use langonrock_core::hash::Digest;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

thread_local! {
    static HOST: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Registers `f(ranges)` as the module's SHA-256 of long inputs: `ranges` is a `Uint32Array`
/// of (address, length) pairs into the module's memory (`memory.buffer`), and `f` returns a
/// `Uint8Array` of their 32-byte digests, in order, without allocating in the module. Only
/// the first registration takes effect; returns whether this one did.
#[wasm_bindgen(js_name = setHostSha256)]
pub fn set_host_sha256(f: Function) -> bool {
    if langonrock_core::hash::host_sha256() {
        return false;
    }
    HOST.with(|h| *h.borrow_mut() = Some(f));
    langonrock_core::hash::set_host_sha256(host_sha256)
}

fn host_sha256(inputs: &[&[u8]], out: &mut [Digest]) -> bool {
    let mut ranges = Vec::with_capacity(2 * inputs.len());
    for b in inputs {
        ranges.push(b.as_ptr() as usize as u32);
        ranges.push(b.len() as u32);
    }
    let ranges = Uint32Array::from(&ranges[..]);
    let answer = HOST.with(|h| {
        h.borrow()
            .as_ref()
            .and_then(|f| f.call1(&JsValue::NULL, &ranges).ok())
    });
    let digests = answer
        .and_then(|a| a.dyn_into::<Uint8Array>().ok())
        .filter(|a| a.length() as usize == 32 * out.len());
    // A host that throws or answers the wrong shape: the core hashes them itself.
    digests.is_some_and(|d| {
        d.copy_to(out.as_flattened_mut());
        true
    })
}
