//! `serve --store <postgres dsn>` (docs/postgres.md): `serve` replicas sharing one real
//! PostgreSQL database (the test server of scripts/postgres.sh), each on its own unix
//! socket, driven over HTTP.
//!
//! - `replicas_race_on_one_database`: three replicas, one client on each, write the same
//!   documents with the same `If-Match` hash round after round: exactly one winner per
//!   round, no lost update, every replica converging to one snapshot.
//!   `LANGONROCK_PG_RACE_WRITES` sets the number of writes (default 300; 10,000 for the
//!   full run).
//! - `a_write_through_one_replica_is_searchable_through_another`: the delay, following the
//!   change feed and polling alone (`LANGONROCK_POSTGRES_LISTEN=0`).
//! - `sigkill_a_replica_mid_commit`: SIGKILL of one replica while clients commit through
//!   all three: every acknowledged commit is there, nothing unattempted is, `verify` is
//!   clean. `LANGONROCK_CRASH_TRIALS` sets the number of trials (default 20).
//! - `a_database_restart_while_replicas_serve`: `STORE` errors naming the database during
//!   the outage, then the same processes serve again and nothing is lost.
//! - `a_network_cut_mid_commit_is_indeterminate`: a replica whose database connection is
//!   cut (a proxy in between) right after its commit statement went out, or instead of
//!   sending it, answers `INDETERMINATE_COMMIT` (never a refusal with a hash to retry
//!   with), then serves whatever the database holds (the new text when the statement
//!   reached it, the old one when not) and commits again, without a restart.
//! - `store_flag_refusals`: the flag's bad input.

use crate::crash::{stored, write_loop};
use crate::util::{doc, raw, run, sha, temp, RemovedAtEnd, Server};
use langonrock_postgres::test_server::{server, Cut, Proxy, Server as Database};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// The DSN of a fresh schema on `db` (no tenant: a replica serves every tenant).
fn schema_dsn(db: &Database, tag: &str) -> String {
    db.dsn_with(&format!("schema=srv_{tag}_{}", std::process::id()))
}

/// `n` replicas of `dsn`, each with its own data directory (tokens, socket) under `dir`.
fn replicas(dir: &Path, dsn: &str, n: usize, env: &[(&str, &str)]) -> Vec<Server> {
    (0..n)
        .map(|i| Server::start(&dir.join(format!("r{i}")), &["--store", dsn], env))
        .collect()
}

fn sock(srv: &Server) -> PathBuf {
    match &srv.addr {
        crate::util::Addr::Unix(p) => p.clone(),
        a => panic!("not a socket: {a:?}"),
    }
}

/// PUT of a document with a precondition (`None`: create).
fn put(sock: &Path, path: &str, text: &str, replaces: Option<&str>) -> (u16, String) {
    let quoted = replaces.map(|h| format!("\"{h}\""));
    let pre = match &quoted {
        Some(q) => ("If-Match", q.as_str()),
        None => ("If-None-Match", "*"),
    };
    raw(
        sock,
        "PUT",
        &format!("/v1/kb/source/{path}"),
        &[pre, ("Content-Type", "text/markdown")],
        text.as_bytes(),
    )
    .expect("the replica answers")
}

fn snapshot_of(sock: &Path, tenant: &str) -> String {
    let (status, body) =
        raw(sock, "GET", &format!("/v1/{tenant}/snapshot"), &[], b"").expect("snapshot");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["snapshot"].as_str().unwrap().to_string()
}

