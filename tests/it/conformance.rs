//! The store conformance suite (engine.md §9.3) on the Rust stores: the cases of
//! `tests/data/conformance.json`, interpreted by the core (`langonrock_core::conformance`),
//! on the memory store and (tests/it/files_store.rs) the native files store. The package's
//! suite runs the same file on the JS stores. Case 8 (a native and a Node writer racing on
//! one files tenant) needs two runtimes and lives with the package's files-layout tests.
//!
//! The helpers below (`open`, `observe`, `at`) serve the engine tests.

use langonrock_core::conformance::{self, Call, Reply, RunStep, Runner};
use langonrock_core::engine::{run, Engine, FaultyStore, HistoryRequest, Store};
use langonrock_core::manifest;

const TENANT: &str = "conf";
const TODAY: &str = "2026-06-01";

/// The commit time of the `n`-th commit of a case.
pub(crate) fn at(n: u64) -> String {
    format!(
        "2026-05-01T09:{:02}:{:02}.{:03}Z",
        (n / 60) % 60,
        n % 60,
        n % 1000
    )
}

/// Everything a reader can observe of a tenant, as bytes: manifest, snapshot id, sources,
/// and the whole history.
pub(crate) fn observe(e: &mut Engine, store: &mut dyn Store) -> String {
    let s = e.read().unwrap();
    let mut out = manifest::manifest(s.model(), TENANT, None, TODAY).unwrap();
    out.push_str(&format!(
        "snapshot {}\nrevision {:?}\n",
        s.snapshot_id(),
        s.revision()
    ));
    for src in s.list_source() {
        let c = s.read_source(&src.bundle, &src.path).unwrap();
        out.push_str(&serde_json::to_string(&src).unwrap());
        out.push_str(&serde_json::to_string(&c).unwrap());
        out.push('\n');
    }
    let mut before = None;
    loop {
        let op = e.history(HistoryRequest {
            before: before.clone(),
            limit: Some(100),
        });
        let page = run(e, store, op).unwrap();
        out.push_str(&serde_json::to_string(&page.revisions).unwrap());
        match page.next {
            Some(n) => before = Some(n),
            None => break,
        }
    }
    out
}

/// The conformance file, shared with the package's suite.
pub(crate) fn file() -> String {
    std::fs::read_to_string(crate::util::data_dir().join("conformance.json")).unwrap()
}

/// Runs every case of the file on fresh stores: `make()` gives a store on a fresh data root
/// and `reopen(&store)` another store object on the same root. `strict`: the store has the
/// memory store's extra checks.
pub(crate) fn run_file<S: Store>(make: &dyn Fn() -> S, reopen: &dyn Fn(&S) -> S, strict: bool) {
    let cases = conformance::cases(&file(), strict).unwrap();
    assert!(cases.len() >= 16, "{} cases", cases.len());
    for (name, case) in cases {
        let mut stores = vec![FaultyStore::new(make())];
        let mut runner = Runner::new(case, TENANT);
        let mut reply = None;
        loop {
            match runner.resume(reply.take()) {
                RunStep::Done(r) => {
                    r.unwrap_or_else(|e| panic!("{name}: {e}"));
                    break;
                }
                RunStep::Call(Call::Reopen) => {
                    let again = reopen(&stores[0].inner);
                    stores.push(FaultyStore::new(again));
                    reply = Some(Reply::Done);
                }
                RunStep::Call(Call::Pause { ms }) => {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    reply = Some(Reply::Done);
                }
                RunStep::Call(c) => {
                    let h = handle(&c);
                    reply = Some(conformance::serve(&mut stores[h], TENANT, c));
                }
            }
        }
    }
}

fn handle(c: &Call) -> usize {
    match c {
        Call::ReadHead { store }
        | Call::GetMany { store, .. }
        | Call::Put { store, .. }
        | Call::Swap { store, .. }
        | Call::Commit { store, .. }
        | Call::Keys { store }
        | Call::Remove { store, .. }
        | Call::Fault { store, .. } => *store,
        Call::Reopen | Call::Pause { .. } => 0,
    }
}

/// A memory store whose objects share one data root, as a reopen needs.
#[derive(Clone, Default)]
pub(crate) struct SharedMemory(
    std::sync::Arc<std::sync::Mutex<langonrock_core::engine::MemoryStore>>,
);

impl SharedMemory {
    fn new() -> SharedMemory {
        SharedMemory(std::sync::Arc::new(std::sync::Mutex::new(
            langonrock_core::engine::MemoryStore::new(),
        )))
    }
    fn with<T>(&self, f: impl FnOnce(&mut langonrock_core::engine::MemoryStore) -> T) -> T {
        f(&mut self.0.lock().unwrap())
    }
}

impl Store for SharedMemory {
    fn read_head(
        &mut self,
        t: &str,
    ) -> Result<Option<Vec<u8>>, langonrock_core::engine::StoreError> {
        self.with(|s| s.read_head(t))
    }
    fn get_many(
        &mut self,
        t: &str,
        k: &[langonrock_core::engine::Key],
    ) -> Result<Vec<Option<Vec<u8>>>, langonrock_core::engine::StoreError> {
        self.with(|s| s.get_many(t, k))
    }
    fn put(
        &mut self,
        t: &str,
        k: &langonrock_core::engine::Key,
        b: &[u8],
    ) -> Result<(), langonrock_core::engine::StoreError> {
        self.with(|s| s.put(t, k, b))
    }
    fn swap_head(
        &mut self,
        t: &str,
        e: Option<&[u8]>,
        n: &[u8],
    ) -> langonrock_core::engine::SwapOutcome {
        self.with(|s| s.swap_head(t, e, n))
    }
    fn keys(
        &mut self,
        t: &str,
    ) -> Result<Vec<langonrock_core::engine::KeyInfo>, langonrock_core::engine::StoreError> {
        self.with(|s| s.keys(t))
    }
    fn remove(
        &mut self,
        t: &str,
        k: &[langonrock_core::engine::Key],
        before: u64,
    ) -> Result<Vec<langonrock_core::engine::Key>, langonrock_core::engine::StoreError> {
        self.with(|s| s.remove(t, k, before))
    }
}

/// The memory store passes the suite.
#[test]
fn memory_store_conforms() {
    run_file(&SharedMemory::new, &|s: &SharedMemory| s.clone(), true);
}
