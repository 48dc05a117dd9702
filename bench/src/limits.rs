//! Bounded work (docs/limits.md): what long histories and hostile documents cost.
//!
//! - `history`: a tenant of N one-document commits on the native files store, without gc;
//!   then `verify`, a deep `history` page and a `gc --dry-run`, each timed (wall and on-CPU)
//!   at every size asked for, so the growth can be read off: linear means 5× the revisions
//!   take about 5× the time.
//! - `documents`: the compile of one hostile document each (deep YAML, alias bombs, 8 MiB of
//!   nested flow collections, many equal headings, many keys), timed.

use crate::measure::{ms, sched_ns};
use langonrock::Connection as Conn;
use langonrock_core::compile::parse_document;
use langonrock_core::engine::HistoryRequest;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// One timed operation: wall and on-CPU milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    /// Wall clock.
    pub wall_ms: f64,
    /// On-CPU time of this thread.
    pub cpu_ms: f64,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Timed) {
    let cpu0 = sched_ns().map_or(0, |(c, _)| c);
    let t0 = Instant::now();
    let out = f();
    let wall_ms = ms(t0.elapsed());
    let cpu_ms = (sched_ns().map_or(0, |(c, _)| c).saturating_sub(cpu0)) as f64 / 1e6;
    (out, Timed { wall_ms, cpu_ms })
}

/// The figures at one history length.
#[derive(Debug, Clone)]
pub struct HistoryRow {
    /// Revisions in the tenant.
    pub revisions: usize,
    /// `verify` of every revision.
    pub verify: Timed,
    /// `history` of the oldest page (`before` the 101st-oldest revision's cursor walks the
    /// whole chain).
    pub history_deep: Timed,
    /// `gc --dry-run --keep 10`.
    pub gc_dry: Timed,
}

/// Grows one tenant to each size in `sizes` (ascending) with one-document commits and
/// measures at each. The commits go through the real files store (fsync included).
pub fn history(data: &Path, sizes: &[usize]) -> Result<Vec<HistoryRow>, String> {
    let tenant = "long";
    let writer = Conn::open(data, tenant, false).map_err(|e| e.message())?;
    let mut made = 0;
    let mut rows = Vec::new();
    for &n in sizes {
        while made < n {
            // A few documents, rewritten in turn: every commit changes one bundle record.
            let path = format!("n{}.md", made % 20);
            let current = writer.current_hash("notes", &path);
            let text = format!("---\ntype: note\n---\nRevision {made}.\n");
            writer
                .write("notes", &path, &text, current.as_deref())
                .map_err(|e| e.message())?;
            made += 1;
        }
        let (v, verify) = timed(|| {
            langonrock::Options::default()
                .read_only(true)
                .unloaded()
                .open_files(data, tenant)
                .and_then(|c| c.verify())
        });
        let v = v.map_err(|e| e.message())?;
        if !v.ok || v.verified_revisions.len() != n {
            return Err(format!("verify at {n}: {v:?}"));
        }
        // The cursor of the revision 100 from the end: its page walks the whole chain.
        let oldest = &v.verified_revisions[n.saturating_sub(101)];
        let cursor = langonrock_core::engine::encode_cursor(
            tenant,
            &langonrock_core::engine::Digest::from_hex(oldest).ok_or("bad id")?,
        );
        let reader = Conn::open(data, tenant, true).map_err(|e| e.message())?;
        let (page, history_deep) = timed(|| {
            reader.history(HistoryRequest {
                before: Some(cursor.clone()),
                limit: Some(100),
            })
        });
        let page = page.map_err(|e| e.message())?;
        if page.revisions.len() != 100.min(n - 1) {
            return Err(format!(
                "history at {n}: {} revisions",
                page.revisions.len()
            ));
        }
        let dry = Conn::open(data, tenant, true).map_err(|e| e.message())?;
        let (g, gc_dry) = timed(|| {
            dry.gc(langonrock::GcRequest {
                keep: 10,
                dry_run: true,
                grace_ms: 3_600_000,
            })
        });
        let g = g.map_err(|e| e.message())?;
        if g.dropped_revisions as usize != n.saturating_sub(10) {
            return Err(format!("gc at {n}: {g:?}"));
        }
        rows.push(HistoryRow {
            revisions: n,
            verify,
            history_deep,
            gc_dry,
        });
    }
    Ok(rows)
}

