//! Helpers shared by the integration tests: temporary directories and running the binary.
#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

static N: AtomicU64 = AtomicU64::new(0);

/// A fresh directory under the system temp dir, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "langonrock-it-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary under test.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_langonrock")
}

/// Runs the binary with `args`, `stdin` as input, the data root `data` in
/// `LANGONROCK_DATA` and the read date pinned.
pub(crate) fn run(data: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(args)
        .env("LANGONROCK_DATA", data)
        .env("LANGONROCK_TODAY", "2026-06-01")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn langonrock");
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin);
    }
    child.wait_with_output().expect("wait for langonrock")
}

/// `(exit code, stdout, stderr)` as text.
pub(crate) fn text(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Spawns `langonrock mcp <dsn> <flags>` with piped stdin and stdout, the read date pinned.
pub(crate) fn spawn_mcp(dsn: &str, flags: &[&str]) -> std::process::Child {
    Command::new(bin())
        .arg("mcp")
        .arg(dsn)
        .args(flags)
        .env("LANGONROCK_TODAY", "2026-06-01")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn langonrock mcp")
}

/// Runs a client script of `tests/mcp_client/` with the binary, the data root and an input
/// file; asserts it succeeded and printed each of `lines`; returns its stdout.
pub(crate) fn run_client(script: &str, data: &Path, input: &Path, lines: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_client")
        .join(script);
    let out = Command::new("python3")
        .arg(&script)
        .arg(bin())
        .arg(data)
        .arg(input)
        .output()
        .expect("python3 runs (scripts/setup.sh installs the MCP SDK)");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the MCP client {} failed:\n{stdout}\n{stderr}",
        script.display()
    );
    for line in lines {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    stdout
}

/// A `langonrock mcp` process driven with raw JSON-RPC lines.
pub(crate) struct Rpc {
    pub(crate) child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Rpc {
    /// Spawns `langonrock mcp <dsn> <flags>` and initializes the session.
    pub(crate) fn start(dsn: &str, flags: &[&str]) -> Rpc {
        let mut child = spawn_mcp(dsn, flags);
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut rpc = Rpc {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = rpc.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "langonrock-tests", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "langonrock");
        rpc.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rpc
    }

    fn send(&mut self, v: &serde_json::Value) {
        use std::io::Write;
        let mut line = v.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub(crate) fn send_request(&mut self, method: &str, params: serde_json::Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        id
    }

    /// Reads the answer with `id` (skipping notifications).
    pub(crate) fn answer(&mut self, id: u64) -> serde_json::Value {
        use std::io::BufRead;
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .expect("read from the server");
            assert!(n > 0, "the server closed stdout");
            let v: serde_json::Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries JSON-RPC only: {e}: {line:?}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    pub(crate) fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.send_request(method, params);
        self.answer(id)
    }

    /// Calls a tool; returns its text and whether it is an error.
    pub(crate) fn call(&mut self, name: &str, args: serde_json::Value) -> (String, bool) {
        let v = self.request(
            "tools/call",
            serde_json::json!({"name": name, "arguments": args}),
        );
        let r = &v["result"];
        (
            r["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            r["isError"].as_bool().unwrap_or(false),
        )
    }

    /// Closes stdin, as a client that ends the session, and waits for the server to exit.
    pub(crate) fn finish(self) -> std::process::ExitStatus {
        let Rpc {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        child.wait().expect("wait for the server")
    }

    /// SIGKILL.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the MCP clients (`tests/mcp_client/*.py`) expect of an empty tenant: per mode
/// (`(name, database_tools, read_only)`), the `tools/list` entries the core table gives,
/// and the manifest resource's description.
pub(crate) fn mcp_expected(modes: &[(&str, bool, bool)]) -> serde_json::Value {
    use langonrock_core::tools::{self, EMPTY_ADVICE};
    let mut out = serde_json::Map::new();
    for (name, db, ro) in modes {
        let entries: Vec<serde_json::Value> = tools::tool_set(*db, *ro)
            .iter()
            .map(|t| t.list_entry(Some(EMPTY_ADVICE)))
            .collect();
        out.insert(name.to_string(), serde_json::Value::Array(entries));
    }
    let resource = tools::tool("manifest").map(|t| t.description_with(Some(EMPTY_ADVICE)));
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "tools": out,
        "resource_description": resource,
    })
}
