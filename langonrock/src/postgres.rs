//! Connections over the PostgreSQL store (`docs/postgres.md`), behind the `postgres`
//! feature: a [`Database`] per database and schema in this process, shared by every
//! connection to its tenants.
//!
//! A database holds one pool of connections and one listener of the `langonrock_head`
//! channel. Each connection to a tenant registers a stale flag with it: a notification
//! for the tenant (or the listener reconnecting, which may have missed some) sets the flag,
//! and the connection refreshes before its next read. Without a notification a connection
//! still reads the head at least twice a second while it serves reads
//! ([`HEAD_POLL`]), and before every commit, so a lost notification delays visibility by at
//! most a second and never loses a commit.

use langonrock_core::dsn::PostgresDsn;
use langonrock_core::engine::{Answer, Key, Need, Store as _, StoreError};
use langonrock_core::Error;
use langonrock_postgres::{Listener, Notice, PgStore};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

pub use langonrock_postgres::{Options as StoreOptions, CHANNEL, SCHEMA_VERSION};

pub use crate::connection::HEAD_POLL;

/// Set `LANGONROCK_POSTGRES_LISTEN=0` to follow heads by polling alone (no `LISTEN`): for
/// measuring what the notifications save, and for poolers that do not pass them on.
pub const LISTEN_ENV: &str = "LANGONROCK_POSTGRES_LISTEN";

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

type Flags = Arc<Mutex<HashMap<String, Vec<Weak<AtomicBool>>>>>;

/// One database and schema: the store (a pool), the listener, and the stale flags of the
/// connections to its tenants.
pub struct Database {
    store: PgStore,
    /// The database's clock minus this machine's, in ms, once measured.
    offset: Mutex<Option<i64>>,
    flags: Flags,
    listener: Mutex<Option<Listener>>,
    listen: bool,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("store", &self.store)
            .field("listen", &self.listen)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Connects (checking, and unless `read_only` creating, the schema), without a
    /// registry: most callers want [`database`].
    pub fn connect(dsn: &PostgresDsn, read_only: bool) -> Result<Database, Error> {
        let store = PgStore::connect(
            dsn,
            &StoreOptions {
                create: !read_only,
                ..StoreOptions::default()
            },
        )?;
        let listen = std::env::var(LISTEN_ENV).map_or(true, |v| v != "0");
        Ok(Database {
            store,
            offset: Mutex::new(None),
            flags: Arc::default(),
            listener: Mutex::new(None),
            listen,
        })
    }

    /// The store.
    pub fn store(&self) -> &PgStore {
        &self.store
    }

    /// Every tenant with a head.
    pub fn tenants(&self) -> Result<Vec<String>, Error> {
        self.store.tenants().map_err(Error::from)
    }

    /// `host:port/database` and the schema, for banners (never a password).
    pub fn describe(&self) -> String {
        format!(
            "postgres {} (schema {})",
            self.store.place(),
            self.store.schema()
        )
    }

    /// The database's clock in ms since the epoch, as this machine's clock plus the offset
    /// measured once (within a round trip): put times are the database's, so `gc`'s `now`
    /// must be too, without a query before every commit.
    pub fn now_millis(&self) -> Result<u64, Error> {
        let local = || crate::clock::millis(std::time::SystemTime::now()) as i64;
        let mut offset = lock(&self.offset);
        let off = match *offset {
            Some(o) => o,
            None => {
                let before = local();
                let db = self.store.now_millis().map_err(Error::from)? as i64;
                let after = local();
                let o = db - (before + after) / 2;
                *offset = Some(o);
                o
            }
        };
        Ok(u64::try_from(local() + off).unwrap_or(0))
    }

    /// A stale flag for a connection to `tenant`: set when the tenant's head may have moved.
    fn watch(&self, tenant: &str) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(true));
        let mut flags = lock(&self.flags);
        let list = flags.entry(tenant.to_string()).or_default();
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(&flag));
        flag
    }

    /// Starts the listener, once: for hosts that serve for longer than a command (`serve`,
    /// `mcp`). Without it, connections read the head every [`HEAD_POLL`] while serving.
    pub fn follow(&self) {
        if self.listen {
            let mut l = lock(&self.listener);
            if l.is_none() {
                let flags = self.flags.clone();
                *l = Some(self.store.listen(move |n| {
                    let flags = lock(&flags);
                    let mark = |list: &Vec<Weak<AtomicBool>>| {
                        for f in list.iter().filter_map(Weak::upgrade) {
                            f.store(true, Ordering::Release);
                        }
                    };
                    match n {
                        Notice::Head(t) => {
                            if let Some(list) = flags.get(t) {
                                mark(list);
                            }
                        }
                        Notice::Resync => flags.values().for_each(mark),
                    }
                }));
            }
        }
    }
}

/// The [`Database`] of `dsn` in this process: connections to its tenants share one pool
/// and one listener. It lives as long as the process (its idle connections close after a
/// minute). A read-only first use gets a database that never creates the schema; a later
/// writable use gets its own.
pub fn database(dsn: &PostgresDsn, read_only: bool) -> Result<Arc<Database>, Error> {
    type Registry = Mutex<HashMap<(String, String, bool), Arc<Database>>>;
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    let registry = REGISTRY.get_or_init(Default::default);
    let mut reg = lock(registry);
    for ro in [false, read_only] {
        if let Some(db) = reg.get(&(dsn.url.clone(), dsn.schema.clone(), ro)) {
            return Ok(db.clone());
        }
    }
    let db = Arc::new(Database::connect(dsn, read_only)?);
    reg.insert((dsn.url.clone(), dsn.schema.clone(), read_only), db.clone());
    Ok(db)
}

/// A database as a connection's store.
pub(crate) struct Backend(pub(crate) Arc<Database>);

impl crate::connection::Backend for Backend {
    fn serve(&self, tenant: &str, need: Need) -> Answer {
        langonrock_core::engine::serve(&mut self.0.store.clone(), tenant, need)
    }
    fn put(&self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        self.0.store.clone().put(tenant, key, bytes)
    }
    fn lock_writer(&self, _tenant: &str) -> Result<Option<Box<dyn Send>>, Error> {
        Ok(None)
    }
    fn data(&self) -> Option<&Path> {
        None
    }
    /// A database hands out copies: its derived records keep the texts inline, so an open
    /// reads one record instead of every source.
    fn in_place_sources(&self) -> bool {
        false
    }
    fn watch(&self, tenant: &str) -> Option<Arc<AtomicBool>> {
        Some(self.0.watch(tenant))
    }
    fn follow(&self) {
        self.0.follow();
    }
    fn now_millis(&self) -> Option<Result<u64, Error>> {
        Some(self.0.now_millis())
    }
}
