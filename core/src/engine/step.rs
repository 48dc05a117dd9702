//! The step machinery of every engine operation: [`Op`], the step machine a host resumes
//! with each store answer, and the context ([`Ctx`]) of what an op has fetched so far.
//!
//! An op body is a function of the engine and its context. When it lacks a record it stops
//! with a [`Need`]; once the host answers, it runs again from the start with more in hand.

use super::store::{Answer, CommitOutcome, Digest, Key, KeyInfo, Kind, Need, PreparedCommit, Step};
use super::Engine;
use crate::bytes::Bytes;
use crate::error::{Error, Result};
use rustc_hash::FxHashMap as HashMap;

/// Why an op body stopped: it needs the store, or it failed.
pub(crate) enum Flow {
    Need(Need),
    Fail(Error),
}

impl From<Error> for Flow {
    fn from(e: Error) -> Flow {
        Flow::Fail(e)
    }
}

pub(crate) type Flowing<T> = std::result::Result<T, Flow>;

/// What an op body produced.
pub(crate) enum Progress<T> {
    Done(T),
    /// A prepared commit, with the result to return once it is committed. Without one, the
    /// body runs again after the commit (with `Ctx::commits` raised) to go on.
    Commit(PreparedCommit, Option<T>),
}

#[derive(Clone, Debug)]
pub(super) enum Fetched {
    Ok(Bytes),
    Missing,
    Mismatch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asked {
    Nothing,
    Head,
    Records,
    Commit,
    Keys,
    Remove,
}

/// What an op has fetched so far.
pub(crate) struct Ctx {
    head: Option<Option<Vec<u8>>>,
    pub(super) records: HashMap<Key, Fetched>,
    keys: Option<Vec<KeyInfo>>,
    removed: Option<Vec<Key>>,
    /// How many of this op's commits were acknowledged as committed.
    pub(super) commits: usize,
    retried: bool,
    asked: Asked,
    asked_keys: Vec<Key>,
    /// The derived records this op already tried (decoded or not), so a re-run does not.
    pub(super) derived_tried: std::collections::HashSet<Key>,
    /// Whether this op loaded an older revision's derived record as the base it applies the
    /// head's difference to.
    pub(super) base_loaded: bool,
    /// The derived record this op opened and is fetching the texts of.
    pub(super) derived_open: Option<(Key, super::derived::Opened)>,
    /// The source records of that record's documents ([`Ctx::need_sources`]), kept apart
    /// from `records`.
    pub(super) sources: Option<Sources>,
    /// Whether the records asked for are [`Ctx::sources`]'s.
    asked_sources: bool,
}

/// The source records of a derived record's documents, fetched in key order and kept in a
/// list rather than the table of records: at 20,000 documents the table's inserts and
/// lookups were a few milliseconds of an open's critical path (docs/benchmarks.md).
pub(crate) struct Sources {
    /// Each document's key, as its position in `keys`.
    of_doc: Vec<u32>,
    /// The keys asked for: sorted, without repeats.
    keys: Vec<Key>,
    /// What the store handed out for each key, once it answered.
    got: Option<Vec<Option<Bytes>>>,
}

impl Sources {
    /// Document `i`'s source record as the store handed it out (unchecked), when its hash
    /// is `hash`.
    pub(super) fn get(&self, i: usize, hash: &Digest) -> Option<Bytes> {
        let k = *self.of_doc.get(i)? as usize;
        if self.keys[k].digest != *hash {
            return None;
        }
        self.got.as_ref()?.get(k)?.clone()
    }
}

/// Keys' order (kind, then digest bytes), the first eight digest bytes compared as one
/// number before the rest.
fn key_order(a: &Key, b: &Key) -> std::cmp::Ordering {
    let head = |k: &Key| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&k.digest.0[..8]);
        (k.kind, u64::from_be_bytes(b))
    };
    head(a).cmp(&head(b)).then_with(|| a.cmp(b))
}

impl Ctx {
    fn new() -> Ctx {
        Ctx {
            derived_tried: Default::default(),
            base_loaded: false,
            derived_open: None,
            sources: None,
            asked_sources: false,
            head: None,
            records: HashMap::default(),
            keys: None,
            removed: None,
            commits: 0,
            retried: false,
            asked: Asked::Nothing,
            asked_keys: Vec::new(),
        }
    }

