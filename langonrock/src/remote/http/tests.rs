//! The transport against peers that misbehave: each test runs a real listener (a unix
//! socket or a loopback port) that answers with fixed bytes, and checks that the client
//! gives one clear `STORE` error within its limits, never a hang or a panic.

use super::*;
use langonrock_core::dsn::{parse_dsn, Dsn};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::time::Instant;

fn short() -> Limits {
    Limits {
        connect: Duration::from_millis(500),
        answer: Duration::from_millis(300),
        stall: Duration::from_millis(300),
        max_body: 1024,
    }
}

fn remote_dsn(s: &str) -> RemoteDsn {
    match parse_dsn(s, false).unwrap() {
        Dsn::Remote(r) => r,
        d => panic!("{d:?}"),
    }
}

/// Reads one request's head (up to the blank line) and returns it.
fn read_head(s: &mut impl Read) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A loopback server that runs `script` on each of its first `n` connections.
fn tcp_peer(
    n: usize,
    script: impl Fn(&mut std::net::TcpStream) + Send + Sync + 'static,
) -> (RemoteDsn, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let script = Arc::new(script);
    let t = std::thread::spawn(move || {
        let mut each = Vec::new();
        for _ in 0..n {
            let Ok((mut s, _)) = l.accept() else { break };
            let script = script.clone();
            each.push(std::thread::spawn(move || script(&mut s)));
        }
        for t in each {
            let _ = t.join();
        }
    });
    (
        remote_dsn(&format!("okf+http://127.0.0.1:{port}?tenant=t&token=tok")),
        t,
    )
}

fn get(t: &Transport) -> Result<Answer, Error> {
    t.send(wire::snapshot("/v1/t"))
}

fn store_message(r: Result<Answer, Error>) -> String {
    match r {
        Err(e) => {
            assert_eq!(e.code(), "STORE", "{e:?}");
            e.message()
        }
        Ok(a) => panic!("answered {a:?}"),
    }
}

