//! The native files store (`langonrock::files::Files`) passes the store
//! conformance suite of engine.md §9.3.

use crate::conformance::run_file;
use langonrock::files::Files;
use std::sync::atomic::{AtomicU64, Ordering};

static N: AtomicU64 = AtomicU64::new(0);

#[test]
fn files_store_conforms() {
    let root = std::env::temp_dir().join(format!("langonrock-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let make = || {
        let dir = root.join(N.fetch_add(1, Ordering::Relaxed).to_string());
        Files::new(dir)
    };
    run_file(&make, &|s: &Files| Files::new(s.data()), false);
    let _ = std::fs::remove_dir_all(&root);
}
