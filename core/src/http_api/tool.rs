//! A tool call over the HTTP API (docs/remote.md): the core's [`ToolOp`] with each of its
//! needs answered by requests to `langonrock serve`. [`RemoteTool`] is a step machine that
//! hands out the requests to send and takes their responses, so the Rust remote connection
//! and the JS package (through the wasm bindings) run the very same tool path, and the
//! replies are the texts a local connection gives.

use super::{
    get_answer, get_probe, manifest_answer, read_source_answer, stored_bundle_in, ManifestAnswer,
    OwnedSlice, RemoteGet, Request, Response,
};
use crate::engine::request::{check_change, parse_hash, ILL_FORMED};
use crate::engine::{Content, DeleteResult, HistoryPage, RevisionResult, WriteResult};
use crate::error::Error;
use crate::read::GetOptions;
use crate::snapshot::Snapshot;
use crate::tools::{Reply, ToolAnswer, ToolCall, ToolNeed, ToolOp, ToolStep};

/// What a [`RemoteTool`] wants next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteStep {
    /// Send this request and resume with its response (or the transport's error).
    Send(Request),
    /// The reply.
    Done(Reply),
}

/// The response being waited for, by the need it answers.
#[derive(Debug)]
enum Waiting {
    Text,
    Snapshot,
    Get {
        ids: Vec<String>,
        options: GetOptions,
        /// The first answer, while the probe of `get_probe` is out.
        found: Option<Vec<(String, OwnedSlice)>>,
    },
    Written,
    Deleted,
    Revision,
    History,
    Hash,
    Bundle(String),
}

/// One tool call over the HTTP API of a server, under the request prefix `/v1[/<tenant>]`.
#[derive(Debug)]
pub struct RemoteTool {
    op: ToolOp,
    prefix: String,
    waiting: Option<Waiting>,
}

impl RemoteTool {
    /// A tool call; `read_only` refuses the writing tools before anything is sent.
    pub fn new(call: ToolCall, read_only: bool, prefix: &str) -> RemoteTool {
        RemoteTool {
            op: ToolOp::new(call, read_only),
            prefix: prefix.to_string(),
            waiting: None,
        }
    }

    /// Whether the call changes the tenant (a commit); a connection runs such calls one at
    /// a time, in call order, as it runs its other changes.
    pub fn commits(&self) -> bool {
        self.op.commits()
    }

    /// Starts the call (`None`), or goes on with the response to the last request (`Err`
    /// when the transport failed).
    pub fn resume(&mut self, response: Option<Result<Response<'_>, Error>>) -> RemoteStep {
        let step = match (self.waiting.take(), response) {
            (None, None) => self.op.resume(None),
            (Some(w), Some(r)) => match self.answered(w, r) {
                Ok(answer) => self.op.resume(Some(answer)),
                Err(request) => return RemoteStep::Send(request),
            },
            _ => {
                return RemoteStep::Done(Reply::error(
                    "the response does not match the tool call's request".into(),
                ))
            }
        };
        let mut step = step;
        loop {
            match step {
                ToolStep::Done(reply) => return RemoteStep::Done(reply),
                ToolStep::Need(need) => match self.ask(need) {
                    Ok(request) => return RemoteStep::Send(request),
                    Err(answer) => step = self.op.resume(Some(*answer)),
                },
            }
        }
    }

