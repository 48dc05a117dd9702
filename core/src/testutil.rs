//! Helpers shared by the unit tests: models from literal documents, the okf-samples
//! corpus and golden files.

use crate::compile::{compile, Model, SourceDoc, SUMMARY_WIDTH};
use std::path::{Path, PathBuf};

/// Compiles `(bundle, path, text)` triples.
pub(crate) fn model(docs: &[(&str, &str, &str)]) -> Model {
    let docs: Vec<SourceDoc> = docs
        .iter()
        .map(|(b, p, t)| SourceDoc::new(*b, *p, *t))
        .collect();
    compile(&docs, SUMMARY_WIDTH).expect("test documents compile")
}

/// The workspace's `tests/data` folder.
pub(crate) fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

/// Every `.md` file of the okf-samples bundles (one folder per bundle), sorted by path.
pub(crate) fn okf_sample_docs() -> Vec<SourceDoc> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("readable test data")
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().into_string().expect("UTF-8 file name");
            let rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &rel, out);
            } else if name.to_ascii_lowercase().ends_with(".md") {
                out.push((
                    rel,
                    std::fs::read_to_string(e.path()).expect("UTF-8 test file"),
                ));
            }
        }
    }
    let root = data_dir().join("okf-samples");
    let mut bundles: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    bundles.sort_by_key(|e| e.file_name());
    let mut docs = Vec::new();
    for b in bundles.iter().filter(|e| e.file_type().unwrap().is_dir()) {
        let bundle = b.file_name().into_string().unwrap();
        let mut files = Vec::new();
        walk(&b.path(), "", &mut files);
        docs.extend(
            files
                .into_iter()
                .map(|(p, t)| SourceDoc::new(bundle.clone(), p, t)),
        );
    }
    docs
}

/// The compiled okf-samples corpus.
pub(crate) fn okf_samples() -> Model {
    compile(&okf_sample_docs(), SUMMARY_WIDTH).expect("okf-samples compile")
}

/// Compares `actual` with the golden file `tests/data/golden/<name>`. A missing golden is
/// written; `UPDATE_GOLDEN=1` rewrites it.
pub(crate) fn check_golden(name: &str, actual: &str) {
    let path = data_dir().join("golden").join(name);
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    if update || !path.exists() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert!(expected == actual, "golden {name} differs; run with UPDATE_GOLDEN=1 and review the diff.\n--- expected\n{expected}\n--- actual\n{actual}");
}
