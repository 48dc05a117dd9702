//! The PostgreSQL store of langonrock (`docs/postgres.md`): several server replicas share
//! tenants through one existing database.
//!
//! - Records live in one table keyed by `(tenant, kind, key)` with their bytes and put time;
//!   heads in one row per tenant. A head swap is one conditional statement (zero rows is a
//!   conflict) that also notifies the channel `langonrock_head` with the tenant.
//! - A commit's records and its head swap go in one database transaction
//!   ([`Store::commit`]), so records are durable before the head that names them. A
//!   connection lost after `COMMIT` was sent and before its answer is `indeterminate`.
//! - Connections come from a pool, so a [`PgStore`] is cheap to clone and to share between
//!   threads; a connection that broke (a restarted server) is replaced on the next use.
//! - [`PgStore::listen`] follows the notifications on a connection of its own.
//!
//! Statement texts are fixed; every value is a parameter. The one identifier in them is
//! the schema name, validated by `langonrock_core::dsn::schema_name`.

mod listen;
mod schema;
#[cfg(feature = "test-server")]
pub mod test_server;
mod tls;

pub use listen::{Listener, Notice};
pub use schema::{CHANNEL, SCHEMA_VERSION};

use langonrock_core::dsn::PostgresDsn;
use langonrock_core::engine::{
    CommitOutcome, Digest, Key, KeyInfo, Kind, PreparedCommit, Store, StoreError, SwapOutcome,
};
use langonrock_core::Error;
use postgres::{Client, Config, GenericClient, Statement};
use schema::Sql;
use std::str::FromStr as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long an operation waits for a pooled connection before it fails with a `STORE`
/// error (a server that is down answers at once; this bounds a server that does not answer).
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// Rows per statement when records are put, read or removed in bulk, and the bytes one
/// put statement carries at most (a bigger record goes alone).
const BATCH_ROWS: usize = 1000;
const BATCH_BYTES: usize = 8 << 20;

/// The options of [`PgStore::connect`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Create the schema when it is missing (false for a read-only server, which never
    /// writes to the store: without the schema it reads an empty database, and refuses
    /// writes with `the database has no langonrock schema "<s>": connect once without
    /// --read-only to create it`).
    pub create: bool,
    /// The most connections the pool opens.
    pub max_connections: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            create: true,
            max_connections: 8,
        }
    }
}

/// Opens the driver's connections: the configuration and the TLS connector.
#[derive(Clone)]
struct Manager {
    config: Config,
    tls: MakeRustlsConnect,
    /// `host:port/database`, for messages.
    place: String,
    /// The first connection, made (and its errors classified) before the pool existed:
    /// the pool's first connection is this one rather than a second login.
    seed: Arc<std::sync::Mutex<Option<Client>>>,
}

impl Manager {
    fn connect(&self) -> Result<Client, postgres::Error> {
        self.config.connect(self.tls.clone())
    }
}