/// Waits until every replica serves the same snapshot of `tenant` (a replica sees another's
/// commit within a second, docs/postgres.md); returns it.
fn converged(socks: &[PathBuf], tenant: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let snaps: Vec<String> = socks.iter().map(|s| snapshot_of(s, tenant)).collect();
        if snaps.iter().all(|s| *s == snaps[0]) {
            return snaps[0].clone();
        }
        assert!(
            Instant::now() < deadline,
            "the replicas never converged: {snaps:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn note(body: &str) -> String {
    doc("note", body)
}

#[test]
fn replicas_race_on_one_database() {
    let writes = env_number("LANGONROCK_PG_RACE_WRITES", 300);
    let (writers, docs) = (3, 4);
    let rounds = writes.div_ceil(writers);
    let dir = temp("pg-race");
    let _removed = RemovedAtEnd(dir.clone());
    let dsn = schema_dsn(server(), "race");
    let srvs = replicas(&dir, &dsn, writers, &[]);
    let socks: Vec<PathBuf> = srvs.iter().map(sock).collect();
    let path = |d: usize| format!("race/doc{d}.md");
    for d in 0..docs {
        let (status, body) = put(&socks[d % writers], &path(d), &note("Start."), None);
        assert_eq!(status, 200, "{body}");
    }
    // The hash each document holds after the last round on it, as its winner learned it.
    let hashes = Arc::new(Mutex::new(vec![sha(&note("Start.")); docs]));
    let barrier = Arc::new(Barrier::new(writers));
    let started = Instant::now();
    // Each round, every client writes the round's document through its own replica with
    // the same `If-Match`: the hash the last round on that document left.
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (barrier, hashes, sock) = (barrier.clone(), hashes.clone(), socks[w].clone());
            std::thread::spawn(move || {
                let mut log = Vec::with_capacity(rounds);
                for round in 0..rounds {
                    let d = round % docs;
                    let mine = note(&format!("Writer {w} in round {round}."));
                    let seen = hashes.lock().unwrap()[d].clone();
                    barrier.wait();
                    let (status, body) = put(&sock, &format!("race/doc{d}.md"), &mine, Some(&seen));
                    if status == 200 {
                        hashes.lock().unwrap()[d] = sha(&mine);
                    }
                    log.push((status, body));
                    barrier.wait();
                }
                log
            })
        })
        .collect();
    let logs: Vec<Vec<(u16, String)>> = threads
        .into_iter()
        .map(|t| t.join().expect("a client failed"))
        .collect();
    let elapsed = started.elapsed();
    let mut last_winner = vec![None; docs];
    for round in 0..rounds {
        let won: Vec<usize> = (0..writers).filter(|&w| logs[w][round].0 == 200).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: exactly one winner: {:?}",
            (0..writers).map(|w| &logs[w][round]).collect::<Vec<_>>()
        );
        for w in (0..writers).filter(|w| *w != won[0]) {
            let (status, body) = &logs[w][round];
            assert_eq!(*status, 412, "round {round}, writer {w}: {body}");
            assert!(body.contains("\"reason\":\"changed\""), "{body}");
        }
        last_winner[round % docs] = Some((won[0], round));
    }
    // No update is lost: one revision per win on top of the creating ones, each document
    // holding its last winner's text, through every replica.
    let snapshot = converged(&socks, "kb");
    for (d, last) in last_winner.iter().enumerate() {
        let Some((w, round)) = last else { continue };
        for s in &socks {
            let (status, body) =
                raw(s, "GET", &format!("/v1/kb/source/{}", path(d)), &[], b"").unwrap();
            assert_eq!(status, 200);
            assert_eq!(body, note(&format!("Writer {w} in round {round}.")));
        }
    }
    let revisions = count_revisions(&dir, &format!("{dsn}&tenant=kb"));
    assert_eq!(revisions, rounds + docs, "one revision per round's winner");
    verify(&dir, &format!("{dsn}&tenant=kb"));
    println!(
        "postgres replicas: {} racing writes ({rounds} rounds x {writers} replicas, {docs} documents) in {:.1} s, one winner per round, {revisions} revisions, every replica on snapshot {}",
        rounds * writers,
        elapsed.as_secs_f64(),
        &snapshot[..12]
    );
}

/// The number of revisions in the tenant's history (paged through the CLI).
fn count_revisions(dir: &Path, dsn: &str) -> usize {
    let mut n = 0;
    let mut before: Option<String> = None;
    loop {
        let mut args = vec!["history", "--data", dsn, "--limit", "100"];
        if let Some(b) = &before {
            args.extend(["--before", b]);
        }
        let (code, out, err) = run(dir, &args, b"");
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("history json");
        n += v["revisions"].as_array().unwrap().len();
        match v["next"].as_str() {
            Some(next) => before = Some(next.to_string()),
            None => return n,
        }
    }
}

