"""End-to-end test of `langonrock mcp` driven by the official MCP Python SDK (`pip install mcp`).

Usage: e2e.py <langonrock binary> <data root> <expected.json>

expected.json holds, per mode, the tools/list entries the core table gives for an empty
tenant, and the manifest resource's description. Every check prints what it compared on
failure and the script exits 1; on success it prints one line per scenario and exits 0.
"""

import asyncio
import hashlib
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# Set from the command line below, or by a script that imports this one (http_e2e.py runs
# the same scenarios over Streamable HTTP).
BIN = DATA = EXPECT = None
if __name__ == "__main__":
    BIN, DATA, EXPECTED = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(EXPECTED, encoding="utf-8") as f:
        EXPECT = json.load(f)

HEX = "[0-9a-f]{64}"
CHANGED = "re-read the concept and retry with its new hash"


def check(cond, what):
    # Fail at once: unwinding through the SDK's context managers can wait on the server.
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr, flush=True)
        os._exit(1)


def equal(got, want, what):
    check(got == want, f"{what}:\n  got:  {got!r}\n  want: {want!r}")


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Server:
    """One `langonrock mcp` process and its client session."""

    def __init__(self, tenant, *flags):
        self.params = StdioServerParameters(
            command=BIN,
            args=["mcp", f"okf://{DATA}?tenant={tenant}", *flags],
            env={"LANGONROCK_TODAY": "2026-06-01", "PATH": "/usr/bin:/bin"},
        )

    async def __aenter__(self):
        self._client = stdio_client(self.params)
        read, write = await self._client.__aenter__()
        self._session = ClientSession(read, write)
        self.s = await self._session.__aenter__()
        self.init = await self.s.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._client.__aexit__(*exc)

    async def call(self, name, args):
        r = await self.s.call_tool(name, args)
        check(len(r.content) == 1, f"{name}: one text block, got {r.content!r}")
        return r.content[0].text, bool(r.is_error)

    async def ok(self, name, args):
        text, err = await self.call(name, args)
        check(not err, f"{name} {args!r} failed: {text}")
        return text

    async def fails(self, name, args, want=None):
        text, err = await self.call(name, args)
        check(err, f"{name} {args!r} should fail, answered: {text}")
        if want is not None:
            equal(text, want, f"{name} {args!r}")
        return text


MODES = [
    ("default", []),
    ("read_only", ["--read-only"]),
    ("database_tools", ["--database-tools"]),
    ("read_only_database_tools", ["--read-only", "--database-tools"]),
]


async def modes():
    for mode, flags in MODES:
        async with Server(f"empty-{mode.replace('_', '-')}", *flags) as srv:
            info = srv.init.server_info
            equal((info.name, info.version), ("langonrock", EXPECT["version"]), "server identity")
            tools = (await srv.s.list_tools()).tools
            got = [
                {
                    "name": t.name,
                    "title": t.title,
                    "description": t.description,
                    "inputSchema": t.input_schema,
                    "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)
                    if t.annotations else None,
                }
                for t in tools
            ]
            equal(got, EXPECT["tools"][mode], f"tools/list in mode {mode}")
            res = (await srv.s.list_resources()).resources
            equal(len(res), 1, "one resource")
            r = res[0]
            equal(
                (str(r.uri), r.name, r.title, r.mime_type, r.description),
                ("okf://manifest", "manifest", "Knowledge manifest",
                 "text/tab-separated-values", EXPECT["resource_description"]),
                "the manifest resource",
            )
            read = await srv.s.read_resource("okf://manifest")
            equal(read.contents[0].text,
                  f"# tenant: empty-{mode.replace('_', '-')}\n# bundles:\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n",
                  "the empty manifest resource")
            equal(read.contents[0].mime_type, "text/tab-separated-values", "resource mime type")
            # A tool outside the mode is unknown; a tool error never ends the connection.
            if "write" not in [t.name for t in tools]:
                await srv.fails("write", {"bundle": "b", "path": "a.md", "content": "x"},
                                'unknown tool "write"')
            if "transact" not in [t.name for t in tools]:
                await srv.fails("transact", {"changes": []}, 'unknown tool "transact"')
            await srv.ok("snapshot", {})
        print(f"ok: tools/list, resources and identity in mode {mode}")


