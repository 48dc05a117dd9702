//! The transport of a remote connection: HTTP/1.1 on hyper over a unix socket, TCP, or TCP
//! with TLS (rustls), behind a blocking call that works from any thread, inside an async
//! runtime or not.
//!
//! One worker thread runs a single-threaded tokio runtime. [`Transport::send`] hands it a
//! [`wire::Request`] and waits for the [`Answer`]; concurrent callers are served
//! concurrently, each on an idle kept-alive connection or a new one. Every wait is
//! bounded ([`Limits`]): a server that never answers, stalls mid-body, sends garbage or more
//! than [`Limits::max_body`] bytes gives a `STORE` error naming the server, never a hang
//! or a panic.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use langonrock_core::dsn::{Endpoint, RemoteDsn};
use langonrock_core::http_api as wire;
use langonrock_core::Error;
use std::future::Future;
use std::sync::{mpsc as std_mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

/// How long a remote connection waits, and how much it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connecting, TLS handshake included. Default 10 s.
    pub connect: Duration,
    /// From sending the request to the answer's status line and headers. Default 120 s: a
    /// commit of a large transaction takes a while on the server.
    pub answer: Duration,
    /// The longest pause between two parts of an answer's body. Default 30 s.
    pub stall: Duration,
    /// The largest answer body read. Default 256 MiB.
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connect: Duration::from_secs(10),
            answer: Duration::from_secs(120),
            stall: Duration::from_secs(30),
            max_body: 256 << 20,
        }
    }
}

/// One answer, read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The `ETag` header, as sent.
    pub etag: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The answer as [`wire`] reads it.
    pub fn response(&self) -> wire::Response<'_> {
        wire::Response {
            status: self.status,
            etag: self.etag.as_deref(),
            body: &self.body,
        }
    }
}

/// Where to connect, resolved once.
enum Dial {
    Unix(std::path::PathBuf),
    Tcp {
        host: String,
        port: u16,
        tls: Option<(
            tokio_rustls::TlsConnector,
            rustls_pki_types::ServerName<'static>,
        )>,
    },
}

struct Target {
    dial: Dial,
    /// The `Host` header.
    authority: String,
    /// The `Authorization` header, when the DSN has a token.
    auth: Option<String>,
    /// The server as messages name it: the socket path or the origin (never the token).
    shown: String,
    limits: Limits,
    /// Idle kept-alive connections.
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
}

/// The most idle connections kept for reuse.
const MAX_IDLE: usize = 8;

type Reply = std_mpsc::SyncSender<Result<Answer, Error>>;

/// A blocking HTTP client for one server.
pub struct Transport {
    jobs: Option<mpsc::UnboundedSender<(wire::Request, Reply)>>,
    worker: Option<JoinHandle<()>>,
    shown: String,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("server", &self.shown)
            .finish()
    }
}

fn store(m: String) -> Error {
    Error::Store(m)
}

