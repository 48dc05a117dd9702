//! A throwaway PostgreSQL server for tests (feature `test-server`; docs/postgres.md,
//! "Tests"): the one `scripts/postgres.sh run` started (its directory in
//! `LANGONROCK_TEST_POSTGRES_DIR`), or else one this process starts through
//! `scripts/postgres.sh start --watch <pid>`, which stops it once the process exits.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static NEXT: AtomicU64 = AtomicU64::new(0);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh")
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    /// Its directory (data, socket, logs) as `scripts/postgres.sh` laid it out.
    pub dir: PathBuf,
    /// The superuser DSN, without a tenant.
    pub dsn: String,
}

impl Server {
    /// A new private server in a fresh temporary directory (a test that stops and restarts
    /// its server must not share one).
    pub fn start_private(tag: &str) -> Server {
        Server::start_with(tag, false)
    }

    /// A new private server that also offers TLS, its certificate signed by the test CA in
    /// `<dir>/ca.crt`.
    pub fn start_with(tag: &str, tls: bool) -> Server {
        let dir = std::env::temp_dir().join(format!(
            "langonrock-pg-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .args(tls.then_some("--tls"))
            .arg("--watch")
            .arg(std::process::id().to_string())
            .output()
            .expect("bash runs scripts/postgres.sh");
        assert!(
            out.status.success(),
            "scripts/postgres.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dsn = std::fs::read_to_string(dir.join("dsn"))
            .expect("the script writes the dsn")
            .trim()
            .to_string();
        Server { dir, dsn }
    }

    /// `scripts/postgres.sh down|up <dir>`: stops or starts the server, keeping its data.
    pub fn ctl(&self, what: &str) {
        let out = Command::new("bash")
            .arg(script())
            .arg(what)
            .arg(&self.dir)
            .output()
            .expect("bash runs scripts/postgres.sh");
        assert!(
            out.status.success(),
            "scripts/postgres.sh {what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The DSN with `params` appended (`tenant=…&schema=…`).
    pub fn dsn_with(&self, params: &str) -> String {
        let sep = if self.dsn.contains('?') { '&' } else { '?' };
        format!("{}{sep}{params}", self.dsn)
    }

    /// A superuser connection for setting up a case.
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.dsn, postgres::NoTls).expect("admin connection")
    }
}

/// The shared server of this process.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var_os("LANGONROCK_TEST_POSTGRES_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let dsn = std::fs::read_to_string(dir.join("dsn"))
                .expect("LANGONROCK_TEST_POSTGRES_DIR holds the dsn file of scripts/postgres.sh")
                .trim()
                .to_string();
            Server { dir, dsn }
        }
        None => Server::start_private("shared"),
    })
}

/// Which statement a [`Proxy`] cuts the connection at, and on which side of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Cut {
    /// Forward the next commit (the commit statement, or `COMMIT` of a commit's
    /// transaction) to the server, then cut the connection before its answer comes back:
    /// the commit lands, and the client cannot know.
    AfterCommitSent = 1,
    /// Cut the connection instead of forwarding it: the server never runs it, and the
    /// client cannot know either.
    BeforeCommitSent = 2,
}

/// A TCP proxy on a loopback port in front of a server: the network between a replica
/// and its database. It reads the frontend protocol's messages and, when armed, cuts the
/// connection that carries the next commit — the `Bind` of a statement prepared from a
/// commit text (`WITH put AS (…`), or a `COMMIT` query — at the worst moment. Every
/// other byte passes through, both ways; connections made after a cut pass again.
#[derive(Debug)]
pub struct Proxy {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
    cuts: std::sync::Arc<AtomicU64>,
    exchanges: std::sync::Arc<AtomicU64>,
}

impl Proxy {
    /// A proxy to `server` (which listens on 127.0.0.1:<port>).
    pub fn start(server: &Server) -> Proxy {
        use std::net::{TcpListener, TcpStream};
        let upstream_port: u16 = server
            .dsn
            .rsplit_once("@127.0.0.1:")
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .expect("the test server listens on 127.0.0.1:<port>");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound port").port();
        let mode = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
        let cuts = std::sync::Arc::new(AtomicU64::new(0));
        let exchanges = std::sync::Arc::new(AtomicU64::new(0));
        let (m, c, x) = (mode.clone(), cuts.clone(), exchanges.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (Ok(c2s_from), Ok(c2s_to)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                let (m, c, x) = (m.clone(), c.clone(), x.clone());
                let dead = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let dead2 = dead.clone();
                std::thread::spawn(move || pump_up(c2s_from, c2s_to, &m, &c, &x, &dead));
                std::thread::spawn(move || pump_down(server, client, &dead2));
            }
        });
        Proxy {
            port,
            mode,
            cuts,
            exchanges,
        }
    }

    /// Arms the proxy for the next commit on any of its connections.
    pub fn arm(&self, cut: Cut) {
        self.mode.store(cut as u8, Ordering::SeqCst);
    }

    /// How many connections it has cut.
    pub fn cuts(&self) -> u64 {
        self.cuts.load(Ordering::SeqCst)
    }

    /// How many round trips its clients have started: each `Sync` (the end of an
    /// extended-protocol exchange) and each simple `Query` forwarded, on every connection.
    pub fn exchanges(&self) -> u64 {
        self.exchanges.load(Ordering::SeqCst)
    }

    /// The DSN of `server` through this proxy.
    pub fn dsn(&self, server: &Server) -> String {
        let (head, rest) = server
            .dsn
            .rsplit_once("@127.0.0.1:")
            .expect("the test server listens on 127.0.0.1:<port>");
        let tail = rest.split_once('/').map_or("", |(_, t)| t);
        format!("{head}@127.0.0.1:{}/{tail}", self.port)
    }

    /// [`Proxy::dsn`] with `params` appended (`tenant=…&schema=…`).
    pub fn dsn_with(&self, server: &Server, params: &str) -> String {
        let dsn = self.dsn(server);
        let sep = if dsn.contains('?') { '&' } else { '?' };
        format!("{dsn}{sep}{params}")
    }
}