    /// The store's head as this op read it.
    pub(crate) fn head(&self) -> Flowing<Option<Vec<u8>>> {
        match &self.head {
            Some(h) => Ok(h.clone()),
            None => Err(Flow::Need(Need::Head)),
        }
    }

    /// Forgets the head, so that the op reads it again.
    pub(crate) fn forget_head(&mut self) {
        self.head = None;
    }

    /// The keys not fetched yet, sorted and without repeats. The table is keyed by digests
    /// with FxHash (one multiply per word): a lookup is a few instructions where SipHash
    /// took a hundred, and an op that opens a derived record asks about every source.
    fn absent(&self, keys: &[Key]) -> Vec<Key> {
        let mut out: Vec<Key> = keys
            .iter()
            .filter(|k| !self.records.contains_key(k))
            .copied()
            .collect();
        // Equal keys are identical, so the unstable sort gives the same order as a stable
        // one.
        out.sort_unstable_by(key_order);
        out.dedup();
        out
    }

    /// Ensures the source records of documents with these `hashes` are fetched, unchecked
    /// (what the store handed out is kept as it is, for a caller that checks it itself,
    /// later), into [`Ctx::sources`] rather than the table of records.
    pub(crate) fn need_sources(&mut self, hashes: &[Digest]) -> Flowing<()> {
        if self
            .sources
            .as_ref()
            .is_some_and(|s| s.got.is_some() && s.of_doc.len() == hashes.len())
        {
            return Ok(());
        }
        let mut order: Vec<(Key, u32)> = hashes
            .iter()
            .enumerate()
            .map(|(i, h)| (Key::new(Kind::Source, *h), i as u32))
            .collect();
        order.sort_unstable_by(|a, b| key_order(&a.0, &b.0).then(a.1.cmp(&b.1)));
        let mut keys: Vec<Key> = Vec::with_capacity(order.len());
        let mut of_doc = vec![0u32; hashes.len()];
        for (k, i) in order {
            if keys.last() != Some(&k) {
                keys.push(k);
            }
            of_doc[i as usize] = (keys.len() - 1) as u32;
        }
        self.sources = Some(Sources {
            of_doc,
            keys: keys.clone(),
            got: None,
        });
        self.asked_sources = true;
        Err(Flow::Need(Need::Records(keys)))
    }

    /// Ensures every key is fetched and verified. A missing record makes the op re-read the
    /// head and run again once (engine.md §9.1 rule 2) before it is reported as corruption.
    pub(crate) fn need(&mut self, keys: &[Key]) -> Flowing<()> {
        let absent = self.absent(keys);
        if !absent.is_empty() {
            return Err(Flow::Need(Need::Records(absent)));
        }
        for k in keys {
            match &self.records[k] {
                Fetched::Ok(_) => {}
                Fetched::Mismatch => {
                    return Err(Error::corrupt(format!("{k} does not match its digest")).into())
                }
                Fetched::Missing => {
                    if !self.retried {
                        self.retried = true;
                        self.head = None;
                        self.records.retain(|_, v| !matches!(v, Fetched::Missing));
                        return Err(Flow::Need(Need::Head));
                    }
                    return Err(Error::corrupt(format!("{k} is missing")).into());
                }
            }
        }
        Ok(())
    }

    /// Ensures every key is fetched, without judging what came back.
    pub(crate) fn need_lenient(&mut self, keys: &[Key]) -> Flowing<()> {
        let absent = self.absent(keys);
        if absent.is_empty() {
            Ok(())
        } else {
            Err(Flow::Need(Need::Records(absent)))
        }
    }

    /// A fetched record's bytes (after [`Ctx::need`]).
    pub(crate) fn bytes(&self, key: &Key) -> &[u8] {
        match self.records.get(key) {
            Some(Fetched::Ok(b)) => b,
            _ => &[],
        }
    }

