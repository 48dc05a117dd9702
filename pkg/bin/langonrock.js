#!/usr/bin/env node
// `langonrock mcp <dsn> [--database-tools] [--read-only]` (js.md §6.4, agent.md §1): serves a
// tenant of the files store, or of a `langonrock serve` named by a remote DSN (docs/remote.md),
// over MCP stdio, without the native binary. It has no other
// command. stdout carries JSON-RPC only; every other line goes to stderr.

import { open, files, createMcpServer } from 'langonrock';
import { parseDsn, redactDsn } from '../gen/langonrock_wasm.js';
import { homedir } from 'node:os';
import { defaultDataRoot } from '../src/dataroot.js';
import { loadSdk } from '../src/sdk.js';

const USAGE = 'usage: langonrock mcp <dsn> [--database-tools] [--read-only]\n';

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
if (args.length === 0) {
  process.stderr.write(USAGE);
  process.exit(1);
}
if (args[0] === '--help' || args[0] === '-h') {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (args[0] !== 'mcp') fail(`unknown command "${args[0]}"`);
const flags = { '--database-tools': false, '--read-only': false };
const positional = [];
for (const a of args.slice(1)) {
  if (a in flags) flags[a] = true;
  else if (a.startsWith('-') && a !== '-') fail(`unknown flag "${a}"`);
  else positional.push(a);
}
if (positional.length === 0) fail('missing dsn');
if (positional.length > 1) fail(`unexpected argument "${positional[1]}"`);
const dsn = positional[0];

let target;
try {
  // `~` in okf://~/… is the home directory, as in the native binary.
  const home = process.platform === 'win32' ? process.env.USERPROFILE : process.env.HOME;
  target = parseDsn(dsn, process.platform === 'win32', home || homedir());
} catch (e) {
  fail(e.message);
}
process.stderr.write(`langonrock mcp serving ${redactDsn(dsn)} over stdio\n`);
const readOnly = flags['--read-only'];
const remote = target.kind === 'remote';
let connection;
let dataRoot;
try {
  if (remote) {
    // A server (docs/remote.md): the same MCP server over a remote connection.
    connection = await open(dsn, { readOnly });
  } else {
    dataRoot = target.data ?? defaultDataRoot();
    connection = await open({ tenant: target.tenant, store: files({ dataRoot }), readOnly });
  }
} catch (e) {
  fail(e.message);
}
const empty =
  !remote &&
  (await connection.history({ limit: 1 }).then(
    (page) => page.revisions.length === 0,
    () => false,
  ));
if (empty) {
  process.stderr.write(`tenant "${connection.tenant}" has no revisions in ${dataRoot}; the first write creates it\n`);
}
// Requests still being answered when stdin ends are answered before the connection closes.
const pending = new Set();
const track = (p) => {
  pending.add(p);
  p.finally(() => pending.delete(p)).catch(() => undefined);
  return p;
};
const served = {
  callTool: (name, a) => track(connection.callTool(name, a)),
  manifest: (b) => track(connection.manifest(b)),
  adviceNow: () => connection.adviceNow(),
};
let server;
let StdioServerTransport;
try {
  server = await createMcpServer(served, undefined, { databaseTools: flags['--database-tools'], readOnly });
  [{ StdioServerTransport }] = await loadSdk(['server/stdio.js']);
} catch (e) {
  await connection.close().catch(() => undefined);
  fail(e.message);
}
let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  // Let the SDK send the answers of the last requests before the transport closes.
  do {
    while (pending.size) await Promise.allSettled([...pending]);
    await new Promise((resolve) => setImmediate(resolve));
  } while (pending.size);
  await server.close().catch(() => undefined);
  await connection.close().catch(() => undefined);
};
process.stdin.on('end', () => void shutdown());
await server.connect(new StdioServerTransport());
