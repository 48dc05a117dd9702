//! Listening (docs/http.md, "Listening" and "Limits"): the unix socket or the TCP port
//! (with rustls when TLS is on), the open-connection cap, HTTP/1.1 on hyper with the
//! header timeout and cap, and a graceful stop.

use super::State;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, UnixListener};
use tokio::sync::{watch, Semaphore};
use tokio_rustls::TlsAcceptor;

/// hyper's own limit on a request head, above the 16 KiB the server answers itself with a
/// JSON 431: a longer head gets hyper's bare 431 and the connection closes.
const HYPER_MAX_HEAD: usize = 64 * 1024;
/// The length of the TCP accept queue.
const ACCEPT_QUEUE: u32 = 4_096;
/// How long a stopping server waits for open requests to finish.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A bound listener.
pub(crate) enum Bound {
    /// A unix socket, removed when the server stops.
    Unix(UnixListener, PathBuf),
    /// A TCP port, with TLS when an acceptor is given.
    Tcp(TcpListener, Option<TlsAcceptor>),
}

/// Binds the unix socket at `path` (mode 0600: the socket itself grants access). A socket
/// left behind by a server that died is replaced; a live one is refused.
pub(crate) fn bind_unix(path: &Path) -> Result<Bound, String> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(format!("{} exists and is not a socket", path.display()));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!("another server is listening on {}", path.display()));
        }
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot remove the stale socket {}: {e}", path.display()))?;
    }
    let listener = UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {}: {e}", path.display()))?;
    Ok(Bound::Unix(listener, path.to_path_buf()))
}

/// Binds `host:port`; returns the listener and the address it shows (the real port when
/// `port` is 0).
pub(crate) async fn bind_tcp(
    host: &str,
    port: u16,
    tls: Option<TlsAcceptor>,
) -> Result<(Bound, String), String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let failed = |e: std::io::Error| format!("cannot listen on {host}:{port}: {e}");
    let addr = tokio::net::lookup_host((bare, port))
        .await
        .map_err(failed)?
        .next()
        .ok_or_else(|| failed(std::io::ErrorKind::AddrNotAvailable.into()))?;
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(failed)?;
    socket.set_reuseaddr(true).map_err(failed)?;
    socket.bind(addr).map_err(failed)?;
    // A deep accept queue: a burst of new connections waits for the accept loop instead of
    // having its handshakes dropped (the kernel caps it at somaxconn).
    let listener = socket.listen(ACCEPT_QUEUE).map_err(failed)?;
    let real = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    let shown = if bare.contains(':') {
        format!("[{bare}]:{real}")
    } else {
        format!("{bare}:{real}")
    };
    Ok((Bound::Tcp(listener, tls), shown))
}

/// The TLS acceptor for a certificate chain and key in PEM files (rustls, ring provider,
/// HTTP/1.1 only).
pub(crate) fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the certificate {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read the private key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up tls: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not make a tls identity: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The answer to a connection over the cap, written before it is closed.
fn over_cap() -> Vec<u8> {
    let body = super::reply::error_body(
        "UNAVAILABLE",
        "too many open connections: try again later",
        None,
    );
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Accepts connections until `stop` turns true, then lets open requests finish (for a
/// while) and returns.
pub(crate) async fn serve(bound: Bound, state: Arc<State>, mut stop: watch::Receiver<bool>) {
    let permits = Arc::new(Semaphore::new(state.limits.max_connections));
    loop {
        let accepted: std::io::Result<Box<dyn Io>> = tokio::select! {
            _ = stop.changed() => break,
            a = accept(&bound) => a,
        };
        let io = match accepted {
            Ok(io) => io,
            // Out of file descriptors or a connection reset before it was accepted: the
            // server stays up and tries again shortly.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tokio::spawn(refuse_over_cap(io, matches!(bound, Bound::Tcp(_, Some(_)))));
            continue;
        };
        let (state, stop) = (state.clone(), stop.clone());
        let tls = match &bound {
            Bound::Tcp(_, Some(a)) => Some(a.clone()),
            _ => None,
        };
        tokio::spawn(async move {
            match tls {
                Some(acceptor) => {
                    let timeout = state.limits.header_timeout;
                    if let Ok(Ok(s)) = tokio::time::timeout(timeout, acceptor.accept(io)).await {
                        connection(s, state, stop).await;
                    }
                }
                None => connection(io, state, stop).await,
            }
            drop(permit);
        });
    }
    if let Bound::Unix(_, path) = &bound {
        let _ = std::fs::remove_file(path);
    }
    drop(bound);
    // Every connection holds a permit: all are back when the last one ended.
    let all = state.limits.max_connections as u32;
    let _ = tokio::time::timeout(STOP_GRACE, permits.acquire_many(all)).await;
}

/// A stream of either listener.
pub(crate) trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

async fn accept(bound: &Bound) -> std::io::Result<Box<dyn Io>> {
    Ok(match bound {
        Bound::Unix(l, _) => Box::new(l.accept().await?.0),
        Bound::Tcp(l, _) => {
            let (s, _) = l.accept().await?;
            let _ = s.set_nodelay(true);
            Box::new(s)
        }
    })
}

async fn refuse_over_cap(mut io: Box<dyn Io>, tls: bool) {
    if !tls {
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            let _ = io.write_all(&over_cap()).await;
            let _ = io.shutdown().await;
        })
        .await;
    }
}

/// Serves HTTP/1.1 on one connection until it closes, or until the server stops.
async fn connection<S>(io: S, state: Arc<State>, mut stop: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let timeout = state.limits.header_timeout;
    let service = service_fn(move |req| super::handle(state.clone(), req));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeout)
        .max_header_size(HYPER_MAX_HEAD);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(STOP_GRACE, conn).await;
        }
    }
}
