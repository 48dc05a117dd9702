//! Times the per-document parse and the tenant link pass over a folder of bundles.
use langonrock_core::compile::{link, parse_document, Ambiguity, SourceDoc, SUMMARY_WIDTH};
use std::sync::Arc;
use std::time::Instant;

fn walk(dir: &std::path::Path, bundle: &str, prefix: &str, out: &mut Vec<SourceDoc>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
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

fn main() {
    let root = std::env::args().nth(1).expect("folder");
    let mut docs = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let e = e.unwrap();
        walk(&e.path(), &e.file_name().to_string_lossy(), "", &mut docs);
    }
    let t = Instant::now();
    let parsed: Vec<_> = docs
        .iter()
        .map(|d| {
            let nav = langonrock_core::validate::is_navigation(&d.path);
            (
                d.clone(),
                (!nav).then(|| Arc::new(parse_document(&d.path, &d.text, SUMMARY_WIDTH))),
            )
        })
        .collect();
    let parse_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let model = link(parsed.clone(), Ambiguity::Refuse).unwrap();
    let link_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "{} docs, {} concepts: parse {parse_ms:.1} ms, link {link_ms:.1} ms",
        docs.len(),
        model.concepts().len()
    );
    // Incremental: edit one document's body; add 25 new documents.
    let mut linker = langonrock_core::compile::Linker::new(Ambiguity::Refuse);
    linker
        .apply(
            parsed
                .iter()
                .map(|(d, p)| langonrock_core::compile::Change {
                    bundle: d.bundle.clone(),
                    path: d.path.clone(),
                    doc: Some((d.clone(), p.clone())),
                })
                .collect(),
        )
        .unwrap();
    let target = docs
        .iter()
        .find(|d| !langonrock_core::validate::is_navigation(&d.path))
        .unwrap()
        .clone();
    for round in 0..3 {
        let text = format!("{}\nEdited {round} [x](missing.md)\n", target.text);
        let t = Instant::now();
        let p = Arc::new(parse_document(
            &target.path,
            &Arc::from(text.as_str()),
            SUMMARY_WIDTH,
        ));
        let d = linker
            .apply(vec![langonrock_core::compile::Change {
                bundle: target.bundle.clone(),
                path: target.path.clone(),
                doc: Some((
                    SourceDoc::new(target.bundle.clone(), target.path.clone(), text.as_str()),
                    Some(p),
                )),
            }])
            .unwrap();
        println!(
            "edit one: {:.3} ms ({} upserted)",
            t.elapsed().as_secs_f64() * 1e3,
            d.upserted.len()
        );
    }
    let t = Instant::now();
    let mut changes = Vec::new();
    for i in 0..25 {
        let path = format!("new/created_{i}.md");
        let text = format!(
            "---\ntype: note\n---\nNew note {i} linking [[{}]].\n",
            target.path.trim_end_matches(".md")
        );
        let p = Arc::new(parse_document(
            &path,
            &Arc::from(text.as_str()),
            SUMMARY_WIDTH,
        ));
        changes.push(langonrock_core::compile::Change {
            bundle: target.bundle.clone(),
            path: path.clone(),
            doc: Some((
                SourceDoc::new(target.bundle.clone(), path, text.as_str()),
                Some(p),
            )),
        });
    }
    let d = linker.apply(changes).unwrap();
    println!(
        "create 25: {:.3} ms ({} upserted)",
        t.elapsed().as_secs_f64() * 1e3,
        d.upserted.len()
    );
    let t = Instant::now();
    let d2 = linker.apply(d.undo).unwrap();
    println!(
        "undo 25: {:.3} ms ({} removed)",
        t.elapsed().as_secs_f64() * 1e3,
        d2.removed.len()
    );
}
