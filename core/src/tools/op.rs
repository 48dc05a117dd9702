//! A tool call as one step machine (agent.md §6): [`ToolOp`] takes a validated
//! [`ToolCall`], asks its connection for the operations it needs ([`ToolNeed`]) and renders
//! the reply with the renderers of this module. It owns every decision of a tool call:
//! whether it reads or commits, which look-ups build a refusal's retry lines, when a
//! look-up is skipped (an indeterminate commit), and the exact texts.
//!
//! Its needs are connection operations, so any connection answers them: the local one from
//! its engine (`crate::connection::local`), a remote one over HTTP (docs/http.md §4 has a
//! route for each). The connection applies its own policy (refresh, the one retry after a
//! lost head swap, read-only refusal); the tool op never looks at message text.

use super::args::{ChangeArg, ToolCall};
use super::render::{
    delete_failure, delete_needs_hash, delete_success, looks_up_after, revision_answer,
    tied_changes, transact_failure, transact_success, write_failure, write_success, TiedChange,
};
use crate::connection::READ_ONLY;
use crate::engine::{
    DeleteResult, HistoryPage, HistoryRequest, RestoreRequest, RevisionResult, Transaction,
    WriteResult,
};
use crate::error::Error;
use crate::read::GetOptions;
use crate::search::SearchOptions;

/// A tool reply: the text of the MCP `tools/call` result and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The one text content block.
    pub text: String,
    /// `isError`.
    pub is_error: bool,
}

impl Reply {
    /// A successful reply.
    pub fn ok(text: String) -> Reply {
        Reply {
            text,
            is_error: false,
        }
    }

    /// An error reply.
    pub fn error(text: String) -> Reply {
        Reply {
            text,
            is_error: true,
        }
    }
}

/// A connection operation a tool call needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolNeed {
    /// The manifest TSV of the tenant or of a bundle, for the read date: answer
    /// [`ToolAnswer::Text`].
    Manifest {
        /// The bundle filter, as given.
        bundle: Option<String>,
    },
    /// The search TSV for the read date: answer [`ToolAnswer::Text`].
    Search {
        /// The query.
        query: String,
        /// `k`, the bundle filter, and `expand: true`.
        options: SearchOptions,
    },
    /// The snapshot id: answer [`ToolAnswer::Text`].
    Snapshot,
    /// `get` rendered as the MCP reply (`crate::read::render_mcp`); `options` carry the MCP
    /// default cap already, and with `source` the connection checks the sources it returns
    /// first. Answer [`ToolAnswer::Text`].
    Get {
        /// The ids, in request order.
        ids: Vec<String>,
        /// The options.
        options: GetOptions,
    },
    /// `write`: answer [`ToolAnswer::Written`].
    Write {
        /// The bundle, as given.
        bundle: String,
        /// The path, as given.
        path: String,
        /// The whole document (`IllFormed` when it held lone surrogates on the wire).
        content: crate::engine::Content,
        /// The hash replaced.
        replaces: Option<String>,
    },
    /// `delete`: answer [`ToolAnswer::Deleted`].
    Delete {
        /// The bundle, as given.
        bundle: String,
        /// The path, as given.
        path: String,
        /// The hash removed.
        replaces: String,
    },
    /// `transact`: answer [`ToolAnswer::Revision`].
    Transact(Transaction),
    /// `restore`: answer [`ToolAnswer::Revision`].
    Restore(RestoreRequest),
    /// `history`: answer [`ToolAnswer::History`].
    History(HistoryRequest),
    /// A document's current hash for a refusal's retry line, after a refresh; `None` when
    /// it does not exist or the look-up failed (agent.md §6.3.2). Answer
    /// [`ToolAnswer::Hash`].
    CurrentHash {
        /// The bundle, as given.
        bundle: String,
        /// The path, as given.
        path: String,
    },
    /// The bundle's name as stored (bundles match ignoring case), `None` when the tenant has
    /// no such bundle (or the look-up failed). Answer [`ToolAnswer::Bundle`].
    StoredBundle {
        /// The bundle, as given.
        bundle: String,
    },
}

/// A connection's answer to a [`ToolNeed`].
#[derive(Debug, Clone, PartialEq)]
pub enum ToolAnswer {
    /// A text, or the operation's error.
    Text(Result<String, Error>),
    /// A write's result.
    Written(Result<WriteResult, Error>),
    /// A delete's result.
    Deleted(Result<DeleteResult, Error>),
    /// A transaction's or a restore's result.
    Revision(Result<RevisionResult, Error>),
    /// A history page.
    History(Result<HistoryPage, Error>),
    /// A current hash.
    Hash(Option<String>),
    /// A stored bundle name.
    Bundle(Option<String>),
}

/// What a [`ToolOp`] asks next.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolStep {
    /// Run this connection operation and resume with its answer.
    Need(ToolNeed),
    /// The reply.
    Done(Reply),
}

#[derive(Debug)]
enum State {
    Start,
    /// Waiting for the answer to the need this state names.
    Asked(Asked),
    Finished,
}

