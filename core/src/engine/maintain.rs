//! Collection, verification and repair (engine.md §10, §11).

use super::records::{BaselineRecord, BundleRecord, HeadRecord, RevisionRecord};
use super::request::{parse_hash, GcOptions, RepairRequest, GC_KEEP};
use super::results::{GcResult, Issue, RepairResult, VerifyResult};
use super::store::{Digest, Key, Kind, PreparedCommit};
use super::walk::ChainWalk;
use super::{
    ensure_current, foreign_format, Ctx, Engine, Flowing, Loaded, Op, Pending, Progress,
    COMPILER_VERSION,
};
use crate::error::Error;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

/// `head changed since verification; run verify again before repair`.
pub const HEAD_CHANGED: &str = "head changed since verification; run verify again before repair";

/// The key of the derived record of a snapshot id at the current compiler version and
/// derived record format.
pub fn derived_key(snapshot: &Digest) -> Key {
    let name = format!(
        "langonrock derived\nformat {}\ncompiler {COMPILER_VERSION}\nsnapshot {snapshot}\n",
        super::derived::FORMAT
    );
    Key::new(Kind::Derived, Digest::of(name.as_bytes()))
}

/// Collects issues in the order they are found, each artifact once.
#[derive(Default)]
struct Issues {
    list: Vec<Issue>,
    seen: HashSet<String>,
}

impl Issues {
    fn add(&mut self, artifact: String, message: String) {
        if self.seen.insert(artifact.clone()) {
            self.list.push(Issue { artifact, message });
        }
    }
}

/// Checks one revision and everything it reaches that `checked` does not hold yet, fetching
/// leniently. Returns the decoded revision record when it is usable, and adds what it checked
/// to `touched` (the caller marks it checked once the whole revision is done: a rerun of this
/// function after a store answer must find the records it fetched before).
fn check_revision(
    ctx: &mut Ctx,
    id: Digest,
    issues: &mut Issues,
    checked: &HashSet<Key>,
    touched: &mut Vec<Key>,
) -> Flowing<Option<RevisionRecord>> {
    touched.clear();
    let key = Key::new(Kind::Revision, id);
    ctx.need_lenient(&[key])?;
    touched.push(key);
    let rev = match ctx.check(&key) {
        Err(m) => {
            issues.add(key.to_string(), m);
            return Ok(None);
        }
        Ok(b) => match RevisionRecord::decode(b, &key.to_string()) {
            Ok(r) => r,
            Err(e) => {
                issues.add(key.to_string(), e.message());
                return Ok(None);
            }
        },
    };
    // A bundle record and its sources are checked once, however many revisions share them
    // (a commit changes one bundle; the others are the parent's).
    let lists: Vec<Key> = rev
        .bundles
        .iter()
        .map(|b| Key::new(Kind::Record, b.record))
        .filter(|k| !checked.contains(k))
        .collect();
    ctx.need_lenient(&lists)?;
    touched.extend(lists.iter().copied());
    let mut sources = Vec::new();
    for k in &lists {
        match ctx.check(k) {
            Err(m) => issues.add(k.to_string(), m),
            Ok(b) => match BundleRecord::decode(b, &k.to_string()) {
                Ok(list) => sources.extend(
                    list.documents
                        .iter()
                        .map(|d| Key::new(Kind::Source, d.1))
                        .filter(|k| !checked.contains(k)),
                ),
                Err(e) => issues.add(k.to_string(), e.message()),
            },
        }
    }
    sources.sort();
    sources.dedup();
    ctx.need_lenient(&sources)?;
    touched.extend(sources.iter().copied());
    for k in &sources {
        match ctx.check(k) {
            Err(m) => issues.add(k.to_string(), m),
            Ok(b) => {
                if std::str::from_utf8(b).is_err() {
                    issues.add(
                        k.to_string(),
                        format!("database corruption: {k} is not valid UTF-8"),
                    );
                }
            }
        }
    }
    Ok(Some(rev))
}