    /// The request that answers `need`, remembering what it waits for; or (`Err`) the answer
    /// itself when nothing needs sending: a write of ill-formed text is refused here with the
    /// local engine's message (docs/limits.md).
    fn ask(&mut self, need: ToolNeed) -> Result<Request, Box<ToolAnswer>> {
        let p = self.prefix.as_str();
        let (request, waiting) = match need {
            ToolNeed::Manifest { bundle } => {
                (super::manifest(p, bundle.as_deref(), None), Waiting::Text)
            }
            ToolNeed::Search { query, options } => {
                (super::search(p, &query, &options), Waiting::Text)
            }
            ToolNeed::Snapshot => (super::snapshot(p), Waiting::Snapshot),
            ToolNeed::Get { ids, options } => (
                super::get(p, &ids, &options),
                Waiting::Get {
                    ids,
                    options,
                    found: None,
                },
            ),
            ToolNeed::Write {
                bundle,
                path,
                content,
                replaces,
            } => match content {
                Content::Text(text) => (
                    super::write(p, &bundle, &path, &text, replaces.as_deref()),
                    Waiting::Written,
                ),
                // Checked whole, as the local engine checks it (bundle, path, then content),
                // so the refusal is the local one.
                Content::IllFormed => {
                    let hash = replaces.as_deref().map(parse_hash).transpose();
                    let refusal = check_change("write", &bundle, &path, Some(content), hash)
                        .err()
                        .unwrap_or_else(|| Error::Invalid(ILL_FORMED.into()));
                    return Err(Box::new(ToolAnswer::Written(Err(refusal))));
                }
            },
            ToolNeed::Delete {
                bundle,
                path,
                replaces,
            } => (
                super::delete(p, &bundle, &path, Some(&replaces)),
                Waiting::Deleted,
            ),
            ToolNeed::Transact(txn) => (
                super::transact(p, &super::transaction_json(&txn)),
                Waiting::Revision,
            ),
            ToolNeed::Restore(req) => (super::restore(p, &req), Waiting::Revision),
            ToolNeed::History(req) => (super::history(p, &req), Waiting::History),
            ToolNeed::CurrentHash { bundle, path } => {
                (super::read_source(p, &bundle, &path), Waiting::Hash)
            }
            ToolNeed::StoredBundle { bundle } => {
                (super::manifest(p, None, None), Waiting::Bundle(bundle))
            }
        };
        self.waiting = Some(waiting);
        Ok(request)
    }

    /// The answer a response gives the tool op, or (`Err`) one more request to send first.
    fn answered(
        &mut self,
        waiting: Waiting,
        response: Result<Response<'_>, Error>,
    ) -> Result<ToolAnswer, Request> {
        Ok(match waiting {
            Waiting::Text => ToolAnswer::Text(response.and_then(|r| r.tsv(200))),
            Waiting::Snapshot => {
                ToolAnswer::Text(response.and_then(|r| r.json::<Snapshot>(200).map(|s| s.snapshot)))
            }
            Waiting::Written => {
                ToolAnswer::Written(response.and_then(|r| r.json::<WriteResult>(200)))
            }
            Waiting::Deleted => {
                ToolAnswer::Deleted(response.and_then(|r| r.json::<DeleteResult>(200)))
            }
            Waiting::Revision => {
                ToolAnswer::Revision(response.and_then(|r| r.json::<RevisionResult>(200)))
            }
            Waiting::History => {
                ToolAnswer::History(response.and_then(|r| r.json::<HistoryPage>(200)))
            }
            // Look-up errors count as "no document" (agent.md §6.3.2).
            Waiting::Hash => ToolAnswer::Hash(
                response
                    .and_then(|r| read_source_answer(&r))
                    .ok()
                    .flatten()
                    .map(|(_, hash)| hash),
            ),
            Waiting::Bundle(bundle) => ToolAnswer::Bundle(
                response
                    .and_then(|r| manifest_answer(&r, None))
                    .ok()
                    .and_then(|m| match m {
                        ManifestAnswer::Fresh { text, .. } | ManifestAnswer::Cached(text) => {
                            stored_bundle_in(&text, &bundle)
                        }
                    }),
            ),
            Waiting::Get {
                ids,
                options,
                found,
            } => {
                let slices = match response.and_then(|r| {
                    r.expect(200)?;
                    get_answer(r.body).ok_or_else(|| super::unexpected(r.status, r.body))
                }) {
                    Ok(s) => s,
                    Err(e) => return Ok(ToolAnswer::Text(Err(e))),
                };
                let (found, probe) = match found {
                    // The probe's answer: assemble.
                    Some(first) => (first, Some(slices)),
                    None => match get_probe(&ids, &options, &slices) {
                        Some((missing, o)) => {
                            let request = super::get(&self.prefix, &missing, &o);
                            self.waiting = Some(Waiting::Get {
                                ids,
                                options,
                                found: Some(slices),
                            });
                            return Err(request);
                        }
                        None => (slices, None),
                    },
                };
                let got = RemoteGet::new(&ids, &options, found, probe);
                ToolAnswer::Text(Ok(crate::read::render_mcp(&got.result())))
            }
        })
    }
}