/// One hostile document and what compiling it cost.
#[derive(Debug, Clone)]
pub struct DocumentRow {
    /// What the document holds.
    pub name: &'static str,
    /// Its size in bytes.
    pub bytes: usize,
    /// The compile of that one document.
    pub compile: Timed,
    /// The first diagnostic of the document's head, if any (shortened).
    pub outcome: String,
}

fn hostile_documents() -> Vec<(&'static str, String)> {
    let flow = |d: usize, n: usize| {
        let unit = format!("{}{}", "[".repeat(d), "]".repeat(d));
        format!("a: [{}]", vec![unit.as_str(); n].join(","))
    };
    let mut laughs = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let mut prev = "a".to_string();
    for l in 0..9 {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        laughs.push_str(&format!("l{l}: &l{l} [{refs}]\n"));
        prev = format!("l{l}");
    }
    let fm = |yaml: &str| format!("---\ntype: t\n{yaml}\n---\nBody.\n");
    vec![
        (
            "YAML flow sequences 100,000 deep (200 KB)",
            fm(&format!(
                "a: {}{}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            )),
        ),
        (
            "YAML flow mappings 100,000 deep",
            fm(&format!(
                "a: {}x{}",
                "{a: ".repeat(100_000),
                "}".repeat(100_000)
            )),
        ),
        ("YAML billion laughs (9 × 9 aliases)", fm(&laughs)),
        (
            "YAML one 2,000-item anchor aliased 2,000 times",
            fm(&format!(
                "a: &x [{}]\nb: [{}]",
                vec!["1"; 2000].join(", "),
                vec!["*x"; 2000].join(", ")
            )),
        ),
        (
            "YAML 8 MiB of flow collections 64 deep",
            fm(&flow(64, 8 * 1024 * 1024 / 129)),
        ),
        (
            "YAML 160,000 keys (1.6 MB)",
            fm(&(0..160_000)
                .map(|i| format!("k{i}: v\n"))
                .collect::<String>()),
        ),
        (
            "Markdown 250,000 equal headings (1 MB)",
            format!("---\ntype: t\n---\n{}", "# a\n".repeat(250_000)),
        ),
        (
            "Markdown 1,000,000 [ (1 MB)",
            format!("---\ntype: t\n---\n{}", "[".repeat(1_000_000)),
        ),
        (
            "Markdown 200,000 unresolved wiki links",
            format!(
                "---\ntype: t\n---\n{}",
                (0..200_000)
                    .map(|i| format!("[[t{i}]] "))
                    .collect::<String>()
            ),
        ),
    ]
}

/// Compiles each hostile document on its own.
pub fn documents() -> Vec<DocumentRow> {
    hostile_documents()
        .into_iter()
        .map(|(name, text)| {
            let bytes = text.len();
            let text: Arc<str> = text.into();
            let (docs, compile) = timed(|| {
                langonrock_core::compile::compile(
                    &[langonrock_core::compile::SourceDoc::new(
                        "b",
                        "a.md",
                        text.clone(),
                    )],
                    langonrock_core::compile::SUMMARY_WIDTH,
                )
            });
            let parsed = parse_document("a.md", &text, 120);
            let outcome = match docs {
                Ok(m) => m
                    .diagnostics()
                    .first()
                    .map(|d| d.message.chars().take(90).collect())
                    .unwrap_or_else(|| format!("compiled, {} sections", parsed.sections.len())),
                Err(e) => e.message(),
            };
            DocumentRow {
                name,
                bytes,
                compile,
                outcome,
            }
        })
        .collect()
}
