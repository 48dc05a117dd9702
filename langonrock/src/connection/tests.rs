use super::*;
use langonrock_core::engine::KeyInfo;
use std::sync::{mpsc, Condvar};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn a_connection_is_send_and_sync() {
    assert_send_sync::<Connection>();
}

/// A memory store whose commits wait at a gate: `held` tells when one arrived, and the
/// test opens the gate with `release`.
struct Gated {
    inner: MemoryStore,
    gate: Arc<(Mutex<bool>, Condvar)>,
    held: mpsc::Sender<()>,
}

impl Store for Gated {
    fn read_head(&mut self, t: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.read_head(t)
    }
    fn get_many(&mut self, t: &str, k: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.inner.get_many(t, k)
    }
    fn put(&mut self, t: &str, k: &Key, b: &[u8]) -> Result<(), StoreError> {
        self.inner.put(t, k, b)
    }
    fn put_many(&mut self, t: &str, r: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        let _ = self.held.send(());
        let (open, cv) = &*self.gate;
        let mut g = lock(open);
        while !*g {
            g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        self.inner.put_many(t, r)
    }
    fn swap_head(
        &mut self,
        t: &str,
        e: Option<&[u8]>,
        n: &[u8],
    ) -> langonrock_core::engine::SwapOutcome {
        self.inner.swap_head(t, e, n)
    }
    fn keys(&mut self, t: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.inner.keys(t)
    }
    fn remove(&mut self, t: &str, k: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        self.inner.remove(t, k, before)
    }
}

const DOC: &str = "---\ntype: note\n---\n# First\n\nThe first note.\n";

/// Reads answer at once from the last published revision while a commit waits for its
/// store (engine.md §8.6), on another thread; the commit then publishes.
#[test]
fn reads_run_while_a_commit_waits_for_its_store() {
    let gate = Arc::new((Mutex::new(true), Condvar::new()));
    let (held, arrived) = mpsc::channel();
    let store = Arc::new(Mutex::new(Gated {
        inner: MemoryStore::new(),
        gate: gate.clone(),
        held,
    }));
    let conn = Arc::new(Options::default().open_store(store, "acme").unwrap());
    conn.write("notes", "first.md", DOC, None).unwrap();
    arrived.recv().unwrap();
    let before = conn.manifest(None).unwrap();
    *lock(&gate.0) = false;
    let writer = {
        let conn = conn.clone();
        std::thread::spawn(move || conn.write("notes", "second.md", DOC, None))
    };
    arrived
        .recv_timeout(Duration::from_secs(10))
        .expect("the commit reaches its store");
    // The commit holds its store step: reads still answer, from the published state.
    assert_eq!(conn.manifest(None).unwrap(), before);
    assert!(conn.current_hash("notes", "second.md").is_none());
    assert!(conn.read().unwrap().concepts() == 1);
    *lock(&gate.0) = true;
    gate.1.notify_all();
    let w = writer.join().unwrap().unwrap();
    assert_eq!(w.id.as_deref(), Some("second"));
    assert_eq!(conn.read().unwrap().concepts(), 2);
}

/// A memory store whose reads of records wait at a gate once `armed`: `held` tells when one
/// arrived.
struct GatedGets {
    inner: MemoryStore,
    armed: Arc<AtomicBool>,
    gate: Arc<(Mutex<bool>, Condvar)>,
    held: mpsc::Sender<()>,
}

impl Store for GatedGets {
    fn read_head(&mut self, t: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.read_head(t)
    }
    fn get_many(&mut self, t: &str, k: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        if self.armed.load(Ordering::Acquire) {
            let _ = self.held.send(());
            let (open, cv) = &*self.gate;
            let mut g = lock(open);
            while !*g {
                g = cv.wait(g).unwrap_or_else(|p| p.into_inner());
            }
        }
        self.inner.get_many(t, k)
    }
    fn put(&mut self, t: &str, k: &Key, b: &[u8]) -> Result<(), StoreError> {
        self.inner.put(t, k, b)
    }
    fn put_many(&mut self, t: &str, r: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        self.inner.put_many(t, r)
    }
    fn swap_head(
        &mut self,
        t: &str,
        e: Option<&[u8]>,
        n: &[u8],
    ) -> langonrock_core::engine::SwapOutcome {
        self.inner.swap_head(t, e, n)
    }
    fn keys(&mut self, t: &str) -> Result<Vec<KeyInfo>, StoreError> {
        self.inner.keys(t)
    }
    fn remove(&mut self, t: &str, k: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        self.inner.remove(t, k, before)
    }
}

/// A `verify` is an exclusive op that reads every record (docs/limits.md: one call cannot
/// stall the others): while it waits for its store, reads answer at once, from the published
/// state. (A commit holding the engine through a long compile is node-mcp's
/// `reads_are_answered_while_a_large_commit_runs`.)
#[test]
fn reads_run_while_a_verify_waits_for_its_store() {
    let armed = Arc::new(AtomicBool::new(false));
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (held, arrived) = mpsc::channel();
    let store = Arc::new(Mutex::new(GatedGets {
        inner: MemoryStore::new(),
        armed: armed.clone(),
        gate: gate.clone(),
        held,
    }));
    let conn = Arc::new(Options::default().open_store(store, "acme").unwrap());
    conn.write("notes", "first.md", DOC, None).unwrap();
    conn.write("notes", "second.md", DOC, None).unwrap();
    let before = conn.manifest(None).unwrap();
    armed.store(true, Ordering::Release);
    let verifier = {
        let conn = conn.clone();
        std::thread::spawn(move || conn.verify())
    };
    arrived
        .recv_timeout(Duration::from_secs(10))
        .expect("the verify reads its store");
    // The verify is stuck in its store step; reads answer, from the published state (on a
    // thread, so a read that waited for the verify fails the test instead of hanging it).
    let (answered, reads) = mpsc::channel();
    let reader = {
        let conn = conn.clone();
        std::thread::spawn(move || {
            let manifest = conn.manifest(None).unwrap();
            let concepts = conn.read().unwrap().concepts();
            let hash = conn.current_hash("notes", "second.md");
            let _ = answered.send((manifest, concepts, hash.is_some()));
        })
    };
    let got = reads.recv_timeout(Duration::from_secs(5));
    assert!(
        !verifier.is_finished(),
        "the verify is still held at the gate"
    );
    armed.store(false, Ordering::Release);
    *lock(&gate.0) = true;
    gate.1.notify_all();
    let (manifest, concepts, known) = got.expect("reads answer while the verify runs");
    assert_eq!((manifest, concepts, known), (before, 2, true));
    reader.join().unwrap();
    let v = verifier.join().unwrap().unwrap();
    assert!(v.ok, "{v:?}");
}

/// Commits from many threads are serialized: every one lands, none conflicts.
#[test]
fn commits_from_many_threads_all_land() {
    let conn = Arc::new(Connection::memory("acme").unwrap());
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let conn = conn.clone();
            std::thread::spawn(move || conn.write("notes", &format!("n{i}.md"), DOC, None))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    assert_eq!(conn.read().unwrap().concepts(), 8);
    let page = conn.history(HistoryRequest::default()).unwrap();
    assert_eq!(page.revisions.len(), 8);
}

/// A read-only connection refuses every change with the one text.
#[test]
fn read_only_refuses_changes() {
    let store = Arc::new(Mutex::new(MemoryStore::new()));
    let w = Options::default()
        .open_store(store.clone(), "acme")
        .unwrap();
    w.write("notes", "first.md", DOC, None).unwrap();
    let ro = Options::default()
        .read_only(true)
        .open_store(store, "acme")
        .unwrap();
    assert_eq!(ro.read().unwrap().concepts(), 1);
    let e = ro.write("notes", "x.md", DOC, None).unwrap_err();
    assert_eq!((e.code(), e.message().as_str()), ("INVALID", READ_ONLY));
    let gc = |dry_run| crate::GcRequest {
        dry_run,
        grace_ms: 0,
        ..crate::GcRequest::default()
    };
    assert_eq!(ro.gc(gc(false)).unwrap_err().message(), READ_ONLY);
    assert!(ro.gc(gc(true)).unwrap().dry_run);
}
