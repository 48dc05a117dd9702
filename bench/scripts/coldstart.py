#!/usr/bin/env python3
"""Cold start of the native binary: CLI `search` and an MCP session (spawn, initialize, first
search answered), timed end to end with wall-clock time.

usage: coldstart.py <langonrock binary> <data dir> <tenant> [--runs N] [--query Q]

Prints one line per measurement: the median and the min of N runs, in milliseconds.
"""
import argparse
import json
import statistics
import subprocess
import time


def cli_search(binary, data, tenant, query):
    t = time.perf_counter()
    p = subprocess.run([binary, "search", query, "--data", data, "--tenant", tenant],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    ms = (time.perf_counter() - t) * 1000
    return ms, p.stdout


def mcp_search(binary, data, tenant, query):
    t = time.perf_counter()
    p = subprocess.Popen([binary, "mcp", f"okf://{data}?tenant={tenant}"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        p.stdin.flush()

    def answer(want):
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "coldstart", "version": "0"}}})
    answer(1)
    t_init = (time.perf_counter() - t) * 1000
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "search", "arguments": {"query": query}}})
    msg = answer(2)
    ms = (time.perf_counter() - t) * 1000
    p.stdin.close()
    p.wait()
    if msg.get("result", {}).get("isError"):
        raise SystemExit(f"search failed: {msg}")
    return ms, t_init, msg["result"]["content"][0]["text"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("data")
    ap.add_argument("tenant")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--query", default="foo")
    a = ap.parse_args()
    cli = [cli_search(a.binary, a.data, a.tenant, a.query)[0] for _ in range(a.runs)]
    mcp = [mcp_search(a.binary, a.data, a.tenant, a.query) for _ in range(a.runs)]
    init = [m[1] for m in mcp]
    first = [m[0] for m in mcp]
    print(f"cli search:                 median {statistics.median(cli):7.1f} ms  min {min(cli):7.1f} ms")
    print(f"mcp initialize answered:    median {statistics.median(init):7.1f} ms  min {min(init):7.1f} ms")
    print(f"mcp first search answered:  median {statistics.median(first):7.1f} ms  min {min(first):7.1f} ms")


if __name__ == "__main__":
    main()
