//! The engine as the benchmark drives it: over the core's memory store ([`MemHost`]) or
//! over the native files store through the binary's own connection type
//! (`langonrock::Connection`), behind one trait ([`Tenant`]).

use langonrock::Connection as Conn;
use langonrock_core::compile::SourceDoc;
use langonrock_core::engine::{
    run, Engine, HistoryPage, HistoryRequest, ImportRequest, ImportResult, MemoryStore, Op,
    RestoreRequest, RevisionResult, Served, Transaction, WriteResult,
};
use langonrock_core::Error;
use std::sync::Arc;

/// The tenant every benchmark uses.
pub const TENANT: &str = "bench";

/// A commit time `n` milliseconds after 2026-09-21T00:00:00.000Z (within the day).
pub fn commit_time(n: u64) -> String {
    let n = n % 86_400_000;
    format!(
        "2026-09-21T{:02}:{:02}:{:02}.{:03}Z",
        n / 3_600_000,
        (n / 60_000) % 60,
        (n / 1000) % 60,
        n % 1000
    )
}

/// The operations the latency protocol needs, over either store.
pub trait Tenant {
    /// The served state, current with the store's head.
    fn served(&mut self) -> Result<Arc<Served>, Error>;
    /// `write`.
    fn write(
        &mut self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error>;
    /// `transact`.
    fn transact(&mut self, txn: Transaction) -> Result<RevisionResult, Error>;
    /// `history`.
    fn history(&mut self, req: HistoryRequest) -> Result<HistoryPage, Error>;
    /// `restore`.
    fn restore(&mut self, req: RestoreRequest) -> Result<RevisionResult, Error>;
}

/// An engine over a [`MemoryStore`], with a logical commit clock.
pub struct MemHost {
    /// The store.
    pub store: MemoryStore,
    /// The engine.
    pub engine: Engine,
    commits: u64,
}

impl MemHost {
    /// An open, empty tenant.
    pub fn new() -> Result<MemHost, Error> {
        let mut store = MemoryStore::new();
        let mut engine = Engine::new(TENANT)?;
        let op = engine.open();
        run(&mut engine, &mut store, op)?;
        Ok(MemHost {
            store,
            engine,
            commits: 0,
        })
    }

    /// Runs an op against the store.
    pub fn run<T: 'static>(&mut self, op: Op<T>) -> Result<T, Error> {
        run(&mut self.engine, &mut self.store, op)
    }

    fn at(&mut self) -> String {
        self.commits += 1;
        commit_time(self.commits * 1000)
    }

    /// Imports `documents` as one revision (cli.md §4), as the CLI's `import` does.
    pub fn import(&mut self, documents: Vec<SourceDoc>) -> Result<ImportResult, Error> {
        let at = self.at();
        let op = self.engine.import(
            ImportRequest {
                location: "/bench/reference-corpus".into(),
                documents,
                strict: false,
            },
            &at,
        );
        self.run(op)
    }

    /// A new engine opened cold from this host's store: what a fresh process pays.
    pub fn open_cold(&mut self) -> Result<Engine, Error> {
        let mut e = Engine::new(TENANT)?;
        let op = e.open();
        run(&mut e, &mut self.store, op)?;
        Ok(e)
    }
}

impl Tenant for MemHost {
    fn served(&mut self) -> Result<Arc<Served>, Error> {
        self.engine.read()
    }

    fn write(
        &mut self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        let at = self.at();
        let op = self.engine.write(bundle, path, content, replaces, &at);
        self.run(op)
    }

    fn transact(&mut self, txn: Transaction) -> Result<RevisionResult, Error> {
        let at = self.at();
        let op = self.engine.transact(txn, &at);
        self.run(op)
    }

    fn history(&mut self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        let op = self.engine.history(req);
        self.run(op)
    }

    fn restore(&mut self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        let at = self.at();
        let op = self.engine.restore(req, &at);
        self.run(op)
    }
}

impl Tenant for Conn {
    fn served(&mut self) -> Result<Arc<Served>, Error> {
        self.read()
    }

    fn write(
        &mut self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        Conn::write(self, bundle, path, content, replaces)
    }

    fn transact(&mut self, txn: Transaction) -> Result<RevisionResult, Error> {
        Conn::transact(self, txn)
    }

    fn history(&mut self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        Conn::history(self, req)
    }

    fn restore(&mut self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        Conn::restore(self, req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_times_are_valid_and_increase() {
        assert_eq!(commit_time(0), "2026-09-21T00:00:00.000Z");
        assert_eq!(commit_time(3_723_004), "2026-09-21T01:02:03.004Z");
    }

    #[test]
    fn memory_host_imports_writes_and_reopens() {
        let mut h = MemHost::new().unwrap();
        let r = h
            .import(vec![SourceDoc::new(
                "sales",
                "orders.md",
                "---\ntype: table\n---\n# Orders\n\nOne row per order.\n",
            )])
            .unwrap();
        assert_eq!(r.concepts, 1);
        let hash = h
            .served()
            .unwrap()
            .source_hash("sales", "orders.md")
            .unwrap();
        let w = h
            .write("sales", "orders.md", "# Orders\n\nChanged.\n", Some(&hash))
            .unwrap();
        assert_eq!(w.concepts, 1);
        let cold = h.open_cold().unwrap();
        assert_eq!(
            cold.read().unwrap().snapshot_id(),
            h.served().unwrap().snapshot_id()
        );
        let page = h.history(HistoryRequest::default()).unwrap();
        assert_eq!(page.revisions.len(), 2);
    }
}
