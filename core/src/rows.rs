//! The manifest and search rows as data, next to their TSV (read.md §2, search.md §5), and
//! one concept's compiled fields: what a program shows without parsing TSV or frontmatter.
//!
//! The cells are those of the TSV, with `links` as a list and `-` kept as the TSV writes it
//! (the `summary`, `grain`, `kind` and `status` cells), plus what the TSV leaves out: the
//! document's `path` and its compiled `title` (`None` when it has none).

use crate::compile::{Concept, Model};
use crate::error::Result;
use crate::manifest::{resolve_bundle, status_for};
use crate::search::SearchResult;
use serde::Serialize;

/// One manifest row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The public id.
    pub id: String,
    /// The bundle name as stored.
    pub bundle: String,
    /// The bundle-relative path of the document.
    pub path: String,
    /// The `kind` cell.
    pub kind: String,
    /// The `status` cell for the read date (`stale` when its date passed).
    pub status: String,
    /// The `grain` cell.
    pub grain: String,
    /// The `summary` cell.
    pub summary: String,
    /// The compiled title, if any.
    pub title: Option<String>,
    /// The resolved outgoing links: public ids, sorted.
    pub links: Vec<String>,
}

impl Row {
    /// The row of `c` for the read date `today`.
    pub fn of(c: &Concept, today: &str) -> Row {
        let p = &c.parsed;
        Row {
            id: c.id.clone(),
            bundle: c.bundle.clone(),
            path: c.path.clone(),
            kind: p.kind.clone(),
            status: status_for(c, today).to_string(),
            grain: p.grain.clone(),
            summary: p.summary.clone(),
            title: p.title.clone(),
            links: c.links.clone(),
        }
    }
}

/// The manifest as data: the preamble's tenant and bundles, then the rows in TSV order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestRows {
    /// The tenant id.
    pub tenant: String,
    /// Every bundle of the tenant, sorted (the `# bundles:` line).
    pub bundles: Vec<String>,
    /// The rows: the tenant's, or one bundle's.
    pub rows: Vec<Row>,
}

/// The manifest rows of the tenant or of one bundle, as [`crate::manifest::manifest`]
/// lists them (same order, same refusal of an unknown bundle).
pub fn manifest_rows(
    model: &Model,
    tenant: &str,
    bundle: Option<&str>,
    today: &str,
) -> Result<ManifestRows> {
    let rows = match resolve_bundle(model, bundle)? {
        Some(b) => model.bundle_concepts(b),
        None => model.concepts(),
    };
    Ok(ManifestRows {
        tenant: tenant.to_string(),
        bundles: model.bundles.clone(),
        rows: rows.iter().map(|c| Row::of(c, today)).collect(),
    })
}

/// One search row: a manifest row with the search columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The manifest cells.
    #[serde(flatten)]
    pub row: Row,
    /// A direct hit's pointer into the body (`None` for `-` and for linked rows).
    pub pos: Option<usize>,
    /// Whether the row comes from the link expansion.
    pub linked: bool,
}

/// A search as data: the rows of the search TSV, in its order (direct hits first).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchRows {
    /// The query as given.
    pub query: String,
    /// The bundle filter as stored, when one was given.
    pub bundle: Option<String>,
    /// The number of direct hits.
    pub direct: usize,
    /// The number of linked hits.
    pub linked: usize,
    /// The rows.
    pub hits: Vec<Hit>,
}

/// The rows of a search result over `model` (the data of [`crate::search::render`]).
pub fn search_rows(model: &Model, query: &str, result: &SearchResult, today: &str) -> SearchRows {
    let hits: Vec<Hit> = result
        .hits
        .iter()
        .filter_map(|h| {
            Some(Hit {
                row: Row::of(model.concept(&h.id)?, today),
                pos: h.pos,
                linked: h.linked,
            })
        })
        .collect();
    let direct = result.direct();
    SearchRows {
        query: query.to_string(),
        bundle: result.bundle.clone(),
        direct,
        linked: result.hits.len() - direct,
        hits,
    }
}

/// One section of a concept's body: its name and range in UTF-16 units of the body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SectionRow {
    /// The section name (`body`, `schema`, `schema_2`, …), as `get` takes it.
    pub name: String,
    /// Start in the body.
    pub start: usize,
    /// End in the body.
    pub end: usize,
}

