//! The reference-corpus generator (docs/reference-corpus.md), ported from `gen.py` of the
//! shared bench folder (the original is langonrock's `bench/corpus.ts`, MIT; see
//! `bench/data/NOTICE`).
//!
//! Every literal string comes from `bench/data/tables.json`, embedded at build time. The
//! output is byte-identical to the original: [`Corpus::checksum_line`] reproduces the lines
//! of `bench/data/CHECKSUMS`.

use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

/// The data table, as shipped with the original generator.
pub const TABLES_JSON: &str = include_str!("../data/tables.json");
/// The expected files, bytes and fixture hashes at 500, 5,000 and 20,000 concepts.
pub const CHECKSUMS: &str = include_str!("../data/CHECKSUMS");
/// The seed of every published number.
pub const SEED: u32 = 7;
/// Concepts per bundle in every published number.
pub const PER_BUNDLE: usize = 500;

/// What can go wrong while generating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorpusError {
    /// `tables.json` does not parse or lacks a field.
    Tables(String),
    /// A template names a placeholder that has no value.
    Placeholder {
        /// The placeholder name.
        name: String,
        /// The template.
        template: String,
    },
    /// A list the generator picks from is empty.
    EmptyList(&'static str),
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorpusError::Tables(e) => write!(f, "tables.json: {e}"),
            CorpusError::Placeholder { name, template } => {
                write!(f, "template needs {{{name}}}: {template:?}")
            }
            CorpusError::EmptyList(what) => write!(f, "cannot pick from an empty list: {what}"),
        }
    }
}

impl std::error::Error for CorpusError {}

/// One kind of concept as the tables describe it.
#[derive(Debug, Clone, Deserialize)]
pub struct KindInfo {
    /// The frontmatter `type`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The tag in `tags:`.
    pub tag: String,
    /// The folder.
    pub dir: String,
}

/// `kinds` of the tables.
#[derive(Debug, Clone, Deserialize)]
pub struct Kinds {
    /// Tables.
    pub table: KindInfo,
    /// Metrics.
    pub metric: KindInfo,
}

/// `bundle_names` of the tables.
#[derive(Debug, Clone, Deserialize)]
pub struct BundleNames {
    /// The name when there is one bundle.
    pub single: String,
    /// The template (`{n}`) when there are several.
    pub multi: String,
    /// The tag template (`{n}`).
    pub tag: String,
}

/// `descriptions` of the tables.
#[derive(Debug, Clone, Deserialize)]
pub struct Descriptions {
    /// Table description (`{subject}`, `{slice}`).
    pub table: String,
    /// Metric description (`{root}`, `{slice}`).
    pub metric: String,
    /// The slice clause (`{phrase}`).
    pub slice: String,
}

/// `frontmatter` of the tables.
#[derive(Debug, Clone, Deserialize)]
pub struct Frontmatter {
    /// The lines, opening fence included.
    pub lines: Vec<String>,
    /// The grain line, tables only.
    pub grain_line: String,
    /// The closing fence.
    pub close: String,
}

/// `schema` of the tables.
#[derive(Debug, Clone, Deserialize)]
pub struct Schema {
    /// The two header lines.
    pub header: Vec<String>,
    /// The key row (`{root}`).
    pub key_row: String,
    /// A column row (`{column}`, `{type}`).
    pub row: String,
    /// The column name (`{domain}`, `{suffix}`).
    pub column: String,
}

/// `index` of the tables.
#[derive(Debug, Clone, Deserialize)]
pub struct IndexTemplate {
    /// The head lines (`{bundle_title}`).
    pub head: Vec<String>,
    /// One item line (`{title}`, `{path}`, `{description}`).
    pub item: String,
}

/// One question archetype.
#[derive(Debug, Clone, Deserialize)]
pub struct QuestionRule {
    /// How many questions.
    pub count: usize,
    /// `tables` or `metrics`.
    pub list: String,
    /// Stride through the list.
    pub stride: usize,
    /// Offset in strides.
    pub offset: usize,
    /// The section wanted in the concept itself.
    pub own_section: String,
    /// The section wanted in each linked concept, if any.
    pub linked_section: Option<String>,
    /// Whether the manifest row answers it.
    pub manifest_only: bool,
    /// The named query template (`{id}`, `{root}`).
    pub named: String,
}

