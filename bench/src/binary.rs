//! The real `langonrock` binary, driven as its users drive it: the CLI's `import`, and
//! `langonrock mcp` spawned and spoken to over stdio JSON-RPC (newline-delimited messages,
//! as the MCP stdio transport carries them).

use crate::billing::EVAL_DATE;
use crate::host::TENANT;
use crate::measure::{children_cpu_ms, ms, process_cpu_ns, status_kb};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The binary: `$LANGONROCK_BIN`, else `langonrock` next to this executable (the same
/// cargo target folder).
pub fn find_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LANGONROCK_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let bin = exe.with_file_name("langonrock");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "{} not found: run `cargo build --release -p langonrock-node-mcp` first (or set LANGONROCK_BIN)",
            bin.display()
        ))
    }
}

/// The DSN of tenant [`TENANT`] under the data root `data` (an absolute path).
pub fn dsn(data: &Path) -> String {
    format!("okf://{}?tenant={TENANT}", data.display())
}

/// A running `langonrock mcp`.
pub struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next: u64,
    /// When the process was spawned.
    pub spawned: Instant,
}

impl Mcp {
    /// Spawns `bin mcp <dsn> <flags>` with the read date pinned to [`EVAL_DATE`].
    pub fn spawn(bin: &Path, data: &Path, flags: &[&str]) -> Result<Mcp, String> {
        Mcp::spawn_dsn(bin, &dsn(data), flags, &[])
    }

    /// Spawns `bin mcp <dsn> <flags>` with `env` added and the read date pinned.
    pub fn spawn_dsn(
        bin: &Path,
        dsn: &str,
        flags: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Mcp, String> {
        let spawned = Instant::now();
        let mut child = Command::new(bin)
            .arg("mcp")
            .arg(dsn)
            .args(flags)
            .envs(env.iter().copied())
            .env("LANGONROCK_TODAY", EVAL_DATE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", bin.display()))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Mcp {
            child,
            stdin,
            stdout,
            next: 1,
            spawned,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, v: &Value) -> Result<(), String> {
        let mut line = v.to_string();
        line.push('\n');
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("cannot write to the server: {e}"))
    }

    /// Sends a request and returns its response (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| format!("cannot read from the server: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the server closed stdout before answering {method}"
                ));
            }
            let v: Value = serde_json::from_str(line.trim())
                .map_err(|e| format!("not JSON-RPC from the server: {e}: {line}"))?;
            if v.get("id") == Some(&json!(id)) {
                if let Some(err) = v.get("error") {
                    return Err(format!("{method} failed: {err}"));
                }
                return Ok(v);
            }
        }
    }

    /// `initialize`, then the `initialized` notification.
    pub fn initialize(&mut self) -> Result<Value, String> {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "langonrock-bench", "version": "0"}}),
        )?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(r)
    }

    /// `tools/call`: the reply text and whether it is an error result.
    pub fn call(&mut self, tool: &str, args: &Value) -> Result<(String, bool), String> {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        let result = &r["result"];
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("");
        Ok((text, result["isError"].as_bool().unwrap_or(false)))
    }

    /// `tools/list`: the tool entries as sent.
    pub fn tools(&mut self) -> Result<Vec<Value>, String> {
        let r = self.request("tools/list", json!({}))?;
        r["result"]["tools"]
            .as_array()
            .cloned()
            .ok_or_else(|| format!("tools/list without tools: {r}"))
    }

    /// The process's on-CPU time so far (all threads) in ms, and its peak RSS in KiB.
    pub fn usage(&self) -> (Option<f64>, Option<u64>) {
        let pid = self.pid();
        (
            process_cpu_ns(pid).map(|n| n as f64 / 1e6),
            status_kb(Some(pid), "VmHWM"),
        )
    }

    /// Closes stdin and waits for the process to exit.
    pub fn finish(mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let status = self
            .child
            .wait()
            .map_err(|e| format!("cannot wait for the server: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("the server exited with {status}"))
        }
    }
}

/// One cold start: spawn, initialize, first search answered.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ColdStart {
    /// Spawn to the `initialize` response, ms.
    pub initialize_ms: f64,
    /// Spawn to the first search's answer, ms.
    pub first_search_ms: f64,
    /// The server's on-CPU time until then, ms.
    pub cpu_ms: Option<f64>,
    /// The server's peak RSS after the first search, KiB.
    pub peak_rss_kb: Option<u64>,
    /// The answer's length in UTF-16 units.
    pub answer_units: usize,
}