/// The full chain of causes of a driver error, joined with `: `.
fn chain(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// `<what>: <cause>` for a store error message.
pub(crate) fn describe(what: &str, e: &postgres::Error) -> String {
    format!("{what}: {}", chain(e))
}

/// A pool failure (the server is down, or refuses us) as the message of a `STORE` error.
#[derive(Debug)]
struct PoolError(String);

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PoolError {}

/// A pooled connection: the driver's client, the statements prepared on it (each fixed
/// text is parsed once per connection, so a statement costs one round trip, not two), and
/// when it was last used.
pub(crate) struct Conn {
    client: Client,
    prepared: std::collections::HashMap<String, Statement>,
    used: Instant,
    /// Set when a check found the connection dead: the pool drops it.
    broken: bool,
}

impl Conn {
    fn new(client: Client) -> Conn {
        Conn {
            client,
            prepared: Default::default(),
            used: Instant::now(),
            broken: false,
        }
    }

    /// The prepared statement of `text` on this connection.
    fn statement(&mut self, text: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.prepared.get(text) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(text)?;
        self.prepared.insert(text.to_string(), s.clone());
        Ok(s)
    }
}

/// A connection idle for longer than this is checked (one empty query) before it is
/// handed out: the server may have restarted meanwhile. A connection in steady use is not,
/// so a commit or a read costs no extra round trip.
const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

impl r2d2::ManageConnection for Manager {
    type Connection = Conn;
    type Error = PoolError;

    fn connect(&self) -> Result<Conn, PoolError> {
        let seed = self.seed.lock().ok().and_then(|mut s| s.take());
        match seed {
            Some(c) if !c.is_closed() => Ok(Conn::new(c)),
            _ => Manager::connect(self)
                .map(Conn::new)
                .map_err(|e| PoolError(chain(&e))),
        }
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), PoolError> {
        conn.client
            .simple_query("")
            .map(|_| ())
            .map_err(|e| PoolError(chain(&e)))
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        conn.broken || conn.client.is_closed()
    }
}

struct Inner {
    pool: r2d2::Pool<Manager>,
    manager: Manager,
    sql: Sql,
    /// The schema did not exist when a store that may not create it connected: reads
    /// answer as for an empty database until it appears.
    absent: AtomicBool,
}

/// The PostgreSQL store of one database and schema, for every tenant in it. Clones share
/// one pool.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("place", &self.inner.manager.place)
            .field("schema", &self.inner.sql.schema)
            .finish()
    }
}

/// Why a first connection failed, as an error that names what to fix.
fn connect_error(place: &str, e: &postgres::Error) -> Error {
    use postgres::error::SqlState;
    let why = chain(e);
    match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            Error::Invalid(format!(
                "cannot log in to PostgreSQL at {place}: {why}: check the user and password in the dsn"
            ))
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => Error::Invalid(format!(
            "cannot open PostgreSQL database {place}: {why}: create it, or name an existing one in the dsn"
        )),
        _ if e.as_db_error().is_some() => {
            Error::Store(format!("PostgreSQL at {place} refused the connection: {why}"))
        }
        _ if why.starts_with("error performing TLS handshake") => Error::Invalid(format!(
            "cannot connect to PostgreSQL at {place} over tls: {why}: pass sslrootcert=<PEM file of the server's CA> with sslmode=verify-full, or use sslmode=require"
        )),
        _ if why.contains("password missing") => Error::Invalid(format!(
            "cannot log in to PostgreSQL at {place}: the server asks for a password: put it in the dsn (postgres://<user>:<password>@…)"
        )),
        _ => Error::Store(format!(
            "cannot reach PostgreSQL at {place}: {why}: check the host and port in the dsn, and that the server is running"
        )),
    }
}

fn kind_name(k: Kind) -> &'static str {
    k.as_str()
}

fn parse_key(kind: &str, key: &[u8]) -> Option<Key> {
    let kind = Kind::parse(kind)?;
    let digest: [u8; 32] = key.try_into().ok()?;
    Some(Key::new(kind, Digest(digest)))
}