/// `langonrock verify` on the tenant of `dsn`: clean.
fn verify(dir: &Path, dsn: &str) {
    let (code, out, err) = run(dir, &["verify", "--data", dsn], b"");
    assert_eq!(code, 0, "verify failed: {out}{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("verify json");
    assert_eq!(v["ok"], true, "{out}");
}

/// A word the tokenizer keeps whole and no other sample uses.
fn marker(n: usize) -> String {
    let mut s = String::from("probe");
    let mut n = n + 1;
    while n > 0 {
        s.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    s
}

/// Writes through replica `i % 3`, then searches through the next one until the new word
/// is found: the delays, sorted.
fn visibility(socks: &[PathBuf], samples: usize, offset: usize) -> Vec<Duration> {
    let mut hash: Option<String> = None;
    let mut delays = Vec::with_capacity(samples);
    for i in 0..samples {
        let (from, to) = (&socks[i % socks.len()], &socks[(i + 1) % socks.len()]);
        let word = marker(offset + i);
        let text = note(&format!("Visible as {word}."));
        let (status, body) = put(from, "vis/probe.md", &text, hash.as_deref());
        assert_eq!(status, 200, "{body}");
        hash = Some(sha(&text));
        let acked = Instant::now();
        let query = format!("{{\"q\": \"{word}\"}}");
        loop {
            let (status, body) = raw(
                to,
                "POST",
                "/v1/kb/search",
                &[("Content-Type", "application/json")],
                query.as_bytes(),
            )
            .unwrap();
            assert_eq!(status, 200, "{body}");
            if body.contains("\nprobe\tvis\t") {
                delays.push(acked.elapsed());
                break;
            }
            assert!(
                acked.elapsed() < Duration::from_secs(20),
                "sample {i}: never found {word}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    delays.sort();
    delays
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

#[test]
fn a_write_through_one_replica_is_searchable_through_another() {
    let samples = env_number("LANGONROCK_PG_VISIBILITY_SAMPLES", 30);
    let dir = temp("pg-vis");
    let _removed = RemovedAtEnd(dir.clone());
    let mut report = Vec::new();
    for (mode, env, samples) in [
        ("notifications", &[][..], samples),
        (
            "polling alone",
            &[("LANGONROCK_POSTGRES_LISTEN", "0")][..],
            samples.div_ceil(3),
        ),
    ] {
        let tag = mode.replace(' ', "_");
        let dsn = schema_dsn(server(), &format!("vis_{tag}"));
        let srvs = replicas(&dir.join(&tag), &dsn, 3, env);
        let socks: Vec<PathBuf> = srvs.iter().map(sock).collect();
        // Every replica has the tenant open (and its listener connected) before timing.
        for s in &socks {
            let _ = snapshot_of(s, "kb");
        }
        std::thread::sleep(Duration::from_millis(300));
        let d = visibility(&socks, samples, report.len() * 1_000);
        // Every commit was found (`visibility` gives up after 20 s). How soon (docs/postgres.md:
        // within a second) is printed here and measured by bench/, not asserted: a loaded
        // machine would fail a timed assertion.
        let max = *d.last().unwrap();
        report.push(format!(
            "{mode}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms over {samples} samples",
            pct(&d, 50).as_secs_f64() * 1e3,
            pct(&d, 99).as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3
        ));
        drop(srvs);
    }
    println!(
        "write through one replica, found by search through another: {}",
        report.join("; ")
    );
}

#[test]
fn sigkill_a_replica_mid_commit() {
    let trials = env_number("LANGONROCK_CRASH_TRIALS", 20);
    let dir = temp("pg-crash");
    let _removed = RemovedAtEnd(dir.clone());
    let dsn = schema_dsn(server(), "crash");
    let tenant_dsn = format!("{dsn}&tenant=crash");
    let n = 3;
    let mut srvs: Vec<Option<Server>> =
        replicas(&dir, &dsn, n, &[]).into_iter().map(Some).collect();
    let socks: Vec<PathBuf> = srvs.iter().map(|s| sock(s.as_ref().unwrap())).collect();
    let mut seed: u64 = 0x0dd_ba11_cafe_f00d;
    let mut below = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let mut acked = vec![0u64; n];
    let (mut landed, mut lost_in_flight) = (0, 0);
    let started = Instant::now();
    for trial in 0..trials {
        let victim = below(n as u64) as usize;
        let stop = Arc::new(AtomicBool::new(false));
        let marks: Vec<Arc<AtomicU64>> =
            acked.iter().map(|g| Arc::new(AtomicU64::new(*g))).collect();
        // Client w writes its own document through replica w.
        let threads: Vec<_> = (0..n)
            .map(|w| {
                let (sock, stop, mark, start) =
                    (socks[w].clone(), stop.clone(), marks[w].clone(), acked[w]);
                std::thread::spawn(move || write_loop(&sock, "crash", w, start, &mark, &stop))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(30 + below(120)));
        srvs[victim].take().unwrap().kill();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().expect("a client failed");
        }
        srvs[victim] = Some(Server::start(
            &dir.join(format!("r{victim}")),
            &["--store", &dsn],
            &[],
        ));
        // Read through the restarted replica, which opens the tenant afresh.
        for w in 0..n {
            let before = marks[w].load(Ordering::SeqCst);
            let g = stored(&socks[victim], "crash", w);
            assert!(g >= before, "trial {trial}: w{w} lost an acknowledged commit: stored {g}, acknowledged {before}");
            if w == victim {
                assert!(g <= before + 1, "trial {trial}: w{w} holds generation {g}, never attempted (acknowledged {before})");
                if g == before + 1 {
                    landed += 1;
                } else {
                    lost_in_flight += 1;
                }
            } else {
                assert_eq!(
                    g, before,
                    "trial {trial}: w{w}'s replica was not killed: every write was answered"
                );
            }
            acked[w] = g;
        }
        if trial % 25 == 24 || trial + 1 == trials {
            verify(&dir, &tenant_dsn);
        }
    }
    println!(
        "postgres replicas: {trials} SIGKILL trials in {:.1} s, acknowledged generations {acked:?}; the killed replica's last write had landed in {landed} trials and not in {lost_in_flight}; verify clean",
        started.elapsed().as_secs_f64()
    );
    assert!(
        acked.iter().all(|g| *g > 0),
        "the clients never committed: {acked:?}"
    );
}

#[test]
fn a_database_restart_while_replicas_serve() {
    let db = Database::start_private("serve-restart");
    let dir = temp("pg-restart");
    let _removed = RemovedAtEnd(dir.clone());
    let dsn = schema_dsn(&db, "restart");
    let srvs = replicas(&dir, &dsn, 2, &[]);
    let socks: Vec<PathBuf> = srvs.iter().map(sock).collect();
    let kept = note("Kept.");
    assert_eq!(put(&socks[0], "notes/a.md", &kept, None).0, 200);
    let _ = snapshot_of(&socks[1], "kb");
    db.ctl("down");
    let started = Instant::now();
    let (status, body) = put(&socks[1], "notes/a.md", &note("During."), Some(&sha(&kept)));
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("\"code\":\"STORE\""), "{body}");
    assert!(
        body.contains("PostgreSQL at 127.0.0.1:"),
        "the error names the database: {body}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(600)); // past the head poll: reads need the store
    let (status, body) = raw(&socks[0], "GET", "/v1/kb/snapshot", &[], b"").unwrap();
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("\"code\":\"STORE\""), "{body}");
    db.ctl("up");
    // The same processes, without a restart: nothing lost, writes go on.
    let deadline = Instant::now() + Duration::from_secs(10);
    let after = note("After.");
    loop {
        let (status, body) = put(&socks[1], "notes/a.md", &after, Some(&sha(&kept)));
        if status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the replica never recovered: {status} {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    converged(&socks, "kb");
    for s in &socks {
        let (status, body) = raw(s, "GET", "/v1/kb/source/notes/a.md", &[], b"").unwrap();
        assert_eq!((status, body.as_str()), (200, after.as_str()));
    }
    verify(&dir, &format!("{dsn}&tenant=kb"));
    drop(srvs);
    db.ctl("down");
    let _ = std::fs::remove_dir_all(&db.dir);
}

/// GET of a document's text through a replica.
fn source(sock: &Path, path: &str) -> (u16, String) {
    raw(sock, "GET", &format!("/v1/kb/source/{path}"), &[], b"").expect("the replica answers")
}

/// Waits until the replica serves `text` at `path` (within the second of docs/postgres.md,
/// plus room for a busy machine).
fn serves(sock: &Path, path: &str, text: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let got = source(sock, path);
        if got == (200, text.to_string()) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: serves {got:?}, not {text:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_network_cut_mid_commit_is_indeterminate() {
    let db = server();
    let proxy = Proxy::start(db);
    let schema = format!("schema=srv_cut_{}", std::process::id());
    let dir = temp("pg-cut");
    let _removed = RemovedAtEnd(dir.clone());
    // One replica reaches the database through the proxy, the other directly.
    let cut = Server::start(
        &dir.join("cut"),
        &["--store", &proxy.dsn_with(db, &schema)],
        &[],
    );
    let other = Server::start(
        &dir.join("direct"),
        &["--store", &db.dsn_with(&schema)],
        &[],
    );
    let (a, b) = (sock(&cut), sock(&other));
    let path = "cut/a.md";
    let mut current = note("First.");
    let (status, body) = put(&a, path, &current, None);
    assert_eq!(status, 200, "{body}");
    for (n, (mode, lands)) in [(Cut::AfterCommitSent, true), (Cut::BeforeCommitSent, false)]
        .into_iter()
        .enumerate()
    {
        let next = note(&format!("Edit {n}."));
        proxy.arm(mode);
        let (status, body) = put(&a, path, &next, Some(&sha(&current)));
        assert_eq!(status, 503, "{mode:?}: {body}");
        assert_eq!(
            proxy.cuts(),
            n as u64 + 1,
            "{mode:?}: the proxy cut the commit"
        );
        let v: serde_json::Value = serde_json::from_str(&body).expect("a json error");
        assert_eq!(v["code"], "INDETERMINATE_COMMIT", "{body}");
        let revision = v["revision"].as_str().expect("the revision to inspect");
        assert_eq!(
            v["message"],
            format!("commit outcome is indeterminate; inspect revision {revision} before retrying")
        );
        assert!(
            !body.contains("retry with") && !body.contains("\"reason\""),
            "{body}"
        );
        // The database holds the new text when the statement reached it, the old when not;
        // both replicas serve that, the cut one without a restart.
        let now = if lands { next } else { current.clone() };
        serves(&b, path, &now, &format!("{mode:?}: the other replica"));
        serves(&a, path, &now, &format!("{mode:?}: the cut replica"));
        current = now;
    }
    // The cut replica commits again on a fresh connection.
    let after = note("After the cuts.");
    let (status, body) = put(&a, path, &after, Some(&sha(&current)));
    assert_eq!(status, 200, "{body}");
    serves(&b, path, &after, "the other replica, after");
    assert_eq!(proxy.cuts(), 2);
    let dsn = db.dsn_with(&format!("{schema}&tenant=kb"));
    // Three commits landed: the first, the one cut after it was sent, the last.
    assert_eq!(count_revisions(&dir, &dsn), 3);
    verify(&dir, &dsn);
}

#[test]
fn store_flag_refusals() {
    let dir = temp("pg-flags");
    let _removed = RemovedAtEnd(dir.clone());
    let base = server().dsn_with("schema=srv_flags");
    let refused = |args: &[&str]| {
        let (code, _, err) = run(&dir, args, b"");
        assert_eq!(code, 1, "{args:?}: {err}");
        err
    };
    let err = refused(&["serve", "--store", &format!("{base}&tenant=kb")]);
    assert!(err.contains("serve --store serves every tenant of the database: drop ?tenant= from postgres://langonrock:***@"), "{err}");
    let err = refused(&["serve", "--store", "/var/lib/x"]);
    assert!(err.contains("--store takes a postgres:// dsn, got \"/var/lib/x\"; a files data root is --data <dir>"), "{err}");
    let err = refused(&["serve", "--data", &base]);
    assert!(err.contains("serve needs a data directory (it keeps tokens.json there), not the database postgres://langonrock:***@"), "{err}");
    assert!(
        err.contains(": serve the database's tenants with --store <dsn>"),
        "{err}"
    );
    // A wrong password is refused before the server listens, with the password hidden.
    let at = base.find('@').unwrap();
    let wrong = format!("postgres://langonrock:wrongpassword{}", &base[at..]);
    match Server::try_start(&dir.join("d"), &["--store", &wrong], &[]) {
        Ok(_) => panic!("serve started with a wrong password"),
        Err((code, err)) => {
            assert_eq!(code, 1, "{err}");
            assert!(err.contains("password authentication failed for user \"langonrock\": check the user and password in the dsn"), "{err}");
            assert!(!err.contains("wrongpassword"), "{err}");
        }
    }
    assert!(!dir.join("d").join("langonrock.sock").exists());
}
