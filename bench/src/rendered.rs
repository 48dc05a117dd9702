//! Store-side read costs priced on our actual tool output: the exact text the MCP tools
//! return, rendered by the same core functions the server calls (`manifest::manifest`,
//! `Served::search`, `read::get` + `read::render_mcp` under the MCP default cap), over the
//! state an engine serves. The harness checks these texts byte for byte against the real
//! binary's replies over MCP ([`Rendered::calls`]).

use crate::billing::{
    average, tokens, BillingError, ManifestRead, SearchRead, SectionRead, EVAL_DATE,
};
use crate::questions::{Question, Target};
use crate::store::RawIds;
use langonrock_core::engine::Served;
use langonrock_core::read::{get, render_mcp, GetOptions, Outcome};
use langonrock_core::search::SearchOptions;
use serde::Serialize;
use serde_json::{json, Value};

/// Read costs of a served state, priced on the rendered tool output.
pub struct Rendered<'a> {
    served: &'a Served,
    tenant: String,
    ids: RawIds,
    manifest: String,
}

/// One MCP tool call and the exact text the harness expects back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectedCall {
    /// The tool name.
    pub tool: &'static str,
    /// Its arguments.
    pub args: Value,
    /// The reply text.
    pub text: String,
}

/// The per-read averages of agent-session.md §5, ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReadAverages {
    /// `get(id)` as the MCP tool renders it, averaged over the 35 targets.
    pub whole: i64,
    /// `get(id, {section})` as the MCP tool renders it, over the 35 targets.
    pub section: i64,
    /// The bare body text (no frame), over the 35 targets.
    pub whole_bare: i64,
    /// The bare section text, over the 35 targets.
    pub section_bare: i64,
    /// The rendered search output of the named query, over the 20 questions.
    pub search: i64,
}

fn tool_error(e: langonrock_core::Error) -> BillingError {
    BillingError::Tool(e.message())
}

impl<'a> Rendered<'a> {
    /// Prices `served` for tenant `tenant` on [`EVAL_DATE`].
    pub fn new(served: &'a Served, tenant: &str) -> Result<Self, BillingError> {
        let manifest = langonrock_core::manifest::manifest(served.model(), tenant, None, EVAL_DATE)
            .map_err(tool_error)?;
        Ok(Rendered {
            served,
            tenant: tenant.to_string(),
            ids: RawIds::of(served.model()),
            manifest,
        })
    }

    /// The `manifest` tool's reply (whole tenant).
    pub fn manifest(&self) -> &str {
        &self.manifest
    }

    /// The public id of a question's target.
    pub fn public_id(&self, q: &Question, raw: &str) -> Result<&str, BillingError> {
        Ok(&self.ids.concept(self.served.model(), &q.bundle, raw)?.id)
    }

    /// The `search` tool's reply to `query` (k = 8, expansion on, as the tool runs it).
    pub fn search(&self, query: &str) -> Result<String, BillingError> {
        self.served
            .search(&self.tenant, query, &SearchOptions::default(), EVAL_DATE)
            .map_err(tool_error)
    }

    /// The `get` tool's reply for one id under `opts` (the MCP default cap applied).
    pub fn get_one(&self, id: &str, opts: &GetOptions) -> String {
        render_mcp(&get(
            self.served.model(),
            &[id],
            &opts.clone().with_mcp_default(),
        ))
    }

    fn section_opts(section: &str) -> GetOptions {
        GetOptions {
            section: Some(section.to_string()),
            ..GetOptions::default()
        }
    }

    /// The `get` reply for a target: its id with its section.
    pub fn section_reply(&self, q: &Question, t: &Target) -> Result<String, BillingError> {
        let id = self.public_id(q, t.id())?;
        Ok(self.get_one(id, &Self::section_opts(t.section())))
    }