    /// A fetched record's shared bytes: `Ok(bytes)`, or the corruption message naming it.
    pub(crate) fn check_shared(&self, key: &Key) -> std::result::Result<Bytes, String> {
        match self.records.get(key) {
            Some(Fetched::Ok(b)) => Ok(b.clone()),
            Some(Fetched::Mismatch) => Err(format!(
                "database corruption: {key} does not match its digest"
            )),
            _ => Err(format!("database corruption: {key} is missing")),
        }
    }

    /// A fetched record's state: `Ok(bytes)`, or the corruption message naming it.
    pub(crate) fn check(&self, key: &Key) -> std::result::Result<&[u8], String> {
        match self.records.get(key) {
            Some(Fetched::Ok(b)) => Ok(b),
            Some(Fetched::Mismatch) => Err(format!(
                "database corruption: {key} does not match its digest"
            )),
            _ => Err(format!("database corruption: {key} is missing")),
        }
    }

    fn take_records(&mut self, v: Vec<Option<Bytes>>) {
        if std::mem::take(&mut self.asked_sources) {
            self.asked_keys.clear();
            if let Some(s) = &mut self.sources {
                s.got = Some(v);
            }
            return;
        }
        self.records.reserve(v.len());
        for (k, b) in std::mem::take(&mut self.asked_keys).into_iter().zip(v) {
            let f = match b {
                None => Fetched::Missing,
                Some(b) if k.verifies(&b) => Fetched::Ok(b),
                Some(_) => Fetched::Mismatch,
            };
            self.records.insert(k, f);
        }
    }

    pub(crate) fn keys(&self) -> Flowing<&[KeyInfo]> {
        match &self.keys {
            Some(k) => Ok(k),
            None => Err(Flow::Need(Need::Keys)),
        }
    }

    pub(crate) fn removed(&self, keys: Vec<Key>, before: u64) -> Flowing<&[Key]> {
        match &self.removed {
            Some(k) => Ok(k),
            None => Err(Flow::Need(Need::Remove { keys, before })),
        }
    }
}

type Body<T> = Box<dyn FnMut(&mut Engine, &mut Ctx) -> Flowing<Progress<T>>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum OpState {
    Fresh,
    Waiting,
    Finished,
}

/// An operation: a step machine over the store. Start it with `resume(engine, None)`, then
/// resume it with the [`Answer`] to each [`Need`] until it returns [`Step::Done`] or an
/// error. Ops do not borrow the engine between steps, so reads from memory go on while an op
/// waits; a commit's effects are published only when its outcome is acknowledged.
pub struct Op<T> {
    body: Body<T>,
    ctx: Ctx,
    state: OpState,
    pending: Option<T>,
}

