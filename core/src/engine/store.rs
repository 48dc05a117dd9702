//! The persistence contract between the engine and a host's store (engine.md §8, §9).
//!
//! Everything here is plain data. The engine never calls a store: every operation that
//! touches the store is an [`Op`](super::Op), a step machine that answers [`Step::Need`]
//! with what it needs next and is resumed with the store's [`Answer`]. A synchronous Rust
//! host drives it with [`run`] against a [`Store`]; an asynchronous host (wasm, JS stores)
//! writes the same loop with `await` around each store call, so the core never awaits.
//!
//! A commit is a [`Need::Commit`] step: its [`PreparedCommit`] is the *prepare* of engine.md
//! §8.2 (the expected head, the new head and the records to put), the host *stores* it
//! (puts every record, then swaps the head), and resuming the op with
//! [`Answer::Outcome`] is the *acknowledge* of §8.4.

use crate::bytes::Bytes;
use crate::error::{Error, Result};
use std::fmt;

/// A SHA-256 digest. Written as 64 lowercase hex characters everywhere.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(crate::hash::sha256(bytes))
    }

    /// Parses 64 lowercase hex characters (`^[a-f0-9]{64}$`); anything else is `None`.
    pub fn from_hex(s: &str) -> Option<Digest> {
        let b = s.as_bytes();
        if b.len() != 64 {
            return None;
        }
        let mut d = [0u8; 32];
        for i in 0..32 {
            let hi = hex_val(b[2 * i])?;
            let lo = hex_val(b[2 * i + 1])?;
            d[i] = hi << 4 | lo;
        }
        Some(Digest(d))
    }

    /// The 64 lowercase hex characters.
    pub fn to_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(64);
        for &x in &self.0 {
            s.push(HEX[(x >> 4) as usize] as char);
            s.push(HEX[(x & 15) as usize] as char);
        }
        s
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Digest, D::Error> {
        let s = String::deserialize(d)?;
        Digest::from_hex(&s)
            .ok_or_else(|| serde::de::Error::custom("expected 64 lowercase hex characters"))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

/// The kind of a stored record (engine.md §9.1). Serialised as its name.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A document's exact UTF-8 bytes, keyed by its source hash.
    Source,
    /// A revision record, keyed by the revision id (the SHA-256 of its bytes).
    Revision,
    /// Any other content-addressed record (a bundle list, an import baseline).
    Record,
    /// A derived record (an encoded model and index). Keyed by a snapshot id and the compiler
    /// version, not by its bytes: a `put` replaces it. Its header carries the SHA-256 of its
    /// payload.
    Derived,
    /// A head record kept by `repair` (engine.md §11.4), keyed by the SHA-256 of its bytes.
    /// Collection never removes it.
    Recovery,
}

impl Kind {
    /// The kind's name in keys (`<kind>/<hex>`): `source`, `revision`, `record`, `derived`
    /// or `recovery`. The files layout's folders are plural (`sources/`, …:
    /// [`crate::layout::kind_dir`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Revision => "revision",
            Kind::Record => "record",
            Kind::Derived => "derived",
            Kind::Recovery => "recovery",
        }
    }

    /// Parses a kind name.
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "source" => Kind::Source,
            "revision" => Kind::Revision,
            "record" => Kind::Record,
            "derived" => Kind::Derived,
            "recovery" => Kind::Recovery,
            _ => return None,
        })
    }

    /// Whether a record of this kind is addressed by the SHA-256 of its bytes.
    pub fn is_content_addressed(self) -> bool {
        !matches!(self, Kind::Derived)
    }
}

/// A record key: a kind plus a digest. Written `<kind>/<64-hex>` (for example
/// `source/9f86…`; its file in the files layout is [`crate::layout::record_path`],
/// `sources/9f86…`). Serialised as `{kind, digest}`, the JS stores' shape.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Key {
    /// The kind.
    pub kind: Kind,
    /// For content-addressed kinds, the SHA-256 of the record's bytes.
    pub digest: Digest,
}

impl Key {
    /// A key of `kind` and `digest`.
    pub fn new(kind: Kind, digest: Digest) -> Key {
        Key { kind, digest }
    }

