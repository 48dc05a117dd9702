//! `import` of ordinary folders with the real binary (docs/import.md): a flat folder, a
//! folder that is one bundle with bundle-root links, a folder of bundles, a folder with
//! nothing to import, notes with and without frontmatter, the bad inputs (a folder that
//! does not exist, a file, only non-Markdown files, a symbolic link loop, an unreadable
//! file) and the progress line (drawn on a terminal only).

mod common;

use common::{run, text, TempDir};
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap_or(root)).unwrap_or_default();
    std::fs::write(p, text).unwrap_or_default();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

fn import(data: &Path, dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["import", s(dir), "--tenant", "t"];
    args.extend(extra);
    text(&run(data, &args, b""))
}

fn source(data: &Path) -> String {
    text(&run(data, &["source", "--tenant", "t"], b"")).1
}

/// The tenant has no revision: nothing was committed.
fn nothing_committed(data: &Path) {
    let (code, out, _) = text(&run(data, &["history", "--tenant", "t"], b""));
    assert_eq!(code, 0);
    assert!(out.contains("\"revisions\":[]"), "{out}");
}

const TYPED: &str = "---\ntype: note\n---\n# Typed\n\nA typed note.\n";

#[test]
fn a_flat_folder_is_one_bundle_named_after_it() {
    let d = TempDir::new("import-flat");
    let notes = d.path().join("my-notes");
    write(&notes, "groceries.md", "# Groceries\n\nMilk, eggs.\n");
    write(&notes, "ideas.md", TYPED);
    write(&notes, "photo.jpg", "not markdown");
    let data = d.path().join("data");
    let (code, out, err) = import(&data, &notes, &[]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[0],
        format!("reading {} as one bundle \"my-notes\": it has Markdown files at its root (groceries.md, ideas.md); --bundle <name> names it", notes.display())
    );
    // One informational line for the plain note, nothing else about it.
    assert_eq!(
        lines[1],
        "info: my-notes/groceries.md: no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF"
    );
    assert!(
        lines[2].starts_with("snapshot ")
            && lines[2].ends_with(" (new), 1 bundle (my-notes), 2 concepts"),
        "{err}"
    );
    assert_eq!(lines.len(), 3, "{err}");
    let listed = source(&data);
    assert!(
        listed.contains("\tmy-notes/groceries.md\tgroceries\n"),
        "{listed}"
    );
    // `compile` reads it alike, and prints the single-bundle form of a folder that is one.
    let (code, out, cerr) = text(&run(&data, &["compile", s(&notes)], b""));
    assert_eq!(code, 0, "{cerr}");
    assert!(out.starts_with("# bundle: my-notes\n"), "{out}");
    assert!(cerr.starts_with(&format!("{}\n", lines[0])), "{cerr}");
    // Both are concepts: searchable.
    let (_, hits, _) = text(&run(&data, &["search", "milk", "--tenant", "t"], b""));
    assert!(hits.contains("\ngroceries\tmy-notes\t-\t"), "{hits}");
}

