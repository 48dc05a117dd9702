//! The manifest TSV (read.md §2): tenant form, bundle slice, single-bundle compile form.

use crate::compile::{Concept, Model};
use crate::error::{Error, Result};
use std::sync::Arc;

/// The columns line of the tenant manifest.
pub const COLUMNS: &str = "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks";

/// The `status` cell as rendered for `today` (read.md §2.4).
pub fn status_for<'a>(c: &'a Concept, today: &str) -> &'a str {
    let p = &c.parsed;
    if p.status == "-" {
        if let Some(d) = &p.stale_after {
            if d.as_str() <= today {
                return "stale";
            }
        }
    }
    &p.status
}

/// Appends one tenant-form row (without the final `\n`).
pub fn push_row(out: &mut String, c: &Concept, today: &str) {
    let p = &c.parsed;
    for cell in [
        c.id.as_str(),
        c.bundle.as_str(),
        p.kind.as_str(),
        status_for(c, today),
        p.grain.as_str(),
        p.summary.as_str(),
    ] {
        out.push_str(cell);
        out.push('\t');
    }
    push_links(out, c);
}

fn push_links(out: &mut String, c: &Concept) {
    if c.links.is_empty() {
        out.push('-');
    } else {
        for (i, l) in c.links.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(l);
        }
    }
}

/// The `# tenant:` and `# bundles:` preamble lines, each ending in `\n`.
pub fn preamble(out: &mut String, tenant: &str, model: &Model) {
    out.push_str("# tenant: ");
    out.push_str(tenant);
    out.push_str("\n# bundles:");
    for b in &model.bundles {
        out.push(' ');
        out.push_str(b);
    }
    out.push('\n');
}

/// The error for an unknown bundle (read.md §2.2).
pub fn unknown_bundle(model: &Model, name: &str) -> Error {
    let found = if model.bundles.is_empty() {
        "none".to_string()
    } else {
        model.bundles.join(", ")
    };
    Error::NotFound(format!(
        "no bundle \"{}\" in this tenant: found {found}",
        crate::bounds::quote(name)
    ))
}

/// Resolves an optional bundle filter to the stored name.
pub fn resolve_bundle<'a>(model: &'a Model, bundle: Option<&str>) -> Result<Option<&'a str>> {
    match bundle {
        None => Ok(None),
        Some(b) => model
            .find_bundle(b)
            .map(Some)
            .ok_or_else(|| unknown_bundle(model, b)),
    }
}

/// The tenant manifest, or one bundle's slice of it.
pub fn manifest(model: &Model, tenant: &str, bundle: Option<&str>, today: &str) -> Result<String> {
    let bundle = resolve_bundle(model, bundle)?;
    let rows = match bundle {
        Some(b) => model.bundle_concepts(b),
        None => model.concepts(),
    };
    let mut out = String::with_capacity(64 + rows.len() * 160);
    preamble(&mut out, tenant, model);
    out.push_str(COLUMNS);
    out.push('\n');
    // Each row depends on its concept alone: runs of rows on every core (docs/compile.md
    // §12), joined in order.
    let runs: Vec<&[Arc<Concept>]> = rows.chunks(ROW_RUN).collect();
    let parts = crate::par::map(&runs, |run| {
        let mut part = String::with_capacity(run.len() * 160);
        for c in *run {
            push_row(&mut part, c, today);
            part.push('\n');
        }
        part
    });
    for part in parts {
        out.push_str(&part);
    }
    Ok(out)
}

/// The advice sentence of the whole tenant manifest for `today` (agent.md §7.2), measured
/// row by row as [`manifest`] writes them, without holding the manifest (at 20,000 concepts
/// it is 6 MB, built beside a server's first request).
pub fn advice(model: &Model, tenant: &str, today: &str) -> String {
    let mut m = crate::tools::ManifestMeasure::default();
    let mut out = String::with_capacity(1024);
    preamble(&mut out, tenant, model);
    out.push_str(COLUMNS);
    out.push('\n');
    m.lines(&out);
    for c in model.concepts() {
        out.clear();
        push_row(&mut out, c, today);
        out.push('\n');
        m.lines(&out);
    }
    m.advice()
}

/// How many rows of [`manifest`] one thread writes at a time.
const ROW_RUN: usize = 1024;

/// The single-bundle compile form (read.md §2.3): no `bundle` column, rows by id.
pub fn compile_manifest(model: &Model, bundle: &str, today: &str) -> String {
    let mut out = format!("# bundle: {bundle}\nid\tkind\tstatus\tgrain\tsummary\tlinks\n");
    let mut rows: Vec<&Concept> = model.concepts().iter().map(|c| &**c).collect();
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    for c in rows {
        let p = &c.parsed;
        for cell in [
            c.id.as_str(),
            p.kind.as_str(),
            status_for(c, today),
            p.grain.as_str(),
            p.summary.as_str(),
        ] {
            out.push_str(cell);
            out.push('\t');
        }
        push_links(&mut out, c);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{link, parse_source, Ambiguity, SourceDoc};

    #[test]
    fn rows_written_in_runs_come_out_in_order() {
        // More rows than three runs, in two bundles, each row with a link and a status.
        let docs = (0..3_500)
            .map(|i| {
                let bundle = if i % 3 == 0 { "a" } else { "b" };
                let path = format!("n{i}.md");
                let text = format!(
                    "---\ntype: t\nstale_after: 2026-0{}-01\n---\n# N{i}\n[[n{}]]\n",
                    i % 9 + 1,
                    i + 3
                );
                let parsed = parse_source(&path, &text, 80);
                (SourceDoc::new(bundle, path, text), parsed)
            })
            .collect();
        let model = link(docs, Ambiguity::Refuse).expect("link");
        let got = manifest(&model, "t1", None, "2026-05-01").expect("manifest");
        let mut want = String::new();
        preamble(&mut want, "t1", &model);
        want.push_str(COLUMNS);
        want.push('\n');
        for c in model.concepts() {
            push_row(&mut want, c, "2026-05-01");
            want.push('\n');
        }
        assert!(model.concepts().len() > 3 * ROW_RUN);
        assert_eq!(got, want);
    }
}