/// The whole data table of the generator.
#[derive(Debug, Clone, Deserialize)]
pub struct Tables {
    /// Domain names; also the bare concept names.
    pub domains: Vec<String>,
    /// Qualifiers drawn into names.
    pub qualifiers: Vec<String>,
    /// Table subject per domain.
    pub subjects: BTreeMap<String, String>,
    /// Slice phrase per qualifier.
    pub slices: BTreeMap<String, String>,
    /// Facets, by pool position mod 6.
    pub facets: Vec<String>,
    /// Column types.
    pub column_types: Vec<String>,
    /// Column suffixes.
    pub column_suffixes: Vec<String>,
    /// Trust levels.
    pub trust_levels: Vec<String>,
    /// Statuses.
    pub statuses: Vec<String>,
    /// Bundle names.
    pub bundle_names: BundleNames,
    /// Kinds.
    pub kinds: Kinds,
    /// Descriptions.
    pub descriptions: Descriptions,
    /// Frontmatter.
    pub frontmatter: Frontmatter,
    /// Table body lines.
    pub table_body: Vec<String>,
    /// Schema lines.
    pub schema: Schema,
    /// A link to a table (`{title}`, `{id}`).
    pub table_link: String,
    /// Text for a missing table link.
    pub table_link_missing: String,
    /// Metric body lines.
    pub metric_body: Vec<String>,
    /// Text for a missing metric source.
    pub metric_link_missing: String,
    /// The index file.
    pub index: IndexTemplate,
    /// Question archetypes by name.
    pub questions: BTreeMap<String, QuestionRule>,
    /// The order of the archetypes.
    pub question_order: Vec<String>,
}

impl Tables {
    /// The embedded tables, parsed once.
    pub fn embedded() -> Result<&'static Tables, CorpusError> {
        static TABLES: OnceLock<Result<Tables, CorpusError>> = OnceLock::new();
        TABLES
            .get_or_init(|| Tables::parse(TABLES_JSON))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses a `tables.json`.
    pub fn parse(json: &str) -> Result<Tables, CorpusError> {
        serde_json::from_str(json).map_err(|e| CorpusError::Tables(e.to_string()))
    }

    fn kind(&self, kind: Kind) -> &KindInfo {
        match kind {
            Kind::Table => &self.kinds.table,
            Kind::Metric => &self.kinds.metric,
        }
    }
}

/// Fills `{name}` placeholders in one left-to-right pass; substituted text is never rescanned.
pub fn fill(template: &str, values: &[(&str, &str)]) -> Result<String, CorpusError> {
    let mut out = String::with_capacity(template.len() + 64);
    let bytes = template.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let name_len = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || **b == b'_')
                .count();
            let close = i + 1 + name_len;
            if name_len > 0 && bytes.get(close) == Some(&b'}') {
                let name = &template[i + 1..close];
                let value = values
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| CorpusError::Placeholder {
                        name: name.to_string(),
                        template: template.to_string(),
                    })?;
                out.push_str(&template[copied..i]);
                out.push_str(value);
                i = close + 1;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&template[copied..]);
    Ok(out)
}

/// The mulberry32 generator of reference-corpus.md §2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mulberry32 {
    /// The state.
    pub state: u32,
    /// Draws made so far.
    pub draws: u64,
}

impl Mulberry32 {
    /// A generator with state `seed`.
    pub fn new(seed: u32) -> Self {
        Mulberry32 {
            state: seed,
            draws: 0,
        }
    }

    /// One draw, as the uint32 `u` (the float is `u / 2^32`).
    pub fn next_u32(&mut self) -> u32 {
        self.state = self.state.wrapping_add(0x6D2B_79F5);
        let mut z = self.state;
        z = (z ^ (z >> 15)).wrapping_mul(z | 1);
        z ^= z.wrapping_add((z ^ (z >> 7)).wrapping_mul(z | 61));
        self.draws += 1;
        z ^ (z >> 14)
    }

    /// `floor(r * n)` for one fresh draw.
    pub fn index(&mut self, n: usize) -> usize {
        ((u64::from(self.next_u32()) * n as u64) >> 32) as usize
    }

