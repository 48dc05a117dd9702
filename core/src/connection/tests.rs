//! The connection policy script (`tests/data/sessions/policy.json`), run natively: every op
//! as a connection op over a strict memory store, its steps traced and compared with the
//! script's. The package's suite runs the same script through the wasm bindings.

use super::*;
use crate::engine::{parse_transaction, serve, MemoryStore, Store};
use serde_json::Value;

const SCRIPT: &str = include_str!("../../../tests/data/sessions/policy.json");

struct Host {
    engine: Engine,
    store: MemoryStore,
    tenant: String,
    commit_time: String,
}

impl Host {
    fn refresh(&mut self) -> Result<bool> {
        let op = self.engine.refresh();
        crate::engine::run(&mut self.engine, &mut self.store, op).map(|_| true)
    }

    fn head_revision(&mut self) -> Option<String> {
        self.engine.read().ok()?.revision()
    }

    /// Runs `op` as a host does; returns the trace of its steps.
    fn run<T: 'static>(&mut self, mut op: ConnOp<'_, T>, step: &Value) -> String {
        let flag = |k: &str| step[k].as_bool().unwrap_or(false);
        let _ = &self.tenant;
        let mut commits: Vec<String> = step["commits"]
            .as_array()
            .map(|a| a.iter().map(|c| c.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        commits.reverse();
        let mut trace = Vec::new();
        let mut s = op.begin(&mut self.engine, flag("busy"), flag("readOnly"));
        loop {
            let answer = match s {
                ConnStep::Done(r) => {
                    trace.push(match r {
                        Ok(_) => "done:ok".to_string(),
                        Err(e) => format!("done:{}:{}", e.code(), e.message()),
                    });
                    return trace.join(" ");
                }
                ConnStep::Refresh { unless_busy } => {
                    trace.push(if unless_busy { "refresh?" } else { "refresh" }.to_string());
                    ConnAnswer::Refreshed(self.refresh())
                }
                ConnStep::Now => {
                    trace.push("now".into());
                    ConnAnswer::Now {
                        commit_time: self.commit_time.clone(),
                        millis: 0,
                    }
                }
                ConnStep::Read => {
                    trace.push("read".into());
                    let served = self.engine.read();
                    op.run_read(served.as_ref());
                    ConnAnswer::Read
                }
                ConnStep::Store(Need::Commit(p)) => {
                    let how = commits.pop().unwrap_or_else(|| "store".into());
                    trace.push(format!("commit:{how}"));
                    match how.as_str() {
                        "store" => {
                            ConnAnswer::Store(serve(&mut self.store, &self.tenant, Need::Commit(p)))
                        }
                        "conflict" => ConnAnswer::Store(Answer::Outcome(CommitOutcome::Conflict)),
                        "indeterminate" => {
                            ConnAnswer::Store(Answer::Outcome(CommitOutcome::Indeterminate))
                        }
                        _ => {
                            let e = op.abandon(
                                &mut self.engine,
                                Error::Store("the host lost the step".into()),
                            );
                            trace.push(format!("done:{}:{}", e.code(), e.message()));
                            return trace.join(" ");
                        }
                    }
                }
                ConnStep::Store(n) => ConnAnswer::Store(serve(&mut self.store, &self.tenant, n)),
            };
            s = op.resume(&mut self.engine, answer);
        }
    }
}

#[test]
fn the_policy_script_runs_natively() {
    let script: Value = serde_json::from_str(SCRIPT).unwrap();
    let tenant = script["tenant"].as_str().unwrap().to_string();
    let doc = script["doc"].as_str().unwrap().to_string();
    let mut host = Host {
        engine: Engine::new(&tenant).unwrap(),
        store: MemoryStore::new(),
        tenant: tenant.clone(),
        commit_time: script["commitTime"].as_str().unwrap().to_string(),
    };
    host.refresh().unwrap();
    for (i, step) in script["ops"].as_array().unwrap().iter().enumerate() {
        let path = step["path"].as_str().unwrap_or("").to_string();
        let trace = match step["do"].as_str().unwrap() {
            "read" => {
                let t = tenant.clone();
                host.run(
                    ConnOp::read(move |s| {
                        crate::manifest::manifest(s.model(), &t, None, "2026-05-01")
                    }),
                    step,
                )
            }
            "write" => host.run(write("notes", &path, doc.as_str(), None), step),
            "transact" => {
                let mut req = serde_json::json!({"changes": [
                    {"operation": "write", "bundle": "notes", "path": path, "content": doc}
                ]});
                if step["expected"].as_bool() == Some(true) {
                    req["expectedRevision"] = host.head_revision().into();
                }
                host.run(transact(parse_transaction(&req).unwrap()), step)
            }
            "history" => host.run(history(HistoryRequest::default()), step),
            "gc" => host.run(
                gc(GcOptions {
                    dry_run: step["dryRun"].as_bool().unwrap_or(false),
                    ..GcOptions::at(0)
                }),
                step,
            ),
            "verify" => host.run(verify(), step),
            other => panic!("unknown op {other}"),
        };
        // A trace ends `done:<code>:<message>`; the script may leave the message out.
        let want = step["expect"].as_str().unwrap();
        assert!(
            trace == want || trace.starts_with(&format!("{want}:")),
            "op {i}: {step}\n got: {trace}"
        );
    }
    // Every commit of the script that was stored is there, once.
    assert!(host.store.head(&tenant).is_some());
}

#[test]
fn the_derived_timer_script_runs_natively() {
    let script: Value = serde_json::from_str(SCRIPT).unwrap();
    assert_eq!(script["delayMs"].as_u64(), Some(DERIVED_DELAY_MS));
    let mut timer = DerivedTimer::new(false);
    for (i, call) in script["timer"].as_array().unwrap().iter().enumerate() {
        let a = call.as_array().unwrap();
        let n = |j: usize| a[j].as_u64().unwrap();
        let b = |j: usize| a[j].as_bool().unwrap();
        match a[0].as_str().unwrap() {
            "new" => timer = DerivedTimer::new(b(1)),
            "afterOp" => assert_eq!(timer.after_op(n(1), b(2), b(3)), a[4].as_u64(), "call {i}"),
            "fire" => assert_eq!(timer.fire(n(1)), b(2), "call {i}"),
            "deadline" => assert_eq!(timer.deadline(), a[1].as_u64(), "call {i}"),
            "close" => assert_eq!(timer.close(), b(1), "call {i}"),
            other => panic!("unknown timer call {other}"),
        }
    }
}

/// A store answer the op did not ask for never passes silently.
#[test]
fn a_mismatched_answer_fails_the_op() {
    let mut store = MemoryStore::new();
    let mut engine = Engine::new("t").unwrap();
    let mut op = write("b", "a.md", "x", None);
    assert!(matches!(
        op.begin(&mut engine, false, false),
        ConnStep::Refresh { .. }
    ));
    match op.resume(&mut engine, ConnAnswer::Read) {
        ConnStep::Done(Err(e)) => assert_eq!(e.code(), "INVALID"),
        other => panic!("{other:?}"),
    }
    let _ = store.read_head("t");
}

/// A host's own delay moves every deadline by that delay instead of the default one.
#[test]
fn a_chosen_delay_sets_the_deadline() {
    let mut timer = DerivedTimer::with_delay(false, 5_000);
    assert_eq!(timer.after_op(100, true, true), Some(5_100));
    assert!(!timer.fire(1_200), "not at the default delay");
    assert_eq!(
        timer.after_op(3_000, true, true),
        Some(8_000),
        "a later commit moves it on"
    );
    assert!(timer.fire(8_000));
    assert_eq!(timer.deadline(), None);
    assert_eq!(DerivedTimer::default(), DerivedTimer::new(false));
}

/// A host's bound on the wait: a steady stream of commits, each moving the deadline on,
/// still writes the record at most `limit` after it became due, and the next record's bound
/// counts from its own first commit.
#[test]
fn a_limit_bounds_the_wait_under_steady_commits() {
    let mut timer = DerivedTimer::with_limit(false, 5_000, 60_000);
    assert_eq!(timer.after_op(1_000, true, true), Some(6_000));
    assert_eq!(
        timer.after_op(2_000, false, false),
        None,
        "reads arm nothing"
    );
    let mut at = None;
    for now in (2_000..=58_000).step_by(1_000) {
        at = timer.after_op(now, true, true);
        assert!(!timer.fire(now), "at {now}");
    }
    assert_eq!(at, Some(61_000), "moved on by each commit until the bound");
    assert_eq!(timer.after_op(59_000, true, true), Some(61_000));
    assert_eq!(timer.after_op(60_500, true, true), Some(61_000));
    assert!(timer.fire(61_000));
    assert_eq!(timer.after_op(62_000, true, true), Some(67_000));
    assert!(timer.fire(67_000));
    assert!(!timer.close(), "nothing pending");
}