#[test]
fn a_good_answer_over_a_socket_sends_host_and_token() {
    let dir = std::env::temp_dir().join(format!("lr-remote-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("a.sock");
    let _ = std::fs::remove_file(&sock);
    let l = UnixListener::bind(&sock).unwrap();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let head = read_head(&mut s);
        s.write_all(b"HTTP/1.1 200 OK\r\nETag: \"x\"\r\nContent-Length: 2\r\n\r\nok")
            .unwrap();
        head
    });
    let dsn = remote_dsn(&format!(
        "okf+unix://{}?tenant=t&token=s3cret",
        sock.display()
    ));
    let t = Transport::new(&dsn, short()).unwrap();
    let a = get(&t).unwrap();
    assert_eq!(
        a,
        Answer {
            status: 200,
            etag: Some("\"x\"".into()),
            body: b"ok".to_vec()
        }
    );
    let head = peer.join().unwrap().to_ascii_lowercase();
    assert!(
        head.starts_with("get /v1/t/snapshot http/1.1\r\n"),
        "{head}"
    );
    assert!(head.contains("host: langonrock\r\n"), "{head}");
    assert!(head.contains("authorization: bearer s3cret\r\n"), "{head}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_socket_is_named() {
    let dsn = remote_dsn("okf+unix:///nonexistent/langonrock.sock?tenant=t");
    let t = Transport::new(&dsn, short()).unwrap();
    let m = store_message(get(&t));
    assert!(
        m.starts_with("cannot reach the langonrock server at /nonexistent/langonrock.sock: "),
        "{m}"
    );
}

#[test]
fn garbage_is_not_http() {
    let (dsn, peer) = tcp_peer(1, |s| {
        read_head(s);
        let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2\r\n\r\n");
    });
    let t = Transport::new(&dsn, short()).unwrap();
    let m = store_message(get(&t));
    assert!(m.contains("sent an answer that is not HTTP"), "{m}");
    assert!(!m.contains("tok"), "the token must not show: {m}");
    peer.join().unwrap();
}

#[test]
fn closing_mid_body_is_an_error_and_a_write_says_its_outcome_is_unknown() {
    let (dsn, peer) = tcp_peer(2, |s| {
        read_head(s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"snap");
    });
    let t = Transport::new(&dsn, short()).unwrap();
    let m = store_message(get(&t));
    assert!(m.contains("broke off mid-answer ("), "{m}");
    let m = store_message(t.send(wire::write("/v1/t", "b", "x.md", "hi", None)));
    assert!(
        m.ends_with("; the change may or may not have been made: read before retrying"),
        "{m}"
    );
    peer.join().unwrap();
}

#[test]
fn silence_and_stalls_are_bounded() {
    let (dsn, peer) = tcp_peer(2, |s| {
        let head = read_head(s);
        if head.contains("/manifest") {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab");
        }
        std::thread::sleep(Duration::from_secs(4));
    });
    let t = Transport::new(&dsn, short()).unwrap();
    let start = Instant::now();
    let m = store_message(get(&t));
    assert!(m.ends_with("did not answer within 0.3 s"), "{m}");
    let m = store_message(t.send(wire::manifest("/v1/t", None, None)));
    assert!(m.ends_with("stalled mid-answer for 0.3 s"), "{m}");
    // Both gave up long before the peer would have answered (4 s).
    assert!(start.elapsed() < Duration::from_secs(3));
    drop(t);
    peer.join().unwrap();
}

#[test]
fn an_answer_over_the_cap_is_refused() {
    let (dsn, peer) = tcp_peer(1, |s| {
        read_head(s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n");
        let _ = s.write_all(&[b'x'; 4096]);
    });
    let t = Transport::new(
        &dsn,
        Limits {
            max_body: 2 << 20,
            ..short()
        },
    )
    .unwrap();
    assert_eq!(get(&t).unwrap().body.len(), 4096);
    peer.join().unwrap();
    let (dsn, peer) = tcp_peer(1, |s| {
        read_head(s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n");
        let _ = s.write_all(&[b'x'; 4096]);
    });
    let t = Transport::new(
        &dsn,
        Limits {
            max_body: 1024,
            ..short()
        },
    )
    .unwrap();
    let m = store_message(get(&t));
    assert!(m.ends_with("answered more than 1024 bytes"), "{m}");
    peer.join().unwrap();
}

#[test]
fn a_kept_alive_connection_the_server_closed_is_replaced() {
    // The first connection answers once and closes without saying so; the client finds it
    // closed when it reuses it and sends on a new one.
    let (dsn, peer) = tcp_peer(2, |s| {
        read_head(s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        std::thread::sleep(Duration::from_millis(50));
    });
    let t = Transport::new(&dsn, short()).unwrap();
    assert_eq!(get(&t).unwrap().body, b"ok");
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(get(&t).unwrap().body, b"ok");
    peer.join().unwrap();
}

#[test]
fn nothing_listening_on_a_port() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dsn = remote_dsn(&format!("okf+http://127.0.0.1:{port}?tenant=t"));
    let t = Transport::new(&dsn, short()).unwrap();
    let m = store_message(get(&t));
    assert!(
        m.starts_with(&format!(
            "cannot reach the langonrock server at http://127.0.0.1:{port}: "
        )),
        "{m}"
    );
}

#[test]
fn calls_from_many_threads_and_from_inside_a_runtime() {
    let (dsn, peer) = tcp_peer(8, |s| loop {
        let head = read_head(s);
        if head.is_empty() {
            return;
        }
        if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            .is_err()
        {
            return;
        }
    });
    let t = Arc::new(Transport::new(&dsn, short()).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let t = t.clone();
            std::thread::spawn(move || {
                for _ in 0..5 {
                    assert_eq!(get(&t).unwrap().body, b"ok");
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    // A caller inside another tokio runtime (the MCP server's) does not trip tokio.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let t2 = t.clone();
    rt.block_on(async move { assert_eq!(get(&t2).unwrap().body, b"ok") });
    drop(t);
    drop(peer);
}