/// Whether a statement text is a commit's (postgres/src/schema.rs).
fn is_commit_text(sql: &[u8]) -> bool {
    sql.trim_ascii_start().starts_with(b"WITH put AS (")
}

/// The first NUL-terminated string of `b`, and the rest after it.
fn cstr(b: &[u8]) -> (&[u8], &[u8]) {
    match b.iter().position(|&x| x == 0) {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &[]),
    }
}

/// Client to server: frames the messages (the untyped startup ones, then typed ones),
/// remembers which prepared statements are commits, and cuts when armed.
fn pump_up(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    mode: &std::sync::atomic::AtomicU8,
    cuts: &AtomicU64,
    exchanges: &AtomicU64,
    dead: &std::sync::atomic::AtomicBool,
) {
    use std::io::{Read, Write};
    let mut buf = vec![0u8; 64 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    let mut startup = true;
    // TLS or anything unparsable: pass through from then on.
    let mut opaque = false;
    let mut commits: std::collections::HashSet<Vec<u8>> = Default::default();
    // After forwarding a commit's `Bind`: cut once its `Sync` is forwarded.
    let mut cut_at_sync = false;
    'read: loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if opaque {
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
            continue;
        }
        pending.extend_from_slice(&buf[..n]);
        let mut out: Vec<u8> = Vec::new();
        let mut used = 0;
        loop {
            let rest = &pending[used..];
            let (kind, len) = if startup {
                if rest.len() < 4 {
                    break;
                }
                (
                    0u8,
                    u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize,
                )
            } else {
                if rest.len() < 5 {
                    break;
                }
                (
                    rest[0],
                    1 + u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize,
                )
            };
            if len < 4 || rest.len() < len {
                break;
            }
            let frame = &rest[..len];
            used += len;
            if startup {
                let code = frame
                    .get(4..8)
                    .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                match code {
                    // SSLRequest or GSSENCRequest: the server answers one byte; a TLS
                    // stream cannot be read, so it passes through unread.
                    Some(80_877_103) | Some(80_877_104) => opaque = true,
                    _ => startup = false,
                }
                out.extend_from_slice(frame);
                if opaque {
                    out.extend_from_slice(&pending[used..]);
                    used = pending.len();
                    break;
                }
                continue;
            }
            let body = &frame[5..];
            let mut trigger = false;
            match kind {
                b'P' => {
                    let (name, rest) = cstr(body);
                    let (sql, _) = cstr(rest);
                    if is_commit_text(sql) {
                        commits.insert(name.to_vec());
                    } else {
                        commits.remove(name);
                    }
                }
                b'B' => {
                    let (_portal, rest) = cstr(body);
                    let (name, _) = cstr(rest);
                    trigger = commits.contains(name);
                }
                b'Q' => {
                    let (sql, _) = cstr(body);
                    trigger = sql.trim_ascii().eq_ignore_ascii_case(b"COMMIT");
                }
                _ => {}
            }
            let m = if trigger {
                mode.swap(0, Ordering::SeqCst)
            } else {
                0
            };
            if m != 0 {
                // From here on nothing the server says reaches the client.
                dead.store(true, Ordering::SeqCst);
                cuts.fetch_add(1, Ordering::SeqCst);
            }
            if m == Cut::BeforeCommitSent as u8 {
                let _ = to.write_all(&out);
                break 'read;
            }
            out.extend_from_slice(frame);
            if kind == b'S' || kind == b'Q' {
                exchanges.fetch_add(1, Ordering::SeqCst);
            }
            if m == Cut::AfterCommitSent as u8 {
                if kind == b'Q' {
                    let _ = to.write_all(&out).and_then(|()| to.flush());
                    break 'read;
                }
                cut_at_sync = true;
            }
            if cut_at_sync && kind == b'S' {
                let _ = to.write_all(&out).and_then(|()| to.flush());
                break 'read;
            }
        }
        pending.drain(..used);
        if to.write_all(&out).is_err() {
            break;
        }
    }
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// Server to client: passes everything until the connection is cut.
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
