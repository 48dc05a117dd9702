#!/usr/bin/env node
// `langonrock mcp <dsn> [--database-tools] [--read-only]` (js.md §6.4): serves a tenant over
// MCP stdio with the files store. Not available yet: it needs the engine's `open` and
// `createMcpServer`, which this build of the package does not export. Until then it checks
// its arguments and says so, and exits 1.

import * as langonrock from 'langonrock';

const USAGE = 'usage: langonrock mcp <dsn> [--database-tools] [--read-only]';
const args = process.argv.slice(2);

function fail(message, code) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

if (args[0] !== 'mcp') fail(USAGE, 2);
const flags = new Set(['--database-tools', '--read-only']);
const positional = args.slice(1).filter((a) => !flags.has(a));
const unknown = positional.filter((a) => a.startsWith('-'));
if (unknown.length) fail(`unknown option ${unknown[0]}\n${USAGE}`, 2);
if (positional.length !== 1) fail(USAGE, 2);
if (typeof langonrock.createMcpServer !== 'function' || typeof langonrock.open !== 'function') {
  fail(`langonrock mcp: not available in this build of the package (${langonrock.version()}): the engine is not wired in yet`, 1);
}