/// A revision a walk visited, with its record.
type Visited = (Digest, Arc<RevisionRecord>);

/// Where a `verify` op stands; it lives in the op so each step resumes the walk.
struct Verifying {
    head: Vec<u8>,
    record: Option<HeadRecord>,
    next: Option<Digest>,
    saw_retained_from: bool,
    verified: Vec<String>,
    issues: Issues,
    /// Records already checked (their bytes are dropped once checked).
    checked: HashSet<Key>,
    touched: Vec<Key>,
}

impl Verifying {
    fn result(&mut self, tenant: &str) -> VerifyResult {
        VerifyResult {
            tenant: tenant.to_string(),
            ok: self.issues.list.is_empty(),
            head: Some(Digest::of(&self.head).to_hex()),
            verified_revisions: std::mem::take(&mut self.verified),
            issues: std::mem::take(&mut self.issues.list),
        }
    }
}

impl Engine {
    /// `verify()` (engine.md §11): checks the head record, every retained revision, every
    /// record and source they reach, and the import baselines, against their keys. Linear in
    /// what it checks: each record once, each revision visited once.
    pub fn verify(&self) -> Op<VerifyResult> {
        let tenant = self.tenant.clone();
        let mut state: Option<Verifying> = None;
        Op::new(move |_eng, ctx| {
            let Some(bytes) = ctx.head()? else {
                return Ok(Progress::Done(VerifyResult {
                    tenant: tenant.clone(),
                    ok: true,
                    head: None,
                    verified_revisions: Vec::new(),
                    issues: Vec::new(),
                }));
            };
            if state.as_ref().is_none_or(|s| s.head != bytes) {
                let mut issues = Issues::default();
                let record = match HeadRecord::decode(&bytes) {
                    Ok(None) => return Err(foreign_format(&tenant).into()),
                    Err(e) => {
                        issues.add("head".into(), e.message());
                        None
                    }
                    Ok(Some(head)) => Some(head),
                };
                state = Some(Verifying {
                    next: record.as_ref().map(|h| h.revision),
                    head: bytes,
                    record,
                    saw_retained_from: false,
                    verified: Vec::new(),
                    issues,
                    checked: HashSet::new(),
                    touched: Vec::new(),
                });
            }
            let Some(st) = state.as_mut() else {
                return Err(Error::Invalid("verify lost its state".into()).into());
            };
            let Some(head) = st.record.clone() else {
                return Ok(Progress::Done(st.result(&tenant)));
            };
            while let Some(id) = st.next {
                let hex = id.to_hex();
                if st.verified.last() != Some(&hex) {
                    st.verified.push(hex);
                }
                let rev = check_revision(ctx, id, &mut st.issues, &st.checked, &mut st.touched)?;
                for k in st.touched.drain(..) {
                    ctx.records.remove(&k);
                    st.checked.insert(k);
                }
                st.next = match rev {
                    None => None,
                    Some(_) if Some(id) == head.retained_from => {
                        st.saw_retained_from = true;
                        None
                    }
                    Some(rev) => rev.parent,
                };
            }
            if head.retained_from.is_some() && !st.saw_retained_from && st.issues.list.is_empty() {
                st.issues.add("head".into(), "database corruption: head names a retainedFrom revision that is not on its chain".into());
            }
            let keys: Vec<Key> = head
                .baselines
                .iter()
                .map(|b| Key::new(Kind::Record, b.1))
                .collect();
            ctx.need_lenient(&keys)?;
            for k in &keys {
                match ctx.check(k) {
                    Err(m) => st.issues.add(k.to_string(), m),
                    Ok(b) => {
                        if let Err(e) = BaselineRecord::decode(b, &k.to_string()) {
                            st.issues.add(k.to_string(), e.message());
                        }
                    }
                }
            }
            Ok(Progress::Done(st.result(&tenant)))
        })
    }