IDEA = "---\ntype: idea\n---\nA first idea.\n"
IDEA2 = "---\ntype: idea\n---\nA better idea.\n"


async def write_round_trip():
    async with Server("e2e") as srv:
        text = await srv.ok("write", {"bundle": "notes", "path": "idea.md", "content": IDEA})
        h1 = sha(IDEA)
        m = re.fullmatch(rf"wrote notes/idea\.md \(hash {h1}\), snapshot ({HEX}), 1 concepts\nid idea", text)
        check(m, f"write success text: {text!r}")
        # Without replaces on an existing document: refused, with the hash to retry with.
        await srv.fails("write", {"bundle": "notes", "path": "idea.md", "content": IDEA2},
                        f'concept already exists: {CHANGED}\nretry with replaces: "{h1}"')
        text = await srv.ok("write", {"bundle": "notes", "path": "idea.md", "content": IDEA2,
                                      "replaces": h1})
        h2 = sha(IDEA2)
        check(text.startswith(f"wrote notes/idea.md (hash {h2}), snapshot "), text)
        # A stale hash: refused with the current one.
        await srv.fails("write", {"bundle": "notes", "path": "idea.md", "content": IDEA,
                                  "replaces": h1},
                        f'concept changed since it was read: {CHANGED}\nretry with replaces: "{h2}"')
        # replaces naming no document.
        await srv.fails("write", {"bundle": "notes", "path": "nothing.md", "content": IDEA,
                                  "replaces": h1},
                        f"concept does not exist: {CHANGED}\nomit replaces to create it")
        # A malformed hash, on an existing document: the engine's message and the retry line.
        await srv.fails("write", {"bundle": "notes", "path": "idea.md", "content": IDEA,
                                  "replaces": "abc"},
                        f'invalid hash "abc": expected 64 lowercase hex characters\nretry with replaces: "{h2}"')
        # Diagnostics of the written document, no colon after the level.
        plain = "Just text.\n"
        text = await srv.ok("write", {"bundle": "notes", "path": "plain.md", "content": plain})
        check(text.endswith("\nid plain\ninfo plain.md: no frontmatter: a plain Markdown concept; add frontmatter with a type to make it OKF"), text)
        # A navigation document.
        text = await srv.ok("write", {"bundle": "notes", "path": "index.md", "content": "# Notes\n"})
        check(text.endswith("\nnote: index.md and log.md are navigation documents: stored, never listed or searched"), text)
        check(", 2 concepts\n" in text, text)
        # A clash across bundles renames the other concept.
        text = await srv.ok("write", {"bundle": "other", "path": "idea.md", "content": IDEA})
        check(re.fullmatch(rf"wrote other/idea\.md \(hash {h1}\), snapshot {HEX}, 3 concepts\nid other/idea\nrenamed idea notes/idea", text), text)
        # Bad input: each a clear error, nothing written.
        for path, msg in [
            ("../x.md", 'invalid path "../x.md": segment ".." starts with a dot'),
            ("/abs.md", 'invalid path "/abs.md": must be relative to the bundle'),
            ("a\\b.md", 'invalid path "a\\b.md": use forward slashes only'),
            ("a\u0000b.md", 'invalid path "a\\u0000b.md": holds a NUL byte'),
        ]:
            await srv.fails("write", {"bundle": "notes", "path": path, "content": IDEA}, msg)
        await srv.fails("write", {"bundle": "No Bundle", "path": "a.md", "content": IDEA},
                        'invalid bundle name "No Bundle": expected 1-64 chars of [a-z0-9_-]')
        manifest = await srv.ok("manifest", {})
        equal(manifest,
              "# tenant: e2e\n# bundles: notes other\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n"
              "notes/idea\tnotes\tidea\t-\t-\tA better idea.\t-\n"
              "plain\tnotes\t-\t-\t-\tJust text.\t-\n"
              "other/idea\tother\tidea\t-\t-\tA first idea.\t-\n",
              "manifest")
        equal(await srv.ok("manifest", {"bundle": "OTHER"}),
              "# tenant: e2e\n# bundles: notes other\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n"
              "other/idea\tother\tidea\t-\t-\tA first idea.\t-\n",
              "manifest of one bundle, named in another case")
        await srv.fails("manifest", {"bundle": "zz"}, 'no bundle "zz" in this tenant: found notes, other')
        read = await srv.s.read_resource("okf://manifest")
        equal(read.contents[0].text, manifest, "resource equals the manifest tool")
        # Search: manifest rows with a pos, the bundle filter, expansion, no hits.
        found = await srv.ok("search", {"query": "better idea"})
        equal(found,
              "# tenant: e2e\n# bundles: notes other\n# query: better idea\n# hits: 2 direct, 0 linked\n"
              "id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"
              "notes/idea\tnotes\tidea\t-\t-\tA better idea.\t-\t0\n"
              "other/idea\tother\tidea\t-\t-\tA first idea.\t-\t0\n",
              "search")
        filtered = await srv.ok("search", {"query": "idea", "bundle": "other", "k": 1})
        check(filtered.splitlines()[2] == "# bundle: other" and filtered.count("\n") == 7, filtered)
        none = await srv.ok("search", {"query": "zebra"})
        check(none.endswith("# hits: 0 direct, 0 linked\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\n"), none)
        await srv.fails("search", {"query": "idea", "bundle": "zz"}, 'no bundle "zz" in this tenant: found notes, other')
        # Validation against the schema names the argument; nothing is clamped.
        await srv.fails("search", {"query": "idea", "k": 0}, "k must be an integer from 1 to 50")
        await srv.fails("search", {"query": ""}, "query must be a non-empty string")
        await srv.fails("get", {"ids": []}, "ids must be a non-empty array of strings")
        await srv.fails("get", {"ids": ["idea"], "offset": -1}, "offset must be a non-negative integer")
        await srv.fails("write", {"bundle": "notes", "path": "x.md"}, "content is required")
        await srv.fails("nope", {}, 'unknown tool "nope"')
        snap = await srv.ok("snapshot", {})
        check(re.fullmatch(HEX, snap), f"snapshot: {snap!r}")
    print("ok: write -> refusal -> retry with the hash -> success, diagnostics, renames, bad input")


