//! The from-scratch pass against the incremental pass.

use crate::compile::{
    link, link_leaving, parse_document, Ambiguity, Change, Held, LinkDelta, Linker, SourceDoc,
};
use crate::testutil::okf_sample_docs;
use proptest::prelude::*;
use std::sync::Arc;

const BUNDLES: [&str; 4] = ["ops", "sales", "x", "a"];
const PATHS: [&str; 14] = [
    "orders.md",
    "a/orders.md",
    "sales/orders.md",
    "b/a/orders.md",
    "ops/x.md",
    "x.md",
    "My Note.md",
    "My_Note.md",
    "index.md",
    "a/index.md",
    "c.md",
    "x/orders.md",
    "Orders.MD",
    "sales/x.md",
];
const BODIES: [&str; 9] = [
    "---\ntype: t\n---\nPlain.\n",
    "---\ntype: t\n---\n[o](orders.md) [up](../orders.md) [root](/a/orders.md)\n",
    "[[orders]] [[sales/orders]] [[My Note]] [[x]] [[x/orders]]\n",
    "---\ntype: t\n---\n[[ops/x]] [[a/orders]] [i](index.md) [m](My%20Note.md)\n",
    "# Title\n[[c]] [[orders|label]] [nowhere](zz.md) [[a/index]]\n",
    "---\ntype: t\ndescription: d\n---\n[[sales/orders]] [[ops/orders]] [[x/orders]] [[a/orders]]\n",
    "---\nstale_after: nope\n---\n[self](c.md) [[Orders]]\n",
    "",
    "[[sales/x]] [[x]] [[ops/x]] [[orders~2]] [[My_Note]]\n",
];

fn change((b, p, body): (usize, usize, Option<usize>)) -> Change {
    let bundle = BUNDLES[b].to_string();
    let path = PATHS[p].to_string();
    Change {
        doc: body.map(|i| {
            let text: Arc<str> = Arc::from(BODIES[i]);
            let parsed = (!crate::validate::is_navigation(&path))
                .then(|| Arc::new(parse_document(&path, &text, 120)));
            (SourceDoc::new(bundle.clone(), path.clone(), text), parsed)
        }),
        bundle,
        path,
    }
}

/// Everything a delta says, in a comparable form.
fn delta_text(d: &LinkDelta) -> String {
    let undo: Vec<_> = d
        .undo
        .iter()
        .map(|c| (&c.bundle, &c.path, c.doc.as_ref().map(|(d, p)| (d, p))))
        .collect();
    format!(
        "removed {:?}\nupserted {:?}\nrenamed {:?}\nundo {:?}",
        d.removed, d.upserted, d.renamed, undo
    )
}

/// The okf-samples documents as changes that add them, each parsed as a commit parses it.
fn okf_sample_changes() -> Vec<Change> {
    okf_sample_docs()
        .into_iter()
        .map(|d| {
            let parsed = (!crate::validate::is_navigation(&d.path))
                .then(|| Arc::new(parse_document(&d.path, &d.text, 120)));
            Change {
                bundle: d.bundle.clone(),
                path: d.path.clone(),
                doc: Some((d, parsed)),
            }
        })
        .collect()
}

/// Applies `first` to an empty linker both ways, then `then` to both; compares results,
/// models and deltas, and the model with [`link`].
fn compare(ambiguity: Ambiguity, first: Vec<Change>, then: Vec<Vec<Change>>) {
    let mut full = Linker::new(ambiguity);
    let mut inc = Linker::incremental_only(ambiguity);
    let a = full.apply(first.clone());
    let b = inc.apply(first.clone());
    match (&a, &b) {
        (Ok(a), Ok(b)) => assert_eq!(delta_text(a), delta_text(b)),
        (Err(a), Err(b)) => {
            assert_eq!(a.message(), b.message());
            return;
        }
        _ => panic!("one pass failed: {:?} / {:?}", a.is_ok(), b.is_ok()),
    }
    assert_eq!(full.model(), inc.model());
    // A linker restored from the model and the documents holds exactly what the full pass
    // built, and goes on alike.
    let mut restored = Linker::restore(ambiguity, full.held(), full.model()).expect("restore");
    assert_eq!(restored.dump(), full.dump());
    let docs: Vec<_> = first.iter().filter_map(|c| c.doc.clone()).collect();
    // `link_leaving` builds what `link` builds, or fails alike.
    match (
        link(docs.clone(), ambiguity),
        link_leaving(docs.clone(), ambiguity),
    ) {
        (Ok(m), Ok((n, _))) => assert_eq!(m, n),
        (Err(a), Err(b)) => assert_eq!(a.message(), b.message()),
        _ => panic!("link and link_leaving disagree"),
    }
    if let Ok(m) = link(docs, ambiguity) {
        // `link` takes the documents as they are (no removals, keyed by their own bundle
        // and path): compare when that is what the changes said.
        if first.iter().all(|c| {
            c.doc
                .as_ref()
                .is_some_and(|(d, _)| d.bundle == c.bundle && d.path == c.path)
        }) {
            assert_eq!(&m, inc.model());
        }
    }
    for step in then {
        let a = full.apply(step.clone());
        let b = inc.apply(step.clone());
        let c = restored.apply(step);
        match (&a, &b, &c) {
            (Ok(a), Ok(b), Ok(c)) => {
                assert_eq!(delta_text(a), delta_text(b));
                assert_eq!(delta_text(a), delta_text(c));
            }
            (Err(a), Err(b), Err(c)) => {
                assert_eq!(a.message(), b.message());
                assert_eq!(a.message(), c.message());
            }
            _ => panic!("one pass failed"),
        }
        assert_eq!(full.model(), inc.model());
        assert_eq!(full.model(), restored.model());
        assert_eq!(full.dump(), restored.dump());
    }
}

