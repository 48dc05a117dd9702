//! Embeds the okf-samples bundles, so the wasm32 tests compile the very same documents as the
//! native ones without a file system.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("test data")
        .map(|e| e.expect("entry"))
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().into_string().expect("UTF-8 name");
        let rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if e.file_type().expect("type").is_dir() {
            walk(&e.path(), &rel, out);
        } else if name.ends_with(".md") {
            out.push((rel, e.path()));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/okf-samples");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, "", &mut files);
    let mut src = String::from("/// (bundle, path, text) of every okf-samples document.\npub(crate) const SAMPLES: &[(&str, &str, &str)] = &[\n");
    for (rel, path) in files {
        // Top-level files are not inside a bundle folder.
        let Some((bundle, inner)) = rel.split_once('/') else {
            continue;
        };
        writeln!(
            src,
            "    ({bundle:?}, {inner:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("samples.rs");
    std::fs::write(out, src).expect("write samples.rs");
}
