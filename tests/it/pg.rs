//! A real PostgreSQL server for the tests (`langonrock_postgres::test_server`), fresh
//! schemas on it, and a proxy that cuts connections.

use langonrock_core::dsn::{parse_postgres_dsn, PostgresDsn};
use langonrock_postgres::{Options, PgStore};
use std::sync::atomic::{AtomicU64, Ordering};

pub use langonrock_postgres::test_server::{server, Server};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A schema name no other case uses.
pub fn fresh_schema(tag: &str) -> String {
    format!(
        "t_{tag}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The parsed DSN of `schema` on `server`, with an optional tenant.
pub fn dsn(server: &Server, schema: &str, tenant: Option<&str>) -> PostgresDsn {
    let mut params = format!("schema={schema}");
    if let Some(t) = tenant {
        params.push_str(&format!("&tenant={t}"));
    }
    parse_postgres_dsn(&server.dsn_with(&params)).expect("a valid dsn")
}

/// A store on a fresh schema of the shared server.
pub fn fresh_store(tag: &str) -> PgStore {
    store_on(server(), &fresh_schema(tag))
}

/// A store on `schema` of `server`, creating the schema when needed.
pub fn store_on(server: &Server, schema: &str) -> PgStore {
    PgStore::connect(&dsn(server, schema, None), &Options::default()).expect("the store connects")
}

/// What a [`Proxy`] does with the next `COMMIT` it sees from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Cut {
    /// Forward the `COMMIT` to the server, then cut the connection before its answer
    /// comes back (the commit lands; the client cannot know).
    AfterCommitSent = 1,
    /// Cut the connection instead of forwarding the `COMMIT` (the server rolls back; the
    /// client cannot know either).
    BeforeCommitSent = 2,
}

/// A TCP proxy on a loopback port in front of the server, which cuts the connection that
/// carries a `COMMIT` when armed: the network between a replica and its database failing
/// at the worst moment.
pub struct Proxy {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
    cuts: std::sync::Arc<AtomicU64>,
}

impl Proxy {
    /// A proxy to the server of `dsn` (127.0.0.1:<port>).
    pub fn start(server: &Server) -> Proxy {
        use std::net::{TcpListener, TcpStream};
        let upstream_port: u16 = server
            .dsn
            .rsplit_once("@127.0.0.1:")
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .expect("the test server listens on 127.0.0.1:<port>");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let mode = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
        let cuts = std::sync::Arc::new(AtomicU64::new(0));
        let (m, c) = (mode.clone(), cuts.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (m, c) = (m.clone(), c.clone());
                let dead = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let dead2 = dead.clone();
                let (c2s_from, c2s_to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (s2c_from, s2c_to) = (server, client);
                std::thread::spawn(move || pump_up(c2s_from, c2s_to, &m, &c, &dead));
                std::thread::spawn(move || pump_down(s2c_from, s2c_to, &dead2));
            }
        });
        Proxy { port, mode, cuts }
    }

    /// Arms the proxy for the next `COMMIT`.
    pub fn arm(&self, cut: Cut) {
        self.mode.store(cut as u8, Ordering::SeqCst);
    }

    /// How many connections it has cut.
    pub fn cuts(&self) -> u64 {
        self.cuts.load(Ordering::SeqCst)
    }

    /// The DSN of `server` through this proxy.
    pub fn dsn(&self, server: &Server) -> String {
        let (head, rest) = server.dsn.rsplit_once("@127.0.0.1:").unwrap();
        let tail = rest.split_once('/').map_or("", |(_, t)| t);
        format!("{head}@127.0.0.1:{}/{tail}", self.port)
    }
}

fn pump_up(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    mode: &std::sync::atomic::AtomicU8,
    cuts: &AtomicU64,
    dead: &std::sync::atomic::AtomicBool,
) {
    use std::io::{Read, Write};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let commit = chunk.windows(7).any(|w| w == b"COMMIT\0");
        // 0: pass everything through.
        let m = if commit {
            mode.swap(0, Ordering::SeqCst)
        } else {
            0
        };
        if m != 0 {
            // From here on nothing the server says reaches the client.
            dead.store(true, Ordering::SeqCst);
        }
        if m == Cut::BeforeCommitSent as u8 {
            cuts.fetch_add(1, Ordering::SeqCst);
            break;
        }
        if to.write_all(chunk).is_err() {
            break;
        }
        if m == Cut::AfterCommitSent as u8 {
            let _ = to.flush();
            cuts.fetch_add(1, Ordering::SeqCst);
            break;
        }
    }
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to.shutdown(std::net::Shutdown::Both);
}

fn pump_down(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    dead: &std::sync::atomic::AtomicBool,
) {
    use std::io::{Read, Write};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if dead.load(Ordering::SeqCst) || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to.shutdown(std::net::Shutdown::Both);
}
