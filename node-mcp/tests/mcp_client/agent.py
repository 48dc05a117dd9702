"""An MCP client started the way an agent starts a server: from an argv as stored by
`claude mcp add` (NUL-separated in a file) or from a Cursor `mcp.json`, with no shell in
between, and the environment given (HOME, so `okf://~/…` finds the data root).

Usage: agent.py (--argv <file> | --cursor <mcp.json>) <HOME> <query> <id>

It lists the tools, searches for <query> and expects <id> among the hits, then gets <id>.
Prints one line and exits 0, or prints what differed and exits 1.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def fail(what):
    print(f"FAILED: {what}", file=sys.stderr, flush=True)
    os._exit(1)


def command():
    how, where = sys.argv[1], sys.argv[2]
    if how == "--argv":
        with open(where, "rb") as f:
            argv = [a.decode() for a in f.read().split(b"\0") if a]
        return argv[0], argv[1:]
    with open(where, encoding="utf-8") as f:
        server = json.load(f)["mcpServers"]["langonrock"]
    return server["command"], server["args"]


async def main():
    program, args = command()
    home, query, want = sys.argv[3], sys.argv[4], sys.argv[5]
    env = {"HOME": home, "PATH": os.environ["PATH"]}
    params = StdioServerParameters(command=program, args=args, env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = [t.name for t in (await s.list_tools()).tools]
            if tools[:4] != ["manifest", "search", "get", "snapshot"]:
                fail(f"tools: {tools}")
            hits = await s.call_tool("search", {"query": query})
            text = hits.content[0].text
            rows = [line.split("\t")[0] for line in text.splitlines() if not line.startswith("#")]
            if hits.is_error or want not in rows:
                fail(f"search {query!r} did not find {want!r}:\n{text}")
            got = await s.call_tool("get", {"ids": [want]})
            if got.is_error or not got.content[0].text.startswith(f"@@ {want}"):
                fail(f"get {want}: {got.content[0].text}")
    print(f"ok: {program} {' '.join(args)}: {len(tools)} tools, search and get answered")


asyncio.run(main())
