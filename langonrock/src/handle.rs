//! [`Connection`]: one type for every DSN. It holds either a local connection (the engine
//! over a store, [`crate::connection::Connection`]) or, with the `remote` feature, a
//! connection to a `langonrock serve` ([`crate::remote::Remote`], docs/remote.md), and
//! gives both the same operations with the same results and errors.
//!
//! What only an engine on this machine can do (the served state itself, `import`, `gc`,
//! `verify`, `repair`) answers `None` or `INVALID` `<op> is not available over a remote
//! connection` on a remote connection.

use crate::clock::Clock;
use crate::connection::Connection as Local;
use langonrock_core::engine::{
    DeleteResult, GcResult, HistoryPage, HistoryRequest, ImportRequest, ImportResult, OpenResult,
    RepairRequest, RepairResult, RestoreRequest, RevisionResult, Served, SourceContent,
    SourceEntry, Transaction, VerifyResult, WriteResult,
};
use langonrock_core::http_api::OwnedSlice;
use langonrock_core::read::GetOptions;
use langonrock_core::search::SearchOptions;
use langonrock_core::snapshot::Snapshot;
use langonrock_core::tools::{self, Reply, ToolCall};
use langonrock_core::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A connection to one tenant, local or remote. `Send + Sync`; every method takes `&self`.
pub struct Connection {
    kind: Kind,
}

enum Kind {
    Local(Box<Local>),
    #[cfg(feature = "remote")]
    Remote(Box<RemoteConn>),
}

/// A remote connection and what a local one keeps beside its engine.
#[cfg(feature = "remote")]
struct RemoteConn {
    remote: crate::remote::Remote,
    read_only: bool,
    clock: Arc<dyn Clock>,
    /// Held by each change, so this connection's changes reach the server one at a time,
    /// in call order, as a local connection's commits do.
    commits: std::sync::Mutex<()>,
}

#[cfg(feature = "remote")]
impl RemoteConn {
    /// The remote side for a change: refused on a read-only connection, else with the
    /// commit lock held.
    fn change(&self) -> Result<(&crate::remote::Remote, std::sync::MutexGuard<'_, ()>), Error> {
        if self.read_only {
            return Err(Error::Invalid(crate::READ_ONLY.into()));
        }
        let guard = self.commits.lock().unwrap_or_else(|p| p.into_inner());
        Ok((&self.remote, guard))
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Local(c) => f
                .debug_struct("Connection")
                .field("tenant", &c.tenant())
                .field("data", &c.data())
                .finish_non_exhaustive(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => f
                .debug_struct("Connection")
                .field("tenant", &r.remote.tenant())
                .field("server", &r.remote.server())
                .finish_non_exhaustive(),
        }
    }
}

impl From<Local> for Connection {
    fn from(c: Local) -> Connection {
        Connection {
            kind: Kind::Local(Box::new(c)),
        }
    }
}

/// `INVALID` `<op> is not available over a remote connection`.
pub fn not_remote(op: &str) -> Error {
    Error::Invalid(format!("{op} is not available over a remote connection"))
}

impl Connection {
    /// Opens `tenant` under the data root `data` (see [`crate::Options`] for read-only and
    /// unloaded connections). A tenant without a head opens empty; nothing is created. A
    /// corrupt store fails closed with its `database corruption: …` error.
    #[cfg(feature = "files")]
    pub fn open(data: &Path, tenant: &str, read_only: bool) -> Result<Connection, Error> {
        Local::open(data, tenant, read_only).map(Connection::from)
    }

