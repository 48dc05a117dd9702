// Browser tests in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core;
// no browser is downloaded): the browser entry loads the wasm module, and the store
// conformance suite passes against a real IndexedDB, including a reopen after a page reload.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from './server.js';
import { cases } from '../store-conformance.js';
import { fileCases } from '../conformance-file.js';
import '../../src/node.js';
import { cases as engineCases } from '../engine-conformance.js';
import { declaredValues } from '../declared.js';
import { installPacked, readmeExample, README_OUTPUT } from '../pack.js';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let server, browser, page;
const pageErrors = [];

before(async () => {
  assert.ok(existsSync(executablePath), `no Chromium at ${executablePath}: run scripts/wasm-setup.sh`);
  server = await serve(root);
  browser = await chromium.launch({ executablePath, args: FLAGS, headless: true });
  const context = await browser.newContext();
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await load();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function load() {
  await page.goto(`${server.url}/test/browser/index.html`);
  await page.waitForFunction(() => window.harnessReady === true, null, { timeout: 30_000 });
}

const inPage = async (fn, ...args) => {
  const r = await page.evaluate(({ fn, args }) => window.harness[fn](...args), { fn, args });
  if (r && r.ok === false) assert.fail(r.error);
  return r && 'value' in r ? r.value : r;
};

test('the browser entry loads the wasm module and returns the package version', async () => {
  assert.equal(await page.evaluate(() => window.harness.version()), pkg.version);
  const exported = await page.evaluate(() => window.harness.exports());
  assert.deepEqual(exported, ['CODES', 'LangonrockError', 'checkBundleName', 'checkDocumentPath', 'createMcpServer', 'endsWithMd', 'indexedDb', 'linkTargets', 'memory', 'nfc', 'open', 'planFolder', 'version']);
  assert.deepEqual(declaredValues('index.d.ts', 'browser.d.ts', 'indexeddb.d.ts'), exported, 'the browser types declare exactly these values');
  assert.deepEqual(pageErrors, []);
});

// The conformance file, shared with the Rust suite: the Node side lists the cases (through
// the Node entry's wasm module) and the page plays each on IndexedDB.
const file = readFileSync(new URL('../../../tests/data/conformance.json', import.meta.url), 'utf8');
for (const c of fileCases(file, false)) {
  test(`store conformance file: indexeddb: ${c.name}`, () => inPage('runFileCase', c.case));
}

test('the browser runs exactly the suite Node runs', async () => {
  assert.deepEqual(await page.evaluate(() => window.harness.caseNames()), cases.filter((c) => !c.strictOnly).map((c) => c.name));
});

for (const c of cases) {
  if (c.strictOnly) continue;
  test(`store conformance: indexeddb: ${c.name}`, () => inPage('runCase', c.name));
}

test('the browser runs exactly the engine cases Node runs', async () => {
  assert.deepEqual(await page.evaluate(() => window.harness.engineCaseNames()), engineCases.map((c) => c.name));
});

for (const c of engineCases) {
  test(`engine conformance: indexeddb: ${c.name}`, () => inPage('runEngineCase', c.name));
}

test('indexeddb: a connection reopened after a page reload serves the last acknowledged revision; commits aborted mid-way are not there', async () => {
  const name = `lr-engine-reload-${process.pid}`;
  const expected = await inPage('engineReloadWrite', name);
  await page.reload();
  await page.waitForFunction(() => window.harnessReady === true);
  await inPage('engineReloadCheck', name, expected);
});

test('indexeddb: a reopen after a page reload reads the last acknowledged head; commits that failed mid-way are not there', async () => {
  const name = `lr-reload-${process.pid}`;
  const expected = await inPage('reloadWrite', name);
  await page.reload();
  await page.waitForFunction(() => window.harnessReady === true);
  await inPage('reloadCheck', name, expected);
  // And in a fresh page of the same origin, as a new tab would open it.
  const other = await page.context().newPage();
  try {
    await other.goto(`${server.url}/test/browser/index.html`);
    await other.waitForFunction(() => window.harnessReady === true);
    const r = await other.evaluate(({ name, expected }) => window.harness.reloadCheck(name, expected), { name, expected });
    assert.ok(r.ok, r.error);
  } finally {
    await other.close();
  }
});

test('indexeddb: another connection to the tenant hears of a new head', async () => {
  assert.deepEqual(await inPage('headChangeNotice', `lr-notice-${process.pid}`), ['swapped', 'heard']);
});

test('a remote connection through fetch to a langonrock serve of another origin (CORS)', async () => {
  const { spawn, execFileSync } = await import('node:child_process');
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { NATIVE, SAMPLES, requireNative } = await import('../native.js');
  requireNative();
  const bin = process.env.LANGONROCK_SERVE_BIN ?? NATIVE;
  const data = await mkdtemp(join(tmpdir(), 'lr-browser-remote-'));
  execFileSync(bin, ['import', SAMPLES, '--data', data, '--tenant', 't'], { stdio: 'ignore' });
  const token = (write) => execFileSync(bin, ['token', '--data', data, '--tenant', 't', ...(write ? ['--write'] : [])]).toString().trim();
  const [writer, reader] = [token(true), token(false)];
  const child = spawn(bin, ['serve', '--data', data, '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const at = await new Promise((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d) => {
        err += d;
        const m = / on (\S+) \(/.exec(err);
        if (m) resolve(m[1]);
      });
      child.once('exit', () => reject(new Error(err)));
    });
    const out = await inPage('remote', `okf+http://${at}?tenant=t&token=${writer}`, `okf+http://${at}?tenant=t&token=${reader}`);
    assert.deepEqual(out.unix, { code: 'INVALID', message: 'okf+unix: needs Node', name: 'LangonrockError' });
    assert.equal(out.embedded.code, 'INVALID');
    assert.deepEqual(out.noToken, { code: 'UNAUTHORIZED', message: 'invalid or missing bearer token', name: 'LangonrockError' });
    assert.match(out.snapshot.value.snapshot, /^[0-9a-f]{64}$/);
    assert.deepEqual(out.get.map.map(([id]) => id), ['orders']);
    assert.equal(out.read.value.hash, out.write.value.hash, 'the ETag reaches the page');
    assert.equal(out.again.value.isError, true);
    assert.equal(out.again.value.text, `concept already exists: re-read the concept and retry with its new hash\nretry with replaces: "${out.write.value.hash}"`);
    assert.deepEqual(out.gc, { code: 'INVALID', message: 'gc is not available over a remote connection', name: 'LangonrockError' });
    assert.deepEqual(out.readerWrite, { code: 'FORBIDDEN', message: 'this token may read but not write', name: 'LangonrockError' });
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
    await rm(data, { recursive: true, force: true });
  }
});

