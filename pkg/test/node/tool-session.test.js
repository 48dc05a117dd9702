// The tool session of tests/data/sessions/tools.json through `callTool`, compared with the
// golden the native suite writes (tests/data/golden/tool-session.txt, pinned by
// tests/it/tool_session.rs over the native MCP call path): the JS tool surface answers every
// call byte for byte as the native MCP server does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { open, memory } from 'langonrock';
import { script, runSession } from '../session.js';

const repo = new URL('../../../', import.meta.url);
const golden = await readFile(new URL('tests/data/golden/tool-session.txt', repo), 'utf8');

test('the tool session answers as the native MCP server does', async () => {
  const conn = await open({ tenant: script.tenant, store: memory(), now: () => new Date(script.commitTime) });
  assert.equal(new Date(script.commitTime).toISOString().slice(0, 10), script.today);
  const out = await runSession(conn);
  await conn.close();
  const got = out.split('\n');
  const want = golden.split('\n');
  const at = got.findIndex((l, i) => l !== want[i]);
  assert.ok(at < 0 && got.length === want.length, `differs at line ${at + 1}:\n expected: ${JSON.stringify(want[at])}\n actual:   ${JSON.stringify(got[at])}`);
});
