//! The server's tenants (docs/http.md, "Concurrency"): one `langonrock::Connection` per
//! tenant of the data root (a files directory, or with `--store` a PostgreSQL database,
//! docs/postgres.md), opened on first use and shared by every request.
//!
//! The connection gives the concurrency rules (reads answered from the last published
//! state while a commit runs, commits serialized per tenant, a refresh before each read so
//! commits by other writers on the data root are seen; over a database, the change feed
//! and the half-second head poll of docs/postgres.md); this module only keeps the map, a
//! bound on it, and per tenant what the MCP endpoint builds once (the advice sentence and
//! the servers of each tool mode). Opening and every connection call block: the server
//! calls them on tokio's blocking pool. [`Tenants::open_tenant`] is the one place a
//! tenant's store is opened.

use crate::mcp::{McpServer, Mode, TenantBackend};
use langonrock::files::FileStore;
use langonrock::{Connection, Options, Root};
use langonrock_core::engine::records::HeadRecord;
use langonrock_core::engine::Served;
use langonrock_core::{validate, Error};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// How many tenants stay open at once. Opening one more closes the least recently used
/// tenant that no request holds (it reopens on its next request), so requests naming ever
/// new tenants cannot grow the server without bound.
pub(crate) const MAX_OPEN_TENANTS: usize = 1_024;

/// How long a tenant's commits must pause before its derived record is written, and at
/// most how long after the first commit it waits for (docs/http.md §7): the encoding is a
/// burst of CPU that ran beside nearly every commit of a writer committing once a second
/// (with a 5 s pause, still after most commits of one writer going round four tenants).
pub(crate) const DERIVED_PAUSE_MS: u64 = 30_000;
pub(crate) const DERIVED_LIMIT_MS: u64 = 300_000;

