//! [`AsyncConnection`] (feature `async`): the blocking [`Connection`] for async Rust
//! services on tokio. Each call moves the blocking work to tokio's blocking pool
//! (`tokio::task::spawn_blocking`), so a runtime's worker threads never wait for a compile,
//! a disk or a server.
//!
//! Why the library blocks and this is the variant: every operation is CPU-bound work in the
//! core (compiling, ranking, hashing) around store IO that is blocking by nature (files and
//! their `fsync`, the PostgreSQL driver's connection pool). A program without a runtime — a
//! command, a test, a thread-pool service — calls [`Connection`] directly and pays for no
//! executor; an async service would hand CPU-bound work to a blocking pool anyway, and this
//! type does exactly that, one call per task.

use crate::{
    Connection, DeleteResult, Error, GcRequest, GcResult, GetOptions, HistoryPage, HistoryRequest,
    Options, OwnedSlice, RepairRequest, RepairResult, Reply, RestoreRequest, Result,
    RevisionResult, SearchOptions, Snapshot, SourceContent, SourceEntry, ToolDefinition, ToolMode,
    Transaction, VerifyResult, WriteResult,
};
use std::sync::Arc;

/// A [`Connection`] whose operations are `async`: each runs on tokio's blocking pool.
///
/// It is cheap to clone (clones share one connection, as an `Arc<Connection>` does) and
/// `Send + Sync`; the concurrency rules are the connection's: reads run concurrently, also
/// while a commit is in flight; commits are serialized.
///
/// Dropping a future does not cancel its operation: a commit that started runs to its end
/// and lands (or fails) as it would have, so nothing is ever half done.
///
/// # Panics
///
/// Every method must be awaited inside a tokio runtime (tokio's `spawn_blocking` panics
/// outside one).
///
/// ```
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// use langonrock::AsyncConnection;
/// let conn = AsyncConnection::memory("acme").await?;
/// conn.write("sales", "orders.md", "---\ntype: table\n---\nOrders placed online.\n", None).await?;
/// let manifest = conn.manifest(None).await?;
/// assert!(manifest.contains("orders\tsales\ttable"));
/// # Ok::<(), langonrock::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct AsyncConnection {
    conn: Arc<Connection>,
}

impl std::fmt::Debug for AsyncConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncConnection")
            .field("tenant", &self.conn.tenant())
            .finish_non_exhaustive()
    }
}

impl From<Connection> for AsyncConnection {
    fn from(conn: Connection) -> AsyncConnection {
        AsyncConnection::new(Arc::new(conn))
    }
}

impl AsyncConnection {
    /// Wraps a connection shared with blocking code (both see one connection).
    pub fn new(conn: Arc<Connection>) -> AsyncConnection {
        AsyncConnection { conn }
    }

    /// Opens the tenant a DSN names ([`crate::open`]) on the blocking pool.
    pub async fn open(dsn: &str) -> Result<AsyncConnection> {
        AsyncConnection::open_with(Options::default(), dsn).await
    }

    /// Opens the tenant a DSN names with `options` ([`Options::open`]) on the blocking pool.
    pub async fn open_with(options: Options, dsn: &str) -> Result<AsyncConnection> {
        let dsn = dsn.to_string();
        blocking(move || options.open(&dsn))
            .await
            .map(AsyncConnection::from)
    }

    /// A connection to `tenant` in a fresh memory store ([`Connection::memory`]).
    pub async fn memory(tenant: &str) -> Result<AsyncConnection> {
        let tenant = tenant.to_string();
        blocking(move || Connection::memory(&tenant))
            .await
            .map(AsyncConnection::from)
    }

    /// The blocking connection inside, for what only it offers (the served state, import).
    pub fn connection(&self) -> &Arc<Connection> {
        &self.conn
    }

