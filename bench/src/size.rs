//! Everything measured at one corpus size, in one process: the session bills from our
//! rendered tool output, the per-read averages, and the latency protocol of
//! agent-session.md §9 (compile, cold open, manifest, batched `get`, `get` with `find`,
//! index build, query with `pos`, edit to search, 25-document transactions, history,
//! restore), over the memory store and over the native files store.

use crate::billing::{
    bill, find_window_turns, manifest_first_turns_with, okf_turns, search_first_turns_with, tokens,
    Bill, BillingError, OkfCosts, SearchRead, SectionRead, Turn, EVAL_DATE,
};
use crate::corpus::{expected_checksum, Corpus, PER_BUNDLE};
use crate::host::{MemHost, Tenant, TENANT};
use crate::measure::{self, loadavg, ms, once, peak_rss_kb, status_kb, Plan, Stats};
use crate::questions::{questions, Question, Target};
use crate::rendered::{ReadAverages, Rendered};
use crate::store::{BareCosts, RawIds};
use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
use langonrock_core::engine::{
    Change, Digest, HistoryRequest, Operation, RestoreRequest, Transaction,
};
use langonrock_core::read::{get, get_mcp, GetOptions, Outcome};
use langonrock_core::search::{Index, SearchOptions};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::path::Path;
use std::time::Instant;

/// The five probe queries of agent-session.md §9.2, cycled.
pub const PROBES: [&str; 5] = [
    "orders grain join refunds",
    "settled card wallet authorisation",
    "browsing visit anonymous traffic",
    "subscription billing cycle",
    "inventory warehouse stock",
];

/// The batched `get` of §9.1: Q8's three ids, all with section `joins`.
pub const GET3_IDS: [&str; 3] = [
    "shipments_b1_raw_1",
    "shipments_b1_raw_2",
    "campaigns_b1_daily_2",
];
/// The section of the batched `get`.
pub const GET3_SECTION: &str = "joins";
/// `get` with `find`: this id's whole body, this phrase (the default window of 2,000).
pub const FIND_ID: &str = "shipments_b1_raw_1";
/// The phrase of the `find` read.
pub const FIND_PHRASE: &str = "nightly load";

/// How many runs of each operation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Runs {
    /// Compile, cold opens, index build (slow, whole-tenant operations).
    pub slow: usize,
    /// Warm reads: warm-up and timed runs.
    pub warm: (usize, usize),
    /// The manifest render (whole tenant: 3 MiB of text at 20,000 concepts).
    pub manifest: (usize, usize),
    /// Edit to search.
    pub edits: usize,
    /// Each 25-document transaction and the restore.
    pub txns: usize,
    /// History pages.
    pub history: usize,
}

impl Runs {
    /// The runs at `concepts`; `quick` cuts them down for a smoke run.
    pub fn at(concepts: usize, quick: bool) -> Runs {
        if quick {
            return Runs {
                slow: 1,
                warm: (2, 10),
                manifest: (1, 3),
                edits: 3,
                txns: 2,
                history: 3,
            };
        }
        let slow = match concepts {
            0..=1000 => 15,
            1001..=5000 => 9,
            _ => 7,
        };
        Runs {
            slow,
            warm: (10, 100),
            manifest: if concepts > 5000 { (3, 30) } else { (10, 100) },
            edits: 30,
            txns: 20,
            history: 30,
        }
    }
}

/// One billed session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    /// Its key (`okf`, `manifest-bare`, `manifest`, …).
    pub key: String,
    /// The bill; `None` for a session the rules make null.
    pub bill: Option<Bill>,
    /// Its turns (the input of `billing.py`'s `bill`).
    pub turns: Option<Vec<Turn>>,
}

/// The operations of one store.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ops {
    /// One write (a marker appended), then a search that finds it first, then a `get`
    /// with `find` that locates it.
    pub edit_to_search: Stats,
    /// The first such edit after the connection opened (timed on its own).
    #[serde(default)]
    pub first_edit: Stats,
    /// A transaction creating 25 documents.
    pub create25: Stats,
    /// A transaction replacing 25 documents.
    pub replace25: Stats,
    /// A history page (the default 20).
    pub history: Stats,
    /// A restore of the revision before the head (25 documents change back).
    pub restore: Stats,
}

