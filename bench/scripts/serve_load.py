#!/usr/bin/env python3
"""Load benchmark of `langonrock serve` (docs/benchmarks.md, "HTTP server under load").

usage: serve_load.py [--concepts 20000] [--tenants 1] [--connections 64] [--threads 2]
                     [--seconds 20] [--workers N] [--routes search,get] [--no-writer]
                     [--bin target/release/langonrock]
                     [--bench target/release/langonrock-bench] [--work DIR] [--keep]

Generates the reference corpus (`langonrock-bench generate`), imports it into each tenant of
a fresh data root, mints a write token per tenant and starts `serve` on a loopback port.
Then, for `search` and for `get` in turn, wrk (Debian: `apt-get install wrk`) drives
`--connections` connections for `--seconds` with random requests spread over the tenants,
while a writer commits once a second (round robin over the tenants) and checks that the
next read shows each commit. Prints, per route: requests/s, p50 and p99 latency, failed
requests, the server's CPU (percent of one core) and RSS, and the writer's commits and
misses. `--no-writer` runs the same load without the writer: the latency floor of the
connections on the machine's cores, to compare with what the commits add. Nothing here is a
test: it prints numbers.
"""

import argparse
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def proc_cpu_seconds(pid):
    """(user, system) CPU seconds of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def proc_memory_mib(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


class Server:
    """`serve` on a loopback port; its request log goes to a file (as an operator's would),
    read once at the end, so the harness spends no CPU on it during the runs."""

    def __init__(self, binary, data, log_path, workers=None):
        self.log_path = log_path
        self.log = open(log_path, "w+")
        env = dict(os.environ)
        if workers:
            env["LANGONROCK_SERVE_WORKERS"] = str(workers)
        self.p = subprocess.Popen([binary, "serve", "--data", data, "--host", "127.0.0.1", "--port", "0"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=self.log, text=True, env=env)
        deadline = time.time() + 120
        while True:
            with open(log_path) as f:
                banner = f.readline()
            m = re.search(r" on 127\.0\.0\.1:(\d+) ", banner)
            if m:
                break
            if self.p.poll() is not None or time.time() > deadline:
                raise SystemExit(f"serve did not start: {banner}")
            time.sleep(0.05)
        self.port = int(m.group(1))

    def counts(self):
        """(request lines, lines with a 4xx/5xx status) of the log so far."""
        logged = errors = 0
        with open(self.log_path) as f:
            next(f, None)
            for line in f:
                parts = line.split(" ")
                if len(parts) == 5:
                    logged += 1
                    if parts[2][:1] in "45":
                        errors += 1
        return logged, errors

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)
        self.log.close()


def request(port, method, path, token, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    h = {"Authorization": f"Bearer {token}"}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


class Writer(threading.Thread):
    """Commits once a second, round robin over the tenants, and checks the next read."""

    def __init__(self, port, tokens):
        super().__init__(daemon=True)
        self.port, self.tokens = port, tokens
        self.stop = threading.Event()
        self.commits = self.misses = self.failures = 0
        self.n = 0

    def run(self):
        while not self.stop.wait(1.0):
            token = self.tokens[self.n % len(self.tokens)]
            self.n += 1
            doc = f"---\ntype: note\n---\nWriter note {self.n} about revenue and orders.\n"
            status, body = request(self.port, "PUT", f"/v1/source/bench-writes/w{self.n}-{time.time_ns()}.md",
                                   token, doc.encode(),
                                   {"If-None-Match": "*", "Content-Type": "text/markdown"})
            if status != 200:
                self.failures += 1
                continue
            self.commits += 1
            wanted = json.loads(body)["snapshot"]
            status, body = request(self.port, "GET", "/v1/snapshot", token)
            if status != 200 or json.loads(body)["snapshot"] != wanted:
                self.misses += 1


def lua_list(items):
    return "{" + ",".join(json.dumps(i) for i in items) + "}"


def wrk(args, port, route, bodies, tokens, workdir):
    script = os.path.join(workdir, f"{route}.lua")
    with open(script, "w") as f:
        f.write(f"""
local bodies = {lua_list(bodies)}
local tokens = {lua_list(["Bearer " + t for t in tokens])}
math.randomseed(os.time())
request = function()
  local h = {{["Authorization"] = tokens[math.random(#tokens)], ["Content-Type"] = "application/json"}}
  return wrk.format("POST", "/v1/{route}", h, bodies[math.random(#bodies)])
end
""")
    cmd = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{args.seconds}s",
           "--latency", "--timeout", "10s", "-s", script, f"http://127.0.0.1:{port}"]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    def grab(pattern, default=None):
        m = re.search(pattern, out)
        return m.group(1) if m else default
    def ms(v):
        n = float(re.match(r"[\d.]+", v).group(0))
        return n / 1000 if v.endswith("us") else n * 1000 if v.endswith("s") and not v.endswith("ms") else n
    total = int(grab(r"(\d+) requests in"))
    errors = int(grab(r"Non-2xx or 3xx responses: (\d+)", "0"))
    socket = grab(r"Socket errors: (.*)")
    socket_errors = sum(int(x) for x in re.findall(r"\d+", socket)) if socket else 0
    return {
        "rps": float(grab(r"Requests/sec:\s+([\d.]+)")),
        "p50": ms(grab(r"\s50%\s+(\S+)")),
        "p99": ms(grab(r"\s99%\s+(\S+)")),
        "requests": total,
        "failed": errors + socket_errors,
        "raw": out,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concepts", type=int, default=20000)
    ap.add_argument("--tenants", type=int, default=1)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--bin", default="target/release/langonrock")
    ap.add_argument("--bench", default="target/release/langonrock-bench")
    ap.add_argument("--workers", type=int,
                    help="the server's async workers (LANGONROCK_SERVE_WORKERS, docs/http.md §7)")
    ap.add_argument("--routes", default="search,get")
    ap.add_argument("--no-writer", action="store_true",
                    help="no commits during the runs (the latency floor without the writer)")
    ap.add_argument("--work")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is missing: apt-get install wrk")
    work = args.work or tempfile.mkdtemp(prefix="langonrock-serve-load-")
    corpus, data = os.path.join(work, "corpus"), os.path.join(work, "data")
    env = dict(os.environ, LANGONROCK_DATA=data)
    if not os.path.isdir(corpus):
        run([args.bench, "generate", corpus, "--bundles", str(args.concepts // 500)])
    tenants = [f"t{i}" for i in range(args.tenants)]
    tokens = []
    for t in tenants:
        if not os.path.isdir(os.path.join(data, "tenants", t)):
            started = time.perf_counter()
            run([args.bin, "import", corpus, "--tenant", t], env=env)
            print(f"imported {args.concepts} concepts into {t} in {time.perf_counter() - started:.1f} s",
                  flush=True)
        tokens.append(run([args.bin, "token", "--tenant", t, "--write"], env=env).stdout.decode().strip())
    srv = Server(args.bin, data, os.path.join(work, "serve.log"), args.workers)
    try:
        # The ids and the queries come from the served manifest.
        status, body = request(srv.port, "GET", "/v1/manifest", tokens[0])
        rows = [line.split("\t") for line in body.decode().splitlines()[3:]]
        rng = random.Random(7)
        ids = [r[0] for r in rng.sample(rows, min(2000, len(rows)))]
        words = [w for r in rows for w in re.findall(r"[a-z]{4,}", r[5].lower())]
        queries = [" ".join(rng.sample(words, 2)) for _ in range(500)]
        search_bodies = [json.dumps({"q": q}) for q in queries]
        get_bodies = [json.dumps({"ids": [i]}) for i in ids]
        # Warm every tenant (open, index) before measuring.
        for t in tokens:
            request(srv.port, "POST", "/v1/search", t, search_bodies[0].encode(), {"Content-Type": "application/json"})
            request(srv.port, "POST", "/v1/get", t, get_bodies[0].encode(), {"Content-Type": "application/json"})
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
              f"(uptime's 1/5/15 min), {os.cpu_count()} cores; {args.tenants} tenant(s) of {args.concepts} concepts, "
              f"{args.connections} connections, {args.seconds} s per route"
              f"{', no writer' if args.no_writer else ''}", flush=True)
        print("| route | requests/s | p50 ms | p99 ms | failed | server CPU | CPU per request | server RSS MiB (peak) | commits | missed | load |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        routes = {"search": search_bodies, "get": get_bodies}
        for route in args.routes.split(","):
            bodies = routes[route]
            writer = Writer(srv.port, tokens)
            (user0, sys0), t0 = proc_cpu_seconds(srv.p.pid), time.perf_counter()
            if not args.no_writer:
                writer.start()
            r = wrk(args, srv.port, route, bodies, tokens, work)
            writer.stop.set()
            if not args.no_writer:
                writer.join()
            user1, sys1 = proc_cpu_seconds(srv.p.pid)
            cpu_s = (user1 - user0) + (sys1 - sys0)
            cpu = cpu_s / (time.perf_counter() - t0) * 100
            per = cpu_s / max(r["requests"], 1) * 1e6
            per_sys = (sys1 - sys0) / max(r["requests"], 1) * 1e6
            mem = proc_memory_mib(srv.p.pid)
            print(f"| {route} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['failed'] + writer.failures} | "
                  f"{cpu:.0f} % | {per:.0f} µs ({per_sys:.0f} µs system) | {mem['VmRSS']:,.0f} ({mem['VmHWM']:,.0f}) | {writer.commits} | "
                  f"{writer.misses} | {os.getloadavg()[0]:.1f} |", flush=True)
            if os.environ.get("SERVE_LOAD_RAW"):
                print(r["raw"])
        time.sleep(0.5)
        logged, errors = srv.counts()
        print(f"server log: {logged} request lines, {errors} with a 4xx/5xx status")
    finally:
        srv.stop()
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
