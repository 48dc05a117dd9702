//! [`Connection`]: one type for every DSN. It holds either a local connection (the engine
//! over a store: files, PostgreSQL, memory) or, with the `remote` feature, a connection to a
//! `langonrock serve` ([`crate::remote::Remote`], docs/remote.md), and gives both the same
//! operations with the same results and errors.
//!
//! What only an engine on this machine can do (the served state itself, `import`, `gc`,
//! `verify`, `repair`) answers `None` or `INVALID` `<op> is not available over a remote
//! connection` on a remote connection.

use crate::clock::Clock;
use crate::connection::Connection as Local;
use langonrock_core::connection::CLOSED;
use langonrock_core::engine::{
    DeleteResult, GcRequest, GcResult, HistoryPage, HistoryRequest, ImportRequest, ImportResult,
    OpenResult, RepairRequest, RepairResult, RestoreRequest, RevisionResult, Served, SourceContent,
    SourceEntry, Transaction, VerifyResult, WriteResult,
};
use langonrock_core::read::{GetOptions, OwnedSlice};
use langonrock_core::search::SearchOptions;
use langonrock_core::snapshot::Snapshot;
use langonrock_core::tools::{self, Reply, ToolCall};
use langonrock_core::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A connection to one tenant, for every DSN: the files store, PostgreSQL, memory, or a
/// `langonrock serve` over a socket or HTTP(S). Open one with [`crate::open`] (or
/// [`crate::Options`], [`Connection::memory`]).
///
/// `Send + Sync`, and every method takes `&self`: share one connection per tenant between
/// threads (`Arc<Connection>`). Reads run concurrently, also while a commit is in flight
/// (they answer from the last published revision); commits are serialized, and each read
/// first refreshes to the store's head unless a commit is in flight, so another process's
/// commits are seen.
///
/// The operations are the JS package's (snake_case), with the same results and the same
/// errors; the result types are the core's and serialize to the spec's JSON.
pub struct Connection {
    kind: Kind,
    /// Set by [`Connection::close`]: every later call is refused with `connection is closed`.
    closed: AtomicBool,
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
        Connection::of(Kind::Local(Box::new(c)))
    }
}

/// `INVALID` `<op> is not available over a remote connection`: the refusal of what only a
/// local connection can do.
///
/// ```
/// let e = langonrock::not_remote("gc");
/// assert_eq!(e.code(), "INVALID");
/// assert_eq!(e.message(), "gc is not available over a remote connection");
/// ```
pub fn not_remote(op: &str) -> Error {
    Error::Invalid(format!("{op} is not available over a remote connection"))
}

fn closed() -> Error {
    Error::Invalid(CLOSED.into())
}

impl Connection {
    fn of(kind: Kind) -> Connection {
        Connection {
            kind,
            closed: AtomicBool::new(false),
        }
    }

    /// The connection inside, or `connection is closed` after [`Connection::close`].
    fn live(&self) -> Result<&Kind, Error> {
        if self.is_closed() {
            return Err(closed());
        }
        Ok(&self.kind)
    }

    /// Opens `tenant` under the data root `data` (see [`crate::Options`] for read-only and
    /// unloaded connections). A tenant without a head opens empty; nothing is created. A
    /// corrupt store fails closed with its `database corruption: …` error.
    ///
    /// ```no_run
    /// let conn = langonrock::Connection::open("/srv/kb".as_ref(), "acme", true)?;
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    #[cfg(feature = "files")]
    pub fn open(data: &Path, tenant: &str, read_only: bool) -> Result<Connection, Error> {
        crate::Options::default()
            .read_only(read_only)
            .open_files(data, tenant)
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
        Ok(Connection::of(Kind::Remote(Box::new(RemoteConn {
            remote: crate::remote::Remote::open_with(dsn, limits)?,
            read_only,
            clock,
            commits: std::sync::Mutex::new(()),
        }))))
    }

    /// The local connection inside, when this is one.
    pub(crate) fn local(&self) -> Option<&Local> {
        match &self.kind {
            Kind::Local(c) => Some(c),
            #[cfg(feature = "remote")]
            Kind::Remote(_) => None,
        }
    }

    /// Whether this connection talks to a server (`okf+unix:`, `okf+http(s):`).
    pub fn is_remote(&self) -> bool {
        self.local().is_none()
    }

