//! Commits: write, delete, deleteBundle, transact and restore (engine.md §4, §5, §7), and the
//! staging they share (engine.md §8.2).

use super::records::BaselineRecord;
use super::records::{BundleRef, HeadRecord, RevisionRecord};
use super::request::{
    self, check_change, parse_hash, Change, Content, Operation, RestoreRequest, Transaction,
};
use super::results::{
    DeleteResult, DiagnosticInfo, ImportResult, Renamed, RevisionResult, WriteResult,
};
use super::state::{Doc, Editor, TenantState};
use super::store::{Digest, Key, Kind, PreparedCommit};
use super::walk::ChainWalk;
use super::{
    check_created, ensure_current, Ctx, Engine, Flowing, Loaded, Op, Pending, Progress, Served,
    DATABASE_CHANGED,
};
use crate::compile::{Ambiguity, SourceDoc};
use crate::error::{ChangeFailure, ConflictReason, Error, Result};
use crate::validate;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// `revision is not in retained committed history`.
pub const NOT_RETAINED: &str = "revision is not in retained committed history";

fn reason_message(r: ConflictReason) -> String {
    let why = match r {
        ConflictReason::Exists => "concept already exists",
        ConflictReason::Missing => "concept does not exist",
        ConflictReason::Changed => "concept changed since it was read",
    };
    format!("{why}: re-read the concept and retry with its new hash")
}

/// Checks §5.3 rules 1–3 against `old` and applies the changes. `single` marks a one-change
/// request (write, delete), whose conflict carries `reason`; a transaction's carries
/// `changes`. `hashes`, when given, holds each change's written text's source hash (an
/// import has them already), one per change.
pub(crate) fn apply_changes(
    old: &Served,
    changes: &[Change],
    expected: Option<Digest>,
    single: bool,
    hashes: Option<&[Option<Digest>]>,
) -> Result<Editor> {
    if let Some(e) = expected {
        if old.revision != Some(e) {
            return Err(Error::conflict(DATABASE_CHANGED));
        }
    }
    let state = &old.state;
    let mut failures = Vec::new();
    for (index, c) in changes.iter().enumerate() {
        let current = state
            .find_bundle(&c.bundle)
            .and_then(|b| state.doc(b, &c.path))
            .map(|d| d.hash);
        let reason = match (c.replaces, current) {
            (None, None) => None,
            (None, Some(_)) => Some(ConflictReason::Exists),
            (Some(_), None) => Some(ConflictReason::Missing),
            (Some(r), Some(h)) if r != h => Some(ConflictReason::Changed),
            (Some(_), Some(_)) => None,
        };
        if let Some(reason) = reason {
            failures.push(ChangeFailure { index, reason });
        }
    }
    if let Some(first) = failures.first() {
        return Err(Error::Conflict {
            message: reason_message(first.reason),
            reason: single.then_some(first.reason),
            changes: if single { Vec::new() } else { failures },
        });
    }
    // Every written text is hashed, and parsed unless the document already holds it, in one
    // pass over the changes (on every core with the `parallel` feature, crate::par); a
    // document an earlier change of this request replaced is parsed again below.
    let indexed: Vec<(usize, &Change)> = changes.iter().enumerate().collect();
    let parsed: Vec<Option<(Digest, Option<Doc>)>> = crate::par::map(&indexed, |&(i, c)| {
        let Operation::Write(text) = &c.operation else {
            return None;
        };
        let hash = hashes
            .and_then(|h| h.get(i).copied().flatten())
            .unwrap_or_else(|| Digest::of(text.as_bytes()));
        let held = state
            .find_bundle(&c.bundle)
            .and_then(|b| state.doc(b, &c.path))
            .is_some_and(|d| d.hash == hash);
        Some((
            hash,
            (!held).then(|| Doc::new(&c.path, text.clone(), Some(hash))),
        ))
    });
    let mut edit = Editor::new(state);
    let mut new_bundles: HashMap<String, String> = HashMap::new();
    for (c, parsed) in changes.iter().zip(parsed) {
        let bundle = match state.find_bundle(&c.bundle) {
            Some(b) => b.to_string(),
            None => {
                let spelled = new_bundles
                    .entry(c.bundle.to_ascii_lowercase())
                    .or_insert_with(|| c.bundle.clone());
                if *spelled != c.bundle {
                    return Err(Error::Invalid(validate::CASE_UNIQUE.into()));
                }
                c.bundle.clone()
            }
        };
        match &c.operation {
            Operation::Write(text) => {
                let (hash, fresh) = parsed.expect("a write has its hash");
                let doc = match (edit.state().doc(&bundle, &c.path), fresh) {
                    (Some(d), _) if d.hash == hash => d.clone(),
                    (_, Some(doc)) => doc,
                    _ => Doc::new(&c.path, text.clone(), Some(hash)),
                };
                edit.put(&bundle, c.path.clone(), doc);
            }
            Operation::Delete => {
                edit.remove(&bundle, &c.path);
            }
        }
    }
    edit.check_case_unique()?;
    Ok(edit)
}