    /// `list[index(len)]`.
    pub fn pick<'a, T>(&mut self, list: &'a [T], what: &'static str) -> Result<&'a T, CorpusError> {
        if list.is_empty() {
            return Err(CorpusError::EmptyList(what));
        }
        Ok(&list[self.index(list.len())])
    }
}

/// A concept's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A table.
    Table,
    /// A metric.
    Metric,
}

/// One planned concept (reference-corpus.md §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concept {
    /// The concept name (the raw id).
    pub id: String,
    /// The bundle.
    pub bundle: String,
    /// Table or metric.
    pub kind: Kind,
    /// Position in the bundle's pool, 0-based.
    pub pool_index: usize,
    /// Linked table names, in order.
    pub links: Vec<String>,
    /// `root_id` for a table, none for a metric.
    pub grain: Option<String>,
    /// The title.
    pub title: String,
    /// The description.
    pub description: String,
    /// The facet.
    pub facet: String,
    /// The path in the tree, bundle included (`warehouse/tables/orders.md`).
    pub path: String,
}

impl Concept {
    /// The first `_` segment of the id.
    pub fn root(&self) -> &str {
        root(&self.id)
    }
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to the output folder, with `/` (`warehouse/index.md`).
    pub path: String,
    /// The exact text (UTF-8, LF only).
    pub text: String,
}

impl GeneratedFile {
    /// The bundle: the first path segment.
    pub fn bundle(&self) -> &str {
        self.path.split_once('/').map_or("", |(b, _)| b)
    }

    /// The path inside the bundle.
    pub fn bundle_path(&self) -> &str {
        self.path
            .split_once('/')
            .map_or(self.path.as_str(), |(_, p)| p)
    }
}

/// A generated corpus, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    /// Bundle names, in generation order.
    pub bundles: Vec<String>,
    /// Every concept, in generation order across bundles.
    pub concepts: Vec<Concept>,
    /// Every file, in write order (per bundle: `index.md`, then concepts in pool order).
    pub files: Vec<GeneratedFile>,
    /// The folders to create, even if empty (`<bundle>/tables`, `<bundle>/metrics`).
    pub dirs: Vec<String>,
    /// The generator state after the last draw.
    pub rng: Mulberry32,
}

fn root(name: &str) -> &str {
    name.split('_').next().unwrap_or(name)
}

fn upper_first(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    if let Some(c) = chars.next() {
        out.push(c.to_ascii_uppercase());
        out.push_str(chars.as_str());
    }
    out
}

/// `title(name)` of reference-corpus.md §1.
pub fn title_of(name: &str) -> String {
    name.split('_')
        .map(upper_first)
        .collect::<Vec<_>>()
        .join(" ")
}

/// JavaScript `Math.round` for non-negative `x`.
fn round_half_up(x: f64) -> usize {
    (x + 0.5).floor() as usize
}

struct Generator<'t> {
    t: &'t Tables,
    rng: Mulberry32,
}