/// Every tenant of one data root.
pub(crate) struct Tenants {
    root: Root,
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
    /// The tenants of `root`; with `read_only`, no connection ever writes.
    pub(crate) fn new(root: Root, read_only: bool) -> Tenants {
        Tenants {
            root,
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
        // Closing a tenant puts its pending derived record: not under the map's lock.
        drop(evicted);
        slot.used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        let mut open = lock(&slot.open);
        if let Some(t) = &*open {
            return Ok(t.clone());
        }
        let t = Arc::new(self.open_tenant(&id)?);
        *open = Some(t.clone());
        Ok(t)
    }

    /// Opens the tenant `id` (validated) on the root's store. Over a database the
    /// connection follows the change feed, so another replica's commit is seen on the next
    /// request after its notification, and within half a second without one. When it
    /// opened from the derived record, a thread readies it (`Connection::warm`: the texts'
    /// check, the incremental linker, the index's posting lists), on either store: over a
    /// database that work would otherwise fall on the first request after another
    /// replica's commit (docs/postgres.md, "Replicas"), and on both it would fall on the
    /// first commit, while until the texts are checked every read checks the ones it
    /// returns first (a lookup of each under a lock shared by the tenant's reads;
    /// docs/http.md §7).
    fn open_tenant(&self, id: &str) -> Result<Tenant, Error> {
        let conn = Arc::new(
            Options::default()
                .read_only(self.read_only)
                .serves_searches(true)
                .derived_wait(DERIVED_PAUSE_MS, DERIVED_LIMIT_MS)
                .open_root(&self.root, id)?,
        );
        conn.follow_changes();
        if conn.warm_pays() {
            let c = conn.clone();
            let _ = std::thread::Builder::new()
                .name("langonrock-warm".into())
                .spawn(move || {
                    let _ = c.warm();
                });
        }
        Ok(Tenant {
            conn,
            files: self.root.files().map(|data| FileStore::new(data, id)),
            seen: AtomicU64::new(0),
            advice: OnceLock::new(),
            mcp: Default::default(),
        })
    }

    /// The tenant `id` if it is open already (never opens one: no store IO).
    pub(crate) fn open_now(&self, id: &str) -> Option<Arc<Tenant>> {
        let id = validate::tenant_id(id).ok()?;
        let slot = lock(&self.slots).get(&id)?.clone();
        let open = slot.open.try_lock().ok()?;
        let t = open.as_ref()?.clone();
        slot.used
            .store(self.tick.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Some(t)
    }

    /// Closes every tenant: waits for commits in progress and lets each connection put its
    /// pending derived record.
    pub(crate) fn close(&self) {
        let slots: Vec<Arc<Slot>> = lock(&self.slots).drain().map(|(_, s)| s).collect();
        for slot in slots {
            if let Some(t) = lock(&slot.open).take() {
                t.conn.finish_derived();
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

/// One open tenant.
pub(crate) struct Tenant {
    /// The tenant's connection.
    pub(crate) conn: Arc<Connection>,
    /// The tenant's files, for the head check of the reads' fast path (`None` over a
    /// database, whose connection keeps that check itself).
    files: Option<FileStore>,
    /// One more than the newest head generation whose revision the connection has
    /// published (0: none known): while the store holds no newer generation, a read is
    /// answered from the published state without a refresh.
    seen: AtomicU64,
    /// The MCP advice sentence, computed from the whole manifest on first use and fixed
    /// for the server's lifetime (docs/mcp.md).
    advice: OnceLock<Option<String>>,
    /// The MCP servers of this tenant, one per tool mode.
    mcp: [OnceLock<McpServer>; 4],
}

impl Tenant {
    /// The tenant id.
    pub(crate) fn id(&self) -> &str {
        self.conn.tenant()
    }

    /// The published state, when the store's head is still the generation whose revision
    /// the connection last published: one `stat`, since every commit links the next
    /// generation's name first. Over a database: while the connection's last read of the
    /// head is fresh (`Connection::head_is_fresh`). No refresh, and no lock shared with
    /// other reads. While a commit of this server is in flight, the published state as well
    /// (the connection answers reads from it then).
    pub(crate) fn current(&self) -> Option<Arc<Served>> {
        let Some(files) = &self.files else {
            return self.conn.head_is_fresh().then(|| self.conn.served())?;
        };
        let seen = self.seen.load(Ordering::Acquire);
        if seen == 0 {
            return None;
        }
        if files.moved_past(seen - 1) {
            // While this server commits (its next generation is linked first), the
            // connection answers reads from the published state: so does this, on the
            // async worker. Sent to the blocking pool instead, every read queued there
            // beside the commit, which then took longer on the shared cores.
            return self.conn.is_busy().then(|| self.conn.served())?;
        }
        self.conn.served()
    }

    /// After a read through the connection: remembers the generation of the head read just
    /// before it, when the state the connection now publishes is that head's revision.
    fn note(&self, head: Option<Option<(u64, Vec<u8>)>>) {
        let (Some(head), Some(s)) = (head, self.conn.served()) else {
            return;
        };
        let published = match &head {
            None => s.revision_digest().is_none().then_some(0),
            Some((g, bytes)) => HeadRecord::decode(bytes)
                .ok()
                .flatten()
                .filter(|h| Some(h.revision) == s.revision_digest())
                .map(|_| *g),
        };
        if let Some(g) = published {
            self.seen.fetch_max(g + 1, Ordering::AcqRel);
        }
    }

    /// Runs a read over the served state: on the published state when the head has not
    /// moved ([`Tenant::current`]), else through the connection, which refreshes first (or,
    /// while a commit is in flight, answers from the published state).
    pub(crate) fn read<T: 'static>(
        &self,
        mut f: impl FnMut(&Served) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if let Some(s) = self.current() {
            match f(&s) {
                // A text of a derived record failed its check: the connection's read
                // recompiles and runs it again.
                Err(_) if s.derived_failed() => {}
                r => return r,
            }
        }
        let head = self.files.as_ref().and_then(|f| f.read_head_at().ok());
        let r = self.conn.with_read(&mut f);
        self.note(head);
        r
    }

    /// The MCP server of this tenant in `mode` (the stdio server's, over this connection),
    /// built once per mode.
    pub(crate) fn mcp_server(&self, mode: Mode) -> McpServer {
        let slot = usize::from(mode.database_tools) * 2 + usize::from(mode.read_only);
        self.mcp[slot]
            .get_or_init(|| {
                let advice = self
                    .advice
                    .get_or_init(|| crate::mcp::advice_for(&self.conn))
                    .clone();
                let backend = Arc::new(TenantBackend::new_shared(self.conn.clone()));
                McpServer::new(backend, mode, advice)
            })
            .clone()
    }
}