/// What staging a new state gives.
pub(crate) enum Staged {
    /// Nothing changed: no revision (engine.md §5.3.5).
    NoOp,
    /// A commit to store; the state it publishes; the concepts whose id it changes.
    Commit(PreparedCommit, Arc<Served>, Vec<(String, String)>),
}

/// A commit writes a new bundle record for every bundle it changes, and puts only the
/// sources that bundle did not hold before; the ones it keeps are reached again. When the
/// served texts came from a derived record, those kept sources are read and verified first
/// (engine.md §9.1 rule 1: "a commit touching it").
fn verify_kept_sources(
    eng: &mut Engine,
    ctx: &mut Ctx,
    old: &TenantState,
    new: &TenantState,
) -> Flowing<()> {
    if !eng.lazy_sources {
        return Ok(());
    }
    let mut docs = Vec::new();
    for (b, held) in super::state::changed_bundles(old, new) {
        docs.extend(
            b.docs
                .values()
                .filter(|d| held.contains(&d.hash))
                .map(|d| (d.hash, d.text.clone())),
        );
    }
    eng.verify_docs(ctx, docs)
}

/// Import baselines to set on the new head, with the records they add.
pub(crate) struct Baselines {
    pub list: Vec<(String, Digest)>,
    pub records: Vec<(Key, Vec<u8>)>,
}

