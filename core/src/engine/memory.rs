//! The memory store (engine.md §9.2.1): the reference store of the conformance suite and the
//! strictest one, with failure injection at every step.

use super::reach::HeadCheck;
use super::store::{Key, KeyInfo, Kind, Store, StoreError, SwapOutcome};
use std::collections::{BTreeMap, VecDeque};

/// What an injected swap failure does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapFault {
    /// The swap fails and the head does not move: [`SwapOutcome::Failed`].
    Fail,
    /// The swap reports [`SwapOutcome::Indeterminate`] and the head does not move.
    IndeterminateBefore,
    /// The swap happens, then reports [`SwapOutcome::Indeterminate`].
    IndeterminateAfter,
}

/// One injected failure. Faults are consumed in order as the matching operations happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The `n`-th `put` from now (0 = the next one) fails and stores nothing.
    Put(usize),
    /// The next `swapHead` fails as described.
    Swap(SwapFault),
    /// The next `readHead` fails.
    ReadHead,
    /// The next `getMany` fails.
    Get,
    /// The next `keys` fails.
    Keys,
    /// The next `remove` fails and removes nothing.
    Remove,
}

/// A plan of injected failures, shared by [`MemoryStore`] and [`FaultyStore`].
#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    puts: Vec<usize>,
    swaps: VecDeque<SwapFault>,
    read_head: usize,
    get: usize,
    keys: usize,
    remove: usize,
}

impl FaultPlan {
    /// Adds a fault.
    pub fn inject(&mut self, fault: Fault) {
        match fault {
            Fault::Put(n) => self.puts.push(n),
            Fault::Swap(s) => self.swaps.push_back(s),
            Fault::ReadHead => self.read_head += 1,
            Fault::Get => self.get += 1,
            Fault::Keys => self.keys += 1,
            Fault::Remove => self.remove += 1,
        }
    }

    /// Drops every pending fault.
    pub fn clear(&mut self) {
        *self = FaultPlan::default();
    }

    /// Whether no fault is pending.
    pub fn is_empty(&self) -> bool {
        self.puts.is_empty()
            && self.swaps.is_empty()
            && self.read_head + self.get + self.keys + self.remove == 0
    }

    fn take_put(&mut self) -> bool {
        let fail = self.puts.contains(&0);
        self.puts.retain(|&n| n != 0);
        for n in &mut self.puts {
            *n -= 1;
        }
        fail
    }

    fn take(counter: &mut usize) -> bool {
        if *counter > 0 {
            *counter -= 1;
            true
        } else {
            false
        }
    }
}

const INJECTED: &str = "injected store failure";

#[derive(Default, Clone)]
struct TenantData {
    head: Option<Vec<u8>>,
    records: BTreeMap<Key, (Vec<u8>, u64)>,
    /// What head checks found complete so far.
    reach: HeadCheck,
}

/// A store in memory. It is strict where a real store may be lenient:
///
/// - a `put` whose bytes do not match a content-addressed key is refused as corruption, and
///   so are different bytes under an existing non-derived key;
/// - a `swapHead` to a head that is not a valid head record, or that references any record
///   (revision, bundle record, source, baseline) never put, fails and leaves the head;
/// - put times come from a logical counter that every `put` advances: no clock.
#[derive(Default, Clone)]
pub struct MemoryStore {
    tenants: BTreeMap<String, TenantData>,
    clock: u64,
    faults: FaultPlan,
    check_heads: bool,
}

impl MemoryStore {
    /// An empty store, strict.
    pub fn new() -> MemoryStore {
        MemoryStore {
            check_heads: true,
            ..MemoryStore::default()
        }
    }

    /// The logical clock: the put time the next `put` gets. `gc`'s `now` for this store.
    pub fn now(&self) -> u64 {
        self.clock
    }

    /// Moves the logical clock forward.
    pub fn advance(&mut self, ticks: u64) {
        self.clock += ticks;
    }

    /// Injects a failure.
    pub fn inject(&mut self, fault: Fault) {
        self.faults.inject(fault);
    }

    /// The pending faults.
    pub fn faults(&mut self) -> &mut FaultPlan {
        &mut self.faults
    }

    /// Test access: the head bytes, without any fault.
    pub fn head(&self, tenant: &str) -> Option<Vec<u8>> {
        self.tenants.get(tenant).and_then(|t| t.head.clone())
    }

    /// Test access: every record of a tenant.
    pub fn records(&self, tenant: &str) -> BTreeMap<Key, Vec<u8>> {
        self.tenants
            .get(tenant)
            .map(|t| t.records.iter().map(|(k, v)| (*k, v.0.clone())).collect())
            .unwrap_or_default()
    }

    /// Test access: overwrites a record's bytes in place (simulated disk corruption).
    pub fn tamper(&mut self, tenant: &str, key: &Key, bytes: Vec<u8>) {
        let t = self.tenants.entry(tenant.to_string()).or_default();
        let time = t.records.get(key).map(|r| r.1).unwrap_or(0);
        t.records.insert(*key, (bytes, time));
        t.reach.forget();
    }

    /// Test access: drops a record (simulated loss).
    pub fn lose(&mut self, tenant: &str, key: &Key) {
        if let Some(t) = self.tenants.get_mut(tenant) {
            t.records.remove(key);
            t.reach.forget();
        }
    }