    /// The content-addressed key of `bytes` (any kind but `Derived`).
    pub fn of(kind: Kind, bytes: &[u8]) -> Key {
        Key {
            kind,
            digest: Digest::of(bytes),
        }
    }

    /// Whether `bytes` verify against this key. A derived record always verifies here (its
    /// payload digest is checked by the engine when it loads it).
    pub fn verifies(&self, bytes: &[u8]) -> bool {
        !self.kind.is_content_addressed() || Digest::of(bytes) == self.digest
    }

    /// Parses `<kind>/<64-hex>`.
    pub fn parse(s: &str) -> Option<Key> {
        let (k, d) = s.split_once('/')?;
        Some(Key {
            kind: Kind::parse(k)?,
            digest: Digest::from_hex(d)?,
        })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind.as_str(), self.digest)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}

/// One entry of [`Store::keys`]. Serialised as `{key, putTime, size}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    /// The record's key.
    pub key: Key,
    /// When the record was last put (written, or refreshed by an identical `put`), in the
    /// store's time unit: milliseconds since the Unix epoch on files and IndexedDB, a logical
    /// counter in [`MemoryStore`](super::MemoryStore). `gc`'s `now` uses the same unit.
    pub put_time: u64,
    /// The record's size in bytes.
    pub size: u64,
}

/// A store failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The operation failed and changed nothing (IO error, quota, …). The engine reports it
    /// as a `STORE` error with this message.
    Failed(String),
    /// The store found its data inconsistent, for example different bytes `put` under an
    /// existing content-addressed key. The message starts `database corruption: `.
    Corrupt(String),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        match e {
            StoreError::Failed(m) => Error::Store(m),
            StoreError::Corrupt(m) => Error::Corrupt(m),
        }
    }
}

/// The outcome of [`Store::swap_head`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SwapOutcome {
    /// The head was `expected` and is now `new`.
    Swapped,
    /// The head was not `expected`; nothing changed.
    Conflict,
    /// The swap failed and the head certainly did not move.
    Failed(String),
    /// The swap failed at a point where the head may have moved.
    Indeterminate(String),
}

