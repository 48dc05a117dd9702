//! Crash safety and concurrency of the files store and of the PostgreSQL store (a real
//! server, docs/postgres.md), with the real binary: each test runs on both.
//!
//! - `sigkill_during_commits`: a `langonrock mcp` process commits two-document transactions
//!   and is killed with SIGKILL at a random moment, trial after trial, on one tenant. After
//!   every kill the store opens and verifies, every acknowledged commit is there, and the two
//!   documents always carry the same generation (no half commit is ever visible).
//!   `LANGONROCK_CRASH_TRIALS` sets the number of trials (default 200 on files, 50 on
//!   PostgreSQL) for a stress run.
//! - `racing_writers`: server processes read the same hash and write with it as `replaces`,
//!   round after round: exactly one wins each race, no update is lost (two on files; the
//!   same race between `serve` replicas on one database is `tests/serve/replicas.rs`).
//!   `LANGONROCK_RACE_ROUNDS` sets the number of rounds on files (default 40).

mod common;

use common::{Rpc, TempDir};
use langonrock::{Options, Root};
use serde_json::json;
use std::time::{Duration, Instant};

/// A fresh schema of the test server, as a data root, and the DSN of a tenant in it.
fn postgres_root(tag: &str) -> (Root, impl Fn(&str) -> String) {
    let server = langonrock_postgres::test_server::server();
    let base = server.dsn_with(&format!("schema={tag}_{}", std::process::id()));
    let root = Root::from_data(&base).expect("a postgres root");
    let name = served_name(tag);
    (root, move |tenant: &str| {
        format!("{base}&tenant={tenant}&application_name={name}")
    })
}

/// The `application_name` the servers of `tag` connect with.
fn served_name(tag: &str) -> String {
    format!("lr_{tag}_{}", std::process::id())
}

/// After a server was killed: waits until the database has finished with its connections.
/// A commit statement the server sent before it died still runs (and may commit) in its
/// backend, which exits only once it has read everything the dead client sent, so the
/// store's state is final only then.
fn backends_gone(name: &str) {
    let mut admin = langonrock_postgres::test_server::server().admin();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                &[&name],
            )
            .expect("pg_stat_activity")
            .get(0);
        if n == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the killed server's backends never ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A files data root in `dir`, and the DSN of a tenant in it.
fn files_root(dir: &TempDir) -> (Root, impl Fn(&str) -> String) {
    let data = dir.path().join("data");
    let dsn_root = data.clone();
    (Root::Files(data), move |tenant: &str| {
        format!("okf://{}?tenant={tenant}", dsn_root.display())
    })
}

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
fn stored_generation(root: &Root, tenant: &str) -> u64 {
    let conn = Options::default()
        .read_only(true)
        .open_root(root, tenant)
        .expect("the store opens after a kill");
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
    let dir = TempDir::new("crash");
    let (root, dsn) = files_root(&dir);
    sigkill_trials(&root, &dsn, &|| {}, 200);
}

/// The same on PostgreSQL: 50 trials by default (each process logs in to the server, which
/// costs more than opening files); `LANGONROCK_CRASH_TRIALS=200` for the full run.
#[test]
fn sigkill_during_commits_on_postgres() {
    let (root, dsn) = postgres_root("crash");
    let name = served_name("crash");
    sigkill_trials(&root, &dsn, &|| backends_gone(&name), 50);
}