#[derive(Debug)]
enum Asked {
    Text,
    WriteResult,
    WriteStoredBundle(WriteResult),
    WriteLookup(Error),
    DeleteNeedsHash,
    DeleteStoredBundle,
    DeleteResult(String),
    DeleteLookup(Error),
    TransactResult,
    /// The failed transaction, its tied changes so far, and the index (into the tied
    /// changes) whose hash is asked.
    TransactLookup(Error, Vec<TiedChange>, usize),
    RestoreResult,
    HistoryPage,
}

/// One tool call as a step machine over connection operations (see the module
/// documentation).
#[derive(Debug)]
pub struct ToolOp {
    call: ToolCall,
    read_only: bool,
    state: State,
}

fn reply_text(r: Result<String, Error>) -> Reply {
    match r {
        Ok(t) => Reply::ok(t),
        Err(e) => Reply::error(e.message()),
    }
}

impl ToolOp {
    /// A tool call on a connection; `read_only`: the connection refuses changes (its tools
    /// that write answer `connection is read-only` before looking at the request).
    pub fn new(call: ToolCall, read_only: bool) -> ToolOp {
        ToolOp {
            call,
            read_only,
            state: State::Start,
        }
    }

    /// The call.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// Whether the call changes the tenant (a commit): `write`, `delete` with `replaces`,
    /// `transact` and `restore`.
    pub fn commits(&self) -> bool {
        matches!(
            self.call,
            ToolCall::Write { .. }
                | ToolCall::Delete {
                    replaces: Some(_),
                    ..
                }
                | ToolCall::Transact { .. }
                | ToolCall::Restore { .. }
        )
    }

    fn ask(&mut self, asked: Asked, need: ToolNeed) -> ToolStep {
        self.state = State::Asked(asked);
        ToolStep::Need(need)
    }

    fn done(&mut self, reply: Reply) -> ToolStep {
        self.state = State::Finished;
        ToolStep::Done(reply)
    }

    /// Advances the call: `None` first, then the answer to the last need.
    pub fn resume(&mut self, answer: Option<ToolAnswer>) -> ToolStep {
        let state = std::mem::replace(&mut self.state, State::Finished);
        match (state, answer) {
            (State::Start, None) => self.start(),
            (State::Asked(asked), Some(a)) => self.answered(asked, a),
            (State::Finished, _) => {
                ToolStep::Done(Reply::error("the tool call already finished".into()))
            }
            _ => self.done(Reply::error(
                "the answer does not match the tool call's need".into(),
            )),
        }
    }

    fn start(&mut self) -> ToolStep {
        if self.read_only && self.commits() {
            return self.done(Reply::error(READ_ONLY.into()));
        }
        match self.call.clone() {
            ToolCall::Manifest { bundle } => self.ask(Asked::Text, ToolNeed::Manifest { bundle }),
            ToolCall::Snapshot => self.ask(Asked::Text, ToolNeed::Snapshot),
            ToolCall::Search { query, k, bundle } => self.ask(
                Asked::Text,
                ToolNeed::Search {
                    query,
                    options: SearchOptions {
                        k,
                        bundle,
                        expand: true,
                    },
                },
            ),
            ToolCall::Get {
                ids,
                section,
                offset,
                limit,
                find,
                source,
            } => self.ask(
                Asked::Text,
                ToolNeed::Get {
                    ids,
                    // The table already applied the MCP default cap (read.md §3.3).
                    options: GetOptions {
                        section,
                        offset: offset.map(|n| n as u64),
                        limit: limit.map(|n| n as u64),
                        find,
                        source,
                    },
                },
            ),
            ToolCall::Write {
                bundle,
                path,
                content,
                replaces,
            } => self.ask(
                Asked::WriteResult,
                ToolNeed::Write {
                    bundle,
                    path,
                    content,
                    replaces,
                },
            ),
            ToolCall::Delete {
                bundle,
                path,
                replaces: None,
            } => self.ask(
                Asked::DeleteNeedsHash,
                ToolNeed::CurrentHash { bundle, path },
            ),
            // The bundle's stored name is looked up before the delete: deleting a bundle's
            // last document removes the bundle.
            ToolCall::Delete { bundle, .. } => {
                self.ask(Asked::DeleteStoredBundle, ToolNeed::StoredBundle { bundle })
            }
            ToolCall::Transact { request, .. } => match request {
                Ok(txn) => self.ask(Asked::TransactResult, ToolNeed::Transact(txn)),
                Err(e) => self.transact_failed(e),
            },
            ToolCall::History { before, limit } => self.ask(
                Asked::HistoryPage,
                ToolNeed::History(HistoryRequest {
                    before,
                    limit: limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                }),
            ),
            ToolCall::Restore {
                revision,
                expected_revision,
            } => self.ask(
                Asked::RestoreResult,
                ToolNeed::Restore(RestoreRequest {
                    revision,
                    expected_revision,
                }),
            ),
        }
    }

    fn target(&self) -> (String, String) {
        match &self.call {
            ToolCall::Write { bundle, path, .. } | ToolCall::Delete { bundle, path, .. } => {
                (bundle.clone(), path.clone())
            }
            _ => (String::new(), String::new()),
        }
    }