    /// A connection to `tenant` in a fresh memory store (the core's strict store): nothing
    /// outlives it. For tests and examples.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("sales", "orders.md", "---\ntype: table\n---\nOrders.\n", None)?;
    /// assert!(conn.manifest(None)?.contains("orders\tsales\ttable"));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn memory(tenant: &str) -> Result<Connection, Error> {
        Local::memory(tenant).map(Connection::from)
    }

    /// A connection to the server a remote DSN names; nothing is sent until the first call.
    #[cfg(feature = "remote")]
    pub(crate) fn remote(
        dsn: &langonrock_core::dsn::RemoteDsn,
        read_only: bool,
        limits: crate::remote::http::Limits,
        clock: Arc<dyn Clock>,
    ) -> Result<Connection, Error> {
        Ok(Connection {
            kind: Kind::Remote(Box::new(RemoteConn {
                remote: crate::remote::Remote::open_with(dsn, limits)?,
                read_only,
                clock,
                commits: std::sync::Mutex::new(()),
            })),
        })
    }

    /// The local connection inside, when this is one.
    pub fn local(&self) -> Option<&Local> {
        match &self.kind {
            Kind::Local(c) => Some(c),
            #[cfg(feature = "remote")]
            Kind::Remote(_) => None,
        }
    }

    /// Whether this connection talks to a server.
    pub fn is_remote(&self) -> bool {
        self.local().is_none()
    }

    /// The local connection, or `INVALID` `<op> is not available over a remote connection`.
    fn need_local(&self, op: &str) -> Result<&Local, Error> {
        self.local().ok_or_else(|| not_remote(op))
    }

    /// The tenant id, lower-cased. A remote DSN without `tenant` (the server takes it from
    /// the token) gives the empty string.
    pub fn tenant(&self) -> &str {
        match &self.kind {
            Kind::Local(c) => c.tenant(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.tenant().unwrap_or(""),
        }
    }

    /// Whether the connection never writes.
    pub fn is_read_only(&self) -> bool {
        match &self.kind {
            Kind::Local(c) => c.is_read_only(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.read_only,
        }
    }

    /// The data root of a files connection (`None` in memory and remotely).
    pub fn data(&self) -> Option<&Path> {
        self.local()?.data()
    }

    /// The tenant's directory of a files connection (`None` in memory and remotely).
    pub fn dir(&self) -> Option<PathBuf> {
        self.local()?.dir()
    }

    /// The server a remote connection talks to (its socket path or origin), else `None`.
    pub fn server(&self) -> Option<&str> {
        match &self.kind {
            Kind::Local(_) => None,
            #[cfg(feature = "remote")]
            Kind::Remote(r) => Some(r.remote.server()),
        }
    }

    /// The connection's clock (a remote connection's reads use the server's date).
    pub fn clock(&self) -> &dyn Clock {
        match &self.kind {
            Kind::Local(c) => c.clock(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => &*r.clock,
        }
    }

    /// Whether the tenant has a head (after the last refresh). A remote connection does not
    /// know without asking and answers `true`.
    pub fn has_head(&self) -> bool {
        self.local().is_none_or(Local::has_head)
    }

    /// The served state as last published (no refresh); `None` remotely.
    pub fn served(&self) -> Option<Arc<Served>> {
        self.local()?.served()
    }

    /// Whether the served state was decoded from a derived record.
    pub fn served_from_derived(&self) -> bool {
        self.local().is_some_and(Local::served_from_derived)
    }

    /// Puts the pending derived record, if any, and waits for it (a no-op remotely).
    pub fn finish_derived(&self) {
        if let Some(c) = self.local() {
            c.finish_derived();
        }
    }

    /// Reads the store's head and loads it when it moved (local only).
    pub fn refresh(&self) -> Result<OpenResult, Error> {
        self.need_local("refresh")?.refresh()
    }

    /// The served state after a refresh (local only).
    pub fn read(&self) -> Result<Arc<Served>, Error> {
        self.need_local("reading the served state")?.read()
    }

    /// Runs a read over the served state after a refresh (local only); see
    /// [`Local::with_read`].
    pub fn with_read<T: 'static>(
        &self,
        f: impl FnMut(&Served) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.need_local("reading the served state")?.with_read(f)
    }

    /// Verifies the source blobs behind a source read (local; a server does it itself).
    pub fn check_sources(&self, ids: Option<Vec<String>>) -> Result<(), Error> {
        match self.local() {
            Some(c) => c.check_sources(ids),
            None => Ok(()),
        }
    }

    // -----------------------------------------------------------------------------------
    // Reads

    /// The manifest TSV of the tenant or of one bundle (read.md §2), for today (remotely:
    /// the server's today).
    pub fn manifest(&self, bundle: Option<&str>) -> Result<String, Error> {
        match &self.kind {
            Kind::Local(c) => c.manifest(bundle),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.manifest(bundle),
        }
    }

    /// `snapshot()` (read.md §5): `{snapshot, concepts}`.
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        match &self.kind {
            Kind::Local(c) => Ok(c.read()?.snapshot()),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.snapshot(),
        }
    }

    /// `get` (read.md §3): the found ids and their slices, in result order.
    pub fn get<S: AsRef<str>>(
        &self,
        ids: &[S],
        opts: &GetOptions,
    ) -> Result<Vec<(String, OwnedSlice)>, Error> {
        match &self.kind {
            Kind::Local(c) => {
                if opts.source {
                    c.read()?;
                    c.check_sources(Some(ids.iter().map(|i| i.as_ref().to_string()).collect()))?;
                }
                c.with_read(|s| {
                    Ok(s.get(ids, opts)?
                        .slices()
                        .map(|(id, slice)| (id.to_string(), OwnedSlice::from(slice)))
                        .collect())
                })
            }
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.get(ids, opts),
        }
    }

    /// The MCP `get` tool's text for these options (read.md §4): the found slices, the
    /// `no section` frames and the `@@ not found` block, as the local renderer writes them.
    /// Remotely a second request tells a concept without the section from no concept
    /// (`langonrock_core::http_api::get_probe`).
    pub fn get_mcp<S: AsRef<str>>(&self, ids: &[S], opts: &GetOptions) -> Result<String, Error> {
        match &self.kind {
            Kind::Local(c) => {
                if opts.source {
                    c.read()?;
                    c.check_sources(Some(ids.iter().map(|i| i.as_ref().to_string()).collect()))?;
                }
                c.with_read(|s| Ok(langonrock_core::read::render_mcp(&s.get(ids, opts)?)))
            }
            #[cfg(feature = "remote")]
            Kind::Remote(r) => {
                use langonrock_core::http_api::{get_probe, RemoteGet};
                let found = r.remote.get(ids, opts)?;
                let probe = match get_probe(ids, opts, &found) {
                    Some((missing, o)) => Some(r.remote.get(&missing, &o)?),
                    None => None,
                };
                let got = RemoteGet::new(ids, opts, found, probe);
                Ok(langonrock_core::read::render_mcp(&got.result()))
            }
        }
    }

    /// A search (search.md): the search TSV for today.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<String, Error> {
        match &self.kind {
            Kind::Local(c) => c.search(query, opts),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.search(query, opts),
        }
    }

    /// `listSource()` (read.md §6.1).
    pub fn list_source(&self) -> Result<Vec<SourceEntry>, Error> {
        match &self.kind {
            Kind::Local(c) => Ok(c.read()?.list_source()),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.list_source(),
        }
    }

    /// One document's exact text and hash (read.md §6.2).
    pub fn read_source(&self, bundle: &str, path: &str) -> Result<Option<SourceContent>, Error> {
        match &self.kind {
            Kind::Local(c) => c.read_source(bundle, path),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.read_source(bundle, path),
        }
    }

    /// A document's current hash, or `None` when it does not exist or the lookup fails
    /// (agent.md §6.3.2: lookup errors are ignored).
    pub fn current_hash(&self, bundle: &str, path: &str) -> Option<String> {
        match &self.kind {
            Kind::Local(c) => c.current_hash(bundle, path),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => Some(r.remote.read_source(bundle, path).ok()??.hash),
        }
    }

    /// The stored name of a bundle (bundles match ignoring ASCII case), or `None` when the
    /// tenant has no such bundle or the lookup fails.
    pub fn stored_bundle(&self, bundle: &str) -> Option<String> {
        match &self.kind {
            Kind::Local(c) => c
                .read()
                .ok()?
                .model()
                .find_bundle(bundle)
                .map(str::to_string),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => {
                langonrock_core::http_api::stored_bundle_in(&r.remote.manifest(None).ok()?, bundle)
            }
        }
    }

    /// `history` (engine.md §6).
    pub fn history(&self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        match &self.kind {
            Kind::Local(c) => c.history(req),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.history(&req),
        }
    }

    // -----------------------------------------------------------------------------------
    // Changes

    /// `write` (engine.md §4.1).
    pub fn write(
        &self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        match &self.kind {
            Kind::Local(c) => c.write(bundle, path, content, replaces),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.write(bundle, path, content, replaces),
        }
    }

    /// `delete` (engine.md §4.2).
    pub fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult, Error> {
        match &self.kind {
            Kind::Local(c) => c.delete(bundle, path, replaces),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.delete(bundle, path, replaces),
        }
    }

    /// `deleteBundle` (engine.md §4.4).
    pub fn delete_bundle(&self, bundle: &str) -> Result<RevisionResult, Error> {
        match &self.kind {
            Kind::Local(c) => c.delete_bundle(bundle),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.delete_bundle(bundle),
        }
    }

    /// `transact` (engine.md §5).
    pub fn transact(&self, txn: Transaction) -> Result<RevisionResult, Error> {
        match &self.kind {
            Kind::Local(c) => c.transact(txn),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r
                .change()?
                .0
                .transact(&langonrock_core::http_api::transaction_json(&txn)),
        }
    }

    /// `restore` (engine.md §7).
    pub fn restore(&self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        match &self.kind {
            Kind::Local(c) => c.restore(req),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.restore(&req),
        }
    }

    // -----------------------------------------------------------------------------------
    // Tools

    /// A tool call as the MCP server answers it (agent.md §6): the arguments checked
    /// against the tool's schema, then the core's tool op over this connection.
    pub fn call_tool(&self, name: &str, args: Option<&serde_json::Value>) -> Reply {
        match tools::parse_call(name, args) {
            Ok(call) => self.tool(call),
            Err(m) => Reply::error(m),
        }
    }

    /// A validated tool call, run by the core's tool op (`ToolOp`): locally under the
    /// connection policy, remotely with each need answered by the server's routes, so the
    /// replies are the same texts.
    pub fn tool(&self, call: ToolCall) -> Reply {
        match &self.kind {
            Kind::Local(c) => c.tool(call),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => {
                use langonrock_core::http_api::{RemoteStep, RemoteTool};
                let mut op = RemoteTool::new(call, r.read_only, r.remote.prefix());
                let _commit = op
                    .commits()
                    .then(|| r.commits.lock().unwrap_or_else(|p| p.into_inner()));
                let mut last: Option<Result<crate::remote::http::Answer, Error>> = None;
                loop {
                    let response = last
                        .as_ref()
                        .map(|a| a.as_ref().map(|a| a.response()).map_err(Clone::clone));
                    match op.resume(response) {
                        RemoteStep::Done(reply) => return reply,
                        RemoteStep::Send(request) => last = Some(r.remote.send(request)),
                    }
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Local only

    /// `import` (cli.md §4); see [`Local::import`].
    pub fn import(
        &self,
        req: ImportRequest,
        unchanged: &mut dyn FnMut() -> Option<String>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ImportResult, Error> {
        self.need_local("import")?.import(req, unchanged, progress)
    }

    /// `gc` (engine.md §10) at the current time.
    pub fn gc(&self, keep: i64, grace_ms: u64, dry_run: bool) -> Result<GcResult, Error> {
        self.need_local("gc")?.gc(keep, grace_ms, dry_run)
    }

    /// `verify` (engine.md §11).
    pub fn verify(&self) -> Result<VerifyResult, Error> {
        self.need_local("verify")?.verify()
    }

    /// `repair` (engine.md §11.4).
    pub fn repair(&self, req: RepairRequest) -> Result<RepairResult, Error> {
        self.need_local("repair")?.repair(req)
    }
}