    /// The local connection, or `INVALID` `<op> is not available over a remote connection`
    /// (or `connection is closed`).
    fn need_local(&self, op: &str) -> Result<&Local, Error> {
        self.live()?;
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

    /// Whether the connection never writes ([`crate::Options::read_only`]).
    pub fn is_read_only(&self) -> bool {
        match &self.kind {
            Kind::Local(c) => c.is_read_only(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.read_only,
        }
    }

    /// The data root of a files connection (`None` in memory, on PostgreSQL and remotely).
    pub fn data(&self) -> Option<&Path> {
        self.local()?.data()
    }

    /// The tenant's directory of a files connection (`None` otherwise).
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

    /// The served state as last published (no refresh); `None` remotely and once closed.
    pub fn served(&self) -> Option<Arc<Served>> {
        self.live().ok()?;
        self.local()?.served()
    }

    /// Over a shared PostgreSQL database: whether the head was read under half a second ago
    /// with no change notified since, so a read may be answered from
    /// [`Connection::served`] without a refresh (docs/postgres.md). `false` for other
    /// stores, remotely and once closed.
    pub fn head_is_fresh(&self) -> bool {
        self.live().is_ok() && self.local().is_some_and(Local::head_is_fresh)
    }

    /// Whether an exclusive operation of this connection (a commit, gc, verify, repair) is
    /// running, so a read now would answer from [`Connection::served`] without a refresh.
    /// `false` remotely and once closed.
    pub fn is_busy(&self) -> bool {
        self.live().is_ok() && self.local().is_some_and(Local::is_busy)
    }

    /// Whether the served state was decoded from a derived record.
    pub fn served_from_derived(&self) -> bool {
        self.local().is_some_and(Local::served_from_derived)
    }

    /// Whether [`Connection::warm`] would ready anything: the served state was decoded from
    /// a derived record, or some of its texts are still unchecked. `false` remotely.
    pub fn warm_pays(&self) -> bool {
        self.local().is_some_and(Local::warm_pays)
    }

    /// Puts the pending derived record, if any, and waits for it (a no-op remotely). A
    /// long-lived host calls it when a session ends; [`Connection::close`] and dropping
    /// the connection do it too.
    pub fn finish_derived(&self) {
        if let Some(c) = self.local() {
            c.finish_derived();
        }
    }

    /// For a host that serves for longer than one command (`serve`, `mcp`): over a shared
    /// PostgreSQL database, follow its change feed, so another replica's commit is seen at
    /// once rather than within half a second (the head poll). Nothing to do for
    /// other stores (a remote server follows its own store).
    pub fn follow_changes(&self) {
        if let Some(c) = self.local() {
            c.follow_changes();
        }
    }

    /// Closes the connection: every later call is refused with `INVALID` `connection is
    /// closed` (tool calls answer it as an error reply), a commit in flight is waited for,
    /// and a pending derived record is written. Closing twice is a no-op; dropping a
    /// connection closes it too.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.close();
    /// let e = conn.manifest(None).unwrap_err();
    /// assert_eq!((e.code(), e.message().as_str()), ("INVALID", "connection is closed"));
    /// assert!(conn.call_tool("manifest", None).is_error);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        match &self.kind {
            Kind::Local(c) => c.close(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => drop(r.commits.lock().unwrap_or_else(|p| p.into_inner())),
        }
    }

    /// Whether [`Connection::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Reads the store's head and loads it when it moved (local only; every read does this
    /// itself).
    pub fn refresh(&self) -> Result<OpenResult, Error> {
        self.need_local("refresh")?.refresh()
    }

    /// The served state after a refresh (local only): the compiled model, the search index
    /// and the sources, for reads the library has no call for.
    pub fn read(&self) -> Result<Arc<Served>, Error> {
        self.need_local("reading the served state")?.read()
    }

    /// Runs a read over the served state after a refresh (local only). A read that met a
    /// text of a derived record that does not match its source hash runs once more after a
    /// compile, so a bad derived record never fails a read.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let n = conn.with_read(|s| Ok(s.concepts()))?;
    /// assert_eq!(n, 0);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn with_read<T: 'static>(
        &self,
        f: impl FnMut(&Served) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.need_local("reading the served state")?.with_read(f)
    }