/// Compiles and hashes a new state and prepares its commit against the loaded head
/// (engine.md §8.2). Marks the commit in flight.
pub(crate) fn stage(
    eng: &mut Engine,
    ctx: &mut Ctx,
    edit: Editor,
    ambiguity: Ambiguity,
    created: &str,
    baselines: Option<Baselines>,
) -> Flowing<Staged> {
    let old = eng.served.clone();
    let old_head = eng.head.clone();
    let (state, sealed) = edit.finish();
    verify_kept_sources(eng, ctx, &old.state, &state)?;
    if old.poisoned() {
        // A text of the derived record did not match its source: compile and run again.
        return Err(eng.drop_derived(ctx));
    }
    let old_baselines = old_head
        .as_ref()
        .map(|h| h.record.baselines.clone())
        .unwrap_or_default();
    let baseline_change = baselines.filter(|b| b.list != old_baselines);
    let retained_from = old_head.as_ref().and_then(|h| h.record.retained_from);

    if state.same_sources(&old.state) {
        let (Some(b), Some(head), Some(revision)) =
            (baseline_change, old_head.as_ref(), old.revision)
        else {
            return Ok(Staged::NoOp);
        };
        // Only the baselines change: the same revision under a new head record.
        let record = HeadRecord {
            revision,
            retained_from,
            baselines: b.list,
        };
        let bytes = record.encode();
        let prepared = PreparedCommit {
            expected: Some(head.bytes.clone()),
            head: bytes.clone(),
            records: b.records,
            revision,
        };
        eng.in_flight = Some(Pending {
            head: Loaded { bytes, record },
            served: None,
            revision,
            record: None,
            reload: false,
            undo: Vec::new(),
        });
        return Ok(Staged::Commit(prepared, old, Vec::new()));
    }

    let (model, tree, delta) = match eng.advance(&state, ambiguity) {
        // A text of the derived record did not match its source: compile and run again.
        Err(_) if old.poisoned() => return Err(eng.drop_derived(ctx)),
        r => r?,
    };
    let rev = RevisionRecord {
        parent: old.revision,
        snapshot: Digest(tree.root()),
        created: created.to_string(),
        bundles: state
            .bundles
            .iter()
            .map(|(name, b)| BundleRef {
                name: name.clone(),
                record: b.record,
                concepts: b.concepts,
            })
            .collect(),
    };
    let rev_bytes = rev.encode();
    let revision = Digest::of(&rev_bytes);

    // Every record the new revision reaches and the head does not (engine.md §8.2).
    let old_records: HashSet<Digest> = old.state.bundles.values().map(|b| b.record).collect();
    let mut sources = Vec::new();
    let mut lists = Vec::new();
    let mut seen: HashSet<Digest> = HashSet::new();
    for (name, b) in &state.bundles {
        if old_records.contains(&b.record) || !seen.insert(b.record) {
            continue;
        }
        let bytes = sealed
            .get(&b.record)
            .cloned()
            .unwrap_or_else(|| b.record().encode());
        lists.push((Key::new(Kind::Record, b.record), bytes));
        // A source the same bundle held before is reached by the head; any other is put
        // (again, at worst, which only refreshes its put time).
        let before: HashSet<Digest> = old
            .state
            .bundles
            .get(name)
            .map(|o| o.docs.values().map(|d| d.hash).collect())
            .unwrap_or_default();
        for d in b.docs.values() {
            if !before.contains(&d.hash) && seen.insert(d.hash) {
                sources.push((Key::new(Kind::Source, d.hash), d.text.as_bytes().to_vec()));
            }
        }
    }
    let mut records = sources;
    records.extend(lists);
    let baseline_list = match baseline_change {
        Some(b) => {
            records.extend(b.records);
            b.list
        }
        None => old_baselines,
    };
    records.push((Key::new(Kind::Revision, revision), rev_bytes));

    let record = HeadRecord {
        revision,
        retained_from,
        baselines: baseline_list,
    };
    let bytes = record.encode();
    let mut served = Served::new(model, tree, Some(revision), Some(rev.snapshot), state);
    // The texts it shares with the served state keep being checked on first use; its own
    // sources came from the request.
    served.carry_checks(
        &old,
        records
            .iter()
            .filter(|r| r.0.kind == Kind::Source)
            .map(|r| r.0.digest),
    );
    let served = Arc::new(served);
    let prepared = PreparedCommit {
        expected: old_head.map(|h| h.bytes),
        head: bytes.clone(),
        records,
        revision,
    };
    eng.in_flight = Some(Pending {
        head: Loaded { bytes, record },
        served: Some(served.clone()),
        revision,
        record: Some(Arc::new(rev)),
        reload: false,
        undo: delta.undo,
    });
    Ok(Staged::Commit(prepared, served, delta.renamed))
}

pub(crate) fn diagnostics(s: &Served) -> Vec<DiagnosticInfo> {
    s.model
        .diagnostics()
        .iter()
        .map(DiagnosticInfo::from)
        .collect()
}

pub(crate) fn revision_result(s: &Served) -> RevisionResult {
    RevisionResult {
        revision: s.revision().unwrap_or_default(),
        snapshot: s.snapshot_id(),
        concepts: s.concepts(),
        bundles: s.model.bundles.clone(),
        diagnostics: diagnostics(s),
    }
}

/// The renames of a commit as results list them, without the id `skip` had before.
fn renamed(delta: &[(String, String)], skip: Option<&str>) -> Vec<Renamed> {
    let mut out: Vec<Renamed> = delta
        .iter()
        .filter(|(from, _)| Some(from.as_str()) != skip)
        .map(|(from, to)| Renamed {
            from: from.clone(),
            to: to.clone(),
        })
        .collect();
    out.sort();
    out
}