    /// `repair({revision, expectedHead})` (engine.md §11.4): swaps in a head naming a revision
    /// that verifies, keeping the old head record under `recovery/<digest>`.
    pub fn repair(&self, req: RepairRequest) -> Op<RepairResult> {
        let tenant = self.tenant.clone();
        let mut reread = false;
        let mut result: Option<RepairResult> = None;
        Op::new(move |eng, ctx| {
            let revision = parse_hash(&req.revision)?;
            let expected = req.expected_head.as_deref().map(parse_hash).transpose()?;
            if ctx.commits > 0 {
                if !reread {
                    reread = true;
                    ctx.forget_head();
                }
                ensure_current(eng, ctx)?;
                return Ok(Progress::Done(
                    result
                        .clone()
                        .ok_or_else(|| Error::Invalid("repair lost its result".into()))?,
                ));
            }
            if eng.in_flight.is_some() {
                return Err(Error::Invalid(super::IN_FLIGHT.into()).into());
            }
            let old = ctx.head()?;
            if old.as_deref().map(Digest::of) != expected {
                return Err(Error::conflict(HEAD_CHANGED).into());
            }
            let mut issues = Issues::default();
            check_revision(ctx, revision, &mut issues, &HashSet::new(), &mut Vec::new())?;
            if let Some(first) = issues.list.into_iter().next() {
                return Err(Error::Corrupt(first.message).into());
            }
            let record = HeadRecord {
                revision,
                retained_from: Some(revision),
                baselines: Vec::new(),
            };
            let bytes = record.encode();
            let mut records = Vec::new();
            if let Some(o) = &old {
                records.push((Key::of(Kind::Recovery, o), o.clone()));
            }
            result = Some(RepairResult {
                tenant: tenant.clone(),
                head: Digest::of(&bytes).to_hex(),
                revision: revision.to_hex(),
            });
            eng.in_flight = Some(Pending {
                head: Loaded {
                    bytes: bytes.clone(),
                    record,
                },
                served: None,
                revision,
                record: None,
                reload: true,
                undo: Vec::new(),
            });
            Ok(Progress::Commit(
                PreparedCommit {
                    expected: old,
                    head: bytes,
                    records,
                    revision,
                },
                None,
            ))
        })
    }