async def delete_round_trip():
    async with Server("e2e") as srv:
        await srv.fails("delete", {"bundle": "notes", "path": "missing.md"}, "concept does not exist")
        h = sha(IDEA)
        await srv.fails("delete", {"bundle": "other", "path": "idea.md"},
                        f'deleting needs the hash of the version being removed\nretry with replaces: "{h}"')
        text = await srv.ok("delete", {"bundle": "other", "path": "idea.md", "replaces": h})
        check(re.fullmatch(rf"deleted other/idea\.md, snapshot {HEX}, 2 concepts\nrenamed notes/idea idea", text), text)
        snap = await srv.ok("snapshot", {})
        check(text.split("snapshot ")[1].startswith(snap), "the snapshot tool agrees with the delete")
        await srv.fails("delete", {"bundle": "notes", "path": "idea.md", "replaces": h},
                        f'concept changed since it was read: {CHANGED}\nretry with replaces: "{sha(IDEA2)}"')
        # get: a batch with the block of ids not found, a capped read, find, source.
        await srv.fails("get", {"ids": ["idea"], "limit": 0}, "limit must be a positive integer")
        equal(await srv.ok("get", {"ids": ["idea", "nope", "idea", "zz"]}),
              "@@ idea\nA better idea.\n\n@@ not found\nnope zz", "get with ids not found")
        equal(await srv.ok("get", {"ids": ["idea"], "limit": 5}),
              "@@ idea [0..5 of 15]\nA bet", "a capped read")
        equal(await srv.ok("get", {"ids": ["idea"], "offset": 5, "limit": 5}),
              "@@ idea [5..10 of 15]\nter i", "continue with offset")
        equal(await srv.ok("get", {"ids": ["idea"], "find": "BETTER"}),
              "@@ idea 1 match at 2\nA better idea.\n", "get with find")
        equal(await srv.ok("get", {"ids": ["idea"], "find": "nothing here"}),
              "@@ idea no match in 15 chars", "find without a match")
        equal(await srv.ok("get", {"ids": ["idea"], "source": True}),
              f"@@ idea notes/idea.md hash {sha(IDEA2)}\n{IDEA2}", "get with source: true")
        equal(await srv.ok("get", {"ids": ["idea"], "section": "nope"}),
              '@@ idea no section "nope": body', "get of a missing section")
    print("ok: delete's hash round trip; get with find, source, a capped read, not found")


