//! Following links: each case of compile.md §6.2 and §6.3, and agreement with the compiler.

use super::{Create, LinkDocument, LinkTargets, Target};
use crate::compile::{compile, RawLink, SourceDoc};
use crate::validate;

fn docs(list: &[(&str, &str)]) -> Vec<SourceDoc> {
    list.iter()
        .map(|(b, p)| SourceDoc::new(*b, *p, "---\ntype: note\n---\nText.\n"))
        .collect()
}

/// The targets over `list`, with the public ids the compiler gives them.
fn targets_of(sources: &[SourceDoc]) -> LinkTargets {
    let model = compile(sources, 120).expect("compiles");
    LinkTargets::new(
        sources
            .iter()
            .map(|d| LinkDocument {
                bundle: d.bundle.clone(),
                path: d.path.clone(),
                id: model
                    .concepts
                    .iter()
                    .find(|c| c.bundle == d.bundle && c.path == d.path)
                    .map(|c| c.id.clone()),
            })
            .collect(),
    )
}

fn concept(id: &str) -> Target {
    Target::Concept { id: id.into() }
}

fn create(bundle: &str, path: &str, title: &str) -> Target {
    Target::Unresolved {
        create: Some(Create {
            bundle: bundle.into(),
            path: path.into(),
            title: title.into(),
        }),
    }
}

fn tenant() -> LinkTargets {
    targets_of(&docs(&[
        ("sales", "tables/orders.md"),
        ("sales", "tables/customers.md"),
        ("sales", "index.md"),
        ("sales", "notes/My_Note.md"),
        ("ops", "orders.md"),
        ("ops", "runbooks/deploy.md"),
    ]))
}

#[test]
fn markdown_links_resolve_by_path_from_the_linking_folder() {
    let t = tenant();
    let from = "tables/orders.md";
    assert_eq!(
        t.markdown("sales", from, "customers.md"),
        concept("customers")
    );
    assert_eq!(t.markdown("sales", from, "customers"), concept("customers"));
    assert_eq!(
        t.markdown("sales", from, "./customers.md#keys"),
        concept("customers")
    );
    assert_eq!(
        t.markdown("sales", from, "/tables/customers.md?x=1"),
        concept("customers")
    );
    assert_eq!(
        t.markdown("sales", from, "../notes/My%5FNote.md"),
        concept("My_Note")
    );
    assert_eq!(
        t.markdown("sales", from, "orders.md"),
        concept("sales/orders")
    );
    // A navigation document is shown by path; the compiler ignores the link.
    assert_eq!(
        t.markdown("sales", from, "../index.md"),
        Target::Document {
            bundle: "sales".into(),
            path: "index.md".into()
        }
    );
    // Never into another bundle: the path is the linking bundle's.
    assert_eq!(
        t.markdown("sales", from, "../runbooks/deploy.md"),
        create("sales", "runbooks/deploy.md", "deploy")
    );
    assert_eq!(
        t.markdown("sales", from, "../../outside.md"),
        Target::Unresolved { create: None }
    );
    assert_eq!(
        t.markdown("sales", from, "?q"),
        Target::Unresolved { create: None }
    );
    assert_eq!(
        t.markdown("sales", from, "https://example.com/a.md"),
        Target::External {
            href: "https://example.com/a.md".into()
        }
    );
    assert_eq!(
        t.markdown("sales", from, "#keys"),
        Target::Anchor {
            fragment: "keys".into()
        }
    );
    assert_eq!(
        t.markdown("sales", from, "New%20Note.md"),
        create("sales", "tables/New Note.md", "New Note")
    );
}

#[test]
fn wiki_links_try_path_then_local_id_then_public_id() {
    let t = tenant();
    // Step 2: the linking bundle's own local id before the public id elsewhere.
    assert_eq!(t.wiki("sales", "orders"), concept("sales/orders"));
    assert_eq!(t.wiki("ops", "orders"), concept("ops/orders"));
    // Step 3: a public id in any bundle.
    assert_eq!(t.wiki("ops", "customers"), concept("customers"));
    assert_eq!(t.wiki("ops", "sales/orders"), concept("sales/orders"));
    // Step 1: a path from the bundle root.
    assert_eq!(t.wiki("sales", "tables/customers"), concept("customers"));
    assert_eq!(t.wiki("ops", "runbooks/deploy.md"), concept("deploy"));
    // Step 4: white space as `_`; the label and the heading play no part.
    assert_eq!(t.wiki("sales", "My Note|a label"), concept("My_Note"));
    assert_eq!(t.wiki("sales", "customers#Keys"), concept("customers"));
    assert_eq!(
        t.wiki("sales", "index"),
        Target::Document {
            bundle: "sales".into(),
            path: "index.md".into()
        }
    );
    assert_eq!(
        t.wiki("sales", "#Keys"),
        Target::Anchor {
            fragment: "Keys".into()
        }
    );
    assert_eq!(
        t.wiki("sales", "mailto:a@b.c|mail"),
        Target::External {
            href: "mailto:a@b.c".into()
        }
    );
    assert_eq!(
        t.wiki("sales", "Gamma ray"),
        create("sales", "Gamma ray.md", "Gamma ray")
    );
    assert_eq!(t.wiki("sales", "/a/b.md"), create("sales", "a/b.md", "b"));
    assert_eq!(
        t.wiki("sales", "Cafe\u{301}"),
        create("sales", "Caf\u{e9}.md", "Caf\u{e9}")
    );
}

#[test]
fn local_ids_are_the_compilers_even_when_a_folder_is_named_like_the_bundle() {
    // `sales/orders.md` in bundle `ops` has the local id `sales/orders` (tier 1, beside
    // `orders.md`), then the public id `ops/sales/orders` (compile.md §5.2 rule 3).
    let t = targets_of(&docs(&[
        ("ops", "sales/orders.md"),
        ("ops", "orders.md"),
        ("sales", "orders.md"),
    ]));
    assert_eq!(t.wiki("ops", "sales/orders"), concept("ops/sales/orders"));
    assert_eq!(t.wiki("ops", "orders"), concept("ops/orders"));
    assert_eq!(t.wiki("sales", "orders"), concept("sales/orders"));
    assert_eq!(t.wiki("sales", "ops/orders"), concept("ops/orders"));
}

/// For every link of every concept of the okf-samples bundles, the target found here is
/// among the concept's compiled links, or among its unresolved ones: the two agree.
#[test]
fn every_followed_link_agrees_with_the_compiler() {
    let sources = crate::testutil::okf_sample_docs();
    let model = compile(&sources, 120).expect("compiles");
    let t = targets_of(&sources);
    let mut checked = 0;
    for c in &model.concepts {
        let unresolved: Vec<&str> = c
            .diagnostics
            .iter()
            .filter_map(|d| d.strip_prefix("unresolved link \"")?.strip_suffix('"'))
            .collect();
        for l in &c.parsed.links {
            let (target, text) = match l {
                RawLink::Markdown { dest, .. } => (t.markdown(&c.bundle, &c.path, dest), dest),
                RawLink::Wiki { text, .. } => (t.wiki(&c.bundle, text), text),
            };
            match target {
                Target::Concept { id } if id == c.id => {}
                Target::Concept { id } => assert!(c.links.contains(&id), "{} -> {id}", c.id),
                Target::Unresolved { .. } => {
                    assert!(unresolved.contains(&text.as_str()), "{} -> {text}", c.id)
                }
                Target::Document { path, .. } => assert!(validate::is_navigation(&path)),
                other => panic!("{} -> {text}: {other:?}", c.id),
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} links");
}
