//! Collection, verification and repair (engine.md §10, §11).

use super::records::{BaselineRecord, BundleRecord, HeadRecord, RevisionRecord};
use super::request::{parse_hash, GcOptions, RepairRequest, GC_KEEP};
use super::results::{GcResult, Issue, RepairResult, VerifyResult};
use super::store::{Digest, Key, Kind, PreparedCommit};
use super::{
    ensure_current, foreign_format, Ctx, Engine, Flowing, Loaded, Op, Pending, Progress,
    COMPILER_VERSION,
};
use crate::error::Error;
use std::collections::{BTreeSet, HashSet};

/// `head changed since verification; run verify again before repair`.
pub const HEAD_CHANGED: &str = "head changed since verification; run verify again before repair";

/// The key of the derived record of a snapshot id at the current compiler version.
pub fn derived_key(snapshot: &Digest) -> Key {
    let name = format!("langonrock derived\ncompiler {COMPILER_VERSION}\nsnapshot {snapshot}\n");
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

/// Where `verify` is on the head's chain, kept between the runs of its op.
struct Walk {
    /// The digest of the head record the walk started from.
    head: String,
    /// The revision to check next (`None`: the walk is over).
    next: Option<Digest>,
    /// The revisions reached, newest first.
    verified: Vec<String>,
    issues: Issues,
}

/// Checks one revision and everything it reaches, fetching leniently. Returns the decoded
/// revision record when it is usable.
fn check_revision(
    ctx: &mut Ctx,
    id: Digest,
    issues: &mut Issues,
) -> Flowing<Option<RevisionRecord>> {
    let key = Key::new(Kind::Revision, id);
    ctx.need_lenient(&[key])?;
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
    let lists: Vec<Key> = rev
        .bundles
        .iter()
        .map(|b| Key::new(Kind::Record, b.record))
        .collect();
    ctx.need_lenient(&lists)?;
    let mut sources = Vec::new();
    for k in &lists {
        match ctx.check(k) {
            Err(m) => issues.add(k.to_string(), m),
            Ok(b) => match BundleRecord::decode(b, &k.to_string()) {
                Ok(list) => {
                    sources.extend(list.documents.iter().map(|d| Key::new(Kind::Source, d.1)))
                }
                Err(e) => issues.add(k.to_string(), e.message()),
            },
        }
    }
    ctx.need_lenient(&sources)?;
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

impl Engine {
    /// `verify()` (engine.md §11): checks the head record, every retained revision, every
    /// record and source they reach, and the import baselines, against their keys.
    pub fn verify(&self) -> Op<VerifyResult> {
        let tenant = self.tenant.clone();
        // The op runs again from the start after each fetch: the walk down the chain is kept
        // between runs and resumes where it stopped, so verifying n revisions checks each
        // once (linear in the history, not quadratic). Issues are deduplicated, so a
        // revision checked again after its fetch adds nothing twice.
        let mut walk: Option<Walk> = None;
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
            let digest = Digest::of(&bytes).to_hex();
            let head = match HeadRecord::decode(&bytes) {
                Ok(None) => return Err(foreign_format(&tenant).into()),
                Err(e) => {
                    let mut issues = Issues::default();
                    issues.add("head".into(), e.message());
                    return Ok(Progress::Done(VerifyResult {
                        tenant: tenant.clone(),
                        ok: false,
                        head: Some(digest),
                        verified_revisions: Vec::new(),
                        issues: issues.list,
                    }));
                }
                Ok(Some(head)) => head,
            };
            let w = match &mut walk {
                Some(w) if w.head == digest => w,
                _ => walk.insert(Walk {
                    head: digest.clone(),
                    next: Some(head.revision),
                    verified: Vec::new(),
                    issues: Issues::default(),
                }),
            };
            while let Some(id) = w.next {
                let hex = id.to_hex();
                if w.verified.last() != Some(&hex) {
                    w.verified.push(hex);
                }
                let rev = check_revision(ctx, id, &mut w.issues)?;
                w.next = match rev {
                    Some(rev) if Some(id) != head.retained_from => rev.parent,
                    _ => None,
                };
            }
            let issues = &mut w.issues;
            if let Some(r) = head.retained_from {
                if !w.verified.contains(&r.to_hex()) && issues.list.is_empty() {
                    issues.add("head".into(), "database corruption: head names a retainedFrom revision that is not on its chain".into());
                }
            }
            let keys: Vec<Key> = head
                .baselines
                .iter()
                .map(|b| Key::new(Kind::Record, b.1))
                .collect();
            ctx.need_lenient(&keys)?;
            for k in &keys {
                match ctx.check(k) {
                    Err(m) => issues.add(k.to_string(), m),
                    Ok(b) => {
                        if let Err(e) = BaselineRecord::decode(b, &k.to_string()) {
                            issues.add(k.to_string(), e.message());
                        }
                    }
                }
            }
            Ok(Progress::Done(VerifyResult {
                tenant: tenant.clone(),
                ok: issues.list.is_empty(),
                head: Some(digest),
                verified_revisions: w.verified.clone(),
                issues: issues.list.clone(),
            }))
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
            check_revision(ctx, revision, &mut issues)?;
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
                removed_revisions: 0,
                removed_records: 0,
                bytes_freed: 0,
                dry_run: opts.dry_run,
            };
            let Some(head) = eng.head.clone() else {
                return Ok(Progress::Done(empty()));
            };
            // The retained chain, before collection.
            let mut chain = Vec::new();
            let mut cur = Some(head.record.revision);
            while let Some(id) = cur {
                let rev = eng.fetch_revision(ctx, id)?;
                chain.push((id, rev.clone()));
                if Some(id) == head.record.retained_from {
                    break;
                }
                cur = rev.parent;
            }
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
            let mut doomed: Vec<Key> = listing
                .iter()
                .filter(|k| {
                    k.key.kind != Kind::Recovery && !reach.contains(&k.key) && k.put_time < before
                })
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
