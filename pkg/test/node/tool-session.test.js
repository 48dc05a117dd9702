// The tool session of tests/data/sessions/tools.json through `callTool`, compared with the
// golden the native suite writes (tests/data/golden/tool-session.txt, pinned by
// tests/it/tool_session.rs over the native MCP call path): the JS tool surface answers every
// call byte for byte as the native MCP server does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { open, memory } from 'langonrock';

const repo = new URL('../../../', import.meta.url);
const script = JSON.parse(await readFile(new URL('tests/data/sessions/tools.json', repo), 'utf8'));
const golden = await readFile(new URL('tests/data/golden/tool-session.txt', repo), 'utf8');

// `$HEAD`, `$PARENT` and `$HASH:<bundle>/<path>` in every string of `v`.
async function substitute(v, conn) {
  if (typeof v === 'string' && v.startsWith('$')) {
    const head = (await conn.history({ limit: 1 })).revisions[0];
    if (v === '$HEAD') return head?.revision ?? '';
    if (v === '$PARENT') return head?.parent ?? '';
    const [bundle, ...rest] = v.slice('$HASH:'.length).split('/');
    return (await conn.readSource(bundle, rest.join('/')))?.hash ?? '';
  }
  if (Array.isArray(v)) return Promise.all(v.map((x) => substitute(x, conn)));
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = await substitute(x, conn);
    return out;
  }
  return v;
}

test('the tool session answers as the native MCP server does', async () => {
  const conn = await open({ tenant: script.tenant, store: memory(), now: () => new Date(script.commitTime) });
  assert.equal(new Date(script.commitTime).toISOString().slice(0, 10), script.today);
  let out = '';
  for (const [i, [name, args]] of script.calls.entries()) {
    const a = args === null ? undefined : await substitute(args, conn);
    const { text, isError } = await conn.callTool(name, a);
    out += `== ${i} ${name} ${isError ? 'error' : 'ok'}\n${text}\n`;
  }
  await conn.close();
  const got = out.split('\n');
  const want = golden.split('\n');
  const at = got.findIndex((l, i) => l !== want[i]);
  assert.ok(at < 0 && got.length === want.length, `differs at line ${at + 1}:\n expected: ${JSON.stringify(want[at])}\n actual:   ${JSON.stringify(got[at])}`);
});
