//! Crash safety and concurrency of the files store, with the real binary.
//!
//! - `sigkill_during_commits`: a `langonrock mcp` process commits two-document transactions
//!   and is killed with SIGKILL at a random moment, trial after trial, on one tenant. After
//!   every kill the store opens and verifies, every acknowledged commit is there, and the two
//!   documents always carry the same generation (no half commit is ever visible).
//!   `LANGONROCK_CRASH_TRIALS` raises the number of trials (default 200) for a stress run.
//! - `racing_writers`: two server processes read the same hash and write with it as
//!   `replaces`, round after round: exactly one wins each race, no update is lost.

mod common;

use common::{Rpc, TempDir};
use langonrock::Connection as Conn;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// A small deterministic generator (xorshift), so a failing trial can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn doc(generation: u64, name: &str) -> String {
    format!("---\ntype: note\n---\n{name} at generation {generation}.\n")
}

fn hash(text: &str) -> String {
    langonrock_core::engine::Digest::of(text.as_bytes()).to_hex()
}

/// The generation both documents hold, checking they agree, or 0 for an empty tenant.
fn stored_generation(data: &Path, tenant: &str) -> u64 {
    let conn = Conn::open(data, tenant, true).expect("the store opens after a kill");
    let v = conn.verify().expect("verify runs");
    assert!(v.ok, "the store verifies after a kill: {:?}", v.issues);
    let a = conn.read_source("crash", "a.md").expect("read a");
    let b = conn.read_source("crash", "b.md").expect("read b");
    match (a, b) {
        (None, None) => 0,
        (Some(a), Some(b)) => {
            let ga = generation_of(&a.content);
            let gb = generation_of(&b.content);
            assert_eq!(ga, gb, "half a commit is visible: a={ga} b={gb}");
            assert_eq!(a.content, doc(ga, "a"));
            assert_eq!(b.content, doc(gb, "b"));
            ga
        }
        (a, b) => panic!("half a commit is visible: a={a:?} b={b:?}"),
    }
}

fn generation_of(text: &str) -> u64 {
    text.rsplit("generation ")
        .next()
        .and_then(|t| t.trim_end_matches(".\n").parse().ok())
        .unwrap_or_else(|| panic!("unexpected content {text:?}"))
}

fn transaction(current: u64, next: u64) -> serde_json::Value {
    let change = |name: &str| {
        let mut c = json!({"operation": "write", "bundle": "crash", "path": format!("{name}.md"),
            "content": doc(next, name)});
        if current > 0 {
            c["replaces"] = json!(hash(&doc(current, name)));
        }
        c
    };
    json!({"name": "transact", "arguments": {"changes": [change("a"), change("b")]}})
}

#[test]
fn sigkill_during_commits() {
    let trials: u64 = std::env::var("LANGONROCK_CRASH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = TempDir::new("crash");
    let data = dir.path().join("data");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut acknowledged = 0u64;
    let mut sent = 0u64;
    let mut kills_in_flight = 0u64;
    let mut total_sent = 0u64;
    let started = Instant::now();
    let mut tenant = String::new();
    for trial in 0..trials {
        // A fresh tenant every 25 trials keeps each verify's history short.
        if trial % 25 == 0 {
            tenant = format!("crash{}", trial / 25);
            acknowledged = 0;
            sent = 0;
        }
        let dsn = format!("okf://{}?tenant={tenant}", data.display());
        let current = stored_generation(&data, &tenant);
        assert!(
            current >= acknowledged,
            "trial {trial}: acknowledged generation {acknowledged} lost (store holds {current})"
        );
        assert!(current <= sent, "trial {trial}: a generation never sent");
        let mut rpc = Rpc::start(&dsn, &["--database-tools"]);
        let mut gen = current;
        // A few commits that complete, then one that is killed at a random moment.
        for _ in 0..rng.below(3) {
            sent += 1;
            let next = sent;
            let v = rpc.request("tools/call", transaction(gen, next));
            assert_eq!(v["result"]["isError"], false, "trial {trial}: {v}");
            acknowledged = next;
            gen = next;
            total_sent += 1;
        }
        sent += 1;
        let next = sent;
        rpc.send_request("tools/call", transaction(gen, next));
        total_sent += 1;
        // Anywhere from before the request is read to after the commit (a commit with its
        // fsyncs takes tens of milliseconds here).
        let delay = rng.below(60_000);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay));
        }
        rpc.kill();
        let after = stored_generation(&data, &tenant);
        assert!(
            after == gen || after == next,
            "trial {trial}: the store holds generation {after}, expected {gen} or {next}"
        );
        if after == next {
            kills_in_flight += 1;
            acknowledged = next;
        }
    }
    let final_gen = stored_generation(&data, &tenant);
    assert!(final_gen >= acknowledged);
    println!(
        "crash safety: {trials} SIGKILL trials in {:.1} s, {total_sent} commits sent, {kills_in_flight} of the killed commits had landed, {} had not; store verified after every kill",
        started.elapsed().as_secs_f64(),
        trials - kills_in_flight
    );
    // Both outcomes of a kill must have happened, or the kills did not hit commits.
    assert!(kills_in_flight > 0 && kills_in_flight < trials);
}

