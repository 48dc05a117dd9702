// The packed tarball installed into a fresh Node project: the `node` export condition, the
// wasm module and the files store work from node_modules.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installPacked, readmeExample, README_OUTPUT } from '../pack.js';

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
  } finally {
    await rm(packed.dir, { recursive: true, force: true });
  }
});