/// What a commit result is computed from: the state before and after, and the renames.
pub(crate) struct Outcome<'a> {
    old: &'a Served,
    new: &'a Served,
    renamed: &'a [(String, String)],
}

fn concept_id(s: &Served, bundle: &str, path: &str) -> Option<String> {
    s.model
        .bundle_concepts(bundle)
        .iter()
        .find(|c| c.path == path)
        .map(|c| c.id.clone())
}

fn write_result(o: &Outcome<'_>, change: &Change) -> WriteResult {
    let new = o.new;
    let bundle = new
        .state
        .find_bundle(&change.bundle)
        .unwrap_or(&change.bundle)
        .to_string();
    let hash = new
        .state
        .doc(&bundle, &change.path)
        .map(|d| d.hash.to_hex())
        .unwrap_or_default();
    let before = concept_id(o.old, &bundle, &change.path);
    WriteResult {
        hash,
        revision: new.revision().unwrap_or_default(),
        snapshot: new.snapshot_id(),
        concepts: new.concepts(),
        id: concept_id(new, &bundle, &change.path),
        renamed: renamed(o.renamed, before.as_deref()),
        diagnostics: new
            .model
            .diagnostics_of(&bundle, &change.path)
            .iter()
            .map(DiagnosticInfo::from)
            .collect(),
    }
}

fn delete_result(o: &Outcome<'_>) -> DeleteResult {
    DeleteResult {
        revision: o.new.revision().unwrap_or_default(),
        snapshot: o.new.snapshot_id(),
        concepts: o.new.concepts(),
        renamed: renamed(o.renamed, None),
    }
}

/// Runs the shared commit path for validated changes.
fn commit_changes<T: 'static>(
    eng: &mut Engine,
    ctx: &mut Ctx,
    changes: &[Change],
    expected: Option<Digest>,
    single: bool,
    created: &str,
    result: impl Fn(&Outcome<'_>) -> T,
) -> Flowing<Progress<T>> {
    check_created(created)?;
    ensure_current(eng, ctx)?;
    let old = eng.served.clone();
    let edit = apply_changes(&old, changes, expected, single, None)?;
    Ok(
        match stage(eng, ctx, edit, Ambiguity::Refuse, created, None)? {
            Staged::NoOp => Progress::Done(result(&Outcome {
                old: &old,
                new: &old,
                renamed: &[],
            })),
            Staged::Commit(p, new, renamed) => Progress::Commit(
                p,
                Some(result(&Outcome {
                    old: &old,
                    new: &new,
                    renamed: &renamed,
                })),
            ),
        },
    )
}

impl Engine {
    /// `write(bundle, path, content, replaces?)` (engine.md §4.1): a one-change transaction.
    /// `created` is the commit time, ISO-8601 UTC with milliseconds.
    pub fn write(
        &self,
        bundle: &str,
        path: &str,
        content: impl Into<Content>,
        replaces: Option<&str>,
        created: &str,
    ) -> Op<WriteResult> {
        let (bundle, path, created) = (bundle.to_string(), path.to_string(), created.to_string());
        let replaces = replaces.map(str::to_string);
        let content = content.into();
        Op::new(move |eng, ctx| {
            let hash = replaces.as_deref().map(parse_hash).transpose();
            let change = check_change("write", &bundle, &path, Some(content.clone()), hash)?;
            if matches!(&change.operation, Operation::Write(t) if t.len() > request::MAX_PAYLOAD) {
                return Err(Error::Invalid(request::PAYLOAD.into()).into());
            }
            commit_changes(
                eng,
                ctx,
                std::slice::from_ref(&change),
                None,
                true,
                &created,
                |o| write_result(o, &change),
            )
        })
    }

