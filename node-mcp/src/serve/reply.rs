//! The HTTP layer's plumbing (docs/http.md, "Errors" and "Limits"): replies, JSON error
//! bodies, reading a body under the size cap and the stall timeout, draining a refused
//! body, and the request log.

use bytes::{Bytes, BytesMut};
use http::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use http::{HeaderMap, Response, StatusCode};
use http_body::{Body as _, Frame, SizeHint};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use langonrock_core::Error;
use std::convert::Infallible;
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Every reply's body.
pub(crate) type Body = BoxBody<Bytes, Infallible>;
/// Every reply.
pub(crate) type Reply = Response<Body>;

/// The request body cap (48 MiB).
pub(crate) const MAX_BODY: usize = 48 * 1024 * 1024;
/// The request header cap (16 KiB), the request line included.
pub(crate) const MAX_HEADERS: usize = 16 * 1024;
/// How much of a refused body is read and thrown away before the reply, so the client sees
/// the reply rather than a reset connection. A longer body closes the connection instead.
const MAX_DRAIN: u64 = 64 * 1024 * 1024;

/// The body of `text`.
pub(crate) fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed()
}

/// A reply with a status, a content type and a body.
pub(crate) fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(CONTENT_TYPE, v);
    }
    r
}

/// A `200` JSON reply.
pub(crate) fn json(text: String) -> Reply {
    reply(StatusCode::OK, "application/json", text)
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A JSON error body `{"code","message"}`, with the extra fields of `e` (docs/http.md,
/// "Errors"): `revision` for `INDETERMINATE_COMMIT`, `reason` for a failed precondition,
/// `changes` (`[{index, reason}]`) for a refused transaction, and `index` for a validation
/// failure tied to one change of a transaction.
pub(crate) fn error_body(code: &str, message: &str, e: Option<&Error>) -> String {
    let mut out = format!(
        "{{\"code\":{},\"message\":{}",
        quoted(code),
        quoted(message)
    );
    match e {
        Some(Error::IndeterminateCommit { revision }) => {
            out.push_str(&format!(",\"revision\":{}", quoted(revision)));
        }
        Some(Error::Conflict {
            reason, changes, ..
        }) => {
            if let Some(r) = reason {
                out.push_str(&format!(",\"reason\":{}", quoted(r.as_str())));
            }
            if !changes.is_empty() {
                let list: Vec<String> = changes
                    .iter()
                    .map(|c| {
                        format!(
                            "{{\"index\":{},\"reason\":{}}}",
                            c.index,
                            quoted(c.reason.as_str())
                        )
                    })
                    .collect();
                out.push_str(&format!(",\"changes\":[{}]", list.join(",")));
            }
        }
        Some(Error::InvalidChange { index, .. }) => {
            out.push_str(&format!(",\"index\":{index}"));
        }
        _ => {}
    }
    out.push('}');
    out
}

/// An error of the HTTP layer itself.
pub(crate) fn refuse(status: StatusCode, code: &str, message: &str) -> Reply {
    reply(status, "application/json", error_body(code, message, None))
}

/// `400 INVALID`.
pub(crate) fn invalid(message: &str) -> Reply {
    refuse(StatusCode::BAD_REQUEST, "INVALID", message)
}

/// An engine error as a reply: `INVALID` 400, `NOT_FOUND` 404, `CONFLICT` 409 (412 on the
/// single-document routes, `precondition`), `INDETERMINATE_COMMIT` 503, `CORRUPT` and
/// `STORE` 500.
pub(crate) fn engine_error(e: &Error, precondition: bool) -> Reply {
    let status = match e.code() {
        "INVALID" => StatusCode::BAD_REQUEST,
        "NOT_FOUND" => StatusCode::NOT_FOUND,
        "CONFLICT" if precondition => StatusCode::PRECONDITION_FAILED,
        "CONFLICT" => StatusCode::CONFLICT,
        "INDETERMINATE_COMMIT" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    reply(
        status,
        "application/json",
        error_body(e.code(), &e.message(), Some(e)),
    )
}

/// The answer to a CORS preflight (`OPTIONS`) on a REST route: browsers may call every
/// route from any origin. That is safe because access is a bearer token sent by the page,
/// never a cookie the browser adds on its own.
pub(crate) fn preflight() -> Reply {
    let mut r = reply(StatusCode::NO_CONTENT, "text/plain", Bytes::new());
    let h = r.headers_mut();
    h.remove(CONTENT_TYPE);
    h.insert(
        "access-control-allow-methods",
        HeaderValue::from_static("GET, POST, PUT, DELETE"),
    );
    h.insert(
        "access-control-allow-headers",
        HeaderValue::from_static("authorization, content-type, if-match, if-none-match"),
    );
    h.insert("access-control-max-age", HeaderValue::from_static("86400"));
    r
}

/// Adds the CORS headers every REST answer carries: any origin, and the `ETag` readable by
/// the page (a remote `readSource` takes the hash from it).
pub(crate) fn cors(mut r: Reply) -> Reply {
    let h = r.headers_mut();
    h.insert("access-control-allow-origin", HeaderValue::from_static("*"));
    h.insert(
        "access-control-expose-headers",
        HeaderValue::from_static("ETag"),
    );
    r
}

/// Marks a reply so the connection closes after it.
pub(crate) fn closing(mut r: Reply) -> Reply {
    r.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

/// The size of a request's head as it came in: the request line and each header line.
pub(crate) fn head_size(method: &str, target: &str, headers: &HeaderMap) -> usize {
    let line = method.len() + target.len() + " HTTP/1.1\r\n".len() + 1;
    headers
        .iter()
        .map(|(k, v)| k.as_str().len() + 2 + v.len() + 2)
        .sum::<usize>()
        + line
}

/// Why a body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Longer than the cap; `drained` tells whether the rest was read and thrown away.
    TooLarge {
        /// Whether the connection can carry another request.
        drained: bool,
    },
    /// No byte arrived for the stall timeout.
    Stalled,
    /// The connection failed.
    Failed,
}

/// Reads a whole body of at most `cap` bytes; each frame must arrive within `stall`.
pub(crate) async fn read_body(
    mut body: Incoming,
    cap: usize,
    stall: Duration,
) -> Result<Bytes, BodyError> {
    if body.size_hint().lower() > cap as u64 {
        let drained = drain(body, stall).await;
        return Err(BodyError::TooLarge { drained });
    }
    let mut buf = BytesMut::new();
    loop {
        let frame = match tokio::time::timeout(stall, body.frame()).await {
            Err(_) => return Err(BodyError::Stalled),
            Ok(None) => return Ok(buf.freeze()),
            Ok(Some(Err(_))) => return Err(BodyError::Failed),
            Ok(Some(Ok(f))) => f,
        };
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > cap {
                let drained = drain(body, stall).await;
                return Err(BodyError::TooLarge { drained });
            }
            buf.extend_from_slice(&data);
        }
    }
}

/// Reads the rest of a body and throws it away, up to [`MAX_DRAIN`] bytes and while it
/// does not stall. Returns whether the body ended (else the connection must close).
pub(crate) async fn drain(mut body: Incoming, stall: Duration) -> bool {
    if body.is_end_stream() {
        return true;
    }
    if body.size_hint().lower() > MAX_DRAIN {
        return false;
    }
    let mut seen = 0u64;
    loop {
        match tokio::time::timeout(stall, body.frame()).await {
            Ok(None) => return true,
            Ok(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    seen += d.len() as u64;
                    if seen > MAX_DRAIN {
                        return false;
                    }
                }
            }
            _ => return false,
        }
    }
}

/// The reply to a body that could not be read.
pub(crate) fn body_error(e: BodyError) -> Reply {
    match e {
        BodyError::TooLarge { drained } => {
            let r = refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "INVALID",
                "request body exceeds 48 MiB",
            );
            if drained {
                r
            } else {
                closing(r)
            }
        }
        BodyError::Stalled => closing(refuse(
            StatusCode::REQUEST_TIMEOUT,
            "INVALID",
            "request body stalled: no data arrived for the body timeout",
        )),
        BodyError::Failed => closing(refuse(
            StatusCode::BAD_REQUEST,
            "INVALID",
            "the request body could not be read",
        )),
    }
}

/// A reply body that writes the request's log line when it is done (or dropped, when the
/// client goes away): `<method> <path> <status> <bytes> <ms>ms`, the path without its
/// query, so a token in a query string never reaches the log.
pub(crate) struct Logged {
    inner: Body,
    line: Option<(String, String, u16, Instant)>,
    bytes: u64,
}

impl Logged {
    /// Wraps `reply`'s body; the line is written once the body ends.
    pub(crate) fn wrap(
        method: &str,
        path: &str,
        started: Instant,
        reply: Reply,
    ) -> Response<Logged> {
        let status = reply.status().as_u16();
        reply.map(|inner| Logged {
            inner,
            line: Some((method.to_string(), path.to_string(), status, started)),
            bytes: 0,
        })
    }

    fn log(&mut self) {
        if let Some((method, path, status, started)) = self.line.take() {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let line = format!("{method} {path} {status} {} {ms:.1}ms\n", self.bytes);
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.log();
    }
}

impl http_body::Body for Logged {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    self.bytes += d.len() as u64;
                }
            }
            Poll::Ready(None) => self.log(),
            _ => {}
        }
        if self.inner.is_end_stream() {
            self.log();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