    /// `gc({keep, dryRun, graceMs})` (engine.md §10): moves `retainedFrom` to the `keep`-th
    /// revision of the chain, then removes what no retained revision or baseline reaches
    /// and nothing put within the grace period.
    pub fn gc(&self, opts: GcOptions) -> Op<GcResult> {
        let tenant = self.tenant.clone();
        // The retained chain before collection, walked once across the op's steps.
        let mut walked: Option<(ChainWalk, Vec<Visited>)> = None;
        Op::new(move |eng, ctx| {
            if opts.keep < 1 {
                return Err(Error::Invalid(GC_KEEP.into()).into());
            }
            let done_swap = ctx.commits > 0;
            if !done_swap {
                ensure_current(eng, ctx)?;
            }
            let empty = || GcResult {
                tenant: tenant.clone(),
                kept: Vec::new(),
                dropped_revisions: 0,
                removed_revisions: 0,
                removed_records: 0,
                bytes_freed: 0,
                pending_records: 0,
                pending_bytes: 0,
                pending_until: None,
                dry_run: opts.dry_run,
            };
            let Some(head) = eng.head.clone() else {
                return Ok(Progress::Done(empty()));
            };
            // The retained chain, before collection. After the swap the head names the same
            // revision with a later `retainedFrom`: the chain walked before still holds.
            let (from, until) = (head.record.revision, head.record.retained_from);
            if !done_swap && !walked.as_ref().is_some_and(|(w, _)| w.is_of(from, until)) {
                walked = Some((ChainWalk::new(from, until), Vec::new()));
            }
            let Some((walk, chain)) = walked.as_mut() else {
                return Err(Error::Invalid("gc lost its chain".into()).into());
            };
            while let Some(step) = walk.step(eng, ctx)? {
                chain.push(step);
            }
            let chain = &*chain;
            let keep = (opts.keep as u64).min(chain.len() as u64) as usize;
            let kept = &chain[..keep];
            let new_from = if chain.len() > keep {
                Some(kept[keep - 1].0)
            } else {
                head.record.retained_from
            };

            // What the kept revisions and the baselines reach; verified as we go.
            let mut reach: HashSet<Key> = HashSet::new();
            let mut lists = Vec::new();
            for (id, rev) in kept {
                reach.insert(Key::new(Kind::Revision, *id));
                reach.insert(derived_key(&rev.snapshot));
                for b in &rev.bundles {
                    let k = Key::new(Kind::Record, b.record);
                    if reach.insert(k) {
                        lists.push(k);
                    }
                }
            }
            let baselines: Vec<Key> = head
                .record
                .baselines
                .iter()
                .map(|b| Key::new(Kind::Record, b.1))
                .collect();
            lists.extend(baselines.iter().copied());
            reach.extend(baselines.iter().copied());
            ctx.need(&lists)?;
            for k in &lists {
                if baselines.contains(k) {
                    BaselineRecord::decode(ctx.bytes(k), &k.to_string())?;
                    continue;
                }
                let list = BundleRecord::decode(ctx.bytes(k), &k.to_string())?;
                reach.extend(list.documents.iter().map(|d| Key::new(Kind::Source, d.1)));
            }
            let listing = ctx.keys()?.to_vec();
            let present: HashSet<Key> = listing.iter().map(|k| k.key).collect();
            let mut missing: BTreeSet<Key> = reach
                .iter()
                .filter(|k| k.kind != Kind::Derived && !present.contains(k))
                .copied()
                .collect();
            if let Some(k) = missing.pop_first() {
                return Err(Error::corrupt(format!("{k} is missing")).into());
            }
            let before = opts.now.saturating_sub(opts.grace_ms);
            let unreachable = |k: &&super::store::KeyInfo| {
                k.key.kind != Kind::Recovery && !reach.contains(&k.key)
            };
            let mut doomed: Vec<Key> = listing
                .iter()
                .filter(unreachable)
                .filter(|k| k.put_time < before)
                .map(|k| k.key)
                .collect();
            doomed.sort();

            // Swap in the head with the new retainedFrom first, as a commit would.
            if !opts.dry_run && !done_swap && new_from != head.record.retained_from {
                let record = HeadRecord {
                    retained_from: new_from,
                    ..head.record.clone()
                };
                let bytes = record.encode();
                eng.in_flight = Some(Pending {
                    head: Loaded {
                        bytes: bytes.clone(),
                        record,
                    },
                    served: None,
                    revision: head.record.revision,
                    record: None,
                    reload: false,
                    undo: Vec::new(),
                });
                return Ok(Progress::Commit(
                    PreparedCommit {
                        expected: Some(head.bytes.clone()),
                        head: bytes,
                        records: Vec::new(),
                        revision: head.record.revision,
                    },
                    None,
                ));
            }
            let removed: Vec<Key> = if opts.dry_run {
                doomed.clone()
            } else {
                ctx.removed(doomed.clone(), before)?.to_vec()
            };
            let removed: HashSet<Key> = removed.into_iter().collect();
            let mut result = empty();
            result.kept = kept.iter().map(|(id, _)| id.to_hex()).collect();
            result.dropped_revisions = (chain.len() - keep) as u64;
            // What is out of reach but was put within the grace period stays for a later gc.
            for k in listing
                .iter()
                .filter(unreachable)
                .filter(|k| k.put_time >= before)
            {
                result.pending_records += 1;
                result.pending_bytes += k.size;
                let due = k.put_time.saturating_add(opts.grace_ms);
                result.pending_until = Some(result.pending_until.map_or(due, |d| d.max(due)));
            }
            for k in &listing {
                if removed.contains(&k.key) {
                    if k.key.kind == Kind::Revision {
                        result.removed_revisions += 1;
                    } else {
                        result.removed_records += 1;
                    }
                    result.bytes_freed += k.size;
                }
            }
            Ok(Progress::Done(result))
        })
    }
}