/// The persistence contract for Rust hosts (engine.md §9.1). JS stores implement the same
/// operations returning promises. Every operation is scoped to one tenant, named by its
/// lower-cased id.
///
/// A store holds, per tenant, a set of records under [`Key`]s and one head record (or none).
/// It never interprets records (the strict [`MemoryStore`](super::MemoryStore) aside, which
/// checks heads for the test suite).
pub trait Store {
    /// The head record's bytes, or `None` for an empty tenant (no head). A tenant written in
    /// another format (for example the reference's `HEAD` file) is reported by returning
    /// that data's bytes: the engine refuses anything that is not its own head format.
    fn read_head(&mut self, tenant: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// The bytes of each record, in the order of `keys`, `None` for a missing one. The store
    /// need not verify digests: the engine verifies every content-addressed record it reads.
    fn get_many(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError>;

    /// [`Store::get_many`] as shared bytes: a store that can hand out ranges of a buffer it
    /// holds (a mapped file) without copying them does so here; the default copies nothing
    /// more than `get_many` does.
    fn get_shared(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Bytes>>, StoreError> {
        Ok(self
            .get_many(tenant, keys)?
            .into_iter()
            .map(|b| b.map(Bytes::from))
            .collect())
    }

    /// One record's bytes, or `None`.
    fn get(&mut self, tenant: &str, key: &Key) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .get_many(tenant, std::slice::from_ref(key))?
            .pop()
            .flatten())
    }

    /// Stores a record durably. Idempotent: an existing key with the same bytes is a no-op
    /// except that it refreshes the record's put time. Different bytes under an existing key
    /// are a [`StoreError::Corrupt`], except for [`Kind::Derived`], which a put replaces. The
    /// record must be durable before this returns, so before any head that references it.
    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError>;

    /// Puts several records, with the contract of [`Store::put`] for each: all are durable
    /// when it returns `Ok`. A store may batch the work (one flush for many files); the
    /// default puts them one by one.
    fn put_many(&mut self, tenant: &str, records: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        for (key, bytes) in records {
            self.put(tenant, key, bytes)?;
        }
        Ok(())
    }

    /// Atomically replaces the head with `new` if it still equals `expected` byte for byte
    /// (`None`: there is no head). Reports [`SwapOutcome::Swapped`], [`SwapOutcome::Conflict`]
    /// when the head is not `expected`, [`SwapOutcome::Failed`] when it certainly did not
    /// move, and [`SwapOutcome::Indeterminate`] when a failure happened after the head may
    /// have moved. A store creates whatever a tenant needs on its first swap.
    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome;

    /// Stores a prepared commit (engine.md §8.3): puts every record, then, only if all puts
    /// succeeded, swaps the head. A store that can do both in one transaction (PostgreSQL)
    /// overrides it; the contract's order, records durable before the head, then holds
    /// trivially.
    fn commit(&mut self, tenant: &str, commit: &PreparedCommit) -> CommitOutcome {
        if let Err(e) = self.put_many(tenant, &commit.records) {
            return CommitOutcome::Failed(e);
        }
        self.swap_head(tenant, commit.expected.as_deref(), &commit.head)
            .into()
    }

    /// Every record of the tenant with its put time and size, for collection only. Recovery
    /// records may be listed; the engine never removes them.
    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError>;

    /// Removes each listed record whose put time is still before `before`, atomically against
    /// a concurrent `put` of the same key (a refreshed record stays). Returns the keys it
    /// removed. A store may also drop its own leftovers older than `before` here (staging
    /// files, collected head generations).
    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError>;
}

/// A boxed store is a store (for `Box<dyn Store>`).
impl<S: Store + ?Sized> Store for Box<S> {
    fn read_head(&mut self, tenant: &str) -> Result<Option<Vec<u8>>, StoreError> {
        (**self).read_head(tenant)
    }
    fn get_many(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        (**self).get_many(tenant, keys)
    }
    fn get_shared(&mut self, tenant: &str, keys: &[Key]) -> Result<Vec<Option<Bytes>>, StoreError> {
        (**self).get_shared(tenant, keys)
    }
    fn put(&mut self, tenant: &str, key: &Key, bytes: &[u8]) -> Result<(), StoreError> {
        (**self).put(tenant, key, bytes)
    }
    fn put_many(&mut self, tenant: &str, records: &[(Key, Vec<u8>)]) -> Result<(), StoreError> {
        (**self).put_many(tenant, records)
    }
    fn swap_head(&mut self, tenant: &str, expected: Option<&[u8]>, new: &[u8]) -> SwapOutcome {
        (**self).swap_head(tenant, expected, new)
    }
    fn commit(&mut self, tenant: &str, commit: &PreparedCommit) -> CommitOutcome {
        (**self).commit(tenant, commit)
    }
    fn keys(&mut self, tenant: &str) -> Result<Vec<KeyInfo>, StoreError> {
        (**self).keys(tenant)
    }
    fn remove(&mut self, tenant: &str, keys: &[Key], before: u64) -> Result<Vec<Key>, StoreError> {
        (**self).remove(tenant, keys, before)
    }
}

/// What a step machine needs from the store before it can go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// Call `readHead()`; answer [`Answer::Head`].
    Head,
    /// Call `getMany(keys)`; answer [`Answer::Records`] in the same order.
    Records(Vec<Key>),
    /// Put every record of the prepared commit (in order), then, only if all puts succeeded,
    /// `swapHead(expected, head)`; answer [`Answer::Outcome`]. A failed put is
    /// [`CommitOutcome::Failed`] (the head did not move).
    Commit(PreparedCommit),
    /// Call `keys()`; answer [`Answer::Keys`].
    Keys,
    /// Call `remove(keys, before)`; answer [`Answer::Removed`].
    Remove {
        /// The records to remove.
        keys: Vec<Key>,
        /// Remove only records whose put time is still before this.
        before: u64,
    },
}

/// A prepared commit (engine.md §8.2): plain data for the host to store.
#[derive(Clone, PartialEq, Eq)]
pub struct PreparedCommit {
    /// The head record the store must still hold (`None`: no head).
    pub expected: Option<Vec<u8>>,
    /// The new head record.
    pub head: Vec<u8>,
    /// The records to put before the swap: every record the new revision reaches and the
    /// current head does not. A put of an existing record refreshes its put time.
    pub records: Vec<(Key, Vec<u8>)>,
    /// The revision the new head names (the id an indeterminate outcome reports).
    pub revision: Digest,
}

