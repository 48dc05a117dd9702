//! The local connection's answers to a tool call's needs: each [`ToolNeed`] as the
//! [`ConnOp`] that answers it from the engine, under the connection policy. A host runs a
//! tool call as
//!
//! ```text
//! let mut op = ToolOp::new(call, read_only);
//! let mut answer = None;
//! loop {
//!     match op.resume(answer.take()) {
//!         ToolStep::Done(reply) => return reply,
//!         ToolStep::Need(need) => answer = Some(run(local::answer(need, tenant, today))),
//!     }
//! }
//! ```
//!
//! where `run` drives a [`ConnOp`] (queued when [`ConnOp::exclusive`]). The commit time is
//! the clock's at the moment each commit is prepared ([`super::ConnStep::Now`]), so the
//! retry after a lost swap gets its own.

use super::ConnOp;
use crate::error::Result;
use crate::tools::{ToolAnswer, ToolNeed};

/// Maps a connection op's result into a tool answer.
fn answering<T: 'static>(
    op: ConnOp<'static, T>,
    wrap: impl Fn(Result<T>) -> ToolAnswer + 'static,
) -> ConnOp<'static, ToolAnswer> {
    op.map(wrap)
}

/// The connection op that answers `need` on the local engine of `tenant`, reads rendered
/// for the date `today`.
pub fn answer(need: ToolNeed, tenant: &str, today: &str) -> ConnOp<'static, ToolAnswer> {
    let (tenant, today) = (tenant.to_string(), today.to_string());
    match need {
        ToolNeed::Manifest { bundle } => answering(
            ConnOp::read(move |s| {
                crate::manifest::manifest(s.model(), &tenant, bundle.as_deref(), &today)
            }),
            ToolAnswer::Text,
        ),
        ToolNeed::Snapshot => answering(ConnOp::read(|s| Ok(s.snapshot_id())), ToolAnswer::Text),
        ToolNeed::Search { query, options } => answering(
            ConnOp::read(move |s| s.search(&tenant, &query, &options, &today)),
            ToolAnswer::Text,
        ),
        ToolNeed::Get { ids, options } => {
            let source = options.source;
            let checked = ids.clone();
            let render = move |s: &crate::engine::Served| {
                Ok(crate::read::render_mcp(&s.get(&ids, &options)?))
            };
            let op = if source {
                // The source blobs behind what it returns are verified first (§9.1 rule 1).
                ConnOp::read_after(move |e| e.check_sources(Some(checked.clone())), render)
            } else {
                ConnOp::read(render)
            };
            answering(op, ToolAnswer::Text)
        }
        ToolNeed::Write {
            bundle,
            path,
            content,
            replaces,
        } => answering(
            super::write(&bundle, &path, content, replaces.as_deref()),
            ToolAnswer::Written,
        ),
        ToolNeed::Delete {
            bundle,
            path,
            replaces,
        } => answering(
            super::delete(&bundle, &path, Some(&replaces)),
            ToolAnswer::Deleted,
        ),
        ToolNeed::Transact(txn) => answering(super::transact(txn), ToolAnswer::Revision),
        ToolNeed::Restore(req) => answering(super::restore(req), ToolAnswer::Revision),
        ToolNeed::History(req) => answering(super::history(req), ToolAnswer::History),
        ToolNeed::CurrentHash { bundle, path } => answering(
            ConnOp::read(move |s| Ok(s.source_hash(&bundle, &path))),
            |r| ToolAnswer::Hash(r.ok().flatten()),
        ),
        ToolNeed::StoredBundle { bundle } => answering(
            ConnOp::read(move |s| Ok(s.model().find_bundle(&bundle).map(str::to_string))),
            |r| ToolAnswer::Bundle(r.ok().flatten()),
        ),
    }
}