    fn changes(&self) -> &[ChangeArg] {
        match &self.call {
            ToolCall::Transact { changes, .. } => changes,
            _ => &[],
        }
    }

    /// A failed transaction: its tied changes, looking up each failed precondition's
    /// current hash in turn.
    fn transact_failed(&mut self, e: Error) -> ToolStep {
        // The look-ups are asked one by one below; collect the ties without hashes first.
        let tied = tied_changes(&e, self.changes(), |_, _| None);
        self.next_tie(e, tied, 0)
    }

    fn next_tie(&mut self, e: Error, tied: Vec<TiedChange>, from: usize) -> ToolStep {
        let needs_hash = matches!(e, Error::Conflict { .. });
        if needs_hash {
            if let Some(t) = tied.get(from) {
                if let Some(c) = self.changes().get(t.index) {
                    let need = ToolNeed::CurrentHash {
                        bundle: c.bundle.clone(),
                        path: c.path.clone(),
                    };
                    return self.ask(Asked::TransactLookup(e, tied, from), need);
                }
                return self.next_tie(e, tied, from + 1);
            }
        }
        let text = transact_failure(&e, &tied);
        self.done(Reply::error(text))
    }

    fn answered(&mut self, asked: Asked, answer: ToolAnswer) -> ToolStep {
        let (bundle, path) = self.target();
        match (asked, answer) {
            (Asked::Text, ToolAnswer::Text(r)) => self.done(reply_text(r)),
            (Asked::WriteResult, ToolAnswer::Written(Ok(r))) => self.ask(
                Asked::WriteStoredBundle(r),
                ToolNeed::StoredBundle {
                    bundle: bundle.clone(),
                },
            ),
            (Asked::WriteResult, ToolAnswer::Written(Err(e))) => {
                if looks_up_after(&e) {
                    self.ask(
                        Asked::WriteLookup(e),
                        ToolNeed::CurrentHash { bundle, path },
                    )
                } else {
                    self.done(Reply::error(write_failure(&e, None)))
                }
            }
            (Asked::WriteStoredBundle(r), ToolAnswer::Bundle(b)) => {
                let b = b.unwrap_or(bundle);
                self.done(Reply::ok(write_success(
                    &b,
                    &crate::validate::nfc(&path),
                    &r,
                )))
            }
            (Asked::WriteLookup(e), ToolAnswer::Hash(h)) => {
                self.done(Reply::error(write_failure(&e, h.as_deref())))
            }
            (Asked::DeleteNeedsHash, ToolAnswer::Hash(h)) => {
                self.done(Reply::error(delete_needs_hash(h.as_deref())))
            }
            (Asked::DeleteStoredBundle, ToolAnswer::Bundle(b)) => {
                let replaces = match &self.call {
                    ToolCall::Delete {
                        replaces: Some(h), ..
                    } => h.clone(),
                    _ => String::new(),
                };
                let stored = b.unwrap_or_else(|| bundle.clone());
                self.ask(
                    Asked::DeleteResult(stored),
                    ToolNeed::Delete {
                        bundle,
                        path,
                        replaces,
                    },
                )
            }
            (Asked::DeleteResult(stored), ToolAnswer::Deleted(Ok(r))) => self.done(Reply::ok(
                delete_success(&stored, &crate::validate::nfc(&path), &r),
            )),
            (Asked::DeleteResult(_), ToolAnswer::Deleted(Err(e))) => {
                if looks_up_after(&e) {
                    self.ask(
                        Asked::DeleteLookup(e),
                        ToolNeed::CurrentHash { bundle, path },
                    )
                } else {
                    self.done(Reply::error(delete_failure(&e, None)))
                }
            }
            (Asked::DeleteLookup(e), ToolAnswer::Hash(h)) => {
                self.done(Reply::error(delete_failure(&e, h.as_deref())))
            }
            (Asked::TransactResult, ToolAnswer::Revision(Ok(r))) => {
                let text = transact_success(&r, self.changes());
                self.done(Reply::ok(text))
            }
            (Asked::TransactResult, ToolAnswer::Revision(Err(e))) => self.transact_failed(e),
            (Asked::TransactLookup(e, mut tied, at), ToolAnswer::Hash(h)) => {
                if let Some(t) = tied.get_mut(at) {
                    t.retry_hash = h;
                }
                self.next_tie(e, tied, at + 1)
            }
            (Asked::RestoreResult, ToolAnswer::Revision(r)) => match r {
                Ok(r) => self.done(Reply::ok(revision_answer(&r, &[]))),
                Err(e) => self.done(Reply::error(e.message())),
            },
            (Asked::HistoryPage, ToolAnswer::History(r)) => match r {
                Ok(page) => self.done(Reply::ok(serde_json::to_string(&page).unwrap_or_default())),
                Err(e) => self.done(Reply::error(e.message())),
            },
            _ => self.done(Reply::error(
                "the answer does not match the tool call's need".into(),
            )),
        }
    }
}