impl fmt::Debug for PreparedCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedCommit")
            .field(
                "expected",
                &self
                    .expected
                    .as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned()),
            )
            .field("head", &String::from_utf8_lossy(&self.head))
            .field(
                "records",
                &self.records.iter().map(|r| r.0).collect::<Vec<_>>(),
            )
            .field("revision", &self.revision)
            .finish()
    }
}

/// The host's report of a commit (engine.md §8.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitOutcome {
    /// Every record was put and the head swapped. The engine publishes.
    Committed,
    /// The head was not the expected one. The engine discards; the caller gets `CONFLICT`
    /// `database changed: re-read the revision and document hashes`.
    Conflict,
    /// A put or the swap failed and the head certainly did not move. The engine discards;
    /// the caller gets the error (`STORE`, or `CORRUPT` for a conflicting put).
    Failed(StoreError),
    /// The head may have moved. The engine discards and must reload before its next
    /// operation; the caller gets `INDETERMINATE_COMMIT`.
    Indeterminate,
}

impl From<SwapOutcome> for CommitOutcome {
    fn from(s: SwapOutcome) -> CommitOutcome {
        match s {
            SwapOutcome::Swapped => CommitOutcome::Committed,
            SwapOutcome::Conflict => CommitOutcome::Conflict,
            SwapOutcome::Failed(m) => CommitOutcome::Failed(StoreError::Failed(m)),
            SwapOutcome::Indeterminate(_) => CommitOutcome::Indeterminate,
        }
    }
}

/// The host's answer to a [`Need`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The head record's bytes, or `None`.
    Head(Option<Vec<u8>>),
    /// The records' bytes in the order asked, `None` for a missing one.
    Records(Vec<Option<Vec<u8>>>),
    /// The same as shared bytes ([`Store::get_shared`]).
    Shared(Vec<Option<Bytes>>),
    /// The commit's outcome.
    Outcome(CommitOutcome),
    /// The listing of `keys()`.
    Keys(Vec<KeyInfo>),
    /// The keys `remove` removed.
    Removed(Vec<Key>),
    /// A read (`readHead`, `getMany`, `keys`, `remove`) failed and changed nothing; the op
    /// ends with this error.
    Failed(StoreError),
}

/// One step of an operation.
#[derive(Debug)]
pub enum Step<T> {
    /// The op waits for the store.
    Need(Need),
    /// The op finished.
    Done(T),
}

/// Runs one operation to its end against a synchronous store: the reference driver, and
/// what every Rust host uses. An async host writes the same loop.
pub fn run<T: 'static>(
    engine: &mut super::Engine,
    store: &mut dyn Store,
    mut op: super::Op<T>,
) -> Result<T> {
    let tenant = engine.tenant().to_string();
    let mut answer = None;
    loop {
        match op.resume(engine, answer.take())? {
            Step::Done(t) => return Ok(t),
            Step::Need(need) => answer = Some(serve(store, &tenant, need)),
        }
    }
}

/// Performs one [`Need`] against a synchronous store and returns the answer.
pub fn serve(store: &mut dyn Store, tenant: &str, need: Need) -> Answer {
    match need {
        Need::Head => match store.read_head(tenant) {
            Ok(h) => Answer::Head(h),
            Err(e) => Answer::Failed(e),
        },
        Need::Records(keys) => match store.get_shared(tenant, &keys) {
            Ok(v) => Answer::Shared(v),
            Err(e) => Answer::Failed(e),
        },
        Need::Commit(p) => Answer::Outcome(store.commit(tenant, &p)),
        Need::Keys => match store.keys(tenant) {
            Ok(k) => Answer::Keys(k),
            Err(e) => Answer::Failed(e),
        },
        Need::Remove { keys, before } => match store.remove(tenant, &keys, before) {
            Ok(k) => Answer::Removed(k),
            Err(e) => Answer::Failed(e),
        },
    }
}
