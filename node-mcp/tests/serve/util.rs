//! Helpers for the `langonrock serve` tests: a server process on a temporary data root, and
//! requests made with `curl` (a client nobody here wrote).
#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// The binary under test.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_langonrock")
}

/// Where a server listens.
#[derive(Debug, Clone)]
pub(crate) enum Addr {
    /// A unix socket.
    Unix(PathBuf),
    /// `host:port` over plain HTTP.
    Tcp(String),
    /// `host:port` over TLS, with the certificate curl should trust.
    Tls(String, PathBuf),
}

/// A running `langonrock serve`.
pub(crate) struct Server {
    child: Option<Child>,
    /// Where it listens.
    pub(crate) addr: Addr,
    /// The first stderr line.
    pub(crate) banner: String,
    log: Arc<Mutex<String>>,
    /// The data root.
    pub(crate) data: PathBuf,
}

/// A fresh directory for one test, under the system temp dir.
pub(crate) fn temp(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("langonrock-serve-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Removes a test's directory when the test ends: declared right after the directory, so
/// it runs after the servers the test started have stopped. A failed test keeps its
/// directory, to be looked at.
pub(crate) struct RemovedAtEnd(pub(crate) PathBuf);

impl Drop for RemovedAtEnd {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The fixed read date of the tests.
pub(crate) const TODAY: &str = "2026-06-01";

/// Runs `langonrock <args>` with the data root and the read date; returns code, stdout and
/// stderr.
pub(crate) fn run(data: &Path, args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(args)
        .env("LANGONROCK_DATA", data)
        .env("LANGONROCK_TODAY", TODAY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn langonrock");
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin);
    }
    let o = child.wait_with_output().expect("wait for langonrock");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Mints a token (`langonrock token`); returns it.
pub(crate) fn token(data: &Path, tenant: &str, write: bool) -> String {
    let mut args = vec!["token", "--tenant", tenant];
    if write {
        args.push("--write");
    }
    let (code, out, err) = run(data, &args, b"");
    assert_eq!(code, 0, "token failed: {err}");
    out.trim_end().to_string()
}

impl Server {
    /// Starts `langonrock serve --data <data> <args>` with `env`; `Err` holds the exit code
    /// and stderr when it refuses to start.
    pub(crate) fn try_start(
        data: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Server, (i32, String)> {
        let mut cmd = Command::new(bin());
        cmd.arg("serve")
            .arg("--data")
            .arg(data)
            .args(args)
            .env("LANGONROCK_TODAY", TODAY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn langonrock serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            for line in lines.map_while(Result::ok) {
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let Ok(banner) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let status = child.wait().expect("wait");
            return Err((status.code().unwrap_or(-1), String::new()));
        };
        if !banner.starts_with("langonrock serving ") {
            let status = child.wait().expect("wait");
            return Err((status.code().unwrap_or(-1), banner));
        }
        let shown = banner
            .split(" on ")
            .nth(1)
            .and_then(|s| s.rsplit_once(" ("))
            .map(|(a, _)| a.to_string())
            .expect("banner names the address");
        let tls = args
            .iter()
            .position(|a| *a == "--tls-cert")
            .map(|i| PathBuf::from(args[i + 1]));
        let addr = if shown.starts_with('/') {
            Addr::Unix(PathBuf::from(shown))
        } else if let Some(cert) = tls {
            Addr::Tls(shown, cert)
        } else {
            Addr::Tcp(shown)
        };
        Ok(Server {
            child: Some(child),
            addr,
            banner,
            log,
            data: data.to_path_buf(),
        })
    }

    /// Starts a server; panics when it refuses.
    pub(crate) fn start(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::try_start(data, args, env)
            .unwrap_or_else(|(code, err)| panic!("serve did not start ({code}): {err}"))
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Whether the process still runs.
    pub(crate) fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_none())
    }

    /// The request log so far (stderr after the banner).
    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `host:port` of a TCP server.
    pub(crate) fn host_port(&self) -> &str {
        match &self.addr {
            Addr::Tcp(a) | Addr::Tls(a, _) => a,
            Addr::Unix(_) => panic!("not a TCP server"),
        }
    }

    /// A request to `path` (with its query).
    pub(crate) fn req(&self, method: &str, path: &str) -> Req {
        Req {
            addr: self.addr.clone(),
            method: method.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: None,
        }
    }

    /// SIGTERM, then waits; returns the whole stderr after the banner.
    pub(crate) fn stop(mut self) -> String {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
            let _ = c.wait();
        }
        std::thread::sleep(Duration::from_millis(50));
        self.log()
    }

    /// SIGKILL, then waits.
    pub(crate) fn kill(mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A request, sent with curl.
pub(crate) struct Req {
    addr: Addr,
    method: String,
    path: String,
    headers: Vec<String>,
    body: Option<Vec<u8>>,
}

/// A reply as curl saw it.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// The status code.
    pub(crate) status: u16,
    /// The headers, names lower-cased.
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: String,
}

impl Reply {
    /// A header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// Asserts a JSON error reply: status, code and message.
    pub(crate) fn error(&self, status: u16, code: &str, message: &str) {
        assert_eq!(self.status, status, "status of {self:?}");
        let v = self.json();
        assert_eq!(v["code"], code, "code of {self:?}");
        assert_eq!(v["message"], message, "message of {self:?}");
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
    }
}

impl Req {
    /// Adds a header line `Name: value`.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.push(format!("{name}: {value}"));
        self
    }

    /// `Authorization: Bearer <token>`.
    pub(crate) fn token(self, token: &str) -> Req {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    /// A JSON body with its content type.
    pub(crate) fn json(self, v: &serde_json::Value) -> Req {
        self.header("Content-Type", "application/json")
            .body(v.to_string())
    }

    /// A raw body.
    pub(crate) fn body(mut self, b: impl Into<Vec<u8>>) -> Req {
        self.body = Some(b.into());
        self
    }

    /// The URL and curl's transport flags.
    fn target(&self) -> (Vec<String>, String) {
        match &self.addr {
            Addr::Unix(p) => (
                vec!["--unix-socket".into(), p.display().to_string()],
                format!("http://langonrock{}", self.path),
            ),
            Addr::Tcp(a) => (vec![], format!("http://{a}{}", self.path)),
            Addr::Tls(a, cert) => (
                vec!["--cacert".into(), cert.display().to_string()],
                format!("https://{a}{}", self.path),
            ),
        }
    }

    /// Sends it; panics when curl cannot connect.
    pub(crate) fn send(self) -> Reply {
        self.try_send()
            .unwrap_or_else(|e| panic!("curl failed: {e}"))
    }

    /// Sends it; `Err` holds curl's complaint when there is no HTTP reply.
    pub(crate) fn try_send(self) -> Result<Reply, String> {
        use std::io::Write;
        let (mut args, url) = self.target();
        args.extend(
            [
                "-sS",
                "-i",
                "--max-time",
                "60",
                "--path-as-is",
                "-X",
                &self.method,
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        for h in &self.headers {
            args.push("-H".into());
            args.push(h.clone());
        }
        if self.body.is_some() {
            // curl would label a body form-encoded: send none unless the test names one.
            if !self
                .headers
                .iter()
                .any(|h| h.to_ascii_lowercase().starts_with("content-type:"))
            {
                args.push("-H".into());
                args.push("Content-Type:".into());
            }
            args.push("--data-binary".into());
            args.push("@-".into());
        }
        args.push(url);
        let mut child = Command::new("curl")
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("curl runs (scripts/setup.sh installs it)");
        let mut stdin = child.stdin.take().expect("stdin");
        let body = self.body.clone();
        let writer = std::thread::spawn(move || {
            if let Some(b) = body {
                let _ = stdin.write_all(&b);
            }
        });
        let out = child.wait_with_output().expect("wait for curl");
        let _ = writer.join();
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(parse(&out.stdout))
    }
}

/// Parses curl's `-i` output (skipping interim `100 Continue` heads).
fn parse(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw).into_owned();
    let mut rest = text.as_str();
    loop {
        let (head, body) = rest
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("no head in curl output {text:?}"));
        let mut lines = head.lines();
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head:?}"));
        if status == 100 {
            rest = body;
            continue;
        }
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        return Reply {
            status,
            headers,
            body: body.to_string(),
        };
    }
}

/// A tree listing of a directory: every file's relative path, size and modification time
/// (to prove nothing was written).
pub(crate) fn tree(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, u64, std::time::SystemTime)>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().display().to_string();
                out.push((rel, m.len(), m.modified().unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A document with OKF frontmatter.
pub(crate) fn doc(kind: &str, body: &str) -> String {
    format!("---\ntype: {kind}\n---\n{body}\n")
}

/// The SHA-256 of `text` as hex.
pub(crate) fn sha(text: &str) -> String {
    langonrock_core::engine::Digest::of(text.as_bytes()).to_hex()
}

/// The top-level keys of a JSON object, in the order the text gives them.
pub(crate) fn keys_in_order(text: &str) -> Vec<String> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                out.push(k);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    (&mut de).deserialize_map(Keys).expect("a JSON object")
}

/// One HTTP/1.1 request over a unix socket with a minimal client of our own (for the crash
/// trials, where a process per request would be too slow): the status and body, or the
/// IO error when the server went away.
pub(crate) fn raw(
    sock: &Path,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = std::os::unix::net::UnixStream::connect(sock)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: langonrock\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "no reply",
        ));
    };
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "no status"))?;
    Ok((status, body.to_string()))
}
