//! Compile-time benchmark and output digest over a folder of bundles.
//!
//! `perfbench bench <dir> [runs]` prints the median (and min) of `runs` runs of the
//! per-document pass, the tenant pass and `compile` as a whole, in wall time and in thread
//! CPU time (from `/proc/thread-self/schedstat`, which is less disturbed by other processes
//! on a shared machine).
//!
//! `perfbench digest <dir>...` prints a SHA-256 over the `Debug` form of every `ParsedDoc`
//! and of the whole model, so an optimisation can be checked to change no output byte.
//!
//! `perfbench once <dir>` compiles once (for peak RSS); `perfbench parallel <dir> [threads]
//! [runs]` measures the per-document pass spread over host threads; `perfbench floor <dir>`
//! times pulldown-cmark alone over the bodies.
//!
//! `perfbench verify <dir>...` checks `parse_document` against `parse_document_reference`
//! (the pass without fast paths) on every document.
use langonrock_core::compile::{
    compile, link, parse_document, parse_document_reference, Ambiguity, Change, LinkInput, Linker,
    SourceDoc, SUMMARY_WIDTH,
};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Instant;

fn walk(dir: &std::path::Path, bundle: &str, prefix: &str, out: &mut Vec<SourceDoc>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if e.file_type().unwrap().is_dir() {
            walk(&e.path(), bundle, &rel, out);
        } else if name.ends_with(".md") {
            out.push(SourceDoc::new(
                bundle,
                rel,
                std::fs::read_to_string(e.path()).unwrap(),
            ));
        }
    }
}

fn load(root: &str) -> Vec<SourceDoc> {
    let mut docs = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        walk(&e.path(), &e.file_name().to_string_lossy(), "", &mut docs);
    }
    docs
}

/// CPU time of this thread in nanoseconds, or 0 where `/proc` is missing.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

struct Timer(Instant, u64);

impl Timer {
    fn start() -> Timer {
        Timer(Instant::now(), cpu_ns())
    }
    /// (wall ms, cpu ms)
    fn stop(self) -> (f64, f64) {
        (
            self.0.elapsed().as_secs_f64() * 1e3,
            (cpu_ns() - self.1) as f64 / 1e6,
        )
    }
}

