use langonrock_core::compile::{compile, Model, SourceDoc, SUMMARY_WIDTH};
use std::path::PathBuf;

/// The folder `tests/data`.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Compares `actual` with the golden file `tests/data/golden/<name>`. A missing golden is
/// written; `UPDATE_GOLDEN=1` rewrites it.
pub fn check_golden(name: &str, actual: &str) {
    let path = data_dir().join("golden").join(name);
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    if update || !path.exists() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    if expected != actual {
        let diff_line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .map_or(expected.lines().count().min(actual.lines().count()), |i| i);
        panic!(
            "golden {name} differs at line {}:\n expected: {:?}\n actual:   {:?}\n(UPDATE_GOLDEN=1 rewrites goldens)",
            diff_line + 1,
            expected.lines().nth(diff_line),
            actual.lines().nth(diff_line)
        );
    }
}

/// Builds documents from `(bundle, path, text)` triples.
pub fn docs(items: &[(&str, &str, &str)]) -> Vec<SourceDoc> {
    items
        .iter()
        .map(|(b, p, t)| SourceDoc::new(*b, *p, *t))
        .collect()
}

/// Compiles `(bundle, path, text)` triples at the default width.
pub fn model(items: &[(&str, &str, &str)]) -> Model {
    compile(&docs(items), SUMMARY_WIDTH).unwrap()
}

/// The diagnostics as CLI lines.
pub fn diag_lines(m: &Model) -> String {
    m.diagnostics()
        .iter()
        .map(|d| format!("{}: {}/{}: {}\n", d.level(), d.bundle, d.path, d.message))
        .collect()
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new empty directory whose name holds `tag`.
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("langonrock-it-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