    /// `delete(bundle, path, replaces)` (engine.md §4.2): `replaces` is required.
    pub fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
        created: &str,
    ) -> Op<DeleteResult> {
        let (bundle, path, created) = (bundle.to_string(), path.to_string(), created.to_string());
        let replaces = replaces.map(str::to_string);
        Op::new(move |eng, ctx| {
            let hash = replaces.as_deref().map(parse_hash).transpose();
            let change = check_change("delete", &bundle, &path, None, hash)?;
            commit_changes(
                eng,
                ctx,
                std::slice::from_ref(&change),
                None,
                true,
                &created,
                delete_result,
            )
        })
    }

    /// `transact({changes, expectedRevision?})` (engine.md §5). The request limits of §5.2
    /// are checked again here, so a transaction built in Rust obeys them too.
    pub fn transact(&self, txn: Transaction, created: &str) -> Op<RevisionResult> {
        let created = created.to_string();
        Op::new(move |eng, ctx| {
            if txn.changes.is_empty() || txn.changes.len() > request::MAX_CHANGES {
                return Err(Error::Invalid(request::CHANGE_COUNT.into()).into());
            }
            request::check_duplicates(&txn.changes)?;
            let payload: usize = txn
                .changes
                .iter()
                .map(|c| {
                    if let Operation::Write(t) = &c.operation {
                        t.len()
                    } else {
                        0
                    }
                })
                .sum();
            if payload > request::MAX_PAYLOAD {
                return Err(Error::Invalid(request::PAYLOAD.into()).into());
            }
            commit_changes(
                eng,
                ctx,
                &txn.changes,
                txn.expected_revision,
                false,
                &created,
                |o| revision_result(o.new),
            )
        })
    }

    /// `deleteBundle(bundle)` (engine.md §4.4): removes every document of the bundle in one
    /// revision, whatever its size.
    pub fn delete_bundle(&self, bundle: &str, created: &str) -> Op<RevisionResult> {
        let (bundle, created) = (bundle.to_string(), created.to_string());
        Op::new(move |eng, ctx| {
            validate::bundle_name(&bundle)?;
            check_created(&created)?;
            ensure_current(eng, ctx)?;
            let old = eng.served.clone();
            let Some(name) = old.state.find_bundle(&bundle) else {
                return Err(Error::NotFound("no such bundle".into()).into());
            };
            let mut edit = Editor::new(&old.state);
            edit.remove_bundle(name);
            Ok(
                match stage(eng, ctx, edit, Ambiguity::Refuse, &created, None)? {
                    Staged::NoOp => Progress::Done(revision_result(&old)),
                    Staged::Commit(p, new, _) => Progress::Commit(p, Some(revision_result(&new))),
                },
            )
        })
    }

    /// `restore({revision, expectedRevision})` (engine.md §7): commits a new revision whose
    /// state is a retained revision's state.
    pub fn restore(&self, req: RestoreRequest, created: &str) -> Op<RevisionResult> {
        let created = created.to_string();
        let mut walk: Option<ChainWalk> = None;
        Op::new(move |eng, ctx| {
            let target = parse_hash(&req.revision)?;
            let expected = parse_hash(&req.expected_revision)?;
            check_created(&created)?;
            ensure_current(eng, ctx)?;
            let old = eng.served.clone();
            if old.revision != Some(expected) {
                return Err(Error::conflict(DATABASE_CHANGED).into());
            }
            if !eng.is_retained(ctx, &mut walk, target)? {
                return Err(Error::conflict(NOT_RETAINED).into());
            }
            let rev = eng.fetch_revision(ctx, target)?;
            let state: TenantState = eng.load_state(ctx, target, &rev, &old.state)?;
            // The loaded bundles carry their records' digests; unchanged ones are shared.
            let edit = Editor::new(&state);
            Ok(
                match stage(eng, ctx, edit, Ambiguity::Serve, &created, None)? {
                    Staged::NoOp => Progress::Done(revision_result(&old)),
                    Staged::Commit(p, new, _) => Progress::Commit(p, Some(revision_result(&new))),
                },
            )
        })
    }

    /// Whether `id` lies on the parent chain from the head down to `retainedFrom`. `walk`
    /// is the op's own, so that its next step resumes where this one waited.
    pub(crate) fn is_retained(
        &mut self,
        ctx: &mut Ctx,
        walk: &mut Option<ChainWalk>,
        id: Digest,
    ) -> Flowing<bool> {
        let Some(head) = self.head.as_ref() else {
            return Ok(false);
        };
        let (from, until) = (head.record.revision, head.record.retained_from);
        let walk = match walk {
            Some(w) if w.is_of(from, until) => w,
            _ => walk.insert(ChainWalk::new(from, until)),
        };
        walk.find(self, ctx, |r| r == id)
    }
}