fn parse_all(docs: &[SourceDoc]) -> Vec<LinkInput> {
    docs.iter()
        .map(|d| {
            let nav = langonrock_core::validate::is_navigation(&d.path);
            (
                d.clone(),
                (!nav).then(|| Arc::new(parse_document(&d.path, &d.text, SUMMARY_WIDTH))),
            )
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn bench(root: &str, runs: usize) {
    let docs = load(root);
    let mut rows: [(&str, Vec<f64>, Vec<f64>); 4] = [
        ("parse", Vec::new(), Vec::new()),
        ("link", Vec::new(), Vec::new()),
        ("compile", Vec::new(), Vec::new()),
        ("linker", Vec::new(), Vec::new()),
    ];
    let mut concepts = 0;
    for _ in 0..runs {
        let t = Timer::start();
        let parsed = parse_all(&docs);
        let (w, c) = t.stop();
        rows[0].1.push(w);
        rows[0].2.push(c);
        let changes: Vec<Change> = parsed
            .iter()
            .map(|(d, p)| Change {
                bundle: d.bundle.clone(),
                path: d.path.clone(),
                doc: Some((d.clone(), p.clone())),
            })
            .collect();
        let t = Timer::start();
        let mut linker = Linker::new(Ambiguity::Refuse);
        linker.apply(changes).unwrap();
        let (w, c) = t.stop();
        rows[3].1.push(w);
        rows[3].2.push(c);
        drop(linker);
        let t = Timer::start();
        let model = link(parsed, Ambiguity::Refuse).unwrap();
        let (w, c) = t.stop();
        rows[1].1.push(w);
        rows[1].2.push(c);
        concepts = model.concepts().len();
        drop(model);
        let t = Timer::start();
        let model = compile(&docs, SUMMARY_WIDTH).unwrap();
        let (w, c) = t.stop();
        rows[2].1.push(w);
        rows[2].2.push(c);
        drop(model);
    }
    println!(
        "{} docs, {concepts} concepts, {runs} runs (ms: wall median/min, cpu median/min)",
        docs.len()
    );
    for (name, wall, cpu) in &mut rows {
        let wmin = wall.iter().cloned().fold(f64::MAX, f64::min);
        let cmin = cpu.iter().cloned().fold(f64::MAX, f64::min);
        println!(
            "  {name:8} wall {:8.1} {:8.1}   cpu {:8.1} {:8.1}",
            median(wall),
            wmin,
            median(cpu),
            cmin
        );
    }
}

fn digest(roots: &[String]) {
    let mut h = Sha256::new();
    for root in roots {
        let docs = load(root);
        let parsed = parse_all(&docs);
        for (d, p) in &parsed {
            h.update(format!("{}/{}\n{:?}\n", d.bundle, d.path, p).as_bytes());
        }
        let model = link(parsed, Ambiguity::Serve).unwrap();
        if let Ok(compiled) = compile(&docs, SUMMARY_WIDTH) {
            assert_eq!(compiled, model, "compile and link disagree on {root}");
        }
        h.update(format!("{:?}\n", model.bundles).as_bytes());
        for c in model.concepts() {
            h.update(
                format!(
                    "{} {} {} {:?} {:?}\n",
                    c.id, c.bundle, c.path, c.links, c.diagnostics
                )
                .as_bytes(),
            );
        }
        let mut by_id: Vec<_> = model
            .concepts()
            .iter()
            .map(|c| (&c.id, model.position(&c.id).expect("every id has a place")))
            .collect();
        by_id.sort();
        h.update(format!("{by_id:?}\n").as_bytes());
        println!("{root}: {} docs", docs.len());
    }
    let out: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("digest {out}");
}

/// Checks that the fast paths give what the reference paths give, document by document.
fn verify(roots: &[String]) {
    for root in roots {
        let docs = load(root);
        let mut n = 0;
        for d in &docs {
            if langonrock_core::validate::is_navigation(&d.path) {
                continue;
            }
            let fast = parse_document(&d.path, &d.text, SUMMARY_WIDTH);
            let reference = parse_document_reference(&d.path, &d.text, SUMMARY_WIDTH);
            assert_eq!(fast, reference, "{}/{}", d.bundle, d.path);
            n += 1;
        }
        println!("{root}: {n} documents parse the same on both paths");
    }
}

/// Runs one pass `runs` times, for a profiler.
fn profile(pass: &str, root: &str, runs: usize) {
    let docs = load(root);
    let parsed = parse_all(&docs);
    for _ in 0..runs {
        match pass {
            "parse" => drop(parse_all(&docs)),
            "link" => drop(link(parsed.clone(), Ambiguity::Refuse).unwrap()),
            "linker" => {
                let mut linker = Linker::new(Ambiguity::Refuse);
                linker
                    .apply(
                        parsed
                            .iter()
                            .map(|(d, p)| Change {
                                bundle: d.bundle.clone(),
                                path: d.path.clone(),
                                doc: Some((d.clone(), p.clone())),
                            })
                            .collect(),
                    )
                    .unwrap();
            }
            _ => panic!("parse, link or linker"),
        }
    }
}

/// The floor the per-document pass stands on: pulldown-cmark's events over every body
/// with the compiler's options, doing nothing with them; and the frontmatter split alone.
fn floor(root: &str, runs: usize) {
    use langonrock_core::compile::{markdown_options, split_frontmatter};
    let docs = load(root);
    let docs: Vec<&SourceDoc> = docs
        .iter()
        .filter(|d| !langonrock_core::validate::is_navigation(&d.path))
        .collect();
    let bodies: Vec<&str> = docs
        .iter()
        .map(|d| match split_frontmatter(&d.text) {
            Some((_, at)) => &d.text[at..],
            None => &d.text[..],
        })
        .collect();
    let bytes: usize = bodies.iter().map(|b| b.len()).sum();
    let mut rows: Vec<(&str, Vec<f64>)> = vec![
        ("pulldown events", Vec::new()),
        ("pulldown offset events", Vec::new()),
        ("split frontmatter", Vec::new()),
        ("parse_document", Vec::new()),
    ];
    for _ in 0..runs {
        let t = Instant::now();
        let mut n = 0usize;
        for b in &bodies {
            n += pulldown_cmark::Parser::new_ext(b, markdown_options()).count();
        }
        rows[0].1.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for b in &bodies {
            n += pulldown_cmark::Parser::new_ext(b, markdown_options())
                .into_offset_iter()
                .count();
        }
        rows[1].1.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for d in &docs {
            n += split_frontmatter(&d.text).map_or(0, |(i, _)| i.len());
        }
        rows[2].1.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for d in &docs {
            n += parse_document(&d.path, &d.text, SUMMARY_WIDTH).links.len();
        }
        rows[3].1.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(n);
    }
    println!(
        "{} documents, {bytes} body bytes (ms: wall median/min)",
        docs.len()
    );
    for (name, v) in &mut rows {
        let min = v.iter().cloned().fold(f64::MAX, f64::min);
        println!("  {name:24} {:8.1} {:8.1}", median(v), min);
    }
}

/// Loads and compiles once (for `/usr/bin/time -v`: peak RSS of one compile).
fn once(root: &str) {
    let docs = load(root);
    let t = Instant::now();
    let model = compile(&docs, SUMMARY_WIDTH).unwrap();
    println!(
        "{} concepts compiled in {:.1} ms",
        model.concepts().len(),
        t.elapsed().as_secs_f64() * 1e3
    );
}

/// What a host could gain by running the per-document pass on several threads (the core
/// stays single-threaded; `parse_document` is a pure function of one document). Prints the
/// median wall time of the pass over `threads` scoped threads, then of the whole compile
/// with the parallel pass followed by the single-threaded link.
fn parallel(root: &str, threads: usize, runs: usize) {
    let docs = load(root);
    // Each thread's on-CPU time too: with a free core per thread, the pass takes about the
    // largest of them, whatever the load on a shared machine.
    let parse_par = |docs: &[SourceDoc]| -> (Vec<LinkInput>, f64) {
        let chunk = docs.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = docs
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        let start = cpu_ns();
                        let out = parse_all(part);
                        (out, (cpu_ns() - start) as f64 / 1e6)
                    })
                })
                .collect();
            let mut all = Vec::with_capacity(docs.len());
            let mut max_cpu: f64 = 0.0;
            for h in handles {
                let (out, cpu) = h.join().unwrap();
                all.extend(out);
                max_cpu = max_cpu.max(cpu);
            }
            (all, max_cpu)
        })
    };
    let (mut p1, mut p1cpu, mut pn, mut pncpu, mut total, mut linkcpu) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for _ in 0..runs {
        let t = Timer::start();
        drop(parse_all(&docs));
        let (w, c) = t.stop();
        p1.push(w);
        p1cpu.push(c);
        let t = Instant::now();
        let (parsed, cpu) = parse_par(&docs);
        pn.push(t.elapsed().as_secs_f64() * 1e3);
        pncpu.push(cpu);
        drop(parsed);
        let t = Instant::now();
        let (parsed, _) = parse_par(&docs);
        let l = Timer::start();
        let model = link(parsed, Ambiguity::Refuse).unwrap();
        linkcpu.push(l.stop().1);
        total.push(t.elapsed().as_secs_f64() * 1e3);
        drop(model);
    }
    println!(
        "{} docs, {runs} runs, medians (ms): parse on 1 thread wall {:.1} cpu {:.1}; \
         on {threads} threads wall {:.1}, busiest thread cpu {:.1}; \
         parse on {threads} threads + link wall {:.1} (link cpu {:.1})",
        docs.len(),
        median(&mut p1),
        median(&mut p1cpu),
        median(&mut pn),
        median(&mut pncpu),
        median(&mut total),
        median(&mut linkcpu),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench") => bench(
            &args[1],
            args.get(2).map_or(5, |r| r.parse().expect("runs")),
        ),
        Some("digest") => digest(&args[1..]),
        Some("verify") => verify(&args[1..]),
        Some("once") => once(&args[1]),
        Some("parallel") => parallel(
            &args[1],
            args.get(2).map_or(2, |r| r.parse().expect("threads")),
            args.get(3).map_or(5, |r| r.parse().expect("runs")),
        ),
        Some("floor") => floor(
            &args[1],
            args.get(2).map_or(5, |r| r.parse().expect("runs")),
        ),
        Some("profile") => profile(
            &args[1],
            &args[2],
            args.get(3).map_or(3, |r| r.parse().expect("runs")),
        ),
        _ => eprintln!("usage: perfbench bench <dir> [runs] | perfbench digest <dir>... | perfbench verify <dir>... | perfbench profile parse|link|linker <dir> [runs] | perfbench once <dir> | perfbench parallel <dir> [threads] [runs] | perfbench floor <dir> [runs]"),
    }
}
