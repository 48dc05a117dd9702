use super::*;

fn files(paths: &[&'static str]) -> Vec<Entry<'static>> {
    paths
        .iter()
        .map(|p| Entry {
            path: p,
            kind: EntryKind::File,
        })
        .collect()
}

fn opts<'a>(name: &'a str, bundle: Option<&'a str>) -> Options<'a> {
    Options {
        bundle,
        name: Some(name),
        shown: "./in",
    }
}

/// `(bundle/path, entry index)` of every planned document, in plan order.
fn placed(p: &Plan) -> Vec<(String, usize)> {
    p.documents
        .iter()
        .map(|d| (format!("{}/{}", d.bundle, d.path), d.entry))
        .collect()
}

fn err(entries: &[Entry<'_>], o: &Options<'_>) -> String {
    plan(entries, o).expect_err("refused").message()
}

#[test]
fn a_flat_folder_is_one_bundle_named_after_it() {
    let e = files(&["b.md", "a.md", "notes.txt"]);
    let p = plan(&e, &opts("my-notes", None)).expect("plan");
    assert_eq!(
        p.layout,
        Layout::OneBundle {
            bundle: "my-notes".into(),
            chosen: false
        }
    );
    assert_eq!(
        placed(&p),
        vec![("my-notes/a.md".into(), 1), ("my-notes/b.md".into(), 0)]
    );
    assert_eq!(
        p.line,
        "reading ./in as one bundle \"my-notes\": it has Markdown files at its root (a.md, b.md); --bundle <name> names it"
    );
}

#[test]
fn index_md_at_the_root_makes_one_bundle_with_its_subfolders() {
    let e = files(&["concepts/x.md", "index.md", "tables/orders.md", "README.md"]);
    let p = plan(&e, &opts("kb", None)).expect("plan");
    assert_eq!(p.bundles, vec!["kb".to_string()]);
    assert_eq!(
        placed(&p),
        vec![
            ("kb/README.md".into(), 3),
            ("kb/concepts/x.md".into(), 0),
            ("kb/index.md".into(), 1),
            ("kb/tables/orders.md".into(), 2)
        ]
    );
    assert!(
        p.line
            .starts_with("reading ./in as one bundle \"kb\": it has index.md at its root"),
        "{}",
        p.line
    );
}

#[test]
fn subfolders_are_bundles_and_repository_files_stay_out() {
    let e = files(&[
        "LICENSE.md",
        "sales/orders.md",
        "ops/runbooks/replay.md",
        "ops/viz.html",
        ".git/x.md",
        "sales/.obsidian/y.md",
    ]);
    let p = plan(&e, &opts("samples", None)).expect("plan");
    assert_eq!(p.layout, Layout::Bundles);
    assert_eq!(p.bundles, vec!["ops".to_string(), "sales".to_string()]);
    assert_eq!(
        placed(&p),
        vec![
            ("ops/runbooks/replay.md".into(), 2),
            ("sales/orders.md".into(), 1)
        ]
    );
    assert_eq!(
        p.line,
        "reading ./in as 2 bundles, one per subfolder; left out at its root: LICENSE.md"
    );
}

#[test]
fn a_note_at_the_root_beside_subfolders_makes_one_bundle() {
    let e = files(&["todo.md", "projects/a.md", "LICENSE.md"]);
    let p = plan(&e, &opts("vault", None)).expect("plan");
    assert_eq!(p.bundles, vec!["vault".to_string()]);
    assert_eq!(p.documents.len(), 3);
    // Only repository files at the root and no subfolder: still one bundle.
    let p = plan(&files(&["README.md"]), &opts("x", None)).expect("plan");
    assert_eq!(placed(&p), vec![("x/README.md".into(), 0)]);
}

#[test]
fn a_subfolder_that_is_no_bundle_name_makes_one_bundle() {
    let e = files(&["Daily Notes/2026-01-01.md", "projects/a.md"]);
    let p = plan(&e, &opts("My Vault", None)).expect("plan");
    assert_eq!(
        p.layout,
        Layout::OneBundle {
            bundle: "My-Vault".into(),
            chosen: false
        }
    );
    assert_eq!(
        p.line,
        "reading ./in as one bundle \"My-Vault\" (named after \"My Vault\"): its subfolder \"Daily Notes\" is not a bundle name, so it is no folder of bundles; --bundle <name> names it"
    );
}

#[test]
fn bundle_option_overrides_and_is_validated() {
    let e = files(&["LICENSE.md", "sales/orders.md"]);
    let p = plan(&e, &opts("samples", Some("all"))).expect("plan");
    assert_eq!(
        placed(&p),
        vec![
            ("all/LICENSE.md".into(), 0),
            ("all/sales/orders.md".into(), 1)
        ]
    );
    assert_eq!(p.line, "reading ./in as one bundle \"all\" (--bundle)");
    assert_eq!(
        err(&e, &opts("samples", Some("a b"))),
        "invalid bundle name \"a b\": expected 1-64 chars of [a-z0-9_-]"
    );
}

#[test]
fn nothing_to_import_names_the_reason() {
    let o = opts("in", None);
    assert_eq!(
        err(&[], &o),
        "nothing to import in ./in: the folder is empty"
    );
    assert_eq!(
        err(&files(&["a.txt", "b/c.png", "d.csv", "e.pdf"]), &o),
        "nothing to import in ./in: 4 files and none ends in .md (a.txt, b/c.png, d.csv and 1 more)"
    );
    let hidden = [Entry {
        path: ".obsidian",
        kind: EntryKind::Dir,
    }];
    assert_eq!(
        err(&hidden, &o),
        "nothing to import in ./in: it holds only names starting with \".\", which import skips (.obsidian)"
    );
    let link = [Entry {
        path: "loop",
        kind: EntryKind::Link,
    }];
    assert_eq!(
        err(&link, &o),
        "nothing to import in ./in: only symbolic links, which import does not follow (loop)"
    );
    let dir = [Entry {
        path: "empty",
        kind: EntryKind::Dir,
    }];
    assert_eq!(
        err(&dir, &o),
        "nothing to import in ./in: it holds no files"
    );
    // With --bundle too.
    assert_eq!(
        err(&files(&["a.txt"]), &opts("in", Some("b"))),
        "nothing to import in ./in: 1 file and none ends in .md (a.txt)"
    );
}

#[test]
fn links_are_named_in_the_line() {
    let mut e = files(&["a.md"]);
    e.push(Entry {
        path: "loop",
        kind: EntryKind::Link,
    });
    let p = plan(&e, &opts("n", None)).expect("plan");
    assert!(
        p.line.ends_with("; 1 symbolic link not followed: loop"),
        "{}",
        p.line
    );
}

#[test]
fn names_and_paths_are_validated_and_normalised() {
    let o = opts("n", None);
    assert_eq!(
        err(&files(&["b/a:b.md"]), &o),
        "invalid path \"a:b.md\": segment \"a:b.md\" holds \":\", which Windows file names cannot hold"
    );
    assert_eq!(
        err(&files(&["Sales/a.md", "sales/b.md"]), &o),
        "document paths must be unique across case-insensitive filesystems"
    );
    // Of many refused paths (validated on every core), the first in the walk's order is
    // the error, whatever lies between them.
    let mut many: Vec<String> = (0..3000).map(|i| format!("b/ok{i}.md")).collect();
    many.insert(1234, "b/z:z.md".into());
    many.insert(2345, "b/a:a.md".into());
    let leaked: Vec<&'static str> = many
        .into_iter()
        .map(|p| &*Box::leak(p.into_boxed_str()))
        .collect();
    assert_eq!(
        err(&files(&leaked), &o),
        "invalid path \"z:z.md\": segment \"z:z.md\" holds \":\", which Windows file names cannot hold"
    );
    // NFD file names become NFC paths.
    let p = plan(&files(&["Cafe\u{301}.md"]), &o).expect("plan");
    assert_eq!(p.documents[0].path, "Caf\u{e9}.md");
    // A folder without a usable name.
    assert_eq!(
        err(
            &files(&["a.md"]),
            &Options {
                bundle: None,
                name: None,
                shown: "/"
            }
        ),
        "/ has no name to give its bundle: import it with --bundle <name>"
    );
    assert_eq!(
        err(&files(&["a.md"]), &opts("...", None)),
        "cannot name a bundle after the folder \"...\": import it with --bundle <name>"
    );
}

#[test]
fn folder_names_become_bundle_names() {
    assert_eq!(bundle_name_for("notes").as_deref(), Some("notes"));
    assert_eq!(bundle_name_for("My Notes").as_deref(), Some("My-Notes"));
    assert_eq!(
        bundle_name_for("  Work / 2026 ").as_deref(),
        Some("Work-2026")
    );
    assert_eq!(bundle_name_for("_drafts").as_deref(), Some("drafts"));
    assert_eq!(bundle_name_for("Café").as_deref(), Some("Caf"));
    assert_eq!(bundle_name_for("con"), None);
    assert_eq!(bundle_name_for("日本"), None);
    let long = "a".repeat(70);
    assert_eq!(bundle_name_for(&long).map(|s| s.len()), Some(64));
}

#[test]
fn the_plan_does_not_depend_on_entry_order() {
    let a = files(&["x/b.md", "y/a.md", "x/a.md", "LICENSE.md"]);
    let mut b = a.clone();
    b.reverse();
    let (pa, pb) = (
        plan(&a, &opts("n", None)).expect("plan"),
        plan(&b, &opts("n", None)).expect("plan"),
    );
    let strip = |p: &Plan| -> Vec<(String, String)> {
        p.documents
            .iter()
            .map(|d| (d.bundle.clone(), d.path.clone()))
            .collect()
    };
    assert_eq!(strip(&pa), strip(&pb));
    assert_eq!(pa.line, pb.line);
}

proptest::proptest! {
    /// The plan's check of sorted names gives what `check_names` gives for the same
    /// documents: the clash ignoring case found or not, the same error.
    #[test]
    fn sorted_names_check_like_check_names(
        mut docs in proptest::collection::vec(
            (
                proptest::sample::select(vec!["a", "b", "B"]),
                "(x/)?[aAbBéÉß]{1,3}\\.(md|MD)",
            ),
            0..12,
        )
    ) {
        docs.sort();
        let pairs: Vec<(&str, &str)> = docs.iter().map(|(b, p)| (*b, p.as_str())).collect();
        let want = crate::compile::check_names(pairs.iter().copied()).map_err(|e| e.message());
        let got = crate::compile::check_sorted_names(&pairs).map_err(|e| e.message());
        proptest::prop_assert_eq!(got, want);
    }
}
