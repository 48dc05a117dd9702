//! The step machinery of every engine operation: [`Op`], the step machine a host resumes
//! with each store answer, and the context ([`Ctx`]) of what an op has fetched so far.
//!
//! An op body is a function of the engine and its context. When it lacks a record it stops
//! with a [`Need`]; once the host answers, it runs again from the start with more in hand.

use super::store::{Answer, CommitOutcome, Key, KeyInfo, Need, PreparedCommit, Step};
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
    /// Fetched without checking its digest ([`Ctx::need_unverified`]); checked when an op
    /// needs it verified.
    Unverified(Bytes),
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
    /// Whether the records asked for are taken without checking their digests.
    asked_unverified: bool,
    /// The derived records this op already tried (decoded or not), so a re-run does not.
    pub(super) derived_tried: std::collections::HashSet<Key>,
    /// Whether this op loaded an older revision's derived record as the base it applies the
    /// head's difference to.
    pub(super) base_loaded: bool,
    /// The derived record this op opened and is fetching the texts of.
    pub(super) derived_open: Option<(Key, super::derived::Opened)>,
}

impl Ctx {
    fn new() -> Ctx {
        Ctx {
            derived_tried: Default::default(),
            base_loaded: false,
            derived_open: None,
            asked_unverified: false,
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
        // Keys' order (kind, then digest bytes), its first eight digest bytes compared as one
        // number before the rest; equal keys are identical, so the unstable sort gives the
        // same order as a stable one.
        let head = |k: &Key| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&k.digest.0[..8]);
            (k.kind, u64::from_be_bytes(b))
        };
        out.sort_unstable_by(|a, b| head(a).cmp(&head(b)).then_with(|| a.cmp(b)));
        out.dedup();
        out
    }

    /// Ensures every key is fetched and verified. A missing record makes the op re-read the
    /// head and run again once (engine.md §9.1 rule 2) before it is reported as corruption.
    pub(crate) fn need(&mut self, keys: &[Key]) -> Flowing<()> {
        let absent = self.absent(keys);
        if !absent.is_empty() {
            return Err(Flow::Need(Need::Records(absent)));
        }
        for k in keys {
            if let Some(Fetched::Unverified(b)) = self.records.get(k) {
                let f = if k.verifies(b) {
                    Fetched::Ok(b.clone())
                } else {
                    Fetched::Mismatch
                };
                self.records.insert(*k, f);
            }
            match &self.records[k] {
                Fetched::Ok(_) | Fetched::Unverified(_) => {}
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

    /// Ensures every key is fetched, without checking digests: what the store handed out
    /// is kept as it is ([`Ctx::unverified`]), for a caller that checks it itself, later.
    pub(crate) fn need_unverified(&mut self, keys: &[Key]) -> Flowing<()> {
        let absent = self.absent(keys);
        if absent.is_empty() {
            Ok(())
        } else {
            self.asked_unverified = true;
            Err(Flow::Need(Need::Records(absent)))
        }
    }

    /// A record's bytes as the store handed them out, checked or not (`None`: missing).
    pub(crate) fn unverified(&self, key: &Key) -> Option<Bytes> {
        match self.records.get(key) {
            Some(Fetched::Ok(b) | Fetched::Unverified(b)) => Some(b.clone()),
            _ => None,
        }
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
            Some(Fetched::Unverified(b)) if key.verifies(b) => Ok(b.clone()),
            Some(Fetched::Unverified(_) | Fetched::Mismatch) => Err(format!(
                "database corruption: {key} does not match its digest"
            )),
            _ => Err(format!("database corruption: {key} is missing")),
        }
    }

    /// A fetched record's state: `Ok(bytes)`, or the corruption message naming it.
    pub(crate) fn check(&self, key: &Key) -> std::result::Result<&[u8], String> {
        match self.records.get(key) {
            Some(Fetched::Ok(b)) => Ok(b),
            Some(Fetched::Unverified(b)) if key.verifies(b) => Ok(b),
            Some(Fetched::Unverified(_) | Fetched::Mismatch) => Err(format!(
                "database corruption: {key} does not match its digest"
            )),
            _ => Err(format!("database corruption: {key} is missing")),
        }
    }

    fn take_records(&mut self, v: Vec<Option<Bytes>>) {
        let unverified = std::mem::take(&mut self.asked_unverified);
        self.records.reserve(v.len());
        for (k, b) in std::mem::take(&mut self.asked_keys).into_iter().zip(v) {
            let f = match b {
                None => Fetched::Missing,
                Some(b) if unverified => Fetched::Unverified(b),
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