impl PgStore {
    /// Connects to the database of `dsn`, checks its schema version and, with
    /// `options.create`, creates the schema on first use. Errors name what to fix: a wrong
    /// password, an unreachable host, a missing database, no right to create the schema,
    /// or a schema of a newer langonrock (`INVALID` `database schema <n> is newer than this
    /// langonrock (<m>): upgrade langonrock`).
    pub fn connect(dsn: &PostgresDsn, options: &Options) -> Result<PgStore, Error> {
        let (url, choice) = tls::take_tls_params(&dsn.url)?;
        let mut config = Config::from_str(&url).map_err(|e| {
            Error::Invalid(format!("invalid dsn \"{}\": {}", dsn.redacted(), chain(&e)))
        })?;
        config.ssl_mode(choice.mode);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("langonrock");
        }
        if config.get_tcp_user_timeout().is_none() {
            // A peer that vanished without closing (a cut network) surfaces as an error
            // instead of a hang.
            config.tcp_user_timeout(Duration::from_secs(30));
        }
        let place = place(&config);
        let manager = Manager {
            tls: tls::connector(&choice)?,
            config,
            place: place.clone(),
            seed: Arc::default(),
        };
        let mut first = manager.connect().map_err(|e| connect_error(&place, &e))?;
        let sql = Sql::new(&dsn.schema);
        let present = schema::migrate(&mut first, &sql, options.create)?;
        if let Ok(mut seed) = manager.seed.lock() {
            *seed = Some(first);
        }
        let pool = r2d2::Pool::builder()
            .max_size(options.max_connections.max(1))
            .min_idle(Some(0))
            .idle_timeout(Some(Duration::from_secs(60)))
            .connection_timeout(CONNECTION_TIMEOUT)
            .test_on_check_out(false)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(manager.clone());
        Ok(PgStore {
            inner: Arc::new(Inner {
                pool,
                manager,
                sql,
                absent: AtomicBool::new(!present),
            }),
        })
    }

    /// `host:port/database` of this store, for banners and messages (never a password).
    pub fn place(&self) -> &str {
        &self.inner.manager.place
    }

    /// The schema holding the tables.
    pub fn schema(&self) -> &str {
        &self.inner.sql.schema
    }

    /// A pooled connection, checked first when it sat idle for [`CHECK_AFTER_IDLE`] (a dead
    /// one is dropped and the next tried).
    fn client(&self) -> Result<r2d2::PooledConnection<Manager>, StoreError> {
        let fail = |e: r2d2::Error| {
            StoreError::Failed(format!(
                "cannot reach PostgreSQL at {}: {e}",
                self.inner.manager.place
            ))
        };
        // Every idle connection may be dead after a restart: one more try than the pool
        // holds ends on a fresh connection.
        for _ in 0..=self.inner.pool.max_size() {
            let mut c = self.inner.pool.get().map_err(fail)?;
            if c.used.elapsed() < CHECK_AFTER_IDLE
                || r2d2::ManageConnection::is_valid(&self.inner.manager, &mut c).is_ok()
            {
                c.used = Instant::now();
                return Ok(c);
            }
            c.broken = true;
        }
        let mut c = self.inner.pool.get().map_err(fail)?;
        c.used = Instant::now();
        Ok(c)
    }

    /// Whether the tables exist. A store connected to a database without them (read-only)
    /// looks again each time, so it sees a schema another process created meanwhile.
    fn ready(&self, c: &mut Conn) -> Result<bool, StoreError> {
        if !self.inner.absent.load(Ordering::Acquire) {
            return Ok(true);
        }
        match schema::version(&mut c.client, &self.inner.sql) {
            Ok(None) => Ok(false),
            Ok(Some(v)) if v == SCHEMA_VERSION => {
                self.inner.absent.store(false, Ordering::Release);
                Ok(true)
            }
            Ok(Some(v)) => Err(StoreError::Failed(schema::newer(v).message())),
            Err(e) => Err(self.failed("cannot read the schema", &e)),
        }
    }

    /// The refusal of a write while the tables do not exist.
    fn writable(&self, c: &mut Conn) -> Result<(), StoreError> {
        if self.ready(c)? {
            Ok(())
        } else {
            Err(StoreError::Failed(schema::no_schema(
                &self.inner.sql.schema,
            )))
        }
    }

    fn failed(&self, what: &str, e: &postgres::Error) -> StoreError {
        StoreError::Failed(format!(
            "PostgreSQL at {}: {}",
            self.inner.manager.place,
            describe(what, e)
        ))
    }

    /// A read through a pooled connection: `absent` while the tables do not exist, else
    /// `f`. A connection that turns out dead (the server restarted since its last use) is
    /// dropped and the read runs once more on a fresh one, so a restart between two reads
    /// costs nothing visible.
    fn read<T>(
        &self,
        what: &str,
        absent: impl Fn() -> T,
        mut f: impl FnMut(&mut Conn) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut retried = false;
        loop {
            let mut c = self.client()?;
            if !self.ready(&mut c)? {
                return Ok(absent());
            }
            match f(&mut c) {
                Ok(t) => return Ok(t),
                Err(e) => {
                    let gone = connection_gone(&e);
                    c.broken = true;
                    if gone && !retried {
                        retried = true;
                        continue;
                    }
                    return Err(self.failed(what, &e));
                }
            }
        }
    }

    /// The prepared statement of `text` on `c`, or the store error of `what` failing.
    fn statement(&self, c: &mut Conn, text: &str, what: &str) -> Result<Statement, StoreError> {
        c.statement(text).map_err(|e| self.failed(what, &e))
    }

    /// Every tenant with a head, in Rust string order.
    pub fn tenants(&self) -> Result<Vec<String>, StoreError> {
        let sql = &self.inner.sql.tenants;
        let rows = self.read("cannot list the tenants", Vec::new, |c| {
            let st = c.statement(sql)?;
            c.client.query(&st, &[])
        })?;
        let mut out: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        out.sort();
        Ok(out)
    }

    /// The database's clock in milliseconds since the Unix epoch: the clock of every put
    /// time, so collection's `now` must come from here, whatever machine collects.
    pub fn now_millis(&self) -> Result<u64, StoreError> {
        let mut c = self.client()?;
        let row = c
            .client
            .query_one(
                "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .map_err(|e| self.failed("cannot read the clock", &e))?;
        Ok(row.get::<_, i64>(0).max(0) as u64)
    }

    /// Follows the `langonrock_head` notifications on a connection of its own, calling `on`
    /// from its thread for each (and with [`Notice::Resync`] after it reconnects, since
    /// notifications sent meanwhile are lost). Dropping the [`Listener`] stops it.
    pub fn listen(&self, on: impl Fn(Notice<'_>) + Send + 'static) -> Listener {
        listen::start(self.inner.manager.clone(), Box::new(on))
    }

    /// Puts one batch through `client` with the prepared `put_many` statement. Different
    /// bytes under an existing content-addressed key is `CORRUPT`; the caller's transaction
    /// then must not commit.
    fn put_batch(
        &self,
        client: &mut impl GenericClient,
        put: &Statement,
        tenant: &str,
        batch: &[(&Key, &[u8])],
    ) -> Result<(), StoreError> {
        let (kinds, keys, values) = columns(batch);
        let rows = client
            .query(put, &[&tenant, &kinds, &keys, &values])
            .map_err(|e| self.failed("cannot store records", &e))?;
        if rows.len() != batch.len() {
            let stored: std::collections::HashSet<Key> = rows
                .iter()
                .filter_map(|r| parse_key(r.get(0), r.get(1)))
                .collect();
            let bad = batch
                .iter()
                .find(|(k, _)| !stored.contains(k))
                .map_or(*batch[0].0, |(k, _)| **k);
            return Err(corrupt(&bad));
        }
        Ok(())
    }

    /// The key of `batch` whose stored bytes differ from the batch's, once a commit
    /// statement was refused for one (its rows were rolled back, so this reads them anew).
    fn corrupt_key(&self, c: &mut Conn, tenant: &str, batch: &[(&Key, &[u8])]) -> Key {
        let keys: Vec<Key> = batch.iter().map(|(k, _)| **k).collect();
        let stored = self
            .statement(c, &self.inner.sql.get_many, "cannot read records")
            .ok()
            .and_then(|st| {
                let kinds: Vec<&str> = keys.iter().map(|k| kind_name(k.kind)).collect();
                let digests: Vec<&[u8]> = keys.iter().map(|k| &k.digest.0[..]).collect();
                c.client.query(&st, &[&tenant, &kinds, &digests]).ok()
            })
            .unwrap_or_default();
        stored
            .iter()
            .find_map(|r| {
                let i = usize::try_from(r.get::<_, i64>(0)).ok()?.checked_sub(1)?;
                let (k, b) = batch.get(i)?;
                (k.kind.is_content_addressed() && r.get::<_, &[u8]>(1) != *b).then_some(**k)
            })
            .unwrap_or(*batch[0].0)
    }

    /// The conditional head swap through `client`: `Ok(true)` swapped, `Ok(false)` conflict.
    fn swap(
        &self,
        c: &mut Conn,
        tenant: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, postgres::Error> {
        let rows = match expected {
            Some(old) => {
                let st = c.statement(&self.inner.sql.swap)?;
                c.client.query(&st, &[&tenant, &old, &new])?
            }
            None => {
                let st = c.statement(&self.inner.sql.first_swap)?;
                c.client.query(&st, &[&tenant, &new])?
            }
        };
        Ok(rows.len() == 1)
    }

    /// Runs the commit statement (the last batch of records and the head swap) through
    /// `client`, and names its outcome; `Ok(())` is swapped (committed once its
    /// transaction commits).
    fn commit_statement(
        &self,
        client: &mut impl GenericClient,
        st: &Statement,
        tenant: &str,
        batch: &[(&Key, &[u8])],
        commit: &PreparedCommit,
    ) -> Result<(), CommitEnd> {
        use postgres::error::SqlState;
        let (kinds, keys, values) = columns(batch);
        let new = &commit.head[..];
        let r = match commit.expected.as_deref() {
            Some(old) => client.query(st, &[&tenant, &kinds, &keys, &values, &old, &new]),
            None => client.query(st, &[&tenant, &kinds, &keys, &values, &new]),
        };
        match r {
            Ok(_) => Ok(()),
            Err(e) => match e.code() {
                Some(c) if *c == SqlState::DIVISION_BY_ZERO => Err(CommitEnd::Conflict),
                Some(c) if *c == SqlState::INVALID_ARGUMENT_FOR_LOG => Err(CommitEnd::Corrupt),
                // The server answered with an error: the statement rolled back.
                _ if e.as_db_error().is_some() => {
                    Err(CommitEnd::Failed(self.failed("cannot commit", &e)))
                }
                // The swap was sent and no answer came back: it may have committed.
                _ => Err(CommitEnd::Indeterminate),
            },
        }
    }
}

/// Whether `e` says the connection is gone: no answer from the server, or an error of the
/// classes `08` (connection exception) or `57` (operator intervention: the server shutting
/// down or terminating the backend).
fn connection_gone(e: &postgres::Error) -> bool {
    match e.code() {
        Some(code) => matches!(code.code().get(..2), Some("08" | "57")),
        None => e.as_db_error().is_none(),
    }
}

/// How a commit statement ended when it did not swap.
enum CommitEnd {
    Conflict,
    /// A record of its batch holds other bytes in the database.
    Corrupt,
    Failed(StoreError),
    Indeterminate,
}

/// The columns of a batch as the statements take them.
fn columns<'a>(batch: &[(&'a Key, &'a [u8])]) -> (Vec<&'static str>, Vec<&'a [u8]>, Vec<&'a [u8]>) {
    (
        batch.iter().map(|(k, _)| kind_name(k.kind)).collect(),
        batch.iter().map(|(k, _)| &k.digest.0[..]).collect(),
        batch.iter().map(|(_, b)| *b).collect(),
    )
}

/// One row per key: a repeated key with the same bytes is put once (a statement cannot
/// update one row twice); with other bytes it is corrupt.
fn unique(records: &[(Key, Vec<u8>)]) -> Result<Vec<(&Key, &[u8])>, StoreError> {
    let mut seen: std::collections::HashMap<Key, &[u8]> = Default::default();
    let mut unique: Vec<(&Key, &[u8])> = Vec::with_capacity(records.len());
    for (k, b) in records {
        match seen.get(k) {
            Some(prev) if *prev == b.as_slice() || !k.kind.is_content_addressed() => {}
            Some(_) => return Err(corrupt(k)),
            None => {
                seen.insert(*k, b);
                unique.push((k, b));
            }
        }
    }
    Ok(unique)
}

/// `records` cut into batches of at most [`BATCH_ROWS`] rows and [`BATCH_BYTES`] bytes (a
/// bigger record goes alone); at least one batch, empty when `records` is.
fn batches<'a, 'b>(records: &'b [(&'a Key, &'a [u8])]) -> Vec<&'b [(&'a Key, &'a [u8])]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < records.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < records.len()
            && end - start < BATCH_ROWS
            && (end == start || bytes + records[end].1.len() <= BATCH_BYTES)
        {
            bytes += records[end].1.len();
            end += 1;
        }
        out.push(&records[start..end]);
        start = end;
    }
    if out.is_empty() {
        out.push(&records[..0]);
    }
    out
}

