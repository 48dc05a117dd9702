//! The native files store (`langonrock::files::Files`) passes the store
//! conformance suite of engine.md §9.3.

use crate::conformance::run_all;
use langonrock::files::Files;
use langonrock_core::engine::Store;
use std::sync::atomic::{AtomicU64, Ordering};

static N: AtomicU64 = AtomicU64::new(0);

#[test]
fn files_store_conforms() {
    let root = std::env::temp_dir().join(format!("langonrock-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let make = || -> Box<dyn Store> {
        let dir = root.join(N.fetch_add(1, Ordering::Relaxed).to_string());
        Box::new(Files::new(dir))
    };
    run_all(&make);
    let _ = std::fs::remove_dir_all(&root);
}