async def database_tools():
    async with Server("e2e", "--database-tools") as srv:
        hist = json.loads(await srv.ok("history", {"limit": 2}))
        check(len(hist["revisions"]) == 2 and "next" in hist, f"history page: {hist}")
        head = hist["revisions"][0]["revision"]
        more = json.loads(await srv.ok("history", {"before": hist["next"], "limit": 100}))
        check(more["revisions"][0]["parent"] == more["revisions"][1]["revision"]
              if len(more["revisions"]) > 1 else True, "history continues")
        await srv.fails("history", {"limit": 0}, "limit must be an integer from 1 to 100")
        await srv.fails("history", {"before": "x"}, "invalid history cursor")
        changes = [
            {"operation": "write", "bundle": "notes", "path": "a.md", "content": "---\ntype: t\n---\nA [[nowhere]].\n"},
            {"operation": "write", "bundle": "notes", "path": "b.md", "content": "---\ntype: t\n---\nB.\n"},
        ]
        r = json.loads(await srv.ok("transact", {"changes": changes, "expectedRevision": head}))
        equal(list(r), ["revision", "snapshot", "concepts", "bundles", "diagnostics", "diagnosticCount"], "transact keys")
        equal(r["diagnostics"], [{"level": "warn", "bundle": "notes", "path": "a.md", "message": 'unresolved link "nowhere"'}], "request diagnostics only")
        equal(r["diagnosticCount"], 2, "the tenant's diagnostics count (plain.md and a.md)")
        # Failed preconditions, all listed, with retry lines for existing documents.
        bad = [
            {"operation": "write", "bundle": "notes", "path": "a.md", "content": "x"},
            {"operation": "write", "bundle": "notes", "path": "c.md", "content": "y"},
            {"operation": "delete", "bundle": "notes", "path": "b.md", "replaces": "0" * 64},
        ]
        await srv.fails("transact", {"changes": bad},
                        f"concept already exists: {CHANGED}\nchanges[0]: notes/a.md\nretry with replaces: \"{sha(changes[0]['content'])}\"\n"
                        f"changes[2]: notes/b.md\nretry with replaces: \"{sha(changes[1]['content'])}\"")
        await srv.fails("transact", {"changes": changes, "expectedRevision": head},
                        "database changed: re-read the revision and document hashes")
        await srv.fails("transact", {"changes": [changes[1], changes[1]]},
                        "transaction contains duplicate document targets\nchanges[1]: notes/b.md")
        r2 = await srv.ok("restore", {"revision": head, "expectedRevision": r["revision"]})
        rr = json.loads(r2)
        equal(rr["diagnostics"], [], "restore gives no diagnostics")
        check(rr["revision"] != head, "restore makes a new revision")
        await srv.fails("restore", {"revision": head, "expectedRevision": r["revision"]},
                        "database changed: re-read the revision and document hashes")
        await srv.fails("restore", {"revision": "x", "expectedRevision": head},
                        'revision: invalid hash "x": expected 64 lowercase hex characters')
    print("ok: transact, history and restore")


async def read_only():
    async with Server("e2e", "--read-only", "--database-tools") as srv:
        names = [t.name for t in (await srv.s.list_tools()).tools]
        equal(names, ["manifest", "search", "get", "snapshot", "history"], "read-only tools")
        await srv.ok("manifest", {})
        await srv.fails("restore", {"revision": "0" * 64, "expectedRevision": "0" * 64},
                        'unknown tool "restore"')
    print("ok: read-only mode")


async def main():
    await modes()
    await write_round_trip()
    await delete_round_trip()
    await database_tools()
    await read_only()


async def bounded(run=None, timeout=120):
    try:
        await asyncio.wait_for((run or main)(), timeout=timeout)
    except BaseException as e:  # noqa: BLE001 - any failure ends the run at once
        print(f"FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        os._exit(1)


if __name__ == "__main__":
    asyncio.run(bounded())