/// What one size measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeReport {
    /// Concepts.
    pub concepts: usize,
    /// Bundles.
    pub bundles: usize,
    /// Files, index files included.
    pub files: usize,
    /// UTF-8 bytes of the tree.
    pub bytes: usize,
    /// `CHECKSUMS` line of the generated corpus.
    pub checksum: String,
    /// Whether it equals the published one.
    pub checksum_ok: bool,
    /// The runs taken.
    pub runs: Runs,
    /// Corpus generation, ms.
    pub generate_ms: f64,
    /// `compile` over the whole tree.
    pub compile: Stats,
    /// The import into the memory store (one revision), `(wall, CPU)` ms.
    pub import_memory: (f64, f64),
    /// A fresh engine opened from the memory store without a derived record: it reads
    /// every source and compiles.
    pub open_memory: Stats,
    /// A fresh engine opened from the memory store holding the head's derived record
    /// (engine.md §9.1 rule 4): decoded, no compile.
    #[serde(default)]
    pub open_memory_derived: Stats,
    /// The derived record's size in bytes.
    #[serde(default)]
    pub derived_bytes: usize,
    /// A fresh read-only connection opened from the files store (the binary's `Conn::open`).
    pub open_files: Option<Stats>,
    /// Whether that connection served from the derived record the import left.
    #[serde(default)]
    pub open_files_from_derived: bool,
    /// The whole tenant manifest rendered, warm.
    pub manifest: Stats,
    /// Its length in UTF-16 units.
    pub manifest_units: usize,
    /// The batched `get` of three sections as the MCP tool renders it.
    pub get3: Stats,
    /// Its tokens.
    pub get3_tokens: u64,
    /// `get` with `find`.
    pub get_find: Stats,
    /// Its match count and tokens.
    pub get_find_matches: usize,
    /// Tokens of the `find` reply.
    pub get_find_tokens: u64,
    /// `Index::build` over the model; its on-CPU time is the whole process's (the build runs
    /// on every core).
    pub index_build: Stats,
    /// A search with `pos` over the five probes, warm, as the MCP tool renders it.
    pub query: Stats,
    /// The sessions.
    pub sessions: Vec<Session>,
    /// The per-read averages.
    pub averages: ReadAverages,
    /// Write operations over the memory store.
    pub memory_ops: Ops,
    /// Write operations over the files store.
    pub files_ops: Option<Ops>,
    /// VmRSS after the memory-store import, KiB.
    pub rss_after_import_kb: Option<u64>,
    /// VmHWM of this whole process at the end, KiB.
    pub peak_rss_kb: Option<u64>,
    /// Load averages sampled between phases.
    pub load: Vec<f64>,
    /// Wall time of this whole process, ms.
    pub total_ms: f64,
}

fn err<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn core_err(what: &str) -> impl Fn(langonrock_core::Error) -> String + '_ {
    move |e| format!("{what}: {}", e.message())
}

/// Search costs from the rendered output, section costs from the bare text: the
/// reference's own asymmetry (agent-session.md §4), for a like-for-like figure.
struct Mixed<'a> {
    search: &'a Rendered<'a>,
    bare: &'a BareCosts,
}

impl SearchRead for Mixed<'_> {
    fn search_tokens(&self, q: &Question) -> Result<u64, BillingError> {
        self.search.search_tokens(q)
    }
    fn window_tokens(&self, q: &Question) -> Result<Option<u64>, BillingError> {
        self.search.window_tokens(q)
    }
}

impl SectionRead for Mixed<'_> {
    fn section(&self, q: &Question, t: &Target) -> Result<(String, u64), BillingError> {
        self.bare.section(q, t)
    }
}

fn session(key: &str, turns: Result<Vec<Turn>, BillingError>) -> Result<Session, String> {
    let turns = turns.map_err(|e| format!("session {key}: {e}"))?;
    Ok(Session {
        key: key.to_string(),
        bill: Some(bill(&turns)),
        turns: Some(turns),
    })
}

/// Bills every session at this size over the served state.
fn sessions(
    qs: &[Question],
    okf: &OkfCosts,
    r: &Rendered<'_>,
    bare: &BareCosts,
) -> Result<Vec<Session>, String> {
    let mixed = Mixed { search: r, bare };
    let mut out = vec![
        session("okf", okf_turns(qs, okf))?,
        session("manifest-bare", manifest_first_turns_with(qs, bare, false))?,
        session("manifest", manifest_first_turns_with(qs, r, false))?,
        session(
            "manifest-per-section",
            manifest_first_turns_with(qs, r, true),
        )?,
        session("search", search_first_turns_with(qs, r, false))?,
        session("search-per-section", search_first_turns_with(qs, r, true))?,
        session("search-bare", search_first_turns_with(qs, &mixed, false))?,
    ];
    let window = find_window_turns(qs, r).map_err(|e| format!("find window: {e}"))?;
    out.push(Session {
        key: "window".into(),
        bill: window.as_ref().map(|t| bill(t)),
        turns: window,
    });
    Ok(out)
}