    /// Runs `f` with the blocking connection on tokio's blocking pool: any sequence of
    /// calls as one task.
    ///
    /// ```
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # rt.block_on(async {
    /// let conn = langonrock::AsyncConnection::memory("acme").await?;
    /// let hash = conn
    ///     .run(|c| {
    ///         c.write("notes", "a.md", "---\ntype: note\n---\nA.\n", None)?;
    ///         Ok(c.current_hash("notes", "a.md"))
    ///     })
    ///     .await?;
    /// assert_eq!(hash.map(|h| h.len()), Some(64));
    /// # Ok::<(), langonrock::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        blocking(move || f(&conn)).await
    }

    /// [`Connection::manifest`].
    pub async fn manifest(&self, bundle: Option<&str>) -> Result<String> {
        let bundle = bundle.map(str::to_string);
        self.run(move |c| c.manifest(bundle.as_deref())).await
    }

    /// [`Connection::get`].
    pub async fn get<S: AsRef<str>>(
        &self,
        ids: &[S],
        opts: &GetOptions,
    ) -> Result<Vec<(String, OwnedSlice)>> {
        let ids: Vec<String> = ids.iter().map(|i| i.as_ref().to_string()).collect();
        let opts = opts.clone();
        self.run(move |c| c.get(&ids, &opts)).await
    }

    /// [`Connection::snapshot`].
    pub async fn snapshot(&self) -> Result<Snapshot> {
        self.run(|c| c.snapshot()).await
    }

    /// [`Connection::list_source`].
    pub async fn list_source(&self) -> Result<Vec<SourceEntry>> {
        self.run(|c| c.list_source()).await
    }

    /// [`Connection::search`].
    pub async fn search(&self, query: &str, opts: &SearchOptions) -> Result<String> {
        let (query, opts) = (query.to_string(), opts.clone());
        self.run(move |c| c.search(&query, &opts)).await
    }

    /// [`Connection::read_source`].
    pub async fn read_source(&self, bundle: &str, path: &str) -> Result<Option<SourceContent>> {
        let (bundle, path) = (bundle.to_string(), path.to_string());
        self.run(move |c| c.read_source(&bundle, &path)).await
    }

    /// [`Connection::write`].
    pub async fn write(
        &self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult> {
        let (bundle, path, content) = (bundle.to_string(), path.to_string(), content.to_string());
        let replaces = replaces.map(str::to_string);
        self.run(move |c| c.write(&bundle, &path, &content, replaces.as_deref()))
            .await
    }

    /// [`Connection::delete`].
    pub async fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult> {
        let (bundle, path) = (bundle.to_string(), path.to_string());
        let replaces = replaces.map(str::to_string);
        self.run(move |c| c.delete(&bundle, &path, replaces.as_deref()))
            .await
    }

    /// [`Connection::delete_bundle`].
    pub async fn delete_bundle(&self, bundle: &str) -> Result<RevisionResult> {
        let bundle = bundle.to_string();
        self.run(move |c| c.delete_bundle(&bundle)).await
    }

    /// [`Connection::transact`].
    pub async fn transact(&self, txn: Transaction) -> Result<RevisionResult> {
        self.run(move |c| c.transact(txn)).await
    }

    /// [`Connection::history`].
    pub async fn history(&self, req: HistoryRequest) -> Result<HistoryPage> {
        self.run(move |c| c.history(req)).await
    }

    /// [`Connection::restore`].
    pub async fn restore(&self, req: RestoreRequest) -> Result<RevisionResult> {
        self.run(move |c| c.restore(req)).await
    }

    /// [`Connection::gc`].
    pub async fn gc(&self, req: GcRequest) -> Result<GcResult> {
        self.run(move |c| c.gc(req)).await
    }

    /// [`Connection::verify`].
    pub async fn verify(&self) -> Result<VerifyResult> {
        self.run(|c| c.verify()).await
    }

    /// [`Connection::repair`].
    pub async fn repair(&self, req: RepairRequest) -> Result<RepairResult> {
        self.run(move |c| c.repair(req)).await
    }

    /// [`Connection::tools`].
    pub async fn tools(&self, mode: ToolMode) -> Result<Vec<ToolDefinition>> {
        self.run(move |c| c.tools(mode)).await
    }

    /// [`Connection::call_tool`]: never fails; every problem is an error reply.
    pub async fn call_tool(&self, name: &str, args: Option<serde_json::Value>) -> Reply {
        let name = name.to_string();
        self.run(move |c| Ok(c.call_tool(&name, args.as_ref())))
            .await
            .unwrap_or_else(|e| Reply::error(e.message()))
    }

    /// [`Connection::close`]: waits on the blocking pool for a commit in flight. Clones
    /// share the connection, so it is closed for all of them.
    pub async fn close(&self) {
        let _ = self
            .run(|c| {
                c.close();
                Ok(())
            })
            .await;
    }
}

/// Runs `f` on tokio's blocking pool. A panic in `f` resumes in the caller, as it would
/// have without the pool; a runtime that shuts down before the task ran gives `STORE`.
async fn blocking<T, F>(f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => Err(Error::Store(
                "the operation did not run: the tokio runtime is shutting down".into(),
            )),
        },
    }
}