impl Generator<'_> {
    fn concept_names(&mut self, count: usize, tag: &str) -> Result<Vec<String>, CorpusError> {
        let domains = &self.t.domains;
        if domains.is_empty() && count > 0 {
            return Err(CorpusError::EmptyList("domains"));
        }
        let bare = round_half_up(count as f64 * 0.2).min(domains.len());
        let mut out: Vec<String> = domains[..bare].to_vec();
        let mut seen: HashSet<String> = out.iter().cloned().collect();
        let mut i = 0usize;
        while out.len() < count {
            let domain = &domains[i % domains.len()];
            let lap = i / domains.len();
            let q = self.rng.pick(&self.t.qualifiers, "qualifiers")?;
            let mut name = format!("{domain}_{tag}_{q}");
            if lap > 0 {
                name.push('_');
                name.push_str(&lap.to_string());
            }
            if seen.insert(name.clone()) {
                out.push(name);
            }
            i += 1;
        }
        Ok(out)
    }

    fn describe(&self, kind: Kind, name: &str) -> Result<String, CorpusError> {
        let parts: Vec<&str> = name.split('_').collect();
        let root = parts[0];
        let slice = match parts.get(2) {
            Some(q3) => {
                let phrase = self.t.slices.get(*q3).map_or(*q3, String::as_str);
                fill(&self.t.descriptions.slice, &[("phrase", phrase)])?
            }
            None => String::new(),
        };
        match kind {
            Kind::Metric => fill(
                &self.t.descriptions.metric,
                &[("root", root), ("slice", &slice)],
            ),
            Kind::Table => {
                let fallback;
                let subject = match self.t.subjects.get(root) {
                    Some(s) => s.as_str(),
                    None => {
                        fallback = format!("a {root} record");
                        &fallback
                    }
                };
                fill(
                    &self.t.descriptions.table,
                    &[("subject", subject), ("slice", &slice)],
                )
            }
        }
    }

    fn plan_bundle(
        &mut self,
        bundle: &str,
        tag: &str,
        count: usize,
    ) -> Result<Vec<Concept>, CorpusError> {
        let pool = self.concept_names(count, tag)?;
        let tables: Vec<&String> = pool
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 4 != 3)
            .map(|(_, n)| n)
            .collect();
        if self.t.facets.is_empty() && !pool.is_empty() {
            return Err(CorpusError::EmptyList("facets"));
        }
        let mut concepts = Vec::with_capacity(pool.len());
        for (i, name) in pool.iter().enumerate() {
            let kind = if i % 4 == 3 {
                Kind::Metric
            } else {
                Kind::Table
            };
            let steps = if kind == Kind::Metric { 1 } else { 2 };
            let mut links: Vec<String> = Vec::new();
            if !tables.is_empty() {
                for step in 1..=steps {
                    let target = tables[(i + 3 * step) % tables.len()];
                    if target != name && !links.contains(target) {
                        links.push(target.clone());
                    }
                }
            }
            let grain = (kind == Kind::Table).then(|| format!("{}_id", root(name)));
            let path = format!("{bundle}/{}/{name}.md", self.t.kind(kind).dir);
            concepts.push(Concept {
                id: name.clone(),
                bundle: bundle.to_string(),
                kind,
                pool_index: i,
                links,
                grain,
                title: title_of(name),
                description: self.describe(kind, name)?,
                facet: self.t.facets[i % self.t.facets.len()].clone(),
                path,
            });
        }
        Ok(concepts)
    }

    fn frontmatter(&mut self, c: &Concept) -> Result<String, CorpusError> {
        let t = self.t;
        let fm = &t.frontmatter;
        let kind = t.kind(c.kind);
        let ts_month = (1 + self.rng.index(6)).to_string();
        let ts_day = self.rng.index(9).to_string();
        let trust_1 = self.rng.pick(&t.trust_levels, "trust_levels")?;
        let trust_2 = self.rng.pick(&t.trust_levels, "trust_levels")?;
        let verified_month = (1 + self.rng.index(6)).to_string();
        let status = self.rng.pick(&t.statuses, "statuses")?;
        let values = [
            ("type", kind.type_name.as_str()),
            ("title", &c.title),
            ("description", &c.description),
            ("bundle", &c.bundle),
            ("id", &c.id),
            ("kind", &kind.tag),
            ("root", c.root()),
            ("ts_month", &ts_month),
            ("ts_day", &ts_day),
            ("trust_1", trust_1),
            ("trust_2", trust_2),
            ("verified_month", &verified_month),
            ("status", status),
        ];
        let mut lines = fm
            .lines
            .iter()
            .map(|l| fill(l, &values))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(grain) = &c.grain {
            lines.push(fill(&fm.grain_line, &[("grain", grain)])?);
        }
        lines.push(fm.close.clone());
        Ok(lines.join("\n"))
    }

    fn schema(&mut self, c: &Concept) -> Result<String, CorpusError> {
        let t = self.t;
        let s = &t.schema;
        let rows = 6 + self.rng.index(8);
        let mut lines = s.header.clone();
        lines.push(fill(&s.key_row, &[("root", c.root())])?);
        for _ in 0..rows {
            let domain = self.rng.pick(&t.domains, "domains")?;
            let suffix = self.rng.pick(&t.column_suffixes, "column_suffixes")?;
            let col_type = self.rng.pick(&t.column_types, "column_types")?;
            let column = fill(&s.column, &[("domain", domain), ("suffix", suffix)])?;
            lines.push(fill(&s.row, &[("column", &column), ("type", col_type)])?);
        }
        Ok(lines.join("\n"))
    }

    fn link(&self, target: Option<&String>, missing: &str) -> Result<String, CorpusError> {
        match target {
            None => Ok(missing.to_string()),
            Some(id) => fill(&self.t.table_link, &[("title", &title_of(id)), ("id", id)]),
        }
    }

    fn table_body(&mut self, c: &Concept) -> Result<String, CorpusError> {
        let schema = self.schema(c)?;
        let t = self.t;
        let grain = c.grain.as_deref().unwrap_or("-");
        let grain_stem = grain.strip_suffix("_id").unwrap_or(grain);
        let link_1 = self.link(c.links.first(), &t.table_link_missing)?;
        let link_2 = self.link(c.links.get(1), &t.table_link_missing)?;
        let facet_cap = upper_first(&c.facet);
        let values = [
            ("description", c.description.as_str()),
            ("facet", &c.facet),
            ("root", c.root()),
            ("bundle", &c.bundle),
            ("schema", &schema),
            ("grain", grain),
            ("grain_stem", grain_stem),
            ("id", &c.id),
            ("link_1", &link_1),
            ("link_2", &link_2),
            ("facet_capitalised", &facet_cap),
        ];
        Ok(t.table_body
            .iter()
            .map(|l| fill(l, &values))
            .collect::<Result<Vec<_>, _>>()?
            .join("\n"))
    }

    fn metric_body(&self, c: &Concept) -> Result<String, CorpusError> {
        let source = self.link(c.links.first(), &self.t.metric_link_missing)?;
        let values = [("description", c.description.as_str()), ("source", &source)];
        Ok(self
            .t
            .metric_body
            .iter()
            .map(|l| fill(l, &values))
            .collect::<Result<Vec<_>, _>>()?
            .join("\n"))
    }

    fn index_file(&self, bundle: &str, concepts: &[Concept]) -> Result<String, CorpusError> {
        let ix = &self.t.index;
        let bundle_title = title_of(bundle);
        let mut lines = ix
            .head
            .iter()
            .map(|l| fill(l, &[("bundle_title", &bundle_title)]))
            .collect::<Result<Vec<_>, _>>()?;
        for c in concepts {
            let path = c.path.split_once('/').map_or(c.path.as_str(), |(_, p)| p);
            lines.push(fill(
                &ix.item,
                &[
                    ("title", &c.title),
                    ("path", path),
                    ("description", &c.description),
                ],
            )?);
        }
        Ok(lines.join("\n"))
    }
}