fn retry_hash(text: &str) -> Option<String> {
    let i = text.find("retry with replaces: \"")? + "retry with replaces: \"".len();
    text.get(i..i + 64).map(str::to_string)
}

#[test]
fn racing_writers() {
    let rounds = 40;
    let dir = TempDir::new("race");
    let data = dir.path().join("data");
    let dsn = format!("okf://{}?tenant=race", data.display());
    {
        let mut rpc = Rpc::start(&dsn, &[]);
        let (t, err) = rpc.call(
            "write",
            json!({"bundle": "race", "path": "doc.md", "content": "---\ntype: note\n---\nstart\n"}),
        );
        assert!(!err, "{t}");
        rpc.kill();
    }
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let barrier = barrier.clone();
            let dsn = dsn.clone();
            std::thread::spawn(move || {
                let mut rpc = Rpc::start(&dsn, &[]);
                let mut log = Vec::new();
                for round in 0..rounds {
                    let content = format!("---\ntype: note\n---\nwriter {w} round {round}\n");
                    // Learn the current hash the way an agent does: from the refusal.
                    let (t, err) = rpc.call(
                        "write",
                        json!({"bundle": "race", "path": "doc.md", "content": content}),
                    );
                    assert!(err, "a write without replaces must be refused: {t}");
                    let seen = retry_hash(&t).expect("the refusal names the hash");
                    barrier.wait();
                    let (t, err) = rpc.call(
                        "write",
                        json!({"bundle": "race", "path": "doc.md", "content": content,
                            "replaces": seen}),
                    );
                    log.push((round, seen, !err, t));
                    barrier.wait();
                }
                rpc.kill();
                log
            })
        })
        .collect();
    let logs: Vec<Vec<(usize, String, bool, String)>> = workers
        .into_iter()
        .map(|h| h.join().expect("worker"))
        .collect();
    let mut races = 0;
    let mut wins = 0;
    for (round, (a, b)) in logs[0].iter().zip(&logs[1]).enumerate() {
        if a.1 == b.1 {
            races += 1;
            assert!(
                a.2 != b.2,
                "round {round}: exactly one writer wins a race on {}: {:?} / {:?}",
                a.1,
                a.3,
                b.3
            );
            let loser = if a.2 { b } else { a };
            assert!(
                loser.3.starts_with("concept changed since it was read"),
                "{}",
                loser.3
            );
        }
        wins += usize::from(a.2) + usize::from(b.2);
    }
    // No update is lost: every win is one revision on top of the creating one.
    let conn = Conn::open(&data, "race", true).expect("open");
    let page = conn
        .history(langonrock_core::engine::HistoryRequest {
            before: None,
            limit: Some(100),
        })
        .expect("history");
    assert_eq!(page.revisions.len(), wins + 1, "one revision per win");
    assert!(conn.verify().expect("verify").ok);
    println!("racing writers: {rounds} rounds, {races} races on one hash, {wins} wins");
    assert_eq!(races, rounds, "both writers read the same hash every round");
    assert_eq!(wins, rounds, "exactly one win per round");
}
