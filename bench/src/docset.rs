//! A real documentation set as an OKF tenant: the Django documentation, shipped as
//! reStructuredText in Django's source distribution on PyPI (BSD-3-Clause, the licence file
//! beside it). `bench/scripts/fetch-django-docs.sh` unpacks `docs/` of a pinned release;
//! this module turns each `.txt` page into one OKF concept.
//!
//! The conversion is deliberately light, the same for every ranking measured: the bundle
//! is the page's first folder (`topics`, `ref`, `howto`, …; `docs` for top-level pages), the
//! path the rest with `.md` (`index.txt` as `index-page.md`); the frontmatter is `type: doc` and the page's first heading as
//! `title`; the body is the page without that heading, with reST labels and a few
//! structural directives (`module`, `currentmodule`, `highlight`, `toctree`, `contents`,
//! `index`) dropped, section headings turned into `##` headings and inline roles
//! (`:setting:` and the like) removed. No description is added: the summary is the body's
//! first sentence, as for any OKF concept without one.

use langonrock_core::compile::SourceDoc;
use std::path::Path;

/// The Django release whose documentation the benchmark reads.
pub const DJANGO_VERSION: &str = "5.2.8";

/// Reads `dir` (the unpacked `docs/` folder) as OKF documents, sorted by bundle and path.
pub fn read_django_docs(dir: &Path) -> Result<Vec<SourceDoc>, String> {
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    let mut out = Vec::new();
    for rel in files {
        let text = std::fs::read_to_string(dir.join(&rel))
            .map_err(|e| format!("cannot read {}: {e}", dir.join(&rel).display()))?;
        let (bundle, path) = match rel.split_once('/') {
            Some((b, p)) => (b.to_string(), p.to_string()),
            None => ("docs".to_string(), rel.clone()),
        };
        let path = page_path(&path);
        out.push(SourceDoc::new(bundle, path, to_okf(&text)));
    }
    Ok(out)
}

/// The OKF path of a page: `.txt` becomes `.md`, and an `index.txt` page, which holds
/// content in Django's documentation, becomes `index-page.md` (an OKF `index.md` would be a
/// navigation document, not a concept).
pub fn page_path(rel: &str) -> String {
    let stem = rel.trim_end_matches(".txt");
    match stem.strip_suffix("index") {
        Some(dir) if dir.is_empty() || dir.ends_with('/') => format!("{dir}index-page.md"),
        _ => format!("{stem}.md"),
    }
}

fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| e.to_string())?;
        let name = e.file_name().to_string_lossy().into_owned();
        let sub = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let kind = e.file_type().map_err(|e| e.to_string())?;
        if kind.is_dir() {
            if !name.starts_with('_') {
                walk(&e.path(), &sub, out)?;
            }
        } else if name.ends_with(".txt") {
            out.push(sub);
        }
    }
    Ok(())
}

/// Whether `line` underlines (or overlines) a heading: one punctuation character repeated.
fn is_rule(line: &str) -> bool {
    let t = line.trim_end();
    let Some(c) = t.chars().next() else {
        return false;
    };
    t.len() >= 3 && "=-~^\"'*+#`:.".contains(c) && t.chars().all(|x| x == c)
}

const DROPPED: &[&str] = &[
    "module",
    "currentmodule",
    "highlight",
    "toctree",
    "contents",
    "index",
    "default-role",
];

/// Removes inline roles: ``:setting:`X` `` becomes `` `X` ``, and a `title <target>` role
/// keeps its title.
fn strip_roles(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let (mut i, mut last) = (0, 0);
    while i < b.len() {
        if b[i] == b':' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b':' || b[j] == b'-') {
                j += 1;
            }
            if j > i + 2 && b[j - 1] == b':' && b.get(j) == Some(&b'`') {
                if let Some(end) = line[j + 1..].find('`') {
                    out.push_str(&line[last..i]);
                    let inner = &line[j + 1..j + 1 + end];
                    let inner = match (inner.find(" <"), inner.ends_with('>')) {
                        (Some(k), true) => &inner[..k],
                        _ => inner.trim_start_matches(['~', '!']),
                    };
                    out.push('`');
                    out.push_str(inner);
                    out.push('`');
                    i = j + 2 + end;
                    last = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&line[last..]);
    out
}

/// One reST page as OKF Markdown.
pub fn to_okf(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut body: Vec<String> = Vec::new();
    let mut title: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let next = lines.get(i + 1).copied().unwrap_or("");
        // An overlined heading: rule, text, rule.
        if is_rule(line) && lines.get(i + 2).is_some_and(|l| is_rule(l)) && !next.trim().is_empty()
        {
            heading(next.trim(), &mut title, &mut body);
            i += 3;
            continue;
        }
        // An underlined heading: text, rule at least as long.
        if !line.trim().is_empty()
            && !line.starts_with(' ')
            && is_rule(next)
            && next.trim_end().len() >= line.trim_end().chars().count().min(3)
            && !is_rule(line)
        {
            heading(line.trim(), &mut title, &mut body);
            i += 2;
            continue;
        }
        if let Some(rest) = line.strip_prefix(".. ") {
            if rest.starts_with('_') && rest.trim_end().ends_with(':') {
                i += 1;
                continue;
            }
            if let Some((name, _)) = rest.split_once("::") {
                if DROPPED.contains(&name.trim()) {
                    i += 1;
                    while lines.get(i).is_some_and(|l| l.starts_with(' ')) {
                        i += 1;
                    }
                    continue;
                }
            }
        }
        body.push(strip_roles(line));
        i += 1;
    }
    let mut out = String::from("---\ntype: doc\n");
    if let Some(t) = title {
        let t = strip_roles(&t).replace('`', "");
        out.push_str(&format!(
            "title: \"{}\"\n",
            t.replace('\\', "").replace('"', "'")
        ));
    }
    out.push_str("---\n");
    for l in body {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

fn heading(text: &str, title: &mut Option<String>, body: &mut Vec<String>) {
    if title.is_none() {
        *title = Some(text.to_string());
    } else {
        body.push(String::new());
        body.push(format!("## {}", strip_roles(text)));
        body.push(String::new());
    }
}