impl<T: 'static> Op<T> {
    pub(crate) fn new(
        body: impl FnMut(&mut Engine, &mut Ctx) -> Flowing<Progress<T>> + 'static,
    ) -> Op<T> {
        Op {
            body: Box::new(body),
            ctx: Ctx::new(),
            state: OpState::Fresh,
            pending: None,
        }
    }

    /// Advances the op. `answer` is `None` on the first call and the answer to the last
    /// [`Need`] afterwards.
    pub fn resume(&mut self, engine: &mut Engine, answer: Option<Answer>) -> Result<Step<T>> {
        match (self.state, answer) {
            (OpState::Finished, _) => {
                return Err(Error::Invalid("operation already finished".into()))
            }
            (OpState::Fresh, None) => {}
            (OpState::Waiting, Some(a)) => {
                if let Err(e) = self.apply(engine, a) {
                    self.state = OpState::Finished;
                    self.pending = None;
                    return Err(e);
                }
                if let Some(t) = self.pending.take() {
                    self.state = OpState::Finished;
                    return Ok(Step::Done(t));
                }
            }
            (_, _) => {
                if self.ctx.asked == Asked::Commit {
                    let _ = engine.acknowledge(CommitOutcome::Indeterminate);
                }
                self.state = OpState::Finished;
                return Err(Error::Invalid(
                    "answer does not match the operation's need".into(),
                ));
            }
        }
        match (self.body)(engine, &mut self.ctx) {
            Ok(Progress::Done(t)) => {
                self.state = OpState::Finished;
                Ok(Step::Done(t))
            }
            Ok(Progress::Commit(p, pending)) => {
                self.state = OpState::Waiting;
                self.ctx.asked = Asked::Commit;
                self.pending = pending;
                Ok(Step::Need(Need::Commit(p)))
            }
            Err(Flow::Need(n)) => {
                self.state = OpState::Waiting;
                self.ctx.asked = match &n {
                    Need::Head => Asked::Head,
                    Need::Records(k) => {
                        self.ctx.asked_keys = k.clone();
                        Asked::Records
                    }
                    Need::Commit(_) => Asked::Commit,
                    Need::Keys => Asked::Keys,
                    Need::Remove { .. } => Asked::Remove,
                };
                Ok(Step::Need(n))
            }
            Err(Flow::Fail(e)) => {
                self.state = OpState::Finished;
                Err(e)
            }
        }
    }

    fn apply(&mut self, engine: &mut Engine, answer: Answer) -> Result<()> {
        let ctx = &mut self.ctx;
        let asked = std::mem::replace(&mut ctx.asked, Asked::Nothing);
        match (asked, answer) {
            (Asked::Commit, Answer::Outcome(o)) => {
                engine.acknowledge(o)?;
                ctx.commits += 1;
            }
            (Asked::Commit, Answer::Failed(e)) => {
                engine.acknowledge(CommitOutcome::Failed(e))?;
                return Err(Error::Invalid("no commit is in flight".into()));
            }
            (Asked::Commit, _) => {
                engine.acknowledge(CommitOutcome::Indeterminate)?;
                return Err(Error::Invalid("no commit is in flight".into()));
            }
            (_, Answer::Failed(e)) => return Err(e.into()),
            (Asked::Head, Answer::Head(h)) => ctx.head = Some(h),
            (Asked::Records, Answer::Records(v)) if v.len() == ctx.asked_keys.len() => {
                let v = v.into_iter().map(|b| b.map(Bytes::from)).collect();
                ctx.take_records(v);
            }
            (Asked::Records, Answer::Shared(v)) if v.len() == ctx.asked_keys.len() => {
                ctx.take_records(v);
            }
            (Asked::Keys, Answer::Keys(k)) => ctx.keys = Some(k),
            (Asked::Remove, Answer::Removed(k)) => ctx.removed = Some(k),
            _ => {
                return Err(Error::Invalid(
                    "answer does not match the operation's need".into(),
                ))
            }
        }
        Ok(())
    }

    /// The result the op will return once its commit is acknowledged, while it waits for
    /// that outcome (engine.md §8.2 "the result to report").
    pub fn pending_result(&self) -> Option<&T> {
        self.pending.as_ref()
    }

    /// An op whose result is mapped by `f`.
    pub fn map<U: 'static>(self, mut f: impl FnMut(T) -> U + 'static) -> Op<U> {
        let mut body = self.body;
        Op {
            body: Box::new(move |e, c| {
                Ok(match body(e, c)? {
                    Progress::Done(t) => Progress::Done(f(t)),
                    Progress::Commit(p, t) => Progress::Commit(p, t.map(&mut f)),
                })
            }),
            ctx: self.ctx,
            state: self.state,
            pending: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::store::{Digest, Kind};
    use super::*;

    /// `absent` lists what is not fetched in keys' order, each once, as a plain sort would.
    #[test]
    fn absent_keys_come_sorted_and_once() {
        let mut keys = Vec::new();
        for i in 0u32..300 {
            let d = Digest::of(&(i % 200).to_le_bytes());
            // Digests sharing their first eight bytes, so the tie-break is used too.
            let mut near = d;
            near.0[31] ^= 1;
            for kind in [Kind::Source, Kind::Record, Kind::Revision] {
                keys.push(Key::new(kind, d));
                keys.push(Key::new(kind, near));
            }
        }
        let mut ctx = Ctx::new();
        ctx.records.insert(keys[7], Fetched::Missing);
        let mut want: Vec<Key> = keys.iter().filter(|k| **k != keys[7]).copied().collect();
        want.sort();
        want.dedup();
        assert_eq!(ctx.absent(&keys), want);
    }
}