    /// Verifies the source blobs behind a source read (local; a server does it itself).
    pub fn check_sources(&self, ids: Option<Vec<String>>) -> Result<(), Error> {
        match self.live()? {
            Kind::Local(c) => c.check_sources(ids),
            #[cfg(feature = "remote")]
            Kind::Remote(_) => Ok(()),
        }
    }

    // -----------------------------------------------------------------------------------
    // Reads

    /// `manifest(bundle?)`: the manifest TSV of the tenant, or of one bundle (any case; an
    /// unknown one is `NOT_FOUND`), for today (remotely: the server's today). One row per
    /// concept: `id`, `bundle`, `kind`, `status`, `grain`, `summary`, `links`.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("sales", "orders.md", "---\ntype: table\n---\nOrders placed online.\n", None)?;
    /// assert_eq!(
    ///     conn.manifest(Some("SALES"))?,
    ///     "# tenant: acme\n# bundles: sales\n\
    ///      id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n\
    ///      orders\tsales\ttable\t-\t-\tOrders placed online.\t-\n"
    /// );
    /// assert_eq!(conn.manifest(Some("nope")).unwrap_err().code(), "NOT_FOUND");
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn manifest(&self, bundle: Option<&str>) -> Result<String, Error> {
        match self.live()? {
            Kind::Local(c) => c.manifest(bundle),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.manifest(bundle),
        }
    }

    /// The advice sentence ([`Connection::advice`]): a local tenant's measured row by row,
    /// a remote one's from the manifest it sends.
    pub(crate) fn advice_sentence(&self) -> Option<String> {
        match self.live().ok()? {
            Kind::Local(c) => c.advice().ok(),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r
                .remote
                .manifest(None)
                .ok()
                .map(|m| langonrock_core::tools::advice(&m)),
        }
    }