    /// The find window of a question, `get(id, {section, find: named})` on its first
    /// target, and the number of matches.
    pub fn window_reply(&self, q: &Question) -> Result<Option<(String, usize)>, BillingError> {
        let Some(t) = q.targets.first() else {
            return Ok(None);
        };
        let id = self.public_id(q, t.id())?;
        let opts = GetOptions {
            find: Some(q.named.clone()),
            ..Self::section_opts(t.section())
        };
        let r = get(self.served.model(), &[id], &opts.clone().with_mcp_default());
        let count = r.entries.first().map_or(0, |e| match &e.outcome {
            Outcome::Found(s) => s.match_count.unwrap_or(0),
            _ => 0,
        });
        Ok(Some((render_mcp(&r), count)))
    }

    /// The per-read averages (agent-session.md §5).
    pub fn averages(&self, questions: &[Question]) -> Result<ReadAverages, BillingError> {
        let model = self.served.model();
        let (mut whole, mut section, mut whole_bare, mut section_bare) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for q in questions {
            for t in &q.targets {
                let c = self.ids.concept(model, &q.bundle, t.id())?;
                whole.push(tokens(&self.get_one(&c.id, &GetOptions::default())));
                section.push(tokens(&self.section_reply(q, t)?));
                whole_bare.push(tokens(c.body()));
                section_bare.push(tokens(bare_section(c, t.section())));
            }
        }
        let searches = questions
            .iter()
            .map(|q| Ok(tokens(&self.search(&q.named)?)))
            .collect::<Result<Vec<u64>, BillingError>>()?;
        let avg = |v: &[u64]| average(v).unwrap_or(0);
        Ok(ReadAverages {
            whole: avg(&whole),
            section: avg(&section),
            whole_bare: avg(&whole_bare),
            section_bare: avg(&section_bare),
            search: avg(&searches),
        })
    }

    /// Every tool call of the sessions, with the reply the harness prices: the manifest,
    /// the 20 searches, each target's section read and each question's find window.
    pub fn calls(&self, questions: &[Question]) -> Result<Vec<ExpectedCall>, BillingError> {
        let mut out = vec![ExpectedCall {
            tool: "manifest",
            args: json!({}),
            text: self.manifest.clone(),
        }];
        for q in questions {
            out.push(ExpectedCall {
                tool: "search",
                args: json!({"query": q.named}),
                text: self.search(&q.named)?,
            });
            for t in &q.targets {
                out.push(ExpectedCall {
                    tool: "get",
                    args: json!({"ids": [self.public_id(q, t.id())?], "section": t.section()}),
                    text: self.section_reply(q, t)?,
                });
            }
            if let (Some(t), Some((text, _))) = (q.targets.first(), self.window_reply(q)?) {
                out.push(ExpectedCall {
                    tool: "get",
                    args: json!({"ids": [self.public_id(q, t.id())?], "section": t.section(),
                        "find": q.named}),
                    text,
                });
            }
        }
        Ok(out)
    }
}

/// The bare text of `section` of a concept, or its whole body when it has no such section.
pub fn bare_section<'c>(c: &'c langonrock_core::compile::Concept, section: &str) -> &'c str {
    let body = c.body();
    match c.parsed.sections.iter().find(|s| s.name == section) {
        Some(s) => {
            let map = &c.parsed.body_map;
            &body[map.to_byte(body, s.start)..map.to_byte(body, s.end)]
        }
        None => body,
    }
}

impl ManifestRead for Rendered<'_> {
    fn manifest_tokens(&self) -> Result<u64, BillingError> {
        Ok(tokens(&self.manifest))
    }
}

impl SectionRead for Rendered<'_> {
    fn section(&self, q: &Question, target: &Target) -> Result<(String, u64), BillingError> {
        let id = self.public_id(q, target.id())?;
        Ok((
            format!("{id}#{}", target.section()),
            tokens(&self.section_reply(q, target)?),
        ))
    }
}

impl SearchRead for Rendered<'_> {
    fn search_tokens(&self, q: &Question) -> Result<u64, BillingError> {
        Ok(tokens(&self.search(&q.named)?))
    }

    fn window_tokens(&self, q: &Question) -> Result<Option<u64>, BillingError> {
        Ok(self
            .window_reply(q)?
            .filter(|(_, n)| *n > 0)
            .map(|(text, _)| tokens(&text)))
    }
}