impl Corpus {
    /// The corpus's files as documents.
    pub fn source_docs(&self) -> Vec<langonrock_core::compile::SourceDoc> {
        self.files
            .iter()
            .map(|f| {
                langonrock_core::compile::SourceDoc::new(
                    f.bundle(),
                    f.bundle_path(),
                    f.text.as_str(),
                )
            })
            .collect()
    }

    /// The corpus compiled at the stored summary width.
    pub fn model(&self) -> Result<langonrock_core::compile::Model, String> {
        langonrock_core::compile::compile(
            &self.source_docs(),
            langonrock_core::compile::SUMMARY_WIDTH,
        )
        .map_err(|e| e.message())
    }

    /// Generates `bundles` bundles of `per_bundle` concepts with one generator seeded `seed`
    /// (reference-corpus.md §3–§5), from the embedded tables.
    pub fn generate(bundles: usize, per_bundle: usize, seed: u32) -> Result<Corpus, CorpusError> {
        Corpus::generate_with(Tables::embedded()?, bundles, per_bundle, seed)
    }

    /// The published reference: `bundles` bundles of 500, seed 7.
    pub fn reference(bundles: usize) -> Result<Corpus, CorpusError> {
        Corpus::generate(bundles, PER_BUNDLE, SEED)
    }