/// One concept's compiled fields: its manifest row, the full frontmatter `description` (the
/// `summary` cell is cut from it), where the body starts in the stored text, and its
/// sections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConceptInfo {
    /// The manifest cells.
    #[serde(flatten)]
    pub row: Row,
    /// The frontmatter `description`, flattened; `None` when there is none.
    pub description: Option<String>,
    /// Whether the document has a frontmatter block.
    pub frontmatter: bool,
    /// The UTF-16 offset of the body in the stored text (0 without frontmatter, after a BOM
    /// otherwise).
    pub body_start: usize,
    /// The body's sections in document order.
    pub sections: Vec<SectionRow>,
    /// This document's diagnostic messages, in compile order.
    pub diagnostics: Vec<String>,
}

/// The compiled fields of the concept `id` (NFC-normalised), or `None`.
pub fn concept_info(model: &Model, id: &str, today: &str) -> Option<ConceptInfo> {
    let c = model.concept(&crate::validate::nfc(id))?;
    let p = &c.parsed;
    let bomless = c.text.strip_prefix('\u{feff}').unwrap_or(&c.text);
    Some(ConceptInfo {
        row: Row::of(c, today),
        description: crate::compile::frontmatter_description(&c.text),
        frontmatter: crate::compile::split_frontmatter(bomless).is_some(),
        body_start: p.body_start16,
        sections: p
            .sections
            .iter()
            .map(|s| SectionRow {
                name: s.name.clone(),
                start: s.start,
                end: s.end,
            })
            .collect(),
        diagnostics: c.diagnostics.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{compile, SourceDoc, SUMMARY_WIDTH};

    fn model() -> Model {
        let docs = vec![
            SourceDoc::new(
                "sales",
                "orders.md",
                "---\ntype: table\ntitle: Orders\ndescription: >\n  Orders placed online, one row per order line and a very long description that goes on past the width of the summary cell so it is cut there.\n---\n# Orders\n\nSee [[customers]].\n\n## Schema\n\nid, customer\n",
            ),
            SourceDoc::new("sales", "customers.md", "# Customers\n\nPeople who order.\n"),
        ];
        compile(&docs, SUMMARY_WIDTH).unwrap()
    }

    /// The rows carry exactly the TSV's cells, in its order.
    #[test]
    fn rows_match_the_tsv() {
        let m = model();
        let tsv = crate::manifest::manifest(&m, "acme", None, "2026-01-01").unwrap();
        let rows = manifest_rows(&m, "acme", None, "2026-01-01").unwrap();
        let lines: Vec<&str> = tsv.lines().skip(3).collect();
        assert_eq!(lines.len(), rows.rows.len());
        for (line, r) in lines.iter().zip(&rows.rows) {
            let links = if r.links.is_empty() {
                "-".to_string()
            } else {
                r.links.join(" ")
            };
            let cells = [
                r.id.as_str(),
                &r.bundle,
                &r.kind,
                &r.status,
                &r.grain,
                &r.summary,
                &links,
            ]
            .join("\t");
            assert_eq!(*line, cells);
        }
        assert_eq!(rows.bundles, ["sales"]);
        assert_eq!(rows.rows[1].title.as_deref(), Some("Orders"));
        assert_eq!(rows.rows[1].path, "orders.md");
        assert_eq!(
            manifest_rows(&m, "acme", Some("nope"), "2026-01-01")
                .unwrap_err()
                .message(),
            "no bundle \"nope\" in this tenant: found sales"
        );
    }

    #[test]
    fn concept_info_has_the_full_description_and_sections() {
        let m = model();
        let c = concept_info(&m, "orders", "2026-01-01").unwrap();
        assert!(c
            .description
            .as_deref()
            .unwrap()
            .ends_with("so it is cut there."));
        assert!(c.row.summary.len() < c.description.as_deref().unwrap().len());
        assert!(c.frontmatter);
        let names: Vec<&str> = c.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["orders", "schema"]);
        let plain = concept_info(&m, "customers", "2026-01-01").unwrap();
        assert_eq!(plain.description, None);
        assert!(!plain.frontmatter);
        assert_eq!(plain.body_start, 0);
        assert!(concept_info(&m, "nope", "2026-01-01").is_none());
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["bodyStart"], c.body_start);
        assert_eq!(json["title"], "Orders");
    }
}
