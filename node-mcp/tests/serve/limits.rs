//! The serving limits: the 48 MiB body cap (with the body drained), the 16 KiB header cap,
//! a body that stalls, headers that never finish, and 10,000 idle connections.

use crate::util::{doc, temp, token, tree, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads what the server sends until it closes the connection (or `limit` passes).
fn read_all(s: &mut TcpStream, limit: Duration) -> (String, bool) {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

#[test]
fn body_and_header_caps() {
    let dir = temp("caps");
    let data = dir.join("data");
    let w = token(&data, "acme", true);
    let srv = Server::start(&data, &["--port", "0"], &[]);
    let before = tree(&data);
    let big = vec![b'a'; 49 * 1024 * 1024];
    let too_large = "request body exceeds 48 MiB";
    // With a length: refused after the body is drained, so curl reads the reply.
    srv.req("PUT", "/v1/source/notes/big.md")
        .token(&w)
        .header("If-None-Match", "*")
        .header("Content-Type", "text/markdown")
        .body(big.clone())
        .send()
        .error(413, "INVALID", too_large);
    // Chunked, so the length is only known while reading.
    srv.req("POST", "/v1/transact")
        .token(&w)
        .header("Content-Type", "application/json")
        .header("Transfer-Encoding", "chunked")
        .body(big)
        .send()
        .error(413, "INVALID", too_large);
    // A body refused for another reason is drained too.
    srv.req("POST", "/v1/transact")
        .token("wrong")
        .header("Content-Type", "application/json")
        .body(vec![b' '; 8 * 1024 * 1024])
        .send()
        .error(401, "UNAUTHORIZED", "invalid or missing bearer token");
    // A header over 16 KiB.
    let long = "x".repeat(17 * 1024);
    srv.req("GET", "/v1/snapshot")
        .token(&w)
        .header("X-Long", &long)
        .send()
        .error(431, "INVALID", "request headers exceed 16 KiB");
    // Far over it, hyper refuses before the request exists.
    let r = srv
        .req("GET", "/v1/snapshot")
        .token(&w)
        .header("X-Long", &"y".repeat(100 * 1024))
        .send();
    assert_eq!(r.status, 431);
    assert_eq!(tree(&data), before, "a refused body wrote something");
    // The 16 MiB content limit counts decoded text: a 12 MiB document of quotes is 24 MiB
    // of JSON, under the cap.
    let quotes = format!("---\ntype: t\n---\n{}\n", "\"".repeat(12 * 1024 * 1024));
    let r = srv
        .req("POST", "/v1/transact")
        .token(&w)
        .json(&serde_json::json!({"changes": [{"operation": "write", "bundle": "notes", "path": "q.md", "content": quotes}]}))
        .send();
    assert_eq!(r.status, 200, "{}", &r.body[..r.body.len().min(300)]);
    assert_eq!(
        srv.req("GET", "/v1/snapshot").token(&w).send().json()["concepts"],
        1
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn slow_clients_are_dropped() {
    let dir = temp("slow");
    let data = dir.join("data");
    let w = token(&data, "acme", true);
    let env = [
        ("LANGONROCK_SERVE_BODY_TIMEOUT_MS", "400"),
        ("LANGONROCK_SERVE_HEADER_TIMEOUT_MS", "400"),
    ];
    let srv = Server::start(&data, &["--port", "0"], &env);
    // A body that never finishes: answered 408 and closed.
    let mut s = TcpStream::connect(srv.host_port()).unwrap();
    write!(s, "PUT /v1/source/notes/slow.md HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {w}\r\nIf-None-Match: *\r\nContent-Type: text/markdown\r\nContent-Length: 1000\r\n\r\n---\ntype:").unwrap();
    let started = Instant::now();
    // Meanwhile the server answers others.
    assert_eq!(srv.req("GET", "/v1/snapshot").token(&w).send().status, 200);
    let (reply, closed) = read_all(&mut s, Duration::from_secs(20));
    assert!(closed, "the stalled connection was not closed: {reply:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(reply.starts_with("HTTP/1.1 408 "), "{reply}");
    assert!(reply.ends_with("{\"code\":\"INVALID\",\"message\":\"request body stalled: no data arrived for the body timeout\"}"), "{reply}");
    // Headers that never finish: the connection is dropped.
    let mut s = TcpStream::connect(srv.host_port()).unwrap();
    s.write_all(b"GET /v1/snapshot HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let (_, closed) = read_all(&mut s, Duration::from_secs(20));
    assert!(closed, "a connection without complete headers stayed open");
    // An idle connection is dropped the same way.
    let mut s = TcpStream::connect(srv.host_port()).unwrap();
    let (_, closed) = read_all(&mut s, Duration::from_secs(20));
    assert!(closed);
    assert_eq!(
        srv.req("GET", "/v1/source/notes/slow.md")
            .token(&w)
            .send()
            .status,
        404
    );
    let log = srv.stop();
    assert!(log.contains("PUT /v1/source/notes/slow.md 408 "), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Raises this process's open-file limit to the hard limit; returns it.
fn raise_open_files() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut l = getrlimit(Resource::Nofile);
    if l.current != l.maximum {
        l.current = l.maximum;
        let _ = setrlimit(Resource::Nofile, l);
    }
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

#[test]
fn idle_connections_are_bounded() {
    let dir = temp("idle");
    let data = dir.join("data");
    let w = token(&data, "acme", true);
    // 10,000 connections and the default cap of 4,096, where the descriptors allow it.
    let limit = raise_open_files();
    let (n, cap) = if limit >= 10_600 {
        (10_000, 4_096)
    } else {
        let n = (limit as usize).saturating_sub(300);
        (n, n / 3)
    };
    println!("{n} idle connections against a cap of {cap} (open-file limit {limit})");
    let cap_s = cap.to_string();
    let srv = Server::start(
        &data,
        &["--port", "0"],
        &[("LANGONROCK_SERVE_MAX_CONNECTIONS", &cap_s)],
    );
    let addr = srv.host_port().to_string();
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        conns.push(TcpStream::connect(&addr).expect("connect"));
    }
    // Every connection is either held by the server (no bytes) or refused with a 503 and
    // closed. The server works through the queue of new connections at its own pace.
    let mut refused_at = vec![false; n];
    let mut refused = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    for c in &conns {
        c.set_nonblocking(true).unwrap();
    }
    while refused < n - cap && Instant::now() < deadline {
        for (i, c) in conns.iter_mut().enumerate() {
            if refused_at[i] {
                continue;
            }
            let mut buf = [0u8; 512];
            if let Ok(k) = c.read(&mut buf) {
                if k > 0 {
                    let text = String::from_utf8_lossy(&buf[..k]);
                    assert!(text.starts_with("HTTP/1.1 503 "), "{text}");
                    assert!(text.ends_with("{\"code\":\"UNAVAILABLE\",\"message\":\"too many open connections: try again later\"}"), "{text}");
                    refused_at[i] = true;
                    refused += 1;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let held = n - refused;
    println!("held {held}, refused {refused}");
    assert!(held <= cap, "{held} connections held past the cap of {cap}");
    assert!(refused >= n - cap - 16, "only {refused} refused");
    let fds = open_fds(srv.pid());
    assert!(fds <= cap + 64, "the server holds {fds} descriptors");
    // While the cap is reached a new client is refused cleanly, and the server stays up.
    let r = srv.req("GET", "/v1/snapshot").token(&w).send();
    assert_eq!(r.status, 503);
    drop(conns);
    std::thread::sleep(Duration::from_millis(300));
    let mut srv = srv;
    assert!(srv.alive());
    assert_eq!(srv.req("GET", "/v1/snapshot").token(&w).send().status, 200);
    assert_eq!(
        srv.req("PUT", "/v1/source/notes/a.md")
            .token(&w)
            .header("If-None-Match", "*")
            .header("Content-Type", "text/markdown")
            .body(doc("t", "A."))
            .send()
            .status,
        200
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}
