//! How the module's heap grows. The standard allocator of `wasm32-unknown-unknown`
//! (dlmalloc) grows the linear memory by what one allocation lacks, rounded to 64 KiB, and
//! in V8 every `memory.grow` costs about a millisecond at a few hundred MiB (it grows with
//! the memory's size) and asks for a full garbage collection of the JS heap: an import of
//! 20,000 documents made about 3,600 of them (2.6 s of the import, and most of its GC time).
//! Here the heap is grown ahead, geometrically: one allocation of the headroom wanted,
//! freed at once, leaves that much at the top of dlmalloc's heap (a wasm heap never gives
//! memory back, so the space stays for the next allocations). Pages are only touched when
//! used, so what is grown but unused costs address space, not memory. No unsafe code.

use std::cell::Cell;

thread_local! {
    /// The memory's size after the last growth made here (bytes).
    static GROWN_TO: Cell<usize> = const { Cell::new(0) };
}

/// The memory's size in bytes (0 off wasm).
fn memory_bytes() -> usize {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size::<0>() * 65536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

/// Makes `bytes` of headroom with at most one growth of the memory (none when the heap
/// already has it free at its top); failure to grow is left to the allocation that needs it.
fn reserve(bytes: usize) {
    let mut v: Vec<u8> = Vec::new();
    if v.try_reserve_exact(bytes).is_ok() {
        // Keeps the compiler from leaving the allocation out.
        std::hint::black_box(&v);
    }
    drop(v);
    GROWN_TO.set(memory_bytes());
}

/// Before a step of engine work: when the memory grew since the last growth made here (the
/// headroom was used up), grows it by half its size at once.
pub fn step() {
    let size = memory_bytes();
    if size > GROWN_TO.get() {
        reserve(size / 2);
    }
}

/// Before work expected to allocate about `bytes` (an import of that much text): that much
/// headroom, or half the memory when more.
pub fn expect(bytes: usize) {
    reserve(bytes.max(memory_bytes() / 2));
}
