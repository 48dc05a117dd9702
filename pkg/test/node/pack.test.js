// The packed tarball installed into a fresh Node project: the `node` export condition, the
// wasm module and the files store work from node_modules.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installPacked, readmeExample, README_OUTPUT } from '../pack.js';
import { mcpSession } from '../native.js';
import { SDK_MISSING } from '../../src/sdk.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
let dir;
after(() => dir && rm(dir, { recursive: true, force: true }));

test('the packed package installs into a fresh Node project and runs there', async () => {
  const packed = await installPacked();
  dir = packed.dir;
  assert.ok(packed.files.includes('gen/langonrock_wasm_bg.wasm'));
  assert.ok(packed.files.includes('src/node.js') && packed.files.includes('src/index.d.ts'));
  assert.ok(!packed.files.some((f) => f.startsWith('test/') || f.startsWith('node_modules/')), packed.files.join(' '));
  const script = `
    import { version, files } from 'langonrock';
    const store = files({ dataRoot: process.argv[2] });
    const t = await store.open('acme');
    const head = new TextEncoder().encode('{"head":1}');
    console.log(JSON.stringify([version(), await t.readHead(), await t.swapHead(null, head), new TextDecoder().decode(await t.readHead())]));
  `;
  await writeFile(join(packed.project, 'main.js'), script);
  const { stdout } = await run(process.execPath, ['main.js', join(packed.project, 'data')], { cwd: packed.project });
  assert.deepEqual(JSON.parse(stdout), [pkg.version, null, 'swapped', '{"head":1}']);
});

test("the README's example runs from the packed tarball in a fresh Node project", async () => {
  const packed = await installPacked();
  try {
    const example = readmeExample();
    assert.equal(example.trim().split('\n').length, 5, 'five lines');
    await writeFile(join(packed.project, 'example.js'), example);
    const { stdout } = await run(process.execPath, ['example.js'], { cwd: packed.project });
    assert.match(stdout, README_OUTPUT);
    // The bin is installed too, and serves nothing but `mcp`.
    const bin = join(packed.project, 'node_modules/.bin/langonrock');
    const r = await run(bin, ['serve'], { cwd: packed.project }).catch((e) => e);
    assert.deepEqual([r.code, r.stderr], [1, 'error: unknown command "serve"\n']);
    // The MCP SDK is an optional peer dependency: not installed with the package, and
    // `langonrock mcp` says how to add it.
    assert.ok(!existsSync(join(packed.project, 'node_modules/@modelcontextprotocol/sdk')));
    const lock = JSON.parse(readFileSync(join(packed.project, 'package-lock.json'), 'utf8'));
    assert.deepEqual(Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/')), ['node_modules/langonrock']);
    const dsn = `okf://${join(packed.project, 'data')}?tenant=acme`;
    const m = await run(bin, ['mcp', dsn], { cwd: packed.project }).catch((e) => e);
    assert.equal(m.code, 1);
    assert.ok(m.stderr.endsWith(`error: ${SDK_MISSING}\n`), m.stderr);
  } finally {
    await rm(packed.dir, { recursive: true, force: true });
  }
});

test('with the MCP SDK installed beside it (from the registry), the packed bin serves MCP over stdio', async () => {
  const packed = await installPacked(['@modelcontextprotocol/sdk@1.32.2']);
  try {
    const bin = join(packed.project, 'node_modules/.bin/langonrock');
    const dsn = `okf://${join(packed.project, 'data')}?tenant=acme`;
    const s = await mcpSession([bin, 'mcp', dsn], [{ method: 'tools/list', params: {} }]);
    assert.equal(s.code, 0, s.stderr);
    assert.deepEqual(s.byId.get(1).result.tools.map((t) => t.name), ['manifest', 'search', 'get', 'snapshot', 'write', 'delete']);
  } finally {
    await rm(packed.dir, { recursive: true, force: true });
  }
});