    /// `snapshot()`: the snapshot id (equal ids mean equal reads) and the concept count.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let before = conn.snapshot()?;
    /// conn.write("notes", "a.md", "---\ntype: note\n---\nA.\n", None)?;
    /// let after = conn.snapshot()?;
    /// assert_ne!(before.snapshot, after.snapshot);
    /// assert_eq!((before.concepts, after.concepts), (0, 1));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        match self.live()? {
            Kind::Local(c) => Ok(c.read()?.snapshot()),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.snapshot(),
        }
    }

    /// `get(ids, options)`: a batch of slices, one per found id, in result order (ids the
    /// tenant lacks are left out; a repeated id comes once). Each slice is a part of the
    /// concept's body — or of one `section`, or with `source` of the whole stored text — from
    /// `offset` for `limit` UTF-16 units, or around the first match of `find`; `start`,
    /// `end` and `total` say where it lies.
    ///
    /// ```
    /// use langonrock::GetOptions;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("sales", "orders.md", "---\ntype: table\n---\n# Orders\n\nOne row per order line.\n\n## Schema\n\n- id\n", None)?;
    /// conn.write("sales", "customers.md", "---\ntype: table\n---\nPeople who order.\n", None)?;
    /// let got = conn.get(&["orders", "nope", "customers"], &GetOptions::default())?;
    /// assert_eq!(got.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["orders", "customers"]);
    /// assert_eq!(got[1].1.text, "People who order.\n");
    /// let schema = GetOptions { section: Some("schema".into()), ..GetOptions::default() };
    /// assert_eq!(conn.get(&["orders"], &schema)?[0].1.text, "## Schema\n\n- id\n");
    /// let window = GetOptions { find: Some("order line".into()), limit: Some(20), ..GetOptions::default() };
    /// let (_, slice) = &conn.get(&["orders"], &window)?[0];
    /// assert_eq!(slice.match_count, Some(1));
    /// assert!(slice.text.contains("order line"));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn get<S: AsRef<str>>(
        &self,
        ids: &[S],
        opts: &GetOptions,
    ) -> Result<Vec<(String, OwnedSlice)>, Error> {
        match self.live()? {
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
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("notes", "a.md", "---\ntype: note\n---\nA.\n", None)?;
    /// let text = conn.get_mcp(&["a", "b"], &Default::default())?;
    /// assert_eq!(text, "@@ a\nA.\n\n@@ not found\nb");
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn get_mcp<S: AsRef<str>>(&self, ids: &[S], opts: &GetOptions) -> Result<String, Error> {
        match self.live()? {
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

    /// `search(query, options)`: the search TSV for today — the manifest's columns plus
    /// `pos`, where the query's terms meet in the body, ready to pass as `get`'s `offset` —
    /// direct hits ranked by BM25, then linked concepts one hop away (`expand`).
    ///
    /// ```
    /// use langonrock::SearchOptions;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("ops", "runbook.md", "---\ntype: runbook\n---\n# Runbook\n\nReplay the export when the orders load fails.\n", None)?;
    /// let tsv = conn.search("replay export", &SearchOptions::default())?;
    /// assert!(tsv.contains("# hits: 1 direct, 0 linked\n"));
    /// let row = tsv.lines().last().unwrap();
    /// assert!(row.starts_with("runbook\tops\trunbook\t"));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<String, Error> {
        match self.live()? {
            Kind::Local(c) => c.search(query, opts),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.search(query, opts),
        }
    }

    /// `list_source()`: every stored document (navigation documents included) with its
    /// hash and size, sorted by bundle and path.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("sales", "index.md", "# Sales\n", None)?;
    /// let docs = conn.list_source()?;
    /// assert_eq!((docs[0].bundle.as_str(), docs[0].path.as_str(), docs[0].bytes), ("sales", "index.md", 8));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn list_source(&self) -> Result<Vec<SourceEntry>, Error> {
        match self.live()? {
            Kind::Local(c) => Ok(c.read()?.list_source()),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.list_source(),
        }
    }

    /// `read_source(bundle, path)`: one document's exact stored text and hash, or `None`
    /// when there is no such document.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let w = conn.write("sales", "orders.md", "Orders.\r\n", None)?;
    /// let doc = conn.read_source("Sales", "orders.md")?.unwrap();
    /// assert_eq!((doc.content.as_str(), doc.hash), ("Orders.\r\n", w.hash));
    /// assert!(conn.read_source("sales", "nope.md")?.is_none());
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn read_source(&self, bundle: &str, path: &str) -> Result<Option<SourceContent>, Error> {
        match self.live()? {
            Kind::Local(c) => c.read_source(bundle, path),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.read_source(bundle, path),
        }
    }

    /// A document's current hash, or `None` when it does not exist or the lookup fails
    /// (agent.md §6.3.2: lookup errors are ignored): what a refused change retries with.
    pub fn current_hash(&self, bundle: &str, path: &str) -> Option<String> {
        match self.live().ok()? {
            Kind::Local(c) => c.current_hash(bundle, path),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => Some(r.remote.read_source(bundle, path).ok()??.hash),
        }
    }

    /// The stored name of a bundle (bundles match ignoring ASCII case), or `None` when the
    /// tenant has no such bundle or the lookup fails.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("Sales", "orders.md", "Orders.\n", None)?;
    /// assert_eq!(conn.stored_bundle("SALES").as_deref(), Some("Sales"));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn stored_bundle(&self, bundle: &str) -> Option<String> {
        match self.live().ok()? {
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

    /// `history({before?, limit?})`: a page of committed revisions, newest first, with the
    /// cursor of the next page (`next`) while older retained revisions follow.
    ///
    /// ```
    /// use langonrock::HistoryRequest;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let first = conn.write("notes", "a.md", "A.\n", None)?;
    /// let second = conn.write("notes", "b.md", "B.\n", None)?;
    /// let page = conn.history(HistoryRequest { before: None, limit: Some(1) })?;
    /// assert_eq!(page.revisions[0].revision, second.revision);
    /// let older = conn.history(HistoryRequest { before: page.next, limit: None })?;
    /// assert_eq!(older.revisions[0].revision, first.revision);
    /// assert_eq!(older.revisions[0].parent, None);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn history(&self, req: HistoryRequest) -> Result<HistoryPage, Error> {
        match self.live()? {
            Kind::Local(c) => c.history(req),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.remote.history(&req),
        }
    }

    // -----------------------------------------------------------------------------------
    // Changes

    /// `write(bundle, path, content, replaces?)`: creates or replaces one document, as one
    /// commit. Without `replaces` the document must not exist; with it, `replaces` must be
    /// its current hash — else `CONFLICT` with `reason` `exists`, `missing` or `changed`,
    /// and nothing changes. The result carries the new hash, revision, snapshot and the
    /// document's diagnostics.
    ///
    /// ```
    /// use langonrock::{ConflictReason, Error};
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let v1 = conn.write("notes", "a.md", "---\ntype: note\n---\nFirst.\n", None)?;
    /// assert_eq!(v1.id.as_deref(), Some("a"));
    /// // Writing again without the hash is refused, and nothing changes.
    /// match conn.write("notes", "a.md", "---\ntype: note\n---\nSecond.\n", None) {
    ///     Err(Error::Conflict { reason: Some(ConflictReason::Exists), .. }) => {}
    ///     other => panic!("{other:?}"),
    /// }
    /// let v2 = conn.write("notes", "a.md", "---\ntype: note\n---\nSecond.\n", Some(&v1.hash))?;
    /// assert_ne!(v2.hash, v1.hash);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn write(
        &self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        match self.live()? {
            Kind::Local(c) => c.write(bundle, path, content, replaces),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.write(bundle, path, content, replaces),
        }
    }

    /// `delete(bundle, path, replaces)`: removes one document whose current hash is
    /// `replaces` (required), as one commit.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let w = conn.write("notes", "a.md", "A.\n", None)?;
    /// assert_eq!(conn.delete("notes", "a.md", None).unwrap_err().code(), "INVALID");
    /// assert_eq!(conn.delete("notes", "a.md", Some(&w.hash))?.concepts, 0);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult, Error> {
        match self.live()? {
            Kind::Local(c) => c.delete(bundle, path, replaces),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.delete(bundle, path, replaces),
        }
    }

    /// `delete_bundle(bundle)`: removes every document of a bundle (any case), as one
    /// commit; an unknown bundle is `NOT_FOUND`.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("old", "a.md", "A.\n", None)?;
    /// conn.write("keep", "b.md", "B.\n", None)?;
    /// assert_eq!(conn.delete_bundle("OLD")?.bundles, ["keep"]);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn delete_bundle(&self, bundle: &str) -> Result<RevisionResult, Error> {
        match self.live()? {
            Kind::Local(c) => c.delete_bundle(bundle),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.delete_bundle(bundle),
        }
    }

    /// `transact({changes, expectedRevision?})`: up to 1,000 writes and deletes as one
    /// commit, all or nothing. Every precondition is checked; a refusal is `CONFLICT` with
    /// every failing change in `changes`. Build the request from the JS shape with
    /// [`crate::parse_transaction`].
    ///
    /// ```
    /// use langonrock::{parse_transaction, Error};
    /// use serde_json::json;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let txn = parse_transaction(&json!({"changes": [
    ///     {"operation": "write", "bundle": "sales", "path": "orders.md", "content": "Orders.\n"},
    ///     {"operation": "write", "bundle": "sales", "path": "customers.md", "content": "Customers.\n"},
    /// ]}))?;
    /// let r = conn.transact(txn)?;
    /// assert_eq!((r.concepts, r.bundles.as_slice()), (2, ["sales".to_string()].as_slice()));
    /// // Both changes fail their precondition: one refusal names both.
    /// let again = parse_transaction(&json!({"changes": [
    ///     {"operation": "write", "bundle": "sales", "path": "orders.md", "content": "x"},
    ///     {"operation": "write", "bundle": "sales", "path": "customers.md", "content": "y"},
    /// ]}))?;
    /// match conn.transact(again) {
    ///     Err(Error::Conflict { changes, .. }) => assert_eq!(changes.len(), 2),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn transact(&self, txn: Transaction) -> Result<RevisionResult, Error> {
        match self.live()? {
            Kind::Local(c) => c.transact(txn),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r
                .change()?
                .0
                .transact(&langonrock_core::http_api::transaction_json(&txn)),
        }
    }

    /// `restore({revision, expectedRevision})`: a new commit whose documents are those of a
    /// retained revision, while the head is still `expected_revision`.
    ///
    /// ```
    /// use langonrock::RestoreRequest;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let first = conn.write("notes", "a.md", "A.\n", None)?;
    /// let second = conn.write("notes", "b.md", "B.\n", None)?;
    /// let r = conn.restore(RestoreRequest { revision: first.revision, expected_revision: second.revision })?;
    /// assert_eq!(r.snapshot, first.snapshot);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn restore(&self, req: RestoreRequest) -> Result<RevisionResult, Error> {
        match self.live()? {
            Kind::Local(c) => c.restore(req),
            #[cfg(feature = "remote")]
            Kind::Remote(r) => r.change()?.0.restore(&req),
        }
    }

    // -----------------------------------------------------------------------------------
    // Tools

    /// A tool call exactly as the MCP server answers it (agent.md §6): the arguments checked
    /// against the tool's schema, the default `limit`, the retry lines of a refusal. Any
    /// tool of the table runs (open the connection read-only for a surface that must not
    /// write); an unknown name is an error reply `unknown tool "<name>"`. It never fails:
    /// every problem is an error reply.
    ///
    /// ```
    /// use serde_json::json;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// let args = json!({"bundle": "notes", "path": "a.md", "content": "---\ntype: note\n---\nA.\n"});
    /// assert!(!conn.call_tool("write", Some(&args)).is_error);
    /// // The same write again: refused, and the reply carries the hash to retry with.
    /// let refused = conn.call_tool("write", Some(&args));
    /// assert!(refused.is_error);
    /// let hash = conn.current_hash("notes", "a.md").unwrap();
    /// assert!(refused.text.ends_with(&format!("retry with replaces: \"{hash}\"")));
    /// assert_eq!(conn.call_tool("nope", None).text, "unknown tool \"nope\"");
    /// # Ok::<(), langonrock::Error>(())
    /// ```
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
        let kind = match self.live() {
            Ok(k) => k,
            Err(e) => return Reply::error(e.message()),
        };
        match kind {
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

    /// `import` (docs/import.md): replaces the tenant's documents with a folder's, as one
    /// commit, unless nothing changed since the last import of that folder. `unchanged`
    /// runs after the commit is prepared and before it is stored: a message from it aborts
    /// the commit with that message, nothing stored. `progress` gets one line per phase.
    pub fn import(
        &self,
        req: ImportRequest,
        unchanged: &mut dyn FnMut() -> Option<String>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<ImportResult, Error> {
        self.need_local("import")?.import(req, unchanged, progress)
    }

    /// `gc({keep, dryRun, graceMs})`: keeps the newest `keep` revisions of the head's chain
    /// and removes what no retained revision reaches, sparing records put within the grace
    /// period (local only).
    ///
    /// ```
    /// use langonrock::GcRequest;
    /// let conn = langonrock::Connection::memory("acme")?;
    /// for i in 0..3 {
    ///     conn.write("notes", &format!("n{i}.md"), "N.\n", None)?;
    /// }
    /// let r = conn.gc(GcRequest { keep: 1, dry_run: true, ..GcRequest::default() })?;
    /// assert_eq!((r.kept.len(), r.removed_revisions, r.dry_run), (1, 2, true));
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn gc(&self, req: GcRequest) -> Result<GcResult, Error> {
        self.need_local("gc")?
            .gc(req.keep, req.grace_ms, req.dry_run)
    }

    /// `warm()`: readies a connection that opened from a derived record for commits (the
    /// texts' check and the linker its first commit would otherwise build), queued like a
    /// commit; whether there was anything to do. A long-lived host calls it when idle after
    /// opening. Remotely the server readies its own tenants: `false`.
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("notes", "a.md", "A.\n", None)?;
    /// assert!(!conn.warm()?); // compiled from the sources: nothing to ready
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn warm(&self) -> Result<bool, Error> {
        match self.live()? {
            Kind::Local(c) => c.warm(),
            #[cfg(feature = "remote")]
            Kind::Remote(_) => Ok(false),
        }
    }

    /// `verify()`: checks the head, every retained revision and every record they reach
    /// against their digests; the problems found are `issues` (local only).
    ///
    /// ```
    /// let conn = langonrock::Connection::memory("acme")?;
    /// conn.write("notes", "a.md", "A.\n", None)?;
    /// let v = conn.verify()?;
    /// assert!(v.ok && v.issues.is_empty());
    /// assert_eq!(v.verified_revisions.len(), 1);
    /// # Ok::<(), langonrock::Error>(())
    /// ```
    pub fn verify(&self) -> Result<VerifyResult, Error> {
        self.need_local("verify")?.verify()
    }

    /// `repair({revision, expectedHead})`: points the head at an intact retained revision
    /// after `verify` found it broken (local only; open with
    /// [`crate::Options::unloaded`] so a corrupt tenant still opens).
    pub fn repair(&self, req: RepairRequest) -> Result<RepairResult, Error> {
        self.need_local("repair")?.repair(req)
    }
}