/// An import request (cli.md §4): a folder's documents and its location key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportRequest {
    /// The location key: the folder's canonical absolute path plus the bundle option.
    pub location: String,
    /// The folder's documents (NFC paths, as read by compile.md §1.1).
    pub documents: Vec<SourceDoc>,
    /// `--strict`: commit nothing when a folder document has a diagnostic.
    pub strict: bool,
}

fn folder_conflict(target: &str) -> Error {
    Error::conflict(format!(
        "folder and database both changed {target}; reconcile the source hashes before importing"
    ))
}

/// A folder document for `import`: its key (bundle in lower case, path), the document and
/// its source hash.
type Listed<'a> = ((String, String), (&'a SourceDoc, Digest));

impl Engine {
    /// `import` (cli.md §4): reconciles a folder with the tenant against the location's
    /// baseline, and commits the changes with the new baseline as one revision (or the
    /// baseline alone when no document changes).
    pub fn import(&self, req: ImportRequest, created: &str) -> Op<ImportResult> {
        let created = created.to_string();
        Op::new(move |eng, ctx| {
            crate::compile::check_names(
                req.documents
                    .iter()
                    .map(|d| (d.bundle.as_str(), d.path.as_str())),
            )?;
            check_created(&created)?;
            ensure_current(eng, ctx)?;
            let old = eng.served.clone();
            let head = eng.head.clone();
            // The baseline P of this location.
            let mut baseline: BTreeMap<(String, String), (String, Digest)> = BTreeMap::new();
            if let Some(h) = &head {
                if let Some((_, d)) = h.record.baselines.iter().find(|b| b.0 == req.location) {
                    let key = Key::new(Kind::Record, *d);
                    ctx.need(&[key])?;
                    for (b, p, hash) in
                        BaselineRecord::decode(ctx.bytes(&key), &key.to_string())?.documents
                    {
                        baseline.insert((b.to_ascii_lowercase(), p), (b, hash));
                    }
                }
            }
            // Each folder document's source hash, once (on every core with `parallel`, or
            // many at a time by a host's SHA-256).
            let texts: Vec<&[u8]> = req.documents.iter().map(|d| d.text.as_bytes()).collect();
            let hashed: Vec<Digest> = crate::hash::sha256_many(&texts)
                .into_iter()
                .map(Digest)
                .collect();
            // The folder's documents by (bundle in lower case, path), in that order. A host
            // lists them in that order already, so the sort meets one run; of two with one
            // key the later one counts, as a map's insert would have it.
            let mut listed: Vec<Listed<'_>> = req
                .documents
                .iter()
                .zip(&hashed)
                .map(|(d, h)| ((d.bundle.to_ascii_lowercase(), d.path.clone()), (d, *h)))
                .collect();
            listed.sort_by(|a, b| a.0.cmp(&b.0));
            let mut folder: Vec<Listed<'_>> = Vec::with_capacity(listed.len());
            for e in listed {
                match folder.last_mut() {
                    Some(last) if last.0 == e.0 => *last = e,
                    _ => folder.push(e),
                }
            }
            // Every key of the baseline or the folder, in order: the two sorted lists merged,
            // with no lookups (string comparisons are slow in wasm: docs/benchmarks.md,
            // session 14).
            let mut changes = Vec::new();
            let mut change_hashes = Vec::new();
            let mut in_base = baseline.iter().peekable();
            let mut in_folder = folder.iter().peekable();
            loop {
                let order = match (in_base.peek(), in_folder.peek()) {
                    (None, None) => break,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(b), Some(f)) => b.0.cmp(&f.0),
                };
                let (t, base, listed) = match order {
                    std::cmp::Ordering::Less => {
                        let (t, b) = in_base.next().expect("peeked");
                        (t, Some(b), None)
                    }
                    std::cmp::Ordering::Greater => {
                        let (t, f) = in_folder.next().expect("peeked");
                        (t, None, Some(f))
                    }
                    std::cmp::Ordering::Equal => {
                        let (t, b) = in_base.next().expect("peeked");
                        let (_, f) = in_folder.next().expect("peeked");
                        (t, Some(b), Some(f))
                    }
                };
                let p = base.map(|x| x.1);
                let f_doc = listed.map(|x| x.0);
                let f = listed.map(|x| x.1);
                let shown = f_doc
                    .map(|d| d.bundle.clone())
                    .or_else(|| base.map(|x| x.0.clone()))
                    .unwrap_or_default();
                let db_bundle = old.state.find_bundle(&shown);
                let dcur = db_bundle
                    .and_then(|b| old.state.doc(b, &t.1))
                    .map(|d| d.hash);
                if f == p || f == dcur {
                    continue;
                }
                if dcur != p {
                    return Err(folder_conflict(&format!(
                        "{}/{}",
                        db_bundle.unwrap_or(&shown),
                        t.1
                    ))
                    .into());
                }
                changes.push(Change {
                    operation: match f_doc {
                        Some(d) => Operation::Write(d.text.clone()),
                        None => Operation::Delete,
                    },
                    bundle: shown,
                    path: t.1.clone(),
                    replaces: dcur,
                });
                change_hashes.push(f);
            }
            let edit = apply_changes(&old, &changes, None, false, Some(&change_hashes))?;
            // Sorted and without repeats (the host's order, so again one run).
            let mut documents: Vec<(String, String, Digest)> = req
                .documents
                .iter()
                .zip(&hashed)
                .map(|(d, h)| (d.bundle.clone(), d.path.clone(), *h))
                .collect();
            documents.sort();
            documents.dedup();
            let rec = BaselineRecord { documents }.encode();
            let digest = Digest::of(&rec);
            let mut list: Vec<(String, Digest)> = head
                .as_ref()
                .map(|h| h.record.baselines.clone())
                .unwrap_or_default();
            list.retain(|b| b.0 != req.location);
            list.push((req.location.clone(), digest));
            list.sort();
            let baselines = Baselines {
                list,
                records: vec![(Key::new(Kind::Record, digest), rec)],
            };
            let result = |new: &Served, committed: bool| {
                let folder_docs: HashSet<(String, &str)> = req
                    .documents
                    .iter()
                    .map(|d| (d.bundle.to_ascii_lowercase(), d.path.as_str()))
                    .collect();
                ImportResult {
                    revision: new.revision().unwrap_or_default(),
                    snapshot: new.snapshot_id(),
                    concepts: new.concepts(),
                    bundles: new.model.bundles.clone(),
                    diagnostics: new
                        .model
                        .diagnostics()
                        .iter()
                        .filter(|d| {
                            folder_docs.contains(&(d.bundle.to_ascii_lowercase(), d.path.as_str()))
                        })
                        .map(DiagnosticInfo::from)
                        .collect(),
                    reused: old.revision.is_some() && new.tree.root() == old.tree.root(),
                    committed,
                }
            };
            Ok(
                match stage(eng, ctx, edit, Ambiguity::Refuse, &created, Some(baselines))? {
                    Staged::NoOp => {
                        let r = result(&old, false);
                        Progress::Done(r)
                    }
                    Staged::Commit(p, new, _) => {
                        let r = result(&new, true);
                        if req.strict && !r.diagnostics.is_empty() {
                            eng.discard();
                            return Ok(Progress::Done(
                                ImportResult {
                                    committed: false,
                                    ..result(&old, false)
                                }
                                .with_diagnostics(r.diagnostics),
                            ));
                        }
                        Progress::Commit(p, Some(r))
                    }
                },
            )
        })
    }
}

impl ImportResult {
    fn with_diagnostics(mut self, diagnostics: Vec<DiagnosticInfo>) -> ImportResult {
        self.diagnostics = diagnostics;
        self
    }
}
