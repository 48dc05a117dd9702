"""End-to-end test of MCP over Streamable HTTP (`langonrock serve`, endpoint `/mcp`), driven by
the official MCP Python SDK: the scenarios of e2e.py (every tool, the refusal that carries the
hash and the retry with it, diagnostics, renames, bad input), run against the HTTP server, so
tool texts and replies must be the stdio server's, byte for byte.

Usage: http_e2e.py <base url> <tokens.json> <expected.json> [<unix socket>]

tokens.json maps each tenant to {"write": <token>, "read": <token>}. With a unix socket the
requests go over it (the base URL names no real host) and carry no token: the tenant is
`?tenant=`. expected.json is e2e.py's, with a "read_grant" mode.
"""

import asyncio
import json
import os
import sys
from urllib.parse import urlencode

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import e2e
from e2e import check, equal

BASE, TOKENS_FILE, EXPECTED = sys.argv[1], sys.argv[2], sys.argv[3]
SOCKET = sys.argv[4] if len(sys.argv) > 4 else None
with open(TOKENS_FILE, encoding="utf-8") as f:
    TOKENS = json.load(f)
with open(EXPECTED, encoding="utf-8") as f:
    e2e.EXPECT = json.load(f)


def client(token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx2.AsyncHTTPTransport(uds=SOCKET) if SOCKET else None
    return httpx2.AsyncClient(headers=headers, transport=transport,
                              timeout=httpx2.Timeout(30, read=300))


def endpoint(tenant, flags):
    """The URL and token of a session that gets what e2e.py's server flags ask for."""
    query = {}
    if "--database-tools" in flags:
        query["tools"] = "database"
    elif "--read-only" in flags:
        query["tools"] = "read-only"
    grant = "read" if "--read-grant" in flags else "write"
    if SOCKET:
        query["tenant"] = tenant
        token = None
    else:
        token = TOKENS[tenant][grant]
    url = f"{BASE}/mcp" + (f"?{urlencode(query)}" if query else "")
    return url, token


class HttpServer(e2e.Server):
    """An MCP session with `langonrock serve` over Streamable HTTP."""

    def __init__(self, tenant, *flags):
        self.url, self.token = endpoint(tenant, flags)

    async def __aenter__(self):
        self._http = client(self.token)
        await self._http.__aenter__()
        self._client = streamable_http_client(self.url, http_client=self._http)
        read, write = await self._client.__aenter__()
        self._session = ClientSession(read, write)
        self.s = await self._session.__aenter__()
        self.init = await self.s.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._client.__aexit__(*exc)
        await self._http.__aexit__(*exc)


e2e.Server = HttpServer
# Over HTTP a read grant (or a read-only server) gets the four read tools, whatever it asks.
e2e.MODES = [
    ("default", []),
    ("read_only", ["--read-only"]),
    ("database_tools", ["--database-tools"]),
    ("read_grant", ["--read-grant", "--database-tools"]),
]
if SOCKET:
    # With no tokens any caller may write: there is no read grant to try.
    e2e.MODES = e2e.MODES[:3]


async def read_grant():
    if SOCKET:
        return
    async with HttpServer("e2e", "--read-grant", "--database-tools") as srv:
        names = [t.name for t in (await srv.s.list_tools()).tools]
        equal(names, ["manifest", "search", "get", "snapshot"], "a read grant's tools")
        text = await srv.ok("manifest", {})
        check(text.startswith("# tenant: e2e\n"), text)
        await srv.fails("write", {"bundle": "notes", "path": "x.md", "content": e2e.IDEA},
                        'unknown tool "write"')
        await srv.fails("history", {}, 'unknown tool "history"')
    print("ok: a read grant gets the read tools only")


async def refused():
    if SOCKET:
        return
    # A wrong token never gets a session: the SDK sees the 401.
    url, _ = endpoint("e2e", [])
    try:
        async with client("0" * 64) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as s:
                    await asyncio.wait_for(s.initialize(), timeout=20)
        check(False, "a wrong token opened a session")
    except Exception:  # noqa: BLE001 - any refusal is the expected outcome
        pass
    print("ok: a wrong token is refused")


async def main():
    await e2e.modes()
    await e2e.write_round_trip()
    await e2e.delete_round_trip()
    await e2e.database_tools()
    await read_grant()
    await refused()


async def run_all():
    await main()
    # The SDK's transports can linger on open event streams: the verdict is in.
    sys.stdout.flush()
    os._exit(0)


asyncio.run(e2e.bounded(run_all, timeout=180))
