#!/usr/bin/env python3
"""Issue 15's figures, measured on the real binary as a user runs it.

usage: speed.py <target dir, e.g. target/release> [--sizes 500,5000,20000] [--runs N]
                [--edits N] [--work DIR]
                [--parts import,compile,cold,write,edit,foreign,node]
                [--env K=V]...

Per size: the reference corpus is generated (`langonrock-bench generate`, checked against
CHECKSUMS by the bench's own tests), then, each on a fresh data root where it says so:
- `import`: `langonrock import <tree>` into an empty data root; wall, CPU (user + system of
  the child, from wait4), and the data root's size afterwards (every file, `du -b` style);
- `compile`: the whole-process `langonrock compile <tree>` (stdout to /dev/null);
- `cold`: spawn `langonrock mcp`, `initialize`, first `tools/call search` answered; wall from
  spawn, the server's CPU (its process CPU-time clock, every thread's) and peak RSS (VmHWM)
  at that moment;
- `write`: a one-line CLI `langonrock write … --force` on the imported tenant; wall, CPU and
  bytes added to the data root;
- `edit`: in one warm `langonrock mcp`, the first write after the open, then N times a write
  of a unique marker followed by a search for it (the concept must come first): wall of
  write + search, p50 / p99;
- `foreign`: a warm server, another process commits (CLI write), then the server's next
  `search` answered (its refresh applies the difference): wall of that call;
- `node` (opt-in, needs the wasm package built: `bash scripts/wasm-build.sh`): the npm
  package's files store imports the same tree into a fresh data root in Node
  (pkg/bench/files-import.mjs); wall and CPU, the ratio to the native import's p50 (the
  `import` part), and whether both gave the same snapshot; then the main thread's CPU and
  the other threads' (Linux), and the wall time of a second import in the same process
  (`--warm`: the module's code optimised by then).
Prints one table row per figure and size; all times in ms.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TENANT = "bench"
TODAY = "2026-09-21"
# Extra environment of every langonrock process (--env K=V).
EXTRA = {}


def du(path):
    total = 0
    for root, dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except FileNotFoundError:
                pass
    return total


def run_cpu(cmd, stdin=None, stderr=False):
    """Runs cmd; returns (wall ms, CPU ms (user + system), stdout, or stderr as text)."""
    env = dict(os.environ, LANGONROCK_TODAY=TODAY, **EXTRA)
    out_f = tempfile.TemporaryFile()
    err_f = tempfile.TemporaryFile()
    in_f = None
    if stdin is not None:
        in_f = tempfile.TemporaryFile()
        in_f.write(stdin)
        in_f.seek(0)
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=in_f or subprocess.DEVNULL, stdout=out_f, stderr=err_f, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    out_f.seek(0)
    err_f.seek(0)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err_f.read().decode()[:500]}")
    if stderr:
        return wall, (ru.ru_utime + ru.ru_stime) * 1000, err_f.read().decode()
    return wall, (ru.ru_utime + ru.ru_stime) * 1000, out_f.read()


class Mcp:
    def __init__(self, binary, data):
        env = dict(os.environ, LANGONROCK_TODAY=TODAY, **EXTRA)
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen([binary, "mcp", f"okf://{data}?tenant={TENANT}"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.next = 1

    def request(self, method, params):
        i = self.next
        self.next += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == i:
                if "error" in msg:
                    raise SystemExit(f"{method}: {msg['error']}")
                return msg["result"]

    def initialize(self):
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "speed", "version": "0"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        return r

    def call(self, tool, args):
        r = self.request("tools/call", {"name": tool, "arguments": args})
        text = r["content"][0]["text"]
        if r.get("isError"):
            raise SystemExit(f"{tool} failed: {text}")
        return text

    def cpu_ms(self):
        """On-CPU time of the server so far, every thread's, those that ended included: the
        process's CPU-time clock (Linux: clock id `(~pid << 3) | 2`, nanoseconds). Summing
        the threads' schedstat instead (before session 8) missed the threads that had ended,
        such as the one that decodes a derived record's index beside the model (about a
        third of the cold open's CPU)."""
        try:
            return time.clock_gettime(((~self.p.pid) << 3) | 2) * 1000
        except (OSError, OverflowError):
            pass
        total = 0
        tasks = f"/proc/{self.p.pid}/task"
        for t in os.listdir(tasks):
            try:
                with open(f"{tasks}/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:
                pass
        return total / 1e6

    def hwm_mib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def first_row(search):
    """The first result row of a search answer (after the `#` lines and the header row)."""
    rows = [line for line in search.splitlines() if line and not line.startswith("#")]
    return rows[1] if len(rows) > 1 else ""


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def row(size, what, walls, cpus=None, extra=""):
    w = f"{statistics.median(walls):9.1f}"
    c = f"{statistics.median(cpus):9.1f}" if cpus else " " * 9
    print(f"{size:>6} | {what:<34} | wall p50 {w} | cpu p50 {c} | n {len(walls):3} {extra}",
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("--sizes", default="500,5000,20000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--work", default=None)
    ap.add_argument("--parts", default="import,compile,cold,write,edit,foreign")
    ap.add_argument("--env", action="append", default=[],
                    help="K=V added to every langonrock process (e.g. LANGONROCK_HUGE_PAGES=0)")
    a = ap.parse_args()
    for kv in a.env:
        k, _, v = kv.partition("=")
        EXTRA[k] = v
    binary = os.path.abspath(os.path.join(a.target, "langonrock"))
    bench = os.path.abspath(os.path.join(a.target, "langonrock-bench"))
    parts = set(a.parts.split(","))
    work = a.work or tempfile.mkdtemp(prefix="langonrock-speed-")
    os.makedirs(work, exist_ok=True)
    print(f"binary {binary}; env {EXTRA}; load {os.getloadavg()[0]:.2f}", flush=True)
    try:
        for size in [int(s) for s in a.sizes.split(",")]:
            tree = os.path.join(work, f"tree-{size}")
            shutil.rmtree(tree, ignore_errors=True)
            subprocess.run([bench, "generate", tree, "--bundles", str(size // 500)],
                           check=True, stdout=subprocess.DEVNULL)
            data = os.path.join(work, f"data-{size}")
            # import: fresh data root each run; the last one is kept for the rest.
            walls, cpus, sizes = [], [], []
            native_snapshot = None
            for _ in range(a.runs if "import" in parts else 1):
                shutil.rmtree(data, ignore_errors=True)
                w, c, err = run_cpu([binary, "import", tree, "--data", data, "--tenant", TENANT],
                                    stderr=True)
                line = [x for x in err.splitlines() if x.startswith("snapshot ")]
                native_snapshot = line[0].split()[1] if line else None
                walls.append(w)
                cpus.append(c)
                sizes.append(du(data))
            if "import" in parts:
                row(size, "import", walls, cpus,
                    f"| data root {statistics.median(sizes) / 1e6:.1f} MB")
            # The native import's figures, for the Node part's ratios.
            iwalls, icpus = walls, cpus
            if "compile" in parts:
                walls, cpus = [], []
                for _ in range(a.runs):
                    w, c, _ = run_cpu([binary, "compile", tree])
                    walls.append(w)
                    cpus.append(c)
                row(size, "compile (whole process)", walls, cpus)
            if "cold" in parts:
                # The first open after import may write the derived record: do it once untimed.
                m = Mcp(binary, data)
                m.initialize()
                m.call("search", {"query": "orders"})
                m.close()
                walls, cpus, rss = [], [], []
                for _ in range(a.runs):
                    m = Mcp(binary, data)
                    m.initialize()
                    m.call("search", {"query": "orders"})
                    walls.append((time.perf_counter() - m.t0) * 1000)
                    cpus.append(m.cpu_ms())
                    rss.append(m.hwm_mib())
                    m.close()
                row(size, "cold first search (mcp)", walls, cpus,
                    f"| peak RSS p50 {statistics.median(rss):.1f} MiB, max {max(rss):.1f}")
            if "write" in parts:
                walls, cpus, added = [], [], []
                for i in range(a.runs):
                    before = du(data)
                    w, c, _ = run_cpu([binary, "write", "bundle-001", "speed-cli.md", "--force",
                                       "--data", data, "--tenant", TENANT],
                                      stdin=f"One line, run {i} at {time.time()}.\n".encode())
                    walls.append(w)
                    cpus.append(c)
                    added.append(du(data) - before)
                row(size, "one-line CLI write", walls, cpus,
                    f"| added p50 {statistics.median(added) / 1e3:.1f} kB, max {max(added) / 1e3:.1f} kB")
            if "edit" in parts:
                m = Mcp(binary, data)
                m.initialize()
                m.call("search", {"query": "orders"})
                firsts = []
                t = time.perf_counter()
                m.call("write", {"bundle": "bundle-001", "path": "speed-edit-0.md",
                                 "content": "The first write after open.\n"})
                firsts.append((time.perf_counter() - t) * 1000)
                walls = []
                for i in range(a.edits):
                    marker = f"zqmarker{i}x{int(time.time() * 1000) % 100000}"
                    t = time.perf_counter()
                    m.call("write", {"bundle": "bundle-001", "path": f"speed-edit-{i + 1}.md",
                                     "content": f"Edit {marker} for the speed run.\n"})
                    out = m.call("search", {"query": marker})
                    walls.append((time.perf_counter() - t) * 1000)
                    if not first_row(out).startswith(f"speed-edit-{i + 1}\t"):
                        raise SystemExit(f"edit {i}: search did not put the edit first: {out[:300]}")
                m.close()
                row(size, "first write after open (mcp)", firsts)
                row(size, "edit -> search (mcp, files)", walls, None,
                    f"| p99 {pct(walls, 99):.1f}")
            if "foreign" in parts:
                walls = []
                m = Mcp(binary, data)
                m.initialize()
                m.call("search", {"query": "orders"})
                for i in range(a.runs):
                    marker = f"zqforeign{i}x{int(time.time() * 1000) % 100000}"
                    run_cpu([binary, "write", "bundle-002", f"speed-foreign-{i}.md", "--force",
                             "--data", data, "--tenant", TENANT],
                            stdin=f"Foreign {marker}.\n".encode())
                    t = time.perf_counter()
                    out = m.call("search", {"query": marker})
                    walls.append((time.perf_counter() - t) * 1000)
                    if f"speed-foreign-{i}" not in out:
                        raise SystemExit(f"foreign {i}: the server did not see the commit: {out[:300]}")
                m.close()
                row(size, "first read after another's commit", walls)
            # Last of each size: right after the Node imports (each touches and frees some
            # 400 MB at 20,000 concepts), the native compile and cold open measured 20-75 %
            # slower on the project's virtual machines (docs/benchmarks.md, "Session 16").
            if "node" in parts:
                pkg = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pkg")
                nwalls, ncpus, same = [], [], True
                mains, others, warms = [], [], []
                for _ in range(a.runs):
                    jsdata = os.path.join(work, f"js-data-{size}")
                    shutil.rmtree(jsdata, ignore_errors=True)
                    out = subprocess.run(["node", "bench/files-import.mjs", tree, jsdata, TENANT,
                                          "--warm"],
                                         cwd=pkg, check=True, capture_output=True, text=True)
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    nwalls.append(r["wallMs"])
                    ncpus.append(r["cpuMs"])
                    if r.get("mainCpuMs") is not None:
                        mains.append(r["mainCpuMs"])
                        others.append(r["otherCpuMs"])
                    warms.append(r["warmWallMs"])
                    same = same and native_snapshot is not None and \
                        r["snapshot"].startswith(native_snapshot)
                    shutil.rmtree(jsdata, ignore_errors=True)
                ratio = statistics.median(nwalls) / statistics.median(iwalls)
                cratio = statistics.median(ncpus) / statistics.median(icpus)
                row(size, "Node files store import", nwalls, ncpus,
                    f"| {ratio:.2f}x native wall, {cratio:.2f}x CPU; same snapshot: {same}")
                if mains:
                    print(f"{size:>6} | {'… CPU by thread, p50':<34} | main thread "
                          f"{statistics.median(mains):7.0f} | the other threads (V8's compiler "
                          f"and collector, libuv) {statistics.median(others):7.0f}", flush=True)
                row(size, "… a second import in the process", warms, None,
                    f"| {statistics.median(warms) / statistics.median(iwalls):.2f}x native wall")
            shutil.rmtree(tree, ignore_errors=True)
            shutil.rmtree(data, ignore_errors=True)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
