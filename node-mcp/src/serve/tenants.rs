//! The server's tenants (docs/http.md, "Concurrency"): one connection per tenant of the data
//! root, opened on first use and shared by every request.
//!
//! This module is the one adapter between the server and a tenant connection ([`Conn`]):
//!
//! - Reads are served from the tenant's last *published* state, an `Arc<Served>` swapped
//!   whole. Before each read one `stat` asks whether the store's head moved past the
//!   generation that state was loaded from (another writer on the same data root: the CLI,
//!   another MCP process, a Node writer); only then does the read refresh the connection.
//! - Commits to one tenant are serialized by the connection's lock. While a commit holds
//!   it, reads keep being served from the published state and never wait for it; the
//!   commit publishes its new state before it lets go. Other tenants are not held up.
//! - Everything here blocks (store IO and compiling): the server calls it on tokio's
//!   blocking pool, never on an async worker.

use crate::conn::Conn;
use crate::file_store::FileStore;
use langonrock_core::engine::Served;
use langonrock_core::{manifest, tools, validate, Error};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock, TryLockError};
use std::time::Duration;

/// How many tenants stay open at once. Opening one more closes the least recently used
/// tenant that no request holds (a tenant reopens on its next request), so requests for
/// ever new tenant names cannot grow the server without bound.
pub(crate) const MAX_OPEN_TENANTS: usize = 1_024;

/// Every tenant of one data root.
pub(crate) struct Tenants {
    data: PathBuf,
    read_only: bool,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    tick: AtomicU64,
}

/// One tenant's place in the map: opened once, by the first request that needs it.
struct Slot {
    open: Mutex<Option<Arc<Tenant>>>,
    used: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Tenants {
    /// The tenants of `data`; with `read_only`, no connection ever writes.
    pub(crate) fn new(data: &Path, read_only: bool) -> Tenants {
        Tenants {
            data: data.to_path_buf(),
            read_only,
            slots: Mutex::new(HashMap::new()),
            tick: AtomicU64::new(0),
        }
    }

    /// The tenant `id` (validated and lower-cased), opened on first use. A tenant without a
    /// head opens empty and nothing is created; a store that fails closed is an error, and
    /// the next request tries again.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Tenant>, Error> {
        let id = validate::tenant_id(id)?;
        let (slot, evicted) = {
            let mut slots = lock(&self.slots);
            let evicted = if !slots.contains_key(&id) && slots.len() >= MAX_OPEN_TENANTS {
                evict(&mut slots)
            } else {
                None
            };
            let slot = slots
                .entry(id.clone())
                .or_insert_with(|| {
                    Arc::new(Slot {
                        open: Mutex::new(None),
                        used: AtomicU64::new(0),
                    })
                })
                .clone();
            (slot, evicted)
        };
        // Closing a tenant finishes its derived record: not under the map's lock.
        drop(evicted);
        slot.used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        let mut open = lock(&slot.open);
        if let Some(t) = &*open {
            return Ok(t.clone());
        }
        let t = Arc::new(Tenant::open(&self.data, &id, self.read_only)?);
        *open = Some(t.clone());
        Ok(t)
    }

    /// Closes every tenant: waits for commits in progress, then lets each connection put
    /// its pending derived record.
    pub(crate) fn close(&self) {
        let slots: Vec<Arc<Slot>> = lock(&self.slots).drain().map(|(_, s)| s).collect();
        for slot in slots {
            if let Some(t) = lock(&slot.open).take() {
                let mut conn = t.lock_conn();
                conn.finish_derived();
            }
        }
    }
}

/// Takes the least recently used slot that no request holds out of the map.
fn evict(slots: &mut HashMap<String, Arc<Slot>>) -> Option<Arc<Slot>> {
    let idle = slots
        .iter()
        .filter(|(_, s)| {
            Arc::strong_count(s) == 1
                && s.open
                    .try_lock()
                    .is_ok_and(|o| o.as_ref().is_none_or(|t| Arc::strong_count(t) == 1))
        })
        .min_by_key(|(_, s)| s.used.load(Ordering::Relaxed))
        .map(|(k, _)| k.clone())?;
    slots.remove(&idle)
}

/// A published state and the head generation it was loaded at (or after).
struct Published {
    generation: u64,
    served: Arc<Served>,
}