    /// Test access: sets the head bytes unchecked (another format, or corruption).
    pub fn set_head_raw(&mut self, tenant: &str, head: Option<Vec<u8>>) {
        self.tenants.entry(tenant.to_string()).or_default().head = head;
    }
}

impl Store for MemoryStore {
    fn read_head(&mut self, tenant: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if FaultPlan::take(&mut self.faults.read_head) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        Ok(self.head(tenant))
    }

    fn get_many(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        if FaultPlan::take(&mut self.faults.get) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        let t = self.tenants.get(tenant);
        Ok(keys
            .iter()
            .map(|k| t.and_then(|t| t.records.get(k)).map(|r| r.0.clone()))
            .collect())
    }

    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        if self.faults.take_put() {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        if !key.verifies(bytes) {
            return Err(StoreError::Corrupt(format!(
                "database corruption: {key} put with bytes of another digest"
            )));
        }
        let time = self.clock;
        self.clock += 1;
        let t = self.tenants.entry(tenant.to_string()).or_default();
        match t.records.get_mut(key) {
            Some(r) if r.0 != bytes && key.kind != Kind::Derived => Err(StoreError::Corrupt(
                format!("database corruption: {key} already holds different bytes"),
            )),
            Some(r) => {
                r.0 = bytes.to_vec();
                r.1 = time;
                Ok(())
            }
            None => {
                t.records.insert(*key, (bytes.to_vec(), time));
                Ok(())
            }
        }
    }

    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        let fault = self.faults.swaps.pop_front();
        if let Some(SwapFault::Fail) = fault {
            return SwapOutcome::Failed(INJECTED.into());
        }
        if let Some(SwapFault::IndeterminateBefore) = fault {
            return SwapOutcome::Indeterminate(INJECTED.into());
        }
        if self.head(tenant).as_deref() != expected {
            return SwapOutcome::Conflict;
        }
        let t = self.tenants.entry(tenant.to_string()).or_default();
        if self.check_heads {
            let records = &t.records;
            if let Err(m) = t
                .reach
                .check(new, |k| records.get(k).map(|r| r.0.as_slice()))
            {
                return SwapOutcome::Failed(m);
            }
        }
        t.head = Some(new.to_vec());
        match fault {
            Some(SwapFault::IndeterminateAfter) => SwapOutcome::Indeterminate(INJECTED.into()),
            _ => SwapOutcome::Swapped,
        }
    }

    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError> {
        if FaultPlan::take(&mut self.faults.keys) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        Ok(self
            .tenants
            .get(tenant)
            .map(|t| {
                t.records
                    .iter()
                    .map(|(k, (b, time))| KeyInfo {
                        key: *k,
                        put_time: *time,
                        size: b.len() as u64,
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        if FaultPlan::take(&mut self.faults.remove) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        let mut removed = Vec::new();
        if let Some(t) = self.tenants.get_mut(tenant) {
            for k in keys {
                if k.kind == Kind::Recovery {
                    continue;
                }
                if t.records.get(k).is_some_and(|r| r.1 < before) {
                    t.records.remove(k);
                    removed.push(*k);
                }
            }
            if !removed.is_empty() {
                t.reach.forget();
            }
        }
        Ok(removed)
    }
}

/// Wraps any store with a [`FaultPlan`], so that the conformance suite can inject failures
/// into a real store too. An `IndeterminateAfter` swap really swaps, then reports
/// indeterminate.
pub struct FaultyStore<S> {
    /// The wrapped store.
    pub inner: S,
    /// The pending faults.
    pub faults: FaultPlan,
}

impl<S: Store> FaultyStore<S> {
    /// Wraps `inner` with no faults.
    pub fn new(inner: S) -> FaultyStore<S> {
        FaultyStore {
            inner,
            faults: FaultPlan::default(),
        }
    }
}

impl<S: Store> Store for FaultyStore<S> {
    fn read_head(&mut self, tenant: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if FaultPlan::take(&mut self.faults.read_head) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        self.inner.read_head(tenant)
    }

    fn get_many(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        if FaultPlan::take(&mut self.faults.get) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        self.inner.get_many(tenant, keys)
    }

    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        if self.faults.take_put() {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        self.inner.put(tenant, key, bytes)
    }

    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        match self.faults.swaps.pop_front() {
            Some(SwapFault::Fail) => SwapOutcome::Failed(INJECTED.into()),
            Some(SwapFault::IndeterminateBefore) => SwapOutcome::Indeterminate(INJECTED.into()),
            Some(SwapFault::IndeterminateAfter) => {
                match self.inner.swap_head(tenant, expected, new) {
                    SwapOutcome::Swapped => SwapOutcome::Indeterminate(INJECTED.into()),
                    other => other,
                }
            }
            None => self.inner.swap_head(tenant, expected, new),
        }
    }

    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError> {
        if FaultPlan::take(&mut self.faults.keys) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        self.inner.keys(tenant)
    }

    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        if FaultPlan::take(&mut self.faults.remove) {
            return Err(StoreError::Failed(INJECTED.into()));
        }
        self.inner.remove(tenant, keys, before)
    }
}