#[test]
fn okf_samples_full_equals_incremental() {
    let changes: Vec<Change> = okf_sample_changes();
    // Then remove a third of them, one commit.
    let removals: Vec<Change> = changes
        .iter()
        .step_by(3)
        .map(|c| Change {
            bundle: c.bundle.clone(),
            path: c.path.clone(),
            doc: None,
        })
        .collect();
    let mut reversed = changes.clone();
    reversed.reverse();
    compare(Ambiguity::Refuse, reversed, vec![removals]);
}

fn op() -> impl Strategy<Value = (usize, usize, Option<usize>)> {
    (
        0..BUNDLES.len(),
        0..PATHS.len(),
        proptest::option::weighted(0.85, 0..BODIES.len()),
    )
}

/// Cases per property: 400, or `FULL_PASS_CASES` for a longer run.
fn cases() -> u32 {
    std::env::var("FULL_PASS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn full_pass_equals_incremental(
        first in proptest::collection::vec(op(), 0..40),
        then in proptest::collection::vec(proptest::collection::vec(op(), 1..6), 0..4),
        serve in any::<bool>(),
    ) {
        let ambiguity = if serve { Ambiguity::Serve } else { Ambiguity::Refuse };
        compare(
            ambiguity,
            first.into_iter().map(change).collect(),
            then.into_iter().map(|s| s.into_iter().map(change).collect()).collect(),
        );
    }
}