/// `settle` runs after each kill, before the store is read (the database's backends of the
/// killed process may still be finishing its commit).
fn sigkill_trials(
    data: &Root,
    dsn_of: &dyn Fn(&str) -> String,
    settle: &dyn Fn(),
    default_trials: u64,
) {
    let trials: u64 = std::env::var("LANGONROCK_CRASH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_trials);
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
        let dsn = dsn_of(&tenant);
        let current = stored_generation(data, &tenant);
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
        settle();
        let after = stored_generation(data, &tenant);
        assert!(
            after == gen || after == next,
            "trial {trial}: the store holds generation {after}, expected {gen} or {next}"
        );
        if after == next {
            kills_in_flight += 1;
            acknowledged = next;
        }
    }
    let final_gen = stored_generation(data, &tenant);
    assert!(final_gen >= acknowledged);
    println!(
        "crash safety ({data}): {trials} SIGKILL trials in {:.1} s, {total_sent} commits sent, {kills_in_flight} of the killed commits had landed, {} had not; store verified after every kill",
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
    let rounds: usize = std::env::var("LANGONROCK_RACE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let dir = TempDir::new("race");
    let (root, dsn) = files_root(&dir);
    race(&root, &dsn("race"), 2, rounds, 1);
}

/// A round's log entry of one writer: the round, the hash it read, whether it won, the
/// answer.
type Entry = (usize, String, bool, String);

/// `writers` server processes race `rounds` times; round `r` is on document `r % docs`.
/// Each round every writer learns the document's hash through its own server, then all
/// write with it as `replaces`: exactly one wins, the others are refused, no update is
/// lost, and every server ends on the same snapshot.
fn race(data: &Root, dsn: &str, writers: usize, rounds: usize, docs: usize) {
    let dsn = dsn.to_string();
    let path = |r: usize| format!("doc{}.md", r % docs);
    {
        let mut rpc = Rpc::start(&dsn, &[]);
        for d in 0..docs {
            let (t, err) = rpc.call(
                "write",
                json!({"bundle": "race", "path": path(d), "content": "---\ntype: note\n---\nstart\n"}),
            );
            assert!(!err, "{t}");
        }
        rpc.kill();
    }
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(writers));
    let started = Instant::now();
    let workers: Vec<_> = (0..writers)
        .map(|w| {
            let barrier = barrier.clone();
            let dsn = dsn.clone();
            std::thread::spawn(move || {
                let mut rpc = Rpc::start(&dsn, &[]);
                let mut log: Vec<Entry> = Vec::new();
                for round in 0..rounds {
                    let content = format!("---\ntype: note\n---\nwriter {w} round {round}\n");
                    let path = format!("doc{}.md", round % docs);
                    // Learn the current hash the way an agent does: from the refusal.
                    let (t, err) = rpc.call(
                        "write",
                        json!({"bundle": "race", "path": path, "content": content}),
                    );
                    assert!(err, "a write without replaces must be refused: {t}");
                    let seen = retry_hash(&t).expect("the refusal names the hash");
                    barrier.wait();
                    let (t, err) = rpc.call(
                        "write",
                        json!({"bundle": "race", "path": path, "content": content,
                            "replaces": seen}),
                    );
                    log.push((round, seen, !err, t));
                    barrier.wait();
                }
                (log, rpc)
            })
        })
        .collect();
    let (logs, mut rpcs): (Vec<Vec<Entry>>, Vec<Rpc>) = workers
        .into_iter()
        .map(|h| h.join().expect("worker"))
        .unzip();
    let elapsed = started.elapsed();
    let mut wins = 0;
    let mut last_winner = vec![None; docs];
    for round in 0..rounds {
        let entries: Vec<&Entry> = logs.iter().map(|l| &l[round]).collect();
        assert!(
            entries.iter().all(|e| e.1 == entries[0].1),
            "round {round}: every writer read the same hash"
        );
        let won: Vec<usize> = (0..writers).filter(|&w| entries[w].2).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: exactly one winner: {entries:?}"
        );
        for e in entries.iter().filter(|e| !e.2) {
            assert!(
                e.3.starts_with("concept changed since it was read"),
                "{}",
                e.3
            );
        }
        last_winner[round % docs] = Some(won[0]);
        wins += 1;
    }
    // No update is lost: every win is one revision on top of the creating ones, and each
    // document holds its last round's winner.
    let conn = Options::default()
        .read_only(true)
        .open_root(data, "race")
        .expect("open");
    let mut revisions = 0;
    let mut before = None;
    loop {
        let page = conn
            .history(langonrock_core::engine::HistoryRequest {
                before: before.clone(),
                limit: Some(100),
            })
            .expect("history");
        revisions += page.revisions.len();
        match page.next {
            Some(n) => before = Some(n),
            None => break,
        }
    }
    assert_eq!(revisions, wins + docs, "one revision per win");
    for (d, w) in last_winner.iter().enumerate() {
        let Some(w) = w else { continue };
        let last = (0..rounds).filter(|r| r % docs == d).max().unwrap();
        let text = conn.read_source("race", &path(d)).unwrap().unwrap().content;
        assert_eq!(
            text,
            format!("---\ntype: note\n---\nwriter {w} round {last}\n")
        );
    }
    assert!(conn.verify().expect("verify").ok);
    // Every server converges to the same snapshot.
    let want = conn.read().unwrap().snapshot_id();
    for rpc in &mut rpcs {
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let (t, _) = rpc.call("snapshot", json!({}));
            if t.contains(&want) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "a server never reached {want}: {t}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for rpc in rpcs {
        rpc.kill();
    }
    println!(
        "racing writers ({data}): {writers} servers, {rounds} rounds on {docs} document(s), {} writes, {wins} wins, in {:.1} s; every server on {want}",
        rounds * writers,
        elapsed.as_secs_f64()
    );
}
