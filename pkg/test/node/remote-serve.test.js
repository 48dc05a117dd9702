// The package's remote connection against a real `langonrock serve` (the native binary):
// over its unix socket (node:http) and over TCP with tokens (fetch). The same calls run on a
// local files connection to a byte copy of the served data root, and the answers must be the
// same; revision ids, cursors and commit times (the two clocks differ) are named by order of
// first appearance before comparing. The tool session of tests/data/sessions/tools.json and
// the package's `langonrock mcp` over a remote DSN are compared the same way.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'langonrock';
import { script, runSession } from '../session.js';
import { execFile } from 'node:child_process';
import { NATIVE, JS_BIN, SAMPLES, cli, mcpSession, requireNative, toolText } from '../native.js';

const SERVE = process.env.LANGONROCK_SERVE_BIN ?? NATIVE;
const TODAY = '2026-05-01';

const dirs = [];
const servers = [];
after(async () => {
  for (const s of servers) s.kill();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Starts `serve --data <root> <args>`; resolves what its banner says it listens on. */
function serve(root, args = []) {
  const child = spawn(SERVE, ['serve', '--data', root, ...args], {
    env: { ...process.env, LANGONROCK_TODAY: TODAY },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  servers.push(child);
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    lines.once('line', (banner) => {
      const m = / on (.+) \(/.exec(banner);
      if (m) resolve(m[1]);
      else reject(new Error(`no banner: ${banner}`));
      lines.on('line', () => undefined); // keep draining the request log
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/** A data root with the okf-samples bundles in tenant `t`, and a byte copy of it. */
async function twinRoots() {
  const dir = await mkdtemp(join(tmpdir(), 'lr-remote-'));
  dirs.push(dir);
  const local = join(dir, 'local');
  const r = await cli(['import', SAMPLES, '--data', local, '--tenant', 't']);
  assert.equal(r.code, 0, r.stderr);
  const served = join(dir, 'served');
  await cp(local, served, { recursive: true });
  return { dir, local, served };
}

/** Names 64-hex ids, cursors and commit times by first appearance, keeping `keep`. */
function normalise(text, keep) {
  const names = new Map();
  return text.replace(/[A-Za-z0-9_:.-]+/g, (w) => {
    const time = /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(w);
    const hex = /^[0-9a-f]{64}$/.test(w);
    const cursor = w.length > 80 && /^[A-Za-z0-9_-]+$/.test(w);
    if (!(time || hex || cursor) || keep.has(w)) return w;
    if (!names.has(w)) names.set(w, `<${names.size}>`);
    return names.get(w);
  });
}

/** Snapshot ids and source hashes: content addresses, the same on both sides. */
function contentIds(text) {
  const keep = new Set();
  for (const m of text.matchAll(/"(?:snapshot|hash)":"([0-9a-f]{64})"/g)) keep.add(m[1]);
  for (const m of text.matchAll(/\(hash ([0-9a-f]{64})\)|snapshot ([0-9a-f]{64})/g)) keep.add(m[1] ?? m[2]);
  return keep;
}

function compare(local, remote) {
  const keep = new Set([...contentIds(local), ...contentIds(remote)]);
  const a = normalise(local, keep).split('\n');
  const b = normalise(remote, keep).split('\n');
  const diff = a.map((l, i) => (l === b[i] ? null : `local:  ${l}\nremote: ${b[i]}`)).filter(Boolean);
  assert.deepEqual(diff, [], 'local and remote answers differ');
  assert.equal(a.length, b.length);
}

const show = (v) => (v instanceof Map ? `Map ${JSON.stringify([...v])}` : JSON.stringify(v));
async function answer(p) {
  try {
    return `ok ${show(await p)}`;
  } catch (e) {
    const extra = { reason: e.reason, changes: e.changes, revision: e.revision };
    return `err ${e.name} ${e.code} ${e.message} ${JSON.stringify(extra)}`;
  }
}

/** The table of library calls, reads and changes, successes and refusals. */
async function transcript(c) {
  let out = '';
  const line = async (name, p) => (out += `${name}: ${await answer(p)}\n`);
  await line('manifest', c.manifest());
  await line('manifest GA4', c.manifest('GA4'));
  await line('manifest again', c.manifest());
  await line('manifest nope', c.manifest('nope'));
  await line('snapshot', c.snapshot());
  await line('listSource', c.listSource());
  await line('get', c.get(['orders', 'nope', 'customers', '__proto__', 'orders']));
  await line('get find', c.get(['orders'], { find: 'order', limit: 40 }));
  await line('get source', c.get(['orders'], { source: true, offset: 3, limit: 20 }));
  await line('get section', c.get(['orders'], { section: 'nosuch' }));
  await line('search', c.search('orders revenue', { k: 3 }));
  await line('search bundle', c.search('sessions', { bundle: 'GA4', expand: false }));
  await line('readSource', c.readSource('acme_retail', 'tables/orders.md'));
  await line('readSource missing', c.readSource('acme_retail', 'nope.md'));
  await line('history', c.history({ limit: 2 }));
  await line('history cursor', c.history({ before: 'garbage' }));
  await line('write', c.write('inbox', 'idea.md', '---\ntype: note\n---\nAn idea.\n'));
  await line('write exists', c.write('inbox', 'idea.md', 'again'));
  await line('write changed', c.write('inbox', 'idea.md', 'x', 'a'.repeat(64)));
  await line('write missing', c.write('inbox', 'nope.md', 'x', 'a'.repeat(64)));
  const h = (await c.readSource('inbox', 'idea.md')).hash;
  await line('write case', c.write('INBOX', 'idea.md', '---\ntype: note\n---\nv2\n', h));
  await line('delete changed', c.delete('inbox', 'idea.md', 'b'.repeat(64)));
  await line('transact', c.transact({ changes: [{ operation: 'write', bundle: 'inbox', path: 'a.md', content: 'A' }] }));
  await line(
    'transact preconditions',
    c.transact({ changes: [{ operation: 'write', bundle: 'inbox', path: 'a.md', content: 'B' }, { operation: 'delete', bundle: 'inbox', path: 'zz.md', replaces: 'c'.repeat(64) }] }),
  );
  await line('deleteBundle', c.deleteBundle('INBOX'));
  await line('deleteBundle missing', c.deleteBundle('inbox'));
  await line('restore conflict', c.restore({ revision: 'd'.repeat(64), expectedRevision: 'e'.repeat(64) }));
  await line('history after', c.history({ limit: 3 }));
  return out;
}

let roots;
let socket;
before(async () => {
  requireNative();
  roots = await twinRoots();
  socket = await serve(roots.served);
});

test('over the socket, every operation answers as on a local connection', async () => {
  const local = await open(`okf://${roots.local}?tenant=t`, { now: () => new Date() });
  const remote = await open(`okf+unix://${socket}?tenant=t`);
  assert.equal(remote.remote, true);
  process.env.LANGONROCK_TODAY = TODAY; // the local read date, as the server's
  try {
    const [l, r] = [await transcript(local), await transcript(remote)];
    compare(l, r);
    for (const needle of ['"reason":"exists"', '"reason":"changed"', '"reason":"missing"', '"changes":[', 'err LangonrockError NOT_FOUND', 'Map [["orders"']) {
      assert.ok(r.includes(needle), `${needle} in ${r}`);
    }
  } finally {
    delete process.env.LANGONROCK_TODAY;
    await local.close();
    await remote.close();
  }
});

test('the tool session, tools() and callTool answer alike', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lr-remote-session-'));
  dirs.push(dir);
  const served = join(dir, 'served');
  const at = await serve(served);
  const local = await open({ tenant: script.tenant, store: (await import('langonrock')).files({ dataRoot: join(dir, 'local') }), now: () => new Date() });
  const remote = await open(`okf+unix://${at}?tenant=${script.tenant}`);
  const run = async (conn) => {
    let out = await runSession(conn);
    // A remote connection's advice comes from the last manifest it read (docs/remote.md).
    await conn.manifest();
    out += JSON.stringify(conn.tools({ databaseTools: true })) + '\n';
    return out;
  };
  process.env.LANGONROCK_TODAY = script.today;
  try {
    const [l, r] = [await run(local), await run(remote)];
    compare(l, r);
    assert.match(r, /retry with replaces: "[0-9a-f]{64}"/);
  } finally {
    delete process.env.LANGONROCK_TODAY;
    await local.close();
    await remote.close();
  }
  // A remote connection opened read-only refuses the writing tools before sending anything.
  const ro = await open(`okf+unix://${at}?tenant=${script.tenant}`, { readOnly: true });
  assert.deepEqual(await ro.callTool('write', { bundle: 'b', path: 'x.md', content: 'x' }), { text: 'connection is read-only', isError: true });
  await ro.close();
  assert.deepEqual(await ro.callTool('snapshot', {}), { text: 'connection is closed', isError: true });
});

test('the package bin serves MCP over a remote DSN as over the files store', async () => {
  const requests = [
    { method: 'tools/list' },
    { method: 'resources/read', params: { uri: 'okf://manifest' } },
    { method: 'tools/call', params: { name: 'get', arguments: { ids: ['orders', 'nope'], section: 'nosuch' } } },
    { method: 'tools/call', params: { name: 'write', arguments: { bundle: 'inbox', path: 'n.md', content: 'N' } } },
    { method: 'tools/call', params: { name: 'write', arguments: { bundle: 'inbox', path: 'n.md', content: 'N2' } } },
    { method: 'tools/call', params: { name: 'delete', arguments: { bundle: 'inbox', path: 'n.md' } } },
  ];
  const dir = await mkdtemp(join(tmpdir(), 'lr-remote-bin-'));
  dirs.push(dir);
  const r0 = await cli(['import', SAMPLES, '--data', join(dir, 'a'), '--tenant', 't']);
  assert.equal(r0.code, 0, r0.stderr);
  await cp(join(dir, 'a'), join(dir, 'b'), { recursive: true });
  const at = await serve(join(dir, 'b'));
  const shown = async (dsn) => {
    const s = await mcpSession(['node', JS_BIN, 'mcp', dsn], requests, { today: TODAY });
    assert.equal(s.code, 0, s.stderr);
    return [...s.byId.entries()]
      .sort(([x], [y]) => x - y)
      .map(([, m]) => (m.result?.content ? JSON.stringify(toolText(m)) : JSON.stringify(m.result ?? m.error)))
      .join('\n');
  };
  const l = await shown(`okf://${join(dir, 'a')}?tenant=t`);
  const r = await shown(`okf+unix://${at}?tenant=t`);
  compare(l, r);
  assert.match(r, /no section \\"nosuch\\"/);
  assert.match(r, /retry with replaces: \\"[0-9a-f]{64}\\"/);
});

test('over TCP: fetch with tokens, and the refusals of the grants', async () => {
  const root = (await twinRoots()).served;
  const token = async (tenant, write) => {
    // `token` belongs to the server's binary.
    const args = ['token', '--data', root, '--tenant', tenant, ...(write ? ['--write'] : [])];
    const out = await new Promise((resolve, reject) =>
      execFile(SERVE, args, (e, stdout, stderr) => (e ? reject(new Error(stderr)) : resolve(stdout))),
    );
    return out.trim();
  };
  const [w, ro, other] = [await token('t', true), await token('t', false), await token('other', true)];
  const at = await serve(root, ['--host', '127.0.0.1', '--port', '0']);
  const dsn = (q) => `okf+http://${at}?${q}`;
  await assert.rejects(open(dsn('tenant=t')), { code: 'UNAUTHORIZED', message: 'invalid or missing bearer token' });
  const reader = await open(dsn(`token=${ro}`));
  assert.equal(reader.tenant, '');
  assert.match(await reader.manifest(), /^# tenant: t\n/);
  await assert.rejects(reader.write('inbox', 'x.md', 'x'), { code: 'FORBIDDEN', message: 'this token may read but not write' });
  await assert.rejects(open(dsn(`tenant=t&token=${other}`)), { code: 'FORBIDDEN', message: 'token does not grant access to that tenant' });
  const writer = await open(dsn(`tenant=t&token=${w}`));
  const written = await writer.write('inbox', 'x.md', '---\ntype: note\n---\nX\n');
  assert.equal((await reader.readSource('inbox', 'x.md')).hash, written.hash);
  const { text } = await writer.callTool('snapshot', {});
  assert.equal(text, (await reader.snapshot()).snapshot);
  await reader.close();
  await writer.close();
});