/// The tiers of compile.md §5.1 written plainly, to check [`local_ids`] against.
fn local_ids_plain(paths: &[&str]) -> Vec<String> {
    use crate::compile::{strip_md, underscore_spaces};
    let cands: Vec<[String; 3]> = paths
        .iter()
        .map(|p| {
            let full = underscore_spaces(strip_md(p));
            let segs: Vec<&str> = full.split('/').collect();
            let last = segs[segs.len() - 1].to_string();
            let t1 = if segs.len() >= 2 {
                format!("{}/{}", segs[segs.len() - 2], last)
            } else {
                last.clone()
            };
            [last, t1, full]
        })
        .collect();
    cands
        .iter()
        .map(|c| {
            let count = |t: usize| cands.iter().filter(|o| o[t] == c[t]).count();
            if count(0) == 1 {
                c[0].clone()
            } else if count(1) == 1 {
                c[1].clone()
            } else {
                c[2].clone()
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn local_ids_match_the_tiers(
        paths in proptest::collection::vec("(/?)([ab ]{0,2}/){0,3}[ab x]{0,2}(\\.md|\\.MD)?", 0..12)
    ) {
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        prop_assert_eq!(crate::compile::local_ids(&refs), local_ids_plain(&refs));
    }
}

#[test]
fn a_change_keyed_apart_from_its_document_links_the_same_both_ways() {
    // The change's key wins over the document's own bundle and path.
    let mut moved = change((1, 0, Some(1)));
    moved.path = "moved/orders.md".to_string();
    let others = vec![change((1, 10, Some(3))), change((0, 5, Some(2)))];
    let mut first = others.clone();
    first.push(moved);
    compare(Ambiguity::Serve, first, vec![others]);
}

#[test]
fn restore_refuses_a_model_of_other_documents() {
    let docs: Vec<Change> = okf_sample_changes();
    let mut full = Linker::new(Ambiguity::Serve);
    full.apply(docs).unwrap();
    let held = full.held();
    assert!(Linker::restore(Ambiguity::Serve, held.clone(), full.model()).is_ok());
    let i = held
        .iter()
        .position(|c| c.doc.as_ref().is_some_and(|d| d.1.is_some()))
        .unwrap();
    let mut fewer = held.clone();
    fewer.remove(i);
    assert!(Linker::restore(Ambiguity::Serve, fewer, full.model()).is_err());
    let mut other = held.clone();
    if let Some(d) = other[i].doc.as_mut() {
        d.1 = Some(Arc::new(parse_document(
            "x.md",
            "---\ntype: other\n---\nElse.\n",
            120,
        )));
    }
    assert!(Linker::restore(Ambiguity::Serve, other, full.model()).is_err());
}

/// `restore_held` takes bundles and paths in order, each once, and refuses anything else
/// (the engine then applies the documents instead).
#[test]
fn restore_held_refuses_documents_out_of_order() {
    let mut full = Linker::new(Ambiguity::Serve);
    full.apply(okf_sample_changes()).unwrap();
    let held = full.held();
    let mut bundles: Vec<(&str, Vec<Held<'_>>)> = Vec::new();
    for c in &held {
        let (doc, parsed) = c.doc.as_ref().unwrap();
        let h = Held {
            path: &c.path,
            text: &doc.text,
            parsed: parsed.as_ref(),
        };
        match bundles.last_mut() {
            Some((b, list)) if *b == c.bundle => list.push(h),
            _ => bundles.push((&c.bundle, vec![h])),
        }
    }
    let restore = |b: &[(&str, Vec<Held<'_>>)]| {
        Linker::restore_held(
            Ambiguity::Serve,
            b.iter().map(|(n, l)| (*n, l.iter().copied())),
            full.model(),
        )
    };
    let restored = restore(&bundles).expect("in order");
    assert_eq!(restored.dump(), full.dump());
    let (i, _) = bundles
        .iter()
        .enumerate()
        .find(|(_, (_, l))| l.len() > 1)
        .expect("a bundle of two documents");
    let mut swapped = bundles.clone();
    swapped[i].1.swap(0, 1);
    assert!(restore(&swapped).is_err());
    let mut twice = bundles.clone();
    let first = twice[i].1[0];
    twice[i].1.insert(0, first);
    assert!(restore(&twice).is_err());
    assert!(bundles.len() > 1, "a sample of two bundles");
    let mut reversed = bundles.clone();
    reversed.reverse();
    assert!(restore(&reversed).is_err());
}

/// A restored linker finds the dependents of every commit by a pass over the documents and
/// never builds its dependency indexes by itself (docs/compile.md §11 rule 3): building
/// them costs about twenty passes, and a commit that paid for them was the first write
/// after a server opened (44 ms at 20,000 concepts against 8.7). `index_dependencies`
/// (what `warm` calls) builds them; before and after, it goes on as the full pass does.
#[test]
fn a_restored_linker_builds_its_dependency_indexes_only_when_asked() {
    let docs: Vec<Change> = okf_sample_changes();
    let bundle = docs[0].bundle.clone();
    let mut full = Linker::new(Ambiguity::Serve);
    full.apply(docs).unwrap();
    let mut restored = Linker::restore(Ambiguity::Serve, full.held(), full.model()).unwrap();
    assert!(!restored.has_dependency_indexes());
    // Document `n`, linking to `to`.
    let put = |n: usize, to: usize| {
        let path = format!("added-{n}.md");
        let text = format!("---\ntype: note\ntitle: Added {n}\n---\nSee [[added-{to}]].\n");
        let parsed = Arc::new(parse_document(&path, &text, 120));
        let d = SourceDoc::new(bundle.clone(), path.clone(), Arc::from(text.as_str()));
        vec![Change {
            bundle: bundle.clone(),
            path,
            doc: Some((d, Some(parsed))),
        }]
    };
    // Adds and edits, each answered by a pass; the indexes once asked for; more of both.
    let steps = [(1, 2), (1, 3), (2, 3), (3, 1), (4, 2), (2, 1)];
    for (step, (n, to)) in steps.into_iter().enumerate() {
        if step == 4 {
            restored.index_dependencies();
        }
        let a = full.apply(put(n, to)).unwrap();
        let b = restored.apply(put(n, to)).unwrap();
        assert_eq!(delta_text(&a), delta_text(&b));
        assert_eq!(full.model(), restored.model());
        assert_eq!(
            restored.has_dependency_indexes(),
            step >= 4,
            "after commit {step}"
        );
    }
    assert_eq!(full.dump(), restored.dump());
}