/// The TLS client configuration: the ring provider, the platform's trust roots (or
/// `SSL_CERT_FILE` / `SSL_CERT_DIR`), HTTP/1.1 by ALPN.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, Error> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(store(format!(
            "no trusted certificate authorities found{why}: install the system's CA certificates, or set SSL_CERT_FILE to a PEM file of the ones to trust"
        )));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| store(format!("cannot set up tls: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

impl Transport {
    /// A client for the server a remote DSN names. Reads the trust roots for `okf+https:`;
    /// connects nothing yet.
    pub fn new(dsn: &RemoteDsn, limits: Limits) -> Result<Transport, Error> {
        let dial = match &dsn.endpoint {
            Endpoint::Unix(path) => Dial::Unix(path.into()),
            Endpoint::Tcp { tls, host, .. } => {
                let bare = host.trim_start_matches('[').trim_end_matches(']');
                let tls = match tls {
                    false => None,
                    true => {
                        let name = rustls_pki_types::ServerName::try_from(bare.to_string())
                            .map_err(|e| {
                                Error::Invalid(format!("invalid tls server name \"{bare}\": {e}"))
                            })?;
                        Some((tokio_rustls::TlsConnector::from(tls_config()?), name))
                    }
                };
                Dial::Tcp {
                    host: bare.to_string(),
                    port: dsn.port().unwrap_or(80),
                    tls,
                }
            }
        };
        let auth = dsn.token.as_deref().map(wire::bearer);
        if let Some(a) = &auth {
            http::HeaderValue::from_str(a).map_err(|_| {
                Error::Invalid("the dsn's token holds characters a header cannot carry".to_string())
            })?;
        }
        let shown = match &dsn.endpoint {
            Endpoint::Unix(p) => p.clone(),
            Endpoint::Tcp { .. } => dsn.origin(),
        };
        let target = Arc::new(Target {
            dial,
            authority: dsn.authority(),
            auth,
            shown: shown.clone(),
            limits,
            idle: Mutex::new(Vec::new()),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| store(format!("cannot start the http client: {e}")))?;
        let (tx, mut rx) = mpsc::unbounded_channel::<(wire::Request, Reply)>();
        let worker = std::thread::Builder::new()
            .name("langonrock-remote".into())
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some((req, reply)) = rx.recv().await {
                        let target = target.clone();
                        tokio::spawn(async move {
                            let _ = reply.send(target.exchange(req).await);
                        });
                    }
                });
            })
            .map_err(|e| store(format!("cannot start the http client: {e}")))?;
        Ok(Transport {
            jobs: Some(tx),
            worker: Some(worker),
            shown,
        })
    }

    /// The server as messages name it: the socket path or the origin.
    pub fn server(&self) -> &str {
        &self.shown
    }

    /// Sends one request and waits for its whole answer.
    pub fn send(&self, req: wire::Request) -> Result<Answer, Error> {
        let (tx, rx) = std_mpsc::sync_channel(1);
        let gone = || store(format!("the http client for {} stopped", self.shown));
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send((req, tx))
            .map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())?
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        // Closing the channel ends the worker once the requests in flight are answered.
        self.jobs = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// A stream hyper can drive: TCP, TLS over TCP, or a unix socket.
trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