/// One open tenant.
pub(crate) struct Tenant {
    id: String,
    files: FileStore,
    conn: Mutex<Conn>,
    /// Commits waiting for or holding the connection: reads then serve the published state.
    committing: AtomicUsize,
    published: RwLock<Published>,
    /// The MCP advice sentence, computed from the whole manifest on first use and fixed
    /// for the server's lifetime (agent.md §7.2 as docs/mcp.md states it).
    advice: OnceLock<Option<String>>,
    /// The MCP servers of this tenant, one per tool mode (`mcp_http.rs`).
    pub(super) mcp: [OnceLock<crate::mcp::McpServer>; 4],
}

impl Tenant {
    fn open(data: &Path, id: &str, read_only: bool) -> Result<Tenant, Error> {
        let files = FileStore::new(data, id);
        // Read before the open, so the state is at least this new.
        let generation = files.head_generation().unwrap_or(0);
        let conn = Conn::open(data, id, read_only)?;
        let served = conn
            .served()
            .ok_or_else(|| Error::Store(format!("tenant \"{id}\" did not open")))?;
        Ok(Tenant {
            id: id.to_string(),
            files,
            conn: Mutex::new(conn),
            committing: AtomicUsize::new(0),
            published: RwLock::new(Published { generation, served }),
            advice: OnceLock::new(),
            mcp: Default::default(),
        })
    }

    /// The tenant id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    fn lock_conn(&self) -> MutexGuard<'_, Conn> {
        lock(&self.conn)
    }

    fn published(&self) -> Arc<Served> {
        self.published
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .served
            .clone()
    }

    /// Refreshes the connection to the store's head and publishes its state. The
    /// generation is read first: the state loaded is at least that new, so the next read
    /// refreshes again rather than miss a head that moved in between.
    fn publish(&self, conn: &mut Conn) -> Result<Arc<Served>, Error> {
        let generation = self.files.head_generation().unwrap_or(0);
        let served = conn.read()?;
        *self.published.write().unwrap_or_else(|p| p.into_inner()) = Published {
            generation,
            served: served.clone(),
        };
        Ok(served)
    }

    /// The state a read is served from: the published one, unless the store's head moved
    /// past it and no commit of this server is in progress (then the connection refreshes
    /// first, so a commit by another writer is visible to the next request).
    pub(crate) fn served(&self) -> Result<Arc<Served>, Error> {
        {
            let p = self.published.read().unwrap_or_else(|p| p.into_inner());
            if !self.files.moved_past(p.generation) {
                return Ok(p.served.clone());
            }
        }
        loop {
            if self.committing.load(Ordering::Acquire) > 0 {
                return Ok(self.published());
            }
            match self.conn.try_lock() {
                Ok(mut conn) => return self.publish(&mut conn),
                Err(TryLockError::Poisoned(p)) => return self.publish(&mut p.into_inner()),
                // Another read is refreshing: its state is the one to serve.
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    }

    /// Runs a read over the served state. When it met a text of a derived record that
    /// does not match its source hash, the connection compiles the state from the sources
    /// and the read runs once more: a bad derived record never fails a read.
    pub(crate) fn read<T>(&self, f: impl Fn(&Served) -> Result<T, Error>) -> Result<T, Error> {
        let s = self.served()?;
        match f(&s) {
            Err(_) if s.derived_failed() => {
                drop(s);
                let s = self.publish(&mut self.lock_conn())?;
                f(&s)
            }
            r => r,
        }
    }

    /// Runs `f` on the connection itself (source reads that may have to read and verify
    /// blobs), then publishes the connection's state.
    pub(crate) fn with_conn<T>(
        &self,
        f: impl FnOnce(&mut Conn) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut conn = self.lock_conn();
        let r = f(&mut conn);
        let _ = self.publish(&mut conn);
        r
    }

    /// Runs a commit on the connection: one at a time per tenant, reads served from the
    /// published state meanwhile, the new state published before the next read.
    pub(crate) fn commit<T>(&self, f: impl FnOnce(&mut Conn) -> T) -> T {
        self.committing.fetch_add(1, Ordering::AcqRel);
        let mut conn = self.lock_conn();
        let r = f(&mut conn);
        let _ = self.publish(&mut conn);
        self.committing.fetch_sub(1, Ordering::AcqRel);
        r
    }

    /// The advice sentence of the MCP manifest tool and resource (`None` if computing it
    /// failed).
    pub(crate) fn advice(&self, today: &str) -> Option<String> {
        self.advice
            .get_or_init(|| {
                let s = self.served().ok()?;
                manifest::manifest(s.model(), &self.id, None, today)
                    .ok()
                    .map(|m| tools::advice(&m))
            })
            .clone()
    }
}