test("the packed package installed into a fresh project loads in a page through its browser export, and runs the README's example", async () => {
  const packed = await installPacked();
  try {
    const installed = JSON.parse(readFileSync(join(packed.project, 'node_modules/langonrock/package.json'), 'utf8'));
    const entry = installed.exports['.'].browser.default.replace(/^\.\//, '');
    const importMap = JSON.stringify({ imports: { langonrock: `/node_modules/langonrock/${entry}` } });
    await writeFile(
      join(packed.project, 'index.html'),
      `<!doctype html><link rel="icon" href="data:,"><script type="importmap">${importMap}</script>
<script type="module">
import { version, indexedDb } from 'langonrock';
const t = await indexedDb({ name: 'packed' }).open('acme');
const head = new TextEncoder().encode('{"head":1}');
window.result = [version(), await t.readHead(), await t.swapHead(null, head), new TextDecoder().decode(await t.readHead())];
</script>
<script>
window.lines = [];
const log = console.log;
console.log = (...a) => { window.lines.push(a.join(' ') + String.fromCharCode(10)); log(...a); };
</script>
<script type="module">
${readmeExample()}
window.example = window.lines.join('');
</script>`,
    );
    const site = await serve(packed.project);
    const p = await page.context().newPage();
    try {
      const errors = [];
      p.on('pageerror', (e) => errors.push(String(e)));
      p.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await p.goto(`${site.url}/index.html`);
      await p.waitForFunction(() => window.result !== undefined || window.example !== undefined, null, { timeout: 30_000 }).catch(() => assert.fail(errors.join('\n')));
      await p.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 }).catch(async () => assert.fail(JSON.stringify([errors, await p.evaluate(() => [window.example, window.lines])])));
      assert.deepEqual(await p.evaluate(() => window.result), [pkg.version, null, 'swapped', '{"head":1}']);
      await p.waitForFunction(() => window.example !== undefined, null, { timeout: 10_000 }).catch(async () => assert.fail(JSON.stringify([errors, await p.evaluate(() => [window.example, window.lines, document.documentElement.outerHTML])])));
      assert.match(await p.evaluate(() => window.example), README_OUTPUT, "the README's example in a fresh page");
    } finally {
      await p.close();
      await site.close();
    }
  } finally {
    await rm(packed.dir, { recursive: true, force: true });
  }
});