#[test]
fn index_md_at_the_root_makes_one_bundle_and_root_links_resolve() {
    let d = TempDir::new("import-kb");
    let kb = d.path().join("kb");
    write(
        &kb,
        "index.md",
        "# Knowledge\n\n- [Orders](/tables/orders.md)\n",
    );
    write(
        &kb,
        "tables/orders.md",
        "---\ntype: table\n---\nOrders. Revenue is [here](/concepts/revenue.md).\n",
    );
    write(
        &kb,
        "concepts/revenue.md",
        "---\ntype: metric\n---\nRevenue from [orders](/tables/orders.md) and [[margin]].\n",
    );
    write(
        &kb,
        "concepts/margin.md",
        "---\ntype: metric\n---\nMargin: [revenue](../concepts/revenue.md).\n",
    );
    let data = d.path().join("data");
    let (code, _, err) = import(&data, &kb, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with(&format!(
            "reading {} as one bundle \"kb\": it has index.md at its root",
            kb.display()
        )),
        "{err}"
    );
    assert!(!err.contains("unresolved"), "{err}");
    assert!(err.contains(" 1 bundle (kb), 3 concepts\n"), "{err}");
    let (_, m, _) = text(&run(&data, &["manifest", "--tenant", "t"], b""));
    assert!(m.contains("\nrevenue\tkb\tmetric\t-\t-\t"), "{m}");
    assert!(m.contains("\tmargin orders\n"), "{m}");
    // --bundle still names it otherwise (another location: its own baseline).
    let (code, _, err) = import(&data, &kb, &["--bundle", "docs"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with(&format!(
            "reading {} as one bundle \"docs\" (--bundle)\n",
            kb.display()
        )),
        "{err}"
    );
    assert!(err.contains("2 bundles (docs, kb)"), "{err}");
}

#[test]
fn a_folder_of_bundles_and_repository_files_at_its_root() {
    let d = TempDir::new("import-bundles");
    let root = d.path().join("tenant");
    write(&root, "README.md", "# About these bundles\n");
    write(&root, "LICENSE.md", "MIT\n");
    write(&root, "sales/orders.md", "---\ntype: table\n---\nOrders.\n");
    write(
        &root,
        "ops/runbooks/replay.md",
        "---\ntype: runbook\n---\nReplay.\n",
    );
    write(&root, ".git/HEAD.md", "not a document");
    let data = d.path().join("data");
    let (code, _, err) = import(&data, &root, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.lines().next().unwrap_or_default(),
        format!(
            "reading {} as 2 bundles, one per subfolder; left out at its root: LICENSE.md, README.md",
            root.display()
        )
    );
    assert!(
        err.contains(" 2 bundles (ops, sales), 2 concepts\n"),
        "{err}"
    );
    assert!(!err.contains("warn:"), "{err}");
}

#[test]
fn nothing_to_import_is_an_error_and_commits_nothing() {
    let d = TempDir::new("import-nothing");
    let data = d.path().join("data");
    let empty = d.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap_or_default();
    let (code, _, err) = import(&data, &empty, &[]);
    assert_eq!(
        (code, err),
        (
            1,
            format!(
                "error: nothing to import in {}: the folder is empty\n",
                empty.display()
            )
        )
    );
    let other = d.path().join("exports");
    write(&other, "a.txt", "x");
    write(&other, "sheets/b.csv", "y");
    let (code, _, err) = import(&data, &other, &[]);
    assert_eq!(
        (code, err),
        (
            1,
            format!(
                "error: nothing to import in {}: 2 files and none ends in .md (a.txt, sheets/b.csv)\n",
                other.display()
            )
        )
    );
    let hidden = d.path().join("vault");
    write(&hidden, ".trash/old.md", "# Old\n");
    let (code, _, err) = import(&data, &hidden, &["--bundle", "v"]);
    assert_eq!(code, 1);
    assert!(
        err.ends_with(": it holds only names starting with \".\", which import skips (.trash)\n"),
        "{err}"
    );
    nothing_committed(&data);
}

#[test]
fn notes_with_and_without_frontmatter_get_one_message_each_at_most() {
    let d = TempDir::new("import-mix");
    let notes = d.path().join("notes");
    write(&notes, "plain.md", "Just text.\n");
    write(&notes, "typed.md", TYPED);
    write(&notes, "untyped.md", "---\ntitle: Untyped\n---\nBody.\n");
    let data = d.path().join("data");
    let (code, _, err) = import(&data, &notes, &[]);
    assert_eq!(code, 0, "{err}");
    let about = |name: &str| err.lines().filter(|l| l.contains(name)).count();
    assert_eq!(about("notes/plain.md"), 1, "{err}");
    assert_eq!(about("notes/typed.md"), 0, "{err}");
    assert_eq!(about("notes/untyped.md"), 1, "{err}");
    assert!(
        err.contains("info: notes/plain.md: no frontmatter: a plain Markdown concept"),
        "{err}"
    );
    assert!(
        err.contains("warn: notes/untyped.md: missing required frontmatter field \"type\""),
        "{err}"
    );
    assert!(!err.contains("plain.md: missing"), "{err}");
    // Many plain notes: one line for all of them.
    let many = d.path().join("many");
    for i in 0..8 {
        write(&many, &format!("n{i}.md"), &format!("Note {i}.\n"));
    }
    let (code, _, err) = import(&data, &many, &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[1],
        "info: 8 documents have no frontmatter: plain Markdown concepts (many/n0.md, many/n1.md, many/n2.md and 5 more)"
    );
    assert_eq!(lines.len(), 3, "{err}");
    // --strict: nothing lands, and the failure is an error line.
    let strict = d.path().join("strict");
    write(&strict, "a.md", "Plain.\n");
    let (code, _, err) = import(&data, &strict, &["--strict"]);
    assert_eq!(code, 1);
    assert!(
        err.ends_with("\nerror: --strict: 1 diagnostic; nothing was imported\n"),
        "{err}"
    );
    assert!(
        !source(&data).contains("strict/"),
        "strict imported nothing"
    );
}

#[test]
fn bad_input_is_one_clear_error_naming_it_and_nothing_is_committed() {
    let d = TempDir::new("import-bad");
    let data = d.path().join("data");
    let missing = d.path().join("no-such-folder");
    assert_eq!(
        import(&data, &missing, &[]),
        (
            1,
            String::new(),
            format!("error: no such folder: {}\n", missing.display())
        )
    );
    let file = d.path().join("note.md");
    write(d.path(), "note.md", TYPED);
    assert_eq!(
        import(&data, &file, &[]),
        (
            1,
            String::new(),
            format!(
                "error: {} is a file, not a folder: import the folder that holds it\n",
                file.display()
            )
        )
    );
    // A symbolic link loop given as the folder.
    let looped = d.path().join("loop");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&looped, &looped).unwrap_or_default();
    let (code, _, err) = import(&data, &looped, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "error: cannot read {}: too many levels of symbolic links\n",
            looped.display()
        )
    );
    // Loops inside a folder are not followed: the import ends and says so.
    let inside = d.path().join("inside");
    write(&inside, "a.md", TYPED);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&inside, inside.join("again")).unwrap_or_default();
        std::os::unix::fs::symlink(inside.join("self"), inside.join("self")).unwrap_or_default();
    }
    let (code, _, err) = import(&data, &inside, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.lines()
            .next()
            .unwrap_or_default()
            .ends_with("; 2 symbolic links not followed: again, self"),
        "{err}"
    );
    let listed = source(&data);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    std::fs::remove_dir_all(data.join("tenants")).unwrap_or_default();
    unreadable_file(d.path(), &data);
    nothing_committed(&data);
}