/// Spawns `langonrock mcp` over `data`, initializes, runs one search and measures.
pub fn cold_first_search(bin: &Path, data: &Path, query: &str) -> Result<ColdStart, String> {
    let mut mcp = Mcp::spawn(bin, data, &[])?;
    mcp.initialize()?;
    let initialize_ms = ms(mcp.spawned.elapsed());
    let (text, is_error) = mcp.call("search", &json!({"query": query}))?;
    let first_search_ms = ms(mcp.spawned.elapsed());
    if is_error || !text.starts_with("# tenant: ") {
        return Err(format!("the first search failed: {text}"));
    }
    let (cpu_ms, peak_rss_kb) = mcp.usage();
    mcp.finish()?;
    Ok(ColdStart {
        initialize_ms,
        first_search_ms,
        cpu_ms,
        peak_rss_kb,
        answer_units: text.encode_utf16().count(),
    })
}

/// A CLI run's cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CliRun {
    /// Wall clock, ms.
    pub wall_ms: f64,
    /// The child's user + system CPU time, ms (10 ms resolution).
    pub cpu_ms: Option<f64>,
    /// Its stdout.
    pub stdout: String,
}

/// `langonrock import <dir> --data <data> --tenant bench`, with the read date pinned to
/// [`EVAL_DATE`] like the servers', so its derived record is dated as they read.
pub fn import(bin: &Path, dir: &Path, data: &Path) -> Result<CliRun, String> {
    let c0 = children_cpu_ms();
    let t = Instant::now();
    let out = Command::new(bin)
        .env("LANGONROCK_TODAY", EVAL_DATE)
        .arg("import")
        .arg(dir)
        .arg("--data")
        .arg(data)
        .args(["--tenant", TENANT])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let wall_ms = ms(t.elapsed());
    let cpu_ms = match (c0, children_cpu_ms()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    if !out.status.success() {
        return Err(format!(
            "import failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(CliRun {
        wall_ms,
        cpu_ms,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    })
}

/// The tool-definition token tax of one MCP mode (agent.md §5.1), measured on the real
/// server's `tools/list`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tax {
    /// The flags the server ran with.
    pub flags: Vec<String>,
    /// The tool names, in order.
    pub tools: Vec<String>,
    /// UTF-16 units of the entries' compact JSON, as sent (the manifest tool carries the
    /// advice sentence measured at startup).
    pub chars_as_sent: usize,
    /// The same without the advice sentence: the measure of agent.md §5.1.
    pub chars: usize,
    /// `ceil(chars / 4)`.
    pub tokens: usize,
    /// `ceil(chars_as_sent / 4)`.
    pub tokens_as_sent: usize,
    /// What core's `tools::token_tax` computes from the table for the same set.
    pub table_tokens: usize,
}

/// Spawns the server with `flags`, reads `tools/list`, and measures it.
pub fn tax(bin: &Path, data: &Path, flags: &[&str]) -> Result<Tax, String> {
    use langonrock_core::tools;
    let mut mcp = Mcp::spawn(bin, data, flags)?;
    mcp.initialize()?;
    let entries = mcp.tools()?;
    mcp.finish()?;
    let units = |v: &Value| v.to_string().encode_utf16().count();
    let mut chars_as_sent = 0;
    let mut chars = 0;
    let mut names = Vec::new();
    for e in &entries {
        chars_as_sent += units(e);
        let name = e["name"].as_str().unwrap_or_default().to_string();
        let mut bare = e.clone();
        if let (Some(t), Some(d)) = (tools::tool(&name), e["description"].as_str()) {
            if d.len() > t.description.len() && d.starts_with(t.description) {
                bare["description"] = json!(t.description);
            }
        }
        chars += units(&bare);
        names.push(name);
    }
    let database = flags.contains(&"--database-tools");
    let read_only = flags.contains(&"--read-only");
    let (_, table_tokens) = tools::token_tax(&tools::tool_set(database, read_only));
    Ok(Tax {
        flags: flags.iter().map(|s| s.to_string()).collect(),
        tools: names,
        chars_as_sent,
        chars,
        tokens: chars.div_ceil(4),
        tokens_as_sent: chars_as_sent.div_ceil(4),
        table_tokens,
    })
}