/// A document of the first bundle the write operations touch.
#[derive(Clone)]
struct DocRef {
    path: String,
    text: String,
    hash: String,
}

fn new_concept(i: usize, j: usize) -> String {
    format!(
        "---\ntype: BigQuery Table\ntitle: Bench New {i} {j}\ndescription: A table created by the benchmark, batch {i}, number {j}.\nstatus: current\ngrain: bench_id\n---\n\nOne row per benchmark event, batch {i}.\n\n# Schema\n\n| column | type | description |\n| --- | --- | --- |\n| bench_id | STRING | Primary key. |\n"
    )
}

/// The write operations of the latency protocol over `t`. `edit_docs` get markers
/// appended; `replace_docs` are replaced 25 at a time.
fn ops(
    t: &mut dyn Tenant,
    bundle: &str,
    edit_docs: &[String],
    replace_docs: &[String],
    runs: &Runs,
    tag: &str,
) -> Result<Ops, String> {
    let served = t.served().map_err(core_err("read"))?;
    let load = |paths: &[String]| -> Result<Vec<DocRef>, String> {
        paths
            .iter()
            .map(|p| {
                let s = served
                    .read_source(bundle, p)
                    .ok_or_else(|| format!("no document {bundle}/{p}"))?;
                Ok(DocRef {
                    path: p.clone(),
                    text: s.content,
                    hash: s.hash,
                })
            })
            .collect()
    };
    let mut edits = load(edit_docs)?;
    let replaces = load(replace_docs)?;
    // The index exists before the first edit, as in a serving process.
    served
        .search(TENANT, PROBES[0], &SearchOptions::default(), EVAL_DATE)
        .map_err(core_err("search"))?;
    drop(served);

    let n_edit = edits.len();
    let mut edit = |i: usize| -> Result<(), String> {
        let d = &mut edits[i % n_edit];
        let marker = format!("zq{tag}edit{i}mark");
        let text = format!("{}\nEdit marker {marker}.\n", d.text);
        let w = t
            .write(bundle, &d.path, &text, Some(&d.hash))
            .map_err(core_err("write"))?;
        let s = t.served().map_err(core_err("read"))?;
        let tsv = s
            .search(TENANT, &marker, &SearchOptions::default(), EVAL_DATE)
            .map_err(core_err("search"))?;
        let id = w.id.clone().unwrap_or_default();
        let first = tsv
            .lines()
            .skip_while(|l| !l.starts_with("id\t"))
            .nth(1)
            .and_then(|l| l.split('\t').next());
        if first != Some(id.as_str()) {
            return Err(format!(
                "the search for {marker} did not find {id} first:\n{tsv}"
            ));
        }
        let opts = GetOptions {
            find: Some(marker.clone()),
            ..GetOptions::default()
        };
        let found = get(s.model(), &[id.as_str()], &opts);
        let located = found.entries.first().is_some_and(
            |e| matches!(&e.outcome, Outcome::Found(sl) if sl.match_count.unwrap_or(0) == 1),
        );
        if !located {
            return Err(format!("get with find did not locate {marker}"));
        }
        d.text = text;
        d.hash = w.hash;
        Ok(())
    };
    // The first commit of a connection that opened from a derived record also builds the
    // incremental linker: timed on its own, then the steady state.
    let first_edit = measure::run(Plan::slow(1), &mut edit)?;
    let edit_to_search = measure::run(Plan::slow(runs.edits), |i| edit(i + 1))?;

    let create25 = measure::run_with(
        Plan::slow(runs.txns),
        |i| {
            Ok::<_, String>(Transaction {
                changes: (0..25)
                    .map(|j| Change {
                        operation: Operation::Write(new_concept(i, j).into()),
                        bundle: bundle.to_string(),
                        path: format!("tables/bench_{tag}_{i}_{j}.md"),
                        replaces: None,
                    })
                    .collect(),
                expected_revision: None,
            })
        },
        |_, txn| {
            let r = t.transact(txn).map_err(core_err("create 25"))?;
            if r.concepts == 0 {
                return Err("create 25 left no concepts".into());
            }
            Ok(())
        },
    )?;

    let replaces = RefCell::new(replaces);
    let t = RefCell::new(t);
    let replace25 = measure::run_with(
        Plan::slow(runs.txns),
        |i| {
            let changes = replaces
                .borrow()
                .iter()
                .map(|d| {
                    Ok(Change {
                        operation: Operation::Write(
                            format!("{}\nReplaced in round {i}.\n", d.text).into(),
                        ),
                        bundle: bundle.to_string(),
                        path: d.path.clone(),
                        replaces: Some(
                            Digest::from_hex(&d.hash).ok_or_else(|| "bad hash".to_string())?,
                        ),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok::<_, String>(Transaction {
                changes,
                expected_revision: None,
            })
        },
        |i, txn| {
            let mut t = t.borrow_mut();
            t.transact(txn).map_err(core_err("replace 25"))?;
            let s = t.served().map_err(core_err("read"))?;
            for d in replaces.borrow_mut().iter_mut() {
                d.text = format!("{}\nReplaced in round {i}.\n", d.text);
                d.hash = s
                    .source_hash(bundle, &d.path)
                    .ok_or_else(|| format!("{} vanished", d.path))?;
            }
            Ok(())
        },
    )?;

    let history = measure::run(
        Plan {
            warmup: 2,
            runs: runs.history,
            per_run_cpu: true,
        },
        |_| {
            let page = t
                .borrow_mut()
                .history(HistoryRequest::default())
                .map_err(core_err("history"))?;
            if page.revisions.len() != 20 && (page.next.is_some() || page.revisions.is_empty()) {
                return Err(format!(
                    "a history page of {} revisions",
                    page.revisions.len()
                ));
            }
            Ok(())
        },
    )?;

    // Restore the revision before the head: each restore undoes the last commit (a
    // 25-document replace, then the previous restore), so every run changes 25 documents.
    let restore = measure::run_with(
        Plan::slow(runs.txns),
        |_| {
            let page = t
                .borrow_mut()
                .history(HistoryRequest {
                    before: None,
                    limit: Some(2),
                })
                .map_err(core_err("history"))?;
            match &page.revisions[..] {
                [head, before, ..] => Ok(RestoreRequest {
                    revision: before.revision.clone(),
                    expected_revision: head.revision.clone(),
                }),
                _ => Err("fewer than two revisions".to_string()),
            }
        },
        |_, req| {
            t.borrow_mut().restore(req).map_err(core_err("restore"))?;
            Ok(())
        },
    )?;

    Ok(Ops {
        edit_to_search,
        first_edit,
        create25,
        replace25,
        history,
        restore,
    })
}

/// Measures everything at `concepts` concepts. `data` is a files-store data root holding
/// tenant `bench` imported from the same corpus (the parent imports it through the CLI).
pub fn measure(concepts: usize, data: Option<&Path>, quick: bool) -> Result<SizeReport, String> {
    let started = Instant::now();
    let runs = Runs::at(concepts, quick);
    let bundles = concepts / PER_BUNDLE;
    let mut load = Vec::new();
    load.extend(loadavg());

    let (corpus, generate_ms, _) = once(|| Corpus::reference(bundles));
    let corpus = corpus.map_err(err("corpus"))?;
    let checksum = corpus.checksum_line();
    let checksum_ok = expected_checksum(concepts) == Some(checksum.as_str());
    let qs = questions(&corpus).map_err(err("questions"))?;
    let okf = OkfCosts::from_corpus(&corpus);
    let bundle = corpus.bundles[0].clone();
    let first: Vec<String> = corpus
        .concepts
        .iter()
        .filter(|c| c.bundle == bundle)
        .map(|c| c.path.split_once('/').map_or("", |x| x.1).to_string())
        .collect();
    let edit_docs: Vec<String> = first.iter().skip(200).take(10).cloned().collect();
    let replace_docs: Vec<String> = first.iter().skip(300).take(25).cloned().collect();
    let (files, bytes) = (corpus.files.len(), corpus.total_bytes());
    let docs: Vec<SourceDoc> = corpus
        .files
        .iter()
        .map(|f| SourceDoc::new(f.bundle(), f.bundle_path(), f.text.as_str()))
        .collect();
    drop(corpus);

    // `compile`, the import and the cold opens parse, hash and decode on every core
    // (docs/compile.md §12): the process's CPU time, not this thread's.
    let compile_stats = measure::run_all_threads(runs.slow, |_| {
        let m = compile(&docs, SUMMARY_WIDTH).map_err(core_err("compile"))?;
        if m.concepts().len() != concepts {
            return Err(format!("compiled {} concepts", m.concepts().len()));
        }
        Ok(())
    })?;
    load.extend(loadavg());

    let mut host = MemHost::new().map_err(core_err("engine"))?;
    let (imported, iw, ic) = measure::once_all_threads(|| host.import(docs));
    let imported = imported.map_err(core_err("import"))?;
    if imported.concepts != concepts {
        return Err(format!("imported {} concepts", imported.concepts));
    }
    let rss_after_import_kb = status_kb(None, "VmRSS");

    let open_memory = measure::run_all_threads(runs.slow, |_| {
        let e = host.open_cold().map_err(core_err("open"))?;
        let n = e.read().map_err(core_err("read"))?.concepts();
        if n != concepts {
            return Err(format!("opened {n} concepts"));
        }
        Ok(())
    })?;
    // The head's derived record, put into the memory store: later opens decode it.
    let derived_bytes = {
        let s = host.served().map_err(core_err("read"))?;
        let (key, bytes) = s
            .derived_record(EVAL_DATE, true)
            .ok_or("the served state has no derived record")?;
        langonrock_core::engine::Store::put(&mut host.store, TENANT, &key, &bytes)
            .map_err(|e| format!("put the derived record: {e:?}"))?;
        bytes.len()
    };
    let open_memory_derived = measure::run_all_threads(runs.slow, |_| {
        let e = host.open_cold().map_err(core_err("open"))?;
        let s = e.read().map_err(core_err("read"))?;
        if s.concepts() != concepts || !s.from_derived() {
            return Err(format!(
                "opened {} concepts, from the derived record: {}",
                s.concepts(),
                s.from_derived()
            ));
        }
        Ok(())
    })?;
    let mut open_files_from_derived = false;
    let open_files = match data {
        None => None,
        Some(d) => Some(measure::run_all_threads(runs.slow, |_| {
            let c =
                langonrock::Connection::open(d, TENANT, true).map_err(core_err("open files"))?;
            let n = c.read().map_err(core_err("read"))?.concepts();
            if n != concepts {
                return Err(format!("opened {n} concepts from files"));
            }
            open_files_from_derived = c.served_from_derived();
            Ok(())
        })?),
    };
    load.extend(loadavg());

    let served = host.served().map_err(core_err("read"))?;
    let model = served.model();
    let ids = RawIds::of(model);

    let mut manifest_units = 0;
    let manifest = measure::run(
        Plan {
            warmup: runs.manifest.0,
            runs: runs.manifest.1,
            per_run_cpu: false,
        },
        |_| {
            let m = langonrock_core::manifest::manifest(model, TENANT, None, EVAL_DATE)
                .map_err(core_err("manifest"))?;
            manifest_units = m.encode_utf16().count();
            Ok::<(), String>(())
        },
    )?;

    let get3_ids: Vec<String> = GET3_IDS
        .iter()
        .map(|raw| Ok(ids.concept(model, &bundle, raw)?.id.clone()))
        .collect::<Result<_, BillingError>>()
        .map_err(err("get ids"))?;
    let get3_opts = GetOptions {
        section: Some(GET3_SECTION.into()),
        ..GetOptions::default()
    };
    let get3_text = get_mcp(model, &get3_ids, &get3_opts);
    if get3_text.matches("\n@@ ").count() != 2 || get3_text.contains("no section") {
        return Err(format!(
            "the batched get is not three sections:\n{get3_text}"
        ));
    }
    let get3 = measure::run(
        Plan {
            warmup: runs.warm.0,
            runs: runs.warm.1,
            per_run_cpu: false,
        },
        |_| {
            std::hint::black_box(get_mcp(model, &get3_ids, &get3_opts));
            Ok::<(), String>(())
        },
    )?;

    let find_id = ids
        .concept(model, &bundle, FIND_ID)
        .map_err(err("find id"))?
        .id
        .clone();
    let find_opts = GetOptions {
        find: Some(FIND_PHRASE.into()),
        ..GetOptions::default()
    };
    let find_result = get(model, &[find_id.as_str()], &find_opts);
    let get_find_matches = find_result.entries.first().map_or(0, |e| match &e.outcome {
        Outcome::Found(s) => s.match_count.unwrap_or(0),
        _ => 0,
    });
    if get_find_matches == 0 {
        return Err(format!("find {FIND_PHRASE:?} does not locate in {find_id}"));
    }
    let get_find_tokens = tokens(&get_mcp(model, &[find_id.as_str()], &find_opts));
    let get_find = measure::run(
        Plan {
            warmup: runs.warm.0,
            runs: runs.warm.1,
            per_run_cpu: false,
        },
        |_| {
            std::hint::black_box(get_mcp(model, &[find_id.as_str()], &find_opts));
            Ok::<(), String>(())
        },
    )?;

    // On every core (docs/search.md §10): the process's CPU time, not this thread's.
    let index_build = measure::run_all_threads(runs.slow, |_| {
        std::hint::black_box(Index::build(model, EVAL_DATE));
        Ok::<(), String>(())
    })?;

    let query = measure::run(
        Plan {
            warmup: runs.warm.0,
            runs: runs.warm.1,
            per_run_cpu: false,
        },
        |i| {
            let tsv = served
                .search(
                    TENANT,
                    PROBES[i % PROBES.len()],
                    &SearchOptions::default(),
                    EVAL_DATE,
                )
                .map_err(core_err("search"))?;
            std::hint::black_box(tsv);
            Ok::<(), String>(())
        },
    )?;
    load.extend(loadavg());

    let rendered = Rendered::new(&served, TENANT).map_err(err("render"))?;
    let bare = BareCosts::from_model(model.clone(), TENANT)?;
    let sessions = sessions(&qs, &okf, &rendered, &bare)?;
    let averages = rendered.averages(&qs).map_err(err("averages"))?;
    drop(rendered);
    drop(bare);
    drop(served);

    let memory_ops = ops(&mut host, &bundle, &edit_docs, &replace_docs, &runs, "m")?;
    drop(host);
    load.extend(loadavg());
    let files_ops = match data {
        None => None,
        Some(d) => {
            let mut c =
                langonrock::Connection::open(d, TENANT, false).map_err(core_err("open files"))?;
            Some(ops(&mut c, &bundle, &edit_docs, &replace_docs, &runs, "f")?)
        }
    };
    load.extend(loadavg());

    Ok(SizeReport {
        concepts,
        bundles,
        files,
        bytes,
        checksum,
        checksum_ok,
        runs,
        generate_ms,
        compile: compile_stats,
        import_memory: (iw, ic),
        open_memory,
        open_memory_derived,
        derived_bytes,
        open_files,
        open_files_from_derived,
        manifest,
        manifest_units,
        get3,
        get3_tokens: tokens(&get3_text),
        get_find,
        get_find_matches,
        get_find_tokens,
        index_build,
        query,
        sessions,
        averages,
        memory_ops,
        files_ops,
        rss_after_import_kb,
        peak_rss_kb: peak_rss_kb(),
        load,
        total_ms: ms(started.elapsed()),
    })
}

/// The sessions alone at `concepts` concepts (the `sessions` command).
pub fn sessions_only(concepts: usize) -> Result<Vec<Session>, String> {
    let corpus = Corpus::reference(concepts / PER_BUNDLE).map_err(err("corpus"))?;
    let qs = questions(&corpus).map_err(err("questions"))?;
    let okf = OkfCosts::from_corpus(&corpus);
    let mut host = MemHost::new().map_err(core_err("engine"))?;
    host.import(
        corpus
            .files
            .iter()
            .map(|f| SourceDoc::new(f.bundle(), f.bundle_path(), f.text.as_str()))
            .collect(),
    )
    .map_err(core_err("import"))?;
    let served = host.served().map_err(core_err("read"))?;
    let rendered = Rendered::new(&served, TENANT).map_err(err("render"))?;
    let bare = BareCosts::from_model(served.model().clone(), TENANT)?;
    sessions(&qs, &okf, &rendered, &bare)
}

/// Peak RSS of reading a folder, compiling it and building the index, in this process
/// (run it in a fresh child): `(VmHWM after reading, VmHWM at the end, concepts)` in KiB.
pub fn rss_compile_index(dir: &Path) -> Result<(Option<u64>, Option<u64>, usize), String> {
    let read = langonrock_node_mcp::folder::read_folder(dir, None).map_err(core_err("read"))?;
    let docs: Vec<SourceDoc> = read.docs.into_iter().map(|d| d.doc).collect();
    let after_read = peak_rss_kb();
    let model = compile(&docs, SUMMARY_WIDTH).map_err(core_err("compile"))?;
    let index = Index::build(&model, EVAL_DATE);
    let n = model.concepts().len();
    std::hint::black_box(&index);
    Ok((after_read, peak_rss_kb(), n))
}