async fn within<T>(
    limit: Duration,
    f: impl Future<Output = T>,
    late: impl FnOnce() -> Error,
) -> Result<T, Error> {
    tokio::time::timeout(limit, f).await.map_err(|_| late())
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

fn size(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

impl Target {
    async fn dial(&self) -> Result<Box<dyn Io>, Error> {
        let unreachable = |e: std::io::Error| {
            store(format!(
                "cannot reach the langonrock server at {}: {e}",
                self.shown
            ))
        };
        let late = || {
            store(format!(
                "cannot reach the langonrock server at {}: no connection within {}",
                self.shown,
                secs(self.limits.connect)
            ))
        };
        let connect = async {
            match &self.dial {
                #[cfg(unix)]
                Dial::Unix(path) => Ok(Box::new(
                    tokio::net::UnixStream::connect(path)
                        .await
                        .map_err(unreachable)?,
                ) as Box<dyn Io>),
                #[cfg(not(unix))]
                Dial::Unix(_) => Err(Error::Invalid(
                    "okf+unix: needs a platform with unix sockets".into(),
                )),
                Dial::Tcp { host, port, tls } => {
                    let tcp = tokio::net::TcpStream::connect((host.as_str(), *port))
                        .await
                        .map_err(unreachable)?;
                    let _ = tcp.set_nodelay(true);
                    match tls {
                        None => Ok(Box::new(tcp) as Box<dyn Io>),
                        Some((connector, name)) => {
                            let s = connector.connect(name.clone(), tcp).await.map_err(|e| {
                                store(format!(
                                    "tls handshake with the langonrock server at {} failed: {e}",
                                    self.shown
                                ))
                            })?;
                            Ok(Box::new(s) as Box<dyn Io>)
                        }
                    }
                }
            }
        };
        within(self.limits.connect, connect, late).await?
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, Error> {
        let io = self.dial().await?;
        let (sender, conn) = http1::Builder::new()
            .handshake(TokioIo::new(io))
            .await
            .map_err(|e| {
                store(format!(
                    "cannot talk to the langonrock server at {}: {e}",
                    self.shown
                ))
            })?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    fn take_idle(&self) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(s) = idle.pop() {
            if s.is_ready() && !s.is_closed() {
                return Some(s);
            }
        }
        None
    }

    fn put_idle(&self, s: SendRequest<Full<Bytes>>) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(s);
        }
    }

    fn build(&self, req: &wire::Request) -> Result<http::Request<Full<Bytes>>, Error> {
        let mut b = http::Request::builder()
            .method(req.method)
            .uri(req.path.as_str())
            .header(http::header::HOST, self.authority.as_str());
        if let Some(a) = &self.auth {
            b = b.header(http::header::AUTHORIZATION, a.as_str());
        }
        for (k, v) in &req.headers {
            b = b.header(*k, v.as_str());
        }
        b.body(Full::new(Bytes::from(req.body.clone())))
            .map_err(|e| Error::Invalid(format!("cannot build the request: {e}")))
    }

    /// One request and its whole answer. A kept-alive connection that turns out closed
    /// before the request went out is replaced by a new one, once.
    async fn exchange(&self, req: wire::Request) -> Result<Answer, Error> {
        let mut request = self.build(&req)?;
        let mut fresh = false;
        let mut sender = match self.take_idle() {
            Some(s) => s,
            None => {
                fresh = true;
                self.connect().await?
            }
        };
        let late = || {
            store(format!(
                "the langonrock server at {} did not answer within {}",
                self.shown,
                secs(self.limits.answer)
            ))
        };
        let response = loop {
            match within(self.limits.answer, sender.try_send_request(request), late).await? {
                Ok(r) => break r,
                Err(mut e) => {
                    // A reused connection the server had closed: send once more on a new
                    // one when nothing went out, or when the request only reads.
                    let unsent = e.take_message();
                    if fresh {
                        return Err(self.broken(e.into_error(), &req));
                    }
                    request = match unsent {
                        Some(r) => r,
                        None if req.read => self.build(&req)?,
                        None => return Err(self.broken(e.into_error(), &req)),
                    };
                    fresh = true;
                    sender = self.connect().await?;
                }
            }
        };
        let status = response.status().as_u16();
        let etag = response
            .headers()
            .get(http::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let keep = !response
            .headers()
            .get(http::header::CONNECTION)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        loop {
            let stalled = || {
                store(format!(
                    "the langonrock server at {} stalled mid-answer for {}",
                    self.shown,
                    secs(self.limits.stall)
                ))
            };
            match within(self.limits.stall, body.frame(), stalled).await? {
                None => break,
                Some(Err(e)) => {
                    let cause = std::error::Error::source(&e)
                        .map_or_else(|| e.to_string(), |c| c.to_string());
                    return Err(self.failed(format!("broke off mid-answer ({cause})"), &req));
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if bytes.len() + data.len() > self.limits.max_body {
                            return Err(store(format!(
                                "the langonrock server at {} answered more than {}",
                                self.shown,
                                size(self.limits.max_body)
                            )));
                        }
                        bytes.extend_from_slice(&data);
                    }
                }
            }
        }
        if keep {
            self.put_idle(sender);
        }
        Ok(Answer {
            status,
            etag,
            body: bytes,
        })
    }

    /// A connection that broke or spoke no HTTP. For a request that may change the tenant
    /// the message says that its outcome is unknown.
    fn broken(&self, e: hyper::Error, req: &wire::Request) -> Error {
        let what = if e.is_parse() || e.is_parse_status() {
            format!("sent an answer that is not HTTP ({e})")
        } else if e.is_incomplete_message() {
            "closed the connection before answering".to_string()
        } else {
            format!("broke the connection ({e})")
        };
        self.failed(what, req)
    }

    fn failed(&self, what: String, req: &wire::Request) -> Error {
        let outcome = match req.read {
            true => "",
            false => "; the change may or may not have been made: read before retrying",
        };
        store(format!(
            "the langonrock server at {} {what}{outcome}",
            self.shown
        ))
    }
}

#[cfg(test)]
mod tests;