/// An unreadable file refuses the whole folder, naming the file. Root reads any file, so
/// as root the binary runs as `nobody` (setpriv), on a folder and data root it may use.
#[cfg(unix)]
fn unreadable_file(tmp: &Path, data: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let notes = tmp.join("locked");
    write(&notes, "a.md", TYPED);
    write(&notes, "b.md", TYPED);
    let locked = notes.join("b.md");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap_or_default();
    std::fs::create_dir_all(data).unwrap_or_default();
    for p in [tmp, &notes, data] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap_or_default();
    }
    std::fs::set_permissions(notes.join("a.md"), std::fs::Permissions::from_mode(0o644))
        .unwrap_or_default();
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false);
    let mut cmd = if root {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            common::bin(),
        ]);
        c
    } else {
        std::process::Command::new(common::bin())
    };
    let out = cmd
        .args(["import", s(&notes), "--data", s(data), "--tenant", "t"])
        .output()
        .expect("run langonrock");
    let (code, _, err) = text(&out);
    assert_eq!(
        (code, err),
        (
            1,
            format!(
                "error: cannot read {}: permission denied\n",
                locked.display()
            )
        )
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644)).unwrap_or_default();
}

#[cfg(not(unix))]
fn unreadable_file(_: &Path, _: &Path) {}

#[test]
fn the_progress_line_is_drawn_on_a_terminal_only() {
    let d = TempDir::new("import-progress");
    let notes = d.path().join("big");
    for i in 0..400 {
        write(&notes, &format!("b/n{i:03}.md"), TYPED);
    }
    let data = d.path().join("data");
    // Not a terminal (a pipe): no progress line, no control characters.
    let (code, _, err) = import(&data, &notes, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("files, ") && !err.contains('\r') && !err.contains('\x1b'),
        "{err:?}"
    );
    // On a terminal (script(1) gives the binary a pseudo-terminal): counts and a rate.
    let cmd = format!(
        "{} import {} --data {} --tenant u",
        common::bin(),
        s(&notes),
        s(&data)
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("LANGONROCK_HUGE_PAGES", "0")
        .output();
    let Ok(out) = out else {
        panic!("script(1) is needed for this test (Debian: bsdutils)");
    };
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    assert!(
        tty.contains("reading ") && tty.contains("/400 files, "),
        "{tty:?}"
    );
    assert!(tty.contains("/s"), "{tty:?}");
    // The line is cleared before the status line.
    assert!(tty.contains("1 bundle (b), 400 concepts"), "{tty:?}");
    // `export` shows one too, on a terminal only.
    let out_dir = d.path().join("exported");
    let cmd = format!(
        "{} export {} --data {} --tenant u",
        common::bin(),
        s(&out_dir),
        s(&data)
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script(1)");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(
        tty.contains("writing ") && tty.contains("/400 files, "),
        "{tty:?}"
    );
    assert!(tty.contains("exported 400 files"), "{tty:?}");
    let piped = text(&run(
        &data,
        &["export", s(&d.path().join("again")), "--tenant", "u"],
        b"",
    ));
    assert_eq!(piped, (0, String::new(), "exported 400 files\n".into()));
}
