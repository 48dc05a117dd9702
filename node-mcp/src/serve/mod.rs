//! `langonrock serve` and `langonrock token` (docs/http.md): one process serves every
//! tenant of its data root over HTTP/1.1 — the REST routes, and MCP over Streamable HTTP at
//! `/mcp` — on a unix socket, or on TCP with tokens (and TLS off loopback).
//!
//! - `listen.rs`: the listener, the connection cap, hyper, TLS, stopping.
//! - `route.rs`: paths into routes, tokens into access.
//! - `api.rs`: the REST routes. `mcp_http.rs`: the MCP endpoint.
//! - `reply.rs`: replies, JSON errors, body caps and timeouts, the request log.
//! - `tenants.rs`: the one adapter to the tenant connections (reads from the published
//!   state, commits serialized per tenant, other writers seen on the next request).
//! - `tokens.rs`: `tokens.json` and minting.

mod api;
mod listen;
mod mcp_http;
mod reply;
mod route;
mod tenants;
mod tokens;

use self::reply::{Logged, MAX_HEADERS};
use self::route::Refusal;
use ::http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The flags of `langonrock serve` (docs/http.md, "Listening").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeOptions {
    /// The data root: the tenants' files, `tokens.json` and the default socket.
    pub data: PathBuf,
    /// `--store`: a PostgreSQL database whose tenants are served instead of the data
    /// root's files (`tokens.json` and the socket stay in the data root; docs/postgres.md).
    pub store: Option<langonrock::Root>,
    /// `--socket`: the unix socket (default `<data>/langonrock.sock`).
    pub socket: Option<PathBuf>,
    /// `--host`: listen on TCP (default `127.0.0.1`).
    pub host: Option<String>,
    /// `--port`: listen on TCP (default 7777; 0 picks a free port).
    pub port: Option<u16>,
    /// `--tls-cert`: the PEM certificate chain.
    pub tls_cert: Option<PathBuf>,
    /// `--tls-key`: the PEM private key.
    pub tls_key: Option<PathBuf>,
    /// `--read-only`: never write to the store.
    pub read_only: bool,
}

/// The serving limits (docs/http.md, "Limits"). The defaults are the documented ones; the
/// `LANGONROCK_SERVE_*` variables change them (tests shorten the timeouts).
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// A request's head must arrive within this.
    pub(crate) header_timeout: Duration,
    /// Each piece of a request body must arrive within this.
    pub(crate) body_timeout: Duration,
    /// Open connections at most.
    pub(crate) max_connections: usize,
    /// Live MCP sessions at most.
    pub(crate) max_sessions: usize,
    /// An MCP session ends after this long without a message.
    pub(crate) session_idle: Duration,
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| *n > 0)
}

impl Limits {
    fn from_env() -> Limits {
        let ms =
            |name: &str, default: u64| Duration::from_millis(env_number(name).unwrap_or(default));
        Limits {
            header_timeout: ms("LANGONROCK_SERVE_HEADER_TIMEOUT_MS", 10_000),
            body_timeout: ms("LANGONROCK_SERVE_BODY_TIMEOUT_MS", 30_000),
            max_connections: env_number("LANGONROCK_SERVE_MAX_CONNECTIONS").unwrap_or(4_096)
                as usize,
            max_sessions: env_number("LANGONROCK_SERVE_MAX_SESSIONS").unwrap_or(1_024) as usize,
            session_idle: ms("LANGONROCK_SERVE_SESSION_IDLE_MS", 30 * 60 * 1000),
        }
    }
}

/// What every request handler shares.
pub(crate) struct State {
    tokens: tokens::Tokens,
    read_only: bool,
    tenants: tenants::Tenants,
    limits: Limits,
    mcp: mcp_http::Mcp,
}

/// Where the server listens.
enum Plan {
    Unix(PathBuf),
    Tcp {
        host: String,
        port: u16,
        tls: Option<(PathBuf, PathBuf)>,
    },
}

/// Whether `host` is loopback: `127.0.0.1`, `::1` or `localhost`, nothing else.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare == "127.0.0.1" || bare == "::1" || bare.eq_ignore_ascii_case("localhost")
}

/// The startup refusals of docs/http.md, in order.
fn plan(o: &ServeOptions, tokens: &tokens::Tokens) -> Result<Plan, String> {
    let tcp = o.host.is_some() || o.port.is_some();
    if o.tls_cert.is_some() != o.tls_key.is_some() {
        return Err("--tls-cert and --tls-key must be given together".into());
    }
    let tls = o.tls_cert.clone().zip(o.tls_key.clone());
    if !tcp {
        if tls.is_some() {
            return Err("--tls-cert needs --host or --port: a unix socket has no tls".into());
        }
        return Ok(Plan::Unix(
            o.socket
                .clone()
                .unwrap_or_else(|| o.data.join("langonrock.sock")),
        ));
    }
    if o.socket.is_some() {
        return Err("--socket cannot be combined with --host or --port".into());
    }
    if tokens.is_empty() {
        return Err(
            "refusing to listen on TCP without tokens: pass tokens or use a unix socket".into(),
        );
    }
    let host = o.host.clone().unwrap_or_else(|| "127.0.0.1".into());
    if !is_loopback(&host) && tls.is_none() {
        return Err(format!(
            "refusing to serve {host} without tls: every request would carry its token in cleartext. Pass tls, or bind 127.0.0.1 and terminate tls in a proxy in front"
        ));
    }
    Ok(Plan::Tcp {
        host,
        port: o.port.unwrap_or(7777),
        tls,
    })
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Raises the soft limit on open files to the hard one: the connection cap needs more
/// descriptors than the usual default of 1,024.
fn raise_open_files() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getrlimit, setrlimit, Resource};
        let mut limit = getrlimit(Resource::Nofile);
        if limit.current != limit.maximum {
            limit.current = limit.maximum;
            let _ = setrlimit(Resource::Nofile, limit);
        }
    }
}