    /// As [`Corpus::generate`], with other tables.
    pub fn generate_with(
        t: &Tables,
        bundles: usize,
        per_bundle: usize,
        seed: u32,
    ) -> Result<Corpus, CorpusError> {
        let mut g = Generator {
            t,
            rng: Mulberry32::new(seed),
        };
        let mut corpus = Corpus {
            bundles: Vec::with_capacity(bundles),
            concepts: Vec::with_capacity(bundles * per_bundle),
            files: Vec::with_capacity(bundles * (per_bundle + 1)),
            dirs: Vec::with_capacity(bundles * 2),
            rng: Mulberry32::new(seed),
        };
        for b in 1..=bundles {
            let n = b.to_string();
            let bundle = if bundles == 1 {
                t.bundle_names.single.clone()
            } else {
                fill(&t.bundle_names.multi, &[("n", &n)])?
            };
            let tag = fill(&t.bundle_names.tag, &[("n", &n)])?;
            let items = g.plan_bundle(&bundle, &tag, per_bundle)?;
            corpus.files.push(GeneratedFile {
                path: format!("{bundle}/index.md"),
                text: g.index_file(&bundle, &items)?,
            });
            for c in &items {
                let head = g.frontmatter(c)?;
                let body = match c.kind {
                    Kind::Metric => g.metric_body(c)?,
                    Kind::Table => g.table_body(c)?,
                };
                let mut text = String::with_capacity(head.len() + body.len() + 3);
                text.push_str(&head);
                text.push_str("\n\n");
                text.push_str(&body);
                text.push('\n');
                corpus.files.push(GeneratedFile {
                    path: c.path.clone(),
                    text,
                });
            }
            corpus.dirs.push(format!("{bundle}/{}", t.kinds.table.dir));
            corpus.dirs.push(format!("{bundle}/{}", t.kinds.metric.dir));
            corpus.bundles.push(bundle);
            corpus.concepts.extend(items);
        }
        corpus.rng = g.rng;
        Ok(corpus)
    }

    /// Total bytes over every file.
    pub fn total_bytes(&self) -> usize {
        self.files.iter().map(|f| f.text.len()).sum()
    }

    /// The fixture hash of reference-corpus.md §6, lowercase hex.
    pub fn fixture_hash(&self) -> String {
        let mut entries: Vec<(&str, String)> = self
            .files
            .iter()
            .map(|f| (f.path.as_str(), hex(&Sha256::digest(f.text.as_bytes()))))
            .collect();
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut h = Sha256::new();
        for (i, (path, digest)) in entries.iter().enumerate() {
            if i > 0 {
                h.update(b"\n");
            }
            h.update(path.as_bytes());
            h.update(b"\0");
            h.update(digest.as_bytes());
        }
        hex(&h.finalize())
    }

    /// `concepts bundles files bytes fixture-sha256`, as a line of `CHECKSUMS`.
    pub fn checksum_line(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.concepts.len(),
            self.bundles.len(),
            self.files.len(),
            self.total_bytes(),
            self.fixture_hash()
        )
    }

    /// The file at `path` (relative to the output folder).
    pub fn file(&self, path: &str) -> Option<&GeneratedFile> {
        self.files.iter().find(|f| f.path == path)
    }

    /// Writes the tree under `dir` (which is created; existing files are overwritten, other
    /// files are left alone). Both kind folders of every bundle are created, even if empty.
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        for d in &self.dirs {
            fs::create_dir_all(dir.join(d))?;
        }
        for f in &self.files {
            let target = dir.join(&f.path);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(target, f.text.as_bytes())?;
        }
        Ok(())
    }
}

/// The expected `CHECKSUMS` line for `concepts` concepts, if listed.
pub fn expected_checksum(concepts: usize) -> Option<&'static str> {
    let key = concepts.to_string();
    CHECKSUMS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find(|l| l.split_whitespace().next() == Some(key.as_str()))
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_single_pass() {
        assert_eq!(
            fill("a {x} b {y}", &[("x", "{y}"), ("y", "Y")]).unwrap(),
            "a {y} b Y"
        );
        assert_eq!(
            fill("no braces { here }", &[]).unwrap(),
            "no braces { here }"
        );
        let err = fill("{missing}", &[]).unwrap_err();
        assert_eq!(err.to_string(), "template needs {missing}: \"{missing}\"");
    }

    #[test]
    fn mulberry32_vector() {
        let mut r = Mulberry32::new(7);
        let got: Vec<u32> = (0..5).map(|_| r.next_u32()).collect();
        assert_eq!(
            got,
            [50271532, 266108690, 4195786334, 3002305430, 2239590375]
        );
    }

    #[test]
    fn title_case() {
        assert_eq!(title_of("orders_b1_daily_1"), "Orders B1 Daily 1");
        assert_eq!(title_of("domain1"), "Domain1");
    }
}