fn corrupt(k: &Key) -> StoreError {
    StoreError::Corrupt(format!(
        "database corruption: {k} holds different bytes than its key"
    ))
}

fn place(config: &Config) -> String {
    use postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or("postgres");
    format!("{host}:{port}/{db}")
}

impl Store for PgStore {
    fn read_head(&mut self, tenant: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let sql = &self.inner.sql.read_head;
        let row = self.read(
            "cannot read the head",
            || None,
            |c| {
                let st = c.statement(sql)?;
                c.client.query_opt(&st, &[&tenant])
            },
        )?;
        Ok(row.map(|r| r.get(0)))
    }

    fn get_many(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let mut out = vec![None; keys.len()];
        if keys.is_empty() {
            return Ok(out);
        }
        let sql = &self.inner.sql.get_many;
        for (n, chunk) in keys.chunks(BATCH_ROWS).enumerate() {
            let kinds: Vec<&str> = chunk.iter().map(|k| kind_name(k.kind)).collect();
            let digests: Vec<&[u8]> = chunk.iter().map(|k| &k.digest.0[..]).collect();
            let rows = self.read("cannot read records", Vec::new, |c| {
                let st = c.statement(sql)?;
                c.client.query(&st, &[&tenant, &kinds, &digests])
            })?;
            for r in rows {
                let i: i64 = r.get(0);
                let bytes: Vec<u8> = r.get(1);
                if let Some(slot) = out.get_mut(n * BATCH_ROWS + (i as usize).wrapping_sub(1)) {
                    *slot = Some(bytes);
                }
            }
        }
        Ok(out)
    }

    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        self.put_many(tenant, &[(*key, bytes.to_vec())])
    }

    fn put_many(&mut self, tenant: &str, records: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let unique = unique(records)?;
        let mut c = self.client()?;
        self.writable(&mut c)?;
        let what = "cannot store records";
        let put = self.statement(&mut c, &self.inner.sql.put_many, what)?;
        let r = (|| {
            let mut tx = c.client.transaction().map_err(|e| self.failed(what, &e))?;
            for batch in batches(&unique) {
                self.put_batch(&mut tx, &put, tenant, batch)?;
            }
            tx.commit().map_err(|e| self.failed(what, &e))
        })();
        // A connection that failed a statement is not reused.
        if matches!(r, Err(StoreError::Failed(_))) {
            c.broken = true;
        }
        r
    }

    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        let mut c = match self.client() {
            Ok(c) => c,
            Err(StoreError::Failed(m) | StoreError::Corrupt(m)) => return SwapOutcome::Failed(m),
        };
        if let Err(StoreError::Failed(m) | StoreError::Corrupt(m)) = self.writable(&mut c) {
            return SwapOutcome::Failed(m);
        }
        let r = self.swap(&mut c, tenant, expected, new);
        c.broken = r.is_err();
        match r {
            Ok(true) => SwapOutcome::Swapped,
            Ok(false) => SwapOutcome::Conflict,
            // The server answered with an error: the statement's transaction rolled back.
            Err(e) if e.as_db_error().is_some() => {
                SwapOutcome::Failed(describe("cannot swap the head", &e))
            }
            // The statement was sent and no answer came back: it may have committed.
            Err(e) => {
                SwapOutcome::Indeterminate(describe("lost the connection during the head swap", &e))
            }
        }
    }

    /// The records and the head swap as one statement (one round trip, its own
    /// transaction) when the records fit one batch; a bigger commit puts its first batches
    /// in a transaction that the commit statement ends. Nothing of a commit that fails or
    /// conflicts stays. A connection lost once the commit statement (or `COMMIT`) was sent
    /// and before its answer is indeterminate (docs/postgres.md, "Outcomes").
    fn commit(&mut self, tenant: &str, commit: &PreparedCommit) -> CommitOutcome {
        let unique = match unique(&commit.records) {
            Ok(u) => u,
            Err(e) => return CommitOutcome::Failed(e),
        };
        let all = batches(&unique);
        let Some((last, earlier)) = all.split_last() else {
            return CommitOutcome::Failed(StoreError::Failed("no batch".into()));
        };
        let mut c = match self.client() {
            Ok(c) => c,
            Err(e) => return CommitOutcome::Failed(e),
        };
        if let Err(e) = self.writable(&mut c) {
            return CommitOutcome::Failed(e);
        }
        let sql = &self.inner.sql;
        let text = if commit.expected.is_some() {
            &sql.commit
        } else {
            &sql.first_commit
        };
        let st = match self.statement(&mut c, text, "cannot commit") {
            Ok(st) => st,
            Err(e) => return CommitOutcome::Failed(e),
        };
        let end = if earlier.is_empty() {
            self.commit_statement(&mut c.client, &st, tenant, last, commit)
        } else {
            let put = match self.statement(&mut c, &sql.put_many, "cannot store records") {
                Ok(st) => st,
                Err(e) => return CommitOutcome::Failed(e),
            };
            (|| {
                let mut tx = c
                    .client
                    .transaction()
                    .map_err(|e| CommitEnd::Failed(self.failed("cannot begin a commit", &e)))?;
                for batch in earlier {
                    self.put_batch(&mut tx, &put, tenant, batch)
                        .map_err(CommitEnd::Failed)?;
                }
                self.commit_statement(&mut tx, &st, tenant, last, commit)?;
                match tx.commit() {
                    Ok(()) => Ok(()),
                    Err(e) if e.as_db_error().is_some() => {
                        Err(CommitEnd::Failed(self.failed("cannot commit", &e)))
                    }
                    Err(_) => Err(CommitEnd::Indeterminate),
                }
            })()
        };
        // A connection that failed (other than by a refusal) is not reused.
        if matches!(
            end,
            Err(CommitEnd::Failed(StoreError::Failed(_)) | CommitEnd::Indeterminate)
        ) {
            c.broken = true;
        }
        match end {
            Ok(()) => CommitOutcome::Committed,
            Err(CommitEnd::Conflict) => CommitOutcome::Conflict,
            Err(CommitEnd::Corrupt) => {
                CommitOutcome::Failed(corrupt(&self.corrupt_key(&mut c, tenant, last)))
            }
            Err(CommitEnd::Failed(e)) => CommitOutcome::Failed(e),
            Err(CommitEnd::Indeterminate) => CommitOutcome::Indeterminate,
        }
    }

    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError> {
        let sql = &self.inner.sql.keys;
        let rows = self.read("cannot list records", Vec::new, |c| {
            let st = c.statement(sql)?;
            c.client.query(&st, &[&tenant])
        })?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(KeyInfo {
                    key: parse_key(r.get(0), r.get(1))?,
                    put_time: r.get::<_, i64>(2).max(0) as u64,
                    size: r.get::<_, i64>(3).max(0) as u64,
                })
            })
            .collect())
    }

    /// One statement (so one transaction) per batch of keys: a row is removed only while
    /// its put time is before `before`, and a concurrent put of the same key either
    /// refreshes it first (it stays) or waits and inserts it anew.
    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        let mut c = self.client()?;
        if !self.ready(&mut c)? {
            return Ok(Vec::new());
        }
        let what = "cannot remove records";
        let st = self.statement(&mut c, &self.inner.sql.remove, what)?;
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let mut removed = Vec::new();
        for chunk in keys.chunks(BATCH_ROWS) {
            let chunk: Vec<&Key> = chunk.iter().filter(|k| k.kind != Kind::Recovery).collect();
            if chunk.is_empty() {
                continue;
            }
            let kinds: Vec<&str> = chunk.iter().map(|k| kind_name(k.kind)).collect();
            let digests: Vec<&[u8]> = chunk.iter().map(|k| &k.digest.0[..]).collect();
            let rows = c
                .client
                .query(&st, &[&tenant, &kinds, &digests, &before])
                .map_err(|e| {
                    c.broken = true;
                    self.failed(what, &e)
                })?;
            removed.extend(rows.iter().filter_map(|r| parse_key(r.get(0), r.get(1))));
        }
        Ok(removed)
    }
}