/// `langonrock serve`: checks the flags and the tokens, binds, prints the banner to `err`
/// and serves until SIGINT or SIGTERM. Returns the exit code.
pub fn run(o: ServeOptions, err: &mut dyn Write) -> i32 {
    match serve(o, err) {
        Ok(()) => 0,
        Err(m) => {
            let _ = writeln!(err, "error: {m}");
            1
        }
    }
}

fn serve(o: ServeOptions, err: &mut dyn Write) -> Result<(), String> {
    let tokens = tokens::Tokens::load(&o.data)?;
    let plan = plan(&o, &tokens)?;
    let acceptor = match &plan {
        Plan::Tcp {
            tls: Some((cert, key)),
            ..
        } => Some(listen::tls_acceptor(cert, key)?),
        _ => None,
    };
    raise_open_files();
    // One async worker per core, at least two; `LANGONROCK_SERVE_WORKERS` sets the count
    // (docs/http.md §7), capped at 256.
    let workers = env_number("LANGONROCK_SERVE_WORKERS").map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get().max(2)),
        |n| n.min(256) as usize,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .max_blocking_threads(64)
        .thread_name("langonrock-serve")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let root = o
        .store
        .clone()
        .unwrap_or_else(|| langonrock::Root::Files(o.data.clone()));
    connect(&root, o.read_only)?;
    let limits = Limits::from_env();
    let summary = format!(
        "{}, {}",
        plural(tokens.len(), "token"),
        plural(
            if o.read_only {
                0
            } else {
                tokens.writable_tenants()
            },
            "writable tenant"
        )
    );
    let state = Arc::new(State {
        tokens,
        read_only: o.read_only,
        tenants: tenants::Tenants::new(root.clone(), o.read_only),
        mcp: mcp_http::Mcp::new(limits.max_sessions, limits.session_idle),
        limits,
    });
    let served = rt.block_on(async {
        let (bound, shown) = match plan {
            Plan::Unix(path) => {
                let shown = path.display().to_string();
                (listen::bind_unix(&path)?, shown)
            }
            Plan::Tcp { host, port, .. } => listen::bind_tcp(&host, port, acceptor).await?,
        };
        let _ = writeln!(err, "langonrock serving {root} on {shown} ({summary})");
        let _ = err.flush();
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            stopped().await;
            let _ = stop_tx.send(true);
        });
        listen::serve(bound, state.clone(), stop_rx).await;
        state.mcp.close();
        Ok::<(), String>(())
    });
    // Commits in progress finish and pending derived records are put before the exit.
    let closing = state.clone();
    let _ = rt.block_on(rt.spawn_blocking(move || closing.tenants.close()));
    rt.shutdown_timeout(Duration::from_secs(1));
    served
}

/// Over a database: connects at startup (and unless `read_only` creates the schema), so a
/// wrong DSN, password or host is refused before the server listens. A files root opens
/// its tenants on first use.
fn connect(root: &langonrock::Root, read_only: bool) -> Result<(), String> {
    match root {
        langonrock::Root::Files(_) => Ok(()),
        langonrock::Root::Postgres(dsn) => langonrock::postgres::database(dsn, read_only)
            .map(|_| ())
            .map_err(|e| e.to_string()),
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn stopped() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut t), Ok(mut i)) => {
            tokio::select! {
                _ = t.recv() => {}
                _ = i.recv() => {}
            }
        }
        _ => std::future::pending::<()>().await,
    }
}

/// One request: answered (exactly once) and logged.
pub(crate) async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<Logged>, Infallible> {
    let started = Instant::now();
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let reply = respond(&state, req).await;
    Ok(Logged::wrap(&method, &path, started, reply))
}

async fn respond(state: &Arc<State>, req: Request<Incoming>) -> reply::Reply {
    let (parts, body) = req.into_parts();
    let target = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    if reply::head_size(parts.method.as_str(), &target, &parts.headers) > MAX_HEADERS {
        let r = Refusal(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "INVALID",
            "request headers exceed 16 KiB".into(),
        );
        return reply::closing(api::refused(state, r, body).await);
    }
    let segs = match route::segments(parts.uri.path()) {
        Ok(s) => s,
        Err(r) => return api::refused(state, r, body).await,
    };
    if segs.len() == 1 && segs[0] == "mcp" {
        return mcp_http::handle(state, parts, body).await;
    }
    let rest = async {
        if parts.method == ::http::Method::OPTIONS && segs.first().is_some_and(|s| s == "v1") {
            return reply::preflight();
        }
        let route = match route::parse(&segs) {
            Ok(r) => r,
            Err(r) => return api::refused(state, r, body).await,
        };
        let token = route::bearer(parts.headers.get(::http::header::AUTHORIZATION));
        let access = match route::authorize(&state.tokens, route.tenant.as_deref(), token) {
            Ok(a) => a,
            Err(r) => return api::refused(state, r, body).await,
        };
        api::dispatch(state, parts, body, route, access).await
    };
    reply::cors(rest.await)
}

/// `langonrock token --tenant <t> [--write]`: prints the new token on `out` and the status
/// line on `err`. Returns the exit code.
pub fn token(
    data: &std::path::Path,
    tenant: &str,
    write: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match tokens::mint(data, tenant, write) {
        Ok((token, line)) => {
            let _ = writeln!(out, "{token}");
            let _ = writeln!(err, "{line}");
            0
        }
        Err(m) => {
            let _ = writeln!(err, "error: {m}");
            1
        }
    }
}
